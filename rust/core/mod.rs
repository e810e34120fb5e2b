//! The core every kernel family stands on: dtypes and narrow floats, array
//! layouts checked against their buffers, the door that claims operands,
//! answers, planned calls and the thread pool.

pub mod answer;
pub mod caches;
pub mod call;
pub mod door;
pub mod dtype;
pub mod isa;
pub mod layout;
pub mod narrow;
pub mod pool;
pub mod stream;
pub mod transpose;
#[cfg(test)]
pub(crate) mod alloc_count;
#[cfg(test)]
pub(crate) mod cpu_clock;
#[cfg(test)]
pub(crate) mod test_rng;
