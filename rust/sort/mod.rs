//! `sort`: each slice of an array along an axis ordered stably, by the total
//! order of `Prog`'s domains (`order`), into values (the elements' bits
//! unchanged) and their int64 positions along the axis; where the values
//! are shorter than the slice, its first elements in that order (top-k).
//!
//! A slice is read into a buffer of its elements' bits and positions, then
//! sorted by a radix sort of their keys (`radix::sort`, or for a long slice
//! of keys of at most 8 bytes `bucket::sort`), which is stable, or, for a
//! top-k of at most a sixteenth of the slice, selected by one
//! pass that keeps a buffer of candidates (`radix::select`); a short slice
//! of keys of at most 4 bytes, on x86-64 (AVX-512 or AVX2), by a bitonic
//! network in vector registers (`network::sort`). The stable
//! order is unique, so no thread count changes a bit: threads take whole
//! slices where there are at least as many as threads, and otherwise share
//! each long slice.

pub mod access;
pub mod bucket;
pub mod network;
pub mod order;
pub mod places;
pub mod radix;
pub mod scratch;

use crate::core::call::Call;
use crate::core::door::Claim;
use crate::core::dtype::Dtype;
use crate::core::layout::{same_dims, View};
use crate::core::pool;
use access::Bits;
use crate::moves::slot::prefetch;
use order::{Visit, Word};
use places::{Items, Places, Split};
use radix::{Item, Pos};
use scratch::Scratch;

/// A checked sort call, ready to run once its claims are held.
pub struct Plan {
    descending: bool,
    x: View,
    values: View,
    positions: View,
    /// The elements of a slice, x's extent along the axis.
    n: usize,
    /// The elements kept of each slice, the destinations' extent there.
    k: usize,
    /// The steps along the axis of x, values and positions.
    steps: [isize; 3],
    /// The other axes: their extent and the steps of x, values and positions.
    others: Vec<(usize, [isize; 3])>,
}

/// Whether two views are one array: the same memory, dtype width and layout.
fn same_array(a: &View, b: &View) -> bool {
    let (la, lb) = (&a.layout, &b.layout);
    a.memory.base == b.memory.base
        && la.dtype.bits() == lb.dtype.bits()
        && la.offset == lb.offset
        && same_dims(&la.shape, &lb.shape)
        && same_dims(&la.strides, &lb.strides)
}

/// Checks a sort of `x` along `axis` into `values` and `positions`: both of
/// x's shape but along the axis, where they are as long as each other and
/// no longer than x; values of x's dtype, positions int64; neither mapping
/// two indices to one element, the two apart, positions apart from x and
/// values apart from x or x itself (each slice is read whole before its
/// results are written).
pub fn plan(axis: usize, descending: bool, values: View, positions: View, x: View) -> Result<Plan, String> {
    let rank = x.layout.shape.len();
    if axis >= rank {
        return Err(format!("axis {axis} of an array of rank {rank}"));
    }
    if values.layout.dtype != x.layout.dtype {
        return Err(format!("values are {} but x is {}", values.layout.dtype.name(), x.layout.dtype.name()));
    }
    if positions.layout.dtype != Dtype::Int64 {
        return Err(format!("positions are {}, not int64", positions.layout.dtype.name()));
    }
    if !same_dims(&values.layout.shape, &positions.layout.shape) {
        return Err(format!("values have shape {:?} but positions {:?}", values.layout.shape, positions.layout.shape));
    }
    let (xs, vs) = (&x.layout.shape, &values.layout.shape);
    let fits = vs.len() == rank && (0..rank).all(|a| if a == axis { vs[a] <= xs[a] } else { vs[a] == xs[a] });
    if !fits {
        return Err(format!(
            "values have shape {vs:?}, which is not x's {xs:?} but no longer along axis {axis}"
        ));
    }
    for (name, d) in [("values", &values), ("positions", &positions)] {
        if crate::loops::map::self_overlaps(&d.layout) {
            return Err(format!("{name} map several indices to one element"));
        }
    }
    if values.overlaps(&positions) {
        return Err("values and positions overlap".into());
    }
    if positions.overlaps(&x) {
        return Err("positions overlap x".into());
    }
    if values.overlaps(&x) && !same_array(&values, &x) {
        return Err("values overlap x other than as x itself".into());
    }
    let step = |v: &View, a: usize| v.layout.strides[a];
    let others = (0..rank)
        .filter(|&a| a != axis)
        .map(|a| (xs[a], [step(&x, a), step(&values, a), step(&positions, a)]))
        .collect();
    Ok(Plan {
        descending,
        n: xs[axis],
        k: vs[axis],
        steps: [step(&x, axis), step(&values, axis), step(&positions, axis)],
        others,
        x,
        values,
        positions,
    })
}

/// Whether a slice's first `k` of `n` are selected rather than sorted.
fn selects(k: usize, n: usize) -> bool {
    k < n && k.saturating_mul(16) <= n
}

impl Plan {
    /// The number of slices.
    fn slices(&self) -> usize {
        self.others.iter().map(|o| o.0).product()
    }

    /// The first element of slice `s` (in C order of the other axes) in x,
    /// values and positions.
    fn bases(&self, mut s: usize) -> [isize; 3] {
        let mut at = [self.x.layout.offset, self.values.layout.offset, self.positions.layout.offset].map(|o| o as isize);
        for &(extent, steps) in self.others.iter().rev() {
            let i = (s % extent) as isize;
            s /= extent;
            at.iter_mut().zip(steps).for_each(|(a, st)| *a += i * st);
        }
        at
    }
}

/// Runs `f` over `0..n` cut into ranges, one a part, on `threads`.
fn in_parts(n: usize, threads: usize, f: impl Fn(std::ops::Range<usize>) + Sync) {
    let parts = if threads > 1 { n.div_ceil(1 << 16).min(threads) } else { 1 };
    let per = n.div_ceil(parts.max(1));
    pool::run_parts(parts, |p| f(p * per..((p + 1) * per).min(n)));
}

/// Where a plan's values and positions are written.
struct Out {
    values: Bits,
    positions: Bits,
    /// The values' and positions' memory, and whether the values are of
    /// whole bytes (written directly, the width known to the loop).
    at: (usize, usize),
    whole: bool,
    steps: [isize; 3],
}

impl Out {
    fn of(p: &Plan) -> Out {
        Out {
            values: Bits::new(p.values.memory, p.values.layout.dtype),
            positions: Bits::new(p.positions.memory, Dtype::Int64),
            at: (p.values.memory.base as usize, p.positions.memory.base as usize),
            whole: !p.values.layout.dtype.is_sub_byte(),
            steps: p.steps,
        }
    }

    /// The first entries of the values and positions of the slice at
    /// `bases`, where both destinations are of whole bytes and their
    /// entries lie one after the other (steps of 1): at their element's
    /// index times T, the dtype's width, or 8.
    fn runs<T: Word>(&self, bases: [isize; 3]) -> Option<(*mut T, *mut i64)> {
        let plain = self.whole && self.steps[1] == 1 && self.steps[2] == 1;
        plain.then(|| ((self.at.0 as *mut T).wrapping_offset(bases[1]), (self.at.1 as *mut i64).wrapping_offset(bases[2])))
    }

    /// Writes `items`, bits and positions, as entries `j..` of the values
    /// and positions of the slice at `bases`: where both destinations are
    /// of whole bytes, one entry after the other, by a plain loop over the
    /// run.
    ///
    /// # Safety
    /// `j + items.len()` <= k, and no other thread writes those entries of
    /// the slice meanwhile.
    #[inline(always)]
    unsafe fn put_run<T: Word>(&self, bases: [isize; 3], j: usize, items: impl ExactSizeIterator<Item = (T, usize)>) {
        if items.len() == 0 {
            // Entry j may lie past k: no address is formed from it.
            return;
        }
        if let Some((v, q)) = self.runs::<T>(bases) {
            // Entries j.. lie one after the other in both destinations,
            // the last below k (caller; items is not empty, so j < k).
            let (v, q) = (v.wrapping_add(j), q.wrapping_add(j));
            for (i, (bits, pos)) in items.enumerate() {
                // SAFETY: i < items.len(), so entry j + i is below k; no
                // other thread writes it (caller).
                unsafe {
                    v.add(i).write_unaligned(bits);
                    q.add(i).write_unaligned(pos as i64);
                }
            }
        } else {
            for (i, (bits, pos)) in items.enumerate() {
                // SAFETY: as above, entry j + i below k.
                unsafe { self.put(bases, j + i, bits, pos as u64) };
            }
        }
    }

    /// Writes `bits` and `pos` as entry `j` of the values and positions of
    /// the slice at `bases`.
    ///
    /// # Safety
    /// `j` < k, and no other thread writes entry `j` of the slice meanwhile.
    #[inline(always)]
    unsafe fn put<T: Word>(&self, bases: [isize; 3], j: usize, bits: T, pos: u64) {
        let (v, q) = (bases[1] + j as isize * self.steps[1], bases[2] + j as isize * self.steps[2]);
        if self.whole {
            // SAFETY: j < k, so both elements lie in the destinations
            // (checked views), a value of whole bytes at its element's
            // index times T, the dtype's width; no other thread writes them
            // (caller; no destination maps two indices to one).
            unsafe {
                (self.at.0 as *mut T).offset(v).write_unaligned(bits);
                (self.at.1 as *mut i64).offset(q).write_unaligned(pos as i64);
            }
        } else {
            // SAFETY: as above, a sub-byte value written by Bits.
            unsafe {
                self.values.write(v, bits);
                self.positions.write(q, pos);
            }
        }
    }
}

/// The sort of a plan, generic over the dtype's bits and key.
struct Run<'a>(&'a Plan);

impl Run<'_> {
    /// Writes the first `k` items of the sorted order, which lies in `a` and
    /// `b` as `runs` say, as the values and positions of the slice at `bases`.
    fn write<T: Word, P: Pos>(&self, bases: [isize; 3], a: &[Item<T, P>], b: &[Item<T, P>], runs: &radix::Runs, threads: usize) {
        let out = Out::of(self.0);
        in_parts(self.0.k, threads, |r| {
            for (run, in_b) in runs {
                let items = if *in_b { b } else { a };
                let start = run.start.max(r.start);
                let js = start..run.end.min(r.end).max(start);
                // SAFETY: js lies below k; slices and parts write disjoint
                // elements.
                unsafe { out.put_run(bases, start, items[js].iter().map(|it| (it.bits, it.pos.get()))) };
            }
        });
    }

    /// Sorts the slices `range` by the network, each on one thread: read
    /// where they lie, or, where the values are x itself, from a copy.
    fn network_slices<T: Word, K: Word>(&self, range: std::ops::Range<usize>, key: impl Fn(T) -> K + Copy) {
        let p = self.0;
        let copy = p.values.overlaps(&p.x);
        let (mut x, mut w) = (vec![T::default(); if copy { p.n } else { 0 }], vec![0u64; network::words(p.n)]);
        let xb = Bits::new(p.x.memory, p.x.layout.dtype);
        let plain = p.steps[0] == 1 && !p.x.layout.dtype.is_sub_byte();
        let out = Out::of(p);
        let end = range.end;
        // The lines of a slice's element, value and position runs.
        let lines = (p.n * p.x.layout.dtype.bits() + p.k * (p.values.layout.dtype.bits() + 64)) / 512;
        for s in range {
            let bases = p.bases(s);
            // The next slice's lines are asked for while this one sorts:
            // rows of [10000; 1000] float32, Rust alone, one thread,
            // so sorted ~73 -> ~63 ms, and ~59 with the destinations too;
            // a part between each of the network's stages rather than all
            // before, ~52 -> ~46 ms (Xeon model 207). A part asks for 16
            // lines or more (a short slice's all at once): the parts of
            // rows of [20000; 100] cost more than they saved.
            let next = (s + 1 < end).then(|| p.bases(s + 1));
            let ask = |part: usize, parts: usize| {
                let parts = parts.min(lines / 16).max(1);
                if let (Some(next), true) = (next, part < parts) {
                    let share = |len: usize| (part * len / parts, (part + 1) * len / parts);
                    let ((x0, x1), (k0, k1)) = (share(p.n), share(p.k));
                    xb.prefetch_run(next[0] + x0 as isize * p.steps[0], p.steps[0], x1 - x0);
                    out.values.prefetch_run(next[1] + k0 as isize * p.steps[1], p.steps[1], k1 - k0);
                    out.positions.prefetch_run(next[2] + k0 as isize * p.steps[2], p.steps[2], k1 - k0);
                }
            };
            // SAFETY: i < n, so element i of the slice lies in x.
            let strided = |i: usize| unsafe { xb.read::<T>(bases[0] + i as isize * p.steps[0]) };
            if copy {
                x.iter_mut().enumerate().for_each(|(i, x)| *x = strided(i));
                self.network_slice(bases, &out, &mut w, |i| x[i], key, ask);
            } else if plain {
                // SAFETY: the slice's n elements lie one after the other
                // in x from its base (a checked view), in whole bytes.
                let at = unsafe { (p.x.memory.base as *const T).offset(bases[0]) };
                // SAFETY: i < n, so element i lies in the slice.
                let read = |i: usize| unsafe { at.add(i).read_unaligned() };
                match out.runs::<u32>(bases).filter(|_| T::BYTES == 4) {
                    Some((v, q)) => {
                        network::sort_between(p.n, read, key, &mut w, ask);
                        // SAFETY: the slice's n elements of 4 bytes lie
                        // from `at`; entries 0..k of its values (4 bytes,
                        // T's width) and positions lie one after the other
                        // from v and q (runs), written by this thread
                        // alone, neither in x's memory (not `copy`) nor in
                        // the other's (plan).
                        unsafe { network::put_in_order(&w[..p.k], at.cast(), v, q) };
                    }
                    None => self.network_slice(bases, &out, &mut w, read, key, ask),
                }
            } else {
                self.network_slice(bases, &out, &mut w, strided, key, ask);
            }
        }
    }

    /// Sorts by the network, in `w`, the slice at `bases` whose element
    /// `i < n` is `read(i)`, and writes its first `k` in order; `between`
    /// as [`network::sort_between`]'s.
    #[inline(always)]
    fn network_slice<T: Word, K: Word>(&self, bases: [isize; 3], out: &Out, w: &mut [u64], read: impl Fn(usize) -> T, key: impl Fn(T) -> K, between: impl FnMut(usize, usize)) {
        let p = self.0;
        network::sort_between(p.n, &read, key, w, between);
        let order = w[..p.k].iter().map(|&w| network::position(w));
        // SAFETY: the first k words are the elements' (below the padding's),
        // whose positions are below n; entries 0..k of the slice, written
        // by this thread alone, after the slice was read (whole, or into a
        // copy where the values are x).
        unsafe { out.put_run(bases, 0, order.map(|i| (read(i), i))) };
    }

    /// Sorts the slices `range` over `threads` by [`bucket::sort`], which
    /// writes the values and positions as it finishes each bucket; its
    /// items lie meanwhile in the destinations' own memory where that holds
    /// them, each place read before a value or position is written over
    /// it: in the positions' (as long as the slice, one after the other,
    /// aligned for items of 8 bytes), or, for keys of 8 bytes, their bits
    /// in the values' and their positions in the positions' (both as long
    /// as the slice, one after the other, the values apart from x); else in
    /// scratch. A sort of int64 so needs no scratch of 16 bytes an element,
    /// whose pages the system would clear at every call.
    fn bucket_slices<T: Word, K: Word>(&self, range: std::ops::Range<usize>, threads: usize, key: impl Fn(T) -> K + Copy + Sync) {
        let p = self.0;
        let mut own = None;
        let items = p.k == p.n && p.steps[2] == 1 && std::mem::size_of::<Item<T, u32>>() == 8;
        let split = p.k == p.n && p.steps[1] == 1 && p.steps[2] == 1 && T::BYTES == 8 && !p.values.overlaps(&p.x);
        for s in range {
            let bases = p.bases(s);
            let at = p.positions.memory.base.wrapping_offset(8 * bases[2]);
            if items && at.cast::<Item<T, u32>>().is_aligned() {
                self.bucket_slice(bases, Items(at.cast()), threads, key);
            } else if split {
                let bits = p.values.memory.base.wrapping_offset(T::BYTES as isize * bases[1]).cast();
                self.bucket_slice(bases, Split { bits, pos: at.cast() }, threads, key);
            } else {
                let a = own.get_or_insert_with(|| Scratch::<Item<T, u32>>::zeroed(p.n)).as_mut_ptr();
                self.bucket_slice(bases, Items(a), threads, key);
            }
        }
    }

    /// Sorts the slice at `bases` over `threads` by [`bucket::sort`], its
    /// items left meanwhile in `a`, whose n places nothing else touches
    /// but the writes of the slice's values and positions, each at a place
    /// whose item was read (see [`Run::bucket_slices`]).
    fn bucket_slice<T: Word, K: Word>(&self, bases: [isize; 3], a: impl Places<T>, threads: usize, key: impl Fn(T) -> K + Copy + Sync) {
        let p = self.0;
        let out = Out::of(p);
        let put = |j: usize, run: &[Item<T, u32>]| {
            let run = &run[..run.len().min(p.k.saturating_sub(j))];
            // SAFETY: the run ends at k at most; bucket::sort gives each
            // place once, and each slice is sorted by one call of it.
            unsafe { out.put_run(bases, j, run.iter().map(|it| (it.bits, it.pos.get()))) }
        };
        if p.steps[0] == 1 && !p.x.layout.dtype.is_sub_byte() {
            // SAFETY: as in sort_slices.
            let x = unsafe { (p.x.memory.base as *const T).offset(bases[0]) } as usize;
            // SAFETY: i < n, so element i lies in the slice; a holds n
            // places, which nothing else touches but put, at places whose
            // items were read; bucket::sort reads x before it puts.
            unsafe { bucket::sort(p.n, p.k, (move |i| (x as *const T).add(i).read_unaligned(), move |i| if bucket::starts_line(i, 8 * T::BYTES) { prefetch((x as *const T).wrapping_add(i) as *const u8) }), a, threads, key, put) };
        } else {
            let xb = Bits::new(p.x.memory, p.x.layout.dtype);
            let step = p.steps[0].unsigned_abs() * p.x.layout.dtype.bits();
            // SAFETY: as above, element i of the slice lying in x.
            unsafe { bucket::sort(p.n, p.k, (move |i| xb.read::<T>(bases[0] + i as isize * p.steps[0]), move |i| if bucket::starts_line(i, step) { xb.prefetch(bases[0] + i as isize * p.steps[0]) }), a, threads, key, put) };
        }
    }

    /// Sorts the slices `range` in the scratch `a` and `b` (each `n` long),
    /// each on one thread or on `threads`.
    fn sort_slices<T: Word, K: Word, P: Pos>(&self, range: std::ops::Range<usize>, threads: usize, key: impl Fn(T) -> K + Copy + Send + Sync) {
        let p = self.0;
        if bucket::fits::<K>(p.n) {
            return self.bucket_slices::<T, K>(range, threads, key);
        }
        let (mut a, mut b) = (Scratch::<Item<T, P>>::zeroed(p.n), Scratch::<Item<T, P>>::zeroed(p.n));
        let xb = Bits::new(p.x.memory, p.x.layout.dtype);
        let plain = p.steps[0] == 1 && !p.x.layout.dtype.is_sub_byte();
        for s in range {
            let bases = p.bases(s);
            let runs = if plain {
                // SAFETY: the slice's n elements lie one after the other in
                // x from its base (a checked view), in whole bytes.
                let at = unsafe { (p.x.memory.base as *const T).offset(bases[0]) } as usize;
                // SAFETY: i < n, so element i lies in the slice.
                radix::sort(|i| unsafe { (at as *const T).add(i).read_unaligned() }, &mut a, &mut b, threads, key)
            } else {
                // SAFETY: i < n, so element i of the slice lies in x.
                radix::sort(|i| unsafe { xb.read::<T>(bases[0] + i as isize * p.steps[0]) }, &mut a, &mut b, threads, key)
            };
            self.write(bases, &a, &b, &runs, threads);
        }
    }

    /// Selects the first k of each slice of `range`, each on `threads`.
    fn select_slices<T: Word, K: Word>(&self, range: std::ops::Range<usize>, threads: usize, key: impl Fn(T) -> K + Copy + Send + Sync) {
        let p = self.0;
        let xb = Bits::new(p.x.memory, p.x.layout.dtype);
        let plain = p.steps[0] == 1 && !p.x.layout.dtype.is_sub_byte();
        for s in range {
            let bases = p.bases(s);
            let best = if plain {
                // SAFETY: as in sort_slices.
                let at = unsafe { (p.x.memory.base as *const T).offset(bases[0]) } as usize;
                // SAFETY: i < n, so element i lies in the slice.
                radix::select(p.n, p.k, threads, |i| unsafe { (at as *const T).add(i).read_unaligned() }, key)
            } else {
                // SAFETY: i < n, so element i of the slice lies in x.
                radix::select(p.n, p.k, threads, |i| unsafe { xb.read::<T>(bases[0] + i as isize * p.steps[0]) }, key)
            };
            self.write(bases, &best, &[], &vec![(0..best.len(), false)], 1);
        }
    }
}

impl Visit for Run<'_> {
    type Out = ();
    fn visit<T: Word, K: Word, F: Fn(T) -> K + Copy + Send + Sync>(self, key: F) {
        let p = self.0;
        let slices = p.slices();
        let threads = pool::threads();
        // Threads take whole slices where there are enough of them, or
        // where slices are short; otherwise they share each slice.
        let across = threads > 1 && (slices >= threads || p.n < 1 << 16);
        let parts = if across { slices.min(4 * threads) } else { 1 };
        let per = slices.div_ceil(parts);
        let inner = if across { 1 } else { threads };
        let range = |i: usize| i * per..((i + 1) * per).min(slices);
        let each = |i: usize| {
            if selects(p.k, p.n) {
                self.select_slices(range(i), inner, key);
            } else if inner == 1 && network::fits::<K>(p.n) {
                self.network_slices(range(i), key);
            } else if p.n <= u32::MAX as usize {
                self.sort_slices::<T, K, u32>(range(i), inner, key);
            } else {
                self.sort_slices::<T, K, u64>(range(i), inner, key);
            }
        };
        if across { pool::run_parts(parts, each) } else { each(0) }
    }
}

impl Call for Plan {
    fn claims(&self) -> Vec<Claim> {
        let range = |v: &View, write| v.byte_range().map(|(lo, hi)| Claim { lo, hi, write });
        [range(&self.x, false), range(&self.values, true), range(&self.positions, true)].into_iter().flatten().collect()
    }

    fn work(&self) -> usize {
        let item = self.x.layout.dtype.bits().div_ceil(8) + 8;
        let passes = if selects(self.k, self.n) { 1 } else { 2 * self.x.layout.dtype.bits().div_ceil(8) + 4 };
        self.slices().saturating_mul(self.n).saturating_mul(item * passes)
    }

    fn run(self) -> Result<(), String> {
        if self.k == 0 || self.slices() == 0 {
            return Ok(());
        }
        order::visit(self.x.layout.dtype, self.descending, Run(&self));
        Ok(())
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod bench;
