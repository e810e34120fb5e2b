//! `Nx_cpu.unique`'s entry.

use super::boundary::{call, OCamlAnswer};
use crate::ffi::wire::{views, words};
use crate::unique;
use ocaml_interop::{BoxRoot, OCaml, OCamlBytes, OCamlRuntime};

/// `Nx_cpu.unique`: the views' words (ids, first, counts, count, then the
/// keys) and the buffers. Answers `Nx_array.answer`
/// (`Declined` where the library declines the keys).
#[ocaml_interop::export]
pub fn nx_cpu_unique(cr: &mut OCamlRuntime, view_words: OCaml<OCamlBytes>, buffers: OCaml<OCamlBytes>) -> OCaml<OCamlAnswer> {
    let view_words = words(view_words.as_bytes());
    call(cr, "unique", BoxRoot::new(buffers), |mems| {
        let all = views(&view_words?, mems)?;
        let n = all.len();
        let Ok([ids, first, counts, count, keys]) = <[_; 5]>::try_from(all) else {
            return Err(format!("{n} arrays for ids, first, counts, count and the keys"));
        };
        unique::plan(ids, first, counts, count, keys)
    })
}
