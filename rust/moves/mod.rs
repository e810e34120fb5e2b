//! The moves: kernels that copy elements from where positions or regions
//! say, bits unchanged ([`gather`], [`gather_ranges`], [`assemble`],
//! [`scatter`] by Set), or combine them there ([`scatter`] by Add, Max and
//! Min, [`fold`] the adjoint of a padded load).
//!
//! Each is planned as a [`crate::core::call::Call`]: every check before the first
//! write, so that a refusal leaves the destination untouched. Threads split
//! the destination's elements, each written by one thread (a sub-byte
//! element through atomic read-modify-writes of its byte, see [`slot`]),
//! and every element's value is computed by one thread in the order the
//! contract fixes, so neither threads nor layouts change a bit.

pub mod assemble;
pub mod fold;
pub mod gather;
pub mod gather_ranges;
pub mod num;
pub mod scatter;
pub mod slot;
pub(crate) mod walk;

#[cfg(test)]
mod bench;
#[cfg(test)]
mod tests;

use crate::core::door::Claim;
use crate::core::dtype::Dtype;
use crate::core::layout::{same_dims, View};
use crate::loops::map::self_overlaps;

/// Checks an int64 operand named `what` of shape `shape`.
fn check_index(what: &str, v: &View, shape: &[usize]) -> Result<(), String> {
    if v.layout.dtype != Dtype::Int64 {
        return Err(format!("the {what} are {}, not int64", v.layout.dtype.name()));
    }
    if !same_dims(&v.layout.shape, shape) {
        return Err(format!("the {what} have shape {:?}, not {shape:?}", v.layout.shape));
    }
    Ok(())
}

/// Checks a destination: no two of its indices on one element, and no byte
/// shared with any of the named operands.
fn check_dst(dst: &View, operands: &[(&str, &View)]) -> Result<(), String> {
    if self_overlaps(&dst.layout) {
        return Err("the destination maps several indices to one element".into());
    }
    match operands.iter().find(|(_, v)| dst.overlaps(v)) {
        Some((what, _)) => Err(format!("the destination overlaps the {what}")),
        None => Ok(()),
    }
}

/// The door's claims of a call writing `dst` and reading `reads`.
fn claims(dst: &View, reads: &[&View]) -> Vec<Claim> {
    let claim = |v: &View, write| v.byte_range().map(|(lo, hi)| Claim { lo, hi, write });
    claim(dst, true).into_iter().chain(reads.iter().filter_map(|v| claim(v, false))).collect()
}
