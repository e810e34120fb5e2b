//! Exp, Exp2 and Expm1: `x = k ln 2 + r` (or `k + r`), a polynomial in `r`, a scaling by `2^k`.

use super::real::{clamp, fast_two_sum, poly, two_sum, Real};

/// The constants of the exponentials of one precision.
pub(crate) trait ExpConsts: Real {
    const LOG2E: Self;
    /// `ln 2` rounded, and the rest: `LN2_HI + LN2_LO` is `ln 2` to twice the precision.
    const LN2_HI: Self;
    const LN2_LO: Self;
    /// Exp's argument is clamped to `[EXP_LO, EXP_HI]`, beyond which it is `+0` or `+inf`.
    const EXP_LO: Self;
    const EXP_HI: Self;
    /// Expm1's lower clamp, beyond which it is `-1`.
    const EXPM1_LO: Self;
    /// Exp2's clamp.
    const EXP2_LO: Self;
    const EXP2_HI: Self;
    /// Exp's ordinary arguments, below this in magnitude: where `2^k` is a
    /// normal power and `k > MIN_EXP` or `k = MIN_EXP` with `r > 0`, so that
    /// the result is normal and its scaling exact.
    const EXP_FAST: Self;
    /// Exp2's ordinary arguments, below this in magnitude: `MIN_EXP < k`,
    /// `2^k` a normal power.
    const EXP2_FAST: Self;
    /// Expm1's largest ordinary argument, below which `2^(k + 2)` is finite.
    const EXPM1_FAST_HI: Self;
    /// `exp(r) = 1 + r + r^2 P(r)` for `|r| <= ln2 / 2`.
    const P: &'static [Self];
    /// `2^r = 1 + r Q(r)` for `|r| <= 1 / 2`.
    const Q: &'static [Self];
}

impl ExpConsts for f32 {
    const LOG2E: f32 = core::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693147182;
    const LN2_LO: f32 = -1.90465421e-09;
    const EXP_LO: f32 = -104.0;
    const EXP_HI: f32 = 89.0;
    const EXPM1_LO: f32 = -25.0;
    const EXP2_LO: f32 = -151.0;
    const EXP2_HI: f32 = 129.0;
    // -126 ln2 = -87.3365.
    const EXP_FAST: f32 = 87.33;
    const EXP2_FAST: f32 = 125.0;
    // 125.5 ln2 = 86.99.
    const EXPM1_FAST_HI: f32 = 86.0;
    // gen_coeffs.py exp, f32: relative error 2^-28.3
    const P: &'static [f32] = &[
        5.000000000e-01,
        1.666666716e-01,
        4.166666791e-02,
        8.333298378e-03,
        1.388885430e-03,
        1.989928569e-04,
        2.485958976e-05,
    ];
    // gen_coeffs.py exp2, f32: relative error 2^-27.4
    const Q: &'static [f32] = &[
        6.931471825e-01,
        2.402265072e-01,
        5.550410971e-02,
        9.618056938e-03,
        1.333350199e-03,
        1.546144485e-04,
        1.529732435e-05,
    ];
}

impl ExpConsts for f64 {
    const LOG2E: f64 = core::f64::consts::LOG2_E;
    const LN2_HI: f64 = core::f64::consts::LN_2;
    const LN2_LO: f64 = 2.3190468138462996e-17;
    const EXP_LO: f64 = -746.0;
    const EXP_HI: f64 = 710.0;
    const EXPM1_LO: f64 = -40.0;
    const EXP2_LO: f64 = -1076.0;
    const EXP2_HI: f64 = 1025.0;
    // -1022 ln2 = -708.396.
    const EXP_FAST: f64 = 708.3;
    const EXP2_FAST: f64 = 1021.0;
    // 1021.5 ln2 = 708.05.
    const EXPM1_FAST_HI: f64 = 707.0;
    // gen_coeffs.py exp, f64: relative error 2^-56.9
    const P: &'static [f64] = &[
        0.5,
        0.16666666666666666,
        0.04166666666666668,
        0.008333333333333333,
        0.0013888888888879073,
        0.00019841269841263298,
        2.4801587336442236e-05,
        2.755731924721873e-06,
        2.75572632790885e-07,
        2.505207109429355e-08,
        2.0918137737642736e-09,
        1.608662795678037e-10,
    ];
    // gen_coeffs.py exp2, f64: relative error 2^-54.2
    const Q: &'static [f64] = &[
        core::f64::consts::LN_2,
        0.24022650695910072,
        0.055504108664821625,
        0.00961812910762848,
        0.001333355814640647,
        0.00015403530393370734,
        1.5252733841556773e-05,
        1.3215486808705563e-06,
        1.0178057087733941e-07,
        7.0548973041554995e-09,
        4.4558179083360645e-10,
        2.5729324177362305e-11,
    ];
}

/// `(r, t, k)` with `exp(x + tail) = 2^k (1 + r + t)`, `k` integral,
/// `|r| <= ln2 / 2` (a little more where rounding puts it), `t` small beside
/// `r`, for `|x| < 2^(p - 3)` and a `tail` below `x`'s ulp.
#[inline(always)]
pub(crate) fn reduce_exp<T: ExpConsts>(x: T, tail: Option<T>) -> (T, T, T) {
    let k = (x * T::LOG2E).round_int();
    // Exact: the difference is a multiple of x's and LN2_HI's ulps below 1/2.
    let rh = (-k).fma(T::LN2_HI, x);
    let r = (-k).fma(T::LN2_LO, rh);
    // r's rounding error, so that r + c = x - k ln2 to about twice the precision.
    let c = (-k).fma(T::LN2_LO, rh - r);
    let (r, c) = match tail {
        None => (r, c),
        Some(tail) => {
            let (r, e) = two_sum(r, tail);
            (r, c + e)
        }
    };
    (r, (r * r).fma(poly(r, T::P), c), k)
}

/// `(e, k)` with `exp(x) = e * 2^k` (before the rounding of the product),
/// `e` in about `[0.7, 1.42]`, for `x` in `[EXP_LO, EXP_HI]` or a NaN.
#[inline(always)]
pub(crate) fn exp_parts<T: ExpConsts>(x: T) -> (T, T) {
    let (r, t, k) = reduce_exp(x, None);
    let (h, l) = fast_two_sum(T::ONE, r);
    (h + (l + t), k)
}

/// `exp(x + tail)` rounded once, `tail` below `x`'s ulp or `None` for 0.
#[inline(always)]
pub(crate) fn exp_with<T: ExpConsts>(x: T, tail: Option<T>) -> T {
    let xc = clamp(x, T::EXP_LO, T::EXP_HI);
    let tail = tail.map(|t| if xc == x { t } else { T::ZERO });
    let (r, t, k) = reduce_exp(xc, tail);
    let (h, l) = fast_two_sum(T::ONE, r);
    let lt = l + t;
    let sub_k = k < T::MIN_EXP || (k == T::MIN_EXP && r < T::ZERO);
    // Both results are computed (a vector does so for every lane), each
    // scaling by k where its result is kept and by a harmless exponent
    // elsewhere, for a subnormal that is not kept would cost as much time
    // as one that is (about a hundred cycles where the CPU assists it).
    let normal = (h + lt).ldexp(if k < T::MIN_EXP { T::ZERO } else { k });
    // A subnormal result rounds once, at its own quantum: scaled by 2^-MIN_EXP
    // it is z < 1, whose quantum is 1's ulp, so (1 + z) - 1 rounds it there.
    // (Elsewhere a scale of 2 keeps z, which is about 2h, at least 1.)
    let scale = T::exp2i(if k <= T::MIN_EXP {
        k - T::MIN_EXP
    } else {
        T::ONE
    });
    let (s, e) = fast_two_sum(T::ONE, h * scale);
    let sub = ((s + (e + lt * scale)) - T::ONE) * T::exp2i(T::MIN_EXP);
    if sub_k {
        sub
    } else {
        normal
    }
}

#[inline(always)]
pub(crate) fn exp<T: ExpConsts>(x: T) -> T {
    exp_with(x, None)
}

/// Whether `x` is an ordinary argument of exp, for [`exp_fast`].
#[inline(always)]
pub(crate) fn exp_ordinary<T: ExpConsts>(x: T) -> bool {
    x.abs() < T::EXP_FAST
}

/// [`exp`] of an ordinary `x`: the clamp leaves it, the result is the
/// normal one, and its scaling by `2^k` (a normal power) is exact, so one
/// product gives it.
#[inline(always)]
pub(crate) fn exp_fast<T: ExpConsts>(x: T) -> T {
    let (e, k) = exp_parts(x);
    e * T::exp2i(k)
}

/// `(y, k)` with `2^x = y 2^k` (before the rounding of the product), `k`
/// integral, `y` in about `[0.7, 1.42]`, for `|x| < 2^(p - 2)`.
#[inline(always)]
fn exp2_parts<T: ExpConsts>(x: T) -> (T, T) {
    let k = x.round_int();
    let r = x - k; // exact
    (r.fma(poly(r, T::Q), T::ONE), k)
}

#[inline(always)]
fn exp2<T: ExpConsts>(x: T) -> T {
    let (y, k) = exp2_parts(clamp(x, T::EXP2_LO, T::EXP2_HI));
    y.ldexp(k)
}

#[inline(always)]
fn exp2_ordinary<T: ExpConsts>(x: T) -> bool {
    x.abs() < T::EXP2_FAST
}

/// [`exp2`] of an ordinary `x`: the clamp leaves it, and the scaling by
/// `2^k` (a normal power, the result normal) is exact, so one product gives it.
#[inline(always)]
fn exp2_fast<T: ExpConsts>(x: T) -> T {
    let (y, k) = exp2_parts(x);
    y * T::exp2i(k)
}

/// `(2^k - one) + 2^k r + 2^k t` for `s = 2^k`, the first sum exact.
#[inline(always)]
fn expm1_sum<T: ExpConsts>(r: T, t: T, s: T, one: T) -> T {
    let (a, b) = two_sum(s - one, s * r);
    a + s.fma(t, b)
}

#[inline(always)]
pub(crate) fn expm1<T: ExpConsts>(x: T) -> T {
    let xc = clamp(x, T::EXPM1_LO, T::EXP_HI);
    let (r, t, k) = reduce_exp(xc, None);
    // Where 2^k would overflow (k above the largest exponent less 2), half
    // of it, doubled.
    let big = k > T::EXP2_HI - T::TWO - T::TWO;
    let s = T::exp2i(if big { k - T::ONE } else { k });
    let y = expm1_sum(r, t, s, if big { T::HALF } else { T::ONE });
    let y = if big { y * T::TWO } else { y };
    // expm1(±0) = ±0, which the sum above would make +0.
    if x == T::ZERO {
        x
    } else {
        y
    }
}

#[inline(always)]
pub(crate) fn expm1_ordinary<T: ExpConsts>(x: T) -> bool {
    x > T::EXPM1_LO && x < T::EXPM1_FAST_HI
}

/// [`expm1`] of an ordinary `x`: the clamp leaves it, and `k` is not big.
#[inline(always)]
pub(crate) fn expm1_fast<T: ExpConsts>(x: T) -> T {
    let (r, t, k) = reduce_exp(x, None);
    let y = expm1_sum(r, t, T::exp2i(k), T::ONE);
    if x == T::ZERO {
        x
    } else {
        y
    }
}

super::split_kind! {
    exp_ordinary, exp_fast, exp, exp_f32, exp_f64, exp_f32_slice, exp_f64_slice,
    /// The exponential `e^x`.
    ///
    /// Measured max error: 0.64 ulp (f32), 0.59 ulp (f64).
    /// Specials: NaN -> NaN, -inf -> +0, +inf -> +inf, ±0 -> 1; overflow to
    /// +inf, underflow gradual through the subnormals to +0.
}

super::split_kind! {
    exp2_ordinary, exp2_fast, exp2, exp2_f32, exp2_f64, exp2_f32_slice, exp2_f64_slice,
    /// The power of two `2^x`, exact at every integer whose power is in the dtype.
    ///
    /// Measured max error: 0.80 ulp (f32), 0.74 ulp (f64).
    /// Specials: NaN -> NaN, -inf -> +0, +inf -> +inf; overflow to +inf,
    /// underflow gradual to +0.
}

super::split_kind! {
    expm1_ordinary, expm1_fast, expm1, expm1_f32, expm1_f64, expm1_f32_slice, expm1_f64_slice,
    /// `e^x - 1`, accurate near 0.
    ///
    /// Measured max error: 1.03 ulp (f32), 0.96 ulp (f64).
    /// Specials: NaN -> NaN, ±0 -> ±0, -inf -> -1, +inf -> +inf; overflow to +inf.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::*;

    #[test]
    fn exp_accuracy() {
        let mut args = sweep32(-104.0, 89.0, 600_000);
        args.extend(linear32(-104.0, 89.0, 400_000));
        args.extend([
            88.72283,
            88.72284,
            -87.33654,
            -103.27893,
            -103.97208,
            -103.972084,
            1e-45,
            -1e-45,
        ]);
        let e32 = measure32("exp", exp_f32, exp_f32_slice, f64::exp, &args);
        let e64 = measure64(
            "exp",
            exp_f64,
            exp_f64_slice,
            &table1(include_bytes!("testdata/exp.bin")),
        );
        assert!(e32 < 1.0 && e64 < 1.0);
    }

    #[test]
    fn exp2_accuracy() {
        let mut args = sweep32(-151.0, 129.0, 500_000);
        args.extend(linear32(-151.0, 129.0, 300_000));
        let e32 = measure32("exp2", exp2_f32, exp2_f32_slice, f64::exp2, &args);
        let e64 = measure64(
            "exp2",
            exp2_f64,
            exp2_f64_slice,
            &table1(include_bytes!("testdata/exp2.bin")),
        );
        assert!(e32 < 4.0 && e64 < 4.0);
    }

    #[test]
    fn expm1_accuracy() {
        let mut args = sweep32(-25.0, 89.0, 500_000);
        args.extend(linear32(-25.0, 89.0, 300_000));
        args.extend(linear32(-1.0, 1.0, 200_000));
        let e32 = measure32("expm1", expm1_f32, expm1_f32_slice, f64::exp_m1, &args);
        let e64 = measure64(
            "expm1",
            expm1_f64,
            expm1_f64_slice,
            &table1(include_bytes!("testdata/expm1.bin")),
        );
        assert!(e32 < 4.0 && e64 < 4.0);
    }

    #[test]
    fn exp2_exact_at_integers() {
        for k in -149..=127 {
            same(exp2_f32(k as f32), (k as f64).exp2() as f32);
        }
        for k in -1074..=1023 {
            same(exp2_f64(k as f64), pow2(k));
        }
        same(exp2_f32(-150.0), 0.0);
        same(exp2_f32(128.0), f32::INFINITY);
        same(exp2_f64(-1075.0), 0.0);
        same(exp2_f64(1024.0), f64::INFINITY);
    }

    #[test]
    fn exp_specials() {
        for (x, want) in [
            (f64::NAN, f64::NAN),
            (f64::NEG_INFINITY, 0.0),
            (f64::INFINITY, f64::INFINITY),
            (0.0, 1.0),
            (-0.0, 1.0),
            (1e6, f64::INFINITY),
            (-1e6, 0.0),
        ] {
            same(exp_f64(x), want);
            same(exp_f32(x as f32), want as f32);
            same(exp2_f64(x), want);
            same(exp2_f32(x as f32), want as f32);
        }
        same(exp_f64(709.782712893384), 1.7976931348622732e308);
        same(exp_f64(709.7827128933841), f64::INFINITY);
        same(exp_f64(-745.1332191019411), 5e-324);
        same(exp_f64(-745.1332191019412), 0.0);
        same(exp_f32(88.72283), 3.4027985e38);
        same(exp_f32(88.72284), f32::INFINITY);
        same(exp_f32(-103.972076), 1e-45);
        for (x, want) in [
            (f64::NAN, f64::NAN),
            (f64::NEG_INFINITY, -1.0),
            (f64::INFINITY, f64::INFINITY),
            (0.0, 0.0),
            (-0.0, -0.0),
            (1e6, f64::INFINITY),
            (-1e6, -1.0),
            (1e-310, 1e-310),
            (-5e-324, -5e-324),
        ] {
            same(expm1_f64(x), want);
            same(expm1_f32(x as f32), want as f32);
        }
        same(expm1_f32(1e-45), 1e-45);
    }
}
