//! gather_ranges: runs of a source along one axis packed one after another
//! into a destination, at each index of the axes before it.
//!
//! starts and ends are `[lead…; k]`, the source `[lead…; n; cells…]` and the
//! destination `[lead…; size; cells…]`. At each lead index, position `p` of
//! the destination belongs to the first run `j` whose end exceeds `p`, and
//! reads the source at `starts[j] + p - e`, `e` being `ends[j - 1]` (0 for
//! `j = 0`), in int64 arithmetic modulo 2^64; a position past every end, or
//! a source position outside `[0, n)`, reads the element of zero bits.
//!
//! Each lead index's ends are walked once, in order, keeping the greatest
//! end so far: run `j` holds the positions from that greatest end before it
//! up to its own end. Its positions whose source lies inside the axis are
//! one interval, copied by one memcpy where both the source's and the
//! destination's rows (a position's cells) lie one after the other, else
//! element by element along runs of the last axis; the rest are zeros.
//!
//! Where both are, the head of the next run's source is prefetched
//! ([`HEAD_PREFETCH`] bytes at most) before a run is copied: each run
//! starts a new stream at a place of its own, which the processor's own
//! prefetcher only follows once it has missed a few lines there.
//!
//! Threads split the destination's C-order positions at whole cache lines
//! of its memory where it is C-contiguous, so that no two write one byte;
//! in other layouts a sub-byte element shared with another thread's byte is
//! written by an atomic read-modify-write ([`super::slot`]). Each element's
//! bits depend on the operands alone, never on the split.

use super::slot::{copy_run, prefetch_lines, streams, Slot};
use crate::core::stream::fence;
use super::walk::{at, dense, parts, runs};
use super::{check_dst, check_index, claims};
use crate::core::call::Call;
use crate::core::door::Claim;
use crate::core::layout::{same_dims, View};
use crate::core::pool;

/// The destination's shape for starts and ends of shape `index`, `size`
/// positions along the packed axis and a source of shape `x`: `index`'s
/// lead axes (all but its last), then `size`, then `x`'s cells (its axes
/// after the packed one); or why they do not fit.
pub fn shape(index: &[usize], size: usize, x: &[usize]) -> Result<Vec<usize>, String> {
    let Some(lead) = index.len().checked_sub(1) else {
        return Err("0-d starts and ends: they need an axis of runs".into());
    };
    if x.len() <= lead || x[..lead] != index[..lead] {
        return Err(format!("the starts have shape {index:?} but the source {x:?}: the source must begin with the starts' axes but the last, then the packed axis"));
    }
    Ok(index[..lead].iter().copied().chain([size]).chain(x[lead + 1..].iter().copied()).collect())
}

/// Bytes of the next run's source prefetched at most while a run is
/// copied: about what a copy at memory speed moves in a miss's latency.
const HEAD_PREFETCH: usize = 1024;

/// A checked gather_ranges call.
pub struct GatherRanges {
    /// The lead axes' count: the packed axis.
    lead: usize,
    dst: View,
    starts: View,
    ends: View,
    x: View,
}

/// Checks `gather_ranges ~dst ~starts ~ends x`: starts int64 of at least
/// one axis, ends int64 of its shape, the source and the destination of
/// one dtype and of the shapes [`shape`] relates; the destination not
/// mapping two indices to one element and apart from the operands.
pub fn plan(dst: View, starts: View, ends: View, x: View) -> Result<GatherRanges, String> {
    check_index("starts", &starts, &starts.layout.shape)?;
    check_index("ends", &ends, &starts.layout.shape)?;
    if x.layout.dtype != dst.layout.dtype {
        return Err(format!("the source is {} but the destination {}", x.layout.dtype.name(), dst.layout.dtype.name()));
    }
    let (is, xs, ds) = (&starts.layout.shape, &x.layout.shape, &dst.layout.shape);
    let lead = is.len().saturating_sub(1);
    let size = ds.get(lead).copied().unwrap_or(0);
    let want = shape(is, size, xs)?;
    if !same_dims(ds, &want) {
        return Err(format!("the destination has shape {ds:?}, not {want:?}"));
    }
    check_dst(&dst, &[("starts", &starts), ("ends", &ends), ("source", &x)])?;
    Ok(GatherRanges { lead, dst, starts, ends, x })
}

/// A lead index's sub-arrays: the element index of their first element,
/// their shape and strides from the packed axis on.
struct Slab<'a> {
    base: isize,
    shape: &'a [usize],
    strides: &'a [isize],
    dense: bool,
}

impl<'a> Slab<'a> {
    fn new(v: &'a View, lead: usize, idx: &[usize]) -> Slab<'a> {
        let l = &v.layout;
        let (shape, strides) = (&l.shape[lead..], &l.strides[lead..]);
        Slab { base: at(l, idx), shape, strides, dense: dense(shape, strides) }
    }
}

impl GatherRanges {
    /// The destination's C-order positions `lo..hi` of part `p` of `k`:
    /// cut at whole cache lines of its memory where it is C-contiguous.
    fn bounds(&self, k: usize, p: usize) -> (usize, usize) {
        let d = &self.dst.layout;
        let total = d.size();
        let per_line = (512 / d.dtype.bits()).max(1);
        let e0 = if dense(&d.shape, &d.strides) { d.offset } else { 0 };
        let cut = |p: usize| {
            if p == 0 || p == k {
                return if p == 0 { 0 } else { total };
            }
            let c = (total as u128 * p as u128 / k as u128) as usize;
            ((e0 + c) / per_line * per_line).saturating_sub(e0).min(total)
        };
        (cut(p), cut(p + 1))
    }

    /// Fills the destination's C-order positions `lo..hi`.
    fn part<S: Slot>(&self, lo: usize, hi: usize) {
        let (d, x) = (&self.dst.layout, &self.x.layout);
        let lead = self.lead;
        let cells: usize = d.shape[lead + 1..].iter().product();
        let size = d.shape[lead];
        let n = x.shape[lead];
        let block = size * cells;
        if lo >= hi || block == 0 {
            return;
        }
        let lead_shape = &d.shape[..lead];
        let (sl, el) = (self.starts.layout.strides[lead], self.ends.layout.strides[lead]);
        let k = self.starts.layout.shape[lead];
        let (sb, eb) = (self.starts.memory.base, self.ends.memory.base);
        let mut li = vec![0usize; lead];
        for b in lo / block..hi.div_ceil(block) {
            let mut rest = b;
            for a in (0..lead).rev() {
                li[a] = rest % lead_shape[a];
                rest /= lead_shape[a];
            }
            let (dst, src) = (Slab::new(&self.dst, lead, &li), Slab::new(&self.x, lead, &li));
            let (s0, e0) = (at(&self.starts.layout, &li), at(&self.ends.layout, &li));
            // This part's elements of the block, as element positions in it.
            let (a, z) = (lo.max(b * block) - b * block, hi.min((b + 1) * block) - b * block);
            let mut done = 0i64; // the greatest end so far
            let mut prev = 0i64; // the previous run's end
            // Run j's start and end, each word read once: the next run's
            // read ahead where its head is prefetched.
            // SAFETY: j < k: the words lie in the checked layouts of the
            // starts and the ends, which no thread writes.
            let words = |j: isize| unsafe { (<u64 as Slot>::get(sb, s0 + j * sl) as i64, <u64 as Slot>::get(eb, e0 + j * el) as i64) };
            let mut ahead = None;
            for j in 0..k as isize {
                if done as i128 * cells as i128 >= z as i128 {
                    break;
                }
                let (st, end) = ahead.take().unwrap_or_else(|| words(j));
                if end > done {
                    let (p0, p1) = (done as usize, (end as u64).min(size as u64) as usize);
                    let base = st.wrapping_sub(prev) as i128;
                    // The positions whose source lies in [0, n).
                    let v0 = (p0 as i128).max(-base).min(p1 as i128) as usize;
                    let v1 = (p1 as i128).min(n as i128 - base).max(v0 as i128) as usize;
                    let clip = |p: usize, q: usize| ((p * cells).max(a), (q * cells).min(z));
                    if dst.dense && src.dense && j + 1 < k as isize && (end as i128 * cells as i128) < z as i128 {
                        let (st1, end1) = words(j + 1);
                        self.prefetch_head::<S>(&src, st1, end1.saturating_sub(end), cells);
                        ahead = Some((st1, end1));
                    }
                    self.zero::<S>(&dst, clip(p0, v0));
                    self.copy::<S>(&dst, &src, clip(v0, v1), base as isize);
                    self.zero::<S>(&dst, clip(v1, p1));
                    done = end;
                }
                prev = end;
            }
            self.zero::<S>(&dst, (((done.max(0) as u64).min(size as u64) as usize * cells).max(a), z));
        }
    }

    /// Asks for the first lines of a dense source slab's `len` positions
    /// from position `st` (a run's, not yet checked against the axis: a
    /// prefetch never faults), [`HEAD_PREFETCH`] bytes at most.
    fn prefetch_head<S: Slot>(&self, src: &Slab, st: i64, len: i64, cells: usize) {
        let bits = self.x.layout.dtype.bits() as u128;
        let bytes = (len.max(0) as u128 * cells as u128 * bits / 8).min(HEAD_PREFETCH as u128) as usize;
        let first = src.base.wrapping_add((st as isize).wrapping_mul(cells as isize));
        prefetch_lines(S::addr(self.x.memory.base, first), bytes);
    }

    /// Writes zeros at a slab's element positions `lo..hi`.
    fn zero<S: Slot>(&self, dst: &Slab, (lo, hi): (usize, usize)) {
        if lo >= hi {
            return;
        }
        let db = self.dst.memory.base;
        if dst.dense {
            // SAFETY: the slab's positions lo..hi lie one after the other
            // in the destination's checked layout; this part alone writes
            // them.
            return unsafe { S::zero(db, dst.base + lo as isize, 1, hi - lo) };
        }
        let sd = *dst.strides.last().expect("a slab has the packed axis");
        runs(dst.shape, lo, hi, |idx, k0, k1| {
            // SAFETY: the run lies in the destination's checked layout;
            // this part alone writes it.
            unsafe { S::zero(db, dst.base + at_in(dst, idx, 0), sd, k1 - k0) }
        });
    }

    /// Copies into a slab's element positions `lo..hi` the source's at
    /// positions `shift` further along the packed axis, all inside it.
    fn copy<S: Slot>(&self, dst: &Slab, src: &Slab, (lo, hi): (usize, usize), shift: isize) {
        if lo >= hi {
            return;
        }
        let (db, xb) = (self.dst.memory.base, self.x.memory.base);
        let cells: usize = dst.shape[1..].iter().product();
        if dst.dense && src.dense {
            let s = src.base + lo as isize + shift * cells as isize;
            // The runs read and the destination written pass through the
            // caches together.
            let streaming = streams(self.dst.layout.size().saturating_mul(self.dst.layout.dtype.bits()) / 4);
            // SAFETY: both runs lie one after the other in their checked
            // layouts (the source's inside its packed axis, by the caller),
            // which do not overlap (plan); this part alone writes dst's.
            return unsafe { copy_run::<S>(streaming, xb, s, 1, db, dst.base + lo as isize, 1, hi - lo) };
        }
        let (sd, sx) = (*dst.strides.last().expect("a slab"), *src.strides.last().expect("a slab"));
        runs(dst.shape, lo, hi, |idx, k0, k1| {
            // A slab of the packed axis alone runs along it: the shift is
            // then the run's.
            // SAFETY: as above, element by element along the run.
            unsafe { S::copy(xb, src.base + at_in(src, idx, shift), sx, db, dst.base + at_in(dst, idx, 0), sd, k1 - k0) }
        });
    }
}

/// The element index, from a slab's first, of coordinates `idx` of it with
/// `shift` added to the packed one.
#[inline]
fn at_in(s: &Slab, idx: &[usize], shift: isize) -> isize {
    idx.iter().zip(s.strides).fold(shift * s.strides[0], |acc, (&i, &st)| acc + i as isize * st)
}

impl Call for GatherRanges {
    fn claims(&self) -> Vec<Claim> {
        claims(&self.dst, &[&self.starts, &self.ends, &self.x])
    }

    fn work(&self) -> usize {
        let bytes = (self.dst.layout.size().saturating_mul(self.dst.layout.dtype.bits())).div_ceil(8);
        // Each part walks its lead indices' ends: a few parts each.
        let walks = self.starts.layout.size().saturating_mul(16 * 4);
        bytes.saturating_mul(2).saturating_add(walks)
    }

    fn run(self) -> Result<(), String> {
        let total = self.dst.layout.size();
        let k = parts(total, 1 << 16);
        crate::with_slot!(self.dst.layout.dtype.bits(), S => pool::run_parts(k, |p| {
            let (lo, hi) = self.bounds(k, p);
            self.part::<S>(lo, hi);
            fence();
        }));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::dtype::Dtype;
    use crate::core::layout::{Layout, Memory};

    fn view(buf: &mut [u64], layout: Layout) -> View {
        View::new(layout, Memory { base: buf.as_mut_ptr() as *mut u8, bytes: buf.len() * 8 }).unwrap()
    }

    #[test]
    fn parts_of_a_contiguous_destination_cut_at_whole_cache_lines() {
        for d in [Dtype::Bit, Dtype::Int4, Dtype::Float32, Dtype::Complex128] {
            let (mut db, mut sb, mut eb, mut xb) = (vec![0u64; 40_000], vec![0u64; 2], vec![0u64; 2], vec![0u64; 64]);
            let dst = view(&mut db, Layout { offset: 3, ..Layout::contiguous(d, &[2, 5000]) });
            let (st, en) = (view(&mut sb, Layout::contiguous(Dtype::Int64, &[2, 1])), view(&mut eb, Layout::contiguous(Dtype::Int64, &[2, 1])));
            let x = view(&mut xb, Layout::contiguous(d, &[2, 10]));
            let g = plan(dst, st, en, x).unwrap();
            for k in 1..9 {
                let mut next = 0;
                for p in 0..k {
                    let (lo, hi) = g.bounds(k, p);
                    assert_eq!(lo, next);
                    assert!(lo <= hi);
                    if lo != 0 && lo != 10_000 {
                        assert_eq!((3 + lo) * d.bits() % 512, 0, "{} part {p} of {k}", d.name());
                    }
                    next = hi;
                }
                assert_eq!(next, 10_000);
            }
        }
    }
}
