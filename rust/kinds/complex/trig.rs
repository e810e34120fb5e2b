//! Sinh, Cosh and Tanh of complex numbers from the real kinds, and Sin, Cos
//! and Tan by C99's identities `sin z = -i sinh(iz)`, `cos z = cosh(iz)`,
//! `tan z = -i tanh(iz)`, which carry the special values along.

use super::{complex_kind, exp_mul, narrow, widen, INF};
use crate::loops::column::{C32, C64};
use crate::kinds::{cos_f64, cosh_f64, sin_f64, sinh_f64, tan_f64, tanh_f64};

/// Above this `|x|`, `sinh|x| = cosh|x| = e^|x| / 2` and `tanh|x| = 1` to
/// within half an ulp.
const BIG: f64 = 22.0;

/// `-v` where `x` is negative (sign bit set), else `v`.
#[inline(always)]
fn sign_of(x: f64, v: f64) -> f64 {
    if x.is_sign_negative() {
        -v
    } else {
        v
    }
}

#[inline]
fn csinh(z: C64) -> C64 {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return C64::new(sinh_f64(x), y);
    }
    if !y.is_finite() {
        // C99: ±0 and ±inf real parts are kept.
        let re = if x == 0.0 || x.abs() == INF {
            x
        } else {
            f64::NAN
        };
        return C64::new(re, f64::NAN);
    }
    let (c, s) = (cos_f64(y), sin_f64(y));
    let ax = x.abs();
    if ax < BIG {
        C64::new(sinh_f64(x) * c, cosh_f64(x) * s)
    } else {
        // Also inf (e^|x| overflows) and NaN.
        C64::new(
            sign_of(x, exp_mul(ax, 0.0, c, -1.0)),
            exp_mul(ax, 0.0, s, -1.0),
        )
    }
}

complex_kind! {
    csinh, sinh_c32, sinh_c64, sinh_c32_slice, sinh_c64_slice,
    /// The hyperbolic sine `sinh x cos y + i cosh x sin y`.
    ///
    /// Measured max error: 0.50 ulp (c32), 2.13 ulp (c64) of `|sinh z|` per part.
    /// Odd. Specials (C99): `sinh(x ± 0i) = sinh(x) ± 0i` for every x, NaN
    /// included; an infinite or NaN y gives `x + NaN i` for x = ±0 or ±inf,
    /// NaN + NaN i otherwise; `±inf + iy`: `±inf cos y + inf i sin y` for
    /// finite y != 0; NaN x, y != 0: NaN + NaN i.
}

#[inline]
fn ccosh(z: C64) -> C64 {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return C64::new(cosh_f64(x), sign_of(x, y));
    }
    if !y.is_finite() {
        return if x == 0.0 {
            C64::new(f64::NAN, sign_of(y, x))
        } else if x.abs() == INF {
            C64::new(INF, f64::NAN)
        } else {
            C64::new(f64::NAN, f64::NAN)
        };
    }
    let (c, s) = (cos_f64(y), sin_f64(y));
    let ax = x.abs();
    if ax < BIG {
        C64::new(cosh_f64(x) * c, sinh_f64(x) * s)
    } else {
        C64::new(
            exp_mul(ax, 0.0, c, -1.0),
            sign_of(x, exp_mul(ax, 0.0, s, -1.0)),
        )
    }
}

complex_kind! {
    ccosh, cosh_c32, cosh_c64, cosh_c32_slice, cosh_c64_slice,
    /// The hyperbolic cosine `cosh x cos y + i sinh x sin y`.
    ///
    /// Measured max error: 0.50 ulp (c32), 2.02 ulp (c64) of `|cosh z|` per part.
    /// Even. Specials (C99): `cosh(x ± 0i) = cosh(x) + 0i`, the zero of the
    /// sign of `x y`, for every x, NaN included; an infinite or NaN y gives
    /// `NaN + 0i` (the sign of `x y`) for x = ±0, `+inf + NaN i` for x = ±inf,
    /// NaN + NaN i otherwise; `±inf + iy`: `inf cos y ± inf i sin y` for
    /// finite y != 0; NaN x, y != 0: NaN + NaN i.
}

#[inline]
fn ctanh(z: C64) -> C64 {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return C64::new(tanh_f64(x), y);
    }
    if x == 0.0 {
        // tanh(iy) = i tan y; NaN for an infinite or NaN y.
        return C64::new(x, tan_f64(y));
    }
    if !y.is_finite() {
        return if x.abs() == INF {
            C64::new(1.0f64.copysign(x), 0.0f64.copysign(y))
        } else {
            C64::new(f64::NAN, f64::NAN)
        };
    }
    let (c, s) = (cos_f64(y), sin_f64(y));
    let ax = x.abs();
    if ax < BIG || ax.is_nan() {
        // tanh z = (cosh x sinh x + i sin y cos y) / (cos^2 y + sinh^2 x),
        // the denominator a sum of squares (Kahan's form, times cos^2 y).
        let (sh, ch) = (sinh_f64(x), cosh_f64(x));
        let d = c.mul_add(c, sh * sh);
        C64::new(ch * sh / d, s * c / d)
    } else {
        // Im = 4 sin y cos y e^(-2|x|) to within the rounding; ±inf included.
        C64::new(1.0f64.copysign(x), exp_mul(-2.0 * ax, 0.0, s * c, 2.0))
    }
}

complex_kind! {
    ctanh, tanh_c32, tanh_c64, tanh_c32_slice, tanh_c64_slice,
    /// The hyperbolic tangent.
    ///
    /// Measured max error: 0.50 ulp (c32), 3.30 ulp (c64) of `|tanh z|` per part.
    /// Odd. Poles at `i pi (k + 1/2)`. Specials (C99, with DR 471 for x =
    /// ±0): `tanh(x ± 0i) = tanh(x) ± 0i` for every x, NaN included;
    /// `tanh(±0 + iy) = ±0 + i tan(y)` for every y, so `±0 + NaN i` for an
    /// infinite or NaN y; `±inf + iy`: `±1 + 0i sin 2y` for finite y, `±1 ± 0i`
    /// (y's sign) for an infinite or NaN y; other finite x with an infinite or
    /// NaN y: NaN + NaN i; NaN x, y != 0: NaN + NaN i.
}

/// `iz`.
#[inline(always)]
fn times_i(z: C64) -> C64 {
    C64::new(-z.im, z.re)
}

/// `-iz`.
#[inline(always)]
fn times_minus_i(z: C64) -> C64 {
    C64::new(z.im, -z.re)
}

#[inline]
fn csin(z: C64) -> C64 {
    times_minus_i(csinh(times_i(z)))
}

#[inline]
fn ccos(z: C64) -> C64 {
    ccosh(times_i(z))
}

#[inline]
fn ctan(z: C64) -> C64 {
    times_minus_i(ctanh(times_i(z)))
}

complex_kind! {
    csin, sin_c32, sin_c64, sin_c32_slice, sin_c64_slice,
    /// The sine `sin x cosh y + i cos x sinh y`, as `-i sinh(iz)`.
    ///
    /// Measured max error: 0.50 ulp (c32), 2.13 ulp (c64) of `|sin z|` per part.
    /// Odd. Specials: those of [`sinh_c64`] through the identity (C99), so
    /// `sin(x ± 0i) = sin(x) ± 0i cos x` for finite x.
}

complex_kind! {
    ccos, cos_c32, cos_c64, cos_c32_slice, cos_c64_slice,
    /// The cosine `cos x cosh y - i sin x sinh y`, as `cosh(iz)`.
    ///
    /// Measured max error: 0.50 ulp (c32), 2.02 ulp (c64) of `|cos z|` per part.
    /// Even. Specials: those of [`cosh_c64`] through the identity (C99), so
    /// `cos(x ± 0i) = cos(x) ∓ 0i sin x` for finite x.
}

complex_kind! {
    ctan, tan_c32, tan_c64, tan_c32_slice, tan_c64_slice,
    /// The tangent, as `-i tanh(iz)`.
    ///
    /// Measured max error: 0.50 ulp (c32), 3.30 ulp (c64) of `|tan z|` per part.
    /// Odd. Poles at `pi (k + 1/2)`. Specials: those of [`tanh_c64`] through
    /// the identity (C99), so `tan(x ± 0i) = tan(x) ± 0i` for every x.
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn trig_hyperbolic_accuracy() {
        let (w32, w64) = measure_kinds(
            6,
            200_000,
            &[
                ("sin", sin_c32, sin_c32_slice, sin_c64),
                ("cos", cos_c32, cos_c32_slice, cos_c64),
                ("tan", tan_c32, tan_c32_slice, tan_c64),
                ("sinh", sinh_c32, sinh_c32_slice, sinh_c64),
                ("cosh", cosh_c32, cosh_c32_slice, cosh_c64),
                ("tanh", tanh_c32, tanh_c32_slice, tanh_c64),
            ],
            &[
                ("sin", sin_c64, sin_c64_slice),
                ("cos", cos_c64, cos_c64_slice),
                ("tan", tan_c64, tan_c64_slice),
                ("sinh", sinh_c64, sinh_c64_slice),
                ("cosh", cosh_c64, cosh_c64_slice),
                ("tanh", tanh_c64, tanh_c64_slice),
            ],
        );
        assert!(w32 < 1.0 && w64 < 4.0);
    }

    #[test]
    fn hyperbolic_specials() {
        let inf = f64::INFINITY;
        let (c1, s1) = (1f64.cos(), 1f64.sin());
        // Where sinh and tanh agree (C99 G.6.2.5, G.6.2.6 with DR 471): zero
        // parts, ±0 and finite x with an infinite or NaN y, and NaN x.
        let odd_alike = [
            (c(0.0, 0.0), c(0.0, 0.0)),
            (c(-0.0, -0.0), c(-0.0, -0.0)),
            (c(0.0, inf), c(0.0, NAN)),
            (c(-0.0, NAN), c(-0.0, NAN)),
            (c(1.0, inf), c(NAN, NAN)),
            (c(1.0, NAN), c(NAN, NAN)),
            (c(NAN, 0.0), c(NAN, 0.0)),
            (c(NAN, -0.0), c(NAN, -0.0)),
            (c(NAN, 1.0), c(NAN, NAN)),
            (c(NAN, NAN), c(NAN, NAN)),
        ];
        // sinh (C99 G.6.2.5)
        for (z, want) in odd_alike.into_iter().chain([
            (c(inf, 0.0), c(inf, 0.0)),
            (c(-inf, -0.0), c(-inf, -0.0)),
            (c(inf, 1.0), c(inf, inf)),
            (c(inf, 3.0), c(-inf, inf)),
            (c(-inf, 3.0), c(inf, inf)),
            (c(inf, inf), c(inf, NAN)),
            (c(inf, NAN), c(inf, NAN)),
            (c(0.0, 1.0), c(0.0 * c1, s1)),
            (c(-800.0, 3.0), c(inf, inf)),
        ]) {
            same_kind("sinh", sinh_c64, sinh_c32, z, want);
        }
        // cosh (C99 G.6.2.4)
        for (z, want) in [
            (c(0.0, 0.0), c(1.0, 0.0)),
            (c(-0.0, 0.0), c(1.0, -0.0)),
            (c(0.0, inf), c(NAN, 0.0)),
            (c(-0.0, inf), c(NAN, -0.0)),
            (c(0.0, -inf), c(NAN, -0.0)),
            (c(0.0, NAN), c(NAN, 0.0)),
            (c(1.0, inf), c(NAN, NAN)),
            (c(1.0, NAN), c(NAN, NAN)),
            (c(inf, 0.0), c(inf, 0.0)),
            (c(-inf, 0.0), c(inf, -0.0)),
            (c(inf, 1.0), c(inf, inf)),
            (c(inf, 3.0), c(-inf, inf)),
            (c(-inf, 3.0), c(-inf, -inf)),
            (c(inf, inf), c(inf, NAN)),
            (c(-inf, NAN), c(inf, NAN)),
            (c(NAN, 0.0), c(NAN, 0.0)),
            (c(NAN, 1.0), c(NAN, NAN)),
            (c(NAN, NAN), c(NAN, NAN)),
            (c(0.0, 1.0), c(c1, 0.0)),
            (c(-800.0, 3.0), c(-inf, -inf)),
        ] {
            same_c(&format!("cosh({z})"), cosh_c64(z), want);
        }
        // tanh (C99 G.6.2.6 with DR 471)
        for (z, want) in odd_alike.into_iter().chain([
            (c(inf, 1.0), c(1.0, 0.0)),
            (c(inf, 3.0), c(1.0, -0.0)),
            (c(-inf, 1.0), c(-1.0, 0.0)),
            (c(inf, inf), c(1.0, 0.0)),
            (c(inf, -inf), c(1.0, -0.0)),
            (c(-inf, NAN), c(-1.0, 0.0)),
            (c(0.0, 1.0), c(0.0, crate::kinds::tan_f64(1.0))),
            (c(30.0, 1.0), c(1.0, 4.0 * s1 * c1 * (-60f64).exp())),
            (c(-400.0, 3.0), c(-1.0, -0.0)),
        ]) {
            same_c(&format!("tanh({z})"), tanh_c64(z), want);
        }
        // Near overflow, finite where cos y or sin y is small: e^800 sin(1e-320) / 2
        // (mpmath: 1.36317210994125877e27).
        let z = sinh_c64(c(800.0, 1e-320));
        assert!(
            z.re == inf && (z.im / 1.3631721099412588e27 - 1.0).abs() < 1e-15,
            "{z}"
        );
        for z in [
            sinh_c64(c(745.0, core::f64::consts::FRAC_PI_2)),
            cosh_c64(c(-745.0, core::f64::consts::FRAC_PI_2)),
        ] {
            assert!(
                z.re.is_finite() && z.re.abs() > 1e300 && z.im.is_infinite(),
                "{z}"
            );
        }
    }

    #[test]
    fn trig_is_hyperbolic_of_iz() {
        // The identities the trigonometric kinds are, bit for bit.
        let inf = f64::INFINITY;
        let vals = [0.0, -0.0, 1e-300, 0.5, -2.0, 30.0, -800.0, inf, -inf, NAN];
        for &a in &vals {
            for &b in &vals {
                let z = c(a, b);
                let iz = c(-b, a);
                let mi = |w: C64| c(w.im, -w.re);
                same_c(&format!("sin({z})"), sin_c64(z), mi(sinh_c64(iz)));
                same_c(&format!("cos({z})"), cos_c64(z), cosh_c64(iz));
                same_c(&format!("tan({z})"), tan_c64(z), mi(tanh_c64(iz)));
            }
        }
        // sin(x + 0i) = sin x + 0i cos x, cos(x + 0i) = cos x - 0i sin x.
        same_c(
            "sin(3 + 0i)",
            sin_c64(c(3.0, 0.0)),
            c(3f64.sin(), 0.0 * 3f64.cos()),
        );
        same_c(
            "cos(3 + 0i)",
            cos_c64(c(3.0, 0.0)),
            c(crate::kinds::cos_f64(3.0), -0.0),
        );
        same_c(
            "cos(-3 + 0i)",
            cos_c64(c(-3.0, 0.0)),
            c(crate::kinds::cos_f64(3.0), 0.0),
        );
        same_c("tan(inf + 0i)", tan_c64(c(inf, 0.0)), c(NAN, 0.0));
        same_c("tan(1 + inf i)", tan_c64(c(1.0, inf)), c(0.0, 1.0));
    }
}
