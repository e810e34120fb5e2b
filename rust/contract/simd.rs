//! The microkernels of the packed loop and the lanes of lane order.
//!
//! A microkernel runs a tile of `MR` rows of `NR` sums through `kc` depths
//! of packed panels: each depth's `NR` values of b loaded once, each of
//! a's `MR` values broadcast, one fused multiply-add of each into each sum
//! of its row. Every sum thus takes its products one fused multiply-add at
//! a time in increasing depth, exactly as [`Elem::fma`] chains them, so
//! every tile, every instruction set and the portable form give the same
//! bits. On x86-64 float32 and float64 have two: AVX2's of 6 rows of two
//! vectors (12 of the 16 registers), and AVX-512's of 12 rows of two
//! vectors (24 of the 32; 24 rows of one vector ran as fast on its own
//! but wasted a sixth of a 128-row product on its last panel), which a
//! call takes where
//! [`isa::avx512`](crate::core::isa::avx512) says so.

use super::elem::{Elem, Micro, Tile};
use crate::loops::column::{C32, C64};

/// The portable microkernel of any [`Elem`], of `MR` rows of `NR`: the tile
/// in locals while the depths run, each output's products fused in
/// increasing depth by [`Elem::fma`].
///
/// # Safety
/// As [`Kernel`](super::elem::Kernel).
pub unsafe fn plain<E: Elem, const MR: usize, const NR: usize>(kc: usize, a: *const E, b: *const E, tile: Tile<E>) {
    let mut t = [[E::ZERO; NR]; MR];
    // SAFETY (each access): `a` holds kc depths of MR values, `b` of NR,
    // and the tiles of MR rows of NR lie in this thread's memory (the
    // caller's contract).
    unsafe {
        if let Some((c, ldc)) = tile.from {
            for (r, row) in t.iter_mut().enumerate() {
                for (j, x) in row.iter_mut().enumerate() {
                    *x = *c.add(r * ldc + j);
                }
            }
        }
        for k in 0..kc {
            let (x, y) = (a.add(k * MR), b.add(k * NR));
            for (r, row) in t.iter_mut().enumerate() {
                let ar = *x.add(r);
                for (j, s) in row.iter_mut().enumerate() {
                    *s = E::fma(ar, *y.add(j), *s);
                }
            }
        }
        let (c, ldc) = tile.to;
        for (r, row) in t.iter().enumerate() {
            for (j, x) in row.iter().enumerate() {
                *c.add(r * ldc + j) = *x;
            }
        }
    }
}

/// Declares a vector microkernel `$name` of `$mr` rows of `$v` vectors of
/// `$w` lanes, compiled with the target features `$feat`.
#[cfg(target_arch = "x86_64")]
macro_rules! vector_kernel {
    ($name:ident, $t:ty, $mr:literal, $v:literal, $w:literal, $feat:literal,
     $load:ident, $store:ident, $set1:ident, $fmadd:ident, $zero:ident) => {
        /// A vector microkernel (see the module's documentation).
        ///
        /// # Safety
        /// As [`Kernel`](super::elem::Kernel), on a CPU with the features
        /// it is compiled for.
        #[target_feature(enable = $feat)]
        unsafe fn $name(kc: usize, a: *const $t, b: *const $t, tile: Tile<$t>) {
            use core::arch::x86_64::*;
            // SAFETY (every load and store): the panels hold kc depths and
            // the tiles lie in this thread's memory (the caller's
            // contract); the CPU has the instructions (likewise).
            unsafe {
                let mut t = [[$zero(); $v]; $mr];
                if let Some((c, ldc)) = tile.from {
                    for (r, row) in t.iter_mut().enumerate() {
                        for (v, s) in row.iter_mut().enumerate() {
                            *s = $load(c.add(r * ldc + v * $w));
                        }
                    }
                }
                for k in 0..kc {
                    let y: [_; $v] = core::array::from_fn(|v| $load(b.add((k * $v + v) * $w)));
                    let x = a.add(k * $mr);
                    for (r, row) in t.iter_mut().enumerate() {
                        let xr = $set1(*x.add(r));
                        for (s, &yv) in row.iter_mut().zip(&y) {
                            *s = $fmadd(xr, yv, *s);
                        }
                    }
                }
                let (c, ldc) = tile.to;
                for (r, row) in t.iter().enumerate() {
                    for (v, s) in row.iter().enumerate() {
                        $store(c.add(r * ldc + v * $w), *s);
                    }
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
vector_kernel!(f32_avx2, f32, 6, 2, 8, "avx2,fma", _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_setzero_ps);
#[cfg(target_arch = "x86_64")]
vector_kernel!(f64_avx2, f64, 6, 2, 4, "avx2,fma", _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_setzero_pd);
#[cfg(target_arch = "x86_64")]
vector_kernel!(f32_avx512, f32, 12, 2, 16, "avx512f", _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_setzero_ps);
#[cfg(target_arch = "x86_64")]
vector_kernel!(f64_avx512, f64, 12, 2, 8, "avx512f", _mm512_loadu_pd, _mm512_storeu_pd, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_setzero_pd);

/// Declares a complex vector microkernel `$name` of `$mr` rows of `$v`
/// vectors of `$w` parts (`$w / 2` complex values), compiled with the
/// target features `$feat`. Each depth's b values are loaded once, and
/// once more with their parts swapped and the real part (the swapped
/// imaginary part) negated, `(-im b, re b)`; each of a's values broadcasts
/// its real part, then its imaginary part, and a sum takes
/// `re a · (re b, im b)` fused, then `im a · (-im b, re b)` fused: part by
/// part, exactly the steps of the complex [`Elem::fma`]. Each sum thus
/// takes two dependent multiply-adds a depth, so AVX2's kernels keep 5
/// rows of two vectors (10 sums, all 16 registers with b's four and a's
/// two): with 4 rows the 8 chains of two had no slack over the
/// multiply-add's latency (a standalone copy on a Zen 3, panels from the
/// L2 cache: 5 rows 4-7% faster, paired runs).
#[cfg(target_arch = "x86_64")]
macro_rules! complex_kernel {
    ($name:ident, $c:ty, $f:ty, $mr:literal, $v:literal, $w:literal, $feat:literal,
     $load:ident, $store:ident, $set1:ident, $fmadd:ident, $zero:ident, $xor:ident, $swap:ident, $imm:literal) => {
        /// A complex vector microkernel (see `complex_kernel!`).
        ///
        /// # Safety
        /// As [`Kernel`](super::elem::Kernel), on a CPU with the features
        /// it is compiled for.
        #[target_feature(enable = $feat)]
        unsafe fn $name(kc: usize, a: *const $c, b: *const $c, tile: Tile<$c>) {
            use core::arch::x86_64::*;
            // A complex value is its two parts, real first (`Complex`
            // is `repr(C)`).
            let (a, b) = (a as *const $f, b as *const $f);
            let signs: [$f; $w] = core::array::from_fn(|i| if i % 2 == 0 { -0.0 } else { 0.0 });
            // SAFETY (every load and store): the panels hold kc depths and
            // the tile lies in this thread's memory (the caller's
            // contract); the CPU has the instructions (likewise).
            unsafe {
                let neg = $load(signs.as_ptr());
                let mut t = [[$zero(); $v]; $mr];
                if let Some((c, ldc)) = tile.from {
                    let (c, ldc) = (c as *const $f, 2 * ldc);
                    for (r, row) in t.iter_mut().enumerate() {
                        for (v, s) in row.iter_mut().enumerate() {
                            *s = $load(c.add(r * ldc + v * $w));
                        }
                    }
                }
                for k in 0..kc {
                    let y: [_; $v] = core::array::from_fn(|v| $load(b.add((k * $v + v) * $w)));
                    let ys: [_; $v] = core::array::from_fn(|v| $xor($swap::<$imm>(y[v]), neg));
                    let x = a.add(k * 2 * $mr);
                    for (r, row) in t.iter_mut().enumerate() {
                        let (xr, xi) = ($set1(*x.add(2 * r)), $set1(*x.add(2 * r + 1)));
                        for ((s, &yv), &ysv) in row.iter_mut().zip(&y).zip(&ys) {
                            *s = $fmadd(xi, ysv, $fmadd(xr, yv, *s));
                        }
                    }
                }
                let (c, ldc) = (tile.to.0 as *mut $f, 2 * tile.to.1);
                for (r, row) in t.iter().enumerate() {
                    for (v, s) in row.iter().enumerate() {
                        $store(c.add(r * ldc + v * $w), *s);
                    }
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
complex_kernel!(c32_avx2, C32, f32, 5, 2, 8, "avx2,fma", _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_setzero_ps, _mm256_xor_ps, _mm256_permute_ps, 0xB1);
#[cfg(target_arch = "x86_64")]
complex_kernel!(c64_avx2, C64, f64, 5, 2, 4, "avx2,fma", _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_setzero_pd, _mm256_xor_pd, _mm256_permute_pd, 0x5);
#[cfg(target_arch = "x86_64")]
complex_kernel!(c32_avx512, C32, f32, 12, 2, 16, "avx512f,avx512dq", _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_setzero_ps, _mm512_xor_ps, _mm512_permute_ps, 0xB1);
#[cfg(target_arch = "x86_64")]
complex_kernel!(c64_avx512, C64, f64, 12, 2, 8, "avx512f,avx512dq", _mm512_loadu_pd, _mm512_storeu_pd, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_setzero_pd, _mm512_xor_pd, _mm512_permute_pd, 0x55);

/// Declares `$name(wide)`, the microkernel of `$t` a call runs: AVX-512's
/// (`$wide`, of `$wmr` rows of `$wnr`) where `wide`, else AVX2's (`$narrow`,
/// the crate's x86-64 baseline), else the portable one of AVX2's tile.
macro_rules! micro {
    ($name:ident, $t:ty, $wide:ident, $wmr:literal, $wnr:literal, $narrow:ident, $mr:literal, $nr:literal) => {
        /// The microkernel of this register type (see `micro!`).
        pub fn $name(wide: bool) -> Micro<$t> {
            #[cfg(target_arch = "x86_64")]
            {
                if wide {
                    return Micro { mr: $wmr, nr: $wnr, run: $wide };
                }
                Micro { mr: $mr, nr: $nr, run: $narrow }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                let _ = wide;
                Micro { mr: $mr, nr: $nr, run: plain::<$t, $mr, $nr> }
            }
        }
    };
}
micro!(f32_micro, f32, f32_avx512, 12, 32, f32_avx2, 6, 16);
micro!(f64_micro, f64, f64_avx512, 12, 16, f64_avx2, 6, 8);
micro!(c32_micro, C32, c32_avx512, 12, 16, c32_avx2, 5, 8);
micro!(c64_micro, C64, c64_avx512, 12, 8, c64_avx2, 5, 4);

/// The int32 microkernel: the portable one, 4 rows of 16.
pub fn i32_micro(_wide: bool) -> Micro<i32> {
    Micro { mr: 4, nr: 16, run: plain::<i32, 4, 16> }
}

/// The int64 microkernel: the portable one, 4 rows of 8.
pub fn i64_micro(_wide: bool) -> Micro<i64> {
    Micro { mr: 4, nr: 8, run: plain::<i64, 4, 8> }
}

/// The 16 lanes of lane order over the whole rows of 16 products of `a`
/// and `b` (of one length), lane l taking product l of each row fused into
/// it, from `lanes` as they are. The tail past the last whole row is the
/// caller's.
macro_rules! lanes {
    ($name:ident, $t:ty, $w:literal, $load:ident, $store:ident, $fmadd:ident) => {
        #[inline]
        pub fn $name(a: &[$t], b: &[$t], lanes: &mut [$t; 16]) {
            let rows = a.len().min(b.len()) / 16;
            #[cfg(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "fma"))]
            {
                use core::arch::x86_64::*;
                const V: usize = 16 / $w;
                // SAFETY: every load reads within a row of `a` or `b`,
                // whole rows lying in the slices; the stores write `lanes`.
                unsafe {
                    let mut acc: [_; V] = core::array::from_fn(|v| $load(lanes.as_ptr().add(v * $w)));
                    for r in 0..rows {
                        let (x, y) = (a.as_ptr().add(16 * r), b.as_ptr().add(16 * r));
                        for (v, s) in acc.iter_mut().enumerate() {
                            *s = $fmadd($load(x.add(v * $w)), $load(y.add(v * $w)), *s);
                        }
                    }
                    for (v, s) in acc.iter().enumerate() {
                        $store(lanes.as_mut_ptr().add(v * $w), *s);
                    }
                }
            }
            #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "fma")))]
            for r in 0..rows {
                for l in 0..16 {
                    lanes[l] = a[16 * r + l].mul_add(b[16 * r + l], lanes[l]);
                }
            }
        }
    };
}
lanes!(f32_lanes, f32, 8, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_fmadd_ps);
lanes!(f64_lanes, f64, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_fmadd_pd);

/// [`f32_lanes`]'s steps for four rows of products sharing `b`: row r's
/// whole rows of 16 products of `a[r]` and `b` into `lanes[r]`, lane l
/// taking product l of each fused into it, from `lanes` as they are; `b`
/// read once for the four. The tail past the last whole row of the
/// shortest is the caller's.
macro_rules! lanes4 {
    ($name:ident, $t:ty, $w:literal, $load:ident, $store:ident, $fmadd:ident) => {
        #[inline]
        pub fn $name(a: [&[$t]; 4], b: &[$t], lanes: &mut [[$t; 16]; 4]) {
            let rows = a.iter().fold(b.len(), |n, x| n.min(x.len())) / 16;
            #[cfg(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "fma"))]
            {
                use core::arch::x86_64::*;
                const V: usize = 16 / $w;
                // SAFETY: every load reads within a whole row of 16 of a
                // slice (`rows` rows lie in each); the stores write `lanes`.
                unsafe {
                    let mut acc: [[_; V]; 4] = core::array::from_fn(|r| core::array::from_fn(|v| $load(lanes[r].as_ptr().add(v * $w))));
                    for q in 0..rows {
                        let y: [_; V] = core::array::from_fn(|v| $load(b.as_ptr().add(16 * q + v * $w)));
                        for (x, s) in a.iter().zip(acc.iter_mut()) {
                            let x = x.as_ptr().add(16 * q);
                            for (v, sv) in s.iter_mut().enumerate() {
                                *sv = $fmadd($load(x.add(v * $w)), y[v], *sv);
                            }
                        }
                    }
                    for (r, s) in acc.iter().enumerate() {
                        for (v, sv) in s.iter().enumerate() {
                            $store(lanes[r].as_mut_ptr().add(v * $w), *sv);
                        }
                    }
                }
            }
            #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "fma")))]
            for (x, lanes) in a.iter().zip(lanes.iter_mut()) {
                for q in 0..rows {
                    for l in 0..16 {
                        lanes[l] = x[16 * q + l].mul_add(b[16 * q + l], lanes[l]);
                    }
                }
            }
        }
    };
}
lanes4!(f32_lanes4, f32, 8, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_fmadd_ps);
lanes4!(f64_lanes4, f64, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_fmadd_pd);

/// Deals depths `0..kc` (a multiple of 8) of four rows of float32 into a
/// panel: row r's depth k to `out[k w + r]`, four rows' values of a depth
/// written together (a 4 by 8 transpose in registers on AVX2).
///
/// # Safety
/// Each row holds `kc` values; `out` holds `(kc - 1) w + 4` values.
#[inline]
pub unsafe fn deal4_f32(rows: [*const f32; 4], kc: usize, out: *mut f32, w: usize) {
    debug_assert!(kc.is_multiple_of(8));
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    // SAFETY: the loads read depths k..k + 8 < kc of each row, the stores
    // write out[(k + j) w..][..4] for k + j < kc (the caller's contract).
    unsafe {
        use core::arch::x86_64::*;
        for k in (0..kc).step_by(8) {
            let [r0, r1, r2, r3] = rows.map(|r| _mm256_loadu_ps(r.add(k)));
            let (t0, t1) = (_mm256_unpacklo_ps(r0, r1), _mm256_unpackhi_ps(r0, r1));
            let (t2, t3) = (_mm256_unpacklo_ps(r2, r3), _mm256_unpackhi_ps(r2, r3));
            // Depths j and j + 4 of the four rows, for j = 0, 1, 2, 3.
            let d = [_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xEE>(t0, t2), _mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xEE>(t1, t3)];
            for (j, v) in d.into_iter().enumerate() {
                _mm_storeu_ps(out.add((k + j) * w), _mm256_castps256_ps128(v));
                _mm_storeu_ps(out.add((k + j + 4) * w), _mm256_extractf128_ps::<1>(v));
            }
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    // SAFETY: as above.
    unsafe {
        for k in 0..kc {
            for (r, row) in rows.iter().enumerate() {
                *out.add(k * w + r) = *row.add(k);
            }
        }
    }
}

/// [`deal4_f32`] of float64: depths `0..kc` (a multiple of 4) of four
/// rows, row r's depth k to `out[k w + r]` (a 4 by 4 transpose).
///
/// # Safety
/// As [`deal4_f32`].
#[inline]
pub unsafe fn deal4_f64(rows: [*const f64; 4], kc: usize, out: *mut f64, w: usize) {
    debug_assert!(kc.is_multiple_of(4));
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    // SAFETY: as in `deal4_f32`.
    unsafe {
        use core::arch::x86_64::*;
        for k in (0..kc).step_by(4) {
            let [r0, r1, r2, r3] = rows.map(|r| _mm256_loadu_pd(r.add(k)));
            let (t0, t1) = (_mm256_unpacklo_pd(r0, r1), _mm256_unpackhi_pd(r0, r1));
            let (t2, t3) = (_mm256_unpacklo_pd(r2, r3), _mm256_unpackhi_pd(r2, r3));
            let d = [
                _mm256_permute2f128_pd::<0x20>(t0, t2),
                _mm256_permute2f128_pd::<0x20>(t1, t3),
                _mm256_permute2f128_pd::<0x31>(t0, t2),
                _mm256_permute2f128_pd::<0x31>(t1, t3),
            ];
            for (j, v) in d.into_iter().enumerate() {
                _mm256_storeu_pd(out.add((k + j) * w), v);
            }
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    // SAFETY: as above.
    unsafe {
        for k in 0..kc {
            for (r, row) in rows.iter().enumerate() {
                *out.add(k * w + r) = *row.add(k);
            }
        }
    }
}

/// [`f32_lanes4`]'s steps for eight rows sharing `b`, on AVX-512 (a row's
/// 16 lanes one vector), for a matrix too large for the caches: each line
/// of each row asked for 2 KiB ahead, so that the eight streams from memory
/// keep more loads in flight than the CPU's own prefetching does (on a Zen
/// 5 every line 2 KiB ahead streamed some 20% faster than every fourth line
/// 4 KiB ahead). `rows` whole rows of 16 products of each of `a` and
/// `b` into `lanes`, from `lanes` as they are.
///
/// # Safety
/// Each of `a` and `b` holds `16 rows` values; the CPU has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub unsafe fn f32_lanes8_streaming(a: [*const f32; 8], b: *const f32, rows: usize, lanes: &mut [[f32; 16]; 8]) {
    use core::arch::x86_64::*;
    const AHEAD: usize = 512;
    // SAFETY: every load reads within a whole row of 16 of a slice
    // (`rows` rows lie in each, the caller's contract); a prefetch reads
    // nothing the program sees and never faults, whatever the address.
    unsafe {
        let mut acc: [__m512; 8] = core::array::from_fn(|r| _mm512_loadu_ps(lanes[r].as_ptr()));
        for q in 0..rows {
            let y = _mm512_loadu_ps(b.add(16 * q));
            for (x, s) in a.iter().zip(acc.iter_mut()) {
                _mm_prefetch::<_MM_HINT_T0>(x.wrapping_add(16 * q + AHEAD).cast::<i8>());
                *s = _mm512_fmadd_ps(_mm512_loadu_ps(x.add(16 * q)), y, *s);
            }
        }
        for (l, s) in lanes.iter_mut().zip(acc) {
            _mm512_storeu_ps(l.as_mut_ptr(), s);
        }
    }
}
