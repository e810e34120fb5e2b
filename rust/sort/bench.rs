//! Timing of `sort` in Rust alone (no OCaml boundary):
//! `cargo test --release --no-default-features --lib sort::bench -- --ignored --nocapture`
//! (`SORT_THREADS=2` runs on two threads; one by default; `SORT_ONLY=int64`
//! runs the cases whose name holds that text; `SORT_REPEAT=n` takes the best
//! of n runs, 3 by default): CPU time on one thread (which other processes disturb less),
//! wall-clock on several; the comparisons with numpy are in `bench/`.

use super::*;
use crate::core::layout::{Layout, Memory};
use crate::core::test_rng::splitmix;
use crate::core::cpu_clock::thread_cpu_s;
use std::time::Instant;

/// Times sorts of `shape` along its last axis, keeping `k`, of elements
/// whose bits `gen` gives.
fn time(name: &str, d: Dtype, shape: &[usize], k: usize, mut gen: impl FnMut(&mut u64) -> u64) {
    if std::env::var("SORT_ONLY").is_ok_and(|only| !name.contains(&only)) {
        return;
    }
    let size: usize = shape.iter().product();
    let w = d.bytes();
    let mut seed = 7;
    let mut x: Vec<u8> = (0..size).flat_map(|_| gen(&mut seed).to_le_bytes()[..w].to_vec()).collect();
    let mut kshape = shape.to_vec();
    *kshape.last_mut().unwrap() = k;
    let ksize: usize = kshape.iter().product();
    let mut v = vec![0u8; ksize * w];
    let mut p = vec![0u8; ksize * 8];
    let mem = |b: &mut Vec<u8>| Memory { base: b.as_mut_ptr(), bytes: b.len() };
    let best = (0..std::env::var("SORT_REPEAT").ok().and_then(|r| r.parse().ok()).unwrap_or(3))
        .map(|_| {
            let xv = View::new(Layout::contiguous(d, shape), mem(&mut x)).unwrap();
            let vv = View::new(Layout::contiguous(d, &kshape), mem(&mut v)).unwrap();
            let pv = View::new(Layout::contiguous(Dtype::Int64, &kshape), mem(&mut p)).unwrap();
            let (t, c) = (Instant::now(), thread_cpu_s());
            plan(shape.len() - 1, false, vv, pv, xv).unwrap().run().unwrap();
            if pool::threads() == 1 { thread_cpu_s() - c } else { t.elapsed().as_secs_f64() }
        })
        .fold(f64::INFINITY, f64::min);
    println!("{name:32} {:10.3} ms", best * 1e3);
}

#[test]
#[ignore]
fn bench() {
    let threads = std::env::var("SORT_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(1);
    pool::set_threads(threads).unwrap();
    let unit = |s: &mut u64| ((splitmix(s) >> 40) as f32 / (1u64 << 24) as f32).to_bits() as u64;
    let normal = |s: &mut u64| (((splitmix(s) >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 1e3).to_bits() as u64;
    time("float32 10M [0,1)", Dtype::Float32, &[10_000_000], 10_000_000, unit);
    time("float32 10M ±500", Dtype::Float32, &[10_000_000], 10_000_000, normal);
    time("int64 10M", Dtype::Int64, &[10_000_000], 10_000_000, splitmix);
    let ten = |s: &mut u64| (((splitmix(s) >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 20.0).to_bits() as u64;
    time("float32 1M ±10", Dtype::Float32, &[1_000_000], 1_000_000, ten);
    time("float32 10K ±10", Dtype::Float32, &[10_000], 10_000, ten);
    time("int64 10K", Dtype::Int64, &[10_000], 10_000, splitmix);
    time("int64 1M", Dtype::Int64, &[1_000_000], 1_000_000, splitmix);
    time("float32 rows [1000; 1000]", Dtype::Float32, &[1000, 1000], 1000, normal);
    time("float32 rows [10000; 1000]", Dtype::Float32, &[10_000, 1000], 1000, normal);
    time("float32 rows [20000; 100]", Dtype::Float32, &[20_000, 100], 100, normal);
    time("float32 top 100 of 10M", Dtype::Float32, &[10_000_000], 100, normal);
}
