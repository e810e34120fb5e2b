//! The OCaml boundary: the one folder that knows OCaml values, rooting and
//! the domain lock.
//!
//! OCaml passes a call as words (a program, then the views: each its dtype,
//! its buffer's position in the buffers array, its rank, offset, shape and
//! strides) and an array of buffers, the records of `Nx_array.Buffer`, whose
//! field 0 is a char bigarray. Everything OCaml passes is checked here and in
//! the kernels before any memory is touched: an unknown dtype, a buffer
//! index out of range or a layout that leaves its buffer is refused.
//!
//! [`wire`] decodes the words, without OCaml, so that its checks are tested
//! with the crate alone, and [`calls`] decodes a whole map, reduce or scan
//! call from them at a small fixed cost; `boundary` holds what every kernel's entry shares
//! (the buffers' memory, the door, the lock, answers); then one file per
//! family of externals.

pub mod wire;
pub mod big_blocks;
pub mod small_blocks;
pub mod calls;

// The externals, one file a family, over `boundary`'s shared entry.
#[cfg(feature = "ocaml")]
pub mod boundary;
#[cfg(feature = "ocaml")]
pub mod contract;
#[cfg(feature = "ocaml")]
pub mod fft;
#[cfg(feature = "ocaml")]
pub mod host;
#[cfg(feature = "ocaml")]
pub mod linalg;
#[cfg(feature = "ocaml")]
pub mod map;
#[cfg(feature = "ocaml")]
pub mod moves;
#[cfg(feature = "ocaml")]
pub mod reduce;
#[cfg(feature = "ocaml")]
pub mod sort;
#[cfg(feature = "ocaml")]
pub mod unique;
