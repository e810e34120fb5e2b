//! nx_cpu: the CPU kernels behind OCaml's `Nx_cpu`.
//!
//! A plain Rust library first: kernels take typed views of memory and answer
//! `Done`, `Declined` or a refusal. The `ffi` module alone knows OCaml.
//!
//! On x86-64 the crate is compiled for the contract's baseline (AVX2, FMA,
//! F16C, BMI2, SSE4.2, POPCNT; `.cargo/config.toml`): a host without them
//! must not call it, which the OCaml library checks before any Rust runs.

pub mod dtype;
pub mod kinds;
pub mod narrow;
pub mod reduce;
pub mod reduction;
pub mod wire;
pub mod arith;
pub mod call;
pub mod column;
pub mod layout;
pub mod ops;
pub mod prog;
pub mod cast;
pub mod memio;
pub mod answer;
pub mod door;
pub mod map;
pub mod pad;
pub mod pool;
#[cfg(feature = "ocaml")]
pub mod ffi;
#[cfg(test)]
mod cpu_clock;
#[cfg(test)]
mod test_rng;
