//! gather: each element of the destination read from the source at a
//! position along one axis that an int64 array holds, the element of zero
//! bits where the position lies outside the axis.

use super::slot::Slot;
use super::walk::{at, bounds, last_stride, parts, runs};
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
    Ok(Gather { axis, dst, idx, x })
}

impl Gather {
    /// Gathers the destination's C-order positions `lo..hi`.
    fn part<S: Slot>(&self, lo: usize, hi: usize) {
        let (d, i, x) = (&self.dst.layout, &self.idx.layout, &self.x.layout);
        let (db, ib, xb) = (self.dst.memory.base, self.idx.memory.base, self.x.memory.base);
        let n = x.shape[self.axis] as u64;
        let sa = x.strides[self.axis];
        let last = d.shape.len() - 1;
        let (sd, si) = (last_stride(d), last_stride(i));
        let sx = if self.axis == last { 0 } else { last_stride(x) };
        let mut xi = Vec::with_capacity(last + 1);
        runs(&d.shape, lo, hi, |idx, k0, k1| {
            xi.clear();
            xi.extend_from_slice(idx);
            xi[self.axis] = 0;
            let (od, oi, ox) = (at(d, idx), at(i, idx), at(x, &xi));
            let len = k1 - k0;
            if si == 0 && self.axis != last {
                // One position for the whole run: a copy of a run of x.
                // SAFETY: the position lies in `idx`'s checked layout.
                let p = unsafe { <u64 as Slot>::get(ib, oi) };
                if p < n {
                    // SAFETY: the run's elements lie in the checked layouts
                    // of x (its position inside the axis) and dst, which
                    // do not overlap (plan); this part alone writes them.
                    unsafe { S::copy(xb, ox + p as isize * sa, sx, db, od, sd, len) };
                } else {
                    for k in 0..len as isize {
                        // SAFETY: as above.
                        unsafe { S::put(db, od + k * sd, S::ZERO) };
                    }
                }
                return;
            }
            for k in 0..len as isize {
                // SAFETY: every element lies in its checked layout, the
                // source's at a position inside its axis; dst is apart
                // from the operands (plan) and this part alone writes it.
                unsafe {
                    let p = <u64 as Slot>::get(ib, oi + k * si);
                    let v = if p < n { S::get(xb, ox + k * sx + p as isize * sa) } else { S::ZERO };
                    S::put(db, od + k * sd, v);
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
        crate::with_slot!(self.dst.layout.dtype.bits(), S => pool::run_parts(k, |p| {
            let (lo, hi) = bounds(size, k, p);
            self.part::<S>(lo, hi)
        }));
        Ok(())
    }
}
