//! A bitonic sorting network for short slices of keys of at most 4 bytes:
//! each element becomes one 64-bit word, [`EXPONENT`]'s bit above its key
//! above its position ([`POSITION_BITS`] bits), so that the words are
//! distinct and their order is the stable order of the keys; the network
//! sorts the words of a slice, padded with [`PAD`] (above every element's)
//! to a power of 2, in vectors held in the cache, faster than a radix
//! sort's passes over so few elements. The order is unique, so the result
//! is the radix sort's bit for bit, on either instruction set.
//!
//! Every word is the bits of a positive normal float64 (exponent field 1,
//! so that no setting of the CPU flushes it to zero), and the order of
//! such floats is the order of their bits, so the network compares words
//! by the float minimum and maximum: AVX2 has no 64-bit integer min or max
//! (a compare and two blends made each pair), and AVX-512's float ones
//! issue on two ports of Intel's server cores, by Intel's tables, where its
//! unsigned integer ones issue on one. Rows of [10000; 1000] float32 so
//! sorted in 56 ms rather than 73 on AVX-512, 82 rather than 113 on AVX2
//! (Rust alone, one thread, Xeon model 207).
//!
//! One network ([`x86::bitonic`]) runs on either of two register types
//! ([`x86::Lanes`]): AVX-512's 8 words a vector and AVX2's 4.

use super::order::Word;

/// Slices of at most this many elements take the network.
pub const MOST: usize = 2048;

/// Bits of a word below its key: its position's, [`MOST`] positions.
pub const POSITION_BITS: u32 = 20;

/// The bit above every word's key: a float64's exponent field of 1, which
/// makes the word a normal float (never a subnormal, an infinity or a NaN).
pub const EXPONENT: u64 = 1 << 52;

/// The padding's word: the bits of +inf, above every element's.
pub const PAD: u64 = 0x7FF0_0000_0000_0000;

const _: () = assert!(MOST <= 1 << POSITION_BITS && 32 + POSITION_BITS <= 52);

/// The words a slice of `n` elements takes: `n` padded to a power of 2, at
/// least 8 (a vector on either instruction set).
pub fn words(n: usize) -> usize {
    n.next_power_of_two().max(8)
}

/// The position of the element whose word is `w`.
#[inline(always)]
pub fn position(w: u64) -> usize {
    (w & ((1 << POSITION_BITS) - 1)) as usize
}

/// Whether a slice of `n` elements with keys of `K` takes the network on
/// this host: x86-64 with AVX-512 or the crate's AVX2 baseline, keys of at
/// most 4 bytes, `n` at most [`MOST`].
pub fn fits<K: Word>(n: usize) -> bool {
    let isa = cfg!(all(target_arch = "x86_64", target_feature = "avx2")) || crate::core::isa::avx512();
    cfg!(target_arch = "x86_64") && isa && K::BYTES <= 4 && n <= MOST
}

/// Sorts the `n` elements `read(i)` gives (`i < n`), stably by key, into
/// `w` (of [`words`]`(n)` words): word j is the j-th element's in order
/// ([`position`] gives its position). Only where [`fits`] says so.
#[inline(always)]
pub fn sort<T: Word, K: Word>(n: usize, read: impl Fn(usize) -> T, key: impl Fn(T) -> K, w: &mut [u64]) {
    sort_between(n, read, key, w, |_, _| ())
}

/// [`sort`], calling `between(part, parts)` for each part `0..parts` in
/// turn while the network runs, between its stages: a caller asks there
/// for the lines of the next slice a part at a time, so that the requests
/// overlap the network's work (asked for all at once, they filled the
/// core's buffers of misses and stalled it: a quarter of the time of rows
/// of [10000; 1000] float32).
#[inline(always)]
pub fn sort_between<T: Word, K: Word>(n: usize, read: impl Fn(usize) -> T, key: impl Fn(T) -> K, w: &mut [u64], mut between: impl FnMut(usize, usize)) {
    assert!(fits::<K>(n) && w.len() == words(n), "the network sorts short slices on x86-64");
    #[cfg(target_arch = "x86_64")]
    {
        let wide = crate::core::isa::avx512();
        if wide {
            // SAFETY: the host has AVX-512 F, BW, DQ and VL (avx512).
            unsafe { x86::pack_avx512(&mut w[..n], &read, &key) };
        } else {
            pack(&mut w[..n], &read, &key);
        }
        w[n..].fill(PAD);
        if wide {
            // SAFETY: the host has AVX-512 F (avx512); w's length is a
            // power of 2 of at least 8.
            unsafe { x86::bitonic_avx512(w, &mut between) };
        } else {
            // SAFETY: the host has AVX2, the crate's baseline (fits); w's
            // length is a power of 2 of at least 8.
            unsafe { x86::bitonic_avx2(w, &mut between) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = between;
}

/// Writes in `w` the words of the elements `read(i)`, `i < w.len()`:
/// [`EXPONENT`]'s bit, the key, the position.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn pack<T: Word, K: Word>(w: &mut [u64], read: impl Fn(usize) -> T, key: impl Fn(T) -> K) {
    for (i, w) in w.iter_mut().enumerate() {
        *w = EXPONENT | (key(read(i)).low(0) as u64) << POSITION_BITS | i as u64;
    }
}

/// Writes the elements of the sorted words `w` (the first of a slice that
/// [`sort`] sorted) in order: entry j's element, 4 bytes read at its
/// position from `x`, as `values[j]` and its position as `positions[j]`,
/// by vectors of words (the elements gathered) where the host has AVX-512
/// or AVX2, one by one past the last whole vector. Rows of [10000; 1000]
/// float32 so sorted in 53 ms rather than 58 on AVX-512, 78 rather than
/// 84 on AVX2 (Rust alone, one thread, Xeon model 207).
///
/// # Safety
/// `x` holds the slice's elements (every word's position lies below its
/// length), `values` `w.len()` 4-byte entries and `positions` as many
/// 8-byte ones, one after the other, neither overlapping `x` or the other;
/// only where [`fits`] says the network runs.
pub unsafe fn put_in_order(w: &[u64], x: *const u32, values: *mut u32, positions: *mut i64) {
    #[cfg(target_arch = "x86_64")]
    let done = if crate::core::isa::avx512() {
        // SAFETY: the host has AVX-512 F; the memory as the caller says.
        unsafe { x86::put_avx512(w, x, values, positions) }
    } else {
        // SAFETY: the host has AVX2 (fits); likewise.
        unsafe { x86::put_avx2(w, x, values, positions) }
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    for (j, &word) in w.iter().enumerate().skip(done) {
        let i = position(word);
        // SAFETY: i lies below the slice's length and j below w's (caller).
        unsafe {
            values.add(j).write_unaligned(x.add(i).read_unaligned());
            positions.add(j).write_unaligned(i as i64);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// A register of 64-bit words, the operations the network takes on
    /// it; its methods are inlined into [`bitonic`]'s compilation for the
    /// register's instruction set.
    ///
    /// # Safety
    /// Every method needs the host to have the register's instruction set.
    pub trait Lanes: Copy {
        /// The words a register holds, 4 or 8.
        const N: usize;
        /// Whether [`group`] takes its direction as a constant, so that the
        /// exchanges' blends are of constant lanes: on AVX2 a blend by an
        /// immediate, one instruction where one by a register of lanes may
        /// take two or three (rows of [10000; 1000] float32 so sorted in
        /// 62 ms rather than 74, Rust alone, one thread, Xeon model 207);
        /// on AVX-512, LLVM turns blends by constant masks into permutes,
        /// which compete with the exchanges' own (56 ms rather than 52).
        const CONSTANT_DIRECTION: bool;
        /// The most stages across vectors that [`group`] runs on vectors
        /// held in registers, at most 4: 2^GROUP vectors and the two a
        /// comparison makes within the instruction set's registers (16 and
        /// 2 of AVX-512's 32; 8 and 2 of AVX2's 16).
        const GROUP: usize;
        /// Whether the first runs are of two vectors (2N words) where a
        /// slice holds as many ([`first_runs`] of 2N vectors, one sort of
        /// 2N words across them, in place of runs of one vector merged in
        /// pairs); only for AVX2's registers of 4 words. On AVX2, rows of
        /// [10000; 1000] float32 so sorted in ~48 ms rather than ~51; tried
        /// on AVX-512, its 16 vectors and the transposes' registers spilled,
        /// ~40 ms rather than ~39 (Rust alone, one thread, Xeon model 207).
        const PAIRED_RUNS: bool;
        /// Loads the register from `p`, which may be unaligned.
        ///
        /// # Safety
        /// The instruction set; `N` words readable from `p`.
        unsafe fn load(p: *const u64) -> Self;
        /// Stores the register at `p`, which may be unaligned.
        ///
        /// # Safety
        /// The instruction set; `N` words writable from `p`.
        unsafe fn store(self, p: *mut u64);
        /// The lesser and the greater word of each lane of `self` and `o`.
        ///
        /// # Safety
        /// The instruction set.
        unsafe fn min_max(self, o: Self) -> (Self, Self);
        /// Compares the lanes `j` apart (`j` a power of 2 below `N`), the
        /// lanes `great` marks (bit i for lane i) keeping the greater
        /// word, the others the lesser.
        ///
        /// # Safety
        /// The instruction set.
        unsafe fn exchange(self, j: usize, great: u8) -> Self;
        /// Writes the positions of the `N` words from `w` (their low
        /// [`POSITION_BITS`](super::POSITION_BITS)) from `positions`, and
        /// the 4-byte elements of `x` at those positions from `values`.
        ///
        /// # Safety
        /// The instruction set; `N` words readable from `w`, the elements
        /// at their positions from `x`, `N` entries writable from `values`
        /// and from `positions`.
        unsafe fn put(w: *const u64, x: *const u32, values: *mut u32, positions: *mut i64);
        /// Transposes the `N` registers `r`, calling `put(c, column)` with
        /// lane c of each in turn, reversed for an odd c.
        ///
        /// # Safety
        /// The instruction set; `r` holds `N` registers.
        unsafe fn transpose(r: &[Self], put: impl FnMut(usize, Self));
        /// The stages inside each of the registers `a` and `b` that
        /// merge its `N` words (a bitonic sequence each): ascending, or
        /// descending where `desc`.
        ///
        /// # Safety
        /// The instruction set.
        unsafe fn merge_two(a: Self, b: Self, desc: bool) -> (Self, Self);
    }

    /// Optimal sorting networks of 4 and 8 inputs (5 and 19 comparators),
    /// and Batcher's odd-even merge of two sorted runs of 4 (9): the pairs
    /// compared, in order, the lesser kept in the first.
    const NET4: [(usize, usize); 5] = [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)];
    const NET8: [(usize, usize); 19] =
        [(0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7), (0, 1), (2, 3), (4, 5), (6, 7), (2, 4), (3, 5), (1, 4), (3, 6), (1, 2), (3, 4), (5, 6)];
    const MERGE8: [(usize, usize); 9] = [(0, 4), (2, 6), (2, 4), (1, 5), (3, 7), (3, 5), (1, 2), (3, 4), (5, 6)];

    /// The network of `m` inputs, 4 or 8.
    const fn net(m: usize) -> &'static [(usize, usize)] {
        if m == 4 { &NET4 } else { &NET8 }
    }

    /// Sorts the `M` vectors from `p` (`M` is `N`, or 8 of AVX2's 4 words)
    /// into runs of `M` words, `M / N` vectors each, ascending in the runs
    /// of even index and descending in the others: each lane's `M` words
    /// sorted across the vectors by [`columns`], then the vectors
    /// transposed `N` at a time, so that each run is a column (the words a
    /// run holds differ from those a vector held, which no merge after
    /// minds). In place of sorting each vector by the exchanges inside it,
    /// rows of [10000; 1000] float32 so sorted in 73 ms rather than 79 on
    /// AVX2, 51 rather than 53 on AVX-512 (Rust alone, one thread, Xeon
    /// model 207); runs of two vectors where [`Lanes::PAIRED_RUNS`] says
    /// so.
    ///
    /// # Safety
    /// The instruction set; `M * N` words readable and writable from `p`.
    #[inline(always)]
    unsafe fn first_runs<V: Lanes, const M: usize>(p: *mut u64) {
        // SAFETY (loads, stores): the words (caller); the instruction set
        // (caller).
        unsafe {
            debug_assert!(M == V::N || M == 8 && V::N == 4, "runs of a vector, or of two of AVX2's");
            let mut x: [V; M] = std::array::from_fn(|i| V::load(p.add(i * V::N)));
            if M == V::N {
                columns(&mut x, net(M));
            } else {
                let (lo, hi) = x.split_at_mut(V::N);
                columns(lo, net(V::N));
                columns(hi, net(V::N));
                columns(&mut x, &MERGE8);
            }
            let runs = M / V::N;
            // Run c's vector h: block h's column c, or for a descending
            // run (its column reversed) the blocks taken from the last;
            // each block stored as it is transposed, which frees its
            // registers.
            for (b, block) in x.chunks(V::N).enumerate() {
                V::transpose(block, |c, column| {
                    let h = if c % 2 == 0 { b } else { runs - 1 - b };
                    column.store(p.add((c * runs + h) * V::N));
                });
            }
        }
    }

    /// Runs the comparators `net` on each lane of the registers `x` across
    /// them, the lesser word kept in the register of lower index: a
    /// network of `x.len()` inputs sorts each lane ascending from `x[0]`.
    ///
    /// # Safety
    /// The registers' instruction set.
    #[inline(always)]
    unsafe fn columns<V: Lanes>(x: &mut [V], net: &[(usize, usize)]) {
        for &(i, j) in net {
            // SAFETY: the instruction set (caller).
            (x[i], x[j]) = unsafe { x[i].min_max(x[j]) };
        }
    }

    /// AVX-512's register: 8 words as float64s.
    #[derive(Clone, Copy)]
    pub struct Z(__m512d);

    impl Lanes for Z {
        const N: usize = 8;
        const CONSTANT_DIRECTION: bool = false;
        const GROUP: usize = 4;
        const PAIRED_RUNS: bool = false;
        #[inline(always)]
        unsafe fn load(p: *const u64) -> Z {
            // SAFETY: AVX-512 F and the words (caller).
            Z(unsafe { _mm512_loadu_pd(p.cast()) })
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut u64) {
            // SAFETY: as in load.
            unsafe { _mm512_storeu_pd(p.cast(), self.0) }
        }
        #[inline(always)]
        unsafe fn min_max(self, o: Z) -> (Z, Z) {
            // SAFETY: AVX-512 F (caller).
            unsafe { (Z(_mm512_min_pd(self.0, o.0)), Z(_mm512_max_pd(self.0, o.0))) }
        }
        #[inline(always)]
        unsafe fn exchange(self, j: usize, great: u8) -> Z {
            let x = self.0;
            // SAFETY: AVX-512 F (caller).
            unsafe {
                let w = match j {
                    1 => _mm512_permute_pd::<0x55>(x),
                    2 => _mm512_permutex_pd::<0x4E>(x),
                    _ => _mm512_shuffle_f64x2::<0x4E>(x, x),
                };
                Z(_mm512_mask_blend_pd(great, _mm512_min_pd(x, w), _mm512_max_pd(x, w)))
            }
        }
        #[inline(always)]
        unsafe fn put(w: *const u64, x: *const u32, values: *mut u32, positions: *mut i64) {
            // SAFETY: AVX-512 F and the memory (caller).
            unsafe {
                let p = _mm512_and_si512(_mm512_loadu_si512(w.cast()), _mm512_set1_epi64((1 << super::POSITION_BITS) - 1));
                _mm512_storeu_si512(positions.cast(), p);
                _mm256_storeu_si256(values.cast(), _mm512_i64gather_epi32::<4>(p, x.cast()));
            }
        }
        #[inline(always)]
        unsafe fn transpose(regs: &[Z], mut put: impl FnMut(usize, Z)) {
            // SAFETY: AVX-512 F (caller).
            unsafe {
                // Lanes of two registers, 0-7 the first's, 8-15 the second's.
                let pick = |lanes: [i64; 8]| _mm512_loadu_si512(lanes.as_ptr().cast());
                let r: [__m512d; 8] = std::array::from_fn(|i| regs[i].0);
                // Pairs of rows: lanes 0, 2, 4, 6 of each, then 1, 3, 5, 7.
                let lo: [__m512d; 4] = std::array::from_fn(|q| _mm512_unpacklo_pd(r[2 * q], r[2 * q + 1]));
                let hi: [__m512d; 4] = std::array::from_fn(|q| _mm512_unpackhi_pd(r[2 * q], r[2 * q + 1]));
                // Four rows' lanes c and c + 4, for c = 0, 2 (from lo), 1, 3
                // (from hi), of rows 0-3 (h = 0) and 4-7 (h = 1).
                let (even, odd) = (pick([0, 1, 8, 9, 4, 5, 12, 13]), pick([2, 3, 10, 11, 6, 7, 14, 15]));
                let u = |h: usize, c: usize| {
                    let (a, b) = if c.is_multiple_of(2) { (lo[2 * h], lo[2 * h + 1]) } else { (hi[2 * h], hi[2 * h + 1]) };
                    _mm512_permutex2var_pd(a, if c < 2 { even } else { odd }, b)
                };
                let (u0, u2, u1, u3) = (u(0, 0), u(0, 2), u(0, 1), u(0, 3));
                let (v0, v2, v1, v3) = (u(1, 0), u(1, 2), u(1, 1), u(1, 3));
                // Column c of the eight rows: the low or high halves of a
                // pair, reversed for an odd c.
                let (low, high) = (pick([0, 1, 2, 3, 8, 9, 10, 11]), pick([4, 5, 6, 7, 12, 13, 14, 15]));
                let (low_rev, high_rev) = (pick([11, 10, 9, 8, 3, 2, 1, 0]), pick([15, 14, 13, 12, 7, 6, 5, 4]));
                let cols: [__m512d; 8] = [
                    _mm512_permutex2var_pd(u0, low, v0),
                    _mm512_permutex2var_pd(u1, low_rev, v1),
                    _mm512_permutex2var_pd(u2, low, v2),
                    _mm512_permutex2var_pd(u3, low_rev, v3),
                    _mm512_permutex2var_pd(u0, high, v0),
                    _mm512_permutex2var_pd(u1, high_rev, v1),
                    _mm512_permutex2var_pd(u2, high, v2),
                    _mm512_permutex2var_pd(u3, high_rev, v3),
                ];
                for (c, column) in cols.into_iter().enumerate() {
                    put(c, Z(column));
                }
            }
        }
        /// Two registers at a time, in three stages of two shuffles and a
        /// minimum and maximum each, the lanes compared brought into line
        /// across the two registers (words 4, then 2, then 1 apart), and a
        /// permute each at the end, which puts the words in order, or in
        /// reverse where `desc` (the words are distinct, and a descending
        /// merge's result is the reverse of the ascending one's): 14
        /// instructions where each register alone took a permute, a
        /// minimum, a maximum and a blend a stage, 24: rows of [10000;
        /// 1000] float32 so sorted in ~41 ms rather than ~45.5 (Rust alone,
        /// one thread, Xeon model 207).
        #[inline(always)]
        unsafe fn merge_two(a: Z, b: Z, desc: bool) -> (Z, Z) {
            // SAFETY: AVX-512 F (caller).
            unsafe {
                let pick = |lanes: [i64; 8]| _mm512_loadu_si512(lanes.as_ptr().cast());
                // Words l and l + 4 of a (lanes 0-3) and of b (lanes 4-7).
                let (x, y) = (_mm512_shuffle_f64x2::<0x44>(a.0, b.0), _mm512_shuffle_f64x2::<0xEE>(a.0, b.0));
                let (lo, hi) = (_mm512_min_pd(x, y), _mm512_max_pd(x, y));
                // lo: a0-3, b0-3; hi: a4-7, b4-7. Words l and l + 2: a0 a1
                // b0 b1 a4 a5 b4 b5 against a2 a3 b2 b3 a6 a7 b6 b7.
                let (x, y) = (_mm512_shuffle_f64x2::<0x88>(lo, hi), _mm512_shuffle_f64x2::<0xDD>(lo, hi));
                let (lo, hi) = (_mm512_min_pd(x, y), _mm512_max_pd(x, y));
                // Words l and l + 1: a0 a2 b0 b2 a4 a6 b4 b6 against the
                // next word of each.
                let (x, y) = (_mm512_unpacklo_pd(lo, hi), _mm512_unpackhi_pd(lo, hi));
                let (lo, hi) = (_mm512_min_pd(x, y), _mm512_max_pd(x, y));
                // Lanes 0-7 of lo, 8-15 of hi: a's words in lanes 0, 8, 1,
                // 9, 4, 12, 5, 13, b's in 2, 10, 3, 11, 6, 14, 7, 15.
                let (ia, ib) = if desc {
                    (pick([13, 5, 12, 4, 9, 1, 8, 0]), pick([15, 7, 14, 6, 11, 3, 10, 2]))
                } else {
                    (pick([0, 8, 1, 9, 4, 12, 5, 13]), pick([2, 10, 3, 11, 6, 14, 7, 15]))
                };
                (Z(_mm512_permutex2var_pd(lo, ia, hi)), Z(_mm512_permutex2var_pd(lo, ib, hi)))
            }
        }
    }

    /// AVX2's register: 4 words as float64s.
    #[derive(Clone, Copy)]
    pub struct Y(__m256d);

    impl Lanes for Y {
        const N: usize = 4;
        const CONSTANT_DIRECTION: bool = true;
        const GROUP: usize = 3;
        const PAIRED_RUNS: bool = true;
        #[inline(always)]
        unsafe fn load(p: *const u64) -> Y {
            // SAFETY: AVX and the words (caller).
            Y(unsafe { _mm256_loadu_pd(p.cast()) })
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut u64) {
            // SAFETY: as in load.
            unsafe { _mm256_storeu_pd(p.cast(), self.0) }
        }
        #[inline(always)]
        unsafe fn min_max(self, o: Y) -> (Y, Y) {
            // SAFETY: AVX (caller).
            unsafe { (Y(_mm256_min_pd(self.0, o.0)), Y(_mm256_max_pd(self.0, o.0))) }
        }
        #[inline(always)]
        unsafe fn exchange(self, j: usize, great: u8) -> Y {
            let x = self.0;
            // SAFETY: AVX2 (caller).
            unsafe {
                let w = match j {
                    1 => _mm256_permute_pd::<0x5>(x),
                    _ => _mm256_permute4x64_pd::<0x4E>(x),
                };
                // The lanes `great` marks, all ones (a constant where the
                // network is inlined).
                let bit = _mm256_set_epi64x(8, 4, 2, 1);
                let keep_great = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_set1_epi64x(great as i64), bit), bit);
                Y(_mm256_blendv_pd(_mm256_min_pd(x, w), _mm256_max_pd(x, w), _mm256_castsi256_pd(keep_great)))
            }
        }
        #[inline(always)]
        unsafe fn put(w: *const u64, x: *const u32, values: *mut u32, positions: *mut i64) {
            // SAFETY: AVX2 and the memory (caller).
            unsafe {
                let p = _mm256_and_si256(_mm256_loadu_si256(w.cast()), _mm256_set1_epi64x((1 << super::POSITION_BITS) - 1));
                _mm256_storeu_si256(positions.cast(), p);
                _mm_storeu_si128(values.cast(), _mm256_i64gather_epi32::<4>(x.cast(), p));
            }
        }
        #[inline(always)]
        unsafe fn transpose(regs: &[Y], mut put: impl FnMut(usize, Y)) {
            // SAFETY: AVX2 (caller).
            unsafe {
                let r: [__m256d; 4] = std::array::from_fn(|i| regs[i].0);
                // Lanes 0 and 2 of rows 0, 1 (t0) and 2, 3 (t2); 1 and 3 (t1, t3).
                let (t0, t1) = (_mm256_unpacklo_pd(r[0], r[1]), _mm256_unpackhi_pd(r[0], r[1]));
                let (t2, t3) = (_mm256_unpacklo_pd(r[2], r[3]), _mm256_unpackhi_pd(r[2], r[3]));
                // Column c of the four rows, reversed for an odd c.
                let cols = [
                    _mm256_permute2f128_pd::<0x20>(t0, t2),
                    _mm256_permute4x64_pd::<0x1B>(_mm256_permute2f128_pd::<0x20>(t1, t3)),
                    _mm256_permute2f128_pd::<0x31>(t0, t2),
                    _mm256_permute4x64_pd::<0x1B>(_mm256_permute2f128_pd::<0x31>(t1, t3)),
                ];
                for (c, column) in cols.into_iter().enumerate() {
                    put(c, Y(column));
                }
            }
        }
        /// Two registers at a time, as AVX-512's: two stages of two
        /// shuffles, a minimum and a maximum (the lesser kept first, or the
        /// greater where `desc`, a constant here), then four shuffles that
        /// put the words back in order; 12 instructions for the pair where
        /// the two alone took 16 (8 each): rows of [10000; 1000] float32 so
        /// sorted in ~52 ms rather than ~54.3 (Rust alone, one thread, Xeon
        /// model 207).
        #[inline(always)]
        unsafe fn merge_two(a: Y, b: Y, desc: bool) -> (Y, Y) {
            // SAFETY: AVX2 (caller).
            unsafe {
                // Words 2 apart: a0 a1 b0 b1 against a2 a3 b2 b3; then 1
                // apart: a0 a2 b0 b2 against a1 a3 b1 b3.
                let mm = |x, y| if desc { (_mm256_max_pd(x, y), _mm256_min_pd(x, y)) } else { (_mm256_min_pd(x, y), _mm256_max_pd(x, y)) };
                let (x, y) = (_mm256_permute2f128_pd::<0x20>(a.0, b.0), _mm256_permute2f128_pd::<0x31>(a.0, b.0));
                let (lo, hi) = mm(x, y);
                let (x, y) = (_mm256_unpacklo_pd(lo, hi), _mm256_unpackhi_pd(lo, hi));
                let (lo, hi) = mm(x, y);
                let (t0, t1) = (_mm256_unpacklo_pd(lo, hi), _mm256_unpackhi_pd(lo, hi));
                (Y(_mm256_permute2f128_pd::<0x20>(t0, t1)), Y(_mm256_permute2f128_pd::<0x31>(t0, t1)))
            }
        }
    }

    /// The lanes of a register of `n` words whose index has bit `b` set, a
    /// bit each.
    #[inline(always)]
    fn lanes_with(b: usize, n: usize) -> u8 {
        (0..n).filter(|i| i & b != 0).fold(0, |m, i| m | 1u8 << i)
    }

    /// The stages inside a register that merge its blocks of `k` lanes
    /// (`k` a power of 2 from 2 to `N`): lanes `k / 2` to 1 apart compared,
    /// each lane keeping the lesser where it lies in the lower half of its
    /// pair, but in the lanes `desc` marks.
    ///
    /// # Safety
    /// The register's instruction set.
    #[inline(always)]
    unsafe fn merge_in<V: Lanes>(mut x: V, k: usize, desc: u8) -> V {
        // A loop of a constant count, which unrolls, whatever k.
        for s in (0..V::N.trailing_zeros()).rev() {
            if 1 << s < k {
                // SAFETY: the instruction set (caller).
                x = unsafe { x.exchange(1 << s, lanes_with(1 << s, V::N) ^ desc) };
            }
        }
        x
    }

    /// Merges in registers the `M` vectors from vector `base`, `q` apart,
    /// by the stages of the network that compare vectors `M / 2` to 1
    /// places apart among them (`q M / 2` to `q` vectors apart in `v`),
    /// descending where `DESC` or `desc`; where `last`, then the stages
    /// inside each vector, two vectors at a time ([`Lanes::merge_two`];
    /// see also [`Lanes::CONSTANT_DIRECTION`]).
    ///
    /// # Safety
    /// The register's instruction set; the vectors `base + i q`, `i < M`,
    /// lie in memory valid to read and write from `p`.
    #[inline(always)]
    unsafe fn group<V: Lanes, const M: usize, const DESC: bool>(p: *mut u64, base: usize, q: usize, desc: bool, last: bool) {
        let desc = DESC || desc;
        // SAFETY: the vector lies in the memory (caller).
        let mut x: [V; M] = std::array::from_fn(|i| unsafe { V::load(p.add((base + i * q) * V::N)) });
        // Loops of constant counts, which unroll: the vectors stay in
        // registers.
        for s in (0..M.trailing_zeros()).rev() {
            let dist = 1 << s;
            for i in 0..M {
                if i & dist == 0 {
                    // SAFETY: the instruction set (caller).
                    let (lo, hi) = unsafe { x[i].min_max(x[i + dist]) };
                    (x[i], x[i + dist]) = if desc { (hi, lo) } else { (lo, hi) };
                }
            }
        }
        if last {
            for i in (0..M).step_by(2) {
                // SAFETY: the instruction set (caller).
                (x[i], x[i + 1]) = unsafe { V::merge_two(x[i], x[i + 1], desc) };
            }
        }
        for (i, x) in x.iter().enumerate() {
            // SAFETY: as above.
            unsafe { x.store(p.add((base + i * q) * V::N)) };
        }
    }

    /// Sorts `v` ascending by a bitonic network: for each size k of the
    /// sequences it merges (2, 4, … the length), each block of k elements
    /// ascending where its index has bit k clear, else descending. The
    /// stages of elements a vector or more apart compare whole vectors, up
    /// to [`Lanes::GROUP`] of them at once on vectors held in registers
    /// ([`group`]), a merge's split evenly where it takes two groups or
    /// more (five stages on AVX-512: 3 and 2, not 4 and 1; rows of [10000;
    /// 1000] float32 so sorted in 40.3 ms rather than 41.2 with three
    /// stages a group at most, Rust alone, one thread, Xeon model 207); the
    /// last ones run inside each vector, with the last group.
    ///
    /// `between(part, parts)` is called for each part in turn: once before
    /// the merges of runs of each length from 2N (N a register's words)
    /// on (part 0 after the first runs where those are of 2N words), or
    /// once at the start where there are none. It comes as `&mut
    /// dyn`: a closure's type as a parameter of the `#[target_feature]`
    /// functions below left the registers' methods uninlined there (rows
    /// of [10000; 1000] float32 25 times slower).
    ///
    /// # Safety
    /// The register's instruction set; `v`'s length is a power of 2 of at
    /// least `V::N`.
    #[inline(always)]
    unsafe fn bitonic<V: Lanes>(v: &mut [u64], between: &mut dyn FnMut(usize, usize)) {
        let n = v.len();
        let nv = n / V::N;
        let parts = nv.trailing_zeros() as usize;
        if parts == 0 {
            between(0, 1);
        }
        let p = v.as_mut_ptr();
        const { assert!(V::N == 4 || V::N == 8, "registers of 4 or 8 words") };
        const { assert!(!V::PAIRED_RUNS || V::N == 4, "first runs of two registers of 4 words") };
        // Runs of two vectors each from 2N vectors at a time where
        // PAIRED_RUNS and there are as many; else runs of a vector each,
        // descending in the vectors of odd index: from N vectors at a time
        // where there are as many, else within each vector, a block of k
        // lanes descending where the lanes' index in v has bit k set. (The
        // merges written out, which a loop over k would not be.)
        let mut k = 2 * V::N;
        if V::PAIRED_RUNS && nv >= 2 * V::N {
            for g in (0..nv).step_by(2 * V::N) {
                // SAFETY: vectors g..g + 2N lie in v (nv, a power of 2 of
                // at least 2N, is a multiple of 2N); the instruction set
                // (caller).
                unsafe { first_runs::<V, 8>(p.add(g * V::N)) };
            }
            // The merges of runs of 2N words are done.
            between(0, parts);
            k *= 2;
        } else if nv >= V::N {
            for g in (0..nv).step_by(V::N) {
                // SAFETY: as above, vectors g..g + N.
                unsafe {
                    match V::N {
                        4 => first_runs::<V, 4>(p.add(g * V::N)),
                        _ => first_runs::<V, 8>(p.add(g * V::N)),
                    }
                }
            }
        } else {
            for a in 0..nv {
                let d = if a & 1 != 0 { u8::MAX } else { 0 };
                // SAFETY: vector a < nv = n / N lies in v, whose length is n;
                // the instruction set (caller).
                unsafe {
                    let mut x = merge_in(V::load(p.add(a * V::N)), 2, lanes_with(2, V::N));
                    if V::N == 8 {
                        x = merge_in(x, 4, lanes_with(4, V::N));
                    }
                    merge_in(x, V::N, d).store(p.add(a * V::N));
                }
            }
        }
        while k <= n {
            between((k / (2 * V::N)).trailing_zeros() as usize, parts);
            // The stages comparing vectors k / 2N to 1 apart, from the
            // top, GROUP at a time at most.
            let mut levels = (k / (2 * V::N)).trailing_zeros() as usize + 1;
            let mut top = k / (2 * V::N);
            while levels > 0 {
                let g = if levels > V::GROUP { levels.div_ceil(2).min(V::GROUP) } else { levels };
                let q = top >> (g - 1);
                let mut block = 0;
                while block < nv {
                    for base in block..block + q {
                        // One direction for the group: its vectors lie in
                        // one block of k elements.
                        let desc = (base * V::N) & k != 0;
                        // SAFETY: the group's vectors, base + i q for
                        // i < 2^g, lie in the block of q 2^g vectors from
                        // `block`, within v's nv.
                        unsafe {
                            let (cd, rd) = if V::CONSTANT_DIRECTION { (desc, false) } else { (false, desc) };
                            match (g, cd) {
                                (4, false) => group::<V, 16, false>(p, base, q, rd, q == 1),
                                (4, true) => group::<V, 16, true>(p, base, q, rd, q == 1),
                                (3, false) => group::<V, 8, false>(p, base, q, rd, q == 1),
                                (3, true) => group::<V, 8, true>(p, base, q, rd, q == 1),
                                (2, false) => group::<V, 4, false>(p, base, q, rd, q == 1),
                                (2, true) => group::<V, 4, true>(p, base, q, rd, q == 1),
                                (_, false) => group::<V, 2, false>(p, base, q, rd, q == 1),
                                (_, true) => group::<V, 2, true>(p, base, q, rd, q == 1),
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

    /// [`bitonic`] on AVX-512's registers.
    ///
    /// # Safety
    /// The host has AVX-512 F; `v`'s length is a power of 2 of at least 8.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn bitonic_avx512(v: &mut [u64], between: &mut dyn FnMut(usize, usize)) {
        // SAFETY: as the caller says.
        unsafe { bitonic::<Z>(v, between) }
    }

    /// [`put_in_order`](super::put_in_order)'s whole vectors of words;
    /// returns how many words it wrote.
    ///
    /// # Safety
    /// The register's instruction set; the memory as `put_in_order`'s.
    #[inline(always)]
    unsafe fn put<V: Lanes>(w: &[u64], x: *const u32, values: *mut u32, positions: *mut i64) -> usize {
        let whole = w.len() - w.len() % V::N;
        for j in (0..whole).step_by(V::N) {
            // SAFETY: words j..j + N lie in w (j + N <= whole), and
            // entries j..j + N in values and positions (caller).
            unsafe { V::put(w.as_ptr().add(j), x, values.add(j), positions.add(j)) };
        }
        whole
    }

    /// [`put`] on AVX-512's registers.
    ///
    /// # Safety
    /// The host has AVX-512 F; the memory as `put_in_order`'s.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn put_avx512(w: &[u64], x: *const u32, values: *mut u32, positions: *mut i64) -> usize {
        // SAFETY: as the caller says.
        unsafe { put::<Z>(w, x, values, positions) }
    }

    /// [`pack`](super::pack) compiled for AVX-512, whose vectors of the
    /// loop (read, key, word) are twice the width of the crate's AVX2
    /// baseline: rows of [10000; 1000] float32 so sorted in ~38.5 ms rather
    /// than ~40.4 (Rust alone, one thread, Xeon model 207).
    ///
    /// # Safety
    /// The host has AVX-512 F, BW, DQ and VL.
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
    pub unsafe fn pack_avx512<T: super::Word, K: super::Word>(w: &mut [u64], read: impl Fn(usize) -> T, key: impl Fn(T) -> K) {
        super::pack(w, read, key)
    }

    /// [`put`] on AVX2's registers.
    ///
    /// # Safety
    /// The host has AVX2; the memory as `put_in_order`'s.
    #[target_feature(enable = "avx2")]
    pub unsafe fn put_avx2(w: &[u64], x: *const u32, values: *mut u32, positions: *mut i64) -> usize {
        // SAFETY: as the caller says.
        unsafe { put::<Y>(w, x, values, positions) }
    }

    /// [`bitonic`] on AVX2's registers.
    ///
    /// # Safety
    /// The host has AVX2; `v`'s length is a power of 2 of at least 4.
    #[target_feature(enable = "avx2")]
    pub unsafe fn bitonic_avx2(v: &mut [u64], between: &mut dyn FnMut(usize, usize)) {
        // SAFETY: as the caller says.
        unsafe { bitonic::<Y>(v, between) }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// The comparators of `net` on `v`, indices from `at`.
        fn apply(v: &mut [u8], net: &[(usize, usize)], at: usize) {
            for &(i, j) in net {
                if v[at + i] > v[at + j] {
                    v.swap(at + i, at + j);
                }
            }
        }

        /// Each network, and each merge after its halves' network, sorts
        /// every input of zeros and ones, so every input (the 0-1
        /// principle).
        #[test]
        fn networks_sort_every_input_of_zeros_and_ones() {
            type Steps = &'static [(&'static [(usize, usize)], usize)];
            let cases: [(usize, Steps); 3] = [
                (4, &[(&NET4, 0)]),
                (8, &[(&NET8, 0)]),
                (8, &[(&NET4, 0), (&NET4, 4), (&MERGE8, 0)]),
            ];
            for (m, steps) in cases {
                for bits in 0u32..1 << m {
                    let mut v: Vec<u8> = (0..m).map(|i| (bits >> i & 1) as u8).collect();
                    let mut sorted = v.clone();
                    sorted.sort();
                    steps.iter().for_each(|&(net, at)| apply(&mut v, net, at));
                    assert_eq!(v, sorted, "{m} inputs, {} steps, input {bits:b}", steps.len());
                }
            }
        }
    }
}
