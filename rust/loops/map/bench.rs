//! Timing of `map` in Rust alone (no OCaml boundary), one thread:
//! `cargo test --release --no-default-features --lib map::bench -- --ignored --nocapture`
//! (`MAP_BENCH=add,exp` keeps the cases whose names are listed,
//! `MAP_SIDES=32,316` those of the sides listed, `MAP_THREADS=2` runs on
//! two threads, `MAP_IDLE_US=2000` times single calls that far apart, the
//! median and least of 200, where the pool's threads have gone to sleep). The
//! benchmarks against numpy are in `bench/`; this is for working on the loop.
//! Times on one thread are its CPU time, which other processes sharing the
//! machine disturb less than the wall clock does; on several, wall-clock.

use super::*;
use crate::core::call::Call;
use crate::core::cpu_clock::thread_cpu_s;
use crate::loops::prog::{Binary, Unary};

/// A case: its name, the program, the dtype of its operands, whether they
/// are read transposed, the side of its square shape.
type Case = (&'static str, Prog, Dtype, bool, usize);

fn cases() -> Vec<Case> {
    let f32 = Dtype::Float32;
    let f64 = Dtype::Float64;
    let add = |d| Prog::new(vec![d, d], vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Add, 0, 1)], vec![2]).unwrap();
    let exp = |d| Prog::new(vec![d], vec![Node::Load(0), Node::Unary(Unary::Exp, 0)], vec![1]).unwrap();
    let fma = |d| {
        let nodes = vec![
            Node::Load(0),
            Node::Load(1),
            Node::Load(2),
            Node::Binary(Binary::Mul, 0, 1),
            Node::Binary(Binary::Add, 3, 2),
        ];
        Prog::new(vec![d, d, d], nodes, vec![4]).unwrap()
    };
    let cast = Prog::new(vec![f32], vec![Node::Load(0), Node::Cast(Dtype::Int32, 0)], vec![1]).unwrap();
    vec![
        ("add", add(f32), f32, false, 32),
        ("cast", cast.clone(), f32, false, 316),
        ("cast", cast.clone(), f32, false, 3162),
        ("cast.T", cast.clone(), f32, true, 316),
        ("add", add(f32), f32, false, 316),
        ("exp", exp(f32), f32, false, 316),
        ("add.T", add(f32), f32, true, 32),
        ("add.T", add(f64), f64, true, 32),
        ("add.T", add(f32), f32, true, 316),
        ("exp.T", exp(f32), f32, true, 32),
        ("exp.T", exp(f32), f32, true, 316),
        ("exp.T", exp(f64), f64, true, 316),
        ("cast.T", cast, f32, true, 1000),
        ("add.T", add(f32), f32, true, 1000),
        ("exp.T", exp(f64), f64, true, 1000),
        ("add", add(f32), f32, false, 3162),
        ("add", add(f64), f64, false, 3162),
        ("add.T", add(f32), f32, true, 3162),
        ("add.T", add(f64), f64, true, 3162),
        ("exp.T", exp(f32), f32, true, 3162),
        ("exp", exp(f32), f32, false, 3162),
        ("exp", exp(f64), f64, false, 3162),
        ("fma", fma(f32), f32, false, 3162),
        ("fma.T", fma(f32), f32, true, 3162),
    ]
}

/// A plain loop of `a + b` over 10M float32, the speed the loop aims at.
fn raw_add() {
    let n = 3162 * 3162;
    let a = vec![0.5f32; n];
    let b = vec![0.25f32; n];
    let mut o = vec![0.0f32; n];
    let best = (0..5)
        .map(|_| {
            let t = thread_cpu_s();
            for _ in 0..5 {
                for ((o, &x), &y) in o.iter_mut().zip(&a).zip(&b) {
                    *o = x + y;
                }
                std::hint::black_box(&mut o);
            }
            (thread_cpu_s() - t) / 5.0
        })
        .fold(f64::INFINITY, f64::min);
    println!("raw add float32 3162²  {:10.3} µs  {:6.2} GB/s", best * 1e6, (12 * n) as f64 / best / 1e9);
}

#[test]
#[ignore]
fn bench() {
    raw_add();
    let only = std::env::var("MAP_BENCH").ok();
    let sides = std::env::var("MAP_SIDES").ok();
    let threads = std::env::var("MAP_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(1);
    pool::set_threads(threads).unwrap();
    for (name, prog, d, transposed, side) in cases() {
        let listed = |list: &Option<String>, key: &str| list.as_ref().is_none_or(|l| l.split(',').any(|k| k == key));
        if !listed(&only, name) || !listed(&sides, &side.to_string()) {
            continue;
        }
        let n = side * side;
        let bytes = n * d.bytes();
        let mut bufs: Vec<Vec<u64>> = (0..=prog.operands.len()).map(|_| vec![0x3fe0_0000_3f00_0000u64; bytes.div_ceil(8)]).collect();
        let mut views: Vec<View> = bufs
            .iter_mut()
            .enumerate()
            .map(|(k, b)| {
                // The destination of the program's output dtype.
                let mut l = Layout::contiguous(if k == 0 { prog.dtypes[prog.outputs[0]] } else { d }, &[side, side]);
                if transposed && k > 0 {
                    l.strides.reverse();
                }
                View::new(l, Memory { base: b.as_mut_ptr() as *mut u8, bytes }).unwrap()
            })
            .collect();
        let loads = views.split_off(1);
        let call = || plan(prog.clone(), views.clone(), loads.clone()).unwrap().run().unwrap();
        call();
        if let Some(way) = streaming::choice() {
            println!("(streaming from memory: {way:?})");
        }
        if let Some(idle) = std::env::var("MAP_IDLE_US").ok().and_then(|t| t.parse().ok()) {
            // Calls apart: the pool's helpers asleep where idle passes LINGER.
            let mut times: Vec<f64> = (0..200)
                .map(|_| {
                    std::thread::sleep(std::time::Duration::from_micros(idle));
                    let wall = std::time::Instant::now();
                    call();
                    wall.elapsed().as_secs_f64()
                })
                .collect();
            times.sort_by(f64::total_cmp);
            println!("{name:6} {:8} {side:5}²  {:10.3} µs median, {:10.3} µs least, a call {idle} µs after the last", d.name(), times[100] * 1e6, times[0] * 1e6);
            continue;
        }
        let reps = (100_000_000 / n).clamp(3, 100_000);
        let best = (0..5)
            .map(|_| {
                // Several threads: the wall clock, the calling thread's CPU
                // time leaving out the others'.
                let wall = std::time::Instant::now();
                let t = thread_cpu_s();
                for _ in 0..reps {
                    call();
                }
                let s = if threads > 1 { wall.elapsed().as_secs_f64() } else { thread_cpu_s() - t };
                s / reps as f64
            })
            .fold(f64::INFINITY, f64::min);
        let moved = (prog.operands.len() + 1) * bytes;
        println!(
            "{name:6} {:8} {side:5}²  {:10.3} µs  {:6.2} GB/s",
            d.name(),
            best * 1e6,
            moved as f64 / best / 1e9
        );
    }
}
