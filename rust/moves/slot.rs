//! Elements as bits: how the moves read and write one element of any dtype
//! at an element index of a buffer, without knowing what it means.
//!
//! Whole-byte dtypes are read and written as unsigned integers of their
//! width, unaligned. Sub-byte dtypes (1 or 4 bits) are packed from the low
//! bits of each byte: their bytes are read by atomic loads and written by
//! atomic read-modify-writes of the element's bits alone, so that threads
//! writing neighbouring elements of one byte never lose each other's bits
//! (as `crate::loops::memio` does for the loops).

use crate::core::stream::stream;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// An element's bits, read from and written to an element index.
pub trait Slot: Copy + Send + Sync + 'static {
    /// The element of zero bits.
    const ZERO: Self;
    /// Bits an element takes.
    const BITS: usize;
    /// The element whose bits are the low bits of `bits`.
    fn of_bits(bits: u128) -> Self;
    /// Reads element `i` of the buffer at `base`.
    ///
    /// # Safety
    /// Element `i` lies in memory valid to read; no other thread writes it
    /// meanwhile, and other threads write other elements of its byte only
    /// through [`Slot::put`].
    unsafe fn get(base: *const u8, i: isize) -> Self;
    /// Writes element `i` of the buffer at `base`.
    ///
    /// # Safety
    /// Element `i` lies in memory valid to write; no other thread accesses
    /// it meanwhile, and other threads write other elements of its byte
    /// only through [`Slot::put`].
    unsafe fn put(base: *mut u8, i: isize, v: Self);
    /// The alignment in bytes that [`Slot::put_shared`] needs of a
    /// buffer's base.
    const ALIGN: usize;
    /// Writes element `i` of the buffer at `base` as [`Slot::put`] does,
    /// by relaxed atomic stores of its aligned words (of at most 8 bytes),
    /// so that another thread writing the same element meanwhile (where a
    /// caller's promise of one write an element is broken) leaves the
    /// words of either write, not undefined behaviour.
    ///
    /// # Safety
    /// As [`Slot::put`], but other threads may write element `i` too
    /// through this function; `base` is aligned to [`Slot::ALIGN`].
    unsafe fn put_shared(base: *mut u8, i: isize, v: Self);
    /// The address of the byte where element `i` of the buffer at `base`
    /// starts, computed without a claim that it lies in the buffer (for
    /// prefetches, which never fault).
    fn addr(base: *const u8, i: isize) -> *const u8;
    /// Copies `n` elements from `src` at element index `s`, step `ss`, to
    /// `dst` at `d`, step `ds`.
    ///
    /// # Safety
    /// Every element lies in valid memory, the two ranges do not overlap
    /// and, as for [`Slot::get`] and [`Slot::put`], no other thread
    /// accesses them but through `put` on other elements of their bytes.
    #[inline]
    unsafe fn copy(src: *const u8, s: isize, ss: isize, dst: *mut u8, d: isize, ds: isize, n: usize) {
        for k in 0..n as isize {
            // SAFETY: as this function's contract.
            Self::put(dst, d + k * ds, Self::get(src, s + k * ss));
        }
    }
    /// Writes the element of zero bits into `n` elements of `dst` from
    /// element index `d`, step `ds`.
    ///
    /// # Safety
    /// As [`Slot::put`] for each element.
    #[inline]
    unsafe fn zero(dst: *mut u8, d: isize, ds: isize, n: usize) {
        for k in 0..n as isize {
            // SAFETY: as this function's contract.
            Self::put(dst, d + k * ds, Self::ZERO);
        }
    }
}

macro_rules! whole {
    ($($t:ty),*) => {$(
        impl Slot for $t {
            const ZERO: Self = 0;
            const BITS: usize = 8 * size_of::<$t>();
            #[inline]
            fn of_bits(bits: u128) -> Self {
                bits as $t
            }
            #[inline]
            unsafe fn get(base: *const u8, i: isize) -> Self {
                // SAFETY: the element lies in valid memory (caller).
                (base.offset(i * size_of::<$t>() as isize) as *const $t).read_unaligned()
            }
            #[inline]
            unsafe fn put(base: *mut u8, i: isize, v: Self) {
                // SAFETY: the element lies in valid memory (caller).
                (base.offset(i * size_of::<$t>() as isize) as *mut $t).write_unaligned(v)
            }
            const ALIGN: usize = if size_of::<$t>() < 8 { size_of::<$t>() } else { 8 };
            #[inline]
            unsafe fn put_shared(base: *mut u8, i: isize, v: Self) {
                // SAFETY: the element lies in valid memory, aligned to
                // ALIGN as base is (caller).
                Words::store(base.offset(i * size_of::<$t>() as isize), v)
            }
            #[inline(always)]
            fn addr(base: *const u8, i: isize) -> *const u8 {
                base.wrapping_offset(i.wrapping_mul(size_of::<$t>() as isize))
            }
            #[inline]
            unsafe fn copy(src: *const u8, s: isize, ss: isize, dst: *mut u8, d: isize, ds: isize, n: usize) {
                let w = size_of::<$t>() as isize;
                if ss == 1 && ds == 1 {
                    // SAFETY: both runs of n elements lie in valid memory
                    // and do not overlap (caller).
                    return std::ptr::copy_nonoverlapping(src.offset(s * w), dst.offset(d * w), n * w as usize);
                }
                for k in 0..n as isize {
                    // SAFETY: as this function's contract.
                    Self::put(dst, d + k * ds, Self::get(src, s + k * ss));
                }
            }
            #[inline]
            unsafe fn zero(dst: *mut u8, d: isize, ds: isize, n: usize) {
                if ds == 1 {
                    // SAFETY: the run of n elements lies in valid memory
                    // (caller).
                    return std::ptr::write_bytes(dst.offset(d * size_of::<$t>() as isize), 0, n * size_of::<$t>());
                }
                for k in 0..n as isize {
                    // SAFETY: as this function's contract.
                    Self::put(dst, d + k * ds, 0);
                }
            }
        }
    )*};
}
whole!(u8, u16, u32, u64, u128);

/// Whole-byte elements stored by relaxed atomic stores of their words.
trait Words: Copy {
    /// Stores `v` at `p`.
    ///
    /// # Safety
    /// `p` is valid to write `v`'s bytes and aligned to the smaller of
    /// their count and 8.
    unsafe fn store(p: *mut u8, v: Self);
}

macro_rules! words {
    ($($t:ty => $a:ty),*) => {$(
        impl Words for $t {
            #[inline(always)]
            unsafe fn store(p: *mut u8, v: Self) {
                // SAFETY: p is valid and aligned for the atomic (caller);
                // every access to it by other threads meanwhile is atomic.
                unsafe { <$a>::from_ptr(p as *mut $t).store(v, Ordering::Relaxed) }
            }
        }
    )*};
}
words!(u8 => AtomicU8, u16 => AtomicU16, u32 => AtomicU32, u64 => AtomicU64);

impl Words for u128 {
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        let (lo, hi) = (v as u64, (v >> 64) as u64);
        let (lo, hi) = if cfg!(target_endian = "little") { (lo, hi) } else { (hi, lo) };
        // SAFETY: both words lie in the element, valid and 8-aligned
        // (caller).
        unsafe {
            Words::store(p, lo);
            Words::store(p.add(8), hi);
        }
    }
}

/// An element of `W` bits (1 or 4), packed from the low bits of its byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packed<const W: u32>(pub u8);

impl<const W: u32> Packed<W> {
    const PER: isize = 8 / W as isize;
    const MASK: u8 = ((1u16 << W) - 1) as u8;

    /// The byte of element `i`, to access atomically.
    ///
    /// # Safety
    /// Element `i` lies in valid memory.
    #[inline]
    unsafe fn byte<'a>(base: *const u8, i: isize) -> &'a AtomicU8 {
        // SAFETY: the element's byte lies in valid memory (caller);
        // `AtomicU8` has the size and alignment of `u8`.
        &*(base.offset(i.div_euclid(Self::PER)) as *const AtomicU8)
    }

    #[inline]
    fn shift(i: isize) -> u32 {
        i.rem_euclid(Self::PER) as u32 * W
    }
}

impl<const W: u32> Slot for Packed<W> {
    const ZERO: Self = Packed(0);
    const BITS: usize = W as usize;
    #[inline]
    fn of_bits(bits: u128) -> Self {
        Packed(bits as u8 & Self::MASK)
    }
    #[inline]
    unsafe fn get(base: *const u8, i: isize) -> Self {
        // SAFETY: the element lies in valid memory (caller).
        Packed((Self::byte(base, i).load(Ordering::Relaxed) >> Self::shift(i)) & Self::MASK)
    }
    #[inline]
    unsafe fn put(base: *mut u8, i: isize, v: Self) {
        // SAFETY: the element lies in valid memory (caller).
        let a = Self::byte(base, i);
        let s = Self::shift(i);
        a.fetch_and(!(Self::MASK << s), Ordering::Relaxed);
        a.fetch_or((v.0 & Self::MASK) << s, Ordering::Relaxed);
    }
    const ALIGN: usize = 1;
    /// [`Slot::put`], whose read-modify-writes are atomic already.
    #[inline]
    unsafe fn put_shared(base: *mut u8, i: isize, v: Self) {
        // SAFETY: as put's contract, which put_shared's implies.
        unsafe { Self::put(base, i, v) }
    }
    #[inline(always)]
    fn addr(base: *const u8, i: isize) -> *const u8 {
        base.wrapping_offset(i.div_euclid(Self::PER))
    }
    /// Where both runs step 1 and start at one place in their bytes, the
    /// bytes whose elements all lie in the run copied by one memcpy, the
    /// elements of partly covered bytes one at a time: a byte written
    /// whole holds only elements of this copy, which no other thread
    /// accesses.
    #[inline]
    unsafe fn copy(src: *const u8, s: isize, ss: isize, dst: *mut u8, d: isize, ds: isize, n: usize) {
        let n = n as isize;
        if ss != 1 || ds != 1 || s.rem_euclid(Self::PER) != d.rem_euclid(Self::PER) {
            for k in 0..n {
                // SAFETY: as this function's contract.
                Self::put(dst, d + k * ds, Self::get(src, s + k * ss));
            }
            return;
        }
        let (head, bytes, tail) = Self::split(d, n);
        for k in (0..head).chain(n - tail..n) {
            // SAFETY: as this function's contract.
            Self::put(dst, d + k, Self::get(src, s + k));
        }
        // SAFETY: the whole bytes hold elements of the two runs alone, in
        // valid memory that does not overlap (caller).
        std::ptr::copy_nonoverlapping(src.offset((s + head).div_euclid(Self::PER)), dst.offset((d + head).div_euclid(Self::PER)), bytes);
    }
    /// As [`Slot::copy`]: whole bytes by one memset, the rest one at a time.
    #[inline]
    unsafe fn zero(dst: *mut u8, d: isize, ds: isize, n: usize) {
        let n = n as isize;
        let (head, bytes, tail) = if ds == 1 { Self::split(d, n) } else { (n, 0, 0) };
        for k in (0..head).chain(n - tail..n) {
            // SAFETY: as this function's contract.
            Self::put(dst, d + k * ds, Self::ZERO);
        }
        // SAFETY: the whole bytes hold elements of the run alone, in valid
        // memory (caller).
        std::ptr::write_bytes(dst.offset((d + head).div_euclid(Self::PER)), 0, bytes);
    }
}

impl<const W: u32> Packed<W> {
    /// A run of `n` elements from element index `d` as the elements before
    /// its first whole byte, its whole bytes, and the elements after them.
    #[inline]
    fn split(d: isize, n: isize) -> (isize, usize, isize) {
        let head = ((Self::PER - d.rem_euclid(Self::PER)) % Self::PER).min(n);
        let bytes = (n - head) / Self::PER;
        (head, bytes as usize, n - head - bytes * Self::PER)
    }
}

/// Asks the processor to bring the cache line at `p` near, ahead of a read
/// whose address is known early (a gather's source, a scatter's target).
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults nor changes memory, whatever its
    // address; SSE is part of x86-64's baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks for the cache lines of the `bytes` bytes from `p` (a run about to
/// be read), as [`prefetch`] does for one.
#[inline]
pub fn prefetch_lines(p: *const u8, bytes: usize) {
    (0..bytes).step_by(64).for_each(|b| prefetch(p.wrapping_add(b)));
}

/// As [`Slot::copy`], by [`stream`] where `streaming` is set, both runs
/// step 1 and the elements are of whole bytes.
///
/// # Safety
/// As [`Slot::copy`].
#[inline]
#[allow(clippy::too_many_arguments)]
pub unsafe fn copy_run<S: Slot>(streaming: bool, src: *const u8, s: isize, ss: isize, dst: *mut u8, d: isize, ds: isize, n: usize) {
    if streaming && ss == 1 && ds == 1 && S::BITS >= 8 {
        // SAFETY: the runs of n whole elements lie in valid memory from
        // their first elements' bytes and do not overlap (caller).
        return unsafe { stream(S::addr(src, s), S::addr(dst, d) as *mut u8, n * S::BITS / 8) };
    }
    // SAFETY: as this function's contract.
    unsafe { S::copy(src, s, ss, dst, d, ds, n) }
}

/// Whether a call whose copies pass `bytes` bytes through the caches
/// streams its long copies: they exceed the host's largest cache (as the
/// contract's scatter reads it), so that what it writes would not stay
/// there. A copy from a source it reads once counts both (a scatter's
/// copy of into, whose destination it combines into right after, counts
/// the destination alone).
pub fn streams(bytes: usize) -> bool {
    bytes > crate::core::caches::largest()
}

/// Runs `$body` with `$s` the [`Slot`] type of elements of `$bits` bits.
#[macro_export]
macro_rules! with_slot {
    ($bits:expr, $s:ident => $body:expr) => {{
        use $crate::moves::slot::Packed;
        match $bits {
            1 => { type $s = Packed<1>; $body }
            4 => { type $s = Packed<4>; $body }
            8 => { type $s = u8; $body }
            16 => { type $s = u16; $body }
            32 => { type $s = u32; $body }
            64 => { type $s = u64; $body }
            _ => { type $s = u128; $body }
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    /// put_shared writes an element's bits as put does, at every element
    /// of a buffer, the other elements' bits unchanged.
    fn put_shared_as_put<S: Slot + PartialEq + std::fmt::Debug>() {
        for i in 0..16isize {
            let (mut a, mut b) = ([0xa5u64; 18], [0xa5u64; 18]);
            let v = S::of_bits(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128.rotate_left(i as u32 * 8));
            // SAFETY: element i / 2 < 8 of at most 16 bytes lies in 144 bytes
            // from an 8-aligned base; one thread.
            unsafe {
                S::put(a.as_mut_ptr() as *mut u8, i / 2, v);
                S::put_shared(b.as_mut_ptr() as *mut u8, i / 2, v);
                assert_eq!(S::get(b.as_ptr() as *const u8, i / 2), v);
            }
            assert_eq!(a, b, "element {} of {} bits", i / 2, S::BITS);
        }
    }

    #[test]
    fn put_shared_writes_what_put_does() {
        put_shared_as_put::<Packed<1>>();
        put_shared_as_put::<Packed<4>>();
        put_shared_as_put::<u8>();
        put_shared_as_put::<u16>();
        put_shared_as_put::<u32>();
        put_shared_as_put::<u64>();
        put_shared_as_put::<u128>();
    }
}
