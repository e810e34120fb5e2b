//! float32 into int32 by the conversion instruction itself, its
//! out-of-range answers mended by masks.
//!
//! x86's truncating conversion gives the right int32 for every float32 in
//! int32's range and `i32::MIN` for any other (a NaN, ±∞, a magnitude
//! from 2^31 up). Of those, a NaN must give 0 and a value from +2^31 up
//! `i32::MAX`, which is `i32::MIN` with every bit flipped; the rest want
//! `i32::MIN` itself. So: convert, zero where the value is a NaN, flip
//! every bit where it is at least 2^31: four instructions a vector on
//! AVX-512, five on AVX2, where the clamp-then-convert form of the other
//! casts (`FromFloat`) compiles to seven. On the Xeon of
//! `bench/RESULTS.md`, 1024 elements in the L1 cache: AVX2's ~108 -> ~84
//! ns, AVX-512's unchanged (~75 ns, both bound by their two compares);
//! `map`'s cast of 3162x3162 from memory (the AVX2 form) ~5.7-7.3 ->
//! ~4.8-5.2 ms. Every answer is Rust's `as`, which the remainder of a
//! slice on AVX2 takes.

/// 2^31, the least float32 past int32's greatest value.
const TWO_31: f32 = 2_147_483_648.0;

/// `x[i] as i32` into `out[i]` for each i (the slices of one length),
/// AVX-512's form where `wide` and the CPU has it, else AVX2's.
pub(super) fn convert(x: &[f32], out: &mut [i32], wide: bool) {
    assert_eq!(x.len(), out.len(), "to_int32::convert: the slices differ in length");
    #[cfg(target_arch = "x86_64")]
    {
        if wide && crate::core::isa::avx512() {
            // SAFETY: `avx512()` detected AVX-512 F on this CPU.
            return unsafe { avx512(x, out) };
        }
        #[cfg(target_feature = "avx2")]
        return avx2(x, out);
    }
    #[allow(unreachable_code)]
    plain(x, out)
}

/// Rust's `as` of each value: the answer every form gives.
fn plain(x: &[f32], out: &mut [i32]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = v as i32;
    }
}

/// The conversion by vectors of sixteen, the last few masked.
///
/// # Safety
/// The CPU has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn avx512(x: &[f32], out: &mut [i32]) {
    use core::arch::x86_64::*;
    let (limit, ones) = (_mm512_set1_ps(TWO_31), _mm512_set1_epi32(-1));
    let one = |v: __m512| {
        let ordered = _mm512_cmp_ps_mask::<_CMP_ORD_Q>(v, v);
        let past = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(v, limit);
        let t = _mm512_maskz_cvttps_epi32(ordered, v);
        _mm512_mask_xor_epi32(t, past, t, ones)
    };
    let n = x.len();
    let mut i = 0;
    // SAFETY (each load and store): i + 16 <= n, the slices' length.
    while i + 16 <= n {
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(i).cast(), one(_mm512_loadu_ps(x.as_ptr().add(i)))) };
        i += 16;
    }
    if i < n {
        let m: __mmask16 = (1u16 << (n - i)) - 1;
        // SAFETY: the masked load reads and the masked store writes the
        // n - i < 16 elements from i alone, which lie in the slices.
        unsafe { _mm512_mask_storeu_epi32(out.as_mut_ptr().add(i).cast(), m, one(_mm512_maskz_loadu_ps(m, x.as_ptr().add(i)))) };
    }
}

/// The conversion by vectors of eight, the last few by [`plain`].
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
fn avx2(x: &[f32], out: &mut [i32]) {
    use core::arch::x86_64::*;
    let whole = x.len() / 8 * 8;
    // SAFETY: the crate is compiled for AVX2; each load and store lies
    // within the first `whole` elements of the slices.
    unsafe {
        let limit = _mm256_set1_ps(TWO_31);
        for i in (0..whole).step_by(8) {
            let v = _mm256_loadu_ps(x.as_ptr().add(i));
            let ordered = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_ORD_Q>(v, v));
            let past = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GE_OQ>(v, limit));
            let t = _mm256_and_si256(_mm256_xor_si256(_mm256_cvttps_epi32(v), past), ordered);
            _mm256_storeu_si256(out.as_mut_ptr().add(i).cast(), t);
        }
    }
    plain(&x[whole..], &mut out[whole..]);
}
