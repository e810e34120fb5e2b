//! The kinds: one deterministic math library (the spec's nx_kinds.h), each function implemented once.
//!
//! Every kind is written in plain Rust from IEEE operations that round
//! correctly (`+ - * /`, `sqrt`, fused multiply-add), comparisons and bit
//! manipulation, never the platform's libm, so its bits are the same on every
//! target (x86-64 with FMA, aarch64), NaN payloads aside. A kind's
//! arithmetic is written once, in `#[inline(always)]` functions that vector
//! lanes and scalar calls share; its slice form gives exactly the bits of
//! its scalar one.
//!
//! The slice forms are plain loops that LLVM vectorises (8 f32 or 4 f64
//! lanes with AVX2, 16 or 8 in their second compilation, for AVX-512, which
//! a call takes where the CPU has it: `wide.rs`): every step of a kind
//! computed for every lane, a choice a select between values computed
//! before it. Most kinds have two paths
//! (see `map_split`): the kind itself, and a cheaper path for the
//! ordinary arguments, without the clamps, subnormal scalings and special
//! cases those do not need, that a slice runs over a whole block before
//! it redoes its rare others by the kind. What keeps a loop fast: no
//! subnormal computed even in a lane whose result is dropped (the CPU takes
//! about a hundred cycles over one), no division or square root on one
//! side of a branch (the compiler copies the work after it into each side,
//! and a vector computes every side), and no two branches on one condition
//! with work between them (rustc's jump threading would copy that work
//! likewise; `Real::select` chooses without a branch).
//! `bench.rs` times them (ignored test).
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

#[cfg(test)]
mod bench;
mod complex;
mod exp;
mod hyperbolic;
mod invtrig;
mod log;
mod misc;
mod pow;
mod real;
#[cfg(test)]
mod slices;
#[cfg(test)]
mod testing;
mod trig;
pub(crate) mod wide;

use wide::slice_form;

pub use complex::*;
pub use exp::*;
pub use hyperbolic::*;
pub use invtrig::*;
pub use log::*;
pub use misc::*;
pub use pow::*;
pub use trig::*;

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

        super::slice_form! {
            #[doc = concat!("`", stringify!($f32), "` of each element of `x` into `out`, of the same length.")]
            pub fn $s32(x: &[f32], out: &mut [f32]) {
                super::map_slice(x, out, $f32)
            }
        }

        super::slice_form! {
            #[doc = concat!("`", stringify!($f64), "` of each element of `x` into `out`, of the same length.")]
            pub fn $s64(x: &[f64], out: &mut [f64]) {
                super::map_slice(x, out, $f64)
            }
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
    for (b, (xb, ob)) in x.chunks(BLOCK).zip(out.chunks_mut(BLOCK)).enumerate() {
        prefetch(x, (b + AHEAD) * BLOCK);
        for (o, &v) in ob.iter_mut().zip(xb) {
            *o = f(v);
        }
    }
}

/// Blocks ahead of the one a slice form computes whose arguments it
/// prefetches.
const AHEAD: usize = 2;

/// Asks the CPU to bring the block of `x` from `start` into its caches,
/// where the whole block lies in `x`. Its own prefetchers fall behind a
/// loop as dense as a kind's: measured over 10M elements, this makes exp
/// and log a fifth to a third faster.
#[inline(always)]
fn prefetch<T>(x: &[T], start: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(block) = x.get(start..start.saturating_add(BLOCK)) {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = block.as_ptr().cast::<i8>();
        for i in (0..core::mem::size_of_val(block)).step_by(64) {
            // SAFETY: a prefetch is a hint: it reads nothing the program
            // sees and cannot fault; `p + i` lies within `block` besides.
            unsafe { _mm_prefetch(p.add(i), _MM_HINT_T0) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (x, start);
}

/// Elements per block of [`map_split`]: its second pass reads the block
/// again while it is in the L1 cache, and a block with one argument that
/// is not ordinary takes that pass.
const BLOCK: usize = 256;

/// A kind of two paths, as [`map_split`] runs it: `full`, the kind itself
/// (its scalar form), for every argument, and `fast`, for the arguments
/// that `ordinary` accepts (nearly all of those met in practice), where it
/// gives `full`'s bits: it is `full` less the steps that are identities
/// there (a clamp, the scaling of a subnormal, the special cases), through
/// the same core. The tests of `slices.rs` hold the two forms to one
/// another's bits.
///
/// Implemented by [`split_slice!`] alone, each function
/// `#[inline(always)]`: [`map_split`]'s loops call them directly, so that
/// each holds the kind's whole arithmetic in every compilation. (A kind
/// passed as a closure or a function is called through a shim that LLVM
/// inlines by its own measure of size, and erf's is too large: its loops
/// stayed calls, scalar.)
trait Split {
    type T: Lane;
    /// Whether `full` vectorises: it has no call in it.
    const VEC_FULL: bool;
    fn ordinary(x: Self::T) -> bool;
    fn fast(x: Self::T) -> Self::T;
    fn full(x: Self::T) -> Self::T;
}

/// The slice form of a [`Split`] kind `K` over `x` into `out`.
///
/// Over each block: `fast` of every element, a loop without branches, which
/// vectorises, counting the arguments that are not ordinary; then, if any,
/// `full` again of those alone, one by one, or where they are many (a
/// 32nd of the block), of the whole block, a loop that vectorises where
/// `VEC_FULL` says `full` does (where it does not, as with a call in it,
/// the others alone, one by one). After a block of many, the next takes
/// `full` at once, until one has few.
///
/// The scalar form stays `full`, branch-free, which a caller's own loop
/// vectorises at the cost it always had (a branch to `fast` would have it
/// compute both); exp's alone branches (`exp_kind_scalar`), whose `full`
/// computes `fast` and more for every argument.
///
/// Panics where the lengths differ.
#[inline(always)]
fn map_split<K: Split>(x: &[K::T], out: &mut [K::T]) {
    assert_eq!(
        x.len(),
        out.len(),
        "a kind's slice form takes slices of one length"
    );
    let mut dense = false;
    for (b, (xb, ob)) in x.chunks(BLOCK).zip(out.chunks_mut(BLOCK)).enumerate() {
        prefetch(x, (b + AHEAD) * BLOCK);
        let mut rare = K::T::NONE;
        if dense {
            for (o, &v) in ob.iter_mut().zip(xb) {
                *o = K::full(v);
                rare = rare + K::T::one(!K::ordinary(v));
            }
        } else {
            for (o, &v) in ob.iter_mut().zip(xb) {
                *o = K::fast(v);
                rare = rare + K::T::one(!K::ordinary(v));
            }
        }
        let many = K::VEC_FULL && K::T::count(rare) * 32 > xb.len();
        if !dense && many {
            for (o, &v) in ob.iter_mut().zip(xb) {
                *o = K::full(v);
            }
        } else if !dense && rare != K::T::NONE {
            for (o, &v) in ob.iter_mut().zip(xb) {
                if !K::ordinary(v) {
                    *o = outlined::<K>(v);
                }
            }
        }
        dense = many;
    }
}

/// `K::full(v)`, not inlined: a loop around a call does not vectorise, and
/// so computes `full` only where it is called.
#[inline(never)]
fn outlined<K: Split>(v: K::T) -> K::T {
    K::full(v)
}

/// The body of a [`Split`] kind's slice form: [`map_split`] of `$x` into
/// `$out`, elements of type `$t`, of the kind whose `ordinary`, `fast` and
/// `full` of an argument `$v` are the expressions `$ord`, `$fast`, `$full`,
/// `$vec_full` its `VEC_FULL`.
macro_rules! split_slice {
    ($t:ty, $vec_full:expr, $x:ident, $out:ident, |$v:ident| $ord:expr, $fast:expr, $full:expr) => {{
        struct Kind;
        impl super::Split for Kind {
            type T = $t;
            const VEC_FULL: bool = $vec_full;
            #[inline(always)]
            fn ordinary($v: $t) -> bool {
                $ord
            }
            #[inline(always)]
            fn fast($v: $t) -> $t {
                $fast
            }
            #[inline(always)]
            fn full($v: $t) -> $t {
                $full
            }
        }
        super::map_split::<Kind>($x, $out)
    }};
}
use split_slice;

/// An element of a slice form: f32 or f64, with an integer of its width in
/// which [`map_split`] counts (a vector of counts is then one register).
trait Lane: Copy {
    type Count: Copy + PartialEq + core::ops::Add<Output = Self::Count>;
    const NONE: Self::Count;
    /// 1 where `b`, else 0.
    fn one(b: bool) -> Self::Count;
    fn count(n: Self::Count) -> usize;
}

impl Lane for f32 {
    type Count = u32;
    const NONE: u32 = 0;
    #[inline(always)]
    fn one(b: bool) -> u32 {
        b as u32
    }
    #[inline(always)]
    fn count(n: u32) -> usize {
        n as usize
    }
}

impl Lane for f64 {
    type Count = u64;
    const NONE: u64 = 0;
    #[inline(always)]
    fn one(b: bool) -> u64 {
        b as u64
    }
    #[inline(always)]
    fn count(n: u64) -> usize {
        n as usize
    }
}

/// Declares a unary kind of two paths (see [`map_split`]), generic
/// implementations `$ord`, `$fast` and `$full`: its f32 and f64 scalar
/// functions (`$full`) and their slice forms.
/// `$full / $scalar` names the scalar functions' own implementation, where
/// one of `$full`'s bits runs faster outside a vector loop.
macro_rules! split_kind {
    ($ord:ident, $fast:ident, $full:ident, $f32:ident, $f64:ident, $s32:ident, $s64:ident, $(#[$doc:meta])*) => {
        super::split_kind! {
            $ord, $fast, $full / $full, $f32, $f64, $s32, $s64, $(#[$doc])*
        }
    };
    ($ord:ident, $fast:ident, $full:ident / $scalar:ident, $f32:ident, $f64:ident, $s32:ident, $s64:ident, $(#[$doc:meta])*) => {
        $(#[$doc])*
        #[inline]
        pub fn $f32(x: f32) -> f32 {
            $scalar::<f32>(x)
        }

        $(#[$doc])*
        #[inline]
        pub fn $f64(x: f64) -> f64 {
            $scalar::<f64>(x)
        }

        super::slice_form! {
            #[doc = concat!("`", stringify!($f32), "` of each element of `x` into `out`, of the same length.")]
            pub fn $s32(x: &[f32], out: &mut [f32]) {
                super::split_slice!(f32, true, x, out, |v| $ord(v), $fast(v), $full(v))
            }
        }

        super::slice_form! {
            #[doc = concat!("`", stringify!($f64), "` of each element of `x` into `out`, of the same length.")]
            pub fn $s64(x: &[f64], out: &mut [f64]) {
                super::split_slice!(f64, true, x, out, |v| $ord(v), $fast(v), $full(v))
            }
        }
    };
}
use split_kind;

/// Declares a unary kind of two paths (see [`map_split`]), f64
/// implementations `$ord`, `$fast` and `$full`: its f64 function (`$full`),
/// the f32 one that evaluates it and rounds once, and their slice forms.
/// A leading `false` says that `$full` does not vectorise.
macro_rules! split_f64_kind {
    ($vec_full:literal, $ord:ident, $fast:ident, $full:ident, $f32:ident, $f64:ident, $s32:ident, $s64:ident, $(#[$doc:meta])*) => {
        $(#[$doc])*
        #[inline]
        pub fn $f64(x: f64) -> f64 {
            $full(x)
        }

        $(#[$doc])*
        #[inline]
        pub fn $f32(x: f32) -> f32 {
            $full(x as f64) as f32
        }

        super::slice_form! {
            #[doc = concat!("`", stringify!($f32), "` of each element of `x` into `out`, of the same length.")]
            pub fn $s32(x: &[f32], out: &mut [f32]) {
                super::split_slice!(
                    f32,
                    $vec_full,
                    x,
                    out,
                    |v| $ord(v as f64),
                    $fast(v as f64) as f32,
                    $full(v as f64) as f32
                )
            }
        }

        super::slice_form! {
            #[doc = concat!("`", stringify!($f64), "` of each element of `x` into `out`, of the same length.")]
            pub fn $s64(x: &[f64], out: &mut [f64]) {
                super::split_slice!(f64, $vec_full, x, out, |v| $ord(v), $fast(v), $full(v))
            }
        }
    };
    ($ord:ident, $fast:ident, $full:ident, $f32:ident, $f64:ident, $s32:ident, $s64:ident, $(#[$doc:meta])*) => {
        super::split_f64_kind! {
            true, $ord, $fast, $full, $f32, $f64, $s32, $s64, $(#[$doc])*
        }
    };
}
use split_f64_kind;

/// Applies `f` to each pair of elements of `a` and `b` into `out`.
///
/// Panics where the lengths differ.
#[inline(always)]
fn map_slice2<T: Copy>(a: &[T], b: &[T], out: &mut [T], f: impl Fn(T, T) -> T) {
    assert!(
        a.len() == out.len() && b.len() == out.len(),
        "a kind's slice form takes slices of one length"
    );
    let blocks = a
        .chunks(BLOCK)
        .zip(b.chunks(BLOCK))
        .zip(out.chunks_mut(BLOCK));
    for (i, ((ab, bb), ob)) in blocks.enumerate() {
        prefetch(a, (i + AHEAD) * BLOCK);
        prefetch(b, (i + AHEAD) * BLOCK);
        for ((o, &u), &v) in ob.iter_mut().zip(ab).zip(bb) {
            *o = f(u, v);
        }
    }
}
