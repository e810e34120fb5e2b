//! cholesky: a = L Lᴴ, L lower triangular with a real, positive diagonal.
//!
//! Each element of L is its element of a less the products of the row's
//! and the column's earlier elements, in increasing order, each fused
//! ([`Scalar::sub_mul`]), then divided by the diagonal's root: the same
//! chain whatever the blocking, so the update kernel ([`super::update`])
//! may tile and thread it freely.

use crate::linalg::scalar::{Real, Scalar};
use crate::linalg::update;

/// Factors the n × n column-major matrix `w` in place: on entry its lower
/// triangle and the real parts of its diagonal; on exit L in the lower
/// triangle and +0 above. Answers false, leaving `w` unspecified, where a
/// pivot is not positive or is NaN. `par` lets the updates take threads.
pub fn factor<T: Scalar>(w: &mut [T], n: usize, par: bool) -> bool {
    for j in 0..n {
        w[j + j * n] = T::of_real(w[j + j * n].re());
    }
    let nb = update::BLOCK;
    let mut j0 = 0;
    while j0 < n {
        let j1 = (j0 + nb).min(n);
        // Columns j0..j1, rows j0..n, less the products of columns 0..j0.
        update::sub_mul_adjoint(w, n, (j0, n), (j0, j1), j0, par);
        for j in j0..j1 {
            let mut f = [T::zero(); update::BLOCK];
            for k in j0..j {
                f[k - j0] = w[j + k * n].conj();
            }
            let (head, tail) = w.split_at_mut(j * n);
            update::column(&mut tail[..n], j..n, &head[j0 * n..], n, &f[..j - j0]);
            let d = w[j + j * n].re();
            if d <= T::Real::zero() || d.is_nan() {
                return false;
            }
            let l = d.sqrt();
            w[j + j * n] = T::of_real(l);
            for i in j + 1..n {
                w[i + j * n] = T::div_real(w[i + j * n], l);
            }
        }
        j0 = j1;
    }
    for j in 1..n {
        for i in 0..j {
            w[i + j * n] = T::zero();
        }
    }
    true
}

/// Stores the factor of `factor` as the Upper one, Lᴴ, in place: the
/// conjugate transpose bit for bit.
pub fn to_upper<T: Scalar>(w: &mut [T], n: usize) {
    for j in 0..n {
        w[j + j * n] = w[j + j * n].conj();
        for i in j + 1..n {
            w[j + i * n] = w[i + j * n].conj();
            w[i + j * n] = T::zero();
        }
    }
}
