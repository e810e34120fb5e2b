//! Logsumexp: the two-pass reduction, and the scan by the odd/even network.

use super::network::Network;
use super::real::{cut_exp, Real};
use super::terms::{Mapped, Terms};
use super::BLOCK;

/// The Logsumexp of `terms`: the maximum m, then c + log s with c = m where
/// finite and 0 elsewhere and s the lane-order sum of exp (x - c), an exp
/// below the cut taken as 0; a NaN where m is. No term gives -∞. `parallel`
/// as for [`reduce`](super::reduce).
pub fn logsumexp<F: Real, S: Terms<F> + ?Sized>(terms: &S, parallel: bool) -> F {
    let m = F::max(terms, parallel);
    if m.nan() {
        return m;
    }
    let c = if m.finite() { m } else { F::ZERO };
    c + F::sum(&Mapped::new(terms, |x: F| cut_exp(x - c)), parallel).ln()
}

/// A Logsumexp state: a maximum m and a sum s.
#[derive(Clone, Copy, Debug)]
struct State<F> {
    m: F,
    s: F,
}

/// c of a maximum: itself where finite, else 0.
#[inline(always)]
fn shift<F: Real>(m: F) -> F {
    if m.finite() { m } else { F::ZERO }
}

/// A state a then a state b: m = Maximum (ma, mb) and
/// s = sa e (ma - c) + sb e (mb - c).
#[inline]
fn combine<F: Real>(a: State<F>, b: State<F>) -> State<F> {
    let m = F::max2(a.m, b.m);
    let c = shift(m);
    State { m, s: a.s * cut_exp(a.m - c) + b.s * cut_exp(b.m - c) }
}

/// The Logsumexp scan of `terms` into `out`, by the odd/even network:
/// result i is m + log s of the network's state for terms 0 to i, or m
/// where m is not finite.
///
/// Panics where `out` is not as long as `terms`.
pub fn logsumexp_scan<F: Real, S: Terms<F> + ?Sized>(terms: &S, out: &mut [F]) {
    let n = terms.count();
    assert_eq!(out.len(), n);
    let mut net = Network::new();
    for (b, o) in out.chunks_mut(BLOCK).enumerate() {
        terms.with(b * BLOCK, n.min((b + 1) * BLOCK), |t| {
            for (r, &x) in o.iter_mut().zip(t) {
                let st = net.push(State { m: x, s: cut_exp(x - shift(x)) }, combine);
                *r = if st.m.finite() { st.m + st.s.ln() } else { st.m };
            }
        });
    }
}
