//! nx_cpu: the CPU kernels behind OCaml's `Nx_cpu`.
//!
//! A plain Rust library first: kernels take typed views of memory and answer
//! `Done`, `Declined` or a refusal. The `ffi` module alone knows OCaml.

pub mod dtype;
