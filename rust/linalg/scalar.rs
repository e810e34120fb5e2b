//! The four dtypes the matrix routines compute in, as one trait: float32,
//! float64, complex64 and complex128, with the few operations the routines
//! need, each defined once so that every path rounds alike.

use crate::contract::elem::{Elem, Micro};
use crate::core::dtype::Dtype;
use num_complex::Complex;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A real dtype: the parts of [`Scalar`]s.
pub trait Real:
    Scalar<Real = Self> + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + Neg<Output = Self>
{
    /// Unit roundoff, 2^-24 or 2^-53.
    const U: f64;
    /// Least positive subnormal.
    const ETA: f64;
    /// Least positive normal number.
    const MIN_NORMAL: f64;
    /// A power of two that makes every subnormal number normal: 2^26 or 2^55.
    const UP: f64;
    /// Correctly rounded square root.
    fn sqrt(self) -> Self;
    /// Magnitude.
    fn abs(self) -> Self;
    /// The value in float64, exact.
    fn to_f64(self) -> f64;
    /// The nearest value to a float64.
    fn of_f64(x: f64) -> Self;
    /// `self * b + c` rounded once.
    fn fma(self, b: Self, c: Self) -> Self;
}

/// An element of a matrix routine: a real or complex float.
pub trait Scalar: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// The dtype of the parts.
    type Real: Real;
    /// The dtype in the contract's list.
    const DTYPE: Dtype;
    /// Whether the dtype is complex.
    const COMPLEX: bool;
    /// +0.
    fn zero() -> Self;
    /// A NaN (both parts, for complex).
    fn nan() -> Self;
    /// The real number `r`, with a +0 imaginary part.
    fn of_real(r: Self::Real) -> Self;
    /// The real part.
    fn re(self) -> Self::Real;
    /// The imaginary part (+0 for a real).
    fn im(self) -> Self::Real;
    /// The number of parts `re` and `im`.
    fn of_parts(re: Self::Real, im: Self::Real) -> Self;
    /// `contract`'s microkernel of this type: AVX-512's where `wide`.
    fn micro(wide: bool) -> Micro<Self>;
    /// One.
    fn one() -> Self {
        Self::of_real(<Self::Real as Real>::of_f64(1.0))
    }
    /// The negation, part by part.
    fn neg(self) -> Self {
        Self::of_parts(-self.re(), -self.im())
    }
    /// The conjugate (a real itself); it negates a zero imaginary part too.
    fn conj(self) -> Self {
        if Self::COMPLEX { Self::of_parts(self.re(), -self.im()) } else { self }
    }
    /// `c - a * b`, each real product fused into its part's sum: for complex,
    /// re = (c.re - b.re a.re) + b.im a.im and im = (c.im - b.re a.im) - b.im a.re,
    /// four roundings: b's real part first, as a microkernel of `contract`
    /// takes `-b` broadcast and `a` as a vector ([`super::gemm`]).
    fn sub_mul(c: Self, a: Self, b: Self) -> Self {
        let (ar, ai, br, bi) = (a.re(), a.im(), b.re(), b.im());
        if Self::COMPLEX {
            let re = (-bi).fma(-ai, (-br).fma(ar, c.re()));
            let im = (-bi).fma(ar, (-br).fma(ai, c.im()));
            Self::of_parts(re, im)
        } else {
            Self::of_parts((-ar).fma(br, c.re()), c.im())
        }
    }
    /// The product, for complex (ar br - ai bi, ar bi + ai br), each second
    /// product fused.
    fn mul(a: Self, b: Self) -> Self {
        let (ar, ai, br, bi) = (a.re(), a.im(), b.re(), b.im());
        if Self::COMPLEX {
            Self::of_parts(ar.fma(br, -(ai * bi)), ar.fma(bi, ai * br))
        } else {
            Self::of_parts(ar * br, ai)
        }
    }
    /// The sum, part by part.
    fn add(a: Self, b: Self) -> Self {
        Self::of_parts(a.re() + b.re(), a.im() + b.im())
    }
    /// The quotient, by Smith's algorithm for complex divisors, each part
    /// by a real one.
    fn div(a: Self, b: Self) -> Self {
        let (ar, ai, br, bi) = (a.re(), a.im(), b.re(), b.im());
        if !Self::COMPLEX || bi == Self::Real::zero() {
            return Self::of_parts(ar / br, ai / br);
        }
        if br.abs() >= bi.abs() {
            let t = bi / br;
            let d = bi.fma(t, br);
            Self::of_parts(ai.fma(t, ar) / d, (-ar).fma(t, ai) / d)
        } else {
            let t = br / bi;
            let d = br.fma(t, bi);
            Self::of_parts(ar.fma(t, ai) / d, ai.fma(t, -ar) / d)
        }
    }
    /// Each part divided by a real.
    fn div_real(a: Self, r: Self::Real) -> Self {
        Self::of_parts(a.re() / r, a.im() / r)
    }
    /// |re| + |im|, the magnitude lu's pivot search compares.
    fn abs1(self) -> Self::Real {
        if Self::COMPLEX { self.re().abs() + self.im().abs() } else { self.re().abs() }
    }
    /// The largest magnitude of a part.
    fn abs_max(self) -> Self::Real {
        let (r, i) = (self.re().abs(), self.im().abs());
        if i > r { i } else { r }
    }
    /// Whether a part is a NaN.
    fn is_nan(self) -> bool {
        self.re() != self.re() || self.im() != self.im()
    }
    /// Whether both parts are zero.
    fn is_zero(self) -> bool {
        self.re() == Self::Real::zero() && self.im() == Self::Real::zero()
    }
}

macro_rules! real {
    ($t:ty, $dtype:expr, $u:expr, $eta:expr, $up:expr) => {
        impl Scalar for $t {
            type Real = $t;
            const DTYPE: Dtype = $dtype;
            const COMPLEX: bool = false;
            fn zero() -> Self { 0.0 }
            fn nan() -> Self { <$t>::NAN }
            fn of_real(r: Self) -> Self { r }
            fn re(self) -> Self { self }
            fn im(self) -> Self { 0.0 }
            fn of_parts(re: Self, _im: Self) -> Self { re }
            fn micro(wide: bool) -> Micro<Self> { <$t as Elem>::micro(wide) }
        }
        impl Real for $t {
            const U: f64 = $u;
            const ETA: f64 = $eta;
            const MIN_NORMAL: f64 = <$t>::MIN_POSITIVE as f64;
            const UP: f64 = $up;
            fn sqrt(self) -> Self { <$t>::sqrt(self) }
            fn abs(self) -> Self { <$t>::abs(self) }
            fn to_f64(self) -> f64 { self as f64 }
            fn of_f64(x: f64) -> Self { x as $t }
            fn fma(self, b: Self, c: Self) -> Self { self.mul_add(b, c) }
        }
        impl Scalar for Complex<$t> {
            type Real = $t;
            const DTYPE: Dtype = if <$t>::MANTISSA_DIGITS == 24 { Dtype::Complex64 } else { Dtype::Complex128 };
            const COMPLEX: bool = true;
            fn zero() -> Self { Complex::new(0.0, 0.0) }
            fn nan() -> Self { Complex::new(<$t>::NAN, <$t>::NAN) }
            fn of_real(r: $t) -> Self { Complex::new(r, 0.0) }
            fn re(self) -> $t { self.re }
            fn im(self) -> $t { self.im }
            fn of_parts(re: $t, im: $t) -> Self { Complex::new(re, im) }
            fn micro(wide: bool) -> Micro<Self> { <Complex<$t> as Elem>::micro(wide) }
        }
    };
}

real!(f32, Dtype::Float32, 5.960464477539063e-8, 1.401298464324817e-45, 67108864.0);
real!(f64, Dtype::Float64, 1.1102230246251565e-16, 5e-324, 36028797018963968.0);
