//! A line's plan, its algorithm chosen from its points alone: Stockham
//! passes; Bluestein's convolution where a prime factor exceeds 250; Bailey's
//! four steps for long lines. Plans are cached per (points, direction,
//! precision) for the life of the process; buffers are held for a call only.

use super::passes::{radices, Passes, Work};
use super::real::{cmul, Real};
use super::twiddle::Cis;
use super::Direction;
use crate::core::pool;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Lines of at least this many points whose prime factors are at most 250
/// compute by Bailey's four steps, over the threads.
pub const BAILEY_MIN: usize = 1 << 15;

/// Prime factors above this send a line to Bluestein's convolution.
pub const BLUESTEIN_PRIME: usize = 250;

/// An n-point transform's plan.
pub struct Plan<T> {
    pub n: usize,
    algo: Algo<T>,
}

enum Algo<T> {
    Passes(Passes<T>),
    Bluestein(Box<Bluestein<T>>),
    Bailey(Box<Bailey<T>>),
}

/// Bluestein's convolution: x_j c_j, padded to m points, convolved with the
/// conjugate chirp by an m-point transform forward, a product with its
/// spectrum (divided by m) and an m-point transform back, times c_k.
struct Bluestein<T> {
    m: usize,
    forward: Arc<Plan<T>>,
    inverse: Arc<Plan<T>>,
    /// The chirp c_j = e^(σπi j²/n), σ = -1 forward.
    cr: Vec<T>,
    ci: Vec<T>,
    /// The conjugate chirp's m-point spectrum over m.
    sr: Vec<T>,
    si: Vec<T>,
}

/// Bailey's four steps over n = n1 n2: n2 transforms of n1 points (stride
/// n2), twiddles e^(σ2πi j2 k1/n), n1 transforms of n2 points, the points
/// transposed between the steps so that each reads and writes runs.
struct Bailey<T> {
    n1: usize,
    n2: usize,
    first: Passes<T>,
    second: Passes<T>,
    twiddles: Table<T>,
}

/// e^(σ2πi r/n) as the product, in the plan's precision, of two rounded
/// powers: at r's high bits and at its low bits.
struct Table<T> {
    n: usize,
    shift: u32,
    high: Vec<(T, T)>,
    low: Vec<(T, T)>,
}

impl<T: Real> Table<T> {
    fn new(n: usize, inverse: bool) -> Table<T> {
        let shift = (usize::BITS - n.leading_zeros()).div_ceil(2);
        let cis = Cis::new(n as u64);
        let round = |r: usize| {
            let (c, s) = cis.f64(r as u64, !inverse);
            (T::of(c), T::of(s))
        };
        let low = (0..(1usize << shift).min(n)).map(round).collect();
        let high = (0..=(n >> shift)).map(|r| round(r << shift)).collect();
        Table { n, shift, high, low }
    }

    #[inline]
    fn get(&self, r: usize) -> (T, T) {
        debug_assert!(r < self.n);
        let (a, b) = self.high[r >> self.shift];
        let (c, d) = self.low[r & ((1 << self.shift) - 1)];
        cmul(a, b, c, d)
    }
}

fn largest_prime(n: usize) -> usize {
    radices(n).into_iter().map(|r| if r == 4 { 2 } else { r }).max().unwrap_or(1)
}

/// The least power of two at least 2n - 1: Bluestein's convolution length.
pub fn bluestein_length(n: usize) -> usize {
    (2 * n - 1).next_power_of_two()
}

/// The wrapped conjugate chirp's m-point forward spectrum over m, in f64,
/// the chirp e^(-σπi j²/n) for σ = -1 where `inverse` is false.
fn chirp_spectrum(n: usize, m: usize, inverse: bool) -> Vec<(f64, f64)> {
    let cis = Cis::new(2 * n as u64);
    let plan = plan::<f64>(m, Direction::Forward);
    let mut w = Work::<f64>::default();
    w.fit(m);
    for j in 0..n {
        let r = ((j as u128 * j as u128) % (2 * n as u128)) as u64;
        let (c, s) = cis.f64(r, inverse);
        w.ar[j] = c;
        w.ai[j] = s;
        if j > 0 {
            w.ar[m - j] = c;
            w.ai[m - j] = s;
        }
    }
    plan.exec(1, &mut w);
    let scale = 1.0 / m as f64;
    w.ar.iter().zip(&w.ai).map(|(&r, &i)| (r * scale, i * scale)).collect()
}

/// Whether an n-point line with a prime factor above 250 computes by
/// Bluestein's convolution: where the forward conjugate chirp's spectrum,
/// computed in f64, stays within 2 √(2n - 1) in magnitude.
pub fn bluestein_fits(n: usize) -> bool {
    static FITS: OnceLock<Mutex<HashMap<usize, bool>>> = OnceLock::new();
    let cache = FITS.get_or_init(Default::default);
    if let Some(&b) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&n) {
        return b;
    }
    let m = bluestein_length(n);
    let bound = 2.0 * ((2 * n - 1) as f64).sqrt();
    let fits = chirp_spectrum(n, m, false).iter().all(|&(r, i)| (r * r + i * i).sqrt() * m as f64 <= bound);
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(n, fits);
    fits
}

/// The plan of an n-point transform (n >= 1) in direction `dir`, from the
/// cache or built. Builds on the calling thread; never call it from inside
/// a pool job.
pub fn plan<T: Real>(n: usize, dir: Direction) -> Arc<Plan<T>> {
    let key = (n, dir);
    if let Some(p) = T::plans().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return p.clone();
    }
    let built = Arc::new(build::<T>(n, dir));
    T::plans().lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_insert(built).clone()
}

fn build<T: Real>(n: usize, dir: Direction) -> Plan<T> {
    let inverse = dir == Direction::Inverse;
    let algo = if largest_prime(n) > BLUESTEIN_PRIME && bluestein_fits(n) {
        let m = bluestein_length(n);
        let cis = Cis::new(2 * n as u64);
        let (mut cr, mut ci) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for j in 0..n {
            let r = ((j as u128 * j as u128) % (2 * n as u128)) as u64;
            let (c, s) = cis.f64(r, !inverse);
            cr.push(T::of(c));
            ci.push(T::of(s));
        }
        let (sr, si) = chirp_spectrum(n, m, inverse).into_iter().map(|(r, i)| (T::of(r), T::of(i))).unzip();
        Algo::Bluestein(Box::new(Bluestein {
            m,
            forward: plan(m, Direction::Forward),
            inverse: plan(m, Direction::Inverse),
            cr,
            ci,
            sr,
            si,
        }))
    } else if n >= BAILEY_MIN {
        // n1 the greatest divisor of n at most √n.
        let n1 = (1..=n).take_while(|d| d * d <= n).filter(|&d| n.is_multiple_of(d)).last().unwrap_or(1);
        if n1 > 1 {
            Algo::Bailey(Box::new(Bailey {
                n1,
                n2: n / n1,
                first: Passes::new(n1, inverse),
                second: Passes::new(n / n1, inverse),
                twiddles: Table::new(n, inverse),
            }))
        } else {
            Algo::Passes(Passes::new(n, inverse))
        }
    } else {
        Algo::Passes(Passes::new(n, inverse))
    };
    Plan { n, algo }
}

/// The twiddles e^(σ2πi k/n) for k <= n/2, σ = -1 forward, of a real
/// transform of even n through n/2 complex points, from the cache or made.
pub fn halves<T: Real>(n: usize, dir: Direction) -> Arc<Vec<(T, T)>> {
    let key = (n, dir);
    if let Some(h) = T::halves().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return h.clone();
    }
    let cis = Cis::new(n as u64);
    let made: Vec<(T, T)> = (0..=n / 2)
        .map(|k| {
            let (c, s) = cis.f64(k as u64, dir == Direction::Forward);
            (T::of(c), T::of(s))
        })
        .collect();
    T::halves().lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_insert(Arc::new(made)).clone()
}

/// A pointer that threads share, each writing its own elements alone.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: the pointer is only written through at elements that one thread
// alone writes during a job (each use says which), and read where no thread
// writes during that job.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as for `Send`.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The address of element `i` (a method, so that closures capture the
    /// whole `Shared`); dereferenced only where `i` is inside the buffer.
    fn at(self, i: usize) -> *mut T {
        self.0.wrapping_add(i)
    }
}

impl<T: Real> Plan<T> {
    /// Whether a line computes alone, over the threads (Bailey's steps, or
    /// a convolution through them), rather than with other lines on one.
    pub fn long(&self) -> bool {
        match &self.algo {
            Algo::Passes(_) => false,
            Algo::Bluestein(b) => b.forward.long(),
            Algo::Bailey(_) => true,
        }
    }

    /// Transforms `lanes` interleaved lines in `w.ar`, `w.ai`, each exactly
    /// `n * lanes` long, in place. A long plan takes one lane and runs over
    /// the pool's threads, so it must not be called from a pool job.
    pub fn exec(&self, lanes: usize, w: &mut Work<T>) {
        match &self.algo {
            Algo::Passes(p) => p.run(lanes, w),
            Algo::Bluestein(b) => b.run(self.n, lanes, w),
            Algo::Bailey(b) => {
                assert_eq!(lanes, 1, "Bailey's steps take one line at a time");
                b.run(w)
            }
        }
    }
}

/// A line of complex points in memory: point j's real part at
/// `off + j * step` parts from `ptr`, its imaginary part the next part.
#[derive(Clone, Copy)]
pub struct Line<T> {
    pub ptr: *mut T,
    pub off: isize,
    pub step: isize,
}

impl<T: Real> Plan<T> {
    /// Transforms the line `src` into the line `dst` (which may be `src`
    /// itself) where the plan reads and writes lines in memory directly,
    /// as Bailey's steps do, with the bits of [`Plan::exec`]; otherwise
    /// answers false and does nothing.
    ///
    /// # Safety
    /// Every point of both lines, n of them, must lie in memory the caller
    /// may read (`src`) and write (`dst`) for the call, which nothing else
    /// touches meanwhile.
    pub unsafe fn exec_line(&self, src: Line<T>, dst: Line<T>) -> bool {
        let Algo::Bailey(b) = &self.algo else { return false };
        let (s, d) = (Shared(src.ptr), Shared(dst.ptr));
        let (so, ss, dof, ds) = (src.off, src.step, dst.off, dst.step);
        let at = |off: isize, step: isize, i: usize| (off + i as isize * step) as usize;
        // SAFETY (both): point i < n of a line, which the caller lets the
        // call read or write; `steps` reads every point before it writes
        // one, and writes each from one thread.
        let read = |i: usize| unsafe { (s.at(at(so, ss, i)).read_unaligned(), s.at(at(so, ss, i) + 1).read_unaligned()) };
        let write = |i: usize, r: T, m: T| unsafe {
            d.at(at(dof, ds, i)).write_unaligned(r);
            d.at(at(dof, ds, i) + 1).write_unaligned(m);
        };
        b.steps(read, write);
        true
    }
}

impl<T: Real> Bluestein<T> {
    fn run(&self, n: usize, lanes: usize, w: &mut Work<T>) {
        let m = self.m;
        let (ar, ai) = (&mut w.ar, &mut w.ai);
        let inner = w.inner.get_or_insert_with(Default::default);
        inner.ar.clear();
        inner.ai.clear();
        inner.ar.resize(m * lanes, T::ZERO);
        inner.ai.resize(m * lanes, T::ZERO);
        for j in 0..n {
            let (c, s) = (self.cr[j], self.ci[j]);
            for b in 0..lanes {
                let k = b + lanes * j;
                (inner.ar[k], inner.ai[k]) = cmul(ar[k], ai[k], c, s);
            }
        }
        self.forward.exec(lanes, inner);
        for j in 0..m {
            let (c, s) = (self.sr[j], self.si[j]);
            for b in 0..lanes {
                let k = b + lanes * j;
                (inner.ar[k], inner.ai[k]) = cmul(inner.ar[k], inner.ai[k], c, s);
            }
        }
        self.inverse.exec(lanes, inner);
        for j in 0..n {
            let (c, s) = (self.cr[j], self.ci[j]);
            for b in 0..lanes {
                let k = b + lanes * j;
                (ar[k], ai[k]) = cmul(inner.ar[k], inner.ai[k], c, s);
            }
        }
    }
}

/// Lanes per chunk of one of Bailey's steps over sub-lines of `n` points:
/// about 16 K points, and at least 16 lanes, so that each run the chunk
/// reads or writes fills a cache line.
fn chunk_lanes(n: usize, lanes: usize) -> usize {
    (16384 / n).clamp(16, 64).min(lanes)
}

/// Copies a run of a few elements in blocks of 16 (a `memcpy` call for
/// each short run costs more than its copy).
#[inline(always)]
fn copy_run<T: Copy>(dst: &mut [T], src: &[T]) {
    let mut d = dst.chunks_exact_mut(16);
    let mut s = src.chunks_exact(16);
    for (a, b) in (&mut d).zip(&mut s) {
        let a: &mut [T; 16] = a.try_into().expect("a block of 16");
        *a = *<&[T; 16]>::try_from(b).expect("a block of 16");
    }
    for (a, b) in d.into_remainder().iter_mut().zip(s.remainder()) {
        *a = *b;
    }
}

impl<T: Real> Bailey<T> {
    /// One line in `w.ar`, `w.ai`, in place.
    fn run(&self, w: &mut Work<T>) {
        let n = self.n1 * self.n2;
        let (ar, ai) = (Shared(w.ar.as_mut_ptr()), Shared(w.ai.as_mut_ptr()));
        // SAFETY (both): `i < n`, inside `w.ar`, `w.ai`; `steps` reads them
        // all before it writes, and writes each point from one thread.
        let read = |i: usize| unsafe { (*ar.at(i), *ai.at(i)) };
        let write = |i: usize, r: T, m: T| unsafe {
            *ar.at(i) = r;
            *ai.at(i) = m;
        };
        debug_assert!(w.ar.len() == n && w.ai.len() == n);
        self.steps(read, write);
    }

    /// The four steps from the points `read` gives, by index, to the
    /// points `write` takes, over the threads. `read` is called only in the
    /// first step and `write` only in the second, each point once, from one
    /// thread. Each chunk of lanes of a step is gathered into a thread's own
    /// buffers, transformed and scattered, so a chunk's bits do not depend
    /// on its thread.
    fn steps(&self, read: impl Fn(usize) -> (T, T) + Sync, write: impl Fn(usize, T, T) + Sync) {
        let (n1, n2) = (self.n1, self.n2);
        let n = n1 * n2;
        let (mut zr, mut zi) = (vec![T::ZERO; n], vec![T::ZERO; n]);
        let (br, bi) = (Shared(zr.as_mut_ptr()), Shared(zi.as_mut_ptr()));
        // Step 1: lanes j2 < n2 of n1 points at j2 + n2 j1; into z at
        // k1 + n1 j2, times the twiddle.
        let c1 = chunk_lanes(n1, n2);
        each_chunk(n2.div_ceil(c1), |lw, chunk| {
            let l0 = chunk * c1;
            let c = c1.min(n2 - l0);
            lw.ar.resize(n1 * c, T::ZERO);
            lw.ai.resize(n1 * c, T::ZERO);
            for j1 in 0..n1 {
                for l in 0..c {
                    (lw.ar[l + c * j1], lw.ai[l + c * j1]) = read(l0 + l + n2 * j1);
                }
            }
            self.first.run(c, lw);
            for l in 0..c {
                let j2 = l0 + l;
                let mut r = 0;
                for k1 in 0..n1 {
                    let (tr, ti) = self.twiddles.get(r);
                    let (x, y) = cmul(lw.ar[l + c * k1], lw.ai[l + c * k1], tr, ti);
                    let at = k1 + n1 * j2;
                    // SAFETY: `at < n`, inside `zr`, `zi`; lane j2 is this
                    // chunk's alone, so no other thread writes `at`.
                    unsafe {
                        *br.at(at) = x;
                        *bi.at(at) = y;
                    }
                    r += j2;
                    if r >= n {
                        r -= n;
                    }
                }
            }
        });
        // Step 2: lanes k1 < n1 of n2 points at k1 + n1 j2; written at
        // k1 + n1 k2, the natural order.
        let c2 = chunk_lanes(n2, n1);
        each_chunk(n1.div_ceil(c2), |lw, chunk| {
            let l0 = chunk * c2;
            let c = c2.min(n1 - l0);
            lw.ar.resize(n2 * c, T::ZERO);
            lw.ai.resize(n2 * c, T::ZERO);
            for j2 in 0..n2 {
                let at = l0 + n1 * j2;
                // SAFETY: `at + c <= n`, inside `zr`, `zi`, which no thread
                // writes during this step.
                unsafe {
                    copy_run(&mut lw.ar[c * j2..c * j2 + c], std::slice::from_raw_parts(br.at(at), c));
                    copy_run(&mut lw.ai[c * j2..c * j2 + c], std::slice::from_raw_parts(bi.at(at), c));
                }
            }
            self.second.run(c, lw);
            for k2 in 0..n2 {
                for l in 0..c {
                    write(l0 + l + n1 * k2, lw.ar[l + c * k2], lw.ai[l + c * k2]);
                }
            }
        });
    }
}

/// Runs `f(work, chunk)` for each chunk below `chunks`, over the pool's
/// threads, each part of the job with its own buffers.
fn each_chunk<T: Real>(chunks: usize, f: impl Fn(&mut Work<T>, usize) + Sync) {
    let parts = pool::threads().min(chunks).max(1);
    pool::run_parts(parts, |part| {
        let mut lw = Work::default();
        for chunk in (part..chunks).step_by(parts) {
            f(&mut lw, chunk);
        }
    });
}
