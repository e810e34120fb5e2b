//! qr: a = q r by Householder reflectors, q = H_0 … H_(k-1), each
//! H_j = I - τ_j v_j v_jᴴ with v_j's element j one and those above it zero.
//!
//! A reflector's norms are scaled by their largest part, so that neither
//! huge nor tiny columns overflow or lose their digits to underflow. Its
//! dot products add in increasing row from the pivot's element, each
//! product fused ([`Scalar::sub_mul`]).

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
fn reflector<T: Scalar>(x: &mut [T]) -> T {
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

/// Applies I - t v vᴴ to `col` from row `j` down, v's elements below its
/// one in `v`: col -= v (t (vᴴ col)), vᴴ col added from the pivot's row.
fn apply<T: Scalar>(v: &[T], t: T, col: &mut [T]) {
    let mut s = col[0].neg();
    for (c, vi) in col[1..].iter().zip(v) {
        s = T::sub_mul(s, vi.conj(), *c);
    }
    let s = T::mul(t, s.neg());
    col[0] = T::add(col[0], s.neg());
    for (c, vi) in col[1..].iter_mut().zip(v) {
        *c = T::sub_mul(*c, *vi, s);
    }
}

/// Factors the m × n column-major `w` in place: r on and above its
/// diagonal, the reflectors' v below it, their τ into `taus` (min(m, n)).
pub fn factor<T: Scalar>(w: &mut [T], m: usize, n: usize, taus: &mut [T]) {
    let k = m.min(n);
    for j in 0..k {
        let (head, tail) = w.split_at_mut((j + 1) * m);
        let col = &mut head[j * m + j..];
        let tau = reflector(col);
        taus[j] = tau;
        let v = &col[1..];
        for c in tail.chunks_mut(m) {
            apply(v, tau.conj(), &mut c[j..]);
        }
    }
}

/// Forms q's first `qc` columns (k or m) into `q` (m × qc, column-major)
/// from `factor`'s `w` and `taus`.
pub fn form_q<T: Scalar>(w: &[T], m: usize, n: usize, taus: &[T], q: &mut [T], qc: usize) {
    let k = m.min(n);
    q[..m * qc].fill(T::zero());
    for j in 0..qc {
        q[j + j * m] = T::one();
    }
    for j in (0..k).rev() {
        let v = &w[j * m + j + 1..j * m + m];
        for c in q[j * m..m * qc].chunks_mut(m) {
            apply(v, taus[j], &mut c[j..]);
        }
    }
}
