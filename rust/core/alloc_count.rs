//! The test binary's allocator: the system's, counting the allocations each
//! thread makes, so that timings can say what a call allocates, and, while
//! [`peak_bytes`] measures, the bytes held by every thread and their peak.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::Relaxed};

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// Whether [`peak_bytes`] is measuring, the bytes held since it began, and
/// their peak.
static MEASURING: AtomicBool = AtomicBool::new(false);
static HELD: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// The system allocator, counting.
struct Counting;

impl Counting {
    /// Notes an allocation (or reallocation) of `delta` more bytes held.
    fn allocated(delta: isize) {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        Counting::held(delta);
    }
    fn held(delta: isize) {
        if MEASURING.load(Relaxed) {
            let now = HELD.fetch_add(delta, Relaxed) + delta;
            PEAK.fetch_max(now, Relaxed);
        }
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments,
// which upholds `GlobalAlloc`'s contract; the counting touches atomics and a
// thread-local cell of const initialisation, which allocates nothing and
// has no destructor.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Counting::allocated(layout.size() as isize);
        // SAFETY: as the impl's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        Counting::held(-(layout.size() as isize));
        // SAFETY: as the impl's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Counting::allocated(layout.size() as isize);
        // SAFETY: as the impl's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Counting::allocated(new_size as isize - layout.size() as isize);
        // SAFETY: as the impl's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Allocations (and reallocations) the calling thread has made so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// The peak of the bytes `f` allocates and holds at once (other threads'
/// allocations meanwhile included: run it alone).
pub fn peak_bytes(f: impl FnOnce()) -> isize {
    HELD.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    MEASURING.store(true, Relaxed);
    f();
    MEASURING.store(false, Relaxed);
    PEAK.load(Relaxed)
}
