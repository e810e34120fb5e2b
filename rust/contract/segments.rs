//! Segmented contractions: the indices grouped by int64 ids, each group
//! computed as an unsegmented call of its indices alone, in the order the
//! whole call's rows, columns and depth choose.
//!
//! `Rows`: each row of a (for each batch index) reads b's matrix at its id
//! along `b_axis`; the rows of one id form a group, taken in increasing
//! order. `Contracting`: the indices along one contracting pair each go to
//! the group of their id; group g's outputs, at index g of dst's leading
//! axis, sum the products whose index along the pair is in g, numbered in
//! C order of the contracted axes as an unsegmented call of those indices
//! alone numbers them.
//!
//! The ids are read whole, and checked, before any write, so they may be
//! dst itself. A group is a plan over the rows' or the depths' offsets of
//! its indices alone (the groups are formed by a stable sort of the
//! indices by id, which keeps each group's indices in increasing order, as
//! a count of each id would): nothing is copied but where dst shares memory
//! with an operand, where every group's results wait in a scratch copy of
//! dst until all are computed.

use super::plan::{grid, Grid, Plan, Scales, Side};
use super::shape::{offsets, uniform, Pairs, Roles};
use crate::core::dtype::Dtype;
use crate::core::layout::{Layout, Memory, View};
use crate::loops::column::Col;
use crate::loops::memio;

/// How a segmented contraction groups indices.
#[derive(Clone, Debug)]
pub enum Segments {
    /// Each row of a reads b at its id along `b_axis`, an axis of b in no
    /// pair: ids has the batch pairs' extents then a's free axes as shape.
    Rows { ids: View, b_axis: usize },
    /// The indices along contracting pair number `pair` go to the group of
    /// their id, below `groups`; dst has a leading axis of `groups`.
    Contracting { ids: View, pair: usize, groups: usize },
}

/// Segments checked against the operands.
#[derive(Clone, Debug)]
pub enum Segs {
    /// ids of the rows; b's step and extent along `b_axis`.
    Rows { ids: View, b_step: isize, b_extent: usize },
    /// ids of the pair's indices; the groups; the product of the extents
    /// of the contracting pairs after the pair, and the pair's extent.
    Contracting { ids: View, groups: usize, inner: usize, extent: usize },
}

fn check_ids(ids: &View, need: &[usize]) -> Result<(), String> {
    if ids.layout.dtype != Dtype::Int64 {
        return Err(format!("ids are {}, not int64", ids.layout.dtype.name()));
    }
    if ids.layout.shape != need {
        return Err(format!("ids have shape {:?}, not {need:?}", ids.layout.shape));
    }
    Ok(())
}

impl Segments {
    /// Checks the segments against the call: `Rows`' `b_axis` is taken out
    /// of b's free axes and dst's shape `want`, `Contracting`'s groups put
    /// in front of it.
    pub(super) fn resolve(&self, pairs: &Pairs, ra: &Roles, rb: &mut Roles, want: &mut Vec<usize>, a: &View, b: &View) -> Result<Segs, String> {
        let lead = ra.batch.len() + ra.free.len();
        match self {
            Segments::Rows { ids, b_axis } => {
                let pos = rb.free.iter().position(|x| x == b_axis).ok_or_else(|| format!("b_axis {b_axis} is not an axis of b in no pair"))?;
                rb.free.remove(pos);
                want.remove(lead + pos);
                check_ids(ids, &want[..lead])?;
                Ok(Segs::Rows { ids: ids.clone(), b_step: b.layout.strides[*b_axis], b_extent: b.layout.shape[*b_axis] })
            }
            Segments::Contracting { ids, pair, groups } => {
                let &(xa, _) = pairs.contracting.get(*pair).ok_or_else(|| format!("pair {pair} is not a contracting pair"))?;
                let sa = &a.layout.shape;
                check_ids(ids, &[sa[xa]])?;
                want.insert(0, *groups);
                let inner = pairs.contracting[pair + 1..].iter().map(|&(x, _)| sa[x]).product();
                Ok(Segs::Contracting { ids: ids.clone(), groups: *groups, inner, extent: sa[xa] })
            }
        }
    }
}

impl Segs {
    /// The ids' view.
    pub fn ids(&self) -> &View {
        match self {
            Segs::Rows { ids, .. } | Segs::Contracting { ids, .. } => ids,
        }
    }
}

/// A side with its outer indices `rows` alone (of batch `bi`, the batch
/// shifted by `shift`) or its depths `depths` alone.
fn cut(s: &Side, bi: Option<(usize, isize)>, rows: Option<&[usize]>, depths: Option<&[usize]>) -> Side {
    let pick = |v: &[isize], idx: Option<&[usize]>| -> Vec<isize> { idx.map_or_else(|| v.to_vec(), |idx| idx.iter().map(|&i| v[i]).collect()) };
    let batch = |v: &[isize]| bi.map_or_else(|| v.to_vec(), |(b, shift)| vec![v[b] + shift]);
    let (outer, depth) = (pick(&s.outer, rows), pick(&s.depth, depths));
    Side {
        mem: s.mem,
        dtype: s.dtype,
        batch: batch(&s.batch),
        outer_step: uniform(&outer),
        depth_step: uniform(&depth),
        outer,
        depth,
        scale: s.scale.as_ref().map(|c| Scales {
            batch: bi.map_or_else(|| c.batch.clone(), |(b, _)| vec![c.batch[b]]),
            outer: pick(&c.outer, rows),
            depth: pick(&c.depth, depths),
            ..c.clone()
        }),
    }
}

/// A grid with batch indices `batch` and rows `rows` alone.
fn cut_grid(g: &Grid, batch: &[isize], rows: Option<&[usize]>) -> Grid {
    Grid {
        batch: batch.to_vec(),
        rows: rows.map_or_else(|| g.rows.clone(), |r| r.iter().map(|&i| g.rows[i]).collect()),
        ..g.clone()
    }
}

/// Reads every id, in C order of the ids' shape, each checked below
/// `bound`.
fn read_ids(ids: &View, bound: usize) -> Result<Vec<usize>, String> {
    let l = &ids.layout;
    let axes: Vec<usize> = (0..l.shape.len()).collect();
    offsets(&l.shape, &l.strides, &axes, l.offset as isize)?
        .iter()
        .enumerate()
        .map(|(t, &at)| {
            // SAFETY: the ids' view was checked against its buffer and `at`
            // is one of its elements, an int64.
            let id = unsafe { ids.memory.base.cast::<i64>().offset(at).read_unaligned() };
            usize::try_from(id).ok().filter(|&g| g < bound).ok_or_else(|| format!("id {id} at index {t} is not in [0, {bound})"))
        })
        .collect()
}

/// Runs a segmented plan: the ids read and checked, then each group as a
/// plan of its own, into dst or into scratch copied into dst at the end.
pub fn run(p: &Plan) -> Result<(), String> {
    let (segs, dst_view, nbatch_axes, nrow_axes) = p.segs.as_ref().expect("a segmented plan");
    let ids = read_ids(segs.ids(), match segs {
        Segs::Rows { b_extent, .. } => *b_extent,
        Segs::Contracting { groups, .. } => *groups,
    })?;
    // Where dst shares memory with an operand, every group writes a
    // C-contiguous copy of dst instead, copied into dst at the end.
    let d = dst_view.layout.dtype;
    let mut buf: Vec<u64> = Vec::new();
    let scratch = if p.scratch {
        buf.resize((dst_view.layout.size() * d.bits()).div_ceil(64) + 1, 0);
        let mem = Memory { base: buf.as_mut_ptr().cast(), bytes: buf.len() * 8 };
        Some(View::new(Layout::contiguous(d, &dst_view.layout.shape), mem)?)
    } else {
        None
    };
    let target = match &scratch {
        Some(v) => grid(v, *nbatch_axes, *nrow_axes)?,
        None => p.dst.clone(),
    };
    let group = |a: Side, b: Side, dst: Grid, init: Option<Grid>, nb: usize, m: usize, k: usize| Plan {
        a,
        b,
        dst,
        init,
        acc: p.acc,
        nb,
        m,
        n: p.n,
        k,
        scratch: false,
        chain: p.chain,
        segs: None,
        reads: Vec::new(),
        writes: None,
    };
    match segs {
        Segs::Rows { b_step, .. } => {
            for bi in 0..p.nb {
                let mut rows: Vec<usize> = (0..p.m).collect();
                rows.sort_by_key(|&i| ids[bi * p.m + i]);
                for run in rows.chunk_by(|&x, &y| ids[bi * p.m + x] == ids[bi * p.m + y]) {
                    let g = ids[bi * p.m + run[0]] as isize;
                    let a = cut(&p.a, Some((bi, 0)), Some(run), None);
                    let b = cut(&p.b, Some((bi, g * b_step)), None, None);
                    let dst = cut_grid(&target, &[target.batch[bi]], Some(run));
                    let init = p.init.as_ref().map(|i| cut_grid(i, &[i.batch[bi]], Some(run)));
                    super::run(&group(a, b, dst, init, 1, run.len(), p.k))?;
                }
            }
        }
        Segs::Contracting { groups, inner, extent, .. } => {
            let mut depths: Vec<usize> = (0..p.k).collect();
            depths.sort_by_key(|&t| ids[(t / inner) % extent]);
            let mut at = 0;
            for g in 0..*groups {
                let len = depths[at..].iter().take_while(|&&t| ids[(t / inner) % extent] == g).count();
                let run = &depths[at..at + len];
                at += len;
                let a = cut(&p.a, None, None, Some(run));
                let b = cut(&p.b, None, None, Some(run));
                let dst = cut_grid(&target, &target.batch[g * p.nb..(g + 1) * p.nb], None);
                let init = p.init.as_ref().map(|i| cut_grid(i, &i.batch[g * p.nb..(g + 1) * p.nb], None));
                super::run(&group(a, b, dst, init, p.nb, p.m, len))?;
            }
        }
    }
    if let Some(s) = scratch {
        let l = &dst_view.layout;
        let axes: Vec<usize> = (0..l.shape.len()).collect();
        let mut one = Col::new(d, 1);
        for (t, &at) in offsets(&l.shape, &l.strides, &axes, l.offset as isize)?.iter().enumerate() {
            // SAFETY: element t of the scratch and the element `at` of dst
            // lie in their buffers (views checked); every group has ended.
            unsafe {
                memio::load(s.memory, d, t as isize, 1, 1, &mut one.as_mut());
                memio::store(dst_view.memory, d, at, 1, 1, &one.as_ref());
            }
        }
    }
    Ok(())
}
