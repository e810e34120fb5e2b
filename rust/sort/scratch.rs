//! Scratch of plain items, of zero bits: a vector where it is small, and
//! where it is large (on Linux) an anonymous mapping of its own, advised
//! onto transparent huge pages, so that a long slice's buffers take a fault
//! every 2 MiB rather than every 4 KiB, and go back to the system whole.

/// Bytes from which scratch is mapped rather than allocated.
const MAPPED: usize = 1 << 21;

/// `n` items of zero bits.
pub enum Scratch<I: Copy> {
    Heap(Vec<I>),
    Mapped { at: *mut I, n: usize },
}

// SAFETY: a mapping is owned by its scratch alone, like a vector's memory.
unsafe impl<I: Copy + Send> Send for Scratch<I> {}
// SAFETY: shared access gives `&[I]` alone, like a vector's.
unsafe impl<I: Copy + Sync> Sync for Scratch<I> {}

#[cfg(target_os = "linux")]
mod os {
    use core::ffi::c_void;
    extern "C" {
        pub fn mmap(addr: *mut c_void, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut c_void;
        pub fn munmap(addr: *mut c_void, len: usize) -> i32;
        pub fn madvise(addr: *mut c_void, len: usize, advice: i32) -> i32;
    }
    pub const PROT_READ_WRITE: i32 = 3;
    pub const MAP_PRIVATE_ANONYMOUS: i32 = 0x22;
    pub const MADV_HUGEPAGE: i32 = 14;
}

impl<I: Copy> Scratch<I> {
    /// `n` items of zero bits. `I` must be an item for which zero bits are
    /// a valid value (integers and structures of them).
    pub fn zeroed(n: usize) -> Scratch<I> {
        let bytes = n.checked_mul(std::mem::size_of::<I>()).expect("scratch fits memory");
        #[cfg(target_os = "linux")]
        if bytes >= MAPPED && std::mem::align_of::<I>() <= 4096 {
            // SAFETY: a fresh private anonymous mapping of `bytes`, which
            // the system fills with zero bits (page-aligned, so aligned for
            // I); the advice changes how the kernel backs it alone.
            unsafe {
                let p = os::mmap(std::ptr::null_mut(), bytes, os::PROT_READ_WRITE, os::MAP_PRIVATE_ANONYMOUS, -1, 0);
                if p as isize != -1 {
                    os::madvise(p, bytes, os::MADV_HUGEPAGE);
                    return Scratch::Mapped { at: p.cast(), n };
                }
            }
        }
        let layout = std::alloc::Layout::array::<I>(n).expect("scratch fits memory");
        if layout.size() == 0 {
            return Scratch::Heap(Vec::new());
        }
        // SAFETY: the layout is of non-zero size; zero bits are a valid I
        // (this function's contract), so the vector's n items are
        // initialised, and it owns memory of the global allocator of its
        // layout.
        unsafe {
            let p = std::alloc::alloc_zeroed(layout) as *mut I;
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            Scratch::Heap(Vec::from_raw_parts(p, n, n))
        }
    }
}

impl<I: Copy> std::ops::Deref for Scratch<I> {
    type Target = [I];
    fn deref(&self) -> &[I] {
        match self {
            Scratch::Heap(v) => v,
            // SAFETY: the mapping holds n initialised items and lives as
            // long as self.
            Scratch::Mapped { at, n } => unsafe { std::slice::from_raw_parts(*at, *n) },
        }
    }
}

impl<I: Copy> std::ops::DerefMut for Scratch<I> {
    fn deref_mut(&mut self) -> &mut [I] {
        match self {
            Scratch::Heap(v) => v,
            // SAFETY: as in deref, borrowed mutably through self alone.
            Scratch::Mapped { at, n } => unsafe { std::slice::from_raw_parts_mut(*at, *n) },
        }
    }
}

impl<I: Copy> Drop for Scratch<I> {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Scratch::Mapped { at, n } = *self {
            // SAFETY: the mapping made in zeroed, of n items, unmapped once.
            unsafe { os::munmap(at.cast(), n * std::mem::size_of::<I>()) };
        }
    }
}
