//! The kinds applied to columns: one node of a program over one tile.
//!
//! Each function takes its operands' columns and writes the node's column;
//! the caller settles the result into the node's dtype afterwards
//! (`Column::settle`). The program's checks (`crate::loops::prog`) guarantee that the
//! columns' register types fit the kind; a mismatch is a bug and panics.

use crate::loops::arith::Arith;
use crate::loops::column::{ColMut, ColRef, Column, C32, C64};
use crate::core::dtype::Dtype;
use crate::core::stream;
use crate::each_col;
use crate::loops::prog::{Binary, Unary};

/// How a kind writes its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// Plain stores, which leave the values in the caches.
    Cached,
    /// Whole cache lines by non-temporal stores ([`stream::fill`]), for a
    /// destination's run written in place by a loop that streams from
    /// memory: a line so written is not first read, which spares a third
    /// of a + b's traffic. The kinds that map a value or two through a
    /// closure store so, as does the cast of float32 into int32
    /// (`cast::cast_stored`); the others (the math library's slice forms, Where,
    /// the other casts) store plainly. The thread calls [`stream::fence`]
    /// before its part of the call ends.
    Streamed,
}

/// Writes `out[..n]` by `fill(part, at)`, which writes `part`, the values
/// from the `at`-th on, as `store` says.
#[inline]
fn put<U: Copy + Default>(out: &mut [U], n: usize, store: Store, mut fill: impl FnMut(&mut [U], usize)) {
    match store {
        Store::Cached => fill(&mut out[..n], 0),
        Store::Streamed => stream::fill(&mut out[..n], fill),
    }
}

fn map1<T: Copy, U: Copy + Default>(x: &[T], out: &mut [U], n: usize, store: Store, f: impl Fn(T) -> U) {
    let x = &x[..n];
    put(out, n, store, |part, at| {
        for (o, &a) in part.iter_mut().zip(&x[at..]) {
            *o = f(a);
        }
    })
}

fn map2<T: Copy, U: Copy + Default>(x: &[T], y: &[T], out: &mut [U], n: usize, store: Store, f: impl Fn(T, T) -> U) {
    let (x, y) = (&x[..n], &y[..n]);
    put(out, n, store, |part, at| {
        for ((o, &a), &b) in part.iter_mut().zip(&x[at..]).zip(&y[at..]) {
            *o = f(a, b);
        }
    })
}

fn mismatch(what: &str) -> ! {
    panic!("nx_cpu: a checked program reached {what} with columns of another type")
}


/// Applies `$f` (a closure text, instantiated per register type) to each
/// value of `$x` into `$out`, both of one register type.
macro_rules! same_type {
    ($x:expr, $out:expr, $n:expr, $store:expr, $f:expr) => {
        match ($x, $out) {
            (Column::Bool(x), Column::Bool(o)) => map1(x, o, $n, $store, $f),
            (Column::I8(x), Column::I8(o)) => map1(x, o, $n, $store, $f),
            (Column::I16(x), Column::I16(o)) => map1(x, o, $n, $store, $f),
            (Column::I32(x), Column::I32(o)) => map1(x, o, $n, $store, $f),
            (Column::I64(x), Column::I64(o)) => map1(x, o, $n, $store, $f),
            (Column::U8(x), Column::U8(o)) => map1(x, o, $n, $store, $f),
            (Column::U16(x), Column::U16(o)) => map1(x, o, $n, $store, $f),
            (Column::U32(x), Column::U32(o)) => map1(x, o, $n, $store, $f),
            (Column::U64(x), Column::U64(o)) => map1(x, o, $n, $store, $f),
            (Column::F32(x), Column::F32(o)) => map1(x, o, $n, $store, $f),
            (Column::F64(x), Column::F64(o)) => map1(x, o, $n, $store, $f),
            (Column::C32(x), Column::C32(o)) => map1(x, o, $n, $store, $f),
            (Column::C64(x), Column::C64(o)) => map1(x, o, $n, $store, $f),
            _ => mismatch("a kind of one register type"),
        }
    };
}

/// Applies `$mac!(x, y, o)` to three columns of one register type.
macro_rules! three {
    ($x:expr, $y:expr, $out:expr, $mac:ident, $what:expr) => {
        match ($x, $y, $out) {
            (Column::Bool(x), Column::Bool(y), Column::Bool(o)) => $mac!(x, y, o),
            (Column::I8(x), Column::I8(y), Column::I8(o)) => $mac!(x, y, o),
            (Column::I16(x), Column::I16(y), Column::I16(o)) => $mac!(x, y, o),
            (Column::I32(x), Column::I32(y), Column::I32(o)) => $mac!(x, y, o),
            (Column::I64(x), Column::I64(y), Column::I64(o)) => $mac!(x, y, o),
            (Column::U8(x), Column::U8(y), Column::U8(o)) => $mac!(x, y, o),
            (Column::U16(x), Column::U16(y), Column::U16(o)) => $mac!(x, y, o),
            (Column::U32(x), Column::U32(y), Column::U32(o)) => $mac!(x, y, o),
            (Column::U64(x), Column::U64(y), Column::U64(o)) => $mac!(x, y, o),
            (Column::F32(x), Column::F32(y), Column::F32(o)) => $mac!(x, y, o),
            (Column::F64(x), Column::F64(y), Column::F64(o)) => $mac!(x, y, o),
            (Column::C32(x), Column::C32(y), Column::C32(o)) => $mac!(x, y, o),
            (Column::C64(x), Column::C64(y), Column::C64(o)) => $mac!(x, y, o),
            _ => mismatch($what),
        }
    };
}

/// Applies `$mac!(x, y)` to two columns of one register type.
macro_rules! two {
    ($x:expr, $y:expr, $mac:ident) => {
        match ($x, $y) {
            (Column::Bool(a), Column::Bool(b)) => $mac!(a, b),
            (Column::I8(a), Column::I8(b)) => $mac!(a, b),
            (Column::I16(a), Column::I16(b)) => $mac!(a, b),
            (Column::I32(a), Column::I32(b)) => $mac!(a, b),
            (Column::I64(a), Column::I64(b)) => $mac!(a, b),
            (Column::U8(a), Column::U8(b)) => $mac!(a, b),
            (Column::U16(a), Column::U16(b)) => $mac!(a, b),
            (Column::U32(a), Column::U32(b)) => $mac!(a, b),
            (Column::U64(a), Column::U64(b)) => $mac!(a, b),
            (Column::F32(a), Column::F32(b)) => $mac!(a, b),
            (Column::F64(a), Column::F64(b)) => $mac!(a, b),
            (Column::C32(a), Column::C32(b)) => $mac!(a, b),
            (Column::C64(a), Column::C64(b)) => $mac!(a, b),
            _ => mismatch("a comparison"),
        }
    };
}

/// Applies a one-operand kind to the first `n` values of `x`, storing as
/// `store` says.
pub fn unary(k: Unary, x: &ColRef, out: &mut ColMut, n: usize, store: Store) {
    use Column::*;
    match k {
        Unary::Neg => same_type!(x, out, n, store, Arith::neg),
        Unary::Square => same_type!(x, out, n, store, |a| Arith::mul(a, a)),
        Unary::Sign => same_type!(x, out, n, store, Signum::signum_kind),
        Unary::Abs => match (x, out) {
            (C32(x), F32(o)) => crate::kinds::abs_c32_slice(&x[..n], &mut o[..n]),
            (C64(x), F64(o)) => crate::kinds::abs_c64_slice(&x[..n], &mut o[..n]),
            (F32(x), F32(o)) => map1(x, o, n, store, f32::abs),
            (F64(x), F64(o)) => map1(x, o, n, store, f64::abs),
            (I8(x), I8(o)) => map1(x, o, n, store, i8::wrapping_abs),
            (I16(x), I16(o)) => map1(x, o, n, store, i16::wrapping_abs),
            (I32(x), I32(o)) => map1(x, o, n, store, i32::wrapping_abs),
            (I64(x), I64(o)) => map1(x, o, n, store, i64::wrapping_abs),
            (x, o) => same_type!(x, o, n, store, |a| a),
        },
        Unary::Sqrt | Unary::Recip | Unary::Trunc | Unary::Ceil | Unary::Floor | Unary::Round => {
            macro_rules! float_kind {
                ($x:expr, $o:expr, $t:ty) => {
                    match k {
                        Unary::Sqrt => map1($x, $o, n, store, <$t>::sqrt),
                        Unary::Recip => map1($x, $o, n, store, |a| 1.0 / a),
                        Unary::Trunc => map1($x, $o, n, store, <$t>::trunc),
                        Unary::Ceil => map1($x, $o, n, store, <$t>::ceil),
                        Unary::Floor => map1($x, $o, n, store, <$t>::floor),
                        _ => map1($x, $o, n, store, <$t>::round),
                    }
                };
            }
            match (x, out) {
                (F32(x), F32(o)) => float_kind!(x, o, f32),
                (F64(x), F64(o)) => float_kind!(x, o, f64),
                (C32(x), C32(o)) if k == Unary::Sqrt => crate::kinds::sqrt_c32_slice(&x[..n], &mut o[..n]),
                (C64(x), C64(o)) if k == Unary::Sqrt => crate::kinds::sqrt_c64_slice(&x[..n], &mut o[..n]),
                (C32(x), C32(o)) => map1(x, o, n, store, |a| Arith::div(crate::loops::column::C32::new(1.0, 0.0), a)),
                (C64(x), C64(o)) => map1(x, o, n, store, |a| Arith::div(crate::loops::column::C64::new(1.0, 0.0), a)),
                _ => mismatch("a float kind"),
            }
        }
        Unary::IsNan | Unary::IsInf | Unary::IsFinite => {
            let Bool(o) = out else { mismatch("a class test") };
            macro_rules! class {
                ($v:ident) => {
                    match k {
                        Unary::IsNan => map1($v, o, n, store, |a| Arith::is_nan(a)),
                        Unary::IsInf => map1($v, o, n, store, |a| Arith::is_inf(a)),
                        _ => map1($v, o, n, store, |a| !Arith::is_nan(a) && !Arith::is_inf(a)),
                    }
                };
            }
            each_col!(x, v => class!(v))
        }
        Unary::Not | Unary::BitNot => match (x, out) {
            (Bool(x), Bool(o)) => map1(x, o, n, store, |a| !a),
            (I8(x), I8(o)) => map1(x, o, n, store, |a| !a),
            (I16(x), I16(o)) => map1(x, o, n, store, |a| !a),
            (I32(x), I32(o)) => map1(x, o, n, store, |a| !a),
            (I64(x), I64(o)) => map1(x, o, n, store, |a| !a),
            (U8(x), U8(o)) => map1(x, o, n, store, |a| !a),
            (U16(x), U16(o)) => map1(x, o, n, store, |a| !a),
            (U32(x), U32(o)) => map1(x, o, n, store, |a| !a),
            (U64(x), U64(o)) => map1(x, o, n, store, |a| !a),
            _ => mismatch("a negation"),
        },
        Unary::Conj => match (x, out) {
            (C32(x), C32(o)) => map1(x, o, n, store, |a| a.conj()),
            (C64(x), C64(o)) => map1(x, o, n, store, |a| a.conj()),
            (x, o) => same_type!(x, o, n, store, |a| a),
        },
        Unary::Real | Unary::Imag => match (x, out) {
            (C32(x), F32(o)) => map1(x, o, n, store, |a| if k == Unary::Real { a.re } else { a.im }),
            (C64(x), F64(o)) => map1(x, o, n, store, |a| if k == Unary::Real { a.re } else { a.im }),
            (x, o) if k == Unary::Real => same_type!(x, o, n, store, |a| a),
            (x, o) => same_type!(x, o, n, store, |_| Arith::ZERO),
        },
        _ => match (x, out) {
            (F32(x), F32(o)) => (math_kind(k).0)(&x[..n], &mut o[..n]),
            (F64(x), F64(o)) => (math_kind(k).1)(&x[..n], &mut o[..n]),
            (C32(x), C32(o)) => (complex_kind(k).0)(&x[..n], &mut o[..n]),
            (C64(x), C64(o)) => (complex_kind(k).1)(&x[..n], &mut o[..n]),
            _ => mismatch("a math kind"),
        },
    }
}

/// The slice forms, float32 and float64, of a kind of the math library.
type SliceKinds = (fn(&[f32], &mut [f32]), fn(&[f64], &mut [f64]));

fn math_kind(k: Unary) -> SliceKinds {
    use crate::kinds::*;
    match k {
        Unary::Exp => (exp_f32_slice, exp_f64_slice),
        Unary::Exp2 => (exp2_f32_slice, exp2_f64_slice),
        Unary::Expm1 => (expm1_f32_slice, expm1_f64_slice),
        Unary::Log => (log_f32_slice, log_f64_slice),
        Unary::Log2 => (log2_f32_slice, log2_f64_slice),
        Unary::Log1p => (log1p_f32_slice, log1p_f64_slice),
        Unary::Sin => (sin_f32_slice, sin_f64_slice),
        Unary::Cos => (cos_f32_slice, cos_f64_slice),
        Unary::Tan => (tan_f32_slice, tan_f64_slice),
        Unary::Asin => (asin_f32_slice, asin_f64_slice),
        Unary::Acos => (acos_f32_slice, acos_f64_slice),
        Unary::Atan => (atan_f32_slice, atan_f64_slice),
        Unary::Sinh => (sinh_f32_slice, sinh_f64_slice),
        Unary::Cosh => (cosh_f32_slice, cosh_f64_slice),
        Unary::Tanh => (tanh_f32_slice, tanh_f64_slice),
        Unary::Asinh => (asinh_f32_slice, asinh_f64_slice),
        Unary::Acosh => (acosh_f32_slice, acosh_f64_slice),
        Unary::Atanh => (atanh_f32_slice, atanh_f64_slice),
        Unary::Erf => (erf_f32_slice, erf_f64_slice),
        Unary::Rsqrt => (rsqrt_f32_slice, rsqrt_f64_slice),
        _ => unreachable!("{k:?} is not a kind of the math library"),
    }
}

/// The slice forms, complex64 and complex128, of a complex kind of the math
/// library.
type ComplexKinds = (fn(&[C32], &mut [C32]), fn(&[C64], &mut [C64]));

fn complex_kind(k: Unary) -> ComplexKinds {
    use crate::kinds::*;
    match k {
        Unary::Exp => (exp_c32_slice, exp_c64_slice),
        Unary::Log => (log_c32_slice, log_c64_slice),
        Unary::Sin => (sin_c32_slice, sin_c64_slice),
        Unary::Cos => (cos_c32_slice, cos_c64_slice),
        Unary::Tan => (tan_c32_slice, tan_c64_slice),
        Unary::Asin => (asin_c32_slice, asin_c64_slice),
        Unary::Acos => (acos_c32_slice, acos_c64_slice),
        Unary::Atan => (atan_c32_slice, atan_c64_slice),
        Unary::Sinh => (sinh_c32_slice, sinh_c64_slice),
        Unary::Cosh => (cosh_c32_slice, cosh_c64_slice),
        Unary::Tanh => (tanh_c32_slice, tanh_c64_slice),
        Unary::Asinh => (asinh_c32_slice, asinh_c64_slice),
        Unary::Acosh => (acosh_c32_slice, acosh_c64_slice),
        Unary::Atanh => (atanh_c32_slice, atanh_c64_slice),
        _ => unreachable!("{k:?} has no complex kind"),
    }
}

/// The remainder with the divisor's sign (Python's `%`): integers.
macro_rules! int_mod {
    ($($t:ty),*) => {$(
        impl FloorMod for $t {
            #[inline]
            #[allow(unused_comparisons)]
            fn floor_mod(a: Self, b: Self) -> Self {
                if b == 0 { return 0; }
                let r = a.wrapping_rem(b);
                if r != 0 && ((r < 0) != (b < 0)) { r.wrapping_add(b) } else { r }
            }
        }
    )*};
}

/// The remainder with the divisor's sign.
trait FloorMod: Copy {
    fn floor_mod(a: Self, b: Self) -> Self;
}
int_mod!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_mod {
    ($($t:ty),*) => {$(
        impl FloorMod for $t {
            /// The truncated remainder is exact; adding the divisor once
            /// where the signs differ rounds once; a zero takes y's sign.
            #[inline]
            fn floor_mod(a: Self, b: Self) -> Self {
                let r = a % b;
                if r == 0.0 { (0.0 as $t).copysign(b) }
                else if (r < 0.0) != (b < 0.0) { r + b }
                else { r }
            }
        }
    )*};
}
float_mod!(f32, f64);

/// Applies a two-operand kind to the first `n` values of `x` and `y`, of
/// dtype `d` (whose width bounds the shifts), storing as `store` says.
pub fn binary(k: Binary, d: Dtype, x: &ColRef, y: &ColRef, out: &mut ColMut, n: usize, store: Store) {
    use Column::*;
    if k.is_comparison() {
        let Bool(o) = out else { mismatch("a comparison") };
        macro_rules! cmp {
            ($x:ident, $y:ident) => {
                match k {
                    Binary::Eq => map2($x, $y, o, n, store, |a, b| Arith::eq(a, b)),
                    Binary::Ne => map2($x, $y, o, n, store, |a, b| !Arith::eq(a, b)),
                    Binary::Lt => map2($x, $y, o, n, store, |a, b| Arith::lt(a, b)),
                    Binary::Le => map2($x, $y, o, n, store, |a, b| Arith::lt(a, b) || Arith::eq(a, b)),
                    Binary::Gt => map2($x, $y, o, n, store, |a, b| Arith::lt(b, a)),
                    _ => map2($x, $y, o, n, store, |a, b| Arith::lt(b, a) || Arith::eq(a, b)),
                }
            };
        }
        return two!(x, y, cmp);
    }
    macro_rules! arith {
        ($x:ident, $y:ident, $o:ident) => {
            match k {
                Binary::Add => map2($x, $y, $o, n, store, Arith::add),
                Binary::Sub => map2($x, $y, $o, n, store, Arith::sub),
                Binary::Mul => map2($x, $y, $o, n, store, Arith::mul),
                Binary::Div => map2($x, $y, $o, n, store, Arith::div),
                Binary::Maximum => map2($x, $y, $o, n, store, Arith::max),
                _ => map2($x, $y, $o, n, store, Arith::min),
            }
        };
    }
    macro_rules! bits {
        ($x:ident, $y:ident, $o:ident) => {
            match k {
                Binary::And | Binary::BitAnd => map2($x, $y, $o, n, store, |a, b| a & b),
                Binary::Or | Binary::BitOr => map2($x, $y, $o, n, store, |a, b| a | b),
                _ => map2($x, $y, $o, n, store, |a, b| a ^ b),
            }
        };
    }
    let width = d.bits() as i128;
    macro_rules! shift {
        ($x:ident, $y:ident, $o:ident) => {
            if k == Binary::Shl {
                map2($x, $y, $o, n, store, |a, b| {
                    let s = b as i128;
                    if s < 0 || s >= width { 0 } else { a.wrapping_shl(s as u32) }
                })
            } else {
                #[allow(unused_comparisons)]
                map2($x, $y, $o, n, store, |a, b| {
                    let s = b as i128;
                    if s < 0 || s >= width {
                        if a < 0 { !0 } else { 0 }
                    } else {
                        a.wrapping_shr(s as u32)
                    }
                })
            }
        };
    }
    macro_rules! ints {
        ($mac:ident) => {
            match (x, y, out) {
                (I8(x), I8(y), I8(o)) => $mac!(x, y, o),
                (I16(x), I16(y), I16(o)) => $mac!(x, y, o),
                (I32(x), I32(y), I32(o)) => $mac!(x, y, o),
                (I64(x), I64(y), I64(o)) => $mac!(x, y, o),
                (U8(x), U8(y), U8(o)) => $mac!(x, y, o),
                (U16(x), U16(y), U16(o)) => $mac!(x, y, o),
                (U32(x), U32(y), U32(o)) => $mac!(x, y, o),
                (U64(x), U64(y), U64(o)) => $mac!(x, y, o),
                (Bool(x), Bool(y), Bool(o)) => bits!(x, y, o),
                _ => mismatch("an integer kind"),
            }
        };
    }
    macro_rules! modulo {
        ($x:ident, $y:ident, $o:ident) => {
            map2($x, $y, $o, n, store, FloorMod::floor_mod)
        };
    }
    match k {
        Binary::Pow | Binary::Atan2 | Binary::Hypot => {
            use crate::kinds::*;
            match (k, x, y, out) {
                (Binary::Pow, F32(x), F32(y), F32(o)) => pow_f32_slice(&x[..n], &y[..n], &mut o[..n]),
                (Binary::Pow, F64(x), F64(y), F64(o)) => pow_f64_slice(&x[..n], &y[..n], &mut o[..n]),
                (Binary::Pow, C32(x), C32(y), C32(o)) => pow_c32_slice(&x[..n], &y[..n], &mut o[..n]),
                (Binary::Pow, C64(x), C64(y), C64(o)) => pow_c64_slice(&x[..n], &y[..n], &mut o[..n]),
                (Binary::Atan2, F32(x), F32(y), F32(o)) => atan2_f32_slice(&x[..n], &y[..n], &mut o[..n]),
                (Binary::Atan2, F64(x), F64(y), F64(o)) => atan2_f64_slice(&x[..n], &y[..n], &mut o[..n]),
                (Binary::Hypot, F32(x), F32(y), F32(o)) => hypot_f32_slice(&x[..n], &y[..n], &mut o[..n]),
                (Binary::Hypot, F64(x), F64(y), F64(o)) => hypot_f64_slice(&x[..n], &y[..n], &mut o[..n]),
                _ => mismatch("a math kind of two operands"),
            }
        }
        Binary::Mod => match (x, y, &mut *out) {
            (F32(x), F32(y), F32(o)) => modulo!(x, y, o),
            (F64(x), F64(y), F64(o)) => modulo!(x, y, o),
            _ => ints!(modulo),
        },
        Binary::Shl | Binary::Shr => ints!(shift),
        Binary::And | Binary::Or | Binary::Xor | Binary::BitAnd | Binary::BitOr | Binary::BitXor => {
            ints!(bits)
        }
        _ => three!(x, y, out, arith, "an arithmetic kind"),
    }
}

/// Where: `c`'s true values pick `x`, the others `y`.
pub fn select(c: &ColRef, x: &ColRef, y: &ColRef, out: &mut ColMut, n: usize) {
    let Column::Bool(c) = c else { mismatch("Where") };
    macro_rules! sel {
        ($x:ident, $y:ident, $o:ident) => {
            for ((o, (&a, &b)), &t) in $o[..n].iter_mut().zip($x.iter().zip($y.iter())).zip(c.iter()) {
                *o = if t { a } else { b };
            }
        };
    }
    three!(x, y, out, sel, "Where")
}

/// -1, 0 or +1 by the sign; a float keeps a zero's sign and a NaN; a complex
/// number is x / |x| (0 at 0).
trait Signum: Copy {
    fn signum_kind(self) -> Self;
}
macro_rules! int_signum {
    ($($t:ty),*) => {$(
        impl Signum for $t {
            #[inline]
            #[allow(unused_comparisons)]
            fn signum_kind(self) -> Self {
                if self > 0 { 1 } else if self < 0 { (0 as $t).wrapping_sub(1) } else { 0 }
            }
        }
    )*};
}
int_signum!(i8, i16, i32, i64, u8, u16, u32, u64);
macro_rules! float_signum {
    ($($t:ty),*) => {$(
        impl Signum for $t {
            #[inline]
            fn signum_kind(self) -> Self {
                if self > 0.0 { 1.0 } else if self < 0.0 { -1.0 } else { self }
            }
        }
    )*};
}
float_signum!(f32, f64);
impl Signum for bool {
    fn signum_kind(self) -> Self {
        self
    }
}
impl Signum for C32 {
    fn signum_kind(self) -> Self {
        let m = crate::kinds::abs_c32(self);
        if m == 0.0 { C32::new(0.0, 0.0) } else { C32::new(self.re / m, self.im / m) }
    }
}
impl Signum for C64 {
    fn signum_kind(self) -> Self {
        let m = crate::kinds::abs_c64(self);
        if m == 0.0 { C64::new(0.0, 0.0) } else { C64::new(self.re / m, self.im / m) }
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::loops::column::Col;

    fn bin(k: Binary, d: Dtype, x: Col, y: Col) -> Col {
        let n = x.len();
        let mut out = Col::new(d, n);
        binary(k, d, &x.as_ref(), &y.as_ref(), &mut out.as_mut(), n, Store::Cached);
        out
    }

    #[test]
    fn streamed_stores_write_the_values_of_plain_ones() {
        // Long enough for whole chunks between a head and a tail written
        // in place (stream::fill's own test takes every offset).
        let n = 1000;
        let f32s = |s: f32| Col::F32((0..n).map(|i| (i as f32 - 400.5) * s).collect());
        let f64s = |s: f64| Col::F64((0..n).map(|i| (i as f64 - 400.5) * s).collect());
        let i32s = |s: i32| Col::I32((0..n as i32).map(|i| (i - 400) * s).collect());
        let c64s = |s: f64| Col::C64((0..n).map(|i| C64::new(i as f64 * s, -s)).collect());
        let cases = [
            (Dtype::Float32, f32s(0.25), f32s(-1.5), vec![Binary::Add, Binary::Sub, Binary::Mul, Binary::Div, Binary::Maximum]),
            (Dtype::Float64, f64s(0.25), f64s(3.0), vec![Binary::Add, Binary::Div, Binary::Minimum, Binary::Mod]),
            (Dtype::Int32, i32s(3), i32s(-7), vec![Binary::Add, Binary::Mul, Binary::BitXor, Binary::Shl, Binary::Mod]),
            (Dtype::Complex128, c64s(0.5), c64s(2.0), vec![Binary::Add, Binary::Mul]),
        ];
        for (d, x, y, kinds) in cases {
            for k in kinds {
                let (mut plain, mut streamed) = (Col::new(d, n), Col::new(d, n));
                binary(k, d, &x.as_ref(), &y.as_ref(), &mut plain.as_mut(), n, Store::Cached);
                binary(k, d, &x.as_ref(), &y.as_ref(), &mut streamed.as_mut(), n, Store::Streamed);
                stream::fence();
                assert_eq!(plain, streamed, "{k:?} {d:?}");
            }
            for k in [Unary::Neg, Unary::Square, Unary::Sign] {
                let (mut plain, mut streamed) = (Col::new(d, n), Col::new(d, n));
                unary(k, &x.as_ref(), &mut plain.as_mut(), n, Store::Cached);
                unary(k, &x.as_ref(), &mut streamed.as_mut(), n, Store::Streamed);
                stream::fence();
                assert_eq!(plain, streamed, "{k:?} {d:?}");
            }
        }
    }

    #[test]
    fn integer_modulo_takes_the_divisors_sign_and_never_traps() {
        let x = Col::I32(vec![7, -7, 7, -7, 5, i32::MIN, i32::MIN]);
        let y = Col::I32(vec![3, 3, -3, -3, 0, -1, 7]);
        assert_eq!(bin(Binary::Mod, Dtype::Int32, x, y), Col::I32(vec![1, 2, -2, -1, 0, 0, 5]));
        let u = bin(Binary::Mod, Dtype::Uint8, Col::U8(vec![250, 7]), Col::U8(vec![7, 0]));
        assert_eq!(u, Col::U8(vec![5, 0]));
    }

    #[test]
    fn float_modulo_is_exact_with_the_divisors_sign() {
        let x = Col::F64(vec![7.5, -7.5, 7.5, 6.0, -6.0, 1.0, f64::INFINITY, 1e300]);
        let y = Col::F64(vec![2.0, 2.0, -2.0, 3.0, 3.0, 0.0, 2.0, 3.0]);
        let Col::F64(r) = bin(Binary::Mod, Dtype::Float64, x, y) else { unreachable!() };
        assert_eq!(&r[..4], &[1.5, 0.5, -0.5, 0.0]);
        assert!(r[3].is_sign_positive() && r[4] == 0.0 && r[4].is_sign_positive());
        assert!(r[5].is_nan() && r[6].is_nan());
        assert_eq!(r[7], 1e300 % 3.0);
    }

    #[test]
    fn shifts_past_the_width() {
        let x = Col::I8(vec![-8, 5, -8, 5, 1]);
        let y = Col::I8(vec![1, 4, 9, -1, 3]);
        assert_eq!(bin(Binary::Shr, Dtype::Int8, x.clone(), y.clone()), Col::I8(vec![-4, 0, -1, 0, 0]));
        assert_eq!(bin(Binary::Shl, Dtype::Int8, x, y), Col::I8(vec![-16, 80, 0, 0, 8]));
        // int4 shifts are bounded by 4 bits.
        let s = bin(Binary::Shl, Dtype::Int4, Col::I8(vec![1, 1]), Col::I8(vec![3, 4]));
        assert_eq!(s, Col::I8(vec![8, 0]));
    }
}
