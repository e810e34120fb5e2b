//! Sum, Prod, Max and Min scans: chunks of [`CHUNK`] terms, each chunk's
//! total in lane order, results left to right from the carry into the
//! chunk.

use core::marker::PhantomData;

use rayon::prelude::*;

use super::monoid::Monoid;
use super::terms::Terms;
use super::tree::{reduce_range, GRAIN};
use super::{BLOCK, CHUNK};

/// A scan of one slice, chunk by chunk: its state is the carry into the
/// next chunk. Feeding the chunks of a slice from chunk `c` on, starting
/// from the carry into chunk `c`, gives the bits of the whole slice's scan
/// from there.
#[derive(Clone, Copy, Debug)]
pub struct Scan<T, M> {
    carry: Option<T>,
    monoid: PhantomData<M>,
}

impl<T: Copy + Send + Sync, M: Monoid<T>> Scan<T, M> {
    /// A scan that starts from `carry`, or, without one, from the identity
    /// (+0 for a Sum), or for Prod, Max and Min from its first term.
    pub fn new(_monoid: M, carry: Option<T>) -> Self {
        Scan { carry, monoid: PhantomData }
    }

    /// The carry into the next chunk; `None` before the first chunk of a
    /// scan without a given carry.
    pub fn carry(&self) -> Option<T> {
        self.carry
    }

    /// Scans the next chunk into `out`: each result is the carry combined
    /// with the chunk's terms up to it, left to right. Then the carry takes
    /// the chunk's total in lane order. `terms` holds [`CHUNK`] terms but
    /// for a slice's last chunk, which may hold fewer (at least one).
    ///
    /// Panics where `out` is not as long as `terms`, or `terms` is empty or
    /// longer than [`CHUNK`].
    pub fn chunk(&mut self, terms: &[T], out: &mut [T]) {
        assert!(!terms.is_empty() && terms.len() <= CHUNK && out.len() == terms.len());
        self.results(terms, out);
        self.advance(reduce_range::<T, M, [T]>(terms, 0..terms.len(), false));
    }

    /// The carry into the chunk after one of total `total`.
    #[inline]
    fn advance(&mut self, total: T) {
        self.carry = Some(match self.carry {
            Some(c) => M::combine(c, total),
            None => M::start(total),
        });
    }

    /// The results of one chunk from the current carry.
    #[inline]
    fn results(&self, terms: &[T], out: &mut [T]) {
        let mut r = match self.carry {
            Some(c) => M::combine(c, terms[0]),
            None => M::start(terms[0]),
        };
        out[0] = r;
        for (o, &t) in out[1..].iter_mut().zip(&terms[1..]) {
            r = M::combine(r, t);
            *o = r;
        }
    }
}

/// The scan of `terms` by `M` into `out`, from `carry` (see [`Scan`]).
/// Under `parallel`, a slice of many chunks computes their totals, then
/// their results, on the threads of the rayon pool it runs in, reading its
/// terms twice; the bits stay the same.
///
/// Panics where `out` is not as long as `terms`.
pub fn scan<T, M, S>(monoid: M, terms: &S, carry: Option<T>, out: &mut [T], parallel: bool)
where
    T: Copy + Send + Sync,
    M: Monoid<T>,
    S: Terms<T> + ?Sized,
{
    let n = terms.count();
    assert_eq!(out.len(), n);
    let chunks = n.div_ceil(CHUNK);
    let range = |c: usize| c * CHUNK..n.min((c + 1) * CHUNK);
    let mut state = Scan::new(monoid, carry);
    if !parallel || chunks * CHUNK <= GRAIN * BLOCK {
        for (c, o) in out.chunks_mut(CHUNK).enumerate() {
            let r = range(c);
            terms.with(r.start, r.end, |t| state.chunk(t, o));
        }
        return;
    }
    let totals: Vec<T> = (0..chunks).into_par_iter().map(|c| reduce_range::<T, M, S>(terms, range(c), false)).collect();
    let carries: Vec<Scan<T, M>> = totals
        .iter()
        .map(|&total| {
            let before = state;
            state.advance(total);
            before
        })
        .collect();
    out.par_chunks_mut(CHUNK).zip(carries).enumerate().for_each(|(c, (o, s))| {
        let r = range(c);
        terms.with(r.start, r.end, |t| s.results(t, o));
    });
}
