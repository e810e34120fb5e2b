//! The arithmetic of register types: what Add, Sub, Mul, Div, Maximum,
//! Minimum and the comparisons mean on each, one definition per type family
//! (wrapping integers, IEEE floats, complex numbers, truth values).

use crate::loops::column::{C32, C64};

/// Arithmetic and order of one register type.
pub trait Arith: Copy + Send + Sync + 'static {
    /// The zero of the type.
    const ZERO: Self;
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    fn div(a: Self, b: Self) -> Self;
    /// The greater; a NaN where either is; +0 above -0.
    fn max(a: Self, b: Self) -> Self;
    /// The lesser; a NaN where either is; -0 below +0.
    fn min(a: Self, b: Self) -> Self;
    fn eq(a: Self, b: Self) -> bool;
    /// Strict order; false where either is a NaN.
    fn lt(a: Self, b: Self) -> bool;
    fn neg(a: Self) -> Self;
    /// Whether the value is a NaN (a complex number: either part).
    fn is_nan(a: Self) -> bool;
    /// Whether the value is infinite (a complex number: either part).
    fn is_inf(a: Self) -> bool;
}

macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const ZERO: Self = 0;
            #[inline] fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline] fn sub(a: Self, b: Self) -> Self { a.wrapping_sub(b) }
            #[inline] fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline] fn div(a: Self, b: Self) -> Self { if b == 0 { 0 } else { a.wrapping_div(b) } }
            #[inline] fn max(a: Self, b: Self) -> Self { if a > b { a } else { b } }
            #[inline] fn min(a: Self, b: Self) -> Self { if a < b { a } else { b } }
            #[inline] fn eq(a: Self, b: Self) -> bool { a == b }
            #[inline] fn lt(a: Self, b: Self) -> bool { a < b }
            #[inline] fn neg(a: Self) -> Self { a.wrapping_neg() }
            #[inline] fn is_nan(_: Self) -> bool { false }
            #[inline] fn is_inf(_: Self) -> bool { false }
        }
    )*};
}
int_arith!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const ZERO: Self = 0.0;
            #[inline] fn add(a: Self, b: Self) -> Self { a + b }
            #[inline] fn sub(a: Self, b: Self) -> Self { a - b }
            #[inline] fn mul(a: Self, b: Self) -> Self { a * b }
            #[inline] fn div(a: Self, b: Self) -> Self { a / b }
            #[inline]
            fn max(a: Self, b: Self) -> Self {
                if a != a { a } else if b != b { b }
                else if a == b { if a.is_sign_negative() { b } else { a } }
                else if a > b { a } else { b }
            }
            #[inline]
            fn min(a: Self, b: Self) -> Self {
                if a != a { a } else if b != b { b }
                else if a == b { if a.is_sign_negative() { a } else { b } }
                else if a < b { a } else { b }
            }
            #[inline] fn eq(a: Self, b: Self) -> bool { a == b }
            #[inline] fn lt(a: Self, b: Self) -> bool { a < b }
            #[inline] fn neg(a: Self) -> Self { -a }
            #[inline] fn is_nan(a: Self) -> bool { a != a }
            #[inline] fn is_inf(a: Self) -> bool { a.abs() == <$t>::INFINITY }
        }
    )*};
}
float_arith!(f32, f64);

/// Truth values: Add is or, Mul is and, the order false < true.
impl Arith for bool {
    const ZERO: Self = false;
    #[inline]
    fn add(a: Self, b: Self) -> Self {
        a | b
    }
    #[inline]
    fn sub(a: Self, b: Self) -> Self {
        a ^ b
    }
    #[inline]
    fn mul(a: Self, b: Self) -> Self {
        a & b
    }
    #[inline]
    fn div(a: Self, b: Self) -> Self {
        a & b
    }
    #[inline]
    fn max(a: Self, b: Self) -> Self {
        a | b
    }
    #[inline]
    fn min(a: Self, b: Self) -> Self {
        a & b
    }
    #[inline]
    fn eq(a: Self, b: Self) -> bool {
        a == b
    }
    #[inline]
    fn lt(a: Self, b: Self) -> bool {
        !a & b
    }
    #[inline]
    fn neg(a: Self) -> Self {
        a
    }
    #[inline]
    fn is_nan(_: Self) -> bool {
        false
    }
    #[inline]
    fn is_inf(_: Self) -> bool {
        false
    }
}

macro_rules! complex_arith {
    ($($c:ty, $f:ty);*) => {$(
        /// Complex numbers: products by (ac - bd, ad + bc), quotients by
        /// Smith's algorithm (a zero divisor gives each part over +0), the
        /// order lexicographic by real then imaginary part.
        impl Arith for $c {
            const ZERO: Self = <$c>::new(0.0, 0.0);
            #[inline] fn add(a: Self, b: Self) -> Self { <$c>::new(a.re + b.re, a.im + b.im) }
            #[inline] fn sub(a: Self, b: Self) -> Self { <$c>::new(a.re - b.re, a.im - b.im) }
            #[inline]
            fn mul(a: Self, b: Self) -> Self {
                <$c>::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
            }
            #[inline]
            fn div(a: Self, b: Self) -> Self {
                let (c, d) = (b.re, b.im);
                if c == 0.0 && d == 0.0 {
                    let m: $f = 0.0;
                    <$c>::new(a.re / m, a.im / m)
                } else if c.abs() >= d.abs() {
                    let r = d / c;
                    let den = c + d * r;
                    <$c>::new((a.re + a.im * r) / den, (a.im - a.re * r) / den)
                } else {
                    let r = c / d;
                    let den = c * r + d;
                    <$c>::new((a.re * r + a.im) / den, (a.im * r - a.re) / den)
                }
            }
            #[inline]
            fn max(a: Self, b: Self) -> Self {
                if Self::is_nan(a) { a } else if Self::is_nan(b) { b }
                else if Self::lt(a, b) { b } else { a }
            }
            #[inline]
            fn min(a: Self, b: Self) -> Self {
                if Self::is_nan(a) { a } else if Self::is_nan(b) { b }
                else if Self::lt(b, a) { b } else { a }
            }
            #[inline] fn eq(a: Self, b: Self) -> bool { a.re == b.re && a.im == b.im }
            #[inline]
            fn lt(a: Self, b: Self) -> bool { a.re < b.re || (a.re == b.re && a.im < b.im) }
            #[inline] fn neg(a: Self) -> Self { <$c>::new(-a.re, -a.im) }
            #[inline] fn is_nan(a: Self) -> bool { a.re != a.re || a.im != a.im }
            #[inline]
            fn is_inf(a: Self) -> bool {
                a.re.abs() == <$f>::INFINITY || a.im.abs() == <$f>::INFINITY
            }
        }
    )*};
}
complex_arith!(C32, f32; C64, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_edges_wrap_and_never_trap() {
        assert_eq!(<i32 as Arith>::div(7, 0), 0);
        assert_eq!(<i32 as Arith>::div(i32::MIN, -1), i32::MIN);
        assert_eq!(<i8 as Arith>::div(-7, 2), -3);
        assert_eq!(<u8 as Arith>::sub(0, 1), 255);
        assert_eq!(<i64 as Arith>::neg(i64::MIN), i64::MIN);
    }

    #[test]
    fn float_extremes_propagate_nan_and_order_zeros() {
        let nan = f32::NAN;
        assert!(<f32 as Arith>::max(nan, 1.0).is_nan());
        assert!(<f32 as Arith>::min(1.0, nan).is_nan());
        assert!(<f32 as Arith>::max(-0.0, 0.0).is_sign_positive());
        assert!(<f32 as Arith>::max(0.0, -0.0).is_sign_positive());
        assert!(<f32 as Arith>::min(0.0, -0.0).is_sign_negative());
        assert!(<f64 as Arith>::min(-0.0, 0.0).is_sign_negative());
    }

    #[test]
    fn complex_division_is_smiths() {
        let q = <C64 as Arith>::div(C64::new(1.0, 2.0), C64::new(3.0, 4.0));
        assert!((q.re - 0.44).abs() < 1e-15 && (q.im - 0.08).abs() < 1e-15);
        // Smith's algorithm avoids the overflow of c*c + d*d.
        let big = <C64 as Arith>::div(C64::new(1e300, 1e300), C64::new(1e300, 1e300));
        assert_eq!(big, C64::new(1.0, 0.0));
        let z = <C32 as Arith>::div(C32::new(1.0, -1.0), C32::new(0.0, 0.0));
        assert!(z.re == f32::INFINITY && z.im == f32::NEG_INFINITY);
        assert!(<C32 as Arith>::lt(C32::new(1.0, 0.0), C32::new(1.0, 1.0)));
    }
}
