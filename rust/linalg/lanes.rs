//! Batches of small matrices, [`L`] at a time: matrix `b0 + l` of a group
//! in lane `l` of each element, `[T; L]`, so that each step of a routine
//! runs on the `L` matrices at once as vector instructions.
//!
//! Each lane takes exactly the operations, in the order, that the routine
//! takes on its matrix alone (`cholesky::panel`, `qr::factor` and
//! `qr::form_q` below their blocking sizes), so a matrix's bits are the
//! same whether it is computed alone or in a group, whatever the group's
//! other matrices. A reflector whose column is zero below its pivot or
//! whose norm is below the least normal number takes the scalar path
//! (`qr::reflector`) in its lane alone.

use super::batch::Mats;
use super::scalar::{Real, Scalar};
use super::{qr, triangular, Routine, Triangle};

/// Matrices a group computes at once.
pub const L: usize = 8;

/// One element of each of a group's matrices.
type Lanes<T> = [T; L];

/// Whether a batch of `m` × `n` operands of `routine` is computed in
/// groups: cholesky up to its unblocked size, qr up to its block of
/// reflectors.
pub fn takes(routine: Routine, m: usize, n: usize) -> bool {
    match routine {
        Routine::Cholesky(_) => n <= triangular::BASE,
        Routine::Qr => m.max(n) <= qr::NB,
        _ => false,
    }
}

/// A thread's scratch for groups, reused from one group to the next.
pub struct Scratch<T> {
    w: Vec<Lanes<T>>,
    q: Vec<Lanes<T>>,
    r: Vec<Lanes<T>>,
    col: Vec<Lanes<T>>,
    one: Vec<T>,
    taus: Vec<Lanes<T>>,
}

impl<T> Default for Scratch<T> {
    /// An empty scratch.
    fn default() -> Scratch<T> {
        Scratch { w: Vec::new(), q: Vec::new(), r: Vec::new(), col: Vec::new(), one: Vec::new(), taus: Vec::new() }
    }
}

/// Computes matrices `b0..b0 + L` (those of the batch) of `routine` (one
/// that [`takes`] them), from `a` into `dsts`.
pub fn group<T: Scalar>(routine: Routine, s: &mut Scratch<T>, a: &Mats, dsts: &[Mats], b0: usize) {
    let (m, n) = (a.rows, a.cols);
    s.w.resize(m * n, [T::zero(); L]);
    a.read_lanes(b0, &mut s.w);
    match routine {
        Routine::Cholesky(t) => {
            cholesky(&mut s.w, n, t == Triangle::Upper);
            dsts[0].write_lanes(b0, &s.w);
        }
        Routine::Qr => {
            let k = m.min(n);
            let c = dsts[0].cols;
            s.taus.resize(k, [T::zero(); L]);
            qr_factor(s, m, n);
            s.q.clear();
            s.q.resize(m * c, [T::zero(); L]);
            for j in 0..c {
                s.q[j + j * m] = [T::one(); L];
            }
            for j in (0..k).rev() {
                apply(&s.w[j * m + j + 1..j * m + m], &s.taus[j], &mut s.q[j * m..m * c], m, j);
            }
            dsts[0].write_lanes(b0, &s.q);
            s.r.clear();
            s.r.resize(c * n, [T::zero(); L]);
            for col in 0..n {
                for row in 0..(col + 1).min(k) {
                    s.r[row + col * c] = s.w[row + col * m];
                }
            }
            dsts[1].write_lanes(b0, &s.r);
        }
        _ => unreachable!("`takes` admits cholesky and qr alone"),
    }
}

/// `cholesky::factor` of an n × n group (n at most its unblocked size):
/// L below the diagonal, +0 above, or NaN where a pivot fails; then Lᴴ
/// where `upper`.
fn cholesky<T: Scalar>(w: &mut [Lanes<T>], n: usize, upper: bool) {
    let zero = T::Real::zero();
    let mut failed = [false; L];
    for j in 0..n {
        let d = &mut w[j + j * n];
        *d = d.map(|x| T::of_real(x.re()));
    }
    for j in 0..n {
        let (head, tail) = w.split_at_mut(j * n);
        let col = &mut tail[j..n];
        for k in 0..j {
            let f = head[j + k * n].map(T::conj);
            for (y, lk) in col.iter_mut().zip(&head[j + k * n..(k + 1) * n]) {
                for l in 0..L {
                    y[l] = T::sub_mul(y[l], lk[l], f[l]);
                }
            }
        }
        // Each step over the lanes apart, without branches, so that each
        // is a vector instruction.
        let d: Lanes<T::Real> = std::array::from_fn(|l| col[0][l].re());
        for (f, &d) in failed.iter_mut().zip(&d) {
            // Not above zero, NaN included.
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            {
                *f |= !(d > zero);
            }
        }
        let root = d.map(|d| d.sqrt());
        for (x, &r) in col[0].iter_mut().zip(&root) {
            *x = T::of_real(r);
        }
        for y in &mut col[1..] {
            for l in 0..L {
                y[l] = T::div_real(y[l], root[l]);
            }
        }
    }
    for j in 0..n {
        for i in 0..j {
            w[i + j * n] = [T::zero(); L];
        }
    }
    if upper {
        for j in 0..n {
            let d = &mut w[j + j * n];
            *d = d.map(T::conj);
            for i in j + 1..n {
                w[j + i * n] = w[i + j * n].map(T::conj);
                w[i + j * n] = [T::zero(); L];
            }
        }
    }
    for (l, _) in failed.iter().enumerate().filter(|f| *f.1) {
        for x in w.iter_mut() {
            x[l] = T::nan();
        }
    }
}

/// `qr::factor` of the group in `s.w` (m × n, both at most `qr::NB`): each
/// reflector applied alone, its τ into `s.taus`.
fn qr_factor<T: Scalar>(s: &mut Scratch<T>, m: usize, n: usize) {
    for j in 0..m.min(n) {
        let (head, tail) = s.w.split_at_mut((j + 1) * m);
        let col = &mut head[j * m + j..];
        let tau = reflector(col, &mut s.col, &mut s.one);
        s.taus[j] = tau;
        apply(&col[1..], &tau.map(T::conj), &mut tail[..(n - j - 1) * m], m, j);
    }
}

/// `qr::norm` in each lane.
fn norm<T: Scalar>(xs: &[Lanes<T>], extra: Lanes<T::Real>) -> Lanes<T::Real> {
    let zero = T::Real::zero();
    let mut scale = extra.map(|e| e.abs());
    for x in xs {
        for l in 0..L {
            let a = x[l].abs_max();
            if a > scale[l] || a.is_nan() {
                scale[l] = a;
            }
        }
    }
    let sq = |r: T::Real, scale: T::Real| {
        let t = r / scale;
        t * t
    };
    let mut s: Lanes<T::Real> = std::array::from_fn(|l| sq(extra[l], scale[l]));
    for x in xs {
        for l in 0..L {
            s[l] = s[l] + sq(x[l].re(), scale[l]);
            if T::COMPLEX {
                s[l] = s[l] + sq(x[l].im(), scale[l]);
            }
        }
    }
    std::array::from_fn(|l| if scale[l] == zero || scale[l].is_nan() { scale[l] } else { scale[l] * s[l].sqrt() })
}

/// `qr::reflector` in each lane: the lanes whose column is zero below its
/// pivot or whose norm is below the least normal number by that function
/// itself, on a copy of the lane's column kept in `col` (`one` its
/// scratch), the others here.
fn reflector<T: Scalar>(x: &mut [Lanes<T>], col: &mut Vec<Lanes<T>>, one: &mut Vec<T>) -> Lanes<T> {
    let zero = T::Real::zero();
    let xnorm = norm(&x[1..], [zero; L]);
    let mag = norm(&x[..1], xnorm);
    let min_normal = <T::Real as Real>::of_f64(<T::Real as Real>::MIN_NORMAL);
    let alone: [bool; L] = std::array::from_fn(|l| (xnorm[l] == zero && x[0][l].im() == zero) || mag[l] < min_normal);
    col.clear();
    if alone.contains(&true) {
        col.extend_from_slice(x);
    }
    let alpha = x[0];
    let beta: Lanes<T::Real> = std::array::from_fn(|l| if alpha[l].re() >= zero { -mag[l] } else { mag[l] });
    let mut tau: Lanes<T> = std::array::from_fn(|l| T::of_parts((beta[l] - alpha[l].re()) / beta[l], -alpha[l].im() / beta[l]));
    let pivot: Lanes<T> = std::array::from_fn(|l| T::of_parts(alpha[l].re() - beta[l], alpha[l].im()));
    for v in &mut x[1..] {
        for l in 0..L {
            v[l] = T::div(v[l], pivot[l]);
        }
    }
    x[0] = beta.map(T::of_real);
    for l in (0..L).filter(|&l| alone[l]) {
        one.clear();
        one.extend(col.iter().map(|c| c[l]));
        tau[l] = qr::reflector(one);
        for (y, &v) in x.iter_mut().zip(one.iter()) {
            y[l] = v;
        }
    }
    tau
}

/// `qr::apply_cols` in each lane: I - t v vᴴ applied to each column of
/// `cols` (`m` rows a column) from row `j` down.
fn apply<T: Scalar>(v: &[Lanes<T>], t: &Lanes<T>, cols: &mut [Lanes<T>], m: usize, j: usize) {
    for col in cols.chunks_mut(m) {
        let mut s = col[j].map(T::neg);
        for (vi, c) in v.iter().zip(&col[j + 1..]) {
            for l in 0..L {
                s[l] = T::sub_mul(s[l], vi[l].conj(), c[l]);
            }
        }
        let sc: Lanes<T> = std::array::from_fn(|l| T::mul(t[l], s[l].neg()));
        for l in 0..L {
            col[j][l] = T::add(col[j][l], sc[l].neg());
        }
        for (c, vi) in col[j + 1..].iter_mut().zip(v) {
            for l in 0..L {
                c[l] = T::sub_mul(c[l], vi[l], sc[l]);
            }
        }
    }
}
