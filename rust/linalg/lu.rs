//! lu: P a = L U by partial pivoting, L unit lower triangular, U upper.
//!
//! Each element is its element of a less the products of its row's L and
//! its column's U before it, in increasing order, each fused
//! ([`Scalar::sub_mul`]); an element of L is then divided by its pivot. Rows
//! move whole as they are interchanged, so the chain is the same whatever
//! the blocking.
//!
//! The columns are factored recursively: the first half's, then the
//! second half's rows interchanged as the first half's steps say, their U
//! rows solved with the first half's L ([`triangular::lower_columns`]), the rows
//! below less the products of the first half's L and those U rows by a
//! packed product ([`gemm`]), then the second half factored and its
//! interchanges applied to the first half's columns.

use crate::core::pool;
use crate::linalg::gemm::{self, Band, Coef};
use crate::linalg::scalar::Scalar;
use crate::linalg::triangular::{self, split, BASE};

/// Factors the m × n column-major matrix `w` (`ld` rows a column) in place into L below its
/// diagonal and U on and above, storing in `pivots` (min(m, n) of them) the
/// row each step's search ends at and in `perm` (m) the row of a each row of
/// L U is.
pub fn factor<T: Scalar>(w: &mut [T], m: usize, n: usize, ld: usize, pivots: &mut [i64], perm: &mut [i64], par: bool) {
    let k = m.min(n);
    for (i, p) in perm.iter_mut().enumerate().take(m) {
        *p = i as i64;
    }
    columns(w, m, ld, 0, k, pivots, perm, par);
    if n > k {
        // The columns past the last step (m < n): interchanged, then U's
        // rows solved.
        interchange(w, ld, k, n, pivots, 0, k, par);
        let (l, u) = w.split_at_mut(k * ld);
        triangular::lower_columns(l, ld, k, u, ld, n - k, true, par);
    }
}

/// Interchanges (columns times steps) past which [`interchange`] splits
/// its columns over the pool's threads: as [`gemm::THREADED`], enough
/// work that a worker woken for it still takes a fair part.
const SWAPS_THREADED: usize = 1 << 16;

/// Applies the interchanges of steps `s0..s1` (rows `s` and `pivots[s]`) to
/// columns `c0..c1` of `w`, `ld` rows a column; the columns, independent,
/// to the threads where `par` and they are many.
#[allow(clippy::too_many_arguments)]
fn interchange<T: Scalar>(w: &mut [T], ld: usize, c0: usize, c1: usize, pivots: &[i64], s0: usize, s1: usize, par: bool) {
    if c1 <= c0 || ld == 0 {
        return;
    }
    // The steps that move a row, as pairs of rows, listed once for every
    // column: each column then swaps them in turn, without a compare or a
    // bounds check a swap.
    // Each column's rows from the first step to the last row a step moves
    // are asked of the cache while the column before swaps its: the swaps
    // reach them in no order a prefetcher follows.
    let pairs: Vec<(usize, usize)> = (s0..s1).map(|s| (s, pivots[s] as usize)).filter(|&(s, p)| p != s).collect();
    assert!(pairs.iter().all(|&(s, p)| s < ld && p < ld), "the rows lie in a column");
    let last = pairs.iter().map(|&(_, p)| p + 1).max().unwrap_or(s0).max(s0);
    let swap = |col: &mut [T]| {
        debug_assert_eq!(col.len(), ld);
        let at = col.as_mut_ptr();
        gemm::prefetch_tile(at.wrapping_add(ld + s0), ld, last - s0, 1);
        for &(s, p) in &pairs {
            // SAFETY: s and p are below ld (asserted above), the column's
            // length, and distinct.
            unsafe { std::ptr::swap_nonoverlapping(at.add(s), at.add(p), 1) };
        }
    };
    let cols = &mut w[c0 * ld..c1 * ld];
    let threads = pool::threads();
    if par && threads > 1 && (c1 - c0) * (s1 - s0) > SWAPS_THREADED {
        let per = (c1 - c0).div_ceil(2 * threads);
        pool::install(|| {
            use rayon::prelude::*;
            cols.par_chunks_mut(per * ld).for_each(|part| part.chunks_mut(ld).for_each(swap))
        })
    } else {
        cols.chunks_mut(ld).for_each(swap)
    }
}

/// Factors columns `j0..j1` of the m-row `w` (`ld` rows a column), whose products with the
/// columns before `j0` are already subtracted, interchanging rows within
/// these columns alone.
#[allow(clippy::too_many_arguments)]
fn columns<T: Scalar>(w: &mut [T], m: usize, ld: usize, j0: usize, j1: usize, pivots: &mut [i64], perm: &mut [i64], par: bool) {
    if j1 - j0 <= BASE {
        panel(w, m, ld, j0, j1, pivots, perm);
        return;
    }
    let jm = j0 + split(j1 - j0);
    columns(w, m, ld, j0, jm, pivots, perm, par);
    interchange(w, ld, jm, j1, pivots, j0, jm, par);
    {
        let (head, tail) = w.split_at_mut(jm * ld);
        let l = &head[j0 * ld..];
        // U's rows j0..jm of columns jm..j1.
        triangular::lower_columns(&l[j0..], ld, jm - j0, &mut tail[j0..], ld, j1 - jm, true, par);
        // Rows jm..m of columns jm..j1 less L's rows there times those U rows.
        let f = gemm::pack(Coef { f: &tail[j0..], ks: 1, cs: ld, conj: false }, jm - j0, j1 - jm);
        gemm::sub_packed(&mut tail[jm..], ld, m - jm, &l[jm..], ld, &f, Band::Full, par);
    }
    columns(w, m, ld, jm, j1, pivots, perm, par);
    interchange(w, ld, j0, jm, pivots, jm, j1, par);
}

/// The unblocked factorisation of columns `j0..j1`: each column less the
/// products of the earlier ones, its pivot searched and its rows
/// interchanged within these columns, then divided below its diagonal.
fn panel<T: Scalar>(w: &mut [T], m: usize, ld: usize, j0: usize, j1: usize, pivots: &mut [i64], perm: &mut [i64]) {
    for j in j0..j1 {
        {
            let (head, tail) = w.split_at_mut(j * ld);
            let col = &mut tail[..m];
            for kk in j0..j {
                let f = col[kk];
                for (y, &l) in col[kk + 1..].iter_mut().zip(&head[kk * ld + kk + 1..kk * ld + m]) {
                    *y = T::sub_mul(*y, l, f);
                }
            }
        }
        let p = j + search(&w[j + j * ld..m + j * ld]);
        pivots[j] = p as i64;
        if p != j {
            perm.swap(j, p);
            for c in j0..j1 {
                w.swap(j + c * ld, p + c * ld);
            }
        }
        let d = w[j + j * ld];
        if !d.is_zero() {
            for i in j + 1..m {
                w[i + j * ld] = T::div(w[i + j * ld], d);
            }
        }
    }
}

/// The pivot search of a column from its diagonal down, as the contract
/// states it: from the first, moving only to a strictly greater
/// [`Scalar::abs1`], a NaN never greater and nothing greater than a NaN.
/// That is the first NaN-free greatest magnitude's place, or 0 where the
/// first is a NaN; found by lanes of 8 (the greatest, then the first
/// group holding it), which the compiler makes vector instructions.
fn search<T: Scalar>(col: &[T]) -> usize {
    const W: usize = 8;
    let Some(first) = col.first() else { return 0 };
    let start = first.abs1();
    if start.is_nan() {
        return 0;
    }
    let mut most = [start; W];
    let groups = col.chunks_exact(W);
    let tail = groups.remainder();
    for group in groups {
        for (m, x) in most.iter_mut().zip(group) {
            let a = x.abs1();
            *m = if a > *m { a } else { *m };
        }
    }
    let mut best = start;
    for x in most.iter().copied().chain(tail.iter().map(|x| x.abs1())) {
        if x > best {
            best = x;
        }
    }
    for (g, group) in col.chunks(W).enumerate() {
        if group.iter().fold(false, |hit, x| hit | (x.abs1() == best)) {
            return g * W + group.iter().position(|x| x.abs1() == best).expect("the group holds it");
        }
    }
    unreachable!("the greatest is some element's")
}

#[cfg(test)]
mod search_tests {
    use super::search;
    use crate::core::test_rng::splitmix;
    use crate::linalg::scalar::Scalar;
    use num_complex::Complex;

    /// The search step by step, as the contract states it.
    fn stepwise(col: &[Complex<f64>]) -> usize {
        let mut p = 0;
        for i in 1..col.len() {
            if col[i].abs1() > col[p].abs1() {
                p = i;
            }
        }
        p
    }

    /// Columns of every length to 40 of few magnitudes (ties), ±0, ±∞ and
    /// NaNs anywhere, first included: the lanes' search finds the
    /// stepwise one's place, on float64 and complex128.
    #[test]
    fn search_finds_the_stepwise_place() {
        let mut state = 43;
        let mut next = || splitmix(&mut state);
        let pick = |r: u64| [0.0, -0.0, 1.0, -2.0, 2.0, 3.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 0.5][(r % 10) as usize];
        for len in 1..40 {
            for _ in 0..200 {
                let col: Vec<Complex<f64>> = (0..len).map(|_| Complex::new(pick(next()), if next() % 2 == 0 { 0.0 } else { pick(next()) })).collect();
                let want = stepwise(&col);
                assert_eq!(search(&col), want, "{col:?}");
                let re: Vec<f64> = col.iter().map(|c| c.re).collect();
                let as_c: Vec<Complex<f64>> = re.iter().map(|&r| Complex::new(r, 0.0)).collect();
                assert_eq!(search(&re), stepwise(&as_c), "{re:?}");
            }
        }
    }
}
