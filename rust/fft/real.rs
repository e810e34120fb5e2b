//! The two precisions a transform computes in, behind one trait, so that
//! each algorithm is written once. Every operation is a plain IEEE addition,
//! multiplication or fused multiply-add: Rust never contracts `a * b + c`,
//! so vectorised and scalar code of one function give the same bits.

use super::plan::Plan;
use super::Direction;
use std::collections::HashMap;
use std::ops::{Add, Mul, Neg, Sub};
use std::sync::{Arc, Mutex, OnceLock};

/// The cache of plans of one precision, by points and direction.
pub type Plans<T> = Mutex<HashMap<(usize, Direction), Arc<Plan<T>>>>;

/// The cache of a real transform's twiddles e^(σ2πi k/n), k <= n/2, by n
/// and direction.
pub type Halves<T> = Mutex<HashMap<(usize, Direction), Arc<Vec<(T, T)>>>>;

/// A float of a transform: `f32` or `f64`.
pub trait Real:
    Copy
    + Default
    + Send
    + Sync
    + 'static
    + PartialEq
    + std::fmt::Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
{
    /// +0.
    const ZERO: Self;
    /// One half.
    const HALF: Self;
    /// The value nearest `x`.
    fn of(x: f64) -> Self;
    /// The value as an `f64` (exact).
    #[cfg(test)]
    fn to_f64(self) -> f64;
    /// `self * a + b`, rounded once.
    fn fma(self, a: Self, b: Self) -> Self;
    /// This precision's cache of plans.
    fn plans() -> &'static Plans<Self>;
    /// This precision's cache of real transforms' twiddles.
    fn halves() -> &'static Halves<Self>;
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    const HALF: f32 = 0.5;
    fn of(x: f64) -> f32 {
        x as f32
    }
    #[cfg(test)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn fma(self, a: f32, b: f32) -> f32 {
        self.mul_add(a, b)
    }
    fn plans() -> &'static Plans<f32> {
        static P: OnceLock<Plans<f32>> = OnceLock::new();
        P.get_or_init(Default::default)
    }
    fn halves() -> &'static Halves<f32> {
        static H: OnceLock<Halves<f32>> = OnceLock::new();
        H.get_or_init(Default::default)
    }
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    const HALF: f64 = 0.5;
    fn of(x: f64) -> f64 {
        x
    }
    #[cfg(test)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn fma(self, a: f64, b: f64) -> f64 {
        self.mul_add(a, b)
    }
    fn plans() -> &'static Plans<f64> {
        static P: OnceLock<Plans<f64>> = OnceLock::new();
        P.get_or_init(Default::default)
    }
    fn halves() -> &'static Halves<f64> {
        static H: OnceLock<Halves<f64>> = OnceLock::new();
        H.get_or_init(Default::default)
    }
}

/// Runs `$body`, a call of `#[inline(always)]` code on the arguments
/// `$arg: $ty`, compiled a second time with AVX-512 (F, VL, DQ, BW) on
/// x86-64, that compilation taken where [`crate::core::isa::avx512`] says
/// the CPU has it. Each step is an IEEE operation of one element, so both
/// give the same bits. (A call through a closure or `FnOnce` is not
/// inlined into the wider compilation; this calls the code directly.)
macro_rules! widest {
    (<$t:ident> ($($arg:ident: $ty:ty),*) $body:block) => {{
        #[inline(always)]
        fn body<$t: Real>($($arg: $ty),*) $body
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw")]
        fn wide<$t: Real>($($arg: $ty),*) {
            body::<$t>($($arg),*)
        }
        #[cfg(target_arch = "x86_64")]
        if crate::core::isa::avx512() {
            // SAFETY: `avx512()` detected every feature `wide` enables on
            // the CPU that runs it.
            unsafe { wide::<$t>($($arg),*) }
        } else {
            body::<$t>($($arg),*)
        }
        #[cfg(not(target_arch = "x86_64"))]
        body::<$t>($($arg),*)
    }};
}
pub(super) use widest;

/// The product of two complex numbers `(ar, ai) (br, bi)`, each part one
/// product and one fused multiply-add.
#[inline(always)]
pub fn cmul<T: Real>(ar: T, ai: T, br: T, bi: T) -> (T, T) {
    (ar.fma(br, -(ai * bi)), ar.fma(bi, ai * br))
}
