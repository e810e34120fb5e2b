//! A bitonic sorting network on AVX-512 for short slices of keys of at
//! most 4 bytes: each element becomes one 64-bit word, its key in the high
//! 32 bits and its position in the low 32, so that the words are distinct
//! and their order is the stable order of the keys; the network sorts the
//! words of a slice, padded with words of all ones (above every element's)
//! to a power of 2, in vectors of 8 held in the cache, faster than a radix
//! sort's passes over so few elements. The order is unique, so the result
//! is the radix sort's bit for bit.

use super::order::Word;

/// Slices of at most this many elements take the network.
pub const MOST: usize = 2048;

/// The words a slice of `n` elements takes: `n` padded to a power of 2, at
/// least a vector of 8.
pub fn words(n: usize) -> usize {
    n.next_power_of_two().max(8)
}

/// Whether a slice of `n` elements with keys of `K` takes the network on
/// this host: AVX-512, keys of at most 4 bytes, `n` at most [`MOST`].
pub fn fits<K: Word>(n: usize) -> bool {
    cfg!(target_arch = "x86_64") && crate::core::isa::avx512() && K::BYTES <= 4 && n <= MOST
}

/// Sorts the elements `x` holds, stably by key, into `w` (of
/// [`words`]`(x.len())` words): word j holds the key of the j-th element
/// in order in its high 32 bits and its position in the low 32. Only
/// where [`fits`] says so.
pub fn sort<T: Word, K: Word>(x: &[T], key: impl Fn(T) -> K, w: &mut [u64]) {
    let n = x.len();
    assert!(fits::<K>(n) && w.len() == words(n), "the network sorts short slices on AVX-512");
    for (i, (w, &b)) in w.iter_mut().zip(x).enumerate() {
        *w = (key(b).low(0) as u64) << 32 | i as u64;
    }
    w[n..].fill(u64::MAX);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the host has AVX-512 F (fits); w's length is a power of 2 of
    // at least 8.
    unsafe {
        x86::bitonic(w)
    };
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// One stage of the network inside each vector: lanes `j` apart
    /// (1, 2 or 4) compared, the lesser kept in the lower lane but in the
    /// lanes `desc` marks, which keep the greater.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn stage(x: __m512i, j: usize, desc: u8) -> __m512i {
        let (w, hi) = match j {
            1 => (_mm512_shuffle_epi32::<0x4E>(x), 0xAA),
            2 => (_mm512_permutex_epi64::<0x4E>(x), 0xCC),
            _ => (_mm512_shuffle_i64x2::<0x4E>(x, x), 0xF0),
        };
        _mm512_mask_blend_epi64(hi ^ desc, _mm512_min_epu64(x, w), _mm512_max_epu64(x, w))
    }

    /// Merges in registers the `M` vectors from vector `base`, `q` apart,
    /// by the stages of the network that compare vectors `M / 2` to 1
    /// places apart among them (`q M / 2` to `q` vectors apart in `v`),
    /// descending where `desc`; where `last`, then the three stages inside
    /// each vector.
    ///
    /// # Safety
    /// The host has AVX-512 F; the vectors `base + i q`, `i < M`, lie in
    /// memory valid to read and write from `p`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn group<const M: usize>(p: *mut __m512i, base: usize, q: usize, desc: bool, last: bool) {
        let mut x = [_mm512_setzero_si512(); M];
        for (i, x) in x.iter_mut().enumerate() {
            // SAFETY: the vector lies in the memory (caller).
            *x = unsafe { _mm512_loadu_si512(p.add(base + i * q) as *const _) };
        }
        let mut dist = M / 2;
        while dist >= 1 {
            for i in (0..M).filter(|i| i & dist == 0) {
                let (lo, hi) = (_mm512_min_epu64(x[i], x[i + dist]), _mm512_max_epu64(x[i], x[i + dist]));
                (x[i], x[i + dist]) = if desc { (hi, lo) } else { (lo, hi) };
            }
            dist /= 2;
        }
        if last {
            let d = if desc { 0xFF } else { 0 };
            x.iter_mut().for_each(|x| *x = stage(stage(stage(*x, 4, d), 2, d), 1, d));
        }
        for (i, x) in x.iter().enumerate() {
            // SAFETY: as above.
            unsafe { _mm512_storeu_si512(p.add(base + i * q) as *mut _, *x) };
        }
    }

    /// Sorts `v` ascending by a bitonic network: for each size k of the
    /// sequences it merges (2, 4, … the length), each block of k elements
    /// ascending where its index has bit k clear, else descending. The
    /// stages of elements 8 or more apart compare whole vectors, up to
    /// three of them at once on vectors held in registers ([`group`]); the
    /// last three run inside each vector, with the last group.
    ///
    /// # Safety
    /// The host has AVX-512 F; `v`'s length is a power of 2 of at least 8.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn bitonic(v: &mut [u64]) {
        let n = v.len();
        let nv = n / 8;
        let p = v.as_mut_ptr() as *mut __m512i;
        // Blocks up to 8 sorted within each vector, in the direction of
        // its block of 16.
        for a in 0..nv {
            let d = if a & 1 != 0 { 0xFF } else { 0 };
            // SAFETY: vector a < nv = n / 8 lies in v, whose length is n.
            let mut x = stage(unsafe { _mm512_loadu_si512(p.add(a) as *const _) }, 1, 0xCC);
            x = stage(x, 2, 0xF0);
            x = stage(x, 1, 0xF0);
            x = stage(x, 4, d);
            x = stage(x, 2, d);
            // SAFETY: as above.
            unsafe { _mm512_storeu_si512(p.add(a) as *mut _, stage(x, 1, d)) };
        }
        let mut k = 16;
        while k <= n {
            // The stages comparing vectors k / 16 to 1 apart, from the top,
            // three at a time.
            let mut levels = (k / 16).trailing_zeros() as usize + 1;
            let mut top = k / 16;
            while levels > 0 {
                let g = levels.min(3);
                let q = top >> (g - 1);
                let mut block = 0;
                while block < nv {
                    for base in block..block + q {
                        // One direction for the group: its vectors lie in
                        // one block of k elements.
                        let desc = (base * 8) & k != 0;
                        // SAFETY: the group's vectors, base + i q for
                        // i < 2^g, lie in the block of q 2^g vectors from
                        // `block`, within v's nv.
                        unsafe {
                            match g {
                                3 => group::<8>(p, base, q, desc, q == 1),
                                2 => group::<4>(p, base, q, desc, q == 1),
                                _ => group::<2>(p, base, q, desc, q == 1),
                            }
                        }
                    }
                    block += q << g;
                }
                levels -= g;
                top = q / 2;
            }
            k *= 2;
        }
    }
}
