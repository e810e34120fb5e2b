//! The stable radix sort of a long slice, with positions, by one
//! distribution into buckets that a core's L2 cache holds, each bucket then
//! sorted there and written out in order.
//!
//! One read counts the keys' bins, their top [`BIN_BITS`] bits that differ
//! (from the highest bit that differs among a sample of the keys: a second
//! read where the keys differ higher up than the sample), and notes the bits that
//! every key shares. Consecutive bins make up a bucket while its two
//! buffers of items (8 or 16 bytes each) fit half of L2, or all of it where
//! there would otherwise be more buckets than half the first-level cache
//! holds lines (a bin holding more is a bucket alone). A second read moves
//! each element with its position into its bucket's places, the buckets
//! one after the other, each bucket's elements in their order. Each bucket
//! is then sorted in cache by the bits its keys may differ in below its
//! bins' top: by one or two passes over digits of at most [`WIDE`] bits
//! from the least significant where two cover them, else first by the top
//! bits alone: by a distribution on a top digit of as many values as items
//! where one digit of at most [`WIDE`] bits has that many, else by two
//! such passes over as many bits as the items need; in either case the
//! runs sharing those bits that are longer than [`TINY`] are sorted so in
//! turn and the rest by one insertion over the bucket. Each distribution
//! keeps equal digits in their order, so the result is the stable order
//! whatever the threads: they count and distribute by chunks of elements
//! (a chunk's elements of a bucket after the earlier chunks'), and then
//! share the buckets.
//!
//! Reads along memory ask the cache for their lines ahead, and the
//! distribution for each bucket's next lines: on a virtual Xeon (model
//! 167), Rust alone, one thread, float32 10M in [-500, 500) so went ~150
//! -> ~85 ms and int64 10M ~235 -> ~195 ms.

use super::order::Word;
use super::places::{It, Places};
use super::radix::{self, SMALL};
use crate::core::{caches, pool};
use crate::moves::slot::prefetch;
use crate::moves::walk::map_parts;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bits of a key's bin: the bits of the first count.
const BIN_BITS: u32 = 16;

/// Bits of a digit of the passes in cache from the least significant,
/// whose counts and places the first-level cache holds.
const WIDE: u32 = 11;

/// Bits of keys that passes from the least significant sort: two digits.
const LSD: u32 = 2 * WIDE;

/// Elements a chunk of the count and the distribution takes at least.
const CHUNK: usize = 1 << 16;

/// Keys of the sample that the first count's bins are taken from.
const SAMPLE: usize = 1 << 10;

/// Runs of at most this many items are sorted by insertion.
const TINY: usize = 24;

/// Whether [`sort`] sorts a slice of `n` elements of keys `K`: longer than
/// the slices the other sort keeps in cache, of keys of at most 8 bytes,
/// positions that fit 32 bits.
pub fn fits<K: Word>(n: usize) -> bool {
    n > SMALL && K::BYTES <= 8 && n <= u32::MAX as usize
}

/// The elements of one chunk, `per` a chunk out of `n`.
fn chunk(c: usize, per: usize, n: usize) -> std::ops::Range<usize> {
    c * per..((c + 1) * per).min(n)
}

/// The bits a key's bin is taken from.
#[derive(Clone, Copy)]
struct Window {
    /// The bin is the key's bits from `shift`, `BIN_BITS` of them at most.
    shift: u32,
    /// The mask of a bin's bits.
    mask: usize,
}

/// A chunk's count: of each bin, and the OR and AND of its keys.
struct Count {
    bins: Vec<u32>,
    or: u64,
    and: u64,
}

/// Counts the keys of each chunk in `w`'s bins, the elements read by
/// `read` and asked for ahead by `near` (as in [`sort`]). Each part works
/// on its own copies of the closures and of its sums, which the compiler
/// then keeps in registers: through references, it reloaded them after
/// every increment of a bin, which might have changed them.
fn count<T: Word, K: Word>(n: usize, chunks: usize, read: impl Fn(usize) -> T + Copy + Sync, near: impl Fn(usize) + Copy + Sync, key: impl Fn(T) -> K + Copy + Sync, w: Window) -> Vec<Count> {
    let per = n.div_ceil(chunks);
    let ahead = read_ahead::<T>();
    map_parts(chunks, |c| {
        let (read, near, key, Window { shift, mask }) = (read, near, key, w);
        let mut bins = vec![0u32; mask + 1];
        let counts = &mut bins[..=mask];
        let (mut or, mut and) = (0, u64::MAX);
        for i in chunk(c, per, n) {
            near(i + ahead);
            let k = key(read(i));
            let v = k.low(0) as u64;
            or |= v;
            and &= v;
            counts[k.low(shift) & mask] += 1;
        }
        Count { bins, or, and }
    })
}

/// The most elements a bucket of several bins holds, of `n` in all, in
/// items of `item` bytes: as many as take half of L2 in its two buffers,
/// or, where that makes more buckets than half the first-level cache holds
/// lines (the line each bucket's writes go to), more, up to filling L2, so
/// that the distribution writes fewer streams. On a Zen 3 (32 KiB L1, 512
/// KiB L2), Rust alone, best of several: float32 10M [0,1) ~193 -> ~161 ms
/// and int64 10M ~260 -> ~240 ms against half of L2 throughout, where
/// buckets that filled L2 throughout made float32 1M ~14.0 -> ~15.2 ms.
pub(super) fn bucket_cap(n: usize, item: usize, c: caches::Sizes) -> usize {
    let streams = (c.l1 / 2 / 64).max(1);
    n.div_ceil(streams).clamp(c.l2 / 64, c.l2 / (2 * item))
}

/// Items ahead of a bucket's write cursor that the distribution asks the
/// cache for, where there are `buckets` of items of `item` bytes: as many
/// lines of each bucket as share half the first-level cache, from one to
/// eight. The cursors write far apart, more streams than the processor's
/// prefetchers follow, so each line's first write would otherwise wait for
/// memory.
fn write_ahead(buckets: usize, item: usize, c: caches::Sizes) -> usize {
    (c.l1 / 2 / buckets.max(1) / 64).clamp(1, 8) * 64 / item
}

/// Bytes ahead of a read along memory that it asks the cache for: about
/// what memory delivers to a core during one access's latency (some 100 ns
/// at 10 to 20 GB/s), for the processor's own prefetchers may follow a
/// stream too little ahead, or not at all (on a virtual Xeon, the first
/// read of the buckets in cache took three times as long without).
const READ_AHEAD: usize = 2048;

/// Elements of `T` ahead of a read that it asks the cache for.
fn read_ahead<T: Word>() -> usize {
    READ_AHEAD / T::BYTES
}

/// Whether element `i` of a read in turn of elements `step` bits apart is
/// the first whose bits start on a new line of 64 bytes (from the first
/// element's; none where every element is the first's): asking the cache
/// for those elements' lines alone asks for each line once, where asking
/// for every element's took a load slot each (float32 10M, Rust alone,
/// one thread: ~100 -> ~96 ms).
#[inline(always)]
pub(super) fn starts_line(i: usize, step: usize) -> bool {
    step >= 512 || (i * step) % 512 < step
}

/// Asks the cache for the element [`READ_AHEAD`] bytes past element `i`
/// of `items`, once a line, ahead of a read of the elements in turn.
#[inline(always)]
pub(super) fn ask_ahead<E>(items: *const E, i: usize) {
    let size = std::mem::size_of::<E>();
    if starts_line(i, 8 * size) {
        prefetch(items.wrapping_add(i + READ_AHEAD / size) as *const u8);
    }
}

/// A bucket: its bins `lo..=hi` and its elements' places `start..end`.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    lo: u64,
    hi: u64,
    start: usize,
    end: usize,
}

/// The buckets of the bins whose counts are `total` (of `n` in all), each
/// of consecutive bins holding at most `cap` elements but where one bin
/// holds more, and the bucket of each bin.
fn buckets(total: &[u32], cap: usize) -> (Vec<Bucket>, Vec<u16>) {
    let mut out: Vec<Bucket> = Vec::new();
    let mut of = vec![0u16; total.len()];
    let mut at = 0;
    for (bin, &c) in total.iter().enumerate() {
        let (c, bin64) = (c as usize, bin as u64);
        match out.last_mut() {
            Some(b) if c == 0 || b.end - b.start + c <= cap => {
                if c > 0 {
                    if b.end == b.start {
                        b.lo = bin64;
                    }
                    b.hi = bin64;
                }
                b.end += c;
            }
            _ => out.push(Bucket { lo: bin64, hi: bin64, start: at, end: at + c }),
        }
        at += c;
        of[bin] = (out.len() - 1) as u16;
    }
    (out, of)
}

/// Sorts the `n` elements that `read(i)` gives, stably by key, with their
/// positions, over `threads` (`near(i)` asks the cache for element i's
/// line, or for nothing where an element before it lies on that line,
/// whatever i: the reads in turn call it [`READ_AHEAD`] bytes ahead of
/// each element), and gives `put` runs of the sorted order, each with the place
/// of its first item, each place once (from any thread), the places below
/// `k` alone. The distribution writes into `a`, whose item at a place is
/// read before `put` is given a place of its bucket; `put` writes nothing
/// `read` reads, or `read` is done before the first `put`.
///
/// # Safety
/// `a` holds `n` places, which nothing else reads or writes until `sort`
/// returns but `put` at places whose items were read.
pub unsafe fn sort<T: Word, K: Word, A: Places<T>>(
    n: usize,
    k: usize,
    (read, near): (impl Fn(usize) -> T + Copy + Sync, impl Fn(usize) + Copy + Sync),
    a: A,
    threads: usize,
    key: impl Fn(T) -> K + Copy + Sync,
    put: impl Fn(usize, &[It<T>]) + Sync,
) {
    assert!(fits::<K>(n), "a long slice of narrow keys");
    let chunks = if threads > 1 { n.div_ceil(CHUNK).min(threads) } else { 1 };
    let per = n.div_ceil(chunks);
    let wide = (8 * K::BYTES as u32).min(BIN_BITS);
    // The bins of keys whose bits differ up to bit `top` (exclusive): the
    // top `wide` of those bits.
    let window = |top: u32| Window { shift: top.saturating_sub(wide), mask: (1 << wide) - 1 };
    // The first count's bins are those of the bits that differ among a
    // sample of the keys, spread over the slice: bits that differ among
    // them differ among all keys, so the count misses its bins only where
    // the keys differ higher up than the sample does, and then counts again
    // (once, where the bins were the bits below the key's top, it counted
    // every time that the keys shared their top bits: float32 in [0, 1),
    // small integers).
    let s = SAMPLE.min(n);
    let (so, sa) = (0..s).map(|j| key(read(j * n / s)).low(0) as u64).fold((0, u64::MAX), |(o, a), v| (o | v, a & v));
    let mut w = window(64 - (so ^ sa).leading_zeros());
    let mut counts = count(n, chunks, read, near, key, w);
    let vary = counts.iter().fold(0, |v, c| v | c.or) ^ counts.iter().fold(u64::MAX, |v, c| v & c.and);
    let first = |i: usize| It { bits: read(i), pos: i as u32 };
    if vary == 0 {
        // Every key is one: the order is the positions'.
        pool::run_parts(chunks, |c| chunk(c, per, n.min(k)).for_each(|i| put(i, &[first(i)])));
        return;
    }
    let top = 64 - vary.leading_zeros();
    if window(top).shift != w.shift {
        w = window(top);
        counts = count(n, chunks, read, near, key, w);
    }
    let mut total = vec![0u32; w.mask + 1];
    counts.iter().for_each(|c| total.iter_mut().zip(&c.bins).for_each(|(t, c)| *t = t.wrapping_add(*c)));
    let cap = bucket_cap(n, std::mem::size_of::<It<T>>(), caches::sizes());
    let (bks, of) = buckets(&total, cap.max(TINY));
    // Each chunk's elements of a bucket follow the earlier chunks'.
    let mut at: Vec<usize> = bks.iter().map(|b| b.start).collect();
    let offsets: Vec<Vec<usize>> = counts
        .iter()
        .map(|c| {
            let o = at.clone();
            c.bins.iter().zip(&of).for_each(|(&c, &b)| at[b as usize] += c as usize);
            o
        })
        .collect();
    drop(counts);
    let ahead = write_ahead(bks.len() * A::STREAMS, A::BYTES, caches::sizes());
    let read_ahead = read_ahead::<T>();
    pool::run_parts(chunks, |c| {
        // Local copies, kept in registers (as in `count`).
        let (read, near, key, a, Window { shift, mask }, ahead, read_ahead) = (read, near, key, a, w, ahead, read_ahead);
        let mut at = offsets[c].clone();
        let of = &of[..=mask];
        for i in chunk(c, per, n) {
            near(i + read_ahead);
            let x = It { bits: read(i), pos: i as u32 };
            let b = &mut at[of[key(x.bits).low(shift) & mask] as usize];
            let p = *b;
            // Elements that changed since they were counted (by a writer
            // outside the call) could overrun a bucket: writes stay in a.
            assert!(p < n, "the elements changed while they were sorted");
            *b = p + 1;
            // SAFETY: p < n, a's count; the offsets give each chunk and
            // bucket its own places, so no two threads write one while
            // the counts hold.
            unsafe { a.write(p, x) };
            a.near(p + ahead);
        }
    });
    // The bits below the bins that differ among the keys, and the mask of
    // a key's bits from there to its bin's top.
    let low = vary.trailing_zeros().min(w.shift);
    let span = w.shift + wide - low;
    let mask = u64::MAX >> (64 - span);
    let next = AtomicUsize::new(0);
    let live = bks.iter().take_while(|b| b.start < k).count();
    pool::run_parts(threads.min(live), |_| {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(b) = bks.get(i).filter(|_| i < live) else { break };
            let m = b.end - b.start;
            x.resize(m, It::default());
            y.resize(m, It::default());
            // SAFETY: the bucket's places lie below n in a, written by the
            // distribution (done), and touched by this thread alone.
            let items = unsafe { a.run(b.start, &mut x[..m]) };
            // A key's bits below its bin's top, less its bucket's first
            // bin's, on r bits.
            let base = b.lo << (w.shift - low);
            let r = (64 - (b.hi - b.lo).leading_zeros()) + w.shift - low;
            let lk = move |t: T| (key(t).low(low) as u64 & mask).wrapping_sub(base);
            let in_y = in_cache(items, &mut x[..m], &mut y[..m], r, &lk);
            let sorted = if in_y { &y[..m] } else { &x[..m] };
            put(b.start, &sorted[..m.min(k - b.start)]);
        }
    });
}

/// Sorts stably by the `r` low bits of `lk` the items of `src`, or of `x`
/// where `src` is `None`, the bits above them equal among them, using `x`
/// and `y` (each as long as the items) as room; true where the result ends
/// in `y`, else it is in `x`.
fn in_cache<T: Word>(src: Option<&[It<T>]>, x: &mut [It<T>], y: &mut [It<T>], r: u32, lk: &impl Fn(T) -> u64) -> bool {
    let m = x.len();
    assert!(y.len() == m && src.is_none_or(|s| s.len() == m), "in_cache sorts m items in room of m");
    if r == 0 || m <= TINY {
        if let Some(s) = src {
            x.copy_from_slice(s);
        }
        if r > 0 {
            radix::insertion(x, lk);
        }
        return false;
    }
    if r <= LSD {
        return lsd(src, x, y, r, lk);
    }
    let l = usize::BITS - (m - 1).leading_zeros();
    if l > WIDE {
        return by_top_lsd(src, x, y, (l, r), lk);
    }
    // By the top digit, read from where the items lie into y, each digit's
    // run of more than TINY items then sorted on its own, and the shorter
    // ones by one insertion over all (which moves no item past its run's
    // start: the runs before hold lesser keys). The digit has as many
    // values as items, at most 2^WIDE here, so that the runs hold about
    // one item.
    let w = l.min(r);
    let sh = r - w;
    let digit = (1usize << w) - 1;
    let from: &[It<T>] = src.unwrap_or(x);
    // Each digit's count, then the start of its run, then, once each item
    // is placed, the end of its run (the next one's start).
    let mut ends = vec![0u32; digit + 1];
    from.iter().enumerate().for_each(|(i, it)| {
        ask_ahead(from.as_ptr(), i);
        ends[(lk(it.bits) >> sh) as usize & digit] += 1
    });
    let mut at = 0;
    for e in ends.iter_mut() {
        (*e, at) = (at, at + *e);
    }
    for it in from {
        let d = &mut ends[(lk(it.bits) >> sh) as usize & digit];
        y[*d as usize] = *it;
        *d += 1;
    }
    let mut start = 0;
    for &end in &ends {
        let run = start..end as usize;
        start = run.end;
        if run.len() > TINY && in_cache(None, &mut y[run.clone()], &mut x[run.clone()], sh, lk) {
            y[run.clone()].copy_from_slice(&x[run]);
        }
    }
    radix::insertion(y, lk);
    true
}

/// The top bits [`by_top_lsd`] sorts a bucket of fewer than `2^l` items
/// by first: `l + 3` rounded up to even, at most [`LSD`] and at most two
/// digits of as many values as a first-level cache of `l1` bytes holds
/// lines (9 bits for 32 or 48 KiB), of 4 bits at least.
pub(super) fn top_bits(l: u32, l1: usize) -> u32 {
    let digit = (l1 / 64).max(16).ilog2();
    (l + 3).next_multiple_of(2).min(2 * digit).min(LSD)
}

/// [`in_cache`] for more items than a digit of [`WIDE`] bits has values
/// (`l` bits count them) and more than [`LSD`] bits `r`: the items sorted
/// by their top bits alone by [`lsd`]'s two passes, each run of more than
/// [`TINY`] items sharing those bits then sorted by the bits below, and
/// the shorter runs, of about one item, by one insertion over all. The top
/// bits are [`top_bits`]: the items' count's and three more, so that about
/// an eighth of the items share theirs with the one before, each such pair
/// a branch of the insertion that mispredicts half the time, in digits
/// whose write streams the first-level cache holds (where one distribution
/// on a digit of 16 bits missed it on every write). On the virtual Xeon,
/// Rust alone, int64 10M went ~230 -> ~223 ms and 1M ~23.0 -> ~21.5 ms
/// with `l` bits (rounded up to even); on a Xeon of model 207, builds
/// alternated, with three bits more, 10M ~203 -> ~192 ms and 1M ~19.5 ->
/// ~17.5 ms.
fn by_top_lsd<T: Word>(src: Option<&[It<T>]>, x: &mut [It<T>], y: &mut [It<T>], (l, r): (u32, u32), lk: &impl Fn(T) -> u64) -> bool {
    let bits = top_bits(l, caches::sizes().l1).min(r);
    let sh = r - bits;
    let top = |b: T| lk(b) >> sh;
    let in_y = lsd(src, x, y, bits, &top);
    let (done, room) = if in_y { (y, x) } else { (x, y) };
    // A run of more than TINY items holds items i and i + TINY: the test,
    // seldom true, branches predictably where the runs are short.
    let m = done.len();
    let mut i = 0;
    while i + TINY < m {
        let d = top(done[i].bits);
        if top(done[i + TINY].bits) != d {
            i += 1;
            continue;
        }
        let end = i + TINY + done[i + TINY..].iter().take_while(|it| top(it.bits) == d).count();
        if in_cache(None, &mut done[i..end], &mut room[i..end], sh, lk) {
            done[i..end].copy_from_slice(&room[i..end]);
        }
        i = end;
    }
    radix::insertion(done, lk);
    in_y
}

/// Sorts the items of `src`, or of `x` where `src` is `None`, stably by
/// the `r` low bits of `lk` (at most `2 WIDE`), by one or two passes over
/// digits of equal width from the least significant, the first into `y`,
/// the second back into `x` (as long as the items); true where the result
/// ends in `y`.
fn lsd<T: Word>(src: Option<&[It<T>]>, x: &mut [It<T>], y: &mut [It<T>], r: u32, lk: &impl Fn(T) -> u64) -> bool {
    let m = x.len();
    assert!(y.len() == m && src.is_none_or(|s| s.len() == m) && r <= 2 * WIDE, "lsd sorts m items by 2 digits at most");
    let passes = r.div_ceil(WIDE).max(1);
    let width = r.div_ceil(passes);
    let digit = (1usize << width) - 1;
    let mut counts = [[0u32; 1 << WIDE]; 2];
    let from = src.map_or(x.as_ptr(), |s| s.as_ptr());
    for i in 0..m {
        ask_ahead(from, i);
        // SAFETY: i < m, the source's length.
        let v = lk(unsafe { (*from.add(i)).bits });
        // SAFETY: each digit is masked below 1 << width <= 1 << WIDE.
        unsafe {
            *counts[0].get_unchecked_mut(v as usize & digit) += 1;
            *counts[1].get_unchecked_mut((v >> width) as usize & digit) += 1;
        }
    }
    let (px, py) = (x.as_mut_ptr(), y.as_mut_ptr());
    for p in 0..passes {
        let places = &mut counts[p as usize];
        let mut at = 0u32;
        for c in places[..=digit].iter_mut() {
            (*c, at) = (at, at + *c);
        }
        let (from, to) = if p == 0 { (from, py) } else { (py as *const It<T>, px) };
        for i in 0..m {
            // SAFETY: i < m, the source's length; the places of a digit
            // run from its start below m through its count of the same
            // items' digits (from `lk`, a function of the bits alone), so
            // every place written lies below m, in `to`; `to` is apart
            // from `from` (y, then x, from src or x, then from y).
            unsafe {
                let it = *from.add(i);
                let d = (lk(it.bits) >> (p * width)) as usize & digit;
                let j = places.get_unchecked_mut(d);
                to.add(*j as usize).write(it);
                *j += 1;
            }
        }
    }
    passes == 1
}
