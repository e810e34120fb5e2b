//! Where terms come from: a slice in memory, or a callback that materialises
//! them a block at a time.

use core::marker::PhantomData;

use super::BLOCK;

/// A sequence of terms numbered from 0, handed over a block at a time.
pub trait Terms<T>: Sync {
    /// The number of terms.
    fn count(&self) -> usize;
    /// Calls `f` with terms `start..end` as one slice. The reductions ask
    /// for at most [`BLOCK`] terms at a time, scans for at most
    /// [`CHUNK`](super::CHUNK).
    fn with<R>(&self, start: usize, end: usize, f: impl FnOnce(&[T]) -> R) -> R;
}

impl<T: Sync> Terms<T> for [T] {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn with<R>(&self, start: usize, end: usize, f: impl FnOnce(&[T]) -> R) -> R {
        f(&self[start..end])
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

/// Terms of another source, each mapped by `map` (private: the second passes
/// of Logsumexp and Moments).
pub(crate) struct Mapped<'a, T, S: ?Sized, G> {
    inner: &'a S,
    map: G,
    from: PhantomData<fn(T)>,
}

impl<'a, T, S: ?Sized, G> Mapped<'a, T, S, G> {
    /// The terms of `inner`, each mapped by `map`.
    pub(crate) fn new(inner: &'a S, map: G) -> Self {
        Mapped { inner, map, from: PhantomData }
    }
}

impl<T, U, S, G> Terms<U> for Mapped<'_, T, S, G>
where
    S: Terms<T> + ?Sized,
    U: Copy + Default,
    G: Fn(T) -> U + Sync,
    T: Copy,
{
    #[inline]
    fn count(&self) -> usize {
        self.inner.count()
    }
    fn with<R>(&self, start: usize, end: usize, f: impl FnOnce(&[U]) -> R) -> R {
        self.inner.with(start, end, |xs| {
            with_buffer(xs.len(), |buf| {
                for (b, &x) in buf.iter_mut().zip(xs) {
                    *b = (self.map)(x);
                }
                f(buf)
            })
        })
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
