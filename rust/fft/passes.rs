//! Stockham passes: a line of n points as stages of radix p, each reading
//! one buffer and writing the other in self-sorting order, so that the
//! last stage leaves the transform in natural order.
//!
//! The points of `lanes` independent lines lie interleaved, point j of lane
//! b at `b + lanes * j`. A stage of radix p on sub-transforms of n' = p m
//! points, s lanes of them, reads a_jj = x[t + s (q + m jj)] and writes
//! y[t + s (p q + k)] = w^(q k) Σ_jj a_jj ω_p^(jj k), w = e^(∓2πi / n')
//! (decimation in frequency); the next stage takes s p lanes of m points.
//! Every lane runs the same operations in the same order, so a line's bits
//! do not depend on its lanes or their number, and the loops over lanes
//! vectorise without changing a bit.

use super::real::{by_blocks, cmul, widest, Lanes, Real};
use super::twiddle::{cos_sin, Cis};

/// One stage of radix `p` over sub-transforms of `p * m` points.
pub struct Stage<T> {
    p: usize,
    m: usize,
    /// Twiddle w^(q k) at `q * (p - 1) + k - 1`, real and imaginary parts.
    wr: Vec<T>,
    wi: Vec<T>,
    /// For an odd p: cos(2π r/p) and σ sin(2π r/p) at r, σ = -1 forward.
    cr: Vec<T>,
    sn: Vec<T>,
    inverse: bool,
}

/// A line of n points as Stockham stages.
pub struct Passes<T> {
    pub n: usize,
    stages: Vec<Stage<T>>,
}

/// Buffers a transform works in: the points (`ar`, `ai`), the other buffer
/// of the passes (`br`, `bi`), a stage's temporaries and an inner
/// transform's own.
#[derive(Default)]
pub struct Work<T> {
    pub ar: Vec<T>,
    pub ai: Vec<T>,
    pub br: Vec<T>,
    pub bi: Vec<T>,
    tmp: Vec<T>,
    pub inner: Option<Box<Work<T>>>,
}

impl<T: Real> Work<T> {
    /// Makes each of the four buffers `len` points long.
    pub fn fit(&mut self, len: usize) {
        for v in [&mut self.ar, &mut self.ai, &mut self.br, &mut self.bi] {
            v.resize(len, T::ZERO);
        }
    }
}

/// The radices of n's passes: fours, then a two where n has an odd power of
/// two, then its odd primes ascending.
pub fn radices(mut n: usize) -> Vec<usize> {
    let mut r = Vec::new();
    while n.is_multiple_of(4) {
        r.push(4);
        n /= 4;
    }
    if n.is_multiple_of(2) {
        r.push(2);
        n /= 2;
    }
    let mut p = 3;
    while p * p <= n {
        while n.is_multiple_of(p) {
            r.push(p);
            n /= p;
        }
        p += 2;
    }
    if n > 1 {
        r.push(n);
    }
    r
}

impl<T: Real> Passes<T> {
    /// The stages of an n-point transform, `inverse` for e^(+2πi jk/n).
    pub fn new(n: usize, inverse: bool) -> Passes<T> {
        let mut stages = Vec::new();
        let mut len = n;
        for p in radices(n) {
            let m = len / p;
            let cis = Cis::new(len as u64);
            let mut wr = Vec::with_capacity(m * (p - 1));
            let mut wi = Vec::with_capacity(m * (p - 1));
            for q in 0..m {
                for k in 1..p {
                    let (c, s) = cis.f64((q * k) as u64, !inverse);
                    wr.push(T::of(c));
                    wi.push(T::of(s));
                }
            }
            let (mut cr, mut sn) = (Vec::new(), Vec::new());
            if p % 2 == 1 {
                for r in 0..p {
                    let (c, s) = cos_sin(r as u64, p as u64);
                    cr.push(T::of(c.0));
                    sn.push(T::of(if inverse { s.0 } else { -s.0 }));
                }
            }
            stages.push(Stage { p, m, wr, wi, cr, sn, inverse });
            len = m;
        }
        Passes { n, stages }
    }

    /// Transforms `lanes` interleaved lines in `w.ar`, `w.ai` (each exactly
    /// `n * lanes` long), in place.
    pub fn run(&self, lanes: usize, w: &mut Work<T>) {
        let (p, l) = (self, lanes);
        widest!(<T>(p: &Passes<T>, l: usize, w: &mut Work<T>) { p.run_here(l, w) });
    }

    /// [`Passes::run`] in the caller's compilation, for a caller that a
    /// wider one runs.
    #[inline(always)]
    pub fn run_here(&self, lanes: usize, w: &mut Work<T>) {
        let passes = self;
        let len = passes.n * lanes;
        debug_assert!(w.ar.len() == len && w.ai.len() == len);
        w.br.resize(len, T::ZERO);
        w.bi.resize(len, T::ZERO);
        let mut s = lanes;
        for st in &passes.stages {
            let (x, y) = ((&w.ar[..], &w.ai[..]), (&mut w.br[..], &mut w.bi[..]));
            match st.p {
                2 => pass2(st, s, x, y),
                4 => pass4(st, s, x, y),
                _ => pass_odd(st, s, x, y, &mut w.tmp),
            }
            std::mem::swap(&mut w.ar, &mut w.br);
            std::mem::swap(&mut w.ai, &mut w.bi);
            s *= st.p;
        }
    }
}

type In<'a, T> = (&'a [T], &'a [T]);
type Out<'a, T> = (&'a mut [T], &'a mut [T]);

#[inline(always)]
fn pass2<T: Real>(st: &Stage<T>, s: usize, (xr, xi): In<T>, (yr, yi): Out<T>) {
    let m = st.m;
    for q in 0..m {
        let (a, b) = (s * q, s * (q + m));
        let o = 2 * s * q;
        let (y0r, y1r) = yr[o..o + 2 * s].split_at_mut(s);
        let (y0i, y1i) = yi[o..o + 2 * s].split_at_mut(s);
        let x = [&xr[a..a + s], &xi[a..a + s], &xr[b..b + s], &xi[b..b + s]];
        by_blocks(x, [y0r, y0i, y1r, y1i], Radix2(st.wr[q], st.wi[q]));
    }
}

/// Radix-2 butterflies of twiddle w (real, imaginary): lanes of a0 and a1
/// (real and imaginary parts) into a0 + a1 and (a0 - a1) w.
struct Radix2<T>(T, T);

impl<T: Real> Lanes<T, 4, 4> for Radix2<T> {
    #[inline(always)]
    fn run<X: AsRef<[T]>, Y: AsMut<[T]>>(&self, [ar, ai, br, bi]: &[X; 4], [y0r, y0i, y1r, y1i]: &mut [Y; 4]) {
        let y0r = y0r.as_mut();
        let s = y0r.len();
        let (ar, ai, br, bi) = (&ar.as_ref()[..s], &ai.as_ref()[..s], &br.as_ref()[..s], &bi.as_ref()[..s]);
        let (y0i, y1r, y1i) = (&mut y0i.as_mut()[..s], &mut y1r.as_mut()[..s], &mut y1i.as_mut()[..s]);
        for t in 0..s {
            y0r[t] = ar[t] + br[t];
            y0i[t] = ai[t] + bi[t];
            let (r, i) = cmul(ar[t] - br[t], ai[t] - bi[t], self.0, self.1);
            y1r[t] = r;
            y1i[t] = i;
        }
    }
}

#[inline(always)]
fn pass4<T: Real>(st: &Stage<T>, s: usize, (xr, xi): In<T>, (yr, yi): Out<T>) {
    let m = st.m;
    for q in 0..m {
        let w = &st.wr[3 * q..3 * q + 3];
        let v = &st.wi[3 * q..3 * q + 3];
        let w = [w[0], v[0], w[1], v[1], w[2], v[2]];
        let at = |j: usize| s * (q + m * j);
        let x = |j: usize| (&xr[at(j)..at(j) + s], &xi[at(j)..at(j) + s]);
        let (x0, x1, x2, x3) = (x(0), x(1), x(2), x(3));
        let x = [x0.0, x0.1, x1.0, x1.1, x2.0, x2.1, x3.0, x3.1];
        let o = 4 * s * q;
        let (y0r, rest) = yr[o..o + 4 * s].split_at_mut(s);
        let (y1r, rest) = rest.split_at_mut(s);
        let (y2r, y3r) = rest.split_at_mut(s);
        let (y0i, rest) = yi[o..o + 4 * s].split_at_mut(s);
        let (y1i, rest) = rest.split_at_mut(s);
        let (y2i, y3i) = rest.split_at_mut(s);
        let y = [y0r, y0i, y1r, y1i, y2r, y2i, y3r, y3i];
        if st.inverse {
            by_blocks(x, y, Radix4::<T, true>(w));
        } else {
            by_blocks(x, y, Radix4::<T, false>(w));
        }
    }
}

/// Radix-4 butterflies of twiddles w1, w2, w3 (real then imaginary parts):
/// lanes of a0 to a3 (real and imaginary parts) into y0 to y3.
struct Radix4<T, const INVERSE: bool>([T; 6]);

impl<T: Real, const INVERSE: bool> Lanes<T, 8, 8> for Radix4<T, INVERSE> {
    #[inline(always)]
    fn run<X: AsRef<[T]>, Y: AsMut<[T]>>(&self, x: &[X; 8], y: &mut [Y; 8]) {
        let [y0r, y0i, y1r, y1i, y2r, y2i, y3r, y3i] = y;
        let y0r = y0r.as_mut();
        let s = y0r.len();
        let [x0r, x0i, x1r, x1i, x2r, x2i, x3r, x3i] = x;
        let (x0r, x0i, x1r, x1i) = (&x0r.as_ref()[..s], &x0i.as_ref()[..s], &x1r.as_ref()[..s], &x1i.as_ref()[..s]);
        let (x2r, x2i, x3r, x3i) = (&x2r.as_ref()[..s], &x2i.as_ref()[..s], &x3r.as_ref()[..s], &x3i.as_ref()[..s]);
        let (y0i, y1r, y1i) = (&mut y0i.as_mut()[..s], &mut y1r.as_mut()[..s], &mut y1i.as_mut()[..s]);
        let (y2r, y2i) = (&mut y2r.as_mut()[..s], &mut y2i.as_mut()[..s]);
        let (y3r, y3i) = (&mut y3r.as_mut()[..s], &mut y3i.as_mut()[..s]);
        let [w1r, w1i, w2r, w2i, w3r, w3i] = self.0;
        for t in 0..s {
            let (t0r, t0i) = (x0r[t] + x2r[t], x0i[t] + x2i[t]);
            let (t1r, t1i) = (x0r[t] - x2r[t], x0i[t] - x2i[t]);
            let (t2r, t2i) = (x1r[t] + x3r[t], x1i[t] + x3i[t]);
            let (dr, di) = (x1r[t] - x3r[t], x1i[t] - x3i[t]);
            // σ i (x1 - x3): -i forward, +i inverse.
            let (t3r, t3i) = if INVERSE { (-di, dr) } else { (di, -dr) };
            y0r[t] = t0r + t2r;
            y0i[t] = t0i + t2i;
            let (r, i) = cmul(t1r + t3r, t1i + t3i, w1r, w1i);
            y1r[t] = r;
            y1i[t] = i;
            let (r, i) = cmul(t0r - t2r, t0i - t2i, w2r, w2i);
            y2r[t] = r;
            y2i[t] = i;
            let (r, i) = cmul(t1r - t3r, t1i - t3i, w3r, w3i);
            y3r[t] = r;
            y3i[t] = i;
        }
    }
}

/// A stage of odd radix p = 2h + 1: with u_j = a_j + a_(p-j) and
/// v_j = a_j - a_(p-j), y_k = a_0 + Σ_j c_(jk) u_j ± i Σ_j σ s_(jk) v_j
/// for k and p - k, the sums in increasing j, each term one fused
/// multiply-add.
#[inline(always)]
fn pass_odd<T: Real>(st: &Stage<T>, s: usize, (xr, xi): In<T>, (yr, yi): Out<T>, tmp: &mut Vec<T>) {
    let (p, m) = (st.p, st.m);
    let h = (p - 1) / 2;
    tmp.resize((4 * h + 4) * s, T::ZERO);
    let (uv, acc) = tmp.split_at_mut(4 * h * s);
    let (ur, rest) = uv.split_at_mut(h * s);
    let (ui, rest) = rest.split_at_mut(h * s);
    let (vr, vi) = rest.split_at_mut(h * s);
    let (ar, rest) = acc.split_at_mut(s);
    let (ai, rest) = rest.split_at_mut(s);
    let (sr, si) = rest.split_at_mut(s);
    for q in 0..m {
        let at = |j: usize| s * (q + m * j);
        let (x0r, x0i) = (&xr[at(0)..at(0) + s], &xi[at(0)..at(0) + s]);
        for j in 1..=h {
            let (a, b) = (at(j), at(p - j));
            let (pr, pi, nr, ni) = (&xr[a..a + s], &xi[a..a + s], &xr[b..b + s], &xi[b..b + s]);
            let o = (j - 1) * s;
            let (ur, ui, vr, vi) = (&mut ur[o..o + s], &mut ui[o..o + s], &mut vr[o..o + s], &mut vi[o..o + s]);
            for t in 0..s {
                ur[t] = pr[t] + nr[t];
                ui[t] = pi[t] + ni[t];
                vr[t] = pr[t] - nr[t];
                vi[t] = pi[t] - ni[t];
            }
        }
        let out = |k: usize| s * (p * q + k);
        // y_0 = a_0 + u_1 + ... + u_h.
        ar.copy_from_slice(x0r);
        ai.copy_from_slice(x0i);
        for j in 0..h {
            let (uj, vj) = (&ur[j * s..(j + 1) * s], &ui[j * s..(j + 1) * s]);
            for t in 0..s {
                ar[t] = ar[t] + uj[t];
                ai[t] = ai[t] + vj[t];
            }
        }
        yr[out(0)..out(0) + s].copy_from_slice(ar);
        yi[out(0)..out(0) + s].copy_from_slice(ai);
        for k in 1..=h {
            ar.copy_from_slice(x0r);
            ai.copy_from_slice(x0i);
            sr.fill(T::ZERO);
            si.fill(T::ZERO);
            for j in 1..=h {
                let r = j * k % p;
                let (c, sn) = (st.cr[r], st.sn[r]);
                let o = (j - 1) * s;
                let (urj, uij, vrj, vij) = (&ur[o..o + s], &ui[o..o + s], &vr[o..o + s], &vi[o..o + s]);
                for t in 0..s {
                    ar[t] = c.fma(urj[t], ar[t]);
                    ai[t] = c.fma(uij[t], ai[t]);
                    sr[t] = sn.fma(vrj[t], sr[t]);
                    si[t] = sn.fma(vij[t], si[t]);
                }
            }
            let (wkr, wki) = (st.wr[q * (p - 1) + k - 1], st.wi[q * (p - 1) + k - 1]);
            let (wlr, wli) = (st.wr[q * (p - 1) + p - k - 1], st.wi[q * (p - 1) + p - k - 1]);
            let (ok, ol) = (out(k), out(p - k));
            for t in 0..s {
                let (r, i) = cmul(ar[t] - si[t], ai[t] + sr[t], wkr, wki);
                yr[ok + t] = r;
                yi[ok + t] = i;
                let (r, i) = cmul(ar[t] + si[t], ai[t] - sr[t], wlr, wli);
                yr[ol + t] = r;
                yi[ol + t] = i;
            }
        }
    }
}
