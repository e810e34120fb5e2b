//! A line's plan, its algorithm chosen from its points alone: Stockham
//! passes; Bluestein's convolution where a prime factor exceeds 250; Bailey's
//! four steps for long lines. Plans are cached per (points, direction,
//! precision) for the life of the process; buffers are held for a call only.

use super::passes::{radices, Passes, Work};
use super::real::{cmul, prefetch, widest, Real};
use super::tile::{transpose, transpose_raw};
use super::twiddle::Cis;
use super::Direction;
use crate::core::pool;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Lines of at least this many points whose prime factors are at most 250
/// compute by Bailey's four steps, over the threads.
pub const BAILEY_MIN: usize = 1 << 17;

/// Lines of at least this many points, and fewer than [`BAILEY_MIN`],
/// whose prime factors are at most 250 and which have a divisor from 8 to
/// their square root, compute by four steps in a thread's buffers
/// ([`Split`]), so that every pass runs over many lanes.
pub const SPLIT_MIN: usize = 256;

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
    Split(Box<Split<T>>),
}

/// Four steps over n = n1 n2 in a thread's buffers, over any lanes: the
/// points' n2 lanes of n1 points each transformed in place, each point
/// times e^(σ2πi j2 k1/n) and moved from lane j2, point k1 to lane k1,
/// point j2, then n1 lanes of n2 points transformed, which leaves the
/// transform in natural order.
struct Split<T> {
    n1: usize,
    n2: usize,
    first: Passes<T>,
    second: Passes<T>,
    /// e^(σ2πi j2 k1/n) at `j2 + n2 k1`, each rounded once.
    twr: Vec<T>,
    twi: Vec<T>,
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
    first: Arc<Plan<T>>,
    second: Arc<Plan<T>>,
    twiddles: Table<T>,
    /// For n up to [`EXACT_MAX`], e^(σ2πi j2 k1/n) at `j2 + n2 k1`, each
    /// rounded once, in place of the products of `twiddles`.
    exact: Option<(Vec<T>, Vec<T>)>,
}

/// The most points of a line by Bailey's steps whose twiddles are each
/// rounded once and kept, n of them, rather than the products of two.
pub const EXACT_MAX: usize = 1 << 20;

/// e^(σ2πi r/n) as the product, in the plan's precision, of two rounded
/// powers: at r's high bits and at its low bits, real and imaginary parts
/// apart.
struct Table<T> {
    n: usize,
    shift: u32,
    hr: Vec<T>,
    hi: Vec<T>,
    lr: Vec<T>,
    li: Vec<T>,
}

impl<T: Real> Table<T> {
    fn new(n: usize, inverse: bool) -> Table<T> {
        let shift = (usize::BITS - n.leading_zeros()).div_ceil(2);
        let cis = Cis::new(n as u64);
        let round = |r: usize| {
            let (c, s) = cis.f64(r as u64, !inverse);
            (T::of(c), T::of(s))
        };
        let (lr, li) = (0..(1usize << shift).min(n)).map(round).unzip();
        let (hr, hi) = (0..=(n >> shift)).map(|r| round(r << shift)).unzip();
        Table { n, shift, hr, hi, lr, li }
    }

    #[inline(always)]
    fn get(&self, r: usize) -> (T, T) {
        debug_assert!(r < self.n);
        let (h, l) = (r >> self.shift, r & ((1 << self.shift) - 1));
        cmul(self.hr[h], self.hi[h], self.lr[l], self.li[l])
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
    } else if n >= SPLIT_MIN {
        // n1 the greatest divisor of n at most √n.
        let n1 = (1..=n).take_while(|d| d * d <= n).filter(|&d| n.is_multiple_of(d)).last().unwrap_or(1);
        if n < BAILEY_MIN && n1 >= 8 {
            let n2 = n / n1;
            let (twr, twi) = exact_twiddles(n1, n2, inverse);
            Algo::Split(Box::new(Split {
                n1,
                n2,
                first: Passes::new(n1, inverse),
                second: Passes::new(n2, inverse),
                twr,
                twi,
            }))
        } else if n >= BAILEY_MIN && n1 > 1 {
            Algo::Bailey(Box::new(Bailey {
                n1,
                n2: n / n1,
                first: plan(n1, dir),
                second: plan(n / n1, dir),
                twiddles: Table::new(n, inverse),
                exact: (n <= EXACT_MAX).then(|| exact_twiddles(n1, n / n1, inverse)),
            }))
        } else {
            Algo::Passes(Passes::new(n, inverse))
        }
    } else {
        Algo::Passes(Passes::new(n, inverse))
    };
    Plan { n, algo }
}

/// Four steps' twiddles e^(σ2πi j2 k1/n), n = n1 n2, each rounded once,
/// at `j2 + n2 k1`: real parts, then imaginary.
fn exact_twiddles<T: Real>(n1: usize, n2: usize, inverse: bool) -> (Vec<T>, Vec<T>) {
    let cis = Cis::new((n1 * n2) as u64);
    (0..n1)
        .flat_map(|k1| (0..n2).map(move |j2| (j2 * k1) as u64))
        .map(|r| {
            let (c, s) = cis.f64(r, !inverse);
            (T::of(c), T::of(s))
        })
        .unzip()
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
            Algo::Passes(_) | Algo::Split(_) => false,
            Algo::Bluestein(b) => b.forward.long(),
            Algo::Bailey(_) => true,
        }
    }

    /// Whether the plan reads and writes lines in memory directly
    /// ([`Plan::exec_line`]): Bailey's steps.
    pub fn by_lines(&self) -> bool {
        matches!(self.algo, Algo::Bailey(_))
    }

    /// Whether the plan computes by four steps in a thread's buffers.
    pub fn in_cache_steps(&self) -> bool {
        matches!(self.algo, Algo::Split(_))
    }

    /// Transforms `lanes` interleaved lines in `w.ar`, `w.ai`, each exactly
    /// `n * lanes` long, in place. A long plan takes one lane and runs over
    /// the pool's threads, so it must not be called from a pool job.
    pub fn exec(&self, lanes: usize, w: &mut Work<T>) {
        match &self.algo {
            Algo::Passes(p) => p.run(lanes, w),
            Algo::Split(p) => p.run(lanes, w),
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
    /// itself), `None` standing for `w.ar`, `w.ai` (then exactly n long),
    /// where the plan reads and writes lines in memory directly, as
    /// Bailey's steps do, with the bits of [`Plan::exec`]; otherwise
    /// answers false and does nothing.
    ///
    /// # Safety
    /// Every point of both lines, n of them, must lie in memory the caller
    /// may read (`src`) and write (`dst`) for the call, which nothing else
    /// touches meanwhile.
    pub unsafe fn exec_line(&self, src: Option<Line<T>>, dst: Option<Line<T>>, w: &mut Work<T>) -> bool {
        let Algo::Bailey(b) = &self.algo else { return false };
        assert!([src, dst].iter().all(Option::is_some) || w.ar.len() == self.n && w.ai.len() == self.n);
        let buffers = Ends::Split(Shared(w.ar.as_mut_ptr()), Shared(w.ai.as_mut_ptr()));
        let end = |l: Option<Line<T>>| l.map_or(buffers, Ends::Line);
        b.steps(end(src), end(dst));
        true
    }
}

/// Where Bailey's steps read their points or write them: two arrays of
/// parts, point i at index i of each, or a line in memory.
#[derive(Clone, Copy)]
enum Ends<T> {
    Split(Shared<T>, Shared<T>),
    Line(Line<T>),
}

// SAFETY: as for `Shared`: `steps` reads the points of its source and
// writes those of its destination each from one thread.
unsafe impl<T> Send for Ends<T> {}
// SAFETY: as for `Send`.
unsafe impl<T> Sync for Ends<T> {}

impl<T: Real> Ends<T> {
    /// Reads points `i..i + re.len()` into `re`, `im`.
    ///
    /// # Safety
    /// The points must lie in memory the call may read, which no thread
    /// writes meanwhile.
    #[inline(always)]
    unsafe fn read(self, i: usize, re: &mut [T], im: &mut [T]) {
        let len = re.len();
        let im = &mut im[..len];
        match self {
            Ends::Split(r, m) => {
                // SAFETY: the caller's.
                unsafe {
                    copy_run(re, std::slice::from_raw_parts(r.at(i), len));
                    copy_run(im, std::slice::from_raw_parts(m.at(i), len));
                }
            }
            Ends::Line(l) => {
                let p = l.ptr.wrapping_offset(l.off + i as isize * l.step);
                #[inline(always)]
                fn run<T: Real>(p: *const T, step: isize, re: &mut [T], im: &mut [T]) {
                    let im = &mut im[..re.len()];
                    for t in 0..re.len() {
                        let q = p.wrapping_offset(t as isize * step);
                        // SAFETY: the caller's: point i + t of the line.
                        unsafe { (re[t], im[t]) = (q.read_unaligned(), q.add(1).read_unaligned()) };
                    }
                }
                // Points side by side, a loop of a known step.
                if l.step == 2 {
                    run(p, 2, re, im)
                } else {
                    run(p, l.step, re, im)
                }
            }
        }
    }

    /// Asks the cache for point `i`: a hint, which reads nothing and never
    /// faults, whatever `i`.
    #[inline(always)]
    fn prefetch(self, i: usize) {
        match self {
            Ends::Split(r, m) => {
                prefetch(r.at(i), 1, false);
                prefetch(m.at(i), 1, false);
            }
            Ends::Line(l) => prefetch(l.ptr.wrapping_offset(l.off + i as isize * l.step), 2, false),
        }
    }

    /// Asks the cache for points `i..i + len`, to write them: a hint, which
    /// writes nothing and never faults, whatever `i`.
    #[inline(always)]
    fn prefetch_write(self, i: usize, len: usize) {
        match self {
            Ends::Split(r, m) => {
                prefetch(r.at(i), len, true);
                prefetch(m.at(i), len, true);
            }
            Ends::Line(l) if l.step == 2 => prefetch(l.ptr.wrapping_offset(l.off + i as isize * 2), 2 * len, true),
            Ends::Line(_) => {}
        }
    }

    /// Writes `re`, `im` into points `i..i + re.len()`.
    ///
    /// # Safety
    /// The points must lie in memory the call may write, which no other
    /// thread reads or writes meanwhile.
    #[inline(always)]
    unsafe fn write(self, i: usize, re: &[T], im: &[T]) {
        let len = re.len();
        let im = &im[..len];
        match self {
            Ends::Split(r, m) => {
                // SAFETY: the caller's.
                unsafe {
                    copy_run(std::slice::from_raw_parts_mut(r.at(i), len), re);
                    copy_run(std::slice::from_raw_parts_mut(m.at(i), len), im);
                }
            }
            Ends::Line(l) => {
                let p = l.ptr.wrapping_offset(l.off + i as isize * l.step);
                #[inline(always)]
                fn run<T: Real>(p: *mut T, step: isize, re: &[T], im: &[T]) {
                    let im = &im[..re.len()];
                    for t in 0..re.len() {
                        let q = p.wrapping_offset(t as isize * step);
                        // SAFETY: the caller's: point i + t of the line.
                        unsafe {
                            q.write_unaligned(re[t]);
                            q.add(1).write_unaligned(im[t]);
                        }
                    }
                }
                if l.step == 2 {
                    run(p, 2, re, im)
                } else {
                    run(p, l.step, re, im)
                }
            }
        }
    }
}

/// Lanes each chunk of a step over sub-lines of `n` points of `T` takes
/// into a thread's small buffers, where its passes run: a multiple of 16,
/// and as many as fill half the L1 cache with the passes' four buffers,
/// or all of `lanes`. The bits do not depend on it.
fn chunk_of<T>(n: usize, lanes: usize) -> usize {
    let fit = crate::core::caches::sizes().l1 / 2 / (4 * n * std::mem::size_of::<T>());
    let c = (fit / 16 * 16).max(16);
    if c >= lanes {
        lanes
    } else {
        c
    }
}

impl<T: Real> Split<T> {
    fn run(&self, lanes: usize, w: &mut Work<T>) {
        let len = self.n1 * self.n2 * lanes;
        debug_assert!(w.ar.len() == len && w.ai.len() == len);
        w.br.resize(len, T::ZERO);
        w.bi.resize(len, T::ZERO);
        let (sp, l) = (self, lanes);
        widest!(<T>(sp: &Split<T>, l: usize, w: &mut Work<T>) { split_steps(sp, l, w) });
        std::mem::swap(&mut w.ar, &mut w.br);
        std::mem::swap(&mut w.ai, &mut w.bi);
    }
}

/// [`Split::run`]'s steps from `w.ar`, `w.ai` into `w.br`, `w.bi`, a chunk
/// of lanes at a time in `w.inner`, inlined whole into each compilation.
#[inline(always)]
fn split_steps<T: Real>(sp: &Split<T>, l: usize, w: &mut Work<T>) {
    let (n1, n2) = (sp.n1, sp.n2);
    let lw = w.inner.get_or_insert_with(Default::default);
    // Step 1: lane λ = b + l j2 of n1 points at λ + l n2 j1, into lane
    // b + l k1, point j2 of y, times e^(σ2πi j2 k1/n). A chunk of every
    // lane takes the points where they lie.
    let lanes1 = l * n2;
    let chunk = chunk_of::<T>(n1, lanes1);
    for c0 in (0..lanes1).step_by(chunk) {
        let c = chunk.min(lanes1 - c0);
        if c == lanes1 {
            std::mem::swap(&mut lw.ar, &mut w.ar);
            std::mem::swap(&mut lw.ai, &mut w.ai);
        } else {
            lw.ar.resize(n1 * c, T::ZERO);
            lw.ai.resize(n1 * c, T::ZERO);
            for j1 in 0..n1 {
                let at = c0 + lanes1 * j1;
                copy_run(&mut lw.ar[c * j1..c * j1 + c], &w.ar[at..at + c]);
                copy_run(&mut lw.ai[c * j1..c * j1 + c], &w.ai[at..at + c]);
            }
        }
        sp.first.run_here(c, lw);
        let (yr, yi) = (&mut w.br[..], &mut w.bi[..]);
        let (ar, ai) = (&lw.ar[..n1 * c], &lw.ai[..n1 * c]);
        if l == 1 {
            // Lanes j2 = c0 + cc: twiddles in place, then the transposed copy.
            let (ar, ai) = (&mut lw.ar[..n1 * c], &mut lw.ai[..n1 * c]);
            for k1 in 0..n1 {
                let (tr, ti) = (&sp.twr[c0 + n2 * k1..c0 + n2 * k1 + c], &sp.twi[c0 + n2 * k1..c0 + n2 * k1 + c]);
                let (vr, vi) = (&mut ar[c * k1..c * k1 + c], &mut ai[c * k1..c * k1 + c]);
                for cc in 0..c {
                    (vr[cc], vi[cc]) = cmul(vr[cc], vi[cc], tr[cc], ti[cc]);
                }
            }
            // Lane c0 + cc's points, at cc + c k1 here, side by side from
            // n1 (c0 + cc) on.
            let to = n1 * c0..n1 * (c0 + c);
            transpose(ar, c, &mut yr[to.clone()], n1, n1, c);
            transpose(ai, c, &mut yi[to], n1, n1, c);
        } else {
            // Runs of the chunk's lanes that share a j2, lanes b0.. of it.
            let mut cc = 0;
            while cc < c {
                let (b0, j2) = ((c0 + cc) % l, (c0 + cc) / l);
                let run = (l - b0).min(c - cc);
                for k1 in 0..n1 {
                    let (tr, ti) = (sp.twr[j2 + n2 * k1], sp.twi[j2 + n2 * k1]);
                    let at = b0 + l * (k1 + n1 * j2);
                    let (zr, zi) = (&mut yr[at..at + run], &mut yi[at..at + run]);
                    let from = cc + c * k1;
                    let (vr, vi) = (&ar[from..from + run], &ai[from..from + run]);
                    for t in 0..run {
                        (zr[t], zi[t]) = cmul(vr[t], vi[t], tr, ti);
                    }
                }
                cc += run;
            }
        }
    }
    // Step 2: lane λ = b + l k1 of n2 points at λ + l n1 j2, transformed
    // where it lies: point k2 at λ + l n1 k2, the natural order.
    let lanes2 = l * n1;
    let chunk = chunk_of::<T>(n2, lanes2);
    if chunk == lanes2 {
        std::mem::swap(&mut lw.ar, &mut w.br);
        std::mem::swap(&mut lw.ai, &mut w.bi);
        sp.second.run_here(lanes2, lw);
        std::mem::swap(&mut lw.ar, &mut w.br);
        std::mem::swap(&mut lw.ai, &mut w.bi);
        return;
    }
    let (yr, yi) = (&mut w.br[..], &mut w.bi[..]);
    for c0 in (0..lanes2).step_by(chunk) {
        let c = chunk.min(lanes2 - c0);
        lw.ar.resize(n2 * c, T::ZERO);
        lw.ai.resize(n2 * c, T::ZERO);
        for j2 in 0..n2 {
            let at = c0 + lanes2 * j2;
            copy_run(&mut lw.ar[c * j2..c * j2 + c], &yr[at..at + c]);
            copy_run(&mut lw.ai[c * j2..c * j2 + c], &yi[at..at + c]);
        }
        sp.second.run_here(c, lw);
        for k2 in 0..n2 {
            let at = c0 + lanes2 * k2;
            copy_run(&mut yr[at..at + c], &lw.ar[c * k2..c * k2 + c]);
            copy_run(&mut yi[at..at + c], &lw.ai[c * k2..c * k2 + c]);
        }
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

/// Lanes per chunk of one of Bailey's steps over sub-lines of `n` points
/// of `T`: as many as keep the chunk's four buffers within half the L2
/// cache, where its passes run, but at least a cache line's worth of
/// points (64 bytes, so that each run the chunk reads or writes fills
/// one) and at most [`MAX_CHUNK`]. The bits do not depend on it.
fn chunk_lanes<T>(n: usize, lanes: usize) -> usize {
    let point = 2 * std::mem::size_of::<T>();
    let fit = crate::core::caches::sizes().l2 / 2 / (2 * n * point);
    fit.clamp(64 / point, MAX_CHUNK).min(lanes)
}

/// How many runs ahead Bailey's steps ask the cache for the runs they read.
const PREFETCH: usize = 8;

/// The most lanes in a chunk of Bailey's steps.
const MAX_CHUNK: usize = 64;

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
        debug_assert!(w.ar.len() == self.n1 * self.n2 && w.ai.len() == self.n1 * self.n2);
        let ends = Ends::Split(Shared(w.ar.as_mut_ptr()), Shared(w.ai.as_mut_ptr()));
        self.steps(ends, ends);
    }

    /// The four steps from the points of `src` to those of `dst` (which
    /// may be `src`), over the threads: `src` read only in the first step
    /// and `dst` written only in the second, each point once, from one
    /// thread, but where the points stay in `dst` between the steps
    /// ([`Between`]). Each chunk of lanes of a step is gathered into a
    /// thread's own buffers, transformed and scattered, so a chunk's bits
    /// do not depend on its thread nor on where the points wait.
    ///
    /// The points of both must lie in memory the call may read (`src`)
    /// and write (`dst`), which nothing else touches meanwhile.
    fn steps(&self, src: Ends<T>, dst: Ends<T>) {
        let n = self.n1 * self.n2;
        // The scratch, left unset: the first step writes each of its n
        // points (through `z`) before the second reads it.
        let (mut zr, mut zi) = (Vec::<T>::new(), Vec::<T>::new());
        let z = match keeps_in_result(n, src, dst) {
            Some(d) => Between::Result(d),
            None => {
                zr.reserve_exact(n);
                zi.reserve_exact(n);
                Between::Scratch(Shared(zr.as_mut_ptr()), Shared(zi.as_mut_ptr()))
            }
        };
        let (n1, n2) = (self.n1, self.n2);
        let c1 = chunk_lanes::<T>(n1, n2);
        each_chunk(n2.div_ceil(c1), |lw, chunk| {
            let (b, l0) = (self, chunk * c1);
            widest!(<T>(b: &Bailey<T>, src: Ends<T>, z: Between<T>, lw: &mut Work<T>, l0: usize) {
                bailey_first(b, src, z, lw, l0)
            });
        });
        let c2 = chunk_lanes::<T>(n2, n1);
        each_chunk(n1.div_ceil(c2), |lw, chunk| {
            let (b, l0) = (self, chunk * c2);
            widest!(<T>(b: &Bailey<T>, dst: Ends<T>, z: Between<T>, lw: &mut Work<T>, l0: usize) {
                bailey_second(b, dst, z, lw, l0)
            });
        });
    }
}

/// Where Bailey's steps keep the points between the first step and the
/// second.
#[derive(Clone, Copy)]
enum Between<T> {
    /// Scratch of n points, real and imaginary parts apart, by the second
    /// step's chunks: chunk k1 / c2 of width cb holds point j2 of its lane
    /// k1 at k1 mod c2 + cb j2, from (k1 - k1 mod c2) n2 on.
    Scratch(Shared<T>, Shared<T>),
    /// The result, a line of side-by-side points: point j2 of lane k1 at
    /// k1 + n1 j2, among the very points the second step's chunk of lane
    /// k1 writes, so that each chunk reads its points before it writes
    /// them back transformed and no chunk touches another's.
    Result(Line<T>),
}

// SAFETY: as for `Shared`: the first step writes each point of a
// `Between` from one thread, and the second reads and writes each from one.
unsafe impl<T> Send for Between<T> {}
// SAFETY: as for `Send`.
unsafe impl<T> Sync for Between<T> {}

/// Test-only: where nonzero, the least bytes of a line that Bailey's steps
/// keep in its result, in place of the contract's, so that tests compare
/// the bits of both ways on short lines.
#[cfg(test)]
pub static IN_RESULT_FROM: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Test-only: the lines Bailey's steps have kept in their result.
#[cfg(test)]
pub static IN_RESULT_LINES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The line that Bailey's steps from `src` to `dst` over n points keep
/// their points in between the steps, as nx.cpu states: on Linux, `dst`
/// where it is a line of side-by-side points apart from `src` (`w`'s
/// buffers, or a line whose parts all lie below or above it) and the
/// line's n points fill at least 32 MiB and more than the largest cache.
fn keeps_in_result<T: Real>(n: usize, src: Ends<T>, dst: Ends<T>) -> Option<Line<T>> {
    let Ends::Line(d) = dst else { return None };
    let bytes = n.saturating_mul(2 * std::mem::size_of::<T>());
    let least = (32usize << 20).max(crate::core::caches::largest() + 1);
    #[cfg(test)]
    let least = match IN_RESULT_FROM.load(std::sync::atomic::Ordering::Relaxed) {
        0 => least,
        b => b,
    };
    // The first and one past the last byte of a line's parts.
    let span = |l: Line<T>| {
        let (a, b) = (l.off, l.off + (n as isize - 1) * l.step);
        let size = std::mem::size_of::<T>();
        let lo = l.ptr.wrapping_offset(a.min(b)) as usize;
        (lo, l.ptr.wrapping_offset(a.max(b) + 1) as usize + size)
    };
    let apart = match src {
        Ends::Split(..) => true,
        Ends::Line(s) => {
            let ((slo, shi), (dlo, dhi)) = (span(s), span(d));
            shi <= dlo || dhi <= slo
        }
    };
    let keeps = cfg!(target_os = "linux") && d.step == 2 && bytes >= least && apart;
    #[cfg(test)]
    IN_RESULT_LINES.fetch_add(keeps as usize, std::sync::atomic::Ordering::Relaxed);
    keeps.then_some(d)
}

/// Bailey's first step for lanes j2 = l0.. of a chunk: n1 points at
/// j2 + n2 j1 of `src`, transformed, times e^(σ2πi j2 k1/n), into `z` as
/// the second step's chunks take them ([`Between`]).
#[inline(always)]
fn bailey_first<T: Real>(b: &Bailey<T>, src: Ends<T>, z: Between<T>, lw: &mut Work<T>, l0: usize) {
    let (n1, n2) = (b.n1, b.n2);
    let n = n1 * n2;
    let c = chunk_lanes::<T>(n1, n2).min(n2 - l0);
    lw.ar.resize(n1 * c, T::ZERO);
    lw.ai.resize(n1 * c, T::ZERO);
    for j1 in 0..n1 {
        if j1 + PREFETCH < n1 {
            src.prefetch(l0 + n2 * (j1 + PREFETCH));
            src.prefetch(l0 + n2 * (j1 + PREFETCH) + c - 1);
        }
        // SAFETY: points l0 + n2 j1 .. + c < n of `src`, which `steps`'
        // caller lets it read.
        unsafe { src.read(l0 + n2 * j1, &mut lw.ar[c * j1..c * j1 + c], &mut lw.ai[c * j1..c * j1 + c]) };
    }
    b.first.exec(c, lw);
    let (ar, ai) = (&mut lw.ar[..n1 * c], &mut lw.ai[..n1 * c]);
    if let Some((twr, twi)) = &b.exact {
        for k1 in 0..n1 {
            let (vr, vi) = (&mut ar[c * k1..c * k1 + c], &mut ai[c * k1..c * k1 + c]);
            let at = l0 + n2 * k1;
            if k1 + PREFETCH < n1 {
                let ahead = at + n2 * PREFETCH;
                prefetch(twr[ahead..].as_ptr(), c, false);
                prefetch(twi[ahead..].as_ptr(), c, false);
            }
            let (tr, ti) = (&twr[at..at + c], &twi[at..at + c]);
            for l in 0..c {
                (vr[l], vi[l]) = cmul(vr[l], vi[l], tr[l], ti[l]);
            }
        }
    }
    // Else r = j2 k1 mod n, kept for each lane as k1 steps.
    let mut r = [0usize; MAX_CHUNK];
    let r = &mut r[..c];
    for k1 in (0..n1).filter(|_| b.exact.is_none()) {
        let (vr, vi) = (&mut ar[c * k1..c * k1 + c], &mut ai[c * k1..c * k1 + c]);
        for l in 0..c {
            let (tr, ti) = b.twiddles.get(r[l]);
            (vr[l], vi[l]) = cmul(vr[l], vi[l], tr, ti);
            r[l] += l0 + l;
            if r[l] >= n {
                r[l] -= n;
            }
        }
    }
    let (zr, zi) = match z {
        Between::Scratch(zr, zi) => (zr, zi),
        Between::Result(d) => {
            // Lane l's points side by side, at l n1 + k1, then each lane's
            // run of n1 to points n1 (l0 + l).. of the result.
            let (br, bi) = (&mut lw.br, &mut lw.bi);
            br.resize(n1 * c, T::ZERO);
            bi.resize(n1 * c, T::ZERO);
            transpose(ar, c, br, n1, n1, c);
            transpose(ai, c, bi, n1, n1, c);
            for l in 0..c {
                // SAFETY: points n1 (l0 + l) .. + n1 <= n1 n2 of the
                // result, which `steps`' caller lets it write, this
                // chunk's lanes' alone in this step.
                unsafe { Ends::Line(d).write(n1 * (l0 + l), &br[n1 * l..n1 * (l + 1)], &bi[n1 * l..n1 * (l + 1)]) };
            }
            return;
        }
    };
    // Into z by the second step's chunks: chunk k1 / c2 of width cb holds
    // point j2 of its lane k1 at k1 mod c2 + cb j2, runs of cb here.
    let c2 = chunk_lanes::<T>(n2, n1);
    for k0 in (0..n1).step_by(c2) {
        let cb = c2.min(n1 - k0);
        // Point k0 + t of lane l, at l + c (k0 + t) here, to z at
        // k0 n2 + cb (l0 + l) + t.
        let at = k0 * n2 + cb * l0;
        // SAFETY: cb rows of c parts c apart from c k0 lie in `ar` and
        // `ai` (n1 c long, k0 + cb <= n1); c rows of cb parts cb apart from
        // `at` end at k0 n2 + cb (l0 + c) <= (k0 + cb) n2 <= n, inside
        // `z`'s capacity (written through the pointer, as it may be
        // unset), this chunk's lanes' points alone, which no other thread
        // touches.
        unsafe {
            transpose_raw(ar[c * k0..].as_ptr(), c, zr.at(at), cb, cb, c);
            transpose_raw(ai[c * k0..].as_ptr(), c, zi.at(at), cb, cb, c);
        }
    }
}

/// Bailey's second step for lanes k1 = l0.. of a chunk: its n2 points a
/// lane from `z` ([`Between`]), transformed, into `dst` at k1 + n1 k2.
#[inline(always)]
fn bailey_second<T: Real>(b: &Bailey<T>, dst: Ends<T>, z: Between<T>, lw: &mut Work<T>, l0: usize) {
    let (n1, n2) = (b.n1, b.n2);
    let c = chunk_lanes::<T>(n2, n1).min(n1 - l0);
    lw.ar.resize(n2 * c, T::ZERO);
    lw.ai.resize(n2 * c, T::ZERO);
    match z {
        // SAFETY: this chunk's c n2 points of `z`, from l0 n2 on, which no
        // thread writes in this step.
        Between::Scratch(zr, zi) => unsafe { Ends::Split(zr, zi).read(l0 * n2, &mut lw.ar[..n2 * c], &mut lw.ai[..n2 * c]) },
        Between::Result(d) => {
            let d = Ends::Line(d);
            for j2 in 0..n2 {
                if j2 + PREFETCH < n2 {
                    d.prefetch(l0 + n1 * (j2 + PREFETCH));
                    d.prefetch(l0 + n1 * (j2 + PREFETCH) + c - 1);
                }
                // SAFETY: points l0 + n1 j2 .. + c < n of the result,
                // which `steps`' caller lets it read and write: this
                // chunk's lanes', which no other thread touches in this
                // step.
                unsafe { d.read(l0 + n1 * j2, &mut lw.ar[c * j2..c * j2 + c], &mut lw.ai[c * j2..c * j2 + c]) };
            }
        }
    }
    b.second.exec(c, lw);
    for k2 in 0..n2 {
        if k2 + PREFETCH < n2 {
            dst.prefetch_write(l0 + n1 * (k2 + PREFETCH), c);
        }
        // SAFETY: points l0 + n1 k2 .. + c < n of `dst`, which `steps`'
        // caller lets it write; lanes l0.. are this chunk's alone.
        unsafe { dst.write(l0 + n1 * k2, &lw.ar[c * k2..c * k2 + c], &lw.ai[c * k2..c * k2 + c]) };
    }
}

/// Runs `f(work, chunk)` for each chunk below `chunks`, over the pool's
/// threads, each part of the job with its own buffers. Each part takes the
/// next chunk not yet taken, so a thread that starts late, or is slowed by
/// other work on its core, leaves its share to the others; a chunk's bits
/// do not depend on which part runs it.
pub fn each_chunk<T: Real>(chunks: usize, f: impl Fn(&mut Work<T>, usize) + Sync) {
    let parts = pool::threads().min(chunks).max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    pool::run_parts(parts, |_| {
        let mut lw = Work::default();
        loop {
            let chunk = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if chunk >= chunks {
                break;
            }
            f(&mut lw, chunk);
        }
    });
}
