//! Logsumexp and Moments reductions bit for bit against their two passes
//! written plainly from the spec: the maximum or the mean, then lane-order
//! sums of each term mapped one at a time by the scalar kinds.

use super::data::{lengths, same, Bits, Rng};
use super::reference::{lane_order, From};
use crate::reduce::{logsumexp, moments, reduce, Max, Real};

/// "c + log s, c being m where finite and 0 elsewhere and s the sum of
/// exp (x - c), an exp of less than the cut taken as 0"; a NaN where m is.
fn lse_plain<F: Real + Bits>(x: &[F]) -> F {
    let m = reduce(Max, x, false);
    if m.nan() {
        return m;
    }
    let c = if m.finite() { m } else { F::ZERO };
    let e: Vec<F> = x.iter().map(|&v| if v - c < F::CUT { F::ZERO } else { (v - c).exp() }).collect();
    c + lane_order(&e, From::Zero(F::ZERO), &|a, b| a + b).unwrap_or(F::ZERO).ln()
}

/// "The mean c, the terms' sum over their count", then
/// "(Σ d² - Σ d (Σ d / n)) / n, d = x - c, +0 where that is negative or Σ d²
/// where that is +∞", both a NaN where c is.
fn moments_plain<F: Real + Bits>(x: &[F]) -> (F, F) {
    let n = F::of_count(x.len());
    let sum = |t: &[F]| lane_order(t, From::Zero(F::ZERO), &|a, b| a + b).unwrap_or(F::ZERO);
    let c = sum(x) / n;
    if c.nan() {
        return (c, c);
    }
    let d: Vec<F> = x.iter().map(|&v| v - c).collect();
    let d2: Vec<F> = d.iter().map(|&v| v * v).collect();
    let (s1, s2) = (sum(&d), sum(&d2));
    let v = if s2 == F::INFINITY { s2 } else { (s2 - s1 * (s1 / n)) / n };
    (c, if v < F::ZERO { F::ZERO } else { v })
}

fn check<F: Real + Bits>(x: &[F], what: &str) {
    for n in lengths().into_iter().filter(|&n| n <= x.len()) {
        let t = &x[..n];
        same(logsumexp(t, false), lse_plain(t), &format!("logsumexp {what} n={n}"));
        let (m, v) = moments(t, false);
        let (pm, pv) = moments_plain(t);
        same(m, pm, &format!("mean {what} n={n}"));
        same(v, pv, &format!("variance {what} n={n}"));
    }
}

#[test]
fn two_passes_have_the_plain_bits() {
    let mut r = Rng(41);
    let len = 129 * 1024 + 17;
    // Spread wide enough that many exps fall below the cut (and some near
    // it), and offsets that make the deviations cancel.
    let sets: Vec<(&str, Vec<f64>)> = vec![
        ("wide", (0..len).map(|_| (r.unit() - 0.5) * 400.0).collect()),
        ("mixed", (0..len).map(|_| r.mixed(6)).collect()),
        ("offset", (0..len).map(|_| 1e4 + r.unit()).collect()),
        ("near the cut", (0..len).map(|i| if i % 9 == 0 { 0.0 } else { -87.0 - r.unit() * 2.0 }).collect()),
    ];
    for (what, x) in &sets {
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        check(x, what);
        check(&x32, what);
        let mut y = x.clone();
        y[len / 2] = f64::NEG_INFINITY;
        check(&y, &format!("{what} with -inf"));
    }
}
