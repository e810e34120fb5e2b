//! `Nx_cpu.reduce`'s and `Nx_cpu.scan`'s entry.

use super::boundary::call;
use crate::ffi::wire::{loads, pads, reduction_of, views, words, Reader};
use crate::loops::prog::Prog;
use crate::loops::reduce_loop;
use ocaml_interop::{BoxRoot, OCaml, OCamlBytes, OCamlInt, OCamlRuntime};

/// `Nx_cpu.reduce` and `Nx_cpu.scan`: a program's words, the views' words
/// (destinations, then a scan's carry if any, then the loads), the loads'
/// pads, the call's words and the buffers. The call's words: 0, the loop's
/// rank and shape, the axes' count and axes, the reductions' count and
/// (code, output) each, for a reduce; 1, the rank and shape, the axis, a
/// code and an output, whether a carry is given (0 or 1), for a scan.
#[ocaml_interop::export]
pub fn nx_cpu_reduction(
    cr: &mut OCamlRuntime,
    prog: OCaml<String>,
    view_words: OCaml<OCamlBytes>,
    pad_words: OCaml<OCamlBytes>,
    call_words: OCaml<OCamlBytes>,
    buffers: OCaml<OCamlBytes>,
) -> OCaml<(OCamlInt, String)> {
    let (prog, view_words, pad_words) = (words(prog.as_bytes()), words(view_words.as_bytes()), words(pad_words.as_bytes()));
    let call_words = words(call_words.as_bytes());
    let scan = matches!(&call_words, Ok(w) if w.first() == Some(&1));
    call(cr, if scan { "scan" } else { "reduce" }, BoxRoot::new(buffers), |mems| {
        let p = Prog::decode(&prog?)?;
        let call_words = call_words?;
        let mut r = Reader::new(&call_words, "reduction");
        let scan = r.count("kind")? == 1;
        let rank = r.count("rank")?;
        let shape = r.counts(rank, "extent")?;
        let pads = pads(&pad_words?)?;
        let all = views(&view_words?, mems)?;
        if scan {
            let axis = r.count("axis")?;
            let red = reduction_of(r.word()?)?;
            let k = r.count("output")?;
            let with_carry = r.count("carry")? == 1;
            r.finish()?;
            let (n_dsts, n_carry) = (red.outputs(), with_carry as usize);
            if all.len() < n_dsts + n_carry {
                return Err(format!("{} arrays for a {red:?} scan's destinations and carry", all.len()));
            }
            let carry = with_carry.then(|| all[n_dsts].clone());
            let operands = all[n_dsts + n_carry..].to_vec();
            reduce_loop::plan_scan(p, shape, axis, (red, k), carry, all[..n_dsts].to_vec(), loads(operands, pads)?)
        } else {
            let axes = { let n = r.count("axis count")?; r.counts(n, "axis")? };
            let n = r.count("reduction count")?;
            let mut rs = Vec::with_capacity(n.min(64));
            for _ in 0..n {
                let red = reduction_of(r.word()?)?;
                rs.push((red, r.count("output")?));
            }
            r.finish()?;
            let n_dsts: usize = rs.iter().map(|(red, _)| red.outputs()).sum();
            if all.len() < n_dsts {
                return Err(format!("{} arrays for reductions that write {n_dsts}", all.len()));
            }
            let operands = all[n_dsts..].to_vec();
            reduce_loop::plan_reduce(p, shape, axes, rs, all[..n_dsts].to_vec(), loads(operands, pads)?)
        }
    })
}
