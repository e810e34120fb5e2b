//! Double-double arithmetic (about 106 bits) for exact-enough references:
//! sums, products, exp and log.

// Constants hold all their digits: the low parts are the point.
#![allow(clippy::excessive_precision)]

/// hi + lo, |lo| ≤ ulp(hi) / 2.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dd {
    pub hi: f64,
    pub lo: f64,
}

fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let bb = s - a;
    Dd { hi: s, lo: (a - (s - bb)) + (b - bb) }
}

fn quick(a: f64, b: f64) -> Dd {
    let s = a + b;
    Dd { hi: s, lo: b - (s - a) }
}

impl Dd {
    pub fn of(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }
    pub fn add(self, o: Dd) -> Dd {
        let s = two_sum(self.hi, o.hi);
        let t = two_sum(self.lo, o.lo);
        let u = quick(s.hi, s.lo + t.hi);
        quick(u.hi, u.lo + t.lo)
    }
    pub fn neg(self) -> Dd {
        Dd { hi: -self.hi, lo: -self.lo }
    }
    pub fn sub(self, o: Dd) -> Dd {
        self.add(o.neg())
    }
    pub fn mul(self, o: Dd) -> Dd {
        let p = self.hi * o.hi;
        let e = self.hi.mul_add(o.hi, -p);
        quick(p, e + (self.hi * o.lo + self.lo * o.hi))
    }
    pub fn div(self, o: Dd) -> Dd {
        let q1 = self.hi / o.hi;
        let r = self.sub(o.mul(Dd::of(q1)));
        let q2 = r.hi / o.hi;
        let r = r.sub(o.mul(Dd::of(q2)));
        quick(q1, q2).add(Dd::of(r.hi / o.hi))
    }
    pub fn f64(self) -> f64 {
        self.hi + self.lo
    }
    /// e^self.
    pub fn exp(self) -> Dd {
        if self.hi < -745.0 {
            return Dd::of(0.0);
        }
        const LN2: Dd = Dd { hi: std::f64::consts::LN_2, lo: 2.319046813846299558e-17 };
        let k = (self.hi / LN2.hi).round();
        let r = self.sub(LN2.mul(Dd::of(k)));
        // exp(r / 1024) by Taylor, then squared ten times.
        let r = r.mul(Dd::of(1.0 / 1024.0));
        let mut term = Dd::of(1.0);
        let mut sum = Dd::of(1.0);
        for i in 1..=12 {
            term = term.mul(r).div(Dd::of(i as f64));
            sum = sum.add(term);
        }
        for _ in 0..10 {
            sum = sum.mul(sum);
        }
        let scale = 2f64.powi(k as i32);
        Dd { hi: sum.hi * scale, lo: sum.lo * scale }
    }
    /// The natural logarithm of a positive value: Newton on exp.
    pub fn ln(self) -> Dd {
        let y = Dd::of(self.hi.ln());
        let e = y.exp();
        y.add(self.sub(e).div(e))
    }
}

#[test]
fn dd_exp_and_ln_agree_with_known_values() {
    let e = Dd::of(1.0).exp();
    assert_eq!(e.hi, std::f64::consts::E);
    assert!((e.lo - 1.445646891729250158e-16).abs() < 1e-28);
    let l = Dd::of(10.0).ln();
    assert_eq!(l.hi, std::f64::consts::LN_10);
    assert!((l.lo - -2.170756223382249351e-16).abs() < 1e-28);
    let x = Dd::of(-3.7).exp().ln();
    assert!(x.sub(Dd::of(-3.7)).hi.abs() < 1e-28);
}
