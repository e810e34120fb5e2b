//! Columns: a tile of one node's values, in the register type of its dtype.
//!
//! Each dtype computes in a register type: bool and bit in `bool`; int4 and
//! int8 in `i8`, uint4 and uint8 in `u8`, the wider integers in themselves;
//! the narrow floats and float32 in `f32`; float64 in `f64`; complex numbers in
//! `Complex<f32>` and `Complex<f64>`. A column of a narrow dtype holds only
//! values of that dtype: every node rounds (floats) or wraps (4-bit integers)
//! its result into its dtype (see [`ColMut::settle`]).

use crate::core::dtype::Dtype;
use crate::core::narrow;
use std::cell::RefCell;
use std::marker::PhantomData;
use num_complex::Complex;

/// Complex number of float32 parts.
pub type C32 = Complex<f32>;
/// Complex number of float64 parts.
pub type C64 = Complex<f64>;

/// Where a column's values live: in a vector of its own ([`Owned`]), or in
/// a slice borrowed to read ([`Shared`]) or to write ([`Unique`]), which may
/// be an operand's memory read or written in place.
pub trait Storage {
    /// The values of register type `T`.
    type Of<T: 'static>: core::ops::Deref<Target = [T]>;
}

/// Values in a vector of the column's own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Owned;

/// Values in a slice borrowed to read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shared<'a>(PhantomData<&'a ()>);

/// Values in a slice borrowed to write.
#[derive(Debug, PartialEq)]
pub struct Unique<'a>(PhantomData<&'a mut ()>);

impl Storage for Owned {
    type Of<T: 'static> = Vec<T>;
}
impl<'a> Storage for Shared<'a> {
    type Of<T: 'static> = &'a [T];
}
impl<'a> Storage for Unique<'a> {
    type Of<T: 'static> = &'a mut [T];
}

/// A tile of values of one register type, held as `S` says.
#[derive(Clone, Debug, PartialEq)]
pub enum Column<S: Storage> {
    Bool(S::Of<bool>),
    I8(S::Of<i8>),
    I16(S::Of<i16>),
    I32(S::Of<i32>),
    I64(S::Of<i64>),
    U8(S::Of<u8>),
    U16(S::Of<u16>),
    U32(S::Of<u32>),
    U64(S::Of<u64>),
    F32(S::Of<f32>),
    F64(S::Of<f64>),
    C32(S::Of<C32>),
    C64(S::Of<C64>),
}

/// A column that owns its values: a node's values over a tile.
pub type Col = Column<Owned>;
/// A column borrowed to read: a node's operand.
pub type ColRef<'a> = Column<Shared<'a>>;
/// A column borrowed to write: a node's result.
pub type ColMut<'a> = Column<Unique<'a>>;

/// Applies `$body` with `$v` bound to the values inside any column.
#[macro_export]
macro_rules! each_col {
    ($col:expr, $v:ident => $body:expr) => {
        match $col {
            $crate::loops::column::Column::Bool($v) => $body,
            $crate::loops::column::Column::I8($v) => $body,
            $crate::loops::column::Column::I16($v) => $body,
            $crate::loops::column::Column::I32($v) => $body,
            $crate::loops::column::Column::I64($v) => $body,
            $crate::loops::column::Column::U8($v) => $body,
            $crate::loops::column::Column::U16($v) => $body,
            $crate::loops::column::Column::U32($v) => $body,
            $crate::loops::column::Column::U64($v) => $body,
            $crate::loops::column::Column::F32($v) => $body,
            $crate::loops::column::Column::F64($v) => $body,
            $crate::loops::column::Column::C32($v) => $body,
            $crate::loops::column::Column::C64($v) => $body,
        }
    };
}

/// The column of the same register type whose values are `$body`, with `$v`
/// bound to the values inside `$col`.
macro_rules! rewrap {
    ($col:expr, $v:ident => $body:expr) => {
        match $col {
            Column::Bool($v) => Column::Bool($body),
            Column::I8($v) => Column::I8($body),
            Column::I16($v) => Column::I16($body),
            Column::I32($v) => Column::I32($body),
            Column::I64($v) => Column::I64($body),
            Column::U8($v) => Column::U8($body),
            Column::U16($v) => Column::U16($body),
            Column::U32($v) => Column::U32($body),
            Column::U64($v) => Column::U64($body),
            Column::F32($v) => Column::F32($body),
            Column::F64($v) => Column::F64($body),
            Column::C32($v) => Column::C32($body),
            Column::C64($v) => Column::C64($body),
        }
    };
}

impl<S: Storage> Column<S> {
    /// Number of values.
    pub fn len(&self) -> usize {
        each_col!(self, v => v.len())
    }

    /// Whether the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
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

    /// Its values, to read.
    pub fn as_ref(&self) -> ColRef<'_> {
        rewrap!(self, v => &v[..])
    }

    /// Its values, to write.
    pub fn as_mut(&mut self) -> ColMut<'_> {
        rewrap!(self, v => &mut v[..])
    }
}

impl ColMut<'_> {
    /// Brings the first `n` values into dtype `d` after a computation in its
    /// register type: a narrow float rounds once to nearest even, a 4-bit
    /// integer wraps modulo 16. Other dtypes are left as they are.
    pub fn settle(&mut self, d: Dtype, n: usize) {
        match (d, self) {
            (Dtype::Int4, Column::I8(v)) => v[..n].iter_mut().for_each(|x| *x = wrap_i4(*x)),
            (Dtype::Uint4, Column::U8(v)) => v[..n].iter_mut().for_each(|x| *x &= 15),
            (d, Column::F32(v)) if d.is_narrow_float() => narrow::round_f32_slice(d, &mut v[..n]),
            _ => {}
        }
    }
}

/// Whether an element of `d` in memory is a value of its register type bit
/// for bit, any bit pattern valid: the dtypes whose runs a loop may read and
/// write in place as columns (not bool, whose register type admits only 0
/// and 1, the sub-byte dtypes or the narrow floats).
pub fn bitwise(d: Dtype) -> bool {
    !d.is_sub_byte() && d != Dtype::Bool && !d.is_narrow_float()
}

/// The alignment in memory of `d`'s register type: its size, but for a
/// complex type's, that of its parts. Computed, not taken from an empty
/// column: the column's making and dropping took ~60 instructions, paid
/// for each operand of each call of a kept map plan.
pub fn register_align(d: Dtype) -> usize {
    match d {
        Dtype::Complex64 | Dtype::Complex128 => register_bytes(d) / 2,
        d => register_bytes(d),
    }
}

/// The column of a [`bitwise`] dtype `d` whose values are the slice
/// `$slice` (an expression of a slice of the arm's register type), or
/// `None` for another dtype.
macro_rules! of_bitwise {
    ($d:expr, $slice:expr) => {
        match $d {
            Dtype::Int8 => Some(Column::I8($slice)),
            Dtype::Int16 => Some(Column::I16($slice)),
            Dtype::Int32 => Some(Column::I32($slice)),
            Dtype::Int64 => Some(Column::I64($slice)),
            Dtype::Uint8 => Some(Column::U8($slice)),
            Dtype::Uint16 => Some(Column::U16($slice)),
            Dtype::Uint32 => Some(Column::U32($slice)),
            Dtype::Uint64 => Some(Column::U64($slice)),
            Dtype::Float32 => Some(Column::F32($slice)),
            Dtype::Float64 => Some(Column::F64($slice)),
            Dtype::Complex64 => Some(Column::C32($slice)),
            Dtype::Complex128 => Some(Column::C64($slice)),
            _ => None,
        }
    };
}

impl ColRef<'_> {
    /// Its values from the `from`-th on.
    pub fn tail(&self, from: usize) -> ColRef<'_> {
        rewrap!(self, v => &v[from..])
    }
}

impl ColMut<'_> {
    /// Its values from the `from`-th on, to write.
    pub fn tail(&mut self, from: usize) -> ColMut<'_> {
        rewrap!(self, v => &mut v[from..])
    }
}

impl<'a> ColRef<'a> {
    /// The `n` elements of dtype `d` from `p`, read in place; `None` where
    /// `d` is not [`bitwise`].
    ///
    /// # Safety
    /// `p` is aligned to [`register_align`] of `d`, its `n` elements lie in
    /// memory valid to read, and nothing writes them during `'a`.
    pub unsafe fn in_memory(d: Dtype, p: *const u8, n: usize) -> Option<ColRef<'a>> {
        // SAFETY: as this function's contract; every bit pattern is a value
        // of a bitwise dtype's register type.
        of_bitwise!(d, unsafe { std::slice::from_raw_parts(p.cast(), n) })
    }
}

impl<'a> ColMut<'a> {
    /// The `n` elements of dtype `d` from `p`, written in place; `None`
    /// where `d` is not [`bitwise`].
    ///
    /// # Safety
    /// As [`ColRef::in_memory`], and nothing else reads or writes them
    /// during `'a`.
    pub unsafe fn in_memory(d: Dtype, p: *mut u8, n: usize) -> Option<ColMut<'a>> {
        // SAFETY: as this function's contract.
        of_bitwise!(d, unsafe { std::slice::from_raw_parts_mut(p.cast(), n) })
    }
}

/// The most columns a thread keeps between loops (see [`take`]).
const SPARES: usize = 32;

thread_local! {
    /// Columns that this thread's loops have given back.
    static SPARE: RefCell<Vec<Col>> = const { RefCell::new(Vec::new()) };
}

/// A column of `d`'s register type of `n` values, taken from the columns
/// this thread's loops gave back where one of that length is (its values are
/// then left as they were: a loop writes a value before it reads it),
/// otherwise new. A short loop so allocates nothing after the first.
pub fn take(d: Dtype, n: usize) -> Col {
    if n == 0 {
        return Col::new(d, 0);
    }
    let kind = std::mem::discriminant(&Col::new(d, 0));
    let spare = SPARE.with_borrow_mut(|spare| {
        let i = spare.iter().position(|c| std::mem::discriminant(c) == kind && c.len() == n)?;
        Some(spare.swap_remove(i))
    });
    spare.unwrap_or_else(|| Col::new(d, n))
}

/// The most emptied vectors of columns a thread keeps (see [`take_all`]).
const SHELLS: usize = 8;

thread_local! {
    /// Vectors of columns that [`give_back`] emptied, for [`take_all`].
    static SHELL: RefCell<Vec<Vec<Col>>> = const { RefCell::new(Vec::new()) };
}

/// A column of each of `dtypes` ([`take`]), the `i`th of `n(i)` values
/// (none takes nothing), in a vector that an earlier loop gave back where
/// there is one: a short loop so allocates nothing after the first.
pub fn take_all(dtypes: &[Dtype], n: impl Fn(usize) -> usize) -> Vec<Col> {
    let mut cols = SHELL.with_borrow_mut(Vec::pop).unwrap_or_default();
    cols.extend(dtypes.iter().enumerate().map(|(i, &d)| take(d, n(i))));
    cols
}

/// Gives columns back for [`take`] to hand out again, keeping at most
/// `SPARES` in all, and their emptied vector for [`take_all`].
pub fn give_back(mut cols: Vec<Col>) {
    SPARE.with_borrow_mut(|spare| {
        let room = SPARES.saturating_sub(spare.len());
        spare.extend(cols.drain(..).filter(|c| !c.is_empty()).take(room));
    });
    cols.clear();
    SHELL.with_borrow_mut(|shells| {
        if shells.len() < SHELLS {
            shells.push(cols);
        }
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
    fn register_align_is_the_register_types() {
        for d in Dtype::ALL {
            let col = Col::new(d, 0);
            assert_eq!(register_align(d), each_col!(col, v => std::mem::align_of_val(v.as_slice())), "{d:?}");
        }
    }

    #[test]
    fn settles_sub_byte_and_narrow() {
        let mut c = Col::I8(vec![7, 8, -9, 127]);
        c.as_mut().settle(Dtype::Int4, 4);
        assert_eq!(c, Col::I8(vec![7, -8, 7, -1]));
        let mut u = Col::U8(vec![15, 16, 255]);
        u.as_mut().settle(Dtype::Uint4, 3);
        assert_eq!(u, Col::U8(vec![15, 0, 15]));
        let mut f = Col::F32(vec![1.0 + 1.0 / 4096.0, 3.0]);
        f.as_mut().settle(Dtype::Float16, 2);
        assert_eq!(f, Col::F32(vec![1.0, 3.0]));
        assert_eq!(Col::new(Dtype::Bfloat16, 3).len(), 3);
    }
}
