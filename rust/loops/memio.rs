//! Moving values between memory and columns: a run of elements at a fixed
//! step (the innermost axis of a loop) read into, or written from, a column
//! of the dtype's register type.
//!
//! Addresses are element indices into a [`Memory`]; sub-byte dtypes are
//! packed from the low bits of each byte. Reads and writes are unaligned, so
//! a view may start anywhere in its buffer. Writes of sub-byte elements are
//! atomic: a byte whose every element a run writes is stored whole, and an
//! element of a byte the run shares is written by read-modify-writes of
//! its bits, so that threads writing neighbouring elements of one byte
//! never lose each other's bits. Narrow floats are converted a chunk at a
//! time, in one loop per format, through a buffer of their bits.

use crate::loops::column::{wrap_i4, ColMut, ColRef, Column};
use crate::each_col;
use crate::core::dtype::Dtype;
use crate::core::layout::Memory;
use crate::core::narrow::Narrow;
use crate::core::transpose;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU8, Ordering};

/// Bytes an element of a whole-byte dtype takes when its register type
/// holds it bit for bit (every dtype of whole bytes but bool and the narrow
/// floats); `None` for the others.
fn native_bytes(d: Dtype) -> Option<usize> {
    crate::loops::column::bitwise(d).then(|| d.bytes())
}

/// The first byte of a column's values, for a column whose register type
/// holds its dtype bit for bit.
fn col_bytes(col: &mut ColMut) -> *mut u8 {
    #[allow(clippy::unnecessary_cast)] // u8 columns are already bytes
    let p = each_col!(col, v => v.as_mut_ptr() as *mut u8);
    p
}

/// As [`col_bytes`], to read.
fn col_bytes_ref(col: &ColRef) -> *const u8 {
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
    match size {
        1 => copy_as::<1>(src, src_step, dst, dst_step, n),
        2 => copy_as::<2>(src, src_step, dst, dst_step, n),
        4 => copy_as::<4>(src, src_step, dst, dst_step, n),
        8 => copy_as::<8>(src, src_step, dst, dst_step, n),
        _ => copy_as::<16>(src, src_step, dst, dst_step, n),
    }
}

/// [`copy_elements`] of elements of `W` bytes.
///
/// # Safety
/// As [`copy_elements`].
#[inline(always)]
unsafe fn copy_as<const W: usize>(src: *const u8, src_step: isize, dst: *mut u8, dst_step: isize, n: usize) {
    if src_step == 0 && dst_step == W as isize && n > 0 {
        // One element repeated (a broadcast operand, a constant): read once
        // and stored by a vectorised fill. Element by element, the column
        // of `x - max(x, axis=1, keepdims)` over [512; 1024] made the
        // subtraction take 318 µs against numpy's 120 (146-270 after).
        // SAFETY: element 0 of the source lies in valid memory and the n
        // elements of the destination's run do (caller); `[u8; W]` has
        // alignment 1.
        let x = (src as *const [u8; W]).read_unaligned();
        return std::slice::from_raw_parts_mut(dst as *mut [u8; W], n).fill(x);
    }
    for i in 0..n as isize {
        // SAFETY: element i of each side lies in valid memory (caller).
        let x = (src.offset(i * src_step) as *const [u8; W]).read_unaligned();
        (dst.offset(i * dst_step) as *mut [u8; W]).write_unaligned(x);
    }
}

/// Copies a block transposed ([`transpose::block`]) between `mem`, from
/// element index `start` on, and a column: `rows` rows of `cols` values,
/// each of `size` bytes.
///
/// # Safety
/// As [`transpose::block`], `mem` addressed as element `start` on.
unsafe fn transposed(size: usize, src: *const u8, ss: isize, dst: *mut u8, ds: isize, rows: usize, cols: usize) {
    // SAFETY (each arm): as this function's contract; the values are read
    // and written unaligned.
    unsafe {
        match size {
            4 => transpose::block::<u32>(src.cast(), ss, dst.cast(), ds, rows, cols),
            8 => transpose::block::<u64>(src.cast(), ss, dst.cast(), ds, rows, cols),
            _ => transpose::block::<u128>(src.cast(), ss, dst.cast(), ds, rows, cols),
        }
    }
}

/// The bytes of a dtype's elements where its runs move through
/// [`transposed`] blocks: 4, 8 or 16 that its register type holds bit for
/// bit; `None` for other dtypes.
pub fn tiles_transposed(d: Dtype) -> Option<usize> {
    native_bytes(d).filter(|s| matches!(s, 4 | 8 | 16))
}

/// Reads `k` rows of `m` elements of dtype `d`, element `t` of row `q` at
/// element index `start + q + t * step` (rows side by side), into the first
/// `m k` values of `col`, row after row: a transposed block, moved a tile
/// at a time. Gives false, reading nothing, where `d` is not of 4, 8 or 16
/// bytes held bit for bit by its register type.
///
/// # Safety
/// As [`load`], for each element named.
pub unsafe fn load_transposed(mem: Memory, d: Dtype, start: isize, step: isize, m: usize, k: usize, col: &mut ColMut) -> bool {
    let Some(size) = tiles_transposed(d) else { return false };
    // SAFETY: as this function's contract: memory row t (of m, `step`
    // apart) holds element t of each of the k rows, side by side; the
    // column, of d's register type, holds m k values.
    unsafe { transposed(size, mem.base.offset(start * size as isize), step, col_bytes(col), m as isize, m, k) };
    true
}

/// Writes the first `m k` values of `col`, `k` rows of `m`, into dtype
/// `d`'s elements, element `t` of row `q` at element index
/// `start + q + t * step`: [`load_transposed`]'s reverse. Gives false,
/// writing nothing, where that gives false.
///
/// # Safety
/// As [`store`], for each element named.
pub unsafe fn store_transposed(mem: Memory, d: Dtype, start: isize, step: isize, m: usize, k: usize, col: &ColRef) -> bool {
    let Some(size) = tiles_transposed(d) else { return false };
    // SAFETY: as this function's contract, as in `load_transposed`; the
    // column is read only.
    unsafe { transposed(size, col_bytes_ref(col), m as isize, mem.base.offset(start * size as isize), step, k, m) };
    true
}

/// Elements of a narrow float that a load or a store converts at a time,
/// through a buffer on the stack.
const CHUNK: usize = 512;

/// A buffer of [`CHUNK`] values on the stack, none set yet.
fn chunk<T>() -> [MaybeUninit<T>; CHUNK] {
    [const { MaybeUninit::uninit() }; CHUNK]
}

/// The first `k` values of `buf`, set to zero: those alone, so that a
/// short run (a row of a small transposed block, 32 elements) clears no
/// more of the buffer than it uses (clearing all of it took an eighth of
/// a 32x32 transposed cast into float16, by perf).
fn first<T: Copy + Default>(buf: &mut [MaybeUninit<T>; CHUNK], k: usize) -> &mut [T] {
    let head = &mut buf[..k];
    for x in head.iter_mut() {
        x.write(T::default());
    }
    // SAFETY: every one of the k values was just written, and
    // `MaybeUninit<T>` has `T`'s layout.
    unsafe { &mut *(std::ptr::from_mut(head) as *mut [T]) }
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
pub unsafe fn load(mem: Memory, d: Dtype, start: isize, step: isize, n: usize, col: &mut ColMut) {
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
    // A byte of sub-byte elements, read atomically: another thread of the
    // call may be storing other elements of the same byte meanwhile (see
    // `store`), which a plain read would race with.
    let shared = |at: isize| -> u8 {
        // SAFETY: the byte lies in the buffer (caller's contract, through
        // the element that the callers below derive it from); `AtomicU8`
        // has the size and alignment of `u8`.
        unsafe { &*(base.offset(at) as *const AtomicU8) }.load(Ordering::Relaxed)
    };
    // Element i of a 4-bit dtype lies in the buffer (caller), so byte i / 2 does.
    let nibble = |i: isize| -> u8 { (shared(i >> 1) >> (4 * (i & 1))) & 15 };
    match (d, col) {
        (Dtype::Bool, Column::Bool(v)) => {
            v[..n].iter_mut().zip(indices(start, step, n)).for_each(|(o, i)| *o = byte(i) != 0)
        }
        (Dtype::Bit, Column::Bool(v)) => v[..n]
            .iter_mut()
            .zip(indices(start, step, n))
            // Bit i lies in the buffer (caller), so byte i / 8 does.
            .for_each(|(o, i)| *o = (shared(i >> 3) >> (i & 7)) & 1 != 0),
        (Dtype::Int4, Column::I8(v)) => v[..n]
            .iter_mut()
            .zip(indices(start, step, n))
            .for_each(|(o, i)| *o = wrap_i4(nibble(i) as i8)),
        (Dtype::Uint4, Column::U8(v)) => {
            v[..n].iter_mut().zip(indices(start, step, n)).for_each(|(o, i)| *o = nibble(i))
        }
        (d, Column::F32(v)) => {
            let w = Narrow::of(d).expect("a narrow float in a float32 column");
            // The elements' bits are gathered into a buffer, a chunk at a
            // time, then decoded in one loop.
            let (mut wide, mut bytes) = (chunk::<u16>(), chunk::<u8>());
            for (c, out) in v[..n].chunks_mut(CHUNK).enumerate() {
                let (at, k) = (start + (c * CHUNK) as isize * step, out.len());
                match w.bits() {
                    16 => {
                        let wide = first(&mut wide, k);
                        // SAFETY: elements at + j * step for j < k lie in
                        // the buffer (caller), 2 bytes each; `wide` holds k.
                        unsafe { copy_elements(2, base.offset(2 * at), 2 * step, wide.as_mut_ptr().cast(), 2, k) };
                        w.decode_slice(wide, out);
                    }
                    8 => {
                        let bytes = first(&mut bytes, k);
                        // SAFETY: as above, a byte each.
                        unsafe { copy_elements(1, base.offset(at), step, bytes.as_mut_ptr(), 1, k) };
                        w.decode_bytes(bytes, out);
                    }
                    _ => {
                        let bytes = first(&mut bytes, k);
                        bytes.iter_mut().zip(indices(at, step, k)).for_each(|(b, i)| *b = nibble(i));
                        w.decode_bytes(bytes, out);
                    }
                }
            }
        }
        (d, _) => panic!("nx_cpu: load of {} into a column of another type", d.name()),
    }
}

/// Writes `value(j)`, of which only the low `width` bits are read, into the
/// elements of `width` bits (1 or 4) at indices `start + j * step` for
/// `j < n`. Along a run of step ±1, a byte all of whose elements the run
/// writes is stored whole; the others, at a run's ends or of other steps,
/// have their element's bits replaced by atomic read-modify-writes, so
/// that a thread writing the byte's other elements keeps its bits.
///
/// # Safety
/// The elements lie in memory at `base` valid for them; no other thread
/// accesses them during the call, and other threads write the other bits
/// of their bytes only through this function.
unsafe fn store_packed(base: *mut u8, width: u32, start: isize, step: isize, n: usize, value: impl Fn(usize) -> u8) {
    let per = 8 / width as isize;
    let mask = ((1u16 << width) - 1) as u8;
    // SAFETY: byte `at` holds elements of the run (caller), so lies in
    // valid memory; `AtomicU8` has the size and alignment of `u8`, and
    // every write of a byte that another thread may write goes through
    // these atomics.
    let byte = |at: isize| unsafe { &*(base.offset(at) as *const AtomicU8) };
    let put = |i: isize, bits: u8| {
        let shift = (i % per) as u32 * width;
        let a = byte(i / per);
        a.fetch_and(!(mask << shift), Ordering::Relaxed);
        a.fetch_or((bits & mask) << shift, Ordering::Relaxed);
    };
    if step.abs() != 1 || n == 0 {
        indices(start, step, n).enumerate().for_each(|(j, i)| put(i, value(j)));
        return;
    }
    // The run's elements in increasing index, element i taking value
    // (i - start) * step (indices are not negative).
    let (lo, hi) = if step > 0 { (start, start + n as isize - 1) } else { (start - n as isize + 1, start) };
    let at = |i: isize| value(((i - start) * step) as usize);
    let mut i = lo;
    while i <= hi {
        if i % per == 0 && i + per - 1 <= hi {
            let bits = (0..per).fold(0u8, |b, k| b | (at(i + k) & mask) << (k as u32 * width));
            byte(i / per).store(bits, Ordering::Relaxed);
            i += per;
        } else {
            put(i, at(i));
            i += 1;
        }
    }
}

/// Writes the first `n` values of `col` as elements of dtype `d` into `mem`,
/// at element indices `start + i * step`.
///
/// # Safety
/// As [`load`]; moreover no other thread may access these elements during
/// the call, but for the other bits of a sub-byte element's byte, which
/// other threads may write only through this function.
pub unsafe fn store(mem: Memory, d: Dtype, start: isize, step: isize, n: usize, col: &ColRef) {
    let base = mem.base;
    if let Some(size) = native_bytes(d) {
        // SAFETY: as this function's contract; `col` is of `d`'s register
        // type, `size` bytes a value, read only here.
        let src = col_bytes_ref(col);
        return copy_elements(size, src, size as isize, base.offset(start * size as isize), step * size as isize, n);
    }
    match (d, col) {
        (Dtype::Bool, Column::Bool(v)) => {
            for (&x, i) in v[..n].iter().zip(indices(start, step, n)) {
                // SAFETY: element i lies in the buffer and is this thread's.
                *base.offset(i) = x as u8;
            }
        }
        // SAFETY (the three calls): as this function's contract.
        (Dtype::Bit, Column::Bool(v)) => store_packed(base, 1, start, step, n, |j| v[j] as u8),
        (Dtype::Int4, Column::I8(v)) => store_packed(base, 4, start, step, n, |j| v[j] as u8),
        (Dtype::Uint4, Column::U8(v)) => store_packed(base, 4, start, step, n, |j| v[j]),
        (d, Column::F32(v)) => {
            let w = Narrow::of(d).expect("a narrow float in a float32 column");
            // A chunk at a time, the values are encoded in one loop into a
            // buffer, then its bits scattered to their elements.
            let (mut wide, mut bytes) = (chunk::<u16>(), chunk::<u8>());
            for (c, x) in v[..n].chunks(CHUNK).enumerate() {
                let (at, k) = (start + (c * CHUNK) as isize * step, x.len());
                match w.bits() {
                    16 => {
                        let wide = first(&mut wide, k);
                        w.encode_f32_slice(x, wide);
                        // SAFETY: elements at + j * step for j < k lie in
                        // the buffer and are this thread's (caller), 2 bytes
                        // each; `wide` holds k.
                        unsafe { copy_elements(2, wide.as_ptr().cast(), 2, base.offset(2 * at), 2 * step, k) };
                    }
                    8 => {
                        let bytes = first(&mut bytes, k);
                        w.encode_f32_bytes(x, bytes);
                        // SAFETY: as above, a byte each.
                        unsafe { copy_elements(1, bytes.as_ptr(), 1, base.offset(at), step, k) };
                    }
                    _ => {
                        let bytes = first(&mut bytes, k);
                        w.encode_f32_bytes(x, bytes);
                        // SAFETY: as above, elements of 4 bits.
                        unsafe { store_packed(base, 4, at, step, k, |j| bytes[j]) };
                    }
                }
            }
        }
        (d, _) => panic!("nx_cpu: store of {} from a column of another type", d.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loops::column::Col;

    fn mem(buf: &mut [u8]) -> Memory {
        Memory { base: buf.as_mut_ptr(), bytes: buf.len() }
    }

    #[test]
    fn sub_byte_round_trip_keeps_neighbours() {
        let mut buf = [0xA5u8; 4];
        let m = mem(&mut buf);
        let mut c = Col::new(Dtype::Int4, 3);
        // SAFETY: indices 1, 3, 5 of 8 nibbles.
        unsafe { load(m, Dtype::Int4, 1, 2, 3, &mut c.as_mut()) };
        assert_eq!(c, Col::I8(vec![-6, -6, -6]));
        let w = Col::I8(vec![-8, 7, 0]);
        // SAFETY: as above.
        unsafe { store(m, Dtype::Int4, 1, 2, 3, &w.as_ref()) };
        assert_eq!(buf, [0x85, 0x75, 0x05, 0xA5]);
        let m = mem(&mut buf);
        let bits = Col::Bool(vec![true, false, true]);
        // SAFETY: bits 31, 30, 29 of 32.
        unsafe { store(m, Dtype::Bit, 31, -1, 3, &bits.as_ref()) };
        assert_eq!(buf[3], 0xA5 | 0x80);
    }

    #[test]
    fn unaligned_strided_native() {
        let mut buf = [0u8; 13];
        let m = Memory { base: buf[1..].as_mut_ptr(), bytes: 12 };
        let c = Col::F32(vec![1.5, -2.0]);
        // SAFETY: elements 2 and 0 of 3.
        unsafe { store(m, Dtype::Float32, 2, -2, 2, &c.as_ref()) };
        let mut back = Col::new(Dtype::Float32, 2);
        // SAFETY: as above.
        unsafe { load(m, Dtype::Float32, 0, 2, 2, &mut back.as_mut()) };
        assert_eq!(back, Col::F32(vec![-2.0, 1.5]));
    }

    #[test]
    fn narrow_and_bool_normalise() {
        let mut buf = [0x3Cu8, 0x00, 0x02, 0x00];
        let m = mem(&mut buf);
        let mut h = Col::new(Dtype::Float16, 1);
        // SAFETY: element 0 of 2.
        unsafe { load(m, Dtype::Float16, 0, 1, 1, &mut h.as_mut()) };
        // 0x003C little-endian: the float16 subnormal 60 * 2^-24.
        assert_eq!(h, Col::F32(vec![60.0 * 2f32.powi(-24)]));
        let mut b = Col::new(Dtype::Bool, 4);
        // SAFETY: elements 0..4 of 4.
        unsafe { load(m, Dtype::Bool, 0, 1, 4, &mut b.as_mut()) };
        assert_eq!(b, Col::Bool(vec![true, false, true, false]));
    }
}
