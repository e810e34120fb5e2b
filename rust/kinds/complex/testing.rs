//! Test helpers of the complex kinds: errors in ulps of the result's
//! modulus, argument samples, the mpmath tables of
//! `testdata/gen_complex_ref.py`, and comparisons with signed zeros.

use super::{narrow, widen};
use crate::loops::column::{C32, C64};
pub use crate::kinds::testing::records;
use crate::kinds::testing::{pow2, same_value, table, worst_error};

/// A NaN, short for the tables of special values.
pub const NAN: f64 = f64::NAN;

/// `re + i im`.
pub fn c(re: f64, im: f64) -> C64 {
    C64::new(re, im)
}

/// The binary exponent of `|re + i im|` for finite parts not both zero
/// (from the parts, without overflow), at least `min`.
fn modulus_exponent(re: f64, im: f64, min: i32) -> i32 {
    let m = re.abs().max(im.abs());
    if m == 0.0 {
        return min;
    }
    let e = (m.log2().floor() as i32).max(min);
    let s = pow2(-e as i64);
    let (r, i) = (re * s, im * s);
    if r * r + i * i >= 4.0 {
        e + 1
    } else {
        e
    }
}

/// The error of a part `got` against `hi + lo` in units of `unit`: 0 for a
/// NaN against a NaN or an infinity equal to the one `inf` (what the exact
/// part rounds to), infinite for any other NaN or infinity.
fn part_err(got: f64, hi: f64, lo: f64, inf: f64, unit: f64) -> f64 {
    if got.is_nan() || hi.is_nan() {
        return if got.is_nan() && hi.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if got.is_infinite() || hi.is_infinite() || inf.is_infinite() {
        return if got == inf { 0.0 } else { f64::INFINITY };
    }
    ((got - hi) - lo).abs() / unit
}

/// The larger error of the parts of a c64 `got` against `want` (re hi, re
/// lo, im hi, im lo), in f64 ulps of the exact result's modulus.
pub fn cerr64(got: C64, want: &[f64]) -> f64 {
    let (rh, rl, ih, il) = (want[0], want[1], want[2], want[3]);
    let e = if rh.is_finite() && ih.is_finite() {
        modulus_exponent(rh, ih, -1022)
    } else {
        1023
    };
    let unit = pow2((e - 52) as i64);
    part_err(got.re, rh, rl, rh, unit).max(part_err(got.im, ih, il, ih, unit))
}

/// The larger error of the parts of a c32 `got` against the f64 parts of
/// `want`, in f32 ulps of `|want|`.
pub fn cerr32(got: C32, want: C64) -> f64 {
    let e = if want.re.is_finite() && want.im.is_finite() {
        modulus_exponent(want.re, want.im, -126)
    } else {
        127
    };
    let unit = pow2((e - 23) as i64);
    let part = |g: f32, w: f64| part_err(g as f64, w, 0.0, w as f32 as f64, unit);
    part(got.re, want.re).max(part(got.im, want.im))
}

/// A c32 accuracy case of a unary kind: its name, c32 function and slice
/// form, and c64 function.
pub type Case32 = (
    &'static str,
    fn(C32) -> C32,
    fn(&[C32], &mut [C32]),
    fn(C64) -> C64,
);

/// A c64 accuracy case of a unary kind: its name and c64 function and
/// slice form.
pub type Case64 = (&'static str, fn(C64) -> C64, fn(&[C64], &mut [C64]));

/// The largest errors (c32, c64) of unary kinds, each printed with its
/// argument, asserting that the slice forms give the scalar bits: of each
/// c32 case over `sample32(seed, n)` against its c64 function on the
/// widened arguments, then of each c64 case over its mpmath table
/// `testdata/c<name>.bin`.
pub fn measure_kinds(seed: u64, n: usize, c32: &[Case32], c64: &[Case64]) -> (f64, f64) {
    let a = sample32(seed, n);
    let mut w32 = 0.0f64;
    for &(name, k32, s32, k64) in c32 {
        let e = worst_error(name, "c32", &a, k32, s32, same_bits, |i, s| {
            cerr32(s, k64(widen(a[i])))
        });
        w32 = w32.max(e);
    }
    let mut w64 = 0.0f64;
    for &(name, k64, s64) in c64 {
        let t = records::<6>(table(&format!("c{name}")));
        let args: Vec<C64> = t.iter().map(|r| c(r[0], r[1])).collect();
        let e = worst_error(name, "c64", &args, k64, s64, same_bits, |i, s| {
            cerr64(s, &t[i][2..])
        });
        w64 = w64.max(e);
    }
    (w32, w64)
}

/// A deterministic generator of 64-bit values (splitmix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        crate::core::test_rng::splitmix(&mut self.0)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 * 2f64.powi(-53))
    }

    /// A random sign times `2^u`, u uniform in `[lo, hi)`.
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let v = self.uniform(lo, hi).exp2();
        if self.next() & 1 == 0 {
            v
        } else {
            -v
        }
    }

    /// A zero, a tiny or a small value, of a random sign.
    pub fn small(&mut self) -> f64 {
        match self.next() % 3 {
            0 => self.log_uniform(-1.0, 0.0) * 0.0,
            1 => self.log_uniform(-149.0, -30.0),
            _ => self.log_uniform(-30.0, -1.0),
        }
    }
}

/// About `n` c32 arguments over the whole plane and its hard places: parts
/// log-uniform over the whole f32 range, uniform in `[-4, 4]^2`, and near
/// the axes, the unit circle, ±1 and ±i, and the overflow thresholds of the
/// exponentials (|part| about 88 to 104).
pub fn sample32(seed: u64, n: usize) -> Vec<C32> {
    let mut g = Rng::new(seed);
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let (x, y) = match v.len() % 10 {
            0..=2 => (g.log_uniform(-149.0, 128.0), g.log_uniform(-149.0, 128.0)),
            3 | 4 => (g.uniform(-4.0, 4.0), g.uniform(-4.0, 4.0)),
            5 => (g.uniform(-30.0, 30.0), g.small()),
            6 => (g.small(), g.uniform(-30.0, 30.0)),
            7 => {
                let t = g.uniform(-4.0, 4.0);
                let r = 1.0 + g.log_uniform(-40.0, -2.0);
                (r * t.cos(), r * t.sin())
            }
            8 => {
                let one = if g.next() & 1 == 0 { 1.0 } else { -1.0 };
                let (a, b) = (one + g.log_uniform(-30.0, -1.0), g.small());
                if g.next() & 1 == 0 {
                    (a, b)
                } else {
                    (b, a)
                }
            }
            _ => (g.log_uniform(6.4, 6.71), g.uniform(-4.0, 4.0)),
        };
        let z = C32::new(x as f32, y as f32);
        v.push(z);
        v.push(C32::new(z.im, z.re));
    }
    v
}

/// Whether two complex numbers have the same bits, any NaN matching any NaN.
pub fn same_bits<T: Into<f64> + Copy>(
    a: num_complex::Complex<T>,
    b: num_complex::Complex<T>,
) -> bool {
    same_value(a.re, b.re) && same_value(a.im, b.im)
}

/// Asserts that `got` is `want`, the signs of zeros included, any NaN
/// matching any NaN.
#[track_caller]
pub fn same_c(what: &str, got: C64, want: C64) {
    assert!(same_bits(got, want), "{what}: got {got:e}, want {want:e}");
}

/// Asserts that the c64 function `k64` of a kind gives `want` at `z`, and
/// that its c32 function `k32` gives at `z` rounded to c32 what `k64` gives
/// on that argument widened, rounded to c32.
#[track_caller]
pub fn same_kind(name: &str, k64: fn(C64) -> C64, k32: fn(C32) -> C32, z: C64, want: C64) {
    same_c(&format!("{name}({z})"), k64(z), want);
    same_c(
        &format!("{name} c32({z})"),
        widen(k32(narrow(z))),
        widen(narrow(k64(widen(narrow(z))))),
    );
}
