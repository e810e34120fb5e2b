//! The monoids Sum, Prod, Max and Min over the carriers, and the order that
//! Max, Min and Arg share.
//!
//! Carriers: `f32`, `f64`, `Complex<f32>`, `Complex<f64>` for every monoid,
//! `i64` and `u64` too (sums and products wrap, modulo 2^64).

use num_complex::Complex;

use super::LANES;

/// A reduction's step: how a lane starts from its first term and how two
/// partial results combine. `combine(a, b)` takes `a` as the earlier terms'.
pub trait Monoid<T: Copy>: Copy + Send + Sync + 'static {
    /// The result of no term: +0, 1, -∞ or +∞ (their integer and complex
    /// counterparts).
    fn empty() -> T;
    /// A lane's value after its first term, which is also an uncarried
    /// scan's first result: `+0 + x` for a Sum (so `-0` gives `+0`), `x`
    /// itself otherwise.
    fn start(x: T) -> T;
    /// The partial result of `a`'s terms then `b`'s.
    fn combine(a: T, b: T) -> T;
    /// Combines whole rows of 16 terms into 16 lanes, lane `l` taking term
    /// `l` of each row in turn: `acc[l] = combine(acc[l], row[l])`. A monoid
    /// may override it with a faster loop of the same bits.
    #[inline(always)]
    fn rows(acc: &mut [T; LANES], terms: &[T]) {
        each_row(acc, terms, Self::combine);
    }
}

/// `acc[l] = f(acc[l], row[l])` for each row of 16 terms in turn.
#[inline(always)]
pub(crate) fn each_row<T: Copy>(acc: &mut [T; LANES], terms: &[T], f: impl Fn(T, T) -> T) {
    let mut a = *acc;
    for row in terms.chunks_exact(LANES) {
        let row: &[T; LANES] = row.try_into().unwrap();
        for l in 0..LANES {
            a[l] = f(a[l], row[l]);
        }
    }
    *acc = a;
}

/// Sum: real and integer addition (integers wrap), complex part by part.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum;

/// Prod: real multiplication, integers wrapping, complex by [`cmul`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Prod;

/// Max: the greater in the order of [`Ordered`], a NaN where either is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;

/// Min: the lesser in the order of [`Ordered`], a NaN where either is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Min;

/// The complex product of Prod, in the plain formula
/// `(a.re c.re - a.im c.im, a.re c.im + a.im c.re)`: four products, each
/// rounded, then one rounded difference and one rounded sum, no fused
/// multiply-add (Rust never contracts `a * b + c`). This is the one place to
/// change to follow `Nx_kernel.Prog.binary.Mul`.
#[inline(always)]
pub fn cmul<F>(a: Complex<F>, b: Complex<F>) -> Complex<F>
where
    F: Copy + core::ops::Mul<Output = F> + core::ops::Add<Output = F> + core::ops::Sub<Output = F>,
{
    Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

/// The order of Max, Min and Arg.
///
/// Reals follow their value with `-0` below `+0`, so `Max(-0, +0) = +0` and
/// `Min(-0, +0) = -0` in either order; complex numbers follow their real
/// parts, then their imaginary parts, each so ordered (numpy's order). A NaN,
/// or a complex number with a NaN part, is above every number for Arg and
/// makes Max and Min a NaN. Two values that are neither NaN nor in order have
/// the same bits, so Max and Min are associative and commutative, NaN
/// payloads aside, and their bits never depend on the order of the terms.
pub trait Ordered: Copy + Send + Sync + 'static {
    /// Whether the value is a NaN (for complex, has a NaN part).
    fn nan(self) -> bool;
    /// Whether `a` is above `b`, both not NaN.
    fn above(a: Self, b: Self) -> bool;
    /// The greater of `a` and `b`, a NaN where either is.
    fn max2(a: Self, b: Self) -> Self;
    /// The lesser of `a` and `b`, a NaN where either is.
    fn min2(a: Self, b: Self) -> Self;
    /// `max2` of `init` and `terms`, in an order of the implementation's
    /// choosing (any order gives the same bits, NaNs aside).
    #[inline(always)]
    fn max_fold(init: Self, terms: &[Self]) -> Self {
        terms.iter().fold(init, |a, &x| Self::max2(a, x))
    }
    /// `min2` of `init` and `terms`, in any order.
    #[inline(always)]
    fn min_fold(init: Self, terms: &[Self]) -> Self {
        terms.iter().fold(init, |a, &x| Self::min2(a, x))
    }
    /// The identity of Max: below every other value.
    const LOWEST: Self;
    /// The identity of Min: above every other value but NaN.
    const HIGHEST: Self;
}

/// The bits of an f32 as a signed integer, the magnitude bits flipped where
/// the sign is set: as keys, floats that are not NaN compare as these
/// integers, -0 below +0, and the map is its own inverse. Integer compares
/// and selects vectorise where float branches may not.
#[inline(always)]
fn flip32(b: i32) -> i32 {
    b ^ (((b >> 31) as u32) >> 1) as i32
}

/// [`flip32`] for the bits of an f64.
#[inline(always)]
fn flip64(b: i64) -> i64 {
    b ^ (((b >> 63) as u64) >> 1) as i64
}

/// A float Max or Min fold over keys (`$pick` is `max` or `min`).
macro_rules! keyed_fold {
    ($f:ty, $i:ty, $flip:ident, $init:ident, $terms:ident, $pick:ident) => {{
        let (nan, k) = $terms.iter().fold(($init.is_nan() as u8, $flip($init.to_bits() as $i)), |(n, k), x| {
            (n | x.is_nan() as u8, k.$pick($flip(x.to_bits() as $i)))
        });
        if nan != 0 { <$f>::NAN } else { <$f>::from_bits($flip(k) as _) }
    }};
}

macro_rules! float_monoids {
    ($($f:ty, $i:ty, $flip:ident);*) => {$(
        impl Monoid<$f> for Sum {
            #[inline(always)] fn empty() -> $f { 0.0 }
            #[inline(always)] fn start(x: $f) -> $f { 0.0 + x }
            #[inline(always)] fn combine(a: $f, b: $f) -> $f { a + b }
        }
        impl Monoid<$f> for Prod {
            #[inline(always)] fn empty() -> $f { 1.0 }
            #[inline(always)] fn start(x: $f) -> $f { x }
            #[inline(always)] fn combine(a: $f, b: $f) -> $f { a * b }
        }
        impl Monoid<Complex<$f>> for Sum {
            #[inline(always)] fn empty() -> Complex<$f> { Complex::new(0.0, 0.0) }
            #[inline(always)]
            fn start(x: Complex<$f>) -> Complex<$f> { Complex::new(0.0 + x.re, 0.0 + x.im) }
            #[inline(always)]
            fn combine(a: Complex<$f>, b: Complex<$f>) -> Complex<$f> {
                Complex::new(a.re + b.re, a.im + b.im)
            }
        }
        impl Monoid<Complex<$f>> for Prod {
            #[inline(always)] fn empty() -> Complex<$f> { Complex::new(1.0, 0.0) }
            #[inline(always)] fn start(x: Complex<$f>) -> Complex<$f> { x }
            #[inline(always)]
            fn combine(a: Complex<$f>, b: Complex<$f>) -> Complex<$f> { cmul(a, b) }
        }
        impl Ordered for $f {
            #[inline(always)] fn nan(self) -> bool { self.is_nan() }
            #[inline(always)] fn above(a: $f, b: $f) -> bool { a > b || (a == b && b.is_sign_negative() && !a.is_sign_negative()) }
            // `a + b` is the NaN where either is one.
            #[inline(always)]
            fn max2(a: $f, b: $f) -> $f {
                let r = if $flip(a.to_bits() as $i) < $flip(b.to_bits() as $i) { b } else { a };
                if a.is_nan() | b.is_nan() { a + b } else { r }
            }
            #[inline(always)]
            fn min2(a: $f, b: $f) -> $f {
                let r = if $flip(b.to_bits() as $i) < $flip(a.to_bits() as $i) { b } else { a };
                if a.is_nan() | b.is_nan() { a + b } else { r }
            }
            // Two integer reductions in one loop, which the loop vectoriser
            // takes: an or of NaN flags, and a max (min) of keys.
            #[inline(always)]
            fn max_fold(init: $f, terms: &[$f]) -> $f {
                keyed_fold!($f, $i, $flip, init, terms, max)
            }
            #[inline(always)]
            fn min_fold(init: $f, terms: &[$f]) -> $f {
                keyed_fold!($f, $i, $flip, init, terms, min)
            }
            const LOWEST: $f = <$f>::NEG_INFINITY;
            const HIGHEST: $f = <$f>::INFINITY;
        }
        impl Ordered for Complex<$f> {
            #[inline(always)] fn nan(self) -> bool { self.re.is_nan() || self.im.is_nan() }
            #[inline(always)]
            fn above(a: Self, b: Self) -> bool {
                <$f>::above(a.re, b.re) || (a.re.to_bits() == b.re.to_bits() && <$f>::above(a.im, b.im))
            }
            #[inline(always)]
            fn max2(a: Self, b: Self) -> Self {
                if a.nan() { a } else if b.nan() || Self::above(b, a) { b } else { a }
            }
            #[inline(always)]
            fn min2(a: Self, b: Self) -> Self {
                if a.nan() { a } else if b.nan() || Self::above(a, b) { b } else { a }
            }
            const LOWEST: Self = Complex::new(<$f>::NEG_INFINITY, <$f>::NEG_INFINITY);
            const HIGHEST: Self = Complex::new(<$f>::INFINITY, <$f>::INFINITY);
        }
    )*};
}
float_monoids!(f32, i32, flip32; f64, i64, flip64);

macro_rules! int_monoids {
    ($($i:ty),*) => {$(
        impl Monoid<$i> for Sum {
            #[inline(always)] fn empty() -> $i { 0 }
            #[inline(always)] fn start(x: $i) -> $i { x }
            #[inline(always)] fn combine(a: $i, b: $i) -> $i { a.wrapping_add(b) }
        }
        impl Monoid<$i> for Prod {
            #[inline(always)] fn empty() -> $i { 1 }
            #[inline(always)] fn start(x: $i) -> $i { x }
            #[inline(always)] fn combine(a: $i, b: $i) -> $i { a.wrapping_mul(b) }
        }
        impl Ordered for $i {
            #[inline(always)] fn nan(self) -> bool { false }
            #[inline(always)] fn above(a: $i, b: $i) -> bool { a > b }
            #[inline(always)] fn max2(a: $i, b: $i) -> $i { a.max(b) }
            #[inline(always)] fn min2(a: $i, b: $i) -> $i { a.min(b) }
            const LOWEST: $i = <$i>::MIN;
            const HIGHEST: $i = <$i>::MAX;
        }
    )*};
}
int_monoids!(i64, u64);

impl<T: Ordered> Monoid<T> for Max {
    #[inline(always)]
    fn empty() -> T {
        T::LOWEST
    }
    #[inline(always)]
    fn start(x: T) -> T {
        x
    }
    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        T::max2(a, b)
    }
    // Bits that ignore association: one running value over all rows.
    #[inline(always)]
    fn rows(acc: &mut [T; LANES], terms: &[T]) {
        acc[0] = T::max_fold(acc[0], terms);
    }
}

impl<T: Ordered> Monoid<T> for Min {
    #[inline(always)]
    fn empty() -> T {
        T::HIGHEST
    }
    #[inline(always)]
    fn start(x: T) -> T {
        x
    }
    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        T::min2(a, b)
    }
    #[inline(always)]
    fn rows(acc: &mut [T; LANES], terms: &[T]) {
        acc[0] = T::min_fold(acc[0], terms);
    }
}
