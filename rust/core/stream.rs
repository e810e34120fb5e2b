//! Non-temporal stores: copies into a destination larger than the caches
//! write memory without first reading each line into the cache (half the
//! traffic of a store that misses), and leave what the caches hold alone.

/// Bytes of a cache line, the unit of a non-temporal store.
const LINE: usize = 64;

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
    let head = dst.align_offset(LINE).min(bytes);
    let lines = (bytes - head) / LINE;
    let done = head + LINE * lines;
    // SAFETY: the head, the lines and the tail partition the two ranges
    // (caller); the lines start on a line of dst.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, head);
        stream_lines(src.add(head), dst.add(head), lines);
        std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), bytes - done);
    }
}

/// Copies `lines` cache lines from `src` to `dst` by non-temporal stores.
///
/// # Safety
/// `dst` is aligned to [`LINE`] bytes; both ranges of `lines` lines lie in
/// valid memory and do not overlap, and no other thread accesses them
/// meanwhile.
#[inline]
unsafe fn stream_lines(src: *const u8, dst: *mut u8, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        for l in 0..lines {
            // SAFETY: line l lies in both ranges (caller); dst's lines are
            // 64-byte aligned, so both halves of each are 32-byte aligned as
            // the stores need; AVX2 is part of the crate's baseline
            // (.cargo/config.toml).
            unsafe {
                let (s, d) = (src.add(LINE * l), dst.add(LINE * l));
                _mm256_stream_si256(d as *mut __m256i, _mm256_loadu_si256(s as *const __m256i));
                _mm256_stream_si256(d.add(32) as *mut __m256i, _mm256_loadu_si256(s.add(32) as *const __m256i));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as this function's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, LINE * lines)
    };
}

/// Values [`fill`] computes into a buffer before storing them: whole lines
/// of every size that divides one, and a buffer that stays in the
/// first-level cache (a + b over 10M float32 ran as fast by chunks of 64
/// values as of 256, a quarter faster than by plain stores, where `f` is
/// inlined; computed by a call apart from the stores, half as fast).
const CHUNK: usize = 64;

/// Writes each value of `out`: `f(part, at)` writes the values of `part`,
/// the elements of `out` from `at` on. The whole cache lines of `out` go
/// by non-temporal stores, [`CHUNK`] values at a time computed into a
/// buffer in the first-level cache, so that `f`'s reads and the lines
/// written interleave as in a plain loop; the elements before the first
/// line and after the last are written in place, as is all of `out` where
/// `U`'s size does not divide a line or `out` is not aligned to it. As
/// with [`stream`], a thread that fills calls [`fence`] before its part of
/// a call ends.
#[inline]
pub fn fill<U: Copy + Default>(out: &mut [U], mut f: impl FnMut(&mut [U], usize)) {
    let size = std::mem::size_of::<U>();
    // The elements before the first line (usize::MAX where no element
    // starts one).
    let head = out.as_ptr().align_offset(LINE);
    if size == 0 || LINE % size != 0 || head >= out.len() {
        f(out, 0);
        return;
    }
    f(&mut out[..head], 0);
    // On a line, as the chunk it is stored to: a caller that lines up its
    // vectors with its destination's lines (`cast`'s float32 into int32)
    // finds no element before the first line.
    #[repr(align(64))]
    struct Lines<U>([U; CHUNK]);
    let mut buf = Lines([U::default(); CHUNK]);
    let buf = &mut buf.0;
    let mut at = head;
    while out.len() - at >= CHUNK {
        f(buf, at);
        // SAFETY: out[at..at + CHUNK] lies in out, which this thread holds
        // alone (&mut), and starts on a line (at - head is a multiple of
        // CHUNK, whose values fill whole lines as `size` divides one);
        // buf is another range of as many bytes.
        unsafe { stream_lines(buf.as_ptr().cast::<u8>(), out.as_mut_ptr().add(at).cast::<u8>(), CHUNK * size / LINE) };
        at += CHUNK;
    }
    f(&mut out[at..], at);
}

/// Orders the thread's earlier non-temporal stores ([`stream`], [`fill`])
/// before its later stores, so that a part that streamed has written
/// memory when the pool sees it end.
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

    /// `fill` of values `value(i)` into `len` elements `off` elements past
    /// the start of a buffer, for every offset from a line and lengths
    /// about a chunk and a line: every value written, nothing else.
    fn fills_every_value<U: Copy + Default + PartialEq + std::fmt::Debug>(value: impl Fn(usize) -> U) {
        for off in 0..=LINE {
            for len in [0, 1, 7, 63, 64, 65, 255, 256, 257, 600, 1000] {
                let mut v = vec![U::default(); 1100 + LINE];
                fill(&mut v[off..off + len], |part, at| part.iter_mut().enumerate().for_each(|(k, o)| *o = value(at + k)));
                fence();
                assert!((0..len).all(|i| v[off + i] == value(i)), "offset {off} length {len}");
                assert!(v[..off].iter().chain(&v[off + len..]).all(|&x| x == U::default()), "offset {off} length {len}");
            }
        }
    }

    #[test]
    fn filling_writes_every_value_at_every_alignment() {
        fills_every_value(|i| (i % 251 + 1) as u8);
        fills_every_value(|i| i as f32 + 0.5);
        fills_every_value(|i| -(i as f64) - 1.0);
        fills_every_value(|i| [i as u64 + 1, !(i as u64)]);
        // A size that divides no line: written in place.
        fills_every_value(|i| [i as u8 + 1; 3]);
    }
}
