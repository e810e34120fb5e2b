//! qr: a = q r by Householder reflectors, q = H_0 … H_(k-1), each
//! H_j = I - τ_j v_j v_jᴴ with v_j's element j one and those above it zero.
//!
//! A reflector's norms are scaled by their largest part, so that neither
//! huge nor tiny columns overflow or lose their digits to underflow. Its
//! dot products add in increasing row from the pivot's element, each
//! product fused ([`Scalar::sub_mul`]). Past [`NB`] reflectors, they are
//! applied in blocks, `I - V T Vᴴ` (the compact WY form), by packed
//! products ([`gemm`]) that leave out the depths where the triangular V,
//! Vᴴ and T are zero (by groups of rows the same on every instruction
//! set, [`Band`]); forming q, the columns of a block still the identity's
//! take Vᴴ's elements as the product would sum them, without the product.

use crate::core::pool;
use crate::linalg::gemm::{self, Band, Coef};
use crate::linalg::scalar::{Real, Scalar};

/// The Euclidean norm of `xs` (and `extra`), scaled by the largest
/// magnitude of a part, the squares added in order.
fn norm<T: Scalar>(xs: &[T], extra: T::Real) -> T::Real {
    let zero = T::Real::zero();
    let mut scale = extra.abs();
    for x in xs {
        let a = x.abs_max();
        if a > scale || a.is_nan() {
            scale = a;
        }
    }
    if scale == zero || scale.is_nan() {
        return scale;
    }
    let sq = |r: T::Real| {
        let t = r / scale;
        t * t
    };
    let mut s = sq(extra);
    for x in xs {
        s = s + sq(x.re());
        if T::COMPLEX {
            s = s + sq(x.im());
        }
    }
    scale * s.sqrt()
}

/// Makes the reflector of `x` (the column from the pivot down) in place:
/// β in `x[0]` and v's elements below its one in `x[1..]`; answers τ. A
/// column whose norm is below the least normal number is first scaled up
/// by a power of two, exactly, so that τ and v keep their digits; β is
/// scaled back.
pub(super) fn reflector<T: Scalar>(x: &mut [T]) -> T {
    let zero = T::Real::zero();
    let xnorm = norm(&x[1..], zero);
    if xnorm == zero && x[0].im() == zero {
        return T::zero();
    }
    let mut mag = norm(&x[..1], xnorm);
    let up = <T::Real as Real>::of_f64(<T::Real as Real>::UP);
    let tiny = mag < <T::Real as Real>::of_f64(<T::Real as Real>::MIN_NORMAL);
    if tiny {
        for v in x.iter_mut() {
            *v = T::of_parts(v.re() * up, v.im() * up);
        }
        mag = norm(&x[1..], zero);
        mag = norm(&x[..1], mag);
    }
    let alpha = x[0];
    let beta = if alpha.re() >= zero { -mag } else { mag };
    let tau = T::of_parts((beta - alpha.re()) / beta, -alpha.im() / beta);
    let pivot = T::of_parts(alpha.re() - beta, alpha.im());
    for v in &mut x[1..] {
        *v = T::div(*v, pivot);
    }
    x[0] = T::of_real(if tiny { beta / up } else { beta });
    tau
}

/// Reflectors a block of a matrix of more than this many takes; a matrix
/// of at most this many (min(m, n)) applies each reflector alone. The bits
/// depend on it, on nothing else of the machine.
pub const NB: usize = 64;

/// Applies I - t v vᴴ to each column of `cols` (m rows of `ld` a column,
/// v's m - j - 1) from row `j` down, v's elements below its one in `v`:
/// col -= v (t (vᴴ col)), vᴴ col added from the pivot's row; columns in
/// groups whose dot products' chains overlap and stay in registers (eight
/// real columns, four complex, whose chains are twice as long), the last
/// few one at a time.
fn apply_cols<T: Scalar>(v: &[T], t: T, cols: &mut [T], ld: usize, j: usize) {
    let g = if T::COMPLEX { 4 } else { 8 };
    let whole = cols.len() / ld / g * g;
    let (groups, rest) = cols.split_at_mut(whole * ld);
    for group in groups.chunks_exact_mut(g * ld) {
        if T::COMPLEX {
            apply_group::<T, 4>(v, t, group, ld, j)
        } else {
            apply_group::<T, 8>(v, t, group, ld, j)
        }
    }
    for col in rest.chunks_exact_mut(ld) {
        apply_group::<T, 1>(v, t, col, ld, j)
    }
}

/// Multiply-adds (a complex one counted as four) of one reflector's
/// application past which [`apply_split`] gives its columns to the
/// pool's threads: tens of microseconds of one thread's work, enough that
/// a lingering helper's part is worth its join ([`pool::run_parts`]) but
/// the panel's reflectors, each a job, do not wait on a sleeping one long.
const SPLIT: usize = 1 << 16;

/// A pointer to the columns [`apply_split`]'s parts update, each part its
/// own columns.
#[derive(Clone, Copy)]
struct Cols<T>(*mut T);
// SAFETY: the parts of `apply_split` reach disjoint columns through it,
// and nothing else touches them meanwhile.
unsafe impl<T> Send for Cols<T> {}
// SAFETY: as for Send.
unsafe impl<T> Sync for Cols<T> {}

/// [`apply_cols`], the columns in parts of whole groups to the pool's
/// threads where `par` and the work is past [`SPLIT`]: each column's chain
/// is its own, whichever thread runs it.
fn apply_split<T: Scalar>(v: &[T], t: T, cols: &mut [T], ld: usize, j: usize, par: bool) {
    let n = cols.len() / ld.max(1);
    let g = if T::COMPLEX { 4 } else { 8 };
    let work = n * (v.len() + 1) * if T::COMPLEX { 8 } else { 2 };
    let threads = pool::threads();
    if !par || threads == 1 || work <= SPLIT || n < 2 * g {
        return apply_cols(v, t, cols, ld, j);
    }
    // Parts of whole groups, about two a thread; the last takes the rest.
    let parts = (2 * threads).min(n / g);
    let per = n / g / parts * g;
    let at = Cols(cols.as_mut_ptr());
    pool::run_parts(parts, |p| {
        // The whole wrapper, which threads share, not its pointer field
        // (a closure would capture the field alone).
        #[allow(clippy::redundant_locals)]
        let at = at;
        let c1 = if p + 1 == parts { n } else { (p + 1) * per };
        // SAFETY: part p's columns p per..c1 lie in `cols` (c1 <= n) and
        // no other part reaches them; `cols` outlives the job.
        let part = unsafe { std::slice::from_raw_parts_mut(at.0.add(p * per * ld), (c1 - p * per) * ld) };
        apply_cols(v, t, part, ld, j)
    });
}

/// [`apply_cols`] on the `G` columns of `group`, their sums side by side.
fn apply_group<T: Scalar, const G: usize>(v: &[T], t: T, group: &mut [T], ld: usize, j: usize) {
    let m = j + 1 + v.len();
    let mut s: [T; G] = std::array::from_fn(|c| group[c * ld + j].neg());
    {
        let below: [&[T]; G] = std::array::from_fn(|c| &group[c * ld + j + 1..c * ld + m]);
        for (i, vi) in v.iter().enumerate() {
            let vc = vi.conj();
            for (x, col) in s.iter_mut().zip(&below) {
                *x = T::sub_mul(*x, vc, col[i]);
            }
        }
    }
    for (c, x) in s.iter().enumerate() {
        let sc = T::mul(t, x.neg());
        let col = &mut group[c * ld + j..c * ld + m];
        col[0] = T::add(col[0], sc.neg());
        for (y, vi) in col[1..].iter_mut().zip(v) {
            *y = T::sub_mul(*y, *vi, sc);
        }
    }
}

/// Factors the m × n column-major `w` (`ld` rows a column) in place: r on and above its
/// diagonal, the reflectors' v below it, their τ into `taus` (min(m, n)).
/// Past [`NB`] reflectors, each block's are applied to the columns after
/// it at once ([`Block`]); within a block, each alone. Answers the blocks
/// it formed, the first first, for [`form_q`].
pub fn factor<T: Scalar>(w: &mut [T], m: usize, n: usize, ld: usize, taus: &mut [T], par: bool) -> Vec<Block<T>> {
    let mut blocks = Vec::new();
    let k = m.min(n);
    let nb = if k > NB { NB } else { k.max(1) };
    for j0 in (0..k).step_by(nb) {
        let j1 = (j0 + nb).min(k);
        let last = if k > NB { j1 } else { n };
        for j in j0..j1 {
            let (head, tail) = w.split_at_mut((j + 1) * ld);
            let col = &mut head[j * ld + j..j * ld + m];
            let tau = reflector(col);
            taus[j] = tau;
            apply_split(&col[1..], tau.conj(), &mut tail[..(last - j - 1) * ld], ld, j, par);
        }
        if last < n {
            let b = Block::new(w, m, ld, j0, j1, taus, par);
            let (_, tail) = w.split_at_mut(j1 * ld);
            b.apply(&mut tail[j0..], ld, n - j1, true, 0, par);
            blocks.push(b);
        }
    }
    blocks
}

/// The reflectors `j0..j1` of a factored `w` as one, their product
/// `H_j0 … H_(j1-1) = I - V T Vᴴ`: V's rows from `j0` (ones on its
/// diagonal, zeros above), Vᴴ, and T, upper triangular.
pub struct Block<T> {
    /// Reflectors and V's rows (from row j0).
    nb: usize,
    mv: usize,
    v: Vec<T>,
    vt: Vec<T>,
    t: Vec<T>,
}

impl<T: Scalar> Block<T> {
    /// The block of reflectors `j0..j1` of the m-row `w`, `ld` rows a
    /// column; its product Vᴴ V's rows split over the threads where `par`.
    fn new(w: &[T], m: usize, ld: usize, j0: usize, j1: usize, taus: &[T], par: bool) -> Block<T> {
        let (nb, mv) = (j1 - j0, m - j0);
        let mut v = vec![T::zero(); mv * nb];
        let mut vt = vec![T::zero(); nb * mv];
        for r in 0..nb {
            v[r + r * mv] = T::one();
            v[r + 1 + r * mv..(r + 1) * mv].copy_from_slice(&w[j0 + r + 1 + (j0 + r) * ld..(j0 + r) * ld + m]);
            for i in r..mv {
                vt[r + i * nb] = v[i + r * mv].conj();
            }
        }
        // g = -Vᴴ V, then T column by column: T[j, j] = τ_j and
        // T[..j, j] = T[..j, ..j] (-τ_j V[.., ..j]ᴴ v_j).
        let mut g = vec![T::zero(); nb * nb];
        gemm::sub_product(&mut g, nb, nb, &vt, nb, Coef { f: &v, ks: 1, cs: mv, conj: false }, mv, nb, Band::Upper, par);
        let mut t = vec![T::zero(); nb * nb];
        let mut z = vec![T::zero(); nb];
        for j in 0..nb {
            let tau = taus[j0 + j];
            for r in 0..j {
                z[r] = T::mul(tau, g[r + j * nb]);
            }
            for r in 0..j {
                let mut acc = T::zero();
                for q in r..j {
                    acc = T::sub_mul(acc, t[r + q * nb], z[q].neg());
                }
                t[r + j * nb] = acc;
            }
            t[j + j * nb] = tau;
        }
        Block { nb, mv, v, vt, t }
    }

    /// `c := (I - V T Vᴴ)ᴴ c` where `adjoint`, else `(I - V T Vᴴ) c`, `c`
    /// the `mv` × `nc` block at `c[i + col ld]`, whose first `eye` columns
    /// are the identity's: `W = Vᴴ c`, `Y = Tᴴ W` (or `T W`), `c -= V Y`,
    /// each a packed product. V and T are triangular (their zeros left out
    /// of the products, [`Band`]); W's first `eye` columns are Vᴴ's, each
    /// element as the product would sum it: its one nonzero term alone.
    fn apply(&self, c: &mut [T], ld: usize, nc: usize, adjoint: bool, eye: usize, par: bool) {
        let (nb, mv) = (self.nb, self.mv);
        if nc == 0 {
            return;
        }
        // -W, then Y = 0 - op(T) (-W). The product's element of an
        // identity's column is +0 less its one product, the rest adding
        // zeros that leave it as it is: 0 - Vᴴ's element.
        let mut wn = vec![T::zero(); nb * nc];
        for (col, w) in wn.chunks_exact_mut(nb).enumerate().take(eye) {
            for (r, y) in w.iter_mut().enumerate() {
                *y = T::add(T::zero(), self.vt[r + col * nb].neg());
            }
        }
        if nc > eye {
            let f = Coef { f: &c[eye * ld..], ks: 1, cs: ld, conj: false };
            gemm::sub_product(&mut wn[eye * nb..], nb, nb, &self.vt, nb, f, mv, nc - eye, Band::Upper, par);
        }
        let op: Vec<T> = if adjoint {
            (0..nb * nb).map(|x| self.t[x / nb + (x % nb) * nb].conj()).collect()
        } else {
            self.t.clone()
        };
        let mut y = vec![T::zero(); nb * nc];
        gemm::sub_product(&mut y, nb, nb, &op, nb, Coef { f: &wn, ks: 1, cs: nb, conj: false }, nb, nc, if adjoint { Band::Lower } else { Band::Upper }, par);
        gemm::sub_product(c, ld, mv, &self.v, mv, Coef { f: &y, ks: 1, cs: nb, conj: false }, nb, nc, Band::Lower, par);
    }
}

/// Forms q's first `qc` columns (k or m) into `q` (m × qc, column-major)
/// from `factor`'s `w`, `taus` and `blocks`, the reflectors applied in the
/// blocks `factor` took (those it did not form formed here alike), the
/// last first; both `ld` rows a column.
#[allow(clippy::too_many_arguments)]
pub fn form_q<T: Scalar>(w: &[T], m: usize, n: usize, ld: usize, taus: &[T], blocks: &[Block<T>], q: &mut [T], qc: usize, par: bool) {
    let k = m.min(n);
    q[..ld * qc].fill(T::zero());
    for j in 0..qc {
        q[j + j * ld] = T::one();
    }
    if k > NB {
        for j0 in (0..k).step_by(NB).rev() {
            let j1 = (j0 + NB).min(k);
            let formed;
            let b = match blocks.get(j0 / NB) {
                Some(b) => b,
                None => {
                    formed = Block::new(w, m, ld, j0, j1, taus, par);
                    &formed
                }
            };
            // Q's columns j0..j1 from row j0 are still the identity's: the
            // blocks after this one reached only rows and columns from j1.
            b.apply(&mut q[j0 + j0 * ld..], ld, qc - j0, false, j1 - j0, par);
        }
        return;
    }
    for j in (0..k).rev() {
        apply_cols(&w[j * ld + j + 1..j * ld + m], taus[j], &mut q[j * ld..ld * qc], ld, j);
    }
}
