//! Timings of the moves, run by hand:
//! `cargo test --release --no-default-features --lib moves::bench -- --ignored --nocapture`.
//! Tests never assert times; these print them.

use super::gather;
use super::scatter::{self, Combine};
use crate::core::call::Call;
use crate::core::dtype::Dtype;
use crate::core::layout::{Layout, Memory, View};
use crate::core::test_rng::splitmix;
use std::time::Instant;

fn view(buf: &mut [u64], d: Dtype, shape: &[usize]) -> View {
    let memory = Memory { base: buf.as_mut_ptr() as *mut u8, bytes: buf.len() * 8 };
    View::new(Layout::contiguous(d, shape), memory).unwrap()
}

/// The best of five runs of `f`, in milliseconds.
fn best(mut f: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

#[test]
#[ignore]
fn time_moves() {
    let n = 10_000_000;
    let mut s = 1u64;
    let mut x = vec![0u64; n / 2];
    let mut dst = vec![0u64; n / 2];
    let mut idx: Vec<u64> = (0..n).map(|_| splitmix(&mut s) % n as u64).collect();
    let ms = best(|| {
        let (d, i, xv) = (view(&mut dst, Dtype::Float32, &[n]), view(&mut idx, Dtype::Int64, &[n]), view(&mut x, Dtype::Float32, &[n]));
        gather::plan(0, d, i, xv).unwrap().run().unwrap()
    });
    println!("take 10M random of 10M float32: {ms:.2} ms");
    let t = 1_000_000;
    let mut into = vec![0u64; t / 2];
    let mut out = vec![0u64; t / 2];
    let mut pos: Vec<u64> = (0..n).map(|_| splitmix(&mut s) % t as u64).collect();
    for c in [Combine::Add, Combine::Set] {
        let ms = best(|| {
            let (d, i, p, u) = (
                view(&mut out, Dtype::Float32, &[t]),
                view(&mut into, Dtype::Float32, &[t]),
                view(&mut pos, Dtype::Int64, &[n]),
                view(&mut x, Dtype::Float32, &[n]),
            );
            scatter::plan(c, false, 0, d, i, p, u).unwrap().run().unwrap()
        });
        println!("scatter {c:?} 10M float32 into 1M: {ms:.2} ms");
    }
}
