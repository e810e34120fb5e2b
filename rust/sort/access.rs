//! Raw bits of single elements in memory, by element index: the sort reads
//! and writes its values as bits, never as numbers, so that every payload
//! survives. A sub-byte element lies in the low bits of its `u8`.

use super::order::Word;
use crate::core::dtype::Dtype;
use crate::core::layout::Memory;
use std::sync::atomic::{AtomicU8, Ordering};

/// Elements of one dtype in one memory, read and written as their bits.
#[derive(Clone, Copy)]
pub struct Bits {
    mem: Memory,
    /// Bits an element takes: 1, 4, or a whole number of bytes.
    bits: usize,
}

impl Bits {
    /// Elements of `d` in `mem`.
    pub fn new(mem: Memory, d: Dtype) -> Bits {
        Bits { mem, bits: d.bits() }
    }

    /// The bits of element `e`, a sub-byte element's in the low bits.
    ///
    /// # Safety
    /// Element `e` lies within the memory's extent for the dtype and `T`
    /// has the dtype's width (`u8` for a sub-byte one); no other thread
    /// writes the element meanwhile (others may write the rest of its byte).
    #[inline(always)]
    pub unsafe fn read<T: Word>(&self, e: isize) -> T {
        match self.bits {
            // SAFETY: the byte holding bit or nibble e lies in the memory
            // (caller); an AtomicU8 has u8's layout, and the atomic read
            // keeps other threads' writes to the byte's other elements
            // from racing with it. T is u8 (caller).
            1 | 4 => {
                let (shift, per) = if self.bits == 1 { (3, 8) } else { (1, 2) };
                let byte = (*(self.mem.base.offset(e >> shift) as *const AtomicU8)).load(Ordering::Relaxed);
                let v = (byte >> ((e & (per - 1)) as usize * self.bits)) & ((1u8 << self.bits) - 1);
                std::mem::transmute_copy::<u8, T>(&v)
            }
            // SAFETY: element e's bytes lie in the memory (caller) and T is
            // as wide as the element; the read is unaligned.
            _ => (self.mem.base.offset(e * T::BYTES as isize) as *const T).read_unaligned(),
        }
    }

    /// Asks the cache for element `e`'s line; any `e` is harmless.
    #[inline(always)]
    pub fn prefetch(&self, e: isize) {
        crate::moves::slot::prefetch(self.mem.base.wrapping_offset(e.wrapping_mul(self.bits as isize) >> 3));
    }

    /// Asks the cache for the lines of the `n` elements from `e` on, `step`
    /// elements apart; any elements are harmless.
    pub fn prefetch_run(&self, e: isize, step: isize, n: usize) {
        if n == 0 {
            return;
        }
        let bits = self.bits as isize;
        if (step * bits).abs() >= 8 * 64 {
            (0..n as isize).for_each(|i| self.prefetch(e + i * step));
        } else {
            let ends = [e, e + (n as isize - 1) * step].map(|x| x.wrapping_mul(bits) >> 3);
            let (lo, hi) = (ends[0].min(ends[1]), ends[0].max(ends[1]));
            crate::moves::slot::prefetch_lines(self.mem.base.wrapping_offset(lo), (hi - lo) as usize + 1);
        }
    }

    /// Writes `v` as element `e`.
    ///
    /// # Safety
    /// As [`Bits::read`], and no other thread reads or writes element `e`
    /// meanwhile; a sub-byte element's byte is changed atomically, so that
    /// other threads may write its other elements.
    #[inline(always)]
    pub unsafe fn write<T: Word>(&self, e: isize, v: T) {
        match self.bits {
            // SAFETY: as in `read`; fetch_and then fetch_or change this
            // element's bits alone, each atomically.
            1 | 4 => {
                let (shift, per) = if self.bits == 1 { (3, 8) } else { (1, 2) };
                let byte = &*(self.mem.base.offset(e >> shift) as *const AtomicU8);
                let at = (e & (per - 1)) as usize * self.bits;
                let mask = ((1u8 << self.bits) - 1) << at;
                let v: u8 = std::mem::transmute_copy::<T, u8>(&v);
                let new = (v << at) & mask;
                // Each element's bits are written by one thread alone, so
                // the two steps need no loop: no other writer sets them.
                byte.fetch_and(!mask | new, Ordering::Relaxed);
                byte.fetch_or(new, Ordering::Relaxed);
            }
            // SAFETY: as in `read`.
            _ => (self.mem.base.offset(e * T::BYTES as isize) as *mut T).write_unaligned(v),
        }
    }
}
