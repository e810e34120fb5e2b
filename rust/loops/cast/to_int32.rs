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
//! casts (`FromFloat`) compiles to seven. Every answer is Rust's `as`,
//! which the few elements AVX2's vectors leave take.
//!
//! Over an operand in the L2 cache the stores bound the loop: each line
//! written is asked for [`AHEAD`] elements before, and where x and out lie
//! alike within their lines the vectors start at out's first whole line.
//! On the Xeon of `bench/RESULTS.md`, AVX-512, 100K elements in the L2
//! cache: ~8.3 µs plain, ~7.7 with both; ~11.5 plain where the stores
//! straddle lines.

/// 2^31, the least float32 past int32's greatest value.
const TWO_31: f32 = 2_147_483_648.0;

/// Elements a store's line is asked for ahead of it: four lines of int32,
/// on their way while the vectors before them convert.
const AHEAD: usize = 64;

/// `x[i] as i32` into `out[i]` for each i (the slices of one length),
/// AVX-512's form where `wide` and the CPU has it, else AVX2's. Inlined:
/// a streamed cast calls it a chunk at a time (`stream::fill`).
#[inline]
pub(super) fn convert(x: &[f32], out: &mut [i32], wide: bool) {
    assert_eq!(x.len(), out.len(), "to_int32::convert: the slices differ in length");
    // Where x and out lie alike within their cache lines, the elements
    // before out's first whole line go first, so that no load or store of
    // a whole vector straddles two lines; elsewhere one of the two would
    // whatever the start (aligning out's stores then ran slower: ~9.1 µs
    // against ~8.5 over 100K elements in the L2 cache).
    let head = if (x.as_ptr() as usize ^ out.as_ptr() as usize).is_multiple_of(64) { out.as_ptr().align_offset(64).min(x.len()) } else { 0 };
    #[cfg(target_arch = "x86_64")]
    {
        if wide && crate::core::isa::avx512() {
            // SAFETY: `avx512()` detected AVX-512 F on this CPU.
            return unsafe { avx512(x, out, head) };
        }
        #[cfg(target_feature = "avx2")]
        return avx2(x, out, head);
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

/// Asks for the line of `out` [`AHEAD`] elements past `i`, to be written.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ask_ahead(out: &[i32], i: usize) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
    // SAFETY: a prefetch reads and writes nothing the program sees and
    // never faults, whatever the address.
    unsafe { _mm_prefetch::<_MM_HINT_ET0>(out.as_ptr().wrapping_add(i + AHEAD).cast()) };
}

/// The conversion by vectors of sixteen, the `head` first elements and
/// the last few masked.
///
/// # Safety
/// The CPU has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn avx512(x: &[f32], out: &mut [i32], head: usize) {
    use core::arch::x86_64::*;
    let (limit, ones) = (_mm512_set1_ps(TWO_31), _mm512_set1_epi32(-1));
    let one = |v: __m512| {
        let ordered = _mm512_cmp_ps_mask::<_CMP_ORD_Q>(v, v);
        let past = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(v, limit);
        let t = _mm512_maskz_cvttps_epi32(ordered, v);
        _mm512_mask_xor_epi32(t, past, t, ones)
    };
    let n = x.len();
    // SAFETY: the masked load reads and the masked store writes the
    // elements i..i + k alone, k <= 16 and i + k <= n, the slices' length.
    let part = |i: usize, k: usize, out: &mut [i32]| unsafe {
        let m = ((1u32 << k) - 1) as __mmask16;
        _mm512_mask_storeu_epi32(out.as_mut_ptr().add(i).cast(), m, one(_mm512_maskz_loadu_ps(m, x.as_ptr().add(i))))
    };
    if head > 0 {
        part(0, head, out);
    }
    let mut i = head;
    while i + 16 <= n {
        ask_ahead(out, i);
        // SAFETY: i + 16 <= n, the slices' length.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(i).cast(), one(_mm512_loadu_ps(x.as_ptr().add(i)))) };
        i += 16;
    }
    if i < n {
        part(i, n - i, out);
    }
}

/// The conversion by pairs of vectors of eight, the `head` first elements
/// and the last few by [`plain`].
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
fn avx2(x: &[f32], out: &mut [i32], head: usize) {
    use core::arch::x86_64::*;
    plain(&x[..head], &mut out[..head]);
    let whole = head + (x.len() - head) / 16 * 16;
    // SAFETY: the crate is compiled for AVX2; each load and store lies
    // within the first `whole` elements of the slices.
    unsafe {
        let limit = _mm256_set1_ps(TWO_31);
        for i in (head..whole).step_by(16) {
            ask_ahead(out, i);
            for j in [i, i + 8] {
                let v = _mm256_loadu_ps(x.as_ptr().add(j));
                let ordered = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_ORD_Q>(v, v));
                let past = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GE_OQ>(v, limit));
                let t = _mm256_and_si256(_mm256_xor_si256(_mm256_cvttps_epi32(v), past), ordered);
                _mm256_storeu_si256(out.as_mut_ptr().add(j).cast(), t);
            }
        }
    }
    plain(&x[whole..], &mut out[whole..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every form, on slices starting anywhere within a cache line (alike
    /// and unlike in x and out), of every length to a few vectors past a
    /// line, of the awkward values, against `as`; the elements around the
    /// slice untouched.
    #[test]
    fn converts_as_rust_does_at_any_offset_and_length() {
        let edges = [
            f32::NAN, -f32::NAN, f32::from_bits(0x7fc0_0001), f32::from_bits(0xff80_0001), f32::INFINITY, f32::NEG_INFINITY,
            0.0, -0.0, f32::from_bits(1), -f32::from_bits(1), 0.5, -0.5, 0.999_999_94, -1.999_999_9, 2.5, -2.5,
            TWO_31, -TWO_31, 2_147_483_520.0, -2_147_483_520.0, 4.0e9, -4.0e9, f32::MAX, f32::MIN, 12345.678, -98765.43,
        ];
        let src: Vec<f32> = (0..240).map(|i| edges[(i * 7) % edges.len()] * if i % 3 == 0 { 1.0 } else { 0.75 }).collect();
        // x starts `xo` elements past a line of src.
        let line = src.as_ptr().align_offset(64);
        crate::kinds::wide::on_each_compilation(|isa| {
            for wide in [false, true] {
                for (xo, oo) in [(0, 0), (3, 3), (5, 0), (0, 11), (15, 15), (7, 9)] {
                    for n in (0..70).chain([150, 183]) {
                        let x = &src[line + xo..line + xo + n];
                        let mut buf = vec![-7i32; n + 40];
                        // A start of `oo` elements past a line of buf.
                        let at = buf.as_ptr().align_offset(64) + oo;
                        convert(x, &mut buf[at..at + n], wide);
                        let want: Vec<i32> = x.iter().map(|&v| v as i32).collect();
                        assert_eq!(&buf[at..at + n], &want[..], "{isa} wide {wide}: x +{xo}, out +{oo}, n {n}");
                        assert!(buf[..at].iter().chain(&buf[at + n..]).all(|&v| v == -7), "{isa}: a write outside the slice");
                    }
                }
            }
        });
    }
}
