//! Transforms against a double-double DFT (f64 for float32 where the DFT
//! would be too slow), round trips, bits across layouts, batches and
//! threads, zero sizes and refusals.

use super::real::Real;
use super::twiddle::{Cis, Dd};
use super::{error_factor, plan, Direction, Kind};
use crate::core::call::Call;
use crate::core::dtype::Dtype;
use crate::core::layout::{Layout, Memory, View};
use crate::core::pool;
use crate::core::test_rng::splitmix;
use Direction::{Forward, Inverse};

fn complex_dtype<T: Real>() -> Dtype {
    if std::mem::size_of::<T>() == 4 { Dtype::Complex64 } else { Dtype::Complex128 }
}
fn real_dtype<T: Real>() -> Dtype {
    if std::mem::size_of::<T>() == 4 { Dtype::Float32 } else { Dtype::Float64 }
}
fn unit<T: Real>() -> f64 {
    if std::mem::size_of::<T>() == 4 { f32::EPSILON as f64 / 2.0 } else { f64::EPSILON / 2.0 }
}

fn randoms<T: Real>(len: usize, seed: u64) -> Vec<T> {
    let mut s = seed;
    (0..len).map(|_| T::of((splitmix(&mut s) >> 11) as f64 / (1u64 << 52) as f64 - 1.0)).collect()
}

/// An operand: its buffer of parts and its layout (in elements).
struct Arr<T> {
    buf: Vec<T>,
    layout: Layout,
}

impl<T: Real> Arr<T> {
    fn parts(&self) -> usize {
        if self.layout.dtype.is_complex() { 2 } else { 1 }
    }

    /// The offsets, in elements, of each index in C order.
    fn offsets(&self) -> Vec<isize> {
        let l = &self.layout;
        let mut offs = vec![l.offset as isize];
        for (&n, &s) in l.shape.iter().zip(&l.strides) {
            offs = offs.iter().flat_map(|&o| (0..n as isize).map(move |i| o + i * s)).collect();
        }
        offs
    }

    /// An array of `dtype` and `shape` holding `vals` (C order, parts),
    /// laid out by `strides` (elements) from an offset that keeps it inside.
    fn place(dtype: Dtype, shape: &[usize], strides: &[isize], vals: &[T]) -> Arr<T> {
        let lo: isize = shape.iter().zip(strides).map(|(&n, &s)| if s < 0 { (n as isize - 1) * s } else { 0 }).sum();
        let hi: isize = shape.iter().zip(strides).map(|(&n, &s)| if s > 0 { (n as isize - 1) * s } else { 0 }).sum();
        let k = if dtype.is_complex() { 2 } else { 1 };
        let extent = if shape.contains(&0) { 3 } else { (hi - lo + 3) as usize };
        let layout = Layout { dtype, shape: shape.to_vec(), strides: strides.to_vec(), offset: (1 - lo) as usize };
        let mut a = Arr { buf: vec![T::of(7.0); extent * k], layout };
        let offs = a.offsets();
        for (i, &o) in offs.iter().enumerate() {
            for p in 0..k {
                a.buf[o as usize * k + p] = vals[i * k + p];
            }
        }
        a
    }

    fn contiguous(dtype: Dtype, shape: &[usize], vals: &[T]) -> Arr<T> {
        Arr::place(dtype, shape, &Layout::contiguous(dtype, shape).strides, vals)
    }

    /// The values in C order, parts.
    fn values(&self) -> Vec<T> {
        let k = self.parts();
        self.offsets().iter().flat_map(|&o| (0..k).map(move |p| o as usize * k + p)).map(|i| self.buf[i]).collect()
    }

    fn view(&mut self) -> View {
        let bytes = self.buf.len() * std::mem::size_of::<T>();
        View::new(self.layout.clone(), Memory { base: self.buf.as_mut_ptr() as *mut u8, bytes }).unwrap()
    }
}

fn run<T: Real>(kind: Kind, axes: &[usize], dst: &mut Arr<T>, x: &mut Arr<T>) -> Result<(), String> {
    plan(kind, axes, dst.view(), x.view())?.run()
}

/// The transform of C-contiguous `x` (parts) of `shape`, contiguous.
fn transform<T: Real>(kind: Kind, shape: &[usize], axes: &[usize], x: &[T]) -> Vec<T> {
    let last = *axes.last().unwrap();
    let mut dshape = shape.to_vec();
    let (xd, dd) = match kind {
        Kind::C2c(_) => (complex_dtype::<T>(), complex_dtype::<T>()),
        Kind::R2c => {
            dshape[last] = shape[last] / 2 + 1;
            (real_dtype::<T>(), complex_dtype::<T>())
        }
        Kind::C2r => {
            dshape[last] = (shape[last] - 1) * 2; // callers pass the bins' shape; see c2r below
            (complex_dtype::<T>(), real_dtype::<T>())
        }
    };
    let mut xa = Arr::contiguous(xd, shape, x);
    let k = if dd.is_complex() { 2 } else { 1 };
    let mut da = Arr::contiguous(dd, &dshape, &vec![T::ZERO; dshape.iter().product::<usize>() * k]);
    run(kind, axes, &mut da, &mut xa).unwrap();
    da.values()
}

/// c2r of `x` (bins, parts) into `n` points along the last of `axes`.
fn c2r<T: Real>(dshape: &[usize], axes: &[usize], x: &[T]) -> Vec<T> {
    let last = *axes.last().unwrap();
    let mut xshape = dshape.to_vec();
    xshape[last] = dshape[last] / 2 + 1;
    let mut xa = Arr::contiguous(complex_dtype::<T>(), &xshape, x);
    let mut da = Arr::contiguous(real_dtype::<T>(), dshape, &vec![T::ZERO; dshape.iter().product()]);
    run(Kind::C2r, axes, &mut da, &mut xa).unwrap();
    da.values()
}

type Cdd = (Dd, Dd);

fn cadd(a: Cdd, b: Cdd) -> Cdd {
    (a.0.add(b.0), a.1.add(b.1))
}
fn cmul_dd(a: Cdd, b: Cdd) -> Cdd {
    (a.0.mul(b.0).sub(a.1.mul(b.1)), a.0.mul(b.1).add(a.1.mul(b.0)))
}

/// The exact (double-double) DFT of a line.
fn dft(x: &[Cdd], inverse: bool) -> Vec<Cdd> {
    let n = x.len();
    if n == 0 {
        return vec![];
    }
    let cis = Cis::new(n as u64);
    let table: Vec<Cdd> = (0..n as u64)
        .map(|r| {
            let (c, s) = cis.get(r);
            (c, if inverse { s } else { s.neg() })
        })
        .collect();
    (0..n)
        .map(|k| {
            let mut acc = (Dd::of(0.0), Dd::of(0.0));
            for (j, &v) in x.iter().enumerate() {
                acc = cadd(acc, cmul_dd(v, table[j * k % n]));
            }
            acc
        })
        .collect()
}

/// One bin of the exact DFT, O(n).
fn dft_bin(x: &[Cdd], k: usize, inverse: bool) -> Cdd {
    let n = x.len();
    let cis = Cis::new(n as u64);
    let mut acc = (Dd::of(0.0), Dd::of(0.0));
    for (j, &v) in x.iter().enumerate() {
        let (c, s) = cis.get(((j as u128 * k as u128) % n as u128) as u64);
        acc = cadd(acc, cmul_dd(v, (c, if inverse { s } else { s.neg() })));
    }
    acc
}

/// The exact DFT of a C-contiguous complex array along `axes`.
fn dft_axes(x: &[Cdd], shape: &[usize], axes: &[usize], inverse: bool) -> Vec<Cdd> {
    let mut y = x.to_vec();
    for &a in axes {
        let n = shape[a];
        let inner: usize = shape[a + 1..].iter().product();
        let outer: usize = shape[..a].iter().product();
        for o in 0..outer {
            for i in 0..inner {
                let at = |j: usize| (o * n + j) * inner + i;
                let line: Vec<Cdd> = (0..n).map(|j| y[at(j)]).collect();
                for (j, v) in dft(&line, inverse).into_iter().enumerate() {
                    y[at(j)] = v;
                }
            }
        }
    }
    y
}

fn to_dd<T: Real>(parts: &[T]) -> Vec<Cdd> {
    parts.chunks(2).map(|c| (Dd::of(c[0].to_f64()), Dd::of(c[1].to_f64()))).collect()
}

fn norm<T: Real>(parts: &[T]) -> f64 {
    parts.iter().map(|v| v.to_f64() * v.to_f64()).sum::<f64>().sqrt()
}

/// ‖got - want‖₂ (got as parts).
fn distance<T: Real>(got: &[T], want: &[Cdd]) -> f64 {
    assert_eq!(got.len(), 2 * want.len());
    let mut s = 0.0;
    for (g, w) in got.chunks(2).zip(want) {
        let dr = w.0.sub(Dd::of(g[0].to_f64())).0;
        let di = w.1.sub(Dd::of(g[1].to_f64())).0;
        s += dr * dr + di * di;
    }
    s.sqrt()
}

/// Asserts the contract's bound; gives err / bound.
fn within(err: f64, eps: f64, u: f64, points: usize, xnorm: f64, what: &str) -> f64 {
    let bound = eps * u * (points as f64).sqrt() * xnorm;
    assert!(err <= bound, "{what}: error {err:e} above the bound {bound:e}");
    if bound > 0.0 { err / bound } else { 0.0 }
}

fn check_c2c<T: Real>(shape: &[usize], axes: &[usize], seed: u64) -> f64 {
    let size: usize = shape.iter().product();
    let x = randoms::<T>(2 * size, seed);
    let points: usize = axes.iter().map(|&a| shape[a]).product();
    let eps: f64 = axes.iter().map(|&a| error_factor(shape[a], false)).sum();
    let mut worst: f64 = 0.0;
    for dir in [Forward, Inverse] {
        let got = transform(Kind::C2c(dir), shape, axes, &x);
        let want = dft_axes(&to_dd(&x), shape, axes, dir == Inverse);
        // The bound holds for each transform: each line group for a batch.
        let err = distance(&got, &want);
        let lines = size / points.max(1);
        // ‖x‖ over a batch: the bound summed over lines is at most the
        // bound with the whole norm, by Cauchy-Schwarz.
        let _ = lines;
        worst = worst.max(within(err, eps, unit::<T>(), points, norm(&x), &format!("{shape:?} {axes:?} {dir:?}")));
    }
    worst
}

#[test]
fn c2c_small_lines_within_the_bound() {
    let mut worst: f64 = 0.0;
    for n in 1..=64 {
        worst = worst.max(check_c2c::<f32>(&[n], &[0], n as u64));
        worst = worst.max(check_c2c::<f64>(&[n], &[0], 100 + n as u64));
    }
    assert!(worst > 0.0);
    eprintln!("worst error / bound, n <= 64: {worst:.3e}");
}

const PRIMES_SAMPLE: [usize; 14] = [67, 97, 127, 211, 241, 251, 257, 263, 331, 499, 509, 521, 727, 997];

fn primes_below(n: usize) -> Vec<usize> {
    (2..n).filter(|&p| (2..p).take_while(|d| d * d <= p).all(|d| p % d != 0)).collect()
}

#[test]
fn c2c_primes_and_smooth_lengths_within_the_bound() {
    let smooth = [105, 125, 225, 243, 343, 375, 441, 625, 729, 735, 1125, 2048, 1536];
    for &n in PRIMES_SAMPLE.iter().chain(&smooth) {
        check_c2c::<f32>(&[n], &[0], n as u64);
        check_c2c::<f64>(&[n], &[0], 7 * n as u64);
    }
}

#[test]
#[ignore]
fn c2c_every_prime_below_1000_within_the_bound() {
    for p in primes_below(1000) {
        check_c2c::<f32>(&[p], &[0], p as u64);
        check_c2c::<f64>(&[p], &[0], 3 * p as u64);
    }
}

#[test]
fn c2c_batches_and_several_axes_within_the_bound() {
    check_c2c::<f64>(&[3, 10, 4], &[0, 2], 1);
    check_c2c::<f32>(&[6, 5, 7], &[0, 1, 2], 2);
    check_c2c::<f32>(&[7, 300], &[1], 3);
    check_c2c::<f64>(&[2, 257], &[0, 1], 4);
}

/// A long line: float32 against the float64 transform, float64 by a round
/// trip and by a few bins against the double-double DFT.
fn check_long(n: usize) {
    let x = randoms::<f64>(2 * n, n as u64);
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let xdd = to_dd(&x32);
    let eps = error_factor(n, false);
    for dir in [Forward, Inverse] {
        let y64 = transform::<f64>(Kind::C2c(dir), &[n], &[0], &x32.iter().map(|&v| v as f64).collect::<Vec<_>>());
        let y32 = transform::<f32>(Kind::C2c(dir), &[n], &[0], &x32);
        let want: Vec<Cdd> = y64.chunks(2).map(|c| (Dd::of(c[0]), Dd::of(c[1]))).collect();
        // The f64 transform's own error is below 1e-9 of f32's bound.
        within(distance(&y32, &want), eps, unit::<f32>(), n, norm(&x32), &format!("f32 {n} {dir:?}"));
        for k in [0, 1, n / 3, n - 1] {
            let b = dft_bin(&xdd, k, dir == Inverse);
            let got = [y64[2 * k], y64[2 * k + 1]];
            within(distance(&got, &[b]), eps, unit::<f64>(), n, norm(&x32), &format!("f64 {n} bin {k}"));
        }
    }
    let y = transform::<f64>(Kind::C2c(Forward), &[n], &[0], &x);
    let back = transform::<f64>(Kind::C2c(Inverse), &[n], &[0], &y);
    let scaled: Vec<Cdd> = x.chunks(2).map(|c| (Dd::of(c[0] * n as f64), Dd::of(c[1] * n as f64))).collect();
    // Each way within the bound: 2 ε u n ‖x‖ to first order.
    let err = distance(&back, &scaled);
    within(err, 2.0 * eps * 1.0001, unit::<f64>(), n * n, norm(&x), &format!("round trip {n}"));
}

#[test]
fn c2c_long_lines_within_the_bound() {
    for k in [10, 13, 14, 15, 16, 18] {
        check_long(1 << k);
    }
    check_long(3 * 5 * 7 * 7 * 9 * 11 * 2);
    check_long(1 << 15 | 1 << 14);
}

#[test]
fn c2c_powers_of_two_to_2_22_and_a_large_prime_within_the_bound() {
    check_long(1 << 20);
    check_long(1 << 22);
    check_long(1_000_003);
}

/// r2c against the double-double DFT of the real line, bins 0 to n/2.
fn check_r2c<T: Real>(shape: &[usize], axes: &[usize], seed: u64) {
    let size: usize = shape.iter().product();
    let x = randoms::<T>(size, seed);
    let got = transform(Kind::R2c, shape, axes, &x);
    let complex: Vec<Cdd> = x.iter().map(|v| (Dd::of(v.to_f64()), Dd::of(0.0))).collect();
    let full = dft_axes(&complex, shape, axes, false);
    let last = *axes.last().unwrap();
    let inner: usize = shape[last + 1..].iter().product();
    let n = shape[last];
    let want: Vec<Cdd> = full
        .iter()
        .enumerate()
        .filter(|(i, _)| (i / inner) % n <= n / 2)
        .map(|(_, &v)| v)
        .collect();
    let eps: f64 = axes.iter().map(|&a| error_factor(shape[a], a == last)).sum();
    let points: usize = axes.iter().map(|&a| shape[a]).product();
    within(distance(&got, &want), eps, unit::<T>(), points, norm(&x), &format!("r2c {shape:?} {axes:?}"));
}

/// c2r against its definition: the Inverse transform along the other axes,
/// then the real parts of the Inverse of X' along the last.
fn check_c2r<T: Real>(dshape: &[usize], axes: &[usize], seed: u64) {
    let last = *axes.last().unwrap();
    let n = dshape[last];
    let mut xshape = dshape.to_vec();
    xshape[last] = n / 2 + 1;
    let size: usize = xshape.iter().product();
    let x = randoms::<T>(2 * size, seed);
    let got = c2r(dshape, axes, &x);
    let xd = dft_axes(&to_dd(&x), &xshape, &axes[..axes.len() - 1], true);
    let inner: usize = xshape[last + 1..].iter().product();
    let outer: usize = xshape[..last].iter().product();
    let mut want = vec![(Dd::of(0.0), Dd::of(0.0)); dshape.iter().product()];
    for o in 0..outer {
        for i in 0..inner {
            let bin = |k: usize| xd[(o * (n / 2 + 1) + k) * inner + i];
            let ext: Vec<Cdd> = (0..n)
                .map(|k| if k <= n / 2 { bin(k) } else { let (r, im) = bin(n - k); (r, im.neg()) })
                .collect();
            for (j, v) in dft(&ext, true).into_iter().enumerate() {
                want[(o * n + j) * inner + i] = (v.0, Dd::of(0.0));
            }
        }
    }
    let got_c: Vec<T> = got.iter().flat_map(|&v| [v, T::ZERO]).collect();
    let eps: f64 = axes.iter().map(|&a| error_factor(dshape[a], a == last)).sum();
    let points: usize = axes.iter().map(|&a| dshape[a]).product();
    let xnorm = std::f64::consts::SQRT_2 * norm(&x);
    within(distance(&got_c, &want), eps, unit::<T>(), points, xnorm, &format!("c2r {dshape:?} {axes:?}"));
}

#[test]
fn real_transforms_within_the_bound() {
    for n in [1, 2, 3, 4, 5, 8, 9, 16, 17, 100, 509, 510, 511, 512, 513, 514, 1000, 1024, 1026, 2000] {
        check_r2c::<f32>(&[n], &[0], n as u64);
        check_r2c::<f64>(&[n], &[0], n as u64 + 1);
        check_c2r::<f32>(&[n], &[0], n as u64 + 2);
        check_c2r::<f64>(&[n], &[0], n as u64 + 3);
    }
    check_r2c::<f64>(&[3, 4, 600], &[0, 2], 9);
    check_r2c::<f32>(&[5, 2, 7], &[0, 1], 10);
    check_c2r::<f64>(&[3, 4, 600], &[0, 2], 11);
    check_c2r::<f32>(&[5, 7, 2], &[1, 2], 12);
    check_c2r::<f32>(&[6, 3], &[0], 13);
}

#[test]
fn real_round_trips() {
    for n in [7, 512, 1 << 16, (1 << 16) + 2, 100_002, 1 << 18] {
        let x = randoms::<f64>(n, n as u64);
        let y = transform(Kind::R2c, &[n], &[0], &x);
        let back = c2r::<f64>(&[n], &[0], &y);
        let err = back.iter().zip(&x).map(|(b, v)| (b - v * n as f64).powi(2)).sum::<f64>().sqrt();
        let eps = error_factor(n, true);
        let bound = 2.0 * eps * unit::<f64>() * n as f64 * norm(&x) * 1.5;
        assert!(err <= bound, "{n}: {err:e} > {bound:e}");
    }
}

/// Bits of a transform of `vals` laid out by `strides`, the result laid
/// out by `dstrides`, read back in C order.
fn bits_of<T: Real>(kind: Kind, xshape: &[usize], dshape: &[usize], axes: &[usize], vals: &[T], xs: &[isize], ds: &[isize]) -> Vec<T> {
    let (xd, dd) = match kind {
        Kind::C2c(_) => (complex_dtype::<T>(), complex_dtype::<T>()),
        Kind::R2c => (real_dtype::<T>(), complex_dtype::<T>()),
        Kind::C2r => (complex_dtype::<T>(), real_dtype::<T>()),
    };
    let mut x = Arr::place(xd, xshape, xs, vals);
    let k = if dd.is_complex() { 2 } else { 1 };
    let mut d = Arr::place(dd, dshape, ds, &vec![T::ZERO; dshape.iter().product::<usize>() * k]);
    run(kind, axes, &mut d, &mut x).unwrap();
    d.values()
}

fn same_bits<T: Real>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_f64().to_bits() == y.to_f64().to_bits())
}

/// Awkward strides of a shape: the axes permuted (transposed), every other
/// element skipped along one, negative along another.
fn awkward(shape: &[usize], flip: usize) -> Vec<isize> {
    let r = shape.len();
    let mut strides = vec![0isize; r];
    let mut s = 2isize;
    for d in 0..r {
        // Axes laid out in reverse order: the first steps least.
        strides[d] = if d == flip { -s } else { s };
        s *= shape[d] as isize + 1;
    }
    strides
}

fn check_bits<T: Real>(kind: Kind, xshape: &[usize], axes: &[usize], seed: u64) {
    let last = *axes.last().unwrap();
    let mut dshape = xshape.to_vec();
    match kind {
        Kind::R2c => dshape[last] = xshape[last] / 2 + 1,
        Kind::C2r => dshape[last] = 2 * (xshape[last] - 1) + 1,
        _ => {}
    }
    let k = if matches!(kind, Kind::R2c) { 1 } else { 2 };
    let vals = randoms::<T>(xshape.iter().product::<usize>() * k, seed);
    let cx = Layout::contiguous(Dtype::Bool, xshape).strides;
    let cd = Layout::contiguous(Dtype::Bool, &dshape).strides;
    pool::set_threads(1).unwrap();
    let base = bits_of(kind, xshape, &dshape, axes, &vals, &cx, &cd);
    pool::set_threads(3).unwrap();
    let three = bits_of(kind, xshape, &dshape, axes, &vals, &cx, &cd);
    assert!(same_bits(&base, &three), "{kind:?} {xshape:?}: 1 and 3 threads");
    for flip in 0..xshape.len() {
        let other = bits_of(kind, xshape, &dshape, axes, &vals, &awkward(xshape, flip), &awkward(&dshape, (flip + 1) % xshape.len()));
        assert!(same_bits(&base, &other), "{kind:?} {xshape:?}: layout {flip}");
    }
    // Each index of the batch (the axes that are not transformed) alone.
    let batch: Vec<usize> = (0..xshape.len()).filter(|a| !axes.contains(a)).collect();
    if let Some(&b) = batch.first() {
        let count = xshape[b];
        let inner: usize = xshape[b + 1..].iter().product::<usize>() * k;
        let dk = if matches!(kind, Kind::C2r) { 1 } else { 2 };
        let dinner: usize = dshape[b + 1..].iter().product::<usize>() * dk;
        let outer: usize = xshape[..b].iter().product();
        let (mut xs1, mut ds1) = (xshape.to_vec(), dshape.to_vec());
        xs1[b] = 1;
        ds1[b] = 1;
        for i in 0..count {
            let part: Vec<T> =
                (0..outer).flat_map(|o| vals[(o * count + i) * inner..(o * count + i + 1) * inner].to_vec()).collect();
            let got = bits_of(kind, &xs1, &ds1, axes, &part, &Layout::contiguous(Dtype::Bool, &xs1).strides, &Layout::contiguous(Dtype::Bool, &ds1).strides);
            let want: Vec<T> =
                (0..outer).flat_map(|o| base[(o * count + i) * dinner..(o * count + i + 1) * dinner].to_vec()).collect();
            assert!(same_bits(&got, &want), "{kind:?} {xshape:?}: batch index {i} alone");
        }
    }
}

#[test]
fn bits_follow_values_alone() {
    check_bits::<f32>(Kind::C2c(Forward), &[3, 12, 5], &[1], 1);
    check_bits::<f64>(Kind::C2c(Inverse), &[4, 30, 3], &[0, 1], 2);
    check_bits::<f32>(Kind::C2c(Forward), &[5, 257], &[1], 3);
    check_bits::<f64>(Kind::C2c(Forward), &[2, 1 << 17], &[1], 4);
    check_bits::<f64>(Kind::C2c(Forward), &[3, 1024], &[1], 9);
    check_bits::<f32>(Kind::C2c(Inverse), &[2, 1 << 14], &[1], 10);
    check_bits::<f32>(Kind::R2c, &[3, 1024], &[1], 5);
    check_bits::<f64>(Kind::R2c, &[3, 4, 511], &[0, 2], 6);
    check_bits::<f32>(Kind::C2r, &[3, 513], &[1], 7);
    check_bits::<f64>(Kind::C2r, &[3, 2, 9], &[1, 2], 8);
    pool::set_threads(2).unwrap();
}

/// Real lines of even n alone (packed and unpacked in one loop, or, long,
/// read or written in place by Bailey's steps) have the bits of the same
/// lines in a batch and laid out awkwardly.
#[test]
fn real_lines_alone_keep_their_bits() {
    let contiguous = |s: &[usize]| Layout::contiguous(Dtype::Bool, s).strides;
    for n in [1024usize, 1 << 18] {
        for kind in [Kind::R2c, Kind::C2r] {
            let (xn, dn, xk, dk) = if kind == Kind::R2c { (n, n / 2 + 1, 1, 2) } else { (n / 2 + 1, n, 2, 1) };
            let vals = randoms::<f32>(2 * xn * xk, n as u64);
            let (xs, ds) = ([2, xn], [2, dn]);
            let both = bits_of(kind, &xs, &ds, &[1], &vals, &contiguous(&xs), &contiguous(&ds));
            let one = bits_of(kind, &[xn], &[dn], &[0], &vals[..xn * xk], &contiguous(&[xn]), &contiguous(&[dn]));
            assert!(same_bits(&both[..dn * dk], &one), "{kind:?} {n}: a line alone");
            let odd = bits_of(kind, &xs, &ds, &[1], &vals, &awkward(&xs, 0), &awkward(&ds, 1));
            assert!(same_bits(&both, &odd), "{kind:?} {n}: strided lines");
        }
    }
}

#[test]
fn zero_points_and_empty_batches() {
    // c2c of zero points: nothing to write.
    assert!(transform::<f32>(Kind::C2c(Forward), &[3, 0], &[1], &[]).is_empty());
    // r2c of zero points: one bin of +0, the empty sum.
    let mut x = Arr::<f64>::contiguous(Dtype::Float64, &[2, 0], &[]);
    let mut d = Arr::<f64>::contiguous(Dtype::Complex128, &[2, 1], &[-1.0, -1.0, -1.0, -1.0]);
    run(Kind::R2c, &[0, 1], &mut d, &mut x).unwrap();
    assert!(d.values().iter().all(|v| v.to_bits() == 0));
    // c2r into zero points, and an empty batch: nothing written.
    let mut x = Arr::<f32>::contiguous(Dtype::Complex64, &[2, 1], &[5.0; 4]);
    let mut d = Arr::<f32>::contiguous(Dtype::Float32, &[2, 0], &[]);
    run(Kind::C2r, &[1], &mut d, &mut x).unwrap();
    let mut x = Arr::<f32>::contiguous(Dtype::Complex64, &[0, 4], &[]);
    let mut d = Arr::<f32>::contiguous(Dtype::Complex64, &[0, 4], &[]);
    run(Kind::C2c(Inverse), &[1], &mut d, &mut x).unwrap();
    // One point: the identity.
    assert_eq!(transform::<f32>(Kind::C2c(Forward), &[1], &[0], &[1.5, -2.0]), vec![1.5, -2.0]);
}

#[test]
fn an_overlapping_destination_reads_a_copy() {
    let n = 12;
    let vals = randoms::<f64>(2 * n, 5);
    let want = transform::<f64>(Kind::C2c(Forward), &[n], &[0], &vals);
    let mut a = Arr::<f64>::contiguous(Dtype::Complex128, &[n], &vals);
    let v = a.view();
    plan(Kind::C2c(Forward), &[0], v.clone(), v).unwrap().run().unwrap();
    assert!(same_bits(&a.values(), &want));
}

#[test]
fn refusals_leave_the_destination_untouched() {
    let mut x = Arr::<f32>::contiguous(Dtype::Complex64, &[4, 6], &randoms::<f32>(48, 1));
    let mut d = Arr::<f32>::contiguous(Dtype::Complex64, &[4, 6], &[3.0; 48]);
    let mut r = Arr::<f32>::contiguous(Dtype::Float32, &[4, 6], &[3.0; 24]);
    let mut r64 = Arr::<f64>::contiguous(Dtype::Complex128, &[4, 4], &[3.0; 32]);
    let (before_d, before_r) = (d.buf.clone(), r.buf.clone());
    let bad = |e: Result<super::Fft, String>, what: &str| {
        let msg = e.err().unwrap_or_else(|| panic!("{what} accepted"));
        assert!(!msg.is_empty());
    };
    bad(plan(Kind::C2c(Forward), &[], d.view(), x.view()), "no axes");
    bad(plan(Kind::C2c(Forward), &[1, 0], d.view(), x.view()), "decreasing axes");
    bad(plan(Kind::C2c(Forward), &[1, 1], d.view(), x.view()), "a repeated axis");
    bad(plan(Kind::C2c(Forward), &[2], d.view(), x.view()), "an axis past the rank");
    bad(plan(Kind::C2c(Forward), &[1], r.view(), x.view()), "a real destination");
    bad(plan(Kind::R2c, &[1], d.view(), x.view()), "a complex r2c operand");
    bad(plan(Kind::R2c, &[1], d.view(), r.view()), "r2c of 6 points into 6 bins");
    bad(plan(Kind::C2r, &[1], r.view(), x.view()), "c2r of 6 bins into 6 points");
    bad(plan(Kind::R2c, &[1], r64.view(), r.view()), "mixed precisions");
    let mut bcast = d.view();
    bcast.layout.strides = vec![0, 1];
    bad(plan(Kind::C2c(Forward), &[1], bcast, x.view()), "a broadcast destination");
    assert!(d.buf == before_d && r.buf == before_r);
}

/// Timings of the bench's cases (`cargo test --release
/// --no-default-features --lib fft::tests::timings -- --ignored
/// --nocapture`), and the rows and columns of a 1024 x 1024 transform
/// alone: the least and the median wall time of several runs on 1 and on 2
/// threads, and on 1 the mean CPU time of the calling thread (which runs
/// the whole call then; other processes disturb it less); `NX_FFT_CASE`
/// picks the cases whose names hold it, `NX_FFT_THREADS` the thread counts
/// (as `1,2`), `NX_FFT_REPS` multiplies the runs and `NX_FFT_LANES`, where
/// set, sets the lanes of every group of short lines.
#[test]
#[ignore]
fn timings() {
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let pick = env("NX_FFT_CASE");
    let threads: Vec<usize> = env("NX_FFT_THREADS").split(',').filter_map(|t| t.parse().ok()).collect();
    let threads = if threads.is_empty() { vec![1, 2] } else { threads };
    let more: usize = env("NX_FFT_REPS").parse().unwrap_or(1);
    let lanes = env("NX_FFT_LANES").parse().unwrap_or(0);
    super::lines::GROUP_LANES.store(lanes, std::sync::atomic::Ordering::Relaxed);
    let time = |what: &str, reps: usize, make: &dyn Fn() -> Box<dyn FnMut()>| {
        if !what.contains(&pick) {
            return;
        }
        let mut f = make();
        let ts: Vec<String> = threads
            .iter()
            .map(|&t| {
                pool::set_threads(t).unwrap();
                f();
                let c0 = crate::core::cpu_clock::thread_cpu_s();
                let mut ms: Vec<f64> = (0..reps * more)
                    .map(|_| {
                        let start = std::time::Instant::now();
                        f();
                        start.elapsed().as_secs_f64() * 1e3
                    })
                    .collect();
                let cpu = (crate::core::cpu_clock::thread_cpu_s() - c0) * 1e3 / ms.len() as f64;
                ms.sort_by(f64::total_cmp);
                let cpu = if t == 1 { format!(", mean CPU {cpu:.4}") } else { String::new() };
                format!("t{t} {:.4} ms (median {:.4}{cpu})", ms[0], ms[ms.len() / 2])
            })
            .collect();
        eprintln!("{what}: {}", ts.join("  "));
    };
    fn c2c<T: Real>(shape: &[usize], axes: &[usize]) -> Box<dyn FnMut()> {
        let size: usize = shape.iter().product();
        let mut x = Arr::<T>::contiguous(complex_dtype::<T>(), shape, &randoms::<T>(2 * size, 1));
        let mut d = Arr::<T>::contiguous(complex_dtype::<T>(), shape, &vec![T::ZERO; 2 * size]);
        let axes = axes.to_vec();
        Box::new(move || run(Kind::C2c(Forward), &axes, &mut d, &mut x).unwrap())
    }
    fn real(n: usize, inverse: bool) -> Box<dyn FnMut()> {
        let mut r = Arr::<f32>::contiguous(Dtype::Float32, &[n], &randoms::<f32>(n, 2));
        let mut c = Arr::<f32>::contiguous(Dtype::Complex64, &[n / 2 + 1], &randoms::<f32>(n + 2, 3));
        if inverse {
            Box::new(move || run(Kind::C2r, &[0], &mut r, &mut c).unwrap())
        } else {
            Box::new(move || run(Kind::R2c, &[0], &mut c, &mut r).unwrap())
        }
    }
    time("c2c 1024 c64", 2000, &|| c2c::<f32>(&[1024], &[0]));
    time("c2c 65536 c64", 200, &|| c2c::<f32>(&[65536], &[0]));
    time("c2c 2^20 c64", 15, &|| c2c::<f32>(&[1 << 20], &[0]));
    time("c2c 1024 c128", 2000, &|| c2c::<f64>(&[1024], &[0]));
    time("c2c 65536 c128", 200, &|| c2c::<f64>(&[65536], &[0]));
    time("c2c 2^20 c128", 15, &|| c2c::<f64>(&[1 << 20], &[0]));
    time("fft2 1024^2 c64", 11, &|| c2c::<f32>(&[1024, 1024], &[0, 1]));
    time("fft2 256^2 c64", 200, &|| c2c::<f32>(&[256, 256], &[0, 1]));
    time("batch 4096x1024 c64", 11, &|| c2c::<f32>(&[4096, 1024], &[1]));
    time("cols 1024^2 c64", 11, &|| c2c::<f32>(&[1024, 1024], &[0]));
    time("rows 1024^2 c64", 11, &|| c2c::<f32>(&[1024, 1024], &[1]));
    time("batch 256x1024 c64", 200, &|| c2c::<f32>(&[256, 1024], &[1]));
    time("c2c 1000003 c128", 5, &|| c2c::<f64>(&[1_000_003], &[0]));
    for (n, name, reps) in [(1 << 16, "65536", 300), (1 << 20, "2^20", 15)] {
        time(&format!("rfft {name} f32"), reps, &|| real(n, false));
        time(&format!("irfft {name} f32"), reps, &|| real(n, true));
    }
    time("c2c 2^25 c64", 3, &|| c2c::<f32>(&[1 << 25], &[0]));
}

/// A long line transformed in place in the destination (the pass along a
/// second axis) has the bits of the same line transformed into a fresh one.
#[test]
fn long_lines_in_place_match_fresh_destinations() {
    let shape = [1 << 17, 2];
    let x = randoms::<f32>(2 * (1 << 18), 11);
    let both = transform::<f32>(Kind::C2c(Forward), &shape, &[0, 1], &x);
    let rows = transform::<f32>(Kind::C2c(Forward), &shape, &[1], &x);
    let then = transform::<f32>(Kind::C2c(Forward), &shape, &[0], &rows);
    assert!(same_bits(&both, &then));
    check_bits::<f32>(Kind::C2c(Inverse), &shape, &[0, 1], 12);
}

/// Bailey's steps keep the bits of their points in scratch between the
/// steps where they keep them in the result: lines apart from their result
/// (c2c of each precision and direction, and a c2r's packed points); a
/// line transformed where it lies in the result, whose points the first
/// step would overwrite before it reads them, keeps them in scratch and
/// its bits.
#[test]
fn bailey_in_the_result_keeps_the_bits() {
    use super::bailey::{IN_RESULT_FROM, IN_RESULT_LINES};
    use std::sync::atomic::Ordering::Relaxed;
    let n = 1 << 17;
    let (x32, x64, bins) = (randoms::<f32>(2 * n, 51), randoms::<f64>(2 * n, 52), randoms::<f32>(2 * (n + 1), 53));
    let apart = || {
        (
            transform::<f32>(Kind::C2c(Forward), &[n], &[0], &x32),
            transform::<f64>(Kind::C2c(Inverse), &[n], &[0], &x64),
            c2r::<f32>(&[2 * n], &[0], &bins),
        )
    };
    let in_place = || transform::<f32>(Kind::C2c(Forward), &[n, 1], &[0, 1], &x32);
    let (scratch, scratch_here) = (apart(), in_place());
    IN_RESULT_FROM.store(1, Relaxed);
    let kept = IN_RESULT_LINES.load(Relaxed);
    let result = apart();
    let lines = IN_RESULT_LINES.load(Relaxed) - kept;
    let here = in_place();
    IN_RESULT_FROM.store(0, Relaxed);
    // At least these three (other tests may run long lines meanwhile).
    assert!(lines >= 3, "lines kept in the result: {lines}");
    assert!(same_bits(&scratch.0, &result.0) && same_bits(&scratch.1, &result.1) && same_bits(&scratch.2, &result.2));
    assert!(same_bits(&scratch_here, &here) && same_bits(&scratch_here, &scratch.0));
}

/// Lines by four steps in cache and by Bailey's steps have the same bits
/// alone as in batches of any size (groups of lanes and a remainder), and
/// a line alone, which runs on the calling thread, the same bits on the
/// baseline compilation as on the widest.
#[test]
fn four_steps_bits_follow_values_alone() {
    for (n, lines) in [(1024usize, 40usize), (300, 70), (4800, 5), (1 << 17, 2)] {
        let x = randoms::<f32>(2 * n * lines, 21);
        let all = transform::<f32>(Kind::C2c(Forward), &[lines, n], &[1], &x);
        for l in [0, lines / 2, lines - 1] {
            let line = &x[2 * n * l..2 * n * (l + 1)];
            let one = transform::<f32>(Kind::C2c(Forward), &[n], &[0], line);
            assert!(same_bits(&one, &all[2 * n * l..2 * n * (l + 1)]), "{n} points, line {l} of {lines}");
            crate::core::isa::baseline_here(true);
            let base = transform::<f32>(Kind::C2c(Forward), &[n], &[0], line);
            crate::core::isa::baseline_here(false);
            assert!(same_bits(&one, &base), "{n} points: the baseline compilation");
        }
    }
}

/// Lines through four steps in cache, rows of side-by-side points (each
/// moved as one run) and columns side by side (moved as rows), are within
/// the bound, and keep their bits whatever the lanes of their groups, the
/// layout and the threads.
#[test]
fn groupings_of_four_step_lines_keep_their_bits() {
    check_c2c::<f32>(&[256, 12], &[0, 1], 31);
    check_c2c::<f64>(&[10, 300], &[0, 1], 32);
    check_bits::<f32>(Kind::C2c(Forward), &[256, 40], &[0, 1], 33);
    check_bits::<f64>(Kind::C2c(Inverse), &[9, 1024], &[1], 34);
    let cases: [(&[usize], &[usize]); 3] = [(&[256, 40], &[0, 1]), (&[40, 1024], &[1]), (&[300, 7], &[0])];
    for (shape, axes) in cases {
        let x = randoms::<f32>(2 * shape.iter().product::<usize>(), 35);
        let base = transform::<f32>(Kind::C2c(Forward), shape, axes, &x);
        for lanes in [1, 3, 16, 64, 256] {
            super::lines::GROUP_LANES.store(lanes, std::sync::atomic::Ordering::Relaxed);
            let got = transform::<f32>(Kind::C2c(Forward), shape, axes, &x);
            super::lines::GROUP_LANES.store(0, std::sync::atomic::Ordering::Relaxed);
            assert!(same_bits(&base, &got), "{shape:?} {axes:?}: groups of {lanes} lanes");
        }
    }
}

/// Bailey's sub-lines to [`SUB_PASSES_MAX`] points compute by plain
/// passes, longer ones by their own plan (here four steps in cache).
#[test]
fn bailey_sub_lines_by_passes() {
    use super::plan::{sub_plan, SUB_PASSES_MAX};
    for dir in [Forward, Inverse] {
        assert!(!sub_plan::<f32>(SUB_PASSES_MAX, dir).in_cache_steps() && super::plan::plan::<f32>(SUB_PASSES_MAX, dir).in_cache_steps());
        assert!(sub_plan::<f64>(2 * SUB_PASSES_MAX, dir).in_cache_steps());
    }
}

/// A stage's loop over lanes runs whole vectors, then the rest one lane at
/// a time: lines side by side in batches of 1 to 33 (stages of 1 to 528
/// lanes) each keep the bits of the line alone, and are within the bound.
#[test]
fn blocks_and_rests_of_lanes_keep_the_bits_of_a_line_alone() {
    for n in [32usize, 12, 2] {
        for lines in [1usize, 15, 16, 17, 33] {
            let x = randoms::<f32>(2 * n * lines, 40 + (n * lines) as u64);
            let all = transform::<f32>(Kind::C2c(Forward), &[n, lines], &[0], &x);
            for l in [0, lines / 2, lines - 1] {
                let column = |v: &[f32]| -> Vec<f32> {
                    (0..n).flat_map(|j| [v[2 * (j * lines + l)], v[2 * (j * lines + l) + 1]]).collect()
                };
                let one = transform::<f32>(Kind::C2c(Forward), &[n], &[0], &column(&x));
                assert!(same_bits(&one, &column(&all)), "{n} points, line {l} of {lines}");
            }
        }
        check_c2c::<f32>(&[n, 17], &[0], 41);
        check_c2c::<f64>(&[n, 33], &[0], 42);
    }
}

/// Transposed copies move every part of blocks of any shape, whole tiles
/// and edges, between rows of any step, and touch nothing else.
#[test]
fn transposes_move_every_part_and_nothing_else() {
    fn check<T: Real>() {
        for rows in 0..19 {
            for cols in 0..19 {
                let (ss, ds) = (cols + 3, rows + 5);
                let src = randoms::<T>(rows * ss + 1, (rows * 31 + cols) as u64);
                let mut dst = vec![T::of(7.0); cols * ds + 1];
                super::plan::transpose(&src, ss, &mut dst, ds, rows, cols);
                for c in 0..cols {
                    for r in 0..ds {
                        let want = if r < rows { src[r * ss + c] } else { T::of(7.0) };
                        assert_eq!(dst[c * ds + r], want, "{rows}x{cols}: part ({r}, {c})");
                    }
                }
                assert_eq!(dst[cols * ds], T::of(7.0));
            }
        }
    }
    check::<f32>();
    check::<f64>();
}

/// The bits of transforms of every algorithm (passes of each radix, four
/// steps in cache, Bailey's steps, Bluestein's convolution, real lines
/// packed and not, columns side by side) hashed together: a change of
/// speed that keeps every operation must leave them as recorded.
#[test]
fn bits_are_as_recorded() {
    const RECORDED: u64 = 0xd267_6468_8818_b994;
    fn hash<T: Real>(h: &mut u64, v: &[T]) {
        for x in v {
            for b in x.to_f64().to_bits().to_le_bytes() {
                *h = (*h ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
    }
    fn cases<T: Real>(h: &mut u64) {
        let lines: [usize; 23] = [1, 2, 3, 4, 5, 7, 8, 12, 16, 30, 32, 64, 100, 243, 256, 300, 257, 1009, 1024, 4800, 65536, 1 << 17, 1 << 18];
        for (i, &n) in lines.iter().enumerate() {
            let x = randoms::<T>(2 * n, 90 + i as u64);
            for dir in [Forward, Inverse] {
                let mut one = 0xcbf2_9ce4_8422_2325;
                hash(&mut one, &transform::<T>(Kind::C2c(dir), &[n], &[0], &x));
                eprintln!("c2c {n} {dir:?} {}: {one:016x}", std::mem::size_of::<T>());
                *h = (*h ^ one).wrapping_mul(0x100_0000_01b3);
            }
        }
        let batches: [(&[usize], &[usize]); 4] = [(&[256, 40], &[0, 1]), (&[40, 1024], &[1]), (&[9, 1024], &[0, 1]), (&[12, 7, 30], &[0, 2])];
        for (i, (shape, axes)) in batches.into_iter().enumerate() {
            let x = randoms::<T>(2 * shape.iter().product::<usize>(), 120 + i as u64);
            hash(h, &transform::<T>(Kind::C2c(Forward), shape, axes, &x));
        }
        for (i, n) in [600usize, 1024, 1 << 17, 1001].into_iter().enumerate() {
            let x = randoms::<T>(n, 130 + i as u64);
            hash(h, &transform::<T>(Kind::R2c, &[n], &[0], &x));
            if n % 2 == 0 {
                let bins = randoms::<T>(2 * (n / 2 + 1), 140 + i as u64);
                hash(h, &transform::<T>(Kind::C2r, &[n / 2 + 1], &[0], &bins));
            }
        }
    }
    let mut h = 0xcbf2_9ce4_8422_2325;
    cases::<f32>(&mut h);
    cases::<f64>(&mut h);
    assert_eq!(h, RECORDED, "the transforms' bits changed: {h:#018x}");
}
