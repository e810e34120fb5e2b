//! Max and Min of a float run by the CPU's own max and min on AVX-512, one
//! instruction a vector, the NaNs seen by the invalid-operation flag that
//! those instructions raise.
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
//! 2.2 µs over 100K in L2.

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
    #[target_feature(enable = "avx512f")]
    unsafe fn flag_after(x: f32) -> bool {
        let (ones, of_x) = ([1.0f32; 16], [x; 16]);
        let (mut saved, mut after) = (0u32, 0u32);
        // SAFETY: reads the two arrays of 64 bytes, writes the two u32 it is
        // given and one vector register; MXCSR as `ie_cleared_asm!` says,
        // invalid operations masked (see above).
        unsafe {
            ie_cleared_asm!(
                &mut saved as *mut u32,
                &mut after as *mut u32,
                ["vmovups {v}, zmmword ptr [{a}]", "vmaxps {v}, {v}, zmmword ptr [{b}]",],
                a = in(reg) ones.as_ptr(),
                b = in(reg) of_x.as_ptr(),
                v = out(zmm_reg) _,
            );
        }
        after & IE != 0
    }
    match PROBED.load(Relaxed) {
        0 => {
            // SAFETY: `avx512()` detected AVX-512 F, all that `flag_after`
            // enables.
            let passed = crate::kinds::wide::avx512() && unsafe { !flag_after(2.0) && flag_after(f32::NAN) };
            PROBED.store(if passed { 1 } else { 2 }, Relaxed);
            passed
        }
        state => state == 1,
    }
}

/// Declares `$name(terms) -> Option<($f, usize)>`: the extreme of the
/// first `done` terms, taken by the vector instruction `$op` from `$start`
/// over whole groups of four vectors and exact, which is the extreme of all
/// where it is a NaN (then `done` is all of them); `None` where the CPU
/// lacks AVX-512 or fails [`raises_ie`], MXCSR forbids the pass, the terms
/// fill no group, or the groups' extreme is a zero. `$combine` and `$reduce` are the instruction
/// on two vectors and across one's lanes.
macro_rules! flagged {
    ($name:ident, $pass:ident, $f:ty, $op:literal, $start:expr, $set1:ident, $combine:ident, $reduce:ident) => {
        /// See `flagged!` and the module's documentation.
        #[inline(always)]
        pub(super) fn $name(terms: &[$f]) -> Option<($f, usize)> {
            #[cfg(target_arch = "x86_64")]
            {
                const GROUP: usize = 256 / core::mem::size_of::<$f>();
                if terms.len() >= GROUP && crate::kinds::wide::avx512() && mxcsr_allows() && raises_ie() {
                    // SAFETY: `avx512()` detected AVX-512 F, all that
                    // `$pass` enables, on the CPU that runs it.
                    let (extreme, nan) = unsafe { $pass(terms) };
                    return if nan {
                        Some((<$f>::NAN, terms.len()))
                    } else if extreme == 0.0 {
                        None
                    } else {
                        Some((extreme, terms.len() / GROUP * GROUP))
                    };
                }
            }
            let _ = terms;
            None
        }

        /// The extreme of the whole groups of four vectors of `terms` by
        /// `$op` (`$start` where there is none) and whether IE rose
        /// meanwhile, which is whether one of their terms is a NaN.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $pass(terms: &[$f]) -> ($f, bool) {
            const GROUP: usize = 256 / core::mem::size_of::<$f>();
            use core::arch::x86_64::{$combine, $reduce, $set1};
            let groups = terms.len() / GROUP;
            let mut acc = [$set1($start); 4];
            let (mut saved, mut after) = (0u32, 0u32);
            if groups > 0 {
                // SAFETY: the loop reads `groups` groups of 256
                // bytes from the start of `terms`, which holds that
                // many; it writes the two u32 it is given and the
                // four vectors. It clears IE, then restores MXCSR as
                // it found it: no control bit changes, and the flags
                // are left as they were. `mxcsr_allows` has checked
                // that invalid operations are masked, so a NaN raises
                // the flag without a trap.
                unsafe {
                    ie_cleared_asm!(
                        &mut saved as *mut u32,
                        &mut after as *mut u32,
                        [
                            "2:",
                            concat!($op, " {a0}, {a0}, zmmword ptr [{p}]"),
                            concat!($op, " {a1}, {a1}, zmmword ptr [{p} + 64]"),
                            concat!($op, " {a2}, {a2}, zmmword ptr [{p} + 128]"),
                            concat!($op, " {a3}, {a3}, zmmword ptr [{p} + 192]"),
                            "add {p}, 256",
                            "dec {n}",
                            "jnz 2b",
                        ],
                        p = inout(reg) terms.as_ptr() => _,
                        n = inout(reg) groups => _,
                        a0 = inout(zmm_reg) acc[0],
                        a1 = inout(zmm_reg) acc[1],
                        a2 = inout(zmm_reg) acc[2],
                        a3 = inout(zmm_reg) acc[3],
                    );
                }
            }
            // No lane holds a NaN where IE stayed clear, so the
            // instruction's reduction of the lanes is exact unless
            // the extreme is a zero, whose sign it may get wrong
            // (the caller then takes the spans).
            let v = $combine($combine(acc[0], acc[1]), $combine(acc[2], acc[3]));
            ($reduce(v), after & IE != 0)
        }
    };
}

flagged!(max32, max32_pass, f32, "vmaxps", f32::NEG_INFINITY, _mm512_set1_ps, _mm512_max_ps, _mm512_reduce_max_ps);
flagged!(min32, min32_pass, f32, "vminps", f32::INFINITY, _mm512_set1_ps, _mm512_min_ps, _mm512_reduce_min_ps);
flagged!(max64, max64_pass, f64, "vmaxpd", f64::NEG_INFINITY, _mm512_set1_pd, _mm512_max_pd, _mm512_reduce_max_pd);
flagged!(min64, min64_pass, f64, "vminpd", f64::INFINITY, _mm512_set1_pd, _mm512_min_pd, _mm512_reduce_min_pd);
