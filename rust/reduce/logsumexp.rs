//! Logsumexp: the two-pass reduction, and the scan by the odd/even network.

use super::network::Network;
use super::real::{cut_exp, Real};
use super::terms::Terms;
use super::tree::tree;
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
    let n = terms.count();
    // Each block's exps by the kind's vectorised slice form, which has its
    // scalar form's bits, an argument below the cut made -∞, whose exp is
    // the +0 the cut gives; then the block's lane-order sum.
    let leaf = |b: usize| {
        terms.with(b * BLOCK, n.min((b + 1) * BLOCK), |xs| {
            let (mut d, mut e) = ([F::ZERO; BLOCK], [F::ZERO; BLOCK]);
            let (d, e) = (&mut d[..xs.len()], &mut e[..xs.len()]);
            for (d, &x) in d.iter_mut().zip(xs) {
                let z = x - c;
                *d = if z < F::CUT { F::LOWEST } else { z };
            }
            F::exp_slice(d, e);
            F::sum_block(e)
        })
    };
    // The blocks' tree of a Sum, whose combine is an addition.
    let s = if n == 0 { F::ZERO } else { tree(0, n.div_ceil(BLOCK), 1, parallel, &leaf, &|a: F, b: F| a + b) };
    c + s.ln()
}

/// A Logsumexp state: a maximum m and a sum s.
#[derive(Clone, Copy, Debug)]
struct State<F> {
    m: F,
    s: F,
}

/// The state of one term x: m = x and s = e (x - c), c = x where finite,
/// else 0.
#[inline(always)]
fn state<F: Real>(x: F) -> State<F> {
    // e (x - x) = e 0 = 1 exactly where x is finite.
    State { m: x, s: if x.finite() { F::ONE } else { cut_exp(x) } }
}

/// A state a then a state b: m = Maximum (ma, mb) and
/// s = sa e (ma - c) + sb e (mb - c), c = m where finite, else 0.
#[inline]
fn combine<F: Real>(a: State<F>, b: State<F>) -> State<F> {
    let m = F::max2(a.m, b.m);
    if m.finite() {
        // m is one of the two maxima, whose factor e (m - m) = e 0 is
        // exactly 1: the other's exp alone, the same bits.
        let (top, other) = if a.m == m { (a, b) } else { (b, a) };
        return State { m, s: top.s + other.s * cut_exp(other.m - m) };
    }
    // c = 0, and x - 0 is x, bit for bit.
    State { m, s: a.s * cut_exp(a.m) + b.s * cut_exp(b.m) }
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
                let st = net.push(state(x), combine);
                *r = if st.m.finite() { st.m + st.s.ln() } else { st.m };
            }
        });
    }
}
