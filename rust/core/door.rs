//! The door: each kernel call claims the memory of its operands for its
//! extent, reads on what it reads and writes on what it writes, so that calls
//! from other domains never write memory that another call reads or writes.
//!
//! A call claims all its ranges at once or none of them, and waits while any
//! conflicts with another call's (two ranges conflict where they share a byte
//! and either is written). No call holds a claim while it waits for another,
//! so calls never deadlock on claims. A call's own claims never conflict with
//! each other: a kernel handles its own operands' overlaps.

use std::sync::{Condvar, Mutex};

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
    /// Calls waiting in [`enter`]: a call that leaves wakes them only where
    /// there are any, sparing every other call a system call.
    waiting: usize,
}

static HELD: Mutex<Held> = Mutex::new(Held { next_id: 0, claims: Vec::new(), waiting: 0 });
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
    let mut few = [Claim { lo: 0, hi: 0, write: false }; FEW];
    let (mut n, mut many) = (0, Vec::new());
    for c in claims {
        if n < FEW {
            few[n] = c;
            n += 1;
        } else {
            if many.is_empty() {
                many.extend_from_slice(&few);
            }
            many.push(c);
        }
    }
    if many.is_empty() { f(&few[..n]) } else { f(&many) }
}

/// Claims `wanted` if no other call's claims conflict with it now.
pub fn try_enter(wanted: &[Claim]) -> Option<Pass> {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if free(&held, wanted) { Some(take(&mut held, wanted)) } else { None }
}

/// Claims `wanted`, waiting until no other call's claims conflict with it.
pub fn enter(wanted: &[Claim]) -> Pass {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    while !free(&held, wanted) {
        held.waiting += 1;
        held = RELEASED.wait(held).unwrap_or_else(|e| e.into_inner());
        held.waiting -= 1;
    }
    take(&mut held, wanted)
}

impl Drop for Pass {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        held.claims.retain(|(id, _)| *id != self.id);
        if held.waiting > 0 {
            RELEASED.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
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
