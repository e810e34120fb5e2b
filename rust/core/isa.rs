//! The instruction sets kernels run on x86-64: the crate's baseline (AVX2,
//! FMA, F16C, BMI2, SSE4.2, POPCNT), which every kernel has, and AVX-512
//! (F, VL, DQ, BW), which kernels with a wider compilation take where the
//! CPU has it. The bits never depend on which runs.
//!
//! `NX_CPU_ISA=avx2`, read once when a kernel first asks, keeps every
//! kernel to the baseline whatever the CPU has, so that the baseline's
//! speed can be measured on a machine with AVX-512 (`make bench ISA=avx2`).
//! Any other value, or none, lets kernels take the widest the CPU has.

/// The environment variable that can force the baseline.
pub const ISA_VAR: &str = "NX_CPU_ISA";

/// Whether kernels run their AVX-512 compilation: the CPU has AVX-512 F,
/// VL, DQ and BW and [`ISA_VAR`] does not say `avx2` (both read once).
#[cfg(target_arch = "x86_64")]
#[inline]
pub fn avx512() -> bool {
    #[cfg(test)]
    if BASELINE.get() {
        return false;
    }
    static WIDE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WIDE.get_or_init(|| {
        std::env::var(ISA_VAR).map_or(true, |v| !v.eq_ignore_ascii_case("avx2"))
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512bw")
    })
}

/// No AVX-512 off x86-64.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub fn avx512() -> bool {
    false
}

/// The name of the path kernels take, for reports: `"avx512"`, `"avx2"`
/// (x86-64's baseline) or `"baseline"` elsewhere.
pub fn name() -> &'static str {
    if avx512() {
        "avx512"
    } else if cfg!(target_arch = "x86_64") {
        "avx2"
    } else {
        "baseline"
    }
}

#[cfg(test)]
thread_local! {
    /// Whether this thread's kernels run their baseline compilation
    /// whatever the CPU has (set by [`baseline_here`]).
    static BASELINE: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Makes this thread's kernels run their baseline compilation (`true`) or
/// the widest (`false`), for tests that compare the two.
#[cfg(test)]
pub(crate) fn baseline_here(on: bool) {
    BASELINE.set(on);
}
