//! Asin, Acos, Atan and their hyperbolic twins on complex numbers.
//!
//! Asin and Acos follow Hull, Fairgrieve and Tang ("Implementing the complex
//! arcsine and arccosine functions using exception handling", 1997): with
//! `r = |z + 1|`, `s = |z - 1|` and `A = (r + s) / 2 >= 1`, `asin z =
//! asin(x / A) + i acosh(A)` in the first quadrant, the real part through an
//! arctangent of `A - x` and the imaginary one through `log1p(A - 1)` where
//! they would cancel, `A - x` and `A - 1` being written without differences
//! of near numbers. Asinh and Acosh follow from them, and Atan from Atanh,
//! `atanh z = log1p(4x / ((1 - x)^2 + y^2)) / 4 + i atan2(2y, (1 - x)(1 + x)
//! - y^2) / 2`, by C99's identities.

use super::{complex_kind, log_abs, narrow, widen, INF};
use crate::loops::column::{C32, C64};
use crate::kinds::{
    acos_f64, acosh_f64, asin_f64, asinh_f64, atan2_f64, atan_f64, atanh_f64, hypot_f64, log1p_f64,
};

const PIO2: f64 = core::f64::consts::FRAC_PI_2;

/// Hull et al.'s crossovers: below `B_CROSS` the real part of asin is
/// `asin(x / A)`, at most `A_CROSS` its imaginary part is `log1p(A - 1 + ...)`.
const B_CROSS: f64 = 0.6417;
const A_CROSS: f64 = 1.5;
/// Above this part (2^27), `asin z = atan2(x, y) + i log(2|z|)` to within 2^-56.
const ASIN_BIG: f64 = 134217728.0;

/// Asin of `x + iy` for `x, y >= 0`, not NaN, in parts that serve Acos too:
/// the real part is `asin(b)` (Acos: `acos(b)`) unless `atan`, then
/// `atan2(x, d)` (Acos: `atan2(d, x)`); the imaginary part is `im`.
struct AsinParts {
    atan: bool,
    b: f64,
    d: f64,
    im: f64,
}

#[inline(always)]
fn asin_parts(x: f64, y: f64) -> AsinParts {
    if y == 0.0 {
        // The real axis: asin x for x <= 1, pi/2 + i acosh x beyond (the cut).
        return if x <= 1.0 {
            AsinParts {
                atan: false,
                b: x,
                d: 0.0,
                im: 0.0,
            }
        } else {
            AsinParts {
                atan: true,
                b: 1.0,
                d: 0.0,
                im: acosh_f64(x),
            }
        };
    }
    if x == 0.0 {
        return AsinParts {
            atan: false,
            b: 0.0,
            d: 0.0,
            im: asinh_f64(y),
        };
    }
    if x > ASIN_BIG || y > ASIN_BIG {
        let im = if x == INF || y == INF {
            INF
        } else {
            let (h, l) = log_abs(x, y, 2.0);
            h + l
        };
        return AsinParts {
            atan: true,
            b: 1.0,
            d: y,
            im,
        };
    }
    let xp1 = x + 1.0;
    let xm1 = x - 1.0;
    let r = hypot_f64(xp1, y);
    let s = hypot_f64(xm1, y);
    let a = 0.5 * (r + s);
    // r - (x + 1) = y^2 rp and, for x > 1, s - (x - 1) = y^2 sp; for x < 1,
    // s - (1 - x) = y^2 sp.
    let rp = 1.0 / (r + xp1);
    let sp = 1.0 / (s + xm1.abs());
    // d = sqrt((A + x)(A - x)), A - x = (y^2 rp + s - (x - 1)) / 2 for x <= 1,
    // y^2 (rp + sp) / 2 beyond.
    let d = if x <= 1.0 {
        (0.5 * (a + x) * (y * y).mul_add(rp, s - xm1)).sqrt()
    } else {
        y * (0.5 * (a + x) * (rp + sp)).sqrt()
    };
    // acosh A = log1p(A - 1 + sqrt((A - 1)(A + 1))), A - 1 = y^2 (rp + sp) / 2
    // for x < 1 (the root with y outside, lest y^2 underflow),
    // (y^2 rp + s + (x - 1)) / 2 beyond.
    let im = if a > A_CROSS {
        acosh_f64(a)
    } else if x < 1.0 {
        let h = 0.5 * (rp + sp);
        log1p_f64((y * y).mul_add(h, y * (h * (a + 1.0)).sqrt()))
    } else {
        let am1 = 0.5 * (y * y).mul_add(rp, s + xm1);
        log1p_f64(am1 + (am1 * (a + 1.0)).sqrt())
    };
    let b = x / a;
    AsinParts {
        atan: b > B_CROSS,
        b,
        d,
        im,
    }
}

#[inline]
fn casin(z: C64) -> C64 {
    let (x, y) = (z.re, z.im);
    if x.is_nan() || y.is_nan() {
        return if y.abs() == INF || x == 0.0 {
            z
        } else if x.abs() == INF {
            C64::new(f64::NAN, INF.copysign(y))
        } else {
            C64::new(f64::NAN, f64::NAN)
        };
    }
    let p = asin_parts(x.abs(), y.abs());
    let re = if p.atan {
        atan2_f64(x.abs(), p.d)
    } else {
        asin_f64(p.b)
    };
    C64::new(re.copysign(x), p.im.copysign(y))
}

#[inline]
fn cacos(z: C64) -> C64 {
    let (x, y) = (z.re, z.im);
    if x.is_nan() || y.is_nan() {
        return if y.abs() == INF {
            C64::new(x, -y)
        } else if x == 0.0 {
            C64::new(PIO2, y)
        } else if x.abs() == INF {
            C64::new(f64::NAN, -INF.copysign(y))
        } else {
            C64::new(f64::NAN, f64::NAN)
        };
    }
    let p = asin_parts(x.abs(), y.abs());
    let re = if p.atan {
        atan2_f64(p.d, x)
    } else {
        acos_f64(p.b.copysign(x))
    };
    C64::new(re, -p.im.copysign(y))
}

/// `asinh z = i asin(-iz)`.
#[inline]
fn casinh(z: C64) -> C64 {
    let w = casin(C64::new(z.im, -z.re));
    C64::new(-w.im, w.re)
}

/// `acosh z = ±i acos z`, the sign making the real part nonnegative.
#[inline]
fn cacosh(z: C64) -> C64 {
    if z.im.is_nan() && z.re.abs() < INF {
        return C64::new(f64::NAN, f64::NAN);
    }
    let w = cacos(z);
    C64::new(w.im.abs(), w.re.copysign(z.im))
}

complex_kind! {
    casin, asin_c32, asin_c64, asin_c32_slice, asin_c64_slice,
    /// The arcsine, of real part in `[-pi/2, pi/2]`.
    ///
    /// Measured max error: 0.50 ulp (c32), 2.47 ulp (c64) of `|asin z|` per part.
    /// Odd. Cuts: the real axis beyond ±1, `asin(x ± 0i) = pi/2 ± i acosh x`
    /// for x > 1; `asin(x ± 0i) = asin(x) ± 0i` for |x| <= 1 and `asin(±0 +
    /// iy) = ±0 + i asinh y`. Specials (C99, as `-i asinh(iz)`), for x, y >= 0
    /// and the rest by the symmetries: `x + inf i`: `+0 + inf i` for finite
    /// x, `pi/4 + inf i` for x = inf; `inf + iy`: `pi/2 + inf i` for finite y;
    /// `±0 + NaN i`: `±0 + NaN i`; `NaN ± inf i`: `NaN ± inf i`; `±inf + NaN
    /// i`: `NaN ± inf i` (the sign C99 leaves open: the NaN's); other NaN
    /// parts: NaN + NaN i.
}

complex_kind! {
    cacos, acos_c32, acos_c64, acos_c32_slice, acos_c64_slice,
    /// The arccosine, of real part in `[0, pi]`.
    ///
    /// Measured max error: 0.50 ulp (c32), 2.29 ulp (c64) of `|acos z|` per part.
    /// Cuts: the real axis beyond ±1, `acos(x ± 0i) = 0 ∓ i acosh x` for x >
    /// 1, `pi ∓ i acosh|x|` for x < -1; `acos(x ± 0i) = acos(x) ∓ 0i` for |x|
    /// <= 1. Specials (C99), for y >= 0 and the rest by conj symmetry: `x +
    /// inf i`: `pi/2 - inf i` for finite x, `pi/4 - inf i` for x = inf, `3pi/4
    /// - inf i` for x = -inf; `inf + iy`: `+0 - inf i` and `-inf + iy`: `pi -
    /// inf i` for finite y; `±0 + NaN i`: `pi/2 + NaN i`; `NaN + inf i`: `NaN -
    /// inf i`; `±inf + NaN i`: `NaN ∓ inf i` (the sign C99 leaves open: the
    /// NaN's, negated); other NaN parts: NaN + NaN i.
}

complex_kind! {
    casinh, asinh_c32, asinh_c64, asinh_c32_slice, asinh_c64_slice,
    /// The inverse hyperbolic sine, `i asin(-iz)`, of imaginary part in `[-pi/2, pi/2]`.
    ///
    /// Measured max error: 0.50 ulp (c32), 2.47 ulp (c64) of `|asinh z|` per part.
    /// Odd. Cuts: the imaginary axis beyond ±i, `asinh(±0 + iy) = ±acosh y +
    /// i pi/2` for y > 1; `asinh(x ± 0i) = asinh(x) ± 0i` and `asinh(±0 + iy)
    /// = ±0 + i asin y` for |y| <= 1. Specials (C99), for x, y >= 0 and the
    /// rest by the symmetries: `inf + iy`: `inf + 0i` for finite y, `inf + i
    /// pi/4` for y = inf; `x + inf i`: `inf + i pi/2` for finite x; `NaN ±
    /// 0i`: `NaN ± 0i`; `±inf + NaN i`: `±inf + NaN i`; `NaN ± inf i`: `±inf +
    /// NaN i` (the sign C99 leaves open: the NaN's); other NaN parts: NaN +
    /// NaN i.
}

complex_kind! {
    cacosh, acosh_c32, acosh_c64, acosh_c32_slice, acosh_c64_slice,
    /// The inverse hyperbolic cosine, of real part `>= 0` and imaginary part
    /// in `[-pi, pi]`.
    ///
    /// Measured max error: 0.50 ulp (c32), 2.29 ulp (c64) of `|acosh z|` per part.
    /// Cut: the real axis below 1, `acosh(x ± 0i) = +0 ± i acos x` for |x| <=
    /// 1, `acosh|x| ± i pi` below -1; `acosh(x ± 0i) = acosh(x) ± 0i` for x >= 1.
    /// Specials (C99), for y >= 0 and the rest by conj symmetry: `±0 + 0i`:
    /// `+0 + i pi/2`; `x + inf i`: `+inf + i pi/2` for finite x, `+inf + i
    /// pi/4` for x = inf, `+inf + i 3pi/4` for x = -inf; `inf + iy`: `+inf +
    /// 0i` and `-inf + iy`: `+inf + i pi` for finite y; `±inf + NaN i` and
    /// `NaN ± inf i`: `+inf + NaN i`; other NaN parts (a finite x with a NaN y
    /// included): NaN + NaN i.
}

/// Above this part (2^500), `atanh z = x / |z|^2 ± i pi/2` to within 2^-500.
const ATANH_BIG: f64 = 3.273390607896142e150;
/// 2^-600: the scale of `x / |z|^2` there.
const TWO_M600: f64 = 2.409919865102884e-181;
/// Below this (2^-900) `|1 - z|^2` is taken through its logarithm.
const ATANH_NEAR_ONE: f64 = 1.1830521861667747e-271;

#[inline]
fn catanh(z: C64) -> C64 {
    let (x, y) = (z.re, z.im);
    if x.is_nan() || y.is_nan() {
        return if x == 0.0 {
            z
        } else if x.abs() == INF {
            C64::new(0.0f64.copysign(x), y)
        } else if y.abs() == INF {
            C64::new(0.0f64.copysign(x), PIO2.copysign(y))
        } else {
            C64::new(f64::NAN, f64::NAN)
        };
    }
    if x == 0.0 {
        // atanh(iy) = i atan y.
        return C64::new(x, atan_f64(y));
    }
    let (ax, ay) = (x.abs(), y.abs());
    if y == 0.0 && ax <= 1.0 {
        return C64::new(atanh_f64(x), y);
    }
    let (re, im) = if ax > ATANH_BIG || ay > ATANH_BIG {
        let re = if ax == INF || ay == INF {
            0.0
        } else {
            let (sx, sy) = (ax * TWO_M600, ay * TWO_M600);
            sx / sx.mul_add(sx, sy * sy) * TWO_M600
        };
        (re, PIO2)
    } else {
        // 1 - ax is exact wherever it is small.
        let u = 1.0 - ax;
        let den = u.mul_add(u, ay * ay);
        let re = if den < ATANH_NEAR_ONE {
            // At the branch point: |1 + z| = 2 to within 2^-450, so the real
            // part is -log(|1 - z| / 2) / 2.
            let (h, l) = log_abs(u.abs(), ay, -2.0);
            -0.5 * (h + l)
        } else {
            0.25 * log1p_f64(4.0 * ax / den)
        };
        (
            re,
            0.5 * atan2_f64(2.0 * ay, u.mul_add(1.0 + ax, -(ay * ay))),
        )
    };
    C64::new(re.copysign(x), im.copysign(y))
}

/// `atan z = -i atanh(iz)`.
#[inline]
fn catan(z: C64) -> C64 {
    let w = catanh(C64::new(-z.im, z.re));
    C64::new(w.im, -w.re)
}

complex_kind! {
    catanh, atanh_c32, atanh_c64, atanh_c32_slice, atanh_c64_slice,
    /// The inverse hyperbolic tangent, of imaginary part in `[-pi/2, pi/2]`.
    ///
    /// Measured max error: 0.50 ulp (c32), 1.68 ulp (c64) of `|atanh z|` per part.
    /// Odd. Cuts: the real axis beyond ±1, `atanh(x ± 0i) = atanh(1/x) ±
    /// i pi/2` for |x| > 1; `atanh(x ± 0i) = atanh(x) ± 0i` for |x| <= 1 (so
    /// `±1 ± 0i` gives `±inf ± 0i`) and `atanh(±0 + iy) = ±0 + i atan y`.
    /// Specials (C99): `±inf + iy` and `x ± inf i`: `±0 ± i pi/2` (x's sign
    /// on the zero, y's on the angle) for every x, y not NaN; `±0 + NaN i`:
    /// `±0 + NaN i`; `±inf + NaN i`: `±0 + NaN i`; `NaN ± inf i`: `0 ± i
    /// pi/2` (the zero's sign C99 leaves open: the NaN's); other NaN parts:
    /// NaN + NaN i.
}

complex_kind! {
    catan, atan_c32, atan_c64, atan_c32_slice, atan_c64_slice,
    /// The arctangent, `-i atanh(iz)`, of real part in `[-pi/2, pi/2]`.
    ///
    /// Measured max error: 0.50 ulp (c32), 1.68 ulp (c64) of `|atan z|` per part.
    /// Odd. Cuts: the imaginary axis beyond ±i; `atan(x ± 0i) = atan(x) ±
    /// 0i`. Specials: those of [`atanh_c64`] through the identity (C99).
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use core::f64::consts::{FRAC_PI_4, PI};

    #[test]
    fn inverse_accuracy() {
        let (w32, w64) = measure_kinds(
            7,
            200_000,
            &[
                ("asin", asin_c32, asin_c32_slice, asin_c64),
                ("acos", acos_c32, acos_c32_slice, acos_c64),
                ("atan", atan_c32, atan_c32_slice, atan_c64),
                ("asinh", asinh_c32, asinh_c32_slice, asinh_c64),
                ("acosh", acosh_c32, acosh_c32_slice, acosh_c64),
                ("atanh", atanh_c32, atanh_c32_slice, atanh_c64),
            ],
            &[
                ("asin", asin_c64, asin_c64_slice),
                ("acos", acos_c64, acos_c64_slice),
                ("atan", atan_c64, atan_c64_slice),
                ("asinh", asinh_c64, asinh_c64_slice),
                ("acosh", acosh_c64, acosh_c64_slice),
                ("atanh", atanh_c64, atanh_c64_slice),
            ],
        );
        assert!(w32 < 1.0 && w64 < 4.0);
    }

    #[test]
    fn inverse_specials() {
        let inf = f64::INFINITY;
        let (acosh2, atanh_half) = (1.3169578969248166, 0.5493061443340549);
        // asinh (C99 G.6.2.2); asin is -i asinh(iz).
        for (z, want) in [
            (c(0.0, 0.0), c(0.0, 0.0)),
            (c(-0.0, -0.0), c(-0.0, -0.0)),
            (c(1.0, inf), c(inf, PIO2)),
            (c(-1.0, -inf), c(-inf, -PIO2)),
            (c(1.0, NAN), c(NAN, NAN)),
            (c(inf, 1.0), c(inf, 0.0)),
            (c(-inf, -1.0), c(-inf, -0.0)),
            (c(inf, inf), c(inf, FRAC_PI_4)),
            (c(inf, NAN), c(inf, NAN)),
            (c(NAN, 0.0), c(NAN, 0.0)),
            (c(NAN, -0.0), c(NAN, -0.0)),
            (c(NAN, 1.0), c(NAN, NAN)),
            (c(NAN, inf), c(inf, NAN)),
            (c(-NAN, inf), c(-inf, NAN)),
            (c(NAN, NAN), c(NAN, NAN)),
            (c(0.0, 2.0), c(acosh2, PIO2)),
            (c(-0.0, 2.0), c(-acosh2, PIO2)),
            (c(0.0, -2.0), c(acosh2, -PIO2)),
            (c(0.0, 0.5), c(0.0, crate::kinds::asin_f64(0.5))),
        ] {
            same_kind("asinh", asinh_c64, asinh_c32, z, want);
            let iz = c(-z.im, z.re);
            same_c(&format!("asin({iz})"), asin_c64(iz), c(-want.im, want.re));
        }
        // acos (C99 G.6.1.1)
        for (z, want) in [
            (c(0.0, 0.0), c(PIO2, -0.0)),
            (c(-0.0, -0.0), c(PIO2, 0.0)),
            (c(0.0, NAN), c(PIO2, NAN)),
            (c(1.0, inf), c(PIO2, -inf)),
            (c(-1.0, -inf), c(PIO2, inf)),
            (c(1.0, NAN), c(NAN, NAN)),
            (c(-inf, 1.0), c(PI, -inf)),
            (c(inf, 1.0), c(0.0, -inf)),
            (c(-inf, inf), c(3.0 * FRAC_PI_4, -inf)),
            (c(inf, inf), c(FRAC_PI_4, -inf)),
            (c(inf, NAN), c(NAN, -inf)),
            (c(NAN, 1.0), c(NAN, NAN)),
            (c(NAN, inf), c(NAN, -inf)),
            (c(NAN, NAN), c(NAN, NAN)),
            (c(1.0, 0.0), c(0.0, -0.0)),
            (c(-1.0, -0.0), c(PI, 0.0)),
            (c(2.0, 0.0), c(0.0, -acosh2)),
            (c(2.0, -0.0), c(0.0, acosh2)),
            (c(-2.0, 0.0), c(PI, -acosh2)),
        ] {
            same_c(&format!("acos({z})"), acos_c64(z), want);
        }
        // acosh (C99 G.6.2.1)
        for (z, want) in [
            (c(0.0, 0.0), c(0.0, PIO2)),
            (c(-0.0, -0.0), c(0.0, -PIO2)),
            (c(1.0, inf), c(inf, PIO2)),
            (c(1.0, NAN), c(NAN, NAN)),
            (c(0.0, NAN), c(NAN, NAN)),
            (c(-inf, 1.0), c(inf, PI)),
            (c(inf, -1.0), c(inf, -0.0)),
            (c(-inf, inf), c(inf, 3.0 * FRAC_PI_4)),
            (c(inf, inf), c(inf, FRAC_PI_4)),
            (c(-inf, NAN), c(inf, NAN)),
            (c(NAN, 1.0), c(NAN, NAN)),
            (c(NAN, -inf), c(inf, NAN)),
            (c(NAN, NAN), c(NAN, NAN)),
            (c(1.0, 0.0), c(0.0, 0.0)),
            (c(-2.0, 0.0), c(acosh2, PI)),
            (c(-2.0, -0.0), c(acosh2, -PI)),
            (c(0.5, -0.0), c(0.0, -crate::kinds::acos_f64(0.5))),
        ] {
            same_c(&format!("acosh({z})"), acosh_c64(z), want);
        }
        // atanh (C99 G.6.2.3); atan is -i atanh(iz).
        for (z, want) in [
            (c(0.0, 0.0), c(0.0, 0.0)),
            (c(-0.0, -0.0), c(-0.0, -0.0)),
            (c(0.0, NAN), c(0.0, NAN)),
            (c(1.0, 0.0), c(inf, 0.0)),
            (c(-1.0, -0.0), c(-inf, -0.0)),
            (c(1.0, inf), c(0.0, PIO2)),
            (c(-1.0, -inf), c(-0.0, -PIO2)),
            (c(1.0, NAN), c(NAN, NAN)),
            (c(inf, 1.0), c(0.0, PIO2)),
            (c(inf, inf), c(0.0, PIO2)),
            (c(-inf, NAN), c(-0.0, NAN)),
            (c(NAN, 1.0), c(NAN, NAN)),
            (c(NAN, inf), c(0.0, PIO2)),
            (c(NAN, NAN), c(NAN, NAN)),
            (c(2.0, 0.0), c(atanh_half, PIO2)),
            (c(2.0, -0.0), c(atanh_half, -PIO2)),
            (c(0.0, 1.0), c(0.0, FRAC_PI_4)),
            (c(1.0, 1e-300), c(345.73433753938684, FRAC_PI_4)),
        ] {
            same_c(&format!("atanh({z})"), atanh_c64(z), want);
            let iz = c(-z.im, z.re);
            same_c(&format!("atan({iz})"), atan_c64(iz), c(-want.im, want.re));
        }
        // Far out: x / |z|^2 + i pi/2 (mpmath: 5e-301).
        let z = atanh_c64(c(1e300, 1e300));
        assert!((z.re / 5e-301 - 1.0).abs() < 4e-16 && z.im == PIO2, "{z}");
    }
}
