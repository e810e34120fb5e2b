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

use super::order::Word;
use crate::pool;

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
/// least significant (a run of 8-byte items then fits a core's L2 cache).
const SMALL: usize = 1 << 15;

/// Runs of at most this many elements are sorted by insertion.
const TINY: usize = 24;

/// Sorts `run` by insertion, stably by key.
fn insertion<T: Word, K: Word, P: Pos>(run: &mut [Item<T, P>], key: impl Fn(T) -> K) {
    for i in 1..run.len() {
        let x = run[i];
        let k = key(x.bits);
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
    (s, counts.iter().any(|&c| c == n))
}

/// Moves `src` into `dst` by digit `level` of each key, stably, the runs
/// starting at `at` (advanced past what is written).
fn distribute<T: Word, K: Word, P: Pos>(
    src: &[Item<T, P>],
    dst: &mut [Item<T, P>],
    at: &mut [usize; 256],
    level: usize,
    key: impl Fn(T) -> K,
) {
    for x in src {
        let d = key(x.bits).digit(level);
        dst[at[d]] = *x;
        at[d] += 1;
    }
}

/// Sorts `a` by the key's digits from `level` on, using `b` (as long) as
/// scratch, from the least significant digit; true where the result ends
/// in `b`.
fn lsd<T: Word, K: Word, P: Pos>(a: &mut [Item<T, P>], b: &mut [Item<T, P>], level: usize, key: impl Fn(T) -> K + Copy) -> bool {
    let n = a.len();
    if n <= TINY {
        insertion(a, key);
        return false;
    }
    let levels = K::BYTES - level;
    let mut counts = [[0usize; 256]; 16];
    for x in a.iter() {
        let k = key(x.bits);
        for (l, c) in counts[..levels].iter_mut().enumerate() {
            c[k.digit(level + l)] += 1;
        }
    }
    let mut in_b = false;
    for l in (0..levels).rev() {
        let (mut at, trivial) = starts(&counts[l], n);
        if trivial {
            continue;
        }
        if in_b {
            distribute(b, a, &mut at, level + l, key);
        } else {
            distribute(a, b, &mut at, level + l, key);
        }
        in_b = !in_b;
    }
    in_b
}

/// Sorts `a` by the key's digits from `level` on, using `b` as scratch;
/// true where the result ends in `b`.
fn msd<T: Word, K: Word, P: Pos>(a: &mut [Item<T, P>], b: &mut [Item<T, P>], level: usize, key: impl Fn(T) -> K + Copy) -> bool {
    let n = a.len();
    if n <= SMALL || level + 1 == K::BYTES {
        return lsd(a, b, level, key);
    }
    let mut counts = [0usize; 256];
    a.iter().for_each(|x| counts[key(x.bits).digit(level)] += 1);
    let (mut at, trivial) = starts(&counts, n);
    if trivial {
        return msd(a, b, level + 1, key);
    }
    let first = at;
    distribute(a, b, &mut at, level, key);
    for d in 0..256 {
        let r = first[d]..at[d];
        if msd(&mut b[r.clone()], &mut a[r.clone()], level + 1, key) {
            b[r.clone()].copy_from_slice(&a[r]);
        }
    }
    true
}

/// A pointer that threads share, each touching its own elements alone.
#[derive(Clone, Copy)]
struct Shared<I>(*mut I);
// SAFETY: the users below give each thread disjoint elements.
unsafe impl<I: Send> Send for Shared<I> {}
// SAFETY: as for Send.
unsafe impl<I: Send> Sync for Shared<I> {}

/// Elements a chunk of a parallel distribution takes at least.
const CHUNK: usize = 1 << 16;

/// Sorts `a` stably by key, using `b` (as long) as scratch, over the pool's
/// `threads`; true where the result ends in `b`.
pub fn sort<T: Word, K: Word, P: Pos>(
    a: &mut [Item<T, P>],
    b: &mut [Item<T, P>],
    threads: usize,
    key: impl Fn(T) -> K + Copy + Send + Sync,
) -> bool {
    let n = a.len();
    assert_eq!(n, b.len(), "the scratch is as long as the elements");
    let chunks = n.div_ceil(CHUNK).min(4 * threads);
    if chunks < 2 || threads < 2 || K::BYTES == 1 {
        return msd(a, b, 0, key);
    }
    let per = n.div_ceil(chunks);
    // The first digit that the elements do not all share.
    let mut level = 0;
    let (counts, first) = loop {
        let counts: Vec<[usize; 256]> = {
            let slots: Vec<std::sync::Mutex<[usize; 256]>> = (0..chunks).map(|_| std::sync::Mutex::new([0; 256])).collect();
            let a = &*a;
            pool::run_parts(chunks, |c| {
                let mut h = [0usize; 256];
                a[c * per..((c + 1) * per).min(n)].iter().for_each(|x| h[key(x.bits).digit(level)] += 1);
                *slots[c].lock().unwrap_or_else(|e| e.into_inner()) = h;
            });
            slots.into_iter().map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner())).collect()
        };
        let mut total = [0usize; 256];
        counts.iter().for_each(|h| total.iter_mut().zip(h).for_each(|(t, c)| *t += c));
        let (first, trivial) = starts(&total, n);
        if !trivial || level + 1 == K::BYTES {
            break (counts, first);
        }
        level += 1;
    };
    // Each chunk's runs start after the earlier chunks' elements of each digit.
    let mut at = first;
    let offsets: Vec<[usize; 256]> = counts
        .iter()
        .map(|h| {
            let o = at;
            at.iter_mut().zip(h).for_each(|(a, c)| *a += c);
            o
        })
        .collect();
    let dst = Shared(b.as_mut_ptr());
    {
        let a = &*a;
        pool::run_parts(chunks, |c| {
            let dst = dst;
            let mut at = offsets[c];
            for x in &a[c * per..((c + 1) * per).min(n)] {
                let d = key(x.bits).digit(level);
                // SAFETY: the offsets give each chunk and digit its own
                // range of b, as long as the chunk's elements of that
                // digit, so each index is written once and is below n.
                unsafe { dst.0.add(at[d]).write(*x) };
                at[d] += 1;
            }
        });
    }
    if level + 1 == K::BYTES {
        return true;
    }
    let runs: Vec<(usize, usize)> = (0..256).map(|d| (first[d], at[d])).filter(|(s, e)| e > s).collect();
    let (pa, pb) = (Shared(a.as_mut_ptr()), Shared(b.as_mut_ptr()));
    pool::run_parts(runs.len(), |r| {
        let (pa, pb) = (pa, pb);
        let (s, e) = runs[r];
        // SAFETY: the runs are disjoint ranges of a and b, below n, and
        // each part touches its own run alone.
        let (ra, rb) = unsafe {
            (std::slice::from_raw_parts_mut(pa.0.add(s), e - s), std::slice::from_raw_parts_mut(pb.0.add(s), e - s))
        };
        if msd(rb, ra, level + 1, key) {
            rb.copy_from_slice(ra);
        }
    });
    true
}

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
        for i in c * per..((c + 1) * per).min(n) {
            let kx = key(read(i));
            if bound.is_none_or(|b| kx < b) {
                cand.push((kx, i as u64));
                if cand.len() >= 2 * k.max(16) {
                    best(&mut cand);
                    bound = cand.iter().map(|c| c.0).max();
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
