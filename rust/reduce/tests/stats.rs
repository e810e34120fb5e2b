//! Logsumexp and Moments, reductions and scans, against double-double
//! references and every bound the spec states; the odd/even network against
//! its recursive definition.

use super::data::Rng;
use super::dd::Dd;
use crate::reduce::network::Network;
use crate::reduce::real::cut_exp;
use crate::reduce::{logsumexp, logsumexp_scan, moments, moments_scan, network_depth, result_depth, Fill, Real};

/// The carriers as f64, exactly.
trait Wide: Real {
    fn wide(self) -> f64;
    fn of(x: f64) -> Self;
}
impl Wide for f32 {
    fn wide(self) -> f64 {
        self as f64
    }
    fn of(x: f64) -> f32 {
        x as f32
    }
}
impl Wide for f64 {
    fn wide(self) -> f64 {
        self
    }
    fn of(x: f64) -> f64 {
        x
    }
}

/// L and D of the reductions' bounds.
fn l_and_d(n: usize) -> (f64, f64) {
    let l = (n.min(1024) as f64 / 16.0).ceil() + 3.0;
    let d = (n.div_ceil(1024).max(1) as f64).log2().ceil();
    (l, d)
}

/// The exact Logsumexp of finite terms with a finite maximum.
fn lse_exact(x: &[f64]) -> Dd {
    let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let s = x.iter().fold(Dd::of(0.0), |s, &v| s.add(Dd::of(v).sub(Dd::of(m)).exp()));
    Dd::of(m).add(s.ln())
}

fn check_lse<F: Wide>(x: &[F], what: &str) {
    let n = x.len();
    let got = logsumexp(x, false).wide();
    let w: Vec<f64> = x.iter().map(|v| v.wide()).collect();
    let r = lse_exact(&w);
    let (l, d) = l_and_d(n);
    let u = F::U.wide();
    let bound = (l + d + 5.0 + 6.0 * (n as f64).ln()) * u + u * r.f64().abs();
    let err = error(got, r);
    assert!(err <= bound, "{what} n={n}: {got} vs {r:?}, error {err:e} > {bound:e}");
}

/// |got - exact|, without rounding the exact value first.
fn error(got: f64, exact: Dd) -> f64 {
    Dd::of(got).sub(exact).f64().abs()
}

/// Exact mean and variance, and the mean magnitude.
fn moments_exact(x: &[f64]) -> (Dd, Dd, f64) {
    let n = Dd::of(x.len() as f64);
    let mu = x.iter().fold(Dd::of(0.0), |s, &v| s.add(Dd::of(v))).div(n);
    let v = x.iter().fold(Dd::of(0.0), |s, &t| {
        let d = Dd::of(t).sub(mu);
        s.add(d.mul(d))
    });
    let m = x.iter().fold(Dd::of(0.0), |s, &t| s.add(Dd::of(t.abs()))).div(n);
    (mu, v.div(n), m.f64())
}

fn check_moments<F: Wide>(x: &[F], what: &str) {
    let n = x.len();
    let (mean, var) = moments(x, false);
    let w: Vec<f64> = x.iter().map(|v| v.wide()).collect();
    let (mu, v, m) = moments_exact(&w);
    let (l, d) = l_and_d(n);
    let u = F::U.wide();
    let e = (l + d) * u * m + u * mu.f64().abs();
    assert!(error(mean.wide(), mu) <= e, "{what} n={n}: mean {mean:?} vs {mu:?}");
    let vf = v.f64();
    let bound = (l + d + 5.0) * u * vf + 2.0 * (l + d + 1.0) * u * e * vf.sqrt() + (3.0 * l + 3.0 * d + 7.0) * u * e * e;
    let err = error(var.wide(), v);
    assert!(err <= bound, "{what} n={n}: variance {var:?} vs {v:?}, error {err:e} > {bound:e}");
}

/// Data sets that stress the bounds, in f64 (rounded to the carrier).
fn data_sets(n: usize, seed: u64) -> Vec<(&'static str, Vec<f64>)> {
    let mut r = Rng(seed);
    vec![
        ("mixed", (0..n).map(|_| r.mixed(4)).collect()),
        ("offset 1e8", (0..n).map(|_| 1e8 + r.unit() - 0.5).collect()),
        ("offset -3e4", (0..n).map(|_| -3e4 + 0.01 * (r.unit() - 0.5)).collect()),
        ("cancelling", (0..n).map(|i| if i % 2 == 0 { 1e4 } else { -1e4 } + r.unit()).collect()),
        ("wide", (0..n).map(|_| (r.unit() - 0.5) * 3000.0).collect()),
        ("one big", (0..n).map(|i| if i == n / 3 { 50.0 } else { r.unit() }).collect()),
    ]
}

const SIZES: [usize; 9] = [1, 2, 16, 17, 1000, 1024, 1025, 5000, 70_001];

#[test]
fn reductions_are_within_their_bounds() {
    for n in SIZES {
        for (what, x) in data_sets(n, n as u64) {
            let x32: Vec<f32> = x.iter().map(|&v| f32::of(v)).collect();
            check_lse(&x, what);
            check_lse(&x32, what);
            check_moments(&x, what);
            check_moments(&x32, what);
        }
    }
}

#[test]
fn reductions_of_specials() {
    let inf = f64::INFINITY;
    assert_eq!(logsumexp(&[0.0f64; 0][..], false), -inf);
    assert_eq!(logsumexp(&[-inf, -inf][..], false), -inf);
    assert_eq!(logsumexp(&[1.0, inf, 3.0][..], false), inf);
    assert!(logsumexp(&[1.0, f64::NAN, inf][..], false).is_nan());
    assert_eq!(logsumexp(&[-inf, 2.0][..], false), 2.0);
    assert_eq!(logsumexp(&[0.0f32][..], false), 0.0);
    // Terms far below the maximum are cut, not rounded to subnormals.
    assert_eq!(logsumexp(&[0.0f32, -100.0][..], false), 0.0);
    let (m, v) = moments(&[0.0f64; 0][..], false);
    assert!(m.is_nan() && v.is_nan());
    let (m, v) = moments(&[1.0, f64::NAN][..], false);
    assert!(m.is_nan() && v.is_nan());
    let (m, v) = moments(&[1.0, inf][..], false);
    assert!(m == inf && v.is_nan());
    // Σ d² overflows: the variance is +∞, not ∞ - ∞.
    let (m, v) = moments(&[1e300, -1e300, 1e300, -1e300][..], false);
    assert!(m == 0.0 && v == inf);
    // A constant's variance is +0 even where rounding would make it negative.
    let (_, v) = moments(&vec![0.1f32; 3001][..], false);
    assert!(v == 0.0 && v.is_sign_positive() || v > 0.0);
    // Threads and sources never change a bit.
    let x: Vec<f32> = data_sets(300_001, 9)[0].1.iter().map(|&v| v as f32).collect();
    let fill = Fill { count: x.len(), fill: |s: usize, o: &mut [f32]| o.copy_from_slice(&x[s..s + o.len()]) };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let (a, b) = pool.install(|| (logsumexp(&fill, true), moments(&fill, true)));
    assert_eq!(a.to_bits(), logsumexp(&x[..], false).to_bits());
    let c = moments(&x[..], false);
    assert_eq!((b.0.to_bits(), b.1.to_bits()), (c.0.to_bits(), c.1.to_bits()));
}

fn check_lse_scan<F: Wide>(x: &[F], what: &str) {
    let n = x.len();
    let mut out = vec![F::ZERO; n];
    logsumexp_scan(x, &mut out);
    let u = F::U.wide();
    let d = network_depth(n) as f64;
    let (mut m, mut s) = (f64::NEG_INFINITY, Dd::of(0.0));
    let (mut nan, mut inf) = (false, false);
    for i in 0..n {
        let v = x[i].wide();
        nan |= v.is_nan();
        inf |= v == f64::INFINITY;
        let got = out[i].wide();
        if nan {
            assert!(got.is_nan(), "{what} i={i}: {got} where a NaN came before");
            continue;
        }
        if inf {
            assert_eq!(got, f64::INFINITY, "{what} i={i}");
            continue;
        }
        if v > m {
            s = if m == f64::NEG_INFINITY { Dd::of(0.0) } else { s.mul(Dd::of(m).sub(Dd::of(v)).exp()) };
            m = v;
        }
        if m == f64::NEG_INFINITY {
            assert_eq!(got, f64::NEG_INFINITY, "{what} i={i}");
            continue;
        }
        if v > f64::NEG_INFINITY {
            s = s.add(Dd::of(v).sub(Dd::of(m)).exp());
        }
        let r = Dd::of(m).add(s.ln());
        let bound = (7.0 * d + 6.0 * ((i + 1) as f64).ln()) * u + u * r.f64().abs();
        let err = error(got, r);
        assert!(err <= bound, "{what} i={i}: {got} vs {r:?}, error {err:e} > {bound:e}");
    }
}

fn check_moments_scan<F: Wide>(x: &[F], what: &str) {
    let n = x.len();
    let (mut mean, mut var) = (vec![F::ZERO; n], vec![F::ZERO; n]);
    moments_scan(x, &mut mean, &mut var);
    let u = F::U.wide();
    let d = network_depth(n) as f64;
    let x0 = x[0].wide();
    let (mut sy, mut syy) = (Dd::of(0.0), Dd::of(0.0));
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..n {
        let v = x[i].wide();
        let y = Dd::of(v).sub(Dd::of(x0));
        sy = sy.add(y);
        syy = syy.add(y.mul(y));
        lo = lo.min(v);
        hi = hi.max(v);
        let k = Dd::of((i + 1) as f64);
        let mu = Dd::of(x0).add(sy.div(k));
        let v = syy.sub(sy.mul(sy).div(k)).div(k);
        let vf = v.f64().max(0.0);
        let r = hi - lo;
        let (gm, gv) = (mean[i].wide(), var[i].wide());
        assert!(error(gm, mu) <= (4.0 * d + 1.0) * u * r + u * mu.f64().abs(), "{what} i={i}: mean {gm} vs {mu:?}");
        let bound = (7.0 * d + 1.0) * u * vf + (4.0 * d * d - 2.0 * d) * u * r * vf.sqrt();
        let err = error(gv, v);
        assert!(err <= bound, "{what} i={i}: variance {gv} vs {v:?}, error {err:e} > {bound:e}");
    }
}

#[test]
fn scans_are_within_their_bounds() {
    for n in [1, 2, 3, 17, 1000, 4097, 20_000] {
        for (what, x) in data_sets(n, 100 + n as u64) {
            let x32: Vec<f32> = x.iter().map(|&v| f32::of(v)).collect();
            check_lse_scan(&x, what);
            check_lse_scan(&x32, what);
            check_moments_scan(&x, what);
            check_moments_scan(&x32, what);
        }
    }
}

#[test]
fn scans_of_specials() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let x = [-inf, -inf, 1.0, inf, 2.0, nan, 3.0];
    let mut out = [0.0; 7];
    logsumexp_scan(&x[..], &mut out);
    assert_eq!(out[..3], [-inf, -inf, 1.0]);
    assert_eq!(out[3..5], [inf, inf]);
    assert!(out[5].is_nan() && out[6].is_nan());
    let (mut m, mut v) = ([0.0; 7], [0.0; 7]);
    moments_scan(&[2.0, 4.0, inf, 1.0, 1.0, 1.0, 1.0][..], &mut m, &mut v);
    assert_eq!((m[0], v[0], m[1], v[1]), (2.0, 0.0, 3.0, 1.0));
    assert!(m[2] == inf && v[2].is_nan() && v[6].is_nan());
    // A first term that is not finite shifts by 0.
    moments_scan(&[nan, 1.0][..], &mut m[..2], &mut v[..2]);
    assert!(m[0].is_nan() && m[1].is_nan() && v[1].is_nan());
    logsumexp_scan(&[0.0f64; 0][..], &mut []);
    moments_scan(&[0.0f64; 0][..], &mut [], &mut []);
    check_lse_scan(&[-inf, -inf, 0.5, -inf, 700.0, -700.0], "with -inf");
}

/// The scan's result i by the network of the combine in full, both exps
/// computed as the spec writes it.
fn lse_scan_in_full<F: Real>(x: &[F]) -> Vec<F> {
    let shift = |m: F| if m.finite() { m } else { F::ZERO };
    let combine = |a: (F, F), b: (F, F)| {
        let m = F::max2(a.0, b.0);
        let c = shift(m);
        (m, a.1 * cut_exp(a.0 - c) + b.1 * cut_exp(b.0 - c))
    };
    let mut net = Network::new();
    x.iter()
        .map(|&v| {
            let (m, s) = net.push((v, cut_exp(v - shift(v))), combine);
            if m.finite() { m + s.ln() } else { m }
        })
        .collect()
}

#[test]
fn lse_scan_has_the_bits_of_the_combine_in_full() {
    // The scan skips each exp of 0 (the maximum's own, exactly 1): ties,
    // zeros of either sign, terms below the cut, infinities and NaNs.
    fn check<F: Wide>(x: &[F], what: &str) {
        let mut out = vec![F::ZERO; x.len()];
        logsumexp_scan(x, &mut out);
        for (i, (g, w)) in out.iter().zip(lse_scan_in_full(x)).enumerate() {
            let (g, w) = (g.wide(), w.wide());
            assert!(g.to_bits() == w.to_bits() || g.is_nan() && w.is_nan(), "{what} i={i}: {g} vs {w}");
        }
    }
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let picks = [0.0, -0.0, 1.0, -1.0, 2.0, 3.5, -200.0, -800.0, -inf];
    let mut r = Rng(41);
    for n in [1, 2, 3, 64, 1000, 5000] {
        let base: Vec<f64> = (0..n)
            .map(|_| if r.next() % 3 == 0 { picks[(r.next() % 9) as usize] } else { r.mixed(6) })
            .collect();
        let mut sets = vec![("ties and cuts", base.clone())];
        for (what, at, v) in [("an inf", n / 2, inf), ("a NaN", 2 * n / 3, nan)] {
            let mut x = base.clone();
            x[at] = v;
            sets.push((what, x));
        }
        for (what, x) in sets {
            check(&x, what);
            check(&x.iter().map(|&v| f32::of(v)).collect::<Vec<f32>>(), what);
        }
    }
}

/// The odd/even recursion: pair neighbours, scan the pairs, then each odd
/// position takes its pair's result and each even one after 0 the previous
/// pair's result combined with its own term.
fn odd_even(x: &[String]) -> Vec<String> {
    if x.len() <= 1 {
        return x.to_vec();
    }
    let pairs: Vec<String> = x.chunks_exact(2).map(|p| format!("({}+{})", p[0], p[1])).collect();
    let scanned = odd_even(&pairs);
    (0..x.len())
        .map(|i| match i {
            0 => x[0].clone(),
            _ if i % 2 == 1 => scanned[i / 2].clone(),
            _ => format!("({}+{})", scanned[i / 2 - 1], x[i]),
        })
        .collect()
}

#[test]
fn the_network_is_the_odd_even_recursion() {
    for n in 0..140 {
        let terms: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let want = odd_even(&terms);
        let mut net = Network::new();
        let mut names: Vec<String> = Vec::new();
        // States are indices into `names`, so that combine can record.
        let got: Vec<String> = (0..n)
            .map(|i| {
                names.push(i.to_string());
                let term = names.len() - 1;
                let r = {
                    let cell = core::cell::RefCell::new(&mut names);
                    net.push(term, |a: usize, b: usize| {
                        let mut v = cell.borrow_mut();
                        let e = format!("({}+{})", v[a], v[b]);
                        v.push(e);
                        v.len() - 1
                    })
                };
                names[r].clone()
            })
            .collect();
        assert_eq!(got, want, "n={n}");
        for (i, e) in got.iter().enumerate() {
            let mut depth = 0u32;
            let mut most = 0;
            for ch in e.chars() {
                depth = if ch == '(' { depth + 1 } else if ch == ')' { depth - 1 } else { depth };
                most = most.max(depth);
            }
            assert_eq!(most, result_depth(i), "depth of result {i}");
        }
    }
    for n in 0..5000usize {
        let brute = (0..n).map(result_depth).max().unwrap_or(0);
        assert_eq!(network_depth(n), brute, "n={n}");
        assert!(n < 2 || network_depth(n) <= 2 * n.ilog2());
    }
}
