//! cholesky: a = L Lᴴ, L lower triangular with a real, positive diagonal.
//!
//! Each element of L is its element of a less the products of the row's
//! and the column's earlier elements, in increasing order, each fused
//! ([`Scalar::sub_mul`]), then divided by the diagonal's root: the same
//! chain whatever the blocking.
//!
//! The columns are factored recursively: the first half's, then the
//! second half's, from the diagonal down, less the products of the first
//! half's by packed products ([`gemm`]) in chunks of columns, so that
//! little above the diagonal is computed (and cleared at the end); the
//! threads take whole chunks.

use crate::core::pool;
use crate::linalg::gemm::{self, Band, Coef};
use crate::linalg::scalar::{Real, Scalar};
use crate::linalg::triangular::{split, BASE};

/// Columns an update of the second half takes at a time.
const CHUNK: usize = 48;

/// Factors the n × n column-major matrix `w` (`ld` rows a column) in
/// place: on entry its lower
/// triangle and the real parts of its diagonal; on exit L in the lower
/// triangle and +0 above. Answers false, leaving `w` unspecified, where a
/// pivot is not positive or is NaN. `par` lets the updates take threads.
pub fn factor<T: Scalar>(w: &mut [T], n: usize, ld: usize, par: bool) -> bool {
    for j in 0..n {
        w[j + j * ld] = T::of_real(w[j + j * ld].re());
    }
    if !columns(w, n, ld, 0, n, par) {
        return false;
    }
    for j in 1..n {
        w[j * ld..j * ld + j].fill(T::zero());
    }
    true
}

/// Factors columns `j0..j1` of the n × n `w` (`ld` rows a column), whose products with the
/// columns before `j0` are already subtracted; false where a pivot fails.
fn columns<T: Scalar>(w: &mut [T], n: usize, ld: usize, j0: usize, j1: usize, par: bool) -> bool {
    if j1 - j0 <= BASE {
        return panel(w, n, ld, j0, j1);
    }
    let jm = j0 + split(j1 - j0);
    if !columns(w, n, ld, j0, jm, par) {
        return false;
    }
    let (head, mut rest) = w.split_at_mut(jm * ld);
    let head = &*head;
    // Each chunk's columns, from row 0, and its first column.
    let mut chunks = Vec::new();
    for c0 in (jm..j1).step_by(CHUNK) {
        let (cols, next) = rest.split_at_mut((CHUNK.min(j1 - c0)) * ld);
        chunks.push((c0, cols));
        rest = next;
    }
    // The chunks, each whole, to the threads where they are many: every
    // element of a chunk is computed by one thread in one chain whichever
    // it is; one chunk's rows split over them (`gemm::sub_packed`).
    let by_chunks = par && pool::threads() > 1 && chunks.len() >= 2 * pool::threads() && (n - jm) * (j1 - jm) * (jm - j0) > gemm::THREADED;
    let update = |(c0, cols): (usize, &mut [T])| {
        let c1 = (c0 + CHUNK).min(j1);
        let f = gemm::pack(Coef { f: &head[c0 + j0 * ld..], ks: ld, cs: 1, conj: true }, jm - j0, c1 - c0);
        gemm::sub_packed(&mut cols[c0..], ld, n - c0, &head[c0 + j0 * ld..], ld, &f, Band::Full, par && !by_chunks);
    };
    if by_chunks {
        pool::install(|| {
            use rayon::prelude::*;
            chunks.into_par_iter().for_each(update)
        })
    } else {
        chunks.into_iter().for_each(update)
    }
    columns(w, n, ld, jm, j1, par)
}

/// The unblocked factorisation of columns `j0..j1`, from their diagonal
/// down.
fn panel<T: Scalar>(w: &mut [T], n: usize, ld: usize, j0: usize, j1: usize) -> bool {
    for j in j0..j1 {
        let (head, tail) = w.split_at_mut(j * ld);
        let col = &mut tail[j..n];
        for k in j0..j {
            let f = head[j + k * ld].conj();
            for (y, &l) in col.iter_mut().zip(&head[j + k * ld..k * ld + n]) {
                *y = T::sub_mul(*y, l, f);
            }
        }
        let d = col[0].re();
        if d <= T::Real::zero() || d.is_nan() {
            return false;
        }
        let l = d.sqrt();
        col[0] = T::of_real(l);
        for y in &mut col[1..] {
            *y = T::div_real(*y, l);
        }
    }
    true
}

/// Stores the factor of `factor` as the Upper one, Lᴴ, in place: the
/// conjugate transpose bit for bit (`ld` rows a column).
pub fn to_upper<T: Scalar>(w: &mut [T], n: usize, ld: usize) {
    for j in 0..n {
        w[j + j * ld] = w[j + j * ld].conj();
        for i in j + 1..n {
            w[j + i * ld] = w[i + j * ld].conj();
            w[i + j * ld] = T::zero();
        }
    }
}
