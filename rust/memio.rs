//! Moving values between memory and columns: a run of elements at a fixed
//! step (the innermost axis of a loop) read into, or written from, a column
//! of the dtype's register type.
//!
//! Addresses are element indices into a [`Memory`]; sub-byte dtypes are
//! packed from the low bits of each byte. Reads and writes are unaligned, so
//! a view may start anywhere in its buffer. Writes of sub-byte elements are
//! atomic read-modify-writes of their byte, so that threads writing
//! neighbouring elements of one byte never lose each other's bits.

use crate::column::{wrap_i4, Col};
use crate::each_col;
use crate::dtype::Dtype;
use crate::layout::Memory;
use crate::narrow::Narrow;
use std::sync::atomic::{AtomicU8, Ordering};

/// Bytes an element of a whole-byte dtype takes when its register type
/// holds it bit for bit (every dtype of whole bytes but bool and the narrow
/// floats); `None` for the others.
fn native_bytes(d: Dtype) -> Option<usize> {
    let bitwise = !d.is_sub_byte() && d != Dtype::Bool && !d.is_narrow_float();
    bitwise.then(|| d.bytes())
}

/// The first byte of a column's values, for a column whose register type
/// holds its dtype bit for bit.
fn col_bytes(col: &mut Col) -> *mut u8 {
    #[allow(clippy::unnecessary_cast)] // u8 columns are already bytes
    let p = each_col!(col, v => v.as_mut_ptr() as *mut u8);
    p
}

/// As [`col_bytes`], to read.
fn col_bytes_ref(col: &Col) -> *const u8 {
    #[allow(clippy::unnecessary_cast)] // u8 columns are already bytes
    let p = each_col!(col, v => v.as_ptr() as *const u8);
    p
}

/// Copies `n` elements of `size` bytes from `src`, `src_step` bytes apart,
/// to `dst`, `dst_step` bytes apart.
///
/// # Safety
/// Every element read and written lies in memory valid for it, the two
/// ranges do not overlap, and no other thread writes them meanwhile.
#[inline]
unsafe fn copy_elements(size: usize, src: *const u8, src_step: isize, dst: *mut u8, dst_step: isize, n: usize) {
    if src_step == size as isize && dst_step == size as isize {
        // SAFETY: both runs are n * size bytes (caller).
        return std::ptr::copy_nonoverlapping(src, dst, n * size);
    }
    macro_rules! each {
        ($w:literal) => {
            for i in 0..n as isize {
                // SAFETY: element i of each side lies in valid memory (caller).
                let x = (src.offset(i * src_step) as *const [u8; $w]).read_unaligned();
                (dst.offset(i * dst_step) as *mut [u8; $w]).write_unaligned(x);
            }
        };
    }
    match size {
        1 => each!(1),
        2 => each!(2),
        4 => each!(4),
        8 => each!(8),
        _ => each!(16),
    }
}

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
    if let Some(size) = native_bytes(d) {
        // SAFETY: as this function's contract; `col` is of `d`'s register
        // type, whose values are `size` bytes of any bit pattern.
        return copy_elements(size, base.offset(start * size as isize), step * size as isize, col_bytes(col), size as isize, n);
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
    if let Some(size) = native_bytes(d) {
        // SAFETY: as this function's contract; `col` is of `d`'s register
        // type, `size` bytes a value, read only here.
        let src = col_bytes_ref(col);
        return copy_elements(size, src, size as isize, base.offset(start * size as isize), step * size as isize, n);
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
