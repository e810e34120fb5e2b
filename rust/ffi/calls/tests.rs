//! The call decoding against `ffi::wire`'s: the same plans, the same
//! refusals, whatever the bytes' alignment and the program cache hold.

use super::*;
use crate::core::call::Call;
use crate::core::dtype::Dtype;

/// The bytes of little-endian words.
pub(super) fn le(ws: &[i64]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The words of a program of `n` float32 operands whose one output is node
/// `node` (tag and words as `Prog::decode` reads them) over the loads.
pub(super) fn prog_words(n: usize, node: [i64; 5]) -> Vec<i64> {
    let f32 = Dtype::Float32.code() as i64;
    let mut w = vec![n as i64];
    w.extend((0..n).map(|_| f32));
    w.push(n as i64 + 1);
    for i in 0..n {
        w.extend([0, i as i64, 0, 0, 0]);
    }
    w.extend(node);
    w.extend([1, n as i64]);
    w
}

/// A view's words: float32, buffer `buf`, contiguous vector of `n` from `offset`.
pub(super) fn vector(buf: i64, n: i64, offset: i64) -> Vec<i64> {
    vec![Dtype::Float32.code() as i64, buf, 1, offset, n, 1]
}

const ADD: [i64; 5] = [4, 0, 0, 1, 0];

#[test]
fn words_are_read_in_place_where_aligned_and_copied_where_not() {
    let ws = [1i64, -2, i64::MAX, 7];
    let bytes = le(&ws);
    let mut shifted = vec![0u8; bytes.len() + 1];
    shifted[1..].copy_from_slice(&bytes);
    for b in [&bytes[..], &shifted[1..]] {
        assert_eq!(&le_words(b).unwrap()[..], &ws[..]);
    }
    assert!(le_words(&bytes[..7]).is_err());
    assert!(le_words(&shifted[1..8]).is_err());
    assert_eq!(le_words(&[]).unwrap().len(), 0);
}

#[test]
fn a_program_is_decoded_once_and_refused_every_time() {
    let w = le(&prog_words(2, ADD));
    let (a, b) = (prog(&w).unwrap(), prog(&w).unwrap());
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(*a, Prog::decode(&words(&w).unwrap()).unwrap());
    // Another program is another entry; the first stays found.
    let mul = le(&prog_words(2, [4, 2, 0, 1, 0]));
    assert!(!Arc::ptr_eq(&prog(&mul).unwrap(), &a));
    assert!(Arc::ptr_eq(&prog(&w).unwrap(), &a));
    // A node reading itself is refused, twice, with Prog::decode's words.
    let bad = le(&prog_words(2, [4, 0, 0, 2, 0]));
    let why = Prog::decode(&words(&bad).unwrap()).unwrap_err();
    assert_eq!(prog(&bad).unwrap_err(), why);
    assert_eq!(prog(&bad).unwrap_err(), why);
    // Past the cache's size the oldest program leaves it, and is decoded
    // again when asked.
    for k in 0..CACHED_PROGS {
        prog(&le(&prog_words(1 + k, [3, 0, 0, 0, 0]))).unwrap();
    }
    assert!(!Arc::ptr_eq(&prog(&w).unwrap(), &a));
}

#[test]
fn map_and_reduce_calls_plan_and_run_from_words() {
    let mut x = [1.5f32, 2.0, -3.0, 4.25];
    let mut z = [0f32; 4];
    let mems = [
        Memory { base: z.as_mut_ptr() as *mut u8, bytes: 16 },
        Memory { base: x.as_mut_ptr() as *mut u8, bytes: 16 },
    ];
    let views_w = le(&[vector(0, 4, 0), vector(1, 4, 0), vector(1, 4, 0)].concat());
    let p = le(&prog_words(2, ADD));
    plan_map(&p, &views_w, &le(&[0, 0]), 1, &mems).unwrap().run().unwrap();
    assert_eq!(z, [3.0, 4.0, -6.0, 8.5]);
    // Refusals name what is wrong, as wire's decoding does.
    let err = |r: Result<Box<Kept<map::Plan>>, String>| r.err().unwrap();
    assert_eq!(err(plan_map(&p, &views_w, &le(&[0, 0]), 4, &mems)), "a destination count past the views");
    assert!(err(plan_map(&p, &views_w, &le(&[0]), 1, &mems)).contains("operands but"));
    assert!(err(plan_map(&p, &le(&vector(0, 5, 0)), &le(&[]), 1, &mems)).contains("operand 0 reaches"));
    assert!(err(plan_map(&p, &views_w[..20], &le(&[0, 0]), 1, &mems)).contains("partial word"));
    // Sum of x into z[0], then a scan of x into z.
    let id = le(&prog_words(1, [6, Dtype::Float32.code() as i64, 0, 0, 0]));
    let scalar = [Dtype::Float32.code() as i64, 0, 0, 0];
    let rv = le(&[&scalar[..], &vector(1, 4, 0)].concat());
    let call = le(&[0, 1, 4, 1, 0, 1, 0, 0]);
    assert!(!is_scan(&call));
    plan_reduction(&id, &rv, &le(&[0]), &call, &mems).unwrap().run().unwrap();
    assert_eq!(z[0], 4.75);
    let sv = le(&[vector(0, 4, 0), vector(1, 4, 0)].concat());
    let scan = le(&[1, 1, 4, 0, 0, 0, 0]);
    assert!(is_scan(&scan) && !is_scan(&scan[..20]));
    plan_reduction(&id, &sv, &le(&[0]), &scan, &mems).unwrap().run().unwrap();
    assert_eq!(z, [1.5, 3.5, 0.5, 4.75]);
    // A scan with a carry: the carry follows the destination.
    let mut c = [10f32];
    let mems = [mems[0], mems[1], Memory { base: c.as_mut_ptr() as *mut u8, bytes: 4 }];
    let cv = le(&[&vector(0, 4, 0)[..], &[Dtype::Float32.code() as i64, 2, 0, 0], &vector(1, 4, 0)].concat());
    plan_reduction(&id, &cv, &le(&[0]), &le(&[1, 1, 4, 0, 0, 0, 1]), &mems).unwrap().run().unwrap();
    assert_eq!(z, [11.5, 13.5, 10.5, 14.75]);
    let rerr = |r: Result<Box<Kept<reduce_loop::Plan>>, String>| r.err().unwrap();
    assert!(rerr(plan_reduction(&id, &cv, &le(&[0]), &le(&[1, 1, 4, 0, 0, 0, 1, 9]), &mems)).contains("past its end"));
    assert!(rerr(plan_reduction(&id, &rv, &le(&[0]), &le(&[0, 1, 4, 1, 0, 1, 9, 0]), &mems)).contains("no reduction has code 9"));
    assert!(rerr(plan_reduction(&id, &le(&scalar), &le(&[]), &call, &mems)).contains("loads for a program"));
    assert!(rerr(plan_reduction(&id, &le(&[]), &le(&[0]), &scan, &mems)).contains("0 arrays for a"));
}

/// Runs a map call of `add` from its words over `mems`, through the door.
fn run_map(prog_b: &[u8], views_b: &[u8], mems: &[Memory]) -> Result<(), String> {
    let plan = plan_map(prog_b, views_b, &le(&[0, 0]), 1, mems)?;
    let claims = plan.claims();
    let pass = crate::core::door::try_enter(&claims).expect("no other call holds claims");
    let r = plan.run();
    drop(pass);
    r
}

fn memory_of(x: &mut [f32]) -> Memory {
    Memory { base: x.as_mut_ptr() as *mut u8, bytes: 4 * x.len() }
}

#[test]
fn a_kept_plan_is_checked_against_each_calls_memory() {
    // z = x[0..3] + x[1..4]: views of buffers 0 and 1 (the load twice).
    let p = le(&prog_words(2, ADD));
    let views_w = le(&[vector(0, 3, 0), vector(1, 3, 0), vector(1, 3, 1)].concat());
    let (mut x, mut z) = ([1f32, 2.0, 4.0, 8.0], [0f32; 3]);
    run_map(&p, &views_w, &[memory_of(&mut z), memory_of(&mut x)]).unwrap();
    assert_eq!(z, [3.0, 6.0, 12.0]);
    // The same words over other buffers: the kept plan writes the new ones.
    let (mut y, mut w) = ([10f32, 20.0, 40.0, 80.0], [0f32; 3]);
    run_map(&p, &views_w, &[memory_of(&mut w), memory_of(&mut y)]).unwrap();
    assert_eq!((w, z), ([30.0, 60.0, 120.0], [3.0, 6.0, 12.0]));
    // The destination in the load's buffer: the load is read from a copy, as
    // a fresh plan reads it, so each sum is of the values as called.
    let m = memory_of(&mut y);
    run_map(&p, &views_w, &[m, m]).unwrap();
    assert_eq!(y, [30.0, 60.0, 120.0, 80.0]);
    // A buffer too short for the load: refused as planning refuses it, with
    // nothing written.
    let mut short = [5f32; 3];
    let mut untouched = [-1f32; 3];
    let why = run_map(&p, &views_w, &[memory_of(&mut untouched), memory_of(&mut short)]).unwrap_err();
    assert!(why.contains("operand 2 reaches"), "{why}");
    assert_eq!(untouched, [-1.0; 3]);
    // Fewer buffers than the words name.
    let why = run_map(&p, &views_w, &[memory_of(&mut untouched)]).unwrap_err();
    assert!(why.contains("names buffer 1"), "{why}");
    // Memory off f32's alignment (read and written through columns, not in
    // place): the loop kept from aligned memory is not taken, nor is the
    // one made here for the aligned call after.
    let mut raw = [0u8; 4 * 4 + 1];
    for (i, v) in [1f32, 2.0, 4.0, 8.0].iter().enumerate() {
        raw[1 + 4 * i..5 + 4 * i].copy_from_slice(&v.to_le_bytes());
    }
    let off = Memory { base: raw.as_mut_ptr().wrapping_add(1), bytes: 16 };
    run_map(&p, &views_w, &[memory_of(&mut w), off]).unwrap();
    assert_eq!(w, [3.0, 6.0, 12.0]);
    // And the plan is still kept for a good call after the refusals.
    run_map(&p, &views_w, &[memory_of(&mut z), memory_of(&mut x)]).unwrap();
    assert_eq!(z, [3.0, 6.0, 12.0]);
}

#[test]
fn a_kept_reduction_refuses_destinations_that_meet() {
    // Arg Max of x into a value and a position: two destinations.
    let id = le(&prog_words(1, [6, Dtype::Float32.code() as i64, 0, 0, 0]));
    let (f32, i64) = (Dtype::Float32.code() as i64, Dtype::Int64.code() as i64);
    let views_w = le(&[&[f32, 0, 0, 0][..], &[i64, 1, 0, 0], &vector(2, 4, 0)].concat());
    let call = le(&[0, 1, 4, 1, 0, 1, 4, 0]);
    let mut x = [1.5f32, 9.0, -3.0, 4.25];
    let (mut v, mut at) = ([0f32; 2], [0i64; 1]);
    let at_m = Memory { base: at.as_mut_ptr() as *mut u8, bytes: 8 };
    let run = |mems: &[Memory]| -> Result<(), String> {
        let plan = plan_reduction(&id, &views_w, &le(&[0]), &call, mems)?;
        let claims = plan.claims();
        let pass = crate::core::door::try_enter(&claims).expect("no other call holds claims");
        let r = plan.run();
        drop(pass);
        r
    };
    run(&[memory_of(&mut v), at_m, memory_of(&mut x)]).unwrap();
    assert_eq!((v[0], at[0]), (9.0, 1));
    // Both destinations in one buffer: refused by the kept plan too.
    let both = Memory { base: at.as_mut_ptr() as *mut u8, bytes: 8 };
    let why = run(&[both, both, memory_of(&mut x)]).unwrap_err();
    assert!(why.contains("overlap"), "{why}");
    x[3] = 20.0;
    run(&[memory_of(&mut v[1..]), at_m, memory_of(&mut x)]).unwrap();
    assert_eq!((v, at[0]), ([9.0, 20.0], 3));
}
