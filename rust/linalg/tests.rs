//! The matrix routines against the contract's bounds, each checked
//! literally with its γ and ε terms, residuals in twice the dtype's
//! precision (float64 for float32, a compensated double-double sum for
//! float64); against plain unblocked references of the same chains, bit
//! for bit; across batches, layouts and threads; on failures and refusals.

use super::scalar::{Real, Scalar};
use super::*;
use crate::core::answer::Answer;
use crate::core::layout::{Layout, Memory};
use crate::core::test_rng::splitmix;

type C32 = Complex<f32>;
type C64 = Complex<f64>;

// ---------------------------------------------------------------- arrays

/// An array of the tests: its own memory and a layout over it.
struct Arr {
    buf: Vec<u128>,
    layout: Layout,
}

/// How an array lies in memory.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Style {
    /// C-contiguous.
    C,
    /// Each matrix column-major (the last two axes' strides swapped).
    Transposed,
    /// Every stride doubled, from an offset.
    Strided,
    /// The last two axes stepped backwards.
    Negative,
}

const STYLES: [Style; 4] = [Style::C, Style::Transposed, Style::Strided, Style::Negative];

impl Arr {
    /// An array of `shape` laid out by `style`, holding `vals` in C order.
    fn new<T: Scalar>(shape: &[usize], style: Style, vals: &[T]) -> Arr {
        Arr::raw(T::DTYPE, std::mem::size_of::<T>(), shape, style, |p, at, k| {
            // SAFETY: `raw` gives an element index inside the buffer.
            unsafe { (p as *mut T).add(at).write(vals[k]) }
        })
    }

    /// An int64 array of `shape` laid out by `style`, of value `v`.
    fn index(shape: &[usize], style: Style, v: i64) -> Arr {
        Arr::raw(Dtype::Int64, 8, shape, style, |p, at, _| {
            // SAFETY: as in `new`.
            unsafe { (p as *mut i64).add(at).write(v) }
        })
    }

    fn raw(dtype: Dtype, width: usize, shape: &[usize], style: Style, mut put: impl FnMut(*mut u8, usize, usize)) -> Arr {
        let r = shape.len();
        let mut l = Layout::contiguous(dtype, shape);
        if style == Style::Transposed && r >= 2 {
            let (m, n) = (shape[r - 2], shape[r - 1]);
            l.strides[r - 1] = m.max(1) as isize;
            l.strides[r - 2] = 1;
            let mut step = (m * n).max(1) as isize;
            for a in (0..r - 2).rev() {
                l.strides[a] = step;
                step *= shape[a].max(1) as isize;
            }
        }
        if style == Style::Strided {
            l.strides.iter_mut().for_each(|s| *s *= 2);
            l.offset = 3;
        }
        let total = l.size();
        let span = l.span().unwrap().map_or(0, |(_, hi)| hi as usize + 1);
        let mut elems = span.max(total) + 8;
        if style == Style::Negative && total > 0 {
            let lo = r.saturating_sub(2);
            for (&n, s) in shape[lo..].iter().zip(&mut l.strides[lo..]) {
                l.offset += (n - 1) * *s as usize;
                *s = -*s;
            }
            elems = l.span().unwrap().unwrap().1 as usize + 1;
        }
        let mut buf = vec![0u128; (elems * width).div_ceil(16) + 1];
        let p = buf.as_mut_ptr() as *mut u8;
        // Fill with a sentinel so that untouched bytes are seen.
        // SAFETY: the buffer holds `buf.len() * 16` bytes.
        unsafe { std::ptr::write_bytes(p, 0x5a, buf.len() * 16) };
        let mut k = 0;
        each_index(shape, |idx| {
            let at = l.offset as isize + idx.iter().zip(&l.strides).map(|(&i, &s)| i as isize * s).sum::<isize>();
            put(p, at as usize, k);
            k += 1;
        });
        Arr { buf, layout: l }
    }

    fn view(&mut self) -> View {
        let memory = Memory { base: self.buf.as_mut_ptr() as *mut u8, bytes: self.buf.len() * 16 };
        View::new(self.layout.clone(), memory).unwrap()
    }

    /// The elements in C order.
    fn get<T: Copy>(&self) -> Vec<T> {
        let p = self.buf.as_ptr() as *const T;
        let mut out = Vec::new();
        each_index(&self.layout.shape, |idx| {
            let at = self.layout.offset as isize + idx.iter().zip(&self.layout.strides).map(|(&i, &s)| i as isize * s).sum::<isize>();
            // SAFETY: the layout was made to lie inside the buffer.
            out.push(unsafe { p.offset(at).read() });
        });
        out
    }

    /// The buffer's bytes, sentinels included.
    fn bytes(&self) -> Vec<u128> {
        self.buf.clone()
    }
}

fn each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut idx = vec![0; shape.len()];
    'outer: loop {
        f(&idx);
        for a in (0..shape.len()).rev() {
            idx[a] += 1;
            if idx[a] < shape[a] {
                continue 'outer;
            }
            idx[a] = 0;
        }
        return;
    }
}

fn call(routine: Routine, dsts: &mut [&mut Arr], ops: &mut [&mut Arr]) -> Answer {
    let d = dsts.iter_mut().map(|a| a.view()).collect();
    let o = ops.iter_mut().map(|a| a.view()).collect();
    Answer::of("test", plan(routine, d, o).and_then(|p| p.run()))
}

// ---------------------------------------------------------------- numbers

struct Rng(u64);

impl Rng {
    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (splitmix(&mut self.0) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    fn scalar<T: Scalar>(&mut self) -> T {
        let re = <T::Real as Real>::of_f64(self.unit());
        let im = <T::Real as Real>::of_f64(if T::COMPLEX { self.unit() } else { 0.0 });
        T::of_parts(re, im)
    }
}

/// A complex number in float64, the tests' common currency.
type Z = (f64, f64);

fn z<T: Scalar>(x: T) -> Z {
    (x.re().to_f64(), x.im().to_f64())
}

fn modulus(a: Z) -> f64 {
    a.0.hypot(a.1)
}

/// A compensated sum: each addition's error kept (TwoSum), each product's
/// too (by a fused multiply-add), so that a dot product of float64s comes
/// out as if in twice the precision.
#[derive(Clone, Copy, Default)]
struct Acc {
    s: f64,
    c: f64,
}

impl Acc {
    fn add(&mut self, x: f64) {
        let t = self.s + x;
        let z = t - self.s;
        self.c += (self.s - (t - z)) + (x - z);
        self.s = t;
    }
    fn add_prod(&mut self, a: f64, b: f64) {
        let p = a * b;
        self.c += a.mul_add(b, -p);
        self.add(p);
    }
    fn value(self) -> f64 {
        self.s + self.c
    }
}

/// A compensated complex sum.
#[derive(Clone, Copy, Default)]
struct ZAcc {
    re: Acc,
    im: Acc,
}

impl ZAcc {
    fn add(&mut self, a: Z) {
        self.re.add(a.0);
        self.im.add(a.1);
    }
    fn add_prod(&mut self, a: Z, b: Z) {
        self.re.add_prod(a.0, b.0);
        self.re.add_prod(-a.1, b.1);
        self.im.add_prod(a.0, b.1);
        self.im.add_prod(a.1, b.0);
    }
    fn value(self) -> Z {
        (self.re.value(), self.im.value())
    }
}

fn conj(a: Z) -> Z {
    (a.0, -a.1)
}

/// γ(k) and ε(k) of the dtype, k doubled on complex dtypes.
fn gamma<T: Scalar>(k: usize) -> f64 {
    let k = if T::COMPLEX { 2 * k } else { k } as f64;
    let u = <T::Real as Real>::U;
    k * u / (1.0 - k * u)
}

fn eps<T: Scalar>(k: usize) -> f64 {
    let k = if T::COMPLEX { 2 * k } else { k } as f64;
    k * <T::Real as Real>::ETA
}

// ---------------------------------------------------------------- matrices

/// The kinds of matrices the bounds are checked on.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Random,
    /// Rows and columns graded over many binades.
    Graded,
    /// Nearly singular: one row nearly another's multiple.
    NearSingular,
    /// Scaled so that products fall below the least normal number.
    Tiny,
    /// Scaled toward the largest finite numbers.
    Huge,
}

const KINDS: [Kind; 5] = [Kind::Random, Kind::Graded, Kind::NearSingular, Kind::Tiny, Kind::Huge];

/// The scale of a kind for a dtype.
fn scale<T: Scalar>(kind: Kind) -> f64 {
    let single = <T::Real as Real>::U > 1e-10;
    match (kind, single) {
        (Kind::Tiny, true) => 1e-41,
        (Kind::Tiny, false) => 1e-310,
        (Kind::Huge, true) => 1e18,
        (Kind::Huge, false) => 1e150,
        _ => 1.0,
    }
}

/// A general m × n matrix (column-major, as Z) of a kind.
fn general<T: Scalar>(rng: &mut Rng, kind: Kind, m: usize, n: usize) -> Vec<T> {
    let s = scale::<T>(kind);
    let mut w: Vec<T> = (0..m * n).map(|_| rng.scalar::<T>()).collect();
    for j in 0..n {
        for i in 0..m {
            let mut f = s;
            if let Kind::Graded = kind {
                f *= 2f64.powi(-((i + 2 * j) as i32 % 40));
            }
            if let (Kind::NearSingular, true) = (kind, i == m - 1 && m > 1) {
                let x = z(w[j * m]);
                w[i + j * m] = T::of_parts(<T::Real as Real>::of_f64(x.0 * 0.5 + 1e-6 * rng.unit()), <T::Real as Real>::of_f64(x.1 * 0.5));
                continue;
            }
            let x = z(w[i + j * m]);
            w[i + j * m] = T::of_parts(<T::Real as Real>::of_f64(x.0 * f), <T::Real as Real>::of_f64(x.1 * f));
        }
    }
    w
}

/// A Hermitian positive definite n × n matrix of a kind, column-major:
/// b bᴴ / n plus a diagonal that keeps it definite (graded: a diagonal
/// scaling of one over many binades; near singular: a diagonal barely
/// above what keeps it definite).
fn definite<T: Scalar>(rng: &mut Rng, kind: Kind, n: usize) -> Vec<T> {
    let b: Vec<Z> = (0..n * n).map(|_| z(rng.scalar::<T>())).collect();
    let s = scale::<T>(kind);
    let shift = match kind {
        Kind::NearSingular => 1e-3,
        _ => 1.0,
    };
    let mut w = vec![T::zero(); n * n];
    for j in 0..n {
        for i in 0..n {
            let mut acc = ZAcc::default();
            for k in 0..n {
                acc.add_prod(b[i + k * n], conj(b[j + k * n]));
            }
            let mut v = acc.value();
            v = (v.0 / n as f64, v.1 / n as f64);
            if i == j {
                v = (v.0 + shift, 0.0);
            }
            let mut f = s;
            if let Kind::Graded = kind {
                f *= 2f64.powi(-((i % 20) as i32)) * 2f64.powi(-((j % 20) as i32));
            }
            w[i + j * n] = T::of_parts(<T::Real as Real>::of_f64(v.0 * f), <T::Real as Real>::of_f64(v.1 * f));
        }
    }
    w
}

/// Column-major to C order.
fn c_order<T: Copy>(w: &[T], m: usize, n: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            out.push(w[i + j * m]);
        }
    }
    out
}

/// A square matrix in C order, column-major (its transpose).
fn col_major<T: Copy>(w: &[T], n: usize) -> Vec<T> {
    c_order(w, n, n)
}

// ---------------------------------------------------------------- cholesky

/// Checks |L Lᴴ - a| against the bound, `a` (column-major, its lower
/// triangle and diagonal's real parts read) and `l` (C order).
fn check_cholesky<T: Scalar>(a: &[T], l: &[T], n: usize, what: &str) {
    let lz = |i: usize, j: usize| z(l[i * n + j]);
    let (g, e) = (gamma::<T>(n + 1), eps::<T>(n + 1));
    for i in 0..n {
        for j in 0..n {
            if j > i {
                assert_eq!(l[i * n + j], T::zero(), "{what}: above the diagonal at {i},{j}");
                continue;
            }
        }
        let d = lz(i, i);
        assert!(d.0 > 0.0 && d.1 == 0.0 && d.1.is_sign_positive(), "{what}: diagonal {i} is {d:?}");
    }
    for i in 0..n {
        for j in 0..=i {
            let mut acc = ZAcc::default();
            let mut mag = 0.0;
            for k in 0..=j {
                acc.add_prod(lz(i, k), conj(lz(j, k)));
                mag += modulus(lz(i, k)) * modulus(lz(j, k));
            }
            let x = if i == j { (z(a[i + i * n]).0, 0.0) } else { z(a[i + j * n]) };
            acc.add((-x.0, -x.1));
            let delta = modulus(acc.value());
            let bound = g * mag + e * (1.0 + lz(j, j).0);
            assert!(delta <= bound, "{what}: |Δ_{i}{j}| = {delta:e} > {bound:e}");
        }
    }
}

fn cholesky_one<T: Scalar>(a: &[T], n: usize, t: Triangle, style: Style) -> Vec<T> {
    let mut x = Arr::new(&[n, n], style, &c_order(a, n, n));
    let mut d = Arr::new(&[n, n], style, &vec![T::zero(); n * n]);
    assert_eq!(call(Routine::Cholesky(t), &mut [&mut d], &mut [&mut x]), Answer::Done);
    d.get()
}

fn cholesky_bounds<T: Scalar>(sizes: &[usize]) {
    let mut rng = Rng(7);
    for &n in sizes {
        for kind in KINDS {
            let a = definite::<T>(&mut rng, kind, n);
            let l = cholesky_one(&a, n, Triangle::Lower, Style::C);
            check_cholesky(&a, &l, n, &format!("{:?} {kind:?} n={n}", T::DTYPE));
            // Upper is Lower's conjugate transpose, bit for bit.
            let u = cholesky_one(&a, n, Triangle::Upper, Style::Transposed);
            for i in 0..n {
                for j in 0..n {
                    let want = if j >= i { l[j * n + i].conj() } else { T::zero() };
                    assert_eq!(format!("{:?}", u[i * n + j]), format!("{want:?}"));
                }
            }
        }
    }
}

#[test]
fn cholesky_within_its_bound() {
    cholesky_bounds::<f32>(&[0, 1, 2, 3, 17, 64, 65]);
    cholesky_bounds::<f64>(&[0, 1, 2, 3, 17, 64, 65, 300]);
    cholesky_bounds::<C32>(&[1, 2, 3, 17, 65]);
    cholesky_bounds::<C64>(&[1, 3, 17, 64, 130]);
}

/// The unblocked factorisation, column by column, of the chain the
/// contract's order states: the reference the blocked one must equal.
fn cholesky_reference<T: Scalar>(a: &[T], n: usize) -> Option<Vec<T>> {
    let mut l = vec![T::zero(); n * n];
    for j in 0..n {
        for i in j..n {
            let mut x = if i == j { T::of_real(a[j + j * n].re()) } else { a[i + j * n] };
            for k in 0..j {
                x = T::sub_mul(x, l[i + k * n], l[j + k * n].conj());
            }
            if i == j {
                if x.re() <= T::Real::zero() || x.re().is_nan() {
                    return None;
                }
                l[j + j * n] = T::of_real(x.re().sqrt());
            } else {
                l[i + j * n] = T::div_real(x, l[j + j * n].re());
            }
        }
    }
    Some(l)
}

fn same_bits<T: Scalar>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| format!("{x:?}") == format!("{y:?}") || (x.is_nan() && y.is_nan()))
}

#[test]
fn cholesky_has_the_reference_bits() {
    fn go<T: Scalar>(n: usize) {
        let a = definite::<T>(&mut Rng(n as u64), Kind::Random, n);
        let want = c_order(&cholesky_reference(&a, n).unwrap(), n, n);
        assert!(same_bits(&cholesky_one(&a, n, Triangle::Lower, Style::C), &want), "{:?} n={n}", T::DTYPE);
    }
    for n in [1, 5, 64, 65, 150] {
        go::<f64>(n);
        go::<C32>(n);
    }
}

#[test]
fn cholesky_fails_alone_and_reads_the_lower_triangle() {
    let n = 3;
    let good = definite::<f64>(&mut Rng(3), Kind::Random, n);
    let mut indefinite = good.clone();
    indefinite[1 + n] = -1.0;
    let mut nan = good.clone();
    nan[2] = f64::NAN;
    // The upper triangle and the diagonal's imaginary parts are never read.
    let mut garbage = good.clone();
    garbage[n] = f64::NAN;
    garbage[2 * n] = f64::INFINITY;
    let batch: Vec<f64> = [&good, &indefinite, &nan, &garbage].iter().flat_map(|m| c_order(m, n, n)).collect();
    for style in STYLES {
        let mut x = Arr::new(&[4, n, n], style, &batch);
        let mut d = Arr::new(&[4, n, n], style, &vec![0.0f64; 4 * n * n]);
        assert_eq!(call(Routine::Cholesky(Triangle::Lower), &mut [&mut d], &mut [&mut x]), Answer::Done);
        let out: Vec<f64> = d.get();
        let one = cholesky_one(&good, n, Triangle::Lower, Style::C);
        assert!(same_bits(&out[..9], &one));
        assert!(out[9..27].iter().all(|x| x.is_nan()));
        assert!(same_bits(&out[27..], &one));
    }
    let mut c = definite::<C64>(&mut Rng(4), Kind::Random, n);
    let l = cholesky_one(&c, n, Triangle::Lower, Style::C);
    c[0].im = 5.0;
    c[n].re = f64::NAN;
    assert!(same_bits(&cholesky_one(&c, n, Triangle::Lower, Style::C), &l));
}

// ---------------------------------------------------------------- solve_triangular

fn solve_one<T: Scalar>(r: Routine, a: &[T], b: &[T], n: usize, k: usize, style: Style) -> Vec<T> {
    let mut x = Arr::new(&[n, n], style, &c_order(a, n, n));
    let mut y = Arr::new(&[n, k], style, &c_order(b, n, k));
    let mut d = Arr::new(&[n, k], style, &vec![T::zero(); n * k]);
    assert_eq!(call(r, &mut [&mut d], &mut [&mut x, &mut y]), Answer::Done);
    d.get()
}

/// op(a), n × n column-major, as the routine reads it.
fn op<T: Scalar>(a: &[T], n: usize, t: Triangle, adjoint: bool, unit: bool) -> Vec<Z> {
    let mut o = vec![(0.0, 0.0); n * n];
    for i in 0..n {
        for j in 0..n {
            let in_t = match t {
                Triangle::Lower => i >= j,
                Triangle::Upper => i <= j,
            };
            if !in_t {
                continue;
            }
            let v = if i == j && unit { (1.0, 0.0) } else { z(a[i + j * n]) };
            if adjoint {
                o[j + i * n] = conj(v);
            } else {
                o[i + j * n] = v;
            }
        }
    }
    o
}

fn solve_bounds<T: Scalar>(sizes: &[usize]) {
    let mut rng = Rng(11);
    for &n in sizes {
        for kind in KINDS {
            for (t, adjoint, unit) in [
                (Triangle::Lower, false, false),
                (Triangle::Upper, false, false),
                (Triangle::Lower, true, false),
                (Triangle::Upper, true, true),
                (Triangle::Lower, false, true),
            ] {
                let k = 3;
                let mut a = general::<T>(&mut rng, kind, n, n);
                // A dominant diagonal keeps the solution representable; a
                // unit one takes elements below its scale's.
                for j in 0..n {
                    for i in 0..n {
                        if unit {
                            let f = |p: f64| <T::Real as Real>::of_f64(p / scale::<T>(kind) / n as f64);
                            let x = z(a[i + j * n]);
                            a[i + j * n] = T::of_parts(f(x.0), f(x.1));
                        }
                    }
                    a[j + j * n] = T::add(a[j + j * n], T::of_real(<T::Real as Real>::of_f64(2.0 * scale::<T>(kind))));
                }
                let b = general::<T>(&mut rng, kind, n, k);
                let r = Routine::SolveTriangular { triangle: t, adjoint, unit_diagonal: unit };
                let x = solve_one(r, &a, &b, n, k, Style::Transposed);
                let o = op(&a, n, t, adjoint, unit);
                let (g, e) = (gamma::<T>(2 * n), eps::<T>(2 * n));
                for c in 0..k {
                    for i in 0..n {
                        let mut acc = ZAcc::default();
                        let mut mag = 0.0;
                        for j in 0..n {
                            let xj = z(x[j * k + c]);
                            acc.add_prod(o[i + j * n], xj);
                            mag += modulus(o[i + j * n]) * modulus(xj);
                        }
                        let bi = z(b[i + c * n]);
                        acc.add((-bi.0, -bi.1));
                        let res = modulus(acc.value());
                        let bound = g * mag + e * (1.0 + modulus(o[i + i * n]));
                        assert!(res <= bound, "{:?} {kind:?} {r:?} n={n}: residual {res:e} > {bound:e} at {i},{c}", T::DTYPE);
                    }
                }
            }
        }
    }
}

#[test]
fn solve_triangular_within_its_bound() {
    solve_bounds::<f32>(&[0, 1, 2, 3, 17, 64, 65]);
    solve_bounds::<f64>(&[1, 2, 3, 17, 65, 300]);
    solve_bounds::<C32>(&[1, 3, 17, 65]);
    solve_bounds::<C64>(&[1, 2, 17, 130]);
}

/// The plain substitution the contract describes, x column-major: each
/// x_i is b_i less its products with the x_k solved before it, in the
/// order they are solved, each fused, then divided by op(a)_ii.
fn solve_reference<T: Scalar>(a: &[T], b: &[T], n: usize, k: usize, t: Triangle, adjoint: bool, unit: bool) -> Vec<T> {
    let el = |r: usize, c: usize| if adjoint { a[c + r * n].conj() } else { a[r + c * n] };
    let order: Vec<usize> = if (t == Triangle::Lower) != adjoint { (0..n).collect() } else { (0..n).rev().collect() };
    let mut x = b.to_vec();
    for c in 0..k {
        for (p, &i) in order.iter().enumerate() {
            let mut v = b[i + c * n];
            for &q in &order[..p] {
                v = T::sub_mul(v, el(i, q), x[q + c * n]);
            }
            x[i + c * n] = if unit { v } else { T::div(v, el(i, i)) };
        }
    }
    x
}

#[test]
fn solve_triangular_has_the_reference_bits() {
    fn go<T: Scalar>(n: usize, k: usize) {
        let mut rng = Rng(43);
        // Small off the diagonal, so that x stays finite.
        let f = |p: T::Real| <T::Real as Real>::of_f64(p.to_f64() / n as f64);
        let mut a: Vec<T> = general::<T>(&mut rng, Kind::Random, n, n).iter().map(|x| T::of_parts(f(x.re()), f(x.im()))).collect();
        for j in 0..n {
            a[j + j * n] = T::add(a[j + j * n], T::of_real(<T::Real as Real>::of_f64(2.0)));
        }
        let b = general::<T>(&mut rng, Kind::Random, n, k);
        for (t, adjoint, unit) in [(Triangle::Lower, false, false), (Triangle::Upper, true, false), (Triangle::Upper, false, true)] {
            let r = Routine::SolveTriangular { triangle: t, adjoint, unit_diagonal: unit };
            for threads in [1, 3] {
                crate::core::pool::set_threads(threads).unwrap();
                let x = solve_one(r, &a, &b, n, k, Style::Strided);
                let want = c_order(&solve_reference(&a, &b, n, k, t, adjoint, unit), n, k);
                assert!(same_bits(&x, &want), "{:?} {r:?} {n} × {k}, {threads} threads", T::DTYPE);
            }
        }
    }
    go::<f64>(300, 40);
    // Columns of a multiple of 256 bytes: the scratch padded (batch::leading).
    go::<f64>(256, 40);
    go::<C64>(48, 7);
    go::<f32>(65, 13);
    go::<C32>(33, 25);
    // Rows too many for a chunk: the triangle split in halves.
    go::<C64>(1400, 2);
    go::<f64>(2800, 1);
}

#[test]
fn solve_triangular_zero_diagonal_and_aliasing() {
    let n = 4;
    let k = 2;
    let mut rng = Rng(5);
    let mut a = general::<C64>(&mut rng, Kind::Random, n, n);
    let b = general::<C64>(&mut rng, Kind::Random, n, k);
    let r = Routine::SolveTriangular { triangle: Triangle::Lower, adjoint: false, unit_diagonal: false };
    let x = solve_one(r, &a, &b, n, k, Style::C);
    assert!(x.iter().all(|v| !v.is_nan()));
    // dst identical to b, then to a (square b): the results of a fresh dst.
    let mut y = Arr::new(&[n, k], Style::Strided, &c_order(&b, n, k));
    let mut x2 = Arr::new(&[n, n], Style::Negative, &c_order(&a, n, n));
    let (av, bv) = (x2.view(), y.view());
    assert_eq!(Answer::of("t", plan(r, vec![bv.clone()], vec![av, bv]).and_then(|p| p.run())), Answer::Done);
    assert!(same_bits(&y.get::<C64>(), &x));
    let bsq = general::<C64>(&mut rng, Kind::Random, n, n);
    let want = solve_one(r, &a, &bsq, n, n, Style::C);
    let mut aa = Arr::new(&[n, n], Style::Transposed, &c_order(&a, n, n));
    let mut bb = Arr::new(&[n, n], Style::C, &c_order(&bsq, n, n));
    let (av, bv) = (aa.view(), bb.view());
    assert_eq!(Answer::of("t", plan(r, vec![av.clone()], vec![av, bv]).and_then(|p| p.run())), Answer::Done);
    assert!(same_bits(&aa.get::<C64>(), &want));
    // A zero on the diagonal read makes x NaN; a unit diagonal is not read.
    a[2 + 2 * n] = Complex::new(0.0, 0.0);
    assert!(solve_one(r, &a, &b, n, k, Style::C).iter().all(|v| v.is_nan()));
    let unit = Routine::SolveTriangular { triangle: Triangle::Lower, adjoint: false, unit_diagonal: true };
    assert!(solve_one(unit, &a, &b, n, k, Style::C).iter().all(|v| !v.is_nan()));
}

// ---------------------------------------------------------------- lu

struct LuOut<T> {
    lu: Vec<T>,
    pivots: Vec<i64>,
    perm: Vec<i64>,
}

fn lu_batch<T: Scalar>(a: &[T], batch: usize, m: usize, n: usize, style: Style) -> LuOut<T> {
    let k = m.min(n);
    let mut x = Arr::new(&[batch, m, n], style, a);
    let mut d = Arr::new(&[batch, m, n], style, &vec![T::zero(); batch * m * n]);
    let mut p = Arr::index(&[batch, k], style, -7);
    let mut q = Arr::index(&[batch, m], style, -7);
    assert_eq!(call(Routine::Lu, &mut [&mut d, &mut p, &mut q], &mut [&mut x]), Answer::Done);
    LuOut { lu: d.get(), pivots: p.get(), perm: q.get() }
}

/// The unblocked, right-looking factorisation the contract describes, of
/// the same chains: the reference the blocked one must equal bit for bit.
fn lu_reference<T: Scalar>(a: &[T], m: usize, n: usize) -> LuOut<T> {
    let mut w = a.to_vec(); // C order
    let mut pivots = vec![];
    let mut perm: Vec<i64> = (0..m as i64).collect();
    for j in 0..m.min(n) {
        let mut p = j;
        for i in j + 1..m {
            if w[i * n + j].abs1() > w[p * n + j].abs1() {
                p = i;
            }
        }
        pivots.push(p as i64);
        perm.swap(j, p);
        for c in 0..n {
            w.swap(j * n + c, p * n + c);
        }
        let d = w[j * n + j];
        for i in j + 1..m {
            if !d.is_zero() {
                w[i * n + j] = T::div(w[i * n + j], d);
            }
            for c in j + 1..n {
                w[i * n + c] = T::sub_mul(w[i * n + c], w[i * n + j], w[j * n + c]);
            }
        }
    }
    LuOut { lu: w, pivots, perm }
}

fn check_lu<T: Scalar>(a: &[T], out: &LuOut<T>, m: usize, n: usize, what: &str) {
    let k = m.min(n);
    let (g, e) = (gamma::<T>(2 * k), eps::<T>(2 * k));
    let l = |i: usize, p: usize| if i == p { (1.0, 0.0) } else if i > p { z(out.lu[i * n + p]) } else { (0.0, 0.0) };
    let u = |p: usize, j: usize| if p <= j { z(out.lu[p * n + j]) } else { (0.0, 0.0) };
    let mut seen = vec![false; m];
    for &p in &out.perm {
        seen[p as usize] = true;
    }
    assert!(seen.iter().all(|&s| s), "{what}: perm is not a permutation");
    for i in 0..m {
        for j in 0..n {
            let mut acc = ZAcc::default();
            let mut mag = 0.0;
            for p in 0..=i.min(j).min(k.saturating_sub(1)) {
                if k == 0 {
                    break;
                }
                acc.add_prod(l(i, p), u(p, j));
                mag += modulus(l(i, p)) * modulus(u(p, j));
            }
            let x = z(a[out.perm[i] as usize * n + j]);
            acc.add((-x.0, -x.1));
            let delta = modulus(acc.value());
            let pp = i.min(j);
            let upp = if pp < k { modulus(u(pp, pp)) } else { 0.0 };
            let bound = g * mag + e * (1.0 + upp);
            assert!(delta <= bound, "{what}: |Δ_{i}{j}| = {delta:e} > {bound:e}");
        }
    }
}

fn lu_bounds<T: Scalar>(shapes: &[(usize, usize)]) {
    let mut rng = Rng(13);
    for &(m, n) in shapes {
        for kind in KINDS {
            let a = c_order(&general::<T>(&mut rng, kind, m, n), m, n);
            let out = lu_batch(&a, 1, m, n, Style::Transposed);
            let what = format!("{:?} {kind:?} {m}×{n}", T::DTYPE);
            check_lu(&a, &out, m, n, &what);
            let r = lu_reference(&a, m, n);
            assert!(same_bits(&out.lu, &r.lu) && out.pivots == r.pivots && out.perm == r.perm, "{what}: not the reference's bits");
        }
    }
}

#[test]
fn lu_within_its_bound_with_the_reference_bits() {
    lu_bounds::<f32>(&[(0, 0), (1, 1), (2, 2), (3, 3), (17, 17), (64, 64), (65, 65), (5, 3), (3, 5), (70, 66)]);
    lu_bounds::<f64>(&[(1, 1), (2, 3), (17, 17), (65, 65), (130, 129), (300, 300), (128, 96)]);
    lu_bounds::<C32>(&[(1, 1), (3, 3), (17, 9), (65, 65)]);
    lu_bounds::<C64>(&[(2, 2), (17, 17), (66, 130)]);
}

#[test]
fn lu_pivots_as_the_contract_searches() {
    // Column 0: magnitudes 1, 3, 3 (first of equals), NaN (never greater).
    let a: Vec<f64> = vec![1.0, 0.0, 3.0, 1.0, -3.0, 2.0, f64::NAN, 1.0];
    let out = lu_batch(&a, 1, 4, 2, Style::C);
    assert_eq!(out.pivots[0], 1);
    // A NaN first is never passed: nothing is greater than a NaN.
    let a: Vec<f64> = vec![f64::NAN, 0.0, 3.0, 1.0];
    assert_eq!(lu_batch(&a, 1, 2, 2, Style::C).pivots[0], 0);
    // |re| + |im| on complex: 1 + 2 > 2.5.
    let a: Vec<C64> = vec![Complex::new(2.5, 0.0), Complex::new(1.0, 2.0)];
    let out = lu_batch(&a, 1, 2, 1, Style::C);
    assert_eq!((out.pivots.clone(), out.perm.clone()), (vec![1], vec![1, 0]));
    // A zero pivot stays in U and its column of L is not divided.
    let a: Vec<f64> = vec![0.0, 1.0, 2.0, 0.0, 2.0, 3.0, 0.0, 4.0, 5.0];
    let out = lu_batch(&a, 1, 3, 3, Style::Strided);
    assert_eq!(out.lu[0], 0.0);
    assert_eq!((out.lu[3], out.lu[6]), (0.0, 0.0));
    // Column 1 then searches rows 1 and 2: 2, then 4.
    assert_eq!(out.pivots, vec![0, 2, 2]);
}

// ---------------------------------------------------------------- qr

fn qr_batch<T: Scalar>(a: &[T], batch: usize, m: usize, n: usize, c: usize, style: Style) -> (Vec<T>, Vec<T>) {
    let mut x = Arr::new(&[batch, m, n], style, a);
    let mut q = Arr::new(&[batch, m, c], style, &vec![T::zero(); batch * m * c]);
    let mut r = Arr::new(&[batch, c, n], style, &vec![T::zero(); batch * c * n]);
    assert_eq!(call(Routine::Qr, &mut [&mut q, &mut r], &mut [&mut x]), Answer::Done);
    (q.get(), r.get())
}

fn check_qr<T: Scalar>(a: &[T], q: &[T], r: &[T], m: usize, n: usize, c: usize, what: &str) {
    let k = m.min(n);
    let g = gamma::<T>(k * (2 * m + 10));
    let h = eps::<T>(k * (2 * m + 10));
    for i in 0..c {
        for j in 0..n {
            let x = z(r[i * n + j]);
            if i > j {
                assert!(x.0 == 0.0 && x.1 == 0.0 && x.0.is_sign_positive() && x.1.is_sign_positive(), "{what}: r below at {i},{j}");
            }
            if i == j {
                assert!(x.1 == 0.0, "{what}: r's diagonal {i} is {x:?}");
            }
        }
    }
    for j in 0..n {
        let mut err = 0.0;
        let mut norm = 0.0;
        for i in 0..m {
            let mut acc = ZAcc::default();
            for p in 0..c {
                acc.add_prod(z(q[i * c + p]), z(r[p * n + j]));
            }
            let x = z(a[i * n + j]);
            acc.add((-x.0, -x.1));
            let d = modulus(acc.value());
            err += d * d;
            norm += modulus(x).powi(2);
        }
        let (err, norm) = (err.sqrt(), norm.sqrt());
        let bound = g * norm + (m as f64).sqrt() * h;
        assert!(err <= bound, "{what}: column {j}: {err:e} > {bound:e}");
    }
    for i in 0..c {
        for j in 0..c {
            let mut acc = ZAcc::default();
            for p in 0..m {
                acc.add_prod(conj(z(q[p * c + i])), z(q[p * c + j]));
            }
            if i == j {
                acc.add((-1.0, 0.0));
            }
            let d = modulus(acc.value());
            assert!(d <= g, "{what}: (qᴴq - I)_{i}{j} = {d:e} > {g:e}");
        }
    }
}

fn qr_bounds<T: Scalar>(shapes: &[(usize, usize)]) {
    let mut rng = Rng(17);
    for &(m, n) in shapes {
        for kind in KINDS {
            let a = c_order(&general::<T>(&mut rng, kind, m, n), m, n);
            for c in [m.min(n), m] {
                let (q, r) = qr_batch(&a, 1, m, n, c, Style::Negative);
                check_qr(&a, &q, &r, m, n, c, &format!("{:?} {kind:?} {m}×{n} into {c}", T::DTYPE));
            }
        }
    }
}

#[test]
fn qr_within_its_bound() {
    qr_bounds::<f32>(&[(0, 0), (1, 1), (2, 2), (3, 3), (17, 17), (64, 64), (65, 65), (7, 3), (3, 7)]);
    qr_bounds::<f64>(&[(1, 1), (2, 3), (17, 17), (65, 64), (120, 100), (140, 139), (128, 100)]);
    qr_bounds::<C32>(&[(1, 1), (3, 3), (17, 9), (65, 65)]);
    qr_bounds::<C64>(&[(2, 2), (17, 17), (66, 40), (100, 70)]);
}

// ---------------------------------------------------------------- bits

/// Every routine's results on a batch of 5, in every style and under 1 and
/// 3 threads, against each matrix computed alone, bit for bit.
fn same_everywhere<T: Scalar>(m: usize, n: usize) {
    let mut rng = Rng(23);
    let batch = 5;
    let defs: Vec<T> = (0..batch).flat_map(|_| c_order(&definite::<T>(&mut rng, Kind::Random, n), n, n)).collect();
    let gens: Vec<T> = (0..batch).flat_map(|_| c_order(&general::<T>(&mut rng, Kind::Random, m, n), m, n)).collect();
    let mut alone = vec![];
    for threads in [1, 3] {
        crate::core::pool::set_threads(threads).unwrap();
        for style in STYLES {
            let mut results: Vec<Vec<String>> = vec![];
            let bits = |v: &[T]| v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>();
            // cholesky
            let mut x = Arr::new(&[batch, n, n], style, &defs);
            let mut d = Arr::new(&[batch, n, n], style, &vec![T::zero(); batch * n * n]);
            assert_eq!(call(Routine::Cholesky(Triangle::Lower), &mut [&mut d], &mut [&mut x]), Answer::Done);
            results.push(bits(&d.get::<T>()));
            // solve_triangular with the factors, of the general matrices as b (n × n).
            let nn: Vec<T> = (0..batch).flat_map(|_| c_order(&general::<T>(&mut Rng(5), Kind::Random, n, n), n, n)).collect();
            let mut y = Arr::new(&[batch, n, n], style, &nn);
            let mut s = Arr::new(&[batch, n, n], style, &vec![T::zero(); batch * n * n]);
            let r = Routine::SolveTriangular { triangle: Triangle::Lower, adjoint: true, unit_diagonal: false };
            assert_eq!(call(r, &mut [&mut s], &mut [&mut d, &mut y]), Answer::Done);
            results.push(bits(&s.get::<T>()));
            // lu and qr of the general ones
            let out = lu_batch(&gens, batch, m, n, style);
            results.push(bits(&out.lu));
            results.push(out.pivots.iter().chain(&out.perm).map(|p| p.to_string()).collect());
            let (q, rr) = qr_batch(&gens, batch, m, n, m.min(n), style);
            results.push(bits(&q));
            results.push(bits(&rr));
            if alone.is_empty() {
                alone = results;
            } else {
                assert_eq!(alone, results, "{:?} {style:?} threads {threads}", T::DTYPE);
            }
        }
    }
    // Each matrix alone has the bits it has in the batch.
    for b in 0..batch {
        let one = lu_batch(&gens[b * m * n..(b + 1) * m * n], 1, m, n, Style::C);
        let want: Vec<String> = one.lu.iter().map(|x| format!("{x:?}")).collect();
        assert_eq!(want[..], alone[2][b * m * n..(b + 1) * m * n]);
        let (q, _) = qr_batch(&gens[b * m * n..(b + 1) * m * n], 1, m, n, m.min(n), Style::Transposed);
        let want: Vec<String> = q.iter().map(|x| format!("{x:?}")).collect();
        let qn = m * m.min(n);
        assert_eq!(want[..], alone[4][b * qn..(b + 1) * qn]);
        let l = cholesky_one(&col_major(&defs[b * n * n..(b + 1) * n * n], n), n, Triangle::Lower, Style::Strided);
        let want: Vec<String> = l.iter().map(|x| format!("{x:?}")).collect();
        assert_eq!(want[..], alone[0][b * n * n..(b + 1) * n * n]);
    }
}

#[test]
fn bits_equal_across_batches_layouts_and_threads() {
    same_everywhere::<f64>(4, 4);
    same_everywhere::<C32>(7, 5);
    same_everywhere::<f32>(3, 6);
    same_everywhere::<C64>(9, 9);
}

#[test]
fn a_large_matrix_has_the_same_bits_on_1_and_3_threads_in_every_layout() {
    // Large enough that each routine's updates, cholesky's chunks and
    // lu's interchanges take threads (gemm::THREADED), and that the matrix
    // is read and written by bands of columns, one a thread, whatever its
    // strides: a tile's rows past the side whose square of float64 fills
    // the copies' threshold.
    let side = (batch::copy_threaded_bytes() as f64 / 8.0).sqrt().ceil() as usize;
    let n = side + 8;
    assert!(n * n * 8 >= batch::copy_threaded_bytes() && n * n * 8 > gemm::THREADED);
    let a = definite::<f64>(&mut Rng(29), Kind::Random, n);
    let g = c_order(&general::<f64>(&mut Rng(31), Kind::Random, n, n), n, n);
    let mut outs = vec![];
    for threads in [1, 3] {
        crate::core::pool::set_threads(threads).unwrap();
        for style in STYLES {
            let l = cholesky_one(&a, n, Triangle::Lower, style);
            let lu = lu_batch(&g, 1, n, n, style).lu;
            let r = Routine::SolveTriangular { triangle: Triangle::Upper, adjoint: false, unit_diagonal: false };
            let x = solve_one(r, &a, &a, n, n, style);
            let (q, rr) = qr_batch(&g, 1, n, n, n, style);
            outs.push((threads, style, (l, lu, x, q, rr)));
        }
    }
    let (_, _, a) = &outs[0];
    for (threads, style, b) in &outs[1..] {
        let same = same_bits(&a.0, &b.0) && same_bits(&a.1, &b.1) && same_bits(&a.2, &b.2);
        assert!(same && same_bits(&a.3, &b.3) && same_bits(&a.4, &b.4), "{style:?} on {threads} threads");
    }
}

/// A large matrix's results on the crate's baseline instructions (AVX2's
/// microkernels, of other tiles) and on the widest the CPU has, bit for bit.
#[test]
fn a_large_matrix_has_the_same_bits_on_every_instruction_set() {
    fn go<T: Scalar>(n: usize) {
        let a = definite::<T>(&mut Rng(37), Kind::Random, n);
        let g = c_order(&general::<T>(&mut Rng(41), Kind::Random, n, n), n, n);
        let mut outs = vec![];
        crate::core::pool::set_threads(1).unwrap();
        for baseline in [true, false] {
            crate::core::isa::baseline_here(baseline);
            let l = cholesky_one(&a, n, Triangle::Lower, Style::C);
            let lu = lu_batch(&g, 1, n, n, Style::C).lu;
            let r = Routine::SolveTriangular { triangle: Triangle::Lower, adjoint: true, unit_diagonal: false };
            let x = solve_one(r, &a, &g, n, n, Style::C);
            let (q, rr) = qr_batch(&g, 1, n, n, n, Style::Transposed);
            outs.push([l, lu, x, q, rr]);
        }
        crate::core::isa::baseline_here(false);
        for (x, y) in outs[0].iter().zip(&outs[1]) {
            assert!(same_bits(x, y), "{:?}", T::DTYPE);
        }
    }
    go::<f64>(150);
    go::<f32>(150);
    go::<C64>(90);
}

// ---------------------------------------------------------------- refusals

#[test]
fn refusals_leave_destinations_untouched() {
    let n = 3;
    let a: Vec<f64> = c_order(&definite::<f64>(&mut Rng(1), Kind::Random, n), n, n);
    let chol = Routine::Cholesky(Triangle::Lower);
    let cases: Vec<(Routine, Vec<Arr>, Vec<Arr>, &str)> = vec![
        (chol, vec![Arr::new(&[n, n], Style::C, &[0f32; 9])], vec![Arr::new(&[n, n], Style::C, &a)], "dst is float32"),
        (chol, vec![Arr::new(&[n, n], Style::C, &[0f64; 9])], vec![Arr::index(&[n, n], Style::C, 0)], "a is int64"),
        (chol, vec![Arr::new(&[2, 3], Style::C, &[0f64; 6])], vec![Arr::new(&[2, 3], Style::C, &[0f64; 6])], "not square"),
        (chol, vec![Arr::new(&[2, n, n], Style::C, &[0f64; 18])], vec![Arr::new(&[n, n], Style::C, &a)], "dst has shape"),
        (chol, vec![Arr::new(&[n], Style::C, &[0f64; 3])], vec![Arr::new(&[n], Style::C, &[0f64; 3])], "axes"),
        (Routine::Lu, vec![Arr::new(&[n, n], Style::C, &[0f64; 9]), Arr::index(&[2], Style::C, 0), Arr::index(&[n], Style::C, 0)],
            vec![Arr::new(&[n, n], Style::C, &a)], "pivots has shape"),
        (Routine::Qr, vec![Arr::new(&[n, 2], Style::C, &[0f64; 6]), Arr::new(&[2, n], Style::C, &[0f64; 6])],
            vec![Arr::new(&[n, n], Style::C, &a)], "q has shape"),
        (Routine::SolveTriangular { triangle: Triangle::Lower, adjoint: false, unit_diagonal: false },
            vec![Arr::new(&[n, 2], Style::C, &[0f64; 6])], vec![Arr::new(&[n, n], Style::C, &a), Arr::new(&[n, 3], Style::C, &[0f64; 9])], "dst has shape [3, 2], not [3, 3]"),
    ];
    for (r, mut dsts, mut ops, why) in cases {
        let before: Vec<_> = dsts.iter().map(Arr::bytes).collect();
        let mut d: Vec<&mut Arr> = dsts.iter_mut().collect();
        let mut o: Vec<&mut Arr> = ops.iter_mut().collect();
        match call(r, &mut d, &mut o) {
            Answer::Refused(m) => assert!(m.contains(why), "{m} lacks {why}"),
            a => panic!("{why}: {a:?}"),
        }
        assert_eq!(before, dsts.iter().map(Arr::bytes).collect::<Vec<_>>());
    }
    // A destination that maps two indices to one element, and two that overlap.
    let mut x = Arr::new(&[n, n], Style::C, &a);
    let mut d = Arr::new(&[n, n], Style::C, &[0f64; 9]);
    let mut dv = d.view();
    dv.layout.strides = vec![0, 1];
    assert!(matches!(Answer::of("t", plan(chol, vec![dv], vec![x.view()]).map(|_| ())), Answer::Refused(m) if m.contains("several")));
    let mut q = Arr::new(&[n, n], Style::C, &[0f64; 9]);
    let qv = q.view();
    assert!(matches!(Answer::of("t", plan(Routine::Qr, vec![qv.clone(), qv], vec![x.view()]).map(|_| ())), Answer::Refused(m) if m.contains("overlap")));
}

// ---------------------------------------------------------------- groups

/// Batches of small matrices, computed in groups of `lanes::L`: each
/// matrix's results have the bits it has alone, whatever the group's
/// others (failing, NaN, zero, tiny and huge ones among them), in every
/// style and under 1 and 3 threads.
#[test]
fn small_matrices_in_groups_have_their_bits_alone() {
    fn go<T: Scalar>(n: usize, (m, qn): (usize, usize)) {
        let batch = 2 * lanes::L + 5;
        let mut rng = Rng(43 + n as u64);
        let kind = |b: usize| KINDS[b % KINDS.len()];
        // cholesky: definite ones, one not, one with a NaN.
        let mut defs: Vec<Vec<T>> = (0..batch).map(|b| definite::<T>(&mut rng, kind(b), n)).collect();
        if n > 1 {
            defs[3][1 + n] = T::of_real(<T::Real as Real>::of_f64(-1.0));
            defs[lanes::L + 2][n - 1] = T::nan();
        }
        // qr: general ones, one with a zero column, one with a NaN.
        let mut gens: Vec<Vec<T>> = (0..batch).map(|b| general::<T>(&mut rng, kind(b), m, qn)).collect();
        gens[1][..m].fill(T::zero());
        gens[lanes::L + 1][m * qn - 1] = T::nan();
        let bits = |v: &[T]| v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>();
        for t in [Triangle::Lower, Triangle::Upper] {
            let alone: Vec<String> = defs.iter().flat_map(|a| bits(&cholesky_one(a, n, t, Style::C))).collect();
            let all: Vec<T> = defs.iter().flat_map(|a| c_order(a, n, n)).collect();
            for threads in [1, 3] {
                crate::core::pool::set_threads(threads).unwrap();
                for style in STYLES {
                    let mut x = Arr::new(&[batch, n, n], style, &all);
                    let mut d = Arr::new(&[batch, n, n], style, &vec![T::zero(); batch * n * n]);
                    assert_eq!(call(Routine::Cholesky(t), &mut [&mut d], &mut [&mut x]), Answer::Done);
                    assert_eq!(bits(&d.get::<T>()), alone, "{:?} n={n} {t:?} {style:?} threads {threads}", T::DTYPE);
                }
            }
        }
        for c in [m.min(qn), m] {
            let mut alone = (vec![], vec![]);
            for g in &gens {
                let (q, r) = qr_batch(&c_order(g, m, qn), 1, m, qn, c, Style::C);
                alone.0.extend(bits(&q));
                alone.1.extend(bits(&r));
            }
            let all: Vec<T> = gens.iter().flat_map(|g| c_order(g, m, qn)).collect();
            for threads in [1, 3] {
                crate::core::pool::set_threads(threads).unwrap();
                for style in STYLES {
                    let (q, r) = qr_batch(&all, batch, m, qn, c, style);
                    assert_eq!((bits(&q), bits(&r)), alone, "{:?} {m}x{qn} c={c} {style:?} threads {threads}", T::DTYPE);
                }
            }
        }
    }
    go::<f64>(4, (8, 8));
    go::<f32>(16, (7, 5));
    go::<C32>(3, (3, 6));
    go::<C64>(2, (32, 32));
    go::<f64>(1, (1, 1));
}

// ---------------------------------------------------------------- bands

/// A product whose A has zeros above (or below) its diagonal, computed
/// with the band's depths left out, has the bits of the whole product:
/// with C's values nonzero, a zero product changes no sum. On both
/// instruction sets, of every dtype, on sizes that end mid-group.
#[test]
fn a_banded_product_has_the_whole_products_bits() {
    use super::gemm::{sub_product, Band, Coef};
    fn go<T: Scalar>(m: usize, kn: usize, n: usize) {
        let mut rng = Rng(43);
        for band in [Band::Upper, Band::Lower] {
            let a: Vec<T> = (0..m * kn)
                .map(|x| {
                    let (i, k) = (x % m, x / m);
                    let zero = if band == Band::Upper { k < i } else { k > i };
                    if zero { T::zero() } else { rng.scalar() }
                })
                .collect();
            let f: Vec<T> = (0..kn * n).map(|_| rng.scalar()).collect();
            let c0: Vec<T> = (0..m * n).map(|_| T::add(rng.scalar(), T::of_real(<T::Real as Real>::of_f64(4.0)))).collect();
            for baseline in [true, false] {
                crate::core::isa::baseline_here(baseline);
                let run = |band| {
                    let mut c = c0.clone();
                    sub_product(&mut c, m, m, &a, m, Coef { f: &f, ks: 1, cs: kn, conj: true }, kn, n, band, false);
                    c
                };
                let (whole, banded) = (run(Band::Full), run(band));
                assert!(same_bits(&whole, &banded), "{:?} {band:?} {m} × {kn} × {n}", T::DTYPE);
                // Not the starting values: the product took place.
                assert!(!same_bits(&whole, &c0));
            }
            crate::core::isa::baseline_here(false);
        }
    }
    go::<f64>(70, 70, 13);
    go::<f64>(37, 100, 5);
    go::<f32>(100, 45, 9);
    go::<C32>(33, 33, 7);
    go::<C64>(64, 20, 30);
}

// ---------------------------------------------------------------- kept scratch

/// A call of one matrix takes nothing from what an earlier call on its
/// thread left in the scratch it keeps (`with_kept`): after calls of every
/// routine on NaNs, of sizes whose columns are padded otherwise, each
/// routine gives the bits it gives on a fresh thread.
#[test]
fn one_matrix_takes_nothing_from_the_kept_scratch() {
    fn calls<T: Scalar>(n: usize, nan: bool) -> Vec<Vec<T>> {
        let mut rng = Rng(n as u64);
        let (a, b) = if nan {
            (vec![T::nan(); n * n], vec![T::nan(); n * 3])
        } else {
            (definite::<T>(&mut rng, Kind::Random, n), general::<T>(&mut rng, Kind::Random, n, 3))
        };
        let st = Routine::SolveTriangular { triangle: Triangle::Upper, adjoint: false, unit_diagonal: false };
        let lu = lu_batch(&a, 1, n, n, Style::C);
        let (q, r) = qr_batch(&a, 1, n, n, n, Style::C);
        vec![cholesky_one(&a, n, Triangle::Lower, Style::C), solve_one(st, &a, &b, n, 3, Style::C), lu.lu, q, r]
    }
    fn go<T: Scalar>(n: usize, others: &'static [usize]) {
        let fresh = std::thread::spawn(move || calls::<T>(n, false)).join().unwrap();
        let after = std::thread::spawn(move || {
            for &o in others {
                calls::<T>(o, true);
            }
            calls::<T>(n, false)
        })
        .join()
        .unwrap();
        for (i, (f, a)) in fresh.iter().zip(&after).enumerate() {
            assert!(same_bits(f, a), "{} {n}: result {i}", T::DTYPE.name());
        }
    }
    // Columns of 256 bytes are padded (`batch::leading`): 32 float64s, 16
    // complex128s.
    go::<f64>(32, &[64, 40]);
    go::<C64>(16, &[32, 24]);
}
