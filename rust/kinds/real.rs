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
    /// The least positive normal number, `2^MIN_EXP`.
    const MIN_POSITIVE: Self;
    /// `1.5 * 2^(p - 1)`, p the precision: adding then subtracting it rounds
    /// `|x| < 2^(p - 2)` to the nearest integer, ties to even.
    const SHIFTER: Self;

    /// `self * a + b`, rounded once.
    fn fma(self, a: Self, b: Self) -> Self;
    /// `|self|`, the sign bit cleared.
    fn abs(self) -> Self;
    /// `a` where `c`, else `b`: `if c { a } else { b }` written without a
    /// branch. Where a kind chooses more than once by one condition, rustc
    /// would thread the later branches into the earlier (its MIR jump
    /// threading), duplicating the work between them, which a vectorised
    /// loop then does twice over.
    fn select(c: bool, a: Self, b: Self) -> Self;
    /// Whether `lo <= self < hi`, for `0 <= lo <= hi`: false at a NaN and at
    /// -0. One comparison of the bits (the order of the non-negative floats),
    /// where LLVM would make of two float comparisons a class test that
    /// costs several integer operations a vector.
    fn within(self, lo: Self, hi: Self) -> bool;
    /// `2^k` for an integral `k` of the normal exponent range.
    fn exp2i(k: Self) -> Self;
    /// `(m, e)` with `self = m * 2^e`, `m` in `[sqrt(1/2), sqrt(2))`, `e` integral,
    /// for a positive finite `self`, subnormals included; garbage otherwise.
    fn frexp(self) -> (Self, Self);
    /// [`Real::frexp`] for a positive normal finite `self`, its bits the same.
    fn frexp_normal(self) -> (Self, Self);

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
            const MIN_POSITIVE: $t = $t::MIN_POSITIVE;
            const SHIFTER: $t = 1.5 * (1u64 << $mant) as $t;

            #[inline(always)]
            fn fma(self, a: $t, b: $t) -> $t {
                self.mul_add(a, b)
            }
            #[inline(always)]
            fn abs(self) -> $t {
                $t::abs(self)
            }
            #[inline(always)]
            fn within(self, lo: $t, hi: $t) -> bool {
                let lo_bits = lo.to_bits();
                self.to_bits().wrapping_sub(lo_bits) < hi.to_bits().wrapping_sub(lo_bits)
            }
            #[inline(always)]
            fn select(c: bool, a: $t, b: $t) -> $t {
                let m = (c as $u).wrapping_neg();
                $t::from_bits((a.to_bits() & m) | (b.to_bits() & !m))
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
                let (m, e) = x.frexp_normal();
                (m, if sub { e - $sub_exp } else { e })
            }
            #[inline(always)]
            fn frexp_normal(self) -> ($t, $t) {
                // Offsetting by sqrt(1/2)'s bits puts the cut of the exponent
                // at sqrt(2): the bits less sqrt(1/2)'s are e in two's
                // complement above m's fraction less sqrt(1/2)'s. `ix` has
                // their sign bit flipped: the bits above the fraction hold
                // e + `bias` (2^11 or 2^8), which a logical shift takes out (a
                // vector has no arithmetic shift of 64-bit lanes before
                // AVX-512) and the mask of the fraction leaves out.
                let sqrt_half: $u = (core::f64::consts::FRAC_1_SQRT_2 as $t).to_bits();
                let top: $u = 1 << (<$u>::BITS - 1);
                let ix = self.to_bits().wrapping_add(top.wrapping_sub(sqrt_half));
                let mask: $u = (1 << $mant) - 1;
                let m = $t::from_bits((ix & mask).wrapping_add(sqrt_half));
                // e + bias through the shifter, less bias: exact.
                let e_bits = ix >> $mant;
                let bias = (top >> $mant) as $t;
                let e = $t::from_bits(Self::SHIFTER.to_bits().wrapping_add(e_bits))
                    - (Self::SHIFTER + bias);
                (m, e)
            }
        }
    };
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
