//! Where the bucket sort's distribution leaves its items until their bucket
//! is sorted: `n` places, one item each, in memory that the call lends
//! (scratch, or the destinations themselves, whose place of an item is
//! read before the sorted bucket is written over it).

use super::bucket::ask_ahead;
use super::order::Word;
use super::radix::Item;
use crate::moves::slot::prefetch;

/// An item of the bucket sort: an element's bits and its position.
pub type It<T> = Item<T, u32>;

/// `n` places of items, shared by the threads, each writing and reading
/// places of its own.
pub trait Places<T: Word>: Copy + Send + Sync {
    /// Streams of memory a run of places writes (one per array).
    const STREAMS: usize;
    /// Bytes a place takes in each stream.
    const BYTES: usize;

    /// Writes `it` at place `p`.
    ///
    /// # Safety
    /// `p < n`, and no other thread touches place `p` meanwhile.
    unsafe fn write(self, p: usize, it: It<T>);

    /// Asks the cache for place `p`'s lines, whatever `p`.
    fn near(self, p: usize);

    /// The items of places `start..start + x.len()`: as a slice where they
    /// lie as one, else copied into `x` (`None`).
    ///
    /// # Safety
    /// The places lie below n, were written, and no other thread touches
    /// them while the slice lives.
    unsafe fn run<'a>(self, start: usize, x: &mut [It<T>]) -> Option<&'a [It<T>]>;
}

/// Places of whole items, one after the other.
#[derive(Clone, Copy)]
pub struct Items<T>(pub *mut It<T>);

/// Places split in two arrays: item p's bits at `bits[p]`, its position at
/// `pos[p]` (as 64 bits): the values' and positions' own memory, where a
/// sort of keys of 8 bytes so needs no scratch.
#[derive(Clone, Copy)]
pub struct Split<T> {
    pub bits: *mut T,
    pub pos: *mut u64,
}

// SAFETY: the places are shared as a vector's elements would be: by the
// contract of `Places`, each thread touches its own places alone.
unsafe impl<T: Send> Send for Items<T> {}
// SAFETY: as for Send.
unsafe impl<T: Send> Sync for Items<T> {}
// SAFETY: as for Items.
unsafe impl<T: Send> Send for Split<T> {}
// SAFETY: as for Items.
unsafe impl<T: Send> Sync for Split<T> {}

impl<T: Word> Places<T> for Items<T> {
    const STREAMS: usize = 1;
    const BYTES: usize = std::mem::size_of::<It<T>>();

    #[inline(always)]
    unsafe fn write(self, p: usize, it: It<T>) {
        // SAFETY: p < n, the places' count (caller).
        unsafe { self.0.add(p).write(it) }
    }

    #[inline(always)]
    fn near(self, p: usize) {
        prefetch(self.0.wrapping_add(p) as *const u8);
    }

    unsafe fn run<'a>(self, start: usize, x: &mut [It<T>]) -> Option<&'a [It<T>]> {
        // SAFETY: the places lie below n and were written (caller).
        Some(unsafe { std::slice::from_raw_parts(self.0.add(start), x.len()) })
    }
}

impl<T: Word> Places<T> for Split<T> {
    const STREAMS: usize = 2;
    const BYTES: usize = 8;

    #[inline(always)]
    unsafe fn write(self, p: usize, it: It<T>) {
        // SAFETY: p < n, the places' count in both arrays (caller).
        unsafe {
            self.bits.add(p).write_unaligned(it.bits);
            self.pos.add(p).write_unaligned(it.pos as u64);
        }
    }

    #[inline(always)]
    fn near(self, p: usize) {
        prefetch(self.bits.wrapping_add(p) as *const u8);
        prefetch(self.pos.wrapping_add(p) as *const u8);
    }

    unsafe fn run<'a>(self, start: usize, x: &mut [It<T>]) -> Option<&'a [It<T>]> {
        for (j, it) in x.iter_mut().enumerate() {
            ask_ahead(self.bits, start + j);
            ask_ahead(self.pos, start + j);
            // SAFETY: the places lie below n and were written (caller).
            // Each position was written from a u32.
            unsafe { *it = It { bits: self.bits.add(start + j).read_unaligned(), pos: self.pos.add(start + j).read_unaligned() as u32 } };
        }
        None
    }
}
