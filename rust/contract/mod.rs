//! `contract`: the contraction of two arrays along paired axes, computed in
//! an accumulator dtype (the acc) and rounded once into dst.
//!
//! ```text
//! dst[B, I, J] = init[B, I, J] + Σ_K a[B, I, K] · b[B, K, J]
//! ```
//!
//! B runs over the batch pairs, I over a's free axes (the rows), J over
//! b's (the columns), K over the contracting pairs (the depth), each in C
//! order of its axes; [`Pairs::dst_shape`] gives dst's shape.
//!
//! # Accs and elements
//!
//! The acc is float32, float64, complex64, complex128 or an integer of 4 to
//! 64 bits ([`elem::kind`]); another is declined ([`Plan::declined`]).
//! Each element of a, b and init, of any dtype, enters the acc as Cast
//! casts it, and each sum leaves the acc rounded once into dst's dtype as
//! Cast rounds it. An integer acc of w bits computes modulo 2^32 (w ≤ 32)
//! or 2^64 and cuts the sum to w bits: exact modulo 2^w, whatever the order.
//!
//! # Numbering and order
//!
//! The products of an output are numbered in C order of the contracted
//! axes. A complex product a·b is two terms, numbered 2k and 2k + 1:
//! `re a · b`, then `i im a · b`, each part of a term fused into its part
//! of the sum (`re += re a re b`, `im += re a im b`, then `re += -im a im b`,
//! `im += im a re b`).
//!
//! Chain order ([`chain`]), where rows and columns are both above 4,
//! multiply to at least 64, and the depth is below 128 times their product
//! ([`plan::chain_order`]): each output's sum starts from init (cast into
//! the acc) or +0 and takes its products one fused multiply-add at a time
//! in increasing number. Otherwise lane order ([`lane`]): the terms in
//! blocks of 1024, 16 lanes each starting from +0 and fusing its products,
//! the lanes' tree, the blocks' tree, then init added. An output without
//! products is init, or +0. The order depends on the rows, columns and
//! depth alone, and the bits never on the threads, the layouts, the batch
//! or which operand is transposed: the AVX2 microkernel fuses the same
//! products in the same order as the portable one.
//!
//! # Scales
//!
//! An element of a scaled operand enters the acc as its Cast times its
//! block's scale (a value's Cast, 2^(e - 127) of a code e, a NaN of 255),
//! the product rounded once: a scale multiplies each element, at any
//! contracted extent. Only float32 and float64 accs take scales. Each
//! scaled operand adds one unit roundoff of the acc per term to the bound,
//! barring overflow of an element times its scale.
//!
//! # Bound
//!
//! Each fused multiply-add and each addition rounds once: a real output is
//! within γ(K + 1) (|init| + Σ|a||b|) of the exact one, a complex one
//! within γ(2K + 2) of that sum of moduli, K its products and u the acc's
//! (parts') unit roundoff.
//!
//! # Segments
//!
//! [`Segments`]: `Rows` (each row of a reads b at its id along an axis of
//! b) and `Contracting` (a pair's indices grouped into dst's leading axis);
//! the order is the whole call's; see [`segments`].
//!
//! # Memory
//!
//! Operands are read where they lie. dst is written in place, but where it
//! shares memory with a or b, or with init other than element for element,
//! when results wait in scratch of every output in the acc until every
//! operand is read.

pub mod chain;
pub mod elem;
pub mod lane;
pub mod plan;
pub mod segments;
pub mod shape;
mod simd;

pub use plan::{chain_order, plan, Operand, Plan, Scale, ScaleKind};
pub use segments::Segments;
pub use shape::Pairs;

use crate::core::answer::Answer;
use crate::core::call::Call;
use crate::loops::column::{C32, C64};
use crate::core::door;
use crate::core::dtype::Dtype;
use crate::core::layout::View;
use elem::{Elem, Kind};
use plan::Sink;

/// Runs a checked, accepted plan; a segmented one refuses ids out of
/// range before any write.
pub(crate) fn run(p: &Plan) -> Result<(), String> {
    if p.nb == 0 || p.m == 0 || p.n == 0 || p.dst.batch.is_empty() {
        return Ok(());
    }
    if p.segs.is_some() {
        return segments::run(p);
    }
    match elem::kind(p.acc).expect("a plan that runs is not declined") {
        Kind::F32 => run_in::<f32>(p),
        Kind::F64 => run_in::<f64>(p),
        Kind::C32 => run_in::<C32>(p),
        Kind::C64 => run_in::<C64>(p),
        Kind::I32 => run_in::<i32>(p),
        Kind::I64 => run_in::<i64>(p),
    }
    Ok(())
}

fn run_in<E: Elem>(p: &Plan) {
    let sink = Sink::<E>::new(p);
    if p.chain {
        chain::run(p, &sink);
    } else {
        lane::run(p, &sink);
    }
    sink.finish();
}

/// The contraction of `a` with `b` into `dst`, as a plain Rust call:
/// checked, declined or claimed through the door and run.
pub fn contract(pairs: &Pairs, acc: Dtype, dst: &View, init: Option<&View>, a: &View, b: &View) -> Answer {
    contract_operands(pairs, acc, dst, init, &a.into(), &b.into(), None)
}

/// As [`contract`], of operands that may have scales, with or without
/// segments.
pub fn contract_operands(pairs: &Pairs, acc: Dtype, dst: &View, init: Option<&View>, a: &Operand, b: &Operand, segments: Option<&Segments>) -> Answer {
    match plan(pairs, acc, dst, init, a, b, segments) {
        Err(e) => Answer::Refused(format!("contract: {e}")),
        Ok(p) => match p.why_declined() {
            Some(why) => Answer::Declined(why),
            None => {
                let pass = door::enter(&p.claims());
                let r = p.run();
                drop(pass);
                Answer::of("contract", r)
            }
        },
    }
}

#[cfg(test)]
mod tests;
