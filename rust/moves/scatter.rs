//! scatter: the destination is `into` with updates combined at positions
//! along one axis that an int64 array holds: stored (Set), added left to
//! right from the target (Add), or kept as the greatest or least (Max, Min).
//!
//! A slice is the updates at one index off the scattered axis, with their
//! positions; all of a slice's targets lie in one slice of the destination,
//! and no other slice's do. So each target's updates are those of one slice
//! in order along the axis, and a thread that walks a slice in that order,
//! keeping the targets of some range of positions, combines each of them in
//! the contract's order. Two strategies split the work among threads:
//!
//! - [`Strategy::PerSlice`]: slices split among threads, each slice walked
//!   whole by one thread;
//! - [`Strategy::ByUpdate`]: each slice's updates split among the threads,
//!   for Set under `unique`: with at most one update a target, the
//!   promise the call relies on, no two threads write one target and no
//!   order among the updates matters (a broken promise leaves either
//!   write's words there, by relaxed atomic stores: [`Slot::put_shared`]);
//! - [`Strategy::ByTarget`]: each slice's targets split among the threads.
//!   A narrow float's Add (not `unique`) sorts the slice's updates by
//!   blocks of targets on every thread, each block then summed by one
//!   thread (`narrow_add_by_blocks`, which states the memory it holds, the
//!   contract's figures); the others give each thread a range of targets
//!   and have every thread walk the whole slice, combining the updates
//!   that land in its range: reading the positions once on each thread
//!   gives the bits a sort would. A thread reads them in batches, keeping
//!   those of its range without a branch ([`Scatter::each`]): a test on
//!   each mispredicted every other time on two threads (`time_moves`'s
//!   float32 Add split by target with a cache of 0 bytes, two threads: 10M
//!   random positions into 1M targets 112-114 -> 27-30 ms, 1M into 100K
//!   11-13 -> 2.4 ms; a one-off run into 10M targets 112 -> 41 ms, where
//!   one thread takes 69).
//!
//! [`Strategy::ByUpdate`] is taken for Set under `unique` where the slices
//! are fewer than the threads, there are at least 2^16 updates and the
//! destination's base is aligned as [`Slot::put_shared`] needs: it reads
//! each position once, where [`Strategy::ByTarget`] reads them on every
//! thread. Otherwise [`Strategy::ByTarget`] is taken where the slices are fewer than the
//! threads, there are at least 2^16 updates (any number for a narrow
//! float) and the slices' targets, in their dtype (float32 for a narrow
//! float), exceed the host's largest cache ([`crate::core::caches::largest`]): targets
//! that fit it are combined faster by one thread than by several each
//! reading every position.
//!
//! Where the positions and updates lie contiguous along the axis, the
//! loop prefetches their lines [`Scatter::lead`] updates ahead (about a
//! sixteenth of the first-level cache's bytes of them), and where the
//! slices' targets exceed a core's second-level cache (or the largest
//! cache, where a host reports it smaller), each update's target
//! [`AHEAD`] updates before it is combined, so that the misses overlap,
//! unless the positions climb through the targets a line or so at a
//! time, which the hardware's prefetcher follows ([`Scatter::climbs`]).
//! Measured on an Intel Xeon (model 167, KVM, 2 cores, L2 2 MiB, L3
//! reported 480 MiB), float32 Add on one thread, best of 5 on a machine
//! another build kept busy (`bench::time_scatter_add`), before -> after:
//! 10M random positions into 1M targets 50 -> 34 ms; the same sorted 29
//! -> 13 ms; 1M random into 100K 1.10 -> 1.07 ms, sorted 1.3 -> 1.17 ms;
//! 10M random into 10M 72 -> 70 ms, sorted 17 -> 12.5 ms. The hardware's
//! prefetcher alone fell behind on the positions and updates there;
//! targets prefetched past L2 without the positions and updates were far
//! slower (10M into 1M: 34-47 -> 94-111 ms, the loop stalling at the
//! prefetches), and targets within the second-level cache gain nothing
//! from them.
//!
//! A narrow float's Add summing each slice on one thread keeps a float32
//! sum for each target, and a byte that says whether the target has one
//! yet (5 bytes a target), and rounds each sum once into the dtype at the
//! end of the slice. Under `unique`, the promise of at most one update a
//! target that the call relies on, the sum of a target and its update
//! rounds at once, without the float32 sums.

use super::slot::{copy_run, prefetch, streams, Slot};
use crate::core::stream::fence;
use super::walk::{at, bounds, last_stride, map_parts, parts, runs};
use super::num::{Decode, Narrowed, Num};
use super::slot::Packed;
use crate::core::narrow::Narrow;
use super::{check_dst, check_index, claims};
use crate::loops::arith::Arith;
use crate::core::call::Call;
use crate::core::door::Claim;
use crate::core::layout::{same_dims, View};
use crate::core::pool;

/// How a scatter combines its updates with their target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// The last update, in C order of the updates.
    Set,
    /// The target plus each update, left to right.
    Add,
    /// The greatest of the target and the updates, a NaN where one is.
    Max,
    /// The least of the target and the updates, a NaN where one is.
    Min,
}

/// How a scatter's work is split among threads (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Each slice on one thread.
    PerSlice,
    /// Each slice's targets split among the threads.
    ByTarget,
    /// Each slice's updates split among the threads (Set under `unique`).
    ByUpdate,
}

/// What the strategy depends on of the host: its threads and the bytes of
/// its largest cache.
#[derive(Clone, Copy, Debug)]
pub struct Host {
    pub threads: usize,
    pub cache: usize,
}

impl Host {
    /// The pool's threads and the largest cache the host reports.
    pub fn current() -> Host {
        Host { threads: pool::threads(), cache: crate::core::caches::largest() }
    }
}

/// A checked scatter call.
pub struct Scatter {
    combine: Combine,
    unique: bool,
    axis: usize,
    dst: View,
    into: View,
    idx: View,
    upd: View,
    /// Whether `dst` is `into`, element for element.
    in_place: bool,
    strategy: Strategy,
    threads: usize,
    /// Whether the slices' targets exceed a core's second-level cache (or
    /// the host's largest, where smaller), so that each target is
    /// prefetched ahead of its update.
    far: bool,
}

/// Whether two views are the same elements of the same memory.
fn same_elements(a: &View, b: &View) -> bool {
    let (la, lb) = (&a.layout, &b.layout);
    a.memory.base == b.memory.base
        && la.dtype == lb.dtype
        && la.offset == lb.offset
        && same_dims(&la.shape, &lb.shape)
        && same_dims(&la.strides, &lb.strides)
}

/// Checks `scatter c ~unique ~axis ~dst ~into idx updates`, choosing its
/// strategy for the current host ([`Scatter::on`] chooses it for another):
/// `dst` and `into` of one dtype and shape, `updates` of their dtype and
/// of their extents off `axis`, `idx` int64 of the updates' shape; `dst`
/// not mapping two indices to one element, apart from `idx` and
/// `updates`, and either apart from `into` or `into` itself.
pub fn plan(c: Combine, unique: bool, axis: usize, dst: View, into: View, idx: View, upd: View) -> Result<Scatter, String> {
    let d = dst.layout.dtype;
    let r = dst.layout.shape.len();
    if axis >= r {
        return Err(format!("axis {axis} of a destination of rank {r}"));
    }
    if into.layout.dtype != d || upd.layout.dtype != d {
        return Err(format!(
            "the destination is {}, into {} and the updates {}: they must share a dtype",
            d.name(),
            into.layout.dtype.name(),
            upd.layout.dtype.name()
        ));
    }
    if !same_dims(&into.layout.shape, &dst.layout.shape) {
        return Err(format!("into has shape {:?}, the destination {:?}", into.layout.shape, dst.layout.shape));
    }
    let (us, ds) = (&upd.layout.shape, &dst.layout.shape);
    if us.len() != r || (0..r).any(|a| a != axis && us[a] != ds[a]) {
        return Err(format!("the updates have shape {us:?}, the destination {ds:?}: they differ off axis {axis}"));
    }
    check_index("positions", &idx, us)?;
    check_dst(&dst, &[("positions", &idx), ("updates", &upd)])?;
    let in_place = same_elements(&dst, &into);
    if !in_place && dst.overlaps(&into) {
        return Err("the destination overlaps into without being it".into());
    }
    let call = Scatter { combine: c, unique, axis, dst, into, idx, upd, in_place, strategy: Strategy::PerSlice, threads: 1, far: false };
    Ok(call.on(Host::current()))
}

/// Updates a scatter reads ahead of the one it combines, to prefetch their
/// targets.
const AHEAD: isize = 16;

/// The most positions a thread that splits a slice by target reads at a
/// time, keeping those in its range ([`Scatter::each`]): it reads
/// [`AHEAD`] for each thread, so that about [`AHEAD`] targets of its own
/// are prefetched ahead of the one combined.
const FILTER: usize = 256;

/// Positions of a slice read to tell whether they climb
/// ([`Scatter::climbs`]).
const CLIMB: usize = 256;

/// Where a slice's elements start in the destination, the positions and
/// the updates.
#[derive(Clone, Copy)]
struct Slice {
    d: isize,
    i: isize,
    u: isize,
}

impl Scatter {
    /// The call with its strategy chosen for `host`, where the slices are
    /// fewer than its threads: each slice's updates split among them for
    /// Set under `unique` from 2^16 updates on (a destination aligned for
    /// [`Slot::put_shared`]), else its targets where they exceed the host's
    /// largest cache, from 2^16 updates on or for a narrow float any
    /// number of them; targets prefetched where they exceed, in their
    /// dtype, a core's second-level cache or the largest, the smaller.
    pub fn on(self, host: Host) -> Scatter {
        let ds = &self.dst.layout.shape;
        let d = self.dst.layout.dtype;
        let m = self.upd.layout.size();
        let slices: usize = self.slice_shape().iter().product();
        let narrow = d.is_narrow_float();
        let targets = slices.saturating_mul(ds[self.axis]);
        let width = if narrow { 4 } else { d.bits().div_ceil(8) };
        let big = targets.saturating_mul(width) > host.cache;
        let far = targets.saturating_mul(d.bits()) / 8 > host.cache.min(crate::core::caches::sizes().l2);
        let aligned = (self.dst.memory.base as usize).is_multiple_of(d.bits().div_ceil(8).min(8));
        let strategy = if slices >= host.threads {
            Strategy::PerSlice
        } else if self.combine == Combine::Set && self.unique && m >= 1 << 16 && aligned {
            Strategy::ByUpdate
        } else if (narrow || m >= 1 << 16) && big {
            Strategy::ByTarget
        } else {
            Strategy::PerSlice
        };
        Scatter { strategy, threads: host.threads, far, ..self }
    }

    /// The strategy the call takes.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The shape of the slices: the updates' shape without the axis.
    fn slice_shape(&self) -> Vec<usize> {
        let mut s = self.upd.layout.shape.clone();
        s.remove(self.axis);
        s
    }

    /// Calls `f` with slices `lo..hi`, in C order.
    fn slices(&self, lo: usize, hi: usize, mut f: impl FnMut(Slice)) {
        let (d, i, u) = (&self.dst.layout, &self.idx.layout, &self.upd.layout);
        let mut full = vec![0usize; d.shape.len()];
        runs(&self.slice_shape(), lo, hi, |idx, k0, k1| {
            let mut sc = idx.to_vec();
            for k in k0..k1 {
                if let Some(l) = sc.last_mut() {
                    *l = k;
                }
                let mut c = sc.iter().copied();
                for (a, x) in full.iter_mut().enumerate() {
                    *x = if a == self.axis { 0 } else { c.next().expect("a coordinate off the axis") };
                }
                f(Slice { d: at(d, &full), i: at(i, &full), u: at(u, &full) });
            }
        });
    }

    /// Calls `f(p, target, update)` for each update `js` of slice `s`
    /// whose position `p` lies in `lo..hi`, with the element indices of its
    /// target and of itself, in order along the axis; where `PF`, the
    /// target of each update [`AHEAD`] on is prefetched. Where the
    /// positions and updates are contiguous along the axis, their lines
    /// [`Scatter::lead`] updates on are prefetched too, one of each for
    /// every 8 updates. Where `SPLIT`, the slice split by target
    /// ([`Strategy::ByTarget`]) and half the positions or more outside the
    /// range at random, they are read [`AHEAD`] for each thread at a time
    /// (at most [`FILTER`]), those inside the range kept without a branch
    /// (a test on each would mispredict half the time) and their targets
    /// prefetched where `PF`, then handed to `f` while the next batch is
    /// read. `f` should hold what it reads by value (a `move` closure of
    /// locals): a reference it holds would be read again after each write
    /// through a pointer.
    #[inline(always)]
    fn each<const PF: bool, const SPLIT: bool>(&self, s: Slice, (lo, hi): (usize, usize), js: (usize, usize), mut f: impl FnMut(usize, isize, isize)) {
        let a = self.axis;
        let (si, su, sd) = (self.idx.layout.strides[a], self.upd.layout.strides[a], self.dst.layout.strides[a]);
        let (ib, db, ub) = (self.idx.memory.base, self.dst.memory.base as *const u8, self.upd.memory.base as *const u8);
        let (bits, ubits) = (self.dst.layout.dtype.bits() as isize, self.upd.layout.dtype.bits() as isize);
        let lead = if si == 1 && su == 1 { self.lead() } else { 0 };
        let (lo, hi) = (lo as u64, hi as u64);
        let (j0, m) = (js.0 as isize, js.1 as isize);
        // SAFETY: k < m, so the position lies in the positions' checked
        // layout.
        let position = |k: isize| unsafe { <u64 as Slot>::get(ib, s.i + k * si) };
        let target = |p: u64| s.d + p as isize * sd;
        let lead_lines = |k: isize| {
            if lead > 0 {
                prefetch(<u64 as Slot>::addr(ib, s.i + k + lead));
                prefetch(ub.wrapping_offset((s.u + k + lead).wrapping_mul(ubits) >> 3));
            }
        };
        if SPLIT {
            // Two batches' updates inside the range, as offsets from their
            // batch's first: one being kept, the one before (from `held`)
            // being combined.
            let (mut kept, mut count, mut b) = ([[0u8; FILTER]; 2], [0usize; 2], 0);
            let mut combine = |kept: &[u8], k: isize| {
                for &o in kept {
                    let j = k + o as isize;
                    let p = position(j);
                    f(p as usize, target(p), s.u + j * su)
                }
            };
            let (mut k, mut held) = (j0, j0);
            let batch = (AHEAD * self.threads as isize).min(FILTER as isize);
            while k < m {
                let n = (m - k).min(batch);
                let mut o = 0;
                while o < n {
                    lead_lines(k + o);
                    o += 8;
                }
                // SAFETY: updates k..k + n lie below m, so their positions
                // lie in the positions' checked layout.
                count[b] = unsafe { keep_inside(<u64 as Slot>::addr(ib, s.i + k * si) as *const u64, si, n as usize, lo, hi - lo, &mut kept[b]) };
                if PF {
                    kept[b][..count[b]].iter().for_each(|&o| prefetch(db.wrapping_offset(target(position(k + o as isize)).wrapping_mul(bits) >> 3)));
                }
                combine(&kept[1 - b][..count[1 - b]], held);
                (b, held, k) = (1 - b, k, k + n);
            }
            combine(&kept[1 - b][..count[1 - b]], held);
            return;
        }
        // Updates from `tail` on have no update AHEAD of them to prefetch
        // the target of.
        let tail = if PF { (m - AHEAD).max(j0) } else { m };
        let mut k = j0;
        while k < m {
            let ahead = PF && k < tail;
            let end = (k + 8).min(if ahead { tail } else { m });
            lead_lines(k);
            for j in k..end {
                if ahead {
                    let q = position(j + AHEAD);
                    if q >= lo && q < hi {
                        prefetch(db.wrapping_offset(target(q).wrapping_mul(bits) >> 3));
                    }
                }
                let p = position(j);
                if p >= lo && p < hi {
                    f(p as usize, target(p), s.u + j * su);
                }
            }
            k = end;
        }
    }

    /// Updates ahead of the one combined whose position and update are
    /// prefetched, where both lie contiguous along the axis: as many as
    /// the positions (8 bytes) and updates fill a sixteenth of the first-
    /// level data cache with, in whole lines of positions (8 of them), so
    /// that the lines prefetched and not yet read take little of it. The
    /// hardware's prefetcher alone fell behind on the Xeon of the module
    /// documentation (48 KiB: 256 float32 updates ahead); from 1 to 4 KiB
    /// of positions ahead measured alike there, 512 bytes as slow as none.
    fn lead(&self) -> isize {
        let w = self.upd.layout.dtype.bits().div_ceil(8);
        let l1 = crate::core::caches::sizes().l1;
        ((l1 / 16 / (8 + w)).max(8) & !7) as isize
    }

    /// Combines updates `js` of slices `s0..s1` whose positions lie in
    /// `ps` into the destination, their targets prefetched where the
    /// call's are far (past L2), unless the first slice's positions climb
    /// ([`Scatter::climbs`]).
    fn part(&self, (s0, s1): (usize, usize), ps: (usize, usize), js: (usize, usize)) {
        let mut first = None;
        if self.far && s0 < s1 {
            self.slices(s0, s0 + 1, |s| first = Some(s));
        }
        let pf = first.is_some_and(|s| !self.climbs(s, js));
        match (pf, self.strategy == Strategy::ByTarget) {
            (true, true) => self.part_of::<true, true>(s0, s1, ps, js),
            (true, false) => self.part_of::<true, false>(s0, s1, ps, js),
            (false, true) => self.part_of::<false, true>(s0, s1, ps, js),
            (false, false) => self.part_of::<false, false>(s0, s1, ps, js),
        }
    }

    /// Whether the first [`CLIMB`] positions of updates `js` of slice `s`
    /// (all of them, if fewer) each reach no lower than the one before and
    /// less than two cache lines of the destination's elements above it:
    /// targets that the hardware's prefetcher, following the lines that
    /// they read one after the other, fetches in time, so that prefetching
    /// each costs instructions and saves nothing (scatter_set of sorted
    /// positions into 10M float32 on one thread: 1.75 ms with prefetches,
    /// 1.45 without).
    fn climbs(&self, s: Slice, (j0, j1): (usize, usize)) -> bool {
        let si = self.idx.layout.strides[self.axis];
        let sd = self.dst.layout.strides[self.axis].unsigned_abs().max(1);
        let lines = (1024 / (sd * self.dst.layout.dtype.bits()).max(1)).max(1) as u64;
        let at = |k: usize| {
            // SAFETY: k < j1, so the position lies in the positions'
            // checked layout.
            unsafe { <u64 as Slot>::get(self.idx.memory.base, s.i + k as isize * si) }
        };
        let end = j1.min(j0 + CLIMB);
        self.dst.layout.strides[self.axis] > 0 && (j0 + 1..end).all(|k| at(k).wrapping_sub(at(k - 1)) < lines)
    }

    /// [`Scatter::part`], the targets prefetched where `PF`, the slices
    /// split by target where `SPLIT` (a narrow float's Add, whose slices
    /// [`Scatter::run`] splits by sorting, walks each whole).
    fn part_of<const PF: bool, const SPLIT: bool>(&self, s0: usize, s1: usize, ps: (usize, usize), js: (usize, usize)) {
        let (db, ub) = (self.dst.memory.base, self.upd.memory.base as *const u8);
        let d = self.dst.layout.dtype;
        // SAFETY (for the closures below): each target and update lies in
        // its checked layout, the target at a position inside its axis;
        // the destination is apart from the positions and updates (plan),
        // and only this part writes the targets of positions `ps` of its
        // slices, which no other slice's updates reach; or, split by
        // update, only this part writes the targets of its updates under
        // the promise of unique, and by atomic stores where it is broken.
        if self.combine == Combine::Set {
            let shared = self.strategy == Strategy::ByUpdate;
            crate::with_slot!(d.bits(), S => self.slices(s0, s1, |s| {
                let (db, ub) = (db, ub);
                if shared {
                    self.each::<PF, SPLIT>(s, ps, js, move |_, t, u| unsafe { S::put_shared(db, t, S::get(ub, u)) })
                } else {
                    self.each::<PF, SPLIT>(s, ps, js, move |_, t, u| unsafe { S::put(db, t, S::get(ub, u)) })
                }
            }));
            return;
        }
        if let (Combine::Add, Some(f), false) = (self.combine, Narrow::of(d), self.unique) {
            match f.bits() {
                4 => narrow_add::<_, PF>(&Narrowed::<Packed<4>>::new(f), self, s0, s1, ps, js),
                8 => narrow_add::<_, PF>(&Narrowed::<u8>::new(f), self, s0, s1, ps, js),
                _ => narrow_add::<_, PF>(&Narrowed::<u16>::new(f), self, s0, s1, ps, js),
            }
            return;
        }
        // Each combine's loop compiled on its own, the operation inlined.
        macro_rules! combine {
            ($n:ident, $op:path) => {
                self.slices(s0, s1, |s| {
                    let (db, ub, n) = (db, ub, $n);
                    self.each::<PF, SPLIT>(s, ps, js, move |_, t, u| unsafe { n.put(db, t, $op(n.get(db, t), n.get(ub, u))) })
                })
            };
        }
        crate::with_num!(d, n => match self.combine {
            Combine::Add => combine!(n, Arith::add),
            Combine::Max => combine!(n, Arith::max),
            _ => combine!(n, Arith::min),
        });
    }
}

/// Writes into `kept` the offsets from `ps` of those of its `n` positions
/// (`n` at most [`FILTER`], stepping `step` elements) that lie in
/// `lo..lo + width`, in order, without a branch on any; returns how many.
///
/// # Safety
/// The `n` positions lie in valid memory.
#[inline(never)]
unsafe fn keep_inside(ps: *const u64, step: isize, n: usize, lo: u64, width: u64, kept: &mut [u8; FILTER]) -> usize {
    let mut c = 0;
    for o in 0..n.min(FILTER) {
        // SAFETY: position o < n lies in valid memory (caller).
        let p = unsafe { ps.offset(o as isize * step).read_unaligned() };
        // c <= o < FILTER, a power of two: the mask spares a bounds check.
        kept[c & (FILTER - 1)] = o as u8;
        c += (p.wrapping_sub(lo) < width) as usize;
    }
    c
}

/// A narrow float's Add over updates `js` of slices `s0..s1` and
/// positions `lo..hi`: each target's sum in float32 from the target,
/// rounded once into its dtype.
fn narrow_add<N: Num<R = f32>, const PF: bool>(n: &N, sc: &Scatter, s0: usize, s1: usize, (lo, hi): (usize, usize), js: (usize, usize)) {
    let (db, ub) = (sc.dst.memory.base, sc.upd.memory.base as *const u8);
    let sd = sc.dst.layout.strides[sc.axis];
    let mut sums = vec![0f32; hi - lo];
    let mut has = vec![false; hi - lo];
    sc.slices(s0, s1, |s| {
        sc.each::<PF, false>(s, (lo, hi), js, |p, t, u| {
            let q = p - lo;
            // SAFETY: as in `Scatter::part`.
            unsafe {
                if !has[q] {
                    has[q] = true;
                    sums[q] = n.get(db, t);
                }
                sums[q] += n.get(ub, u);
            }
        });
        for (q, h) in has.iter_mut().enumerate().filter(|(_, h)| **h) {
            // SAFETY: as in `Scatter::part`: the target of position lo + q.
            unsafe { n.put(db, s.d + (lo + q) as isize * sd, sums[q]) };
            *h = false;
        }
    });
}

/// A pointer that threads share, each writing its own elements alone.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: the users below give each thread disjoint elements.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as for Send.
unsafe impl<T: Send> Sync for Shared<T> {}

/// A narrow float's Add of slice `s` on every thread, its updates sorted
/// by blocks of targets. The updates are taken in chunks, all of them
/// where the targets are as many, else at most 2^22 at a time; each thread
/// counts a run of a chunk's updates by the block of their target, then
/// copies their positions and bits into the block's range, after the
/// earlier runs' (8 + w bytes an update, in order along the axis within
/// each block); then each thread sums whole blocks, each update into its
/// target's float32 sum, started from the target. A block holds the
/// greater of an eighth of a core's L2 cache `l2` and a 512th of the
/// targets: its sums and flags (5 bytes a target) are rounded into the
/// destination at its end, and are those of one thread; where the updates
/// exceed the targets and 2^19, every target's sum is kept instead (5 t
/// bytes in all) and rounded once after the last chunk.
fn narrow_add_by_blocks<S: Slot, N: Num<R = f32> + Decode<S>>(n: &N, sc: &Scatter, s: Slice, l2: usize) {
    let a = sc.axis;
    let (m, t) = (sc.upd.layout.shape[a], sc.dst.layout.shape[a]);
    let (si, su, sd) = (sc.idx.layout.strides[a], sc.upd.layout.strides[a], sc.dst.layout.strides[a]);
    let k = sc.threads;
    let blk = (l2 / 8).max(t.div_ceil(512)).max(1);
    let nb = t.div_ceil(blk);
    let whole = m > t && m > 1 << 19;
    let chunk = if t >= m { m } else { m.min(1 << 22) };
    let (mut pos, mut val) = (vec![0u64; chunk], vec![S::ZERO; chunk]);
    let (mut sums, mut has) = (vec![0f32; if whole { t } else { 0 }], vec![false; if whole { t } else { 0 }]);
    let (sums_at, has_at) = (Shared(sums.as_mut_ptr()), Shared(has.as_mut_ptr()));
    // SAFETY: j < m, so the position lies in the positions' checked layout.
    let position = |j: usize| unsafe { <u64 as Slot>::get(sc.idx.memory.base, s.i + j as isize * si) };
    // Rounds the sums of targets from `base` with flags set into the
    // destination, clearing the flags.
    let flush = |base: usize, sums: &[f32], has: &mut [bool]| {
        for (r, h) in has.iter_mut().enumerate().filter(|(_, h)| **h) {
            // SAFETY: as in `Scatter::part`: the target of position
            // base + r < t, which this thread alone writes.
            unsafe { n.put(sc.dst.memory.base, s.d + (base + r) as isize * sd, sums[r]) };
            *h = false;
        }
    };
    for c0 in (0..m).step_by(chunk) {
        let len = chunk.min(m - c0);
        let run = |p: usize| {
            let (lo, hi) = bounds(len, k, p);
            c0 + lo..c0 + hi
        };
        let counts = map_parts(k, |p| {
            let mut c = vec![0usize; nb];
            for j in run(p) {
                let q = position(j);
                if q < t as u64 {
                    c[q as usize / blk] += 1;
                }
            }
            c
        });
        // Block b's range: each run's entries after the earlier runs'.
        let mut starts = vec![0usize; nb + 1];
        let mut offsets = vec![vec![0usize; nb]; k];
        let mut at = 0;
        for b in 0..nb {
            for p in 0..k {
                offsets[p][b] = at;
                at += counts[p][b];
            }
            starts[b + 1] = at;
        }
        let (pos_at, val_at) = (Shared(pos.as_mut_ptr()), Shared(val.as_mut_ptr()));
        pool::run_parts(k, |p| {
            let (pos_at, val_at) = (pos_at, val_at);
            let mut o = offsets[p].clone();
            for j in run(p) {
                let q = position(j);
                if q < t as u64 {
                    let b = q as usize / blk;
                    // SAFETY: o[b] lies in block b's range of this run,
                    // below the chunk's length: each thread writes its own
                    // entries; the update lies in its checked layout.
                    unsafe {
                        pos_at.0.add(o[b]).write(q);
                        val_at.0.add(o[b]).write(S::get(sc.upd.memory.base, s.u + j as isize * su));
                    }
                    o[b] += 1;
                }
            }
        });
        let (pos, val) = (&pos, &val);
        pool::run_parts(k, |p| {
            let (sums_at, has_at) = (sums_at, has_at);
            let (b0, b1) = bounds(nb, k, p);
            let (mut own_sums, mut own_has) = if whole { (vec![], vec![]) } else { (vec![0f32; blk], vec![false; blk]) };
            for b in b0..b1 {
                let base = b * blk;
                let (sums, has): (&mut [f32], &mut [bool]) = if whole {
                    let n = blk.min(t - base);
                    // SAFETY: block b's targets, base..base + n within t,
                    // which this thread alone sums.
                    unsafe { (std::slice::from_raw_parts_mut(sums_at.0.add(base), n), std::slice::from_raw_parts_mut(has_at.0.add(base), n)) }
                } else {
                    (&mut own_sums, &mut own_has)
                };
                for e in starts[b]..starts[b + 1] {
                    let q = pos[e] as usize;
                    let r = q - base;
                    if !has[r] {
                        has[r] = true;
                        // SAFETY: as in `Scatter::part`: the target of
                        // position q < t, which this thread alone writes.
                        sums[r] = unsafe { n.get(sc.dst.memory.base, s.d + q as isize * sd) };
                    }
                    sums[r] += n.value(val[e]);
                }
                if !whole {
                    flush(base, sums, has);
                }
            }
        });
    }
    if whole {
        let has_at = Shared(has.as_mut_ptr());
        let sums = &sums;
        pool::run_parts(k, |p| {
            // The whole wrapper, which threads share, not its pointer field
            // (a closure would capture the field alone).
            #[allow(clippy::redundant_locals)]
            let has_at = has_at;
            let (lo, hi) = bounds(t, k, p);
            // SAFETY: the flags of targets lo..hi, which this thread alone
            // reads and writes.
            let has = unsafe { std::slice::from_raw_parts_mut(has_at.0.add(lo), hi - lo) };
            flush(lo, &sums[lo..hi], has);
        });
    }
}

impl Call for Scatter {
    fn claims(&self) -> Vec<Claim> {
        claims(&self.dst, &[&self.into, &self.idx, &self.upd])
    }

    fn work(&self) -> usize {
        let w = self.dst.layout.dtype.bits().div_ceil(8);
        let copy = if self.in_place { 0 } else { 2 * w * self.dst.layout.size() };
        let reads = if self.strategy == Strategy::ByTarget { self.threads } else { 1 };
        let m = self.upd.layout.size();
        copy.saturating_add(m.saturating_mul(reads * (8 + w) + 64))
    }

    fn run(self) -> Result<(), String> {
        if !self.in_place {
            copy(&self.dst, &self.into);
        }
        let t = self.dst.layout.shape[self.axis];
        let slices: usize = self.slice_shape().iter().product();
        if self.upd.layout.size() == 0 || t == 0 {
            return Ok(());
        }
        match self.strategy {
            Strategy::PerSlice => {
                let m = self.upd.layout.shape[self.axis];
                let k = parts(slices, (1 << 14) / m.max(1));
                pool::run_parts(k, |p| self.part(bounds(slices, k, p), (0, t), (0, m)));
            }
            Strategy::ByTarget if self.combine == Combine::Add && !self.unique && self.dst.layout.dtype.is_narrow_float() => {
                let f = Narrow::of(self.dst.layout.dtype).expect("a narrow float");
                let l2 = crate::core::caches::sizes().l2;
                self.slices(0, slices, |s| match f.bits() {
                    4 => narrow_add_by_blocks(&Narrowed::<Packed<4>>::new(f), &self, s, l2),
                    8 => narrow_add_by_blocks(&Narrowed::<u8>::new(f), &self, s, l2),
                    _ => narrow_add_by_blocks(&Narrowed::<u16>::new(f), &self, s, l2),
                });
            }
            Strategy::ByTarget => {
                let (k, m) = (self.threads, self.upd.layout.shape[self.axis]);
                pool::run_parts(slices * k, |p| self.part((p / k, p / k + 1), bounds(t, k, p % k), (0, m)));
            }
            Strategy::ByUpdate => {
                let m = self.upd.layout.shape[self.axis];
                let k = parts(m, 1 << 14);
                pool::run_parts(slices * k, |p| self.part((p / k, p / k + 1), (0, t), bounds(m, k, p % k)));
            }
        }
        Ok(())
    }
}

/// Copies `src` into `dst`, of one dtype and shape and apart, element for
/// element, split among threads.
fn copy(dst: &View, src: &View) {
    let size = dst.layout.size();
    let k = parts(size, 1 << 16);
    let (d, s) = (&dst.layout, &src.layout);
    let (sd, ss) = (last_stride(d), last_stride(s));
    let streaming = streams(size.saturating_mul(d.dtype.bits()) / 8);
    crate::with_slot!(d.dtype.bits(), S => pool::run_parts(k, |p| {
        let (lo, hi) = bounds(size, k, p);
        runs(&d.shape, lo, hi, |idx, k0, k1| {
            // SAFETY: the runs lie in the views' checked layouts, which do
            // not overlap (plan); each part writes its own positions.
            unsafe { copy_run::<S>(streaming, src.memory.base, at(s, idx), ss, dst.memory.base, at(d, idx), sd, k1 - k0) }
        });
        fence();
    }));
}
