//! Max, Min and Arg of floats and integers at their edges: both zeros, both
//! infinities, NaNs of either sign, runs all negative or all positive, ties
//! within and across blocks and leaves, against definitions from the order.

use super::data::{same, Bits, Rng};
use super::reference::extreme;
use crate::reduce::{arg, reduce, Max, Min, Ordered, Pick};

/// Arg from its definition: the first term no later one is better than.
fn first_best<T: Ordered, P: Pick<T>>(terms: &[T]) -> Option<(T, i64)> {
    let mut best: Option<(T, i64)> = None;
    for (i, &t) in terms.iter().enumerate() {
        if best.is_none_or(|b| P::better(t, b.0)) {
            best = Some((t, i as i64));
        }
    }
    best
}

fn check<T: Ordered + Bits + core::fmt::Debug>(x: &[T], what: &str) {
    let lowest = reduce(Max, &[][..], false);
    let highest = reduce(Min, &[][..], false);
    same(reduce(Max, x, false), extreme(x, true).unwrap_or(lowest), &format!("max {what}"));
    same(reduce(Min, x, false), extreme(x, false).unwrap_or(highest), &format!("min {what}"));
    let key = |r: Option<(T, i64)>| r.map(|(v, i)| (v.bits(), i));
    for parallel in [false, true] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let (a, b) = pool.install(|| (arg(Max, x, parallel), arg(Min, x, parallel)));
        assert_eq!(key(a), key(first_best::<T, Max>(x)), "argmax {what}");
        assert_eq!(key(b), key(first_best::<T, Min>(x)), "argmin {what}");
    }
}

/// Lengths around lanes, blocks and Arg's leaves of 16 blocks.
const LENGTHS: [usize; 12] = [1, 15, 16, 17, 1023, 1024, 1025, 16 * 1024 - 1, 16 * 1024 + 1, 33 * 1024 + 5, 70_000, 300_001];

fn floats(r: &mut Rng, n: usize, pick: &[f64]) -> Vec<f64> {
    (0..n).map(|_| pick[(r.next() % pick.len() as u64) as usize]).collect()
}

#[test]
fn float_extremes_at_their_edges() {
    let mut r = Rng(31);
    let inf = f64::INFINITY;
    let sets: [&[f64]; 6] = [
        &[-0.0, 0.0, 1.5, -1.5, 7.0, -7.0],
        &[-0.0, -1.0, -2.0, -inf, -1e-310],
        &[0.0, 1.0, 2.0, inf, 1e-310],
        &[-0.0],
        &[-inf, inf, 0.0, -0.0],
        &[-3.0, -3.0, 5.0, 5.0, -0.0, 0.0, 1e300, -1e300],
    ];
    for set in sets {
        for n in LENGTHS {
            let x = floats(&mut r, n, set);
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            check(&x, &format!("f64 {set:?} n={n}"));
            check(&x32, &format!("f32 {set:?} n={n}"));
            // NaNs of either sign, one, then another earlier.
            let neg_nan = f64::from_bits(f64::NAN.to_bits() | 1 << 63);
            for (at, nan) in [(n - 1, f64::NAN), (n / 2, neg_nan), (n / 3, f64::NAN)] {
                let mut y = x.clone();
                y[at] = nan;
                let y32: Vec<f32> = y.iter().map(|&v| v as f32).collect();
                check(&y, &format!("f64 {set:?} n={n} NaN at {at}"));
                check(&y32, &format!("f32 {set:?} n={n} NaN at {at}"));
            }
        }
    }
    // Ties across leaves: the extreme first in the second leaf and again later.
    let mut x = vec![1.0f32; 300_001];
    x[20_000] = 2.0;
    x[250_000] = 2.0;
    x[100_000] = -2.0;
    x[299_999] = -2.0;
    check(&x, "ties across leaves");
}

#[test]
fn integer_extremes_at_their_edges() {
    let mut r = Rng(32);
    for n in LENGTHS {
        let mut a: Vec<i64> = (0..n).map(|_| (r.next() % 7) as i64 - 3).collect();
        let mut b: Vec<u64> = (0..n).map(|_| r.next() % 5 + (1 << 63) - 2).collect();
        check(&a, &format!("i64 n={n}"));
        check(&b, &format!("u64 n={n}"));
        a[n / 2] = i64::MIN;
        a[n - 1] = i64::MAX;
        b[n / 3] = u64::MAX;
        b[n - 1] = 0;
        check(&a, &format!("i64 with its bounds n={n}"));
        check(&b, &format!("u64 with its bounds n={n}"));
    }
}
