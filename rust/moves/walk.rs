//! Walking an index space: element indices of a layout at an index, runs
//! along the last axis over a range of C-order positions, and the parts a
//! call splits its work into.

use crate::core::layout::Layout;
use crate::core::pool;

/// The element index of `idx` in `l`: its offset plus each coordinate
/// times its stride, over the first `idx.len()` axes.
#[inline]
pub fn at(l: &Layout, idx: &[usize]) -> isize {
    idx.iter().zip(&l.strides).fold(l.offset as isize, |a, (&i, &s)| a + i as isize * s)
}

/// The stride of `l`'s last axis, 0 for a 0-d layout.
#[inline]
pub fn last_stride(l: &Layout) -> isize {
    l.strides.last().copied().unwrap_or(0)
}

/// Calls `f(idx, k0, k1)` for each run along the last axis of `shape` that
/// C-order positions `lo..hi` cover: `idx` the coordinates of the run's
/// first element (its last one `k0`), the run holding `k0..k1` along the
/// last axis. A 0-d shape has one run, `f(&[], 0, 1)`, at position 0.
pub fn runs(shape: &[usize], lo: usize, hi: usize, mut f: impl FnMut(&[usize], usize, usize)) {
    let Some(&n) = shape.last() else {
        if lo == 0 && hi > 0 {
            f(&[], 0, 1);
        }
        return;
    };
    if lo >= hi || n == 0 {
        return;
    }
    let r = shape.len();
    let mut idx = vec![0usize; r];
    let mut rest = lo / n;
    for a in (0..r - 1).rev() {
        idx[a] = rest % shape[a];
        rest /= shape[a];
    }
    let mut pos = lo;
    let mut k0 = lo % n;
    while pos < hi {
        let k1 = n.min(k0 + (hi - pos));
        idx[r - 1] = k0;
        f(&idx, k0, k1);
        pos += k1 - k0;
        k0 = 0;
        // The next row: the odometer over the axes before the last.
        for a in (0..r - 1).rev() {
            idx[a] += 1;
            if idx[a] < shape[a] {
                break;
            }
            idx[a] = 0;
        }
    }
}

/// Whether a layout's elements at C-order positions lie one after the
/// other: each axis of more than one element steps the product of the
/// extents after it.
pub fn dense(shape: &[usize], strides: &[isize]) -> bool {
    let mut step = 1isize;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n > 1 && s != step {
            return false;
        }
        step = step.saturating_mul(n as isize);
    }
    true
}

/// How many parts to split `n` items into, each of at least about `grain`
/// items: a few per thread, so that uneven parts even out, or one.
pub fn parts(n: usize, grain: usize) -> usize {
    let t = pool::threads();
    if t == 1 {
        return 1;
    }
    (n / grain.max(1)).clamp(1, 4 * t)
}

/// What `f(p)` gives for each part `p` of `k`, run over the pool's threads.
pub fn map_parts<T: Send>(k: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let slots: Vec<std::sync::Mutex<Option<T>>> = (0..k).map(|_| std::sync::Mutex::new(None)).collect();
    pool::run_parts(k, |p| *slots[p].lock().unwrap_or_else(|e| e.into_inner()) = Some(f(p)));
    (slots.into_iter()).map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every part ran")).collect()
}

/// The items `lo..hi` of part `p` of `k` over `n` items.
#[inline]
pub fn bounds(n: usize, k: usize, p: usize) -> (usize, usize) {
    let cut = |p: usize| (n as u128 * p as u128 / k as u128) as usize;
    (cut(p), cut(p + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_each_position_once_in_order() {
        for shape in [vec![], vec![5], vec![3, 4], vec![2, 3, 4], vec![2, 0, 3], vec![1, 1, 7]] {
            let size: usize = shape.iter().product();
            for lo in 0..=size {
                for hi in lo..=size {
                    let mut seen = Vec::new();
                    runs(&shape, lo, hi, |idx, k0, k1| {
                        assert!(k0 < k1);
                        for k in k0..k1 {
                            let mut i = idx.to_vec();
                            if let Some(l) = i.last_mut() {
                                *l = k;
                            }
                            seen.push(i.iter().zip(&shape).fold(0, |a, (&i, &n)| a * n + i));
                        }
                    });
                    assert_eq!(seen, (lo..hi).collect::<Vec<_>>(), "{shape:?} {lo}..{hi}");
                }
            }
        }
    }

    #[test]
    fn bounds_tile_the_items() {
        for n in [0, 1, 7, 100] {
            for k in 1..6 {
                let mut next = 0;
                for p in 0..k {
                    let (lo, hi) = bounds(n, k, p);
                    assert_eq!(lo, next);
                    next = hi;
                }
                assert_eq!(next, n);
            }
        }
    }
}
