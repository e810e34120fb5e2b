//! Log, Log2 and Log1p: `x = 2^e m`, `m` in `[sqrt(1/2), sqrt(2))`, and
//! `log(m) = log1p(f)`, `f = m - 1`, from `s = f / (2 + f)` as
//! `f - f^2/2 + s (f^2/2 + s^2 R(s^2))`, carried as a head and a tail.

use super::real::{fast_two_sum, poly, two_sum, Real};

/// The constants of the logarithms of one precision.
pub(crate) trait LogConsts: Real {
    /// `ln 2` in a head of few enough bits that `e * LN2_HI` is exact, and the rest.
    const LN2_HI: Self;
    const LN2_LO: Self;
    /// `log2(e)` rounded, and the rest.
    const LOG2E: Self;
    const LOG2E_LO: Self;
    /// `log1p(f) = 2s + s z R(z)`, `z = s^2 <= ((sqrt2 - 1) / (sqrt2 + 1))^2`.
    const R: &'static [Self];
}

impl LogConsts for f32 {
    const LN2_HI: f32 = 0.693145751953125;
    const LN2_LO: f32 = 1.4286067653e-06;
    const LOG2E: f32 = 1.4426950216293335;
    const LOG2E_LO: f32 = 1.9259630335e-08;
    // gen_coeffs.py log, f32: relative error 2^-24.8
    const R: &'static [f32] = &[
        6.666666865e-01,
        4.000012279e-01,
        2.855081558e-01,
        2.333058268e-01,
    ];
}

impl LogConsts for f64 {
    const LN2_HI: f64 = 0.6931471805601177;
    const LN2_LO: f64 = -1.7239444525614835e-13;
    const LOG2E: f64 = core::f64::consts::LOG2_E;
    const LOG2E_LO: f64 = 2.0355273740931033e-17;
    // gen_coeffs.py log, f64: relative error 2^-54.0
    const R: &'static [f64] = &[
        0.6666666666666666,
        0.3999999999999999,
        0.28571428571435364,
        0.22222222219857288,
        0.181818185938676,
        0.1538457511576662,
        0.1333563938635947,
        0.11688107586595922,
        0.1188214271262732,
    ];
}

/// `(e, hi, lo)` with `log(x) = e ln2 + hi + lo`, `e` integral, `|lo|` within
/// about an ulp of `hi`, for a positive finite `x` (subnormals included).
#[inline(always)]
pub(crate) fn log_parts<T: LogConsts>(x: T) -> (T, T, T) {
    log_parts_of(x.frexp())
}

/// [`log_parts`] for a positive normal finite `x`, its bits the same.
#[inline(always)]
pub(crate) fn log_parts_normal<T: LogConsts>(x: T) -> (T, T, T) {
    log_parts_of(x.frexp_normal())
}

/// [`log_parts`] of `x = 2^e m`.
#[inline(always)]
fn log_parts_of<T: LogConsts>((m, e): (T, T)) -> (T, T, T) {
    let f = m - T::ONE; // exact
    let s = f / (T::TWO + f);
    let z = s * s;
    let hf = T::HALF * f;
    let hfsq = hf * f;
    let hfsq_err = hf.fma(f, -hfsq); // hf f = hfsq + hfsq_err
    let (hi, lo0) = fast_two_sum(f, -hfsq); // |f| > f^2/2
    let lo = (lo0 - hfsq_err) + s * (hfsq + z * poly(z, T::R));
    (e, hi, lo)
}

/// `e ln2 + hi + lo` rounded once more than the parts.
#[inline(always)]
pub(crate) fn ln_of_parts<T: LogConsts>(e: T, hi: T, lo: T) -> T {
    // |e LN2_HI| >= |hi| unless e = 0, so the sum's error is exact.
    let (sum, err) = fast_two_sum(e * T::LN2_HI, hi);
    sum + (err + e.fma(T::LN2_LO, lo))
}

/// The log's value at special operands: NaN below 0 or at a NaN, -inf at ±0,
/// +inf at +inf; `y` at a positive finite `x`.
#[inline(always)]
fn log_special<T: Real>(x: T, y: T) -> T {
    if x > T::ZERO {
        if x == T::INFINITY {
            x
        } else {
            y
        }
    } else if x == T::ZERO {
        -T::INFINITY
    } else {
        T::NAN
    }
}

/// Whether `x` is positive, normal and finite: an ordinary argument of the logarithms.
#[inline(always)]
fn log_ordinary<T: LogConsts>(x: T) -> bool {
    x.within(T::MIN_POSITIVE, T::INFINITY)
}

#[inline(always)]
fn log_full<T: LogConsts>(x: T) -> T {
    let (e, hi, lo) = log_parts(x);
    log_special(x, ln_of_parts(e, hi, lo))
}

/// [`log_full`] of an ordinary `x`: no subnormal to scale, no special case.
#[inline(always)]
fn log_fast<T: LogConsts>(x: T) -> T {
    let (e, hi, lo) = log_parts_normal(x);
    ln_of_parts(e, hi, lo)
}

/// `(e ln2 + hi + lo) log2(e)` rounded once more than the parts.
#[inline(always)]
fn log2_of_parts<T: LogConsts>(e: T, hi: T, lo: T) -> T {
    // (hi + lo) log2(e) as a head and a tail.
    let vh = hi * T::LOG2E;
    let vl = hi.fma(T::LOG2E, -vh) + hi.fma(T::LOG2E_LO, lo * T::LOG2E);
    // |e| >= 1 > |vh| unless e = 0; exact at powers of two, where hi = lo = 0.
    let (w, err) = fast_two_sum(e, vh);
    w + (vl + err)
}

#[inline(always)]
fn log2_full<T: LogConsts>(x: T) -> T {
    let (e, hi, lo) = log_parts(x);
    log_special(x, log2_of_parts(e, hi, lo))
}

/// [`log2_full`] of an ordinary `x`.
#[inline(always)]
fn log2_fast<T: LogConsts>(x: T) -> T {
    let (e, hi, lo) = log_parts_normal(x);
    log2_of_parts(e, hi, lo)
}

/// `(log1p(x), u)` from `log(u) + c / u`, `u + c = 1 + x`, the logarithm's
/// parts by `parts`.
#[inline(always)]
fn log1p_with<T: LogConsts>(x: T, parts: impl Fn(T) -> (T, T, T)) -> (T, T) {
    // log1p(x) = log(u) + c / u to within u's ulp squared.
    let (u, c) = two_sum(T::ONE, x);
    let (e, hi, lo) = parts(u);
    (ln_of_parts(e, hi, lo + c / u), u)
}

#[inline(always)]
pub(crate) fn log1p<T: LogConsts>(x: T) -> T {
    let (y, u) = log1p_with(x, log_parts);
    if x == T::ZERO {
        x // ±0
    } else {
        log_special(u, y)
    }
}

/// Whether `x` is an ordinary argument of log1p: above -1, finite, not zero.
#[inline(always)]
pub(crate) fn log1p_ordinary<T: LogConsts>(x: T) -> bool {
    x > -T::ONE && x < T::INFINITY && x != T::ZERO
}

/// [`log1p`] of `x > -1` finite, zero aside: `u = 1 + x` rounded is then
/// positive, normal and finite. At +0 it gives +0, as `log1p` does.
#[inline(always)]
pub(crate) fn log1p_fast<T: LogConsts>(x: T) -> T {
    log1p_with(x, log_parts_normal).0
}

super::split_kind! {
    log_ordinary, log_fast, log_full, log_f32, log_f64, log_f32_slice, log_f64_slice,
    /// The natural logarithm.
    ///
    /// Measured max error: 0.61 ulp (f32), 0.55 ulp (f64).
    /// Specials: NaN -> NaN, x < 0 -> NaN, ±0 -> -inf, +inf -> +inf, 1 -> +0.
}

super::split_kind! {
    log_ordinary, log2_fast, log2_full, log2_f32, log2_f64, log2_f32_slice, log2_f64_slice,
    /// The base-2 logarithm, exact at powers of two (subnormal ones included).
    ///
    /// Measured max error: 0.66 ulp (f32), 0.54 ulp (f64).
    /// Specials: NaN -> NaN, x < 0 -> NaN, ±0 -> -inf, +inf -> +inf.
}

super::split_kind! {
    log1p_ordinary, log1p_fast, log1p, log1p_f32, log1p_f64, log1p_f32_slice, log1p_f64_slice,
    /// `log(1 + x)`, accurate near 0.
    ///
    /// Measured max error: 0.66 ulp (f32), 0.53 ulp (f64).
    /// Specials: NaN -> NaN, ±0 -> ±0, -1 -> -inf, x < -1 -> NaN, +inf -> +inf.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::*;

    fn near_one(n: usize) -> Vec<f32> {
        let mut v = linear32(0.5, 2.0, n / 2);
        v.extend(sweep32(1.0 - 1.0 / 64.0, 1.0 + 1.0 / 64.0, n / 2));
        v
    }

    #[test]
    fn log_accuracy() {
        let mut args = sweep32(f32::from_bits(1), f32::MAX, 600_000);
        args.extend(near_one(400_000));
        let e32 = measure32("log", log_f32, log_f32_slice, f64::ln, &args);
        let e64 = measure64(
            "log",
            log_f64,
            log_f64_slice,
            &table1(include_bytes!("testdata/log.bin")),
        );
        assert!(e32 <= 1.0 && e64 <= 2.0);
    }

    #[test]
    fn log2_accuracy() {
        let mut args = sweep32(f32::from_bits(1), f32::MAX, 500_000);
        args.extend(near_one(300_000));
        let e32 = measure32("log2", log2_f32, log2_f32_slice, f64::log2, &args);
        let e64 = measure64(
            "log2",
            log2_f64,
            log2_f64_slice,
            &table1(include_bytes!("testdata/log2.bin")),
        );
        assert!(e32 < 4.0 && e64 < 4.0);
    }

    #[test]
    fn log1p_accuracy() {
        let mut args = sweep32(-1.0, f32::MAX, 500_000);
        args.extend(linear32(-1.0, 2.0, 300_000));
        let e32 = measure32("log1p", log1p_f32, log1p_f32_slice, f64::ln_1p, &args);
        let e64 = measure64(
            "log1p",
            log1p_f64,
            log1p_f64_slice,
            &table1(include_bytes!("testdata/log1p.bin")),
        );
        assert!(e32 < 4.0 && e64 < 4.0);
    }

    #[test]
    fn log2_exact_at_powers_of_two() {
        for k in -149..=127 {
            same(log2_f32((k as f64).exp2() as f32), k as f32);
        }
        for k in -1074..=1023 {
            same(log2_f64(pow2(k)), k as f64);
        }
    }

    #[test]
    fn log_specials() {
        for (x, want) in [
            (f64::NAN, f64::NAN),
            (-1.0, f64::NAN),
            (-1e-40, f64::NAN),
            (f64::NEG_INFINITY, f64::NAN),
            (0.0, f64::NEG_INFINITY),
            (-0.0, f64::NEG_INFINITY),
            (f64::INFINITY, f64::INFINITY),
            (1.0, 0.0),
        ] {
            same(log_f64(x), want);
            same(log_f32(x as f32), want as f32);
            same(log2_f64(x), want);
            same(log2_f32(x as f32), want as f32);
        }
        for (x, want) in [
            (f64::NAN, f64::NAN),
            (-2.0, f64::NAN),
            (f64::NEG_INFINITY, f64::NAN),
            (-1.0, f64::NEG_INFINITY),
            (0.0, 0.0),
            (-0.0, -0.0),
            (f64::INFINITY, f64::INFINITY),
            (5e-324, 5e-324),
            (-1e-310, -1e-310),
        ] {
            same(log1p_f64(x), want);
            same(log1p_f32(x as f32), want as f32);
        }
        same(log1p_f32(-1e-45), -1e-45);
        same(log_f64(5e-324), -744.4400719213812);
        same(log_f64(f64::MAX), 709.782712893384);
    }
}
