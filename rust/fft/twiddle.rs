//! Twiddles with fixed bits: e^(2πi r/n) for integer r and n, computed in
//! double-double arithmetic (about 106 bits) from an exact octant reduction
//! of the angle and Taylor series, then rounded once to the plan's precision.
//! Only additions, multiplications, divisions and fused multiply-adds of
//! `f64` enter, so the bits are the same on every target; no `libm` call.

/// A double-double number: `hi + lo`, with `|lo| <= ulp(hi) / 2`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dd(pub f64, pub f64);

fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let bb = s - a;
    Dd(s, (a - (s - bb)) + (b - bb))
}

fn quick_two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    Dd(s, b - (s - a))
}

fn two_prod(a: f64, b: f64) -> Dd {
    let p = a * b;
    Dd(p, a.mul_add(b, -p))
}

impl Dd {
    /// The double-double of one `f64`.
    pub fn of(x: f64) -> Dd {
        Dd(x, 0.0)
    }

    /// The sum, to about 2^-104 relative.
    pub fn add(self, o: Dd) -> Dd {
        let s = two_sum(self.0, o.0);
        let t = two_sum(self.1, o.1);
        let r = quick_two_sum(s.0, s.1 + t.0);
        quick_two_sum(r.0, r.1 + t.1)
    }

    /// The difference.
    pub fn sub(self, o: Dd) -> Dd {
        self.add(o.neg())
    }

    /// The negation (exact).
    pub fn neg(self) -> Dd {
        Dd(-self.0, -self.1)
    }

    /// The product, to about 2^-104 relative.
    pub fn mul(self, o: Dd) -> Dd {
        let p = two_prod(self.0, o.0);
        quick_two_sum(p.0, p.1 + (self.0 * o.1 + self.1 * o.0))
    }

    /// The quotient by an `f64`.
    pub fn div_f(self, b: f64) -> Dd {
        let q1 = self.0 / b;
        let p = two_prod(q1, b);
        let r = ((self.0 - p.0) - p.1) + self.1;
        quick_two_sum(q1, r / b)
    }
}

/// π/4 in double-double.
const QUARTER_PI: Dd = Dd(std::f64::consts::FRAC_PI_4, 3.061_616_997_868_383e-17);

/// (cos x, sin x) for `0 <= x <= π/4`, by Taylor series nested in Horner form.
fn cos_sin_small(x: Dd) -> (Dd, Dd) {
    let x2 = x.mul(x);
    let one = Dd::of(1.0);
    // sin x = x (1 - x²/(2·3) (1 - x²/(4·5) (1 - ...))), to x^31.
    let mut s = one;
    for k in (1..=15).rev() {
        let d = (2 * k) as f64 * (2 * k + 1) as f64;
        s = one.sub(x2.mul(s).div_f(d));
    }
    // cos x = 1 - x²/(1·2) (1 - x²/(3·4) (1 - ...)), to x^30.
    let mut c = one;
    for k in (1..=15).rev() {
        let d = (2 * k - 1) as f64 * (2 * k) as f64;
        c = one.sub(x2.mul(c).div_f(d));
    }
    (c, x.mul(s))
}

/// (cos θ, sin θ) for θ = 2π r/n, `n > 0`, by reduction to [0, π/4] through
/// exact integer symmetries. `8n` must be below 2^53.
pub fn cos_sin(r: u64, n: u64) -> (Dd, Dd) {
    assert!(n > 0 && n < (1 << 50), "twiddle denominator {n} out of range");
    // θ = (π/4) R/n, R = 8 (r mod n) in [0, 8n).
    let mut rr = 8 * (r % n);
    let (mut neg_sin, mut neg_cos, mut swap) = (false, false, false);
    if rr > 4 * n {
        rr = 8 * n - rr; // θ -> 2π - θ
        neg_sin = true;
    }
    if rr > 2 * n {
        rr = 4 * n - rr; // θ -> π - θ
        neg_cos = true;
    }
    if rr > n {
        rr = 2 * n - rr; // θ -> π/2 - θ
        swap = true;
    }
    let q = rr as f64 / n as f64;
    let rem = (-q).mul_add(n as f64, rr as f64);
    let frac = quick_two_sum(q, rem / n as f64);
    let (mut c, mut s) = cos_sin_small(QUARTER_PI.mul(frac));
    if swap {
        std::mem::swap(&mut c, &mut s);
    }
    if neg_cos {
        c = c.neg();
    }
    if neg_sin {
        s = s.neg();
    }
    (c, s)
}

/// e^(2πi r/n) for every r, from two tables of about √n entries each: the
/// power at r's high part times the power at its low part, multiplied in
/// double-double.
pub struct Cis {
    n: u64,
    shift: u32,
    high: Vec<(Dd, Dd)>,
    low: Vec<(Dd, Dd)>,
}

impl Cis {
    /// The tables for denominator `n > 0`.
    pub fn new(n: u64) -> Cis {
        let bits = 64 - n.leading_zeros();
        let shift = bits.div_ceil(2);
        let low = (0..(1u64 << shift).min(n)).map(|r| cos_sin(r, n)).collect();
        let high = (0..=(n >> shift)).map(|r| cos_sin(r << shift, n)).collect();
        Cis { n, shift, high, low }
    }

    /// (cos, sin) of 2π r/n in double-double.
    pub fn get(&self, r: u64) -> (Dd, Dd) {
        let r = r % self.n;
        let (a, b) = self.high[(r >> self.shift) as usize];
        let (c, d) = self.low[(r & ((1 << self.shift) - 1)) as usize];
        (a.mul(c).sub(b.mul(d)), a.mul(d).add(b.mul(c)))
    }

    /// e^(σ 2πi r/n) rounded to `f64`, σ = -1 where `negative`.
    pub fn f64(&self, r: u64, negative: bool) -> (f64, f64) {
        let (c, s) = self.get(r);
        (c.0, if negative { -s.0 } else { s.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_system_sine_and_cosine() {
        for n in [1u64, 2, 3, 5, 7, 8, 12, 251, 1000, 1 << 20, 1_000_003, 2_000_006] {
            let cis = Cis::new(n);
            for r in (0..n).step_by((n as usize / 97).max(1)).chain([n - 1]) {
                // The system's angle itself rounds, by up to 8.9e-16 near 2π.
                let t = 2.0 * std::f64::consts::PI * r as f64 / n as f64;
                let (c, s) = cis.get(r);
                assert!((c.0 - t.cos()).abs() < 2e-15 && (s.0 - t.sin()).abs() < 2e-15, "{r}/{n}");
                let (c1, s1) = cos_sin(r, n);
                assert!((c.0 - c1.0).abs() + (s.0 - s1.0).abs() <= 2.3e-16, "{r}/{n}");
                // The pair's norm is 1 to double-double accuracy.
                let norm = c.mul(c).add(s.mul(s)).sub(Dd::of(1.0));
                assert!(norm.0.abs() < 1e-30, "{r}/{n}: {norm:?}");
            }
        }
        // Exact points.
        assert_eq!(cos_sin(1, 4), (Dd(0.0, 0.0), Dd(1.0, 0.0)));
        assert_eq!(cos_sin(1, 2).0, Dd(-1.0, 0.0));
        assert_eq!(cos_sin(1, 6).0 .0, 0.5);
    }
}
