//! Moments: the two-pass reduction, and the scan by the odd/even network.

use super::network::Network;
use super::real::Real;
use super::terms::Terms;
use super::tree::tree;
use super::{BLOCK, LANES};

/// The mean and the variance of `terms`: the mean c, their lane-order sum
/// over their count, then, d = x - c, (Σ d² - Σ d (Σ d / n)) / n of
/// lane-order sums, +0 where that is negative and Σ d² where that is +∞;
/// both a NaN where c is (as for no term). `parallel` as for
/// [`reduce`](super::reduce).
pub fn moments<F: Real, S: Terms<F> + ?Sized>(terms: &S, parallel: bool) -> (F, F) {
    let count = terms.count();
    let n = F::of_count(count);
    let c = F::sum(terms, parallel) / n;
    // No term gives 0 / 0: a NaN.
    if c.nan() {
        return (c, c);
    }
    let leaf = |b: usize| terms.with(b * BLOCK, count.min((b + 1) * BLOCK), |xs| deviations(xs, c));
    let combine = |a: (F, F), b: (F, F)| (a.0 + b.0, a.1 + b.1);
    let (s1, s2) = tree(0, count.div_ceil(BLOCK), 1, parallel, &leaf, &combine);
    let var = if s2 == F::INFINITY {
        s2
    } else {
        let v = (s2 - s1 * (s1 / n)) / n;
        if v < F::ZERO { F::ZERO } else { v }
    };
    (c, var)
}

/// The lane-order sums of d = x - c and of d * d over one block of 1 to
/// [`BLOCK`] terms, side by side, each with the bits of its own sum (the
/// products rounded, never fused into the sums).
fn deviations<F: Real>(xs: &[F], c: F) -> (F, F) {
    let n = xs.len();
    let (mut s, mut q) = ([F::ZERO; LANES], [F::ZERO; LANES]);
    // Each lane's first term: +0 + d, +0 + d * d.
    for (l, &x) in xs.iter().take(LANES).enumerate() {
        let d = x - c;
        (s[l], q[l]) = (F::ZERO + d, F::ZERO + d * d);
    }
    if n > LANES {
        let full = n - n % LANES;
        deviation_rows(&mut s, &mut q, &xs[LANES..full], c);
        for (l, &x) in xs[full..].iter().enumerate() {
            let d = x - c;
            (s[l], q[l]) = (s[l] + d, q[l] + d * d);
        }
    }
    let present = n.min(LANES);
    (F::sum_lanes(&mut s, present), F::sum_lanes(&mut q, present))
}

/// Whole rows of 16 terms into the lanes of both sums; out of line, so that
/// the vectoriser sees the lanes alone.
#[inline(never)]
fn deviation_rows<F: Real>(s: &mut [F; LANES], q: &mut [F; LANES], xs: &[F], c: F) {
    let (mut a, mut b) = (*s, *q);
    for row in xs.chunks_exact(LANES) {
        for l in 0..LANES {
            let d = row[l] - c;
            a[l] = a[l] + d;
            b[l] = b[l] + d * d;
        }
    }
    (*s, *q) = (a, b);
}

/// A Moments state: a mean μ, a sum S of squared deviations, a count n.
#[derive(Clone, Copy, Debug)]
struct State<F> {
    mu: F,
    s: F,
    n: F,
}

/// A state a then a state b: n = na + nb, δ = μb - μa, w = nb / n,
/// μ = μa + δ w (μa + μb where either is not finite),
/// S = (Sa + Sb) + (δ δ) (na w).
#[inline]
fn combine<F: Real>(a: State<F>, b: State<F>) -> State<F> {
    let n = a.n + b.n;
    let delta = b.mu - a.mu;
    let w = b.n / n;
    let mu = if a.mu.finite() && b.mu.finite() { a.mu + delta * w } else { a.mu + b.mu };
    State { mu, s: (a.s + b.s) + (delta * delta) * (a.n * w), n }
}

/// The variance where μ is not finite: μ - μ, a NaN.
#[inline]
#[allow(clippy::eq_op)]
fn not_finite_variance<F: Real>(mu: F) -> F {
    mu - mu
}

/// The Moments scan of `terms` into `mean` and `var`, by the odd/even
/// network over the states (t - c, +0, 1), c the first term, or 0 where it
/// is not finite: result i is the mean c + μ and the variance S / (i + 1),
/// or μ - μ where μ is not finite.
///
/// Panics where the lengths differ.
pub fn moments_scan<F: Real, S: Terms<F> + ?Sized>(terms: &S, mean: &mut [F], var: &mut [F]) {
    let n = terms.count();
    assert!(mean.len() == n && var.len() == n);
    if n == 0 {
        return;
    }
    let c = terms.with(0, 1, |t| if t[0].finite() { t[0] } else { F::ZERO });
    let mut net = Network::new();
    let mut i = 0;
    for (b, (m, v)) in mean.chunks_mut(BLOCK).zip(var.chunks_mut(BLOCK)).enumerate() {
        terms.with(b * BLOCK, n.min((b + 1) * BLOCK), |t| {
            for ((m, v), &x) in m.iter_mut().zip(v.iter_mut()).zip(t) {
                i += 1;
                let st = net.push(State { mu: x - c, s: F::ZERO, n: F::of_count(1) }, combine);
                *m = c + st.mu;
                // μ - μ: the NaN the spec names where μ is not finite.
                *v = if st.mu.finite() { st.s / F::of_count(i) } else { not_finite_variance(st.mu) };
            }
        });
    }
}
