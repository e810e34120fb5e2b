//! Test helpers of the kinds: errors in ulps against references, argument
//! sweeps, and the f64 reference tables of `testdata/gen_ref.py`.

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

/// The largest error of `f` over `args` against `reference` in f32 ulps,
/// asserting that the slice form gives the scalar bits; prints it with its argument.
pub fn measure32(
    name: &str,
    f: fn(f32) -> f32,
    slice: fn(&[f32], &mut [f32]),
    reference: fn(f64) -> f64,
    args: &[f32],
) -> f64 {
    let mut out = vec![0.0f32; args.len()];
    slice(args, &mut out);
    let mut worst = (0.0f64, 0.0f32);
    for (&x, &y) in args.iter().zip(&out) {
        let s = f(x);
        assert!(
            s.to_bits() == y.to_bits() || (s.is_nan() && y.is_nan()),
            "{name}({x:e}): scalar {s:e} slice {y:e}"
        );
        let e = err32(s, reference(x as f64));
        if e > worst.0 || e.is_nan() {
            worst = (e, x);
        }
    }
    println!(
        "{name} f32: max {:.3} ulp at {:e} ({} args)",
        worst.0,
        worst.1,
        args.len()
    );
    worst.0
}

/// The records of a unary table: (x, want_hi, want_lo).
pub fn table1(bytes: &[u8]) -> Vec<[f64; 3]> {
    records(bytes)
}

/// The records of a binary table: (x, y, want_hi, want_lo).
pub fn table2(bytes: &[u8]) -> Vec<[f64; 4]> {
    records(bytes)
}

fn records<const N: usize>(bytes: &[u8]) -> Vec<[f64; N]> {
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
    let mut out = vec![0.0f64; args.len()];
    slice(&args, &mut out);
    let mut worst = (0.0f64, 0.0f64);
    for (r, &y) in table.iter().zip(&out) {
        let s = f(r[0]);
        assert!(
            s.to_bits() == y.to_bits() || (s.is_nan() && y.is_nan()),
            "{name}({:e}): scalar {s:e} slice {y:e}",
            r[0]
        );
        let e = err64(s, r[1], r[2]);
        if e > worst.0 || e.is_nan() {
            worst = (e, r[0]);
        }
    }
    println!(
        "{name} f64: max {:.3} ulp at {:e} ({} args)",
        worst.0,
        worst.1,
        table.len()
    );
    worst.0
}

/// Asserts that `got` and `want` are the same value, the sign of a zero
/// included, any NaN matching any NaN.
#[track_caller]
pub fn same<T: Into<f64>>(got: T, want: T) {
    let (g, w) = (got.into(), want.into());
    assert!(
        (g.is_nan() && w.is_nan()) || (g == w && g.is_sign_negative() == w.is_sign_negative()),
        "got {g:e}, want {w:e}"
    );
}
