//! The complex kinds: exp, log, sqrt, pow, the modulus, the trigonometric
//! and hyperbolic functions and their inverses, on `Complex<f32>` (C32) and
//! `Complex<f64>` (C64).
//!
//! Each is written once, in f64, from the real kinds of this library and
//! IEEE operations alone, so its bits are the same on every target; the c32
//! kind evaluates the c64 one on the exactly widened argument and rounds each
//! part once to f32. A slice form gives exactly the bits of its scalar one.
//!
//! Branch cuts and special values are C99 Annex G's (and numpy's): the cuts
//! lie on the axes, a signed zero part picks the side (`sqrt(-4 + 0i) = 2i`,
//! `sqrt(-4 - 0i) = -2i`), `f(conj z) = conj f(z)` everywhere, and the odd
//! and even kinds keep their symmetry, all bit for bit (pow up to the signs
//! of zero parts). Where C99 leaves the sign of an infinity or a zero open,
//! it follows the signs of the arguments (a NaN's sign bit included), which
//! keeps those symmetries. On the axes a kind is its real kind's bits
//! wherever it reduces to one: `f(x ± 0i)` has the real part of f's real kind
//! in that kind's domain, and `sin(iy) = i sinh(y)`, `asin(iy) = i asinh(y)`,
//! `cos(iy) = cosh(y)` and the like for the imaginary axis.
//!
//! Errors are stated in ulps of the result's modulus `|f(z)|`, per part: a
//! part's error is `|got - exact|` over the ulp of `|f(z)|` in the part's
//! dtype (so a part much smaller than the modulus may keep fewer digits).
//! They are the largest measured: c64 against mpmath values, over the
//! committed tables of `testdata/gen_complex_ref.py` (about a thousand
//! arguments a kind, its hard cases included: cuts and branch points, the
//! unit circle, overflow thresholds, huge and tiny parts) and over a run of
//! that generator with twelve times the arguments under other seeds; c32
//! against the c64 kind over 200,000 arguments or more. Kinds that are one
//! computation turned by `i` (sin and sinh, cos and cosh, tan and tanh, asin
//! and asinh, acos and acosh, atan and atanh) state one figure.

mod inverse;
#[cfg(test)]
mod testing;
mod trig;

pub use inverse::*;
pub use trig::*;

use super::exp::reduce_exp;
use super::log::{log_parts, LogConsts};
use super::real::{clamp, fast_two_sum, two_sum, Real};
use super::{atan2_f64, cos_f64, exp_f64, hypot_f32, hypot_f64, log_f64, pow_f64, sin_f64};
use crate::loops::column::{C32, C64};

const INF: f64 = f64::INFINITY;

/// `z` with its parts exactly in f64.
#[inline(always)]
fn widen(z: C32) -> C64 {
    C64::new(z.re as f64, z.im as f64)
}

/// `z` with each part rounded once to f32.
#[inline(always)]
fn narrow(z: C64) -> C32 {
    C32::new(z.re as f32, z.im as f32)
}

/// Declares a unary complex kind of a c64 implementation `$core`: its c64
/// function, the c32 one that evaluates it and rounds each part once, and
/// their slice forms.
macro_rules! complex_kind {
    ($core:ident, $c32:ident, $c64:ident, $s32:ident, $s64:ident, $(#[$doc:meta])*) => {
        $(#[$doc])*
        #[inline]
        pub fn $c64(z: C64) -> C64 {
            $core(z)
        }

        $(#[$doc])*
        #[inline]
        pub fn $c32(z: C32) -> C32 {
            narrow($core(widen(z)))
        }

        #[doc = concat!("`", stringify!($c32), "` of each element of `x` into `out`, of the same length.")]
        #[inline]
        pub fn $s32(x: &[C32], out: &mut [C32]) {
            crate::kinds::map_slice(x, out, $c32)
        }

        #[doc = concat!("`", stringify!($c64), "` of each element of `x` into `out`, of the same length.")]
        #[inline]
        pub fn $s64(x: &[C64], out: &mut [C64]) {
            crate::kinds::map_slice(x, out, $c64)
        }
    };
}
use complex_kind;

// ---------------------------------------------------------------- helpers

/// Above this argument `e^x` is taken as the square of `e^(x/2)`.
const EXP_SQUARE: f64 = 708.0;
/// 2^-900 and 2^1000: a smaller factor is scaled up by the latter first.
const TWO_M900: f64 = 1.1830521861667747e-271;
const TWO_1000: f64 = 1.0715086071862673e301;

/// `e^(x + t) c 2^s` for a finite `c` of magnitude at most 4, a small
/// integral `s` and `t` below x's ulp (or 0), rounded once after the
/// exponential's own error of about an ulp; `x` of any size, ±inf included,
/// NaN giving NaN. It overflows and underflows (gradually, rounding once)
/// only where the exact product does: beyond 708 the exponential is a
/// square, so that `2^k` stays finite up to the clamp at 1460, past which no
/// product with a nonzero double `c` is finite.
#[inline(always)]
fn exp_mul(x: f64, t: f64, c: f64, s: f64) -> f64 {
    let xc = clamp(x, -760.0, 1460.0);
    let t = if xc == x { t } else { 0.0 };
    // A tiny c, scaled up exactly, keeps its bits in the product.
    let (c, s) = if c.abs() < TWO_M900 {
        (c * TWO_1000, s - 1000.0)
    } else {
        (c, s)
    };
    let square = xc > EXP_SQUARE;
    let (xh, th) = if square { (0.5 * xc, 0.5 * t) } else { (xc, t) };
    // e^(xh + th) = 2^k (1 + r + rt), as the exponential kinds reduce it.
    let (r, rt, k) = reduce_exp(xh, Some(th));
    let (h, l) = fast_two_sum(1.0, r);
    let e = h + (l + rt);
    // Beyond ±2046 the result overflows or vanishes whatever the product.
    let (p, k) = if square {
        // e^2 c with one rounding of e^2 = ee + eel.
        let ee = e * e;
        let eel = e.mul_add(e, -ee);
        (ee.mul_add(c, eel * c), k + k)
    } else {
        (e * c, k)
    };
    p.ldexp(clamp(k + s, -2046.0, 2046.0))
}

/// `(h, l)` with `h + l = log(|x + iy| 2^(extra/2))` to about 2^-57
/// relative, `|l|` at most half an ulp of `h`, for finite `x, y >= 0` not
/// both zero and a small integral `extra`, with no overflow or underflow on
/// the way.
///
/// With `a = max(x, y) = m 2^e`, `m` in `[sqrt(1/2), sqrt(2))`, and `b` the
/// other part scaled alike, `|z|^2 = 2^2e (1 + d)`, `d = m^2 + b^2 - 1`
/// summed exactly enough from the exact squares (`m^2 - 1` is exact), so
/// that near the unit circle no digit of `log|z|` is lost; then
/// `log(1 + d) = log(s) + c/s` with `s + c = 1 + d`, one logarithm.
#[inline(always)]
fn log_abs(x: f64, y: f64, extra: f64) -> (f64, f64) {
    let (a, b) = if x >= y { (x, y) } else { (y, x) };
    let (m, e) = a.frexp();
    // Exact unless b is far below a, where its square does not count.
    let b = b.ldexp(-e);
    let p = m * m;
    let pe = m.mul_add(m, -p);
    let q = b * b;
    let qe = b.mul_add(b, -q);
    // d = (p - 1) + q + pe + qe: the two error-free sums cancel exactly
    // where the parts cancel, so the tail rounds only where it is small.
    let (u, ue) = two_sum(p - 1.0, q);
    let (v, ve) = two_sum(pe, qe);
    let (w, we) = two_sum(u, v);
    let (dh, dl) = two_sum(w, ue + (we + ve));
    let (s, sc) = two_sum(1.0, dh);
    let c = sc + dl;
    // log(s) = e2 ln2 + hi + lo, lo a correction of up to a few percent of hi.
    let (e2, hi, lo) = log_parts(s);
    let k = e2 + (e + e + extra);
    // |k LN2_HI| >= |hi| unless k = 0, and k LN2_HI is exact.
    let (h, err) = fast_two_sum(k * f64::LN2_HI, hi);
    let (h, l) = two_sum(h, err + k.mul_add(f64::LN2_LO, lo + c / s));
    (0.5 * h, 0.5 * l)
}

/// `log|z|` as a head and a tail for `x = |re z|`, `y = |im z|`: +inf where a
/// part is infinite, else NaN where one is NaN, -inf at 0.
#[inline(always)]
fn log_modulus(x: f64, y: f64) -> (f64, f64) {
    if x == INF || y == INF {
        (INF, 0.0)
    } else if x + y > 0.0 {
        log_abs(x, y, 0.0)
    } else {
        (log_f64(x + y), 0.0)
    }
}

// ------------------------------------------------------------ exp, log, sqrt

#[inline]
fn cexp(z: C64) -> C64 {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        C64::new(exp_f64(x), y)
    } else if y.abs() < INF {
        C64::new(
            exp_mul(x, 0.0, cos_f64(y), 0.0),
            exp_mul(x, 0.0, sin_f64(y), 0.0),
        )
    } else if x == INF {
        C64::new(x, f64::NAN)
    } else if x == -INF {
        C64::new(0.0, 0.0f64.copysign(y))
    } else {
        C64::new(f64::NAN, f64::NAN)
    }
}

complex_kind! {
    cexp, exp_c32, exp_c64, exp_c32_slice, exp_c64_slice,
    /// The exponential `e^z = e^x (cos y + i sin y)`.
    ///
    /// Measured max error: 0.50 ulp (c32), 1.33 ulp (c64) of `|e^z|` per part.
    /// A part overflows only where it exceeds the dtype, and underflows
    /// gradually. Specials (C99): `e^(x ± 0i) = exp(x) ± 0i` for every x, NaN
    /// included; finite x with an infinite or NaN y: NaN + NaN i; `+inf + iy`:
    /// `+inf (cos y + i sin y)` for finite y != 0, `+inf + NaN i` for an
    /// infinite or NaN y; `-inf + iy`: `+0 (cos y + i sin y)` for finite y,
    /// `+0 ± 0i` (y's sign) for an infinite or NaN y; NaN x, y != 0: NaN + NaN i.
}

#[inline]
fn clog(z: C64) -> C64 {
    let (x, y) = (z.re.abs(), z.im.abs());
    let re = if x == 0.0 || y == 0.0 {
        log_f64(x + y)
    } else {
        let (h, l) = log_modulus(x, y);
        h + l
    };
    C64::new(re, atan2_f64(z.im, z.re))
}

complex_kind! {
    clog, log_c32, log_c64, log_c32_slice, log_c64_slice,
    /// The natural logarithm `log|z| + i arg z`, `arg z` in `[-pi, pi]`.
    ///
    /// Measured max error: 0.50 ulp (c32), 1.73 ulp (c64) of `|log z|` per part.
    /// `log|z|` comes from the exact squares of the parts, so that it loses no
    /// digit near `|z| = 1`. Cut: the negative real axis, `log(-1 ± 0i) = ±pi i`.
    /// Specials (C99): `log(±0 ± 0i) = -inf + i arg`, the argument by
    /// [`atan2_f64`]'s rules (`+0` or `pi`, with y's sign); an infinite part
    /// gives `+inf + i arg` (NaN if the other part is NaN); otherwise a NaN
    /// part gives NaN + NaN i.
}

/// 2^1020, 2^-1020: beyond them sqrt scales its argument by a power of 4.
const SQRT_BIG: f64 = 1.1235582092889474e307;
const SQRT_TINY: f64 = 8.900295434028806e-308;
/// 2^108 and 2^-54.
const TWO_108: f64 = 3.2451855365842673e32;
const TWO_M54: f64 = 5.551115123125783e-17;

#[inline]
fn csqrt(z: C64) -> C64 {
    let (x, y) = (z.re, z.im);
    let (ax, ay) = (x.abs(), y.abs());
    if ay == INF {
        return C64::new(INF, y);
    }
    if x.is_nan() || y.is_nan() {
        return if x == INF {
            C64::new(x, y)
        } else if x == -INF {
            C64::new(y, INF.copysign(y))
        } else {
            C64::new(f64::NAN, f64::NAN)
        };
    }
    if ax == INF {
        return if x > 0.0 {
            C64::new(x, 0.0f64.copysign(y))
        } else {
            C64::new(0.0, INF.copysign(y))
        };
    }
    if ax == 0.0 && ay == 0.0 {
        return C64::new(0.0, y);
    }
    // Exact scalings by powers of 4 keep x + |z| finite and its halving exact.
    let big = ax.max(ay);
    let (sc, unsc) = if big > SQRT_BIG {
        (0.25, 2.0)
    } else if big < SQRT_TINY {
        (TWO_108, TWO_M54)
    } else {
        (1.0, 1.0)
    };
    let (sx, sy) = (ax * sc, ay * sc);
    // The half-angle formula: t = sqrt((|x| + |z|) / 2), the other part
    // |y| / 2t, neither subject to cancellation.
    let t = ((sx + hypot_f64(sx, sy)) * 0.5).sqrt();
    let u = sy / (t + t);
    let (t, u) = (t * unsc, u * unsc);
    if x.is_sign_negative() {
        C64::new(u, t.copysign(y))
    } else {
        C64::new(t, u.copysign(y))
    }
}

complex_kind! {
    csqrt, sqrt_c32, sqrt_c64, sqrt_c32_slice, sqrt_c64_slice,
    /// The principal square root, of real part `>= 0`.
    ///
    /// Measured max error: 0.50 ulp (c32), 1.25 ulp (c64) of `|sqrt z|` per part.
    /// Cut: the negative real axis, `sqrt(-4 ± 0i) = 0 ± 2i`; the result's
    /// imaginary part has y's sign. Specials (C99): `sqrt(±0 ± 0i) = +0 ± 0i`;
    /// `sqrt(x ± inf i) = +inf ± inf i` for every x, NaN included; `-inf + iy`:
    /// `+0 ± inf i` for finite y; `+inf + iy`: `+inf ± 0i` for finite y;
    /// `-inf + NaN i`: `NaN ± inf i` (the sign C99 leaves open: the NaN's);
    /// `+inf + NaN i`: `+inf + NaN i`;
    /// otherwise a NaN part gives NaN + NaN i.
}

/// The modulus `|z|`, [`hypot_f32`] of the parts: exact squares in f64 and
/// two roundings before the one to f32.
///
/// Measured max error: 0.50 ulp. Specials: an infinite part gives +inf, even
/// with a NaN; otherwise a NaN part gives NaN.
#[inline]
pub fn abs_c32(z: C32) -> f32 {
    hypot_f32(z.re, z.im)
}

/// The modulus `|z|`, [`hypot_f64`] of the parts: no undue overflow or underflow.
///
/// Measured max error: 0.80 ulp. Specials: an infinite part gives +inf, even
/// with a NaN; otherwise a NaN part gives NaN.
#[inline]
pub fn abs_c64(z: C64) -> f64 {
    hypot_f64(z.re, z.im)
}

/// Applies `f` to each element of `x` into `out`, of another type.
///
/// Panics where the lengths differ.
#[inline(always)]
fn map_abs<T: Copy, U>(x: &[T], out: &mut [U], f: impl Fn(T) -> U) {
    assert_eq!(
        x.len(),
        out.len(),
        "a kind's slice form takes slices of one length"
    );
    for (o, &v) in out.iter_mut().zip(x) {
        *o = f(v);
    }
}

/// `abs_c32` of each element of `x` into `out`, of the same length.
#[inline]
pub fn abs_c32_slice(x: &[C32], out: &mut [f32]) {
    map_abs(x, out, abs_c32)
}

/// `abs_c64` of each element of `x` into `out`, of the same length.
#[inline]
pub fn abs_c64_slice(x: &[C64], out: &mut [f64]) {
    map_abs(x, out, abs_c64)
}

// ----------------------------------------------------------------------- pow

/// A number in twice the precision: `hi + lo`, `|lo|` about an ulp of `hi` at most.
type Dd = (f64, f64);

#[inline(always)]
fn dd_add(a: Dd, b: Dd) -> Dd {
    let (s, e) = two_sum(a.0, b.0);
    two_sum(s, e + (a.1 + b.1))
}

#[inline(always)]
fn dd_mul(a: Dd, b: Dd) -> Dd {
    let p = a.0 * b.0;
    let e = a.0.mul_add(b.0, -p);
    fast_two_sum(p, e + a.0.mul_add(b.1, a.1 * b.0))
}

#[inline(always)]
fn dd_div(a: Dd, b: Dd) -> Dd {
    let q = a.0 / b.0;
    // a - q b: q b = p + pe exactly, and a.0 - p is exact (p is a.0's neighbour).
    let p = q * b.0;
    let pe = q.mul_add(b.0, -p);
    let r = (((a.0 - p) - pe) + a.1) - q * b.1;
    fast_two_sum(q, r / b.0)
}

/// A complex number of parts in twice the precision.
type Cdd = (Dd, Dd);

#[inline(always)]
fn cdd_mul(a: Cdd, b: Cdd) -> Cdd {
    let neg = |d: Dd| (-d.0, -d.1);
    (
        dd_add(dd_mul(a.0, b.0), neg(dd_mul(a.1, b.1))),
        dd_add(dd_mul(a.0, b.1), dd_mul(a.1, b.0)),
    )
}

/// The largest |n| of an integral real exponent taken by repeated
/// squaring: the scaled base's powers stay within `[2^-500, 2^1000]`.
const POW_INT_MAX: f64 = 1000.0;

/// `z^n` for a finite nonzero `z` and an integral `n`, `0 < |n| <= POW_INT_MAX`:
/// the base scaled to a largest part in `[sqrt(1/2), sqrt(2))`, its power by
/// squaring in twice the precision (to about 2^-100 of the modulus), its
/// reciprocal for `n < 0`, the scale restored with one rounding.
#[inline]
fn cpow_int(x: f64, y: f64, n: f64) -> C64 {
    let (_, e) = x.abs().max(y.abs()).frexp();
    let base: Cdd = ((x.ldexp(-e), 0.0), (y.ldexp(-e), 0.0));
    let mut pow: Cdd = ((1.0, 0.0), (0.0, 0.0));
    let mut sq = base;
    // n is integral and at most POW_INT_MAX in magnitude: the cast is exact.
    let mut k = n.abs() as u32;
    loop {
        if k & 1 == 1 {
            pow = cdd_mul(pow, sq);
        }
        k >>= 1;
        if k == 0 {
            break;
        }
        sq = cdd_mul(sq, sq);
    }
    // z^n = zs^n 2^(e n); for n < 0, zs^n = 1 / P, P = zs^|n| = P' 2^f,
    // P' of a largest part in [sqrt(1/2), sqrt(2)) so that its norm is finite.
    let (pow, k) = if n < 0.0 {
        let (p, q) = pow;
        let (_, f) = p.0.abs().max(q.0.abs()).frexp();
        let scale = |d: Dd| (d.0.ldexp(-f), d.1.ldexp(-f));
        let (p, q) = (scale(p), scale(q));
        let norm = dd_add(dd_mul(p, p), dd_mul(q, q));
        ((dd_div(p, norm), dd_div((-q.0, -q.1), norm)), e * n - f)
    } else {
        (pow, e * n)
    };
    // Beyond ±2000 the result overflows or vanishes whatever the power's parts.
    let k = clamp(k, -2000.0, 2000.0);
    C64::new(pow.0 .0.ldexp(k), pow.1 .0.ldexp(k))
}

/// `p (h + l)` in twice the precision, 0 for `p = 0` whatever `h`, the tail
/// dropped where the product is near overflow or not finite.
#[inline(always)]
fn scale_dd(p: f64, (h, l): Dd) -> Dd {
    if p == 0.0 {
        return (0.0, 0.0);
    }
    let m = p * h;
    (
        m,
        if m.abs() < 1e300 {
            p.mul_add(h, -m) + p * l
        } else {
            0.0
        },
    )
}

/// `a + b` in twice the precision, renormalised, the tail dropped where the
/// sum is near overflow or not finite.
#[inline(always)]
fn sum_dd(a: Dd, b: Dd) -> Dd {
    let (s, e) = two_sum(a.0, b.0);
    if s.abs() < 1e300 {
        two_sum(s, e + (a.1 + b.1))
    } else {
        (s, 0.0)
    }
}

#[inline]
fn cpow(z: C64, w: C64) -> C64 {
    let (x, y, a, b) = (z.re, z.im, w.re, w.im);
    if a == 0.0 && b == 0.0 {
        return C64::new(1.0, 0.0);
    }
    if a == 1.0 && b == 0.0 {
        return z;
    }
    if x == 0.0 && y == 0.0 {
        // |0^w| = 0 for re w > 0, whatever the (finite) im w; numpy's NaN otherwise.
        return if a > 0.0 && b.abs() < INF {
            C64::new(0.0, 0.0)
        } else {
            C64::new(f64::NAN, f64::NAN)
        };
    }
    if y == 0.0 && x > 0.0 && b == 0.0 {
        return C64::new(pow_f64(x, a), 0.0);
    }
    let finite = x.abs() < INF && y.abs() < INF;
    if b == 0.0 && a.abs() <= POW_INT_MAX && a == a.round_int() && finite {
        return cpow_int(x, y, a);
    }
    // w log z, log|z| in twice the precision and arg z in one.
    let l = log_modulus(x.abs(), y.abs());
    let t = (atan2_f64(y, x), 0.0);
    let re = sum_dd(scale_dd(a, l), scale_dd(-b, t));
    let im = sum_dd(scale_dd(a, t), scale_dd(b, l));
    // cos and sin of im.0 + im.1 to first order in the tail.
    let (c, s) = (cos_f64(im.0), sin_f64(im.0));
    let (c, s) = ((-im.1).mul_add(s, c), im.1.mul_add(c, s));
    C64::new(exp_mul(re.0, re.1, c, 0.0), exp_mul(re.0, re.1, s, 0.0))
}

/// `z` to the power `w`, `exp(w log z)` on the principal logarithm.
///
/// Measured max error (c64) of `|z^w|` per part: 0.50 ulp for a real w that
/// is an integer of magnitude at most 1000, taken by repeated squaring in
/// twice the precision (so that the powers of Gaussian integers are exact
/// while their parts fit in 53 bits: `(1 + 2i)^2 = -3 + 4i`); otherwise 4.70
/// ulp for `|w| <= 4` and at most `1.41 (1 + |w| pi/2)` ulp, growing with
/// `|w|`: `log|z|`, the product `w log z` and the exponential's argument
/// are carried in twice the precision, but `arg z` is rounded once (by
/// [`atan2_f64`]) and scaled by w. A positive real z (imaginary part ±0)
/// with a real w gives `pow_f64(re z, re w) + 0i`. Cut: z on the negative
/// real axis, the side by the sign of its zero imaginary part; `pow(conj z,
/// conj w) = conj pow(z, w)` up to the signs of zero parts. Specials (numpy):
/// `z^(±0 ± 0i) = 1 + 0i` for every z, NaN included; `z^(1 + 0i) = z`;
/// `0^w = +0 + 0i` for re w > 0 and a finite im w (numpy: only for im w =
/// 0, NaN otherwise), NaN + NaN i for other w; otherwise infinities and NaNs
/// flow through `exp(w log z)`.
#[inline]
pub fn pow_c64(z: C64, w: C64) -> C64 {
    cpow(z, w)
}

/// [`pow_c64`] of the widened arguments, each part rounded once to f32; the
/// same rules.
///
/// Measured max error: 0.50 ulp of `|z^w|` per part (against [`pow_c64`]).
#[inline]
pub fn pow_c32(z: C32, w: C32) -> C32 {
    narrow(cpow(widen(z), widen(w)))
}

/// `pow_c32` of each pair of `z` and `w` into `out`, all of one length.
#[inline]
pub fn pow_c32_slice(z: &[C32], w: &[C32], out: &mut [C32]) {
    super::map_slice2(z, w, out, pow_c32)
}

/// `pow_c64` of each pair of `z` and `w` into `out`, all of one length.
#[inline]
pub fn pow_c64_slice(z: &[C64], w: &[C64], out: &mut [C64]) {
    super::map_slice2(z, w, out, pow_c64)
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use core::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI, SQRT_2};

    #[test]
    fn exp_log_sqrt_accuracy() {
        let (w32, w64) = measure_kinds(
            1,
            300_000,
            &[
                ("exp", exp_c32, exp_c32_slice, exp_c64),
                ("log", log_c32, log_c32_slice, log_c64),
                ("sqrt", sqrt_c32, sqrt_c32_slice, sqrt_c64),
            ],
            &[
                ("exp", exp_c64, exp_c64_slice),
                ("log", log_c64, log_c64_slice),
                ("sqrt", sqrt_c64, sqrt_c64_slice),
            ],
        );
        assert!(w32 < 1.0 && w64 < 4.0);
    }

    #[test]
    fn log_near_the_unit_circle() {
        // Pythagorean triples a few ulps off: log|z| is about the offset,
        // which the parts' exact squares must keep.
        for (a, b) in [(0.6f64, 0.8f64), (0.28, 0.96), (5.0 / 13.0, 12.0 / 13.0)] {
            for i in -3i64..=3 {
                for j in -3i64..=3 {
                    let x = f64::from_bits(a.to_bits().wrapping_add_signed(i));
                    let y = f64::from_bits(b.to_bits().wrapping_add_signed(j));
                    // log|z| = log1p(d) / 2, d = x^2 + y^2 - 1 exactly in i128 units of 2^-110.
                    let sq = |v: f64| {
                        let m = (v * 2f64.powi(55)) as i128;
                        m * m
                    };
                    let d = (sq(x) + sq(y) - (1i128 << 110)) as f64 * 2f64.powi(-110);
                    let want = 0.5 * d.ln_1p();
                    let got = log_c64(c(x, y)).re;
                    assert!(
                        (got - want).abs() <= 2.0 * f64::EPSILON * want.abs().max(1e-300),
                        "log|{x} + {y}i| = {got:e}, want {want:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn pow_accuracy() {
        let t = records::<8>(include_bytes!("testdata/cpow.bin"));
        let (zs, ws): (Vec<C64>, Vec<C64>) =
            t.iter().map(|r| (c(r[0], r[1]), c(r[2], r[3]))).unzip();
        let mut out = vec![c(0.0, 0.0); t.len()];
        pow_c64_slice(&zs, &ws, &mut out);
        // The error of exp(w log z) grows with |w| (arg z's rounding scaled by
        // w): the largest over |w| <= 4, the largest of err / (1 + |w| pi / 2)
        // over all, and the largest for integral real w.
        let mut small = (0.0f64, c(0.0, 0.0), c(0.0, 0.0));
        let mut scaled = small;
        let mut int = 0.0f64;
        for (((r, &z), &w), &o) in t.iter().zip(&zs).zip(&ws).zip(&out) {
            let s = pow_c64(z, w);
            assert!(same_bits(s, o), "pow({z}, {w}): scalar {s} slice {o}");
            let e = cerr64(s, &r[4..]);
            if w.norm() <= 4.0 && (e > small.0 || e.is_nan()) {
                small = (e, z, w);
            }
            let sc = e / (1.0 + w.norm() * FRAC_PI_2);
            if sc > scaled.0 || sc.is_nan() {
                scaled = (sc, z, w);
            }
            if w.im == 0.0 && w.re == w.re.round() {
                int = int.max(e);
            }
        }
        println!(
            "pow c64: max {:.3} ulp for |w| <= 4 at ({:e}, {:e}), {int:.3} for integral w, \
             {:.3} (1 + |w| pi/2) ulp overall, at ({:e}, {:e}) ({} args)",
            small.0,
            small.1,
            small.2,
            scaled.0,
            scaled.1,
            scaled.2,
            t.len()
        );
        // c32 against c64: bases over the sample, exponents of a few kinds.
        let zs = sample32(2, 60_000);
        let mut g = Rng::new(3);
        let ws: Vec<C32> = (0..zs.len())
            .map(|i| match i % 4 {
                0 => C32::new(g.uniform(-4.0, 4.0) as f32, g.uniform(-4.0, 4.0) as f32),
                1 => C32::new((g.next() % 21) as f32 - 10.0, 0.0),
                2 => C32::new(g.uniform(-4.0, 4.0) as f32, 0.0),
                _ => C32::new(0.0, g.uniform(-4.0, 4.0) as f32),
            })
            .collect();
        let mut out = vec![C32::new(0.0, 0.0); zs.len()];
        pow_c32_slice(&zs, &ws, &mut out);
        let mut w32 = 0.0f64;
        for ((&z, &w), &o) in zs.iter().zip(&ws).zip(&out) {
            let s = pow_c32(z, w);
            assert!(same_bits(s, o), "pow({z}, {w}): scalar {s} slice {o}");
            w32 = w32.max(cerr32(s, pow_c64(widen(z), widen(w))));
        }
        println!("pow c32: max {w32:.3} ulp ({} args)", zs.len());
        assert!(w32 < 1.0 && small.0 < 8.0 && int < 1.0 && scaled.0 < 4.0);
    }

    #[test]
    fn abs_accuracy() {
        let a = sample32(4, 200_000);
        let mut out32 = vec![0.0f32; a.len()];
        abs_c32_slice(&a, &mut out32);
        let mut w32 = 0.0f64;
        for (&z, &o) in a.iter().zip(&out32) {
            assert_eq!(o.to_bits(), abs_c32(z).to_bits());
            w32 = w32.max(crate::kinds::testing::err32(
                o,
                (z.re as f64).hypot(z.im as f64),
            ));
        }
        let t = records::<4>(include_bytes!("testdata/hypot.bin"));
        let zs: Vec<C64> = t.iter().map(|r| c(r[0], r[1])).collect();
        let mut out64 = vec![0.0; zs.len()];
        abs_c64_slice(&zs, &mut out64);
        let mut w64 = 0.0f64;
        for ((r, &z), &o) in t.iter().zip(&zs).zip(&out64) {
            assert_eq!(o.to_bits(), abs_c64(z).to_bits());
            w64 = w64.max(crate::kinds::testing::err64(o, r[2], r[3]));
        }
        println!("abs c32: max {w32:.3} ulp; c64: max {w64:.3} ulp");
        assert!(w32 < 1.0 && w64 < 1.0);
        same_c(
            "abs",
            c(abs_c64(c(NAN, -f64::INFINITY)), 0.0),
            c(f64::INFINITY, 0.0),
        );
        same_c("abs", c(abs_c64(c(-0.0, -0.0)), 0.0), c(0.0, 0.0));
    }

    #[test]
    fn exp_specials() {
        let inf = f64::INFINITY;
        let (c3, s3) = (3f64.cos(), 3f64.sin());
        for (z, want) in [
            (c(0.0, 0.0), c(1.0, 0.0)),
            (c(-0.0, -0.0), c(1.0, -0.0)),
            (c(NAN, 0.0), c(NAN, 0.0)),
            (c(NAN, -0.0), c(NAN, -0.0)),
            (c(inf, 0.0), c(inf, 0.0)),
            (c(-inf, -0.0), c(0.0, -0.0)),
            (c(1.0, inf), c(NAN, NAN)),
            (c(1.0, NAN), c(NAN, NAN)),
            (c(inf, 3.0), c(inf * c3, inf * s3)),
            (c(-inf, 3.0), c(-0.0, 0.0)),
            (c(-inf, -3.0), c(-0.0, -0.0)),
            (c(inf, inf), c(inf, NAN)),
            (c(inf, NAN), c(inf, NAN)),
            (c(-inf, inf), c(0.0, 0.0)),
            (c(-inf, -inf), c(0.0, -0.0)),
            (c(NAN, 1.0), c(NAN, NAN)),
            (c(NAN, NAN), c(NAN, NAN)),
            (c(-800.0, 3.0), c(-0.0, 0.0)),
            (c(1e-310, 0.0), c(1.0, 0.0)),
        ] {
            same_c(&format!("exp({z})"), exp_c64(z), want);
            same_c(
                &format!("exp c32({z})"),
                widen(exp_c32(narrow(z))),
                widen(narrow(want)),
            );
        }
        let z = exp_c64(c(710.0, 0.1));
        assert!(
            z.re == inf && (z.im / 2.2302733027705554e307 - 1.0).abs() < 4e-16,
            "{z}"
        );
        // Finite beyond exp's overflow threshold, where cos y is small.
        let z = exp_c64(c(740.0, FRAC_PI_2));
        assert!(z.re.is_finite() && z.re > 1e290 && z.im == inf, "{z}");
        same_c(
            "exp(-745.13 + 0i)",
            exp_c64(c(-745.1332191019411, 0.0)),
            c(5e-324, 0.0),
        );
        // e^1450 sin(5e-324) is finite (mpmath: 2.6350169706336343e306); e^1455 sin(5e-324) is not.
        let z = exp_c64(c(1450.0, 5e-324));
        assert!(
            z.re == inf && (z.im / 2.6350169706336343e306 - 1.0).abs() < 4e-16,
            "{z}"
        );
        same_c(
            "exp(1455 + 5e-324i)",
            exp_c64(c(1455.0, 5e-324)),
            c(inf, inf),
        );
    }

    #[test]
    fn log_specials() {
        let inf = f64::INFINITY;
        for (z, want) in [
            (c(-0.0, 0.0), c(-inf, PI)),
            (c(-0.0, -0.0), c(-inf, -PI)),
            (c(0.0, 0.0), c(-inf, 0.0)),
            (c(0.0, -0.0), c(-inf, -0.0)),
            (c(1.0, 0.0), c(0.0, 0.0)),
            (c(-1.0, 0.0), c(0.0, PI)),
            (c(-1.0, -0.0), c(0.0, -PI)),
            (c(1.0, inf), c(inf, FRAC_PI_2)),
            (c(1.0, -inf), c(inf, -FRAC_PI_2)),
            (c(1.0, NAN), c(NAN, NAN)),
            (c(-inf, 1.0), c(inf, PI)),
            (c(-inf, -1.0), c(inf, -PI)),
            (c(inf, 1.0), c(inf, 0.0)),
            (c(-inf, inf), c(inf, 3.0 * FRAC_PI_4)),
            (c(inf, -inf), c(inf, -FRAC_PI_4)),
            (c(inf, NAN), c(inf, NAN)),
            (c(-inf, NAN), c(inf, NAN)),
            (c(NAN, 1.0), c(NAN, NAN)),
            (c(NAN, inf), c(inf, NAN)),
            (c(NAN, NAN), c(NAN, NAN)),
            (c(0.0, 1.0), c(0.0, FRAC_PI_2)),
            (c(f64::MAX, f64::MAX), c(710.1292864836639, FRAC_PI_4)),
            (c(5e-324, -5e-324), c(-744.0934983311013, -FRAC_PI_4)),
        ] {
            same_kind("log", log_c64, log_c32, z, want);
        }
    }

    #[test]
    fn sqrt_specials() {
        let inf = f64::INFINITY;
        for (z, want) in [
            (c(0.0, 0.0), c(0.0, 0.0)),
            (c(-0.0, 0.0), c(0.0, 0.0)),
            (c(-0.0, -0.0), c(0.0, -0.0)),
            (c(-4.0, 0.0), c(0.0, 2.0)),
            (c(-4.0, -0.0), c(0.0, -2.0)),
            (c(4.0, -0.0), c(2.0, -0.0)),
            (c(1.0, inf), c(inf, inf)),
            (c(NAN, -inf), c(inf, -inf)),
            (c(-inf, -inf), c(inf, -inf)),
            (c(1.0, NAN), c(NAN, NAN)),
            (c(-inf, 1.0), c(0.0, inf)),
            (c(-inf, -1.0), c(0.0, -inf)),
            (c(inf, 1.0), c(inf, 0.0)),
            (c(inf, -1.0), c(inf, -0.0)),
            (c(-inf, NAN), c(NAN, inf)),
            (c(inf, NAN), c(inf, NAN)),
            (c(NAN, 1.0), c(NAN, NAN)),
            (c(NAN, NAN), c(NAN, NAN)),
            (c(0.0, 2.0), c(1.0, 1.0)),
            (c(-3.0, 4.0), c(1.0, 2.0)),
            (c(5e-324, 0.0), c(2.2227587494850775e-162, 0.0)),
            (c(-5e-324, 0.0), c(0.0, 2.2227587494850775e-162)),
            (c(f64::MAX, 0.0), c(1.3407807929942596e154, 0.0)),
        ] {
            same_kind("sqrt", sqrt_c64, sqrt_c32, z, want);
        }
        // The scaling of huge parts (mpmath's value).
        let z = sqrt_c64(c(-f64::MAX, -f64::MAX));
        assert!(
            (z.re / 6.1017574412827024e153 - 1.0).abs() < 4e-16
                && (z.im / -1.4730945569055652e154 - 1.0).abs() < 4e-16,
            "{z}"
        );
    }

    #[test]
    fn pow_exact_on_gaussian_integers() {
        // (a + bi)^n for small integers, against exact integer arithmetic,
        // wherever the parts fit in 53 bits; and the reciprocals of n = -1, -2
        // of 1 + i and 2i, which are exact too.
        for a in -9i64..=9 {
            for b in -9i64..=9 {
                let (mut re, mut im) = (1i128, 0i128);
                for n in 1..=40 {
                    (re, im) = (
                        re * a as i128 - im * b as i128,
                        re * b as i128 + im * a as i128,
                    );
                    if re.abs().max(im.abs()) >= 1 << 53 {
                        break;
                    }
                    let got = pow_c64(c(a as f64, b as f64), c(n as f64, 0.0));
                    assert!(
                        got.re == re as f64 && got.im == im as f64,
                        "({a} + {b}i)^{n} = {got}, want {re} + {im}i"
                    );
                }
            }
        }
        same_c("(1+i)^-1", pow_c64(c(1.0, 1.0), c(-1.0, 0.0)), c(0.5, -0.5));
        same_c("(2i)^-2", pow_c64(c(0.0, 2.0), c(-2.0, 0.0)), c(-0.25, 0.0));
    }

    #[test]
    fn pow_specials() {
        let inf = f64::INFINITY;
        for (z, w, want) in [
            (c(NAN, NAN), c(0.0, -0.0), c(1.0, 0.0)),
            (c(inf, 1.0), c(-0.0, 0.0), c(1.0, 0.0)),
            (c(inf, NAN), c(1.0, 0.0), c(inf, NAN)),
            (c(0.0, 0.0), c(2.0, 0.0), c(0.0, 0.0)),
            (c(-0.0, -0.0), c(0.5, 3.0), c(0.0, 0.0)),
            (c(0.0, 0.0), c(-1.0, 0.0), c(NAN, NAN)),
            (c(0.0, 0.0), c(0.0, 1.0), c(NAN, NAN)),
            (c(0.0, 0.0), c(1.0, NAN), c(NAN, NAN)),
            (c(1.0, 2.0), c(2.0, 0.0), c(-3.0, 4.0)),
            (c(1.0, 2.0), c(3.0, 0.0), c(-11.0, -2.0)),
            (c(3.0, -4.0), c(2.0, -0.0), c(-7.0, -24.0)),
            (c(1.0, 1.0), c(10.0, 0.0), c(0.0, 32.0)),
            (c(1.0, 1.0), c(-2.0, 0.0), c(0.0, -0.5)),
            (c(0.5, 0.5), c(1000.0, 0.0), c(2f64.powi(-500), 0.0)),
            (c(2.0, 2.0), c(1000.0, 0.0), c(inf, 0.0)),
            (c(2.0, 2.0), c(-1000.0, 0.0), c(0.0, 0.0)),
            (c(-1.0, 0.0), c(999.0, 0.0), c(-1.0, 0.0)),
            (c(2.0, 0.0), c(0.5, 0.0), c(SQRT_2, 0.0)),
            (c(2.0, -0.0), c(-1074.0, 0.0), c(5e-324, 0.0)),
            (c(inf, 0.0), c(2.0, 0.0), c(inf, 0.0)),
            (c(0.0, 1.0), c(0.0, 1.0), c((-FRAC_PI_2).exp(), 0.0)),
            (c(-1.0, 0.0), c(0.5, 0.0), c(6.123233995736766e-17, 1.0)),
            (c(-1.0, -0.0), c(0.5, 0.0), c(6.123233995736766e-17, -1.0)),
            (c(1.0, 1.0), c(NAN, 0.0), c(NAN, NAN)),
        ] {
            same_c(&format!("pow({z}, {w})"), pow_c64(z, w), want);
        }
        same_c(
            "pow c32",
            widen(pow_c32(C32::new(1.0, 2.0), C32::new(2.0, 0.0))),
            c(-3.0, 4.0),
        );
    }

    /// A unary kind: its name, its c64 function, whether it is odd (-1), even
    /// (1) or neither (0), and the real kind it is on the real axis within the
    /// real kind's domain.
    type Kind = (
        &'static str,
        fn(C64) -> C64,
        i32,
        fn(f64) -> f64,
        (f64, f64),
    );

    /// The unary kinds.
    fn kinds() -> Vec<Kind> {
        use crate::kinds::*;
        let all = (-f64::INFINITY, f64::INFINITY);
        vec![
            ("exp", exp_c64, 0, exp_f64, all),
            ("log", log_c64, 0, log_f64, (0.0, f64::INFINITY)),
            ("sqrt", sqrt_c64, 0, f64::sqrt, (0.0, f64::INFINITY)),
            ("sin", sin_c64, -1, sin_f64, all),
            ("cos", cos_c64, 1, cos_f64, all),
            ("tan", tan_c64, -1, tan_f64, all),
            ("sinh", sinh_c64, -1, sinh_f64, all),
            ("cosh", cosh_c64, 1, cosh_f64, all),
            ("tanh", tanh_c64, -1, tanh_f64, all),
            ("asin", asin_c64, -1, asin_f64, (-1.0, 1.0)),
            ("acos", acos_c64, 0, acos_f64, (-1.0, 1.0)),
            ("atan", atan_c64, -1, atan_f64, all),
            ("asinh", asinh_c64, -1, asinh_f64, all),
            ("acosh", acosh_c64, 0, acosh_f64, (1.0, f64::INFINITY)),
            ("atanh", atanh_c64, -1, atanh_f64, (-1.0, 1.0)),
        ]
    }

    /// Arguments with every sign and class of part: zeros, tiny, ordinary,
    /// near ±1, huge, infinite and NaN.
    fn class_args() -> Vec<C64> {
        let parts = [
            0.0,
            5e-324,
            1e-300,
            1e-9,
            0.3,
            0.9999999999999999,
            1.0,
            1.0000000000000002,
            1.7,
            3.0,
            25.0,
            800.0,
            3e8,
            1e200,
            f64::MAX,
            f64::INFINITY,
            NAN,
        ];
        let mut v = Vec::new();
        for &a in &parts {
            for &b in &parts {
                for (sa, sb) in [(1.0, 1.0), (-1.0, 1.0), (1.0, -1.0), (-1.0, -1.0)] {
                    v.push(c(sa * a, sb * b));
                }
            }
        }
        let mut g = Rng::new(5);
        v.extend((0..20_000).map(|_| c(g.log_uniform(-40.0, 40.0), g.log_uniform(-40.0, 40.0))));
        v
    }

    #[test]
    fn symmetries() {
        for (name, f, parity, _, _) in kinds() {
            for z in class_args() {
                let w = f(z);
                same_c(&format!("{name}(conj {z})"), f(z.conj()), w.conj());
                if parity != 0 {
                    let want = if parity < 0 { -w } else { w };
                    same_c(&format!("{name}(-{z})"), f(-z), want);
                }
            }
        }
        // pow: up to the signs of zero parts.
        for z in class_args().into_iter().step_by(7) {
            for w in [c(0.5, 0.25), c(-3.0, 0.0), c(2.0, 1.0), c(0.0, -1.5)] {
                let (p, q) = (pow_c64(z.conj(), w.conj()), pow_c64(z, w).conj());
                let eq = |a: f64, b: f64| (a.is_nan() && b.is_nan()) || a == b;
                assert!(
                    eq(p.re, q.re) && eq(p.im, q.im),
                    "pow(conj {z}, conj {w}) = {p}, want {q}"
                );
            }
        }
    }

    #[test]
    fn imaginary_axis_is_the_real_kind() {
        use crate::kinds::*;
        // f(±0 + iy) = i g(y) (or g(y), `real`), for |y| up to a limit.
        type Case = (&'static str, fn(C64) -> C64, fn(f64) -> f64, bool, f64);
        let cases: [Case; 10] = [
            ("sin", sin_c64, sinh_f64, false, f64::INFINITY),
            ("sinh", sinh_c64, sin_f64, false, f64::INFINITY),
            ("tan", tan_c64, tanh_f64, false, f64::INFINITY),
            ("tanh", tanh_c64, tan_f64, false, f64::INFINITY),
            ("asin", asin_c64, asinh_f64, false, f64::INFINITY),
            ("asinh", asinh_c64, asin_f64, false, 1.0),
            ("atan", atan_c64, atanh_f64, false, 1.0),
            ("atanh", atanh_c64, atan_f64, false, f64::INFINITY),
            ("cos", cos_c64, cosh_f64, true, f64::INFINITY),
            ("cosh", cosh_c64, cos_f64, true, f64::INFINITY),
        ];
        let ys = crate::kinds::testing::sweep32(-f32::MAX, f32::MAX, 20_001);
        for (name, f, g, real, lim) in cases {
            for y in ys.iter().map(|&v| v as f64).chain([1.0, -1.0, 0.5]) {
                if y.abs() > lim {
                    continue;
                }
                for x in [0.0, -0.0] {
                    let w = f(c(x, y));
                    let part = if real { w.re } else { w.im };
                    assert!(
                        part.to_bits() == g(y).to_bits() || (part.is_nan() && g(y).is_nan()),
                        "{name}({x} + {y:e}i) = {w:e}, want {:e}",
                        g(y)
                    );
                }
            }
        }
    }

    #[test]
    fn real_axis_is_the_real_kind() {
        let mut xs = crate::kinds::testing::sweep32(-f32::MAX, f32::MAX, 20_001)
            .into_iter()
            .map(|v| v as f64)
            .collect::<Vec<_>>();
        xs.extend([
            -1.0,
            1.0,
            0.5,
            -0.5,
            f64::INFINITY,
            -f64::INFINITY,
            0.0,
            -0.0,
            1e-310,
        ]);
        for (name, f, _, real, (lo, hi)) in kinds() {
            for &x in &xs {
                if x < lo || x > hi || (lo == 0.0 && x.is_sign_negative()) {
                    continue;
                }
                for y in [0.0, -0.0] {
                    let w = f(c(x, y));
                    assert!(
                        w.re.to_bits() == real(x).to_bits() || (w.re.is_nan() && real(x).is_nan()),
                        "{name}({x:e} {y:+}i) = {w:e}, want re {:e}",
                        real(x)
                    );
                    assert!(w.im == 0.0, "{name}({x:e} {y:+}i) = {w:e}");
                }
            }
        }
    }
}
