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
    /// A block of lanes computed at once ([`by_blocks`]): 64 bytes, one
    /// AVX-512 vector or two AVX2 ones.
    type Block: Copy + AsRef<[Self]> + AsMut<[Self]>;
    /// A block of +0.
    const BLOCK: Self::Block;
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
    type Block = [f32; 16];
    const BLOCK: [f32; 16] = [0.0; 16];
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
    type Block = [f64; 8];
    const BLOCK: [f64; 8] = [0.0; 8];
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

/// Asks the cache for the parts `p..p + len`, every 64 bytes and the
/// last, to read them, or to write them where `write`: a hint, which
/// reads and writes nothing and never faults, whatever the addresses.
#[inline(always)]
pub fn prefetch<T>(p: *const T, len: usize, write: bool) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0, _MM_HINT_T0};
        let bytes = len * std::mem::size_of::<T>();
        let at = |b: usize| p.cast::<i8>().wrapping_add(b);
        let ask = |q: *const i8| {
            // SAFETY: a prefetch is a hint that never faults.
            unsafe {
                if write {
                    _mm_prefetch::<_MM_HINT_ET0>(q)
                } else {
                    _mm_prefetch::<_MM_HINT_T0>(q)
                }
            }
        };
        for b in (0..bytes).step_by(64) {
            ask(at(b));
        }
        if bytes > 0 {
            ask(at(bytes - 1));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len, write);
}

/// The product of two complex numbers `(ar, ai) (br, bi)`, each part one
/// product and one fused multiply-add.
#[inline(always)]
pub fn cmul<T: Real>(ar: T, ai: T, br: T, bi: T) -> (T, T) {
    (ar.fma(br, -(ai * bi)), ar.fma(bi, ai * br))
}

/// A loop over lanes: `run` computes each lane t of `x`'s slices (all as
/// long as `y`'s) into lane t of `y`'s by the same operations, whatever
/// the slices' length or what holds them.
pub trait Lanes<T, const I: usize, const O: usize> {
    /// The loop over the lanes of `x` into `y`.
    fn run<X: AsRef<[T]>, Y: AsMut<[T]>>(&self, x: &[X; I], y: &mut [Y; O]);
}

/// Runs `f` over the lanes of `x` (each at least as long as `y`'s slices)
/// into `y`: a block of lanes ([`Real::Block`]) at a time through copies
/// in local arrays, then the remaining lanes in place. The compiler knows
/// local arrays overlap nothing, so it vectorises each block whole, where
/// a loop over slices would first check at run time that they do not
/// overlap, a check it hoists out of the caller's loops and that fails
/// where the slices of several calls interleave in one buffer, leaving
/// every lane to scalar code. Each lane runs the same operations either
/// way, so the bits do not change.
#[inline(always)]
pub fn by_blocks<T: Real, const I: usize, const O: usize>(x: [&[T]; I], mut y: [&mut [T]; O], f: impl Lanes<T, I, O>) {
    let s = if O == 0 { 0 } else { y[0].len() };
    let wd = T::BLOCK.as_ref().len();
    let full = s - s % wd;
    let mut t = 0;
    while t < full {
        let mut xb = [T::BLOCK; I];
        for (b, v) in xb.iter_mut().zip(&x) {
            b.as_mut().copy_from_slice(&v[t..t + wd]);
        }
        let mut yb = [T::BLOCK; O];
        f.run(&xb, &mut yb);
        for (v, b) in y.iter_mut().zip(&yb) {
            v[t..t + wd].copy_from_slice(b.as_ref());
        }
        t += wd;
    }
    if full < s {
        let mut x = x;
        for v in &mut x {
            *v = &v[full..s];
        }
        for v in &mut y {
            let whole = std::mem::take(v);
            *v = &mut whole[full..s];
        }
        f.run(&x, &mut y);
    }
}
