//! Sin, Cos and Tan: `x = q pi/2 + r` with `|r| <= pi/4` carried as a head and
//! a tail, then a polynomial of `r`.
//!
//! Below `2^20` the reduction is Cody-Waite's, `pi/2` in three f64 parts with
//! fused multiply-adds, good to about `2^-100` relative; above, a Payne-Hanek
//! reduction multiplies the significand by a 192-bit window of `2/pi`'s bits
//! in integer arithmetic, correct up to the largest finite f64 (whose nearest
//! approach to a multiple of `pi/2` is about `2^-61`). The f32 kinds evaluate
//! the f64 ones and round once.

use super::real::{fast_two_sum, poly, two_sum, Real};

pub(crate) const PIO2_1: f64 = core::f64::consts::FRAC_PI_2;
pub(crate) const PIO2_2: f64 = 6.123233995736766e-17;
const PIO2_3: f64 = -1.4973849048591698e-33;
const TWO_OVER_PI: f64 = core::f64::consts::FRAC_2_PI;

/// 2^-128.
const TWO_M128: f64 = 2.938735877055719e-39;

/// Below this magnitude the Cody-Waite reduction serves.
const SMALL: f64 = 1048576.0;

/// `sin(r) = r + r z S(z)`, `z = r^2 <= (pi/4)^2`. gen_coeffs.py sin, f64: 2^-54.0.
const S: &[f64] = &[
    -0.16666666666666666,
    0.008333333333333331,
    -0.00019841269841265063,
    2.7557319219337312e-06,
    -2.5052106231802837e-08,
    1.6058531516797758e-10,
    -7.586691094197958e-13,
];
/// `cos(r) = 1 - z/2 + z^2 C(z)`. gen_coeffs.py cos, f64: 2^-54.0.
const C: &[f64] = &[
    0.041666666666666664,
    -0.0013888888888888887,
    2.4801587301584645e-05,
    -2.755731922140179e-07,
    2.0876755790721963e-09,
    -1.1470460830795304e-11,
    4.7458685530816656e-14,
];

/// `2/pi`'s bits after the binary point, behind 64 zero bits, in big-endian words.
const TWO_OVER_PI_BITS: [u64; 20] = [
    0x0000000000000000,
    0xa2f9836e4e441529,
    0xfc2757d1f534ddc0,
    0xdb6295993c439041,
    0xfe5163abdebbc561,
    0xb7246e3a424dd2e0,
    0x06492eea09d1921c,
    0xfe1deb1cb129a73e,
    0xe88235f52ebb4484,
    0xe99c7026b45f7e41,
    0x3991d639835339f4,
    0x9c845f8bbdf9283b,
    0x1ff897ffde05980f,
    0xef2f118b5a0a6d1f,
    0x6d367ecf27cb09b7,
    0x4f463f669e5fea2d,
    0x7527bac7ebe5f17b,
    0x3d0739f78a5292ea,
    0x6bfb5fb11f8d5d08,
    0x56033046fc7b6bab,
];

/// `(q, rh, rl)` with `x = k pi/2 + rh + rl`, `q = k mod 4`, for `|x| < SMALL`.
#[inline(always)]
fn reduce_small(x: f64) -> (u64, f64, f64) {
    let k = (x * TWO_OVER_PI + <f64 as Real>::SHIFTER) - <f64 as Real>::SHIFTER;
    let q = (k + <f64 as Real>::SHIFTER).to_bits() & 3;
    // Exact: the difference is a multiple of the ulps of x and PIO2_1 below 1.
    let r1 = (-k).mul_add(PIO2_1, x);
    let ph = k * PIO2_2;
    let pl = k.mul_add(PIO2_3, k.mul_add(PIO2_2, -ph));
    let (h, e) = two_sum(r1, -ph);
    let (rh, rl) = fast_two_sum(h, e - pl);
    (q, rh, rl)
}

/// `(q, rh, rl)` as [`reduce_small`] for a finite `|x| >= SMALL`, by Payne-Hanek.
fn reduce_large(x: f64) -> (u64, f64, f64) {
    let bits = x.abs().to_bits();
    // |x| = m 2^e, m an integer of 53 bits, e >= -32.
    let e = (bits >> 52) as i64 - 1075;
    let m = (bits & ((1 << 52) - 1)) | (1 << 52);
    // x 2/pi = m 2^e sum(b_i 2^-i); the terms i <= e - 2 are multiples of 4.
    // The window takes b_i for i in [e - 1, e + 190], bit e + 62 of the table on.
    let j = (e + 62) as usize;
    let (w, sh) = (j / 64, (j % 64) as u32);
    let word = |i: usize| {
        let a = TWO_OVER_PI_BITS[w + i];
        if sh == 0 {
            a
        } else {
            a << sh | TWO_OVER_PI_BITS[w + i + 1] >> (64 - sh)
        }
    };
    let (w0, w1, w2) = (word(0), word(1), word(2));
    // m W mod 2^192, W the window; x 2/pi = m W 2^-190 mod 4.
    let p2 = m as u128 * w2 as u128;
    let p1 = m as u128 * w1 as u128;
    let p0 = m as u128 * w0 as u128;
    let t1 = (p2 >> 64) + (p1 as u64 as u128);
    let t2 = (t1 >> 64) + (p1 >> 64) + (p0 as u64 as u128);
    let (r0, r1, r2) = (p2 as u64, t1 as u64, t2 as u64);
    // The quadrant in the top two bits, the fraction in the next 128, rounded to the nearest quadrant.
    let f = ((r2 << 2 | r1 >> 62) as u128) << 64 | (r1 << 2 | r0 >> 62) as u128;
    let q = (r2 >> 62) + (f >> 127) as u64;
    let f = f as i128; // the fraction less 1 where it was at least 1/2
    let fh = f as f64;
    // fh rounds to 2^127 only where f is within 2^73 of it: the saturated
    // integer then errs by 1 in 2^128, far below the fraction's own error.
    let fl = f.wrapping_sub(fh as i128) as f64;
    let (a, b) = (fh * TWO_M128, fl * TWO_M128);
    let rh = a * PIO2_1;
    let rl = a.mul_add(PIO2_1, -rh) + a.mul_add(PIO2_2, b * PIO2_1);
    let (rh, rl) = fast_two_sum(rh, rl);
    if x < 0.0 {
        (q.wrapping_neg() & 3, -rh, -rl)
    } else {
        (q & 3, rh, rl)
    }
}

/// `sin(rh + rl)` for `|rh| <= pi/4`, `rl` below `rh`'s ulp.
#[inline(always)]
fn sin_kernel(rh: f64, rl: f64) -> f64 {
    let z = rh * rh;
    rh + (rh * z).mul_add(poly(z, S), rl * 0.5f64.mul_add(-z, 1.0))
}

/// `cos(rh + rl)` for `|rh| <= pi/4`, `rl` below `rh`'s ulp.
#[inline(always)]
fn cos_kernel(rh: f64, rl: f64) -> f64 {
    let z = rh * rh;
    let ze = rh.mul_add(rh, -z);
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    // 1 - hz = w + ((1 - w) - hz) exactly.
    w + (((1.0 - w) - hz) + (z * z).mul_add(poly(z, C), -rh.mul_add(rl, 0.5 * ze)))
}

/// Which of sin, cos and tan.
#[derive(Clone, Copy)]
enum Fun {
    Sin,
    Cos,
    Tan,
}

/// The function `f` of `x = k pi/2 + rh + rl`, `q = k mod 4`.
#[inline(always)]
fn finish(f: Fun, x: f64, (q, rh, rl): (u64, f64, f64)) -> f64 {
    let s = sin_kernel(rh, rl);
    let c = cos_kernel(rh, rl);
    let odd = q & 1 != 0;
    let y = match f {
        Fun::Sin => {
            let v = if odd { c } else { s };
            if q & 2 != 0 {
                -v
            } else {
                v
            }
        }
        Fun::Cos => {
            let v = if odd { s } else { c };
            if (q + 1) & 2 != 0 {
                -v
            } else {
                v
            }
        }
        // -c / s or s / c, one division.
        Fun::Tan => f64::select(odd, -c, s) / f64::select(odd, s, c),
    };
    // ±0 keeps its sign in sin and tan; inf and NaN give NaN.
    if x == 0.0 && !matches!(f, Fun::Cos) {
        x
    } else if x.abs() < f64::INFINITY {
        y
    } else {
        f64::NAN
    }
}

#[inline(always)]
fn eval(f: Fun, x: f64) -> f64 {
    if x.abs() < SMALL {
        finish(f, x, reduce_small(x))
    } else {
        finish(f, x, reduce_large(x))
    }
}

/// The arguments that the branch-free Cody-Waite path serves: the small,
/// and the infinities and NaNs, of which every path makes a NaN.
#[inline(always)]
fn trig_ordinary(x: f64) -> bool {
    !(SMALL..f64::INFINITY).contains(&x.abs())
}

#[inline(always)]
fn sin_full(x: f64) -> f64 {
    eval(Fun::Sin, x)
}

#[inline(always)]
fn sin_fast(x: f64) -> f64 {
    finish(Fun::Sin, x, reduce_small(x))
}

#[inline(always)]
fn cos_full(x: f64) -> f64 {
    eval(Fun::Cos, x)
}

#[inline(always)]
fn cos_fast(x: f64) -> f64 {
    finish(Fun::Cos, x, reduce_small(x))
}

#[inline(always)]
fn tan_full(x: f64) -> f64 {
    eval(Fun::Tan, x)
}

#[inline(always)]
fn tan_fast(x: f64) -> f64 {
    finish(Fun::Tan, x, reduce_small(x))
}

super::split_f64_kind! {
    false, trig_ordinary, sin_fast, sin_full, sin_f32, sin_f64, sin_f32_slice, sin_f64_slice,
    /// The sine, its argument reduced exactly enough at every finite magnitude.
    ///
    /// Measured max error: 0.50 ulp (f32), 0.58 ulp (f64).
    /// Specials: NaN -> NaN, ±inf -> NaN, ±0 -> ±0.
}

super::split_f64_kind! {
    false, trig_ordinary, cos_fast, cos_full, cos_f32, cos_f64, cos_f32_slice, cos_f64_slice,
    /// The cosine, its argument reduced exactly enough at every finite magnitude.
    ///
    /// Measured max error: 0.50 ulp (f32), 0.66 ulp (f64).
    /// Specials: NaN -> NaN, ±inf -> NaN, ±0 -> 1.
}

super::split_f64_kind! {
    false, trig_ordinary, tan_fast, tan_full, tan_f32, tan_f64, tan_f32_slice, tan_f64_slice,
    /// The tangent, the quotient of sin and cos kernels of the reduced argument.
    ///
    /// Measured max error: 0.50 ulp (f32), 1.63 ulp (f64).
    /// Specials: NaN -> NaN, ±inf -> NaN, ±0 -> ±0.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::*;

    /// f32 arguments over the whole range, near multiples of pi/2 and in a few periods.
    fn args32() -> Vec<f32> {
        let mut a = sweep32(-f32::MAX, f32::MAX, 600_000);
        a.extend(linear32(-10.0, 10.0, 200_000));
        for k in 1..20000 {
            let c = (k as f64 * core::f64::consts::FRAC_PI_2) as f32;
            a.extend([
                c,
                f32::from_bits(c.to_bits() + 1),
                f32::from_bits(c.to_bits() - 1),
                -c,
            ]);
        }
        // Among the f32 nearest to multiples of pi/2.
        a.extend([16367173.0, 1.6961276e8, 3.4e38, 1e30, 8.0e37]);
        a
    }

    #[test]
    fn sin_cos_tan_accuracy() {
        let a = args32();
        let mut worst = 0.0f64;
        worst = worst.max(measure32("sin", sin_f32, sin_f32_slice, f64::sin, &a));
        worst = worst.max(measure32("cos", cos_f32, cos_f32_slice, f64::cos, &a));
        worst = worst.max(measure32("tan", tan_f32, tan_f32_slice, f64::tan, &a));
        worst = worst.max(measure64(
            "sin",
            sin_f64,
            sin_f64_slice,
            &table1(include_bytes!("testdata/sin.bin")),
        ));
        worst = worst.max(measure64(
            "cos",
            cos_f64,
            cos_f64_slice,
            &table1(include_bytes!("testdata/cos.bin")),
        ));
        worst = worst.max(measure64(
            "tan",
            tan_f64,
            tan_f64_slice,
            &table1(include_bytes!("testdata/tan.bin")),
        ));
        assert!(worst < 4.0);
    }

    #[test]
    fn reductions_agree_where_both_serve() {
        // Payne-Hanek below its threshold against Cody-Waite.
        for &x in &sweep32(1.0, SMALL as f32, 20_000) {
            let x = x as f64;
            let (q, h, l) = reduce_small(x);
            let (q2, h2, l2) = reduce_large(x);
            assert_eq!(q, q2, "{x}");
            assert!(
                ((h - h2) + (l - l2)).abs() <= 1e-30 * h.abs().max(1e-300),
                "{x}: {h:e} {l:e} {h2:e} {l2:e}"
            );
        }
    }

    #[test]
    fn trig_specials() {
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for f in [sin_f64, cos_f64, tan_f64] {
                same(f(x), f64::NAN);
            }
            for f in [sin_f32, cos_f32, tan_f32] {
                same(f(x as f32), f32::NAN);
            }
        }
        for x in [0.0, -0.0, 5e-324, -1e-310, 1e-300] {
            same(sin_f64(x), x);
            same(tan_f64(x), x);
            same(cos_f64(x), 1.0);
            same(sin_f32(x as f32), x as f32);
            same(tan_f32(x as f32), x as f32);
        }
        same(sin_f32(1e-45), 1e-45);
        same(sin_f64(f64::MAX), 0.004961954789184062);
        same(cos_f64(f64::MAX), -0.9999876894265599);
    }
}
