//! The slice forms against the scalar functions, bit for bit (any NaN
//! matching any NaN), on large random samples that mix ordinary arguments
//! with special ones in every block, at every alignment of a slice's tail:
//! each compilation of the slice forms that the CPU runs (see `wide.rs`),
//! on the same samples.

use super::*;

type Kind32 = (&'static str, fn(f32) -> f32, fn(&[f32], &mut [f32]));
type Kind64 = (&'static str, fn(f64) -> f64, fn(&[f64], &mut [f64]));

const KINDS32: &[Kind32] = &[
    ("exp", exp_f32, exp_f32_slice),
    ("exp2", exp2_f32, exp2_f32_slice),
    ("expm1", expm1_f32, expm1_f32_slice),
    ("log", log_f32, log_f32_slice),
    ("log2", log2_f32, log2_f32_slice),
    ("log1p", log1p_f32, log1p_f32_slice),
    ("sin", sin_f32, sin_f32_slice),
    ("cos", cos_f32, cos_f32_slice),
    ("tan", tan_f32, tan_f32_slice),
    ("asin", asin_f32, asin_f32_slice),
    ("acos", acos_f32, acos_f32_slice),
    ("atan", atan_f32, atan_f32_slice),
    ("sinh", sinh_f32, sinh_f32_slice),
    ("cosh", cosh_f32, cosh_f32_slice),
    ("tanh", tanh_f32, tanh_f32_slice),
    ("asinh", asinh_f32, asinh_f32_slice),
    ("acosh", acosh_f32, acosh_f32_slice),
    ("atanh", atanh_f32, atanh_f32_slice),
    ("erf", erf_f32, erf_f32_slice),
    ("rsqrt", rsqrt_f32, rsqrt_f32_slice),
];

const KINDS64: &[Kind64] = &[
    ("exp", exp_f64, exp_f64_slice),
    ("exp2", exp2_f64, exp2_f64_slice),
    ("expm1", expm1_f64, expm1_f64_slice),
    ("log", log_f64, log_f64_slice),
    ("log2", log2_f64, log2_f64_slice),
    ("log1p", log1p_f64, log1p_f64_slice),
    ("sin", sin_f64, sin_f64_slice),
    ("cos", cos_f64, cos_f64_slice),
    ("tan", tan_f64, tan_f64_slice),
    ("asin", asin_f64, asin_f64_slice),
    ("acos", acos_f64, acos_f64_slice),
    ("atan", atan_f64, atan_f64_slice),
    ("sinh", sinh_f64, sinh_f64_slice),
    ("cosh", cosh_f64, cosh_f64_slice),
    ("tanh", tanh_f64, tanh_f64_slice),
    ("asinh", asinh_f64, asinh_f64_slice),
    ("acosh", acosh_f64, acosh_f64_slice),
    ("atanh", atanh_f64, atanh_f64_slice),
    ("erf", erf_f64, erf_f64_slice),
    ("rsqrt", rsqrt_f64, rsqrt_f64_slice),
];

/// The kinds' thresholds (ordinary ranges, clamps, cuts between
/// formulas), near which arguments are drawn.
const EDGES: &[f64] = &[
    0.0,
    0.5,
    1.0,
    2.0,
    3.5,
    6.0,
    22.0,
    26.0,
    0.41421356237309503,
    1048576.0,
    268435456.0,
    711.0,
    -87.33,
    88.3,
    -125.0,
    127.0,
    86.0,
    -25.0,
    -104.0,
    89.0,
    -151.0,
    129.0,
    -708.3,
    709.0,
    -1021.0,
    1023.0,
    707.0,
    -40.0,
    -746.0,
    710.0,
    -1076.0,
    1025.0,
    -745.1332191019411,
    709.782712893384,
    88.72283,
    -103.97208,
    f64::MIN_POSITIVE,
    f32::MIN_POSITIVE as f64,
    f64::MAX,
    f32::MAX as f64,
    f64::INFINITY,
];

/// A xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        crate::core::test_rng::xorshift(&mut self.0)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// An argument of any kind: any bits, typical ranges, near an edge, special.
    fn arg64(&mut self) -> f64 {
        let sign = if self.next() & 1 == 0 { 1.0 } else { -1.0 };
        match self.next() % 10 {
            0 | 1 => f64::from_bits(self.next()),
            2 => f64::from_bits(self.next() as u32 as u64), // subnormal
            3 => sign * self.unit() * 2.0,
            4 => sign * self.unit() * 30.0,
            5 => sign * self.unit() * 1000.0,
            6 => {
                let e = (self.next() % 2100) as i32 - 1075;
                sign * 2f64.powi(e) * (1.0 + self.unit())
            }
            7 | 8 => {
                let edge = EDGES[(self.next() % EDGES.len() as u64) as usize];
                let d = (self.next() % 65) as i64 - 32;
                sign * f64::from_bits((edge.to_bits() as i64 + d).max(0) as u64)
            }
            _ => [
                f64::NAN,
                -f64::NAN,
                f64::INFINITY,
                -f64::INFINITY,
                0.0,
                -0.0,
                1.0,
                -1.0,
            ][(self.next() % 8) as usize],
        }
    }

    fn arg32(&mut self) -> f32 {
        match self.next() % 10 {
            0..=2 => f32::from_bits(self.next() as u32),
            3 => {
                // Near an edge, in f32 ulps.
                let edge = EDGES[(self.next() % EDGES.len() as u64) as usize] as f32;
                let d = (self.next() % 65) as i32 - 32;
                let x = f32::from_bits((edge.to_bits() as i32 + d).max(0) as u32);
                if self.next() & 1 == 0 {
                    x
                } else {
                    -x
                }
            }
            _ => self.arg64() as f32,
        }
    }
}

fn same32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn same64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Samples of mostly ordinary arguments with a rarer kind now and then,
/// so that blocks with and without a second pass both occur.
fn mixed<T: Copy>(
    n: usize,
    rng: &mut Rng,
    ordinary: impl Fn(&mut Rng) -> T,
    any: impl Fn(&mut Rng) -> T,
) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        // Runs of a few thousand: some all ordinary, some dense with others.
        let run = 1 + (rng.next() % 3000) as usize;
        let rate = [0, 1, 50, 200, 1000][(rng.next() % 5) as usize];
        for _ in 0..run {
            let x = if (rng.next() % 1000) < rate {
                any(rng)
            } else {
                ordinary(rng)
            };
            v.push(x);
        }
    }
    v.truncate(n);
    v
}

#[test]
fn slices_match_scalars_f32() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let samples: Vec<Vec<f32>> = KINDS32
        .iter()
        .map(|_| {
            mixed(
                400_000,
                &mut rng,
                |r| ((r.unit() * 2.0 - 1.0) * [1.5, 6.0, 40.0][(r.next() % 3) as usize]) as f32,
                Rng::arg32,
            )
        })
        .collect();
    wide::on_each_compilation(|isa| {
        for (&(name, f, s), x) in KINDS32.iter().zip(&samples) {
            let mut out = vec![0.0f32; x.len()];
            s(x, &mut out);
            for (&v, &y) in x.iter().zip(&out) {
                assert!(
                    same32(f(v), y),
                    "{name}({v:e}), {isa}: scalar {:e}, slice {y:e}",
                    f(v)
                );
            }
            // Short slices at every offset: the vector loops' tails.
            for len in 0..40 {
                for start in (0..x.len() - len).step_by(9973) {
                    let mut o = vec![0.0f32; len];
                    s(&x[start..start + len], &mut o);
                    for (&v, &y) in x[start..start + len].iter().zip(&o) {
                        assert!(same32(f(v), y), "{name}({v:e}), {isa}, in a slice of {len}");
                    }
                }
            }
        }
    });
}

#[test]
fn slices_match_scalars_f64() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let samples: Vec<Vec<f64>> = KINDS64
        .iter()
        .map(|_| {
            mixed(
                400_000,
                &mut rng,
                |r| (r.unit() * 2.0 - 1.0) * [1.5, 6.0, 40.0][(r.next() % 3) as usize],
                Rng::arg64,
            )
        })
        .collect();
    wide::on_each_compilation(|isa| {
        for (&(name, f, s), x) in KINDS64.iter().zip(&samples) {
            let mut out = vec![0.0f64; x.len()];
            s(x, &mut out);
            for (&v, &y) in x.iter().zip(&out) {
                assert!(
                    same64(f(v), y),
                    "{name}({v:e}), {isa}: scalar {:e}, slice {y:e}",
                    f(v)
                );
            }
            for len in 0..40 {
                for start in (0..x.len() - len).step_by(9973) {
                    let mut o = vec![0.0f64; len];
                    s(&x[start..start + len], &mut o);
                    for (&v, &y) in x[start..start + len].iter().zip(&o) {
                        assert!(same64(f(v), y), "{name}({v:e}), {isa}, in a slice of {len}");
                    }
                }
            }
        }
    });
}

type Binary<T> = (&'static str, fn(T, T) -> T, fn(&[T], &[T], &mut [T]));

const BINARY32: &[Binary<f32>] = &[
    ("atan2", atan2_f32, atan2_f32_slice),
    ("hypot", hypot_f32, hypot_f32_slice),
    ("pow", pow_f32, pow_f32_slice),
];

const BINARY64: &[Binary<f64>] = &[
    ("atan2", atan2_f64, atan2_f64_slice),
    ("hypot", hypot_f64, hypot_f64_slice),
    ("pow", pow_f64, pow_f64_slice),
];

/// The binary kinds' slice forms against their scalar functions, as the
/// unary ones, each kind over its pair of samples.
fn binary_slices_match<T: Copy + Default + core::fmt::LowerExp>(
    kinds: &[Binary<T>],
    samples: &[(Vec<T>, Vec<T>)],
    same: fn(T, T) -> bool,
) {
    wide::on_each_compilation(|isa| {
        for (&(name, f, s), (a, b)) in kinds.iter().zip(samples) {
            let mut out = vec![T::default(); a.len()];
            s(a, b, &mut out);
            for ((&u, &v), &y) in a.iter().zip(b).zip(&out) {
                assert!(
                    same(f(u, v), y),
                    "{name}({u:e}, {v:e}), {isa}: scalar {:e}, slice {y:e}",
                    f(u, v)
                );
            }
            for len in 0..40 {
                for start in (0..a.len() - len).step_by(9973) {
                    let r = start..start + len;
                    let mut o = vec![T::default(); len];
                    s(&a[r.clone()], &b[r.clone()], &mut o);
                    for ((&u, &v), &y) in a[r.clone()].iter().zip(&b[r]).zip(&o) {
                        assert!(
                            same(f(u, v), y),
                            "{name}({u:e}, {v:e}), {isa}, in a slice of {len}"
                        );
                    }
                }
            }
        }
    });
}

#[test]
fn binary_slices_match_scalars_f32() {
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    let sample = |r: &mut Rng| {
        mixed(
            200_000,
            r,
            |r| ((r.unit() * 2.0 - 1.0) * [1.5, 6.0, 40.0][(r.next() % 3) as usize]) as f32,
            Rng::arg32,
        )
    };
    let samples: Vec<_> = BINARY32
        .iter()
        .map(|_| (sample(&mut rng), sample(&mut rng)))
        .collect();
    binary_slices_match(BINARY32, &samples, same32);
}

#[test]
fn binary_slices_match_scalars_f64() {
    let mut rng = Rng(0x1405_7b7e_f767_814f);
    let sample = |r: &mut Rng| {
        mixed(
            200_000,
            r,
            |r| (r.unit() * 2.0 - 1.0) * [1.5, 6.0, 40.0][(r.next() % 3) as usize],
            Rng::arg64,
        )
    };
    let samples: Vec<_> = BINARY64
        .iter()
        .map(|_| (sample(&mut rng), sample(&mut rng)))
        .collect();
    binary_slices_match(BINARY64, &samples, same64);
}

/// Every f32 argument of every kind, slice against scalar, in each
/// compilation (minutes):
/// `cargo test --release --no-default-features --lib kinds::slices -- --ignored`.
#[test]
#[ignore]
fn slices_match_scalars_f32_exhaustive() {
    const C: usize = 1 << 20;
    wide::on_each_compilation(|isa| {
        let mut x = vec![0.0f32; C];
        let mut out = vec![0.0f32; C];
        for &(name, f, s) in KINDS32 {
            for chunk in 0..(1u64 << 32) / C as u64 {
                for (i, v) in x.iter_mut().enumerate() {
                    *v = f32::from_bits((chunk * C as u64 + i as u64) as u32);
                }
                s(&x, &mut out);
                for (&v, &y) in x.iter().zip(&out) {
                    assert!(
                        same32(f(v), y),
                        "{name}({v:e}), {isa}: scalar {:e}, slice {y:e}",
                        f(v)
                    );
                }
            }
        }
    });
}
