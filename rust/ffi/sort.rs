//! `Nx_cpu.sort`'s entry.

use super::boundary::{call, OCamlAnswer};
use crate::ffi::wire::{views, words};
use crate::sort;
use ocaml_interop::{BoxRoot, OCaml, OCamlBytes, OCamlInt, OCamlRuntime};

/// `Nx_cpu.sort`: the views' words (values, positions, then x), the axis,
/// 1 for a descending sort (0 otherwise) and the buffers. Answers `Nx_array.answer`.
#[ocaml_interop::export]
pub fn nx_cpu_sort(
    cr: &mut OCamlRuntime,
    view_words: OCaml<OCamlBytes>,
    axis: OCaml<OCamlInt>,
    descending: OCaml<OCamlInt>,
    buffers: OCaml<OCamlBytes>,
) -> OCaml<OCamlAnswer> {
    let (axis, descending): (i64, i64) = (axis.to_rust(), descending.to_rust());
    let view_words = words(view_words.as_bytes());
    call(cr, "sort", BoxRoot::new(buffers), |mems| {
        let mut all = views(&view_words?, mems)?;
        if all.len() != 3 {
            return Err(format!("{} arrays for values, positions and x", all.len()));
        }
        let axis = usize::try_from(axis).map_err(|_| format!("axis {axis}"))?;
        let x = all.pop().expect("three views");
        let positions = all.pop().expect("three views");
        let values = all.pop().expect("three views");
        sort::plan(axis, descending != 0, values, positions, x)
    })
}
