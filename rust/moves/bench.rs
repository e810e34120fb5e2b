//! Timings of the moves, run by hand:
//! `cargo test --release --no-default-features --lib moves::bench -- --ignored --nocapture --test-threads=1`.
//! Tests never assert times; these print them. Also the host memory a
//! narrow float's scatter Add holds, measured by counting the allocator's
//! bytes during the call, beside the contract's formulas.

use super::assemble;
use super::fold;
use super::gather;
use super::gather_ranges;
use super::scatter::{self, Combine, Host};
use crate::core::alloc_count::peak_bytes;
use crate::core::call::Call;
use crate::core::cpu_clock::thread_cpu_s;
use crate::core::dtype::Dtype;
use crate::core::layout::{Layout, Memory, View};
use crate::core::pool;
use crate::core::test_rng::splitmix;
use crate::loops::pad::{Pad, Window};
use std::time::Instant;

fn view(buf: &mut [u64], d: Dtype, shape: &[usize]) -> View {
    let memory = Memory { base: buf.as_mut_ptr() as *mut u8, bytes: buf.len() * 8 };
    View::new(Layout::contiguous(d, shape), memory).unwrap()
}

/// The best of five runs of `f`, in milliseconds.
fn best(f: impl FnMut()) -> f64 {
    crate::core::cpu_clock::best_wall_ms(5, f)
}

/// The median of seven runs of `f` after one more, in milliseconds: the
/// thread's CPU time on one thread (which other processes on a shared
/// machine disturb less), else wall-clock time.
fn median(mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..7)
        .map(|_| {
            let (t, c) = (Instant::now(), thread_cpu_s());
            f();
            if pool::threads() == 1 { (thread_cpu_s() - c) * 1e3 } else { t.elapsed().as_secs_f64() * 1e3 }
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[3]
}

/// The bench's cases of the moves (`bench/kernel_cases.ml`), on 1 thread
/// and on every core: take, take_rows, scatter Set (unique, in place) and
/// Add, ranges and assemble, each the median of seven runs.
/// `MOVES_CASE=take,ranges` runs those alone.
#[test]
#[ignore]
fn time_moves() {
    let mut s = 1u64;
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let only = std::env::var("MOVES_CASE").unwrap_or_default();
    let want = |c: &str| only.is_empty() || only.split(',').any(|o| o == c);
    let report = |name: &str, f: &mut dyn FnMut()| {
        for threads in [1, all] {
            pool::set_threads(threads).unwrap();
            println!("{name}, {threads} threads: {:.3} ms", median(&mut *f));
        }
    };
    if want("take_rows") {
        for (rows, m) in [(1_000_000, 100_000), (100_000, 10_000)] {
            let mut x: Vec<u64> = (0..rows * 32).map(|_| splitmix(&mut s)).collect();
            let mut idx: Vec<u64> = (0..m).map(|_| splitmix(&mut s) % rows as u64).collect();
            let mut dst = vec![0u64; m * 32];
            report(&format!("take_rows [{rows}; 64] by {m}"), &mut || {
                let memory = Memory { base: idx.as_mut_ptr() as *mut u8, bytes: m * 8 };
                let layout = Layout { strides: vec![1, 0], ..Layout::contiguous(Dtype::Int64, &[m, 64]) };
                let i = View::new(layout, memory).unwrap();
                let (d, xv) = (view(&mut dst, Dtype::Float32, &[m, 64]), view(&mut x, Dtype::Float32, &[rows, 64]));
                gather::plan(0, d, i, xv).unwrap().run().unwrap()
            });
        }
    }
    if want("take") {
        for n in [10_000_000, 1_000_000] {
            let mut x: Vec<u64> = (0..n / 2).map(|_| splitmix(&mut s)).collect();
            let mut dst = vec![0u64; n / 2];
            let mut idx: Vec<u64> = (0..n).map(|_| splitmix(&mut s) % n as u64).collect();
            report(&format!("take {n} of {n}"), &mut || {
                let (d, i, xv) = (view(&mut dst, Dtype::Float32, &[n]), view(&mut idx, Dtype::Int64, &[n]), view(&mut x, Dtype::Float32, &[n]));
                gather::plan(0, d, i, xv).unwrap().run().unwrap()
            });
        }
    }
    if want("scatter_set") {
        for (n, m) in [(10_000_000, 1_000_000), (1_000_000, 100_000)] {
            let step = (n / m) as u64;
            let mut into: Vec<u64> = (0..n / 2).map(|_| splitmix(&mut s)).collect();
            let mut upd: Vec<u64> = (0..m / 2).map(|_| splitmix(&mut s)).collect();
            let mut pos: Vec<u64> = (0..m as u64).map(|i| i * step + splitmix(&mut s) % step).collect();
            // The host's strategy, under unique (updates split) and
            // without it (targets split past the cache), then as if its
            // largest cache held every target (one thread; targets past
            // L2 are prefetched all the same, unless they climb).
            let largest = crate::core::caches::largest();
            for (unique, cache) in [(true, largest), (false, largest), (true, usize::MAX)] {
                report(&format!("scatter_set {m} into {n}, in place, unique {unique}, cache {cache}"), &mut || {
                    let (d, p, u) = (view(&mut into, Dtype::Float32, &[n]), view(&mut pos, Dtype::Int64, &[m]), view(&mut upd, Dtype::Float32, &[m]));
                    let host = Host { threads: pool::threads(), cache };
                    scatter::plan(Combine::Set, unique, 0, d.clone(), d, p, u).unwrap().on(host).run().unwrap()
                });
            }
        }
    }
    if want("scatter_add") {
        for (n, m) in [(1_000_000, 10_000_000), (100_000, 1_000_000)] {
            let mut into: Vec<u64> = (0..n / 2).map(|_| 0x3f80_0000_3f80_0000).collect();
            let mut upd: Vec<u64> = (0..m / 2).map(|_| 0x3f80_0000_3f80_0000).collect();
            let mut pos: Vec<u64> = (0..m).map(|_| splitmix(&mut s) % n as u64).collect();
            // The host's strategy, then one as if its largest cache held
            // no target (each thread its range of targets).
            for cache in [crate::core::caches::largest(), 0] {
                report(&format!("scatter_add {m} into {n}, in place, cache {cache}"), &mut || {
                    let (d, p, u) = (view(&mut into, Dtype::Float32, &[n]), view(&mut pos, Dtype::Int64, &[m]), view(&mut upd, Dtype::Float32, &[m]));
                    let host = Host { threads: pool::threads(), cache };
                    scatter::plan(Combine::Add, false, 0, d.clone(), d, p, u).unwrap().on(host).run().unwrap()
                });
            }
        }
    }
    if want("ranges") {
        let (n, runs, length) = (10_000_000usize, 1000usize, 5000usize);
        let mut x: Vec<u64> = (0..n / 2).map(|_| splitmix(&mut s)).collect();
        let mut starts: Vec<u64> = (0..runs).map(|_| splitmix(&mut s) % (n - length + 1) as u64).collect();
        let mut ends: Vec<u64> = (0..runs as u64).map(|j| (j + 1) * length as u64).collect();
        let mut dst = vec![0u64; runs * length / 2];
        report(&format!("ranges {runs} runs of {length} out of {n}"), &mut || {
            let (d, st, en, xv) = (
                view(&mut dst, Dtype::Float32, &[runs * length]),
                view(&mut starts, Dtype::Int64, &[runs]),
                view(&mut ends, Dtype::Int64, &[runs]),
                view(&mut x, Dtype::Float32, &[n]),
            );
            gather_ranges::plan(d, st, en, xv).unwrap().run().unwrap()
        });
    }
    if want("assemble") {
        let n = 1_000_000;
        let mut pieces: Vec<Vec<u64>> = (0..8).map(|_| (0..n / 2).map(|_| splitmix(&mut s)).collect()).collect();
        let mut dst = vec![0u64; 8 * n / 2];
        report(&format!("assemble 8 pieces of {n}"), &mut || {
            let ps = (pieces.iter_mut().enumerate())
                .map(|(k, b)| assemble::Piece { region: vec![(k * n, (k + 1) * n)], view: view(b, Dtype::Float32, &[n]) })
                .collect();
            assemble::plan(0, view(&mut dst, Dtype::Float32, &[8 * n]), ps).unwrap().run().unwrap()
        });
    }
}

#[test]
#[ignore]
fn scatter_narrow_add_memory() {
    // float16 Add (not unique) of m updates into t targets along axis 0,
    // `slices` slices, on `threads` threads of the host's largest cache:
    // the peak of the bytes the call allocates, beside the contract's
    // figures: 5 t + 64 on each thread that sums a slice (one slice a
    // thread), and, for the strategy that sorts updates by target on every
    // thread, at w = 2 bytes: (8 + w) m in all where t >= m, else
    // (8 + w) min (m, 2^22) (and about 5 t in all where m > t and m > 2^19),
    // and on each thread 16 w + 136 KiB and the greater of 5/8 of L2 and
    // 5 t / 512 (this one only where m does not exceed t or 2^19).
    let cache = crate::core::caches::largest();
    let l2 = crate::core::caches::sizes().l2;
    println!("largest cache {cache} bytes, L2 {l2} bytes");
    println!("case | t | m | slices | threads | strategy | measured bytes | contract's bytes");
    let cases: [(&str, usize, usize, usize, usize); 5] = [
        ("one slice, fits the cache", 1 << 20, 10_000_000, 1, 2),
        ("8 slices, fits the cache", 1 << 20, 1 << 20, 8, 2),
        ("one slice, past the cache, t >= m", 16 << 20, 1 << 20, 1, 2),
        ("one slice, past the cache, m > t", 9 << 20, 12 << 20, 1, 2),
        ("one slice, past the cache, 1 thread", 16 << 20, 1 << 20, 1, 1),
    ];
    for (name, t, m, slices, threads) in cases {
        pool::set_threads(threads).unwrap();
        let mut s = 7u64;
        let d = Dtype::Float16;
        let mut into = vec![0u64; (t * slices).div_ceil(4)];
        let mut out = vec![0u64; (t * slices).div_ceil(4)];
        let mut upd: Vec<u64> = (0..(m * slices).div_ceil(4)).map(|_| 0x3c00_3c00_3c00_3c00).collect();
        let mut pos: Vec<u64> = (0..m * slices).map(|_| splitmix(&mut s) % t as u64).collect();
        let plan = scatter::plan(
            Combine::Add,
            false,
            0,
            view(&mut out, d, &[t, slices]),
            view(&mut into, d, &[t, slices]),
            view(&mut pos, Dtype::Int64, &[m, slices]),
            view(&mut upd, d, &[m, slices]),
        )
        .unwrap()
        .on(Host { threads, cache });
        let strategy = plan.strategy();
        let bytes = peak_bytes(|| plan.run().unwrap());
        let w = 2usize;
        let contract = match strategy {
            scatter::Strategy::PerSlice => format!("{} (5 t + 64 on each of {} summing threads)", threads.min(slices) * (5 * t + 64), threads.min(slices)),
            scatter::Strategy::ByTarget => {
                let per_thread = 16 * w + (136 << 10) + if m > t && m > 1 << 19 { 0 } else { (5 * l2 / 8).max(5 * t / 512) };
                let all = (8 + w) * if t >= m { m } else { m.min(1 << 22) } + if m > t && m > 1 << 19 { 5 * t } else { 0 };
                format!("{} ((8 + w) m-type {all} in all + {per_thread} on each of {threads} threads)", all + threads * per_thread)
            }
            scatter::Strategy::ByUpdate => unreachable!("only Set under unique splits its updates"),
        };
        println!("{name} | {t} | {m} | {slices} | {threads} | {strategy:?} | {bytes} | {contract}");
    }
}

#[test]
#[ignore]
fn time_ranges_and_fold() {
    let mut s = 3u64;
    // gather_ranges: 1000 runs of up to 10,000 elements out of 10M float32.
    let n = 10_000_000;
    let mut x: Vec<u64> = (0..n / 2).map(|_| splitmix(&mut s)).collect();
    let (mut starts, mut ends) = (Vec::new(), Vec::new());
    let mut e = 0u64;
    for _ in 0..1000 {
        let len = splitmix(&mut s) % 10_000;
        starts.push(splitmix(&mut s) % (n as u64 - len));
        e += len;
        ends.push(e);
    }
    let size = e as usize;
    let mut dst = vec![0u64; size.div_ceil(2)];
    for threads in [1, std::thread::available_parallelism().map_or(1, |n| n.get())] {
        pool::set_threads(threads).unwrap();
        let ms = best(|| {
            let (d, st, en, xv) = (
                view(&mut dst, Dtype::Float32, &[size]),
                view(&mut starts, Dtype::Int64, &[1000]),
                view(&mut ends, Dtype::Int64, &[1000]),
                view(&mut x, Dtype::Float32, &[n]),
            );
            gather_ranges::plan(d, st, en, xv).unwrap().run().unwrap()
        });
        println!("ranges: 1000 runs ({size} float32) out of 10M, {threads} threads: {ms:.2} ms");
    }
    // fold: 3x3 windows, stride 1, pad 1, over [64; 256; 256] float32.
    let ds = [64, 256, 256];
    let w = Some(Window { size: 3, stride: 1, dilation: 1 });
    let p = Pad { before: vec![0, 1, 1], after: vec![0, 1, 1], windows: vec![None, w, w], fill: 0.0 };
    let xs = p.shape(&ds).unwrap();
    let mut src: Vec<u64> = (0..xs.iter().product::<usize>().div_ceil(2)).map(|_| 0x3f80_0000_3f80_0000).collect();
    let mut out = vec![0u64; (64 * 256 * 256) / 2];
    for threads in [1, std::thread::available_parallelism().map_or(1, |n| n.get())] {
        pool::set_threads(threads).unwrap();
        let ms = best(|| {
            let (d, xv) = (view(&mut out, Dtype::Float32, &ds), view(&mut src, Dtype::Float32, &xs));
            fold::plan(p.clone(), d, xv).unwrap().run().unwrap()
        });
        println!("fold 3x3 stride 1 pad 1 over [64; 256; 256] float32, {threads} threads: {ms:.2} ms");
    }
}

/// scatter Add of float32 on one thread and on every core, the host's
/// strategy, best of five: random positions, 10M into 1M targets (past
/// L2, within a large L3) and 1M into 100K (within L2), and the same
/// positions sorted (climbing). `SCATTER_REPS=k` repeats the whole set.
#[test]
#[ignore]
fn time_scatter_add() {
    let mut s = 5u64;
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let reps = std::env::var("SCATTER_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(1);
    let mut cases = vec![];
    for (n, m) in [(1_000_000usize, 10_000_000usize), (100_000, 1_000_000), (10_000_000, 10_000_000)] {
        let pos: Vec<u64> = (0..m).map(|_| splitmix(&mut s) % n as u64).collect();
        let mut sorted = pos.clone();
        sorted.sort_unstable();
        cases.push((n, m, "random", pos));
        cases.push((n, m, "sorted", sorted));
    }
    for _ in 0..reps {
        for (n, m, kind, pos) in cases.iter_mut() {
            let (n, m) = (*n, *m);
            let mut into: Vec<u64> = (0..n / 2).map(|_| 0x3f80_0000_3f80_0000).collect();
            let mut upd: Vec<u64> = (0..m / 2).map(|_| 0x3f80_0000_3f80_0000).collect();
            for threads in [1, all] {
                pool::set_threads(threads).unwrap();
                let ms = best(|| {
                    let (d, p, u) = (view(&mut into, Dtype::Float32, &[n]), view(pos, Dtype::Int64, &[m]), view(&mut upd, Dtype::Float32, &[m]));
                    scatter::plan(Combine::Add, false, 0, d.clone(), d, p, u).unwrap().run().unwrap()
                });
                println!("scatter_add float32 {kind} {m} into {n}, {threads} threads: {ms:.2} ms");
            }
        }
    }
}
