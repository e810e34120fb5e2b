//! Reductions along a strided axis: many outputs side by side, each with
//! the bits of its own lane-order reduction.

use core::ops::Range;

use rayon::prelude::*;

use super::lanes::{columns_round, fold_lanes};
use super::monoid::Monoid;
use super::tree::{tree, GRAIN};
use super::{BLOCK, LANES};

/// A grid of terms: output `c` reduces column `c`'s terms, numbered by row.
pub trait Grid<T>: Sync {
    /// The terms of each output.
    fn rows(&self) -> usize;
    /// The outputs.
    fn cols(&self) -> usize;
    /// Calls `f(tile, stride)` with rows `rows` of columns `cols`: term
    /// `(r, c)` at `tile[(r - rows.start) * stride + c - cols.start]`. The
    /// reductions ask for at most 16 rows at a time.
    fn with<R>(&self, rows: Range<usize>, cols: Range<usize>, f: impl FnOnce(&[T], usize) -> R) -> R;
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
    fn with<R>(&self, rows: Range<usize>, cols: Range<usize>, f: impl FnOnce(&[T], usize) -> R) -> R {
        let start = rows.start * self.stride + cols.start;
        let end = (rows.end - 1) * self.stride + cols.end;
        f(&self.data[start..end], self.stride)
    }
}

/// A grid that a callback writes: `fill(rows, cols, out)` writes the terms
/// of rows `rows` and columns `cols` into `out`, row after row, without gaps.
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
    fn with<R>(&self, rows: Range<usize>, cols: Range<usize>, f: impl FnOnce(&[T], usize) -> R) -> R {
        let w = cols.len();
        let mut buf = vec![T::default(); rows.len() * w];
        (self.fill)(rows, cols, &mut buf);
        f(&buf, w)
    }
}

/// Columns reduced together: at most what makes their 16 lanes of
/// accumulators 256 KiB (so that whole rows of a wide matrix stream from
/// memory), and under `parallel` few enough to give each thread a group.
fn group_width<T>(cols: usize, parallel: bool) -> usize {
    let widest = (256 * 1024 / (LANES * core::mem::size_of::<T>())).max(1);
    let share = if parallel { cols.div_ceil(rayon::current_num_threads()).next_multiple_of(16) } else { cols };
    widest.min(share).max(1)
}

/// Reduces each column of `grid` by `M` into `out[c]`, with the bits of
/// [`reduce`](super::reduce) of that column's terms alone: the outputs'
/// lanes are updated row by row side by side. `parallel` lets groups of
/// columns, and the blocks' tree of each, run on the rayon pool it runs in.
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
            let mut acc = vec![M::empty(); LANES * w];
            for start in rows.clone().step_by(LANES) {
                let tile = start..rows.end.min(start + LANES);
                grid.with(tile.clone(), cols.clone(), |t, stride| {
                    columns_round::<T, M>(t, stride, tile.len(), &mut acc, w, start == rows.start);
                });
            }
            fold_lanes::<T, M>(&mut acc, w, rows.len().min(LANES));
            acc.truncate(w);
            acc
        };
        let combine = |mut a: Vec<T>, b: Vec<T>| {
            for (x, y) in a.iter_mut().zip(b) {
                *x = M::combine(*x, y);
            }
            a
        };
        out.copy_from_slice(&tree(0, n.div_ceil(BLOCK), parallel, &leaf, &combine));
    };
    if parallel && n.saturating_mul(out.len()) > GRAIN * BLOCK {
        out.par_chunks_mut(width).enumerate().for_each(|(g, o)| group(g, o));
    } else {
        out.chunks_mut(width).enumerate().for_each(|(g, o)| group(g, o));
    }
}
