//! The IEEE primitives the kinds are written in, shared by `f32` and `f64`.
//!
//! Only correctly rounded operations (`+ - * /`, `sqrt`, fused multiply-add),
//! comparisons and bit manipulation: their bits are the same on every target.

use core::ops::{Add, Div, Mul, Neg, Sub};

/// A binary floating-point type the kinds compute in.
pub(crate) trait Real:
    'static
    + Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const HALF: Self;
    const TWO: Self;
    const INFINITY: Self;
    const NAN: Self;
    /// The least normal exponent, -126 or -1022.
    const MIN_EXP: Self;
    /// `1.5 * 2^(p - 1)`, p the precision: adding then subtracting it rounds
    /// `|x| < 2^(p - 2)` to the nearest integer, ties to even.
    const SHIFTER: Self;

    /// `self * a + b`, rounded once.
    fn fma(self, a: Self, b: Self) -> Self;
    /// `2^k` for an integral `k` of the normal exponent range.
    fn exp2i(k: Self) -> Self;
    /// `(m, e)` with `self = m * 2^e`, `m` in `[sqrt(1/2), sqrt(2))`, `e` integral,
    /// for a positive finite `self`, subnormals included; garbage otherwise.
    fn frexp(self) -> (Self, Self);

    /// Rounds `|self| < 2^(p - 2)` to an integer, ties to even.
    #[inline(always)]
    fn round_int(self) -> Self {
        (self + Self::SHIFTER) - Self::SHIFTER
    }

    /// `self * 2^k`, rounded once, for an integral `k` at most twice the
    /// normal exponent range: two exact scalings, the second rounding.
    #[inline(always)]
    fn ldexp(self, k: Self) -> Self {
        let k1 = (k * Self::HALF).round_int();
        self * Self::exp2i(k1) * Self::exp2i(k - k1)
    }
}

macro_rules! impl_real {
    ($t:ident, $u:ident, $mant:expr, $bias:expr, $sub_scale:expr, $sub_exp:expr) => {
        impl Real for $t {
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            const HALF: $t = 0.5;
            const TWO: $t = 2.0;
            const INFINITY: $t = $t::INFINITY;
            const NAN: $t = $t::NAN;
            const MIN_EXP: $t = $t::MIN_EXP as $t - 1.0;
            const SHIFTER: $t = 1.5 * (1u64 << $mant) as $t;

            #[inline(always)]
            fn fma(self, a: $t, b: $t) -> $t {
                self.mul_add(a, b)
            }
            #[inline(always)]
            fn exp2i(k: $t) -> $t {
                // k + SHIFTER holds k in its low mantissa bits.
                let i = (k + Self::SHIFTER)
                    .to_bits()
                    .wrapping_sub(Self::SHIFTER.to_bits());
                $t::from_bits(i.wrapping_add($bias) << $mant)
            }
            #[inline(always)]
            fn frexp(self) -> ($t, $t) {
                let sub = self < $t::MIN_POSITIVE;
                let x = if sub { self * $sub_scale } else { self };
                // Offsetting by sqrt(1/2)'s bits puts the cut of the exponent at sqrt(2).
                let sqrt_half: $u = (core::f64::consts::FRAC_1_SQRT_2 as $t).to_bits();
                let ix = x.to_bits().wrapping_sub(sqrt_half);
                let mask: $u = (1 << $mant) - 1;
                let m = $t::from_bits((ix & mask).wrapping_add(sqrt_half));
                // The exponent, sign-extended, as a float through the shifter.
                let e_bits = ((ix as <$u as SignedOf>::S) >> $mant) as $u;
                let e = $t::from_bits(Self::SHIFTER.to_bits().wrapping_add(e_bits)) - Self::SHIFTER;
                (m, if sub { e - $sub_exp } else { e })
            }
        }
    };
}

/// The signed integer of an unsigned one's width.
trait SignedOf {
    type S;
}
impl SignedOf for u32 {
    type S = i32;
}
impl SignedOf for u64 {
    type S = i64;
}

impl_real!(f32, u32, 23, 127, 33554432.0, 25.0);
impl_real!(f64, u64, 52, 1023, 18014398509481984.0, 54.0);

/// Evaluates the polynomial of coefficients `c` (increasing degree) at `x` by Horner's rule.
#[inline(always)]
pub(crate) fn poly<T: Real>(x: T, c: &[T]) -> T {
    let (last, rest) = c.split_last().expect("a polynomial has a coefficient");
    rest.iter().rev().fold(*last, |acc, &ci| acc.fma(x, ci))
}

/// `x` limited to `[lo, hi]`, a NaN kept.
#[inline(always)]
pub(crate) fn clamp<T: Real>(x: T, lo: T, hi: T) -> T {
    if x < lo {
        lo
    } else if x > hi {
        hi
    } else {
        x
    }
}

/// `(s, e)` with `s = a + b` rounded and `s + e = a + b` exactly, for any order of magnitudes.
#[inline(always)]
pub(crate) fn two_sum<T: Real>(a: T, b: T) -> (T, T) {
    let s = a + b;
    let bp = s - a;
    let ap = s - bp;
    (s, (a - ap) + (b - bp))
}

/// `(s, e)` with `s = a + b` rounded and `s + e = a + b` exactly, where `a` is
/// zero or of an exponent at least `b`'s.
#[inline(always)]
pub(crate) fn fast_two_sum<T: Real>(a: T, b: T) -> (T, T) {
    let s = a + b;
    (s, b - (s - a))
}
