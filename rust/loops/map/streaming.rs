//! How a loop streams operands that do not fit in the caches, chosen once
//! per process by measuring both ways on the first loop that can tell.
//!
//! CPUs differ here more than anywhere: on an Intel Xeon, tiles sized to
//! the first-level cache with each tile's runs prefetched two tiles ahead
//! streamed a + b a fifth faster than long tiles left to the hardware; on
//! an AMD EPYC (Zen 4) the bursts of prefetches cost 30-50% and long tiles
//! alone ran at the speed of a plain loop. No cache size or model number
//! predicts which, so the first loops that can tell measure both ways
//! (see `Loop::calibrate` in the parent module) and the process takes the
//! faster from then on. The choice changes how a loop walks its elements, never
//! a value it computes.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// A way to stream operands from memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Streaming {
    /// Tiles whose columns and runs fit the first-level cache, each tile's
    /// runs prefetched a few tiles ahead.
    Prefetched,
    /// Long tiles, the fetching left to the hardware prefetchers.
    Hardware,
}

/// The way taken before the process has measured: the hardware's, which
/// loses less where it is the slower one (a fifth, against up to a half).
pub const UNMEASURED: Streaming = Streaming::Hardware;

/// The process's choice: 0 while unmeasured, else 1 + its index.
static CHOICE: AtomicU8 = AtomicU8::new(0);

/// Loops that measure before the choice is made: the first of a process
/// often writes pages it touches first, whose faults fall on its segments
/// unevenly, so one loop alone can mislead.
pub const MEASURED_LOOPS: u64 = 3;

/// Nanoseconds spent each way by the loops measured so far, and their count.
static SPENT: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static MEASURED: AtomicU64 = AtomicU64::new(0);

/// The process's measured choice, if made.
pub fn choice() -> Option<Streaming> {
    match CHOICE.load(Ordering::Relaxed) {
        1 => Some(Streaming::Prefetched),
        2 => Some(Streaming::Hardware),
        _ => None,
    }
}

/// Adds a loop's measurement, `prefetched_s` against `hardware_s` seconds
/// over the same work, to the process's; once [`MEASURED_LOOPS`] loops have
/// measured, records the way that took less time in all, unless another
/// loop recorded one first. Gives the way to take now: the choice, or
/// [`UNMEASURED`] while there is none.
pub fn decide(prefetched_s: f64, hardware_s: f64) -> Streaming {
    SPENT[0].fetch_add((prefetched_s * 1e9) as u64, Ordering::Relaxed);
    SPENT[1].fetch_add((hardware_s * 1e9) as u64, Ordering::Relaxed);
    if MEASURED.fetch_add(1, Ordering::Relaxed) + 1 >= MEASURED_LOOPS {
        let faster = if SPENT[0].load(Ordering::Relaxed) < SPENT[1].load(Ordering::Relaxed) { 1 } else { 2 };
        let _ = CHOICE.compare_exchange(0, faster, Ordering::Relaxed, Ordering::Relaxed);
    }
    choice().unwrap_or(UNMEASURED)
}

/// Forgets the choice and the measurements, so that the next loops that
/// can measure do (tests).
#[cfg(test)]
pub fn forget() {
    CHOICE.store(0, Ordering::Relaxed);
    MEASURED.store(0, Ordering::Relaxed);
    SPENT.iter().for_each(|s| s.store(0, Ordering::Relaxed));
}
