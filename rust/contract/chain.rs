//! Chain order by packed panels: each output's sum starts from init or +0
//! and takes its products one fused multiply-add at a time in increasing
//! depth, so that the blocking (which depths, rows and columns go
//! together, which thread computes a tile) never changes a bit.
//!
//! The outputs are cut into tiles of `mc` rows and `nc` columns, each
//! computed whole on one thread. A tile runs the depth in slices of `kc`:
//! each slice packs its rows of a into panels of [`Elem::MR`] rows and its
//! columns of b into panels of [`Elem::NR`], every element cast into the
//! acc, and the microkernel runs each pair of panels into the tile's sums,
//! which stay in the acc between slices. The sizes come from the caches the
//! machine reports: a b panel of a slice fills about half the L1 cache,
//! the packed a and b of a slice about half the L2 each.

use super::elem::{reader, Elem, Read};
use super::plan::scale_reader;
use super::plan::{Plan, Side, Sink};
use crate::core::dtype::Dtype;
use crate::core::pool;
use std::sync::OnceLock;

/// Data cache sizes in bytes: L1 and L2 of core 0.
#[derive(Clone, Copy, Debug)]
pub struct Caches {
    pub l1: usize,
    pub l2: usize,
}

/// The caches Linux reports for cpu0 (32 KiB and 1 MiB where it reports
/// none).
pub fn caches() -> Caches {
    static C: OnceLock<Caches> = OnceLock::new();
    *C.get_or_init(|| {
        let mut c = Caches { l1: 32 << 10, l2: 1 << 20 };
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
                _ => {}
            }
        }
        c
    })
}

/// The tile and slice sizes of a contraction of `m` rows, `n` columns and
/// depth `k` over `nb` batches: `(kc, mc, nc)`. Tiles are halved while
/// they are fewer than twice the threads, down to 8 panels a side.
fn blocking<E: Elem>(nb: usize, m: usize, n: usize, k: usize, threads: usize) -> (usize, usize, usize) {
    let c = caches();
    let size = std::mem::size_of::<E>();
    let kc = (c.l1 / 2 / (E::NR * size)).clamp(32, 1024).min(k.max(1));
    let fit = |panel: usize| ((c.l2 / 2 / (kc * size)) / panel).max(1) * panel;
    let mut mc = fit(E::MR).min(m.div_ceil(E::MR) * E::MR);
    let mut nc = fit(E::NR).min(n.div_ceil(E::NR) * E::NR);
    let tiles = |mc: usize, nc: usize| nb * m.div_ceil(mc) * n.div_ceil(nc);
    while tiles(mc, nc) < 2 * threads {
        if nc >= mc && nc > 8 * E::NR {
            nc = (nc / 2).div_ceil(E::NR) * E::NR;
        } else if mc > 8 * E::MR {
            mc = (mc / 2).div_ceil(E::MR) * E::MR;
        } else {
            break;
        }
    }
    (kc, mc, nc)
}

/// Packs outer indices `o0..o1` of `s` at batch `bi`, depths
/// `k0..k0 + kc`, into panels of `w` indices: panel p holds, depth after
/// depth, the `w` values of indices `o0 + p w ..`, +0 past `o1`. Memory is
/// read along whichever of the two steps is the shorter, so that a panel of
/// b in C order reads rows of `w` neighbours rather than `w` columns a row
/// apart each.
#[allow(clippy::too_many_arguments)]
fn pack<E: Elem>(s: &Side, (read, sread): (Read<E>, Read<E>), acc: Dtype, bi: usize, (o0, o1): (usize, usize), w: usize, k0: usize, kc: usize, out: &mut [E]) {
    let in_place = s.in_place::<E>(acc);
    let get = |o: usize, kk: usize| s.get(read, sread, acc, in_place, (bi, o, k0 + kk));
    let along_depth = match (s.depth_step, s.outer_step) {
        (Some(d), Some(o)) => d.abs() <= o.abs(),
        _ => true,
    };
    for (p, panel) in out.chunks_mut(w * kc).enumerate() {
        let first = o0 + p * w;
        let valid = w.min(o1 - first);
        if along_depth {
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

/// Runs the plan's products in chain order into `sink`.
pub fn run<E: Elem>(p: &Plan, sink: &Sink<E>) {
    let (kc, mc, nc) = blocking::<E>(p.nb, p.m, p.n, p.k, pool::threads());
    let (ti, tj) = (p.m.div_ceil(mc), p.n.div_ceil(nc));
    let ra = (reader::<E>(p.a.dtype), scale_reader(&p.a));
    let rb = (reader::<E>(p.b.dtype), scale_reader(&p.b));
    let ri = p.init_reader::<E>();
    pool::run_parts(p.nb * ti * tj, |t| {
        let (bi, rest) = (t / (ti * tj), t % (ti * tj));
        let (i0, j0) = ((rest / tj) * mc, (rest % tj) * nc);
        let (i1, j1) = ((i0 + mc).min(p.m), (j0 + nc).min(p.n));
        let (mp, np) = ((i1 - i0).div_ceil(E::MR), (j1 - j0).div_ceil(E::NR));
        let ldc = np * E::NR;
        let mut c = vec![E::ZERO; mp * E::MR * ldc];
        for i in i0..i1 {
            p.init_row(ri, bi, i, j0, &mut c[(i - i0) * ldc..][..j1 - j0]);
        }
        let kc_here = kc.min(p.k);
        let mut pa = vec![E::ZERO; mp * E::MR * kc_here];
        let mut pb = vec![E::ZERO; np * E::NR * kc_here];
        let mut k0 = 0;
        while k0 < p.k {
            let kn = kc.min(p.k - k0);
            let (pa, pb) = (&mut pa[..mp * E::MR * kn], &mut pb[..np * E::NR * kn]);
            pack(&p.a, ra, p.acc, bi, (i0, i1), E::MR, k0, kn, pa);
            pack(&p.b, rb, p.acc, bi, (j0, j1), E::NR, k0, kn, pb);
            for jp in 0..np {
                for ip in 0..mp {
                    // SAFETY: the panels hold kn depths of MR and NR values;
                    // the tile lies in `c`, this thread's own.
                    unsafe {
                        E::kernel(
                            kn,
                            pa.as_ptr().add(ip * E::MR * kn),
                            pb.as_ptr().add(jp * E::NR * kn),
                            c.as_mut_ptr().add(ip * E::MR * ldc + jp * E::NR),
                            ldc,
                        )
                    };
                }
            }
            k0 += kn;
        }
        for i in i0..i1 {
            sink.put(bi, i, j0, &c[(i - i0) * ldc..][..j1 - j0]);
        }
    });
}
