//! assemble: the destination built from pieces, each copied into its region
//! (a start and a stop per axis), the last piece whose region holds an index
//! giving its element, a fill where none does.
//!
//! The destination is split among threads by C-order positions. Along each
//! run of its last axis a thread finds the pieces whose regions hold the
//! run's other coordinates, stores the fill where none of their intervals
//! reaches, then copies the pieces' intervals in order, a later piece's
//! over an earlier one's.

use super::slot::{copy_run, streams, Slot};
use crate::core::stream::fence;
use super::walk::{at, bounds, last_stride, parts, runs};
use super::{check_dst, claims};
use crate::core::call::Call;
use crate::core::door::Claim;
use crate::core::layout::View;
use crate::core::pool;

/// A piece: its region in the destination, a start and a stop per axis,
/// and the array of the region's shape that it copies there.
#[derive(Clone, Debug)]
pub struct Piece {
    pub region: Vec<(usize, usize)>,
    pub view: View,
}

/// The shape a piece of `region` has, or why the region does not fit a
/// destination of `shape`: one start and stop per axis, start <= stop <=
/// the axis's extent.
pub fn shape(shape: &[usize], region: &[(usize, usize)]) -> Result<Vec<usize>, String> {
    if region.len() != shape.len() {
        return Err(format!("a region of {} axes in a destination of rank {}", region.len(), shape.len()));
    }
    (region.iter().zip(shape).enumerate())
        .map(|(a, (&(lo, hi), &n))| {
            if lo <= hi && hi <= n {
                Ok(hi - lo)
            } else {
                Err(format!("axis {a}'s region {lo}..{hi} is not within 0..{n}"))
            }
        })
        .collect()
}

/// A checked assemble call.
pub struct Assemble {
    /// The fill's bits, in the low bits.
    fill: u128,
    dst: View,
    pieces: Vec<Piece>,
}

/// Checks `assemble ~fill ~dst pieces`: each piece of the destination's
/// dtype, its region within the destination and its shape the region's
/// ([`shape`]); the destination not mapping two indices to one element
/// and apart from every piece. `fill` holds the fill's bits.
pub fn plan(fill: u128, dst: View, pieces: Vec<Piece>) -> Result<Assemble, String> {
    for (j, p) in pieces.iter().enumerate() {
        let want = shape(&dst.layout.shape, &p.region).map_err(|e| format!("piece {j}: {e}"))?;
        if p.view.layout.shape != want {
            return Err(format!("piece {j} has shape {:?}, its region {want:?}", p.view.layout.shape));
        }
        if p.view.layout.dtype != dst.layout.dtype {
            return Err(format!(
                "piece {j} is {} but the destination {}",
                p.view.layout.dtype.name(),
                dst.layout.dtype.name()
            ));
        }
    }
    let named: Vec<(String, &View)> = pieces.iter().enumerate().map(|(j, p)| (format!("piece {j}"), &p.view)).collect();
    let named: Vec<(&str, &View)> = named.iter().map(|(s, v)| (s.as_str(), *v)).collect();
    check_dst(&dst, &named)?;
    Ok(Assemble { fill, dst, pieces })
}

impl Assemble {
    /// Assembles the destination's C-order positions `lo..hi`.
    fn part<S: Slot>(&self, lo: usize, hi: usize) {
        let d = &self.dst.layout;
        // The pieces read and the destination written pass through the
        // caches together.
        let streaming = streams(d.size().saturating_mul(d.dtype.bits()) / 4);
        let r = d.shape.len();
        let fill = S::of_bits(self.fill);
        let sd = last_stride(d);
        // The pieces that can reach the part's rows along axis 0.
        let row = d.shape.iter().skip(1).product::<usize>().max(1);
        let (r0, r1) = (lo / row, hi.div_ceil(row));
        let near: Vec<&Piece> = (self.pieces.iter())
            .filter(|p| p.region.first().is_none_or(|&(a, b)| a < r1 && r0 < b && a < b))
            .collect();
        let mut hits: Vec<(&Piece, usize, usize)> = Vec::new();
        let mut cover: Vec<(usize, usize)> = Vec::new();
        let mut inner = vec![0usize; r];
        runs(&d.shape, lo, hi, |idx, k0, k1| {
            hits.clear();
            for p in &near {
                let holds = (0..r.saturating_sub(1)).all(|a| p.region[a].0 <= idx[a] && idx[a] < p.region[a].1);
                let (a, b) = p.region.last().copied().unwrap_or((0, 1));
                let (a, b) = (a.max(k0), b.min(k1));
                if holds && a < b {
                    hits.push((p, a, b));
                }
            }
            let od = at(d, idx) - k0 as isize * sd;
            // The fill where no piece reaches.
            cover.clear();
            cover.extend(hits.iter().map(|&(_, a, b)| (a, b)));
            cover.sort_unstable();
            let mut next = k0;
            for &(a, b) in cover.iter().chain(std::iter::once(&(k1, k1))) {
                for k in next..a.max(next) {
                    // SAFETY: the element lies in dst's checked layout;
                    // this part alone writes it.
                    unsafe { S::put(self.dst.memory.base, od + k as isize * sd, fill) };
                }
                next = next.max(b);
            }
            // The pieces, in order.
            for &(p, a, b) in &hits {
                let v = &p.view.layout;
                for (x, (&i, &(s, _))) in inner.iter_mut().zip(idx.iter().zip(&p.region)) {
                    *x = i - s;
                }
                if let Some(l) = inner.last_mut() {
                    *l = a - p.region[r - 1].0;
                }
                // SAFETY: the elements lie in the piece's and dst's checked
                // layouts, which do not overlap (plan); this part alone
                // writes dst's.
                unsafe {
                    let (src, ss) = (p.view.memory.base, last_stride(v));
                    copy_run::<S>(streaming, src, at(v, &inner), ss, self.dst.memory.base, od + a as isize * sd, sd, b - a)
                };
            }
        });
    }
}

impl Call for Assemble {
    fn claims(&self) -> Vec<Claim> {
        let reads: Vec<&View> = self.pieces.iter().map(|p| &p.view).collect();
        claims(&self.dst, &reads)
    }

    fn work(&self) -> usize {
        let w = self.dst.layout.dtype.bits().div_ceil(8);
        let copied: usize = self.pieces.iter().map(|p| p.view.layout.size()).sum();
        (self.dst.layout.size().saturating_add(copied)).saturating_mul(w).saturating_add(64 * self.pieces.len())
    }

    fn run(self) -> Result<(), String> {
        let size = self.dst.layout.size();
        let k = parts(size, 1 << 16);
        crate::with_slot!(self.dst.layout.dtype.bits(), S => pool::run_parts(k, |p| {
            let (lo, hi) = bounds(size, k, p);
            self.part::<S>(lo, hi);
            fence();
        }));
        Ok(())
    }
}
