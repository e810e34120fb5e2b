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

/// How much less time the prefetched way must take before the process
/// leaves the hardware's: where the two are close, the hardware's way
/// loses little, while the prefetched way taken wrongly (a measurement that
/// another process disturbed) costs up to half the speed for the life of
/// the process.
pub const PREFETCHED_MARGIN: f64 = 0.9;

/// Nanoseconds each way took over the loops measured so far (the sum of
/// each loop's least segment time that way), and their count.
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
/// over the same work (each the least of several segments' times, which a
/// preemption or a page fault inflates less than a sum), to the process's;
/// once [`MEASURED_LOOPS`] loops have measured, records the prefetched way
/// where it took less than [`PREFETCHED_MARGIN`] of the hardware's time in
/// all, else the hardware's, unless another loop recorded a choice first.
/// Gives the way to take now: the choice, or [`UNMEASURED`] while there is
/// none.
pub fn decide(prefetched_s: f64, hardware_s: f64) -> Streaming {
    SPENT[0].fetch_add((prefetched_s * 1e9) as u64, Ordering::Relaxed);
    SPENT[1].fetch_add((hardware_s * 1e9) as u64, Ordering::Relaxed);
    if MEASURED.fetch_add(1, Ordering::Relaxed) + 1 >= MEASURED_LOOPS {
        let way = way_of(SPENT[0].load(Ordering::Relaxed), SPENT[1].load(Ordering::Relaxed));
        let _ = CHOICE.compare_exchange(0, 1 + way as u8, Ordering::Relaxed, Ordering::Relaxed);
    }
    choice().unwrap_or(UNMEASURED)
}

/// The way to take where streaming took `prefetched` nanoseconds the
/// prefetched way and `hardware` the hardware's (see [`PREFETCHED_MARGIN`]).
fn way_of(prefetched: u64, hardware: u64) -> Streaming {
    if (prefetched as f64) < PREFETCHED_MARGIN * hardware as f64 { Streaming::Prefetched } else { Streaming::Hardware }
}

/// Forgets the choice and the measurements, so that the next loops that
/// can measure do (tests).
#[cfg(test)]
pub fn forget() {
    CHOICE.store(0, Ordering::Relaxed);
    MEASURED.store(0, Ordering::Relaxed);
    SPENT.iter().for_each(|s| s.store(0, Ordering::Relaxed));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefetched_way_is_taken_only_where_it_is_a_margin_faster() {
        assert_eq!(way_of(1000, 1000), Streaming::Hardware);
        assert_eq!(way_of(950, 1000), Streaming::Hardware);
        assert_eq!(way_of(1100, 1000), Streaming::Hardware);
        assert_eq!(way_of(850, 1000), Streaming::Prefetched);
        assert_eq!(way_of(0, 1), Streaming::Prefetched);
    }
}
