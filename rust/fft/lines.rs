//! The driver: an operand's lines along an axis, gathered in groups into a
//! thread's buffers (lanes interleaved), transformed and scattered.

use super::passes::Work;
use super::plan::{each_chunk, halves, plan, Line, Plan};
use super::real::{cmul, widest, Real};
use super::{Direction, Fft, Kind};
use crate::core::layout::View;
use crate::core::stream::{fence, stream};

/// An operand as parts of `T`: a complex element is two parts, its real
/// then its imaginary. Strides and offset count parts.
struct Arr<T> {
    ptr: *mut T,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: isize,
}

// SAFETY: an `Arr` is an address and a layout that the call's checks keep
// within its memory, which the door holds for the call; threads write only
// the lines each alone transforms.
unsafe impl<T> Send for Arr<T> {}
// SAFETY: as for `Send`.
unsafe impl<T> Sync for Arr<T> {}

impl<T: Real> Arr<T> {
    fn of(v: &View) -> Arr<T> {
        let k = if v.layout.dtype.is_complex() { 2 } else { 1 };
        Arr {
            ptr: v.memory.base as *mut T,
            shape: v.layout.shape.clone(),
            strides: v.layout.strides.iter().map(|&s| s * k).collect(),
            offset: v.layout.offset as isize * k,
        }
    }

    /// The first part of line `l` along `axis`, the lines numbered in C
    /// order of the other axes.
    fn line(&self, axis: usize, mut l: usize) -> isize {
        let mut off = self.offset;
        for d in (0..self.shape.len()).rev().filter(|&d| d != axis) {
            let n = self.shape[d];
            off += (l % n) as isize * self.strides[d];
            l /= n;
        }
        off
    }

    fn lines(&self, axis: usize) -> usize {
        (0..self.shape.len()).filter(|&d| d != axis).map(|d| self.shape[d]).product()
    }

    /// A C-contiguous copy of the operand, `parts` parts an element, and
    /// its `Arr`.
    fn copy(&self, parts: usize) -> (Vec<T>, Arr<T>) {
        let last = self.shape.len() - 1;
        let (n, step) = (self.shape[last], self.strides[last]);
        let mut held = Vec::with_capacity(self.lines(last) * n * parts);
        for l in 0..self.lines(last) {
            let o = self.line(last, l);
            for j in 0..n as isize {
                for p in 0..parts as isize {
                    // SAFETY: an element of the checked operand.
                    held.push(unsafe { self.ptr.offset(o + j * step + p).read_unaligned() });
                }
            }
        }
        let mut strides = vec![0isize; self.shape.len()];
        let mut s = parts as isize;
        for d in (0..self.shape.len()).rev() {
            strides[d] = s;
            s *= self.shape[d] as isize;
        }
        let arr = Arr { ptr: held.as_mut_ptr(), shape: self.shape.clone(), strides, offset: 0 };
        (held, arr)
    }
}

/// Runs a checked call, the destination's precision `T`.
pub fn run<T: Real>(f: &Fft) {
    if f.dst.layout.size() == 0 {
        return;
    }
    let dst = Arr::<T>::of(&f.dst);
    let x = Arr::<T>::of(&f.x);
    let last = *f.axes.last().expect("axes are not empty");
    let others = f.axes[..f.axes.len() - 1].iter().rev();
    // Read x from a copy where the destination overlaps it.
    let apart = !f.dst.overlaps(&f.x);
    let xparts = if f.x.layout.dtype.is_complex() { 2 } else { 1 };
    match f.kind {
        Kind::C2c(dir) => {
            let held = (!apart).then(|| x.copy(2));
            let src = held.as_ref().map_or(&x, |h| &h.1);
            pass(Op::C2c(dir), last, src, &dst);
            for &a in others {
                pass(Op::C2c(dir), a, &dst, &dst);
            }
        }
        Kind::R2c => {
            if f.x.layout.shape[last] == 0 {
                // One bin of +0 at each index: the empty sum.
                let n = f.dst.layout.size();
                for l in 0..n {
                    // SAFETY: element l of the checked destination, along
                    // its last axis as lines of one element.
                    unsafe {
                        let o = dst.line(dst.shape.len(), l);
                        dst.ptr.offset(o).write_unaligned(T::ZERO);
                        dst.ptr.offset(o + 1).write_unaligned(T::ZERO);
                    }
                }
                return;
            }
            let held = (!apart).then(|| x.copy(xparts));
            let src = held.as_ref().map_or(&x, |h| &h.1);
            pass(Op::R2c, last, src, &dst);
            for &a in others {
                pass(Op::C2c(Direction::Forward), a, &dst, &dst);
            }
        }
        Kind::C2r => {
            let held = (!apart || f.axes.len() > 1).then(|| x.copy(xparts));
            if let Some((_, h)) = &held {
                for &a in others {
                    pass(Op::C2c(Direction::Inverse), a, h, h);
                }
            }
            let src = held.as_ref().map_or(&x, |h| &h.1);
            pass(Op::C2r, last, src, &dst);
        }
    }
}

/// Test-only: where nonzero, the lanes of every group of short lines, so
/// that tests compare the bits of groupings and time them.
#[cfg(test)]
pub static GROUP_LANES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    C2c(Direction),
    R2c,
    C2r,
}

/// One pass along an axis: its lines, their plan and, for a real line of
/// even n >= 512 computed through n/2 complex points, the twiddles
/// e^(σ2πi k/n) for k <= n/2.
struct Job<'a, T> {
    op: Op,
    axis: usize,
    src: &'a Arr<T>,
    dst: &'a Arr<T>,
    n: usize,
    plan: &'a Plan<T>,
    halves: Option<&'a [(T, T)]>,
    /// Whether rows of side-by-side points go to the destination by
    /// non-temporal stores: where the pass's source and destination
    /// together exceed [`streamed_past`](crate::core::caches::streamed_past),
    /// so that the caches could not keep the lines written for a later read.
    streams: bool,
}

/// Transforms every line of `src` along `axis` into `dst` (which may be
/// `src` itself: each group of lines is read whole before it is written).
fn pass<T: Real>(op: Op, axis: usize, src: &Arr<T>, dst: &Arr<T>) {
    let n = if op == Op::C2r { dst.shape[axis] } else { src.shape[axis] };
    let lines = dst.lines(axis);
    if lines == 0 || n == 0 {
        return;
    }
    let packed = matches!(op, Op::R2c | Op::C2r) && n.is_multiple_of(2) && n >= 512;
    let cn = if packed { n / 2 } else { n };
    let dir = match op {
        Op::C2c(d) => d,
        Op::R2c => Direction::Forward,
        Op::C2r => Direction::Inverse,
    };
    let plan = plan::<T>(cn, dir);
    let halves = packed.then(|| halves::<T>(n, dir));
    let bytes = |a: &Arr<T>, real: bool| a.lines(axis) * a.shape[axis] * if real { 1 } else { 2 } * std::mem::size_of::<T>();
    let streams = bytes(src, op == Op::R2c) + bytes(dst, op == Op::C2r) > crate::core::caches::streamed_past();
    let halves = halves.as_deref().map(|v| &v[..]);
    let job = Job { op, axis, src, dst, n, plan: &plan, halves, streams };
    if plan.long() {
        let mut w = Work::default();
        for l in 0..lines {
            if let Op::C2c(_) = op {
                let line = |a: &Arr<T>| Line { ptr: a.ptr, off: a.line(axis, l), step: a.strides[axis] };
                // SAFETY: both lines are lines of checked operands, which
                // the call alone touches; `src` may be `dst` itself.
                if unsafe { plan.exec_line(Some(line(src)), Some(line(dst)), &mut w) } {
                    continue;
                }
            }
            job.group(l, 1, &mut w);
        }
    } else {
        // A line of side-by-side points through four steps in cache goes
        // alone: its steps then run over all their lanes at once in a
        // thread's small buffers, and it moves in one run. Other lines go
        // in groups ([`group_lanes`]; columns side by side then move as
        // rows). The bits do not depend on it.
        let contiguous = matches!(op, Op::C2c(_)) && src.strides[axis] == 2 && dst.strides[axis] == 2;
        let lanes = if contiguous && plan.in_cache_steps() { 1 } else { group_lanes::<T>(cn, lines) };
        #[cfg(test)]
        let lanes = match GROUP_LANES.load(std::sync::atomic::Ordering::Relaxed) {
            0 => lanes,
            l => l,
        };
        let lanes = lanes.min(lines);
        each_chunk(lines.div_ceil(lanes), |w, g| {
            let l0 = g * lanes;
            job.group(l0, lanes.min(lines - l0), w);
        });
    }
}

/// Lanes of a group of `lines` lines of `cn` points that go together
/// (lanes interleaved): about 16 K points, or more where as many as fill
/// half the L2 cache with the group's points (real and imaginary parts)
/// leave each thread a group, so that columns side by side move as longer
/// rows; at most 256. The bits do not depend on it.
fn group_lanes<T>(cn: usize, lines: usize) -> usize {
    let fit = crate::core::caches::sizes().l2 / 2 / (2 * cn * std::mem::size_of::<T>());
    let each = lines.div_ceil(crate::core::pool::threads());
    (16384 / cn).max(fit.min(each)).clamp(1, 256)
}

impl<T: Real> Job<'_, T> {
    /// Lines `l0` to `l0 + lanes`: gathered, transformed, scattered.
    fn group(&self, l0: usize, lanes: usize, w: &mut Work<T>) {
        let (src, dst, n) = (self.src, self.dst, self.n);
        let so: Vec<isize> = (0..lanes).map(|b| src.line(self.axis, l0 + b)).collect();
        let dof: Vec<isize> = (0..lanes).map(|b| dst.line(self.axis, l0 + b)).collect();
        let (ss, ds) = (src.strides[self.axis], dst.strides[self.axis]);
        let cn = self.plan.n;
        w.ar.resize(cn * lanes, T::ZERO);
        w.ai.resize(cn * lanes, T::ZERO);
        // SAFETY (both): `p` is a part of an element of the checked operand
        // (a line's first part plus a point's step below its extent, plus
        // one for an imaginary part).
        let rd = |p: isize| unsafe { src.ptr.offset(p).read_unaligned() };
        let wr = |p: isize, v: T| unsafe { dst.ptr.offset(p).write_unaligned(v) };
        let at = |b: usize, j: usize| b + lanes * j;
        // A long real line whose packed points lie side by side, as the
        // complex points they pack, is read (r2c) or written (c2r) where it
        // lies by Bailey's steps, which read and write lines in memory.
        let packed = |a: &Arr<T>, o: isize, s: isize| (s == 1).then_some(Line { ptr: a.ptr, off: o, step: 2 });
        let (from, to) = match (self.op, self.halves) {
            _ if lanes > 1 || !self.plan.by_lines() => (None, None),
            (Op::R2c, Some(_)) => (packed(src, so[0], ss), None),
            (Op::C2r, Some(_)) => (None, packed(dst, dof[0], ds)),
            _ => (None, None),
        };
        match (self.op, self.halves) {
            // SAFETY (both): each line's n points at `ss` parts apart, the
            // imaginary part next, lie in the checked operand.
            (Op::C2c(_), _) => unsafe { gather(src.ptr, &so, ss, 1, n, w) },
            (Op::R2c, Some(_)) if from.is_some() => {}
            (Op::R2c, Some(_)) => unsafe { gather(src.ptr, &so, 2 * ss, ss, cn, w) },
            (Op::R2c, None) => {
                for j in 0..n {
                    for (b, &o) in so.iter().enumerate() {
                        (w.ar[at(b, j)], w.ai[at(b, j)]) = (rd(o + j as isize * ss), T::ZERO);
                    }
                }
            }
            (Op::C2r, None) => {
                // X'[k] = X[k] for k <= n/2, conj X[n - k] above; the
                // imaginary parts of bin 0 and of an even n's bin n/2 left out.
                for k in 0..n {
                    for (b, &o) in so.iter().enumerate() {
                        let v = if 2 * k <= n {
                            let p = o + k as isize * ss;
                            (rd(p), if k == 0 || 2 * k == n { T::ZERO } else { rd(p + 1) })
                        } else {
                            let p = o + (n - k) as isize * ss;
                            (rd(p), -rd(p + 1))
                        };
                        (w.ar[at(b, k)], w.ai[at(b, k)]) = v;
                    }
                }
            }
            (Op::C2r, Some(tw)) => {
                // Z_k = (A + B) + i (A - B) e^(2πi k/n), A = X'[k] and
                // B = X'[k + n/2]: n/2 points whose inverse holds the even
                // points in its real parts and the odd in its imaginary.
                let k0 = if lanes == 1 {
                    // One line: bins 1 to h - 1 in one loop.
                    let o = so[0];
                    let p = src.ptr.wrapping_offset(o + ss);
                    if ss == 2 && p.is_aligned() {
                        // SAFETY: bins 1 to h - 1 of the line, side by
                        // side and aligned, lie in the checked operand,
                        // which no thread writes during the pass.
                        let xs = unsafe { std::slice::from_raw_parts(p, 2 * (cn - 1)) };
                        let (ar, ai) = (&mut w.ar[1..cn], &mut w.ai[1..cn]);
                        widest!(<T>(xs: &[T], tw: &[(T, T)], ar: &mut [T], ai: &mut [T]) { pack_line(xs, tw, ar, ai) });
                    } else {
                        for (k, &t) in tw.iter().enumerate().take(cn).skip(1) {
                            let (pa, pb) = (o + k as isize * ss, o + (cn - k) as isize * ss);
                            (w.ar[k], w.ai[k]) = pack(t, (rd(pa), rd(pa + 1)), (rd(pb), -rd(pb + 1)));
                        }
                    }
                    let pb = o + cn as isize * ss;
                    (w.ar[0], w.ai[0]) = pack(tw[0], (rd(o), T::ZERO), (rd(pb), T::ZERO));
                    cn
                } else {
                    0
                };
                for (k, &t) in tw.iter().enumerate().take(cn).skip(k0) {
                    for (b, &o) in so.iter().enumerate() {
                        let pa = o + k as isize * ss;
                        let (ar, ai) = (rd(pa), if k == 0 { T::ZERO } else { rd(pa + 1) });
                        let pb = o + (cn - k) as isize * ss;
                        let (br, bi) = if k == 0 { (rd(pb), T::ZERO) } else { (rd(pb), -rd(pb + 1)) };
                        (w.ar[at(b, k)], w.ai[at(b, k)]) = pack(t, (ar, ai), (br, bi));
                    }
                }
            }
        }
        if from.is_some() || to.is_some() {
            // SAFETY: `from`, a line of the checked operand, which no
            // thread writes during the pass, or `to`, this group's line of
            // the checked destination; `from` and `to` are not both set,
            // and w then holds the plan's n points.
            let ran = unsafe { self.plan.exec_line(from, to, w) };
            debug_assert!(ran);
        } else {
            self.plan.exec(lanes, w);
        }
        match (self.op, self.halves) {
            // SAFETY (both): each line's n points at `ds` parts apart, the
            // imaginary part next, lie in the checked destination, this
            // group's alone.
            (Op::C2c(_), _) => unsafe { scatter(dst.ptr, &dof, ds, 1, n, w, self.streams) },
            (Op::C2r, Some(_)) if to.is_some() => {}
            (Op::C2r, Some(_)) => unsafe { scatter(dst.ptr, &dof, 2 * ds, ds, cn, w, self.streams) },
            (Op::R2c, None) => {
                for k in 0..=n / 2 {
                    for (b, &o) in dof.iter().enumerate() {
                        let p = o + k as isize * ds;
                        wr(p, w.ar[at(b, k)]);
                        wr(p + 1, w.ai[at(b, k)]);
                    }
                }
            }
            (Op::R2c, Some(tw)) => {
                // X_k = E_k + e^(-2πi k/n) O_k, E_k = (Z_k + conj Z_(h-k))/2
                // and O_k = -i (Z_k - conj Z_(h-k))/2, indices modulo h.
                let k0 = if lanes == 1 {
                    // One line: bins 1 to h - 1 in one loop, then 0 and h.
                    let o = dof[0];
                    let p = dst.ptr.wrapping_offset(o + ds);
                    if ds == 2 && p.is_aligned() {
                        // SAFETY: bins 1 to h - 1 of the line, side by
                        // side and aligned, lie in the checked destination,
                        // this group's alone.
                        let out = unsafe { std::slice::from_raw_parts_mut(p, 2 * (cn - 1)) };
                        let (zr, zi) = (&w.ar[..cn], &w.ai[..cn]);
                        widest!(<T>(zr: &[T], zi: &[T], tw: &[(T, T)], out: &mut [T]) { unpack_line(zr, zi, tw, out) });
                    } else {
                        for (k, &t) in tw.iter().enumerate().take(cn).skip(1) {
                            let (r, i) = unpack(t, (w.ar[k], w.ai[k]), (w.ar[cn - k], -w.ai[cn - k]));
                            let p = o + k as isize * ds;
                            wr(p, r);
                            wr(p + 1, i);
                        }
                    }
                    for k in [0, cn] {
                        let (r, i) = unpack(tw[k], (w.ar[0], w.ai[0]), (w.ar[0], -w.ai[0]));
                        let p = o + k as isize * ds;
                        wr(p, r);
                        wr(p + 1, i);
                    }
                    tw.len()
                } else {
                    0
                };
                for (k, &t) in tw.iter().enumerate().skip(k0) {
                    let (zk, zc) = (k % cn, (cn - k % cn) % cn);
                    for (b, &o) in dof.iter().enumerate() {
                        let z = (w.ar[at(b, zk)], w.ai[at(b, zk)]);
                        let (r, i) = unpack(t, z, (w.ar[at(b, zc)], -w.ai[at(b, zc)]));
                        let p = o + k as isize * ds;
                        wr(p, r);
                        wr(p + 1, i);
                    }
                }
            }
            (Op::C2r, None) => {
                for j in 0..n {
                    for (b, &o) in dof.iter().enumerate() {
                        wr(o + j as isize * ds, w.ar[at(b, j)]);
                    }
                }
            }
        }
    }
}

/// Writes the points `vr`, `vi` side by side from `q` by non-temporal
/// stores ([`stream`]), interleaved a block at a time in a small buffer,
/// the blocks cut where `q`'s 64-byte lines start, so that each whole line
/// goes out in one store.
///
/// # Safety
/// The 2 `vr.len()` parts from `q` lie in memory the caller may write,
/// which no other thread touches meanwhile.
#[inline(always)]
unsafe fn stream_row<T: Real>(q: *mut T, vr: &[T], vi: &[T]) {
    const POINTS: usize = 128;
    let mut buf = [T::ZERO; 2 * POINTS];
    let (len, point) = (vr.len(), 2 * std::mem::size_of::<T>());
    let lead = ((64 - q as usize % 64) % 64 / point).min(len);
    let mut k = 0;
    while k < len {
        let m = if k == 0 && lead > 0 { lead } else { POINTS.min(len - k) };
        for ((b, &r), &i) in buf[..2 * m].chunks_exact_mut(2).zip(&vr[k..k + m]).zip(&vi[k..k + m]) {
            (b[0], b[1]) = (r, i);
        }
        // SAFETY: points k to k + m of the row, the caller's; `buf` is
        // this function's own.
        unsafe { stream(buf.as_ptr().cast(), q.add(2 * k).cast(), m * point) };
        k += m;
    }
}

/// A c2r's packed point Z_k = (A + B) + i (A - B) t, A = X'[k] and
/// B = X'[k + n/2], t = e^(2πi k/n).
#[inline(always)]
fn pack<T: Real>((tr, ti): (T, T), (ar, ai): (T, T), (br, bi): (T, T)) -> (T, T) {
    let (dr, di) = cmul(ar - br, ai - bi, tr, ti);
    ((ar + br) - di, (ai + bi) + dr)
}

/// An r2c's bin X_k = E_k + t O_k of Z_k = `z` and conj Z_(h-k) = `c`,
/// E_k = (z + c)/2, O_k = -i (z - c)/2 and t = e^(-2πi k/n).
#[inline(always)]
fn unpack<T: Real>((tr, ti): (T, T), (zr, zi): (T, T), (cr, ci): (T, T)) -> (T, T) {
    let (er, ei) = ((zr + cr) * T::HALF, (zi + ci) * T::HALF);
    let (dr, di) = ((zr - cr) * T::HALF, (zi - ci) * T::HALF);
    let (or, oi) = cmul(di, -dr, tr, ti);
    (er + or, ei + oi)
}

/// [`pack`] of one line's bins 1 to h - 1, `xs` their parts side by side
/// (bin k at 2(k - 1)), into `ar`, `ai` (point k at k - 1).
#[inline(always)]
fn pack_line<T: Real>(xs: &[T], tw: &[(T, T)], ar: &mut [T], ai: &mut [T]) {
    let ends = xs.chunks_exact(2).zip(xs.chunks_exact(2).rev());
    for (((a, b), &t), (r, i)) in ends.zip(&tw[1..]).zip(ar.iter_mut().zip(ai.iter_mut())) {
        (*r, *i) = pack(t, (a[0], a[1]), (b[0], -b[1]));
    }
}

/// [`unpack`] of one line's points `zr`, `zi` (h of them) into bins 1 to
/// h - 1, their parts side by side in `out` (bin k at 2(k - 1)).
#[inline(always)]
fn unpack_line<T: Real>(zr: &[T], zi: &[T], tw: &[(T, T)], out: &mut [T]) {
    let h = zr.len();
    let ends = zr[1..].iter().zip(&zi[1..]).zip(zr[1..].iter().rev().zip(zi[1..h].iter().rev()));
    for ((((&a, &b), (&c, &d)), &t), o) in ends.zip(&tw[1..h]).zip(out.chunks_exact_mut(2)) {
        (o[0], o[1]) = unpack(t, (a, b), (c, -d));
    }
}

/// Points a block of [`gather`] or [`scatter`] moves from each line.
const BLOCK: usize = 8;

/// Gathers point j of line b, its real part at `ptr + offs[b] + j step`
/// and its imaginary part `im` parts further, to lane b, point j of
/// `w.ar`, `w.ai`, for j below `n`: blocks of a few points from each line
/// in turn, so that each line's reads run and the writes stay in cache.
///
/// # Safety
/// Every such part must lie in memory the call may read.
unsafe fn gather<T: Real>(ptr: *const T, offs: &[isize], step: isize, im: isize, n: usize, w: &mut Work<T>) {
    let lanes = offs.len();
    let (ar, ai) = (&mut w.ar[..n * lanes], &mut w.ai[..n * lanes]);
    if let Some((p, step, width, rows)) = rows_of(ptr, offs, step, im, n) {
        widest!(<T>(p: *const T, step: isize, width: usize, rows: usize, ar: &mut [T], ai: &mut [T]) {
            deal_rows(p, step, width, rows, ar, ai)
        });
        return;
    }
    if lanes == 1 {
        let p = ptr.wrapping_offset(offs[0]);
        // SAFETY (both): the caller's, for point j.
        if (step, im) == (2, 1) {
            for j in 0..n {
                unsafe { (ar[j], ai[j]) = (p.add(2 * j).read_unaligned(), p.add(2 * j + 1).read_unaligned()) };
            }
        } else {
            for j in 0..n {
                let q = p.wrapping_offset(j as isize * step);
                unsafe { (ar[j], ai[j]) = (q.read_unaligned(), q.wrapping_offset(im).read_unaligned()) };
            }
        }
        return;
    }
    each_point(ptr.cast_mut(), offs, step, n, |q, at| {
        // SAFETY: the caller's, for the point at `q`, which is only read.
        unsafe { (ar[at], ai[at]) = (q.read_unaligned(), q.wrapping_offset(im).read_unaligned()) };
    });
}

/// Scatters lane b, point j of `w.ar`, `w.ai` to point j of line b, its
/// real part at `ptr + offs[b] + j step` and its imaginary part `im` parts
/// further, for j below `n`, in blocks as [`gather`] reads them; rows of
/// side-by-side points by non-temporal stores where `streams`.
///
/// # Safety
/// Every such part must lie in memory the call may write, which no other
/// thread touches meanwhile.
unsafe fn scatter<T: Real>(ptr: *mut T, offs: &[isize], step: isize, im: isize, n: usize, w: &Work<T>, streams: bool) {
    let lanes = offs.len();
    let (ar, ai) = (&w.ar[..n * lanes], &w.ai[..n * lanes]);
    if let Some((p, step, width, rows)) = rows_of(ptr, offs, step, im, n) {
        let p = p.cast_mut();
        widest!(<T>(p: *mut T, step: isize, width: usize, rows: usize, ar: &[T], ai: &[T], streams: bool) {
            join_rows(p, step, width, rows, ar, ai, streams)
        });
        if streams {
            fence();
        }
        return;
    }
    if lanes == 1 {
        let p = ptr.wrapping_offset(offs[0]);
        // SAFETY (both): the caller's, for point j.
        if (step, im) == (2, 1) {
            for j in 0..n {
                unsafe {
                    p.add(2 * j).write_unaligned(ar[j]);
                    p.add(2 * j + 1).write_unaligned(ai[j]);
                }
            }
        } else {
            for j in 0..n {
                let q = p.wrapping_offset(j as isize * step);
                unsafe {
                    q.write_unaligned(ar[j]);
                    q.wrapping_offset(im).write_unaligned(ai[j]);
                }
            }
        }
        return;
    }
    each_point(ptr, offs, step, n, |q: *mut T, at| {
        // SAFETY: the caller's, for the point at `q`.
        unsafe {
            q.write_unaligned(ar[at]);
            q.wrapping_offset(im).write_unaligned(ai[at]);
        }
    });
}

/// Calls `f(q, at)` for point j below `n` of each line b: `q` the address
/// of its real part, `ptr + offs[b] + j step`, and `at` its index
/// `b + lanes j` among the lanes. Blocks of [`BLOCK`] points from each
/// line in turn, so that each line's accesses run and the lanes' stay in
/// cache.
#[inline(always)]
fn each_point<T>(ptr: *mut T, offs: &[isize], step: isize, n: usize, mut f: impl FnMut(*mut T, usize)) {
    let lanes = offs.len();
    for j0 in (0..n).step_by(BLOCK) {
        let jn = BLOCK.min(n - j0);
        for (b, &o) in offs.iter().enumerate() {
            let p = ptr.wrapping_offset(o + j0 as isize * step);
            for jj in 0..jn {
                f(p.wrapping_offset(jj as isize * step), b + lanes * (j0 + jj));
            }
        }
    }
}

/// A group of lines as rows of side-by-side points, where its parts lie so
/// and are aligned: lane b's point j at `offs[0] + j step + 2 b` parts, the
/// imaginary part next. Answers the first row's address, the rows' step,
/// the points a row and the rows: a group of lines side by side has a row
/// a point, and a single line of side-by-side points is one row.
fn rows_of<T>(ptr: *const T, offs: &[isize], step: isize, im: isize, n: usize) -> Option<(*const T, isize, usize, usize)> {
    let p = ptr.wrapping_offset(offs[0]);
    if im != 1 || !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return None;
    }
    if offs.len() == 1 && step == 2 {
        Some((p, 0, n, 1))
    } else if offs.windows(2).all(|o| o[1] - o[0] == 2) {
        Some((p, step, offs.len(), n))
    } else {
        None
    }
}

/// [`gather`] of rows ([`rows_of`]): row j's `width` points, from `p + j
/// step` on, to points `width j..` of `ar`, `ai`, each row one vectorised run.
/// The caller's safety: those parts lie in memory the call may read, which
/// no thread writes meanwhile.
#[inline(always)]
fn deal_rows<T: Real>(p: *const T, step: isize, width: usize, rows: usize, ar: &mut [T], ai: &mut [T]) {
    for j in 0..rows {
        // SAFETY: row j's 2 width parts, aligned (`rows_of`), lie in the
        // operand, which [`gather`]'s caller lets it read and no thread
        // writes during the gather.
        let row = unsafe { std::slice::from_raw_parts(p.wrapping_offset(j as isize * step), 2 * width) };
        let (vr, vi) = (&mut ar[width * j..width * (j + 1)], &mut ai[width * j..width * (j + 1)]);
        for ((r, i), z) in vr.iter_mut().zip(vi.iter_mut()).zip(row.chunks_exact(2)) {
            (*r, *i) = (z[0], z[1]);
        }
    }
}

/// [`scatter`] of rows ([`rows_of`]), as [`deal_rows`] gathers them, by
/// non-temporal stores where `streams` (the caller then fences them).
#[inline(always)]
fn join_rows<T: Real>(p: *mut T, step: isize, width: usize, rows: usize, ar: &[T], ai: &[T], streams: bool) {
    for j in (0..rows).filter(|_| streams) {
        let (vr, vi) = (&ar[width * j..width * (j + 1)], &ai[width * j..width * (j + 1)]);
        // SAFETY: as below.
        unsafe { stream_row(p.wrapping_offset(j as isize * step), vr, vi) };
    }
    for j in (0..rows).filter(|_| !streams) {
        // SAFETY: row j's 2 width parts, aligned (`rows_of`), lie in the
        // destination, which [`scatter`]'s caller lets it write and no
        // other thread touches meanwhile.
        let row = unsafe { std::slice::from_raw_parts_mut(p.wrapping_offset(j as isize * step), 2 * width) };
        let (vr, vi) = (&ar[width * j..width * (j + 1)], &ai[width * j..width * (j + 1)]);
        for ((r, i), z) in vr.iter().zip(vi).zip(row.chunks_exact_mut(2)) {
            (z[0], z[1]) = (*r, *i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::join_rows;
    use crate::fft::real::Real;

    /// Rows streamed write what rows stored write, at every offset from a
    /// 64-byte line of up to two lines, for rows shorter and longer than
    /// a block, and touch no part between them.
    #[test]
    fn streamed_rows_write_what_stored_rows_write() {
        fn check<T: Real>(of: fn(f64) -> T) {
            for width in [0usize, 1, 7, 8, 9, 127, 128, 129, 300] {
                let rows = 3;
                let step = 2 * width + 6;
                let ar: Vec<T> = (0..width * rows).map(|i| of(i as f64 + 0.5)).collect();
                let ai: Vec<T> = (0..width * rows).map(|i| of(-(i as f64) - 0.25)).collect();
                let parts = 128 / std::mem::size_of::<T>();
                for off in 0..parts {
                    let len = rows * step;
                    let mut a = vec![of(7.0); len + 64 + parts];
                    let mut b = a.clone();
                    let (pa, pb) = (a.as_ptr().align_offset(64) + off, b.as_ptr().align_offset(64) + off);
                    join_rows(a[pa..].as_mut_ptr(), step as isize, width, rows, &ar, &ai, false);
                    join_rows(b[pb..].as_mut_ptr(), step as isize, width, rows, &ar, &ai, true);
                    crate::core::stream::fence();
                    assert!(a[pa..pa + len] == b[pb..pb + len], "width {width} offset {off}");
                    assert!(b[..pb].iter().chain(&b[pb + len..]).all(|&v| v == of(7.0)), "width {width} offset {off}");
                }
            }
        }
        check::<f32>(|x| x as f32);
        check::<f64>(|x| x);
    }
}
