//! nx_cpu: the CPU kernels behind OCaml's `Nx_cpu`.
//!
//! A plain Rust library first: kernels take typed views of memory and answer
//! `Done`, `Declined` or a refusal. The `ffi` module alone knows OCaml.

pub mod dtype;
pub mod kinds;
pub mod narrow;
pub mod reduce;
pub mod reduction;
pub mod arith;
pub mod column;
pub mod layout;
pub mod ops;
pub mod prog;
pub mod cast;
pub mod memio;
pub mod answer;
pub mod cpu;
pub mod door;
pub mod map;
pub mod pad;
pub mod pool;
#[cfg(feature = "ocaml")]
pub mod ffi;
