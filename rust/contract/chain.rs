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
//! which stay in the acc between slices. The sizes come from the caches the
//! machine reports ([`blocking`]).

use super::elem::{reader, Elem, Micro, Read};
use super::plan::scale_reader;
use super::plan::{Plan, Side, Sink};
use crate::core::dtype::Dtype;
use crate::core::{isa, pool};
use std::any::Any;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Data cache sizes in bytes: L1, L2 and L3 of core 0.
#[derive(Clone, Copy, Debug)]
pub struct Caches {
    pub l1: usize,
    pub l2: usize,
    pub l3: usize,
}

/// The caches Linux reports for cpu0 (32 KiB, 1 MiB and 8 MiB where it
/// reports none).
pub fn caches() -> Caches {
    static C: OnceLock<Caches> = OnceLock::new();
    *C.get_or_init(|| {
        let mut c = Caches { l1: 32 << 10, l2: 1 << 20, l3: 8 << 20 };
        for i in 0..8 {
            let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
            let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
            let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size")) else { continue };
            let size = size.trim();
            let bytes = match size.strip_suffix('K') {
                Some(k) => k.parse::<usize>().ok().map(|k| k << 10),
                None => size.strip_suffix('M').and_then(|m| m.parse::<usize>().ok()).map(|m| m << 20),
            };
            let Some(bytes) = bytes.filter(|&b| b >= 4096) else { continue };
            match (level.trim(), kind.trim()) {
                ("1", "Data" | "Unified") => c.l1 = bytes,
                ("2", "Data" | "Unified") => c.l2 = bytes,
                ("3", "Data" | "Unified") => c.l3 = bytes,
                _ => {}
            }
        }
        c
    })
}

/// The tile and slice sizes of a contraction of `m` rows, `n` columns and
/// depth `k` over `nb` batches by microkernel `mk`: `(kc, mc, nc)`. A
/// slice of `kc` depths of a b panel fills about half the L1 cache, a
/// tile's packed a (`mc` rows) about half the L2, its packed b (`nc`
/// columns) about a quarter of the L3, the rows and columns cut into tiles
/// of about one size. Tiles are halved while they are fewer than twice
/// the threads, down to 8 panels a side.
fn blocking<E: Elem>(mk: Micro<E>, nb: usize, m: usize, n: usize, k: usize, threads: usize) -> (usize, usize, usize) {
    let c = caches();
    let size = std::mem::size_of::<E>();
    let (mr, nr) = (mk.mr, mk.nr);
    let kc = (c.l1 / 2 / (nr * size)).clamp(32, 1024).min(k.max(1));
    let fit = |bytes: usize, panel: usize| ((bytes / (kc * size)) / panel).max(1) * panel;
    // The extent cut into as few tiles of at most `cap` as can be, of
    // about one size, whole panels each.
    let even = |extent: usize, cap: usize, panel: usize| extent.div_ceil(extent.div_ceil(cap).max(1)).div_ceil(panel) * panel;
    let mut mc = even(m, fit(c.l2 / 2, mr), mr);
    let mut nc = even(n, fit(c.l3 / 4, nr), nr);
    let tiles = |mc: usize, nc: usize| nb * m.div_ceil(mc) * n.div_ceil(nc);
    while tiles(mc, nc) < 2 * threads {
        let (m2, n2) = (even(m, mc / 2, mr), even(n, nc / 2, nr));
        if nc >= mc && nc > 8 * nr && n2 < nc {
            nc = n2;
        } else if mc > 8 * mr && m2 < mc {
            mc = m2;
        } else {
            break;
        }
    }
    (kc, mc, nc)
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
    for (p, panel) in out.chunks_mut(w * kc).enumerate() {
        let first = o0 + p * w;
        let valid = w.min(o1 - first);
        let outer = &s.outer[first..first + valid];
        // SAFETY (`at` and every read through it): the view was checked
        // against its buffer and (bi, o, k) is one of its indices, whose
        // element lies at batch[bi] + outer[o] + depth[k]; `direct` says
        // its elements are E's values bit for bit. Nothing writes an
        // operand during the call (dst shares no memory with one where
        // results are stored in place, `Plan::scratch`).
        let at = |o: isize, d: isize| unsafe { s.mem.base.cast::<E>().offset(s.batch[bi] + o + d) };
        if direct && s.outer_step == Some(1) {
            // Runs of 8 values copied as arrays, which compile to vector
            // moves rather than a call of memcpy per depth.
            let whole = valid - valid % 8;
            for (kk, &d) in depth.iter().enumerate() {
                let src = at(outer[0], d);
                let dst = &mut panel[kk * w..][..valid];
                for (r, run) in dst[..whole].chunks_exact_mut(8).enumerate() {
                    // SAFETY: as `at`: outer[first + r] = outer[first] + r
                    // for r < valid.
                    run.copy_from_slice(&unsafe { src.add(8 * r).cast::<[E; 8]>().read_unaligned() });
                }
                for (r, x) in dst.iter_mut().enumerate().skip(whole) {
                    // SAFETY: as above.
                    *x = unsafe { src.add(r).read_unaligned() };
                }
            }
        } else if direct && s.depth_step == Some(1) {
            for (r, &o) in outer.iter().enumerate() {
                let row = at(o, depth[0]);
                for kk in 0..kc {
                    // SAFETY: as `at`: depth[k0 + kk] = depth[k0] + kk.
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
        for kk in 0..kc {
            panel[kk * w + valid..kk * w + w].fill(E::ZERO);
        }
    }
}

/// Runs the plan's products in chain order into `sink`, on the
/// microkernel of the instruction set [`isa::avx512`] chooses on the
/// calling thread.
pub fn run<E: Elem>(p: &Plan, sink: &Sink<E>) {
    let mk = E::micro(isa::avx512());
    let (mr, nr) = (mk.mr, mk.nr);
    let (kc, mc, nc) = blocking(mk, p.nb, p.m, p.n, p.k, pool::threads());
    let (ti, tj) = (p.m.div_ceil(mc), p.n.div_ceil(nc));
    let ra = (reader::<E>(p.a.dtype), scale_reader(&p.a));
    let rb = (reader::<E>(p.b.dtype), scale_reader(&p.b));
    let ri = p.init_reader::<E>();
    let tiles = p.nb * ti * tj;
    // The most rows and columns of a tile, whole panels.
    let (mp, np) = (mc.min(p.m).div_ceil(mr), nc.min(p.n).div_ceil(nr));
    let kc_max = kc.min(p.k);
    // Each part takes the next tile not yet taken until none is left (a
    // thread that another process slows takes fewer), computing it in the
    // thread's scratch: the tile's sums, rows `ldc` apart (a vector more
    // than the tile's width, so that a microkernel's rows do not share the
    // L1 cache's sets), then the packed a and b.
    let ldc_max = np * nr + nr;
    let (c_len, a_len) = (mp * mr * ldc_max, mp * mr * kc_max);
    let parts = tiles.min(pool::threads());
    let next = AtomicUsize::new(0);
    pool::run_parts(parts, |_| {
        with_scratch(c_len + a_len + np * nr * kc_max, |scratch: &mut [E]| {
            let (c, rest) = scratch.split_at_mut(c_len);
            let (pa, pb) = rest.split_at_mut(a_len);
            loop {
                let t = next.fetch_add(1, Ordering::Relaxed);
                if t >= tiles {
                    break;
                }
                let (bi, rest) = (t / (ti * tj), t % (ti * tj));
                let (i0, j0) = ((rest / tj) * mc, (rest % tj) * nc);
                let (i1, j1) = ((i0 + mc).min(p.m), (j0 + nc).min(p.n));
                let (mp, np) = ((i1 - i0).div_ceil(mr), (j1 - j0).div_ceil(nr));
                let ldc = np * nr + nr;
                let c = &mut c[..mp * mr * ldc];
                c.fill(E::ZERO);
                for i in i0..i1 {
                    p.init_row(ri, bi, i, j0, &mut c[(i - i0) * ldc..][..j1 - j0]);
                }
                let mut k0 = 0;
                while k0 < p.k {
                    let kn = kc.min(p.k - k0);
                    let (pa, pb) = (&mut pa[..mp * mr * kn], &mut pb[..np * nr * kn]);
                    pack(&p.a, ra, p.acc, bi, (i0, i1), mr, k0, kn, pa);
                    pack(&p.b, rb, p.acc, bi, (j0, j1), nr, k0, kn, pb);
                    for jp in 0..np {
                        for ip in 0..mp {
                            // The sums of the next call's tile on their way
                            // into the L1 cache while this one runs.
                            let (ni, nj) = if ip + 1 < mp { (ip + 1, jp) } else { (0, jp + 1) };
                            if nj < np {
                                prefetch_rows(&c[ni * mr * ldc + nj * nr..], mr, ldc, nr);
                            }
                            // SAFETY: the panels hold kn depths of mr and
                            // nr values; the tile lies in `c`, this part's
                            // own; `E::micro` gave a kernel of this CPU's
                            // instructions.
                            unsafe { (mk.run)(kn, pa.as_ptr().add(ip * mr * kn), pb.as_ptr().add(jp * nr * kn), c.as_mut_ptr().add(ip * mr * ldc + jp * nr), ldc) };
                        }
                    }
                    k0 += kn;
                }
                for i in i0..i1 {
                    sink.put(bi, i, j0, &c[(i - i0) * ldc..][..j1 - j0]);
                }
            }
        })
    });
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

/// Runs `f` on `len` values of scratch of this thread's, kept from one
/// call to the next (up to 64 MiB) so that a call neither allocates nor
/// clears it again; its values are unspecified.
fn with_scratch<E: Elem, R>(len: usize, f: impl FnOnce(&mut [E]) -> R) -> R {
    thread_local! {
        static SCRATCH: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
    }
    let kept = SCRATCH.with(|s| s.borrow_mut().take()).and_then(|b| b.downcast::<Vec<E>>().ok());
    let mut v = kept.map_or_else(Vec::new, |b| *b);
    if v.len() < len {
        v.resize(len, E::ZERO);
    }
    let r = f(&mut v[..len]);
    if v.len() * std::mem::size_of::<E>() <= 64 << 20 {
        SCRATCH.with(|s| *s.borrow_mut() = Some(Box::new(v)));
    }
    r
}
