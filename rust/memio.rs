//! Moving values between memory and columns: a run of elements at a fixed
//! step (the innermost axis of a loop) read into, or written from, a column
//! of the dtype's register type.
//!
//! Addresses are element indices into a [`Memory`]; sub-byte dtypes are
//! packed from the low bits of each byte. Reads and writes are unaligned, so
//! a view may start anywhere in its buffer. Writes of sub-byte elements are
//! atomic read-modify-writes of their byte, so that threads writing
//! neighbouring elements of one byte never lose each other's bits.

use crate::column::{wrap_i4, Col, C32, C64};
use crate::dtype::Dtype;
use crate::layout::Memory;
use crate::narrow::Narrow;
use std::sync::atomic::{AtomicU8, Ordering};

/// The element indices `start + i * step` for `i < n`.
#[inline]
fn indices(start: isize, step: isize, n: usize) -> impl Iterator<Item = isize> {
    (0..n as isize).map(move |i| start + i * step)
}

/// Reads `n` elements of dtype `d` from `mem`, at element indices
/// `start + i * step`, into the first `n` values of `col`.
///
/// # Safety
/// Every such index must lie within `mem`'s extent for `d` (the kernels
/// derive runs from layouts that `View::new` checked), and `col` must be of
/// `d`'s register type with at least `n` values.
pub unsafe fn load(mem: Memory, d: Dtype, start: isize, step: isize, n: usize, col: &mut Col) {
    let base = mem.base;
    macro_rules! native {
        ($v:expr, $t:ty) => {{
            let p = base as *const $t;
            if step == 1 {
                // SAFETY: the run start..start+n lies in the buffer (caller);
                // the column holds at least n values; byte copies need no
                // alignment.
                std::ptr::copy_nonoverlapping(
                    p.offset(start) as *const u8,
                    $v.as_mut_ptr() as *mut u8,
                    n * std::mem::size_of::<$t>(),
                );
            } else {
                for (o, i) in $v[..n].iter_mut().zip(indices(start, step, n)) {
                    // SAFETY: index i lies in the buffer (caller).
                    *o = p.offset(i).read_unaligned();
                }
            }
        }};
    }
    let byte = |i: isize| -> u8 {
        // SAFETY: element i lies in the buffer (caller), so its byte does.
        unsafe { *base.offset(i) }
    };
    let nibble = |i: isize| -> u8 {
        // SAFETY: element i of a 4-bit dtype lies in the buffer (caller),
        // so byte i / 2 does.
        (unsafe { *base.offset(i >> 1) } >> (4 * (i & 1))) & 15
    };
    match (d, col) {
        (Dtype::Bool, Col::Bool(v)) => {
            v[..n].iter_mut().zip(indices(start, step, n)).for_each(|(o, i)| *o = byte(i) != 0)
        }
        (Dtype::Bit, Col::Bool(v)) => v[..n].iter_mut().zip(indices(start, step, n)).for_each(|(o, i)| {
            // SAFETY: bit i lies in the buffer (caller), so byte i / 8 does.
            *o = (unsafe { *base.offset(i >> 3) } >> (i & 7)) & 1 != 0
        }),
        (Dtype::Int4, Col::I8(v)) => v[..n]
            .iter_mut()
            .zip(indices(start, step, n))
            .for_each(|(o, i)| *o = wrap_i4(nibble(i) as i8)),
        (Dtype::Uint4, Col::U8(v)) => {
            v[..n].iter_mut().zip(indices(start, step, n)).for_each(|(o, i)| *o = nibble(i))
        }
        (Dtype::Int8, Col::I8(v)) => native!(v, i8),
        (Dtype::Int16, Col::I16(v)) => native!(v, i16),
        (Dtype::Int32, Col::I32(v)) => native!(v, i32),
        (Dtype::Int64, Col::I64(v)) => native!(v, i64),
        (Dtype::Uint8, Col::U8(v)) => native!(v, u8),
        (Dtype::Uint16, Col::U16(v)) => native!(v, u16),
        (Dtype::Uint32, Col::U32(v)) => native!(v, u32),
        (Dtype::Uint64, Col::U64(v)) => native!(v, u64),
        (Dtype::Float32, Col::F32(v)) => native!(v, f32),
        (Dtype::Float64, Col::F64(v)) => native!(v, f64),
        (Dtype::Complex64, Col::C32(v)) => native!(v, C32),
        (Dtype::Complex128, Col::C64(v)) => native!(v, C64),
        (d, Col::F32(v)) => {
            let w = Narrow::of(d).expect("a narrow float in a float32 column");
            let p16 = base as *const u16;
            let bits = |i: isize| -> u16 {
                match d.bits() {
                    // SAFETY: element i lies in the buffer (caller).
                    16 => unsafe { p16.offset(i).read_unaligned() },
                    8 => byte(i) as u16,
                    _ => nibble(i) as u16,
                }
            };
            v[..n].iter_mut().zip(indices(start, step, n)).for_each(|(o, i)| *o = w.decode(bits(i)))
        }
        (d, _) => panic!("nx_cpu: load of {} into a column of another type", d.name()),
    }
}

/// Writes the first `n` values of `col` as elements of dtype `d` into `mem`,
/// at element indices `start + i * step`.
///
/// # Safety
/// As [`load`]; moreover no other thread may access these elements during
/// the call, but for the other bits of a sub-byte element's byte, which
/// other threads may write only through this function.
pub unsafe fn store(mem: Memory, d: Dtype, start: isize, step: isize, n: usize, col: &Col) {
    let base = mem.base;
    macro_rules! native {
        ($v:expr, $t:ty) => {{
            let p = base as *mut $t;
            if step == 1 {
                // SAFETY: as in `load`; the run is this thread's alone.
                std::ptr::copy_nonoverlapping(
                    $v.as_ptr() as *const u8,
                    p.offset(start) as *mut u8,
                    n * std::mem::size_of::<$t>(),
                );
            } else {
                for (&x, i) in $v[..n].iter().zip(indices(start, step, n)) {
                    // SAFETY: index i lies in the buffer and is this thread's.
                    p.offset(i).write_unaligned(x);
                }
            }
        }};
    }
    // Writes `bits` (already masked) at bit `shift` of byte `at`, leaving the
    // byte's other bits as they are.
    let put = |at: isize, shift: u32, mask: u8, bits: u8| {
        // SAFETY: the byte lies in the buffer (caller); every write of a
        // shared byte in a call goes through these atomics, and `AtomicU8`
        // has the size and alignment of `u8`.
        let a = unsafe { &*(base.offset(at) as *const AtomicU8) };
        a.fetch_and(!(mask << shift), Ordering::Relaxed);
        a.fetch_or(bits << shift, Ordering::Relaxed);
    };
    let put_nibble = |i: isize, x: u8| put(i >> 1, 4 * (i & 1) as u32, 15, x & 15);
    match (d, col) {
        (Dtype::Bool, Col::Bool(v)) => {
            for (&x, i) in v[..n].iter().zip(indices(start, step, n)) {
                // SAFETY: element i lies in the buffer and is this thread's.
                *base.offset(i) = x as u8;
            }
        }
        (Dtype::Bit, Col::Bool(v)) => {
            v[..n].iter().zip(indices(start, step, n)).for_each(|(&x, i)| put(i >> 3, (i & 7) as u32, 1, x as u8))
        }
        (Dtype::Int4, Col::I8(v)) => {
            v[..n].iter().zip(indices(start, step, n)).for_each(|(&x, i)| put_nibble(i, x as u8))
        }
        (Dtype::Uint4, Col::U8(v)) => {
            v[..n].iter().zip(indices(start, step, n)).for_each(|(&x, i)| put_nibble(i, x))
        }
        (Dtype::Int8, Col::I8(v)) => native!(v, i8),
        (Dtype::Int16, Col::I16(v)) => native!(v, i16),
        (Dtype::Int32, Col::I32(v)) => native!(v, i32),
        (Dtype::Int64, Col::I64(v)) => native!(v, i64),
        (Dtype::Uint8, Col::U8(v)) => native!(v, u8),
        (Dtype::Uint16, Col::U16(v)) => native!(v, u16),
        (Dtype::Uint32, Col::U32(v)) => native!(v, u32),
        (Dtype::Uint64, Col::U64(v)) => native!(v, u64),
        (Dtype::Float32, Col::F32(v)) => native!(v, f32),
        (Dtype::Float64, Col::F64(v)) => native!(v, f64),
        (Dtype::Complex64, Col::C32(v)) => native!(v, C32),
        (Dtype::Complex128, Col::C64(v)) => native!(v, C64),
        (d, Col::F32(v)) => {
            let w = Narrow::of(d).expect("a narrow float in a float32 column");
            for (&x, i) in v[..n].iter().zip(indices(start, step, n)) {
                let bits = w.encode_f32(x);
                match d.bits() {
                    // SAFETY: element i lies in the buffer and is this thread's.
                    16 => (base as *mut u16).offset(i).write_unaligned(bits),
                    // SAFETY: as above.
                    8 => *base.offset(i) = bits as u8,
                    _ => put_nibble(i, bits as u8),
                }
            }
        }
        (d, _) => panic!("nx_cpu: store of {} from a column of another type", d.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(buf: &mut [u8]) -> Memory {
        Memory { base: buf.as_mut_ptr(), bytes: buf.len() }
    }

    #[test]
    fn sub_byte_round_trip_keeps_neighbours() {
        let mut buf = [0xA5u8; 4];
        let m = mem(&mut buf);
        let mut c = Col::new(Dtype::Int4, 3);
        // SAFETY: indices 1, 3, 5 of 8 nibbles.
        unsafe { load(m, Dtype::Int4, 1, 2, 3, &mut c) };
        assert_eq!(c, Col::I8(vec![-6, -6, -6]));
        let w = Col::I8(vec![-8, 7, 0]);
        // SAFETY: as above.
        unsafe { store(m, Dtype::Int4, 1, 2, 3, &w) };
        assert_eq!(buf, [0x85, 0x75, 0x05, 0xA5]);
        let m = mem(&mut buf);
        let bits = Col::Bool(vec![true, false, true]);
        // SAFETY: bits 31, 30, 29 of 32.
        unsafe { store(m, Dtype::Bit, 31, -1, 3, &bits) };
        assert_eq!(buf[3], 0xA5 | 0x80);
    }

    #[test]
    fn unaligned_strided_native() {
        let mut buf = [0u8; 13];
        let m = Memory { base: buf[1..].as_mut_ptr(), bytes: 12 };
        let c = Col::F32(vec![1.5, -2.0]);
        // SAFETY: elements 2 and 0 of 3.
        unsafe { store(m, Dtype::Float32, 2, -2, 2, &c) };
        let mut back = Col::new(Dtype::Float32, 2);
        // SAFETY: as above.
        unsafe { load(m, Dtype::Float32, 0, 2, 2, &mut back) };
        assert_eq!(back, Col::F32(vec![-2.0, 1.5]));
    }

    #[test]
    fn narrow_and_bool_normalise() {
        let mut buf = [0x3Cu8, 0x00, 0x02, 0x00];
        let m = mem(&mut buf);
        let mut h = Col::new(Dtype::Float16, 1);
        // SAFETY: element 0 of 2.
        unsafe { load(m, Dtype::Float16, 0, 1, 1, &mut h) };
        // 0x003C little-endian: the float16 subnormal 60 * 2^-24.
        assert_eq!(h, Col::F32(vec![60.0 * 2f32.powi(-24)]));
        let mut b = Col::new(Dtype::Bool, 4);
        // SAFETY: elements 0..4 of 4.
        unsafe { load(m, Dtype::Bool, 0, 1, 4, &mut b) };
        assert_eq!(b, Col::Bool(vec![true, false, true, false]));
    }
}
