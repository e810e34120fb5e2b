//! The stable radix sort of a long slice of keys of at most 4 bytes, with
//! positions: passes over digits of [`WIDE`] bits from the least
//! significant, as many whatever the keys' spread (a slice of 32-bit keys
//! takes at most three), on one thread or several.
//!
//! One read counts every digit, so that a digit all the keys share is
//! skipped; the first pass reads the elements again, and each pass moves
//! the keys and positions together. The last pass gives each element its
//! place in the sorted order directly (the caller writes it out), so the
//! passes need the scratch of one slice of items, and of a second where
//! three digits differ. On several threads each pass cuts its source into
//! one chunk a thread: a chunk's elements of a digit go after those of the
//! chunks before it, each chunk's counts of the digit (counted again from
//! the pass's source after the first) giving its places, so that the order
//! is the one stable order whatever the threads.

use super::order::Word;
use super::radix::{Item, Pos, Shared, SMALL};
use crate::core::pool;
use crate::moves::walk::map_parts;

/// Bits of a digit of the passes.
const WIDE: u32 = 11;

/// The values of a digit.
const SIZE: usize = 1 << WIDE;

/// Elements a chunk of a pass takes at least.
const CHUNK: usize = 1 << 16;

/// Counts of each value of a digit, or each value's place.
type Table = [u32; SIZE];

/// Whether [`sort`] sorts a slice of `n` elements of keys `K`: longer than
/// the slices the other sort keeps in cache, of keys of at most 4 bytes,
/// positions that fit 32 bits.
pub fn fits<K: Word>(n: usize) -> bool {
    n > SMALL && K::BYTES <= 4 && n <= u32::MAX as usize
}

/// The digit of `k` from bit `shift`.
#[inline(always)]
fn digit<K: Word>(k: K, shift: u32) -> usize {
    k.low(shift) & (SIZE - 1)
}

/// Each chunk's places of each digit from the chunks' counts: chunk c's
/// elements of digit d follow every element of a lesser digit and those of
/// digit d of the chunks before c.
fn places(counts: &[&Table]) -> Vec<Table> {
    let mut out = vec![[0u32; SIZE]; counts.len()];
    let mut sum = 0u32;
    for d in 0..SIZE {
        for (o, c) in out.iter_mut().zip(counts) {
            o[d] = sum;
            sum = sum.wrapping_add(c[d]);
        }
    }
    out
}

/// The elements of one chunk of a pass, `per` a chunk out of `n`.
fn chunk(c: usize, per: usize, n: usize) -> std::ops::Range<usize> {
    c * per..((c + 1) * per).min(n)
}

/// Gives each item `get(i)` of each chunk to `put` with its place by its
/// digit from bit `shift`, chunk c's places starting at `places[c]` (the
/// places of a chunk's items of one digit follow each other in their
/// order), the chunks over the pool's threads.
#[inline(always)]
fn pass<T: Word, K: Word, P: Pos>(
    n: usize,
    places: &[Table],
    get: impl Fn(usize) -> Item<T, P> + Sync,
    shift: u32,
    key: impl Fn(T) -> K + Sync,
    put: impl Fn(usize, Item<T, P>) + Sync,
) {
    let per = n.div_ceil(places.len());
    pool::run_parts(places.len(), |c| {
        let mut at = places[c];
        for i in chunk(c, per, n) {
            let x = get(i);
            let j = &mut at[digit(key(x.bits), shift)];
            put(*j as usize, x);
            *j = j.wrapping_add(1);
        }
    });
}

/// Sorts the `n` elements that `read(i)` gives, stably by key, with their
/// positions, over `threads`, and gives each to `put` with its place in
/// the sorted order, each place once (from any thread). The passes
/// alternate between `a` and `b` (each `n` long), the last reading `b`;
/// `apart` says that `put` writes nothing `read` reads, else a single pass
/// is followed by a copy out of `b`.
///
/// # Safety
/// `a` is valid for reads and writes of `n` items, which nothing else
/// reads or writes until `sort` returns.
pub unsafe fn sort<T: Word, K: Word, P: Pos>(
    n: usize,
    read: impl Fn(usize) -> T + Sync,
    a: *mut Item<T, P>,
    b: &mut [Item<T, P>],
    threads: usize,
    key: impl Fn(T) -> K + Copy + Sync,
    apart: bool,
    put: impl Fn(usize, Item<T, P>) + Sync,
) {
    assert!(b.len() == n && n <= u32::MAX as usize, "the scratch is as long as the elements");
    let chunks = if threads > 1 { n.div_ceil(CHUNK).min(threads) } else { 1 };
    let per = n.div_ceil(chunks);
    let digits = (8 * K::BYTES as u32).div_ceil(WIDE) as usize;
    let counts: Vec<Vec<Table>> = map_parts(chunks, |c| {
        let mut h = vec![[0u32; SIZE]; digits];
        for i in chunk(c, per, n) {
            let k = key(read(i));
            for (d, h) in h.iter_mut().enumerate() {
                h[digit(k, d as u32 * WIDE)] += 1;
            }
        }
        h
    });
    let total = |d: usize| {
        let mut t = [0u32; SIZE];
        counts.iter().for_each(|c| t.iter_mut().zip(&c[d]).for_each(|(t, c)| *t = t.wrapping_add(*c)));
        t
    };
    let live: Vec<usize> = (0..digits).filter(|&d| total(d).iter().all(|&c| (c as usize) < n)).collect();
    let first = |i: usize| Item { bits: read(i), pos: P::of(i) };
    if live.is_empty() {
        // Every key is one: the order is the positions'.
        pool::run_parts(chunks, |c| chunk(c, per, n).for_each(|i| put(i, first(i))));
        return;
    }
    let (pa, pb) = (Shared(a), Shared(b.as_mut_ptr()));
    // Elements that changed since they were counted (by a writer outside
    // the call) could overrun a digit's places: writes stay inside the
    // scratch, and `put` sees no place past n.
    let into = |to: Shared<Item<T, P>>| {
        move |j: usize, x: Item<T, P>| {
            let to = to;
            assert!(j < n, "the elements changed while they were sorted");
            // SAFETY: j < n, and to is a or b, each n long, which nothing
            // else touches meanwhile (caller); each place is written once
            // a pass, by one chunk.
            unsafe { to.0.add(j).write(x) }
        }
    };
    let from = |at: Shared<Item<T, P>>| {
        move |i: usize| {
            let at = at;
            // SAFETY: i < n, and at is a or b, each n long, written by the
            // pass before (done) and read alone during this one.
            unsafe { at.0.add(i).read() }
        }
    };
    let out = |j: usize, x: Item<T, P>| {
        if j < n {
            put(j, x)
        }
    };
    // The buffer pass p writes: b for the pass before the last.
    let copy = !apart && live.len() == 1;
    let last = if copy { 1 } else { live.len() - 1 };
    let buffer = |p: usize| if (last - 1 - p) % 2 == 0 { pb } else { pa };
    for (p, &d) in live.iter().enumerate() {
        let shift = d as u32 * WIDE;
        let src = (p > 0).then(|| buffer(p - 1));
        let places = match src {
            None => places(&counts.iter().map(|c| &c[d]).collect::<Vec<_>>()),
            Some(_) if chunks == 1 => places(&[&total(d)]),
            Some(s) => {
                let get = from(s);
                let recounted = map_parts(chunks, |c| {
                    let mut h = [0u32; SIZE];
                    chunk(c, per, n).for_each(|i| h[digit(key(get(i).bits), shift)] += 1);
                    h
                });
                places(&recounted.iter().collect::<Vec<_>>())
            }
        };
        match (src, p == last) {
            (None, true) => pass(n, &places, first, shift, key, out),
            (None, false) => pass(n, &places, first, shift, key, into(buffer(p))),
            (Some(s), true) => pass(n, &places, from(s), shift, key, out),
            (Some(s), false) => pass(n, &places, from(s), shift, key, into(buffer(p))),
        }
    }
    if copy {
        let get = from(pb);
        pool::run_parts(chunks, |c| chunk(c, per, n).for_each(|i| put(i, get(i))));
    }
}
