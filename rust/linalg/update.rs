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

/// The column block of the factorisations, whatever their size: their
/// bits do not depend on it.
pub const BLOCK: usize = 64;

/// Rows a pass over `k` holds at a time, so the columns' parts stay in L1.
const ROWS: usize = 256;

/// Columns an update takes at once, each element of `a` read once for all.
pub const GROUP: usize = 4;

/// For each column `c` of `cols` (column-major, `ld` rows a column, at most
/// [`GROUP`] of them), `cols[i, c] -= Σ_k a[i + k lda] f[c kn + k]` for `i`
/// in `rows`, in increasing `k` below `kn`.
pub fn columns<T: Scalar>(cols: &mut [T], ld: usize, rows: Range<usize>, a: &[T], lda: usize, f: &[T], kn: usize) {
    let mut r0 = rows.start;
    while r0 < rows.end {
        let r1 = (r0 + ROWS).min(rows.end);
        for k in 0..kn {
            let ak = &a[r0 + k * lda..r1 + k * lda];
            for (c, col) in cols.chunks_mut(ld).enumerate() {
                let fk = f[c * kn + k];
                for (x, &y) in col[r0..r1].iter_mut().zip(ak) {
                    *x = T::sub_mul(*x, y, fk);
                }
            }
        }
        r0 = r1;
    }
}

/// `col[i] -= Σ_k a[i + k lda] f[k]` for `i` in `rows`, in increasing `k`:
/// [`columns`] of one column.
pub fn column<T: Scalar>(col: &mut [T], rows: Range<usize>, a: &[T], lda: usize, f: &[T]) {
    let ld = col.len();
    columns(col, ld, rows, a, lda, f, f.len());
}

/// Work (multiply-adds) past which an update splits its columns over the
/// pool's threads.
const THREADED: usize = 1 << 18;

/// Runs `each(j, group)` for each group of up to [`GROUP`] consecutive
/// columns of `cols`, a column-major block of `ld` rows a column, `j` the
/// group's first column, over the pool's threads where `par` and the
/// `work` is large: each column's results are its own, on any thread.
pub fn each_group<T: Scalar>(cols: &mut [T], ld: usize, par: bool, work: usize, each: impl Fn(usize, &mut [T]) + Sync) {
    if ld == 0 {
        return;
    }
    if par && work > THREADED && pool::threads() > 1 {
        pool::install(|| {
            use rayon::prelude::*;
            cols.par_chunks_mut(ld * GROUP).enumerate().for_each(|(g, c)| each(g * GROUP, c))
        })
    } else {
        cols.chunks_mut(ld * GROUP).enumerate().for_each(|(g, c)| each(g * GROUP, c))
    }
}

/// Cholesky's update: columns `c0..c1` of the n × n matrix `w`, rows from
/// the diagonal down, less the products of columns `0..c0`'s rows and the
/// conjugates of the diagonal rows' `0..c0`. A group's rows start at its
/// first column's diagonal, so the elements above the others' are updated
/// too, which `cholesky::factor` then clears.
pub fn sub_mul_adjoint<T: Scalar>(w: &mut [T], n: usize, rows: (usize, usize), cols: (usize, usize), kend: usize, par: bool) {
    if kend == 0 || cols.0 == cols.1 {
        return;
    }
    let (head, tail) = w.split_at_mut(cols.0 * n);
    let tail = &mut tail[..(cols.1 - cols.0) * n];
    let work = (rows.1 - rows.0) * (cols.1 - cols.0) * kend;
    let head = &*head;
    each_group(tail, n, par, work, |j, group| {
        let c = cols.0 + j;
        let g = group.len() / n;
        let f: Vec<T> = (0..g * kend).map(|x| head[c + x / kend + (x % kend) * n].conj()).collect();
        columns(group, n, rows.0.max(c)..rows.1, head, n, &f, kend);
    });
}
