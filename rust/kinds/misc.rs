//! Erf, Hypot and Rsqrt. The f32 kinds evaluate in f64 and round once.

use super::exp::{exp, exp_fast};
use super::real::{poly, Real};

/// `erf(x) = x E(x^2)` on `[0, 1]`. gen_coeffs.py erf, f64: 2^-55.8.
const E: &[f64] = &[
    core::f64::consts::FRAC_2_SQRT_PI,
    -0.3761263890318375,
    0.11283791670954879,
    -0.026866170645076792,
    0.0052239776248180145,
    -0.000854832698083379,
    0.0001205533111164271,
    -1.4925595266831182e-05,
    1.6461000484121368e-06,
    -1.6350312701054695e-07,
    1.4659775274047436e-08,
    -1.1372848856791674e-09,
    5.957176147748911e-11,
];
/// `erfc(x) = exp(-x^2) G1(x - 1.5)` on `[1, 2]`. gen_coeffs.py erfc1, f64: 2^-53.5.
const G1: &[f64] = &[
    0.3215854164543175,
    -0.16362291773256007,
    0.07615103985547739,
    -0.032930905299562635,
    0.013377340953068511,
    -0.005145957547985475,
    0.0018861348769562312,
    -0.0006619300663930904,
    0.00022330994586274217,
    -7.265892257522832e-05,
    2.2864294807967016e-05,
    -6.974987241686018e-06,
    2.067088490322641e-06,
    -5.961119446974675e-07,
    1.6708703859197203e-07,
    -4.585146974854072e-08,
    1.329844554951821e-08,
    -3.4778531023839574e-09,
];
/// `erfc(x) = exp(-x^2) G2(x - 2.75)` on `[2, 3.5]`. gen_coeffs.py erfc2, f64: 2^-53.6.
const G2: &[f64] = &[
    0.1936620962790687,
    -0.06323763756063484,
    0.019758592987322816,
    -0.005934337896997966,
    0.0017195818852915683,
    -0.0004821950849815436,
    0.0001311818004875362,
    -3.469860956890751e-05,
    8.940156439196906e-06,
    -2.2473735137402935e-06,
    5.519738191507474e-07,
    -1.3262502467727597e-07,
    3.121531648858328e-08,
    -7.2012225046835695e-09,
    1.6194561547466204e-09,
    -3.601905695321358e-10,
    8.88871719258283e-11,
    -1.9033341776852134e-11,
];
/// `erfc(x) = exp(-x^2) G3(x - 4.75)` on `[3.5, 6]`. gen_coeffs.py erfc3, f64: 2^-54.3.
const G3: &[f64] = &[
    0.11630270721024731,
    -0.02350344859816315,
    0.004661326368972343,
    -0.0009080988970296908,
    0.0001739283040406064,
    -3.277578113462419e-05,
    6.08111455078227e-06,
    -1.1115677201483395e-06,
    2.002919683441791e-07,
    -3.559574699373066e-08,
    6.242438035376163e-09,
    -1.0807615553487736e-09,
    1.8479759770409932e-10,
    -3.12214957291069e-11,
    5.21891018757171e-12,
    -8.616561594719681e-13,
    1.3788567789968384e-13,
    -2.2296939163216056e-14,
    4.418116067216368e-15,
    -6.967058483586665e-16,
];

/// `erf(x)` by an `exp` good for `[-x^2, 0]`.
#[inline(always)]
fn erf_with(x: f64, exp: impl Fn(f64) -> f64) -> f64 {
    let a = x.abs();
    let small = a * poly(a * a, E);
    // exp(-a^2) from a^2 in a head and a tail.
    let sq = a * a;
    let sq_err = a.mul_add(a, -sq);
    // Each piece computed and one chosen, without a branch, so that a
    // slice form's loop vectorises.
    let (g1, g2, g3) = (poly(a - 1.5, G1), poly(a - 2.75, G2), poly(a - 4.75, G3));
    let g = f64::select(a < 2.0, g1, f64::select(a < 3.5, g2, g3));
    let erfc = exp(-sq) * g;
    let erfc = erfc.mul_add(-sq_err, erfc);
    let y = if a < 1.0 {
        small
    } else if a < 6.0 {
        1.0 - erfc
    } else {
        1.0
    };
    if x.is_nan() {
        x
    } else {
        y.copysign(x)
    }
}

/// The ordinary arguments of erf: `|x| < 26`, where [`exp_fast`] serves.
#[inline(always)]
fn erf_ordinary(x: f64) -> bool {
    x.abs() < 26.0
}

#[inline(always)]
fn erf_fast(x: f64) -> f64 {
    erf_with(x, exp_fast)
}

#[inline(always)]
fn erf_full(x: f64) -> f64 {
    erf_with(x, exp)
}

super::split_f64_kind! {
    erf_ordinary, erf_fast, erf_full, erf_f32, erf_f64, erf_f32_slice, erf_f64_slice,
    /// The error function.
    ///
    /// Measured max error: 0.50 ulp (f32), 1.31 ulp (f64).
    /// Specials: NaN -> NaN, ±0 -> ±0, ±inf -> ±1.
}

#[inline(always)]
fn rsqrt(x: f64) -> f64 {
    1.0 / x.sqrt()
}

/// The reciprocal square root `1 / sqrt(x)`: two correct roundings in f64.
///
/// Measured max error: 1.54 ulp (f64).
/// Specials: NaN -> NaN, +0 -> +inf, -0 -> -inf, x < 0 -> NaN, +inf -> +0.
#[inline]
pub fn rsqrt_f64(x: f64) -> f64 {
    rsqrt(x)
}

/// The reciprocal square root `1 / sqrt(x)`: [`rsqrt_f64`] of the f64
/// argument, rounded once.
///
/// Measured max error: 0.50 ulp (f32).
/// Specials: NaN -> NaN, +0 -> +inf, -0 -> -inf, x < 0 -> NaN, +inf -> +0.
#[inline]
pub fn rsqrt_f32(x: f32) -> f32 {
    rsqrt(x as f64) as f32
}

// The slice forms of rsqrt, like hypot's, are not `slice_form`s: they
// keep to the baseline compilation (see `wide.rs`).

/// `rsqrt_f32` of each element of `x` into `out`, of the same length.
pub fn rsqrt_f32_slice(x: &[f32], out: &mut [f32]) {
    super::map_slice(x, out, rsqrt_f32)
}

/// `rsqrt_f64` of each element of `x` into `out`, of the same length.
pub fn rsqrt_f64_slice(x: &[f64], out: &mut [f64]) {
    super::map_slice(x, out, rsqrt_f64)
}

/// `sqrt(x^2 + y^2)` without undue overflow or underflow.
///
/// Measured max error: 0.80 ulp (f64).
/// Specials (C99): an infinite operand gives +inf, even with a NaN; otherwise
/// a NaN operand gives NaN; `hypot(±0, ±0) = +0`.
#[inline]
pub fn hypot_f64(x: f64, y: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    let (a, b) = if ax < ay { (ay, ax) } else { (ax, ay) };
    // Scale the larger to [1, 4) by a power of two, exactly.
    // ea in [-1022, 1022], so both biased exponents lie in [1, 2045].
    let ea = ((a.to_bits() >> 52) as i64 - 1023).clamp(-1022, 1022);
    let up = f64::from_bits(((1023 + ea) as u64) << 52);
    let down = f64::from_bits(((1023 - ea) as u64) << 52);
    let (sa, sb) = (a * down, b * down);
    let r = sa.mul_add(sa, sb * sb).sqrt() * up;
    if ax == f64::INFINITY || ay == f64::INFINITY {
        f64::INFINITY
    } else if x.is_nan() || y.is_nan() {
        x + y
    } else {
        r
    }
}

/// [`hypot_f64`] of f32 operands: exact squares in f64, one rounding of their
/// sum, the square root's, and one to f32.
///
/// Measured max error: 0.50 ulp (f32).
/// Specials as [`hypot_f64`]'s.
#[inline]
pub fn hypot_f32(x: f32, y: f32) -> f32 {
    let (x, y) = (x as f64, y as f64);
    let r = x.mul_add(x, y * y).sqrt() as f32;
    if x.abs() == f64::INFINITY || y.abs() == f64::INFINITY {
        f32::INFINITY
    } else {
        r
    }
}

/// `hypot_f32` of each pair of `x` and `y` into `out`, all of one length.
#[inline]
pub fn hypot_f32_slice(x: &[f32], y: &[f32], out: &mut [f32]) {
    super::map_slice2(x, y, out, hypot_f32)
}

/// `hypot_f64` of each pair of `x` and `y` into `out`, all of one length.
#[inline]
pub fn hypot_f64_slice(x: &[f64], y: &[f64], out: &mut [f64]) {
    super::map_slice2(x, y, out, hypot_f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::*;

    #[test]
    fn erf_rsqrt_accuracy() {
        let mut a = sweep32(-8.0, 8.0, 600_000);
        a.extend(linear32(-6.0, 6.0, 400_000));
        let mut worst = measure32("erf", erf_f32, erf_f32_slice, erf_ref, &a);
        worst = worst.max(measure64(
            "erf",
            erf_f64,
            erf_f64_slice,
            &table1(include_bytes!("testdata/erf.bin")),
        ));
        let r = sweep32(0.0, f32::INFINITY, 1_000_000);
        worst = worst.max(measure32(
            "rsqrt",
            rsqrt_f32,
            rsqrt_f32_slice,
            |x| 1.0 / x.sqrt(),
            &r,
        ));
        assert!(worst < 4.0);
        // rsqrt f64 against a correctly rounded reference: r = 1/sqrt(x) has
        // r^2 x = 1 to within the rounding, checked in twice the precision.
        let mut w = 0.0f64;
        for k in 0..200_000u64 {
            let x = f64::from_bits(
                0x0010_0000_0000_0000u64.wrapping_add(k.wrapping_mul(0x0000_5A3F_0F1E_2D3B)),
            );
            let r = rsqrt_f64(x);
            // 1/sqrt(x) = r (1 + d) with d = (1 - r^2 x) / 2 to first order.
            let rr = r * r;
            let rr_err = r.mul_add(r, -rr);
            let p = rr * x;
            let d = 0.5 * (1.0 - p - rr.mul_add(x, -p) - rr_err * x);
            w = w.max((d * r).abs() / pow2(((r.to_bits() >> 52) as i64 - 1023) - 52));
        }
        println!("rsqrt f64: max {w:.3} ulp");
        assert!(w < 2.0);
    }

    /// Rust's std has no erf: the f32 kind is measured against the f64 one,
    /// whose own error (asserted against mpmath's table) is about 2^-52.
    fn erf_ref(x: f64) -> f64 {
        erf_f64(x)
    }

    #[test]
    fn hypot_accuracy() {
        let t = table2(include_bytes!("testdata/hypot.bin"));
        let (xs, ys): (Vec<f64>, Vec<f64>) = t.iter().map(|r| (r[0], r[1])).unzip();
        let mut out = vec![0.0; t.len()];
        hypot_f64_slice(&xs, &ys, &mut out);
        let mut w64 = 0.0f64;
        for (r, &o) in t.iter().zip(&out) {
            assert_eq!(o.to_bits(), hypot_f64(r[0], r[1]).to_bits());
            w64 = w64.max(err64(o, r[2], r[3]));
        }
        let g = sweep32(-f32::MAX, f32::MAX, 1001);
        let mut w32 = 0.0f64;
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for &x in &g {
            for &y in &g {
                xs.push(x);
                ys.push(y);
            }
        }
        let mut out = vec![0.0; xs.len()];
        hypot_f32_slice(&xs, &ys, &mut out);
        for i in 0..xs.len() {
            assert_eq!(out[i].to_bits(), hypot_f32(xs[i], ys[i]).to_bits());
            w32 = w32.max(err32(out[i], (xs[i] as f64).hypot(ys[i] as f64)));
        }
        println!("hypot f32: max {w32:.3} ulp; f64: max {w64:.3} ulp");
        assert!(w32 < 4.0 && w64 < 4.0);
    }

    #[test]
    fn misc_specials() {
        let (nan, inf) = (f64::NAN, f64::INFINITY);
        for (x, want) in [
            (nan, nan),
            (0.0, 0.0),
            (-0.0, -0.0),
            (inf, 1.0),
            (-inf, -1.0),
            (6.0, 1.0),
            (-1e-310, -1.1283791670955126e-310),
        ] {
            same(erf_f64(x), want);
            same(erf_f32(x as f32), want as f32);
        }
        for (x, want) in [
            (nan, nan),
            (0.0, inf),
            (-0.0, -inf),
            (-1.0, nan),
            (inf, 0.0),
            (4.0, 0.5),
        ] {
            same(rsqrt_f64(x), want);
            same(rsqrt_f32(x as f32), want as f32);
        }
        for (x, y, want) in [
            (inf, nan, inf),
            (nan, -inf, inf),
            (nan, 1.0, nan),
            (0.0, -0.0, 0.0),
            (3.0, -4.0, 5.0),
            (1e308, 1e308, 1.4142135623730951e308),
            (5e-324, 5e-324, 5e-324),
            (1e-320, 0.0, 1e-320),
            (f64::MAX, 1.0, f64::MAX),
        ] {
            same(hypot_f64(x, y), want);
            same(hypot_f64(y, x), want);
            same(
                hypot_f32(x as f32, y as f32),
                (x as f32 as f64).hypot(y as f32 as f64) as f32,
            );
        }
    }
}
