//! Reductions and scans: the algorithmic core of `reduce` and `scan` (the
//! spec's Lane order, Reductions and scans, Sums and products, Logsumexp and
//! Moments), on terms already in their carrier: `f32`, `f64`,
//! `Complex<f32>`, `Complex<f64>`, and `i64`/`u64` for exact, wrapping
//! integer sums and products.
//!
//! Terms come from a [`Terms`] source a block at a time (a slice, every
//! other element of one ([`EveryOther`]), or a [`Fill`] callback), or for many outputs side by side from a [`Grid`]
//! ([`Strided`] memory or a [`FillGrid`] callback). Every function that
//! takes `parallel` splits its work only where the association already
//! splits (whole subtrees of the blocks' tree, whole chunks of a scan, whole
//! columns), with `rayon::join` on the pool it runs in; no bit depends on it
//! or on the pool's size. Subtrees of at most [`GRAIN`] blocks never split,
//! and `parallel = false` never touches rayon.
//!
//! # Lane order
//!
//! The terms of a Sum or Prod, numbered from 0, go into blocks of [`BLOCK`]
//! consecutive numbers and, within a block, into [`LANES`] lanes by number
//! modulo 16. Each lane adds its terms in increasing number from +0 (so a
//! lane of -0 terms sums to +0), or multiplies them from its first. Lane i
//! takes lane i + 8 for i below 8, then lane i + 4 for i below 4, then
//! i + 2 for i below 2, then lane 0 takes lane 1, a lane holding no term
//! taking no part. The blocks combine by a binary tree whose left part holds
//! the largest power of two of blocks below their count, each part combined
//! the same way. A complex Sum runs part by part; a complex Prod multiplies
//! by [`cmul`], the plain formula without fused multiply-add.
//!
//! Max and Min use the order of [`Ordered`]: -0 below +0, a NaN where any
//! term is one. Their bits do not depend on association (NaN payloads
//! aside), so they are free to run in any order. Arg ([`arg()`]) gives the
//! first extreme and its position, the first NaN where there is one.
//!
//! # Scans (the odd/even network)
//!
//! A Logsumexp or Moments scan ([`logsumexp_scan`], [`moments_scan`]) turns
//! each term of a slice into a state and gives at each index i the states
//! of terms 0 to i combined by the odd/even network, the parallel prefix
//! network of Ladner and Fischer's odd/even recursion (Brent and Kung's):
//! the network of n states x₀ … xₙ₋₁ combines each pair into
//! yₖ = x₂ₖ ⊕ x₂ₖ₊₁, runs the network of the ⌊n/2⌋ states y, giving Yₖ,
//! then gives at position 2k + 1 the result Yₖ, at position 2k (k ≥ 1)
//! Yₖ₋₁ ⊕ x₂ₖ, and at position 0 x₀; a ⊕ b always holds a's terms before
//! b's. So result i depends on terms 0 to i alone, whatever n: with
//! i + 1 = 2^a₁ + 2^a₂ + … + 2^aₚ, a₁ > a₂ > … > aₚ, the terms fall into p
//! consecutive blocks of 2^a₁, 2^a₂, … terms, each block's state is its two
//! halves' states combined, down to single terms, and result i is
//! (…((B₁ ⊕ B₂) ⊕ B₃) … ⊕ Bₚ). For example result 6 is
//! (((x₀ ⊕ x₁) ⊕ (x₂ ⊕ x₃)) ⊕ (x₄ ⊕ x₅)) ⊕ x₆.
//!
//! A term's state passes at most Dᵢ = ⌊log₂ (i + 1)⌋ + popcount (i + 1) - 1
//! combinations on its way to result i ([`result_depth`]: a₁ in its block,
//! p - 1 in the fold). The network's depth D over a slice of n terms is the
//! greatest Dᵢ ([`network_depth`]): 0 for n ≤ 1, else, with k = ⌊log₂ n⌋,
//! the greater of 2k - 2 and k + m (n - 2^k), m (x) the most ones of a
//! binary number up to x; at most 2 ⌊log₂ n⌋. The states are combined one
//! term at a time, about two combinations per term, with the network's bits.
//!
//! # Error bounds
//!
//! γ(n) = n u / (1 - n u) for n u < 1, u the unit roundoff of the carrier:
//! 2^-24 for float32, 2^-53 for float64, of the parts' dtype for complex.
//! Each addition, multiplication and fused multiply-add rounds once, so a
//! real term that passes r roundings on its way into a sum is within γ(r)
//! of itself, and a sum whose terms tₖ each pass at most r roundings is
//! within γ(r) Σ |tₖ| of the exact sum, barring overflow and underflow.
//!
//! - A Sum reduction of n terms in lane order: with
//!   L = ⌈min (n, 1024) / 16⌉ + 3 and D = ⌈log₂ ⌈n / 1024⌉⌉, a term passes
//!   at most ⌈min (n, 1024) / 16⌉ - 1 roundings in its lane (its first
//!   addition, to +0, is exact), ⌈log₂ min (n, 16)⌉ in the lanes' tree and
//!   D in the blocks' tree: at most L + D. The result is within
//!   γ(L + D) Σ |tₖ|, each part of a complex one within that of its part's.
//! - A real Prod of n terms rounds n - 1 times, whatever the order: within
//!   γ(n - 1) |p|. A complex multiplication by [`cmul`] is within √2 γ(2)
//!   of the exact product's modulus, so a complex Prod is within
//!   (1 + √2 γ(2))^(n - 1) - 1 ≈ (n - 1) √2 γ(2) of |p|.
//! - A Sum scan: result j of chunk c (index i = 4096 c + j) passes a term
//!   of its own chunk through at most j + 1 roundings, and a term of an
//!   earlier chunk c' through at most L + D = 69 in its chunk's total,
//!   c - c' in the carries and j + 1: at most i + 1 in all, so the result
//!   is within γ(i + 1) (|carry| + Σ |tₖ|) (without a carry, γ(i)), the
//!   bound of a reduction of the carry and those terms in any order.
//! - Logsumexp and Moments reductions and scans: within the bounds of the
//!   spec's "Logsumexp and Moments" and "Logsumexp and Moments scans", D
//!   the network's above for a scan; the tests check each against
//!   double-double references.

mod arg;
mod columns;
pub(crate) mod lanes;
mod logsumexp;
mod moments;
mod monoid;
pub(crate) mod network;
mod real;
mod scan;
mod spans;
mod flagged;
mod terms;
pub(crate) mod tree;

pub use arg::{arg, arg_scan, ArgScan, Pick};
pub use columns::{reduce_columns, FillGrid, Grid, Strided};
pub use logsumexp::{logsumexp, logsumexp_scan};
pub use moments::{moments, moments_scan};
pub use monoid::{cmul, Max, Min, Monoid, Ordered, Prod, Sum};
pub use network::{network_depth, result_depth};
pub use real::{ExpLog, Real};
pub use scan::{scan, Scan};
pub use terms::{EveryOther, Fill, Terms};
pub use tree::{reduce, GRAIN};

/// Terms in a block of lane order.
pub const BLOCK: usize = 1024;
/// Lanes in a block.
pub const LANES: usize = 16;
/// Terms in a chunk of a Sum, Prod, Max or Min scan.
pub const CHUNK: usize = 4096;

#[cfg(test)]
mod tests;
