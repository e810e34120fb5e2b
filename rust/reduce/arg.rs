//! Arg: an extreme and its position, as a reduction and as a scan.

use core::marker::PhantomData;

use super::monoid::{Max, Min, Monoid, Ordered};
use super::terms::Terms;
use super::tree::tree;
use super::BLOCK;

/// Which extreme an Arg finds: [`Max`] or [`Min`], in the order of
/// [`Ordered`], where a NaN is above every number for either. Its monoid's
/// [`block`](Monoid::block) gives the extreme of any run of terms (a
/// leaf's at most), a NaN where a term is.
pub trait Pick<T: Ordered>: Monoid<T> {
    /// Whether `a` is strictly better than `b`.
    fn better(a: T, b: T) -> bool;
}

impl<T: Ordered> Pick<T> for Max {
    #[inline(always)]
    fn better(a: T, b: T) -> bool {
        !b.nan() && (a.nan() || T::above(a, b))
    }
}

impl<T: Ordered> Pick<T> for Min {
    #[inline(always)]
    fn better(a: T, b: T) -> bool {
        !b.nan() && (a.nan() || T::above(b, a))
    }
}

/// Blocks that one leaf of the tree scans in turn.
const LEAF_BLOCKS: usize = 16;

/// The Arg of `terms` by `P`: the first term that no other is better than,
/// the term itself, and its position; `None` for no term. Ties go to the
/// first occurrence and the first NaN wins, as numpy's argmax and argmin;
/// as the order puts -0 below +0, the extreme has the bits of `P`'s
/// reduction, NaN payloads aside. `parallel` lets whole leaves of 16
/// blocks run on the threads of the rayon pool it runs in.
pub fn arg<T, P, S>(_pick: P, terms: &S, parallel: bool) -> Option<(T, i64)>
where
    T: Ordered,
    P: Pick<T>,
    S: Terms<T> + ?Sized,
{
    let n = terms.count();
    if n == 0 {
        return None;
    }
    // A leaf scans its terms a part at a time (all at once where they lie
    // in memory, else block by block): a part's extreme by the vectorised
    // reduction, then, only where it beats the best so far, its first
    // occurrence. Measured on Zen 3 (`reduce::tests::bench`), Arg Max over
    // 10M float32 in memory ran 2.2 to 2.8 ms block by block, 1.9 to 2.0 a
    // leaf at a time (Max 1.6 to 1.8 in the same minutes).
    let span = LEAF_BLOCKS * BLOCK;
    let part = if S::IN_MEMORY { span } else { BLOCK };
    let leaf = |g: usize| {
        let end = n.min((g + 1) * span);
        let mut best: Option<(T, i64)> = None;
        for start in (g * span..end).step_by(part) {
            terms.ahead(start + P::AHEAD * BLOCK);
            terms.with(start, end.min(start + part), |t| {
                let e = P::block(t);
                if best.is_none_or(|(b, _)| P::better(e, b)) {
                    let j = T::position(t, e).expect("the extreme is a term");
                    best = Some((t[j], (start + j) as i64));
                }
            });
        }
        best.expect("a leaf holds terms")
    };
    // The left part's positions come first, so it keeps ties.
    let combine = |a: (T, i64), b: (T, i64)| if P::better(b.0, a.0) { b } else { a };
    Some(tree(0, n.div_ceil(span), LEAF_BLOCKS, parallel, &leaf, &combine))
}

/// An Arg scan of one slice, chunk by chunk: result `i` is the Arg of the
/// terms up to `i`.
#[derive(Clone, Copy, Debug)]
pub struct ArgScan<T, P> {
    best: Option<(T, i64)>,
    next: i64,
    pick: PhantomData<P>,
}

impl<T: Ordered, P: Pick<T>> ArgScan<T, P> {
    /// A scan from the slice's start.
    pub fn new(_pick: P) -> Self {
        ArgScan { best: None, next: 0, pick: PhantomData }
    }

    /// Scans the next terms into `values` and `positions`.
    ///
    /// Panics where the three lengths differ.
    pub fn chunk(&mut self, terms: &[T], values: &mut [T], positions: &mut [i64]) {
        assert!(values.len() == terms.len() && positions.len() == terms.len());
        for ((&t, v), p) in terms.iter().zip(values).zip(positions) {
            let best = match self.best {
                Some(b) if !P::better(t, b.0) => b,
                _ => (t, self.next),
            };
            self.best = Some(best);
            (*v, *p) = best;
            self.next += 1;
        }
    }
}

/// The Arg scan of `terms` by `P` into `values` and `positions`.
///
/// Panics where the lengths differ.
pub fn arg_scan<T, P, S>(pick: P, terms: &S, values: &mut [T], positions: &mut [i64])
where
    T: Ordered,
    P: Pick<T>,
    S: Terms<T> + ?Sized,
{
    let n = terms.count();
    assert!(values.len() == n && positions.len() == n);
    let mut state = ArgScan::new(pick);
    for ((v, p), c) in values.chunks_mut(BLOCK).zip(positions.chunks_mut(BLOCK)).zip(0..) {
        terms.with(c * BLOCK, n.min((c + 1) * BLOCK), |t| state.chunk(t, v, p));
    }
}
