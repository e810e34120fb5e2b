//! `Nx_cpu.reduce`'s and `Nx_cpu.scan`'s entry.

use super::boundary::{call_unrooted, string_bytes, OCamlAnswer};
use crate::ffi::calls::{is_scan, plan_reduction};
use ocaml_interop::{OCaml, OCamlBytes, OCamlRuntime};

/// `Nx_cpu.reduce` and `Nx_cpu.scan`: a program's words, the views' words
/// (destinations, then a scan's carry if any, then the loads), the loads'
/// pads, the call's words and the buffers ([`plan_reduction`]).
#[ocaml_interop::export]
pub fn nx_cpu_reduction(
    cr: &mut OCamlRuntime,
    prog: OCaml<String>,
    view_words: OCaml<OCamlBytes>,
    pad_words: OCaml<OCamlBytes>,
    call_words: OCaml<OCamlBytes>,
    buffers: OCaml<OCamlBytes>,
) -> OCaml<OCamlAnswer> {
    let kernel = if is_scan(call_words.as_bytes()) { "scan" } else { "reduce" };
    // SAFETY: OCaml's types of the external make `buffers` an array of
    // buffer records and the others strings and bytes, all live on entry;
    // the plan reads only them, allocating no OCaml value.
    unsafe {
        let (prog, views, pads, call, buffers) = (prog.raw(), view_words.raw(), pad_words.raw(), call_words.raw(), buffers.raw());
        call_unrooted(cr, kernel, buffers, |mems| {
            plan_reduction(string_bytes(prog), string_bytes(views), string_bytes(pads), string_bytes(call), mems)
        })
    }
}
