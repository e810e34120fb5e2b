//! Test data: a small deterministic generator and bit comparisons that let
//! NaNs be any NaN.

use num_complex::Complex;

/// splitmix64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        crate::core::test_rng::splitmix(&mut self.0)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Either sign, magnitudes spread over 2^-e..2^e, so that association
    /// matters.
    pub fn mixed(&mut self, e: i32) -> f64 {
        let m = 1.0 + self.unit();
        let p = (self.next() % (2 * e as u64 + 1)) as i32 - e;
        let s = if self.next() & 1 == 0 { 1.0 } else { -1.0 };
        s * m * 2f64.powi(p)
    }
    /// Near 1, for products that neither overflow nor underflow.
    pub fn near_one(&mut self) -> f64 {
        let x = 1.0 + (self.unit() - 0.5) * 0.01;
        if self.next().is_multiple_of(7) { -x } else { x }
    }
}

/// A value's bits, every NaN alike.
pub trait Bits: Copy {
    fn bits(self) -> u128;
}

impl Bits for f32 {
    fn bits(self) -> u128 {
        if self.is_nan() { u128::MAX } else { self.to_bits() as u128 }
    }
}
impl Bits for f64 {
    fn bits(self) -> u128 {
        if self.is_nan() { u128::MAX } else { self.to_bits() as u128 }
    }
}
impl<F: Bits> Bits for Complex<F> {
    fn bits(self) -> u128 {
        self.re.bits().wrapping_mul(0x1_0000_0001) ^ self.im.bits().rotate_left(64)
    }
}
impl Bits for i64 {
    fn bits(self) -> u128 {
        self as u64 as u128
    }
}
impl Bits for u64 {
    fn bits(self) -> u128 {
        self as u128
    }
}

/// Asserts equal bits, every NaN alike.
#[track_caller]
pub fn same<T: Bits + core::fmt::Debug>(a: T, b: T, what: &str) {
    assert_eq!(a.bits(), b.bits(), "{what}: {a:?} vs {b:?}");
}

/// Lengths around the spec's boundaries: lanes, blocks, 2^k ± 1 blocks.
pub fn lengths() -> Vec<usize> {
    let mut v = vec![0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 1000, 1023, 1024, 1025];
    for blocks in [2usize, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 129] {
        for d in [-1i64, 0, 1, 17] {
            v.push((blocks as i64 * 1024 + d) as usize);
        }
    }
    v
}
