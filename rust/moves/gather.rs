//! gather: each element of the destination read from the source at a
//! position along one axis that an int64 array holds, the element of zero
//! bits where the position lies outside the axis.
//!
//! Single elements are gathered by one tight loop a run, compiled apart
//! for runs whose destination and positions step 1 along a source read
//! at one place (the contiguous `take` of a vector); each element's source
//! is prefetched [`AHEAD`] elements before it is read where the source
//! exceeds the host's largest cache ([`crate::core::caches::largest`]),
//! and not otherwise: where the source is in the cache the prefetches
//! were measured to cost more than they save.

use super::slot::{copy_run, prefetch, prefetch_lines, streams, Slot};
use crate::core::stream::fence;
use super::walk::{at, bounds, dense, last_stride, parts, runs};
use super::{check_dst, check_index, claims};
use crate::core::call::Call;
use crate::core::door::Claim;
use crate::core::layout::View;
use crate::core::pool;

/// A checked gather call.
pub struct Gather {
    axis: usize,
    dst: View,
    idx: View,
    x: View,
    /// Whether the source exceeds the host's largest cache, so that single
    /// elements are prefetched ahead of their reads.
    far: bool,
}

/// Checks `gather ~axis ~dst idx x`: `idx` int64 of `dst`'s shape, `x` of
/// `dst`'s dtype and rank and of its extents off `axis`, `dst` not mapping
/// two indices to one element and apart from `idx` and `x`.
pub fn plan(axis: usize, dst: View, idx: View, x: View) -> Result<Gather, String> {
    let r = dst.layout.shape.len();
    if axis >= r {
        return Err(format!("axis {axis} of a destination of rank {r}"));
    }
    check_index("positions", &idx, &dst.layout.shape)?;
    if x.layout.dtype != dst.layout.dtype {
        return Err(format!("the source is {} but the destination {}", x.layout.dtype.name(), dst.layout.dtype.name()));
    }
    let (xs, ds) = (&x.layout.shape, &dst.layout.shape);
    if xs.len() != r || (0..r).any(|a| a != axis && xs[a] != ds[a]) {
        return Err(format!("the source has shape {xs:?}, the destination {ds:?}: they differ off axis {axis}"));
    }
    check_dst(&dst, &[("positions", &idx), ("source", &x)])?;
    Ok(Gather { axis, dst, idx, x, far: false }.on_cache(crate::core::caches::largest()))
}

/// Elements a gather of single elements reads ahead of the one it copies,
/// to prefetch their source: random reads overlap, rather than each
/// waiting for memory in turn.
const AHEAD: isize = 16;

/// Rows a gather of whole rows prefetches ahead of the one it copies.
const ROWS_AHEAD: usize = 8;

/// Bytes of a row prefetched at most: past them the processor's own
/// prefetcher follows the row.
const ROW_PREFETCH: usize = 512;

/// What a run of single elements reads and writes: the buffers, the
/// steps of the destination, positions and source along the run, the
/// source's step along the gathered axis and that axis's extent. Passed
/// by value into [`Steps::run`], so that its loop keeps them in registers.
#[derive(Clone, Copy)]
struct Steps {
    db: *mut u8,
    ib: *const u8,
    xb: *const u8,
    sd: isize,
    si: isize,
    sx: isize,
    sa: isize,
    n: u64,
}

impl Steps {
    /// Gathers `len` elements: element `k` of the destination, at element
    /// index `od + k sd`, from the source at `ox + k sx + p sa`, `p` the
    /// position at `oi + k si`, or the element of zero bits where `p`
    /// lies outside `0..n`; where `PF`, the source [`AHEAD`] elements on
    /// prefetched.
    ///
    /// # Safety
    /// Every position and destination element lies in its checked layout,
    /// and so does the source element at each position inside `0..n`; the
    /// destination is apart from the operands and no other thread writes
    /// these elements.
    #[inline(always)]
    unsafe fn run<S: Slot, const PF: bool>(self, od: isize, oi: isize, ox: isize, len: isize) {
        let Steps { db, ib, xb, sd, si, sx, sa, n } = self;
        for k in 0..len {
            if PF && k + AHEAD < len {
                // SAFETY: the position lies in idx's checked layout.
                let q = unsafe { <u64 as Slot>::get(ib, oi + (k + AHEAD) * si) };
                if q < n {
                    prefetch(S::addr(xb, ox + (k + AHEAD) * sx + q as isize * sa));
                }
            }
            // SAFETY: as this function's contract.
            unsafe {
                let p = <u64 as Slot>::get(ib, oi + k * si);
                let v = if p < n { S::get(xb, ox + k * sx + p as isize * sa) } else { S::ZERO };
                S::put(db, od + k * sd, v);
            }
        }
    }

    /// [`Steps::run`], compiled apart where the destination and positions
    /// step 1 and the source does not move along the run (constant steps,
    /// which the compiler folds in).
    ///
    /// # Safety
    /// As [`Steps::run`].
    #[inline(always)]
    unsafe fn run_any<S: Slot, const PF: bool>(self, od: isize, oi: isize, ox: isize, len: isize) {
        if (self.sd, self.si, self.sx) == (1, 1, 0) {
            // SAFETY: as this function's contract, the steps unchanged.
            unsafe { Steps { sd: 1, si: 1, sx: 0, ..self }.run::<S, PF>(od, oi, ox, len) }
        } else {
            // SAFETY: as this function's contract.
            unsafe { self.run::<S, PF>(od, oi, ox, len) }
        }
    }
}

impl Gather {
    /// The call with single elements prefetched where its source exceeds
    /// `cache` bytes ([`plan`] takes the host's largest cache).
    pub fn on_cache(self, cache: usize) -> Gather {
        let far = self.x.layout.size().saturating_mul(self.x.layout.dtype.bits()) / 8 > cache;
        Gather { far, ..self }
    }

    /// The elements of a row, where the gather copies whole rows: the axes
    /// after the gathered one hold a row's elements one after the other
    /// in both the destination and the source, the positions step 0 along
    /// them, and the gathered axis is not the last.
    fn row_cells(&self) -> Option<usize> {
        let a = self.axis;
        let (d, i, x) = (&self.dst.layout, &self.idx.layout, &self.x.layout);
        if a + 1 == d.shape.len() {
            return None;
        }
        let steps_0 = (a + 1..d.shape.len()).all(|b| i.strides[b] == 0 || i.shape[b] <= 1);
        let rows_dense = dense(&d.shape[a + 1..], &d.strides[a + 1..]) && dense(&x.shape[a + 1..], &x.strides[a + 1..]);
        (steps_0 && rows_dense).then(|| d.shape[a + 1..].iter().product())
    }

    /// Copies the destination's rows `lo..hi` (C-order positions over its
    /// axes up to the gathered one) of `cells` elements each, by streaming
    /// stores where `streaming`: a row's source is prefetched
    /// [`ROWS_AHEAD`] rows before it is copied.
    fn rows_part<S: Slot>(&self, lo: usize, hi: usize, cells: usize, streaming: bool) {
        let a = self.axis;
        let (d, i, x) = (&self.dst.layout, &self.idx.layout, &self.x.layout);
        let (db, ib, xb) = (self.dst.memory.base, self.idx.memory.base, self.x.memory.base);
        let n = x.shape[a] as u64;
        let (sd, si, sa) = (d.strides[a], i.strides[a], x.strides[a]);
        let lines = (cells * self.dst.layout.dtype.bits()).div_ceil(8).min(ROW_PREFETCH);
        // The rows pushed so far, the last ROWS_AHEAD of them waiting: the
        // element index of each one's first element in dst and, where its
        // position lies inside the axis, in x.
        let mut ring = [(0isize, None::<isize>); ROWS_AHEAD];
        let mut pushed = 0usize;
        let copy = |(od, ox): (isize, Option<isize>)| match ox {
            // SAFETY: the row's elements lie one after the other in the
            // checked layouts of x (a position inside its axis) and dst
            // (row_cells), which do not overlap (plan); this part alone
            // writes the row.
            Some(ox) => unsafe { copy_run::<S>(streaming, xb, ox, 1, db, od, 1, cells) },
            // SAFETY: as above.
            None => unsafe { S::zero(db, od, 1, cells) },
        };
        runs(&d.shape[..=a], lo, hi, |idx, k0, k1| {
            let (od, oi) = (at(d, idx), at(i, idx));
            let ox = at(x, idx) - k0 as isize * sa;
            for k in 0..(k1 - k0) as isize {
                // SAFETY: the position lies in idx's checked layout.
                let p = unsafe { <u64 as Slot>::get(ib, oi + k * si) };
                let src = (p < n).then(|| ox + p as isize * sa);
                if let Some(s) = src {
                    prefetch_lines(S::addr(xb, s), lines);
                }
                let slot = &mut ring[pushed % ROWS_AHEAD];
                if pushed >= ROWS_AHEAD {
                    copy(*slot);
                }
                *slot = (od + k * sd, src);
                pushed += 1;
            }
        });
        for j in pushed.saturating_sub(ROWS_AHEAD)..pushed {
            copy(ring[j % ROWS_AHEAD]);
        }
        fence();
    }

    /// Gathers the destination's C-order positions `lo..hi`, element by
    /// element, a run at a time ([`Steps::run`]), the source prefetched
    /// where it exceeds the cache.
    fn part<S: Slot>(&self, lo: usize, hi: usize) {
        let (d, i, x) = (&self.dst.layout, &self.idx.layout, &self.x.layout);
        let last = d.shape.len() - 1;
        let steps = Steps {
            db: self.dst.memory.base,
            ib: self.idx.memory.base,
            xb: self.x.memory.base,
            sd: last_stride(d),
            si: last_stride(i),
            sx: if self.axis == last { 0 } else { last_stride(x) },
            sa: x.strides[self.axis],
            n: x.shape[self.axis] as u64,
        };
        let mut xi = Vec::with_capacity(last + 1);
        runs(&d.shape, lo, hi, |idx, k0, k1| {
            xi.clear();
            xi.extend_from_slice(idx);
            xi[self.axis] = 0;
            let (od, oi, ox) = (at(d, idx), at(i, idx), at(x, &xi));
            let len = (k1 - k0) as isize;
            // SAFETY: every element of the run lies in its checked layout,
            // the source's at a position inside its axis; dst is apart
            // from the operands (plan) and this part alone writes it.
            unsafe {
                if self.far {
                    steps.run_any::<S, true>(od, oi, ox, len)
                } else {
                    steps.run_any::<S, false>(od, oi, ox, len)
                }
            }
        });
    }
}

impl Call for Gather {
    fn claims(&self) -> Vec<Claim> {
        claims(&self.dst, &[&self.idx, &self.x])
    }

    fn work(&self) -> usize {
        // A random read costs about a cache line.
        self.dst.layout.size().saturating_mul(self.dst.layout.dtype.bits().div_ceil(8) + 8 + 64)
    }

    fn run(self) -> Result<(), String> {
        let size = self.dst.layout.size();
        let k = parts(size, 1 << 15);
        match self.row_cells().filter(|&c| c > 0) {
            Some(cells) => {
                let rows = size / cells;
                let streaming = streams(size.saturating_mul(self.dst.layout.dtype.bits()) / 8);
                crate::with_slot!(self.dst.layout.dtype.bits(), S => pool::run_parts(k, |p| {
                    let (lo, hi) = bounds(rows, k, p);
                    self.rows_part::<S>(lo, hi, cells, streaming)
                }))
            }
            None => crate::with_slot!(self.dst.layout.dtype.bits(), S => pool::run_parts(k, |p| {
                let (lo, hi) = bounds(size, k, p);
                self.part::<S>(lo, hi)
            })),
        }
        Ok(())
    }
}
