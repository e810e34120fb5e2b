//! Exp, Exp2 and Expm1: `x = k ln 2 + r` (or `k + r`), a polynomial in `r`, a scaling by `2^k`.

use super::real::{clamp, fast_two_sum, poly, two_sum, Real};

/// The constants of the exponentials of one precision.
pub(crate) trait ExpConsts: Real {
    const LOG2E: Self;
    /// `ln 2` rounded, and the rest: `LN2_HI + LN2_LO` is `ln 2` to twice the precision.
    const LN2_HI: Self;
    const LN2_LO: Self;
    /// Exp's argument is clamped to `[EXP_LO, EXP_HI]`, beyond which it is `+0` or `+inf`.
    const EXP_LO: Self;
    const EXP_HI: Self;
    /// Expm1's lower clamp, beyond which it is `-1`.
    const EXPM1_LO: Self;
    /// Exp2's clamp.
    const EXP2_LO: Self;
    const EXP2_HI: Self;
    /// Exp's ordinary arguments, below this in magnitude: where `2^k` is a
    /// normal power and `k > MIN_EXP` or `k = MIN_EXP` with `r > 0`, so that
    /// the result is normal and its scaling exact.
    const EXP_FAST: Self;
    /// Exp2's ordinary arguments, below this in magnitude: `MIN_EXP < k`,
    /// `2^k` a normal power.
    const EXP2_FAST: Self;
    /// Expm1's largest ordinary argument, below which `2^(k + 2)` is finite.
    const EXPM1_FAST_HI: Self;
    /// `exp(r) = 1 + r + r^2 P(r)` for `|r| <= ln2 / 2`.
    const P: &'static [Self];
    /// `2^r = 1 + r Q(r)` for `|r| <= 1 / 2`.
    const Q: &'static [Self];
}

impl ExpConsts for f32 {
    const LOG2E: f32 = core::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693147182;
    const LN2_LO: f32 = -1.90465421e-09;
    const EXP_LO: f32 = -104.0;
    const EXP_HI: f32 = 89.0;
    const EXPM1_LO: f32 = -25.0;
    const EXP2_LO: f32 = -151.0;
    const EXP2_HI: f32 = 129.0;
    // -126 ln2 = -87.3365.
    const EXP_FAST: f32 = 87.33;
    const EXP2_FAST: f32 = 125.0;
    // 125.5 ln2 = 86.99.
    const EXPM1_FAST_HI: f32 = 86.0;
    // gen_coeffs.py exp, f32: relative error 2^-28.3
    const P: &'static [f32] = &[
        5.000000000e-01,
        1.666666716e-01,
        4.166666791e-02,
        8.333298378e-03,
        1.388885430e-03,
        1.989928569e-04,
        2.485958976e-05,
    ];
    // gen_coeffs.py exp2, f32: relative error 2^-27.4
    const Q: &'static [f32] = &[
        6.931471825e-01,
        2.402265072e-01,
        5.550410971e-02,
        9.618056938e-03,
        1.333350199e-03,
        1.546144485e-04,
        1.529732435e-05,
    ];
}

impl ExpConsts for f64 {
    const LOG2E: f64 = core::f64::consts::LOG2_E;
    const LN2_HI: f64 = core::f64::consts::LN_2;
    const LN2_LO: f64 = 2.3190468138462996e-17;
    const EXP_LO: f64 = -746.0;
    const EXP_HI: f64 = 710.0;
    const EXPM1_LO: f64 = -40.0;
    const EXP2_LO: f64 = -1076.0;
    const EXP2_HI: f64 = 1025.0;
    // -1022 ln2 = -708.396.
    const EXP_FAST: f64 = 708.3;
    const EXP2_FAST: f64 = 1021.0;
    // 1021.5 ln2 = 708.05.
    const EXPM1_FAST_HI: f64 = 707.0;
    // gen_coeffs.py exp, f64: relative error 2^-56.9
    const P: &'static [f64] = &[
        0.5,
        0.16666666666666666,
        0.04166666666666668,
        0.008333333333333333,
        0.0013888888888879073,
        0.00019841269841263298,
        2.4801587336442236e-05,
        2.755731924721873e-06,
        2.75572632790885e-07,
        2.505207109429355e-08,
        2.0918137737642736e-09,
        1.608662795678037e-10,
    ];
    // gen_coeffs.py exp2, f64: relative error 2^-54.2
    const Q: &'static [f64] = &[
        core::f64::consts::LN_2,
        0.24022650695910072,
        0.055504108664821625,
        0.00961812910762848,
        0.001333355814640647,
        0.00015403530393370734,
        1.5252733841556773e-05,
        1.3215486808705563e-06,
        1.0178057087733941e-07,
        7.0548973041554995e-09,
        4.4558179083360645e-10,
        2.5729324177362305e-11,
    ];
}

/// `(r, c)` with `r + c = x - k ln2` to about twice the precision, `k`
/// the integer nearest `x log2 e` (or next to it).
#[inline(always)]
fn less_k_ln2<T: ExpConsts>(x: T, k: T) -> (T, T) {
    // Exact: the difference is a multiple of x's and LN2_HI's ulps below 1/2.
    let rh = (-k).fma(T::LN2_HI, x);
    let r = (-k).fma(T::LN2_LO, rh);
    // r's rounding error.
    (r, (-k).fma(T::LN2_LO, rh - r))
}

/// `(r, t, k)` with `exp(x + tail) = 2^k (1 + r + t)`, `k` integral,
/// `|r| <= ln2 / 2` (a little more where rounding puts it), `t` small beside
/// `r`, for `|x| < 2^(p - 3)` and a `tail` below `x`'s ulp.
#[inline(always)]
pub(crate) fn reduce_exp<T: ExpConsts>(x: T, tail: Option<T>) -> (T, T, T) {
    let k = (x * T::LOG2E).round_int();
    let (r, c) = less_k_ln2(x, k);
    let (r, c) = match tail {
        None => (r, c),
        Some(tail) => {
            let (r, e) = two_sum(r, tail);
            (r, c + e)
        }
    };
    (r, (r * r).fma(poly(r, T::P), c), k)
}

/// `(e, k)` with `exp(x) = e * 2^k` (before the rounding of the product),
/// `e` in about `[0.7, 1.42]`, for `x` in `[EXP_LO, EXP_HI]` or a NaN.
#[inline(always)]
pub(crate) fn exp_parts<T: ExpConsts>(x: T) -> (T, T) {
    let (r, t, k) = reduce_exp(x, None);
    let (h, l) = fast_two_sum(T::ONE, r);
    (h + (l + t), k)
}

/// `exp(x + tail)` rounded once, `tail` below `x`'s ulp or `None` for 0.
#[inline(always)]
pub(crate) fn exp_with<T: ExpConsts>(x: T, tail: Option<T>) -> T {
    let xc = clamp(x, T::EXP_LO, T::EXP_HI);
    let tail = tail.map(|t| if xc == x { t } else { T::ZERO });
    let (r, t, k) = reduce_exp(xc, tail);
    let (h, l) = fast_two_sum(T::ONE, r);
    let lt = l + t;
    let sub_k = k < T::MIN_EXP || (k == T::MIN_EXP && r < T::ZERO);
    // Both results are computed (a vector does so for every lane), each
    // scaling by k where its result is kept and by a harmless exponent
    // elsewhere, for a subnormal that is not kept would cost as much time
    // as one that is (about a hundred cycles where the CPU assists it).
    let normal = (h + lt).ldexp(if k < T::MIN_EXP { T::ZERO } else { k });
    // A subnormal result rounds once, at its own quantum: scaled by 2^-MIN_EXP
    // it is z < 1, whose quantum is 1's ulp, so (1 + z) - 1 rounds it there.
    // (Elsewhere a scale of 2 keeps z, which is about 2h, at least 1.)
    let scale = T::exp2i(if k <= T::MIN_EXP {
        k - T::MIN_EXP
    } else {
        T::ONE
    });
    let (s, e) = fast_two_sum(T::ONE, h * scale);
    let sub = ((s + (e + lt * scale)) - T::ONE) * T::exp2i(T::MIN_EXP);
    if sub_k {
        sub
    } else {
        normal
    }
}

#[inline(always)]
pub(crate) fn exp<T: ExpConsts>(x: T) -> T {
    exp_with(x, None)
}

/// Whether `x` is an ordinary argument of exp, for [`exp_fast`].
#[inline(always)]
pub(crate) fn exp_ordinary<T: ExpConsts>(x: T) -> bool {
    x.abs() < T::EXP_FAST
}

/// [`exp`] of an ordinary `x`: the clamp leaves it, the result is the
/// normal one, and its scaling by `2^k` (a normal power) is exact, so one
/// product gives it.
#[inline(always)]
pub(crate) fn exp_fast<T: ExpConsts>(x: T) -> T {
    let (e, k) = exp_parts(x);
    e * T::exp2i(k)
}

// The f64 exp kind ([`exp64`], [`exp64_fast`]) by a table, for speed: the
// generic [`exp`]'s polynomial of degree 12 and its double-length sums cost
// about twice as much. x = n ln2/N + r, n = N k + j, N = 2^EXP64_BITS,
// |r| <= ln2/2N (a little more where rounding puts it), and
// exp(x) = 2^k 2^(j/N) exp(r). A table entry holds the head h of 2^(j/N)
// (its 52 fraction bits) and, in its 12 top bits, a code of its relative
// tail d, 2^(j/N) = h (1 + d), |d| < 2^-53. The reduction yields u = r - c,
// where c = EXP64_SHIFT * EXP64_STEP_LO comes for free (the low part of
// n ln2/N subtracted as the shifted n's), and the code decodes (a shift,
// an OR) to v = (exp(c) - 1) + d, to 2^-60 (EXP64_TAIL_BITS: exp(c) - 1
// less its 12 low bits, which the code fills); then exp(r) (1 + d) - 1 is
// about u q(u) + v, q of degree 6, and the result 2^k h (1 + tmp), rounded
// once. One 64-bit entry per lookup, the index masked to the table's
// length. The table's 16 entries fit in two AVX-512 registers, where
// [`exp_f64_slice`] looks them up by one permute (32 entries and q of
// degree 5 took two permutes and a blend, two steps more a vector: 0.53
// against 0.49 ns an element in the L1 cache, `kinds::bench` on an Intel
// Xeon of family 6, model 207): a gather from a larger
// table (256 entries, q of degree 3) ran a tenth faster in the caches, but
// its eight loads a vector held back the loads of a loop streaming its
// operands from memory (exp over 10M float64 ran 7% slower). The constants
// and the table are printed by `testdata/gen_exp64.py` (its errors in the
// line below, relative to 1 + tmp).
// gen_exp64.py 4 7: polynomial error 2^-58.7, tails to 2^-60.3, exp(c) - 1 to 2^-60.4
const EXP64_BITS: u32 = 4;
const EXP64_INV: f64 = 23.083120654223414;
const EXP64_STEP_HI: f64 = 0.04332169878499658;
const EXP64_STEP_LO: f64 = 1.4494042586539372e-18;
const EXP64_SHIFT: f64 = 8038210975580144.0;
const EXP64_TAIL_BITS: u64 = 0x3f87ffffffffe000;
const EXP64_Q: &[f64] = &[
    1.0117187499999893,
    0.5058593749999943,
    0.16861979166670793,
    0.04215494792392239,
    0.008430989421082613,
    0.00140511485984168,
    0.00019870433758307511,
];
#[rustfmt::skip]
static EXP64_TABLE: [u64; 16] = [
    0x7dd0000000000000, 0x80c0b5586cf9890f, 0x7cd172b83c7d517b, 0x80a2387a6e756238,
    0x7f0306fe0a31b715, 0x7f33dea64c123422, 0x7e84bfdad5362a27, 0x7fe5ab07dd485429,
    0x7b66a09e667f3bcd, 0x7cf7a11473eb0187, 0x7fb8ace5422aa0db, 0x7e69c49182a3f090,
    0x7f9ae89f995ad3ad, 0x7e7c199bdd85529c, 0x7e7d5818dcfba487, 0x7bdea4afa2a490da,
];

/// The fraction bits of an f64.
const MANT: u64 = (1 << 52) - 1;

/// Each table entry's `v` of [`exp64_reduce`], decoded, for
/// [`exp64_fast_x8`] to look up by a permute where decoding takes two steps.
static EXP64_V: [f64; 1 << EXP64_BITS] = {
    let mut v = [0.0; 1 << EXP64_BITS];
    let mut j = 0;
    while j < v.len() {
        v[j] = f64::from_bits((EXP64_TABLE[j] >> 52) | EXP64_TAIL_BITS);
        j += 1;
    }
    v
};

/// `(tmp, ki, kn, e)` for an `x` with `|x| <= 746` or a NaN: `kn = n`, `ki`
/// the bits of `x N/ln2 + EXP64_SHIFT` (the low ones `n + 1023 N`, where
/// `k + 1023` lies above `j`), `e` the table entry of `j = n mod N`, and
/// `tmp` with `exp(x) = 2^k h (1 + tmp)`, `h` the entry's head.
#[inline(always)]
fn exp64_reduce(x: f64) -> (f64, u64, f64, u64) {
    // Rounded to the integer n, ties to even, by the shifter's ulp of 1.
    let kd = x.fma(EXP64_INV, EXP64_SHIFT);
    let ki = kd.to_bits();
    let kn = kd - EXP64_SHIFT;
    // x - n STEP_HI is exact: below 2^-5, it is a multiple of 2^-58, the
    // least quantum of x (where n is not 0, |x| > 2^-6) and of n STEP_HI.
    // Less kd STEP_LO (n STEP_LO + c), rounded once: u = r - c,
    // |u| < 2^-5, to 2^-59.
    let u = (-kd).fma(EXP64_STEP_LO, (-kn).fma(EXP64_STEP_HI, x));
    // The mask keeps the index within the table (a NaN's bits included).
    let e = EXP64_TABLE[(ki & ((1 << EXP64_BITS) - 1)) as usize];
    let v = f64::from_bits((e >> 52) | EXP64_TAIL_BITS);
    (u.fma(poly(u, EXP64_Q), v), ki, kn, e)
}

/// Exp of an ordinary f64 ([`exp_ordinary`]): the result normal, `2^k h`
/// built from bits (`k + 1023` in `[1, 2046]`), scaled by `1 + tmp` in
/// one rounding.
#[inline(always)]
fn exp64_fast(x: f64) -> f64 {
    let (tmp, ki, _, e) = exp64_reduce(x);
    // k + 1023 and j in ki, shifted to the exponent field (j's bits into
    // the fraction's, replaced by h's).
    let s = f64::from_bits(((ki << (52 - EXP64_BITS)) & !MANT) | (e & MANT));
    s.fma(tmp, s)
}

/// Exp of any f64: [`exp64_fast`]'s arithmetic on the clamped argument,
/// `h (1 + tmp)` scaled by `2^k` in two steps (to +inf above the range;
/// for an ordinary `x` the same bits as [`exp64_fast`]), and a subnormal
/// result rounded once at its own quantum.
#[inline(always)]
fn exp64(x: f64) -> f64 {
    let xc = clamp(x, f64::EXP_LO, f64::EXP_HI);
    let (tmp, ki, kn, e) = exp64_reduce(xc);
    let h = f64::from_bits((e & MANT) | 1f64.to_bits());
    // k = floor(n / N) exactly: ki >> EXP64_BITS is k plus the shifter's
    // bits so shifted, which those of 1.5 * 2^52 replace.
    let k_bias = f64::SHIFTER.to_bits() - (EXP64_SHIFT.to_bits() >> EXP64_BITS);
    let k = f64::from_bits((ki >> EXP64_BITS).wrapping_add(k_bias)) - f64::SHIFTER;
    let min_exp = <f64 as Real>::MIN_EXP;
    // The result is subnormal where k < MIN_EXP, or k = MIN_EXP, j = 0 and
    // r < 0 (then tmp has r's sign, but where |r| < 2^-58, whose result
    // either way rounds to 2^MIN_EXP).
    let n_min = min_exp * (1u64 << EXP64_BITS) as f64;
    let sub_k = kn < n_min || (kn == n_min && tmp < 0.0);
    let normal = h.fma(tmp, h).ldexp(f64::select(k < min_exp, 0.0, k));
    // As in [`exp_with`]: scaled by 2^-MIN_EXP the result is a (1 + tmp),
    // a < 1, which (1 + a (1 + tmp)) - 1 rounds at its quantum.
    let scale = f64::exp2i(f64::select(k <= min_exp, k - min_exp, 1.0));
    let a = h * scale;
    let (s, err) = fast_two_sum(1.0, a);
    let sub = ((s + a.fma(tmp, err)) - 1.0) * f64::exp2i(min_exp);
    f64::select(sub_k, sub, normal)
}

// The f32 exp kind ([`exp32`], [`exp32_fast`]): the generic [`exp`]'s
// reduction, then a polynomial of one degree less and one plain sum where
// [`exp`] adds 1 to twice the precision. With r + c = x - k ln2 (c the
// reduction's rounding error), t = r^2 P(r) + c and exp(x) = 2^k (1 + (r +
// t)): P errs by 2^-26.7, relative, and r^2 P is within 0.06 of 1, so that
// its error is under 0.01 ulp of the result; r + t rounds by 2^-26 at most
// (a quarter of an ulp of a result below 1), 1 + (r + t) by half an ulp,
// and r^2 and t's own roundings add under 0.15: under 0.95 ulp in all
// (0.82 measured by `exp_accuracy`, against 0.64 for [`exp`]), within the
// contract's 2, in six fewer steps a vector than [`exp_fast`] (0.36 -> 0.28
// ns an element in the L1 cache on AVX-512, 0.52 -> 0.41 on AVX2:
// `kinds::bench`, an Intel Xeon of family 6, model 207).
// gen_coeffs.py exp32 f32: degree 5, relative error 9.12e-09 (2^-26.7)
const EXP32_P: &[f32] = &[5.000000000e-01, 1.666666716e-01, 4.166646674e-02, 8.333310485e-03, 1.393364975e-03, 1.989099110e-04];

/// [`exp`] of an ordinary f32 ([`exp_ordinary`]) by [`EXP32_P`], the
/// result normal and its scaling by `2^k` exact.
#[inline(always)]
fn exp32_fast(x: f32) -> f32 {
    // k = x log2 e rounded to an integer, ties to even, in kd's low bits.
    let kd = x.fma(f32::LOG2E, f32::SHIFTER);
    let (r, c) = less_k_ln2(x, kd - f32::SHIFTER);
    let t = (r * r).fma(poly(r, EXP32_P), c);
    // 2^k from kd's bits: k + 127 in the exponent field (wrapping for an
    // argument not ordinary, whose result [`exp32`] discards).
    let scale = f32::from_bits(kd.to_bits().wrapping_sub(f32::SHIFTER.to_bits()).wrapping_add(127) << 23);
    (1.0 + (r + t)) * scale
}

/// Exp of any f32: [`exp32_fast`] where the argument is ordinary, the
/// generic [`exp`] (which handles the clamp, overflow and subnormal
/// results) elsewhere; a vector computes both and selects.
#[inline(always)]
fn exp32(x: f32) -> f32 {
    f32::select(exp_ordinary(x), exp32_fast(x), exp(x))
}

/// Exp's algorithm for each precision, as its kind runs it: f32 by
/// [`exp32`], f64 the table of [`exp64`]. (The kinds built on the
/// exponential, erf, cosh, sinh, pow..., keep the generic f64 one, whose
/// double-length parts and error bounds theirs rely on.)
pub(crate) trait ExpKind: ExpConsts {
    /// Exp of an ordinary argument ([`exp_ordinary`]).
    fn exp_kind_fast(x: Self) -> Self;
    /// Exp of any argument.
    fn exp_kind(x: Self) -> Self;
}

impl ExpKind for f32 {
    #[inline(always)]
    fn exp_kind_fast(x: f32) -> f32 {
        exp32_fast(x)
    }
    #[inline(always)]
    fn exp_kind(x: f32) -> f32 {
        exp32(x)
    }
}

impl ExpKind for f64 {
    #[inline(always)]
    fn exp_kind_fast(x: f64) -> f64 {
        exp64_fast(x)
    }
    #[inline(always)]
    fn exp_kind(x: f64) -> f64 {
        exp64(x)
    }
}

/// [`ExpKind::exp_kind_fast`], a function for `split_kind!`.
#[inline(always)]
fn exp_kind_fast<T: ExpKind>(x: T) -> T {
    T::exp_kind_fast(x)
}

/// [`ExpKind::exp_kind`], a function for `split_kind!`.
#[inline(always)]
fn exp_kind<T: ExpKind>(x: T) -> T {
    T::exp_kind(x)
}

/// [`exp_kind`]'s bits by a branch, for the scalar functions: an ordinary
/// argument (nearly every one) computes the fast form alone, where
/// [`exp32`]'s select, made for vectors, computes both, and [`exp64`]
/// scales in two steps.
#[inline(always)]
fn exp_kind_scalar<T: ExpKind>(x: T) -> T {
    if exp_ordinary(x) {
        T::exp_kind_fast(x)
    } else {
        T::exp_kind(x)
    }
}

/// `(y, k)` with `2^x = y 2^k` (before the rounding of the product), `k`
/// integral, `y` in about `[0.7, 1.42]`, for `|x| < 2^(p - 2)`.
#[inline(always)]
fn exp2_parts<T: ExpConsts>(x: T) -> (T, T) {
    let k = x.round_int();
    let r = x - k; // exact
    (r.fma(poly(r, T::Q), T::ONE), k)
}

#[inline(always)]
fn exp2<T: ExpConsts>(x: T) -> T {
    let (y, k) = exp2_parts(clamp(x, T::EXP2_LO, T::EXP2_HI));
    y.ldexp(k)
}

#[inline(always)]
fn exp2_ordinary<T: ExpConsts>(x: T) -> bool {
    x.abs() < T::EXP2_FAST
}

/// [`exp2`] of an ordinary `x`: the clamp leaves it, and the scaling by
/// `2^k` (a normal power, the result normal) is exact, so one product gives it.
#[inline(always)]
fn exp2_fast<T: ExpConsts>(x: T) -> T {
    let (y, k) = exp2_parts(x);
    y * T::exp2i(k)
}

/// `(2^k - one) + 2^k r + 2^k t` for `s = 2^k`, the first sum exact.
#[inline(always)]
fn expm1_sum<T: ExpConsts>(r: T, t: T, s: T, one: T) -> T {
    let (a, b) = two_sum(s - one, s * r);
    a + s.fma(t, b)
}

#[inline(always)]
pub(crate) fn expm1<T: ExpConsts>(x: T) -> T {
    let xc = clamp(x, T::EXPM1_LO, T::EXP_HI);
    let (r, t, k) = reduce_exp(xc, None);
    // Where 2^k would overflow (k above the largest exponent less 2), half
    // of it, doubled.
    let big = k > T::EXP2_HI - T::TWO - T::TWO;
    let s = T::exp2i(if big { k - T::ONE } else { k });
    let y = expm1_sum(r, t, s, if big { T::HALF } else { T::ONE });
    let y = if big { y * T::TWO } else { y };
    // expm1(±0) = ±0, which the sum above would make +0.
    if x == T::ZERO {
        x
    } else {
        y
    }
}

#[inline(always)]
pub(crate) fn expm1_ordinary<T: ExpConsts>(x: T) -> bool {
    x > T::EXPM1_LO && x < T::EXPM1_FAST_HI
}

/// [`expm1`] of an ordinary `x`: the clamp leaves it, and `k` is not big.
#[inline(always)]
pub(crate) fn expm1_fast<T: ExpConsts>(x: T) -> T {
    let (r, t, k) = reduce_exp(x, None);
    let y = expm1_sum(r, t, T::exp2i(k), T::ONE);
    if x == T::ZERO {
        x
    } else {
        y
    }
}

/// `exp_f32` of each element of `x` into `out`, of the same length: in
/// AVX-512, blocks of ordinary arguments by `exp32_fast_x16`, the others
/// by [`exp_f32_slice_portable`], whose bits they are.
pub fn exp_f32_slice(x: &[f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::core::isa::avx512() {
        // SAFETY: the CPU has AVX-512 F, VL, DQ and BW (checked above).
        return unsafe { exp32_slice_avx512(x, out) };
    }
    exp_f32_slice_portable(x, out)
}

/// `exp_f64` of each element of `x` into `out`, of the same length: in
/// AVX-512, blocks of ordinary arguments by `exp64_fast_x8`, the others
/// by [`exp_f64_slice_portable`], whose bits they are.
pub fn exp_f64_slice(x: &[f64], out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if crate::core::isa::avx512() {
        // SAFETY: the CPU has AVX-512 F, VL, DQ and BW (checked above).
        return unsafe { exp64_slice_avx512(x, out) };
    }
    exp_f64_slice_portable(x, out)
}

/// [`exp_f32_slice`] in AVX-512 ([`slice_avx512`] of [`exp32_fast_x16`]).
///
/// # Safety
/// The CPU must have AVX-512 F, VL, DQ and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw")]
unsafe fn exp32_slice_avx512(x: &[f32], out: &mut [f32]) {
    // SAFETY: the CPU has AVX-512 F (this function's contract).
    unsafe { slice_avx512(x, out, f32::EXP_FAST, |v| exp32_fast_x16(v), exp_f32_slice_portable) }
}

/// [`exp_f64_slice`] in AVX-512 ([`slice_avx512`] of [`exp64_fast_x8`]).
///
/// # Safety
/// The CPU must have AVX-512 F, VL, DQ and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw")]
unsafe fn exp64_slice_avx512(x: &[f64], out: &mut [f64]) {
    use core::arch::x86_64::*;
    // SAFETY: the table and its tails hold 16 values of 8 bytes each, two
    // registers' worth, read unaligned.
    let table: [__m512i; 4] = core::array::from_fn(|k| unsafe {
        let from: *const u64 = if k < 2 { EXP64_TABLE.as_ptr() } else { EXP64_V.as_ptr().cast() };
        _mm512_loadu_si512(from.add(8 * (k % 2)).cast())
    });
    // SAFETY: the CPU has AVX-512 F (this function's contract).
    unsafe { slice_avx512(x, out, f64::EXP_FAST, |v| exp64_fast_x8(v, &table), exp_f64_slice_portable) }
}

/// An AVX-512 register of lanes of `T`, as [`slice_avx512`] takes it:
/// float32's 16 or float64's 8.
///
/// # Safety
/// Every method needs the CPU to have AVX-512 F, VL, DQ and BW; each is
/// inlined into the compilation of a caller that has them.
#[cfg(target_arch = "x86_64")]
trait Wide: Copy {
    type T: Copy;
    /// Lanes a register holds.
    const LANES: usize;
    /// The register of `LANES` values from `p`, read unaligned.
    ///
    /// # Safety
    /// The instructions; `LANES` values readable from `p`.
    unsafe fn load(p: *const Self::T) -> Self;
    /// Stores the register's values from `p`, unaligned.
    ///
    /// # Safety
    /// The instructions; room for `LANES` values from `p`.
    unsafe fn store(self, p: *mut Self::T);
    /// The values of `xs` (at most `LANES`) in the first lanes, the
    /// others 0, and the mask of those lanes.
    ///
    /// # Safety
    /// The instructions.
    unsafe fn load_first(xs: &[Self::T]) -> (Self, u32);
    /// Stores the lanes of mask `m` into `os`, which holds as many.
    ///
    /// # Safety
    /// The instructions; `m` of the lanes of `os` alone.
    unsafe fn store_first(self, os: &mut [Self::T], m: u32);
    /// The lanes of `keep` whose magnitude is below `bound`.
    ///
    /// # Safety
    /// The instructions.
    unsafe fn below(self, keep: u32, bound: Self::T) -> u32;
}

/// Declares [`Wide`] for register `$v` of `$lanes` lanes of `$t`.
#[cfg(target_arch = "x86_64")]
macro_rules! wide {
    ($v:ty, $t:ty, $lanes:literal, $mask:ty, $load:ident, $store:ident, $maskz_load:ident, $mask_store:ident, $abs:ident, $set1:ident, $cmp:ident) => {
        impl Wide for $v {
            type T = $t;
            const LANES: usize = $lanes;
            #[inline(always)]
            unsafe fn load(p: *const $t) -> $v {
                // SAFETY: the caller's contract.
                unsafe { core::arch::x86_64::$load(p) }
            }
            #[inline(always)]
            unsafe fn store(self, p: *mut $t) {
                // SAFETY: the caller's contract.
                unsafe { core::arch::x86_64::$store(p, self) }
            }
            #[inline(always)]
            unsafe fn load_first(xs: &[$t]) -> ($v, u32) {
                debug_assert!(xs.len() <= $lanes);
                let m = ((1u64 << xs.len()) - 1) as $mask;
                // SAFETY: the mask covers the slice's values alone, the
                // other lanes are not read; the instructions (caller).
                (unsafe { core::arch::x86_64::$maskz_load(m, xs.as_ptr()) }, m as u32)
            }
            #[inline(always)]
            unsafe fn store_first(self, os: &mut [$t], m: u32) {
                // SAFETY: the lanes of `m` lie in `os` (caller).
                unsafe { core::arch::x86_64::$mask_store(os.as_mut_ptr(), m as $mask, self) }
            }
            #[inline(always)]
            unsafe fn below(self, keep: u32, bound: $t) -> u32 {
                use core::arch::x86_64::*;
                // SAFETY: the instructions (caller).
                unsafe { $cmp::<_CMP_LT_OQ>(keep as $mask, $abs(self), $set1(bound)) as u32 }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
wide!(core::arch::x86_64::__m512, f32, 16, u16, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_maskz_loadu_ps, _mm512_mask_storeu_ps, _mm512_abs_ps, _mm512_set1_ps, _mm512_mask_cmp_ps_mask);
#[cfg(target_arch = "x86_64")]
wide!(core::arch::x86_64::__m512d, f64, 8, u8, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_maskz_loadu_pd, _mm512_mask_storeu_pd, _mm512_abs_pd, _mm512_set1_pd, _mm512_mask_cmp_pd_mask);

/// Exp's slice form in AVX-512: over each block of [`super::BLOCK`]
/// elements, `fast` of every register's worth by plain loads and stores
/// (the last few masked), and where an argument of the block is not
/// ordinary (its magnitude not below `bound`, [`exp_ordinary`]),
/// `portable` of the whole block again, whose bits `fast` gives for the
/// others. After a block of many such (a 32nd), as `map_split` does, the
/// next goes to `portable` at once, until one has few.
///
/// # Safety
/// The CPU must have AVX-512 F, VL, DQ and BW; inlined into a caller
/// compiled for them.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn slice_avx512<V: Wide>(x: &[V::T], out: &mut [V::T], bound: V::T, fast: impl Fn(V) -> V, portable: fn(&[V::T], &mut [V::T])) {
    assert_eq!(x.len(), out.len(), "a kind's slice form takes slices of one length");
    let all = ((1u64 << V::LANES) - 1) as u32;
    let block = super::BLOCK;
    let mut dense = false;
    for (b, (xb, ob)) in x.chunks(block).zip(out.chunks_mut(block)).enumerate() {
        super::prefetch(x, (b + super::AHEAD) * block);
        let mut rare = dense;
        if !dense {
            // Whole registers by plain loads and stores, then the last
            // few masked.
            let whole = xb.len() / V::LANES * V::LANES;
            let mut ordinary = all;
            for (xs, os) in xb[..whole].chunks_exact(V::LANES).zip(ob[..whole].chunks_exact_mut(V::LANES)) {
                // SAFETY: LANES values of each slice; the instructions
                // (this function's contract).
                unsafe {
                    let v = V::load(xs.as_ptr());
                    // Among the lanes ordinary so far: one step, no move.
                    ordinary = v.below(ordinary, bound);
                    fast(v).store(os.as_mut_ptr());
                }
            }
            rare |= ordinary != all;
            if whole < xb.len() {
                // SAFETY: the values past the whole registers, fewer than
                // LANES; the instructions.
                unsafe {
                    let (v, m) = V::load_first(&xb[whole..]);
                    rare |= v.below(m, bound) != m;
                    fast(v).store_first(&mut ob[whole..], m);
                }
            }
        }
        if rare {
            portable(xb, ob);
            let others: u32 = xb
                .chunks(V::LANES)
                .map(|xs| {
                    // SAFETY: at most LANES values; the instructions.
                    let (v, m) = unsafe { V::load_first(xs) };
                    (m & !unsafe { v.below(m, bound) }).count_ones()
                })
                .sum();
            dense = others as usize * 32 > xb.len();
        }
    }
}

/// [`exp32_fast`] of sixteen lanes, operation for operation, so with its
/// bits for each ordinary argument: its product by `2^k` a `vscalefps`
/// by `k`, exact as the product is (the result is normal). In place of
/// `map_split`'s loop (which builds `2^k` from k's bits in three integer
/// steps and counts the arguments not ordinary in a register): 0.27-0.28
/// -> 0.23 ns an element in the L1 cache (`kinds::bench`, an Intel Xeon
/// of family 6, model 207).
///
/// # Safety
/// The CPU must have AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn exp32_fast_x16(x: core::arch::x86_64::__m512) -> core::arch::x86_64::__m512 {
    use core::arch::x86_64::*;
    let ps = _mm512_set1_ps;
    let kd = _mm512_fmadd_ps(x, ps(f32::LOG2E), ps(f32::SHIFTER));
    let k = _mm512_sub_ps(kd, ps(f32::SHIFTER));
    // less_k_ln2: fma(-k, c, y) as fnmadd(k, c, y), one rounding of the
    // same value (negation is exact).
    let rh = _mm512_fnmadd_ps(k, ps(f32::LN2_HI), x);
    let r = _mm512_fnmadd_ps(k, ps(f32::LN2_LO), rh);
    let c = _mm512_fnmadd_ps(k, ps(f32::LN2_LO), _mm512_sub_ps(rh, r));
    // poly(r, EXP32_P): Horner from the last coefficient.
    let (last, rest) = EXP32_P.split_last().expect("a polynomial has a coefficient");
    let p = rest.iter().rev().fold(ps(*last), |acc, &ci| _mm512_fmadd_ps(acc, r, ps(ci)));
    let t = _mm512_fmadd_ps(_mm512_mul_ps(r, r), p, c);
    _mm512_scalef_ps(_mm512_add_ps(ps(1.0), _mm512_add_ps(r, t)), k)
}

/// [`exp64_fast`] of eight lanes, operation for operation, so with its
/// bits for each ordinary argument; the table entry of each lane by
/// a permute of `table` (the 16 entries of `EXP64_TABLE`, then their
/// tails, `EXP64_V`).
///
/// # Safety
/// The CPU must have AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn exp64_fast_x8(x: core::arch::x86_64::__m512d, table: &[core::arch::x86_64::__m512i; 4]) -> core::arch::x86_64::__m512d {
    use core::arch::x86_64::*;
    const _: () = assert!(EXP64_BITS == 4, "exp64_fast_x8 looks up 16 entries");
    let pd = _mm512_set1_pd;
    let kd = _mm512_fmadd_pd(x, pd(EXP64_INV), pd(EXP64_SHIFT));
    let ki = _mm512_castpd_si512(kd);
    let kn = _mm512_sub_pd(kd, pd(EXP64_SHIFT));
    // fma(-kn, HI, x) and fma(-kd, LO, that): negation is exact, so each
    // is one rounding of the same value.
    let u = _mm512_fnmadd_pd(kd, pd(EXP64_STEP_LO), _mm512_fnmadd_pd(kn, pd(EXP64_STEP_HI), x));
    // The entry and its tail by the index's low four bits.
    let e = _mm512_permutex2var_epi64(table[0], ki, table[1]);
    let v = _mm512_castsi512_pd(_mm512_permutex2var_epi64(table[2], ki, table[3]));
    // poly(u, EXP64_Q): Horner from the last coefficient.
    let (last, rest) = EXP64_Q.split_last().expect("a polynomial has a coefficient");
    let q = rest.iter().rev().fold(pd(*last), |acc, &c| _mm512_fmadd_pd(acc, u, pd(c)));
    let tmp = _mm512_fmadd_pd(u, q, v);
    let mant = _mm512_set1_epi64(MANT as i64);
    let s = _mm512_or_si512(_mm512_andnot_si512(mant, _mm512_slli_epi64::<{ 52 - EXP64_BITS }>(ki)), _mm512_and_si512(e, mant));
    let s = _mm512_castsi512_pd(s);
    _mm512_fmadd_pd(s, tmp, s)
}

super::split_kind! {
    exp_ordinary, exp_kind_fast, exp_kind / exp_kind_scalar, exp_f32, exp_f64, exp_f32_slice_portable, exp_f64_slice_portable,
    /// The exponential `e^x`.
    ///
    /// Measured max error: 0.82 ulp (f32), 0.57 ulp (f64: 0.543 on the
    /// reference table, 0.568 over 400k arguments against mpmath, subnormal
    /// results 0.52).
    /// Specials: NaN -> NaN, -inf -> +0, +inf -> +inf, ±0 -> 1; overflow to
    /// +inf, underflow gradual through the subnormals to +0.
}

super::split_kind! {
    exp2_ordinary, exp2_fast, exp2, exp2_f32, exp2_f64, exp2_f32_slice, exp2_f64_slice,
    /// The power of two `2^x`, exact at every integer whose power is in the dtype.
    ///
    /// Measured max error: 0.80 ulp (f32), 0.74 ulp (f64).
    /// Specials: NaN -> NaN, -inf -> +0, +inf -> +inf; overflow to +inf,
    /// underflow gradual to +0.
}

super::split_kind! {
    expm1_ordinary, expm1_fast, expm1, expm1_f32, expm1_f64, expm1_f32_slice, expm1_f64_slice,
    /// `e^x - 1`, accurate near 0.
    ///
    /// Measured max error: 1.03 ulp (f32), 0.96 ulp (f64).
    /// Specials: NaN -> NaN, ±0 -> ±0, -inf -> -1, +inf -> +inf; overflow to +inf.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::*;

    #[test]
    fn exp_accuracy() {
        let mut args = sweep32(-104.0, 89.0, 600_000);
        args.extend(linear32(-104.0, 89.0, 400_000));
        args.extend([
            88.72283,
            88.72284,
            -87.33654,
            -103.27893,
            -103.97208,
            -103.972084,
            1e-45,
            -1e-45,
        ]);
        let e32 = measure32("exp", exp_f32, exp_f32_slice, f64::exp, &args);
        let e64 = measure64(
            "exp",
            exp_f64,
            exp_f64_slice,
            &table1(include_bytes!("testdata/exp.bin")),
        );
        assert!(e32 < 1.0 && e64 < 1.0);
    }

    #[test]
    fn exp2_accuracy() {
        let mut args = sweep32(-151.0, 129.0, 500_000);
        args.extend(linear32(-151.0, 129.0, 300_000));
        let e32 = measure32("exp2", exp2_f32, exp2_f32_slice, f64::exp2, &args);
        let e64 = measure64(
            "exp2",
            exp2_f64,
            exp2_f64_slice,
            &table1(include_bytes!("testdata/exp2.bin")),
        );
        assert!(e32 < 4.0 && e64 < 4.0);
    }

    #[test]
    fn expm1_accuracy() {
        let mut args = sweep32(-25.0, 89.0, 500_000);
        args.extend(linear32(-25.0, 89.0, 300_000));
        args.extend(linear32(-1.0, 1.0, 200_000));
        let e32 = measure32("expm1", expm1_f32, expm1_f32_slice, f64::exp_m1, &args);
        let e64 = measure64(
            "expm1",
            expm1_f64,
            expm1_f64_slice,
            &table1(include_bytes!("testdata/expm1.bin")),
        );
        assert!(e32 < 4.0 && e64 < 4.0);
    }

    #[test]
    fn exp2_exact_at_integers() {
        for k in -149..=127 {
            same(exp2_f32(k as f32), (k as f64).exp2() as f32);
        }
        for k in -1074..=1023 {
            same(exp2_f64(k as f64), pow2(k));
        }
        same(exp2_f32(-150.0), 0.0);
        same(exp2_f32(128.0), f32::INFINITY);
        same(exp2_f64(-1075.0), 0.0);
        same(exp2_f64(1024.0), f64::INFINITY);
    }

    #[test]
    fn exp_specials() {
        for (x, want) in [
            (f64::NAN, f64::NAN),
            (f64::NEG_INFINITY, 0.0),
            (f64::INFINITY, f64::INFINITY),
            (0.0, 1.0),
            (-0.0, 1.0),
            (1e6, f64::INFINITY),
            (-1e6, 0.0),
        ] {
            same(exp_f64(x), want);
            same(exp_f32(x as f32), want as f32);
            same(exp2_f64(x), want);
            same(exp2_f32(x as f32), want as f32);
        }
        same(exp_f64(709.782712893384), 1.7976931348622732e308);
        same(exp_f64(709.7827128933841), f64::INFINITY);
        same(exp_f64(-745.1332191019411), 5e-324);
        same(exp_f64(-745.1332191019412), 0.0);
        same(exp_f32(88.72283), 3.4027985e38);
        same(exp_f32(88.72284), f32::INFINITY);
        same(exp_f32(-103.972076), 1e-45);
        for (x, want) in [
            (f64::NAN, f64::NAN),
            (f64::NEG_INFINITY, -1.0),
            (f64::INFINITY, f64::INFINITY),
            (0.0, 0.0),
            (-0.0, -0.0),
            (1e6, f64::INFINITY),
            (-1e6, -1.0),
            (1e-310, 1e-310),
            (-5e-324, -5e-324),
        ] {
            same(expm1_f64(x), want);
            same(expm1_f32(x as f32), want as f32);
        }
        same(expm1_f32(1e-45), 1e-45);
    }
}
