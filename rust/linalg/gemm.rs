//! The factorisations' large updates as packed products on `contract`'s
//! microkernels: `C(i, c) -= Σ_k A(i, k) F(k, c)` over column-major
//! blocks, each product fused into the running value in increasing k.
//!
//! A microkernel runs a tile of `mr` rows of `nr` sums, each of its rows'
//! `mr` values broadcast and fused into `nr` sums loaded as vectors, one
//! depth after the next ([`Micro`]). Here its rows are the update's
//! columns `c` (the broadcast values are `-F(k, c)`) and its `nr` sums the
//! rows `i` of a column of C, which lie one after the next in column-major
//! storage, so the tile is updated where it lies. Each sum takes
//! `fma(-F(k, c), A(i, k), C(i, c))` in increasing k on every instruction
//! set and in the portable form, the same chain as [`Scalar::sub_mul`]'s
//! (`c - a b` of `a = A(i, k)` and `b = F(k, c)`), so the bits never depend
//! on the tiling, the slices of the depth or which thread runs a tile.
//!
//! The depth runs in slices whose packed rows fill about half the L1 cache
//! and the columns in chunks whose packed coefficients fill about half the
//! L2, both from the caches the machine reports ([`caches`]). Threads take
//! whole panels of rows, so that every output element is computed by one.

use crate::core::caches::sizes as caches;
use crate::contract::elem::{Micro, Tile};
use crate::core::{isa, pool};
use crate::linalg::scalar::Scalar;

/// The coefficients F of an update: `F(k, c) = f[k ks + c cs]`, conjugated
/// where `conj`. Each is read once, when packed.
#[derive(Clone, Copy)]
pub struct Coef<'a, T> {
    pub f: &'a [T],
    pub ks: usize,
    pub cs: usize,
    pub conj: bool,
}

impl<T: Scalar> Coef<'_, T> {
    /// `-x`, conjugated where `conj`: a packed value of F's element `x`.
    fn neg(&self, x: T) -> T {
        if self.conj { x.conj().neg() } else { x.neg() }
    }
}

/// Work (multiply-adds) past which an update splits its rows over the
/// pool's threads: some hundreds of microseconds of one thread's work, so
/// that a worker that has to be woken (tens of microseconds or more on a
/// busy machine) still takes a fair part; below it, splitting made the
/// factorisations of 256 × 256 slower on two threads than on one.
pub const THREADED: usize = 1 << 21;

/// Where A of an update `C -= A F` is known zero, so that a panel of C's
/// rows skips those depths. Rows go in groups of the widest microkernel's
/// rows of sums (`T::micro(true).nr`, which every narrower kernel's divides),
/// and a group takes the depths any of its rows may need: the products an
/// element takes are then the same on every instruction set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Band {
    /// No zeros known: every row takes every depth.
    Full,
    /// `A(i, k) = 0` for `k < i`: a group of rows from `g` takes depths
    /// from `g`.
    Upper,
    /// `A(i, k) = 0` for `k > i`: a group of rows below `g + G` takes
    /// depths below `g + G` (G the group's rows).
    Lower,
}

impl Band {
    /// The depths `lo..hi` (of `kn`) the group of rows `g..g + rows` takes.
    fn depths(self, g: usize, rows: usize, kn: usize) -> (usize, usize) {
        match self {
            Band::Full => (0, kn),
            Band::Upper => (g.min(kn), kn),
            Band::Lower => (0, (g + rows).min(kn)),
        }
    }
}

/// A pointer to the output, shared by the parts, which write disjoint rows.
#[derive(Clone, Copy)]
struct Out<T>(*mut T);
// SAFETY: the parts of `sub_packed` write disjoint panels of rows of the
// block the pointer reaches, and nothing else touches it meanwhile.
unsafe impl<T> Send for Out<T> {}
// SAFETY: as for Send.
unsafe impl<T> Sync for Out<T> {}

/// The coefficients of an update, negated and packed for the microkernel:
/// slice after slice of `kc` depths, each in panels of `mr` columns, each
/// panel depth after depth, +0 past the last column.
pub struct Packed<T: Scalar> {
    mk: Micro<T>,
    kc: usize,
    /// Depths and columns.
    kn: usize,
    n: usize,
    data: Vec<T>,
}

/// Packs `-F(k, c)` for `k < kn`, `c < n`, for [`sub_packed`].
pub fn pack<T: Scalar>(f: Coef<T>, kn: usize, n: usize) -> Packed<T> {
    let mk = T::micro(isa::avx512());
    let (mr, nr) = (mk.mr, mk.nr);
    let kc = (caches().l1 / 2 / (nr * std::mem::size_of::<T>())).clamp(32, 1024);
    let np = n.div_ceil(mr);
    let mut data = vec![T::zero(); kn * np * mr];
    for k0 in (0..kn).step_by(kc) {
        let kk = kc.min(kn - k0);
        let slice = &mut data[k0 * np * mr..(k0 + kk) * np * mr];
        for (p, panel) in slice.chunks_mut(mr * kk).enumerate() {
            let cols = mr.min(n - p * mr);
            if f.ks == 1 {
                // A column's depths lie one after the next: depth by depth,
                // the panel's columns read side by side, so that its writes
                // run on and its reads are as many streams at once.
                let at = p * mr * f.cs + k0;
                for (k, depth) in panel.chunks_exact_mut(mr).enumerate() {
                    for (r, y) in depth[..cols].iter_mut().enumerate() {
                        *y = f.neg(f.f[at + r * f.cs + k]);
                    }
                }
            } else {
                for r in 0..cols {
                    let at = (p * mr + r) * f.cs + k0 * f.ks;
                    for k in 0..kk {
                        panel[k * mr + r] = f.neg(f.f[at + k * f.ks]);
                    }
                }
            }
        }
    }
    Packed { mk, kc, kn, n, data }
}

/// Runs `mk` over `d` depths of `panel` (its `mr` values a depth) and `a`
/// (its `nr` a depth) into the tile of C at `at`, columns `ld` apart, of
/// which `rows` rows and `cols` columns lie in C: in place where the tile
/// is whole, else through `tile` (`mr * nr` values), its part in C copied
/// in and back.
///
/// # Safety
/// The `rows` x `cols` elements from `at` lie in C and this thread alone
/// accesses them; `panel` and `a` hold `d` depths; `mk` is a kernel of this
/// CPU's instructions (`T::micro` gives only those).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn run_tile<T: Copy>(mk: Micro<T>, d: usize, panel: &[T], a: &[T], at: *mut T, ld: usize, rows: usize, cols: usize, tile: &mut [T]) {
    let nr = mk.nr;
    debug_assert!(panel.len() >= d * mk.mr && a.len() >= d * nr && tile.len() >= mk.mr * nr);
    // SAFETY: as this function's contract; the tile holds mr rows of nr.
    unsafe {
        if rows == nr && cols == mk.mr {
            (mk.run)(d, panel.as_ptr(), a.as_ptr(), Tile::at(at, ld));
            return;
        }
        for r in 0..cols {
            for j in 0..rows {
                tile[r * nr + j] = *at.add(r * ld + j);
            }
        }
        (mk.run)(d, panel.as_ptr(), a.as_ptr(), Tile::at(tile.as_mut_ptr(), nr));
        for r in 0..cols {
            for j in 0..rows {
                *at.add(r * ld + j) = tile[r * nr + j];
            }
        }
    }
}

/// `C(i, c) -= Σ_k A(i, k) F(k, c)` for `i < m`, `c < n`, `k < kn` (F's
/// extents, `f` its packed form), C at `c[i + c ldc]` and A at
/// `a[i + k lda]`, each product fused in increasing k, the depths `band`
/// says are zero in A left out by groups of rows. Splits its rows over
/// the pool's threads where `par` and the work is large.
#[allow(clippy::too_many_arguments)]
pub fn sub_packed<T: Scalar>(c: &mut [T], ldc: usize, m: usize, a: &[T], lda: usize, f: &Packed<T>, band: Band, par: bool) {
    let (n, kn, kc, mk) = (f.n, f.kn, f.kc, f.mk);
    if m == 0 || n == 0 || kn == 0 {
        return;
    }
    // Every element the loops below reach, checked once.
    assert!(ldc >= m && c.len() >= (n - 1) * ldc + m, "C lies in its slice");
    assert!(lda >= m && a.len() >= (kn - 1) * lda + m, "A lies in its slice");
    let (mr, nr) = (mk.mr, mk.nr);
    let group = T::micro(true).nr;
    debug_assert!(group.is_multiple_of(nr));
    // Chunks of columns whose packed coefficients fill at most about half
    // the L2 cache, of even widths (whole panels), so that none is a sliver.
    let most = ((caches().l2 / 2 / (kc * std::mem::size_of::<T>())) / mr).max(1) * mr;
    let nc = n.div_ceil(n.div_ceil(most)).div_ceil(mr) * mr;
    let np = n.div_ceil(mr);
    let rp = m.div_ceil(nr);
    let parts = if par && m * n * kn > THREADED { rp.min(pool::threads()) } else { 1 };
    let out = Out(c.as_mut_ptr());
    let fp = &f.data[..];
    pool::run_parts(parts, |part| {
        // The whole wrapper, which threads share, not its pointer field
        // (a closure would capture the field alone).
        #[allow(clippy::redundant_locals)]
        let out = out;
        let mut ap = vec![T::zero(); nr * kc.min(kn)];
        let mut tile = vec![T::zero(); mr * nr];
        let (p0, p1) = (rp * part / parts, rp * (part + 1) / parts);
        for k0 in (0..kn).step_by(kc) {
            let kk = kc.min(kn - k0);
            let slice = &fp[k0 * np * mr..(k0 + kk) * np * mr];
            for c0 in (0..n).step_by(nc) {
                let cn = nc.min(n - c0);
                for ip in p0..p1 {
                    let i0 = ip * nr;
                    let rows = nr.min(m - i0);
                    // This slice's depths the row panel's group takes.
                    let g = i0 / group * group;
                    let (lo, hi) = band.depths(g, group, kn);
                    let (d0, d1) = (lo.max(k0), hi.min(k0 + kk));
                    if d0 >= d1 {
                        continue;
                    }
                    let dn = d1 - d0;
                    let ap = &mut ap[..nr * dn];
                    if rows == nr {
                        for (k, depth) in ap.chunks_exact_mut(nr).enumerate() {
                            copy_panel(depth, &a[i0 + (d0 + k) * lda..][..nr]);
                        }
                    } else {
                        for k in 0..dn {
                            let src = &a[i0 + (d0 + k) * lda..][..rows];
                            ap[k * nr..k * nr + rows].copy_from_slice(src);
                            ap[k * nr + rows..(k + 1) * nr].fill(T::zero());
                        }
                    }
                    let (q0, q1) = (c0 / mr, (c0 + cn).div_ceil(mr));
                    for p in q0..q1 {
                        let cols = mr.min(n - p * mr);
                        let panel = &slice[p * mr * kk + (d0 - k0) * mr..p * mr * kk + (d1 - k0) * mr];
                        // The next tile's C, asked for ahead (the next row
                        // panel's first where this is the chunk's last).
                        let (pn, ni) = if p + 1 < q1 { (p + 1, i0) } else { (q0, i0 + nr) };
                        if ni < m {
                            prefetch_tile(out.0.wrapping_add(ni + pn * mr * ldc), ldc, nr.min(m - ni), mr.min(n - pn * mr));
                        }
                        // SAFETY: the tile's rows i0..i0 + rows of columns
                        // p mr..p mr + cols lie in C (checked on entry) and
                        // are this part's alone; the panels hold dn depths
                        // of mr and nr values; `T::micro` gave a kernel of
                        // this CPU's instructions.
                        unsafe { run_tile(mk, dn, panel, ap, out.0.add(i0 + p * mr * ldc), ldc, rows, cols, &mut tile) }
                    }
                }
            }
        }
    });
}

/// Asks the cache for the tile of C at `at`, `rows` rows of `cols` columns
/// `ld` apart, ahead of its microkernel call: a tile's columns lie far
/// apart, each a separate stream the hardware's prefetchers do not follow,
/// and the microkernel waits on the tile's loads before its first product.
#[inline(always)]
pub(super) fn prefetch_tile<T>(at: *const T, ld: usize, rows: usize, cols: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let bytes = rows * std::mem::size_of::<T>();
        for r in 0..cols {
            let col = at.wrapping_add(r * ld).cast::<i8>();
            let mut off = 0;
            while off < bytes {
                // SAFETY: a prefetch is a hint: it reads nothing the
                // program sees and cannot fault, whatever the address.
                unsafe { _mm_prefetch(col.wrapping_add(off), _MM_HINT_T0) };
                off += 64;
            }
            // SAFETY: as above.
            unsafe { _mm_prefetch(col.wrapping_add(bytes.saturating_sub(1)), _MM_HINT_T0) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (at, ld, rows, cols);
}

/// Copies `src` into `dst`, of one length: by moves of a fixed size where
/// it is a microkernel's whole panel (8, 16 or 32 values), so that a
/// depth's copy is not a library call.
#[inline(always)]
pub fn copy_panel<T: Copy>(dst: &mut [T], src: &[T]) {
    fn fixed<T: Copy, const N: usize>(dst: &mut [T], src: &[T]) {
        let d: &mut [T; N] = dst.try_into().expect("a panel of N");
        *d = src.try_into().expect("a panel of N");
    }
    match dst.len() {
        8 => fixed::<T, 8>(dst, src),
        16 => fixed::<T, 16>(dst, src),
        32 => fixed::<T, 32>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

/// [`pack`] then [`sub_packed`], for coefficients that do not lie in C's
/// slice, by chunks of columns whose packed coefficients fill about half
/// the L2 cache, so that a large F is not copied whole. Where `par`, the
/// work is large and the columns many, the threads take whole chunks,
/// each packing its own (at least two chunks a thread); else each chunk's
/// rows split over them.
#[allow(clippy::too_many_arguments)]
pub fn sub_product<T: Scalar>(c: &mut [T], ldc: usize, m: usize, a: &[T], lda: usize, f: Coef<T>, kn: usize, n: usize, band: Band, par: bool) {
    if m == 0 || n == 0 || kn == 0 {
        return;
    }
    let mr = T::micro(isa::avx512()).mr;
    let mut chunk = ((caches().l2 / 2 / (kn * std::mem::size_of::<T>())) / mr).max(1) * mr;
    let threads = pool::threads();
    let by_chunks = par && threads > 1 && m * n * kn > THREADED && n >= 2 * threads * mr;
    if by_chunks {
        chunk = chunk.min(n.div_ceil(2 * threads).div_ceil(mr) * mr);
    }
    let c = &mut c[..(n - 1) * ldc + m];
    // Each chunk's columns of C and its first column.
    let mut chunks = Vec::new();
    let mut rest = c;
    for c0 in (0..n).step_by(chunk) {
        let (cols, next) = rest.split_at_mut((chunk * ldc).min(rest.len()));
        chunks.push((c0, cols));
        rest = next;
    }
    let update = |(c0, cols): (usize, &mut [T])| {
        let cn = chunk.min(n - c0);
        let fc = Coef { f: &f.f[c0 * f.cs..], ..f };
        sub_packed(cols, ldc, m, a, lda, &pack(fc, kn, cn), band, par && !by_chunks);
    };
    if by_chunks {
        pool::install(|| {
            use rayon::prelude::*;
            chunks.into_par_iter().for_each(update)
        })
    } else {
        chunks.into_iter().for_each(update)
    }
}
