//! Sinh, Cosh, Tanh, Asinh, Acosh and Atanh, from the f64 exponentials and
//! logarithms of this library. The f32 kinds evaluate the f64 ones and round once.

use super::exp::{exp, exp_fast, exp_parts, expm1, expm1_fast};
use super::log::{ln_of_parts, log1p, log1p_fast, log_parts, log_parts_normal};
use super::real::{two_sum, Real};

/// Above this magnitude `e^-|x|` is below half an ulp of `e^|x|`.
const BIG: f64 = 22.0;
/// Beyond this magnitude sinh and cosh overflow; a clamp keeps `2^k` finite.
const OVER: f64 = 711.0;
/// Above this magnitude `asinh(x) = log(2|x|)` to within the rounding.
const HUGE: f64 = 268435456.0;

/// `e^a / 2` for `a >= 0`, overflowing only where the result does.
#[inline(always)]
fn half_exp(a: f64) -> f64 {
    let (e, k) = exp_parts(if a > OVER { OVER } else { a });
    e.ldexp(k - 1.0)
}

/// The ordinary arguments of sinh, cosh and tanh: `|x| < BIG`, where
/// [`exp_fast`] and [`expm1_fast`] serve.
#[inline(always)]
fn hyper_ordinary(x: f64) -> bool {
    x.abs() < BIG
}

/// `sinh(a)` for `0 <= a < BIG` from `e = expm1(a)`.
#[inline(always)]
fn sinh_small(e: f64) -> f64 {
    0.5 * (e + e / (e + 1.0))
}

#[inline(always)]
fn sinh_fast(x: f64) -> f64 {
    sinh_small(expm1_fast(x.abs())).copysign(x)
}

#[inline(always)]
fn sinh_full(x: f64) -> f64 {
    let a = x.abs();
    let (small, big) = (sinh_small(expm1(a)), half_exp(a));
    let y = if a < BIG { small } else { big };
    y.copysign(x)
}

/// `cosh(a)` for `0 <= a < BIG` from `t = exp(a)`.
#[inline(always)]
fn cosh_small(t: f64) -> f64 {
    0.5f64.mul_add(t, 0.5 / t)
}

#[inline(always)]
fn cosh_fast(x: f64) -> f64 {
    cosh_small(exp_fast(x.abs()))
}

#[inline(always)]
fn cosh_full(x: f64) -> f64 {
    let a = x.abs();
    let (small, big) = (cosh_small(exp(a)), half_exp(a));
    if a < BIG {
        small
    } else {
        big
    }
}

/// `tanh(x)` for `|x| < BIG` by an `expm1` good for `(-2, 2 BIG)`.
#[inline(always)]
fn tanh_small(x: f64, expm1: impl Fn(f64) -> f64) -> f64 {
    let a = x.abs();
    let small = a < 1.0;
    let e = expm1(f64::select(small, -2.0 * a, 2.0 * a));
    // -e / (e + 2) below 1, 1 - 2 / (e + 2) above: one division.
    let q = f64::select(small, -e, 2.0) / (e + 2.0);
    let y = f64::select(small, q, 1.0 - q);
    y.copysign(x)
}

#[inline(always)]
fn tanh_fast(x: f64) -> f64 {
    tanh_small(x, expm1_fast)
}

#[inline(always)]
fn tanh_full(x: f64) -> f64 {
    let (small, big) = (tanh_small(x, expm1), 1.0f64.copysign(x));
    let y = if x.abs() < BIG { small } else { big };
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// `log(u) + c / u + k ln 2` with one evaluation of the logarithm, its
/// parts by `parts`.
#[inline(always)]
fn log_shifted(u: f64, c: f64, k: f64, parts: impl Fn(f64) -> (f64, f64, f64)) -> f64 {
    let (e, hi, lo) = parts(u);
    ln_of_parts(e + k, hi, lo + c / u)
}

/// `(u, c)` with `asinh(a) = log(u) + c / u` to within the rounding, for
/// `0 <= a <= HUGE`, `u >= 1`. Up to 2: log1p(a + a^2 / (1 + sqrt(1 + a^2)));
/// above: log(2a + 1 / (sqrt(a^2 + 1) + a)).
#[inline(always)]
fn asinh_log_arg(a: f64) -> (f64, f64) {
    let r = a.mul_add(a, 1.0).sqrt();
    let small = a <= 2.0;
    let q = f64::select(small, a * a, 1.0) / f64::select(small, 1.0 + r, r + a);
    let (u, c) = two_sum(1.0, a + q);
    let v = 2.0f64.mul_add(a, q);
    (f64::select(small, u, v), f64::select(small, c, 0.0))
}

/// The ordinary arguments of asinh: `|x| <= HUGE`.
#[inline(always)]
fn asinh_ordinary(x: f64) -> bool {
    x.abs() <= HUGE
}

#[inline(always)]
fn asinh_fast(x: f64) -> f64 {
    let (u, c) = asinh_log_arg(x.abs());
    log_shifted(u, c, 0.0, log_parts_normal).copysign(x)
}

#[inline(always)]
fn asinh_full(x: f64) -> f64 {
    let a = x.abs();
    // Above HUGE: log(a) + ln2.
    let huge = a > HUGE;
    let (u, c) = asinh_log_arg(a);
    let (u, c) = (f64::select(huge, a, u), f64::select(huge, 0.0, c));
    let y = log_shifted(u, c, f64::select(huge, 1.0, 0.0), log_parts);
    if a == f64::INFINITY {
        x
    } else {
        y.copysign(x)
    }
}

/// `(u, c)` with `acosh(x) = log(u) + c / u` to within the rounding, for
/// `1 <= x <= HUGE`, `u >= 1`. Up to 2: log1p(t + sqrt(2t + t^2)), `t = x - 1`;
/// above: log(2x - 1 / (x + sqrt(x^2 - 1))).
#[inline(always)]
fn acosh_log_arg(x: f64) -> (f64, f64) {
    let t = x - 1.0;
    let small = x <= 2.0;
    let q = f64::select(small, t.mul_add(t, 2.0 * t), x.mul_add(x, -1.0)).sqrt();
    let (u, c) = two_sum(1.0, t + q);
    let v = 2.0f64.mul_add(x, -1.0 / (x + q));
    (f64::select(small, u, v), f64::select(small, c, 0.0))
}

/// The ordinary arguments of acosh: `[1, HUGE]`.
#[inline(always)]
fn acosh_ordinary(x: f64) -> bool {
    (1.0..=HUGE).contains(&x)
}

#[inline(always)]
fn acosh_fast(x: f64) -> f64 {
    let (u, c) = acosh_log_arg(x);
    log_shifted(u, c, 0.0, log_parts_normal)
}

#[inline(always)]
fn acosh_full(x: f64) -> f64 {
    // Above HUGE: log(x) + ln2.
    let huge = x > HUGE;
    let (u, c) = acosh_log_arg(x);
    let (u, c) = (f64::select(huge, x, u), f64::select(huge, 0.0, c));
    let y = log_shifted(u, c, f64::select(huge, 1.0, 0.0), log_parts);
    if x < 1.0 || x.is_nan() {
        f64::NAN
    } else if x == f64::INFINITY {
        x
    } else {
        y
    }
}

/// `v` with `atanh(a) = log1p(v) / 2`, `v >= 0`, for `0 <= a < 1`: below
/// 1/2, `2a + 2a^2 / (1 - a)`; above, `2a / (1 - a)`.
#[inline(always)]
fn atanh_log1p_arg(a: f64) -> f64 {
    let small = a < 0.5;
    let d = f64::select(small, a, a + a) / (1.0 - a);
    f64::select(small, (a + a).mul_add(d, a + a), d)
}

/// The ordinary arguments of atanh: `|x| < 1`.
#[inline(always)]
fn atanh_ordinary(x: f64) -> bool {
    x.abs() < 1.0
}

#[inline(always)]
fn atanh_fast(x: f64) -> f64 {
    (0.5 * log1p_fast(atanh_log1p_arg(x.abs()))).copysign(x)
}

#[inline(always)]
fn atanh_full(x: f64) -> f64 {
    (0.5 * log1p(atanh_log1p_arg(x.abs()))).copysign(x)
}

super::split_f64_kind! {
    hyper_ordinary, sinh_fast, sinh_full, sinh_f32, sinh_f64, sinh_f32_slice, sinh_f64_slice,
    /// The hyperbolic sine.
    ///
    /// Measured max error: 0.50 ulp (f32), 1.46 ulp (f64).
    /// Specials: NaN -> NaN, ±0 -> ±0, ±inf -> ±inf; overflow to ±inf.
}

super::split_f64_kind! {
    hyper_ordinary, cosh_fast, cosh_full, cosh_f32, cosh_f64, cosh_f32_slice, cosh_f64_slice,
    /// The hyperbolic cosine.
    ///
    /// Measured max error: 0.50 ulp (f32), 0.96 ulp (f64).
    /// Specials: NaN -> NaN, ±0 -> 1, ±inf -> +inf; overflow to +inf.
}

super::split_f64_kind! {
    hyper_ordinary, tanh_fast, tanh_full, tanh_f32, tanh_f64, tanh_f32_slice, tanh_f64_slice,
    /// The hyperbolic tangent.
    ///
    /// Measured max error: 0.50 ulp (f32), 1.84 ulp (f64).
    /// Specials: NaN -> NaN, ±0 -> ±0, ±inf -> ±1.
}

super::split_f64_kind! {
    asinh_ordinary, asinh_fast, asinh_full, asinh_f32, asinh_f64, asinh_f32_slice, asinh_f64_slice,
    /// The inverse hyperbolic sine.
    ///
    /// Measured max error: 0.50 ulp (f32), 1.18 ulp (f64).
    /// Specials: NaN -> NaN, ±0 -> ±0, ±inf -> ±inf.
}

super::split_f64_kind! {
    acosh_ordinary, acosh_fast, acosh_full, acosh_f32, acosh_f64, acosh_f32_slice, acosh_f64_slice,
    /// The inverse hyperbolic cosine.
    ///
    /// Measured max error: 0.50 ulp (f32), 1.13 ulp (f64).
    /// Specials: NaN -> NaN, x < 1 -> NaN, 1 -> +0, +inf -> +inf.
}

super::split_f64_kind! {
    atanh_ordinary, atanh_fast, atanh_full, atanh_f32, atanh_f64, atanh_f32_slice, atanh_f64_slice,
    /// The inverse hyperbolic tangent.
    ///
    /// Measured max error: 0.50 ulp (f32), 1.09 ulp (f64).
    /// Specials: NaN -> NaN, ±0 -> ±0, ±1 -> ±inf, |x| > 1 -> NaN.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::*;

    #[test]
    fn hyperbolic_accuracy() {
        let mut wide = sweep32(-f32::MAX, f32::MAX, 400_000);
        wide.extend(linear32(-100.0, 100.0, 200_000));
        wide.extend(linear32(-3.0, 3.0, 200_000));
        let mut unit = sweep32(-1.0, 1.0, 500_000);
        unit.extend(linear32(-1.0, 1.0, 300_000));
        let mut above1 = sweep32(1.0, f32::MAX, 500_000);
        above1.extend(linear32(1.0, 5.0, 300_000));
        let worst = worst_of(
            &[
                ("sinh", sinh_f32, sinh_f32_slice, f64::sinh, &wide),
                ("cosh", cosh_f32, cosh_f32_slice, f64::cosh, &wide),
                ("tanh", tanh_f32, tanh_f32_slice, f64::tanh, &wide),
                ("asinh", asinh_f32, asinh_f32_slice, f64::asinh, &wide),
                ("acosh", acosh_f32, acosh_f32_slice, f64::acosh, &above1),
                ("atanh", atanh_f32, atanh_f32_slice, f64::atanh, &unit),
            ],
            &[
                (sinh_f64, sinh_f64_slice),
                (cosh_f64, cosh_f64_slice),
                (tanh_f64, tanh_f64_slice),
                (asinh_f64, asinh_f64_slice),
                (acosh_f64, acosh_f64_slice),
                (atanh_f64, atanh_f64_slice),
            ],
        );
        assert!(worst < 4.0);
    }

    #[test]
    fn hyperbolic_specials() {
        let (nan, inf) = (f64::NAN, f64::INFINITY);
        same3(
            [sinh_f64, cosh_f64, tanh_f64],
            [sinh_f32, cosh_f32, tanh_f32],
            &[
                (nan, nan, nan, nan),
                (0.0, 0.0, 1.0, 0.0),
                (-0.0, -0.0, 1.0, -0.0),
                (inf, inf, inf, 1.0),
                (-inf, -inf, inf, -1.0),
                (1e3, inf, inf, 1.0),
                (-1e3, -inf, inf, -1.0),
                (5e-324, 5e-324, 1.0, 5e-324),
            ],
        );
        same3(
            [asinh_f64, acosh_f64, atanh_f64],
            [asinh_f32, acosh_f32, atanh_f32],
            &[
                (nan, nan, nan, nan),
                (0.0, 0.0, nan, 0.0),
                (-0.0, -0.0, nan, -0.0),
                (1.0, 0.881373587019543, 0.0, inf),
                (-1.0, -0.881373587019543, nan, -inf),
                (inf, inf, inf, nan),
                (-inf, -inf, nan, nan),
                (2.0, 1.4436354751788103, 1.3169578969248166, nan),
                (-1e-310, -1e-310, nan, -1e-310),
            ],
        );
        assert!(sinh_f64(710.475).is_finite() && cosh_f64(-710.475).is_finite());
        same(sinh_f64(710.4759), inf);
        same(cosh_f64(-710.4759), inf);
        same(asinh_f64(f64::MAX), 710.475860073944);
        same(acosh_f64(f64::MAX), 710.475860073944);
    }
}
