//! Lane order: each output's terms, numbered as the Contraction section
//! numbers them, go into blocks of 1024 (512 complex products), each block
//! summed by [`Elem::lane_block`], the blocks by the binary tree whose left
//! part holds the largest power of two of blocks below their count; init
//! is added last.
//!
//! Outputs are split among threads by runs of a row (of a column, four
//! rows at a time, where there is one column); where there are fewer
//! outputs than threads, each output's blocks' tree splits instead, whole
//! subtrees on rayon's threads (reduce's tree). Neither changes a bit.

use super::elem::{reader, Elem, Read};
use super::plan::{scale_reader, Plan, Side, Sink};
use crate::core::dtype::Dtype;
use crate::core::pool;

/// Terms in a block.
const BLOCK: usize = 1024;

/// The blocks' tree over blocks `first..first + count` (`count >= 1`),
/// reduce's, whole subtrees on rayon's threads where `parallel`.
fn tree<E: Elem>(first: usize, count: usize, parallel: bool, leaf: &(impl Fn(usize) -> E + Sync)) -> E {
    crate::reduce::tree::tree(first, count, 1, parallel, leaf, &E::add)
}

/// Reads depths `k0..k0 + len` of outer index `o` of `s` at batch `bi`:
/// a slice of memory where its dtype is the acc's, unscaled, stepping one
/// element, aligned; else cast (and scaled) into `buf`, grown to `len`
/// where it is shorter (so that a call reading in place allocates none).
#[allow(clippy::too_many_arguments)]
fn terms<'a, E: Elem>(s: &'a Side, (read, sread): (Read<E>, Read<E>), acc: Dtype, bi: usize, o: usize, k0: usize, len: usize, buf: &'a mut Vec<E>) -> &'a [E] {
    let in_place = s.in_place::<E>(acc);
    if in_place && s.scale.is_none() && (s.depth_step == Some(1) || len == 1) {
        // SAFETY: the view was checked against its buffer, and its elements
        // at + depth[k0 + t] = start + t, t < len, are indices of it.
        let p = unsafe { s.mem.base.cast::<E>().offset(s.batch[bi] + s.outer[o] + s.depth[k0]) };
        if p.is_aligned() {
            // SAFETY: as above, aligned; nothing writes operands during the
            // call but dst, which shares no memory with them where results
            // are stored in place (`Plan::scratch`).
            return unsafe { std::slice::from_raw_parts(p, len) };
        }
    }
    if buf.len() < len {
        buf.resize(len, E::ZERO);
    }
    for (t, x) in buf[..len].iter_mut().enumerate() {
        *x = s.get(read, sread, acc, in_place, (bi, o, k0 + t));
    }
    &buf[..len]
}

/// The readers of a and b.
struct Readers<E> {
    a: (Read<E>, Read<E>),
    b: (Read<E>, Read<E>),
}

/// The lane-order sum of block `blk` of output (bi, i, j), init aside,
/// its terms cast into `bufs` where they cannot be read in place.
fn block<E: Elem>(p: &Plan, r: &Readers<E>, (bi, i, j): (usize, usize, usize), blk: usize, bufs: &mut [Vec<E>; 2]) -> E {
    let per = BLOCK / E::TERMS;
    let k0 = blk * per;
    let len = per.min(p.k - k0);
    let [ba, bb] = bufs;
    let x = terms(&p.a, r.a, p.acc, bi, i, k0, len, ba);
    let y = terms(&p.b, r.b, p.acc, bi, j, k0, len, bb);
    E::lane_block(x, y)
}

/// Scratch for one block's terms of a and of b, grown where first needed.
fn buffers<E: Elem>() -> [Vec<E>; 2] {
    [Vec::new(), Vec::new()]
}

/// The blocks' tree over `leaves`, the blocks' sums in order: a lone
/// block's sum is the tree's.
fn tree_of<E: Elem>(leaves: &[E]) -> E {
    match leaves {
        [one] => *one,
        _ => tree(0, leaves.len(), false, &|b| leaves[b]),
    }
}

/// Runs the plan's products in lane order into `sink`.
pub fn run<E: Elem>(p: &Plan, sink: &Sink<E>) {
    let r = Readers { a: (reader::<E>(p.a.dtype), scale_reader(&p.a)), b: (reader::<E>(p.b.dtype), scale_reader(&p.b)) };
    let ri = p.init_reader::<E>();
    let blocks = p.k.div_ceil(BLOCK / E::TERMS);
    let outputs = p.nb * p.m * p.n;
    let threads = pool::threads();
    // The output's sum, then init added where there is one.
    let with_init = |sum: E, init: E| if blocks == 0 { init } else if ri.is_some() { E::add(sum, init) } else { sum };
    if outputs < threads {
        for bi in 0..p.nb {
            for i in 0..p.m {
                let mut row = vec![E::ZERO; p.n];
                p.init_row(ri, bi, i, 0, &mut row);
                for (j, v) in row.iter_mut().enumerate() {
                    let leaf = |blk| block(p, &r, (bi, i, j), blk, &mut buffers());
                    let sum = if blocks == 0 { E::ZERO } else { pool::install(|| tree(0, blocks, true, &leaf)) };
                    *v = with_init(sum, *v);
                }
                sink.put(bi, i, 0, &row);
            }
        }
        return;
    }
    // Parts of consecutive outputs (C order of dst), each at least about
    // 256K products (a thread's start costs more than fewer), at most
    // eight a thread.
    let per_part = outputs.div_ceil(8 * threads).max((1 << 18) / p.k.max(1)).max(1);
    if p.n == 1 {
        pool::run_parts(outputs.div_ceil(per_part), |t| super::chain::timed_part(|| column(p, &r, ri, sink, blocks, &with_init, (t * per_part, ((t + 1) * per_part).min(outputs)))));
        return;
    }
    pool::run_parts(outputs.div_ceil(per_part), |t| {
        let (o0, o1) = (t * per_part, ((t + 1) * per_part).min(outputs));
        let (mut bufs, mut leaves) = (buffers(), vec![E::ZERO; blocks]);
        let mut o = o0;
        while o < o1 {
            let (row, j0) = (o / p.n, o % p.n);
            let (bi, i) = (row / p.m, row % p.m);
            let j1 = p.n.min(j0 + (o1 - o));
            let mut vals = vec![E::ZERO; j1 - j0];
            p.init_row(ri, bi, i, j0, &mut vals);
            for (v, j) in vals.iter_mut().zip(j0..j1) {
                for (blk, l) in leaves.iter_mut().enumerate() {
                    *l = block(p, &r, (bi, i, j), blk, &mut bufs);
                }
                let sum = if blocks == 0 { E::ZERO } else { tree_of(&leaves) };
                *v = with_init(sum, *v);
            }
            sink.put(bi, i, j0, &vals);
            o += j1 - j0;
        }
    });
}

/// Outputs `o0..o1` of a plan of one column (a matrix times a vector),
/// a run of rows of one batch index at a time: b's terms of that batch
/// index read (or cast) once, then four rows at a time, so that each block
/// of b is read once for four rows of a ([`Elem::lane_block4`]), or eight
/// where a is larger than
/// [`streamed_past`](crate::core::caches::streamed_past) and the acc's
/// type has a streaming kernel ([`Elem::lane_block8_streaming`]); a group
/// short of its rows repeats its last. Each run's outputs are stored
/// together.
#[allow(clippy::too_many_arguments)]
fn column<E: Elem>(p: &Plan, r: &Readers<E>, ri: Option<Read<E>>, sink: &Sink<E>, blocks: usize, with_init: &impl Fn(E, E) -> E, (o0, o1): (usize, usize)) {
    let big = p.nb.saturating_mul(p.m).saturating_mul(p.k).saturating_mul(std::mem::size_of::<E>()) > crate::core::caches::streamed_past();
    if big && E::lane_block8_streaming([&[]; 8], &[]).is_some() {
        rows_by::<E, 8>(p, r, ri, sink, blocks, with_init, (o0, o1), &|x, y| E::lane_block8_streaming(x, y).expect("a streaming kernel"));
    } else {
        rows_by::<E, 4>(p, r, ri, sink, blocks, with_init, (o0, o1), &E::lane_block4);
    }
}

/// [`column`]'s work, `G` rows at a time by `sums`, the block sums of
/// `G` rows of products sharing `b`.
#[allow(clippy::too_many_arguments)]
fn rows_by<E: Elem, const G: usize>(p: &Plan, r: &Readers<E>, ri: Option<Read<E>>, sink: &Sink<E>, blocks: usize, with_init: &impl Fn(E, E) -> E, (o0, o1): (usize, usize), block_sums: &impl Fn([&[E]; G], &[E]) -> [E; G]) {
    let per = BLOCK / E::TERMS;
    let mut xb: [Vec<E>; G] = std::array::from_fn(|_| Vec::new());
    let mut bb = Vec::new();
    let mut leaves: [Vec<E>; G] = std::array::from_fn(|_| vec![E::ZERO; blocks]);
    let mut sums = vec![E::ZERO; o1 - o0];
    let mut o = o0;
    while o < o1 {
        let (bi, i0) = (o / p.m, o % p.m);
        let run = (p.m - i0).min(o1 - o);
        let y = if p.k == 0 { &[][..] } else { terms(&p.b, r.b, p.acc, bi, 0, 0, p.k, &mut bb) };
        let out = &mut sums[o - o0..][..run];
        for (g, group) in out.chunks_mut(G).enumerate() {
            let i = i0 + G * g;
            let rows: [usize; G] = std::array::from_fn(|q| i + q.min(group.len() - 1));
            for blk in 0..blocks {
                let (k0, len) = (blk * per, per.min(p.k - blk * per));
                let mut x = xb.iter_mut().zip(rows).map(|(buf, row)| terms(&p.a, r.a, p.acc, bi, row, k0, len, buf));
                let x: [&[E]; G] = std::array::from_fn(|_| x.next().expect("a row a buffer"));
                for (l, s) in leaves.iter_mut().zip(block_sums(x, &y[k0..k0 + len])) {
                    l[blk] = s;
                }
            }
            for (q, (l, v)) in leaves.iter().zip(group.iter_mut()).enumerate() {
                let mut init = [E::ZERO];
                p.init_row(ri, bi, i + q, 0, &mut init);
                let sum = if blocks == 0 { E::ZERO } else { tree_of(l) };
                *v = with_init(sum, init[0]);
            }
        }
        sink.put_column(bi, i0, out);
        o += run;
    }
}
