//! The fixed cost of a call in Rust alone: a call decoded from its words,
//! planned, let in by the door and run, as `ffi` does but for OCaml:
//! `cargo test --release --no-default-features --lib ffi::calls::bench -- --ignored --nocapture`.
//! Each figure is the least over rounds of the calling thread's CPU time
//! per call, with the allocations a call makes.

use super::tests::{le, prog_words, vector};
use super::*;
use crate::core::alloc_count::allocations;
use crate::core::call::Call;
use crate::core::cpu_clock::thread_cpu_s;
use crate::core::door;
use crate::core::dtype::Dtype;

/// What `ffi::boundary::execute` does for a short call: the claims taken,
/// the plan run.
fn execute<C: Call>(plan: C) {
    let pass = plan.with_claims(door::try_enter).expect("no other call holds claims");
    plan.run().unwrap();
    drop(pass);
}

fn time(name: &str, f: impl Fn()) {
    for _ in 0..1000 {
        f();
    }
    let before = allocations();
    f();
    let allocated = allocations() - before;
    let per = 20_000;
    let best = (0..20)
        .map(|_| {
            let t = thread_cpu_s();
            for _ in 0..per {
                f();
            }
            (thread_cpu_s() - t) / per as f64
        })
        .fold(f64::INFINITY, f64::min);
    println!("{name:28} {:8.0} ns  {allocated:3} allocations", best * 1e9);
}

#[test]
#[ignore]
fn bench() {
    crate::core::pool::set_threads(1).unwrap();
    let f32 = Dtype::Float32.code() as i64;
    for n in [1usize, 1024] {
        let mut bufs = [vec![0u64; n.div_ceil(2)], vec![0x3f80_0000_3f80_0000u64; n.div_ceil(2)], vec![0u64; 2]];
        let mems: Vec<Memory> = bufs.iter_mut().map(|b| Memory { base: b.as_mut_ptr() as *mut u8, bytes: 8 * b.len() }).collect();
        let add = le(&prog_words(2, [4, 0, 0, 1, 0]));
        let vs = le(&[vector(0, n as i64, 0), vector(1, n as i64, 0), vector(1, n as i64, 0)].concat());
        let pads = le(&[0, 0]);
        time(&format!("map add float32 {n}"), || execute(plan_map(&add, &vs, &pads, 1, &mems).unwrap()));
        let id = le(&prog_words(1, [6, f32, 0, 0, 0]));
        let rv = le(&[&[f32, 2, 0, 0][..], &vector(1, n as i64, 0)].concat());
        let call = le(&[0, 1, n as i64, 1, 0, 1, 0, 0]);
        time(&format!("reduce sum float32 {n}"), || execute(plan_reduction(&id, &rv, &pads[..8], &call, &mems).unwrap()));
        let call = le(&[0, 1, n as i64, 1, 0, 1, 2, 0]);
        time(&format!("reduce max float32 {n}"), || execute(plan_reduction(&id, &rv, &pads[..8], &call, &mems).unwrap()));
    }
}
