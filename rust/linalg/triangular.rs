//! solve_triangular: x with op(a) x = b, op(a) a's triangle, conjugate
//! transposed under adjoint, ones on its diagonal under unit_diagonal.
//!
//! An upper triangular op(a) is solved as the lower triangular one of its
//! rows and columns reversed, with b's and x's rows reversed, so that one
//! substitution serves both: x_i is b_i less the products of the earlier
//! solved x_k and op(a)_ik, in the order they are solved, each fused
//! ([`Scalar::sub_mul`]), then divided by op(a)_ii.
//!
//! The columns of x, independent, are solved in chunks whose solved rows,
//! packed for `contract`'s microkernel, fill about half the L2 cache; the
//! threads take whole chunks. Within a chunk the rows go in panels of the
//! microkernel's sums: a panel first takes, by the microkernel, its
//! products with every row solved before it (op(a)'s rows packed once for
//! all chunks), in increasing k, then its diagonal block is substituted on
//! the packed rows, a chunk's columns at a time, and they are packed for
//! the panels below. Each x_i thus takes its products in increasing k
//! whatever the panels, the chunks or the threads. A triangle too large for
//! a chunk's rows to fit is split: its first half solved, the second half's
//! rows less their products with it by a packed product ([`gemm`]), then
//! the second half solved.

use crate::core::caches::sizes as caches;
use crate::core::{isa, pool};
use crate::linalg::gemm::{self, Band, Coef};
use crate::linalg::scalar::Scalar;

/// Columns at or below which cholesky and lu factor a panel directly; a
/// recursive split's parts are multiples of it.
pub const BASE: usize = 16;

/// The first part's rows (or columns) of a recursive split of `n` above
/// [`BASE`]: about half, a multiple of `BASE`.
pub fn split(n: usize) -> usize {
    (n / 2).div_ceil(BASE) * BASE
}

/// Solves `t x = x` in place for each of the `m` columns of `x` (n × m,
/// column-major, `ldx` rows a column), `t` lower triangular n × n
/// column-major (`ldt` rows a column), its diagonal taken as ones where
/// `unit`. Answers false, leaving `x` unspecified, where a diagonal element
/// it reads is zero.
#[allow(clippy::too_many_arguments)]
pub fn solve_lower<T: Scalar>(t: &[T], ldt: usize, n: usize, x: &mut [T], ldx: usize, m: usize, unit: bool, par: bool) -> bool {
    if !unit && (0..n).any(|i| t[i + i * ldt].is_zero()) {
        return false;
    }
    lower_columns(t, ldt, n, x, ldx, m, unit, par);
    true
}

/// Solves `t x = x` in place, `t` the n × n lower triangle at `t[i + k ldt]`
/// (its diagonal ones where `unit`), x n × m at `x[i + c ldx]`; the chunks
/// of columns to the pool's threads where `par` and the work is large.
#[allow(clippy::too_many_arguments)]
pub fn lower_columns<T: Scalar>(t: &[T], ldt: usize, n: usize, x: &mut [T], ldx: usize, m: usize, unit: bool, par: bool) {
    if n == 0 || m == 0 {
        return;
    }
    let mk = T::micro(isa::avx512());
    let (mr, nr) = (mk.mr, mk.nr);
    let half_l2 = caches().l2 / 2 / std::mem::size_of::<T>();
    assert!(ldx >= n && x.len() >= (m - 1) * ldx + n, "x lies in its slice");
    assert!(ldt >= n && t.len() >= (n - 1) * ldt + n, "t lies in its slice");
    if n > BASE && n * 4 * mr > half_l2 {
        // Too many rows for a chunk of four panels: halves.
        let n1 = split(n);
        lower_columns(t, ldt, n1, x, ldx, m, unit, par);
        let f = gemm::pack(Coef { f: &x[..], ks: 1, cs: ldx, conj: false }, n1, m);
        gemm::sub_packed(&mut x[n1..], ldx, n - n1, &t[n1..], ldt, &f, Band::Full, par);
        lower_columns(&t[n1 + n1 * ldt..], ldt, n - n1, &mut x[n1..], ldx, m, unit, par);
        return;
    }
    let rows = Rows::pack(t, ldt, n, nr);
    let threads = pool::threads();
    let mut width = (half_l2 / n / mr).max(1) * mr;
    let by_chunks = par && threads > 1 && n * n * m / 2 > gemm::THREADED && m > mr;
    if by_chunks {
        width = width.min(m.div_ceil(2 * threads).div_ceil(mr) * mr);
    }
    let x = &mut x[..(m - 1) * ldx + n];
    let solve = |fp: &mut Vec<T>, cols: &mut [T]| {
        let cn = (cols.len() + ldx - n) / ldx;
        chunk(&rows, t, ldt, cols, ldx, cn, unit, fp)
    };
    if by_chunks {
        pool::install(|| {
            use rayon::prelude::*;
            x.par_chunks_mut(width * ldx).for_each_init(Vec::new, solve)
        })
    } else {
        let mut fp = Vec::new();
        x.chunks_mut(width * ldx).for_each(|cols| solve(&mut fp, cols))
    }
}

/// A lower triangle's rows in panels of `nr` (the microkernel's sums),
/// each panel its depths left of its diagonal block, depth after depth,
/// +0 past the last row: panel `p` from `nr² p (p - 1) / 2`.
struct Rows<T> {
    n: usize,
    nr: usize,
    data: Vec<T>,
}

impl<T: Scalar> Rows<T> {
    fn pack(t: &[T], ldt: usize, n: usize, nr: usize) -> Rows<T> {
        let panels = n.div_ceil(nr);
        let mut data = vec![T::zero(); nr * nr * panels * panels.saturating_sub(1) / 2];
        for p in 1..panels {
            let (i0, rows) = (p * nr, nr.min(n - p * nr));
            let panel = &mut data[nr * nr * p * (p - 1) / 2..][..nr * i0];
            for (k, depth) in panel.chunks_exact_mut(nr).enumerate() {
                depth[..rows].copy_from_slice(&t[i0 + k * ldt..][..rows]);
            }
        }
        Rows { n, nr, data }
    }

    /// Panel `p`'s depths.
    fn panel(&self, p: usize) -> &[T] {
        let nr = self.nr;
        &self.data[nr * nr * p * p.saturating_sub(1) / 2..][..nr * p * nr]
    }
}

/// Solves the `cn` columns of `x` (n × cn at `x[i + c ldx]`) with `rows`,
/// `t`'s packed rows, and `t`'s diagonal blocks; `fp` holds the solved
/// rows, negated and packed for the microkernel: panel after panel of `mr`
/// columns, each depth after depth, all `n`.
#[allow(clippy::too_many_arguments)]
fn chunk<T: Scalar>(rows: &Rows<T>, t: &[T], ldt: usize, x: &mut [T], ldx: usize, cn: usize, unit: bool, fp: &mut Vec<T>) {
    let n = rows.n;
    let mk = T::micro(isa::avx512());
    let (mr, nr) = (mk.mr, mk.nr);
    let kc = (caches().l1 / 2 / (nr * std::mem::size_of::<T>())).clamp(32, 1024);
    let np = cn.div_ceil(mr);
    fp.clear();
    fp.resize(np * mr * n, T::zero());
    assert!(x.len() >= (cn - 1) * ldx + n, "x lies in its slice");
    let mut tile = vec![T::zero(); mr * nr];
    for ip in 0..n.div_ceil(nr) {
        let (i0, h) = (ip * nr, nr.min(n - ip * nr));
        let ap = rows.panel(ip);
        for k0 in (0..i0).step_by(kc) {
            let d = kc.min(i0 - k0);
            for p in 0..np {
                let cols = mr.min(cn - p * mr);
                let panel = &fp[p * mr * n + k0 * mr..][..d * mr];
                let a = &ap[k0 * nr..][..d * nr];
                if p + 1 < np {
                    gemm::prefetch_tile(x.as_ptr().wrapping_add(i0 + (p + 1) * mr * ldx), ldx, h, mr.min(cn - (p + 1) * mr));
                }
                // SAFETY: the tile's rows i0..i0 + h of columns
                // p mr..p mr + cols lie in x (checked on entry) and are this
                // chunk's alone; the panels hold d depths of mr and nr
                // values; `T::micro` gave a kernel of this CPU's instructions.
                unsafe { super::gemm::run_tile(mk, d, panel, a, x.as_mut_ptr().add(i0 + p * mr * ldx), ldx, h, cols, &mut tile) }
            }
        }
        // The diagonal block, substituted on its rows packed, mr columns
        // at a time (+0 past the last), then written back and negated.
        let diag = &t[i0 + i0 * ldt..];
        for p in 0..np {
            let cols = mr.min(cn - p * mr);
            let block = &mut fp[p * mr * n + i0 * mr..][..h * mr];
            for r in 0..cols {
                let col = &x[i0 + (p * mr + r) * ldx..][..h];
                for (y, &v) in block.iter_mut().skip(r).step_by(mr).zip(col) {
                    *y = v;
                }
            }
            match mr {
                12 => substitute_n::<T, 12>(block, diag, ldt, h, unit),
                6 => substitute_n::<T, 6>(block, diag, ldt, h, unit),
                4 => substitute_n::<T, 4>(block, diag, ldt, h, unit),
                _ => substitute(block, mr, diag, ldt, h, unit),
            }
            for r in 0..cols {
                let col = &mut x[i0 + (p * mr + r) * ldx..][..h];
                for (v, &y) in col.iter_mut().zip(block.iter().skip(r).step_by(mr)) {
                    *v = y;
                }
            }
            block.iter_mut().for_each(|y| *y = y.neg());
        }
    }
}

/// Substitutes the lower triangle `d` (h × h at `d[i + k ldd]`, its
/// diagonal ones where `unit`) on `block`'s h rows of `w` columns, in
/// place: row k divided by d_kk, then each row below less d_ik times it,
/// each value by [`Scalar::div`] and [`Scalar::sub_mul`].
#[inline(always)]
fn substitute<T: Scalar>(block: &mut [T], w: usize, d: &[T], ldd: usize, h: usize, unit: bool) {
    for k in 0..h {
        let (done, rest) = block[..h * w].split_at_mut((k + 1) * w);
        let xk = &mut done[k * w..];
        if !unit {
            let dk = d[k + k * ldd];
            xk.iter_mut().for_each(|y| *y = T::div(*y, dk));
        }
        for (row, &l) in rest.chunks_exact_mut(w).zip(&d[k + 1 + k * ldd..h + k * ldd]) {
            for (y, &v) in row.iter_mut().zip(xk.iter()) {
                *y = T::sub_mul(*y, l, v);
            }
        }
    }
}

/// [`substitute`] of rows of `N` columns, compiled for that width.
fn substitute_n<T: Scalar, const N: usize>(block: &mut [T], d: &[T], ldd: usize, h: usize, unit: bool) {
    substitute(block, N, d, ldd, h, unit)
}
