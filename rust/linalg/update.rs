//! The updates the factorisations spend their time in: a column less a
//! product of a block of earlier columns and coefficients,
//! c[i] - Σ_k a[i, k] f[k], each product fused into the running value in
//! increasing k ([`Scalar::sub_mul`]). So an element's chain is the same
//! whatever the blocking, the tiling or the threads.
//!
//! These are the routines' own small kernels, isolated here so that a
//! packed GEMM in chain order can replace them.

use crate::core::pool;
use crate::linalg::scalar::Scalar;
use std::ops::Range;

/// The column block of a factorisation of order `n`: fixed, 64.
pub fn block(_n: usize) -> usize {
    64
}

/// Rows a pass over `k` holds at a time, so the column's part stays in L1.
const ROWS: usize = 256;

/// `col[i] -= Σ_k a[i + k lda] f[k]` for `i` in `rows`, in increasing `k`.
pub fn column<T: Scalar>(col: &mut [T], rows: Range<usize>, a: &[T], lda: usize, f: &[T]) {
    let mut r0 = rows.start;
    while r0 < rows.end {
        let r1 = (r0 + ROWS).min(rows.end);
        let c = &mut col[r0..r1];
        for (k, &fk) in f.iter().enumerate() {
            let ak = &a[r0 + k * lda..r1 + k * lda];
            for (x, &y) in c.iter_mut().zip(ak) {
                *x = T::sub_mul(*x, y, fk);
            }
        }
        r0 = r1;
    }
}

/// Work (multiply-adds) past which an update splits its columns over the
/// pool's threads.
const THREADED: usize = 1 << 18;

/// Runs `each(j, column)` for every column `j` of `cols`, a column-major
/// block of `ld` rows a column, over the pool's threads where `par` and
/// the `work` is large: each column's results are its own, on any thread.
pub fn each_column<T: Scalar>(cols: &mut [T], ld: usize, par: bool, work: usize, each: impl Fn(usize, &mut [T]) + Sync) {
    if ld == 0 {
        return;
    }
    if par && work > THREADED && pool::threads() > 1 {
        pool::install(|| {
            use rayon::prelude::*;
            cols.par_chunks_mut(ld).enumerate().for_each(|(j, c)| each(j, c))
        })
    } else {
        cols.chunks_mut(ld).enumerate().for_each(|(j, c)| each(j, c))
    }
}

/// Cholesky's update: columns `c0..c1` of the n × n matrix `w`, rows from
/// the diagonal down, less the products of columns `0..c0`'s rows and the
/// conjugates of the diagonal rows' `0..c0`.
pub fn sub_mul_adjoint<T: Scalar>(w: &mut [T], n: usize, rows: (usize, usize), cols: (usize, usize), kend: usize, par: bool) {
    if kend == 0 || cols.0 == cols.1 {
        return;
    }
    let (head, tail) = w.split_at_mut(cols.0 * n);
    let tail = &mut tail[..(cols.1 - cols.0) * n];
    let work = (rows.1 - rows.0) * (cols.1 - cols.0) * kend;
    let head = &*head;
    each_column(tail, n, par, work, |j, col| {
        let c = cols.0 + j;
        let f: Vec<T> = (0..kend).map(|k| head[c + k * n].conj()).collect();
        column(col, rows.0.max(c)..rows.1, head, n, &f);
    });
}
