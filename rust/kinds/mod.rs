//! The kinds: one deterministic math library (the spec's nx_kinds.h), each function implemented once.
//!
//! Every kind is written in plain Rust from IEEE operations that round
//! correctly (`+ - * /`, `sqrt`, fused multiply-add), comparisons and bit
//! manipulation, never the platform's libm, so its bits are the same on every
//! target (x86-64 with FMA, aarch64), NaN payloads aside. A kind is one
//! `#[inline]` function used alike by SIMD lanes and scalar tails; its slice
//! form gives exactly the bits of the scalar one.
//!
//! Subnormal operands and results are kept, never flushed. The errors stated
//! in each kind's doc are the largest measured by its tests (module `tests`
//! of each file): f32 against the host's f64 libm over about a million
//! arguments per kind, f64 against mpmath values (`testdata/gen_ref.py`).
//!
//! The exponentials and logarithms have an f32 algorithm of their own; the
//! other f32 kinds evaluate the f64 one and round once, which keeps them
//! within about half an ulp.

// The generator prints f32 coefficients with nine digits, which round to
// the intended f32; clippy would have them cut to the shortest form.
#![allow(clippy::excessive_precision)]

mod complex;
mod exp;
mod hyperbolic;
mod invtrig;
mod log;
mod misc;
mod pow;
mod real;
#[cfg(test)]
mod testing;
mod trig;

pub use complex::*;
pub use exp::*;
pub use hyperbolic::*;
pub use invtrig::*;
pub use log::*;
pub use misc::*;
pub use pow::*;
pub use trig::*;

/// Declares a unary kind of a generic implementation `$gen`: its f32 and f64
/// scalar functions and their slice forms.
macro_rules! unary_kind {
    ($gen:ident, $f32:ident, $f64:ident, $s32:ident, $s64:ident, $(#[$doc:meta])*) => {
        $(#[$doc])*
        #[inline]
        pub fn $f32(x: f32) -> f32 {
            $gen::<f32>(x)
        }

        $(#[$doc])*
        #[inline]
        pub fn $f64(x: f64) -> f64 {
            $gen::<f64>(x)
        }

        #[doc = concat!("`", stringify!($f32), "` of each element of `x` into `out`, of the same length.")]
        #[inline]
        pub fn $s32(x: &[f32], out: &mut [f32]) {
            super::map_slice(x, out, $f32)
        }

        #[doc = concat!("`", stringify!($f64), "` of each element of `x` into `out`, of the same length.")]
        #[inline]
        pub fn $s64(x: &[f64], out: &mut [f64]) {
            super::map_slice(x, out, $f64)
        }
    };
}
use unary_kind;

/// Declares a unary kind of an f64 implementation `$core`: its f64 function,
/// the f32 one that evaluates it and rounds once, and their slice forms.
macro_rules! f64_kind {
    ($core:ident, $f32:ident, $f64:ident, $s32:ident, $s64:ident, $(#[$doc:meta])*) => {
        $(#[$doc])*
        #[inline]
        pub fn $f64(x: f64) -> f64 {
            $core(x)
        }

        $(#[$doc])*
        #[inline]
        pub fn $f32(x: f32) -> f32 {
            $core(x as f64) as f32
        }

        #[doc = concat!("`", stringify!($f32), "` of each element of `x` into `out`, of the same length.")]
        #[inline]
        pub fn $s32(x: &[f32], out: &mut [f32]) {
            super::map_slice(x, out, $f32)
        }

        #[doc = concat!("`", stringify!($f64), "` of each element of `x` into `out`, of the same length.")]
        #[inline]
        pub fn $s64(x: &[f64], out: &mut [f64]) {
            super::map_slice(x, out, $f64)
        }
    };
}
use f64_kind;

/// Applies `f` to each element of `x` into `out`.
///
/// Panics where the lengths differ.
#[inline(always)]
fn map_slice<T: Copy>(x: &[T], out: &mut [T], f: impl Fn(T) -> T) {
    assert_eq!(
        x.len(),
        out.len(),
        "a kind's slice form takes slices of one length"
    );
    for (o, &v) in out.iter_mut().zip(x) {
        *o = f(v);
    }
}

/// Applies `f` to each pair of elements of `a` and `b` into `out`.
///
/// Panics where the lengths differ.
#[inline(always)]
fn map_slice2<T: Copy>(a: &[T], b: &[T], out: &mut [T], f: impl Fn(T, T) -> T) {
    assert!(
        a.len() == out.len() && b.len() == out.len(),
        "a kind's slice form takes slices of one length"
    );
    for ((o, &u), &v) in out.iter_mut().zip(a).zip(b) {
        *o = f(u, v);
    }
}
