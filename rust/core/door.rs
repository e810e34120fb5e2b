//! The door: each kernel call claims the memory of its operands for its
//! extent, reads on what it reads and writes on what it writes, so that calls
//! from other domains never write memory that another call reads or writes.
//!
//! A call claims all its ranges at once or none of them, and waits while any
//! conflicts with another call's (two ranges conflict where they share a byte
//! and either is written). No call holds a claim while it waits for another,
//! so calls never deadlock on claims. A call's own claims never conflict with
//! each other: a kernel handles its own operands' overlaps.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// A byte range of a call's operands, inclusive, and whether it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    pub lo: usize,
    pub hi: usize,
    pub write: bool,
}

impl Claim {
    fn conflicts(&self, other: &Claim) -> bool {
        (self.write || other.write) && self.lo <= other.hi && other.lo <= self.hi
    }
}

struct Held {
    next_id: u64,
    claims: Vec<(u64, Claim)>,
    /// Calls asleep in [`enter`]: a call that leaves wakes them only where
    /// there are any, sparing every other call a system call.
    waiting: usize,
}

/// The held claims behind a spin lock: taking it is one atomic exchange
/// and leaving it a plain store, where a `Mutex` took an exchange each
/// way, so that a small call's two visits to the door cost two locked
/// instructions rather than four. What it guards is a short scan of the
/// claims; a call that must wait sleeps on [`RELEASED`], not here.
struct Door {
    locked: AtomicBool,
    held: UnsafeCell<Held>,
}

// SAFETY: `held` is touched only through a `Guard`, which one thread holds
// at a time (the acquire exchange in `lock`, the release store in its drop).
unsafe impl Sync for Door {}

static DOOR: Door = Door { locked: AtomicBool::new(false), held: UnsafeCell::new(Held { next_id: 0, claims: Vec::new(), waiting: 0 }) };

/// The door's lock, held: the claims, for one thread at a time.
struct Guard;

impl Guard {
    fn held(&mut self) -> &mut Held {
        // SAFETY: this guard holds the lock (lock), so no other reference
        // to the claims exists until it drops; the borrow ends with it.
        unsafe { &mut *DOOR.held.get() }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        DOOR.locked.store(false, Ordering::Release);
    }
}

/// Takes the door's lock: spinning while another thread holds it (for a
/// scan of the claims), yielding the core if that lasts.
fn lock() -> Guard {
    let mut spins = 0u32;
    while DOOR.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
        while DOOR.locked.load(Ordering::Relaxed) {
            spins += 1;
            if spins < 64 { std::hint::spin_loop() } else { std::thread::yield_now() }
        }
    }
    Guard
}

/// Where waiting calls sleep: a call that leaves, having seen some asleep,
/// takes `ASLEEP` and wakes them. A waiter holds `ASLEEP` from before its
/// last look at the claims until it sleeps, so no wake-up falls between.
static ASLEEP: Mutex<()> = Mutex::new(());
static RELEASED: Condvar = Condvar::new();

/// Claims held by one call; dropping it hands them back.
pub struct Pass {
    id: u64,
}

fn free(held: &Held, wanted: &[Claim]) -> bool {
    !held.claims.iter().any(|(_, c)| wanted.iter().any(|w| w.conflicts(c)))
}

fn take(held: &mut Held, wanted: &[Claim]) -> Pass {
    let id = held.next_id;
    held.next_id += 1;
    held.claims.extend(wanted.iter().map(|&c| (id, c)));
    Pass { id }
}

/// `f` of the claims `claims` lists, gathered on the stack where they are
/// few (a small call's), so that listing them allocates nothing.
pub fn gathered<R>(claims: impl Iterator<Item = Claim>, f: impl FnOnce(&[Claim]) -> R) -> R {
    const FEW: usize = 16;
    // Left unwritten past the claims: clearing it cost a small call ~40
    // instructions.
    let mut few = [std::mem::MaybeUninit::<Claim>::uninit(); FEW];
    let (mut n, mut many) = (0, Vec::new());
    for c in claims {
        if n < FEW {
            few[n].write(c);
            n += 1;
        } else {
            if many.is_empty() {
                // SAFETY: all FEW entries have been written.
                many.extend(few.iter().map(|c| unsafe { c.assume_init_read() }));
            }
            many.push(c);
        }
    }
    // SAFETY: the first `n` entries have been written, and MaybeUninit<Claim>
    // has Claim's layout.
    let written = unsafe { std::slice::from_raw_parts(few.as_ptr().cast::<Claim>(), n) };
    if many.is_empty() { f(written) } else { f(&many) }
}

/// Claims `wanted` if no other call's claims conflict with it now.
pub fn try_enter(wanted: &[Claim]) -> Option<Pass> {
    let mut g = lock();
    let held = g.held();
    if free(held, wanted) { Some(take(held, wanted)) } else { None }
}

/// Claims `wanted`, waiting until no other call's claims conflict with it.
pub fn enter(wanted: &[Claim]) -> Pass {
    if let Some(p) = try_enter(wanted) {
        return p;
    }
    let mut asleep = ASLEEP.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        {
            let mut g = lock();
            let held = g.held();
            if free(held, wanted) {
                return take(held, wanted);
            }
            held.waiting += 1;
        }
        // The timeout only bounds a wait should a wake-up be missed.
        asleep = RELEASED.wait_timeout(asleep, Duration::from_millis(100)).unwrap_or_else(|e| e.into_inner()).0;
        lock().held().waiting -= 1;
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        let waiting = {
            let mut g = lock();
            let held = g.held();
            held.claims.retain(|(id, _)| *id != self.id);
            held.waiting
        };
        if waiting > 0 {
            let _asleep = ASLEEP.lock().unwrap_or_else(|e| e.into_inner());
            RELEASED.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    fn r(lo: usize, hi: usize) -> Claim {
        Claim { lo, hi, write: false }
    }

    #[test]
    fn gathered_lists_few_and_many_claims_in_order() {
        for n in [0, 1, 16, 17, 40] {
            let claims: Vec<Claim> = (0..n).map(|i| Claim { lo: i, hi: i + 1, write: i % 2 == 0 }).collect();
            assert_eq!(gathered(claims.iter().copied(), <[Claim]>::to_vec), claims);
        }
    }
    fn w(lo: usize, hi: usize) -> Claim {
        Claim { lo, hi, write: true }
    }

    #[test]
    fn readers_share_and_writers_exclude() {
        // Addresses far from any other test's.
        let base = 1 << 40;
        let a = try_enter(&[r(base, base + 10)]).unwrap();
        let b = try_enter(&[r(base + 5, base + 20), w(base + 100, base + 110)]).unwrap();
        assert!(try_enter(&[w(base + 10, base + 10)]).is_none());
        assert!(try_enter(&[r(base + 105, base + 106)]).is_none());
        assert!(try_enter(&[w(base + 21, base + 99)]).is_some());
        drop(a);
        assert!(try_enter(&[w(base, base + 4)]).is_some());
        drop(b);
        // A call's own claims may overlap each other.
        assert!(try_enter(&[w(base, base + 4), r(base, base + 4)]).is_some());
    }

    #[test]
    fn writers_exclude_each_other_under_contention() {
        // Threads take one range to write, or part of it to read, many
        // times over: no writer is ever inside with another call.
        let base = 1 << 42;
        let (writers, readers) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (writers, readers) = (writers.clone(), readers.clone());
                std::thread::spawn(move || {
                    for i in 0..2000 {
                        if (i + t) % 3 == 0 {
                            let _p = enter(&[r(base + 4, base + 6)]);
                            readers.fetch_add(1, Ordering::SeqCst);
                            assert_eq!(writers.load(Ordering::SeqCst), 0, "a reader beside a writer");
                            readers.fetch_sub(1, Ordering::SeqCst);
                        } else {
                            let _p = enter(&[w(base, base + 8)]);
                            assert_eq!(writers.fetch_add(1, Ordering::SeqCst), 0, "two writers inside");
                            assert_eq!(readers.load(Ordering::SeqCst), 0, "a writer beside a reader");
                            std::hint::spin_loop();
                            writers.fetch_sub(1, Ordering::SeqCst);
                        }
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
    }

    #[test]
    fn a_waiting_writer_enters_when_the_reader_leaves() {
        let base = 1 << 41;
        let reader = enter(&[r(base, base + 8)]);
        let entered = Arc::new(AtomicBool::new(false));
        let e = entered.clone();
        let t = std::thread::spawn(move || {
            let _p = enter(&[w(base + 8, base + 9)]);
            e.store(true, Ordering::SeqCst);
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!entered.load(Ordering::SeqCst));
        drop(reader);
        t.join().unwrap();
        assert!(entered.load(Ordering::SeqCst));
    }
}
