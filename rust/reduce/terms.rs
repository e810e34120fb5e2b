//! Where terms come from: a slice in memory, every other element of one, or
//! a callback that materialises them a block at a time.

use super::lanes;
use super::monoid::Monoid;
use super::BLOCK;

/// A sequence of terms numbered from 0, handed over a block at a time.
pub trait Terms<T>: Sync {
    /// The number of terms.
    fn count(&self) -> usize;
    /// Whether the terms lie in memory, so that a run of any length costs
    /// nothing to hand over.
    const IN_MEMORY: bool = false;
    /// Calls `f` with terms `start..end` as one slice. The reductions ask
    /// for at most [`BLOCK`] terms at a time (terms in memory:
    /// [`Monoid::LEAF_BLOCKS`](super::Monoid::LEAF_BLOCKS) blocks), scans
    /// for at most [`CHUNK`](super::CHUNK).
    fn with<R>(&self, start: usize, end: usize, f: impl FnOnce(&[T]) -> R) -> R;
    /// The result of the leaf of the blocks' tree that holds terms
    /// `start..end`: `M::block` of the terms handed over by [`Terms::with`],
    /// unless the source has a faster way to the same bits.
    #[inline]
    fn leaf<M: Monoid<T>>(&self, start: usize, end: usize) -> T
    where
        T: Copy,
    {
        self.with(start, end, M::block)
    }
    /// Hints that term `i` (if any) will be asked for soon: see
    /// [`Monoid::AHEAD`](super::Monoid::AHEAD).
    #[inline(always)]
    fn ahead(&self, _i: usize) {}
}

impl<T: Sync> Terms<T> for [T] {
    const IN_MEMORY: bool = true;
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn with<R>(&self, start: usize, end: usize, f: impl FnOnce(&[T]) -> R) -> R {
        f(&self[start..end])
    }
    #[inline(always)]
    fn ahead(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(p) = self.get(i) {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: a prefetch is a hint: it reads nothing the program
            // sees and cannot fault; `p` lies within the slice besides.
            unsafe { _mm_prefetch((p as *const T).cast::<i8>(), _MM_HINT_T0) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }
}

/// Terms that a callback writes: `fill(start, out)` writes terms
/// `start..start + out.len()` into `out`.
#[derive(Clone, Copy, Debug)]
pub struct Fill<F> {
    /// The number of terms.
    pub count: usize,
    /// The callback.
    pub fill: F,
}

impl<T, F> Terms<T> for Fill<F>
where
    T: Copy + Default,
    F: Fn(usize, &mut [T]) + Sync,
{
    #[inline]
    fn count(&self) -> usize {
        self.count
    }
    fn with<R>(&self, start: usize, end: usize, f: impl FnOnce(&[T]) -> R) -> R {
        with_buffer(end - start, |buf| {
            (self.fill)(start, buf);
            f(buf)
        })
    }
}

/// Every other element of a run, from its first: terms `data[2 i]`, read
/// where they lie (a view of step 2, such as `x[::2]` or the real parts of
/// interleaved pairs). `data` may end at the last term; the elements
/// between the terms are read too, so they must be as safe to read as the
/// terms (within the operand's claimed bytes).
#[derive(Clone, Copy, Debug)]
pub struct EveryOther<'a, T> {
    data: &'a [T],
}

impl<'a, T> EveryOther<'a, T> {
    /// The `count` terms `data[0], data[2], ..`; `None` where `data` is too
    /// short for them.
    pub fn new(data: &'a [T], count: usize) -> Option<Self> {
        let need = match count {
            0 => 0,
            n => 2 * n - 1,
        };
        data.get(..need).map(|data| EveryOther { data })
    }
}

impl<T: Copy + Default + Sync> Terms<T> for EveryOther<'_, T> {
    #[inline]
    fn count(&self) -> usize {
        self.data.len().div_ceil(2)
    }
    fn with<R>(&self, start: usize, end: usize, f: impl FnOnce(&[T]) -> R) -> R {
        with_buffer(end - start, |buf| {
            buf.iter_mut().zip(self.data[2 * start..].iter().step_by(2)).for_each(|(x, &y)| *x = y);
            f(buf)
        })
    }
    /// A lane-order monoid's block (one block a leaf: see
    /// [`Monoid::LEAF_BLOCKS`]) read in place by
    /// [`lanes::block_every_other`], of the bits of the block copied out and
    /// reduced; any other monoid's from a copy.
    #[inline]
    fn leaf<M: Monoid<T>>(&self, start: usize, end: usize) -> T {
        if M::LEAF_BLOCKS == 1 && end - start <= BLOCK {
            lanes::block_every_other::<T, M>(&self.data[2 * start..], end - start)
        } else {
            self.with(start, end, M::block)
        }
    }
}

/// Calls `f` with a scratch slice of `n` elements: on the stack up to a
/// block, else on the heap.
#[inline]
fn with_buffer<T: Copy + Default, R>(n: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    if n <= BLOCK {
        let mut buf = [T::default(); BLOCK];
        f(&mut buf[..n])
    } else {
        f(&mut vec![T::default(); n])
    }
}
