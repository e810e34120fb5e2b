//! Timings of the routines on the cases (ignored by default):
//! `cargo test --release --no-default-features --lib linalg::bench -- --ignored --nocapture`.

use super::scalar::Real;
use super::*;
use crate::core::layout::{Layout, Memory};
use crate::core::cpu_clock::thread_cpu_s;
use std::time::Instant;

/// A C-contiguous view over `buf`, of `shape`.
fn view<T: Scalar>(buf: &mut [T], shape: &[usize]) -> View {
    let memory = Memory { base: buf.as_mut_ptr() as *mut u8, bytes: std::mem::size_of_val(buf) };
    View::new(Layout::contiguous(T::DTYPE, shape), memory).unwrap()
}

/// The best of three runs (`LINALG_RUNS` of them where set, for a
/// profile) of `routine`, in milliseconds of this thread's CPU time where
/// the pool has one thread (the machine is shared), else of the wall clock.
fn time<T: Scalar>(routine: Routine, shape: &[usize], dsts: &[Vec<usize>], operands: usize) -> f64 {
    let size: usize = shape.iter().product();
    let n = shape[shape.len() - 1];
    // Diagonally dominant, so that every routine succeeds; for lu, values
    // of a hash in [0, 1), so that its rows are interchanged (as in
    // bench/'s case).
    let dominant = routine != Routine::Lu;
    let value = |i: usize| {
        if dominant && (i % (n * n)).is_multiple_of(n + 1) {
            n as f64
        } else if dominant {
            ((i * 7919) % 1000) as f64 / 1000.0
        } else {
            ((i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) as f64 / (1u64 << 53) as f64
        }
    };
    let mut a: Vec<T> = (0..size).map(|i| T::of_real(<T::Real as Real>::of_f64(value(i)))).collect();
    let mut b = a.clone();
    let mut outs: Vec<Vec<u128>> = dsts.iter().map(|s| vec![0u128; s.iter().product::<usize>()]).collect();
    let mut best = f64::INFINITY;
    let runs = std::env::var("LINALG_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(3);
    for _ in 0..runs {
        let d: Vec<View> = dsts
            .iter()
            .zip(&mut outs)
            .map(|(s, o)| {
                let dtype = if s.len() < shape.len() { Dtype::Int64 } else { T::DTYPE };
                let memory = Memory { base: o.as_mut_ptr() as *mut u8, bytes: o.len() * 16 };
                View::new(Layout::contiguous(dtype, s), memory).unwrap()
            })
            .collect();
        let mut o = vec![view(&mut a, shape)];
        if operands == 2 {
            o.push(view(&mut b, shape));
        }
        let (t, c) = (Instant::now(), thread_cpu_s());
        plan(routine, d, o).unwrap().run().unwrap();
        let s = if crate::core::pool::threads() == 1 { thread_cpu_s() - c } else { t.elapsed().as_secs_f64() };
        best = best.min(s * 1e3);
    }
    best
}

/// The best of three runs of `f`, in milliseconds.
fn best(f: impl FnMut()) -> f64 {
    crate::core::cpu_clock::best_wall_ms(3, f)
}

#[test]
#[ignore]
fn timings() {
    let chol = Routine::Cholesky(Triangle::Lower);
    let st = Routine::SolveTriangular { triangle: Triangle::Lower, adjoint: false, unit_diagonal: false };
    for threads in [1, 2] {
        crate::core::pool::set_threads(threads).unwrap();
        println!("-- {threads} thread(s), {}", crate::core::isa::name());
        for ld in [1024, 1032] {
            let (m, k) = (1024, 256);
            let a: Vec<f64> = (0..ld * k).map(|i| (i % 17) as f64).collect();
            let f: Vec<f64> = (0..k * m).map(|i| (i % 13) as f64).collect();
            let mut c = vec![0f64; ld * m];
            let ms = best(|| gemm::sub_product(&mut c, ld, m, &a, ld, gemm::Coef { f: &f, ks: 1, cs: k, conj: false }, k, m, gemm::Band::Full, true));
            println!("gemm 1024 × 256 × 1024 f64, ld {ld}: {ms:.1} ms, {:.1} GFMA/s", (m * m * k) as f64 / ms / 1e6);
        }
        println!("cholesky 10000 × 4²  f64: {:.3} ms", time::<f64>(chol, &[10000, 4, 4], &[vec![10000, 4, 4]], 1));
        println!("qr 10000 × 8² f32: {:.3} ms", time::<f32>(Routine::Qr, &[10000, 8, 8], &[vec![10000, 8, 8], vec![10000, 8, 8]], 1));
        println!("cholesky 1024² f64: {:.1} ms", time::<f64>(chol, &[1024, 1024], &[vec![1024, 1024]], 1));
        println!("cholesky 1024² f32: {:.1} ms", time::<f32>(chol, &[1024, 1024], &[vec![1024, 1024]], 1));
        println!("lu 1024² f64: {:.1} ms", time::<f64>(Routine::Lu, &[1024, 1024], &[vec![1024, 1024], vec![1024], vec![1024]], 1));
        println!("solve_triangular 1024² × 1024 f64: {:.1} ms", time::<f64>(st, &[1024, 1024], &[vec![1024, 1024]], 2));
        println!("qr 1024² f64: {:.1} ms", time::<f64>(Routine::Qr, &[1024, 1024], &[vec![1024, 1024], vec![1024, 1024]], 1));
        println!("qr 512² c128: {:.1} ms", time::<Complex<f64>>(Routine::Qr, &[512, 512], &[vec![512, 512], vec![512, 512]], 1));
    }
}

/// One routine's best time, for profiling and before/after comparisons:
/// `LINALG_ONE` names it (cholesky, cholesky32, cholesky_batch (10000 of
/// 4 × 4), lu, solve, qr, cqr),
/// `LINALG_N` its size (1024), `LINALG_THREADS` the pool's threads (1).
#[test]
#[ignore]
fn one() {
    let var = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let n: usize = var("LINALG_N", "1024").parse().unwrap();
    crate::core::pool::set_threads(var("LINALG_THREADS", "1").parse().unwrap()).unwrap();
    let (sq, idx) = (vec![n, n], vec![n]);
    let st = Routine::SolveTriangular { triangle: Triangle::Lower, adjoint: false, unit_diagonal: false };
    let name = var("LINALG_ONE", "lu");
    let ms = match name.as_str() {
        "cholesky" => time::<f64>(Routine::Cholesky(Triangle::Lower), &sq, std::slice::from_ref(&sq), 1),
        "cholesky32" => time::<f32>(Routine::Cholesky(Triangle::Lower), &sq, std::slice::from_ref(&sq), 1),
        "cholesky_batch" => time::<f64>(Routine::Cholesky(Triangle::Lower), &[10000, 4, 4], &[vec![10000, 4, 4]], 1),
        "lu" => time::<f64>(Routine::Lu, &sq, &[sq.clone(), idx.clone(), idx], 1),
        "solve" => time::<f64>(st, &sq, std::slice::from_ref(&sq), 2),
        "qr" => time::<f64>(Routine::Qr, &sq, &[sq.clone(), sq.clone()], 1),
        "cqr" => time::<Complex<f64>>(Routine::Qr, &sq, &[sq.clone(), sq.clone()], 1),
        other => panic!("no routine {other}"),
    };
    println!("{name} {n}² f64, {} thread(s): {ms:.2} ms", crate::core::pool::threads());
}
