//! A stable radix sort of elements with their positions, by a key of their
//! bits, and the selection of the first elements of that order (top-k).
//!
//! The sort distributes by the key's most significant digit (a byte) while
//! a run is larger than the caches hold, each digit's run then sorted on
//! its own, and sorts the runs that fit by the key's remaining digits from
//! the least significant, skipping any digit that all of a run's elements
//! share. Each distribution keeps equal digits in their order, so the
//! result is the stable sort: one result whatever the threads, which
//! share the first distribution by chunks of elements and then the runs.
//! A long slice of keys of at most 8 bytes is sorted by one distribution
//! into buckets that the cache holds instead (`super::bucket`).

use super::order::Word;
use crate::core::pool;

/// An element's position in its slice: `u32` for slices that fit it,
/// `u64` for longer ones.
pub trait Pos: Copy + Ord + Default + Send + Sync + 'static {
    /// The position `i`, which the slice's length bounds.
    fn of(i: usize) -> Self;
    /// The position as an index.
    fn get(self) -> usize;
}

impl Pos for u32 {
    #[inline(always)]
    fn of(i: usize) -> u32 {
        i as u32
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

impl Pos for u64 {
    #[inline(always)]
    fn of(i: usize) -> u64 {
        i as u64
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

/// An element's bits and its position in its slice.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Item<T, P> {
    pub bits: T,
    pub pos: P,
}

/// Runs of at most this many elements are sorted digit by digit from the
/// least significant (a run of 8-byte items then fits a core's L2 cache
/// of 1 MiB or more).
pub(super) const SMALL: usize = 1 << 16;

/// Digits a run that fits the cache may have left to be sorted from the
/// least significant, each a pass over the run.
const LSD_DIGITS: usize = 3;

/// Runs of at most this many elements are sorted by insertion.
const TINY: usize = 24;

/// Sorts `run` by insertion, stably by key. The greatest key so far is
/// kept, so that an item in order (most, in a run nearly sorted) costs one
/// key and one comparison.
pub(super) fn insertion<T: Word, K: Word, P: Pos>(run: &mut [Item<T, P>], key: impl Fn(T) -> K) {
    let Some(first) = run.first() else { return };
    let mut greatest = key(first.bits);
    for i in 1..run.len() {
        let x = run[i];
        let k = key(x.bits);
        if k >= greatest {
            greatest = k;
            continue;
        }
        let mut j = i;
        while j > 0 && key(run[j - 1].bits) > k {
            run[j] = run[j - 1];
            j -= 1;
        }
        run[j] = x;
    }
}

/// Starts of each digit's run in a distribution of `counts`, and whether one
/// digit holds every element (a distribution that would move nothing).
fn starts(counts: &[usize; 256], n: usize) -> ([usize; 256], bool) {
    let mut s = [0usize; 256];
    let mut at = 0;
    for (s, &c) in s.iter_mut().zip(counts) {
        *s = at;
        at += c;
    }
    (s, counts.contains(&n))
}

/// Counts of each digit of the keys of `items`, at each level from `level`.
fn histograms<T: Word, K: Word, P: Pos>(items: impl Iterator<Item = Item<T, P>>, level: usize, key: impl Fn(T) -> K) -> Vec<[usize; 256]> {
    let mut counts = vec![[0usize; 256]; K::BYTES - level];
    for x in items {
        let k = key(x.bits);
        for (l, c) in counts.iter_mut().enumerate() {
            c[k.digit(level + l)] += 1;
        }
    }
    counts
}

/// Moves `src` into `dst` by digit `level` of each key, stably, the runs
/// starting at `at` (advanced past what is written).
fn distribute<T: Word, K: Word, P: Pos>(
    src: impl Iterator<Item = Item<T, P>>,
    dst: &mut [Item<T, P>],
    at: &mut [usize; 256],
    level: usize,
    key: impl Fn(T) -> K,
) {
    for x in src {
        let d = key(x.bits).digit(level);
        dst[at[d]] = x;
        at[d] += 1;
    }
}

/// The levels of `counts` (relative to the first counted) whose digits
/// differ among the `n` items, least significant first: the passes an LSD
/// sort makes.
fn passes(counts: &[[usize; 256]], n: usize) -> Vec<usize> {
    (0..counts.len()).rev().filter(|&l| !starts(&counts[l], n).1).collect()
}

/// Runs the passes `ls` (levels after `level`) over the items in `x`,
/// alternating with `y`; true where the result ends in `y`.
fn alternate<T: Word, K: Word, P: Pos>(
    x: &mut [Item<T, P>],
    y: &mut [Item<T, P>],
    ls: &[usize],
    level: usize,
    counts: &[[usize; 256]],
    key: impl Fn(T) -> K + Copy,
) -> bool {
    let mut in_y = false;
    for &l in ls {
        let mut at = starts(&counts[l], x.len()).0;
        if in_y {
            distribute(y.iter().copied(), x, &mut at, level + l, key);
        } else {
            distribute(x.iter().copied(), y, &mut at, level + l, key);
        }
        in_y = !in_y;
    }
    in_y
}

/// Sorts `a` by the key's digits from `level` on, using `b` as scratch;
/// true where the result ends in `b`.
fn msd<T: Word, K: Word, P: Pos>(a: &mut [Item<T, P>], b: &mut [Item<T, P>], level: usize, key: impl Fn(T) -> K + Copy) -> bool {
    let n = a.len();
    if n <= TINY {
        insertion(a, key);
        return false;
    }
    // A run that fits the cache is sorted from its least significant digit
    // where few digits remain; with more, a pass by the next digit leaves
    // runs so short that few of their digits remain to sort.
    if (n <= SMALL && K::BYTES - level <= LSD_DIGITS) || level + 1 == K::BYTES {
        let counts = histograms(a.iter().copied(), level, key);
        let ls = passes(&counts, n);
        let Some((&first, rest)) = ls.split_first() else { return false };
        let mut at = starts(&counts[first], n).0;
        distribute(a.iter().copied(), b, &mut at, level + first, key);
        return !alternate(b, a, rest, level, &counts, key);
    }
    let mut counts = [0usize; 256];
    a.iter().for_each(|x| counts[key(x.bits).digit(level)] += 1);
    let (mut at, trivial) = starts(&counts, n);
    if trivial {
        return msd(a, b, level + 1, key);
    }
    let first = at;
    distribute(a.iter().copied(), b, &mut at, level, key);
    for d in 0..256 {
        let r = first[d]..at[d];
        // A run of one element is sorted where it lies, in b.
        if r.len() > 1 && msd(&mut b[r.clone()], &mut a[r.clone()], level + 1, key) {
            b[r.clone()].copy_from_slice(&a[r]);
        }
    }
    true
}
/// A pointer that threads share, each touching its own elements alone.
#[derive(Clone, Copy)]
pub(super) struct Shared<I>(pub(super) *mut I);
// SAFETY: the users below give each thread disjoint elements.
unsafe impl<I: Send> Send for Shared<I> {}
// SAFETY: as for Send.
unsafe impl<I: Send> Sync for Shared<I> {}

/// Elements a chunk of a parallel distribution takes at least.
const CHUNK: usize = 1 << 16;

/// Where a sort leaves its result: each run of the sorted order, as a range
/// of positions in it, lies in the first buffer or (true) the second.
pub type Runs = Vec<(std::ops::Range<usize>, bool)>;

/// Sorts the `n` elements that `read(i)` gives, stably by key, with their
/// positions, into `a` and `b` (each `n` long) over `threads`, and says
/// where each run of the result lies. A first pass
/// counts every digit; a slice of at most `SMALL` elements is then sorted
/// digit by digit from the least significant, the first pass reading the
/// elements; a longer one is distributed by its first digit that differs (by chunks on several
/// threads) and each digit's run sorted on its own, the runs shared among
/// the threads.
pub fn sort<T: Word, K: Word, P: Pos>(
    read: impl Fn(usize) -> T + Sync,
    a: &mut [Item<T, P>],
    b: &mut [Item<T, P>],
    threads: usize,
    key: impl Fn(T) -> K + Copy + Send + Sync,
) -> Runs {
    let n = a.len();
    assert_eq!(n, b.len(), "the scratch is as long as the elements");
    let items = |r: std::ops::Range<usize>| r.map(|i| Item { bits: read(i), pos: P::of(i) });
    if n <= TINY {
        a.iter_mut().zip(items(0..n)).for_each(|(a, x)| *a = x);
        insertion(a, key);
        return vec![(0..n, false)];
    }
    let chunks = if threads > 1 { n.div_ceil(CHUNK).min(4 * threads) } else { 1 };
    let per = n.div_ceil(chunks);
    let chunk = |c: usize| c * per..((c + 1) * per).min(n);
    let counts: Vec<Vec<[usize; 256]>> = {
        let slots: Vec<std::sync::Mutex<Vec<[usize; 256]>>> = (0..chunks).map(|_| Default::default()).collect();
        pool::run_parts(chunks, |c| *slots[c].lock().unwrap_or_else(|e| e.into_inner()) = histograms(items(chunk(c)), 0, key));
        slots.into_iter().map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner())).collect()
    };
    let mut total = vec![[0usize; 256]; K::BYTES];
    counts.iter().for_each(|h| total.iter_mut().zip(h).for_each(|(t, h)| t.iter_mut().zip(h).for_each(|(t, c)| *t += c)));
    let ls = passes(&total, n);
    let Some(&level) = ls.last() else {
        // Every key is one: the order is the positions'.
        a.iter_mut().zip(items(0..n)).for_each(|(a, x)| *a = x);
        return vec![(0..n, false)];
    };
    if chunks == 1 && n <= SMALL {
        let mut at = starts(&total[ls[0]], n).0;
        distribute(items(0..n), a, &mut at, ls[0], key);
        return vec![(0..n, alternate(a, b, &ls[1..], 0, &total, key))];
    }
    // Each chunk's runs start after the earlier chunks' elements of each digit.
    let first = starts(&total[level], n).0;
    let mut at = first;
    let offsets: Vec<[usize; 256]> = counts
        .iter()
        .map(|h| {
            let o = at;
            at.iter_mut().zip(&h[level]).for_each(|(a, c)| *a += c);
            o
        })
        .collect();
    let dst = Shared(b.as_mut_ptr());
    pool::run_parts(chunks, |c| {
        // The whole wrapper, which threads share, not its pointer field
        // (a closure would capture the field alone).
        #[allow(clippy::redundant_locals)]
        let dst = dst;
        let mut at = offsets[c];
        for x in items(chunk(c)) {
            let d = key(x.bits).digit(level);
            // Elements that changed since they were counted (by a writer
            // outside the call) could overrun a digit's range: they are
            // kept inside b.
            assert!(at[d] < n, "the elements changed while they were sorted");
            // SAFETY: at[d] < n = b's length; the offsets give each chunk
            // and digit its own range of b, so no two threads write one
            // index while the counts hold.
            unsafe { dst.0.add(at[d]).write(x) };
            at[d] += 1;
        }
    });
    let runs: Vec<std::ops::Range<usize>> = (0..256).map(|d| first[d]..at[d]).filter(|r| !r.is_empty()).collect();
    if level + 1 == K::BYTES {
        return vec![(0..n, true)];
    }
    let in_a: Vec<std::sync::atomic::AtomicBool> = runs.iter().map(|_| Default::default()).collect();
    let (pa, pb) = (Shared(a.as_mut_ptr()), Shared(b.as_mut_ptr()));
    let parts = if chunks > 1 { runs.len() } else { 1 };
    pool::run_parts(parts, |p| {
        let (pa, pb) = (pa, pb);
        let mine = if parts == 1 { 0..runs.len() } else { p..p + 1 };
        for r in mine {
            let (s, e) = (runs[r].start, runs[r].end);
            // SAFETY: the runs are disjoint ranges below n of a and b, and
            // each part touches its own runs alone.
            let (ra, rb) = unsafe {
                (std::slice::from_raw_parts_mut(pa.0.add(s), e - s), std::slice::from_raw_parts_mut(pb.0.add(s), e - s))
            };
            in_a[r].store(msd(rb, ra, level + 1, key), std::sync::atomic::Ordering::Relaxed);
        }
    });
    runs.into_iter().zip(in_a).map(|(r, f)| (r, !f.into_inner())).collect()
}

/// Elements a selection tests against its bound at once.
const BLOCK: usize = 64;

/// The first `k` elements of the sorted order of the `n` elements that
/// `read(i)` gives, with their positions, over `threads`: each chunk keeps
/// a buffer of candidates below the greatest of the best `k` it has seen,
/// so that most elements cost one comparison; the chunks' bests merge.
pub fn select<T: Word, K: Word>(
    n: usize,
    k: usize,
    threads: usize,
    read: impl Fn(usize) -> T + Send + Sync,
    key: impl Fn(T) -> K + Copy + Send + Sync,
) -> Vec<Item<T, u64>> {
    if k == 0 {
        return Vec::new();
    }
    let chunks = n.div_ceil(4 * CHUNK).min(threads).max(1);
    let per = n.div_ceil(chunks);
    let slots: Vec<std::sync::Mutex<Vec<(K, u64)>>> = (0..chunks).map(|_| Default::default()).collect();
    let best = |c: &mut Vec<(K, u64)>| {
        if c.len() > k {
            c.select_nth_unstable(k - 1);
            c.truncate(k);
        }
    };
    pool::run_parts(chunks, |c| {
        let mut cand: Vec<(K, u64)> = Vec::with_capacity(2 * k.min(per) + 1);
        // Keys below `bound` may enter; an element of the bound's key comes
        // after every kept one, so it is never among the best.
        let mut bound: Option<K> = None;
        let (lo, hi) = (c * per, ((c + 1) * per).min(n));
        for b in (lo..hi).step_by(BLOCK) {
            let block = b..(b + BLOCK).min(hi);
            // Once the buffer has a bound, few blocks hold a key below it:
            // a block is tested whole first, without a branch an element
            // (which the compiler can do in vector registers).
            if let Some(bound) = bound {
                if !block.clone().fold(false, |any, i| any | (key(read(i)) < bound)) {
                    continue;
                }
            }
            for i in block {
                let kx = key(read(i));
                if bound.is_none_or(|b| kx < b) {
                    cand.push((kx, i as u64));
                    if cand.len() >= 2 * k.max(16) {
                        best(&mut cand);
                        bound = cand.iter().map(|c| c.0).max();
                    }
                }
            }
        }
        best(&mut cand);
        *slots[c].lock().unwrap_or_else(|e| e.into_inner()) = cand;
    });
    let mut all: Vec<(K, u64)> = slots.into_iter().flat_map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner())).collect();
    best(&mut all);
    all.sort_unstable();
    all.into_iter().map(|(_, p)| Item { bits: read(p as usize), pos: p }).collect()
}
