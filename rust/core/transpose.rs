//! Transposed copies: value `c` of row `r` of a block (rows `ss` values
//! apart, each's values side by side) to `c ds + r` of another, by square
//! tiles of [`TILE`] values moved by vector shuffles for values of 4, 8 and
//! 16 bytes where the CPU has AVX2 (the contract's x86-64 baseline), one by
//! one otherwise and at a block's edges. Values only move: no path changes
//! a bit.

/// Rows and columns of a tile.
pub const TILE: usize = 8;

/// Copies `rows` rows of `cols` values transposed: value `c` of row `r`,
/// at `src + r ss + c`, to `dst + c ds + r`, a [`tile`] at a time where one
/// fits, one by one at the edges.
///
/// # Safety
/// Every such value of `src` lies in memory this thread may read, and every
/// such value of `dst` in memory it alone accesses, apart from `src`'s.
#[inline(always)]
pub unsafe fn block<T: Copy>(src: *const T, ss: isize, dst: *mut T, ds: isize, rows: usize, cols: usize) {
    let (rt, ct) = (rows - rows % TILE, cols - cols % TILE);
    let one = |r: usize, c: usize| {
        let (r, c) = (r as isize, c as isize);
        // SAFETY: value (r, c) is one of the caller's.
        unsafe { dst.offset(c * ds + r).write_unaligned(src.offset(r * ss + c).read_unaligned()) };
    };
    for r0 in (0..rt).step_by(TILE) {
        for c0 in (0..ct).step_by(TILE) {
            let (r, c) = (r0 as isize, c0 as isize);
            // SAFETY: the tile's values are the caller's.
            unsafe { tile(src.offset(r * ss + c), ss, dst.offset(c * ds + r), ds) };
        }
        (r0..r0 + TILE).for_each(|r| (ct..cols).for_each(|c| one(r, c)));
    }
    (rt..rows).for_each(|r| (0..cols).for_each(|c| one(r, c)));
}

/// Copies a tile of [`TILE`] × [`TILE`] values transposed: value `c` of
/// row `r` (rows from `src`, `ss` values apart, each's values side by
/// side) to `dst[c ds + r]`. Values only move, bits unchanged: by vector
/// shuffles for 4-, 8- and 16-byte values where the CPU has AVX2 (the
/// contract's x86-64 baseline), else one by one.
///
/// # Safety
/// The tile's values from `src` lie in memory this thread may read, and
/// those from `dst` in memory it alone accesses.
#[inline(always)]
pub unsafe fn tile<T: Copy>(src: *const T, ss: isize, dst: *mut T, ds: isize) {
    // SAFETY (each arm): as this function's contract, for values of the
    // arm's size.
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    unsafe {
        match std::mem::size_of::<T>() {
            4 => return shuffle::tile4(src.cast(), ss, dst.cast(), ds),
            8 => return shuffle::tile8(src.cast(), ss, dst.cast(), ds),
            16 => return shuffle::tile16(src.cast(), ss * 2, dst.cast(), ds * 2),
            _ => {}
        }
    }
    for r in 0..TILE as isize {
        for c in 0..TILE as isize {
            // SAFETY: as this function's contract.
            unsafe { dst.offset(c * ds + r).write_unaligned(src.offset(r * ss + c).read_unaligned()) };
        }
    }
}

/// [`tile`]'s shuffles, by values' size (their bits moved as
/// floats, which loads, shuffles and stores leave as they are).
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
mod shuffle {
    use core::arch::x86_64::*;

    /// 8 × 8 4-byte values: pairs of rows interleaved, then pairs of
    /// pairs, then the halves exchanged.
    ///
    /// # Safety
    /// As `tile`.
    #[inline(always)]
    pub unsafe fn tile4(src: *const f32, ss: isize, dst: *mut f32, ds: isize) {
        // SAFETY: as this function's contract; AVX2 is compiled in.
        unsafe {
            let r: [__m256; 8] = std::array::from_fn(|i| _mm256_loadu_ps(src.offset(i as isize * ss)));
            let t: [__m256; 8] = std::array::from_fn(|i| {
                let (a, b) = (r[i / 2 * 2], r[i / 2 * 2 + 1]);
                if i % 2 == 0 { _mm256_unpacklo_ps(a, b) } else { _mm256_unpackhi_ps(a, b) }
            });
            // u[4 h + c]: column c (and c + 4) of rows 4 h..4 h + 4.
            let u: [__m256; 8] = std::array::from_fn(|i| {
                let (h, c) = (i / 4, i % 4);
                let (a, b) = (t[4 * h + c / 2], t[4 * h + 2 + c / 2]);
                if c % 2 == 0 { _mm256_shuffle_ps(a, b, 0x44) } else { _mm256_shuffle_ps(a, b, 0xEE) }
            });
            for c in 0..4 {
                _mm256_storeu_ps(dst.offset(c as isize * ds), _mm256_permute2f128_ps(u[c], u[4 + c], 0x20));
                _mm256_storeu_ps(dst.offset((c + 4) as isize * ds), _mm256_permute2f128_ps(u[c], u[4 + c], 0x31));
            }
        }
    }

    /// 8 × 8 8-byte values, as four 4 × 4 blocks: pairs of rows
    /// interleaved, then the halves exchanged.
    ///
    /// # Safety
    /// As `tile`.
    #[inline(always)]
    pub unsafe fn tile8(src: *const f64, ss: isize, dst: *mut f64, ds: isize) {
        // SAFETY: as this function's contract; AVX2 is compiled in.
        unsafe {
            for (rb, cb) in [(0isize, 0isize), (0, 4), (4, 0), (4, 4)] {
                let r: [__m256d; 4] = std::array::from_fn(|i| _mm256_loadu_pd(src.offset((rb + i as isize) * ss + cb)));
                let (t0, t1) = (_mm256_unpacklo_pd(r[0], r[1]), _mm256_unpackhi_pd(r[0], r[1]));
                let (t2, t3) = (_mm256_unpacklo_pd(r[2], r[3]), _mm256_unpackhi_pd(r[2], r[3]));
                let c = [
                    _mm256_permute2f128_pd(t0, t2, 0x20),
                    _mm256_permute2f128_pd(t1, t3, 0x20),
                    _mm256_permute2f128_pd(t0, t2, 0x31),
                    _mm256_permute2f128_pd(t1, t3, 0x31),
                ];
                for (j, &v) in c.iter().enumerate() {
                    _mm256_storeu_pd(dst.offset((cb + j as isize) * ds + rb), v);
                }
            }
        }
    }

    /// 8 × 8 16-byte values (each two f64 here, `ss` and `ds` in f64s), as
    /// 2 × 2 blocks whose halves are exchanged.
    ///
    /// # Safety
    /// As `tile`.
    #[inline(always)]
    pub unsafe fn tile16(src: *const f64, ss: isize, dst: *mut f64, ds: isize) {
        // SAFETY: as this function's contract; AVX2 is compiled in.
        unsafe {
            for r in (0..8isize).step_by(2) {
                for c in (0..8isize).step_by(2) {
                    let a = _mm256_loadu_pd(src.offset(r * ss + 2 * c));
                    let b = _mm256_loadu_pd(src.offset((r + 1) * ss + 2 * c));
                    _mm256_storeu_pd(dst.offset(c * ds + 2 * r), _mm256_permute2f128_pd(a, b, 0x20));
                    _mm256_storeu_pd(dst.offset((c + 1) * ds + 2 * r), _mm256_permute2f128_pd(a, b, 0x31));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every value of a tile lands transposed, bits unchanged, for values
    /// of 4, 8 and 16 bytes (each arm of `tile`), nothing past
    /// the tile's columns written.
    #[test]
    fn transpose_tile_moves_each_value_alone() {
        fn check<T: Copy + PartialEq + std::fmt::Debug>(of: impl Fn(u64) -> T) {
            let (ss, ds) = (11usize, 13usize);
            let src: Vec<T> = (0..8 * ss as u64).map(|i| of(i * 0x9e37_79b9_7f4a_7c15 + 1)).collect();
            let mut dst = vec![of(0); 8 * ds];
            // SAFETY: both buffers hold 8 rows (columns) of their strides.
            unsafe { super::tile(src.as_ptr(), ss as isize, dst.as_mut_ptr(), ds as isize) };
            for c in 0..8 {
                for r in 0..ds {
                    let want = if r < 8 { src[r * ss + c] } else { of(0) };
                    assert_eq!(dst[c * ds + r], want, "row {r} column {c}");
                }
            }
        }
        check(|i| i as u32);
        check(|i| i);
        check(|i| (i as u128) << 64 | (i ^ 0xabc) as u128);
        check(|i| i as u16);
    }

    /// A block of any rows and columns, of each size of value, either way
    /// between a tight and a loose stride, negative ones too: every value
    /// where it belongs, nothing else written.
    #[test]
    fn blocks_of_any_extent_land_transposed() {
        fn check<T: Copy + PartialEq + std::fmt::Debug>(of: impl Fn(u64) -> T) {
            for (rows, cols) in [(0, 5), (5, 0), (1, 1), (8, 8), (3, 17), (17, 3), (32, 32), (23, 41)] {
                for (ss, ds) in [(cols as isize, rows as isize + 3), (cols as isize + 5, -(rows as isize) - 1)] {
                    let src: Vec<T> = (0..(rows * ss.unsigned_abs()).max(1) as u64 + 8).map(|i| of(i * 0x9e37_79b9_7f4a_7c15 + 1)).collect();
                    let span = cols * ds.unsigned_abs() + 1;
                    let mut dst = vec![of(0); span];
                    let d0 = if ds < 0 { (span - rows.max(1)) as isize } else { 0 };
                    // SAFETY: the rows of `src` and the columns of `dst`
                    // lie in the buffers (sizes above), which are apart.
                    unsafe { super::block(src.as_ptr(), ss, dst.as_mut_ptr().offset(d0), ds, rows, cols) };
                    let mut want = vec![of(0); span];
                    for r in 0..rows {
                        for c in 0..cols {
                            want[(d0 + c as isize * ds + r as isize) as usize] = src[r * ss as usize + c];
                        }
                    }
                    assert_eq!(dst, want, "{rows} x {cols}, strides {ss} and {ds}");
                }
            }
        }
        check(|i| i as u32);
        check(|i| i);
        check(|i| (i as u128) << 64 | (i ^ 0xabc) as u128);
        check(|i| i as u8);
    }
}
