//! Chain order by packed panels: each output's sum starts from init or +0
//! and takes its products one fused multiply-add at a time in increasing
//! depth, so that the blocking (which depths, rows and columns go
//! together, which thread computes a tile) never changes a bit.
//!
//! The outputs are cut into tiles of `mc` rows and `nc` columns, each
//! computed whole on one thread. A tile runs the depth in slices of `kc`:
//! each slice packs its rows of a into panels of the microkernel's rows
//! and its columns of b into panels of its columns, every element cast into the
//! acc, and the microkernel runs each pair of panels into the tile's sums,
//! which stay in the acc between slices, in the thread's scratch: the
//! first slice starts them from +0 where there is no init, and the last
//! stores them straight into dst where dst holds the acc's values in rows
//! of unit column step ([`Sink::direct_step`]), so that no pass clears the
//! sums nor copies them out. The sizes come from the caches the machine
//! reports ([`blocking`]).

use super::elem::{reader, Elem, Micro, Read, Tile};
use super::plan::scale_reader;
use super::plan::{Plan, Side, Sink};
use crate::core::dtype::Dtype;
use crate::core::{isa, pool};
use std::any::Any;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
#[cfg(test)]
use std::sync::atomic::AtomicU64;

/// How a contraction is cut: `kc` depths a slice, the rows cut into `ti`
/// tiles of whole panels, the columns into tiles of `nc`, and whether
/// the packed b is shared by the row tiles (packed once, by whichever
/// threads come first) rather than packed by each tile.
struct Blocking {
    kc: usize,
    ti: usize,
    nc: usize,
    shared: bool,
}

/// The blocking of a contraction of `m` rows, `n` columns and depth `k`
/// over `nb` batches by microkernel `mk` on `threads` threads. A slice of
/// `kc` depths of a b panel fills about half the L1 cache, a tile's packed
/// a about half the L2 (whole panels, rounded up), its packed b (`nc`
/// columns) about a quarter of the L3. b is shared where there is more
/// than one row tile and the whole packed b of the call holds at most 64
/// MiB; then, on more than one thread, the row tiles are cut finer (the
/// columns too where there is no row left to cut) until there are at
/// least four tiles a thread, which each takes as it comes free, so that
/// none waits long on the last. Unshared, tiles are halved while they are
/// fewer than twice the threads, down to 8 panels a side.
fn blocking<E: Elem>(mk: Micro<E>, nb: usize, m: usize, n: usize, k: usize, threads: usize) -> Blocking {
    let c = crate::core::caches::sizes();
    let size = std::mem::size_of::<E>();
    let (mr, nr) = (mk.mr, mk.nr);
    let kc = (c.l1 / 2 / (nr * size)).clamp(32, 1024).min(k.max(1));
    // The extent cut into as few tiles of at most `cap` as can be, of
    // about one size, whole panels each.
    let even = |extent: usize, cap: usize, panel: usize| extent.div_ceil(extent.div_ceil(cap).max(1)).div_ceil(panel) * panel;
    let pm = m.div_ceil(mr);
    let mut ti = pm.div_ceil((c.l2 / 2 / (kc * size)).div_ceil(mr).max(1));
    let mut nc = even(n, ((c.l3 / 4 / (kc * size)) / nr).max(1) * nr, nr);
    let packed_b = nb.saturating_mul(k).saturating_mul(n.div_ceil(nr) * nr).saturating_mul(size);
    let can_share = packed_b <= 64 << 20;
    let want = if can_share && threads > 1 { 4 * threads } else { 2 * threads };
    let tiles = |ti: usize, nc: usize| nb * ti * n.div_ceil(nc);
    while tiles(ti, nc) < want {
        let n2 = even(n, nc / 2, nr);
        if can_share && ti < pm {
            ti = (2 * ti).min(pm);
        } else if nc > 8 * nr && n2 < nc && (can_share || nc >= pm.div_ceil(ti) * mr) {
            nc = n2;
        } else if !can_share && pm.div_ceil(ti) > 8 {
            ti = pm.div_ceil(pm.div_ceil(ti) / 2);
        } else {
            break;
        }
    }
    Blocking { kc, ti, nc, shared: can_share && ti > 1 }
}

/// Each thread's CPU time in the parts of the calls since last drained,
/// where [`TIME_PARTS`] is set (timing tests only).
#[cfg(test)]
pub(crate) static PART_CPU: std::sync::Mutex<Vec<(std::thread::ThreadId, f64)>> = std::sync::Mutex::new(Vec::new());
/// Whether parts add their CPU time to [`PART_CPU`] (set by `speed`).
#[cfg(test)]
pub(crate) static TIME_PARTS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Runs a part, its thread's CPU time added to [`PART_CPU`] in tests
/// that ask for it.
#[inline(always)]
pub(super) fn timed_part<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(test)]
    if TIME_PARTS.load(Ordering::Relaxed) {
        let t0 = crate::core::cpu_clock::thread_cpu_s();
        let r = f();
        PART_CPU.lock().unwrap().push((std::thread::current().id(), crate::core::cpu_clock::thread_cpu_s() - t0));
        return r;
    }
    f()
}

/// Packs outer indices `o0..o1` of `s` at batch `bi`, depths
/// `k0..k0 + kc`, into panels of `w` indices: panel p holds, depth after
/// depth, the `w` values of indices `o0 + p w ..`, +0 past `o1`. Elements
/// whose dtype is the acc's, unscaled, are copied (runs along the outer
/// index whole, else along the depth); others are cast (and scaled) one
/// by one, memory read along whichever of the two steps is the shorter.
#[allow(clippy::too_many_arguments)]
fn pack<E: Elem>(s: &Side, (read, sread): (Read<E>, Read<E>), acc: Dtype, bi: usize, (o0, o1): (usize, usize), w: usize, k0: usize, kc: usize, out: &mut [E]) {
    let in_place = s.in_place::<E>(acc);
    let direct = in_place && s.scale.is_none();
    let get = |o: usize, kk: usize| s.get(read, sread, acc, in_place, (bi, o, k0 + kk));
    let along_depth = match (s.depth_step, s.outer_step) {
        (Some(d), Some(o)) => d.abs() <= o.abs(),
        _ => true,
    };
    let depth = &s.depth[k0..k0 + kc];
    // SAFETY (`at` and every read through it): the view was checked
    // against its buffer and (bi, o, k) is one of its indices, whose
    // element lies at batch[bi] + outer[o] + depth[k]; `direct` says its
    // elements are E's values bit for bit. Nothing writes an operand
    // during the call (dst shares no memory with one where results are
    // stored in place, `Plan::scratch`).
    let at = |o: isize, d: isize| unsafe { s.mem.base.cast::<E>().offset(s.batch[bi] + o + d) };
    if direct && s.outer_step == Some(1) && o1 > o0 {
        // Each depth's run of outer indices read once, in order, and dealt
        // into the panels in turn, `w` values each (the last panel's
        // valid ones, the rest +0 below).
        let (len, panels) = (o1 - o0, out.len() / (w * kc));
        assert!(panels * w >= len && out.len() == panels * w * kc, "the panels hold the run");
        for (kk, &d) in depth.iter().enumerate() {
            let src = at(s.outer[o0], d);
            // The run 4 depths on (a matrix's rows lie apart, and a short
            // run is over before the CPU would fetch ahead on its own) on
            // its way into the cache while this one is dealt.
            if let Some(&ahead) = depth.get(kk + 4) {
                prefetch_run(at(s.outer[o0], ahead), len);
            }
            for q in 0..panels {
                let valid = w.min(len - q * w);
                // SAFETY: as `at`: outer[o0 + t] = outer[o0] + t for t <
                // len, and q w + valid <= len; the panel's values at depth
                // kk, `valid <= w` of them from (q kc + kk) w, lie in `out`
                // (checked above), which no read overlaps.
                unsafe { copy_short(src.add(q * w), out.as_mut_ptr().add((q * kc + kk) * w), valid) };
            }
        }
        if let Some(last) = out.chunks_mut(w * kc).last() {
            let valid = len - (len - 1) / w * w;
            if valid < w {
                for kk in 0..kc {
                    last[kk * w + valid..kk * w + w].fill(E::ZERO);
                }
            }
        }
        return;
    }
    for (p, panel) in out.chunks_mut(w * kc).enumerate() {
        let first = o0 + p * w;
        let valid = w.min(o1 - first);
        let outer = &s.outer[first..first + valid];
        if direct && s.depth_step == Some(1) {
            // Runs of 8 depths of each index read as arrays and dealt
            // into the panel's depths.
            let whole = kc - kc % 8;
            // Whole groups of four rows of float32 or float64, their runs
            // dealt four at a time by a transpose in registers.
            let grouped = if dealt::<E>() { valid - valid % 4 } else { 0 };
            for g in (0..grouped).step_by(4) {
                for q in first + g + 4..(first + g + 8).min(o1) {
                    prefetch_run(at(s.outer[q], depth[0]), kc);
                }
                // SAFETY: the rows hold `kc` depths from depth[0] (as
                // `at`: depth[k0 + kk] = depth[k0] + kk), and the panel
                // `(kc - 1) w + g + 4` values, g + 4 <= valid <= w.
                unsafe { deal4(std::array::from_fn(|q| at(outer[g + q], depth[0]).cast_const()), whole, panel.as_mut_ptr().add(g), w) };
            }
            for (r, &o) in outer.iter().enumerate() {
                let row = at(o, depth[0]);
                if r >= grouped {
                    // The run of the index 4 on (rows of a matrix lie
                    // apart, too short for the CPU to fetch ahead on its
                    // own) on its way into the cache while this one is
                    // dealt.
                    if let Some(&ahead) = s.outer.get(first + r + 4).filter(|_| first + r + 4 < o1) {
                        prefetch_run(at(ahead, depth[0]), kc);
                    }
                    for k8 in (0..whole).step_by(8) {
                        // SAFETY: as `at`: depth[k0 + kk] = depth[k0] + kk.
                        let v = unsafe { row.add(k8).cast::<[E; 8]>().read_unaligned() };
                        for (t, x) in v.into_iter().enumerate() {
                            panel[(k8 + t) * w + r] = x;
                        }
                    }
                }
                for kk in whole..kc {
                    // SAFETY: as above.
                    panel[kk * w + r] = unsafe { row.add(kk).read_unaligned() };
                }
            }
        } else if direct {
            for (kk, &d) in depth.iter().enumerate() {
                for (r, &o) in outer.iter().enumerate() {
                    // SAFETY: as `at`.
                    panel[kk * w + r] = unsafe { at(o, d).read_unaligned() };
                }
            }
        } else if along_depth {
            for r in 0..valid {
                for kk in 0..kc {
                    panel[kk * w + r] = get(first + r, kk);
                }
            }
        } else {
            for kk in 0..kc {
                for r in 0..valid {
                    panel[kk * w + r] = get(first + r, kk);
                }
            }
        }
        // A panel of fewer than `w` indices, padded with +0 (a whole one
        // has nothing to pad: its loop of empty fills took a tenth of the
        // packing of a row-major a, by perf).
        if valid < w {
            for kk in 0..kc {
                panel[kk * w + valid..kk * w + w].fill(E::ZERO);
            }
        }
    }
}

/// A buffer the parts of a call write disjoint pieces of.
struct Packed<E>(*mut E);

// SAFETY: the parts write disjoint pieces of the buffer (each chunk of b
// is packed by the one part that claims it) and read a piece only once
// its writer has marked it done (release and acquire), while the buffer's
// owner, the calling thread, waits for every part to end.
unsafe impl<E: Send> Sync for Packed<E> {}

impl<E> Packed<E> {
    /// The buffer's value `i` on.
    fn at(&self, i: usize) -> *mut E {
        self.0.wrapping_add(i)
    }
}

/// Runs the plan's products in chain order into `sink`, on the
/// microkernel of the instruction set [`isa::avx512`] chooses on the
/// calling thread.
///
/// Tiles are taken in order of batch, column tile and row tile. Where b
/// is shared ([`blocking`]), a call packs its whole b once, a slice of a
/// column tile (a chunk) at a time, into the calling thread's scratch:
/// a part about to compute a tile first packs the chunks of its block of
/// b that no part has taken yet, then waits for those that others are
/// packing (a part that has taken a chunk packs it without waiting, so
/// that none waits on a part that has not started).
pub fn run<E: Elem>(p: &Plan, sink: &Sink<E>) {
    let mk = E::micro(isa::avx512());
    let (mr, nr) = (mk.mr, mk.nr);
    let Blocking { kc, ti, nc, shared } = blocking(mk, p.nb, p.m, p.n, p.k, pool::threads());
    let (pm, tj) = (p.m.div_ceil(mr), p.n.div_ceil(nc));
    // Row tile ib holds panels ib pm / ti .. (ib + 1) pm / ti.
    let rows_of = |ib: usize| ((ib * pm / ti) * mr, ((ib + 1) * pm / ti * mr).min(p.m));
    let ra = (reader::<E>(p.a.dtype), scale_reader(&p.a));
    let rb = (reader::<E>(p.b.dtype), scale_reader(&p.b));
    let ri = p.init_reader::<E>();
    let tiles = p.nb * ti * tj;
    // The most rows and columns of a tile, whole panels.
    let (mp, np) = (pm.div_ceil(ti), nc.min(p.n).div_ceil(nr));
    let kc_max = kc.min(p.k);
    let slices = p.k.div_ceil(kc);
    // The shared b: batch bi's slice at depth k0 (of kn depths) holds the
    // panels of every column in order, those from column j0 (a tile's
    // first) at `b_at(bi, k0, j0, kn)`.
    let npad = p.n.div_ceil(nr) * nr;
    let b_at = |bi: usize, k0: usize, j0: usize, kn: usize| (bi * p.k + k0) * npad + j0 * kn;
    // Each part takes the next tile not yet taken until none is left (a
    // thread that another process slows takes fewer), computing it in the
    // thread's scratch: the tile's sums, rows `ldc` apart (a vector more
    // than the tile's width, so that a microkernel's rows do not share the
    // L1 cache's sets), then the packed a and (unshared) b.
    let ldc_max = np * nr + nr;
    let (c_len, a_len) = (mp * mr * ldc_max, mp * mr * kc_max);
    let b_len = if shared { 0 } else { np * nr * kc_max };
    let parts = tiles.min(pool::threads());
    // Where there is no init, each output's sum starts from +0 in its
    // first slice's microkernel, which loads no sums (the tile has no pass
    // of init); where dst may take them (`Sink::direct_step`), the last
    // slice's microkernels store the tiles' whole microkernel tiles
    // straight into dst, and only the rest is put.
    let zero_start = p.init.is_none() && p.k > 0;
    let direct = sink.direct_step().filter(|_| p.k > 0);
    let (next, next_chunk) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let done: Vec<AtomicUsize> = (0..if shared { p.nb * tj } else { 0 }).map(|_| AtomicUsize::new(0)).collect();
    with_scratch(&SHARED, if shared { p.nb * p.k * npad } else { 0 }, |whole_b: &mut [E]| {
        let whole_b = Packed(whole_b.as_mut_ptr());
        // Packs chunk `ch` of the shared b: slice ch % slices of block
        // (batch, column tile) ch / slices.
        let pack_chunk = |ch: usize| {
            let (blk, s) = (ch / slices, ch % slices);
            let (bi, j0) = (blk / tj, (blk % tj) * nc);
            let j1 = (j0 + nc).min(p.n);
            let (k0, kn) = (s * kc, kc.min(p.k - s * kc));
            // SAFETY: the chunk's panels lie in the buffer, of every
            // batch's depths and columns, disjoint from every other
            // chunk's; this part alone claimed it, and none reads it
            // before it is marked done below.
            let out = unsafe { std::slice::from_raw_parts_mut(whole_b.at(b_at(bi, k0, j0, kn)), (j1 - j0).div_ceil(nr) * nr * kn) };
            pack(&p.b, rb, p.acc, bi, (j0, j1), nr, k0, kn, out);
            done[blk].fetch_add(1, Ordering::Release);
        };
        pool::run_parts(parts, |_| timed_part(|| {
            with_scratch(&TILE, c_len + a_len + b_len, |scratch: &mut [E]| {
                let (c, rest) = scratch.split_at_mut(c_len);
                let (pa, pb) = rest.split_at_mut(a_len);
                loop {
                    let t = next.fetch_add(1, Ordering::Relaxed);
                    if t >= tiles {
                        break;
                    }
                    let (blk, ib) = (t / ti, t % ti);
                    let (bi, j0) = (blk / tj, (blk % tj) * nc);
                    let ((i0, i1), j1) = (rows_of(ib), (j0 + nc).min(p.n));
                    let mut clock = lap_start();
                    if shared {
                        loop {
                            let ch = next_chunk.load(Ordering::Relaxed);
                            if ch >= (blk + 1) * slices {
                                break;
                            }
                            if next_chunk.compare_exchange(ch, ch + 1, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
                                pack_chunk(ch);
                            }
                        }
                        let mut spins = 0u32;
                        while done[blk].load(Ordering::Acquire) < slices {
                            spins += 1;
                            if spins.is_multiple_of(64) {
                                std::thread::yield_now();
                            } else {
                                std::hint::spin_loop();
                            }
                        }
                    }
                    let (mp, np) = ((i1 - i0).div_ceil(mr), (j1 - j0).div_ceil(nr));
                    let ldc = np * nr + nr;
                    let c = &mut c[..mp * mr * ldc];
                    // The tile's whole microkernel tiles, which the last
                    // slice stores straight into dst where it may.
                    let (whole_rows, whole_cols) = if direct.is_some() { ((i1 - i0) / mr, (j1 - j0) / nr) } else { (0, 0) };
                    lap(2, &mut clock);
                    if !zero_start {
                        // Each row's sums start from init (or +0), the
                        // padding past the tile's columns and the rows past
                        // its last from +0: one pass over the sums.
                        for (r, row) in c.chunks_exact_mut(ldc).enumerate() {
                            let w = if i0 + r < i1 { j1 - j0 } else { 0 };
                            if w > 0 {
                                p.init_row(ri, bi, i0 + r, j0, &mut row[..w]);
                            }
                            row[w..].fill(E::ZERO);
                        }
                    }
                    let mut k0 = 0;
                    lap(0, &mut clock);
                    while k0 < p.k {
                        let kn = kc.min(p.k - k0);
                        let pa = &mut pa[..mp * mr * kn];
                        pack(&p.a, ra, p.acc, bi, (i0, i1), mr, k0, kn, pa);
                        lap(1, &mut clock);
                        let pb: &[E] = if shared {
                            // SAFETY: the block's chunks are all marked
                            // done (above), and none is written again
                            // during the call.
                            unsafe { std::slice::from_raw_parts(whole_b.at(b_at(bi, k0, j0, kn)), np * nr * kn) }
                        } else {
                            let pb = &mut pb[..np * nr * kn];
                            pack(&p.b, rb, p.acc, bi, (j0, j1), nr, k0, kn, pb);
                            pb
                        };
                        lap(2, &mut clock);
                        // The first slice's sums start from +0 where the
                        // tile had no pass of init.
                        let (loads, last) = (k0 > 0 || !zero_start, k0 + kn == p.k);
                        for jp in 0..np {
                            for ip in 0..mp {
                                // The sums of the next call's tile on their way
                                // into the L1 cache while this one runs.
                                let (ni, nj) = if ip + 1 < mp { (ip + 1, jp) } else { (0, jp + 1) };
                                if nj < np && loads {
                                    prefetch_rows(&c[ni * mr * ldc + nj * nr..], mr, ldc, nr);
                                }
                                let at = c[ip * mr * ldc + jp * nr..].as_mut_ptr();
                                let to = match direct {
                                    Some(step) if last && ip < whole_rows && jp < whole_cols => (sink.dst_at(bi, i0 + ip * mr, j0 + jp * nr), step),
                                    _ => (at, ldc),
                                };
                                // SAFETY: the panels hold kn depths of mr and
                                // nr values; the sums' tile lies in `c`, this
                                // part's own, and a tile stored into dst holds
                                // outputs of dst's view (`direct_step`: rows
                                // `step` apart, columns one apart) of this
                                // part's tile alone, which no operand's memory
                                // shares (no scratch) and whose init, if any,
                                // was read above; `E::micro` gave a kernel of
                                // this CPU's instructions.
                                unsafe { (mk.run)(kn, pa.as_ptr().add(ip * mr * kn), pb.as_ptr().add(jp * nr * kn), Tile { from: loads.then_some((at.cast_const(), ldc)), to }) };
                            }
                        }
                        k0 += kn;
                        lap(3, &mut clock);
                    }
                    // The outputs not stored into dst by the microkernels:
                    // the rows of whole tiles past their columns, then the
                    // rest of the rows whole.
                    let (wi, wj) = (i0 + whole_rows * mr, j0 + whole_cols * nr);
                    for i in i0..i1 {
                        let from = if i < wi { wj } else { j0 };
                        if from < j1 {
                            sink.put(bi, i, from, &c[(i - i0) * ldc + from - j0..][..j1 - from]);
                        }
                    }
                    lap(4, &mut clock);
                }
            })
        }))
    });
}

/// Copies `n` values from `src` to `dst` by runs of 8 and 4 values read
/// and written as arrays, which compile to vector moves rather than a call
/// of memcpy (`n` is a panel's width, a few dozen at most), then one by one.
///
/// # Safety
/// `src` holds `n` values to read and `dst` room for `n`, not overlapping.
#[inline(always)]
unsafe fn copy_short<E: Copy>(src: *const E, dst: *mut E, n: usize) {
    let mut t = 0;
    // SAFETY: every run read and written lies in the first `n` values of
    // `src` and `dst` (caller).
    unsafe {
        while t + 8 <= n {
            dst.add(t).cast::<[E; 8]>().write_unaligned(src.add(t).cast::<[E; 8]>().read_unaligned());
            t += 8;
        }
        if t + 4 <= n {
            dst.add(t).cast::<[E; 4]>().write_unaligned(src.add(t).cast::<[E; 4]>().read_unaligned());
            t += 4;
        }
        while t < n {
            dst.add(t).write(src.add(t).read_unaligned());
            t += 1;
        }
    }
}

/// Whether [`deal4`] deals `E`'s values: `f32`'s and `f64`'s.
fn dealt<E: Elem>() -> bool {
    use std::any::TypeId;
    [TypeId::of::<f32>(), TypeId::of::<f64>()].contains(&TypeId::of::<E>())
}

/// Deals depths `0..kc` (a multiple of 8) of four rows into a panel of
/// `w` values a depth: row r's depth k to `out[k w + r]` ([`dealt`] types
/// only).
///
/// # Safety
/// Each row holds `kc` values; `out` holds `(kc - 1) w + 4`.
unsafe fn deal4<E: Elem>(rows: [*const E; 4], kc: usize, out: *mut E, w: usize) {
    use std::any::TypeId;
    // SAFETY: E is f32 or f64, as the type ids say, so the pointers are
    // of that type; the extents are the caller's.
    unsafe {
        if TypeId::of::<E>() == TypeId::of::<f32>() {
            super::simd::deal4_f32(rows.map(|p| p.cast()), kc, out.cast(), w)
        } else if TypeId::of::<E>() == TypeId::of::<f64>() {
            super::simd::deal4_f64(rows.map(|p| p.cast()), kc, out.cast(), w)
        } else {
            unreachable!("deal4 of a type `dealt` refuses")
        }
    }
}

/// Asks the CPU to bring the `len` values from `x` into the L1 cache; a
/// hint that changes no value.
#[inline(always)]
fn prefetch_run<E>(x: *const E, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let bytes = len * std::mem::size_of::<E>();
        for b in (0..bytes).step_by(64) {
            // SAFETY: a prefetch reads nothing the program sees and never
            // faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(x.cast::<i8>().wrapping_add(b)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (x, len);
}

/// Asks the CPU to bring `rows` rows of `w` values of `c`, `ld` apart,
/// into the L1 cache (where `c` holds them); a hint that changes no value.
#[inline(always)]
fn prefetch_rows<E>(c: &[E], rows: usize, ld: usize, w: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let line = 64 / std::mem::size_of::<E>().max(1);
        for r in 0..rows {
            let end = (r * ld + w).min(c.len());
            // Every line of the row: one a line's values apart, and its
            // last value's.
            for x in (r * ld..end).step_by(line).chain(end.checked_sub(1)) {
                // SAFETY: a prefetch reads nothing the program sees and
                // never faults; the address lies in `c`.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(c.as_ptr().add(x).cast::<i8>()) };
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (c, rows, ld, w);
}

/// A thread's scratch, kept from one call to the next.
type Slot = std::thread::LocalKey<RefCell<Option<Box<dyn Any>>>>;

thread_local! {
    /// A part's scratch: a tile's sums and packed panels.
    static TILE: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
    /// The calling thread's scratch: the shared packed b.
    static SHARED: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Bytes the scratch a microkernel reads starts at a multiple of: a cache
/// line, so that no vector load of a panel or of the sums (whole vectors
/// from the start, every panel a whole number of vectors) straddles two
/// lines, which the allocator's 16-byte alignment of a large block would
/// make every one of them do.
const LINE: usize = 64;

/// Runs `f` on `len` values of this thread's scratch in `slot`, kept from
/// one call to the next (up to 64 MiB) so that a call neither allocates
/// nor clears it again; its values are unspecified and its first one lies
/// at a multiple of [`LINE`] bytes.
fn with_scratch<E: Elem, R>(slot: &'static Slot, len: usize, f: impl FnOnce(&mut [E]) -> R) -> R {
    let kept = slot.with(|s| s.borrow_mut().take()).and_then(|b| b.downcast::<Vec<E>>().ok());
    let mut v = kept.map_or_else(Vec::new, |b| *b);
    let spare = LINE / std::mem::size_of::<E>();
    if v.len() < len + spare {
        v.resize(len + spare, E::ZERO);
    }
    // The element sizes (4, 8, 16 bytes) divide LINE, so some first
    // `spare` elements bring the start to a line.
    let skip = v.as_ptr().align_offset(LINE);
    debug_assert!(skip < spare);
    let r = f(&mut v[skip..skip + len]);
    if v.len() * std::mem::size_of::<E>() <= 64 << 20 {
        slot.with(|s| *s.borrow_mut() = Some(Box::new(v)));
    }
    r
}

/// Nanoseconds of wall clock spent in each phase of the tiles, summed over
/// the parts: init (the sums' scratch cleared and init read), packing a,
/// packing b (or packing chunks of the shared b and waiting for the rest),
/// the microkernels, and putting the results; read by `cpu_speed`.
#[cfg(test)]
pub(crate) static PHASES: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];
/// A clock for [`lap`].
#[cfg(test)]
fn lap_start() -> std::time::Instant {
    std::time::Instant::now()
}
/// Adds the time since `t` to phase `i` and restarts `t`.
#[cfg(test)]
fn lap(i: usize, t: &mut std::time::Instant) {
    let now = std::time::Instant::now();
    PHASES[i].fetch_add((now - *t).as_nanos() as u64, Ordering::Relaxed);
    *t = now;
}
/// No clock outside the timing tests.
#[cfg(not(test))]
struct NoClock;
#[cfg(not(test))]
#[inline(always)]
fn lap_start() -> NoClock {
    NoClock
}
#[cfg(not(test))]
#[inline(always)]
fn lap(_: usize, _: &mut NoClock) {}
