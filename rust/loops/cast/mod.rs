//! Cast: the conversion of a column from one dtype into another, each value
//! rounded once.
//!
//! The rules (`Nx_kernel.Prog.op1.Cast` documents them for OCaml):
//! - into a float: an integer or a float rounds once to nearest, ties to
//!   even (a narrow float rounds straight from the source's value); a
//!   complex number gives its real part; a truth value gives 0 or 1;
//! - into an integer: an integer wraps modulo 2^w; a float rounds toward
//!   zero and saturates at the dtype's ends, a NaN giving 0; a complex number
//!   gives its real part so; a truth value gives 0 or 1;
//! - into bool or bit: whether the value is not zero (a NaN is not zero; a
//!   complex number with either part not zero);
//! - into a complex dtype: a real value gives the real part, +0 the
//!   imaginary one; a complex value casts part by part.

use crate::loops::column::{wrap_i4, ColMut, ColRef, Column, C32, C64};
use crate::core::dtype::{Dtype, Family};
use crate::each_col;
use crate::core::narrow::Narrow;
use crate::core::stream;
use crate::loops::ops::Store;

mod to_int32;

/// A register scalar's view as a truth value, a float64 and the pair of
/// parts, which the conversions start from.
trait Source: Copy {
    fn truth(self) -> bool;
    fn re(self) -> f64;
}

macro_rules! real_source {
    ($($t:ty),*) => {$(
        impl Source for $t {
            #[inline] fn truth(self) -> bool { self != (0 as $t) }
            #[inline] fn re(self) -> f64 { self as f64 }
        }
    )*};
}
real_source!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
impl Source for bool {
    #[inline]
    fn truth(self) -> bool {
        self
    }
    #[inline]
    fn re(self) -> f64 {
        self as u8 as f64
    }
}
impl Source for C32 {
    #[inline]
    fn truth(self) -> bool {
        self.re != 0.0 || self.im != 0.0
    }
    #[inline]
    fn re(self) -> f64 {
        self.re as f64
    }
}
impl Source for C64 {
    #[inline]
    fn truth(self) -> bool {
        self.re != 0.0 || self.im != 0.0
    }
    #[inline]
    fn re(self) -> f64 {
        self.re
    }
}

/// `f` of each of `x`'s first `n` values into `out`.
#[inline(always)]
fn each<T: Copy, U>(x: &[T], out: &mut [U], n: usize, f: impl Fn(T) -> U) {
    for (o, &a) in out[..n].iter_mut().zip(&x[..n]) {
        *o = f(a);
    }
}

/// A real register type as Rust's `as` converts a float into it: rounded to
/// nearest into a float; truncated toward zero and saturated at the type's
/// ends into an integer, a NaN giving 0. Into an integer, without branches
/// or saturating conversion instructions: the value is clamped in the float
/// domain by selects, then converted by an instruction that need not
/// saturate, so that loops of it vectorise.
trait FromFloat: Copy {
    fn from_f32(x: f32) -> Self;
    fn from_f64(x: f64) -> Self;
}

impl FromFloat for f32 {
    #[inline(always)]
    fn from_f32(x: f32) -> f32 {
        x
    }
    #[inline(always)]
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
}

impl FromFloat for f64 {
    #[inline(always)]
    fn from_f32(x: f32) -> f64 {
        x as f64
    }
    #[inline(always)]
    fn from_f64(x: f64) -> f64 {
        x
    }
}

/// `x` with a NaN made 0, clamped into `[lo, hi]`, by selects: a finite
/// value of `[lo, hi]`.
macro_rules! clamp_fn {
    ($name:ident, $f:ty) => {
        #[inline(always)]
        fn $name(x: $f, lo: $f, hi: $f) -> $f {
            let x = if x.is_nan() { 0.0 } else { x };
            let x = if x < lo { lo } else { x };
            if x > hi {
                hi
            } else {
                x
            }
        }
    };
}
clamp_fn!(clamp32, f32);
clamp_fn!(clamp64, f64);

/// Integers of at most 32 bits but uint32: through int32, which holds their
/// range, after clamping to it. Where float32 lacks int32's greatest value,
/// 2^31 - 1, the clamp is to the greatest float32 below it, `$hi32`, and a
/// value from 2^31 up gives the greatest int32 by a select.
macro_rules! narrow_from_float {
    ($($t:ty, $hi32:expr;)*) => {$(
        impl FromFloat for $t {
            #[inline(always)]
            fn from_f32(x: f32) -> $t {
                let c = clamp32(x, <$t>::MIN as f32, $hi32);
                // SAFETY: `c` is finite and in the range of $t, so of i32.
                let t = (unsafe { c.to_int_unchecked::<i32>() }) as $t;
                // Only int32's clamp falls short (a constant condition).
                if $hi32 < <$t>::MAX as f32 && x >= 2147483648.0 {
                    <$t>::MAX
                } else {
                    t
                }
            }
            #[inline(always)]
            fn from_f64(x: f64) -> $t {
                let c = clamp64(x, <$t>::MIN as f64, <$t>::MAX as f64);
                // SAFETY: `c` is finite and in the range of $t, so of i32.
                (unsafe { c.to_int_unchecked::<i32>() }) as $t
            }
        }
    )*};
}
narrow_from_float! {
    i8, 127.0;
    i16, 32767.0;
    i32, 2147483520.0; // 2^31 - 128
    u8, 255.0;
    u16, 65535.0;
}

/// uint32: a value from 2^31 up less 2^31, which is exact, converted
/// through int32, the top bit put back. Float32 lacks 2^32 - 1: the clamp
/// is to the greatest float32 below it and a value from 2^32 up gives
/// 2^32 - 1 by a select.
impl FromFloat for u32 {
    #[inline(always)]
    fn from_f32(x: f32) -> u32 {
        const TOP: f32 = 2147483648.0;
        let c = clamp32(x, 0.0, 4294967040.0); // 2^32 - 256
        let big = c >= TOP;
        let t = if big { c - TOP } else { c };
        // SAFETY: `t` is finite and in [0, 2^31), so in the range of i32.
        let u = (unsafe { t.to_int_unchecked::<i32>() }) as u32 | if big { 1 << 31 } else { 0 };
        if x >= 4294967296.0 {
            u32::MAX
        } else {
            u
        }
    }
    #[inline(always)]
    fn from_f64(x: f64) -> u32 {
        const TOP: f64 = 2147483648.0;
        let c = clamp64(x, 0.0, u32::MAX as f64);
        let big = c >= TOP;
        let t = if big { c - TOP } else { c };
        // SAFETY: `t` is finite and in [0, 2^31), so in the range of i32.
        (unsafe { t.to_int_unchecked::<i32>() }) as u32 | if big { 1 << 31 } else { 0 }
    }
}

/// The magnitude of `c`, a finite float64 below 2^64 in magnitude,
/// truncated to an integer, from its bits: its significand, the leading one
/// put in, at the top of a u64, shifted right by 63 less its unbiased
/// exponent; a magnitude below 1, of an exponent below 0, is 0.
#[inline(always)]
fn magnitude_u64(c: f64) -> u64 {
    let b = c.to_bits();
    let e = ((b >> 52) & 0x7ff) as i64;
    let top = (b << 11) | (1 << 63);
    if e < 1023 {
        0
    } else {
        top >> ((1086 - e) & 63)
    }
}

/// int64 and uint64, from float64 (float32 first widened to it, exactly):
/// clamped to the greatest float64 below the greatest value, which float64
/// lacks, then the magnitude from the bits and the sign put back; a value
/// from 2^63 (2^64) up gives the greatest value by a select.
impl FromFloat for i64 {
    #[inline(always)]
    fn from_f32(x: f32) -> i64 {
        i64::from_f64(x as f64)
    }
    #[inline(always)]
    fn from_f64(x: f64) -> i64 {
        let c = clamp64(x, i64::MIN as f64, 9223372036854774784.0); // 2^63 - 1024
        let m = magnitude_u64(c);
        let t = (if c < 0.0 { m.wrapping_neg() } else { m }) as i64;
        if x >= 9223372036854775808.0 {
            i64::MAX
        } else {
            t
        }
    }
}

impl FromFloat for u64 {
    #[inline(always)]
    fn from_f32(x: f32) -> u64 {
        u64::from_f64(x as f64)
    }
    #[inline(always)]
    fn from_f64(x: f64) -> u64 {
        let m = magnitude_u64(clamp64(x, 0.0, 18446744073709549568.0)); // 2^64 - 2048
        if x >= 18446744073709551616.0 {
            u64::MAX
        } else {
            m
        }
    }
}

/// Converts between real register types as Rust's `as` does, which wraps
/// integers, rounds to nearest into floats and truncates and saturates
/// floats into integers (NaN to 0): Cast's rules. Floats (complex numbers'
/// real parts) convert by [`FromFloat`], which has `as`'s results.
macro_rules! real_to_real {
    ($x:expr, $out:expr, $n:expr) => {{
        macro_rules! into {
            ($v:expr, $t:ty) => {
                match $x {
                    Column::Bool(x) => each(x, $v, $n, |a| a as u8 as $t),
                    Column::I8(x) => each(x, $v, $n, |a| a as $t),
                    Column::I16(x) => each(x, $v, $n, |a| a as $t),
                    Column::I32(x) => each(x, $v, $n, |a| a as $t),
                    Column::I64(x) => each(x, $v, $n, |a| a as $t),
                    Column::U8(x) => each(x, $v, $n, |a| a as $t),
                    Column::U16(x) => each(x, $v, $n, |a| a as $t),
                    Column::U32(x) => each(x, $v, $n, |a| a as $t),
                    Column::U64(x) => each(x, $v, $n, |a| a as $t),
                    Column::F32(x) => each(x, $v, $n, <$t>::from_f32),
                    Column::F64(x) => each(x, $v, $n, <$t>::from_f64),
                    Column::C32(x) => each(x, $v, $n, |a| <$t>::from_f32(a.re)),
                    Column::C64(x) => each(x, $v, $n, |a| <$t>::from_f64(a.re)),
                }
            };
        }
        match $out {
            Column::I8(v) => into!(v, i8),
            Column::I16(v) => into!(v, i16),
            Column::I32(v) => into!(v, i32),
            Column::I64(v) => into!(v, i64),
            Column::U8(v) => into!(v, u8),
            Column::U16(v) => into!(v, u16),
            Column::U32(v) => into!(v, u32),
            Column::U64(v) => into!(v, u64),
            Column::F32(v) => into!(v, f32),
            Column::F64(v) => into!(v, f64),
            _ => unreachable!("real_to_real into a non-real column"),
        }
    }};
}

/// Applies `$f` to every value of any column `$x`, into the slice `$o`.
macro_rules! from_any {
    ($x:expr, $o:expr, $n:expr, $f:expr) => {
        match $x {
            Column::Bool(s) => each(s, $o, $n, $f),
            Column::I8(s) => each(s, $o, $n, $f),
            Column::I16(s) => each(s, $o, $n, $f),
            Column::I32(s) => each(s, $o, $n, $f),
            Column::I64(s) => each(s, $o, $n, $f),
            Column::U8(s) => each(s, $o, $n, $f),
            Column::U16(s) => each(s, $o, $n, $f),
            Column::U32(s) => each(s, $o, $n, $f),
            Column::U64(s) => each(s, $o, $n, $f),
            Column::F32(s) => each(s, $o, $n, $f),
            Column::F64(s) => each(s, $o, $n, $f),
            Column::C32(s) => each(s, $o, $n, $f),
            Column::C64(s) => each(s, $o, $n, $f),
        }
    };
}

/// Casts the first `n` values of `x`, of dtype `from`, into `out`, a column
/// of dtype `to`.
///
/// A real value reaches a complex64 or a narrow float through float64, which
/// holds every value but the wide integers exactly; for those the two
/// roundings give the one rounding's result, float64's 53 bits being at
/// least twice the target's and two more.
///
/// Where `wide`, the cast runs its AVX-512 compilation where the CPU has
/// it (a slice form, `kinds::wide::slice_form`), of the same bits:
/// its steps are IEEE conversions, comparisons, selects and integer
/// arithmetic, which the instruction set does not change (in cache,
/// float32 into int32 so took 6.2 µs over 100K elements against 9.2 on the
/// baseline's). A loop streaming from memory passes false: there the
/// baseline's ran faster. float32 into int32 itself now takes its own loop
/// (`to_int32`), which reads `wide` the same way.
pub fn cast(from: Dtype, to: Dtype, x: &ColRef, out: &mut ColMut, n: usize, wide: bool) {
    cast_stored(from, to, x, out, n, wide, Store::Cached)
}

/// [`cast`], storing as `store` says (`ops::Store`) where it casts float32
/// into int32; the other casts store plainly.
pub fn cast_stored(from: Dtype, to: Dtype, x: &ColRef, out: &mut ColMut, n: usize, wide: bool, store: Store) {
    if let (Dtype::Float32, Dtype::Int32, Column::F32(s), Column::I32(o)) = (from, to, x, &mut *out) {
        let s = &s[..n];
        return match store {
            Store::Cached => to_int32::convert(s, &mut o[..n], wide),
            Store::Streamed => stream::fill(&mut o[..n], |part, at| to_int32::convert(&s[at..at + part.len()], part, wide)),
        };
    }
    if wide {
        cast_widest(from, to, x, out, n)
    } else {
        cast_here(from, to, x, out, n)
    }
}

crate::kinds::wide::slice_form! {
    /// [`cast_here`] in the compilation the CPU takes.
    fn cast_widest(from: Dtype, to: Dtype, x: &ColRef, out: &mut ColMut, n: usize) {
        cast_here(from, to, x, out, n)
    }
}

/// [`cast`]'s body, compiled into each of its compilations.
#[inline(always)]
fn cast_here(from: Dtype, to: Dtype, x: &ColRef, out: &mut ColMut, n: usize) {
    match out {
        Column::Bool(o) => from_any!(x, o, n, Source::truth),
        Column::C32(o) => match x {
            Column::C64(s) => each(s, o, n, |a| C32::new(a.re as f32, a.im as f32)),
            Column::C32(s) => each(s, o, n, |a| a),
            _ => from_any!(x, o, n, |a| C32::new(Source::re(a) as f32, 0.0)),
        },
        Column::C64(o) => match x {
            Column::C32(s) => each(s, o, n, |a| C64::new(a.re as f64, a.im as f64)),
            Column::C64(s) => each(s, o, n, |a| a),
            _ => from_any!(x, o, n, |a| C64::new(Source::re(a), 0.0)),
        },
        Column::F32(o) if to.is_narrow_float() => {
            let w = Narrow::of(to).expect("a narrow float dtype");
            match x {
                Column::F32(s) => w.round_f32_into(&s[..n], &mut o[..n]),
                Column::F64(s) => w.round_f64_into(&s[..n], &mut o[..n]),
                _ => {
                    // Through a buffer of float64s, a chunk at a time.
                    let mut wide = [0f64; 256];
                    for (c, o) in o[..n].chunks_mut(wide.len()).enumerate() {
                        let (at, k) = (c * wide.len(), o.len());
                        each_col!(x, s => each(&s[at..], &mut wide, k, Source::re));
                        w.round_f64_into(&wide[..k], o);
                    }
                }
            }
        }
        _ => {
            real_to_real!(x, &mut *out, n);
            if to.bits() == 4 {
                settle_int4(from, to, out, n);
            }
        }
    }
}

/// Brings an int4 or uint4 cast into its range: an integer or a truth value
/// wraps modulo 16; a float or complex value, already truncated and
/// saturated at the byte's ends, saturates at the 4-bit ends.
fn settle_int4(from: Dtype, to: Dtype, out: &mut ColMut, n: usize) {
    let saturate = matches!(from.family(), Family::Float | Family::Complex);
    match (to, out) {
        (Dtype::Int4, Column::I8(v)) => v[..n].iter_mut().for_each(|x| {
            *x = if saturate { (*x).clamp(-8, 7) } else { wrap_i4(*x) }
        }),
        (Dtype::Uint4, Column::U8(v)) => v[..n].iter_mut().for_each(|x| {
            *x = if saturate { (*x).min(15) } else { *x & 15 }
        }),
        _ => unreachable!("settle_int4 of a dtype of other than 4 bits"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loops::column::Col;

    fn cast1(from: Dtype, to: Dtype, x: Col) -> Col {
        let n = x.len();
        let mut out = Col::new(to, n);
        cast(from, to, &x.as_ref(), &mut out.as_mut(), n, true);
        out
    }

    #[test]
    fn float32_into_int32_streamed_gives_the_values_stored_plainly() {
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 2147483648.0, -2147483904.0, -0.0, 1e-45, 2.5, -2.5];
        let x = Col::F32((0..1000).map(|i| if i % 7 == 0 { specials[i / 7 % specials.len()] } else { (i as f32 - 500.25) * 4.5e6 }).collect());
        let (mut plain, mut streamed) = (Col::new(Dtype::Int32, 1000), Col::new(Dtype::Int32, 1000));
        for n in [1000, 999, 70] {
            cast(Dtype::Float32, Dtype::Int32, &x.as_ref(), &mut plain.as_mut(), n, false);
            cast_stored(Dtype::Float32, Dtype::Int32, &x.as_ref(), &mut streamed.as_mut(), n, false, Store::Streamed);
            stream::fence();
            assert_eq!(plain, streamed, "{n} values");
        }
        assert_eq!(plain, cast1(Dtype::Float32, Dtype::Int32, x));
    }

    #[test]
    fn floats_into_integers_truncate_and_saturate() {
        let x = Col::F64(vec![2.9, -2.9, 1e300, -1e300, f64::NAN, -0.0]);
        assert_eq!(cast1(Dtype::Float64, Dtype::Int32, x.clone()), Col::I32(vec![2, -2, i32::MAX, i32::MIN, 0, 0]));
        assert_eq!(cast1(Dtype::Float64, Dtype::Uint8, x.clone()), Col::U8(vec![2, 0, 255, 0, 0, 0]));
        assert_eq!(cast1(Dtype::Float64, Dtype::Int4, x.clone()), Col::I8(vec![2, -2, 7, -8, 0, 0]));
        assert_eq!(cast1(Dtype::Float64, Dtype::Uint4, x), Col::U8(vec![2, 0, 15, 0, 0, 0]));
    }

    #[test]
    fn integers_wrap() {
        let x = Col::I64(vec![300, -1, 17, i64::MIN]);
        assert_eq!(cast1(Dtype::Int64, Dtype::Uint8, x.clone()), Col::U8(vec![44, 255, 17, 0]));
        assert_eq!(cast1(Dtype::Int64, Dtype::Int4, x.clone()), Col::I8(vec![-4, -1, 1, 0]));
        assert_eq!(cast1(Dtype::Int64, Dtype::Uint4, x), Col::U8(vec![12, 15, 1, 0]));
    }

    #[test]
    fn truth_and_complex() {
        let x = Col::C64(vec![C64::new(0.0, 0.0), C64::new(0.0, -1.0), C64::new(2.5, 9.0)]);
        assert_eq!(cast1(Dtype::Complex128, Dtype::Bool, x.clone()), Col::Bool(vec![false, true, true]));
        assert_eq!(cast1(Dtype::Complex128, Dtype::Int8, x.clone()), Col::I8(vec![0, 0, 2]));
        let f = Col::F32(vec![f32::NAN, -0.0, 3.0]);
        assert_eq!(cast1(Dtype::Float32, Dtype::Bit, f), Col::Bool(vec![true, false, true]));
        let c = cast1(Dtype::Int64, Dtype::Complex64, Col::I64(vec![(1 << 40) + 1]));
        assert_eq!(c, Col::C32(vec![C32::new((1u64 << 40) as f32, 0.0)]));
    }

    #[test]
    fn wide_integers_round_once_to_nearest() {
        // 2^24 + 1 is a tie in float32: to even, 2^24.
        let x = Col::I64(vec![(1 << 24) + 1, (1 << 24) + 3, i64::MAX]);
        assert_eq!(
            cast1(Dtype::Int64, Dtype::Float32, x),
            Col::F32(vec![16777216.0, 16777220.0, 9223372036854775808.0])
        );
        // float16: 2049 is a tie between 2048 and 2050: to even, 2048; 2051 to 2052.
        let h = cast1(Dtype::Int32, Dtype::Float16, Col::I32(vec![2049, 2051, 70000]));
        assert_eq!(h, Col::F32(vec![2048.0, 2052.0, f32::INFINITY]));
        // A float64 just above a float16 tie rounds up, where float32 first would tie to even.
        let above = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        let h = cast1(Dtype::Float64, Dtype::Float16, Col::F64(vec![above]));
        assert_eq!(h, Col::F32(vec![1.0 + 2f32.powi(-10)]));
    }
}

#[cfg(test)]
mod fast_tests;
