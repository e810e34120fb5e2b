//! The monoids Sum, Prod, Max and Min over the carriers, and the order that
//! Max, Min and Arg share.
//!
//! Carriers: `f32`, `f64`, `Complex<f32>`, `Complex<f64>` for every monoid,
//! `i64` and `u64` too (sums and products wrap, modulo 2^64).

use num_complex::Complex;

use super::lanes;
use super::flagged;
use super::spans::{spans32, spans64, unsigned_min32, unsigned_min64, Spans};
use crate::kinds::wide::widest;

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
    /// Blocks ahead of the one a pass reduces whose first term it asks the
    /// CPU for, or 0. A pass as light as Max's, over operands on 4 KiB
    /// pages, stalls at each block's start on the walk of the page tables
    /// for its page (a block of float32 is a page); asked for ahead, the walk
    /// is done meanwhile. Heavier passes gain nothing and lose a little.
    const AHEAD: usize = 0;
    /// Blocks a leaf of the blocks' tree takes in one pass where the terms
    /// lie in memory ([`Terms::IN_MEMORY`](super::Terms::IN_MEMORY)): 1 for
    /// the lane order; more for a monoid whose bits ignore association,
    /// which so pays a leaf's fixed cost less often (Max over 10M float32
    /// ran 3.3 to 3.1 ms out of the caches, 1.48 to 1.44 in them, on 16).
    const LEAF_BLOCKS: usize = 1;
    /// The lane-order result of one block of 1 to [`BLOCK`](super::BLOCK)
    /// terms. A monoid whose bits ignore association (Max, Min) overrides it
    /// with a faster loop of the same bits.
    #[inline(always)]
    fn block(terms: &[T]) -> T {
        lanes::block::<T, Self>(terms)
    }
}

impl<T: Copy, M: Monoid<T>> lanes::Lane<T> for M {
    #[inline(always)]
    fn start(x: T) -> T {
        <M as Monoid<T>>::start(x)
    }
    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        <M as Monoid<T>>::combine(a, b)
    }
}

/// The position of the first term where `hit` holds: 16 terms at a time
/// tested together, a loop without exits that the vectoriser takes, then
/// the one that hit.
#[inline(always)]
fn first_where<T: Copy>(terms: &[T], hit: impl Fn(T) -> bool) -> Option<usize> {
    const W: usize = 16;
    let mut rows = terms.chunks_exact(W);
    for (r, row) in rows.by_ref().enumerate() {
        if row.iter().fold(false, |h, &x| h | hit(x)) {
            return row.iter().position(|&x| hit(x)).map(|j| r * W + j);
        }
    }
    let full = terms.len() - rows.remainder().len();
    rows.remainder().iter().position(|&x| hit(x)).map(|j| full + j)
}

/// The position of the first of `words` equal to `e`, for an Arg's
/// extreme that is not a NaN: on x86-64 (AVX2, the crate's baseline), a
/// row of four vectors compared at once, and, in the row that holds one,
/// the compares' lane masks joined, their lowest set bit the first; the
/// loop [`first_where`] gives compiled to 4-lane and scalar compares (a
/// third of an argmax of 1024 float32 terms past the call's fixed cost).
macro_rules! first_equal {
    ($name:ident, $w:ty, $s:ty, $lanes:expr, $set1:ident, $cmpeq:ident, $movemask:ident, $cast:ident) => {
        #[inline(always)]
        fn $name(words: &[$w], e: $w) -> Option<usize> {
            #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
            {
                use std::arch::x86_64::*;
                const ROW: usize = 4 * $lanes;
                let mut rows = words.chunks_exact(ROW);
                // SAFETY: AVX2 is enabled (cfg); each load reads one of a
                // row's four vectors of $lanes words, inside the slice.
                unsafe {
                    let v = $set1(e as $s);
                    for (r, row) in rows.by_ref().enumerate() {
                        let p = row.as_ptr() as *const __m256i;
                        let q = [0, 1, 2, 3].map(|i| $cmpeq(_mm256_loadu_si256(p.add(i)), v));
                        let any = _mm256_or_si256(_mm256_or_si256(q[0], q[1]), _mm256_or_si256(q[2], q[3]));
                        if _mm256_testz_si256(any, any) == 0 {
                            let m = q.iter().enumerate().fold(0u32, |m, (i, &x)| m | ($movemask($cast(x)) as u32) << (i * $lanes));
                            return Some(r * ROW + m.trailing_zeros() as usize);
                        }
                    }
                }
                let full = words.len() - rows.remainder().len();
                rows.remainder().iter().position(|&x| x == e).map(|j| full + j)
            }
            #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
            words.iter().position(|&x| x == e)
        }
    };
}
first_equal!(first_equal32, u32, i32, 8, _mm256_set1_epi32, _mm256_cmpeq_epi32, _mm256_movemask_ps, _mm256_castsi256_ps);
first_equal!(first_equal64, u64, i64, 4, _mm256_set1_epi64x, _mm256_cmpeq_epi64, _mm256_movemask_pd, _mm256_castsi256_pd);

/// A term's bits as an unsigned word of its width.
///
/// # Safety
/// `Self` is a plain value (no padding, no pointers) of `W`'s size and
/// alignment.
unsafe trait Bits<W: Copy>: Copy {}
// SAFETY: each is a plain value of the word's size and alignment.
unsafe impl Bits<u32> for f32 {}
// SAFETY: as above.
unsafe impl Bits<u64> for f64 {}
// SAFETY: as above.
unsafe impl Bits<u64> for i64 {}
// SAFETY: as above.
unsafe impl Bits<u64> for u64 {}

/// `terms` as the words of their bits.
#[inline(always)]
fn as_words<W: Copy, T: Bits<W>>(terms: &[T]) -> &[W] {
    // SAFETY: T is a plain value of W's size and alignment (Bits), and
    // every bit pattern is a valid W (an unsigned integer); the slice
    // borrows the terms'.
    unsafe { std::slice::from_raw_parts(terms.as_ptr() as *const W, terms.len()) }
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
    /// `max2` of `terms` (at least one), in an order of the implementation's
    /// choosing (any order gives the same bits, NaNs aside).
    #[inline(always)]
    fn max_of(terms: &[Self]) -> Self {
        terms[1..].iter().fold(terms[0], |a, &x| Self::max2(a, x))
    }
    /// `min2` of `terms` (at least one), in any order.
    #[inline(always)]
    fn min_of(terms: &[Self]) -> Self {
        terms[1..].iter().fold(terms[0], |a, &x| Self::min2(a, x))
    }
    /// The position of the first term of `terms` that is `e` in the order:
    /// a NaN where `e` is one, else a term neither above nor below it (of
    /// its bits); `None` where there is none.
    #[inline(always)]
    fn position(terms: &[Self], e: Self) -> Option<usize> {
        let same = |x: Self| if e.nan() { x.nan() } else { !x.nan() && !Self::above(x, e) && !Self::above(e, x) };
        terms.iter().position(|&x| same(x))
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

/// Max and Min of a float run from its spans (`super::spans`).
macro_rules! float_extremes {
    ($max:ident, $min:ident, $f:ty, $s:ty, $u:ty, $umin:ident) => {
        /// Max of `terms` from their spans `s`: a NaN where a positive NaN
        /// makes the signed greatest pass +∞'s bits or a negative one the
        /// unsigned greatest pass -∞'s; otherwise, where a term is not
        /// negative (+0 included), the signed greatest, which orders those
        /// as the floats; otherwise, all negative (-0 included), the least
        /// magnitude, the unsigned least.
        #[inline(always)]
        fn $max(terms: &[$f], s: Spans<$s, $u>) -> $f {
            let inf = <$f>::INFINITY.to_bits();
            if s.signed_max > inf as $s || s.unsigned_max > (-<$f>::INFINITY).to_bits() {
                <$f>::NAN
            } else if s.signed_max >= 0 {
                <$f>::from_bits(s.signed_max as $u)
            } else {
                <$f>::from_bits($umin(terms))
            }
        }
        /// Min from the same spans: a NaN as for Max; otherwise, where a
        /// term is negative (-0 included), the greatest magnitude among
        /// them, the unsigned greatest; otherwise the unsigned least.
        #[inline(always)]
        fn $min(terms: &[$f], s: Spans<$s, $u>) -> $f {
            let inf = <$f>::INFINITY.to_bits();
            let sign = !(<$u>::MAX >> 1);
            if s.signed_max > inf as $s || s.unsigned_max > (-<$f>::INFINITY).to_bits() {
                <$f>::NAN
            } else if s.unsigned_max >= sign {
                <$f>::from_bits(s.unsigned_max)
            } else {
                <$f>::from_bits($umin(terms))
            }
        }
    };
}
float_extremes!(max32, min32, f32, i32, u32, unsigned_min32);
float_extremes!(max64, min64, f64, i64, u64, unsigned_min64);

/// The extreme of a float run: by the CPU's own max or min (`flagged`)
/// over what that serves, by the exact spans (`exact`) over the rest of the
/// terms or all of them, the two joined by `pick`.
#[inline(always)]
fn float_extreme<F: Copy>(
    terms: &[F],
    flagged: impl Fn(&[F]) -> Option<(F, usize)>,
    exact: impl Fn(&[F]) -> F,
    pick: impl Fn(F, F) -> F,
) -> F {
    match flagged(terms) {
        Some((m, done)) if done == terms.len() => m,
        Some((m, done)) => pick(m, exact(&terms[done..])),
        None => exact(terms),
    }
}

macro_rules! float_monoids {
    ($($f:ty, $i:ty, $u:ty, $eq:ident, $flip:ident, $max:ident, $min:ident, $spans:ident);*) => {$(
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
            #[inline(always)]
            fn max_of(terms: &[$f]) -> $f {
                float_extreme(terms, flagged::$max, |t| $max(t, $spans(t)), Self::max2)
            }
            #[inline(always)]
            fn min_of(terms: &[$f]) -> $f {
                float_extreme(terms, flagged::$min, |t| $min(t, $spans(t)), Self::min2)
            }
            #[inline(always)]
            fn position(terms: &[$f], e: $f) -> Option<usize> {
                if e.is_nan() {
                    first_where(terms, |x: $f| x.is_nan())
                } else {
                    $eq(as_words::<$u, $f>(terms), e.to_bits())
                }
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
float_monoids!(f32, i32, u32, first_equal32, flip32, max32, min32, spans32; f64, i64, u64, first_equal64, flip64, max64, min64, spans64);

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
            #[inline(always)]
            fn max_of(terms: &[$i]) -> $i { terms.iter().fold(<$i>::MIN, |a, &x| a.max(x)) }
            #[inline(always)]
            fn min_of(terms: &[$i]) -> $i { terms.iter().fold(<$i>::MAX, |a, &x| a.min(x)) }
            #[inline(always)]
            fn position(terms: &[$i], e: $i) -> Option<usize> { first_equal64(as_words::<u64, $i>(terms), e as u64) }
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
    const AHEAD: usize = 8;
    const LEAF_BLOCKS: usize = 16;
    // Bits that ignore association: one pass in any order, on AVX-512's
    // vectors where the CPU has them.
    #[inline(always)]
    fn block(terms: &[T]) -> T {
        widest(T::max_of, terms)
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
    const AHEAD: usize = 8;
    const LEAF_BLOCKS: usize = 16;
    #[inline(always)]
    fn block(terms: &[T]) -> T {
        widest(T::min_of, terms)
    }
}
