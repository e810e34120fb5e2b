//! The total order of `Prog`'s domains as unsigned keys: each dtype's bits
//! mapped to an unsigned integer of their width whose order is the
//! contract's, -∞ < … < -0 < +0 < … < +∞ < NaN, every NaN one key, a
//! complex number by its real part then its imaginary one, any with a NaN
//! part one key above every other. Bits that compare equal map to one key,
//! so a stable sort of the keys is the stable sort the contract states.

use crate::core::dtype::Dtype;

/// An unsigned integer of 1 to 16 bytes: an element's bits or its key.
pub trait Word: Copy + Ord + Default + Send + Sync + std::fmt::Debug + 'static {
    /// Bytes the word holds, the radix sort's digits.
    const BYTES: usize;
    /// Digit `level` of the word, counted from its most significant byte.
    fn digit(self, level: usize) -> usize;
    /// The bitwise complement, which reverses the order.
    fn not(self) -> Self;
    /// The word shifted right by `shift` bits, in the low bits of a usize.
    fn low(self, shift: u32) -> usize;
}

macro_rules! word {
    ($($t:ty),*) => {$(
        impl Word for $t {
            const BYTES: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn digit(self, level: usize) -> usize {
                (self >> (8 * (Self::BYTES - 1 - level))) as usize & 255
            }
            #[inline(always)]
            fn not(self) -> Self {
                !self
            }
            #[inline(always)]
            fn low(self, shift: u32) -> usize {
                (self >> shift) as usize
            }
        }
    )*};
}
word!(u8, u16, u32, u64, u128);

/// The key of a float's bits, `$t` holding the format's bits in its low
/// ones: NaNs (magnitudes above `$inf`, the infinity's bits or, for a format
/// without infinities, its greatest finite magnitude) take the greatest key
/// `$sign | $mag`; a negative number the complement of its bits (within the
/// format's width), so that -0 is the greatest negative key; a positive one
/// its bits with the sign set. Without branches, as signs come at random.
macro_rules! float_key {
    ($name:ident, $t:ty, $sign:expr, $inf:expr) => {
        #[doc = concat!("The key of a `", stringify!($name), "` float's bits.")]
        #[inline(always)]
        // A format with neither NaN nor infinity (e2m1fn) has `$inf` equal
        // to its greatest magnitude: the NaN test is never true there, as
        // it should be, which clippy takes for a mistaken mask.
        #[allow(clippy::bad_bit_mask)]
        pub fn $name(b: $t) -> $t {
            const MAG: $t = $sign - 1;
            let flip = $sign | (((b & $sign) != 0) as $t).wrapping_mul(MAG);
            if b & MAG > $inf { $sign | MAG } else { b ^ flip }
        }
    };
}
float_key!(f32_key, u32, 0x8000_0000, 0x7f80_0000);
float_key!(f64_key, u64, 1 << 63, 0x7ff0_0000_0000_0000);
float_key!(f16_key, u16, 0x8000, 0x7c00);
float_key!(bf16_key, u16, 0x8000, 0x7f80);
float_key!(e5m2_key, u8, 0x80, 0x7c);
float_key!(e4m3fn_key, u8, 0x80, 0x7e);
float_key!(e2m1fn_key, u8, 0x8, 0x7);

/// The key of a complex64's bits (real part in the low 32 bits).
#[inline(always)]
pub fn c64_key(b: u64) -> u64 {
    let (re, im) = (f32_key(b as u32), f32_key((b >> 32) as u32));
    if re == u32::MAX || im == u32::MAX { u64::MAX } else { (re as u64) << 32 | im as u64 }
}

/// The key of a complex128's bits (real part in the low 64 bits).
#[inline(always)]
pub fn c128_key(b: u128) -> u128 {
    let (re, im) = (f64_key(b as u64), f64_key((b >> 64) as u64));
    if re == u64::MAX || im == u64::MAX { u128::MAX } else { (re as u128) << 64 | im as u128 }
}

/// Something generic over an element's bits `T`, its key `K` and the
/// function between them, which [`visit`] calls with those of a dtype.
pub trait Visit {
    /// What the visit gives.
    type Out;
    /// Called with the dtype's bits type, key type and key function.
    fn visit<T: Word, K: Word, F: Fn(T) -> K + Copy + Send + Sync>(self, key: F) -> Self::Out;
}

/// Calls `v` with `d`'s bits type (a sub-byte dtype's element in the low
/// bits of a `u8`), key type and key function, the keys complemented
/// where `descending`, which reverses the order and keeps equal keys equal.
pub fn visit<V: Visit>(d: Dtype, descending: bool, v: V) -> V::Out {
    macro_rules! go {
        ($t:ty, $f:expr) => {{
            let f = $f;
            if descending { v.visit(move |b: $t| f(b).not()) } else { v.visit(move |b: $t| f(b)) }
        }};
    }
    match d {
        Dtype::Bool => go!(u8, |b: u8| (b != 0) as u8),
        Dtype::Bit | Dtype::Uint4 | Dtype::Uint8 => go!(u8, |b: u8| b),
        Dtype::Int4 => go!(u8, |b: u8| b ^ 8),
        Dtype::Int8 => go!(u8, |b: u8| b ^ 0x80),
        Dtype::Int16 => go!(u16, |b: u16| b ^ 0x8000),
        Dtype::Int32 => go!(u32, |b: u32| b ^ 0x8000_0000),
        Dtype::Int64 => go!(u64, |b: u64| b ^ 1 << 63),
        Dtype::Uint16 => go!(u16, |b: u16| b),
        Dtype::Uint32 => go!(u32, |b: u32| b),
        Dtype::Uint64 => go!(u64, |b: u64| b),
        Dtype::Float4E2m1fn => go!(u8, e2m1fn_key),
        Dtype::Float8E4m3fn => go!(u8, e4m3fn_key),
        Dtype::Float8E5m2 => go!(u8, e5m2_key),
        Dtype::Float16 => go!(u16, f16_key),
        Dtype::Bfloat16 => go!(u16, bf16_key),
        Dtype::Float32 => go!(u32, f32_key),
        Dtype::Float64 => go!(u64, f64_key),
        Dtype::Complex64 => go!(u64, c64_key),
        Dtype::Complex128 => go!(u128, c128_key),
    }
}
