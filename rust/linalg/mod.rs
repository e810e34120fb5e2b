//! The matrix routines: cholesky, lu, solve_triangular and qr, on float32,
//! float64, complex64 and complex128, on every matrix of a batch (the
//! operands' axes before their last two).
//!
//! A call is checked whole before any write ([`plan`]); each matrix is then
//! read into a column-major scratch, computed there and written out, so
//! that its results are a function of its values alone, whatever its batch,
//! its layout or the threads. The threads take whole matrices of a batch
//! (small ones in groups computed at once, lane by lane: [`lanes`]), or, for a batch of one, whole columns of a factorisation's updates,
//! neither of which changes an element's chain of operations; a large
//! matrix alone is also read and written by bands of columns, one a thread.
//!
//! Destinations that share bytes with an operand are accepted: the operands
//! are then read from copies the call holds.

pub mod batch;
pub mod cholesky;
pub mod gemm;
pub mod lanes;
pub mod lu;
pub mod qr;
pub mod scalar;
pub mod triangular;
#[cfg(test)]
mod bench;
#[cfg(test)]
mod tests;

use crate::core::call::Call;
use crate::core::door::Claim;
use crate::core::dtype::Dtype;
use crate::core::layout::{ranges_meet, same_dims, View};
use crate::core::pool;
use crate::loops::map::self_overlaps;
use batch::{batch_of, Held, Mats};
use num_complex::Complex;
use scalar::Scalar;

/// A triangle of a square matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Triangle {
    Lower,
    Upper,
}

/// A matrix routine and its attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routine {
    /// Destination: the factor, of a's shape.
    Cholesky(Triangle),
    /// Destinations: lu (a's shape), pivots (the batch and min(m, n)), perm
    /// (the batch and m).
    Lu,
    /// Operands a (n × n) and b (n × k); destination x, of b's shape.
    SolveTriangular { triangle: Triangle, adjoint: bool, unit_diagonal: bool },
    /// Destinations q (m × c) and r (c × n), c = min(m, n) (reduced) or m
    /// (complete).
    Qr,
}

impl Routine {
    /// The routine's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Routine::Cholesky(_) => "cholesky",
            Routine::Lu => "lu",
            Routine::SolveTriangular { .. } => "solve_triangular",
            Routine::Qr => "qr",
        }
    }

    fn names(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Routine::Cholesky(_) => (&["dst"], &["a"]),
            Routine::Lu => (&["lu", "pivots", "perm"], &["a"]),
            Routine::SolveTriangular { .. } => (&["dst"], &["a", "b"]),
            Routine::Qr => (&["q", "r"], &["a"]),
        }
    }
}

/// A checked call of a matrix routine.
pub struct Plan {
    routine: Routine,
    dtype: Dtype,
    dsts: Vec<View>,
    operands: Vec<View>,
    /// Whether a destination shares bytes with an operand.
    copied: bool,
}

fn is_full_precision(d: Dtype) -> bool {
    matches!(d, Dtype::Float32 | Dtype::Float64 | Dtype::Complex64 | Dtype::Complex128)
}

/// Checks that `v` (named `name`) has the batch `batch` and the `tail`
/// extents after it.
fn check_shape(v: &View, name: &str, batch: &[usize], tail: &[usize]) -> Result<(), String> {
    let s = &v.layout.shape;
    let want: Vec<usize> = batch.iter().chain(tail).copied().collect();
    if same_dims(s, &want) {
        Ok(())
    } else {
        Err(format!("{name} has shape {s:?}, not {want:?}"))
    }
}

/// Checks a call of `routine` with its destinations and operands in the
/// order [`Routine`] lists them: dtypes, shapes, and destinations that map
/// no two indices to one element and share no byte.
pub fn plan(routine: Routine, dsts: Vec<View>, operands: Vec<View>) -> Result<Plan, String> {
    let (dnames, onames) = routine.names();
    if dsts.len() != dnames.len() || operands.len() != onames.len() {
        return Err(format!(
            "{} destinations and {} operands, not {} and {}",
            dsts.len(),
            operands.len(),
            dnames.len(),
            onames.len()
        ));
    }
    let a = &operands[0].layout;
    let dtype = a.dtype;
    if !is_full_precision(dtype) {
        return Err(format!("a is {}, not float32, float64, complex64 or complex128", dtype.name()));
    }
    if a.shape.len() < 2 {
        return Err(format!("a has {} axes, not at least 2", a.shape.len()));
    }
    let r = a.shape.len();
    let (m, n) = (a.shape[r - 2], a.shape[r - 1]);
    let batch = batch_of(a, 2);
    for (v, name) in dsts.iter().zip(dnames).chain(operands.iter().zip(onames)) {
        let want = if matches!(*name, "pivots" | "perm") { Dtype::Int64 } else { dtype };
        if v.layout.dtype != want {
            return Err(format!("{name} is {}, not {}", v.layout.dtype.name(), want.name()));
        }
    }
    match routine {
        Routine::Cholesky(_) => {
            if m != n {
                return Err(format!("a is {m} × {n}, not square"));
            }
            check_shape(&dsts[0], "dst", batch, &[m, n])?;
        }
        Routine::Lu => {
            check_shape(&dsts[0], "lu", batch, &[m, n])?;
            check_shape(&dsts[1], "pivots", batch, &[m.min(n)])?;
            check_shape(&dsts[2], "perm", batch, &[m])?;
        }
        Routine::SolveTriangular { .. } => {
            if m != n {
                return Err(format!("a is {m} × {n}, not square"));
            }
            let b = &operands[1].layout;
            let k = if b.shape.len() == r { b.shape[r - 1] } else { usize::MAX };
            check_shape(&operands[1], "b", batch, &[n, k])?;
            check_shape(&dsts[0], "dst", batch, &[n, k])?;
        }
        Routine::Qr => {
            let q = &dsts[0].layout;
            let c = if q.shape.len() == r { q.shape[r - 1] } else { usize::MAX };
            if c != m && c != m.min(n) {
                return Err(format!("q has shape {:?}, not {:?} (reduced) or {:?} (complete)", q.shape,
                    [batch, &[m, m.min(n)]].concat(), [batch, &[m, m]].concat()));
            }
            check_shape(&dsts[0], "q", batch, &[m, c])?;
            check_shape(&dsts[1], "r", batch, &[c, n])?;
        }
    }
    for (d, name) in dsts.iter().zip(dnames) {
        if self_overlaps(&d.layout) {
            return Err(format!("{name} maps several indices to one element"));
        }
    }
    for i in 0..dsts.len() {
        for j in 0..i {
            if dsts[i].overlaps(&dsts[j]) {
                return Err(format!("{} and {} overlap", dnames[j], dnames[i]));
            }
        }
    }
    let copied = dsts.iter().any(|d| operands.iter().any(|o| ranges_meet(d.byte_range(), o.byte_range())));
    Ok(Plan { routine, dtype, dsts, operands, copied })
}

impl Call for Plan {
    fn claims(&self) -> Vec<Claim> {
        let claim = |v: &View, write| v.byte_range().map(|(lo, hi)| Claim { lo, hi, write });
        (self.dsts.iter().filter_map(|v| claim(v, true)))
            .chain(self.operands.iter().filter_map(|v| claim(v, false)))
            .collect()
    }

    fn work(&self) -> usize {
        // Each element of each operand and destination takes part in at
        // most max(m, n) fused products, each below a copy of 8 bytes.
        let l = &self.operands[0].layout;
        let r = l.shape.len();
        let depth = l.shape[r - 2].max(l.shape[r - 1]).max(1);
        let elements: usize = self.dsts.iter().chain(&self.operands).map(|v| v.layout.size()).sum();
        elements.saturating_mul(depth).saturating_mul(self.dtype.bytes())
    }

    fn run(self) -> Result<(), String> {
        match self.dtype {
            Dtype::Float32 => self.run_as::<f32>(),
            Dtype::Float64 => self.run_as::<f64>(),
            Dtype::Complex64 => self.run_as::<Complex<f32>>(),
            Dtype::Complex128 => self.run_as::<Complex<f64>>(),
            d => return Err(format!("a is {}", d.name())),
        }
        Ok(())
    }
}

/// A thread's scratch for one routine: its matrices, reused from one
/// matrix of the batch to the next.
struct Scratch<T> {
    w: Vec<T>,
    x: Vec<T>,
    t: Vec<T>,
    taus: Vec<T>,
    idx: Vec<i64>,
    idx2: Vec<i64>,
}

impl<T> Scratch<T> {
    /// An empty scratch.
    fn new() -> Scratch<T> {
        Scratch { w: Vec::new(), x: Vec::new(), t: Vec::new(), taus: Vec::new(), idx: Vec::new(), idx2: Vec::new() }
    }

    /// Bytes it holds.
    fn bytes(&self) -> usize {
        let values = self.w.capacity() + self.x.capacity() + self.t.capacity() + self.taus.capacity();
        values * std::mem::size_of::<T>() + (self.idx.capacity() + self.idx2.capacity()) * 8
    }
}

/// Bytes of scratch a thread keeps from one call of a single matrix to the
/// next ([`with_kept`]).
const KEPT_BYTES: usize = 64 << 20;

thread_local! {
    /// The calling thread's scratch for a call of a single matrix.
    static KEPT: std::cell::RefCell<Option<Box<dyn std::any::Any>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` on this thread's scratch of `T`, kept from one call to the
/// next (up to [`KEPT_BYTES`]), so that a call of one matrix neither
/// allocates its scratch again nor faults its pages in: a fresh one cost a
/// complex128 qr of 512 x 512 some 2500 page faults a call, one for each
/// 4 KiB. Its values are what the last call left; [`Plan::matrix`] reads
/// or clears every one it uses.
fn with_kept<T: Scalar, R>(f: impl FnOnce(&mut Scratch<T>) -> R) -> R {
    let kept = KEPT.with(|k| k.borrow_mut().take()).and_then(|b| b.downcast::<Scratch<T>>().ok());
    let mut s = kept.map_or_else(Scratch::new, |b| *b);
    let r = f(&mut s);
    if s.bytes() <= KEPT_BYTES {
        KEPT.with(|k| *k.borrow_mut() = Some(Box::new(s)));
    }
    r
}

/// Sets rows `rows..ld` of the `cols` columns of `v` (`ld` values a
/// column) to +0, as a fresh scratch holds them: the padding below a
/// matrix read into a kept scratch.
fn clear_padding<T: Scalar>(v: &mut [T], rows: usize, ld: usize, cols: usize) {
    if ld > rows {
        for col in v[..ld * cols].chunks_exact_mut(ld) {
            col[rows..].fill(T::zero());
        }
    }
}

/// Makes `v` `len` long, of zeros where it grows. A first scratch comes
/// from zeroed pages, without a pass to clear it, so that the read into it
/// touches its pages first, on the threads it takes.
fn sized<T: Scalar>(v: &mut Vec<T>, len: usize) {
    if v.is_empty() {
        *v = vec![T::zero(); len];
    } else {
        v.resize(len, T::zero());
    }
}

impl Plan {
    fn run_as<T: Scalar>(self) {
        let mut held = Vec::new();
        let operands: Vec<View> = if self.copied {
            self.operands
                .iter()
                .map(|o| {
                    let (h, v) = Held::of(o);
                    held.push(h);
                    v
                })
                .collect()
        } else {
            self.operands.clone()
        };
        let a = Mats::new(&operands[0], 2);
        let b = operands.get(1).map(|v| Mats::new(v, 2));
        let tails: Vec<usize> = self.dsts.iter().map(|d| if d.layout.dtype == Dtype::Int64 { 1 } else { 2 }).collect();
        let dsts: Vec<Mats> = self.dsts.iter().zip(&tails).map(|(d, &t)| Mats::new(d, t)).collect();
        let count = a.count();
        let one = |s: &mut Scratch<T>, i: usize, par: bool| self.matrix(s, &a, b.as_ref(), &dsts, i, par);
        if count == 1 {
            with_kept(|s| one(s, 0, true));
        } else if count > 1 && lanes::takes(self.routine, a.rows, a.cols) {
            // Groups of small matrices, a few parts of groups per thread.
            let groups = count.div_ceil(lanes::L);
            let parts = groups.min(pool::threads() * 4);
            pool::run_parts(parts, |p| {
                let mut s = lanes::Scratch::<T>::default();
                for g in groups * p / parts..groups * (p + 1) / parts {
                    lanes::group(self.routine, &mut s, &a, &dsts, g * lanes::L);
                }
            });
        } else if count > 1 {
            // Parts of consecutive matrices, a few per thread.
            let parts = count.min(pool::threads() * 4);
            pool::run_parts(parts, |p| {
                let mut s = Scratch::new();
                for i in count * p / parts..count * (p + 1) / parts {
                    one(&mut s, i, false);
                }
            });
        }
        drop(held);
    }

    /// Computes matrix `i` of the batch.
    fn matrix<T: Scalar>(&self, s: &mut Scratch<T>, a: &Mats, b: Option<&Mats>, dsts: &[Mats], i: usize, par: bool) {
        let (m, n) = (a.rows, a.cols);
        // Columns padded where their length would map them to few cache sets.
        let ld = batch::leading::<T>(m);
        sized(&mut s.w, ld * n);
        a.read(i, &mut s.w, ld, par);
        clear_padding(&mut s.w, m, ld, n);
        match self.routine {
            Routine::Cholesky(t) => {
                if !cholesky::factor(&mut s.w, n, ld, par) {
                    s.w.fill(T::nan());
                } else if t == Triangle::Upper {
                    cholesky::to_upper(&mut s.w, n, ld);
                }
                dsts[0].write(i, &s.w, ld, par);
            }
            Routine::Lu => {
                let k = m.min(n);
                s.idx.resize(k, 0);
                s.idx2.resize(m, 0);
                lu::factor(&mut s.w, m, n, ld, &mut s.idx, &mut s.idx2, par);
                dsts[0].write(i, &s.w, ld, par);
                dsts[1].write_index(i, &s.idx);
                dsts[2].write_index(i, &s.idx2);
            }
            Routine::SolveTriangular { triangle, adjoint, unit_diagonal } => {
                let b = b.expect("solve_triangular has b");
                let k = b.cols;
                // op(a) as a lower triangle: reversed where it is upper.
                let lower = (triangle == Triangle::Lower) != adjoint;
                let at = |r: usize, c: usize| {
                    let (r, c) = if lower { (r, c) } else { (n - 1 - r, n - 1 - c) };
                    let e = if adjoint { s.w[c + r * ld].conj() } else { s.w[r + c * ld] };
                    if r == c && unit_diagonal { T::one() } else { e }
                };
                // a's lower triangle is op(a)'s as it lies (its diagonal
                // read only where not unit); else op(a)'s is copied.
                let direct = triangle == Triangle::Lower && !adjoint;
                if !direct {
                    s.t.clear();
                    s.t.resize(ld * n, T::zero());
                    for c in 0..n {
                        for r in c..n {
                            s.t[r + c * ld] = at(r, c);
                        }
                    }
                }
                // x: b's n rows a column, padded as a's.
                sized(&mut s.x, ld * k);
                b.read(i, &mut s.x, ld, par);
                clear_padding(&mut s.x, n, ld, k);
                if !lower {
                    s.x.chunks_mut(ld.max(1)).for_each(|c| c[..n].reverse());
                }
                let t = if direct { &s.w } else { &s.t };
                if !triangular::solve_lower(t, ld, n, &mut s.x, ld, k, unit_diagonal, par) {
                    s.x.fill(T::nan());
                }
                if !lower {
                    s.x.chunks_mut(ld.max(1)).for_each(|c| c[..n].reverse());
                }
                dsts[0].write(i, &s.x, ld, par);
            }
            Routine::Qr => {
                let k = m.min(n);
                let c = dsts[0].cols;
                s.taus.resize(k, T::zero());
                let blocks = qr::factor(&mut s.w, m, n, ld, &mut s.taus, par);
                sized(&mut s.x, ld * c);
                qr::form_q(&s.w, m, n, ld, &s.taus, &blocks, &mut s.x, c, par);
                dsts[0].write(i, &s.x, ld, par);
                // r: c × n, the upper triangle of w, +0 below: w's first c
                // rows, its reflectors spent.
                for col in 0..n {
                    s.w[col * ld + (col + 1).min(k)..col * ld + c].fill(T::zero());
                }
                dsts[1].write(i, &s.w, ld, par);
            }
        }
    }
}
