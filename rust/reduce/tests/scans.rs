//! Sum, Prod, Max and Min scans against the spec's words; Arg reductions
//! and scans against their definition.

use num_complex::Complex;

use super::data::{same, Bits, Rng};
use super::reference::{lane_order, From};
use crate::reduce::{arg, arg_scan, scan, Fill, Max, Min, Monoid, Ordered, Pick, Prod, Scan, Sum, CHUNK};

/// "cuts each slice along its axis into chunks of 4096 terms from its
/// start. A chunk's total is its terms reduced in lane order [...]. The
/// carry into chunk 0 is the slice's element of a given carry, else the
/// identity, but a product's chunk 0 given none has none, and its first
/// result is its first term. The carry into chunk c + 1 is the carry into
/// chunk c combined with c's total, and each result of a chunk is its carry
/// combined with the chunk's terms up to it, left to right."
fn reference<T: Copy>(terms: &[T], carry: Option<T>, from: From<T>, op: &dyn Fn(T, T) -> T) -> Vec<T> {
    let mut carry = match (carry, from) {
        (Some(c), _) => Some(c),
        (None, From::Zero(z)) => Some(z),
        (None, From::First) => None,
    };
    let mut out = Vec::new();
    for chunk in terms.chunks(4096) {
        let mut r = carry;
        for &t in chunk {
            let next = match r {
                Some(a) => op(a, t),
                None => t,
            };
            out.push(next);
            r = Some(next);
        }
        let total = lane_order(chunk, from, op).unwrap();
        carry = Some(match carry {
            Some(c) => op(c, total),
            None => total,
        });
    }
    out
}

fn check<T, M>(m: M, data: &[T], carry: Option<T>, from: From<T>, op: &dyn Fn(T, T) -> T, what: &str)
where
    T: Copy + Default + Send + Sync + Bits + core::fmt::Debug,
    M: Monoid<T>,
{
    for n in [0, 1, 2, 4095, 4096, 4097, 3 * 4096 + 5, 20 * 4096 + 1, data.len()] {
        let terms = &data[..n];
        let want = reference(terms, carry, from, op);
        let mut out = vec![T::default(); n];
        scan(m, terms, carry, &mut out, false);
        for i in 0..n {
            same(out[i], want[i], &format!("{what} n={n} i={i}"));
        }
        let fill = Fill { count: n, fill: |s: usize, o: &mut [T]| o.copy_from_slice(&terms[s..s + o.len()]) };
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut par = vec![T::default(); n];
            pool.install(|| scan(m, &fill, carry, &mut par, true));
            for i in 0..n {
                same(par[i], want[i], &format!("{what} n={n} i={i} on {threads} threads"));
            }
        }
    }
}

const LEN: usize = 70 * 4096 + 77;

#[test]
fn sums_and_products_follow_the_chunks() {
    let mut r = Rng(21);
    let x: Vec<f32> = (0..LEN).map(|_| r.mixed(25) as f32).collect();
    check(Sum, &x, None, From::Zero(0.0), &|a, b| a + b, "f32 sum");
    check(Sum, &x, Some(1e6), From::Zero(0.0), &|a, b| a + b, "f32 sum carried");
    let p: Vec<f64> = (0..LEN).map(|_| r.near_one()).collect();
    check(Prod, &p, None, From::First, &|a, b| a * b, "f64 prod");
    check(Prod, &p, Some(-3.0), From::First, &|a, b| a * b, "f64 prod carried");
    let z: Vec<Complex<f64>> = (0..LEN).map(|_| Complex::new(r.near_one(), r.near_one() - 1.0)).collect();
    let mul = |a: Complex<f64>, b: Complex<f64>| Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
    check(Prod, &z, None, From::First, &mul, "c128 prod");
    let i: Vec<i64> = (0..LEN).map(|_| r.next() as i64).collect();
    check(Sum, &i, Some(5), From::Zero(0), &|a: i64, b| a.wrapping_add(b), "i64 sum");
}

#[test]
fn max_and_min_scans_are_running_extremes() {
    let mut r = Rng(22);
    let mut x: Vec<f64> = (0..LEN).map(|_| r.mixed(20)).collect();
    x[5000] = -0.0;
    x[9000] = f64::NAN;
    check(Max, &x, None, From::First, &f64::max2, "max");
    check(Min, &x, Some(-1e300), From::First, &f64::min2, "min carried");
    let mut out = vec![0.0; LEN];
    scan(Max, &x[..], None, &mut out, false);
    assert!(out[8999].is_finite() && out[9000].is_nan() && out[LEN - 1].is_nan());
}

#[test]
fn a_scan_resumed_at_a_chunk_has_the_whole_scans_bits() {
    let mut r = Rng(23);
    let x: Vec<f32> = (0..LEN).map(|_| r.mixed(25) as f32).collect();
    let mut whole = vec![0.0; LEN];
    scan(Sum, &x[..], None, &mut whole, false);
    let mut state = Scan::new(Sum, None);
    let mut sink = vec![0.0; CHUNK];
    for c in 0..LEN / CHUNK {
        let start = c * CHUNK;
        let mut tail = vec![0.0; LEN - start];
        scan(Sum, &x[start..], state.carry(), &mut tail, false);
        for (i, &t) in tail.iter().enumerate() {
            same(t, whole[start + i], &format!("resumed at chunk {c}, i={i}"));
        }
        state.chunk(&x[start..start + CHUNK], &mut sink);
        assert_eq!(sink[..], whole[start..start + CHUNK]);
    }
    // The carry is not the last result: it is the chunk totals' chain.
    assert_ne!(state.carry().unwrap(), whole[LEN / CHUNK * CHUNK - 1]);
}

/// Arg from its definition: the first term no later term is strictly better
/// than.
fn arg_reference<T: Ordered, P: Pick<T>>(terms: &[T]) -> Option<(T, i64)> {
    let mut best: Option<(T, i64)> = None;
    for (i, &t) in terms.iter().enumerate() {
        if best.is_none_or(|b| P::better(t, b.0)) {
            best = Some((t, i as i64));
        }
    }
    best
}

#[test]
fn arg_takes_the_first_extreme_and_the_first_nan() {
    let mut r = Rng(24);
    // Few distinct values, so ties abound; ±0 among them.
    let mut x: Vec<f32> = (0..50_000).map(|_| [-0.0, 0.0, 1.0, -1.0, 2.0][(r.next() % 5) as usize]).collect();
    x[40_000] = 3.0;
    x[45_000] = 3.0;
    x[1500] = -3.0;
    let mut v = vec![0.0; x.len()];
    let mut p = vec![0i64; x.len()];
    for nan in [None, Some(30_000), Some(2000)] {
        if let Some(i) = nan {
            x[i] = f32::NAN;
        }
        for n in [0, 1, 7, 1024, 1025, 2000, 2001, 5000, 40_001, 50_000] {
            let t = &x[..n];
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let (a, b) = pool.install(|| (arg(Max, t, true), arg(Min, t, true)));
                let (ra, rb) = (arg_reference::<f32, Max>(t), arg_reference::<f32, Min>(t));
                assert_eq!(a.map(|(v, i)| (v.bits(), i)), ra.map(|(v, i)| (v.bits(), i)), "argmax n={n}");
                assert_eq!(b.map(|(v, i)| (v.bits(), i)), rb.map(|(v, i)| (v.bits(), i)), "argmin n={n}");
            }
            arg_scan(Max, t, &mut v[..n], &mut p[..n]);
            // Spot checks: the reference is quadratic.
            for i in (0..n).step_by(97).chain(n.checked_sub(1)) {
                let (rv, ri) = arg_reference::<f32, Max>(&t[..=i]).unwrap();
                assert_eq!((v[i].bits(), p[i]), (rv.bits(), ri), "argmax scan n={n} i={i}");
            }
        }
    }
    // The extreme's first occurrence at every place of the vector rows
    // that find it (and past them), with a later tie, in every carried type.
    for n in [1, 5, 31, 32, 33, 64, 100, 129] {
        for at in 0..n {
            let f: Vec<f64> = (0..n).map(|i| if i == at || i == n - 1 { 7.5 } else { -(i as f64) }).collect();
            let g: Vec<f32> = f.iter().map(|&x| x as f32).collect();
            let h: Vec<i64> = f.iter().map(|&x| x as i64 - (1 << 40)).collect();
            let u: Vec<u64> = h.iter().map(|&x| x as u64).collect();
            assert_eq!(arg(Max, &f[..], false), Some((7.5, at as i64)), "f64 n={n} at={at}");
            assert_eq!(arg(Max, &g[..], false), Some((7.5, at as i64)), "f32 n={n} at={at}");
            assert_eq!(arg(Max, &h[..], false), Some((7 - (1 << 40), at as i64)), "i64 n={n} at={at}");
            assert_eq!(arg(Min, &u[..], false).map(|p| p.1), arg_reference::<u64, Min>(&u).map(|p| p.1), "u64 n={n} at={at}");
        }
    }
    assert_eq!(arg(Max, &[-0.0f64, 0.0, -0.0][..], false), Some((0.0, 1)));
    assert_eq!(arg(Min, &[0.0f64, -0.0, -0.0][..], false).map(|(v, i)| (v.to_bits(), i)), Some(((-0.0f64).to_bits(), 1)));
    let filled = Fill { count: 3000, fill: |s: usize, o: &mut [i64]| o.iter_mut().enumerate().for_each(|(k, v)| *v = ((s + k) % 1000) as i64) };
    assert_eq!(arg(Max, &filled, false), Some((999, 999)));
}
