//! Moments: the two-pass reduction, and the scan by the odd/even network.

use super::network::Network;
use super::real::{Pair, Real};
use super::terms::{Mapped, Terms};
use super::BLOCK;

/// The mean and the variance of `terms`: the mean c, their lane-order sum
/// over their count, then, d = x - c, (Σ d² - Σ d (Σ d / n)) / n of
/// lane-order sums, +0 where that is negative and Σ d² where that is +∞;
/// both a NaN where c is (as for no term). `parallel` as for
/// [`reduce`](super::reduce).
pub fn moments<F: Real, S: Terms<F> + ?Sized>(terms: &S, parallel: bool) -> (F, F) {
    let n = F::of_count(terms.count());
    let c = F::sum(terms, parallel) / n;
    if c.nan() {
        return (c, c);
    }
    let d = Mapped::new(terms, |x: F| {
        let d = x - c;
        Pair(d, d * d)
    });
    let Pair(s1, s2) = super::reduce(super::Sum, &d, parallel);
    let var = if s2 == F::INFINITY {
        s2
    } else {
        let v = (s2 - s1 * (s1 / n)) / n;
        if v < F::ZERO { F::ZERO } else { v }
    };
    (c, var)
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
