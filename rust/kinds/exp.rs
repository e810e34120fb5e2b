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

/// `(r, t, k)` with `exp(x + tail) = 2^k (1 + r + t)`, `k` integral,
/// `|r| <= ln2 / 2` (a little more where rounding puts it), `t` small beside
/// `r`, for `|x| < 2^(p - 3)` and a `tail` below `x`'s ulp.
#[inline(always)]
pub(crate) fn reduce_exp<T: ExpConsts>(x: T, tail: Option<T>) -> (T, T, T) {
    let k = (x * T::LOG2E).round_int();
    // Exact: the difference is a multiple of x's and LN2_HI's ulps below 1/2.
    let rh = (-k).fma(T::LN2_HI, x);
    let r = (-k).fma(T::LN2_LO, rh);
    // r's rounding error, so that r + c = x - k ln2 to about twice the precision.
    let c = (-k).fma(T::LN2_LO, rh - r);
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
// an OR) to v = (exp(c) - 1) + d, to 2^-64 (EXP64_TAIL_BITS: exp(c) - 1
// less its 12 low bits, which the code fills); then exp(r) (1 + d) - 1 is
// about u q(u) + v, q of degree 3, and the result 2^k h (1 + tmp), rounded
// once. One 64-bit entry per lookup: a vector loop gathers once (AVX-512),
// or loads each lane (AVX2, which LLVM's generic tuning gives no gathers),
// the index masked to the table's length. The constants
// and the table are printed by `testdata/gen_exp64.py` (its errors in the
// line below, relative to 1 + tmp).
// gen_exp64.py 8 4: polynomial error 2^-56.9, tails to 2^-64.0, exp(c) - 1 to 2^-64.3
const EXP64_BITS: u32 = 8;
const EXP64_INV: f64 = 369.3299304675746;
const EXP64_STEP_HI: f64 = 0.0027076061740622863;
const EXP64_STEP_LO: f64 = 9.058776616587108e-20;
const EXP64_SHIFT: f64 = 8082258962677504.0;
const EXP64_TAIL_BITS: u64 = 0x3f48000000014000;
const EXP64_Q: &[f64] = &[
    1.0007324218750115,
    0.5003662109472392,
    0.16678872575577386,
    0.04167277128976751,
];
#[rustfmt::skip]
static EXP64_TABLE: [u64; 256] = [
    0xba30000000000000, 0xa5400b1afa5abcbf, 0xf0a0163da9fb3335, 0xa7902168143b0281,
    0xb1802c9a3e778061, 0xbf7037d42e11bbcc, 0x99704315e86e7f85, 0xce904e5f72f654b1,
    0xd70059b0d3158574, 0x8fa0650a0e3c1f89, 0x9e60706b29ddf6de, 0xccc07bd42b72a836,
    0xbe70874518759bc8, 0x8ec092bdf66607e0, 0xdb709e3ecac6f383, 0xcf20a9c79b1f3919,
    0xe960b5586cf9890f, 0xe240c0f145e46c85, 0xd8e0cc922b7247f7, 0x8570d83b23395dec,
    0xbb20e3ec32d3d1a2, 0x9340efa55fdfa9c5, 0xb3b0fb66affed31b, 0xd5b1073028d7233e,
    0x8f811301d0125b51, 0x84a11edbab5e2ab6, 0xb8212abdc06c31cc, 0xb4d136a814f204ab,
    0x96a1429aaea92de0, 0xa0b14e95934f312e, 0xcb015a98c8a58e51, 0xbd1166a45471c3c2,
    0xaa1172b83c7d517b, 0xc1d17ed48695bbc0, 0x9b118af9388c8dea, 0xdfd1972658375d2f,
    0xd5c1a35beb6fcb75, 0xe521af99f8138a1c, 0x8c81bbe084045cd4, 0xd711c82f95281c6b,
    0xf011d4873168b9aa, 0x9111e0e75eb44027, 0x9a51ed5022fcd91d, 0x8871f9c18438ce4d,
    0xd4a2063b88628cd6, 0xdc7212be3578a819, 0xcab21f49917ddc96, 0xd3e22bdda27912d1,
    0xe752387a6e756238, 0xd1b2451ffb82140a, 0xd19251ce4fb2a63f, 0xdcd25e85711ece75,
    0xca726b4565e27cdd, 0xee32780e341ddf29, 0x8cc284dfe1f56381, 0xaa0291ba7591bb70,
    0xcd229e9df51fdee1, 0x8ec2ab8a66d10f13, 0xb942b87fd0dad990, 0x9662c57e39771b2f,
    0xd562d285a6e4030b, 0xeb82df961f641589, 0xc1b2ecafa93e2f56, 0xb5b2f9d24abd886b,
    0xcd8306fe0a31b715, 0xcf731432edeeb2fd, 0xd0732170fc4cd831, 0x8b032eb83ba8ea32,
    0xda133c08b26416ff, 0xaa23496266e3fa2d, 0xa39356c55f929ff1, 0xa2f36431a2de883b,
    0x95a371a7373aa9cb, 0x8f937f26231e754a, 0x88238cae6d05d866, 0x90539a401b7140ef,
    0xb143a7db34e59ff7, 0xdcc3b57fbfec6cf4, 0x8803c32dc313a8e5, 0xc713d0e544ede173,
    0xcfd3dea64c123422, 0xa493ec70df1c5175, 0x9413fa4504ac801c, 0xd0740822c367a024,
    0xb724160a21f72e2a, 0x93a423fb2709468a, 0xac2431f5d950a897, 0xcd943ffa3f84b9d4,
    0xbb644e086061892d, 0xb5645c2042a7d232, 0xe7046a41ed1d0057, 0x8e34786d668b3237,
    0xc1e486a2b5c13cd0, 0xaae494e1e192aed2, 0xe234a32af0d7d3de, 0xacf4b17dea6db7d7,
    0xc584bfdad5362a27, 0xd364ce41b817c114, 0xe074dcb299fddd0d, 0x99d4eb2d81d8abff,
    0x9aa4f9b2769d2ca7, 0xc42508417f4531ee, 0xa25516daa2cf6642, 0xaf65257de83f4eef,
    0xadc5342b569d4f82, 0xcbf542e2f4f6ad27, 0xa42551a4ca5d920f, 0xa0c56070dde910d2,
    0xe0a56f4736b527da, 0xa1557e27dbe2c4cf, 0xc8058d12d497c7fd, 0x96d59c0827ff07cc,
    0xdaf5ab07dd485429, 0x91c5ba11fba87a03, 0xbad5c9268a5946b7, 0x8ff5d84590998b93,
    0xe295e76f15ad2148, 0xa755f6a320dceb71, 0x9d5605e1b976dc09, 0xe616152ae6cdf6f4,
    0x9e06247eb03a5585, 0xdd3633dd1d1929fd, 0xa5e6434634ccc320, 0x93a652b9febc8fb7,
    0x9296623882552225, 0xa47671c1c70833f6, 0xbd168155d44ca973, 0xcb3690f4b19e9538,
    0x92d6a09e667f3bcd, 0xc376b052fa75173e, 0xb3b6c012750bdabf, 0xe226cfdcddd47645,
    0xb556dfb23c651a2f, 0xa2e6ef9298593ae5, 0xa956ff7df9519484, 0xbc770f7466f42e87,
    0xae271f75e8ec5f74, 0xa1572f8286ead08a, 0xa3473f9a48a58174, 0xd0974fbd35d7cbfd,
    0xa4175feb564267c9, 0xdfb77024b1ab6e09, 0xdb7780694fde5d3f, 0xd46790b938ac1cf6,
    0xac97a11473eb0187, 0x9487b17b0976cfdb, 0xe417c1ed0130c132, 0xd207d26a62ff86f0,
    0xbfb7e2f336cf4e62, 0xaf37f3878491c491, 0xa1980427543e1a12, 0xd55814d2add106d9,
    0x93682589994cce13, 0xdc18364c1eb941f7, 0xa9d8471a4623c7ad, 0xb7f857f4179f5b21,
    0x908868d99b4492ed, 0xc87879cad931a436, 0xdb988ac7d98a6699, 0xe0589bd0a478580f,
    0xd7e8ace5422aa0db, 0xe208be05bad61778, 0xb4c8cf3216b5448c, 0x9c88e06a5e0866d9,
    0xc838f1ae99157736, 0xd5d902fed0282c8a, 0x9429145b0b91ffc6, 0xadf925c353aa2fe2,
    0xb6893737b0cdc5e5, 0xa76948b82b5f98e5, 0xb3295a44cbc8520f, 0xb8096bdd9a7670b3,
    0x95b97d829fde4e50, 0xc3398f33e47a22a2, 0xa469a0f170ca07ba, 0x9509b2bb4d53fe0d,
    0xc309c49182a3f090, 0xa019d674194bb8d5, 0xc1a9e86319e32323, 0xad79fa5e8d07f29e,
    0xa27a0c667b5de565, 0xdd0a1e7aed8eb8bb, 0xd55a309bec4a2d33, 0x99ba42c980460ad8,
    0x96ca5503b23e255d, 0xbd6a674a8af46052, 0xdbda799e1330b358, 0xa0fa8bfe53c12e59,
    0xceaa9e6b5579fdbf, 0xc8fab0e521356eba, 0xa75ac36bbfd3f37a, 0xd6cad5ff3a3c2774,
    0xd65ae89f995ad3ad, 0xa1aafb4ce622f2ff, 0x994b0e07298db666, 0xd2db20ce6c9a8952,
    0xb77b33a2b84f15fb, 0xb0fb468415b749b1, 0x98eb59728de5593a, 0xcffb6c6e29f1c52a,
    0xb40b7f76f2fb5e47, 0x9a5b928cf22749e4, 0x965ba5b030a1064a, 0xb9abb8e0b79a6f1f,
    0xc4bbcc1e904bc1d2, 0xb9bbdf69c3f3a207, 0x96bbf2c25bd71e09, 0xa95c06286141b33d,
    0xc3ec199bdd85529c, 0xa03c2d1cd9fa652c, 0xd91c40ab5fffd07a, 0xcdac544778fafb22,
    0xcf1c67f12e57d14b, 0xa91c7ba88988c933, 0xbf2c8f6d9406e7b5, 0xacdca3405751c4db,
    0xc01cb720dcef9069, 0xb21ccb0f2e6d1675, 0xa9acdf0b555dc3fa, 0x9d7cf3155b5bab74,
    0x9a8d072d4a07897c, 0xd1ad1b532b08c968, 0x9a1d2f87080d89f2, 0xcfed43c8eacaa1d6,
    0xc48d5818dcfba487, 0xbc6d6c76e862e6d3, 0xa7ad80e316c98398, 0xd65d955d71ff6075,
    0xd89da9e603db3285, 0x9cadbe7cd63a8315, 0xce7dd321f301b460, 0x9b9de7d5641c0658,
    0xa76dfc97337b9b5f, 0xb53e11676b197d17, 0xa10e264614f5a129, 0x9ebe3b333b16ee12,
    0xc49e502ee78b3ff6, 0xae8e653924676d76, 0xcdfe7a51fbc74c83, 0xa86e8f7977cdb740,
    0x9a4ea4afa2a490da, 0xcf9eb9f4867cca6e, 0x9c8ecf482d8e67f1, 0xccaee4aaa2188510,
    0xd8fefa1bee615a27, 0xa68f0f9c1cb6412a, 0xce6f252b376bba97, 0xb3bf3ac948dd7274,
    0xd49f50765b6e4540, 0xda7f6632798844f8, 0x9c0f7bfdad9cbe14, 0xb80f91d802243c89,
    0xc5ffa7c1819e90d8, 0xb3dfbdba3692d514, 0xbc9fd3c22b8f71f1, 0xbf6fe9d96b2a23d9,
];

/// The fraction bits of an f64.
const MANT: u64 = (1 << 52) - 1;

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
    // x - n STEP_HI is exact: below 2^-9, it is a multiple of 2^-62, the
    // least quantum of x (where n is not 0) and of n STEP_HI. Less
    // kd STEP_LO (n STEP_LO + c), rounded once: u = r - c, |u| < 2^-8, to
    // 2^-62.
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
    // r < 0 (then tmp has r's sign, but where |r| < 2^-60, whose result
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

/// Exp's algorithm for each precision, as its kind runs it: f32 the
/// generic [`exp`], f64 the table of [`exp64`]. (The kinds built on the
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
        exp_fast(x)
    }
    #[inline(always)]
    fn exp_kind(x: f32) -> f32 {
        exp(x)
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

/// [`ExpKind::exp_kind_fast`], a function for [`split_kind!`].
#[inline(always)]
fn exp_kind_fast<T: ExpKind>(x: T) -> T {
    T::exp_kind_fast(x)
}

/// [`ExpKind::exp_kind`], a function for [`split_kind!`].
#[inline(always)]
fn exp_kind<T: ExpKind>(x: T) -> T {
    T::exp_kind(x)
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

super::split_kind! {
    exp_ordinary, exp_kind_fast, exp_kind, exp_f32, exp_f64, exp_f32_slice, exp_f64_slice,
    /// The exponential `e^x`.
    ///
    /// Measured max error: 0.64 ulp (f32), 0.56 ulp (f64: 0.547 on the
    /// reference table, 0.559 over 310k arguments against mpmath, subnormal
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
