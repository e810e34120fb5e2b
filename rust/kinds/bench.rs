//! Timing of the kinds' slice forms over 10M elements, one thread, in
//! each compilation the CPU runs (see `wide.rs`):
//! `cargo test --release --no-default-features --lib kinds::bench -- --ignored --nocapture`
//! (`KINDS_BENCH=exp,log` keeps the kinds whose names are listed). Times
//! are the calling thread's CPU time, which other processes sharing the
//! machine disturb less than the wall clock does.

use super::*;
use crate::core::cpu_clock::thread_cpu_s;

const N: usize = 10_000_000;

/// `n` pseudo-random values uniform in `[lo, hi)`, the same at every run.
fn uniform(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

/// The best of a few runs of `f` over `x`, in ns per element: over the
/// whole of `x`, and over its first 4096 elements (in cache) many times.
fn time<T: Copy + Default>(x: &[T], f: impl Fn(&[T], &mut [T])) -> (f64, f64) {
    let mut out = vec![T::default(); x.len()];
    f(x, &mut out); // warm the pages
    let big = (0..5)
        .map(|_| {
            let t = thread_cpu_s();
            f(x, &mut out);
            (thread_cpu_s() - t) * 1e9 / x.len() as f64
        })
        .fold(f64::INFINITY, f64::min);
    const M: usize = 4096;
    let small = (0..5)
        .map(|_| {
            let t = thread_cpu_s();
            for _ in 0..x.len() / M {
                f(&x[..M], &mut out[..M]);
            }
            (thread_cpu_s() - t) * 1e9 / (x.len() / M * M) as f64
        })
        .fold(f64::INFINITY, f64::min);
    (big, small)
}

fn copy_f32(x: &[f32], out: &mut [f32]) {
    out.copy_from_slice(x)
}

fn copy_f64(x: &[f64], out: &mut [f64]) {
    out.copy_from_slice(x)
}

/// The scalar functions in a caller's loop, as other modules call them.
fn exp_loop_f32(x: &[f32], out: &mut [f32]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = exp_f32(v);
    }
}

fn exp_loop_f64(x: &[f64], out: &mut [f64]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = exp_f64(v);
    }
}

fn log_loop_f32(x: &[f32], out: &mut [f32]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = log_f32(v);
    }
}

fn log_loop_f64(x: &[f64], out: &mut [f64]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = log_f64(v);
    }
}

type Kind = (
    &'static str,
    f64,
    f64,
    fn(&[f32], &mut [f32]),
    fn(&[f64], &mut [f64]),
);

fn kinds() -> Vec<Kind> {
    vec![
        ("copy", -1.0, 1.0, copy_f32, copy_f64),
        ("exp", -20.0, 20.0, exp_f32_slice, exp_f64_slice),
        ("log", 1e-3, 1e3, log_f32_slice, log_f64_slice),
        ("exp2", -20.0, 20.0, exp2_f32_slice, exp2_f64_slice),
        ("expm1", -5.0, 5.0, expm1_f32_slice, expm1_f64_slice),
        ("log2", 1e-3, 1e3, log2_f32_slice, log2_f64_slice),
        ("log1p", -0.9, 100.0, log1p_f32_slice, log1p_f64_slice),
        ("sin", -10.0, 10.0, sin_f32_slice, sin_f64_slice),
        ("cos", -10.0, 10.0, cos_f32_slice, cos_f64_slice),
        ("tan", -10.0, 10.0, tan_f32_slice, tan_f64_slice),
        ("tanh", -5.0, 5.0, tanh_f32_slice, tanh_f64_slice),
        ("sinh", -5.0, 5.0, sinh_f32_slice, sinh_f64_slice),
        ("cosh", -5.0, 5.0, cosh_f32_slice, cosh_f64_slice),
        ("erf", -3.0, 3.0, erf_f32_slice, erf_f64_slice),
        ("asin", -1.0, 1.0, asin_f32_slice, asin_f64_slice),
        ("acos", -1.0, 1.0, acos_f32_slice, acos_f64_slice),
        ("atan", -10.0, 10.0, atan_f32_slice, atan_f64_slice),
        ("asinh", -10.0, 10.0, asinh_f32_slice, asinh_f64_slice),
        ("acosh", 1.0, 10.0, acosh_f32_slice, acosh_f64_slice),
        ("atanh", -0.99, 0.99, atanh_f32_slice, atanh_f64_slice),
        ("rsqrt", 1e-3, 1e3, rsqrt_f32_slice, rsqrt_f64_slice),
        ("exp()", -20.0, 20.0, exp_loop_f32, exp_loop_f64),
        ("log()", 1e-3, 1e3, log_loop_f32, log_loop_f64),
    ]
}

/// A kind of two operands: its name, the ranges of its first and second
/// operands, its slice forms.
type Binary = (
    &'static str,
    (f64, f64),
    (f64, f64),
    fn(&[f32], &[f32], &mut [f32]),
    fn(&[f64], &[f64], &mut [f64]),
);

fn binary_kinds() -> Vec<Binary> {
    vec![
        (
            "atan2",
            (-10.0, 10.0),
            (-10.0, 10.0),
            atan2_f32_slice,
            atan2_f64_slice,
        ),
        (
            "hypot",
            (-10.0, 10.0),
            (-10.0, 10.0),
            hypot_f32_slice,
            hypot_f64_slice,
        ),
        (
            "pow",
            (0.1, 10.0),
            (-10.0, 10.0),
            pow_f32_slice,
            pow_f64_slice,
        ),
    ]
}

#[test]
#[ignore]
fn bench() {
    let kinds = kinds();
    let only = std::env::var("KINDS_BENCH").ok();
    if only.as_deref() == Some("special") {
        return special();
    }
    let listed = |name: &str| {
        only.as_ref()
            .is_none_or(|o| o.split(',').any(|k| k == name))
    };
    for &(name, lo, hi, s32, s64) in &kinds {
        if !listed(name) {
            continue;
        }
        let x64 = uniform(lo, hi, N);
        let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
        wide::on_each_compilation(|isa| {
            let (t32, c32) = time(&x32, s32);
            let (t64, c64) = time(&x64, s64);
            println!(
                "{name:6} f32 {t32:6.2} ({c32:5.2} in cache)   f64 {t64:6.2} ({c64:5.2})  ns/elem on [{lo}, {hi}], {isa}"
            );
        });
    }
    for (name, (lo, hi), (lo2, hi2), s32, s64) in binary_kinds() {
        if !listed(name) {
            continue;
        }
        let x64 = uniform(lo, hi, N);
        let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
        // The second sample reversed, not to follow the first.
        let y64: Vec<f64> = uniform(lo2, hi2, N).into_iter().rev().collect();
        let y32: Vec<f32> = y64.iter().map(|&v| v as f32).collect();
        wide::on_each_compilation(|isa| {
            let (t32, c32) = time(&x32, |x, o| s32(x, &y32[..x.len()], o));
            let (t64, c64) = time(&x64, |x, o| s64(x, &y64[..x.len()], o));
            println!(
                "{name:6} f32 {t32:6.2} ({c32:5.2} in cache)   f64 {t64:6.2} ({c64:5.2})  ns/elem on [{lo}, {hi}] x [{lo2}, {hi2}], {isa}"
            );
        });
    }
}

/// Arguments that take the slice forms' second pass: `KINDS_BENCH=special`.
fn special() {
    let base = uniform(-10.0, 0.0, N);
    let pick = uniform(0.0, 1.0, N);
    type Case = (
        &'static str,
        Vec<f64>,
        fn(&[f32], &mut [f32]),
        fn(&[f64], &mut [f64]),
    );
    let cases: Vec<Case> = vec![
        (
            "exp, half -inf (masked softmax)",
            base.iter()
                .zip(&pick)
                .map(|(&x, &p)| if p < 0.5 { f64::NEG_INFINITY } else { x })
                .collect(),
            exp_f32_slice,
            exp_f64_slice,
        ),
        (
            "exp, on [-1000, 1000]",
            uniform(-1000.0, 1000.0, N),
            exp_f32_slice,
            exp_f64_slice,
        ),
        (
            "exp, one NaN in 500",
            base.iter()
                .zip(&pick)
                .map(|(&x, &p)| if p < 0.002 { f64::NAN } else { x })
                .collect(),
            exp_f32_slice,
            exp_f64_slice,
        ),
        (
            "log, a tenth zeros",
            base.iter()
                .zip(&pick)
                .map(|(&x, &p)| if p < 0.1 { 0.0 } else { -x })
                .collect(),
            log_f32_slice,
            log_f64_slice,
        ),
        (
            "tanh, on [-100, 100]",
            uniform(-100.0, 100.0, N),
            tanh_f32_slice,
            tanh_f64_slice,
        ),
    ];
    for (name, x64, s32, s64) in cases {
        let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
        let (t32, c32) = time(&x32, s32);
        let (t64, c64) = time(&x64, s64);
        println!(
            "{name:34} f32 {t32:6.2} ({c32:5.2} in cache)   f64 {t64:6.2} ({c64:5.2})  ns/elem"
        );
    }
    // Every element a NaN: every block by the kind's full path.
    let x64 = vec![f64::NAN; N];
    let x32 = vec![f32::NAN; N];
    for &(name, _, _, s32, s64) in &kinds() {
        let (t32, c32) = time(&x32, s32);
        let (t64, c64) = time(&x64, s64);
        println!("{name:6} of NaNs  f32 {t32:6.2} ({c32:5.2} in cache)   f64 {t64:6.2} ({c64:5.2})  ns/elem");
    }
}
