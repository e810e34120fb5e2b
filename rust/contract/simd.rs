//! The microkernels of float32 and float64 (6 rows of 16 and of 8), and
//! their lanes of lane order: on x86-64, AVX2's fused multiply-adds, the
//! tile held in 12 registers, the 16 lanes in 2 or 4; else portable loops.
//! Each sum takes its products one fused multiply-add at a time in
//! increasing number, exactly as [`Elem::fma`] chains them, so both forms
//! give the same bits.

#[cfg(not(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "fma")))]
use super::elem::{plain_kernel, Elem};

#[cfg(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "fma"))]
macro_rules! avx2_kernel {
    ($name:ident, $t:ty, $w:literal, $load:ident, $store:ident, $bcast:ident, $fmadd:ident, $zero:ident) => {
        /// The 6-row microkernel of [`Elem::kernel`](super::elem::Elem::kernel)
        /// on AVX2: two vectors of a row, each depth's row of `b` loaded
        /// once and each of `a`'s 6 values broadcast.
        ///
        /// # Safety
        /// As [`Elem::kernel`](super::elem::Elem::kernel).
        #[inline]
        pub unsafe fn $name(kc: usize, a: *const $t, b: *const $t, c: *mut $t, ldc: usize) {
            use core::arch::x86_64::*;
            // SAFETY (every load and store): the panels hold kc depths and
            // the tile lies in this thread's memory (caller); the
            // instructions are those of the compilation's target features.
            unsafe {
                let mut t = [[$zero(); 2]; 6];
                for (r, row) in t.iter_mut().enumerate() {
                    row[0] = $load(c.add(r * ldc));
                    row[1] = $load(c.add(r * ldc + $w));
                }
                for k in 0..kc {
                    let y0 = $load(b.add(k * 2 * $w));
                    let y1 = $load(b.add(k * 2 * $w + $w));
                    let x = a.add(k * 6);
                    for (r, row) in t.iter_mut().enumerate() {
                        let xr = $bcast(&*x.add(r));
                        row[0] = $fmadd(xr, y0, row[0]);
                        row[1] = $fmadd(xr, y1, row[1]);
                    }
                }
                for (r, row) in t.iter().enumerate() {
                    $store(c.add(r * ldc), row[0]);
                    $store(c.add(r * ldc + $w), row[1]);
                }
            }
        }
    };
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "fma"))]
avx2_kernel!(f32_6x16, f32, 8, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_broadcast_ss, _mm256_fmadd_ps, _mm256_setzero_ps);
#[cfg(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "fma"))]
avx2_kernel!(f64_6x8, f64, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_broadcast_sd, _mm256_fmadd_pd, _mm256_setzero_pd);

/// The portable forms, where the target lacks AVX2 and FMA.
#[cfg(not(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "fma")))]
mod portable {
    use super::*;
    pub struct F32;
    impl F32 {
        plain_kernel!(f32, 6, 16);
    }
    pub struct F64;
    impl F64 {
        plain_kernel!(f64, 6, 8);
    }
}

/// The float32 microkernel, portable form.
///
/// # Safety
/// As [`Elem::kernel`].
#[cfg(not(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "fma")))]
pub unsafe fn f32_6x16(kc: usize, a: *const f32, b: *const f32, c: *mut f32, ldc: usize) {
    // SAFETY: as this function's contract.
    unsafe { portable::F32::kernel(kc, a, b, c, ldc) }
}

/// The float64 microkernel, portable form.
///
/// # Safety
/// As [`Elem::kernel`].
#[cfg(not(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "fma")))]
pub unsafe fn f64_6x8(kc: usize, a: *const f64, b: *const f64, c: *mut f64, ldc: usize) {
    // SAFETY: as this function's contract.
    unsafe { portable::F64::kernel(kc, a, b, c, ldc) }
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
