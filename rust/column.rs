//! Columns: a tile of one node's values, in the register type of its dtype.
//!
//! Each dtype computes in a register type: bool and bit in `bool`; int4 and
//! int8 in `i8`, uint4 and uint8 in `u8`, the wider integers in themselves;
//! the narrow floats and float32 in `f32`; float64 in `f64`; complex numbers in
//! `Complex<f32>` and `Complex<f64>`. A column of a narrow dtype holds only
//! values of that dtype: every node rounds (floats) or wraps (4-bit integers)
//! its result into its dtype (see [`Col::settle`]).

use crate::dtype::Dtype;
use crate::narrow;
use std::cell::RefCell;
use num_complex::Complex;

/// Complex number of float32 parts.
pub type C32 = Complex<f32>;
/// Complex number of float64 parts.
pub type C64 = Complex<f64>;

/// A tile of values of one register type.
#[derive(Clone, Debug, PartialEq)]
pub enum Col {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    C32(Vec<C32>),
    C64(Vec<C64>),
}

/// Applies `$body` with `$v` bound to the vector inside any column.
#[macro_export]
macro_rules! each_col {
    ($col:expr, $v:ident => $body:expr) => {
        match $col {
            $crate::column::Col::Bool($v) => $body,
            $crate::column::Col::I8($v) => $body,
            $crate::column::Col::I16($v) => $body,
            $crate::column::Col::I32($v) => $body,
            $crate::column::Col::I64($v) => $body,
            $crate::column::Col::U8($v) => $body,
            $crate::column::Col::U16($v) => $body,
            $crate::column::Col::U32($v) => $body,
            $crate::column::Col::U64($v) => $body,
            $crate::column::Col::F32($v) => $body,
            $crate::column::Col::F64($v) => $body,
            $crate::column::Col::C32($v) => $body,
            $crate::column::Col::C64($v) => $body,
        }
    };
}

impl Col {
    /// A column of `n` zeros in `d`'s register type.
    pub fn new(d: Dtype, n: usize) -> Col {
        match d {
            Dtype::Bool | Dtype::Bit => Col::Bool(vec![false; n]),
            Dtype::Int4 | Dtype::Int8 => Col::I8(vec![0; n]),
            Dtype::Int16 => Col::I16(vec![0; n]),
            Dtype::Int32 => Col::I32(vec![0; n]),
            Dtype::Int64 => Col::I64(vec![0; n]),
            Dtype::Uint4 | Dtype::Uint8 => Col::U8(vec![0; n]),
            Dtype::Uint16 => Col::U16(vec![0; n]),
            Dtype::Uint32 => Col::U32(vec![0; n]),
            Dtype::Uint64 => Col::U64(vec![0; n]),
            Dtype::Float4E2m1fn
            | Dtype::Float8E4m3fn
            | Dtype::Float8E5m2
            | Dtype::Float16
            | Dtype::Bfloat16
            | Dtype::Float32 => Col::F32(vec![0.0; n]),
            Dtype::Float64 => Col::F64(vec![0.0; n]),
            Dtype::Complex64 => Col::C32(vec![C32::new(0.0, 0.0); n]),
            Dtype::Complex128 => Col::C64(vec![C64::new(0.0, 0.0); n]),
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        each_col!(self, v => v.len())
    }

    /// Whether the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Brings the first `n` values into dtype `d` after a computation in its
    /// register type: a narrow float rounds once to nearest even, a 4-bit
    /// integer wraps modulo 16. Other dtypes are left as they are.
    pub fn settle(&mut self, d: Dtype, n: usize) {
        match (d, self) {
            (Dtype::Int4, Col::I8(v)) => v[..n].iter_mut().for_each(|x| *x = wrap_i4(*x)),
            (Dtype::Uint4, Col::U8(v)) => v[..n].iter_mut().for_each(|x| *x &= 15),
            (d, Col::F32(v)) if d.is_narrow_float() => narrow::round_f32_slice(d, &mut v[..n]),
            _ => {}
        }
    }
}

/// The most columns a thread keeps between loops (see [`take`]).
const SPARES: usize = 32;

thread_local! {
    /// Columns that this thread's loops have given back.
    static SPARE: RefCell<Vec<Col>> = const { RefCell::new(Vec::new()) };
}

/// A column of `d`'s register type of `n` values, taken from the columns
/// this thread's loops gave back where one is long enough (its values are
/// then left as they were: a loop writes a value before it reads it),
/// otherwise new. A short loop so allocates nothing after the first.
pub fn take(d: Dtype, n: usize) -> Col {
    let kind = std::mem::discriminant(&Col::new(d, 0));
    let spare = SPARE.with_borrow_mut(|spare| {
        let i = spare.iter().position(|c| std::mem::discriminant(c) == kind && c.len() == n)?;
        Some(spare.swap_remove(i))
    });
    spare.unwrap_or_else(|| Col::new(d, n))
}

/// Gives columns back for [`take`] to hand out again, keeping at most
/// [`SPARES`] in all.
pub fn give_back(cols: Vec<Col>) {
    SPARE.with_borrow_mut(|spare| {
        let room = SPARES.saturating_sub(spare.len());
        spare.extend(cols.into_iter().take(room));
    });
}

/// Bytes a value of `d`'s register type takes in a column.
pub fn register_bytes(d: Dtype) -> usize {
    match d {
        Dtype::Bool | Dtype::Bit | Dtype::Int4 | Dtype::Uint4 => 1,
        d if d.is_narrow_float() => 4,
        d => d.bytes(),
    }
}

/// The int4 value of an i8's low four bits.
#[inline]
pub fn wrap_i4(x: i8) -> i8 {
    x.wrapping_shl(4) >> 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settles_sub_byte_and_narrow() {
        let mut c = Col::I8(vec![7, 8, -9, 127]);
        c.settle(Dtype::Int4, 4);
        assert_eq!(c, Col::I8(vec![7, -8, 7, -1]));
        let mut u = Col::U8(vec![15, 16, 255]);
        u.settle(Dtype::Uint4, 3);
        assert_eq!(u, Col::U8(vec![15, 0, 15]));
        let mut f = Col::F32(vec![1.0 + 1.0 / 4096.0, 3.0]);
        f.settle(Dtype::Float16, 2);
        assert_eq!(f, Col::F32(vec![1.0, 3.0]));
        assert_eq!(Col::new(Dtype::Bfloat16, 3).len(), 3);
    }
}
