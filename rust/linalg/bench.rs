//! Timings of the routines on the cases (ignored by default):
//! `cargo test --release --no-default-features --lib linalg::bench -- --ignored --nocapture`.

use super::scalar::Real;
use super::*;
use crate::core::layout::{Layout, Memory};
use std::time::Instant;

/// A C-contiguous view over `buf`, of `shape`.
fn view<T: Scalar>(buf: &mut [T], shape: &[usize]) -> View {
    let memory = Memory { base: buf.as_mut_ptr() as *mut u8, bytes: std::mem::size_of_val(buf) };
    View::new(Layout::contiguous(T::DTYPE, shape), memory).unwrap()
}

/// The best of three runs of `routine`, in milliseconds.
fn time<T: Scalar>(routine: Routine, shape: &[usize], dsts: &[Vec<usize>], operands: usize) -> f64 {
    let size: usize = shape.iter().product();
    let n = shape[shape.len() - 1];
    // Diagonally dominant, so that every routine succeeds.
    let mut a: Vec<T> = (0..size).map(|i| T::of_real(<T::Real as Real>::of_f64(if (i % (n * n)).is_multiple_of(n + 1) { n as f64 } else { ((i * 7919) % 1000) as f64 / 1000.0 }))).collect();
    let mut b = a.clone();
    let mut outs: Vec<Vec<u128>> = dsts.iter().map(|s| vec![0u128; s.iter().product::<usize>()]).collect();
    let mut best = f64::INFINITY;
    for _ in 0..3 {
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
        let t = Instant::now();
        plan(routine, d, o).unwrap().run().unwrap();
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    best
}

#[test]
#[ignore]
fn timings() {
    let chol = Routine::Cholesky(Triangle::Lower);
    println!("cholesky 10000 × 4²  f64: {:.3} ms", time::<f64>(chol, &[10000, 4, 4], &[vec![10000, 4, 4]], 1));
    println!("qr 10000 × 8² f64: {:.3} ms", time::<f64>(Routine::Qr, &[10000, 8, 8], &[vec![10000, 8, 8], vec![10000, 8, 8]], 1));
    println!("cholesky 1024² f64: {:.1} ms", time::<f64>(chol, &[1024, 1024], &[vec![1024, 1024]], 1));
    println!("cholesky 1024² f32: {:.1} ms", time::<f32>(chol, &[1024, 1024], &[vec![1024, 1024]], 1));
    println!("lu 1024² f64: {:.1} ms", time::<f64>(Routine::Lu, &[1024, 1024], &[vec![1024, 1024], vec![1024], vec![1024]], 1));
    let st = Routine::SolveTriangular { triangle: Triangle::Lower, adjoint: false, unit_diagonal: false };
    println!("solve_triangular 1024² × 1024 f64: {:.1} ms", time::<f64>(st, &[1024, 1024], &[vec![1024, 1024]], 2));
    println!("qr 1024² f64: {:.1} ms", time::<f64>(Routine::Qr, &[1024, 1024], &[vec![1024, 1024], vec![1024, 1024]], 1));
    println!("qr 512² c128: {:.1} ms", time::<Complex<f64>>(Routine::Qr, &[512, 512], &[vec![512, 512], vec![512, 512]], 1));
}
