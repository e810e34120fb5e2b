//! Elements as values: how a scatter's Add, Max and Min read an element of
//! each dtype into its register type (as `crate::loops::column` names them) and
//! write one back, through the element access of [`super::slot`].

use super::slot::{Packed, Slot};
use crate::loops::arith::Arith;
use crate::loops::column::{wrap_i4, C32, C64};
use crate::core::narrow::Narrow;

/// A dtype's elements read as values of its register type.
pub trait Num: Copy + Send + Sync {
    /// The register type.
    type R: Arith;
    /// The value of element `i`.
    ///
    /// # Safety
    /// As [`Slot::get`].
    unsafe fn get(&self, base: *const u8, i: isize) -> Self::R;
    /// Writes `v`, which must be a value of the dtype, into element `i`
    /// (a narrow float rounded into its dtype).
    ///
    /// # Safety
    /// As [`Slot::put`].
    unsafe fn put(&self, base: *mut u8, i: isize, v: Self::R);
    /// `v`, a sum of two values of the dtype, rounded into the dtype as
    /// `Prog.binary.Add` rounds it: a narrow float rounded once from
    /// float32, a sub-byte integer wrapped; the identity elsewhere.
    #[inline]
    fn round(&self, v: Self::R) -> Self::R {
        v
    }
}

/// A dtype whose register type `T` holds it bit for bit.
#[derive(Clone, Copy)]
pub struct Plain<T>(std::marker::PhantomData<T>);

impl<T> Plain<T> {
    /// The dtype's access.
    pub const NEW: Self = Plain(std::marker::PhantomData);
}

macro_rules! plain {
    ($($t:ty),*) => {$(
        impl Num for Plain<$t> {
            type R = $t;
            #[inline]
            unsafe fn get(&self, base: *const u8, i: isize) -> $t {
                // SAFETY: the element lies in valid memory (caller); every
                // bit pattern is a value of the type.
                (base.offset(i * size_of::<$t>() as isize) as *const $t).read_unaligned()
            }
            #[inline]
            unsafe fn put(&self, base: *mut u8, i: isize, v: $t) {
                // SAFETY: the element lies in valid memory (caller).
                (base.offset(i * size_of::<$t>() as isize) as *mut $t).write_unaligned(v)
            }
        }
    )*};
}
plain!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, C32, C64);

/// bool: a byte, true where it is not 0; written as 0 or 1.
#[derive(Clone, Copy)]
pub struct Bool;

impl Num for Bool {
    type R = bool;
    #[inline]
    unsafe fn get(&self, base: *const u8, i: isize) -> bool {
        // SAFETY: as the caller's contract.
        <u8 as Slot>::get(base, i) != 0
    }
    #[inline]
    unsafe fn put(&self, base: *mut u8, i: isize, v: bool) {
        // SAFETY: as the caller's contract.
        <u8 as Slot>::put(base, i, v as u8)
    }
}

/// bit: one packed bit.
#[derive(Clone, Copy)]
pub struct Bit;

impl Num for Bit {
    type R = bool;
    #[inline]
    unsafe fn get(&self, base: *const u8, i: isize) -> bool {
        // SAFETY: as the caller's contract.
        Packed::<1>::get(base, i).0 != 0
    }
    #[inline]
    unsafe fn put(&self, base: *mut u8, i: isize, v: bool) {
        // SAFETY: as the caller's contract.
        Packed::<1>::put(base, i, Packed(v as u8))
    }
}

/// int4: four packed bits, two's complement, in an i8; writing keeps the
/// low four bits, which wraps a sum modulo 16.
#[derive(Clone, Copy)]
pub struct Int4;

impl Num for Int4 {
    type R = i8;
    #[inline]
    unsafe fn get(&self, base: *const u8, i: isize) -> i8 {
        // SAFETY: as the caller's contract.
        wrap_i4(Packed::<4>::get(base, i).0 as i8)
    }
    #[inline]
    unsafe fn put(&self, base: *mut u8, i: isize, v: i8) {
        // SAFETY: as the caller's contract.
        Packed::<4>::put(base, i, Packed(v as u8 & 15))
    }
    #[inline]
    fn round(&self, v: i8) -> i8 {
        wrap_i4(v)
    }
}

/// uint4: four packed bits in a u8; writing keeps the low four bits.
#[derive(Clone, Copy)]
pub struct Uint4;

impl Num for Uint4 {
    type R = u8;
    #[inline]
    unsafe fn get(&self, base: *const u8, i: isize) -> u8 {
        // SAFETY: as the caller's contract.
        Packed::<4>::get(base, i).0
    }
    #[inline]
    unsafe fn put(&self, base: *mut u8, i: isize, v: u8) {
        // SAFETY: as the caller's contract.
        Packed::<4>::put(base, i, Packed(v & 15))
    }
    #[inline]
    fn round(&self, v: u8) -> u8 {
        v & 15
    }
}

/// A narrow float of `S`'s bits, decoded exactly into an f32 and written
/// rounded once into its format.
#[derive(Clone, Copy)]
pub struct Narrowed<S>(pub Narrow, std::marker::PhantomData<S>);

impl<S> Narrowed<S> {
    /// The access of format `f`, whose width must be `S`'s.
    pub fn new(f: Narrow) -> Self {
        Narrowed(f, std::marker::PhantomData)
    }
}

/// A narrow float's element bits, as a [`Slot`] of its width holds them,
/// decoded exactly into an f32.
pub trait Decode<S> {
    /// The value of the element of bits `b`.
    fn value(&self, b: S) -> f32;
}

macro_rules! narrowed {
    ($($s:ty, $bits:expr);*) => {$(
        impl Decode<$s> for Narrowed<$s> {
            #[inline]
            fn value(&self, b: $s) -> f32 {
                self.0.decode($bits(b) as u16)
            }
        }

        impl Num for Narrowed<$s> {
            type R = f32;
            #[inline]
            unsafe fn get(&self, base: *const u8, i: isize) -> f32 {
                // SAFETY: as the caller's contract.
                self.value(Slot::get(base, i))
            }
            #[inline]
            unsafe fn put(&self, base: *mut u8, i: isize, v: f32) {
                // SAFETY: as the caller's contract.
                <$s as Slot>::put(base, i, <$s as Slot>::of_bits(self.0.encode_f32(v) as u128))
            }
            #[inline]
            fn round(&self, v: f32) -> f32 {
                self.0.round_from_f32(v)
            }
        }
    )*};
}
narrowed!(Packed<4>, |b: Packed<4>| b.0; u8, |b: u8| b; u16, |b: u16| b);

/// Runs `$body` with `$n` the [`Num`] of dtype `$d`.
#[macro_export]
macro_rules! with_num {
    ($d:expr, $n:ident => $body:expr) => {{
        use $crate::core::dtype::Dtype as D;
        use $crate::moves::num::*;
        use $crate::loops::column::{C32, C64};
        match $d {
            D::Bool => { let $n = Bool; $body }
            D::Bit => { let $n = Bit; $body }
            D::Int4 => { let $n = Int4; $body }
            D::Uint4 => { let $n = Uint4; $body }
            D::Int8 => { let $n = Plain::<i8>::NEW; $body }
            D::Int16 => { let $n = Plain::<i16>::NEW; $body }
            D::Int32 => { let $n = Plain::<i32>::NEW; $body }
            D::Int64 => { let $n = Plain::<i64>::NEW; $body }
            D::Uint8 => { let $n = Plain::<u8>::NEW; $body }
            D::Uint16 => { let $n = Plain::<u16>::NEW; $body }
            D::Uint32 => { let $n = Plain::<u32>::NEW; $body }
            D::Uint64 => { let $n = Plain::<u64>::NEW; $body }
            D::Float4E2m1fn => { let $n = Narrowed::<$crate::moves::slot::Packed<4>>::new($crate::core::narrow::Narrow::Float4E2m1fn); $body }
            D::Float8E4m3fn | D::Float8E5m2 => {
                let $n = Narrowed::<u8>::new($crate::core::narrow::Narrow::of($d).expect("a narrow float"));
                $body
            }
            D::Float16 | D::Bfloat16 => {
                let $n = Narrowed::<u16>::new($crate::core::narrow::Narrow::of($d).expect("a narrow float"));
                $body
            }
            D::Float32 => { let $n = Plain::<f32>::NEW; $body }
            D::Float64 => { let $n = Plain::<f64>::NEW; $body }
            D::Complex64 => { let $n = Plain::<C32>::NEW; $body }
            D::Complex128 => { let $n = Plain::<C64>::NEW; $body }
        }
    }};
}
