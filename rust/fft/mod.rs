//! Fourier transforms: `c2c`, `r2c` and `c2r` along any axes of operands of
//! any layout, in complex64/float32 or complex128/float64.
//!
//! Each line (the points along one axis at one index of the others) is
//! gathered into buffers, transformed by its plan (`plan`) and scattered:
//! along the last of `axes` first, the others in place in the destination,
//! last to first (a `c2r`'s last axis last). A line's plan, and so its bits,
//! follow its points, direction and precision alone; lines are split among
//! threads whole, and a long line's steps by lanes that compute alike, so
//! no layout, batch or thread count changes a bit.
//!
//! The bound nx.cpu states: barring overflow and underflow, a transform ŷ
//! of N points is within ‖ŷ - y‖₂ <= ε u √N ‖x‖₂ of the exact y, ε the sum
//! over axes of e(n) ([`error_factor`]).

mod bailey;
mod lines;
mod passes;
mod plan;
mod real;
mod twiddle;
#[cfg(test)]
mod tests;

use crate::core::call::Call;
use crate::core::door::Claim;
use crate::core::dtype::Dtype;
use crate::core::layout::View;

/// A transform's direction: `Forward` sums x_j e^(-2πi jk/n), `Inverse`
/// x_j e^(+2πi jk/n), both unnormalised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    Forward,
    Inverse,
}

/// Which transform a call computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Complex to complex, along every axis.
    C2c(Direction),
    /// Real to complex, Forward: bins 0 to n/2 along the last axis.
    R2c,
    /// Complex to real, Inverse, of n/2 + 1 bins along the last axis (the
    /// linear map the contract defines, Hermitian input or not).
    C2r,
}

/// A checked transform call.
pub struct Fft {
    kind: Kind,
    axes: Vec<usize>,
    dst: View,
    x: View,
}

fn precision(d: Dtype) -> Option<(bool, bool)> {
    // (double, complex)
    match d {
        Dtype::Float32 => Some((false, false)),
        Dtype::Float64 => Some((true, false)),
        Dtype::Complex64 => Some((false, true)),
        Dtype::Complex128 => Some((true, true)),
        _ => None,
    }
}

/// Checks a transform of `x` into `dst` along `axes`: the axes strictly
/// increasing, not empty and below the rank; the dtypes complex64/float32
/// or complex128/float64 as `kind` wants them, of one precision; the shapes
/// equal but along the last axis, where r2c's `dst` and c2r's `x` hold
/// n/2 + 1 bins of n points; and a destination that maps no two indices to
/// one element.
pub fn plan(kind: Kind, axes: &[usize], dst: View, x: View) -> Result<Fft, String> {
    let (xl, dl) = (&x.layout, &dst.layout);
    let rank = xl.shape.len();
    if dl.shape.len() != rank {
        return Err(format!("dst has rank {} but x rank {rank}", dl.shape.len()));
    }
    if axes.is_empty() {
        return Err("no axes".into());
    }
    if let Some(w) = axes.windows(2).find(|w| w[0] >= w[1]) {
        return Err(format!("axes {} then {} are not strictly increasing", w[0], w[1]));
    }
    let last = *axes.last().expect("axes are not empty");
    if last >= rank {
        return Err(format!("axis {last} is not below the rank {rank}"));
    }
    let (want_x, want_dst) = match kind {
        Kind::C2c(_) => (true, true),
        Kind::R2c => (false, true),
        Kind::C2r => (true, false),
    };
    let (px, pd) = (precision(xl.dtype), precision(dl.dtype));
    match (px, pd) {
        (Some((dx, cx)), Some((dd, cd))) if cx == want_x && cd == want_dst && dx == dd => {}
        _ => {
            let name = |c: bool| if c { "complex64 or complex128" } else { "float32 or float64" };
            return Err(format!(
                "x is {} and dst {}, where they must be {} and {} of one precision",
                xl.dtype.name(),
                dl.dtype.name(),
                name(want_x),
                name(want_dst)
            ));
        }
    }
    for a in 0..rank {
        let (nx, nd) = (xl.shape[a], dl.shape[a]);
        let fits = match kind {
            Kind::R2c if a == last => nd == nx / 2 + 1,
            Kind::C2r if a == last => nx == nd / 2 + 1,
            _ => nx == nd,
        };
        if !fits {
            return Err(format!("x has shape {:?} and dst {:?}, which do not fit along axis {a}", xl.shape, dl.shape));
        }
    }
    if crate::loops::map::self_overlaps(dl) {
        return Err("dst maps several indices to one element".into());
    }
    Ok(Fft { kind, axes: axes.to_vec(), dst, x })
}

/// The error factor e(n) of one axis of n points (the contract's bound).
pub fn error_factor(n: usize, real_last: bool) -> f64 {
    if real_last && n.is_multiple_of(2) && n >= 512 {
        return error_factor(n / 2, false) + 8.0;
    }
    let primes = passes::radices(n).into_iter().flat_map(|r| if r == 4 { vec![2, 2] } else { vec![r] });
    let passes_e = 8.0 * primes.clone().map(|p| (p as f64).powf(1.5)).sum::<f64>() + 8.0;
    if primes.clone().any(|p| p > plan::BLUESTEIN_PRIME) && plan::bluestein_fits(n) {
        6.0 * error_factor(plan::bluestein_length(n), false) + 26.0
    } else {
        passes_e
    }
}

impl Call for Fft {
    fn claims(&self) -> Vec<Claim> {
        let mut c = Vec::new();
        if let Some((lo, hi)) = self.x.byte_range() {
            c.push(Claim { lo, hi, write: false });
        }
        if let Some((lo, hi)) = self.dst.byte_range() {
            c.push(Claim { lo, hi, write: true });
        }
        c
    }

    fn work(&self) -> usize {
        let bytes = |v: &View| v.layout.size().saturating_mul(v.layout.dtype.bits() / 8);
        let big = bytes(&self.x).max(bytes(&self.dst));
        let shape = if self.kind == Kind::C2r { &self.dst.layout.shape } else { &self.x.layout.shape };
        let per_axis: usize = self
            .axes
            .iter()
            .map(|&a| {
                let n = shape[a].max(2);
                let logn = (usize::BITS - (n - 1).leading_zeros()) as usize;
                let blue = if passes::radices(n).iter().any(|&p| p > plan::BLUESTEIN_PRIME) { 8 } else { 1 };
                4 + 2 * logn * blue
            })
            .sum();
        big.saturating_mul(per_axis)
    }

    fn run(self) -> Result<(), String> {
        if precision(self.x.layout.dtype).is_some_and(|(double, _)| double) {
            lines::run::<f64>(&self)
        } else {
            lines::run::<f32>(&self)
        }
        Ok(())
    }
}
