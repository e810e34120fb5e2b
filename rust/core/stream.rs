//! Non-temporal stores: copies into a destination larger than the caches
//! write memory without first reading each line into the cache (half the
//! traffic of a store that misses), and leave what the caches hold alone.

/// Copies `bytes` bytes from `src` to `dst`, the whole cache lines of
/// `dst` by non-temporal stores. The stores reach memory in no set order
/// with other stores: a thread that streams calls [`fence`] before its
/// part of a call ends.
///
/// # Safety
/// Both ranges lie in valid memory and do not overlap, and no other
/// thread accesses them meanwhile.
#[inline]
pub unsafe fn stream(src: *const u8, dst: *mut u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let head = (dst.align_offset(64)).min(bytes);
        let lines = (bytes - head) / 64;
        // SAFETY: the head, the lines and the tail partition the two
        // ranges (caller); each line of dst is 64-byte aligned, so both of
        // its halves are 32-byte aligned as the stores need; AVX2 is part
        // of the crate's baseline (.cargo/config.toml).
        unsafe {
            std::ptr::copy_nonoverlapping(src, dst, head);
            for l in 0..lines {
                let (s, d) = (src.add(head + 64 * l), dst.add(head + 64 * l));
                _mm256_stream_si256(d as *mut __m256i, _mm256_loadu_si256(s as *const __m256i));
                _mm256_stream_si256(d.add(32) as *mut __m256i, _mm256_loadu_si256(s.add(32) as *const __m256i));
            }
            let done = head + 64 * lines;
            std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), bytes - done);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as this function's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, bytes)
    };
}

/// Orders the thread's earlier non-temporal stores ([`stream`]) before its
/// later stores, so that a part that streamed has written memory when the
/// pool sees it end.
#[inline]
pub fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a store fence has no operands; SSE is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_copies_every_byte_at_every_alignment() {
        let src: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        for off in [0, 1, 31, 32, 63] {
            for len in [0, 1, 63, 64, 65, 200, 1000, 3000] {
                let mut dst = vec![0u8; 4200];
                let at = dst.as_ptr().align_offset(64) + off;
                // SAFETY: both ranges lie in their vectors, apart.
                unsafe { stream(src.as_ptr().add(5), dst.as_mut_ptr().add(at), len) };
                fence();
                assert_eq!(&dst[at..at + len], &src[5..5 + len], "offset {off} length {len}");
                assert!(dst[..at].iter().chain(&dst[at + len..]).all(|&b| b == 0), "offset {off} length {len}");
            }
        }
    }
}
