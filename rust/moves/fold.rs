//! fold: the adjoint of a padded load. Where the load of a pad reads one
//! element of its operand into several indices of its result (through
//! overlapping windows), the fold adds those indices' elements of its
//! source into that element's place; the pad's fill, which no operand
//! element carries, takes no part.
//!
//! An element's terms are numbered in C order of their taps (their indices
//! along the axes the windows append), and each element sums its own terms
//! left to right by `Prog.binary.Add`, each addition rounded into the dtype
//! (a narrow float's from float32, a sub-byte integer's wrapped), with no
//! +0 before the first term: the sum starts from -0, the identity that
//! gives every term's bits back (-0 + -0 is -0), and where no tap reads an
//! element it is +0.
//!
//! The destination is walked one row of its last axis at a time. A row's
//! taps along the other axes are a product of per-axis lists, which give
//! the source offsets of its tap tuples in C order; along the last axis,
//! each of its taps adds one strided run of the source into a row of
//! sums. So every sum takes its terms in C order of taps, and each row is
//! computed whole by one thread: threads never change a bit.

use super::num::Num;
use super::walk::{bounds, parts};
use super::{check_dst, claims};
use crate::core::call::Call;
use crate::core::door::Claim;
use crate::core::layout::{same_dims, View};
use crate::core::pool;
use crate::loops::arith::Arith;
use crate::loops::pad::{Pad, Window};

/// A checked fold call.
pub struct Fold {
    /// The window of each axis (the pad's windows, one an axis).
    windows: Vec<Option<Window>>,
    before: Vec<usize>,
    dst: View,
    x: View,
}

/// Checks `fold p ~dst x`: `x` of `dst`'s dtype and of the shape a load by
/// `p` of an operand of `dst`'s shape has ([`Pad::shape`]), `dst` not
/// mapping two indices to one element and apart from `x`.
pub fn plan(p: Pad, mut dst: View, mut x: View) -> Result<Fold, String> {
    let want = p.shape(&dst.layout.shape)?;
    if x.layout.dtype != dst.layout.dtype {
        return Err(format!("the source is {} but the destination {}", x.layout.dtype.name(), dst.layout.dtype.name()));
    }
    if !same_dims(&x.layout.shape, &want) {
        return Err(format!(
            "the source has shape {:?}, but the pad's load of the destination's shape {:?} gives {want:?}",
            x.layout.shape, dst.layout.shape
        ));
    }
    check_dst(&dst, &[("source", &x)])?;
    let r = dst.layout.shape.len();
    let mut windows = if p.windows.is_empty() { vec![None; r] } else { p.windows };
    let mut before = p.before;
    if r == 0 {
        // A 0-d fold is a 1-element row: the element itself, its one term.
        for v in [&mut dst, &mut x] {
            v.layout.shape = vec![1];
            v.layout.strides = vec![1];
        }
        windows = vec![None];
        before = vec![0];
    }
    Ok(Fold { windows, before, dst, x })
}

/// The terms one tap of the last axis adds into a row: `count` of them,
/// into sums `j0`, `j0 + step`, …, from the source at `x0`, `x0 + xstep`, …
/// (element offsets from the row's tap tuple's).
#[derive(Clone, Copy)]
struct Run {
    j0: usize,
    step: usize,
    count: usize,
    x0: isize,
    xstep: isize,
}

impl Fold {
    /// The source's axis of the taps of axis `a`'s window.
    fn tap_axis(&self, a: usize) -> usize {
        self.dst.layout.shape.len() + self.windows[..a].iter().filter(|w| w.is_some()).count()
    }

    /// The terms of the last axis, one [`Run`] per tap in order, and which
    /// of its indices any tap reads.
    fn last_runs(&self) -> (Vec<Run>, Vec<bool>) {
        let (d, x) = (&self.dst.layout, &self.x.layout);
        let last = d.shape.len() - 1;
        let n = d.shape[last];
        let b = self.before[last] as isize;
        let xs = x.strides[last];
        let Some(w) = self.windows[last] else {
            return (vec![Run { j0: 0, step: 1, count: n, x0: b * xs, xstep: xs }], vec![true; n]);
        };
        let (nw, xt) = (x.shape[last] as isize, x.strides[self.tap_axis(last)]);
        let (s, dl) = (w.stride as isize, w.dilation as isize);
        let mut covered = vec![false; n];
        let runs = (0..w.size as isize)
            .map(|t| {
                // Window position q reads index c + s q.
                let c = t * dl - b;
                let q0 = if c >= 0 { 0 } else { (-c + s - 1) / s };
                let q1 = nw.min((n as isize - c + s - 1).max(0) / s).max(q0);
                let j0 = (c + s * q0).max(0) as usize;
                for q in q0..q1 {
                    covered[(c + s * q) as usize] = true;
                }
                Run { j0, step: s as usize, count: (q1 - q0) as usize, x0: t * xt + q0 * xs, xstep: xs }
            })
            .collect();
        (runs, covered)
    }

    /// The source offsets of the tap tuples of the axes before the last that
    /// read the row at `idx`, in C order of the taps, into `out`.
    fn row_offsets(&self, idx: &[usize], out: &mut Vec<isize>, next: &mut Vec<isize>) {
        let x = &self.x.layout;
        out.clear();
        out.push(x.offset as isize);
        for (a, &i) in idx.iter().enumerate() {
            let p = (i + self.before[a]) as isize;
            let sa = x.strides[a];
            match self.windows[a] {
                None => out.iter_mut().for_each(|o| *o += p * sa),
                Some(w) => {
                    let (nw, st) = (x.shape[a] as isize, x.strides[self.tap_axis(a)]);
                    let (s, dl) = (w.stride as isize, w.dilation as isize);
                    next.clear();
                    for &o in out.iter() {
                        for t in 0..w.size as isize {
                            let q = p - t * dl;
                            if q >= 0 && q % s == 0 && q / s < nw {
                                next.push(o + (q / s) * sa + t * st);
                            }
                        }
                    }
                    std::mem::swap(out, next);
                }
            }
        }
    }

    /// Folds rows `r0..r1` of the destination (C order of its axes but
    /// the last).
    fn part<N: Num>(&self, num: &N, runs: &[Run], covered: &[bool], r0: usize, r1: usize) {
        let d = &self.dst.layout;
        let last = d.shape.len() - 1;
        let n = d.shape[last];
        let sd = d.strides[last];
        let (db, xb) = (self.dst.memory.base, self.x.memory.base as *const u8);
        let zero = <N::R as Arith>::ZERO;
        let start = <N::R as Arith>::neg(zero);
        let mut sums = vec![start; n];
        let (mut offs, mut next) = (Vec::new(), Vec::new());
        let mut idx = vec![0usize; last];
        let mut rest = r0;
        for a in (0..last).rev() {
            idx[a] = rest % d.shape[a];
            rest /= d.shape[a];
        }
        for _ in r0..r1 {
            self.row_offsets(&idx, &mut offs, &mut next);
            let row = idx.iter().zip(&d.strides).fold(d.offset as isize, |o, (&i, &s)| o + i as isize * s);
            sums.fill(start);
            for &o in &offs {
                for r in runs.iter().filter(|r| r.count > 0) {
                    let src = o + r.x0;
                    if r.step == 1 {
                        for (q, s) in sums[r.j0..r.j0 + r.count].iter_mut().enumerate() {
                            // SAFETY: the term lies in the source's checked
                            // layout: its window position inside its axis
                            // (row_offsets, last_runs), its tap below the
                            // window's size.
                            let v = unsafe { num.get(xb, src + q as isize * r.xstep) };
                            *s = num.round(Arith::add(*s, v));
                        }
                    } else {
                        for q in 0..r.count {
                            let s = &mut sums[r.j0 + q * r.step];
                            // SAFETY: as above.
                            let v = unsafe { num.get(xb, src + q as isize * r.xstep) };
                            *s = num.round(Arith::add(*s, v));
                        }
                    }
                }
            }
            let read = !offs.is_empty();
            for (j, (&s, &c)) in sums.iter().zip(covered).enumerate() {
                // SAFETY: the element lies in the destination's checked
                // layout, apart from the source (plan); this part alone
                // writes its row.
                unsafe { num.put(db, row + j as isize * sd, if read && c { s } else { zero }) };
            }
            for a in (0..last).rev() {
                idx[a] += 1;
                if idx[a] < d.shape[a] {
                    break;
                }
                idx[a] = 0;
            }
        }
    }
}

impl Call for Fold {
    fn claims(&self) -> Vec<Claim> {
        claims(&self.dst, &[&self.x])
    }

    fn work(&self) -> usize {
        let w = |v: &View| v.layout.dtype.bits().div_ceil(8).saturating_add(4);
        self.x.layout.size().saturating_mul(w(&self.x)).saturating_add(self.dst.layout.size().saturating_mul(w(&self.dst)))
    }

    fn run(self) -> Result<(), String> {
        let size = self.dst.layout.size();
        if size == 0 {
            return Ok(());
        }
        let n = *self.dst.layout.shape.last().expect("rank 1 at least (plan)");
        let rows = size / n;
        let (runs, covered) = self.last_runs();
        let terms_per_row = (self.x.layout.size() / rows).max(1);
        let k = parts(rows, ((1 << 15) / terms_per_row).max(1));
        crate::with_num!(self.dst.layout.dtype, num => pool::run_parts(k, |p| {
            let (r0, r1) = bounds(rows, k, p);
            self.part(&num, &runs, &covered, r0, r1)
        }));
        Ok(())
    }
}
