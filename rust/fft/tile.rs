//! Transposed copies of blocks of parts: square tiles of a 32-byte vector's
//! parts (8 of `f32`, 4 of `f64`) moved at once by the vector shuffles of
//! the crate's x86-64 baseline (AVX2), part by part elsewhere and at the
//! edges. They move bits and compute nothing, so no path changes a bit.

use super::real::Real;

/// Copies `rows` rows of `cols` parts transposed: part c of row r, at
/// `src + r ss + c`, to `dst + c ds + r`, a tile ([`Real::transpose_tile`])
/// at a time where one fits, part by part at the edges.
///
/// # Safety
/// Every such part of `src` must lie in memory the caller may read, and
/// every such part of `dst` in memory it may write, apart from `src`'s.
/// `dst` may be unset.
#[inline(always)]
pub unsafe fn transpose_raw<T: Real>(src: *const T, ss: usize, dst: *mut T, ds: usize, rows: usize, cols: usize) {
    let k = T::TILE;
    let (rt, ct) = (rows - rows % k, cols - cols % k);
    // SAFETY (all): each part read or written is one of the caller's.
    unsafe {
        let mut r0 = 0;
        while r0 < rt {
            let mut c0 = 0;
            while c0 < ct {
                T::transpose_tile(src.add(r0 * ss + c0), ss, dst.add(c0 * ds + r0), ds);
                c0 += k;
            }
            for r in r0..r0 + k {
                for c in ct..cols {
                    dst.add(c * ds + r).write(src.add(r * ss + c).read());
                }
            }
            r0 += k;
        }
        for r in rt..rows {
            for c in 0..cols {
                dst.add(c * ds + r).write(src.add(r * ss + c).read());
            }
        }
    }
}

/// [`transpose_raw`] between slices: `src`'s rows from its start, `dst`'s
/// from its start; panics where a part would fall outside them.
#[inline(always)]
pub fn transpose<T: Real>(src: &[T], ss: usize, dst: &mut [T], ds: usize, rows: usize, cols: usize) {
    if rows == 0 || cols == 0 {
        return;
    }
    assert!((rows - 1) * ss + cols <= src.len() && (cols - 1) * ds + rows <= dst.len());
    // SAFETY: the assertion: row r < rows of `src` ends at r ss + cols
    // parts, and row c < cols of `dst` at c ds + rows; a `&mut` slice lies
    // apart from every other.
    unsafe { transpose_raw(src.as_ptr(), ss, dst.as_mut_ptr(), ds, rows, cols) }
}

/// A tile of `K` rows of `K` parts moved transposed part by part (as
/// [`Real::transpose_tile`] states), where no vector tile is compiled.
///
/// # Safety
/// As [`Real::transpose_tile`].
#[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
#[inline(always)]
pub unsafe fn tile_parts<T: Copy, const K: usize>(src: *const T, ss: usize, dst: *mut T, ds: usize) {
    for r in 0..K {
        for c in 0..K {
            // SAFETY: the caller's, for part (r, c).
            unsafe { dst.add(c * ds + r).write(src.add(r * ss + c).read()) };
        }
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
use std::arch::x86_64::*;

/// An 8 by 8 tile of `f32` transposed in eight AVX registers.
///
/// # Safety
/// As [`Real::transpose_tile`].
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
#[inline(always)]
pub unsafe fn tile_f32(src: *const f32, ss: usize, dst: *mut f32, ds: usize) {
    // SAFETY: rows r < 8 of 8 parts at src + r ss are the caller's to
    // read, and rows c < 8 at dst + c ds its to write.
    unsafe {
        let r = |i: usize| _mm256_loadu_ps(src.add(i * ss));
        let (r0, r1, r2, r3, r4, r5, r6, r7) = (r(0), r(1), r(2), r(3), r(4), r(5), r(6), r(7));
        // Per 128-bit half: a0 b0 a1 b1 | a4 b4 a5 b5, and so on.
        let (t0, t1) = (_mm256_unpacklo_ps(r0, r1), _mm256_unpackhi_ps(r0, r1));
        let (t2, t3) = (_mm256_unpacklo_ps(r2, r3), _mm256_unpackhi_ps(r2, r3));
        let (t4, t5) = (_mm256_unpacklo_ps(r4, r5), _mm256_unpackhi_ps(r4, r5));
        let (t6, t7) = (_mm256_unpacklo_ps(r6, r7), _mm256_unpackhi_ps(r6, r7));
        // a0 b0 c0 d0 | a4 b4 c4 d4, and so on.
        let (s0, s1) = (_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xEE>(t0, t2));
        let (s2, s3) = (_mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xEE>(t1, t3));
        let (s4, s5) = (_mm256_shuffle_ps::<0x44>(t4, t6), _mm256_shuffle_ps::<0xEE>(t4, t6));
        let (s6, s7) = (_mm256_shuffle_ps::<0x44>(t5, t7), _mm256_shuffle_ps::<0xEE>(t5, t7));
        let w = |i: usize, v: __m256| _mm256_storeu_ps(dst.add(i * ds), v);
        w(0, _mm256_permute2f128_ps::<0x20>(s0, s4));
        w(1, _mm256_permute2f128_ps::<0x20>(s1, s5));
        w(2, _mm256_permute2f128_ps::<0x20>(s2, s6));
        w(3, _mm256_permute2f128_ps::<0x20>(s3, s7));
        w(4, _mm256_permute2f128_ps::<0x31>(s0, s4));
        w(5, _mm256_permute2f128_ps::<0x31>(s1, s5));
        w(6, _mm256_permute2f128_ps::<0x31>(s2, s6));
        w(7, _mm256_permute2f128_ps::<0x31>(s3, s7));
    }
}

/// A 4 by 4 tile of `f64` transposed in four AVX registers.
///
/// # Safety
/// As [`Real::transpose_tile`].
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
#[inline(always)]
pub unsafe fn tile_f64(src: *const f64, ss: usize, dst: *mut f64, ds: usize) {
    // SAFETY: rows r < 4 of 4 parts at src + r ss are the caller's to
    // read, and rows c < 4 at dst + c ds its to write.
    unsafe {
        let r = |i: usize| _mm256_loadu_pd(src.add(i * ss));
        let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3));
        // a0 b0 | a2 b2, a1 b1 | a3 b3, and so on.
        let (t0, t1) = (_mm256_unpacklo_pd(r0, r1), _mm256_unpackhi_pd(r0, r1));
        let (t2, t3) = (_mm256_unpacklo_pd(r2, r3), _mm256_unpackhi_pd(r2, r3));
        let w = |i: usize, v: __m256d| _mm256_storeu_pd(dst.add(i * ds), v);
        w(0, _mm256_permute2f128_pd::<0x20>(t0, t2));
        w(1, _mm256_permute2f128_pd::<0x20>(t1, t3));
        w(2, _mm256_permute2f128_pd::<0x31>(t0, t2));
        w(3, _mm256_permute2f128_pd::<0x31>(t1, t3));
    }
}
