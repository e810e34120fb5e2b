//! `Nx_cpu.map`'s entry.

use super::boundary::call;
use crate::ffi::wire::{loads, pads, views, words};
use crate::loops::map;
use crate::loops::prog::Prog;
use ocaml_interop::{BoxRoot, OCaml, OCamlBytes, OCamlInt, OCamlRuntime};

/// `Nx_cpu.map`: a program's words, the views' words (destinations first),
/// the loads' pads, the number of destinations and the buffers. Answers
/// (0, "") for Done, (1, why) for Declined, (2, why) for a refusal.
#[ocaml_interop::export]
pub fn nx_cpu_map(
    cr: &mut OCamlRuntime,
    prog: OCaml<String>,
    view_words: OCaml<OCamlBytes>,
    pad_words: OCaml<OCamlBytes>,
    n_dsts: OCaml<OCamlInt>,
    buffers: OCaml<OCamlBytes>,
) -> OCaml<(OCamlInt, String)> {
    let n_dsts: i64 = n_dsts.to_rust();
    let (prog, view_words, pad_words) = (words(prog.as_bytes()), words(view_words.as_bytes()), words(pad_words.as_bytes()));
    call(cr, "map", BoxRoot::new(buffers), |mems| {
        let p = Prog::decode(&prog?)?;
        let all = views(&view_words?, mems)?;
        let n_dsts = usize::try_from(n_dsts).ok().filter(|&n| n <= all.len()).ok_or("a destination count past the views")?;
        let pads = pads(&pad_words?)?;
        let (dsts, operands) = (all[..n_dsts].to_vec(), all[n_dsts..].to_vec());
        map::plan_loads(p, dsts, loads(operands, pads)?)
    })
}
