//! The real carriers f32 and f64, as the Logsumexp and Moments code needs
//! them, and the one place where their exp and log come from.

use core::ops::{Add, Div, Mul, Sub};

use super::lanes::fold16;
use super::monoid::{Max, Monoid, Ordered, Sum};
use super::LANES;

/// f32 or f64.
pub trait Real:
    Ordered
    + Default
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + ExpLog
    + core::fmt::Debug
{
    /// +0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// +∞.
    const INFINITY: Self;
    /// The cut: the least integer whose exp is normal, -87 or -708; an exp
    /// of less is taken as 0.
    const CUT: Self;
    /// The unit roundoff, 2^-24 or 2^-53.
    const U: Self;
    /// A count, rounded to nearest.
    fn of_count(n: usize) -> Self;
    /// Whether neither infinite nor NaN.
    fn finite(self) -> bool;
    /// Sum over the carrier.
    fn sum<S: super::Terms<Self> + ?Sized>(terms: &S, parallel: bool) -> Self;
    /// Max over the carrier.
    fn max<S: super::Terms<Self> + ?Sized>(terms: &S, parallel: bool) -> Self;
    /// The lane-order Sum of one block of 1 to [`BLOCK`](super::BLOCK) terms.
    fn sum_block(terms: &[Self]) -> Self;
    /// The lanes' tree of a Sum over lanes `0..present` of `acc`: its
    /// result.
    fn sum_lanes(acc: &mut [Self; LANES], present: usize) -> Self;
}

/// exp and log, behind one trait so that their source changes in one place.
pub trait ExpLog: Sized {
    /// e^self.
    fn exp(self) -> Self;
    /// The natural logarithm.
    fn ln(self) -> Self;
    /// `exp` of each element of `x` into `out`, of the same length, with
    /// the bits of `exp`, vectorised.
    fn exp_slice(x: &[Self], out: &mut [Self]);
}

macro_rules! real {
    ($($f:ty, $cut:expr, $u:expr, $exp:path, $ln:path, $exps:path);*) => {$(
        impl Real for $f {
            const ZERO: $f = 0.0;
            const ONE: $f = 1.0;
            const INFINITY: $f = <$f>::INFINITY;
            const CUT: $f = $cut;
            const U: $f = $u;
            #[inline(always)] fn of_count(n: usize) -> $f { n as $f }
            #[inline(always)] fn finite(self) -> bool { self.is_finite() }
            fn sum<S: super::Terms<$f> + ?Sized>(terms: &S, parallel: bool) -> $f {
                super::reduce(Sum, terms, parallel)
            }
            fn max<S: super::Terms<$f> + ?Sized>(terms: &S, parallel: bool) -> $f {
                super::reduce(Max, terms, parallel)
            }
            #[inline(always)]
            fn sum_block(terms: &[$f]) -> $f {
                <Sum as Monoid<$f>>::block(terms)
            }
            #[inline(always)]
            fn sum_lanes(acc: &mut [$f; LANES], present: usize) -> $f {
                fold16::<$f, Sum>(acc, present)
            }
        }
        /// The math library's Exp and Log (`crate::kinds`), the kinds'
        /// own bits.
        impl ExpLog for $f {
            #[inline(always)] fn exp(self) -> $f { $exp(self) }
            #[inline(always)] fn ln(self) -> $f { $ln(self) }
            #[inline(always)] fn exp_slice(x: &[$f], out: &mut [$f]) { $exps(x, out) }
        }
    )*};
}
real!(
    f32, -87.0, 1.0 / 16_777_216.0, crate::kinds::exp_f32, crate::kinds::log_f32, crate::kinds::exp_f32_slice;
    f64, -708.0, 1.0 / 9_007_199_254_740_992.0, crate::kinds::exp_f64, crate::kinds::log_f64, crate::kinds::exp_f64_slice
);

/// exp z, or 0 for z below the cut (a NaN stays a NaN).
#[inline(always)]
pub(crate) fn cut_exp<F: Real>(z: F) -> F {
    if z < F::CUT { F::ZERO } else { z.exp() }
}
