//! Reductions along a strided axis: many outputs side by side, each with
//! the bits of its own lane-order reduction.

use core::ops::Range;

use rayon::prelude::*;

use super::lanes::fold_lanes;
use super::monoid::Monoid;
use super::tree::{tree, GRAIN};
use super::{BLOCK, LANES};

/// A grid of terms: output `c` reduces column `c`'s terms, numbered by row.
pub trait Grid<T>: Sync {
    /// The terms of each output.
    fn rows(&self) -> usize;
    /// The outputs.
    fn cols(&self) -> usize;
    /// Calls `f(tile, stride)` with `count` rows `first + k * step` of
    /// columns `cols`: term `(first + k * step, c)` at
    /// `tile[k * stride + c - cols.start]`. The reductions ask for at most
    /// four rows at a time, 16 apart: rows of one lane.
    fn with<R>(&self, first: usize, step: usize, count: usize, cols: Range<usize>, f: impl FnOnce(&[T], usize) -> R) -> R;
}

/// A grid in memory, row after row: term `(r, c)` at `data[r * stride + c]`.
#[derive(Clone, Copy, Debug)]
pub struct Strided<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
    stride: usize,
}

impl<'a, T> Strided<'a, T> {
    /// The grid of `rows` rows of `cols` terms, row `r` from
    /// `data[r * stride]`; `None` where `data` is too short.
    pub fn new(data: &'a [T], rows: usize, cols: usize, stride: usize) -> Option<Self> {
        let need = match (rows, cols) {
            (0, _) | (_, 0) => 0,
            _ => (rows - 1).checked_mul(stride)?.checked_add(cols)?,
        };
        (need <= data.len()).then_some(Strided { data, rows, cols, stride })
    }
}

impl<T: Sync> Grid<T> for Strided<'_, T> {
    fn rows(&self) -> usize {
        self.rows
    }
    fn cols(&self) -> usize {
        self.cols
    }
    #[inline]
    fn with<R>(&self, first: usize, step: usize, count: usize, cols: Range<usize>, f: impl FnOnce(&[T], usize) -> R) -> R {
        let stride = step * self.stride;
        let start = first * self.stride + cols.start;
        let end = start + (count - 1) * stride + cols.len();
        f(&self.data[start..end], stride)
    }
}

/// A grid that a callback writes: `fill(rows, cols, out)` writes the terms
/// of rows `rows` and columns `cols` into `out`, row after row, without gaps
/// (the reductions ask for one row at a time).
#[derive(Clone, Copy, Debug)]
pub struct FillGrid<F> {
    /// The terms of each output.
    pub rows: usize,
    /// The outputs.
    pub cols: usize,
    /// The callback.
    pub fill: F,
}

impl<T, F> Grid<T> for FillGrid<F>
where
    T: Copy + Default,
    F: Fn(Range<usize>, Range<usize>, &mut [T]) + Sync,
{
    fn rows(&self) -> usize {
        self.rows
    }
    fn cols(&self) -> usize {
        self.cols
    }
    fn with<R>(&self, first: usize, step: usize, count: usize, cols: Range<usize>, f: impl FnOnce(&[T], usize) -> R) -> R {
        let w = cols.len();
        let mut buf = vec![T::default(); count * w];
        for (k, row) in buf.chunks_exact_mut(w).enumerate() {
            let r = first + k * step;
            (self.fill)(r..r + 1, cols.clone(), row);
        }
        f(&buf, w)
    }
}

/// Rows of one lane that a block combines into its accumulators at a time:
/// each accumulator is loaded and stored once for them.
const ROWS: usize = 4;

/// Columns reduced together: at most what makes their 16 lanes of
/// accumulators 256 KiB (so that whole rows of a wide matrix stream from
/// memory), and under `parallel` few enough to give each thread a group.
fn group_width<T>(cols: usize, parallel: bool) -> usize {
    let widest = (256 * 1024 / (LANES * core::mem::size_of::<T>())).max(1);
    let share = if parallel { cols.div_ceil(rayon::current_num_threads()).next_multiple_of(16) } else { cols };
    widest.min(share).max(1)
}

/// Combines `count` (1 to [`ROWS`]) rows of a tile, row `k` at
/// `t[k * stride..][..a.len()]`, into the accumulators `a` in turn.
#[inline(always)]
fn lane_rows<T: Copy, M: Monoid<T>>(a: &mut [T], t: &[T], stride: usize, count: usize) {
    let w = a.len();
    if count == ROWS {
        let rows: [&[T]; ROWS] = core::array::from_fn(|k| &t[k * stride..][..w]);
        for c in 0..w {
            let mut v = a[c];
            for r in &rows {
                v = M::combine(v, r[c]);
            }
            a[c] = v;
        }
    } else {
        for k in 0..count {
            for (a, &x) in a.iter_mut().zip(&t[k * stride..][..w]) {
                *a = M::combine(*a, x);
            }
        }
    }
}

/// Reduces each column of `grid` by `M` into `out[c]`, with the bits of
/// [`reduce`](super::reduce) of that column's terms alone: within a block,
/// lane by lane, each lane's rows (16 apart) combined into the outputs'
/// accumulators side by side, one whole row at a time, so that the rows
/// stream from memory while one lane's accumulators stay in the L1 cache;
/// then the lanes' tree. `parallel` lets groups of columns, and the blocks'
/// tree of each, run on the rayon pool it runs in.
///
/// Panics where `out.len() != grid.cols()`.
pub fn reduce_columns<T, M, G>(_monoid: M, grid: &G, out: &mut [T], parallel: bool)
where
    T: Copy + Send + Sync,
    M: Monoid<T>,
    G: Grid<T> + ?Sized,
{
    assert_eq!(out.len(), grid.cols());
    let n = grid.rows();
    if n == 0 {
        out.fill(M::empty());
        return;
    }
    let width = group_width::<T>(out.len(), parallel);
    let group = |g: usize, out: &mut [T]| {
        let cols = g * width..g * width + out.len();
        let w = cols.len();
        let leaf = |b: usize| {
            let rows = b * BLOCK..n.min((b + 1) * BLOCK);
            let present = rows.len().min(LANES);
            // Each lane's accumulators start from its first row's terms.
            let mut acc = Vec::with_capacity(present * w);
            for lane in 0..present {
                let first = rows.start + lane;
                grid.with(first, LANES, 1, cols.clone(), |row, _| acc.extend(row.iter().map(|&x| M::start(x))));
                let a = &mut acc[lane * w..(lane + 1) * w];
                let mut r = first + LANES;
                while r < rows.end {
                    let count = (rows.end - r).div_ceil(LANES).min(ROWS);
                    grid.with(r, LANES, count, cols.clone(), |t, stride| lane_rows::<T, M>(a, t, stride, count));
                    r += count * LANES;
                }
            }
            fold_lanes::<T, M>(&mut acc, w, present);
            // The block's results alone, so that the tree holds no lanes.
            acc[..w].to_vec()
        };
        let combine = |mut a: Vec<T>, b: Vec<T>| {
            for (x, y) in a.iter_mut().zip(b) {
                *x = M::combine(*x, y);
            }
            a
        };
        out.copy_from_slice(&tree(0, n.div_ceil(BLOCK), 1, parallel, &leaf, &combine));
    };
    if parallel && n.saturating_mul(out.len()) > GRAIN * BLOCK {
        out.par_chunks_mut(width).enumerate().for_each(|(g, o)| group(g, o));
    } else {
        out.chunks_mut(width).enumerate().for_each(|(g, o)| group(g, o));
    }
}
