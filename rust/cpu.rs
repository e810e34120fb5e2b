//! The host's instruction set: the baseline the library requires, checked
//! once, and the wrapper that runs kernel loops compiled for it.

use std::sync::OnceLock;

/// Checks that the host runs the library's baseline: on x86-64, AVX2, FMA,
/// F16C, BMI2, SSE4.2 and POPCNT, with the system saving the AVX registers
/// (which detecting AVX2 includes). Other architectures have none.
pub fn check() -> Result<(), String> {
    #[cfg(target_arch = "x86_64")]
    {
        verdict(&[
            ("AVX2", std::arch::is_x86_feature_detected!("avx2")),
            ("FMA", std::arch::is_x86_feature_detected!("fma")),
            ("F16C", std::arch::is_x86_feature_detected!("f16c")),
            ("BMI2", std::arch::is_x86_feature_detected!("bmi2")),
            ("SSE4.2", std::arch::is_x86_feature_detected!("sse4.2")),
            ("POPCNT", std::arch::is_x86_feature_detected!("popcnt")),
        ])
    }
    #[cfg(not(target_arch = "x86_64"))]
    Ok(())
}

/// The verdict on an x86-64 host given whether it has each feature.
fn verdict(features: &[(&str, bool)]) -> Result<(), String> {
    let missing: Vec<&str> = features.iter().filter(|(_, ok)| !ok).map(|(name, _)| *name).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "nx.cpu needs an x86-64 host with AVX2, FMA, F16C, BMI2, SSE4.2 and POPCNT, \
             the system saving AVX state; this one lacks {}",
            missing.join(", ")
        ))
    }
}

fn baseline() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| check().is_ok())
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c,bmi2,popcnt,sse4.2")]
unsafe fn with_baseline<T>(f: impl FnOnce() -> T) -> T {
    f()
}

/// Runs a kernel loop compiled, where it inlines, for the baseline's
/// instructions when the host has them, and plainly otherwise. The bits are
/// the same either way: the kinds use only IEEE operations and explicit
/// fused multiply-adds.
#[inline]
pub fn run<T>(f: impl FnOnce() -> T) -> T {
    #[cfg(target_arch = "x86_64")]
    if baseline() {
        // SAFETY: `baseline` checked at run time that the host has every
        // feature `with_baseline` is compiled for.
        return unsafe { with_baseline(f) };
    }
    f()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_host_without_a_feature_is_refused_by_name() {
        let e = super::verdict(&[("AVX2", true), ("FMA", false), ("BMI2", false)]).unwrap_err();
        assert!(e.ends_with("lacks FMA, BMI2"), "{e}");
        assert!(super::verdict(&[("AVX2", true)]).is_ok());
    }

    #[test]
    fn this_host_passes_and_run_runs() {
        assert_eq!(super::check(), Ok(()));
        assert_eq!(super::run(|| 6 * 7), 42);
    }
}
