//! Test helpers of the kinds: errors in ulps against references, argument
//! sweeps, and the f64 reference tables of `testdata/gen_ref.py`.

use core::fmt::LowerExp;

/// 2^e as an f64, for e from -1074 to 1023.
pub fn pow2(e: i64) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (e + 1074))
    }
}

/// The binary exponent of a finite nonzero f64 (that of its leading bit's
/// normal position; subnormals report -1023).
fn exponent(v: f64) -> i64 {
    ((v.to_bits() >> 52) & 0x7ff) as i64 - 1023
}

/// The error of an f32 result `got` in f32 ulps of `want`, infinite where a
/// NaN or an infinity is wrong; an overflow to the infinity `want` rounds to is exact.
pub fn err32(got: f32, want: f64) -> f64 {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if got.is_infinite() || want.is_infinite() {
        return if got == want as f32 {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let e = if want == 0.0 {
        -126
    } else {
        exponent(want).clamp(-126, 127)
    };
    (got as f64 - want).abs() / pow2(e - 23)
}

/// The error of an f64 result `got` in ulps of `hi + lo`.
pub fn err64(got: f64, hi: f64, lo: f64) -> f64 {
    if hi.is_nan() || got.is_nan() {
        return if hi.is_nan() && got.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if got.is_infinite() || hi.is_infinite() {
        return if got == hi { 0.0 } else { f64::INFINITY };
    }
    let e = if hi == 0.0 {
        -1022
    } else {
        exponent(hi).max(-1022)
    };
    ((got - hi) - lo).abs() / pow2(e - 52)
}

/// About `n` f32 arguments from `lo` to `hi`, evenly spaced in their bit
/// patterns, so log-uniform across the binades (subnormals included).
pub fn sweep32(lo: f32, hi: f32, n: usize) -> Vec<f32> {
    let key = |x: f32| {
        let b = x.to_bits();
        if b >> 31 == 0 {
            b as i64
        } else {
            -((b & 0x7fff_ffff) as i64)
        }
    };
    let unkey = |k: i64| {
        if k >= 0 {
            f32::from_bits(k as u32)
        } else {
            f32::from_bits((-k) as u32 | 1 << 31)
        }
    };
    let (a, b) = (key(lo), key(hi));
    (0..n as i64)
        .map(|i| unkey(a + (b - a) * i / (n as i64 - 1)))
        .collect()
}

/// Uniformly spaced f32 arguments from `lo` to `hi`.
pub fn linear32(lo: f32, hi: f32, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| lo + (hi - lo) * (i as f32 / (n - 1) as f32))
        .collect()
}

/// The largest of `err(i, y)` over the results `y` of `f` on each argument
/// `args[i]`, asserting that the slice form gives the scalar bits (`same`);
/// prints it with its argument as `"{name} {dtype}: max ..."`.
pub fn worst_error<T: Copy + Default + LowerExp, R: Copy + Default + LowerExp>(
    name: &str,
    dtype: &str,
    args: &[T],
    f: fn(T) -> R,
    slice: fn(&[T], &mut [R]),
    same: fn(R, R) -> bool,
    err: impl Fn(usize, R) -> f64,
) -> f64 {
    let mut out = vec![R::default(); args.len()];
    slice(args, &mut out);
    let mut worst = (0.0f64, T::default());
    for (i, (&x, &y)) in args.iter().zip(&out).enumerate() {
        let s = f(x);
        assert!(same(s, y), "{name}({x:e}): scalar {s:e} slice {y:e}");
        let e = err(i, s);
        if e > worst.0 || e.is_nan() {
            worst = (e, x);
        }
    }
    println!(
        "{name} {dtype}: max {:.3} ulp at {:e} ({} args)",
        worst.0,
        worst.1,
        args.len()
    );
    worst.0
}

/// The largest error of `f` over `args` against `reference` in f32 ulps,
/// asserting that the slice form gives the scalar bits; prints it with its argument.
pub fn measure32(
    name: &str,
    f: fn(f32) -> f32,
    slice: fn(&[f32], &mut [f32]),
    reference: fn(f64) -> f64,
    args: &[f32],
) -> f64 {
    worst_error(name, "f32", args, f, slice, same_value, |i, s| {
        err32(s, reference(args[i] as f64))
    })
}

/// The records of a unary table: (x, want_hi, want_lo).
pub fn table1(bytes: &[u8]) -> Vec<[f64; 3]> {
    records(bytes)
}

/// The records of a binary table: (x, y, want_hi, want_lo).
pub fn table2(bytes: &[u8]) -> Vec<[f64; 4]> {
    records(bytes)
}

/// The records of a table of `N` f64s each.
pub fn records<const N: usize>(bytes: &[u8]) -> Vec<[f64; N]> {
    assert_eq!(bytes.len() % (8 * N), 0);
    bytes
        .chunks_exact(8 * N)
        .map(|c| {
            core::array::from_fn(|i| f64::from_le_bytes(c[8 * i..8 * i + 8].try_into().unwrap()))
        })
        .collect()
}

/// The largest error of `f` over a unary table in f64 ulps, asserting that
/// the slice form gives the scalar bits; prints it with its argument.
pub fn measure64(
    name: &str,
    f: fn(f64) -> f64,
    slice: fn(&[f64], &mut [f64]),
    table: &[[f64; 3]],
) -> f64 {
    let args: Vec<f64> = table.iter().map(|r| r[0]).collect();
    worst_error(name, "f64", &args, f, slice, same_value, |i, s| {
        err64(s, table[i][1], table[i][2])
    })
}

/// An f32 accuracy case of a real kind: its name, scalar and slice forms,
/// f64 reference and arguments (see [`measure32`]).
pub type Case32<'a> = (
    &'static str,
    fn(f32) -> f32,
    fn(&[f32], &mut [f32]),
    fn(f64) -> f64,
    &'a [f32],
);

/// The f64 scalar and slice forms of a real kind.
pub type Case64 = (fn(f64) -> f64, fn(&[f64], &mut [f64]));

/// The bytes of the reference table `testdata/<stem>.bin`, for the stems
/// that the accuracy helpers look up.
pub fn table(stem: &str) -> &'static [u8] {
    macro_rules! by_stem {
        ($($stem:literal)*) => {
            match stem {
                $($stem => include_bytes!(concat!("testdata/", $stem, ".bin")),)*
                _ => panic!("no table testdata/{stem}.bin"),
            }
        };
    }
    by_stem!(
        "sinh" "cosh" "tanh" "asinh" "acosh" "atanh" "asin" "acos" "atan"
        "cexp" "clog" "csqrt" "csin" "ccos" "ctan" "csinh" "ccosh" "ctanh"
        "casin" "cacos" "catan" "casinh" "cacosh" "catanh"
    )
}

/// The largest error of the f32 cases, then of the f64 forms of the same
/// kinds in the same order over their tables `testdata/<name>.bin`, each
/// in ulps of its dtype (see [`measure32`], [`measure64`]).
pub fn worst_of(c32: &[Case32], c64: &[Case64]) -> f64 {
    assert_eq!(c32.len(), c64.len());
    let mut worst = 0.0f64;
    for &(name, f, slice, reference, args) in c32 {
        worst = worst.max(measure32(name, f, slice, reference, args));
    }
    for (&(name, ..), &(f, slice)) in c32.iter().zip(c64) {
        worst = worst.max(measure64(name, f, slice, &table1(table(name))));
    }
    worst
}

/// Whether `a` and `b` are the same value, the sign of a zero included, any
/// NaN matching any NaN.
pub fn same_value<T: Into<f64>>(a: T, b: T) -> bool {
    let (a, b) = (a.into(), b.into());
    (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative())
}

/// Asserts that `got` and `want` are the same value, the sign of a zero
/// included, any NaN matching any NaN.
#[track_caller]
pub fn same<T: Into<f64>>(got: T, want: T) {
    let (g, w) = (got.into(), want.into());
    assert!(same_value(g, w), "got {g:e}, want {w:e}");
}

/// Asserts for each row `(x, a, b, c)` that the f64 kinds `k64` give `a`,
/// `b` and `c` at `x`, then that the f32 kinds `k32` give them rounded to
/// f32 at `x` rounded to f32 (see [`same`]).
#[track_caller]
pub fn same3(k64: [fn(f64) -> f64; 3], k32: [fn(f32) -> f32; 3], rows: &[(f64, f64, f64, f64)]) {
    for &(x, a, b, c) in rows {
        for (f, want) in k64.into_iter().zip([a, b, c]) {
            same(f(x), want);
        }
        for (f, want) in k32.into_iter().zip([a, b, c]) {
            same(f(x as f32), want as f32);
        }
    }
}
