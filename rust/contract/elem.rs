//! The register types a contraction computes in, how an element of any
//! dtype enters one, and the steps both orders take: the fused product of
//! a chain, a block of lane order, and the microkernel of the packed loop.
//!
//! A float32 acc computes in `f32`, float64 in `f64`, complex64 and
//! complex128 in `Complex<f32>` and `Complex<f64>`; an integer acc of w bits
//! in `i32` where w is at most 32, else in `i64`, wrapping: a sum modulo
//! 2^32 or 2^64 is the sum modulo 2^w once cut to w bits.

use crate::loops::column::{ColRef, C32, C64};
use crate::core::dtype::Dtype;
use crate::core::narrow;
use crate::reduce::lanes::{fold16, Lane};
use std::sync::atomic::{AtomicU8, Ordering};

/// An element's value, exactly, as it lies in memory: a narrow float or a
/// float32 is held by a float64 without rounding, a complex64 by two.
#[derive(Clone, Copy, Debug)]
pub enum Value {
    Truth(bool),
    Int(i64),
    Uint(u64),
    Real(f64),
    Pair(f64, f64),
}

/// Reads byte `at` of `base` atomically: another thread of the call may be
/// storing other elements of that byte meanwhile (`memio::store` stores
/// sub-byte elements by atomic read-modify-writes).
///
/// # Safety
/// The byte lies in memory valid to read.
#[inline(always)]
unsafe fn shared_byte(base: *const u8, at: isize) -> u8 {
    // SAFETY: the byte is valid (caller); AtomicU8 has u8's size and
    // alignment.
    unsafe { &*(base.offset(at) as *const AtomicU8) }.load(Ordering::Relaxed)
}

/// Element `i` of type `T` from `base`, unaligned.
///
/// # Safety
/// The element lies in memory valid to read.
#[inline(always)]
unsafe fn get<T: Copy>(base: *const u8, i: isize) -> T {
    // SAFETY: as this function's contract.
    unsafe { base.cast::<T>().offset(i).read_unaligned() }
}

/// The value of element `i` of dtype `d` in the memory from `base`.
///
/// # Safety
/// The element lies in memory valid to read: a view checked against its
/// buffer reaches it.
#[inline(always)]
pub unsafe fn value(d: Dtype, base: *const u8, i: isize) -> Value {
    // SAFETY (every read): element i lies in valid memory (caller), so its
    // bytes do, and a sub-byte element's byte.
    unsafe {
        let nibble = || (shared_byte(base, i >> 1) >> (4 * (i & 1))) & 15;
        match d {
            Dtype::Bool => Value::Truth(get::<u8>(base, i) != 0),
            Dtype::Bit => Value::Truth((shared_byte(base, i >> 3) >> (i & 7)) & 1 != 0),
            Dtype::Int4 => Value::Int((((nibble() << 4) as i8) >> 4) as i64),
            Dtype::Uint4 => Value::Uint(nibble() as u64),
            Dtype::Int8 => Value::Int(get::<i8>(base, i) as i64),
            Dtype::Int16 => Value::Int(get::<i16>(base, i) as i64),
            Dtype::Int32 => Value::Int(get::<i32>(base, i) as i64),
            Dtype::Int64 => Value::Int(get::<i64>(base, i)),
            Dtype::Uint8 => Value::Uint(get::<u8>(base, i) as u64),
            Dtype::Uint16 => Value::Uint(get::<u16>(base, i) as u64),
            Dtype::Uint32 => Value::Uint(get::<u32>(base, i) as u64),
            Dtype::Uint64 => Value::Uint(get::<u64>(base, i)),
            Dtype::Float4E2m1fn => Value::Real(narrow::decode(d, nibble() as u16).unwrap_or(0.0) as f64),
            Dtype::Float8E4m3fn | Dtype::Float8E5m2 => {
                Value::Real(narrow::decode(d, get::<u8>(base, i) as u16).unwrap_or(0.0) as f64)
            }
            Dtype::Float16 | Dtype::Bfloat16 => Value::Real(narrow::decode(d, get::<u16>(base, i)).unwrap_or(0.0) as f64),
            Dtype::Float32 => Value::Real(get::<f32>(base, i) as f64),
            Dtype::Float64 => Value::Real(get::<f64>(base, i)),
            Dtype::Complex64 => {
                let c = get::<C32>(base, i);
                Value::Pair(c.re as f64, c.im as f64)
            }
            Dtype::Complex128 => {
                let c = get::<C64>(base, i);
                Value::Pair(c.re, c.im)
            }
        }
    }
}

/// `x` as Cast casts a value into an integer dtype of `bits` bits, signed
/// or not, held sign- or zero-extended: an integer wraps modulo 2^bits; a
/// float rounds toward zero and saturates at the dtype's ends, a NaN
/// giving 0; a complex number so gives its real part; a truth value 0 or 1.
fn integer(v: Value, bits: u32, signed: bool) -> i64 {
    let wrap = |u: u64| -> i64 {
        let s = 64 - bits;
        if signed { ((u << s) as i64) >> s } else { ((u << s) >> s) as i64 }
    };
    let real = |x: f64| -> i64 {
        if bits == 64 {
            if signed { x as i64 } else { x as u64 as i64 }
        } else {
            let (lo, hi) = if signed {
                (-((1u64 << (bits - 1)) as f64), ((1u64 << (bits - 1)) - 1) as f64)
            } else {
                (0.0, ((1u64 << bits) - 1) as f64)
            };
            if x.is_nan() { 0 } else { x.trunc().clamp(lo, hi) as i64 }
        }
    };
    match v {
        Value::Truth(t) => t as i64,
        Value::Int(i) => wrap(i as u64),
        Value::Uint(u) => wrap(u),
        Value::Real(x) | Value::Pair(x, _) => real(x),
    }
}

/// The integer acc dtype's width and signedness.
fn int_acc(acc: Dtype) -> (u32, bool) {
    (acc.bits() as u32, acc.family() == crate::core::dtype::Family::Signed)
}

/// A register type a contraction computes in.
pub trait Elem: Copy + Default + PartialEq + Send + Sync + std::fmt::Debug + 'static {
    /// +0.
    const ZERO: Self;
    /// The dtype whose elements are this type's values bit for bit, which
    /// results leave the computation in, to be cast into acc's dtype.
    const DTYPE: Dtype;
    /// Whether an element of dtype `d` entering an acc of dtype `d` is this
    /// type's value bit for bit, so that it may be read in place.
    fn in_place(d: Dtype) -> bool;
    /// An element's value as Cast casts it into `acc`, held in this type.
    fn of(v: Value, acc: Dtype) -> Self;
    /// The sum of `a` and `b` (complex: part by part; integers wrap).
    fn add(a: Self, b: Self) -> Self;
    /// The product of `a` and `b`, rounded once: an element times its
    /// scale (which only float accs take).
    fn mul(a: Self, b: Self) -> Self;
    /// One product fused into a sum: `c + a b` rounded once (a complex
    /// product as its two terms, `re a · b` then `i im a · b`, each part
    /// fused into its part of the sum; integers wrap).
    fn fma(a: Self, b: Self, c: Self) -> Self;
    /// The lane-order sum of the products `a[i] b[i]`, a block of at most
    /// 1024 terms (a complex product two of them, `re a · b` then
    /// `i im a · b`): 16 lanes from +0, each product fused into its lane,
    /// then the lanes' tree.
    fn lane_block(a: &[Self], b: &[Self]) -> Self;
    /// [`Elem::lane_block`] of four rows of products sharing `b`: the
    /// block sums of `a[r]` and `b`, each of the shortest's length.
    fn lane_block4(a: [&[Self]; 4], b: &[Self]) -> [Self; 4] {
        let n = a.iter().fold(b.len(), |n, x| n.min(x.len()));
        a.map(|x| Self::lane_block(&x[..n], &b[..n]))
    }
    /// [`Elem::lane_block`] of eight rows of products sharing `b`, each
    /// of the shortest's length, by a kernel for a matrix too large for the
    /// caches, where this type and CPU have one (float32 on AVX-512);
    /// `None` otherwise.
    fn lane_block8_streaming(_a: [&[Self]; 8], _b: &[Self]) -> Option<[Self; 8]> {
        None
    }
    /// The terms a product takes in lane order: 1, or 2 for a complex one.
    const TERMS: usize = 1;
    /// The microkernel of the packed loop: AVX-512's where `wide` and
    /// there is one, else the crate's baseline's.
    fn micro(wide: bool) -> Micro<Self>;
    /// A column of [`Elem::DTYPE`] holding `v`.
    fn column(v: &[Self]) -> ColRef<'_>;
}

/// Sums in the acc as the lanes of lane order combine them: by
/// [`Elem::add`].
struct Plus<E>(std::marker::PhantomData<E>);

impl<E: Elem> Lane<E> for Plus<E> {
    #[inline(always)]
    fn start(x: E) -> E {
        x
    }
    #[inline(always)]
    fn combine(a: E, b: E) -> E {
        E::add(a, b)
    }
}

/// The lanes' tree of lane order over lanes `present..` holding no term
/// (reduce's): lane i takes lane i + 8 for i below 8, then i + 4, i + 2,
/// then lane 0 takes lane 1.
#[inline(always)]
fn fold<E: Elem>(lanes: &mut [E; 16], present: usize) -> E {
    fold16::<E, Plus<E>>(lanes, present)
}

/// The whole rows of 16 products of `a` and `b` (of one length) into the
/// 16 lanes, lane l taking product l of each row fused into it: the
/// portable form of `simd`'s vector lanes.
#[inline(always)]
fn rows<E: Elem>(a: &[E], b: &[E], lanes: &mut [E; 16]) {
    for (x, y) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        for l in 0..16 {
            lanes[l] = E::fma(x[l], y[l], lanes[l]);
        }
    }
}

/// [`rows`] of four rows of products sharing `b`.
#[inline(always)]
fn rows4<E: Elem>(a: [&[E]; 4], b: &[E], lanes: &mut [[E; 16]; 4]) {
    for (x, l) in a.iter().zip(lanes.iter_mut()) {
        rows(x, b, l);
    }
}

/// Declares the [`Elem`] of a real register type `$t`: its dtype `$dtype`
/// (and `$same`, whose elements are its values too), its +0, how a value
/// enters it (`$of` of `$v` into `$acc`), its sum, product and fused
/// product, the whole rows of lane order (`$rows`) and its microkernel
/// (`$micro`).
macro_rules! real_elem {
    ($t:ty, $col:ident, $dtype:ident, [$($same:ident),*], $zero:literal,
     of |$v:ident, $acc:ident| $of:expr,
     add |$x:ident, $y:ident| $add:expr, mul $mul:expr, fma |$z:ident| $fma:expr,
     $rows:path, $rows4:path, $micro:path $(, $block8:path)?) => {
        impl Elem for $t {
            const ZERO: $t = $zero;
            const DTYPE: Dtype = Dtype::$dtype;
            #[inline(always)]
            fn in_place(d: Dtype) -> bool {
                d == Dtype::$dtype $(|| d == Dtype::$same)*
            }
            #[inline(always)]
            fn of($v: Value, $acc: Dtype) -> $t {
                $of
            }
            #[inline(always)]
            fn add($x: $t, $y: $t) -> $t {
                $add
            }
            #[inline(always)]
            fn mul($x: $t, $y: $t) -> $t {
                $mul
            }
            #[inline(always)]
            fn fma($x: $t, $y: $t, $z: $t) -> $t {
                $fma
            }
            #[inline]
            fn lane_block(a: &[$t], b: &[$t]) -> $t {
                let n = a.len().min(b.len());
                let mut lanes = [$zero; 16];
                $rows(&a[..n], &b[..n], &mut lanes);
                let full = n - n % 16;
                for l in 0..n - full {
                    lanes[l] = Self::fma(a[full + l], b[full + l], lanes[l]);
                }
                fold(&mut lanes, n.min(16))
            }
            #[inline]
            fn lane_block4(a: [&[$t]; 4], b: &[$t]) -> [$t; 4] {
                let n = a.iter().fold(b.len(), |n, x| n.min(x.len()));
                let mut lanes = [[$zero; 16]; 4];
                $rows4(a.map(|x| &x[..n]), &b[..n], &mut lanes);
                let full = n - n % 16;
                core::array::from_fn(|r| {
                    let l = &mut lanes[r];
                    for t in 0..n - full {
                        l[t] = Self::fma(a[r][full + t], b[full + t], l[t]);
                    }
                    fold(l, n.min(16))
                })
            }
            $(
            fn lane_block8_streaming(a: [&[$t]; 8], b: &[$t]) -> Option<[$t; 8]> {
                $block8(a, b)
            }
            )?
            fn micro(wide: bool) -> Micro<$t> {
                $micro(wide)
            }
            fn column(v: &[$t]) -> ColRef<'_> {
                ColRef::$col(v)
            }
        }
    };
}

/// [`Elem::lane_block8_streaming`] of float32: AVX-512's eight rows
/// ([`f32_lanes8_streaming`](super::simd::f32_lanes8_streaming)), the
/// tails and the lanes' tree as [`Elem::lane_block`]'s.
fn f32_block8(a: [&[f32]; 8], b: &[f32]) -> Option<[f32; 8]> {
    #[cfg(target_arch = "x86_64")]
    if crate::core::isa::avx512() {
        let n = a.iter().fold(b.len(), |n, x| n.min(x.len()));
        let mut lanes = [[0f32; 16]; 8];
        // SAFETY: each slice holds n values, n / 16 whole rows of 16; the
        // CPU has AVX-512 F (`isa::avx512`).
        unsafe { super::simd::f32_lanes8_streaming(a.map(|x| x.as_ptr()), b.as_ptr(), n / 16, &mut lanes) };
        let full = n - n % 16;
        return Some(core::array::from_fn(|r| {
            let l = &mut lanes[r];
            for t in 0..n - full {
                l[t] = a[r][full + t].mul_add(b[full + t], l[t]);
            }
            fold(l, n.min(16))
        }));
    }
    let _ = (a, b);
    None
}

/// A float's value as Cast casts it into the float type `$t`.
macro_rules! float_of {
    ($v:ident, $t:ty) => {
        match $v {
            Value::Truth(t) => t as u8 as $t,
            Value::Int(i) => i as $t,
            Value::Uint(u) => u as $t,
            Value::Real(x) | Value::Pair(x, _) => x as $t,
        }
    };
}

real_elem!(f32, F32, Float32, [], 0.0, of |v, _acc| float_of!(v, f32),
    add |x, y| x + y, mul x * y, fma |z| x.mul_add(y, z), super::simd::f32_lanes, super::simd::f32_lanes4, super::simd::f32_micro, f32_block8);
real_elem!(f64, F64, Float64, [], 0.0, of |v, _acc| float_of!(v, f64),
    add |x, y| x + y, mul x * y, fma |z| x.mul_add(y, z), super::simd::f64_lanes, super::simd::f64_lanes4, super::simd::f64_micro);
real_elem!(i32, I32, Int32, [Uint32], 0, of |v, acc| { let (bits, signed) = int_acc(acc); integer(v, bits, signed) as i32 },
    add |x, y| x.wrapping_add(y), mul x.wrapping_mul(y), fma |z| z.wrapping_add(x.wrapping_mul(y)), rows, rows4, super::simd::i32_micro);
real_elem!(i64, I64, Int64, [Uint64], 0, of |v, acc| { let (bits, signed) = int_acc(acc); integer(v, bits, signed) },
    add |x, y| x.wrapping_add(y), mul x.wrapping_mul(y), fma |z| z.wrapping_add(x.wrapping_mul(y)), rows, rows4, super::simd::i64_micro);

macro_rules! complex_elem {
    ($t:ty, $f:ty, $col:ident, $dtype:ident, $micro:ident) => {
        impl Elem for $t {
            const ZERO: $t = <$t>::new(0.0, 0.0);
            const DTYPE: Dtype = Dtype::$dtype;
            const TERMS: usize = 2;
            #[inline(always)]
            fn in_place(d: Dtype) -> bool {
                d == Dtype::$dtype
            }
            #[inline(always)]
            fn of(v: Value, _acc: Dtype) -> $t {
                match v {
                    Value::Pair(re, im) => <$t>::new(re as $f, im as $f),
                    v => <$t>::new(<$f as Elem>::of(v, Dtype::Float64), 0.0),
                }
            }
            #[inline(always)]
            fn add(a: $t, b: $t) -> $t {
                <$t>::new(a.re + b.re, a.im + b.im)
            }
            #[inline(always)]
            fn mul(a: $t, b: $t) -> $t {
                crate::reduce::cmul(a, b)
            }
            #[inline(always)]
            fn fma(a: $t, b: $t, c: $t) -> $t {
                let re = (-a.im).mul_add(b.im, a.re.mul_add(b.re, c.re));
                let im = a.im.mul_add(b.re, a.re.mul_add(b.im, c.im));
                <$t>::new(re, im)
            }
            #[inline]
            fn lane_block(a: &[$t], b: &[$t]) -> $t {
                // Product p's terms go to lanes 2p and 2p + 1 modulo 16.
                let n = a.len().min(b.len());
                let mut lanes = [<$t as Elem>::ZERO; 16];
                for (p, (x, y)) in a[..n].iter().zip(&b[..n]).enumerate() {
                    let l = (2 * p) % 16;
                    lanes[l] = <$t>::new(x.re.mul_add(y.re, lanes[l].re), x.re.mul_add(y.im, lanes[l].im));
                    lanes[l + 1] =
                        <$t>::new((-x.im).mul_add(y.im, lanes[l + 1].re), x.im.mul_add(y.re, lanes[l + 1].im));
                }
                fold(&mut lanes, (2 * n).min(16))
            }
            fn micro(wide: bool) -> Micro<$t> {
                super::simd::$micro(wide)
            }
            fn column(v: &[$t]) -> ColRef<'_> {
                ColRef::$col(v)
            }
        }
    };
}
complex_elem!(C32, f32, C32, Complex64, c32_micro);
complex_elem!(C64, f64, C64, Complex128, c64_micro);

/// A microkernel: a tile of `mr` rows of `nr` sums takes the products of
/// `kc` depths in increasing order, each output's chain fused as
/// [`Elem::fma`], from the sums at `tile.from` (or +0) into `tile.to`; `a`
/// holds `mr` values a depth, `b` `nr`.
///
/// # Safety
/// `a` holds `kc * mr` values, `b` `kc * nr`; the tiles at `tile.from` and
/// `tile.to` lie in memory this thread alone reads and writes; the CPU has
/// the instructions the kernel was compiled for ([`Elem::micro`] gives only
/// those it has).
pub type Kernel<E> = unsafe fn(kc: usize, a: *const E, b: *const E, tile: Tile<E>);

/// Where a microkernel's sums come from and go: tiles of rows a number of
/// values apart (which may be one tile).
#[derive(Clone, Copy)]
pub struct Tile<E> {
    /// The sums the products add to and their rows' step; None: +0.
    pub from: Option<(*const E, usize)>,
    /// Where the sums go and their rows' step.
    pub to: (*mut E, usize),
}

impl<E> Tile<E> {
    /// The tile at `c`, rows `ld` apart, whose sums take the products in
    /// place.
    pub fn at(c: *mut E, ld: usize) -> Tile<E> {
        Tile { from: Some((c.cast_const(), ld)), to: (c, ld) }
    }
}

/// A microkernel and its tile's rows and columns.
#[derive(Clone, Copy)]
pub struct Micro<E> {
    /// Rows of the tile: a's values a depth.
    pub mr: usize,
    /// Columns of the tile: b's values a depth.
    pub nr: usize,
    /// The kernel.
    pub run: Kernel<E>,
}

/// A reader of one dtype's elements into an [`Elem`]: element `i` from
/// `base`, cast into the acc dtype given.
pub type Read<E> = unsafe fn(*const u8, isize, Dtype) -> E;

/// The [`Read`] of dtype `d`'s elements, compiled for `d`.
pub fn reader<E: Elem>(d: Dtype) -> Read<E> {
    /// # Safety
    /// As [`value`].
    unsafe fn at<E: Elem, const D: u8>(base: *const u8, i: isize, acc: Dtype) -> E {
        // SAFETY: as this function's contract.
        E::of(unsafe { value(Dtype::ALL[D as usize], base, i) }, acc)
    }
    macro_rules! by_code {
        ($($c:literal)*) => {
            match d.code() {
                $($c => at::<E, $c>,)*
                _ => unreachable!("a dtype's code is below 21"),
            }
        };
    }
    by_code!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)
}

/// The register type of each accepted acc, for a kernel generic over
/// [`Elem`] to be run at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    F32,
    F64,
    C32,
    C64,
    I32,
    I64,
}

/// The register type an acc computes in; `None` for a dtype that
/// `Nx_kernel.accumulates` rejects (bool, bit, the narrow floats).
pub fn kind(acc: Dtype) -> Option<Kind> {
    Some(match acc {
        Dtype::Float32 => Kind::F32,
        Dtype::Float64 => Kind::F64,
        Dtype::Complex64 => Kind::C32,
        Dtype::Complex128 => Kind::C64,
        Dtype::Int64 | Dtype::Uint64 => Kind::I64,
        d if d.is_integer() => Kind::I32,
        _ => return None,
    })
}
