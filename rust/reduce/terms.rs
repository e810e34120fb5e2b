//! Where terms come from: a slice in memory, or a callback that materialises
//! them a block at a time.

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
