//! nx_cpu: the CPU kernels behind OCaml's `Nx_cpu`.
//!
//! A plain Rust library first: kernels take typed views of memory and answer
//! `Done`, `Declined` or a refusal. The `ffi` module alone knows OCaml.
//!
//! On x86-64 the crate is compiled for the contract's baseline (AVX2, FMA,
//! F16C, BMI2, SSE4.2, POPCNT; `.cargo/config.toml`): a host without them
//! must not call it, which the OCaml library checks before any Rust runs.
//!
//! The crate is laid out a folder per family, each depending only on the
//! ones above it in this list:
//!
//! - [`core`]: dtypes, narrow floats, layouts, the door, answers, the pool;
//! - [`kinds`]: the math of each elementwise kind, one function a kind;
//! - [`reduce`]: the lane-order core of reductions and scans;
//! - [`loops`]: programs, columns, casts, memory I/O, pads, and the `map`,
//!   `reduce` and `scan` loops over them;
//! - [`fft`]: Fourier transforms (c2c, r2c, c2r);
//! - [`contract`]: contractions (chain and lane order, packed panels);
//! - [`moves`]: gather, scatter and assemble;
//! - [`sort`]: the stable sort of slices along an axis, and top-k;
//! - [`unique`]: the numbering of rows of 64-bit words by first appearance;
//! - [`linalg`]: the matrix routines (cholesky, lu, solve_triangular, qr);
//! - [`ffi`]: the OCaml boundary, a file per family over one shared
//!   decoding of views and answers.

pub mod core;
pub mod kinds;
pub mod reduce;
pub mod loops;
pub mod fft;
pub mod contract;
pub mod moves;
pub mod sort;
pub mod unique;
pub mod linalg;
pub mod ffi;
