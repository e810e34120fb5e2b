//! solve_triangular: x with op(a) x = b, op(a) a's triangle, conjugate
//! transposed under adjoint, ones on its diagonal under unit_diagonal.
//!
//! An upper triangular op(a) is solved as the lower triangular one of its
//! rows and columns reversed, with b's and x's rows reversed, so that one
//! substitution serves both: x_i is b_i less the products of the earlier
//! solved x_k and op(a)_ik, in the order they are solved, each fused
//! ([`Scalar::sub_mul`]), then divided by op(a)_ii.

use crate::linalg::scalar::Scalar;
use crate::linalg::update;

/// Solves `t x = x` in place for each of the `m` columns of `x` (n × m,
/// column-major), `t` lower triangular n × n column-major, its diagonal
/// taken as ones where `unit`. Answers false, leaving `x` unspecified,
/// where a diagonal element it reads is zero.
pub fn solve_lower<T: Scalar>(t: &[T], n: usize, x: &mut [T], m: usize, unit: bool, par: bool) -> bool {
    if !unit && (0..n).any(|i| t[i + i * n].is_zero()) {
        return false;
    }
    let nb = update::BLOCK;
    let mut k0 = 0;
    while k0 < n {
        let k1 = (k0 + nb).min(n);
        let work = n * m * (k1 - k0);
        update::each_group(&mut x[..n * m], n, par, work, |_, group| {
            let g = group.len() / n;
            let mut f = [T::zero(); update::BLOCK * update::GROUP];
            let kn = k1 - k0;
            for (c, col) in group.chunks_mut(n).enumerate() {
                for k in k0..k1 {
                    if !unit {
                        col[k] = T::div(col[k], t[k + k * n]);
                    }
                    let fk = [col[k]];
                    update::column(col, k + 1..k1, &t[k * n..], n, &fk);
                }
                f[c * kn..(c + 1) * kn].copy_from_slice(&col[k0..k1]);
            }
            update::columns(group, n, k1..n, &t[k0 * n..], n, &f[..g * kn], kn);
        });
        k0 = k1;
    }
    true
}
