//! The blocks' tree, on one thread or on rayon's, and the Monoid reduction.

use core::ops::Range;

use super::monoid::Monoid;
use super::terms::Terms;
use super::BLOCK;

/// Subtrees of at most this many blocks run on the thread that reaches them;
/// larger ones split between `rayon::join`'s two sides.
pub const GRAIN: usize = 64;

/// The left part of `count >= 2` blocks: the largest power of two below it.
#[inline]
pub(crate) fn split(count: usize) -> usize {
    debug_assert!(count >= 2);
    1 << (usize::BITS - 1 - (count - 1).leading_zeros())
}

/// The blocks' tree over leaves `first..first + count` (`count >= 1`) of
/// `blocks` blocks each: `leaf` gives a leaf's result, `combine` joins a
/// left part's and a right part's. Under `parallel`, parts of more than
/// [`GRAIN`] blocks run their two sides by `rayon::join`; the association,
/// hence the bits, stay the same.
pub(crate) fn tree<R, L, C>(first: usize, count: usize, blocks: usize, parallel: bool, leaf: &L, combine: &C) -> R
where
    R: Send,
    L: Fn(usize) -> R + Sync,
    C: Fn(R, R) -> R + Sync,
{
    if count == 1 {
        return leaf(first);
    }
    let left = split(count);
    let (a, b) = if parallel && count * blocks > GRAIN {
        rayon::join(
            || tree(first, left, blocks, parallel, leaf, combine),
            || tree(first + left, count - left, blocks, parallel, leaf, combine),
        )
    } else {
        (
            tree(first, left, blocks, parallel, leaf, combine),
            tree(first + left, count - left, blocks, parallel, leaf, combine),
        )
    };
    combine(a, b)
}

/// The reduction of `terms` by the monoid `M` in lane order (blocks of
/// [`BLOCK`], 16 lanes, the lanes' and the blocks' trees); `M::empty()` for
/// no term. `parallel` lets it split the blocks' tree among the threads of
/// the rayon pool it runs in; the bits never depend on it.
pub fn reduce<T, M, S>(_monoid: M, terms: &S, parallel: bool) -> T
where
    T: Copy + Send,
    M: Monoid<T>,
    S: Terms<T> + ?Sized,
{
    match terms.count() {
        0 => M::empty(),
        n => reduce_range::<T, M, S>(terms, 0..n, parallel),
    }
}

/// The lane-order reduction of terms `range` (not empty) of `terms`, as a
/// reduction of exactly them.
pub(crate) fn reduce_range<T, M, S>(terms: &S, range: Range<usize>, parallel: bool) -> T
where
    T: Copy + Send,
    M: Monoid<T>,
    S: Terms<T> + ?Sized,
{
    let blocks = if S::IN_MEMORY { M::LEAF_BLOCKS } else { 1 };
    let width = BLOCK * blocks;
    let leaf = |b: usize| {
        let start = range.start + b * width;
        if M::AHEAD > 0 {
            terms.ahead(start + M::AHEAD * BLOCK);
        }
        terms.leaf::<M>(start, range.end.min(start + width))
    };
    tree(0, range.len().div_ceil(width), blocks, parallel, &leaf, &M::combine)
}
