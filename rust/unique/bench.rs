//! Timing of `unique` in Rust alone (no OCaml boundary):
//! `cargo test --release --no-default-features --lib unique::bench -- --ignored --nocapture`
//! (`UNIQUE_THREADS=2` runs on two threads; one by default). The best of
//! three: CPU time on one thread, wall-clock on several.

use super::*;
use crate::core::cpu_clock::thread_cpu_s;
use crate::core::layout::{Layout, Memory};
use crate::core::test_rng::splitmix;
use std::time::Instant;

/// Times the numbering of `n` rows of `w` words whose words `gen` gives,
/// into `m` entries of first and counts.
fn time(name: &str, n: usize, w: usize, m: usize, mut gen: impl FnMut(&mut u64) -> u64) {
    let mut seed = 11;
    let mut keys: Vec<u64> = (0..n * w).map(|_| gen(&mut seed)).collect();
    let (mut ids, mut first, mut counts, mut count) = (vec![0u64; n], vec![0u64; m], vec![0u64; m], vec![0u64; 1]);
    let mem = |b: &mut Vec<u64>| Memory { base: b.as_mut_ptr() as *mut u8, bytes: b.len() * 8 };
    let best = (0..3)
        .map(|_| {
            let v = |m: Memory, s: &[usize]| View::new(Layout::contiguous(Dtype::Int64, s), m).unwrap();
            let p = plan(v(mem(&mut ids), &[n]), v(mem(&mut first), &[m]), v(mem(&mut counts), &[m]), v(mem(&mut count), &[]), v(mem(&mut keys), &[n, w]))
                .unwrap();
            let (t, c) = (Instant::now(), thread_cpu_s());
            p.run().unwrap();
            if pool::threads() == 1 { thread_cpu_s() - c } else { t.elapsed().as_secs_f64() }
        })
        .fold(f64::INFINITY, f64::min);
    println!("{name:36} {:10.3} ms ({} keys)", best * 1e3, count[0]);
}

#[test]
#[ignore]
fn bench() {
    let threads = std::env::var("UNIQUE_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(1);
    pool::set_threads(threads).unwrap();
    let n = 10_000_000;
    let spread: Vec<u64> = { let mut s = 5; (0..1000).map(|_| splitmix(&mut s)).collect() };
    time("int64 10M, 1000 keys in [0, 1000)", n, 1, 1000, |s| splitmix(s) % 1000);
    time("int64 10M, 1000 keys spread", n, 1, 1000, |s| spread[(splitmix(s) % 1000) as usize]);
    let few: Vec<u64> = { let mut s = 6; (0..100).map(|_| splitmix(&mut s)).collect() };
    time("int64 10M, 100 keys spread", n, 1, 100, |s| few[(splitmix(s) % 100) as usize]);
    time("int64 1M, 1000 keys spread", n / 10, 1, 1000, |s| spread[(splitmix(s) % 1000) as usize]);
    time("int64 1M, all distinct", n / 10, 1, n / 10, splitmix);
    time("int64 100K, all distinct", n / 100, 1, n / 100, splitmix);
    time("int32 pairs [10M; 2] as words, 10K keys", n, 1, 10_000, |s| (splitmix(s) % 100) | (splitmix(s) % 100) << 32);
}
