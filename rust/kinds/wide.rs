//! The slice forms compiled twice: for the crate's baseline (AVX2 on
//! x86-64), and once more for AVX-512, which a call takes where the CPU has
//! it; [`widest`] does the same for one call of a hot loop elsewhere (the
//! reductions' Max and Min block passes, which Arg shares). A cast between
//! register types in `map` is a slice form too (`loops::cast::cast`),
//! taken where its operands lie in cache.
//!
//! A slice form's body is a plain loop of `#[inline(always)]` functions;
//! [`slice_form`] declares it once and compiles it a second time inside a
//! `#[target_feature]` function, where the kinds' arithmetic, inlined,
//! vectorises over 16 f32 or 8 f64 lanes. (LLVM's tuning for the crate's
//! generic x86-64 target allows 512-bit vectors; a build for a named CPU,
//! `-C target-cpu=icelake-server` or `native` on one, takes that CPU's
//! tuning, which prefers 256-bit ones: the second compilation then runs
//! AVX-512's instructions on 256-bit vectors, the same bits, and gains
//! little.) The two compilations give the same bits: every step of a kind
//! is an IEEE operation, a comparison or a manipulation of bits, whose
//! result the instruction set does not change (`slices.rs` tests both
//! against the scalar kinds).
//!
//! The slice forms of rsqrt and hypot keep to the baseline: bound by
//! division and square root, whose 512-bit forms take as long per element
//! as the 256-bit ones, they ran a tenth slower in AVX-512. Pow's loop
//! does not vectorise in either.

/// Declares the slice form `fn $name($arg: $ty, ...) $body`: `$body` is
/// compiled for the crate's baseline and, on x86-64, once more with
/// AVX-512 (F, VL, DQ, BW) enabled, the compilation a call runs chosen by
/// [`avx512`]. `$body` should be a loop of `#[inline(always)]` functions,
/// so that the second compilation holds the whole loop.
macro_rules! slice_form {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$attr])*
        $vis fn $name($($arg: $ty),*) {
            #[inline(always)]
            fn body($($arg: $ty),*) $body

            #[cfg(target_arch = "x86_64")]
            if $crate::core::isa::avx512() {
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw")]
                fn avx512($($arg: $ty),*) {
                    body($($arg),*)
                }
                // SAFETY: `avx512()` detected every feature that `avx512`
                // enables on the CPU that runs it.
                return unsafe { avx512($($arg),*) };
            }
            body($($arg),*)
        }
    };
}
pub(crate) use slice_form;

/// `f(a)`, compiled for AVX-512 (F, VL, DQ, BW) where [`avx512`] says the
/// CPU has it, for the crate's baseline otherwise: how a hot loop outside
/// the slice forms (the reductions' Max and Min passes over a block, which
/// Arg's share) takes the wider vectors. `f` should be an `#[inline(always)]` function,
/// or a closure of such calls, so that the AVX-512 compilation holds it
/// whole; its bits are the baseline's, as for the slice forms.
#[inline(always)]
pub(crate) fn widest<A, R>(f: impl FnOnce(A) -> R, a: A) -> R {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw")]
        fn avx512<A, R>(f: impl FnOnce(A) -> R, a: A) -> R {
            f(a)
        }
        // SAFETY: `avx512()` detected every feature that `avx512` enables
        // on the CPU that runs it.
        return unsafe { avx512(f, a) };
    }
    f(a)
}

use crate::core::isa::avx512;

/// Runs `check` on each compilation of the slice forms that this CPU
/// runs, the name of the compilation its argument: the baseline, then
/// AVX-512 where the CPU has it (a note printed where it does not).
#[cfg(test)]
pub(crate) fn on_each_compilation(check: impl Fn(&str)) {
    #[cfg(target_arch = "x86_64")]
    {
        crate::core::isa::baseline_here(true);
        check("baseline");
        crate::core::isa::baseline_here(false);
        if avx512() {
            check("AVX-512");
        } else {
            println!("note: no AVX-512 on this CPU; its compilation of the slice forms not run");
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    check("baseline");
}
