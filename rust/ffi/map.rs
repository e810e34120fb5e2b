//! `Nx_cpu.map`'s entry.

use super::boundary::{call_unrooted, string_bytes, OCamlAnswer};
use crate::ffi::calls::plan_map;
use ocaml_interop::{OCaml, OCamlBytes, OCamlInt, OCamlRuntime};

/// `Nx_cpu.map`: a program's words, the views' words (destinations first),
/// the loads' pads, the number of destinations and the buffers
/// ([`plan_map`]). Answers `Nx_array.answer`.
#[ocaml_interop::export]
pub fn nx_cpu_map(
    cr: &mut OCamlRuntime,
    prog: OCaml<String>,
    view_words: OCaml<OCamlBytes>,
    pad_words: OCaml<OCamlBytes>,
    n_dsts: OCaml<OCamlInt>,
    buffers: OCaml<OCamlBytes>,
) -> OCaml<OCamlAnswer> {
    let n_dsts: i64 = n_dsts.to_rust();
    // SAFETY: OCaml's types of the external make `buffers` an array of
    // buffer records and the others strings and bytes, all live on entry;
    // the plan reads only them, allocating no OCaml value.
    unsafe {
        let (prog, view_words, pad_words, buffers) = (prog.raw(), view_words.raw(), pad_words.raw(), buffers.raw());
        call_unrooted(cr, "map", buffers, |mems| {
            plan_map(string_bytes(prog), string_bytes(view_words), string_bytes(pad_words), n_dsts, mems)
        })
    }
}
