//! solve_triangular: x with op(a) x = b, op(a) a's triangle, conjugate
//! transposed under adjoint, ones on its diagonal under unit_diagonal.
//!
//! An upper triangular op(a) is solved as the lower triangular one of its
//! rows and columns reversed, with b's and x's rows reversed, so that one
//! substitution serves both: x_i is b_i less the products of the earlier
//! solved x_k and op(a)_ik, in the order they are solved, each fused
//! ([`Scalar::sub_mul`]), then divided by op(a)_ii.
//!
//! The rows are solved recursively: the first half's, then the second
//! half's less their products with the first half's by a packed product
//! ([`gemm`]), so each x_i takes its products in increasing k whatever the
//! split; the columns of x, independent, go to the threads.

use crate::core::pool;
use crate::linalg::gemm::{self, Coef};
use crate::linalg::scalar::Scalar;

/// Rows at or below which a solve substitutes directly.
pub const BASE: usize = 16;

/// Work (multiply-adds) past which the columns of x split over the
/// pool's threads.
const THREADED: usize = 1 << 18;

/// The first part's rows (or columns) of a recursive split of `n` above
/// [`BASE`]: about half, a multiple of `BASE`.
pub fn split(n: usize) -> usize {
    (n / 2).div_ceil(BASE) * BASE
}

/// Solves `t x = x` in place for each of the `m` columns of `x` (n × m,
/// column-major), `t` lower triangular n × n column-major, its diagonal
/// taken as ones where `unit`. Answers false, leaving `x` unspecified,
/// where a diagonal element it reads is zero.
pub fn solve_lower<T: Scalar>(t: &[T], n: usize, x: &mut [T], m: usize, unit: bool, par: bool) -> bool {
    if !unit && (0..n).any(|i| t[i + i * n].is_zero()) {
        return false;
    }
    lower_columns(t, n, n, x, n, m, unit, par);
    true
}

/// [`lower`] with x's columns split over the pool's threads where `par`
/// and the work is large: each column's results are its own.
#[allow(clippy::too_many_arguments)]
pub fn lower_columns<T: Scalar>(t: &[T], ldt: usize, n: usize, x: &mut [T], ldx: usize, m: usize, unit: bool, par: bool) {
    if n == 0 || m == 0 {
        return;
    }
    let threads = pool::threads();
    if par && threads > 1 && n * n * m / 2 > THREADED {
        let per = m.div_ceil(threads.min(m));
        let x = &mut x[..(m - 1) * ldx + n];
        pool::install(|| {
            use rayon::prelude::*;
            x.par_chunks_mut(per * ldx).for_each(|part| {
                let cols = (part.len() + ldx - n) / ldx;
                lower(t, ldt, n, part, ldx, cols, unit)
            })
        })
    } else {
        lower(t, ldt, n, x, ldx, m, unit)
    }
}

/// Solves `t x = x` in place, `t` the n × n lower triangle at `t[i + k ldt]`
/// (its diagonal ones where `unit`), x n × m at `x[i + c ldx]`.
pub fn lower<T: Scalar>(t: &[T], ldt: usize, n: usize, x: &mut [T], ldx: usize, m: usize, unit: bool) {
    if n <= BASE {
        for c in 0..m {
            let col = &mut x[c * ldx..c * ldx + n];
            for k in 0..n {
                if !unit {
                    col[k] = T::div(col[k], t[k + k * ldt]);
                }
                let xk = col[k];
                for (i, y) in col.iter_mut().enumerate().skip(k + 1) {
                    *y = T::sub_mul(*y, t[i + k * ldt], xk);
                }
            }
        }
        return;
    }
    let n1 = split(n);
    lower(t, ldt, n1, x, ldx, m, unit);
    let f = gemm::pack(Coef { f: &x[..], ks: 1, cs: ldx, conj: false }, n1, m);
    gemm::sub_packed(&mut x[n1..], ldx, n - n1, &t[n1..], ldt, &f, false);
    lower(&t[n1 + n1 * ldt..], ldt, n - n1, &mut x[n1..], ldx, m, unit);
}
