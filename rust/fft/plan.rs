//! A line's plan, its algorithm chosen from its points alone: Stockham
//! passes; Bluestein's convolution where a prime factor exceeds 250; Bailey's
//! four steps for long lines. Plans are cached per (points, direction,
//! precision) for the life of the process; buffers are held for a call only.

pub use super::bailey::Line;
use super::bailey::Bailey;
use super::passes::{radices, Passes, Work};
use super::real::{cmul, widest, Real};
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
            Algo::Bailey(Box::new(Bailey::new(n1, n / n1, dir)))
        } else {
            Algo::Passes(Passes::new(n, inverse))
        }
    } else {
        Algo::Passes(Passes::new(n, inverse))
    };
    Plan { n, algo }
}

/// The most points of a sub-line of Bailey's steps that computes by plain
/// passes over its chunk's lanes, rather than by its own plan: the chunk's
/// lanes already fill the passes' vectors, so the own plan's four steps in
/// cache add only sweeps and copies; longer sub-lines keep them, which hold
/// each pass's buffers small whatever the lanes.
pub const SUB_PASSES_MAX: usize = 1 << 13;

/// The plan of the n-point sub-lines of Bailey's steps in direction `dir`
/// (n's prime factors at most 250): passes where n is at most
/// [`SUB_PASSES_MAX`], else n's own plan ([`plan`]).
pub fn sub_plan<T: Real>(n: usize, dir: Direction) -> Arc<Plan<T>> {
    if n > SUB_PASSES_MAX {
        return plan(n, dir);
    }
    Arc::new(Plan { n, algo: Algo::Passes(Passes::new(n, dir == Direction::Inverse)) })
}

/// Four steps' twiddles e^(σ2πi j2 k1/n), n = n1 n2, each rounded once,
/// at `j2 + n2 k1`: real parts, then imaginary.
pub(super) fn exact_twiddles<T: Real>(n1: usize, n2: usize, inverse: bool) -> (Vec<T>, Vec<T>) {
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
        // SAFETY: the caller's.
        unsafe { b.exec_line(src, dst, w) };
        true
    }
}

/// Lanes each chunk of a step over sub-lines of `n` points of `T` takes
/// into a thread's small buffers, where its passes run: a multiple of 16,
/// and as many as fill the L1 cache with the passes' four buffers,
/// or all of `lanes`. The bits do not depend on it.
fn chunk_of<T>(n: usize, lanes: usize) -> usize {
    let fit = crate::core::caches::sizes().l1 / (4 * n * std::mem::size_of::<T>());
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

/// Copies `rows` rows of `cols` parts transposed, part c of row r at
/// `src[r ss + c]` to `dst[c ds + r]`, by [`crate::core::transpose::block`]
/// (tiles moved by vector shuffles, the edges part by part: moves only);
/// panics where a part would fall outside the slices.
#[inline(always)]
pub(super) fn transpose<T: Real>(src: &[T], ss: usize, dst: &mut [T], ds: usize, rows: usize, cols: usize) {
    if rows == 0 || cols == 0 {
        return;
    }
    assert!((rows - 1) * ss + cols <= src.len() && (cols - 1) * ds + rows <= dst.len());
    // SAFETY: the assertion: row r < rows of `src` ends at r ss + cols
    // parts, and row c < cols of `dst` at c ds + rows; a `&mut` slice lies
    // apart from every other.
    unsafe { crate::core::transpose::block(src.as_ptr(), ss as isize, dst.as_mut_ptr(), ds as isize, rows, cols) }
}

/// Copies a run of a few elements in blocks of 16 (a `memcpy` call for
/// each short run costs more than its copy).
#[inline(always)]
pub(super) fn copy_run<T: Copy>(dst: &mut [T], src: &[T]) {
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
