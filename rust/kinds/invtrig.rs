//! Asin, Acos, Atan and Atan2, table-free: odd polynomials on reduced
//! arguments, `pi` multiples added in two parts. The f32 kinds evaluate the
//! f64 ones and round once.

use super::real::{fast_two_sum, poly};

const PIO2_HI: f64 = core::f64::consts::FRAC_PI_2;
const PIO2_LO: f64 = 6.123233995736766e-17;
const PI_HI: f64 = core::f64::consts::PI;
const PI_LO: f64 = 1.2246467991473532e-16;
const PIO4_HI: f64 = core::f64::consts::FRAC_PI_4;
const PIO4_LO: f64 = 3.061616997868383e-17;
/// tan(pi/8).
const TAN_PIO8: f64 = 0.41421356237309503;

/// `atan(t) = t + t z A(z)`, `z = t^2 <= tan(pi/8)^2`. gen_coeffs.py atan, f64: 2^-53.7.
const A: &[f64] = &[
    -0.3333333333333333,
    0.19999999999999993,
    -0.14285714285711515,
    0.11111111110754406,
    -0.0909090906699066,
    0.07692306735321475,
    -0.06666642004996545,
    0.05881925033877732,
    -0.052580394289794816,
    0.04719381457895137,
    -0.04104381417807643,
    0.03063443323901452,
    -0.013916943217800841,
];
/// `asin(t) = t + t z B(z)`, `z = t^2 <= 1/4`. gen_coeffs.py asin, f64: 2^-54.0.
const B: &[f64] = &[
    0.16666666666666666,
    0.07499999999999991,
    0.04464285714288344,
    0.03038194444135946,
    0.02237215927992726,
    0.017352757469424038,
    0.013965010116088524,
    0.011549083883413875,
    0.00979277945213322,
    0.008135626216062262,
    0.008796038691242429,
    0.00037726616224789894,
    0.022561695552532034,
    -0.024031381873504593,
    0.030725206227297092,
];

/// `(h, l)` with `h + l = atan(t)` for `t` in `[0, 1]`, `l` about an ulp of `h`.
///
/// Both sides of each choice are computed and one kept (here and in the
/// kinds below), which vectorises: a branch around the division would not.
#[inline(always)]
fn atan01(t: f64) -> (f64, f64) {
    // atan(t) = pi/4 + atan((t - 1) / (t + 1)) above tan(pi/8).
    let mid = t > TAN_PIO8;
    let q = (t - 1.0) / (t + 1.0);
    let u = if mid { q } else { t };
    let z = u * u;
    let tail = (u * z) * poly(z, A);
    let v = u + (tail + PIO4_LO);
    let (a, b) = if mid { (PIO4_HI, v) } else { (u, tail) };
    fast_two_sum(a, b)
}

/// `pi/2 - (h + l)` rounded, for `h + l` in `[0, pi/2]`.
#[inline(always)]
fn pio2_minus(h: f64, l: f64) -> f64 {
    PIO2_HI - (h - (PIO2_LO - l))
}

#[inline(always)]
fn atan(x: f64) -> f64 {
    let a = x.abs();
    let inv = a > 1.0;
    // 1 / a where a > 1, a elsewhere (NaN included).
    let (h, l) = atan01(a.min(1.0 / a));
    let (p, s) = (pio2_minus(h, l), h + l);
    let y = if inv { p } else { s };
    // atan(±0) = ±0 and atan(±inf) = ±pi/2 fall out; NaN stays.
    y.copysign(x)
}

#[inline(always)]
fn atan2(y: f64, x: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    let both_inf = ax == f64::INFINITY && ay == f64::INFINITY;
    let (ax, ay) = if both_inf { (1.0, 1.0) } else { (ax, ay) };
    let swap = ay > ax;
    let (num, den) = if swap { (ax, ay) } else { (ay, ax) };
    // num <= den; both zero gives 0, a finite num over an infinite den gives 0.
    let t = if den == 0.0 { 0.0 } else { num / den };
    let (h, l) = atan01(t);
    let (h, l) = if swap {
        fast_two_sum(PIO2_HI, (PIO2_LO - l) - h)
    } else {
        (h, l)
    };
    let r = if x.is_sign_negative() {
        PI_HI - (h - (PI_LO - l))
    } else {
        h + l
    };
    if x.is_nan() || y.is_nan() {
        x + y
    } else {
        r.copysign(y)
    }
}

/// `(s, c)` with `s + c = sqrt(w)` to about twice the precision.
#[inline(always)]
fn sqrt2(w: f64) -> (f64, f64) {
    let s = w.sqrt();
    let c = (-s).mul_add(s, w) / (s + s);
    (s, if s > 0.0 { c } else { 0.0 })
}

/// `asin(s + c) - s` for `0 <= s <= 1/2`.
#[inline(always)]
fn asin_tail(s: f64, c: f64) -> f64 {
    let z = s * s;
    (s * z).mul_add(poly(z, B), c)
}

#[inline(always)]
fn asin(x: f64) -> f64 {
    let a = x.abs();
    let big = a > 0.5;
    // Above 1/2: asin(a) = pi/2 - 2 asin(sqrt((1 - a) / 2)).
    let (s, c) = if big {
        sqrt2((1.0 - a) * 0.5)
    } else {
        (a, 0.0)
    };
    let t = asin_tail(s, c);
    let y = if big {
        PIO2_HI - (2.0 * (s + t) - PIO2_LO)
    } else {
        s + t
    };
    // |x| > 1 gives NaN from the square root; ±0 keeps its sign.
    y.copysign(x)
}

#[inline(always)]
fn acos(x: f64) -> f64 {
    let a = x.abs();
    let big = a > 0.5;
    let (s, c) = if big {
        sqrt2((1.0 - a) * 0.5)
    } else {
        (x, 0.0)
    };
    let t = asin_tail(s, c);
    if !big {
        // pi/2 - asin(x)
        PIO2_HI - (x - (PIO2_LO - t))
    } else if x > 0.0 {
        // 2 asin(sqrt((1 - x) / 2))
        2.0 * (s + t)
    } else {
        // pi - 2 asin(sqrt((1 + x) / 2))
        PI_HI - (2.0 * (s + t) - PI_LO)
    }
}

super::f64_kind! {
    atan, atan_f32, atan_f64, atan_f32_slice, atan_f64_slice,
    /// The arctangent, in `[-pi/2, pi/2]`.
    ///
    /// Measured max error: 0.50 ulp (f32), 0.92 ulp (f64).
    /// Specials: NaN -> NaN, ±0 -> ±0, ±inf -> ±pi/2.
}

super::f64_kind! {
    asin, asin_f32, asin_f64, asin_f32_slice, asin_f64_slice,
    /// The arcsine, in `[-pi/2, pi/2]`.
    ///
    /// Measured max error: 0.50 ulp (f32), 1.42 ulp (f64).
    /// Specials: NaN -> NaN, ±0 -> ±0, |x| > 1 -> NaN.
}

super::f64_kind! {
    acos, acos_f32, acos_f64, acos_f32_slice, acos_f64_slice,
    /// The arccosine, in `[0, pi]`.
    ///
    /// Measured max error: 0.50 ulp (f32), 0.88 ulp (f64).
    /// Specials: NaN -> NaN, 1 -> +0, |x| > 1 -> NaN.
}

/// The angle of the point `(x, y)`, in `[-pi, pi]`, by C99's rules.
///
/// Measured max error: 1.21 ulp (f64).
/// Specials: a NaN operand -> NaN; `y = ±0`: ±0 for `x > 0` or `+0`, ±pi for
/// `x < 0` or `-0`; `x = ±0`, `y != 0`: ±pi/2 by y's sign; `y = ±inf`: ±pi/4
/// for `x = +inf`, ±3pi/4 for `x = -inf`, else ±pi/2; `x = +inf`, y finite:
/// ±0; `x = -inf`, y finite: ±pi.
#[inline]
pub fn atan2_f64(y: f64, x: f64) -> f64 {
    atan2(y, x)
}

/// [`atan2_f64`] of f32 operands, rounded once to f32.
///
/// Measured max error: 0.50 ulp (f32).
#[inline]
pub fn atan2_f32(y: f32, x: f32) -> f32 {
    atan2(y as f64, x as f64) as f32
}

super::slice_form! {
    /// `atan2_f32` of each pair of `y` and `x` into `out`, all of one length.
    #[inline]
    pub fn atan2_f32_slice(y: &[f32], x: &[f32], out: &mut [f32]) {
        super::map_slice2(y, x, out, atan2_f32)
    }
}

super::slice_form! {
    /// `atan2_f64` of each pair of `y` and `x` into `out`, all of one length.
    #[inline]
    pub fn atan2_f64_slice(y: &[f64], x: &[f64], out: &mut [f64]) {
        super::map_slice2(y, x, out, atan2_f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::*;

    #[test]
    fn inverse_trig_accuracy() {
        let mut unit = sweep32(-1.0, 1.0, 500_000);
        unit.extend(linear32(-1.0, 1.0, 300_000));
        let mut all = sweep32(-f32::MAX, f32::MAX, 500_000);
        all.extend(linear32(-8.0, 8.0, 300_000));
        let worst = worst_of(
            &[
                ("asin", asin_f32, asin_f32_slice, f64::asin, &unit),
                ("acos", acos_f32, acos_f32_slice, f64::acos, &unit),
                ("atan", atan_f32, atan_f32_slice, f64::atan, &all),
            ],
            &[
                (asin_f64, asin_f64_slice),
                (acos_f64, acos_f64_slice),
                (atan_f64, atan_f64_slice),
            ],
        );
        assert!(worst < 4.0);
    }

    #[test]
    fn atan2_accuracy() {
        // f32: pairs over a grid of log-spread magnitudes and both signs.
        let g = sweep32(-f32::MAX, f32::MAX, 1001);
        let (mut ys, mut xs) = (Vec::new(), Vec::new());
        for &y in &g {
            for &x in &g {
                ys.push(y);
                xs.push(x);
            }
        }
        let mut out = vec![0.0f32; ys.len()];
        atan2_f32_slice(&ys, &xs, &mut out);
        let mut w32 = 0.0f64;
        for i in 0..ys.len() {
            assert_eq!(out[i].to_bits(), atan2_f32(ys[i], xs[i]).to_bits());
            w32 = w32.max(err32(out[i], (ys[i] as f64).atan2(xs[i] as f64)));
        }
        let t = table2(include_bytes!("testdata/atan2.bin"));
        let (ys, xs): (Vec<f64>, Vec<f64>) = t.iter().map(|r| (r[0], r[1])).unzip();
        let mut out = vec![0.0; t.len()];
        atan2_f64_slice(&ys, &xs, &mut out);
        let mut w64 = 0.0f64;
        for (r, &o) in t.iter().zip(&out) {
            assert_eq!(o.to_bits(), atan2_f64(r[0], r[1]).to_bits());
            w64 = w64.max(err64(o, r[2], r[3]));
        }
        println!("atan2 f32: max {w32:.3} ulp; f64: max {w64:.3} ulp");
        assert!(w32 < 4.0 && w64 < 4.0);
    }

    #[test]
    fn inverse_trig_specials() {
        use core::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
        let nan = f64::NAN;
        let inf = f64::INFINITY;
        same3(
            [asin_f64, acos_f64, atan_f64],
            [asin_f32, acos_f32, atan_f32],
            &[
                (nan, nan, nan, nan),
                (0.0, 0.0, FRAC_PI_2, 0.0),
                (-0.0, -0.0, FRAC_PI_2, -0.0),
                (1.0, FRAC_PI_2, 0.0, FRAC_PI_4),
                (-1.0, -FRAC_PI_2, PI, -FRAC_PI_4),
                (-inf, nan, nan, -FRAC_PI_2),
                (inf, nan, nan, FRAC_PI_2),
            ],
        );
        for x in [1.5, -1.0000001, 1e300] {
            assert!(asin_f64(x).is_nan() && acos_f64(-x).is_nan() && asin_f32(x as f32).is_nan());
        }
        same(asin_f64(5e-324), 5e-324);
        same(atan_f64(-1e-310), -1e-310);
        let cases = [
            (0.0, 1.0, 0.0),
            (-0.0, 1.0, -0.0),
            (0.0, 0.0, 0.0),
            (-0.0, 0.0, -0.0),
            (0.0, -0.0, PI),
            (-0.0, -0.0, -PI),
            (0.0, -1.0, PI),
            (-0.0, -1.0, -PI),
            (1.0, 0.0, FRAC_PI_2),
            (-1.0, -0.0, -FRAC_PI_2),
            (inf, inf, FRAC_PI_4),
            (-inf, inf, -FRAC_PI_4),
            (inf, -inf, 3.0 * FRAC_PI_4),
            (-inf, -inf, -3.0 * FRAC_PI_4),
            (inf, 1.0, FRAC_PI_2),
            (-inf, -1.0, -FRAC_PI_2),
            (1.0, inf, 0.0),
            (-1.0, inf, -0.0),
            (1.0, -inf, PI),
            (-1.0, -inf, -PI),
            (nan, 1.0, nan),
            (1.0, nan, nan),
            (inf, nan, nan),
            (1e-300, -1e300, PI),
            (1e300, 1e-300, FRAC_PI_2),
            (5e-324, 1e300, 0.0),
            (1e-300, 1e10, 1e-310),
        ];
        for (y, x, want) in cases {
            same(atan2_f64(y, x), want);
            same(
                atan2_f32(y as f32, x as f32),
                (y as f32 as f64).atan2(x as f32 as f64) as f32,
            );
        }
    }
}
