//! Sum, Prod, Max and Min reductions: bits of the fast code against the
//! spec-literal reference, across sources, layouts and thread counts.

use num_complex::Complex;

use super::data::{lengths, same, Bits, Rng};
use super::reference::{extreme, lane_order, naive, From};
use crate::reduce::{reduce, reduce_columns, EveryOther, Fill, FillGrid, Max, Min, Monoid, Ordered, Prod, Strided, Sum};

/// Fast against reference on every test length, from a slice and from a
/// callback.
fn check<T, M>(m: M, data: &[T], from: From<T>, op: &dyn Fn(T, T) -> T, what: &str)
where
    T: Copy + Default + Send + Sync + Bits + core::fmt::Debug,
    M: Monoid<T>,
{
    for n in lengths().into_iter().filter(|&n| n <= data.len()) {
        let terms = &data[..n];
        let want = lane_order(terms, from, op).unwrap_or(M::empty());
        same(reduce(m, terms, false), want, &format!("{what} n={n}"));
        let fill = Fill { count: n, fill: |s: usize, out: &mut [T]| out.copy_from_slice(&terms[s..s + out.len()]) };
        same(reduce(m, &fill, false), want, &format!("{what} fill n={n}"));
        // Every other element, the elements between them other terms (in
        // reverse), the run ending at the last term or one past it.
        let pairs: Vec<T> = terms.iter().zip(terms.iter().rev()).flat_map(|(&t, &u)| [t, u]).collect();
        for end in [(2 * n).saturating_sub(1), 2 * n] {
            let every = EveryOther::new(&pairs[..end], n).unwrap();
            same(reduce(m, &every, false), want, &format!("{what} every other n={n} of {end}"));
            same(reduce(m, &every, true), want, &format!("{what} every other n={n} of {end}, parallel"));
        }
    }
}

fn mixed_f64(n: usize, seed: u64) -> Vec<f64> {
    let mut r = Rng(seed);
    (0..n).map(|_| r.mixed(40)).collect()
}

const MAX_LEN: usize = 129 * 1024 + 17;

#[test]
fn float_sums_and_products_follow_lane_order() {
    let x = mixed_f64(MAX_LEN, 1);
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    check(Sum, &x, From::Zero(0.0), &|a, b| a + b, "f64 sum");
    check(Sum, &x32, From::Zero(0.0), &|a, b| a + b, "f32 sum");
    let mut r = Rng(2);
    let p: Vec<f64> = (0..MAX_LEN).map(|_| r.near_one()).collect();
    let p32: Vec<f32> = p.iter().map(|&v| v as f32).collect();
    check(Prod, &p, From::First, &|a, b| a * b, "f64 prod");
    check(Prod, &p32, From::First, &|a, b| a * b, "f32 prod");
}

#[test]
fn lane_order_is_not_left_to_right() {
    let x: Vec<f32> = mixed_f64(MAX_LEN, 3).iter().map(|&v| v as f32).collect();
    let differ = lengths()
        .into_iter()
        .filter(|&n| reduce(Sum, &x[..n], false) != naive(&x[..n], 0.0, &|a, b| a + b))
        .count();
    assert!(differ > 10, "the data should tell orders apart ({differ})");
}

#[test]
fn complex_sums_and_products_follow_lane_order() {
    let mut r = Rng(4);
    let z: Vec<Complex<f64>> = (0..MAX_LEN).map(|_| Complex::new(r.mixed(30), r.mixed(30))).collect();
    let z32: Vec<Complex<f32>> = z.iter().map(|c| Complex::new(c.re as f32, c.im as f32)).collect();
    check(Sum, &z, From::Zero(Complex::new(0.0, 0.0)), &|a, b| Complex::new(a.re + b.re, a.im + b.im), "c128 sum");
    check(Sum, &z32, From::Zero(Complex::new(0.0, 0.0)), &|a, b| Complex::new(a.re + b.re, a.im + b.im), "c64 sum");
    let w: Vec<Complex<f64>> = (0..MAX_LEN)
        .map(|_| {
            let t = r.unit() * 6.3;
            Complex::new(t.cos(), t.sin()) * r.near_one()
        })
        .collect();
    let w32: Vec<Complex<f32>> = w.iter().map(|c| Complex::new(c.re as f32, c.im as f32)).collect();
    let mul64 = |a: Complex<f64>, b: Complex<f64>| Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
    let mul32 = |a: Complex<f32>, b: Complex<f32>| Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
    check(Prod, &w, From::First, &mul64, "c128 prod");
    check(Prod, &w32, From::First, &mul32, "c64 prod");
    // A product starts from its first term, not from 1 + 0i: (-0 - 1i) alone
    // keeps its -0, which 1 + 0i times it would lose.
    let lone = [Complex::new(-0.0f64, -1.0)];
    assert_eq!(reduce(Prod, &lone[..], false).re.to_bits(), (-0.0f64).to_bits());
}

#[test]
fn integer_sums_and_products_wrap() {
    let mut r = Rng(5);
    let a: Vec<i64> = (0..MAX_LEN).map(|_| r.next() as i64).collect();
    let b: Vec<u64> = (0..MAX_LEN).map(|_| r.next() | 1).collect();
    check(Sum, &a, From::Zero(0), &|x: i64, y| x.wrapping_add(y), "i64 sum");
    check(Prod, &a, From::First, &|x: i64, y| x.wrapping_mul(y), "i64 prod");
    check(Sum, &b, From::Zero(0), &|x: u64, y| x.wrapping_add(y), "u64 sum");
    check(Prod, &b, From::First, &|x: u64, y| x.wrapping_mul(y), "u64 prod");
}

#[test]
fn zeros_and_specials() {
    // Lanes add from +0: -0 terms sum to +0.
    for n in [1, 5, 16, 17, 2049] {
        let z = vec![-0.0f32; n];
        assert_eq!(reduce(Sum, &z[..], false).to_bits(), 0);
        assert_eq!(reduce(Prod, &z[..], false).to_bits(), if n % 2 == 1 { (-0.0f32).to_bits() } else { 0 });
    }
    assert_eq!(reduce(Sum, &[0.0f64; 0][..], false).to_bits(), 0);
    assert_eq!(reduce(Prod, &[0.0f64; 0][..], false), 1.0);
    assert_eq!(reduce(Max, &[0.0f64; 0][..], false), f64::NEG_INFINITY);
    assert_eq!(reduce(Min, &[0.0f64; 0][..], false), f64::INFINITY);
    let mut x = mixed_f64(5000, 6);
    x[3000] = f64::INFINITY;
    assert_eq!(reduce(Sum, &x[..], false), f64::INFINITY);
    x[10] = f64::NEG_INFINITY;
    assert!(reduce(Sum, &x[..], false).is_nan());
    check(Sum, &x, From::Zero(0.0), &|a, b| a + b, "f64 sum with infinities");
}

#[test]
fn max_and_min_ignore_order_and_propagate_nan() {
    let mut r = Rng(7);
    let mut x: Vec<f32> = (0..MAX_LEN).map(|_| [0.0, -0.0, r.mixed(10) as f32][(r.next() % 3) as usize]).collect();
    for nan_at in [None, Some(1500), Some(MAX_LEN - 1)] {
        if let Some(i) = nan_at {
            x[i] = f32::NAN;
        }
        for n in lengths() {
            let t = &x[..n];
            same(reduce(Max, t, false), extreme(t, true).unwrap_or(f32::NEG_INFINITY), "max");
            same(reduce(Min, t, false), extreme(t, false).unwrap_or(f32::INFINITY), "min");
        }
    }
    assert_eq!(f32::max2(-0.0, 0.0).to_bits(), 0);
    assert_eq!(f32::max2(0.0, -0.0).to_bits(), 0);
    assert_eq!(f32::min2(0.0, -0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(f32::min2(-0.0, 0.0).to_bits(), (-0.0f32).to_bits());
    let z: Vec<Complex<f64>> = (0..5000).map(|_| Complex::new((r.next() % 3) as f64, r.mixed(3))).collect();
    same(reduce(Max, &z[..], false), extreme(&z, true).unwrap(), "complex max");
    same(reduce(Min, &z[..], false), extreme(&z, false).unwrap(), "complex min");
    let i: Vec<i64> = (0..5000).map(|_| r.next() as i64).collect();
    assert_eq!(reduce(Max, &i[..], false), *i.iter().max().unwrap());
    assert_eq!(reduce(Min, &i[..], false), *i.iter().min().unwrap());
}

#[test]
fn a_few_million_terms() {
    let x = mixed_f64(3_000_017, 8);
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    same(reduce(Sum, &x[..], false), lane_order(&x, From::Zero(0.0), &|a, b| a + b).unwrap(), "f64");
    same(reduce(Sum, &x32[..], false), lane_order(&x32, From::Zero(0.0), &|a, b| a + b).unwrap(), "f32");
}

#[test]
fn columns_side_by_side_have_each_columns_bits() {
    let mut r = Rng(9);
    for (rows, cols) in [(0, 3), (1, 1), (17, 5), (1025, 3), (3000, 600), (5000, 40)] {
        let stride = cols + 3;
        let data: Vec<f32> = (0..rows * stride).map(|_| r.mixed(30) as f32).collect();
        let grid = Strided::new(&data, rows, cols, stride).unwrap();
        let mut out = vec![0.0f32; cols];
        let mut out_fill = vec![0.0f32; cols];
        let fill = FillGrid {
            rows,
            cols,
            fill: |rr: core::ops::Range<usize>, cc: core::ops::Range<usize>, o: &mut [f32]| {
                let w = cc.len();
                for (k, row) in rr.enumerate() {
                    o[k * w..][..w].copy_from_slice(&data[row * stride + cc.start..][..w]);
                }
            },
        };
        reduce_columns(Sum, &grid, &mut out, false);
        reduce_columns(Sum, &fill, &mut out_fill, false);
        for c in 0..cols {
            let column: Vec<f32> = (0..rows).map(|i| data[i * stride + c]).collect();
            let want = reduce(Sum, &column[..], false);
            same(out[c], want, &format!("column {c} of {rows}x{cols}"));
            same(out_fill[c], want, &format!("filled column {c} of {rows}x{cols}"));
        }
    }
    // Complex products too, whose lanes start from their first term.
    let z: Vec<Complex<f64>> = (0..2100 * 7).map(|_| Complex::new(r.near_one(), r.near_one() - 1.0)).collect();
    let mut out = vec![Complex::new(0.0, 0.0); 7];
    reduce_columns(Prod, &Strided::new(&z, 2100, 7, 7).unwrap(), &mut out, false);
    for c in 0..7 {
        let column: Vec<_> = (0..2100).map(|i| z[i * 7 + c]).collect();
        same(out[c], reduce(Prod, &column[..], false), "complex product column");
    }
}

#[test]
fn threads_never_change_bits() {
    let x: Vec<f32> = mixed_f64(1_500_007, 10).iter().map(|&v| v as f32).collect();
    let (rows, cols) = (70_000, 37);
    let g: Vec<f64> = mixed_f64(rows * cols, 11);
    let grid = Strided::new(&g, rows, cols, cols).unwrap();
    let seq = reduce(Sum, &x[..], false);
    let mut seq_cols = vec![0.0; cols];
    reduce_columns(Sum, &grid, &mut seq_cols, false);
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let (par, par_cols) = pool.install(|| {
            let mut c = vec![0.0; cols];
            reduce_columns(Sum, &grid, &mut c, true);
            (reduce(Sum, &x[..], true), c)
        });
        same(par, seq, &format!("{threads} threads"));
        for c in 0..cols {
            same(par_cols[c], seq_cols[c], &format!("{threads} threads, column {c}"));
        }
    }
}

/// Rough speeds, against a plain read of the same memory:
/// `cargo test --release --no-default-features --lib reduce -- --ignored --nocapture`
#[test]
#[ignore]
fn bench_sums() {
    use std::time::Instant;
    fn time(what: &str, bytes: usize, reps: usize, mut f: impl FnMut() -> f32) {
        let mut best = f64::MAX;
        let mut sink = 0.0;
        for _ in 0..reps {
            let t = Instant::now();
            sink += f();
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{what}: {:.3} ms, {:.1} GB/s ({sink})", best * 1e3, bytes as f64 / best / 1e9);
    }
    let x: Vec<f32> = (0..10_000_000).map(|i| (i % 1000) as f32).collect();
    let read = |x: &[f32]| x.iter().fold(0u32, |a, v| a.wrapping_add(v.to_bits())) as f32;
    time("read 10M f32 (u32 wrapping sum)", 4 * x.len(), 10, || read(&x));
    time("sum 10M f32, 1 thread", 4 * x.len(), 10, || reduce(Sum, &x[..], false));
    time("sum 10M f32, pool", 4 * x.len(), 10, || reduce(Sum, &x[..], true));
    time("max 10M f32, 1 thread", 4 * x.len(), 10, || reduce(Max, &x[..], false));
    let small = &x[..8192];
    time("sum 8192 f32 in L1", 4 * 8192, 1000, || reduce(Sum, small, false));
    time("max 8192 f32 in L1", 4 * 8192, 1000, || reduce(Max, small, false));
    let m = 4096;
    let g: Vec<f32> = (0..m * m).map(|i| (i % 777) as f32).collect();
    let grid = Strided::new(&g, m, m, m).unwrap();
    let mut out = vec![0.0f32; m];
    time("read 4096x4096 f32", 4 * m * m, 5, || read(&g));
    for parallel in [false, true] {
        time(&format!("4096x4096 f32 axis 0, parallel {parallel}"), 4 * m * m, 5, || {
            reduce_columns(Sum, &grid, &mut out, parallel);
            out[7]
        });
    }
    time("4096x4096 f32 axis 1, row by row", 4 * m * m, 5, || g.chunks(m).map(|r| reduce(Sum, r, false)).sum());
}
