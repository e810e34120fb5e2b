//! `Nx_cpu.contract`'s entry.

use super::boundary::{call, OCamlAnswer};
use crate::contract::{plan, Operand, Pairs, Plan, Scale, ScaleKind, Segments};
use crate::core::dtype::Dtype;
use crate::core::layout::{Memory, View};
use crate::ffi::wire::{views, words, Reader};
use ocaml_interop::{BoxRoot, OCaml, OCamlBytes, OCamlRuntime};

/// Decodes a contraction's words and views into its plan. The call's
/// words: the batch pairs' count and pairs (axis of a, axis of b), the
/// contracting pairs' count and pairs, the acc's dtype code, whether init is
/// given (0 or 1), then for a and for b its scale: 0 for none, or 1 (values)
/// or 2 (codes), the rank and the block extents; then the segments: 0 for
/// none, 1 and b_axis for Rows, 2, the pair and the groups for
/// Contracting. The views: dst, init if given, a, b, a's scales and b's
/// where given, then the ids where segmented.
pub fn decode(call_words: &[i64], view_words: &[i64], mems: &[Memory]) -> Result<Plan, String> {
    let mut r = Reader::new(call_words, "contraction");
    let pairs = |r: &mut Reader| -> Result<Vec<(usize, usize)>, String> {
        let n = r.count("pair count")?;
        (0..n).map(|_| Ok((r.count("axis")?, r.count("axis")?))).collect()
    };
    let batch = pairs(&mut r)?;
    let contracting = pairs(&mut r)?;
    let code = r.word()?;
    let acc = Dtype::of_code(code).ok_or_else(|| format!("no dtype of code {code} for the acc"))?;
    let with_init = r.count("init")? == 1;
    let scale = |r: &mut Reader| -> Result<Option<(ScaleKind, Vec<usize>)>, String> {
        let kind = match r.count("scale kind")? {
            0 => return Ok(None),
            1 => ScaleKind::Value,
            2 => ScaleKind::Code,
            k => return Err(format!("a scale of kind {k}")),
        };
        let rank = r.count("scale rank")?;
        Ok(Some((kind, r.counts(rank, "block extent")?)))
    };
    let (sa, sb) = (scale(&mut r)?, scale(&mut r)?);
    let seg = match r.count("segments kind")? {
        0 => None,
        1 => Some((r.count("b_axis")?, None)),
        2 => Some((r.count("pair")?, Some(r.count("groups")?))),
        k => return Err(format!("segments of kind {k}")),
    };
    r.finish()?;
    let all = views(view_words, mems)?;
    let want = 3 + with_init as usize + sa.is_some() as usize + sb.is_some() as usize + seg.is_some() as usize;
    if all.len() != want {
        return Err(format!("{} arrays where the call names {want}", all.len()));
    }
    let mut it = all.into_iter();
    let mut next = || it.next().expect("counted above");
    let dst = next();
    let init = with_init.then(&mut next);
    let (a, b) = (next(), next());
    let mut scaled = |view: View, s: Option<(ScaleKind, Vec<usize>)>| Operand {
        view,
        scale: s.map(|(kind, block)| Scale { kind, block, view: next() }),
    };
    let a = scaled(a, sa);
    let b = scaled(b, sb);
    let segments = seg.map(|(x, groups)| match groups {
        None => Segments::Rows { ids: next(), b_axis: x },
        Some(groups) => Segments::Contracting { ids: next(), pair: x, groups },
    });
    plan(&Pairs { batch, contracting }, acc, &dst, init.as_ref(), &a, &b, segments.as_ref())
}

/// `Nx_cpu.contract`: the call's words, the views' words and the buffers
/// ([`decode`]). Answers `Nx_array.answer`.
#[ocaml_interop::export]
pub fn nx_cpu_contract(
    cr: &mut OCamlRuntime,
    call_words: OCaml<OCamlBytes>,
    view_words: OCaml<OCamlBytes>,
    buffers: OCaml<OCamlBytes>,
) -> OCaml<OCamlAnswer> {
    let (call_words, view_words) = (words(call_words.as_bytes()), words(view_words.as_bytes()));
    call(cr, "contract", BoxRoot::new(buffers), |mems| decode(&call_words?, &view_words?, mems))
}
