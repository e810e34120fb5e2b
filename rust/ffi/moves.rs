//! The moves' entry: `Nx_cpu.gather`, `Nx_cpu.scatter`,
//! `Nx_cpu.assemble`, `Nx_cpu.gather_ranges` and `Nx_cpu.fold`.

use super::boundary::{call, OCamlAnswer};
use crate::core::call::Call;
use crate::core::door::Claim;
use crate::core::layout::View;
use crate::ffi::wire::{pads, views, words, Reader};
use crate::moves::assemble::{self, Assemble, Piece};
use crate::moves::fold::{self, Fold};
use crate::moves::gather::{self, Gather};
use crate::moves::gather_ranges::{self, GatherRanges};
use crate::moves::scatter::{self, Combine, Scatter};
use ocaml_interop::{BoxRoot, OCaml, OCamlBytes, OCamlRuntime};

/// One of the moves, planned.
enum Move {
    Gather(Gather),
    Scatter(Scatter),
    Assemble(Assemble),
    GatherRanges(GatherRanges),
    Fold(Fold),
}

impl Call for Move {
    fn claims(&self) -> Vec<Claim> {
        match self {
            Move::Gather(c) => c.claims(),
            Move::Scatter(c) => c.claims(),
            Move::Assemble(c) => c.claims(),
            Move::GatherRanges(c) => c.claims(),
            Move::Fold(c) => c.claims(),
        }
    }

    fn work(&self) -> usize {
        match self {
            Move::Gather(c) => c.work(),
            Move::Scatter(c) => c.work(),
            Move::Assemble(c) => c.work(),
            Move::GatherRanges(c) => c.work(),
            Move::Fold(c) => c.work(),
        }
    }

    fn run(self) -> Result<(), String> {
        match self {
            Move::Gather(c) => c.run(),
            Move::Scatter(c) => c.run(),
            Move::Assemble(c) => c.run(),
            Move::GatherRanges(c) => c.run(),
            Move::Fold(c) => c.run(),
        }
    }
}

/// The kernel's name in messages, from the call's first word.
fn name(code: Option<i64>) -> &'static str {
    match code {
        Some(0) => "gather",
        Some(1) => "scatter",
        Some(3) => "gather_ranges",
        Some(4) => "fold",
        _ => "assemble",
    }
}

/// Takes exactly `n` views from the decoded ones.
fn exactly<const N: usize>(all: Vec<View>) -> Result<[View; N], String> {
    let k = all.len();
    all.try_into().map_err(|_| format!("{k} arrays where the call takes {N}"))
}

/// Plans a move from its call's words and its views.
fn plan(w: &[i64], all: Vec<View>) -> Result<Move, String> {
    let mut r = Reader::new(w, "move");
    let kernel = r.word()?;
    match kernel {
        0 => {
            let axis = r.count("axis")?;
            r.finish()?;
            let [dst, idx, x] = exactly(all)?;
            gather::plan(axis, dst, idx, x).map(Move::Gather)
        }
        1 => {
            let c = match r.word()? {
                0 => Combine::Set,
                1 => Combine::Add,
                2 => Combine::Max,
                3 => Combine::Min,
                c => return Err(format!("a combine of code {c}")),
            };
            let unique = r.count("unique")? != 0;
            let axis = r.count("axis")?;
            r.finish()?;
            let [dst, into, idx, upd] = exactly(all)?;
            scatter::plan(c, unique, axis, dst, into, idx, upd).map(Move::Scatter)
        }
        2 => {
            let fill = (r.word()? as u64 as u128) | (r.word()? as u64 as u128) << 64;
            let n = r.count("piece count")?;
            if all.len() != n + 1 {
                return Err(format!("{} arrays for a destination and {n} pieces", all.len()));
            }
            let mut all = all.into_iter();
            let dst = all.next().expect("a destination");
            let mut pieces = Vec::with_capacity(n);
            for view in all {
                let rank = r.count("rank")?;
                let region = (0..rank).map(|_| Ok((r.count("start")?, r.count("stop")?))).collect::<Result<_, String>>()?;
                pieces.push(Piece { region, view });
            }
            r.finish()?;
            assemble::plan(fill, dst, pieces).map(Move::Assemble)
        }
        3 => {
            r.finish()?;
            let [dst, starts, ends, x] = exactly(all)?;
            gather_ranges::plan(dst, starts, ends, x).map(Move::GatherRanges)
        }
        4 => {
            let p = match <[_; 1]>::try_from(pads(&w[1..])?) {
                Ok([Some(p)]) => p,
                _ => return Err("a fold takes one pad".into()),
            };
            let [dst, x] = exactly(all)?;
            fold::plan(p, dst, x).map(Move::Fold)
        }
        k => Err(format!("a move of code {k}")),
    }
}

/// `Nx_cpu`'s moves: the call's words, the views' words and the buffers.
/// The call's words: 0 and the axis for a gather, whose views are the
/// destination, the positions and the source; 1, the combine's code (Set,
/// Add, Max, Min from 0), unique (0 or 1) and the axis for a scatter,
/// whose views are the destination, into, the positions and the updates;
/// 2, the fill's bits in two words (low first), the pieces' count and each
/// piece's rank, then start and stop per axis, for an assemble, whose views
/// are the destination and the pieces; 3 for a gather_ranges, whose views
/// are the destination, the starts, the ends and the source; 4 and a pad's
/// words as a padded load's (`wire::pads`) for a fold, whose views are the
/// destination and the source. Answers `Nx_array.answer`.
#[ocaml_interop::export]
pub fn nx_cpu_moves(
    cr: &mut OCamlRuntime,
    call_words: OCaml<OCamlBytes>,
    view_words: OCaml<OCamlBytes>,
    buffers: OCaml<OCamlBytes>,
) -> OCaml<OCamlAnswer> {
    let (call_words, view_words) = (words(call_words.as_bytes()), words(view_words.as_bytes()));
    let kernel = name(call_words.as_ref().ok().and_then(|w| w.first().copied()));
    call(cr, kernel, BoxRoot::new(buffers), |mems| plan(&call_words?, views(&view_words?, mems)?))
}
