//! Pow: `|x|^y = exp(y log|x|)`, the logarithm carried to about 2^-60 in a
//! head and a tail, their product with `y` likewise, and an exponential of a
//! head and a tail; signs and special cases by C99's rules. The f32 kind
//! evaluates the f64 one and rounds once.

use super::exp::exp_with;
use super::log::LogConsts;
use super::real::{fast_two_sum, poly, two_sum, Real};

/// 2/3 to twice the precision: R(0).
const TWO_THIRDS_HI: f64 = 0.6666666666666666;
const TWO_THIRDS_LO: f64 = 3.700743415417188e-17;

/// `(h, l)` with `h + l = log(x)` to about 2^-60 relative, for a positive
/// finite `x`: `x = 2^e (1 + f)`, `log(1 + f) = 2s + s^3 R(s^2)`, `s = f / (2 + f)`
/// carried to twice the precision.
#[inline(always)]
fn log_dw(x: f64) -> (f64, f64) {
    let (m, e) = x.frexp();
    let f = m - 1.0;
    let (dh, dl) = fast_two_sum(2.0, f);
    let s = f / dh;
    // f = s (dh + dl) + rem
    let sl = ((-s).mul_add(dh, f) - s * dl) / dh;
    // s^3 = ch + cl to about twice the precision.
    let z = s * s;
    let zl = s.mul_add(s, -z);
    let ch = s * z;
    let cl = s.mul_add(z, -ch) + s * zl;
    // s^3 R(z) = s^3 (2/3) + s^3 z R'(z), the first term to twice the
    // precision, with 2 s^2 sl for s's tail.
    let th = ch * TWO_THIRDS_HI;
    let tl = ch.mul_add(TWO_THIRDS_HI, -th)
        + ch.mul_add(TWO_THIRDS_LO, cl.mul_add(TWO_THIRDS_HI, 2.0 * z * sl));
    let rest = (ch * z) * poly(z, &f64::R[1..]);
    let (a, b) = two_sum(e * f64::LN2_HI, s + s);
    let (a, b2) = two_sum(a, th);
    let t = (b + b2) + (e.mul_add(f64::LN2_LO, sl + sl) + (tl + rest));
    fast_two_sum(a, t)
}

/// Whether `v` is an integer (infinities count as even ones).
#[inline(always)]
fn is_int(v: f64) -> bool {
    let a = v.abs();
    a >= 4503599627370496.0 || (a + 4503599627370496.0) - 4503599627370496.0 == a
}

#[inline(always)]
fn pow(x: f64, y: f64) -> f64 {
    let ax = x.abs();
    let (h, l) = log_dw(ax);
    // log|x| at 0 and inf, where log_dw is not defined.
    let (h, l) = if ax == 0.0 {
        (-f64::INFINITY, 0.0)
    } else if ax == f64::INFINITY {
        (ax, 0.0)
    } else {
        (h, l)
    };
    let ph = y * h;
    let pl = y.mul_add(h, -ph) + y * l;
    let pl = if ph.abs() < 1e300 { pl } else { 0.0 };
    let r = exp_with(ph, Some(pl));
    let y_int = is_int(y);
    let y_odd = y_int && !is_int(0.5 * y);
    let r = if x.is_sign_negative() && y_odd { -r } else { r };
    if y == 0.0 || x == 1.0 || (ax == 1.0 && y.abs() == f64::INFINITY) {
        1.0
    } else if x.is_nan() || y.is_nan() {
        x + y
    } else if x < 0.0 && x > -f64::INFINITY && !y_int {
        f64::NAN
    } else {
        r
    }
}

/// `x` to the power `y`.
///
/// Measured max error: 1.00 ulp (f64).
/// Specials (C99): `pow(x, ±0) = 1` for every x, NaN included; `pow(1, y) = 1`
/// for every y, NaN included; `pow(-1, ±inf) = 1`; otherwise a NaN operand
/// gives NaN; a negative finite x and a finite non-integer y give NaN;
/// `pow(±0, y)`: ±inf for an odd integer y < 0, +inf for other y < 0 (-inf
/// included), ±0 for an odd integer y > 0, +0 for other y > 0; `pow(x, -inf)`:
/// +inf for |x| < 1, +0 for |x| > 1; `pow(x, +inf)`: +0 for |x| < 1, +inf for
/// |x| > 1; `pow(-inf, y)`: -0 for an odd integer y < 0, +0 for other y < 0,
/// -inf for an odd integer y > 0, +inf for other y > 0; `pow(+inf, y)`: +0 for
/// y < 0, +inf for y > 0; a negative x with an odd integer y gives -|x|^y;
/// overflow to ±inf, underflow gradual to ±0.
#[inline]
pub fn pow_f64(x: f64, y: f64) -> f64 {
    pow(x, y)
}

/// [`pow_f64`] of f32 operands, rounded once to f32; the same special cases.
///
/// Measured max error: 0.50 ulp (f32).
#[inline]
pub fn pow_f32(x: f32, y: f32) -> f32 {
    pow(x as f64, y as f64) as f32
}

/// `pow_f32` of each pair of `x` and `y` into `out`, all of one length.
#[inline]
pub fn pow_f32_slice(x: &[f32], y: &[f32], out: &mut [f32]) {
    super::map_slice2(x, y, out, pow_f32)
}

/// `pow_f64` of each pair of `x` and `y` into `out`, all of one length.
#[inline]
pub fn pow_f64_slice(x: &[f64], y: &[f64], out: &mut [f64]) {
    super::map_slice2(x, y, out, pow_f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::*;

    #[test]
    fn pow_accuracy() {
        let t = table2(include_bytes!("testdata/pow.bin"));
        let (xs, ys): (Vec<f64>, Vec<f64>) = t.iter().map(|r| (r[0], r[1])).unzip();
        let mut out = vec![0.0; t.len()];
        pow_f64_slice(&xs, &ys, &mut out);
        let mut w64 = (0.0f64, 0.0, 0.0);
        for (r, &o) in t.iter().zip(&out) {
            assert_eq!(o.to_bits(), pow_f64(r[0], r[1]).to_bits());
            let e = err64(o, r[2], r[3]);
            if e > w64.0 || e.is_nan() {
                w64 = (e, r[0], r[1]);
            }
        }
        // f32: bases over the whole range against exponents of a few scales.
        let bases = sweep32(f32::from_bits(1), f32::MAX, 4001);
        let mut exps = linear32(-4.0, 4.0, 101);
        exps.extend(sweep32(-200.0, 200.0, 200));
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for &x in &bases {
            for &y in &exps {
                xs.extend([x, -x]);
                ys.extend([y, y]);
            }
        }
        let mut out = vec![0.0f32; xs.len()];
        pow_f32_slice(&xs, &ys, &mut out);
        let mut w32 = 0.0f64;
        for i in 0..xs.len() {
            assert_eq!(out[i].to_bits(), pow_f32(xs[i], ys[i]).to_bits());
            w32 = w32.max(err32(out[i], (xs[i] as f64).powf(ys[i] as f64)));
        }
        println!(
            "pow f32: max {w32:.3} ulp; f64: max {:.3} ulp at ({:e}, {:e})",
            w64.0, w64.1, w64.2
        );
        assert!(w32 < 4.0 && w64.0 < 4.0);
    }

    #[test]
    fn pow_specials() {
        let (nan, inf) = (f64::NAN, f64::INFINITY);
        let cases = [
            (nan, 0.0, 1.0),
            (nan, -0.0, 1.0),
            (inf, 0.0, 1.0),
            (1.0, nan, 1.0),
            (1.0, inf, 1.0),
            (-1.0, inf, 1.0),
            (-1.0, -inf, 1.0),
            (nan, 1.0, nan),
            (2.0, nan, nan),
            (-2.0, 0.5, nan),
            (-8.0, 1.0 / 3.0, nan),
            (0.0, -3.0, inf),
            (-0.0, -3.0, -inf),
            (0.0, -2.0, inf),
            (-0.0, -2.0, inf),
            (-0.0, -0.5, inf),
            (-0.0, -inf, inf),
            (0.0, 3.0, 0.0),
            (-0.0, 3.0, -0.0),
            (-0.0, 2.0, 0.0),
            (-0.0, 0.5, 0.0),
            (-0.0, inf, 0.0),
            (0.5, -inf, inf),
            (-0.5, -inf, inf),
            (2.0, -inf, 0.0),
            (-2.0, -inf, 0.0),
            (0.5, inf, 0.0),
            (-0.5, inf, 0.0),
            (2.0, inf, inf),
            (-2.0, inf, inf),
            (-inf, -3.0, -0.0),
            (-inf, -2.0, 0.0),
            (-inf, -0.5, 0.0),
            (-inf, 3.0, -inf),
            (-inf, 2.0, inf),
            (-inf, 0.5, inf),
            (inf, -1.0, 0.0),
            (inf, 0.5, inf),
            (-2.0, 3.0, -8.0),
            (-2.0, 2.0, 4.0),
            (-2.0, -1.0, -0.5),
            (2.0, 1024.0, inf),
            (2.0, -1074.0, 5e-324),
            (-2.0, -1075.0, -0.0),
            (2.0, 0.5, core::f64::consts::SQRT_2),
            (-3.0, 4503599627370497.0, -inf),
            (-1.0, 9007199254740992.0, 1.0),
            (-1.0, 4503599627370497.0, -1.0),
            (10.0, -2.0, 0.01),
            (5e-324, 0.5, 2.2227587494850775e-162),
        ];
        for (x, y, want) in cases {
            let got = pow_f64(x, y);
            assert!(
                (got.is_nan() && want.is_nan()) || got.to_bits() == want.to_bits(),
                "pow({x:e}, {y:e}) = {got:e}, want {want:e}"
            );
            same(
                pow_f32(x as f32, y as f32),
                (x as f32 as f64).powf(y as f32 as f64) as f32,
            );
        }
    }
}
