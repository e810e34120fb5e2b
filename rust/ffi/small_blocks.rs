//! The memory of buffers below [`UP_TO`] bytes: 64-byte aligned blocks in
//! size classes, and a shelf that keeps freed blocks for the next buffers
//! of their class.
//!
//! A buffer above glibc's per-thread cache (about 1 KiB) took glibc's
//! general path at each `malloc` and `free`: about 900 instructions of a
//! `Nx.add` of two 32x32 float32 (callgrind, of some 7 300), where numpy
//! keeps freed blocks itself. A block's size is the buffer's rounded up to
//! its class: whole 64 bytes up to 1 KiB, then eight classes between each
//! power of two and the next (a block at most an eighth larger than its
//! buffer). The GC frees the dead buffers of a minor collection
//! together, and the next buffers take their blocks back one by one: the
//! shelf holds up to twice the second-level cache (`crate::core::caches`),
//! a class up to half of that. A block that would take its class past
//! half is freed; one that would take the shelf past its cap first frees
//! the blocks of the class that holds the most bytes, so that classes no
//! longer asked for do not stay. The most recently kept block of a class
//! goes first, its lines likely still in the caches.

use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

extern "C" {
    fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int;
    fn free(p: *mut c_void);
}

/// Bytes below which buffers take their blocks here.
pub const UP_TO: usize = 4 << 20;

/// The alignment of a block.
const ALIGN: usize = 64;

/// Bytes up to which classes are whole multiples of [`ALIGN`].
const FINE: usize = 1 << 10;

/// Classes between a power of two and the next, above [`FINE`].
const STEPS: usize = 8;

/// The number of classes: those up to FINE, then STEPS for each power of
/// two from FINE up to UP_TO.
const CLASSES: usize = FINE / ALIGN + STEPS * (UP_TO.trailing_zeros() - FINE.trailing_zeros()) as usize;

/// The class of a buffer of `bytes` bytes (below [`UP_TO`]) and the size
/// of its blocks.
fn class(bytes: usize) -> (usize, usize) {
    assert!(bytes < UP_TO, "a small block holds less than {UP_TO} bytes, not {bytes}");
    if bytes <= FINE {
        let size = bytes.div_ceil(ALIGN).max(1) * ALIGN;
        return (size / ALIGN - 1, size);
    }
    // bytes lies in (2^e, 2^(e+1)], cut into STEPS classes of 2^e / STEPS.
    let e = (usize::BITS - 1 - (bytes - 1).leading_zeros()) as usize;
    let step = (1 << e) / STEPS;
    let size = bytes.div_ceil(step) * step;
    let first = FINE / ALIGN + STEPS * (e - FINE.trailing_zeros() as usize);
    (first + size / step - STEPS - 1, size)
}

/// The size of class `c`'s blocks.
fn size_of_class(c: usize) -> usize {
    if c < FINE / ALIGN {
        return (c + 1) * ALIGN;
    }
    let (e, j) = ((c - FINE / ALIGN) / STEPS, (c - FINE / ALIGN) % STEPS);
    (FINE << e) / STEPS * (STEPS + 1 + j)
}

/// Kept blocks by class, most recent last, and their bytes within a cap.
struct Shelf {
    kept: [Vec<usize>; CLASSES],
    bytes: usize,
    cap: usize,
}

impl Shelf {
    const fn new(cap: usize) -> Shelf {
        Shelf { kept: [const { Vec::new() }; CLASSES], bytes: 0, cap }
    }

    /// The most recently kept block of class `c`, taken off the shelf, if
    /// any.
    fn take(&mut self, c: usize) -> Option<usize> {
        let addr = self.kept[c].pop()?;
        self.bytes -= size_of_class(c);
        Some(addr)
    }

    /// Keeps block `addr` of class `c`: the blocks to free, none where it
    /// fits. A class holds half the cap at most, the block itself is freed
    /// where it does not fit that; else, where the shelf would pass its
    /// cap, the blocks of the class that holds the most bytes are, so that
    /// classes no longer asked for do not stay.
    fn keep(&mut self, c: usize, addr: usize) -> Vec<usize> {
        let size = size_of_class(c);
        if (self.kept[c].len() + 1) * size > self.cap / 2 {
            return vec![addr];
        }
        let mut out = Vec::new();
        if self.bytes + size > self.cap {
            let most = (0..CLASSES).max_by_key(|&d| self.kept[d].len() * size_of_class(d)).unwrap_or(c);
            self.bytes -= self.kept[most].len() * size_of_class(most);
            out = std::mem::take(&mut self.kept[most]);
        }
        self.kept[c].push(addr);
        self.bytes += size;
        out
    }
}

/// The process's shelf; its cap is set at first use (0 until then).
static SHELF: Mutex<Shelf> = Mutex::new(Shelf::new(0));

/// Runs `f` on the shelf. A poisoned lock (a panic of another thread
/// while it held it) still guards a consistent shelf: no step of it panics
/// halfway.
fn with_shelf<R>(f: impl FnOnce(&mut Shelf) -> R) -> R {
    let mut g = SHELF.lock().unwrap_or_else(|e| e.into_inner());
    if g.cap == 0 {
        g.cap = 2 * crate::core::caches::sizes().l2;
    }
    f(&mut g)
}

/// A block of at least `bytes` bytes (below [`UP_TO`]), aligned to
/// [`ALIGN`]: a kept one of its class, or a fresh one of its class's
/// size; null where memory runs out. `free` frees it, or [`give_back`]
/// takes it back.
pub fn take(bytes: usize) -> *mut c_void {
    let (c, size) = class(bytes);
    if let Some(addr) = with_shelf(|s| s.take(c)) {
        return addr as *mut c_void;
    }
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: posix_memalign writes p; ALIGN is a power of two multiple of
    // the pointer size.
    if unsafe { posix_memalign(&mut p, ALIGN, size) } != 0 {
        return std::ptr::null_mut();
    }
    p
}

/// Puts back the block of a dead buffer of `bytes` bytes, or frees it.
///
/// # Safety
/// `p` is a block [`take`] gave for a buffer of `bytes` bytes, which
/// nothing reads or writes from now on.
pub unsafe fn give_back(p: *mut c_void, bytes: usize) {
    for addr in with_shelf(|s| s.keep(class(bytes).0, p as usize)) {
        // SAFETY: the block is off the shelf, and no buffer holds it (this
        // function's contract, for every block kept).
        unsafe { free(addr as *mut c_void) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_consecutive_and_hold_their_buffers_with_little_room_to_spare() {
        let mut last = (0, ALIGN);
        assert_eq!(class(0), last);
        let mut sizes = vec![ALIGN];
        for bytes in (1..=3 * FINE).chain((3 * FINE..UP_TO).step_by(97)).chain(UP_TO - 5..UP_TO) {
            let (c, size) = class(bytes);
            assert!(size >= bytes && size.is_multiple_of(ALIGN), "{bytes} bytes in a block of {size}");
            assert!(size - bytes < ALIGN.max(bytes / STEPS), "{bytes} bytes in a block of {size}");
            assert!(c == last.0 && size == last.1 || c == last.0 + 1 && size > last.1, "class {c} of {bytes} after {last:?}");
            assert_eq!(size_of_class(c), size);
            if c != last.0 {
                sizes.push(size);
            }
            last = (c, size);
        }
        assert_eq!((last.0 + 1, last.1), (CLASSES, UP_TO));
        assert_eq!(sizes.len(), CLASSES);
        assert_eq!(class(FINE + 1), (FINE / ALIGN, FINE + FINE / STEPS));
    }

    #[test]
    fn the_shelf_gives_a_class_its_most_recent_block_and_keeps_within_its_limits() {
        let (c, size) = class(5000);
        let (d, dsize) = class(100);
        let mut s = Shelf::new(8 * size);
        assert_eq!(s.take(c), None);
        assert!(s.keep(c, 1).is_empty() && s.keep(c, 2).is_empty() && s.keep(d, 3).is_empty());
        assert_eq!(s.take(c), Some(2));
        assert_eq!(s.take(c), Some(1));
        assert_eq!(s.take(c), None);
        assert_eq!(s.take(d), Some(3));
        assert_eq!((s.bytes, s.kept.iter().map(Vec::len).sum::<usize>()), (0, 0));
        // A class holds half the cap: its next block is freed.
        assert!((4..8).all(|a| s.keep(c, a).is_empty()));
        assert_eq!(s.keep(c, 8), vec![8]);
        // Past the cap, the class that holds the most goes.
        assert!(s.keep(d, 11).is_empty());
        let (e, esize) = class(4 * size);
        assert_eq!(s.keep(e, 9), vec![4, 5, 6, 7]);
        assert_eq!(s.bytes, esize + dsize);
        assert_eq!((s.take(e), s.take(c), s.take(d)), (Some(9), None, Some(11)));
    }

    #[test]
    fn blocks_are_aligned_and_come_back_to_their_class() {
        let p = take(3000);
        assert!(!p.is_null() && (p as usize).is_multiple_of(ALIGN));
        // SAFETY: p holds class(3000)'s size of bytes, ours alone.
        unsafe {
            std::ptr::write_bytes(p as *mut u8, 7, class(3000).1);
            give_back(p, 3000);
        }
        // Another thread may take it first; one of the class's blocks,
        // aligned, comes back either way.
        let q = take(2950);
        assert!(!q.is_null() && (q as usize).is_multiple_of(ALIGN));
        // SAFETY: q is a block of 2950's class, ours alone.
        unsafe { give_back(q, 2950) };
    }
}
