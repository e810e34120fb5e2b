//! The memory of large buffers: blocks laid on transparent huge pages, and
//! a shelf that keeps freed blocks of [`KEPT_FROM`] bytes and more for the
//! next buffers of their size.
//!
//! glibc maps a block of 32 MiB or more afresh at each `malloc` and hands
//! it back to the kernel at its `free`, and the kernel zeroes each page of
//! a fresh mapping at its first touch: a loop whose results are that large
//! (`Nx.add` of two 3162x3162 float32) spent about as long in the kernel's
//! `clear_page` as in adding. The GC frees a dead buffer's block here
//! instead ([`give_back`]); the next buffer of the same size in whole huge
//! pages takes it back ([`take`]), its pages already in place. The shelf
//! holds [`KEEP`] blocks at most and a sixteenth of the machine's memory
//! at most; a buffer that finds no block of its size frees the oldest
//! kept, so that blocks of sizes no longer asked for do not stay.

use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

extern "C" {
    fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int;
    fn free(p: *mut c_void);
    #[cfg(target_os = "linux")]
    fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    #[cfg(target_os = "linux")]
    fn sysconf(name: c_int) -> std::os::raw::c_long;
}

/// A huge page of x86-64 and aarch64 (4 KiB granules) Linux.
pub const HUGE_PAGE: usize = 2 << 20;

/// Bytes from which a freed block is kept: where glibc's `malloc` maps
/// each block afresh (the most its `M_MMAP_THRESHOLD` takes, which
/// `super::host` sets).
pub const KEPT_FROM: usize = 32 << 20;

/// Blocks the shelf holds at most.
const KEEP: usize = 4;

/// Linux's `MADV_HUGEPAGE`.
#[cfg(target_os = "linux")]
const MADV_HUGEPAGE: c_int = 14;

/// A block of `bytes` bytes (`bytes` > 0) starting on a huge page, whose
/// pages the kernel is asked to back by huge pages (where transparent huge
/// pages are on `madvise`); null where memory runs out. `free` frees it.
pub fn fresh(bytes: usize) -> *mut c_void {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: posix_memalign writes p; HUGE_PAGE is a power of two
    // multiple of the pointer size.
    let rc = unsafe { posix_memalign(&mut p, HUGE_PAGE, bytes) };
    if rc != 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: [p, p + bytes) is this allocation, p page-aligned; the
    // advice changes how the kernel backs it, never its contents. A
    // refusal (no transparent huge pages) leaves ordinary pages.
    #[cfg(target_os = "linux")]
    unsafe {
        madvise(p, bytes, MADV_HUGEPAGE)
    };
    p
}

/// The size of the block that holds a buffer of `bytes` bytes from
/// [`KEPT_FROM`] on: whole huge pages, so that buffers a little apart in
/// size share blocks.
pub fn block_size(bytes: usize) -> usize {
    bytes.div_ceil(HUGE_PAGE).saturating_mul(HUGE_PAGE)
}

/// Kept blocks, oldest first, by address and size, within a cap of bytes.
struct Shelf {
    blocks: Vec<(usize, usize)>,
    bytes: usize,
    cap: usize,
}

impl Shelf {
    /// The most recently kept block of `size` bytes, taken off the shelf;
    /// or, where none is, `Err` of the oldest block, taken off to be freed
    /// (none where the shelf is empty).
    fn take(&mut self, size: usize) -> Result<usize, Option<(usize, usize)>> {
        match self.blocks.iter().rposition(|&(_, s)| s == size) {
            Some(i) => {
                self.bytes -= size;
                Ok(self.blocks.remove(i).0)
            }
            None if self.blocks.is_empty() => Err(None),
            None => {
                let oldest = self.blocks.remove(0);
                self.bytes -= oldest.1;
                Err(Some(oldest))
            }
        }
    }

    /// Keeps a block of `size` bytes; the blocks to free, oldest first, so
    /// that at most [`KEEP`] stay and their bytes stay within the cap (the
    /// block itself where it alone exceeds it).
    fn keep(&mut self, addr: usize, size: usize) -> Vec<(usize, usize)> {
        if size > self.cap {
            return vec![(addr, size)];
        }
        self.blocks.push((addr, size));
        self.bytes += size;
        let mut out = Vec::new();
        while self.blocks.len() > KEEP || self.bytes > self.cap {
            let b = self.blocks.remove(0);
            self.bytes -= b.1;
            out.push(b);
        }
        out
    }
}

/// The process's shelf; its cap is set at first use.
static SHELF: Mutex<Option<Shelf>> = Mutex::new(None);

/// A sixteenth of the machine's memory (Linux), or nothing elsewhere.
fn cap() -> usize {
    #[cfg(target_os = "linux")]
    {
        // glibc's _SC_PHYS_PAGES and _SC_PAGESIZE.
        const PHYS_PAGES: c_int = 85;
        const PAGESIZE: c_int = 30;
        // SAFETY: sysconf reads a system value; -1 where it has none.
        let (pages, page) = unsafe { (sysconf(PHYS_PAGES), sysconf(PAGESIZE)) };
        if pages > 0 && page > 0 {
            return (pages as usize).saturating_mul(page as usize) / 16;
        }
    }
    0
}

/// Runs `f` on the shelf, made at the first call. A poisoned lock (a panic
/// of another thread while it held it) still guards a consistent shelf:
/// no step of it panics halfway.
fn with_shelf<R>(f: impl FnOnce(&mut Shelf) -> R) -> R {
    let mut g = SHELF.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(|| Shelf { blocks: Vec::new(), bytes: 0, cap: cap() }))
}

/// A block for a buffer of `bytes` bytes, at least [`KEPT_FROM`]: a kept
/// one of its [`block_size`], or a [`fresh`] one of that size; null where
/// memory runs out. [`give_back`] takes it back.
pub fn take(bytes: usize) -> *mut c_void {
    let size = block_size(bytes);
    match with_shelf(|s| s.take(size)) {
        Ok(addr) => addr as *mut c_void,
        Err(oldest) => {
            if let Some((addr, _)) = oldest {
                // SAFETY: a kept block is one of [`fresh`]'s that no buffer
                // holds any more (`give_back`'s contract), off the shelf now.
                unsafe { free(addr as *mut c_void) };
            }
            fresh(size)
        }
    }
}

/// Puts back the block of a dead buffer of `bytes` bytes, or frees it.
///
/// # Safety
/// `p` is a block [`take`] gave for a buffer of `bytes` bytes, which
/// nothing reads or writes from now on.
pub unsafe fn give_back(p: *mut c_void, bytes: usize) {
    for (addr, _) in with_shelf(|s| s.keep(p as usize, block_size(bytes))) {
        // SAFETY: the block is off the shelf, and no buffer holds it
        // (this function's contract, for every block kept).
        unsafe { free(addr as *mut c_void) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: usize = 1 << 20;

    fn shelf(cap: usize) -> Shelf {
        Shelf { blocks: Vec::new(), bytes: 0, cap }
    }

    #[test]
    fn a_kept_block_goes_to_the_next_buffer_of_its_size_alone() {
        let mut s = shelf(1 << 40);
        assert_eq!(s.take(64 * MB), Err(None));
        assert!(s.keep(1, 64 * MB).is_empty());
        assert!(s.keep(2, 40 * MB).is_empty());
        assert!(s.keep(3, 64 * MB).is_empty());
        // The most recently kept of the size, then the other.
        assert_eq!(s.take(64 * MB), Ok(3));
        assert_eq!(s.take(64 * MB), Ok(1));
        // No block of 64 MiB left: the oldest (the 40 MiB one) is freed.
        assert_eq!(s.take(64 * MB), Err(Some((2, 40 * MB))));
        assert_eq!((s.blocks.len(), s.bytes), (0, 0));
    }

    #[test]
    fn the_shelf_keeps_at_most_keep_blocks_and_its_cap_in_bytes() {
        let mut s = shelf(100 * MB);
        for a in 0..KEEP {
            assert!(s.keep(a + 1, 10 * MB).is_empty());
        }
        // One block more: the oldest goes.
        assert_eq!(s.keep(9, 10 * MB), vec![(1, 10 * MB)]);
        // 40 MiB kept; 75 more make five blocks, and 105 MiB past the cap
        // of 100 once the oldest is gone: the two oldest go.
        assert_eq!(s.keep(10, 75 * MB), vec![(2, 10 * MB), (3, 10 * MB)]);
        assert_eq!((s.blocks.clone(), s.bytes), (vec![(4, 10 * MB), (9, 10 * MB), (10, 75 * MB)], 95 * MB));
        // A block past the cap alone is freed at once, the shelf unchanged.
        assert_eq!(s.keep(11, 101 * MB), vec![(11, 101 * MB)]);
        assert_eq!(s.bytes, 95 * MB);
    }

    #[test]
    fn a_block_is_whole_huge_pages() {
        assert_eq!(block_size(KEPT_FROM), KEPT_FROM);
        assert_eq!(block_size(KEPT_FROM + 1), KEPT_FROM + HUGE_PAGE);
        assert_eq!(block_size(3162 * 3162 * 4), 20 * HUGE_PAGE);
    }

    #[test]
    fn a_block_given_back_is_taken_again_with_its_bytes() {
        let bytes = KEPT_FROM + 12345;
        let p = take(bytes) as *mut u8;
        assert!(!p.is_null());
        assert_eq!(p as usize % HUGE_PAGE, 0);
        // SAFETY: the block holds block_size(bytes) >= bytes bytes.
        unsafe { std::ptr::write_bytes(p, 7, bytes) };
        // SAFETY: p is take's, of `bytes` bytes, unused from here.
        unsafe { give_back(p as *mut c_void, bytes) };
        if cap() >= block_size(bytes) {
            // Other tests take no block of this size: it comes back, as it was.
            let q = take(bytes + 1) as *mut u8;
            assert_eq!(q, p);
            // SAFETY: the block holds at least `bytes` bytes.
            assert!(unsafe { std::slice::from_raw_parts(q, bytes) }.iter().all(|&b| b == 7));
            // SAFETY: q is take's, unused from here.
            unsafe { give_back(q as *mut c_void, bytes + 1) };
        }
    }
}
