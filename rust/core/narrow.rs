//! Narrow float formats (float16, bfloat16, float8_e4m3fn, float8_e5m2,
//! float4_e2m1fn): decoding and correctly rounded encoding.
//!
//! | format        | exponent, mantissa bits | bias | largest finite | inf | NaN            |
//! |---------------|-------------------------|------|----------------|-----|----------------|
//! | float16       | 5, 10 (IEEE binary16)   | 15   | 65504          | yes | yes            |
//! | bfloat16      | 8, 7                    | 127  | ≈ 3.39e38      | yes | yes            |
//! | float8_e5m2   | 5, 2 (IEEE-like)        | 15   | 57344          | yes | yes            |
//! | float8_e4m3fn | 4, 3                    | 7    | 448            | no  | S.1111.111     |
//! | float4_e2m1fn | 2, 1                    | 1    | 6              | no  | no             |
//!
//! Semantics are those of OCP and ml_dtypes. float4_e2m1fn's values are
//! ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}, held in the low 4 bits of a byte.
//!
//! Decoding is exact: every narrow value is an f32. A NaN decodes to a quiet
//! NaN of its sign, its payload kept in the f32's high mantissa bits.
//!
//! Encoding, from f32 or from f64, rounds once, to nearest with ties to even,
//! straight from the source value (f64 never passes through f32, which would
//! round twice). Subnormals are kept and zero keeps its sign. Magnitudes past
//! the largest finite value, after rounding, and infinities go:
//!
//! - float16, bfloat16, float8_e5m2: to ±inf, as IEEE 754 rounds. A NaN stays
//!   a quiet NaN of its sign, with the high bits of its payload that fit.
//! - float8_e4m3fn: to the NaN S.1111.111 of their sign, as ml_dtypes does
//!   (the format has no infinity): 464, the midpoint between 448 and the 480
//!   the format lacks, still rounds to 448 (ties to even); anything above is
//!   NaN. A NaN becomes that NaN, keeping its sign.
//! - float4_e2m1fn: to ±6, saturating, since it has neither infinity nor
//!   NaN. A NaN becomes a zero of the NaN's sign: a NaN has no magnitude to
//!   round and no direction to saturate in, zero is the one value that claims
//!   no magnitude (as Rust's cast of a NaN to an integer gives 0), and keeping
//!   the sign bit is the rule every other format here follows. (ml_dtypes
//!   gives the zero of the opposite sign instead: its stand-in NaN is -0,
//!   negated for a negative NaN.)
//!
//! The conversions are bit manipulation with selects in place of branches,
//! so loops over them vectorise. They assume the default floating-point
//! environment (round to nearest even, subnormals neither flushed nor treated
//! as zero), which Rust and OCaml keep.
//!
//! The logic is written once, generic in a format (its field widths and its
//! rule past the finite values, trait `Format`) and, for encoding, a source
//! (f32 or f64, trait `Source`); the public functions are its instances,
//! each monomorphised to the bit manipulation of one format and source with
//! every parameter a constant. Slices convert in one loop per format,
//! dispatched once; on x86-64, float16's go by F16C, with the same bits.

use crate::core::dtype::Dtype;
use std::ops::{Add, BitAnd, BitOr, Shl, Shr, Sub};

// ---------------------------------------------------------------------------
// The sources, f32 and f64, and the narrow formats, described once.

/// The unsigned integer holding a source float's bits (u32, u64): the
/// operations the encoder needs of it.
trait Word:
    Copy
    + Ord
    + Add<Output = Self>
    + Sub<Output = Self>
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
{
    /// `v`, widened.
    fn of(v: u32) -> Self;
    /// The low 16 bits (every narrow format's bits fit in them).
    fn low16(self) -> u16;
    fn wrapping_add(self, o: Self) -> Self;
    fn wrapping_sub(self, o: Self) -> Self;
}

/// An IEEE 754 binary source format, f32 or f64: sign, `BIAS`-biased
/// exponent, `MANT` stored mantissa bits, `WIDTH` bits in all.
trait Source: Copy {
    type Bits: Word;
    const WIDTH: u32;
    const MANT: u32;
    const BIAS: u32;
    fn to_bits(self) -> Self::Bits;
    /// The bits of the sum, rounded to nearest even, of the floats whose
    /// bits are `a` and `b`.
    fn add_bits(a: Self::Bits, b: Self::Bits) -> Self::Bits;
}

macro_rules! describe_source {
    ($float:ty, $bits:ty, $mant:literal, $bias:literal) => {
        impl Word for $bits {
            #[inline(always)]
            fn of(v: u32) -> Self {
                v.into()
            }
            #[inline(always)]
            fn low16(self) -> u16 {
                self as u16
            }
            #[inline(always)]
            fn wrapping_add(self, o: Self) -> Self {
                <$bits>::wrapping_add(self, o)
            }
            #[inline(always)]
            fn wrapping_sub(self, o: Self) -> Self {
                <$bits>::wrapping_sub(self, o)
            }
        }

        impl Source for $float {
            type Bits = $bits;
            const WIDTH: u32 = <$bits>::BITS;
            const MANT: u32 = $mant;
            const BIAS: u32 = $bias;
            #[inline(always)]
            fn to_bits(self) -> $bits {
                <$float>::to_bits(self)
            }
            #[inline(always)]
            fn add_bits(a: $bits, b: $bits) -> $bits {
                (<$float>::from_bits(a) + <$float>::from_bits(b)).to_bits()
            }
        }
    };
}

describe_source!(f32, u32, 23, 127);
describe_source!(f64, u64, 52, 1023);

/// What a narrow format's magnitude bits past its finite values mean.
#[derive(Clone, Copy)]
enum Special {
    /// As IEEE 754: the top exponent with mantissa zero is infinity, with a
    /// mantissa a NaN, quiet when its high mantissa bit is set.
    Ieee,
    /// No infinity: the one magnitude of all ones is the NaN.
    AllOnesNan,
    /// Neither infinity nor NaN: every magnitude is finite.
    AllFinite,
}

/// A narrow format: a sign bit over `E` exponent bits, bias 2^(E-1) - 1,
/// over `M` stored mantissa bits, in the low `WIDTH` bits; `SPECIAL` says
/// what its magnitudes past the finite ones are.
///
/// Its least normal number is 2^(1 - BIAS) and its subnormal spacing
/// q = 2^(1 - BIAS - M). Its magnitude bits (sign clear) are ordered as the
/// magnitudes are, so "larger than the largest finite bits" means overflow.
trait Format {
    const E: u32;
    const M: u32;
    const SPECIAL: Special;
    const BIAS: u32 = (1 << (Self::E - 1)) - 1;
    const WIDTH: u32 = 1 + Self::E + Self::M;
    const SIGN: u32 = 1 << (Self::E + Self::M);
    /// Magnitude bits of the top exponent and mantissa zero.
    const TOP: u32 = ((1 << Self::E) - 1) << Self::M;
    /// Where an encoder clamps rounded magnitude bits: IEEE's infinity,
    /// else the magnitude of all ones, float8_e4m3fn's NaN and
    /// float4_e2m1fn's largest finite value, 6.
    const CLAMP: u32 = match Self::SPECIAL {
        Special::Ieee => Self::TOP,
        Special::AllOnesNan | Special::AllFinite => Self::SIGN - 1,
    };
}

/// float16: S.EEEEE.MMMMMMMMMM, bias 15.
struct Float16;
/// bfloat16: the high half of an f32.
struct Bfloat16;
/// float8_e5m2: S.EEEEE.MM, bias 15, IEEE-like.
struct Float8E5m2;
/// float8_e4m3fn: S.EEEE.MMM, bias 7, no infinity, NaN at S.1111.111.
struct Float8E4m3fn;
/// float4_e2m1fn: S.EE.M in the low 4 bits, bias 1, no infinity, no NaN.
struct Float4E2m1fn;

macro_rules! describe_format {
    ($name:ident, $e:literal, $m:literal, $special:ident) => {
        impl Format for $name {
            const E: u32 = $e;
            const M: u32 = $m;
            const SPECIAL: Special = Special::$special;
        }
    };
}

describe_format!(Float16, 5, 10, Ieee);
describe_format!(Bfloat16, 8, 7, Ieee);
describe_format!(Float8E5m2, 5, 2, Ieee);
describe_format!(Float8E4m3fn, 4, 3, AllOnesNan);
describe_format!(Float4E2m1fn, 2, 1, AllFinite);

// ---------------------------------------------------------------------------
// Encoding and decoding, for every format and source.

/// `t` with its low `shift` bits dropped, rounding to nearest even. Adding
/// half an ulp less one, plus the lowest kept bit, carries into the kept bits
/// exactly when the dropped ones exceed half an ulp, or equal it with the
/// kept bits odd; in float bits, a carry out of the mantissa steps the
/// exponent.
#[inline(always)]
fn round_off<W: Word>(t: W, shift: u32) -> W {
    let half = (W::of(1) << (shift - 1)) - W::of(1);
    t.wrapping_add(half + ((t >> shift) & W::of(1))) >> shift
}

/// The magnitude bits, rounded to nearest even, of the non-negative source
/// value whose bits are `a`, in format `F` (whose bias is below the
/// source's). Not clamped: a magnitude past the largest finite value, an
/// infinity or a NaN gives bits past the largest finite ones, which the
/// caller maps by the format's rule.
#[inline(always)]
fn magnitude<F: Format, S: Source>(a: S::Bits) -> S::Bits {
    let w = <S::Bits as Word>::of;
    // Below 2^(1 - BIAS) the bits are |x| / q rounded to an integer. C = q
    // 2^MANT has an ulp of q, and |x| < C, so the source sum |x| + C is C
    // plus |x| rounded to a multiple of q, to nearest even; its bits less
    // C's are that multiple. Rounding up to 2^(1 - BIAS) gives 2^M, the least
    // normal's bits.
    let c = w(S::BIAS + S::MANT + 1 - F::BIAS - F::M) << S::MANT;
    let sub = S::add_bits(a, c) - c;
    // From 2^(1 - BIAS) up: rebias the exponent and round off the mantissa
    // bits the format lacks.
    let norm = round_off(
        a.wrapping_sub(w(S::BIAS - F::BIAS) << S::MANT),
        S::MANT - F::M,
    );
    if a < w(S::BIAS + 1 - F::BIAS) << S::MANT {
        sub
    } else {
        norm
    }
}

/// Encodes `x` in format `F`, rounding once to nearest even, by the format's
/// rule past its finite values (module documentation); the bits are in the
/// low `F::WIDTH` of the result.
#[inline(always)]
fn encode_in<F: Format, S: Source>(x: S) -> u16 {
    let w = <S::Bits as Word>::of;
    let b = x.to_bits();
    let a = b & ((w(1) << (S::WIDTH - 1)) - w(1));
    let inf = w(2 * S::BIAS + 1) << S::MANT;
    let shift = S::MANT - F::M;
    // A NaN of an IEEE-like format keeps the high bits of its payload and is
    // made quiet.
    let quiet = w(1 << (F::M - 1));
    if F::BIAS == S::BIAS {
        // The format is the source's high bits (bfloat16 from f32), sharing
        // its exponent and so its subnormals: rounding off the low bits of
        // the whole, sign included, is the conversion. The carry never
        // reaches the sign, as the largest finite source value rounds to
        // infinity.
        let nan = (b >> shift) | quiet;
        let rounded = round_off(b, shift);
        return if a > inf { nan } else { rounded }.low16();
    }
    let sign = (b >> (S::WIDTH - F::WIDTH)) & w(F::SIGN);
    let finite = magnitude::<F, S>(a).min(w(F::CLAMP));
    let m = match F::SPECIAL {
        Special::Ieee => {
            let nan = w(F::TOP) | quiet | ((a >> shift) & w((1 << F::M) - 1));
            if a > inf {
                nan
            } else {
                finite
            }
        }
        // Overflow, infinities and NaNs all give magnitude bits past the
        // largest finite ones: clamping them to all ones makes them the NaN.
        Special::AllOnesNan => finite,
        // Overflow and infinities clamp to the largest finite; a NaN is zero.
        Special::AllFinite => {
            if a > inf {
                w(0)
            } else {
                finite
            }
        }
    };
    (sign | m).low16()
}

/// Decodes bits of format `F`, exactly, reading only their low `F::WIDTH`.
#[inline(always)]
fn decode_in<F: Format>(bits: u32) -> f32 {
    if F::BIAS == 127 {
        // The format is an f32's high bits (bfloat16), sharing its exponent
        // and so its subnormals: shifted up, they are the f32's; a NaN is
        // made quiet.
        let b = (bits & (2 * F::SIGN - 1)) << (32 - F::WIDTH);
        let quiet = if b & 0x7fff_ffff > 0x7f80_0000 {
            0x40_0000
        } else {
            0
        };
        return f32::from_bits(b | quiet);
    }
    let mag = bits & (F::SIGN - 1);
    let sign = (bits & F::SIGN) << (32 - F::WIDTH);
    let normal = (mag << (23 - F::M)) + ((127 - F::BIAS) << 23);
    // A subnormal is its mantissa times q, both factors and the product exact
    // (q is normal, the bias being at most 127 - M).
    let sub = mag as f32 * f32::from_bits((128 - F::BIAS - F::M) << 23);
    let finite = if mag < 1 << F::M {
        sub.to_bits()
    } else {
        normal
    };
    let m = match F::SPECIAL {
        Special::Ieee => {
            let quiet = if mag > F::TOP { 0x40_0000 } else { 0 };
            let special = 0x7f80_0000 | ((mag & ((1 << F::M) - 1)) << (23 - F::M)) | quiet;
            if mag >= F::TOP {
                special
            } else {
                finite
            }
        }
        Special::AllOnesNan => {
            if mag == F::SIGN - 1 {
                0x7fc0_0000
            } else {
                finite
            }
        }
        Special::AllFinite => finite,
    };
    f32::from_bits(m | sign)
}

// ---------------------------------------------------------------------------
// The conversions of each format.

/// The documentation, for the encoders (`enc`) and the decoder (`dec`) of a
/// format, of its rule past the finite values and of where its bits are:
/// `ieee` for the IEEE-like formats, `e4m3fn` and `e2m1fn` for the others.
macro_rules! doc_of {
    (enc ieee) => {
        "overflow to ±inf, NaN to a quiet NaN of its sign."
    };
    (enc e4m3fn) => {
        "a magnitude that rounds past 448, an infinity or a NaN gives the NaN of its sign."
    };
    (enc e2m1fn) => {
        "overflow and infinities saturate to ±6, a NaN gives a zero of its sign \
         (see the module's documentation). The bits are the low 4 of the result."
    };
    (dec e2m1fn) => {
        "; only the low 4 bits are read."
    };
    (dec $other:ident) => {
        "."
    };
}

/// The public conversions of formats: for each, its encoders from f32 and
/// from f64 and its decoder, documented with the format's `$name` and what
/// `doc_of!` says of its `$doc`.
macro_rules! conversions {
    ($($fmt:ident as $bits:ty, $name:literal, $doc:ident: $from_f32:ident, $from_f64:ident, $to_f32:ident;)*) => {$(
        #[doc = concat!("Encodes an f32 as ", $name, " bits, rounding once to nearest even; ", doc_of!(enc $doc))]
        #[inline]
        pub fn $from_f32(x: f32) -> $bits {
            encode_in::<$fmt, f32>(x) as $bits
        }

        #[doc = concat!("Encodes an f64 as ", $name, " bits, rounding once to nearest even; ", doc_of!(enc $doc))]
        #[inline]
        pub fn $from_f64(x: f64) -> $bits {
            encode_in::<$fmt, f64>(x) as $bits
        }

        #[doc = concat!("Decodes ", $name, " bits, exactly", doc_of!(dec $doc))]
        #[inline]
        pub fn $to_f32(bits: $bits) -> f32 {
            decode_in::<$fmt>(bits.into())
        }
    )*};
}

conversions! {
    Float16 as u16, "float16", ieee: f16_from_f32, f16_from_f64, f16_to_f32;
    Bfloat16 as u16, "bfloat16", ieee: bf16_from_f32, bf16_from_f64, bf16_to_f32;
    Float8E5m2 as u8, "float8_e5m2", ieee: e5m2_from_f32, e5m2_from_f64, e5m2_to_f32;
    Float8E4m3fn as u8, "float8_e4m3fn", e4m3fn: e4m3fn_from_f32, e4m3fn_from_f64, e4m3fn_to_f32;
    Float4E2m1fn as u8, "float4_e2m1fn", e2m1fn: e2m1fn_from_f32, e2m1fn_from_f64, e2m1fn_to_f32;
}

// ---------------------------------------------------------------------------
// Dispatch by dtype.

/// A computation generic in the format, which [`Narrow::apply`] instantiates
/// for the format it names.
trait PerFormat {
    type Out;
    fn run<F: Format>(self) -> Self::Out;
}

/// Encoding of the value it holds.
struct Encode<S>(S);

impl<S: Source> PerFormat for Encode<S> {
    type Out = u16;
    #[inline(always)]
    fn run<F: Format>(self) -> u16 {
        encode_in::<F, S>(self.0)
    }
}

/// Decoding of the bits it holds.
struct Decode(u16);

impl PerFormat for Decode {
    type Out = f32;
    #[inline(always)]
    fn run<F: Format>(self) -> f32 {
        decode_in::<F>(self.0.into())
    }
}

/// Rounding of a slice in place: one loop per format, so each vectorises.
struct RoundSlice<'a>(&'a mut [f32]);

impl PerFormat for RoundSlice<'_> {
    type Out = ();
    fn run<F: Format>(self) {
        self.0
            .iter_mut()
            .for_each(|x| *x = decode_in::<F>(encode_in::<F, f32>(*x).into()));
    }
}

/// Rounding of the source values of the first slice into the second, of
/// equal length.
struct RoundInto<'a, S>(&'a [S], &'a mut [f32]);

impl<S: Source> PerFormat for RoundInto<'_, S> {
    type Out = ();
    fn run<F: Format>(self) {
        for (o, &x) in self.1.iter_mut().zip(self.0) {
            *o = decode_in::<F>(encode_in::<F, S>(x).into());
        }
    }
}

/// An unsigned integer holding one element's bits in memory, in its low
/// bits: u16 or u8.
trait Holder: Copy {
    /// Holds bits that fit.
    fn hold(bits: u16) -> Self;
    /// The bits held.
    fn bits(self) -> u32;
}

impl Holder for u16 {
    #[inline(always)]
    fn hold(bits: u16) -> u16 {
        bits
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self.into()
    }
}

impl Holder for u8 {
    #[inline(always)]
    fn hold(bits: u16) -> u8 {
        bits as u8
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self.into()
    }
}

/// Encoding of the f32s of the first slice into the holders of the second,
/// of equal length.
struct EncodeSlice<'a, H>(&'a [f32], &'a mut [H]);

impl<H: Holder> PerFormat for EncodeSlice<'_, H> {
    type Out = ();
    fn run<F: Format>(self) {
        for (o, &x) in self.1.iter_mut().zip(self.0) {
            *o = H::hold(encode_in::<F, f32>(x));
        }
    }
}

/// Decoding of the holders of the first slice into the f32s of the second,
/// of equal length.
struct DecodeSlice<'a, H>(&'a [H], &'a mut [f32]);

impl<H: Holder> PerFormat for DecodeSlice<'_, H> {
    type Out = ();
    fn run<F: Format>(self) {
        for (o, &b) in self.1.iter_mut().zip(self.0) {
            *o = decode_in::<F>(b.bits());
        }
    }
}

/// float16 conversions of eight lanes at a time by F16C.
///
/// `vcvtps2ph`, rounding to nearest even, and `vcvtph2ps` give the bits of
/// `encode_in::<Float16, f32>` and `decode_in::<Float16>` for every input,
/// NaNs included: the hardware makes a NaN quiet and keeps its sign and the
/// high bits of its payload that fit, as those do (the tests compare every
/// float16 pattern and every f32 one). Each function converts the whole
/// groups of eight at the start of its slices and says how many elements
/// it converted; the caller converts the rest.
#[cfg(all(
    target_arch = "x86_64",
    target_feature = "avx",
    target_feature = "f16c"
))]
mod f16c {
    use std::arch::x86_64::*;

    /// Encodes the first multiple of 8 of `src`'s values into `dst`, of
    /// `src`'s length.
    pub(super) fn encode(src: &[f32], dst: &mut [u16]) -> usize {
        assert_eq!(src.len(), dst.len());
        let n = src.len() / 8 * 8;
        for i in (0..n).step_by(8) {
            // SAFETY: i + 8 <= n <= both lengths, so the eight lanes read
            // and written lie in the slices; the unaligned load and store
            // take any address; AVX and F16C are enabled for the whole crate
            // (the cfg above), so the host has them.
            unsafe {
                let x = _mm256_loadu_ps(src.as_ptr().add(i));
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(x);
                _mm_storeu_si128(dst.as_mut_ptr().add(i).cast(), h);
            }
        }
        n
    }

    /// Decodes the first multiple of 8 of `src`'s bits into `dst`, of
    /// `src`'s length.
    pub(super) fn decode(src: &[u16], dst: &mut [f32]) -> usize {
        assert_eq!(src.len(), dst.len());
        let n = src.len() / 8 * 8;
        for i in (0..n).step_by(8) {
            // SAFETY: as in `encode`.
            unsafe {
                let h = _mm_loadu_si128(src.as_ptr().add(i).cast());
                _mm256_storeu_ps(dst.as_mut_ptr().add(i), _mm256_cvtph_ps(h));
            }
        }
        n
    }

    /// Rounds the first multiple of 8 of `n` f32s at `src` into float16
    /// and back, into `dst`.
    ///
    /// # Safety
    /// `src` is valid to read and `dst` to write for `n` f32s; they are the
    /// same address or do not overlap.
    pub(super) unsafe fn round(src: *const f32, dst: *mut f32, n: usize) -> usize {
        let n = n / 8 * 8;
        for i in (0..n).step_by(8) {
            // SAFETY: the eight lanes at i lie in both runs (caller), each
            // read before it is written where the runs are one; unaligned
            // accesses take any address; AVX and F16C as in `encode`.
            unsafe {
                let x = _mm256_loadu_ps(src.add(i));
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(x);
                _mm256_storeu_ps(dst.add(i), _mm256_cvtph_ps(h));
            }
        }
        n
    }
}

/// Without F16C: the same functions, converting nothing, so that the
/// callers' loops convert every element.
#[cfg(not(all(
    target_arch = "x86_64",
    target_feature = "avx",
    target_feature = "f16c"
)))]
mod f16c {
    /// Encodes no value.
    pub(super) fn encode(_: &[f32], _: &mut [u16]) -> usize {
        0
    }

    /// Decodes no value.
    pub(super) fn decode(_: &[u16], _: &mut [f32]) -> usize {
        0
    }

    /// Rounds no value.
    ///
    /// # Safety
    /// None: it reads and writes nothing.
    pub(super) unsafe fn round(_: *const f32, _: *mut f32, _: usize) -> usize {
        0
    }
}

/// One of the five narrow float dtypes; a value of it is proof that a dtype
/// is narrow, so its conversions cannot be asked of another dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Narrow {
    /// float4_e2m1fn.
    Float4E2m1fn,
    /// float8_e4m3fn.
    Float8E4m3fn,
    /// float8_e5m2.
    Float8E5m2,
    /// float16 (IEEE binary16).
    Float16,
    /// bfloat16.
    Bfloat16,
}

impl Narrow {
    /// Every narrow format, in dtype code order.
    pub const ALL: [Narrow; 5] = [
        Narrow::Float4E2m1fn,
        Narrow::Float8E4m3fn,
        Narrow::Float8E5m2,
        Narrow::Float16,
        Narrow::Bfloat16,
    ];

    /// The narrow format of a dtype, or `None` for a dtype that is not a
    /// narrow float.
    pub fn of(d: Dtype) -> Option<Narrow> {
        match d {
            Dtype::Float4E2m1fn => Some(Narrow::Float4E2m1fn),
            Dtype::Float8E4m3fn => Some(Narrow::Float8E4m3fn),
            Dtype::Float8E5m2 => Some(Narrow::Float8E5m2),
            Dtype::Float16 => Some(Narrow::Float16),
            Dtype::Bfloat16 => Some(Narrow::Bfloat16),
            _ => None,
        }
    }

    /// The format's dtype.
    pub fn dtype(self) -> Dtype {
        match self {
            Narrow::Float4E2m1fn => Dtype::Float4E2m1fn,
            Narrow::Float8E4m3fn => Dtype::Float8E4m3fn,
            Narrow::Float8E5m2 => Dtype::Float8E5m2,
            Narrow::Float16 => Dtype::Float16,
            Narrow::Bfloat16 => Dtype::Bfloat16,
        }
    }

    /// Runs `p` for this format.
    #[inline(always)]
    fn apply<P: PerFormat>(self, p: P) -> P::Out {
        match self {
            Narrow::Float4E2m1fn => p.run::<Float4E2m1fn>(),
            Narrow::Float8E4m3fn => p.run::<Float8E4m3fn>(),
            Narrow::Float8E5m2 => p.run::<Float8E5m2>(),
            Narrow::Float16 => p.run::<Float16>(),
            Narrow::Bfloat16 => p.run::<Bfloat16>(),
        }
    }

    /// Encodes an f32, rounding once to nearest even, by the format's rules
    /// (module documentation). The bits are in the low 16, 8 or 4 of the
    /// result, the rest zero.
    #[inline]
    pub fn encode_f32(self, x: f32) -> u16 {
        self.apply(Encode(x))
    }

    /// Encodes an f64, rounding once to nearest even straight from it, by
    /// the format's rules (module documentation). The bits are in the low 16,
    /// 8 or 4 of the result, the rest zero.
    #[inline]
    pub fn encode_f64(self, x: f64) -> u16 {
        self.apply(Encode(x))
    }

    /// Decodes bits exactly, reading only the format's low 16, 8 or 4 of
    /// them. `f64::from` of the result is the f64 value, also exact.
    #[inline]
    pub fn decode(self, bits: u16) -> f32 {
        self.apply(Decode(bits))
    }

    /// An f32 rounded once into the format and read back:
    /// `decode(encode_f32(x))`.
    #[inline]
    pub fn round_from_f32(self, x: f32) -> f32 {
        self.decode(self.encode_f32(x))
    }

    /// An f64 rounded once into the format and read back:
    /// `decode(encode_f64(x))`.
    #[inline]
    pub fn round_from_f64(self, x: f64) -> f32 {
        self.decode(self.encode_f64(x))
    }

    /// The width of the format's bits: 16, 8 or 4.
    pub fn bits(self) -> u32 {
        match self {
            Narrow::Float4E2m1fn => 4,
            Narrow::Float8E4m3fn | Narrow::Float8E5m2 => 8,
            Narrow::Float16 | Narrow::Bfloat16 => 16,
        }
    }

    /// Rounds every value of `v` in place, as [`Narrow::round_from_f32`]
    /// does: one loop per format, so each vectorises, float16 by F16C on
    /// x86-64.
    pub fn round_f32_slice(self, v: &mut [f32]) {
        let k = if self == Narrow::Float16 {
            // SAFETY: `v` is valid for its length, read and written in place.
            unsafe { f16c::round(v.as_ptr(), v.as_mut_ptr(), v.len()) }
        } else {
            0
        };
        self.apply(RoundSlice(&mut v[k..]));
    }

    /// Rounds every value of `src` into `dst`, of the same length, as
    /// [`Narrow::round_from_f32`] does, in one loop as
    /// [`Narrow::round_f32_slice`].
    pub fn round_f32_into(self, src: &[f32], dst: &mut [f32]) {
        assert_eq!(src.len(), dst.len(), "round_f32_into of unequal lengths");
        let k = if self == Narrow::Float16 {
            // SAFETY: `src` and `dst` are valid for their common length and,
            // one shared and one exclusive borrow, do not overlap.
            unsafe { f16c::round(src.as_ptr(), dst.as_mut_ptr(), src.len()) }
        } else {
            0
        };
        self.apply(RoundInto(&src[k..], &mut dst[k..]));
    }

    /// Rounds every value of `src` into `dst`, of the same length, as
    /// [`Narrow::round_from_f64`] does, in one loop per format.
    pub fn round_f64_into(self, src: &[f64], dst: &mut [f32]) {
        assert_eq!(src.len(), dst.len(), "round_f64_into of unequal lengths");
        self.apply(RoundInto(src, dst));
    }

    /// Encodes every value of `src` into `dst`, of the same length, as
    /// [`Narrow::encode_f32`] does (the bits in the low 16, 8 or 4 of each,
    /// the rest zero): one loop per format, float16 by F16C on x86-64.
    pub fn encode_f32_slice(self, src: &[f32], dst: &mut [u16]) {
        assert_eq!(src.len(), dst.len(), "encode_f32_slice of unequal lengths");
        let k = if self == Narrow::Float16 {
            f16c::encode(src, dst)
        } else {
            0
        };
        self.apply(EncodeSlice(&src[k..], &mut dst[k..]));
    }

    /// As [`Narrow::encode_f32_slice`], into bytes, for a format of at most
    /// 8 bits (float4_e2m1fn's in the low 4 of each byte, the rest zero).
    ///
    /// # Panics
    /// For float16 and bfloat16.
    pub fn encode_f32_bytes(self, src: &[f32], dst: &mut [u8]) {
        assert!(self.bits() <= 8, "encode_f32_bytes of a 16-bit format");
        assert_eq!(src.len(), dst.len(), "encode_f32_bytes of unequal lengths");
        self.apply(EncodeSlice(src, dst));
    }

    /// Decodes every element of `src` into `dst`, of the same length, as
    /// [`Narrow::decode`] does (reading the format's low 16, 8 or 4 bits of
    /// each): one loop per format, float16 by F16C on x86-64.
    pub fn decode_slice(self, src: &[u16], dst: &mut [f32]) {
        assert_eq!(src.len(), dst.len(), "decode_slice of unequal lengths");
        let k = if self == Narrow::Float16 {
            f16c::decode(src, dst)
        } else {
            0
        };
        self.apply(DecodeSlice(&src[k..], &mut dst[k..]));
    }

    /// As [`Narrow::decode_slice`], from bytes, for a format of at most 8
    /// bits (float4_e2m1fn's read from the low 4 of each byte).
    ///
    /// # Panics
    /// For float16 and bfloat16.
    pub fn decode_bytes(self, src: &[u8], dst: &mut [f32]) {
        assert!(self.bits() <= 8, "decode_bytes of a 16-bit format");
        assert_eq!(src.len(), dst.len(), "decode_bytes of unequal lengths");
        self.apply(DecodeSlice(src, dst));
    }
}

/// [`Narrow::encode_f32`] of dtype `d`; `None` where `d` is not a narrow float.
#[inline]
pub fn encode_f32(d: Dtype, x: f32) -> Option<u16> {
    Narrow::of(d).map(|n| n.encode_f32(x))
}

/// [`Narrow::encode_f64`] of dtype `d`; `None` where `d` is not a narrow float.
#[inline]
pub fn encode_f64(d: Dtype, x: f64) -> Option<u16> {
    Narrow::of(d).map(|n| n.encode_f64(x))
}

/// [`Narrow::decode`] of dtype `d`; `None` where `d` is not a narrow float.
#[inline]
pub fn decode(d: Dtype, bits: u16) -> Option<f32> {
    Narrow::of(d).map(|n| n.decode(bits))
}

/// `x` rounded once, to nearest even, into dtype `d`'s values and read back
/// ([`Narrow::round_from_f32`]) where `d` is a narrow float; `x` itself for
/// any other dtype, taken as float32, which holds it.
#[inline]
pub fn round_from_f32(d: Dtype, x: f32) -> f32 {
    match Narrow::of(d) {
        Some(n) => n.round_from_f32(x),
        None => x,
    }
}

/// `x` rounded once, to nearest even, into dtype `d`'s values and read back
/// ([`Narrow::round_from_f64`]) where `d` is a narrow float; `x` rounded to
/// nearest even f32 for any other dtype, taken as float32.
#[inline]
pub fn round_from_f64(d: Dtype, x: f64) -> f32 {
    match Narrow::of(d) {
        Some(n) => n.round_from_f64(x),
        None => x as f32,
    }
}

/// Rounds every value of `v` in place into dtype `d`, as [`round_from_f32`]
/// does: where `d` is a narrow float ([`Narrow::round_f32_slice`]); `v` is
/// left as it is for any other dtype.
pub fn round_f32_slice(d: Dtype, v: &mut [f32]) {
    if let Some(n) = Narrow::of(d) {
        n.round_f32_slice(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A format's parameters, for the reference conversions, which search
    /// the format's values rather than manipulate bits.
    struct Fmt {
        n: Narrow,
        /// Exponent bits, mantissa bits, bias.
        e: u32,
        m: u32,
        bias: i32,
        /// Width of the bits, and bits of the largest finite magnitude.
        width: u32,
        max: u16,
        /// Finite magnitudes in increasing order; index = magnitude bits.
        vals: Vec<f64>,
    }

    impl Fmt {
        fn new(n: Narrow) -> Fmt {
            let (e, m, bias, width, max) = match n {
                Narrow::Float4E2m1fn => (2, 1, 1, 4, 0x7),
                Narrow::Float8E4m3fn => (4, 3, 7, 8, 0x7e),
                Narrow::Float8E5m2 => (5, 2, 15, 8, 0x7b),
                Narrow::Float16 => (5, 10, 15, 16, 0x7bff),
                Narrow::Bfloat16 => (8, 7, 127, 16, 0x7f7f),
            };
            let mut f = Fmt {
                n,
                e,
                m,
                bias,
                width,
                max,
                vals: Vec::new(),
            };
            f.vals = (0..=max).map(|b| f.finite_value(b)).collect();
            f
        }

        /// Every bit pattern of the format.
        fn patterns(&self) -> impl Iterator<Item = u16> {
            (0..1u32 << self.width).map(|b| b as u16)
        }

        fn sign_bit(&self) -> u16 {
            1 << (self.width - 1)
        }

        fn ieee(&self) -> bool {
            matches!(
                self.n,
                Narrow::Float16 | Narrow::Bfloat16 | Narrow::Float8E5m2
            )
        }

        /// Value of magnitude bits read as a finite number, by the textbook
        /// formula.
        fn finite_value(&self, mag: u16) -> f64 {
            let exp = i32::from(mag >> self.m);
            let mant = f64::from(mag & ((1 << self.m) - 1));
            let m = self.m as i32;
            if exp == 0 {
                mant * 2f64.powi(1 - self.bias - m)
            } else {
                (mant + 2f64.powi(m)) * 2f64.powi(exp - self.bias - m)
            }
        }

        /// Reference decoding: `None` for a NaN.
        fn ref_decode(&self, bits: u16) -> Option<f64> {
            let mag = bits & (self.sign_bit() - 1);
            let neg = bits & self.sign_bit() != 0;
            let top = ((1u16 << self.e) - 1) << self.m;
            let v = if self.ieee() && mag >= top {
                if mag > top {
                    return None;
                }
                f64::INFINITY
            } else if self.n == Narrow::Float8E4m3fn && mag == 0x7f {
                return None;
            } else {
                self.finite_value(mag)
            };
            Some(if neg { -v } else { v })
        }

        /// The magnitude bits that an overflow, or an infinity, gives.
        fn overflow(&self) -> u16 {
            match self.n {
                Narrow::Float4E2m1fn => self.max,
                _ => self.max + 1, // inf, or e4m3fn's NaN
            }
        }

        /// Reference encoding of a non-NaN f64: the nearest of the two
        /// representable neighbours of |v| (the value one ulp past the
        /// largest finite standing for overflow), ties to the even bits.
        /// Differences are exact in f64 for every input here.
        fn ref_encode(&self, v: f64) -> u16 {
            assert!(!v.is_nan());
            let sign = if v.is_sign_negative() {
                self.sign_bit()
            } else {
                0
            };
            let a = v.abs();
            let top = self.vals[self.max as usize];
            let virt = top + (top - self.vals[self.max as usize - 1]);
            if a >= virt {
                return sign | self.overflow();
            }
            let i = self.vals.partition_point(|&x| x <= a) - 1;
            let lo = self.vals[i];
            let hi = if i + 1 < self.vals.len() {
                self.vals[i + 1]
            } else {
                virt
            };
            let (dl, dh) = (a - lo, hi - a);
            let pick = if dl < dh || (dl == dh && i % 2 == 0) {
                i
            } else {
                i + 1
            };
            let pick = pick as u16;
            sign | if pick > self.max {
                self.overflow()
            } else {
                pick
            }
        }

        /// Whether `got` is what a NaN of sign `neg` must encode to.
        fn is_nan_result(&self, neg: bool, got: u16) -> bool {
            let sign = if neg { self.sign_bit() } else { 0 };
            match self.n {
                Narrow::Float4E2m1fn => got == sign,
                Narrow::Float8E4m3fn => got == sign | 0x7f,
                _ => got & self.sign_bit() == sign && self.ref_decode(got).is_none(),
            }
        }

        /// Checks `got`, the encoding of an f32 or f64 (`src`) of bits
        /// `bits`, value `x` (exact) and sign `neg`, against the reference.
        fn check(&self, got: u16, x: f64, neg: bool, src: &str, bits: u64) {
            if x.is_nan() {
                assert!(
                    self.is_nan_result(neg, got),
                    "{:?} from {src} {bits:#x} -> {got:#x}",
                    self.n
                );
            } else {
                let want = self.ref_encode(x);
                assert_eq!(got, want, "{:?} from {src} {x:e} ({bits:#x})", self.n);
            }
        }

        fn check_f32(&self, x: f32) {
            let got = self.n.encode_f32(x);
            let neg = x.is_sign_negative();
            self.check(got, f64::from(x), neg, "f32", x.to_bits().into());
        }

        fn check_f64(&self, x: f64) {
            let got = self.n.encode_f64(x);
            self.check(got, x, x.is_sign_negative(), "f64", x.to_bits());
        }
    }

    fn fmts() -> Vec<Fmt> {
        Narrow::ALL.iter().map(|&n| Fmt::new(n)).collect()
    }

    /// `next_up32` and `next_up64`: the next f32 or f64 toward +inf, for
    /// finite `x`.
    macro_rules! next_up {
        ($name:ident, $float:ty) => {
            fn $name(x: $float) -> $float {
                match x {
                    0.0 => <$float>::from_bits(1),
                    x if x > 0.0 => <$float>::from_bits(x.to_bits() + 1),
                    x => <$float>::from_bits(x.to_bits() - 1),
                }
            }
        };
    }
    next_up!(next_up32, f32);
    next_up!(next_up64, f64);
    /// The next f32 toward -inf, for finite `x`.
    fn next_down32(x: f32) -> f32 {
        -next_up32(-x)
    }
    /// The next f64 toward -inf, for finite `x`.
    fn next_down64(x: f64) -> f64 {
        -next_up64(-x)
    }

    #[test]
    fn every_pattern_decodes_exactly() {
        for f in fmts() {
            for bits in f.patterns() {
                let got = f.n.decode(bits);
                match f.ref_decode(bits) {
                    None => assert!(
                        got.is_nan() && got.is_sign_negative() == (bits & f.sign_bit() != 0)
                    ),
                    Some(v) => {
                        assert_eq!(f64::from(got), v, "{:?} {bits:#x}", f.n);
                        assert_eq!(
                            got.is_sign_negative(),
                            v.is_sign_negative(),
                            "{:?} {bits:#x}",
                            f.n
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_pattern_reencodes_to_itself() {
        for f in fmts() {
            for bits in f.patterns() {
                let x = f.n.decode(bits);
                let (g32, g64) = (f.n.encode_f32(x), f.n.encode_f64(f64::from(x)));
                if x.is_nan() {
                    let neg = bits & f.sign_bit() != 0;
                    assert!(f.is_nan_result(neg, g32) && f.is_nan_result(neg, g64));
                    // A quiet NaN comes back whole, payload included; a
                    // signalling one comes back quieted.
                    let quiet = 1u16 << (f.m - 1);
                    assert_eq!(g32, bits | quiet, "{:?} {bits:#x}", f.n);
                    assert_eq!(g64, bits | quiet, "{:?} {bits:#x}", f.n);
                } else {
                    assert_eq!((g32, g64), (bits, bits), "{:?} {bits:#x}", f.n);
                    assert_eq!(f.n.round_from_f32(x).to_bits(), x.to_bits());
                    assert_eq!(f.n.round_from_f64(x.into()).to_bits(), x.to_bits());
                }
                // Bits above the format's width are not read.
                let high = !((1u32 << f.width) - 1) as u16;
                assert_eq!(f.n.decode(bits | high).to_bits(), x.to_bits());
            }
        }
    }

    /// Every neighbouring pair of values of each format (the value one ulp
    /// past the largest finite included): the values, their midpoint, and
    /// the f32 and f64 numbers just around each, both signs. The f64 ones
    /// just off a midpoint are the inputs that rounding through f32 (to the
    /// midpoint, then to even) would get wrong.
    #[test]
    fn neighbours_and_midpoints() {
        for f in fmts() {
            let top = f.vals[f.max as usize];
            let virt = top + (top - f.vals[f.max as usize - 1]);
            let mut vals = f.vals.clone();
            vals.push(virt);
            for w in vals.windows(2) {
                let (lo, hi) = (w[0], w[1]);
                let mid = (lo + hi) / 2.0;
                for s in [1.0, -1.0] {
                    for v in [lo, hi, mid] {
                        let v64 = s * v;
                        // Every value is an f32 but bfloat16's 2^128.
                        let v32 = v64 as f32;
                        if v32.is_finite() {
                            assert_eq!(f64::from(v32), v64);
                            for x in [v32, next_up32(v32), next_down32(v32)] {
                                f.check_f32(x);
                            }
                        }
                        for x in [v64, next_up64(v64), next_down64(v64)] {
                            f.check_f64(x);
                        }
                    }
                    // Double rounding: just off the midpoint in f64 but the
                    // midpoint in f32.
                    let m = s * mid;
                    for x in [next_up64(m), next_down64(m)] {
                        assert_eq!(x as f32, m as f32);
                        f.check_f64(x);
                    }
                    let (above, below) = if s > 0.0 {
                        (next_up64(m), next_down64(m))
                    } else {
                        (next_down64(m), next_up64(m))
                    };
                    // Off the midpoint in f64, the two sides round apart.
                    // (Save float4_e2m1fn past 6, where both saturate.)
                    if hi <= top || f.n != Narrow::Float4E2m1fn {
                        assert_ne!(
                            f.n.encode_f64(above),
                            f.n.encode_f64(below),
                            "{:?} {m:e}",
                            f.n
                        );
                    }
                }
            }
        }
    }

    /// A strided sweep over every f32 bit pattern (stride prime to 2, so
    /// every mantissa bit and exponent is hit), each format against the
    /// reference.
    #[test]
    fn strided_f32_sweep() {
        for f in fmts() {
            let stride = if f.width == 16 { 97 } else { 61 };
            let mut b: u64 = 0;
            while b < 1 << 32 {
                f.check_f32(f32::from_bits(b as u32));
                b += stride;
            }
        }
    }

    /// Random f64 inputs, most of them in and around each format's range.
    #[test]
    fn random_f64_sweep() {
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || crate::core::test_rng::xorshift(&mut s);
        for f in fmts() {
            let (lo_e, hi_e) = (1023 - f.bias - f.m as i32 - 4, 1023 + (1 << (f.e - 1)) + 2);
            for i in 0..2_000_000u32 {
                let r = next();
                let bits = if i % 8 == 0 {
                    r
                } else {
                    let e = lo_e as u64 + (r >> 52) % (hi_e - lo_e) as u64;
                    (r & 0x800f_ffff_ffff_ffff) | e << 52
                };
                f.check_f64(f64::from_bits(bits));
            }
        }
    }

    #[test]
    fn special_values() {
        let nan_p = f32::NAN;
        let nan_n = -f32::NAN;
        // Zeros keep their sign; infinities; NaNs.
        assert_eq!(f16_from_f32(0.0), 0);
        assert_eq!(f16_from_f32(-0.0), 0x8000);
        assert_eq!(f16_from_f64(-0.0), 0x8000);
        assert_eq!(f16_from_f32(f32::INFINITY), 0x7c00);
        assert_eq!(f16_from_f64(f64::NEG_INFINITY), 0xfc00);
        assert_eq!(f16_from_f32(nan_p), 0x7e00);
        assert_eq!(f16_from_f32(nan_n), 0xfe00);
        assert_eq!(f16_from_f32(f32::from_bits(0x7f80_2000)), 0x7e01); // payload, quieted
        assert_eq!(f16_from_f64(f64::from_bits(0x7ff0_0400_0000_0000)), 0x7e01);
        assert_eq!(bf16_from_f32(f32::INFINITY), 0x7f80);
        assert_eq!(bf16_from_f32(f32::from_bits(0xff80_0001)), 0xffc0);
        assert_eq!(bf16_from_f32(f32::from_bits(0x7fa0_0000)), 0x7fe0);
        assert_eq!(bf16_from_f64(-0.0), 0x8000);
        assert_eq!(bf16_from_f64(-f64::NAN), 0xffc0);
        assert_eq!(e5m2_from_f32(f32::NEG_INFINITY), 0xfc);
        assert_eq!(e5m2_from_f64(f64::from_bits(0xfff8_0000_0000_0000)), 0xfe);
        assert_eq!(e4m3fn_from_f32(f32::INFINITY), 0x7f);
        assert_eq!(e4m3fn_from_f64(f64::NEG_INFINITY), 0xff);
        assert_eq!(e4m3fn_from_f32(nan_n), 0xff);
        assert_eq!(e4m3fn_from_f32(-0.0), 0x80);
        assert_eq!(e2m1fn_from_f32(f32::INFINITY), 0x7);
        assert_eq!(e2m1fn_from_f64(f64::NEG_INFINITY), 0xf);
        assert_eq!(e2m1fn_from_f32(nan_p), 0x0);
        assert_eq!(e2m1fn_from_f64(-f64::NAN), 0x8);
        assert_eq!(e2m1fn_from_f32(-0.0), 0x8);
        assert!(bf16_to_f32(0x7f81).is_nan() && bf16_to_f32(0x7f81).to_bits() & 0x40_0000 != 0);
        assert!(f16_to_f32(0xfc01).is_nan() && f16_to_f32(0xfc01).is_sign_negative());
        assert_eq!(e4m3fn_to_f32(0xff).to_bits(), 0xffc0_0000);
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);

        // Largest finite values and overflow thresholds.
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_from_f32(65519.996), 0x7bff);
        assert_eq!(f16_from_f32(65520.0), 0x7c00); // tie, 0x7bff odd: up to inf
        assert_eq!(f16_from_f64(65519.999999), 0x7bff);
        assert_eq!(f16_from_f64(1e300), 0x7c00);
        assert_eq!(bf16_from_f32(f32::MAX), 0x7f80);
        assert_eq!(bf16_from_f64(f64::from(f32::MAX)), 0x7f80);
        assert_eq!(bf16_from_f64(3.3895e38), 0x7f7f);
        assert_eq!(e5m2_to_f32(0x7b), 57344.0);
        assert_eq!(e5m2_from_f32(61439.996), 0x7b);
        assert_eq!(e5m2_from_f32(61440.0), 0x7c);
        assert_eq!(e4m3fn_to_f32(0x7e), 448.0);
        assert_eq!(e4m3fn_from_f32(464.0), 0x7e); // tie to the even 448
        assert_eq!(e4m3fn_from_f32(next_up32(464.0)), 0x7f);
        assert_eq!(e4m3fn_from_f64(next_up64(464.0)), 0x7f);
        assert_eq!(e4m3fn_from_f32(-480.0), 0xff);
        assert_eq!(e4m3fn_from_f64(1e300), 0x7f);
        assert_eq!(e2m1fn_from_f32(7.0), 0x7);
        assert_eq!(e2m1fn_from_f32(-1e30), 0xf);
        assert_eq!(e2m1fn_from_f64(f64::MAX), 0x7);
        let e2m1: Vec<f32> = (0..16).map(e2m1fn_to_f32).collect();
        assert_eq!(
            e2m1,
            [
                0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0,
                -6.0
            ]
        );
        assert_eq!(e2m1[8].to_bits(), 0x8000_0000);

        // Subnormal boundaries.
        let q16 = 2f32.powi(-24);
        assert_eq!(f16_from_f32(q16 / 2.0), 0); // tie to even 0
        assert_eq!(f16_from_f32(next_up32(q16 / 2.0)), 1);
        assert_eq!(f16_from_f32(-q16 * 1.5), 0x8002);
        assert_eq!(f16_from_f32(2f32.powi(-14) - q16 / 2.0), 0x0400); // tie up to the least normal
        assert_eq!(f16_from_f64(f64::from(q16) / 2.0 * (1.0 + f64::EPSILON)), 1);
        assert_eq!(f16_from_f64(f64::from(f32::from_bits(1))), 0);
        assert_eq!(bf16_from_f32(f32::from_bits(0x0000_8000)), 0); // tie to even 0
        assert_eq!(bf16_from_f32(f32::from_bits(0x0001_8000)), 2);
        assert_eq!(bf16_from_f64(2f64.powi(-134) * (1.0 + f64::EPSILON)), 1);
        assert_eq!(bf16_from_f64(2f64.powi(-134)), 0);
        assert_eq!(e4m3fn_from_f32(2f32.powi(-10)), 0); // half of 2^-9, tie to 0
        assert_eq!(e4m3fn_from_f32(3.0 * 2f32.powi(-10)), 2);
        assert_eq!(e5m2_from_f64(-2f64.powi(-17)), 0x80);
        assert_eq!(e5m2_from_f64(next_up64(2f64.powi(-17))), 1);
        assert_eq!(e2m1fn_from_f32(0.25), 0);
        assert_eq!(e2m1fn_from_f32(0.75), 2); // tie to the even 1.0
        assert_eq!(e2m1fn_from_f32(-0.2500001), 0x9);
        assert_eq!(e2m1fn_from_f32(5.0), 0x6); // tie to the even 4
        assert_eq!(e2m1fn_from_f32(2.5), 0x4); // tie to the even 2

        // Double rounding through f32 would be wrong here: 1 + 2^-11 + 2^-40
        // rounds to 1 + 2^-10 in float16, while f32 would make it the
        // midpoint 1 + 2^-11 and ties-to-even then gives 1.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f16_from_f64(x), 0x3c01);
        assert_eq!(f16_from_f32(x as f32), 0x3c00);
        let y = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(bf16_from_f64(y), 0x3f81);
        assert_eq!(bf16_from_f32(y as f32), 0x3f80);
    }

    #[test]
    fn dispatch_by_dtype() {
        for d in Dtype::ALL {
            match Narrow::of(d) {
                Some(n) => {
                    assert!(d.is_narrow_float());
                    assert_eq!(n.dtype(), d);
                    assert_eq!(encode_f32(d, 1.5), Some(n.encode_f32(1.5)));
                    assert_eq!(encode_f64(d, -3.0), Some(n.encode_f64(-3.0)));
                    assert_eq!(decode(d, n.encode_f32(1.5)), Some(1.5));
                    assert_eq!(round_from_f32(d, 1.0 + f32::EPSILON), 1.0);
                    assert_eq!(round_from_f64(d, 1.0 + f64::EPSILON), 1.0);
                }
                None => {
                    assert!(!d.is_narrow_float());
                    assert_eq!((encode_f32(d, 1.0), encode_f64(d, 1.0)), (None, None));
                    assert_eq!(decode(d, 0), None);
                    assert_eq!(round_from_f32(d, 1.0 + f32::EPSILON), 1.0 + f32::EPSILON);
                    assert_eq!(round_from_f64(d, 1.0 + f64::EPSILON), 1.0);
                    let mut v = [1.0 + f32::EPSILON];
                    round_f32_slice(d, &mut v);
                    assert_eq!(v, [1.0 + f32::EPSILON]);
                }
            }
        }
        assert_eq!(
            Narrow::ALL.map(Narrow::dtype).map(Dtype::code),
            [12, 13, 14, 15, 16]
        );
        assert_eq!(f16_from_f32(1.0), 0x3c00);
        assert_eq!(bf16_from_f32(-2.0), 0xc000);
        assert_eq!(e5m2_from_f32(1.0), 0x3c);
        assert_eq!(e4m3fn_from_f32(1.0), 0x38);
        assert_eq!(e2m1fn_from_f32(-1.0), 0xa);
        let xs: Vec<f32> = (0..2000)
            .map(|i| (i as f32 - 1000.0) * 0.37)
            .chain([f32::NAN, f32::INFINITY])
            .collect();
        for n in Narrow::ALL {
            let mut v = xs.clone();
            n.round_f32_slice(&mut v);
            for (r, x) in v.iter().zip(&xs) {
                assert_eq!(r.to_bits(), n.round_from_f32(*x).to_bits());
                assert_eq!(r.to_bits(), n.round_from_f64(f64::from(*x)).to_bits());
            }
        }
    }

    /// Timing of 10M-element conversions, f32 to float16 and back, and the
    /// rounding of a slice into each format, the best of five each: `cargo
    /// test --no-default-features --release --lib narrow::tests::slice_timing
    /// -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn slice_timing() {
        fn best(what: &str, mut f: impl FnMut()) {
            let t = (0..5)
                .map(|_| {
                    let t = std::time::Instant::now();
                    f();
                    t.elapsed()
                })
                .min()
                .unwrap();
            println!("{what}: {t:?}");
        }
        let n = 10_000_000;
        let xs: Vec<f32> = (0..n).map(|i| (i as f32 - 5e6) * 1.37e-3).collect();
        let mut h = vec![0u16; n];
        let mut back = vec![0f32; n];
        best("f32 -> float16", || {
            h.iter_mut()
                .zip(&xs)
                .for_each(|(o, &x)| *o = f16_from_f32(x));
        });
        best("float16 -> f32", || {
            back.iter_mut()
                .zip(&h)
                .for_each(|(o, &b)| *o = f16_to_f32(b));
        });
        assert!(back
            .iter()
            .zip(&xs)
            .all(|(b, x)| (b - x).abs() <= x.abs() / 2048.0));
        for f in Narrow::ALL {
            let mut v = xs.clone();
            best(&format!("round_f32_slice {f:?}"), || {
                f.round_f32_slice(&mut v)
            });
        }
    }
}
