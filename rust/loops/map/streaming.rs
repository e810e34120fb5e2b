//! How a loop streams operands that do not fit in the caches, chosen once
//! per process by measuring both ways on the first loop that can tell.
//!
//! CPUs differ here more than anywhere: on an Intel Xeon, tiles sized to
//! the first-level cache with each tile's runs prefetched two tiles ahead
//! streamed a + b a fifth faster than long tiles left to the hardware; on
//! an AMD EPYC (Zen 4) the bursts of prefetches cost 30-50% and long tiles
//! alone ran at the speed of a plain loop. No cache size or model number
//! predicts which, so the loop measures: see `Loop::calibrate` in the
//! parent module. The choice changes how a loop walks its elements, never
//! a value it computes.

use std::sync::atomic::{AtomicU8, Ordering};

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

/// The process's measured choice, if made.
pub fn choice() -> Option<Streaming> {
    match CHOICE.load(Ordering::Relaxed) {
        1 => Some(Streaming::Prefetched),
        2 => Some(Streaming::Hardware),
        _ => None,
    }
}

/// Records the way that took less time, `prefetched_s` against
/// `hardware_s` seconds over the same work, unless another loop recorded
/// one first; gives the choice that holds.
pub fn decide(prefetched_s: f64, hardware_s: f64) -> Streaming {
    let faster = if prefetched_s < hardware_s { 1 } else { 2 };
    let _ = CHOICE.compare_exchange(0, faster, Ordering::Relaxed, Ordering::Relaxed);
    choice().expect("a choice is recorded")
}

/// Forgets the choice, so that the next loop that can measure does (tests).
#[cfg(test)]
pub fn forget() {
    CHOICE.store(0, Ordering::Relaxed);
}
