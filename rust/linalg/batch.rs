//! Batches of matrices: a view's last two axes are a matrix's rows and
//! columns, its axes before them the batch. Each matrix is read into, and
//! written from, a column-major scratch the routines compute on, so that
//! neither layouts nor batches reach the arithmetic.

use crate::core::caches::sizes as caches;
use crate::core::dtype::Dtype;
use crate::core::pool;
use crate::core::transpose;
use crate::core::layout::{Layout, Memory, View};
use crate::linalg::gemm;
use crate::linalg::scalar::Scalar;

/// The matrices of a checked view: element positions by batch index, row and
/// column.
#[derive(Clone, Debug)]
pub struct Mats {
    base: Memory,
    dtype: Dtype,
    offset: isize,
    batch_shape: Vec<usize>,
    batch_strides: Vec<isize>,
    /// Rows and columns of each matrix (for a view of rank 1, one column).
    pub rows: usize,
    pub cols: usize,
    rs: isize,
    cs: isize,
}

/// The rows and columns of a tile of [`Mats::read`] and [`Mats::write`].
const TILE: usize = transpose::TILE;

/// Tiles ahead of the one they copy that [`Mats::read`] and [`Mats::write`]
/// ask the cache for.
const AHEAD: usize = 8;

/// The tiles of columns `c0..c1` of an m-row matrix, column band after
/// band, or row band after band where `by_rows`: `(i0, i1, j0, j1)`.
fn tiles(m: usize, c0: usize, c1: usize, by_rows: bool) -> impl Iterator<Item = (usize, usize, usize, usize)> {
    let (bi, bj) = (m.div_ceil(TILE), (c1 - c0).div_ceil(TILE));
    (0..bi * bj).map(move |t| {
        let (ti, tj) = if by_rows { (t / bj, t % bj) } else { (t % bi, t / bi) };
        let (i0, j0) = (ti * TILE, c0 + tj * TILE);
        (i0, (i0 + TILE).min(m), j0, (j0 + TILE).min(c1))
    })
}

/// The bytes of a matrix from which [`Mats::read`] and [`Mats::write`]
/// copy it by bands of columns on the threads: the larger of the L2
/// cache's bytes and [`gemm::THREADED`] (a byte copied costs about what a
/// multiply-add of the packed product does, so a woken thread's start is
/// a small part of its share: at half the L2, 256² float64, two threads
/// made lu slower than one).
pub fn copy_threaded_bytes() -> usize {
    caches().l2.max(gemm::THREADED)
}

/// The bands of columns a copy of an m × n matrix of `T` splits into,
/// one a thread: several where `par` and it is at least
/// [`copy_threaded_bytes`], else one; each band whole tiles.
fn bands<T>(m: usize, n: usize, par: bool) -> usize {
    let bytes = m * n * std::mem::size_of::<T>();
    if par && bytes >= copy_threaded_bytes() { pool::threads().min(n.div_ceil(TILE)).max(1) } else { 1 }
}


/// The leading dimension of a column-major scratch of `rows` rows of `T`:
/// `rows`, or a cache line (64 bytes) more where a column's bytes are a
/// multiple of 256. Columns that far apart would put every sixteenth
/// column, or nearer, at one offset in a 4 KiB page, and so in one set of a
/// first-level cache, whose set index lies within the page offset on x86
/// (its size over its ways is at most a page): a tile of a packed product
/// would then evict itself.
pub fn leading<T>(rows: usize) -> usize {
    let size = std::mem::size_of::<T>();
    if rows > 0 && (rows * size).is_multiple_of(256) { rows + 64 / size } else { rows }
}

/// The batch shape of a view whose last `tail` axes are each matrix's.
pub fn batch_of(l: &Layout, tail: usize) -> &[usize] {
    &l.shape[..l.shape.len().saturating_sub(tail)]
}

impl Mats {
    /// The matrices of `v`, whose last `tail` (1 or 2) axes are a matrix's;
    /// the view must have at least `tail` axes.
    pub fn new(v: &View, tail: usize) -> Mats {
        let l = &v.layout;
        let r = l.shape.len();
        let b = r - tail;
        let (rows, rs) = (l.shape[b], l.strides[b]);
        let (cols, cs) = if tail == 2 { (l.shape[b + 1], l.strides[b + 1]) } else { (1, 0) };
        Mats {
            base: v.memory,
            dtype: l.dtype,
            offset: l.offset as isize,
            batch_shape: l.shape[..b].to_vec(),
            batch_strides: l.strides[..b].to_vec(),
            rows,
            cols,
            rs,
            cs,
        }
    }

    /// The number of matrices.
    pub fn count(&self) -> usize {
        self.batch_shape.iter().product()
    }

    /// The element index of matrix `b`'s first element.
    fn start(&self, mut b: usize) -> isize {
        let mut at = self.offset;
        for (&n, &s) in self.batch_shape.iter().zip(&self.batch_strides).rev() {
            at += (b % n) as isize * s;
            b /= n;
        }
        at
    }

    /// Reads matrix `b` into `dst`, column-major with leading dimension
    /// `ld` (at least `self.rows`), by tiles of [`TILE`] rows and columns, each read along
    /// its shorter stride and written whole column by column, so that
    /// neither side revisits a cache line (matrices of power-of-two
    /// strides map a tile's lines to one cache set). Where `par` and the
    /// matrix is large, bands of its columns go to the pool's threads.
    pub fn read<T: Scalar>(&self, b: usize, dst: &mut [T], ld: usize, par: bool) {
        let (m, n) = (self.rows, self.cols);
        assert!(ld >= m && dst.len() >= ld * n);
        let parts = bands::<T>(m, n, par);
        if parts <= 1 {
            return self.read_cols(b, dst, ld, 0, n);
        }
        let per = n.div_ceil(parts).div_ceil(TILE) * TILE;
        pool::install(|| {
            use rayon::prelude::*;
            dst[..ld * n].par_chunks_mut(per * ld).enumerate().for_each(|(p, d)| self.read_cols(b, d, ld, p * per, ((p + 1) * per).min(n)))
        })
    }

    /// [`Mats::read`]'s columns `c0..c1` of matrix `b`, into `dst` from
    /// its first column.
    fn read_cols<T: Scalar>(&self, b: usize, dst: &mut [T], ld: usize, c0: usize, c1: usize) {
        debug_assert_eq!(T::DTYPE, self.dtype);
        let m = self.rows;
        assert!(c0 <= c1 && c1 <= self.cols && ld >= m && dst.len() >= ld * (c1 - c0).saturating_sub(1) + m);
        let p = self.base.base as *const T;
        let s = self.start(b);
        let (rs, cs) = (self.rs, self.cs);
        for (i0, i1, j0, j1) in tiles(m, c0, c1, false) {
            self.ahead(s, i0, j0, j1);
            if cs == 1 && i1 - i0 == TILE && j1 - j0 == TILE {
                // A whole tile of a matrix whose rows lie value after value.
                // SAFETY: its elements lie in the view's memory (checked
                // when planned) and its columns in `dst` (asserted above).
                unsafe { transpose::tile(p.offset(s + i0 as isize * rs + j0 as isize), rs, dst.as_mut_ptr().add(i0 + (j0 - c0) * ld), ld as isize) };
                continue;
            }
            let mut tile = [[T::zero(); TILE]; TILE];
            // SAFETY (each read): the view was checked to lie in its
            // memory, so each element index of a matrix in its batch is
            // inside it.
            let at = |i: usize, j: usize| unsafe { p.offset(s + i as isize * rs + j as isize * cs).read_unaligned() };
            if rs.unsigned_abs() <= cs.unsigned_abs() {
                for j in j0..j1 {
                    for i in i0..i1 {
                        tile[j - j0][i - i0] = at(i, j);
                    }
                }
            } else {
                for i in i0..i1 {
                    for j in j0..j1 {
                        tile[j - j0][i - i0] = at(i, j);
                    }
                }
            }
            for j in j0..j1 {
                let col = &mut dst[i0 + (j - c0) * ld..i1 + (j - c0) * ld];
                match <&mut [T; TILE]>::try_from(&mut *col) {
                    Ok(whole) => *whole = tile[j - j0],
                    Err(_) => col.copy_from_slice(&tile[j - j0][..i1 - i0]),
                }
            }
        }
    }

    /// Asks the cache, where a matrix's rows lie along its shorter stride,
    /// for the rows of the tile [`AHEAD`] tiles below the one at rows
    /// `i0..` of columns `j0..j1` of the matrix from element `s`: tiles go
    /// down a band of columns, which on such a matrix steps from line to
    /// line far apart, a pattern the hardware's prefetchers do not follow.
    #[inline(always)]
    fn ahead(&self, s: isize, i0: usize, j0: usize, j1: usize) {
        #[cfg(target_arch = "x86_64")]
        if self.rs.unsigned_abs() > self.cs.unsigned_abs() {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let p = self.base.base as *const u8;
            let size = self.dtype.bytes() as isize;
            let first = i0 + AHEAD * TILE;
            for i in first..(first + TILE).min(self.rows) {
                for j in [j0, j1 - 1] {
                    let at = (s + i as isize * self.rs + j as isize * self.cs) * size;
                    // SAFETY: a prefetch is a hint: it reads nothing the
                    // program sees and cannot fault, whatever the address.
                    unsafe { _mm_prefetch(p.wrapping_offset(at).cast::<i8>(), _MM_HINT_T0) };
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (s, i0, j0, j1);
    }

    /// Writes `src`, column-major with leading dimension `ld` (at least
    /// `self.rows`), into matrix `b`, by tiles as [`Mats::read`] reads
    /// (in another order, [`Mats::write_cols`] says why), bands of
    /// columns to the threads as it gives them.
    pub fn write<T: Scalar>(&self, b: usize, src: &[T], ld: usize, par: bool) {
        let (m, n) = (self.rows, self.cols);
        assert!(ld >= m && src.len() >= ld * n);
        let parts = bands::<T>(m, n, par);
        if parts <= 1 {
            return self.write_cols(b, src, ld, 0, n);
        }
        let per = n.div_ceil(parts).div_ceil(TILE) * TILE;
        pool::install(|| {
            use rayon::prelude::*;
            src[..ld * n].par_chunks(per * ld).enumerate().for_each(|(p, d)| self.write_cols(b, d, ld, p * per, ((p + 1) * per).min(n)))
        })
    }

    /// [`Mats::write`]'s columns `c0..c1` of matrix `b`, from `src` from
    /// its first column.
    fn write_cols<T: Scalar>(&self, b: usize, src: &[T], ld: usize, c0: usize, c1: usize) {
        debug_assert_eq!(T::DTYPE, self.dtype);
        let m = self.rows;
        assert!(c0 <= c1 && c1 <= self.cols && ld >= m && src.len() >= ld * (c1 - c0).saturating_sub(1) + m);
        let p = self.base.base as *mut T;
        let s = self.start(b);
        let (rs, cs) = (self.rs, self.cs);
        // Where the matrix's rows lie along its longer stride, the tiles go
        // along its rows, each row's lines written one after the next: down
        // a band of columns instead, a band's lines would be a row's
        // stride apart, for a power of two all in few cache sets, evicted
        // half written. `src`'s columns are then read side by side, the
        // tile `AHEAD` to the right asked of the cache.
        let by_rows = rs.unsigned_abs() > cs.unsigned_abs();
        for (i0, i1, j0, j1) in tiles(m, c0, c1, by_rows) {
            if by_rows {
                let first = j0 - c0 + AHEAD * TILE;
                gemm::prefetch_tile(src.as_ptr().wrapping_add(i0 + first * ld), ld, i1 - i0, TILE.min((c1 - c0).saturating_sub(first)));
            }
            if cs == 1 && i1 - i0 == TILE && j1 - j0 == TILE {
                // SAFETY: the tile's columns lie in `src` (asserted above);
                // its elements in the view's memory, which no other thread
                // accesses meanwhile, as for `put` below.
                unsafe { transpose::tile(src.as_ptr().add(i0 + (j0 - c0) * ld), ld as isize, p.offset(s + i0 as isize * rs + j0 as isize), rs) };
                continue;
            }
            let mut tile = [[T::zero(); TILE]; TILE];
            for j in j0..j1 {
                let col = &src[i0 + (j - c0) * ld..i1 + (j - c0) * ld];
                match <&[T; TILE]>::try_from(col) {
                    Ok(whole) => tile[j - j0] = *whole,
                    Err(_) => tile[j - j0][..i1 - i0].copy_from_slice(col),
                }
            }
            // SAFETY (each write): as in `read`; the destination does not
            // map two indices to one element and no other destination or
            // operand shares its bytes (checked in planning), so no other
            // thread writes or reads this element (the threads of a write
            // take disjoint columns).
            let put = |i: usize, j: usize, x: T| unsafe { p.offset(s + i as isize * rs + j as isize * cs).write_unaligned(x) };
            if rs.unsigned_abs() <= cs.unsigned_abs() {
                for j in j0..j1 {
                    for i in i0..i1 {
                        put(i, j, tile[j - j0][i - i0]);
                    }
                }
            } else {
                for i in i0..i1 {
                    for j in j0..j1 {
                        put(i, j, tile[j - j0][i - i0]);
                    }
                }
            }
        }
    }

    /// Where [`TILE`] matrices from `b0` (`L` of them) all lie in the
    /// batch along its last axis, each the last's start a stride on, and
    /// each's elements one
    /// after the next in row-major or column-major order: the first's
    /// start, the stride, and an iterator of the elements' places in a
    /// column-major matrix (leading dimension `self.rows`) in the order
    /// they lie.
    fn dense_lanes<const L: usize>(&self, b0: usize) -> Option<(isize, isize, impl Iterator<Item = usize>)> {
        let (m, n) = (self.rows, self.cols);
        if L != TILE || b0 + L > self.count() || m * n < TILE {
            return None;
        }
        let col_major = if self.rs == 1 && self.cs == m as isize {
            true
        } else if self.cs == 1 && self.rs == n as isize {
            false
        } else {
            return None;
        };
        // The L matrices one after the next along the batch's last axis.
        let (&last, &bs) = self.batch_shape.last().zip(self.batch_strides.last())?;
        if b0 % last + L > last {
            return None;
        }
        let s0 = self.start(b0);
        let places = (0..m * n).map(move |e| if col_major { e } else { e / n + e % n * m });
        Some((s0, bs, places))
    }

    /// Reads matrices `b0..b0 + L` into the lanes of `dst` (column-major,
    /// leading dimension `self.rows`), lane `l` matrix `b0 + l`; the lanes
    /// past the batch's last matrix take `b0`'s values. Matrices that lie
    /// as [`Mats::dense_lanes`] asks are read by tiles of [`TILE`] elements
    /// of [`TILE`] matrices, transposed ([`transpose::tile`]), each tile's
    /// elements then put in their places.
    pub fn read_lanes<T: Scalar, const L: usize>(&self, b0: usize, dst: &mut [[T; L]]) {
        debug_assert_eq!(T::DTYPE, self.dtype);
        let (m, n) = (self.rows, self.cols);
        assert!(dst.len() >= m * n && b0 < self.count());
        let p = self.base.base as *const T;
        if let Some((s0, bs, mut places)) = self.dense_lanes::<L>(b0) {
            let whole = m * n / TILE * TILE;
            for e0 in (0..whole).step_by(TILE) {
                let mut tile = [[T::zero(); TILE]; TILE];
                // SAFETY: elements e0..e0 + TILE of the TILE matrices from
                // b0, `bs` apart, lie in the view's memory (checked when
                // planned); the tile is this function's.
                unsafe { transpose::tile(p.offset(s0 + e0 as isize), bs, tile.as_mut_ptr().cast::<T>(), TILE as isize) };
                for (t, at) in tile.iter().zip(places.by_ref()) {
                    dst[at].copy_from_slice(t);
                }
            }
            for (e, at) in (whole..m * n).zip(places) {
                for (l, x) in dst[at].iter_mut().enumerate() {
                    // SAFETY: as above.
                    *x = unsafe { p.offset(s0 + l as isize * bs + e as isize).read_unaligned() };
                }
            }
            return;
        }
        let starts: [isize; L] = std::array::from_fn(|l| self.start(if b0 + l < self.count() { b0 + l } else { b0 }));
        for j in 0..n {
            for i in 0..m {
                let at = i as isize * self.rs + j as isize * self.cs;
                for (x, &s) in dst[i + j * m].iter_mut().zip(&starts) {
                    // SAFETY: as in `read`.
                    *x = unsafe { p.offset(s + at).read_unaligned() };
                }
            }
        }
    }

    /// Writes lane `l` of `src` (column-major, leading dimension
    /// `self.rows`) into matrix `b0 + l`, for those of the batch; by tiles
    /// as [`Mats::read_lanes`] reads.
    pub fn write_lanes<T: Scalar, const L: usize>(&self, b0: usize, src: &[[T; L]]) {
        debug_assert_eq!(T::DTYPE, self.dtype);
        let (m, n) = (self.rows, self.cols);
        assert!(src.len() >= m * n);
        let p = self.base.base as *mut T;
        if let Some((s0, bs, mut places)) = self.dense_lanes::<L>(b0) {
            let whole = m * n / TILE * TILE;
            for e0 in (0..whole).step_by(TILE) {
                let mut tile = [[T::zero(); TILE]; TILE];
                for (t, at) in tile.iter_mut().zip(places.by_ref()) {
                    t.copy_from_slice(&src[at]);
                }
                // SAFETY: as in `read_lanes`; the destination's elements
                // are this call's alone, as in `write`.
                unsafe { transpose::tile(tile.as_ptr().cast::<T>(), TILE as isize, p.offset(s0 + e0 as isize), bs) };
            }
            for (e, at) in (whole..m * n).zip(places) {
                for (l, &x) in src[at].iter().enumerate() {
                    // SAFETY: as above.
                    unsafe { p.offset(s0 + l as isize * bs + e as isize).write_unaligned(x) };
                }
            }
            return;
        }
        let live = L.min(self.count().saturating_sub(b0));
        let starts: [isize; L] = std::array::from_fn(|l| self.start(b0 + l.min(live.saturating_sub(1))));
        for j in 0..n {
            for i in 0..m {
                let at = i as isize * self.rs + j as isize * self.cs;
                for (&x, &s) in src[i + j * m].iter().zip(&starts[..live]) {
                    // SAFETY: as in `write`.
                    unsafe { p.offset(s + at).write_unaligned(x) };
                }
            }
        }
    }

    /// Writes int64 values `src` into vector `b` (a view with `tail` 1).
    pub fn write_index(&self, b: usize, src: &[i64]) {
        debug_assert_eq!(self.dtype, Dtype::Int64);
        assert!(src.len() >= self.rows);
        let p = self.base.base as *mut i64;
        let s = self.start(b);
        for (i, &x) in src.iter().take(self.rows).enumerate() {
            // SAFETY: as in `write`.
            unsafe { p.offset(s + i as isize * self.rs).write_unaligned(x) };
        }
    }
}

/// A C-contiguous copy of a view's elements, held for a call whose
/// destinations share bytes with its operands.
pub struct Held {
    _bytes: Vec<u128>,
}

impl Held {
    /// Copies `v` and gives the copy and a view of it.
    pub fn of(v: &View) -> (Held, View) {
        let l = &v.layout;
        let size = l.size();
        let width = l.dtype.bytes();
        let mut bytes = vec![0u128; (size * width).div_ceil(16)];
        let layout = Layout::contiguous(l.dtype, &l.shape);
        let memory = Memory { base: bytes.as_mut_ptr() as *mut u8, bytes: bytes.len() * 16 };
        let src = v.memory.base as *const u8;
        let dst = memory.base;
        let mut k = 0usize;
        for_each_index(&l.shape, |idx| {
            let at = l.offset as isize + idx.iter().zip(&l.strides).map(|(&i, &s)| i as isize * s).sum::<isize>();
            // SAFETY: the view was checked against its memory, so element
            // `at` lies in it; the copy holds `size` elements of `width`.
            unsafe { std::ptr::copy_nonoverlapping(src.offset(at * width as isize), dst.add(k * width), width) };
            k += 1;
        });
        (Held { _bytes: bytes }, View { layout, memory })
    }
}

/// Calls `f` at every index of `shape` in C order.
fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut idx = vec![0usize; shape.len()];
    loop {
        f(&idx);
        let mut a = shape.len();
        loop {
            if a == 0 {
                return;
            }
            a -= 1;
            idx[a] += 1;
            if idx[a] < shape[a] {
                break;
            }
            idx[a] = 0;
        }
    }
}
