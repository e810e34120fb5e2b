//! Bailey's four steps for long lines: n = n1 n2 points as n2 transforms
//! of n1 points, a twiddle for each point, then n1 transforms of n2
//! points, over the pool's threads. Each step takes chunks of lanes into a
//! thread's buffers (a chunk's runs read and written side by side, the
//! points transposed on the way), so its bits depend neither on the chunk's
//! thread nor on where the points wait between the steps: in scratch, or,
//! for a line past the largest cache, in the result itself ([`Between`]).
//! The steps read and write lines in memory directly ([`Line`]), or a
//! thread's buffers.

use super::passes::Work;
use super::plan::{copy_run, each_chunk, exact_twiddles, sub_plan, transpose, Plan};
use super::real::{cmul, prefetch, widest, Real};
use super::twiddle::Cis;
use super::Direction;
use std::sync::Arc;

/// Bailey's four steps over n = n1 n2: n2 transforms of n1 points (stride
/// n2), twiddles e^(σ2πi j2 k1/n), n1 transforms of n2 points, the points
/// transposed between the steps so that each reads and writes runs.
pub struct Bailey<T> {
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

/// A line of complex points in memory: point j's real part at
/// `off + j * step` parts from `ptr`, its imaginary part the next part.
#[derive(Clone, Copy)]
pub struct Line<T> {
    pub ptr: *mut T,
    pub off: isize,
    pub step: isize,
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

impl<T: Real> Bailey<T> {
    /// The steps of n1 n2 points in direction `dir`, their sub-plans from
    /// the cache or built.
    pub fn new(n1: usize, n2: usize, dir: Direction) -> Bailey<T> {
        let (n, inverse) = (n1 * n2, dir == Direction::Inverse);
        Bailey {
            n1,
            n2,
            first: sub_plan(n1, dir),
            second: sub_plan(n2, dir),
            twiddles: Table::new(n, inverse),
            exact: (n <= EXACT_MAX).then(|| exact_twiddles(n1, n2, inverse)),
        }
    }

    /// [`Plan::exec_line`] of these steps: from the line `src` into the
    /// line `dst`, `None` standing for `w.ar`, `w.ai` (then exactly n
    /// long).
    ///
    /// # Safety
    /// As [`Plan::exec_line`].
    pub unsafe fn exec_line(&self, src: Option<Line<T>>, dst: Option<Line<T>>, w: &mut Work<T>) {
        let n = self.n1 * self.n2;
        assert!([src, dst].iter().all(Option::is_some) || w.ar.len() == n && w.ai.len() == n);
        let buffers = Ends::Split(Shared(w.ar.as_mut_ptr()), Shared(w.ai.as_mut_ptr()));
        let end = |l: Option<Line<T>>| l.map_or(buffers, Ends::Line);
        self.steps(end(src), end(dst));
    }

    /// One line in `w.ar`, `w.ai`, in place.
    pub fn run(&self, w: &mut Work<T>) {
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
            let block = crate::core::transpose::block::<T>;
            block(ar[c * k0..].as_ptr(), c as isize, zr.at(at), cb as isize, cb, c);
            block(ai[c * k0..].as_ptr(), c as isize, zi.at(at), cb as isize, cb, c);
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
