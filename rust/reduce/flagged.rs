//! Max and Min of a float run by the CPU's own max and min (AVX-512's
//! vectors where the CPU has them, else AVX2's), one instruction a vector,
//! the NaNs seen by the invalid-operation flag that those instructions
//! raise.
//!
//! `vmaxps` and its kin give the greater of two numbers, the bits of one of
//! them, but pass a NaN over and, between +0 and -0, give their second
//! operand; they raise MXCSR's invalid-operation flag (IE) for a NaN of
//! either kind and sign. So a pass that clears IE, takes the vector max of
//! the run and reads IE back has Max's bits wherever IE stays clear and the
//! result is not a zero; a NaN makes Max a NaN; a zero, whose sign the
//! instruction does not order, sends the run to the integer spans
//! (`super::spans`), as does a thread whose MXCSR treats subnormal inputs as
//! zero (DAZ) or traps on invalid operations, or a CPU (an emulator) that
//! the first call finds not raising IE as the architecture says. One
//! instruction a vector, where the spans take two, streams faster: Max
//! over 10M float32 ran 2.8 to 2.4 ms in its first call after 20 ms of
//! other work (numpy's: 2.8 ms), the same from L3 (1.45 ms), and 3.1 to
//! 2.2 µs over 100K in L2; on AVX2's vectors, 3.2 to 2.6 ms and 3.3 to 3.1
//! µs.

/// MXCSR's invalid-operation flag.
#[cfg(target_arch = "x86_64")]
const IE: u32 = 1;
/// MXCSR's denormals-are-zeros control.
#[cfg(target_arch = "x86_64")]
const DAZ: u32 = 1 << 6;
/// MXCSR's invalid-operation mask: set, the flag rises without a trap.
#[cfg(target_arch = "x86_64")]
const IM: u32 = 1 << 7;

/// Whether this thread's MXCSR lets `flagged!`'s passes run: invalid
/// operations masked, subnormal inputs kept.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn mxcsr_allows() -> bool {
    let mut csr = 0u32;
    // SAFETY: stmxcsr writes the 4 bytes of `csr` and changes nothing else.
    unsafe { core::arch::asm!("stmxcsr dword ptr [{}]", in(reg) &mut csr as *mut u32, options(nostack, preserves_flags)) };
    csr & (DAZ | IM) == IM
}

/// `asm!` of the template pieces `[...]` (each followed by a comma) with
/// IE cleared before them, MXCSR stored at `$after` after them, then
/// restored from `$saved`, where it was first stored: no control bit
/// changes, and the flags are left as they were. `$saved` and `$after`
/// point to a u32 each; the operands follow.
#[cfg(target_arch = "x86_64")]
macro_rules! ie_cleared_asm {
    ($saved:expr, $after:expr, [$($body:tt)*], $($operands:tt)*) => {
        core::arch::asm!(
            "stmxcsr dword ptr [{saved}]",
            "mov {t:e}, dword ptr [{saved}]",
            "and {t:e}, {clear}",
            "mov dword ptr [{after}], {t:e}",
            "ldmxcsr dword ptr [{after}]",
            $($body)*
            "stmxcsr dword ptr [{after}]",
            "ldmxcsr dword ptr [{saved}]",
            saved = in(reg) $saved,
            after = in(reg) $after,
            clear = const !IE as i32,
            t = out(reg) _,
            $($operands)*
            options(nostack),
        )
    };
}

/// Whether the CPU raises IE for `vmaxps` on a quiet NaN, and not without
/// one, as the architecture says (an emulator might not): probed once, on
/// the first call that reaches it, with an instruction of its own (a second
/// caller of the passes kept LLVM from inlining them, a tenth slower over
/// 100K); the passes are kept off where it does not. The caller has checked
/// `mxcsr_allows`, so the probe's NaN raises the flag without a trap.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn raises_ie() -> bool {
    use core::sync::atomic::{AtomicU8, Ordering::Relaxed};
    /// 0 before the probe, then 1 where the CPU passed it, 2 where not.
    static PROBED: AtomicU8 = AtomicU8::new(0);
    /// IE after `vmaxps` of a vector of ones with a vector of `x`, from
    /// IE clear.
    #[cold]
    #[target_feature(enable = "avx2")]
    unsafe fn flag_after(x: f32) -> bool {
        let (ones, of_x) = ([1.0f32; 8], [x; 8]);
        let (mut saved, mut after) = (0u32, 0u32);
        // SAFETY: reads the two arrays of 32 bytes, writes the two u32 it is
        // given and one vector register; MXCSR as `ie_cleared_asm!` says,
        // invalid operations masked (see above).
        unsafe {
            ie_cleared_asm!(
                &mut saved as *mut u32,
                &mut after as *mut u32,
                ["vmovups {v}, ymmword ptr [{a}]", "vmaxps {v}, {v}, ymmword ptr [{b}]",],
                a = in(reg) ones.as_ptr(),
                b = in(reg) of_x.as_ptr(),
                v = out(ymm_reg) _,
            );
        }
        after & IE != 0
    }
    match PROBED.load(Relaxed) {
        0 => {
            // SAFETY: AVX2, all that `flag_after` enables, is in the
            // crate's baseline, which the library checks the host for.
            let passed = unsafe { !flag_after(2.0) && flag_after(f32::NAN) };
            PROBED.store(if passed { 1 } else { 2 }, Relaxed);
            passed
        }
        state => state == 1,
    }
}

/// Declares `unsafe fn $name(terms: &[$f]) -> ($f, bool)`, a pass with
/// the `$feature` instruction set's vectors of `$bytes` bytes (register
/// class `$class`, operand size `$word`): the extreme by the instruction
/// `$op`, from `$start` (`$set1`), of the whole groups of four vectors of
/// `terms`, the four accumulators joined by `$combine` and their lanes by
/// `$finish`, and whether IE rose meanwhile, which is whether one of those
/// terms is a NaN.
macro_rules! pass {
    ($(#[$doc:meta])* $name:ident, $f:ty, $op:literal, $start:expr, $feature:literal, $class:ident, $word:literal,
     $bytes:literal, $set1:ident, $combine:ident, $finish:expr) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        unsafe fn $name(terms: &[$f]) -> ($f, bool) {
            use core::arch::x86_64::{$combine, $set1};
            let groups = terms.len() / (4 * $bytes / core::mem::size_of::<$f>());
            let mut acc = [$set1($start); 4];
            let (mut saved, mut after) = (0u32, 0u32);
            if groups > 0 {
                // SAFETY: the loop reads `groups` groups of four vectors
                // from the start of `terms`, which holds that many; it
                // writes the two u32 it is given and the four vectors.
                // MXCSR as `ie_cleared_asm!` says; `mxcsr_allows` has
                // checked that invalid operations are masked, so a NaN
                // raises the flag without a trap.
                unsafe {
                    ie_cleared_asm!(
                        &mut saved as *mut u32,
                        &mut after as *mut u32,
                        [
                            "2:",
                            concat!($op, " {a0}, {a0}, ", $word, " ptr [{p}]"),
                            concat!($op, " {a1}, {a1}, ", $word, " ptr [{p} + {b1}]"),
                            concat!($op, " {a2}, {a2}, ", $word, " ptr [{p} + {b2}]"),
                            concat!($op, " {a3}, {a3}, ", $word, " ptr [{p} + {b3}]"),
                            "add {p}, {b4}",
                            "dec {n}",
                            "jnz 2b",
                        ],
                        b1 = const $bytes,
                        b2 = const 2 * $bytes,
                        b3 = const 3 * $bytes,
                        b4 = const 4 * $bytes,
                        p = inout(reg) terms.as_ptr() => _,
                        n = inout(reg) groups => _,
                        a0 = inout($class) acc[0],
                        a1 = inout($class) acc[1],
                        a2 = inout($class) acc[2],
                        a3 = inout($class) acc[3],
                    );
                }
            }
            let v = $combine($combine(acc[0], acc[1]), $combine(acc[2], acc[3]));
            let finish = $finish;
            (finish(v), after & IE != 0)
        }
    };
}

/// Declares `$name(terms) -> Option<($f, usize)>`: the extreme of the
/// first `done` terms, taken by the vector instruction `$op` from `$start`
/// over whole groups of four vectors (AVX-512's where the CPU has them,
/// else AVX2's) and exact, which is the extreme of all where it is a NaN
/// (then `done` is all of them); `None` where the CPU fails [`raises_ie`],
/// MXCSR forbids the pass, the terms fill no group, or the groups' extreme
/// is a zero. `$wide` and `$narrow` are the two passes; `$set1`, `$combine`
/// and `$reduce` AVX-512's broadcast, the instruction on two vectors and
/// across one's lanes, `$set1_256` and `$combine_256` AVX2's; `$beats` the
/// comparison that picks the extreme of two lanes.
macro_rules! flagged {
    ($name:ident, $wide:ident, $narrow:ident, $f:ty, $op:literal, $start:expr, $beats:tt,
     $set1:ident, $combine:ident, $reduce:ident, $set1_256:ident, $combine_256:ident) => {
        /// See `flagged!` and the module's documentation.
        #[inline(always)]
        pub(super) fn $name(terms: &[$f]) -> Option<($f, usize)> {
            #[cfg(target_arch = "x86_64")]
            {
                let wide = crate::core::isa::avx512();
                let group = if wide { 256 } else { 128 } / core::mem::size_of::<$f>();
                if terms.len() >= group && mxcsr_allows() && raises_ie() {
                    let (extreme, nan) = if wide {
                        // SAFETY: `avx512()` detected AVX-512 F, all that
                        // `$wide` enables, on the CPU that runs it.
                        unsafe { $wide(terms) }
                    } else {
                        // SAFETY: AVX2 is in the crate's baseline, which
                        // the library checks the host for before any call.
                        unsafe { $narrow(terms) }
                    };
                    return if nan {
                        Some((<$f>::NAN, terms.len()))
                    } else if extreme == 0.0 {
                        None
                    } else {
                        // `group` is a power of two.
                        Some((extreme, terms.len() & !(group - 1)))
                    };
                }
            }
            let _ = terms;
            None
        }

        pass!(
            /// The extreme of the whole groups of four AVX-512 vectors of
            /// `terms` by `$op` (`$start` where there is none) and whether
            /// IE rose meanwhile, which is whether one of their terms is a
            /// NaN.
            $wide, $f, $op, $start, "avx512f", zmm_reg, "zmmword", 64, $set1, $combine,
            // No lane holds a NaN where IE stayed clear, so the
            // instruction's reduction of the lanes is exact unless the
            // extreme is a zero, whose sign it may get wrong (the caller
            // then takes the spans).
            |v| core::arch::x86_64::$reduce(v)
        );
        pass!(
            /// `$wide` on AVX2's vectors of 32 bytes, groups of 128.
            $narrow, $f, $op, $start, "avx2", ymm_reg, "ymmword", 32, $set1_256, $combine_256,
            |v| {
                // SAFETY: a vector of 32 bytes is 32 bytes of `$f`, any
                // bits of which are a value.
                let lanes: [$f; 32 / core::mem::size_of::<$f>()] = unsafe { core::mem::transmute(v) };
                // As in `$wide`: exact unless a zero.
                lanes.iter().fold($start, |m, &x| if x $beats m { x } else { m })
            }
        );
    };
}

flagged!(max32, max32_wide, max32_narrow, f32, "vmaxps", f32::NEG_INFINITY, >,
    _mm512_set1_ps, _mm512_max_ps, _mm512_reduce_max_ps, _mm256_set1_ps, _mm256_max_ps);
flagged!(min32, min32_wide, min32_narrow, f32, "vminps", f32::INFINITY, <,
    _mm512_set1_ps, _mm512_min_ps, _mm512_reduce_min_ps, _mm256_set1_ps, _mm256_min_ps);
flagged!(max64, max64_wide, max64_narrow, f64, "vmaxpd", f64::NEG_INFINITY, >,
    _mm512_set1_pd, _mm512_max_pd, _mm512_reduce_max_pd, _mm256_set1_pd, _mm256_max_pd);
flagged!(min64, min64_wide, min64_narrow, f64, "vminpd", f64::INFINITY, <,
    _mm512_set1_pd, _mm512_min_pd, _mm512_reduce_min_pd, _mm256_set1_pd, _mm256_min_pd);
