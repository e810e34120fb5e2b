//! The calling thread's CPU time, for the Rust-only timings (`#[ignore]`
//! tests): other processes sharing the machine disturb it less than they do
//! the wall clock.

/// Seconds of CPU time the calling thread has used (Linux).
pub fn thread_cpu_s() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, t: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime");
    t.sec as f64 + t.nsec as f64 * 1e-9
}

/// The least wall-clock time of `runs` runs of `f`, in milliseconds, for
/// the Rust-only timings.
#[cfg(test)]
pub fn best_wall_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}
