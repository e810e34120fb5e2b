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

use crate::dtype::Dtype;

// ---------------------------------------------------------------------------
// Shared rounding and decoding of finite magnitudes.
//
// A format of `M` stored mantissa bits and exponent bias `BIAS` has least
// normal number 2^(1 - BIAS) and subnormal spacing q = 2^(1 - BIAS - M).
// Its magnitude bits (sign clear) are ordered as the magnitudes are, so
// "larger than the largest finite bits" means overflow.

/// The magnitude bits, rounded to nearest even, of the non-negative f32 whose
/// bits are `a`, in the format of `M` mantissa bits and bias `BIAS` (at most
/// 127). Not clamped: a magnitude past the largest finite value, an infinity
/// or a NaN gives bits past the largest finite ones, which the caller maps by
/// its format's rule.
#[inline(always)]
fn magnitude_f32<const M: u32, const BIAS: u32>(a: u32) -> u32 {
    let shift = 23 - M;
    // Below 2^(1 - BIAS) the bits are |x| / q rounded to an integer. C = q 2^23
    // has an ulp of q, and |x| < C, so the f32 sum |x| + C is C plus |x|
    // rounded to a multiple of q, to nearest even; its bits less C's are that
    // multiple. Rounding up to 2^(1 - BIAS) gives 2^M, the least normal's bits.
    let c = (151 - BIAS - M) << 23;
    let sub = (f32::from_bits(a) + f32::from_bits(c)).to_bits() - c;
    // From 2^(1 - BIAS) up: rebias the exponent and drop `shift` bits. Adding
    // half an ulp less one, plus the lowest kept bit, carries into the kept
    // bits exactly when the dropped ones exceed half an ulp, or equal it with
    // the kept bits odd; a carry out of the mantissa steps the exponent.
    let t = a.wrapping_sub((127 - BIAS) << 23);
    let norm = t.wrapping_add((1 << (shift - 1)) - 1 + ((t >> shift) & 1)) >> shift;
    if a < (128 - BIAS) << 23 {
        sub
    } else {
        norm
    }
}

/// [`magnitude_f32`] for the non-negative f64 whose bits are `a` (`BIAS` at
/// most 1023).
#[inline(always)]
fn magnitude_f64<const M: u32, const BIAS: u32>(a: u64) -> u64 {
    let shift = 52 - M;
    // As in magnitude_f32, with C = q 2^52.
    let c = u64::from(1076 - BIAS - M) << 52;
    let sub = (f64::from_bits(a) + f64::from_bits(c)).to_bits() - c;
    let t = a.wrapping_sub(u64::from(1023 - BIAS) << 52);
    let norm = t.wrapping_add((1 << (shift - 1)) - 1 + ((t >> shift) & 1)) >> shift;
    if a < u64::from(1024 - BIAS) << 52 {
        sub
    } else {
        norm
    }
}

/// The f32 value of finite magnitude bits `mag` of the format of `M` mantissa
/// bits and bias `BIAS` (at most 127 - M), exactly.
#[inline(always)]
fn finite_to_f32<const M: u32, const BIAS: u32>(mag: u32) -> f32 {
    let normal = f32::from_bits((mag << (23 - M)) + ((127 - BIAS) << 23));
    // A subnormal is its mantissa times q, both factors and the product exact.
    let sub = mag as f32 * f32::from_bits((128 - BIAS - M) << 23);
    if mag < 1 << M {
        sub
    } else {
        normal
    }
}

// ---------------------------------------------------------------------------
// float16: S.EEEEE.MMMMMMMMMM, bias 15.

/// Encodes an f32 as float16 bits, rounding once to nearest even; overflow to
/// ±inf, NaN to a quiet NaN of its sign.
#[inline]
pub fn f16_from_f32(x: f32) -> u16 {
    let b = x.to_bits();
    let a = b & 0x7fff_ffff;
    let sign = (b >> 16) & 0x8000;
    let finite = magnitude_f32::<10, 15>(a).min(0x7c00);
    let nan = 0x7e00 | ((a >> 13) & 0x3ff);
    (sign | if a > 0x7f80_0000 { nan } else { finite }) as u16
}

/// Encodes an f64 as float16 bits, rounding once to nearest even; overflow to
/// ±inf, NaN to a quiet NaN of its sign.
#[inline]
pub fn f16_from_f64(x: f64) -> u16 {
    let b = x.to_bits();
    let a = b & 0x7fff_ffff_ffff_ffff;
    let sign = (b >> 48) & 0x8000;
    let finite = magnitude_f64::<10, 15>(a).min(0x7c00);
    let nan = 0x7e00 | ((a >> 42) & 0x3ff);
    (sign
        | if a > 0x7ff0_0000_0000_0000 {
            nan
        } else {
            finite
        }) as u16
}

/// Decodes float16 bits, exactly.
#[inline]
pub fn f16_to_f32(bits: u16) -> f32 {
    let b = u32::from(bits);
    let mag = b & 0x7fff;
    let special = 0x7f80_0000 | ((mag & 0x3ff) << 13) | if mag > 0x7c00 { 0x40_0000 } else { 0 };
    let m = if mag >= 0x7c00 {
        special
    } else {
        finite_to_f32::<10, 15>(mag).to_bits()
    };
    f32::from_bits(m | (b & 0x8000) << 16)
}

// ---------------------------------------------------------------------------
// bfloat16: the high half of an f32.

/// Encodes an f32 as bfloat16 bits, rounding once to nearest even; overflow
/// to ±inf, NaN to a quiet NaN of its sign.
#[inline]
pub fn bf16_from_f32(x: f32) -> u16 {
    let b = x.to_bits();
    // bfloat16 shares f32's exponent, subnormals included: rounding off the
    // low 16 bits to nearest even (as in magnitude_f32) is the whole
    // conversion. Its carry never reaches the sign, as the largest finite f32
    // rounds to the infinity 0x7f80.
    let rounded = b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16;
    let nan = (b >> 16) | 0x40;
    (if b & 0x7fff_ffff > 0x7f80_0000 {
        nan
    } else {
        rounded
    }) as u16
}

/// Encodes an f64 as bfloat16 bits, rounding once to nearest even; overflow
/// to ±inf, NaN to a quiet NaN of its sign.
#[inline]
pub fn bf16_from_f64(x: f64) -> u16 {
    let b = x.to_bits();
    let a = b & 0x7fff_ffff_ffff_ffff;
    let sign = (b >> 48) & 0x8000;
    let finite = magnitude_f64::<7, 127>(a).min(0x7f80);
    let nan = 0x7fc0 | ((a >> 45) & 0x7f);
    (sign
        | if a > 0x7ff0_0000_0000_0000 {
            nan
        } else {
            finite
        }) as u16
}

/// Decodes bfloat16 bits, exactly.
#[inline]
pub fn bf16_to_f32(bits: u16) -> f32 {
    let b = u32::from(bits) << 16;
    let quiet = if b & 0x7fff_ffff > 0x7f80_0000 {
        0x40_0000
    } else {
        0
    };
    f32::from_bits(b | quiet)
}

// ---------------------------------------------------------------------------
// float8_e5m2: S.EEEEE.MM, bias 15, IEEE-like.

/// Encodes an f32 as float8_e5m2 bits, rounding once to nearest even;
/// overflow to ±inf, NaN to a quiet NaN of its sign.
#[inline]
pub fn e5m2_from_f32(x: f32) -> u8 {
    let b = x.to_bits();
    let a = b & 0x7fff_ffff;
    let sign = (b >> 24) & 0x80;
    let finite = magnitude_f32::<2, 15>(a).min(0x7c);
    let nan = 0x7e | ((a >> 21) & 3);
    (sign | if a > 0x7f80_0000 { nan } else { finite }) as u8
}

/// Encodes an f64 as float8_e5m2 bits, rounding once to nearest even;
/// overflow to ±inf, NaN to a quiet NaN of its sign.
#[inline]
pub fn e5m2_from_f64(x: f64) -> u8 {
    let b = x.to_bits();
    let a = b & 0x7fff_ffff_ffff_ffff;
    let sign = (b >> 56) & 0x80;
    let finite = magnitude_f64::<2, 15>(a).min(0x7c);
    let nan = 0x7e | ((a >> 50) & 3);
    (sign
        | if a > 0x7ff0_0000_0000_0000 {
            nan
        } else {
            finite
        }) as u8
}

/// Decodes float8_e5m2 bits, exactly.
#[inline]
pub fn e5m2_to_f32(bits: u8) -> f32 {
    let b = u32::from(bits);
    let mag = b & 0x7f;
    let special = 0x7f80_0000 | ((mag & 3) << 21) | if mag > 0x7c { 0x40_0000 } else { 0 };
    let m = if mag >= 0x7c {
        special
    } else {
        finite_to_f32::<2, 15>(mag).to_bits()
    };
    f32::from_bits(m | (b & 0x80) << 24)
}

// ---------------------------------------------------------------------------
// float8_e4m3fn: S.EEEE.MMM, bias 7, no infinity, NaN at S.1111.111.

/// Encodes an f32 as float8_e4m3fn bits, rounding once to nearest even; a
/// magnitude that rounds past 448, an infinity or a NaN gives the NaN of its
/// sign.
#[inline]
pub fn e4m3fn_from_f32(x: f32) -> u8 {
    let b = x.to_bits();
    // Overflow, infinities and NaNs all give magnitude bits past 0x7e, the
    // largest finite: clamping them to 0x7f makes them the NaN.
    ((b >> 24) & 0x80 | magnitude_f32::<3, 7>(b & 0x7fff_ffff).min(0x7f)) as u8
}

/// Encodes an f64 as float8_e4m3fn bits, rounding once to nearest even; a
/// magnitude that rounds past 448, an infinity or a NaN gives the NaN of its
/// sign.
#[inline]
pub fn e4m3fn_from_f64(x: f64) -> u8 {
    let b = x.to_bits();
    ((b >> 56) & 0x80 | magnitude_f64::<3, 7>(b & 0x7fff_ffff_ffff_ffff).min(0x7f)) as u8
}

/// Decodes float8_e4m3fn bits, exactly.
#[inline]
pub fn e4m3fn_to_f32(bits: u8) -> f32 {
    let b = u32::from(bits);
    let mag = b & 0x7f;
    let m = if mag == 0x7f {
        0x7fc0_0000
    } else {
        finite_to_f32::<3, 7>(mag).to_bits()
    };
    f32::from_bits(m | (b & 0x80) << 24)
}

// ---------------------------------------------------------------------------
// float4_e2m1fn: S.EE.M in the low 4 bits, bias 1, no infinity, no NaN.

/// Encodes an f32 as float4_e2m1fn bits (in the low 4 bits), rounding once to
/// nearest even; overflow and infinities saturate to ±6, a NaN gives a zero
/// of its sign (see the module's documentation).
#[inline]
pub fn e2m1fn_from_f32(x: f32) -> u8 {
    let b = x.to_bits();
    let a = b & 0x7fff_ffff;
    let finite = magnitude_f32::<1, 1>(a).min(7);
    ((b >> 28) & 8 | if a > 0x7f80_0000 { 0 } else { finite }) as u8
}

/// Encodes an f64 as float4_e2m1fn bits (in the low 4 bits), rounding once to
/// nearest even; overflow and infinities saturate to ±6, a NaN gives a zero
/// of its sign (see the module's documentation).
#[inline]
pub fn e2m1fn_from_f64(x: f64) -> u8 {
    let b = x.to_bits();
    let a = b & 0x7fff_ffff_ffff_ffff;
    let finite = magnitude_f64::<1, 1>(a).min(7);
    ((b >> 60) & 8 | if a > 0x7ff0_0000_0000_0000 { 0 } else { finite }) as u8
}

/// Decodes float4_e2m1fn bits, exactly; only the low 4 bits are read.
#[inline]
pub fn e2m1fn_to_f32(bits: u8) -> f32 {
    let b = u32::from(bits);
    f32::from_bits(finite_to_f32::<1, 1>(b & 7).to_bits() | (b & 8) << 28)
}

// ---------------------------------------------------------------------------
// Dispatch by dtype.

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

    /// Encodes an f32, rounding once to nearest even, by the format's rules
    /// (module documentation). The bits are in the low 16, 8 or 4 of the
    /// result, the rest zero.
    #[inline]
    pub fn encode_f32(self, x: f32) -> u16 {
        match self {
            Narrow::Float4E2m1fn => e2m1fn_from_f32(x).into(),
            Narrow::Float8E4m3fn => e4m3fn_from_f32(x).into(),
            Narrow::Float8E5m2 => e5m2_from_f32(x).into(),
            Narrow::Float16 => f16_from_f32(x),
            Narrow::Bfloat16 => bf16_from_f32(x),
        }
    }

    /// Encodes an f64, rounding once to nearest even straight from it, by
    /// the format's rules (module documentation). The bits are in the low 16,
    /// 8 or 4 of the result, the rest zero.
    #[inline]
    pub fn encode_f64(self, x: f64) -> u16 {
        match self {
            Narrow::Float4E2m1fn => e2m1fn_from_f64(x).into(),
            Narrow::Float8E4m3fn => e4m3fn_from_f64(x).into(),
            Narrow::Float8E5m2 => e5m2_from_f64(x).into(),
            Narrow::Float16 => f16_from_f64(x),
            Narrow::Bfloat16 => bf16_from_f64(x),
        }
    }

    /// Decodes bits exactly, reading only the format's low 16, 8 or 4 of
    /// them. `f64::from` of the result is the f64 value, also exact.
    #[inline]
    pub fn decode(self, bits: u16) -> f32 {
        match self {
            Narrow::Float4E2m1fn => e2m1fn_to_f32(bits as u8),
            Narrow::Float8E4m3fn => e4m3fn_to_f32(bits as u8),
            Narrow::Float8E5m2 => e5m2_to_f32(bits as u8),
            Narrow::Float16 => f16_to_f32(bits),
            Narrow::Bfloat16 => bf16_to_f32(bits),
        }
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

    /// Rounds every value of `v` in place, as [`Narrow::round_from_f32`] does; one
    /// loop per format, so each vectorises.
    pub fn round_f32_slice(self, v: &mut [f32]) {
        match self {
            Narrow::Float4E2m1fn => v
                .iter_mut()
                .for_each(|x| *x = e2m1fn_to_f32(e2m1fn_from_f32(*x))),
            Narrow::Float8E4m3fn => v
                .iter_mut()
                .for_each(|x| *x = e4m3fn_to_f32(e4m3fn_from_f32(*x))),
            Narrow::Float8E5m2 => v
                .iter_mut()
                .for_each(|x| *x = e5m2_to_f32(e5m2_from_f32(*x))),
            Narrow::Float16 => v.iter_mut().for_each(|x| *x = f16_to_f32(f16_from_f32(*x))),
            Narrow::Bfloat16 => v
                .iter_mut()
                .for_each(|x| *x = bf16_to_f32(bf16_from_f32(*x))),
        }
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

        fn check_f32(&self, x: f32) {
            let got = self.n.encode_f32(x);
            if x.is_nan() {
                assert!(
                    self.is_nan_result(x.is_sign_negative(), got),
                    "{:?} {:#x} -> {got:#x}",
                    self.n,
                    x.to_bits()
                );
            } else {
                let want = self.ref_encode(f64::from(x));
                assert_eq!(
                    got,
                    want,
                    "{:?} from f32 {:e} ({:#x})",
                    self.n,
                    x,
                    x.to_bits()
                );
            }
        }

        fn check_f64(&self, x: f64) {
            let got = self.n.encode_f64(x);
            if x.is_nan() {
                assert!(
                    self.is_nan_result(x.is_sign_negative(), got),
                    "{:?} {:#x} -> {got:#x}",
                    self.n,
                    x.to_bits()
                );
            } else {
                let want = self.ref_encode(x);
                assert_eq!(
                    got,
                    want,
                    "{:?} from f64 {:e} ({:#x})",
                    self.n,
                    x,
                    x.to_bits()
                );
            }
        }
    }

    fn fmts() -> Vec<Fmt> {
        Narrow::ALL.iter().map(|&n| Fmt::new(n)).collect()
    }

    /// The next f32 toward +inf, for finite `x`.
    fn next_up32(x: f32) -> f32 {
        match x {
            0.0 => f32::from_bits(1),
            x if x > 0.0 => f32::from_bits(x.to_bits() + 1),
            x => f32::from_bits(x.to_bits() - 1),
        }
    }
    /// The next f32 toward -inf, for finite `x`.
    fn next_down32(x: f32) -> f32 {
        -next_up32(-x)
    }
    /// The next f64 toward +inf, for finite `x`.
    fn next_up64(x: f64) -> f64 {
        match x {
            0.0 => f64::from_bits(1),
            x if x > 0.0 => f64::from_bits(x.to_bits() + 1),
            x => f64::from_bits(x.to_bits() - 1),
        }
    }
    /// The next f64 toward -inf, for finite `x`.
    fn next_down64(x: f64) -> f64 {
        -next_up64(-x)
    }

    #[test]
    fn every_pattern_decodes_exactly() {
        for f in fmts() {
            for bits in 0..(1u32 << f.width) {
                let bits = bits as u16;
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
            for bits in 0..(1u32 << f.width) {
                let bits = bits as u16;
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
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
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
}
