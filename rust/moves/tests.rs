//! Tests of the moves against slow references that take one element at a
//! time, on arrays of every dtype laid out awkwardly (permuted axes,
//! negative strides, gaps, offsets, broadcast sources, empty extents),
//! under 1 and 3 threads. Each checks the destination's whole buffer, so a
//! write outside the destination's elements, a neighbour's bits included,
//! fails it.

use super::assemble::{self, Piece};
use super::fold;
use super::gather;
use super::gather_ranges;
use super::scatter::{self, Combine, Host, Strategy};
use crate::core::call::Call;
use crate::loops::column::Col;
use crate::core::dtype::Dtype;
use crate::core::layout::{Layout, Memory, View};
use crate::core::narrow;
use crate::loops::ops;
use crate::core::pool;
use crate::loops::map;
use crate::loops::pad::{Pad, Window};
use crate::loops::prog::{Binary, Node, Prog};
use crate::core::test_rng::splitmix;

/// The tests' random numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        splitmix(&mut self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 0
    }
}

/// An element's bits at element index `i`, read byte by byte.
fn get(m: Memory, d: Dtype, i: usize) -> u128 {
    let w = d.bits();
    let bit = i * w;
    let mut v = 0u128;
    for k in 0..w.div_ceil(8) {
        // SAFETY: the tests index only elements of their own buffers.
        let b = unsafe { *m.base.add(bit / 8 + k) } as u128;
        v |= b << (8 * k);
    }
    (v >> (bit % 8)) & mask(d)
}

fn mask(d: Dtype) -> u128 {
    if d.bits() == 128 { u128::MAX } else { (1u128 << d.bits()) - 1 }
}

/// Writes an element's bits at element index `i`, byte by byte.
fn set(m: Memory, d: Dtype, i: usize, v: u128) {
    let w = d.bits();
    let bit = i * w;
    let (shift, span) = (bit % 8, (w + bit % 8).div_ceil(8));
    let mut word = 0u128;
    for k in 0..span {
        // SAFETY: as in `get`.
        word |= (unsafe { *m.base.add(bit / 8 + k) } as u128) << (8 * k);
    }
    let keep = !(mask(d) << shift);
    word = (word & keep) | ((v & mask(d)) << shift);
    for k in 0..span {
        // SAFETY: as in `get`.
        unsafe { *m.base.add(bit / 8 + k) = (word >> (8 * k)) as u8 };
    }
}

/// An array: its buffer and its layout over it.
struct Arr {
    buf: Vec<u64>,
    layout: Layout,
}

/// Special values of a float dtype, as bits: zeros of both signs, ones,
/// infinities, quiet and signalling NaNs, the least subnormal.
fn special(d: Dtype, rng: &mut Rng) -> u128 {
    let f32s: [u32; 9] = [0, 0x8000_0000, 0x3f80_0000, 0xbf80_0000, 0x7f80_0000, 0xff80_0000, 0x7fc0_0001, 0x7f80_0001, 1];
    let f64s: [u64; 9] = [
        0,
        1 << 63,
        0x3ff0_0000_0000_0000,
        0xbff0_0000_0000_0000,
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7ff8_0000_0000_0001,
        0x7ff0_0000_0000_0001,
        1,
    ];
    let k = rng.below(9);
    match d {
        Dtype::Float32 => f32s[k] as u128,
        Dtype::Float64 => f64s[k] as u128,
        Dtype::Complex64 => (f32s[k] as u128) | (f32s[rng.below(9)] as u128) << 32,
        Dtype::Complex128 => (f64s[k] as u128) | (f64s[rng.below(9)] as u128) << 64,
        _ => {
            let x = [0.0f32, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 0.5, 1e-7][k];
            narrow::encode_f32(d, x).unwrap() as u128
        }
    }
}

impl Arr {
    /// An array of `shape` in a buffer of random bytes, laid out at random:
    /// axes in a random memory order, some reversed, some with gaps, an
    /// offset and, for a source (`broadcast`), maybe an axis of stride 0.
    fn new(d: Dtype, shape: &[usize], broadcast: bool, rng: &mut Rng) -> Arr {
        let r = shape.len();
        let mut order: Vec<usize> = (0..r).collect();
        for i in (1..r).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let mut strides = vec![0isize; r];
        let mut step = 1usize;
        for &a in order.iter().rev() {
            strides[a] = step as isize;
            step *= shape[a].max(1) * if rng.below(4) == 0 { 2 } else { 1 };
        }
        if broadcast && r > 0 && rng.coin() {
            strides[rng.below(r)] = 0;
        }
        let mut offset = rng.below(5);
        for a in 0..r {
            if rng.coin() && shape[a] > 0 {
                offset += (shape[a] - 1) * strides[a] as usize;
                strides[a] = -strides[a];
            }
        }
        let layout = Layout { dtype: d, shape: shape.to_vec(), strides, offset };
        let extent = layout.span().unwrap().map_or(offset + 1, |(_, hi)| hi as usize + 1) + rng.below(3);
        let bytes = (extent * d.bits()).div_ceil(8) + 1;
        let mut a = Arr { buf: (0..bytes.div_ceil(8)).map(|_| rng.next()).collect(), layout };
        if d.is_float() || d.is_complex() {
            for i in 0..extent {
                if rng.below(3) == 0 {
                    let v = special(d, rng);
                    set(a.memory(), d, i, v);
                }
            }
        }
        a
    }

    fn memory(&mut self) -> Memory {
        Memory { base: self.buf.as_mut_ptr() as *mut u8, bytes: self.buf.len() * 8 }
    }

    fn view(&mut self) -> View {
        View::new(self.layout.clone(), self.memory()).unwrap()
    }

    /// The element index of a C-order position.
    fn index(&self, pos: usize) -> usize {
        let l = &self.layout;
        let mut rest = pos;
        let mut at = l.offset as isize;
        for a in (0..l.shape.len()).rev() {
            at += (rest % l.shape[a]) as isize * l.strides[a];
            rest /= l.shape[a];
        }
        at as usize
    }

    /// The array laid out by `layout` instead, its buffer grown with
    /// random words to hold it.
    fn relayout(&mut self, layout: Layout, rng: &mut Rng) {
        let extent = layout.span().unwrap().map_or(layout.offset + 1, |(_, hi)| hi as usize + 1);
        let words = ((extent * layout.dtype.bits()).div_ceil(8) + 1).div_ceil(8);
        while self.buf.len() < words {
            self.buf.push(rng.next());
        }
        self.layout = layout;
    }

    /// The elements' bits in C order.
    fn values(&mut self) -> Vec<u128> {
        let m = self.memory();
        (0..self.layout.size()).map(|p| get(m, self.layout.dtype, self.index(p))).collect()
    }

    /// The buffer with the elements at C-order positions replaced by `vals`.
    fn with(&mut self, vals: &[u128]) -> Vec<u64> {
        let mut copy = Arr { buf: self.buf.clone(), layout: self.layout.clone() };
        let m = copy.memory();
        for (p, &v) in vals.iter().enumerate() {
            set(m, copy.layout.dtype, copy.index(p), v);
        }
        copy.buf
    }

    /// An int64 array of `shape` holding `vals`.
    fn positions(shape: &[usize], vals: &[i64], rng: &mut Rng) -> Arr {
        let mut a = Arr::new(Dtype::Int64, shape, false, rng);
        let b = a.with(&vals.iter().map(|&v| v as u64 as u128).collect::<Vec<_>>());
        a.buf = b;
        a
    }
}

/// The coordinates of C-order position `p` of `shape`.
fn coords(shape: &[usize], mut p: usize) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for a in (0..shape.len()).rev() {
        c[a] = p % shape[a];
        p /= shape[a];
    }
    c
}

/// The C-order position of `c` in `shape`.
fn position(shape: &[usize], c: &[usize]) -> usize {
    c.iter().zip(shape).fold(0, |a, (&i, &n)| a * n + i)
}

fn random_shape(rank: usize, rng: &mut Rng) -> Vec<usize> {
    (0..rank).map(|_| if rng.below(8) == 0 { 0 } else { 1 + rng.below(4) }).collect()
}

/// A position along an axis of `n`: mostly inside, some just outside
/// either end, some at int64's extremes.
fn random_position(n: usize, rng: &mut Rng) -> i64 {
    match rng.below(10) {
        0 => -1 - rng.below(3) as i64,
        1 => n as i64 + rng.below(3) as i64,
        2 => [i64::MIN, i64::MAX, i64::MIN + 1][rng.below(3)],
        _ => rng.below(n) as i64,
    }
}

#[test]
fn gather_matches_the_reference() {
    let mut rng = Rng(1);
    for threads in [1, 3] {
        pool::set_threads(threads).unwrap();
        for d in Dtype::ALL {
            for rank in 1..=4 {
                for _ in 0..6 {
                    let shape = random_shape(rank, &mut rng);
                    let axis = rng.below(rank);
                    let mut xs = shape.clone();
                    xs[axis] = rng.below(5);
                    let size: usize = shape.iter().product();
                    let pos: Vec<i64> = (0..size).map(|_| random_position(xs[axis], &mut rng)).collect();
                    let mut idx = Arr::positions(&shape, &pos, &mut rng);
                    let mut x = Arr::new(d, &xs, true, &mut rng);
                    let mut dst = Arr::new(d, &shape, false, &mut rng);
                    let xv = x.values();
                    let want: Vec<u128> = (0..size)
                        .map(|p| {
                            let mut c = coords(&shape, p);
                            match usize::try_from(pos[p]) {
                                Ok(q) if q < xs[axis] => {
                                    c[axis] = q;
                                    xv[position(&xs, &c)]
                                }
                                _ => 0,
                            }
                        })
                        .collect();
                    let expect = dst.with(&want);
                    // Sources on both sides of the cache: prefetched or not.
                    let cache = if rng.coin() { 0 } else { usize::MAX };
                    gather::plan(axis, dst.view(), idx.view(), x.view()).unwrap().on_cache(cache).run().unwrap();
                    assert_eq!(dst.buf, expect, "{} {shape:?} axis {axis} from {xs:?} cache {cache}", d.name());
                }
            }
        }
    }
}

#[test]
fn contiguous_take_matches_the_reference_on_1_and_3_threads() {
    // The loop compiled for a destination and positions of step 1 out of a
    // vector (take): long enough to prefetch and to split among threads,
    // positions inside and outside the source (negative, past its end,
    // int64 extremes), the source prefetched or not; then a reversed
    // source and a destination at an offset, which take the general loop.
    let mut rng = Rng(15);
    for d in Dtype::ALL {
        let (n, m) = (3000, 70_000);
        let mut x = Arr::new(d, &[n], false, &mut rng);
        x.relayout(Layout::contiguous(d, &[n]), &mut rng);
        let pos: Vec<i64> = (0..m).map(|_| random_position(n, &mut rng)).collect();
        let mut idx = Arr { buf: pos.iter().map(|&p| p as u64).collect(), layout: Layout::contiguous(Dtype::Int64, &[m]) };
        for flip in [false, true] {
            if flip {
                x.relayout(Layout { strides: vec![-1], offset: n - 1, ..Layout::contiguous(d, &[n]) }, &mut rng);
            }
            let xv = x.values();
            let want: Vec<u128> = pos.iter().map(|&p| usize::try_from(p).ok().filter(|&q| q < n).map_or(0, |q| xv[q])).collect();
            let mut outs = Vec::new();
            for threads in [1, 3] {
                for cache in [0, usize::MAX] {
                    pool::set_threads(threads).unwrap();
                    let mut dst = Arr::new(d, &[m], false, &mut rng);
                    dst.relayout(Layout { offset: if flip { 1 } else { 0 }, ..Layout::contiguous(d, &[m]) }, &mut rng);
                    let expect = dst.with(&want);
                    gather::plan(0, dst.view(), idx.view(), x.view()).unwrap().on_cache(cache).run().unwrap();
                    assert!(dst.buf == expect, "{} flip {flip} threads {threads} cache {cache}", d.name());
                    outs.push(dst.values());
                }
            }
            assert!(outs.windows(2).all(|w| w[0] == w[1]), "{}: threads or caches differ", d.name());
        }
    }
}

#[test]
fn gather_copies_whole_rows_where_one_position_serves_a_run() {
    // The positions step 0 along the last axis: rows of x copied whole.
    let mut rng = Rng(2);
    for d in [Dtype::Float32, Dtype::Int4, Dtype::Complex128] {
        let xs = [7, 33];
        let mut x = Arr::new(d, &xs, false, &mut rng);
        x.layout = Layout::contiguous(d, &xs);
        let pos: Vec<i64> = vec![3, -1, 6, 7, 0];
        let mut idx = Arr::positions(&[5], &pos, &mut rng);
        idx.layout.shape.push(33);
        idx.layout.strides.push(0);
        let mut dst = Arr::new(d, &[5, 33], false, &mut rng);
        dst.layout = Layout::contiguous(d, &[5, 33]);
        let xv = x.values();
        let want: Vec<u128> = (0..5 * 33)
            .map(|p| match pos[p / 33] {
                q @ 0..=6 => xv[q as usize * 33 + p % 33],
                _ => 0,
            })
            .collect();
        let expect = dst.with(&want);
        gather::plan(0, dst.view(), idx.view(), x.view()).unwrap().run().unwrap();
        assert_eq!(dst.buf, expect, "{}", d.name());
    }
}

#[test]
fn long_copies_stream_into_a_destination_past_the_cache() {
    // Destinations larger than the host's largest cache: whole rows of a
    // gather, the runs of gather_ranges and the pieces of an assembly
    // copied by streaming stores, on 1 and 3 threads, at an odd offset.
    let mut rng = Rng(14);
    let d = Dtype::Float32;
    let n = crate::core::caches::largest() / 4 + 1000;
    let rows = n / 16 + 1;
    for threads in [1, 3] {
        pool::set_threads(threads).unwrap();
        let mut x = Arr { buf: (0..500 * 32).map(|_| rng.next()).collect(), layout: Layout::contiguous(d, &[1000, 16]) };
        let pos: Vec<i64> = (0..rows).map(|_| rng.below(1001) as i64).collect();
        let mut idx = Arr::positions(&[rows], &pos, &mut rng);
        idx.layout.shape.push(16);
        idx.layout.strides.push(0);
        let mut dst = Arr { buf: vec![0; rows * 8 + 1], layout: Layout { offset: 1, ..Layout::contiguous(d, &[rows, 16]) } };
        gather::plan(0, dst.view(), idx.view(), x.view()).unwrap().run().unwrap();
        let xv = x.values();
        let want: Vec<u128> = (0..rows * 16).map(|p| if pos[p / 16] < 1000 { xv[pos[p / 16] as usize * 16 + p % 16] } else { 0 }).collect();
        assert!(dst.values() == want, "gather of rows on {threads} threads");
        // gather_ranges: two runs of x as a vector, the whole destination.
        let mut xs = Arr { buf: (0..n / 2 + 1).map(|_| rng.next()).collect(), layout: Layout::contiguous(d, &[n]) };
        let (mut st, mut en) = (Arr::positions(&[2], &[3, 0], &mut rng), Arr::positions(&[2], &[(n - 10) as i64, n as i64], &mut rng));
        let mut out = Arr { buf: vec![0; n / 2 + 2], layout: Layout { offset: 3, ..Layout::contiguous(d, &[n]) } };
        gather_ranges::plan(out.view(), st.view(), en.view(), xs.view()).unwrap().run().unwrap();
        let v = xs.values();
        let want: Vec<u128> = (0..n).map(|p| if p < n - 10 { v[p + 3] } else { v[p - (n - 10)] }).collect();
        assert!(out.values() == want, "gather_ranges on {threads} threads");
        // assemble: two pieces, the second over part of the first.
        let mut out = Arr { buf: vec![0; n / 2 + 2], layout: Layout { offset: 1, ..Layout::contiguous(d, &[n]) } };
        let mut b = Arr { buf: (0..n / 4 + 1).map(|_| rng.next()).collect(), layout: Layout::contiguous(d, &[n / 2]) };
        let pieces = vec![
            assemble::Piece { region: vec![(0, n)], view: xs.view() },
            assemble::Piece { region: vec![(n / 4, n / 4 + n / 2)], view: b.view() },
        ];
        assemble::plan(0, out.view(), pieces).unwrap().run().unwrap();
        let bv = b.values();
        let want: Vec<u128> = (0..n).map(|p| if (n / 4..n / 4 + n / 2).contains(&p) { bv[p - n / 4] } else { v[p] }).collect();
        assert!(out.values() == want, "assemble on {threads} threads");
    }
}

/// The reference's combination of a target `x` with its updates `us`, in
/// order: Set the last; Add, Max and Min by the loops' kinds one element
/// at a time (`ops::binary`), a narrow float's Add in float32 rounded once.
fn combine(c: Combine, d: Dtype, x: u128, us: &[u128]) -> u128 {
    let Some(&last) = us.last() else { return x };
    if c == Combine::Set {
        return last;
    }
    if c == Combine::Add && d.is_narrow_float() {
        let f = |b: u128| narrow::decode(d, b as u16).unwrap();
        let s = us.iter().fold(f(x), |s, &u| s + f(u));
        return narrow::encode_f32(d, s).unwrap() as u128;
    }
    let k = match c {
        Combine::Add => Binary::Add,
        Combine::Max => Binary::Maximum,
        _ => Binary::Minimum,
    };
    us.iter().fold(x, |acc, &u| binary(k, d, acc, u))
}

/// The loops' kind `k` of two elements of `d`, one element at a time
/// (`ops::binary`), its result rounded into `d`.
fn binary(k: Binary, d: Dtype, x: u128, y: u128) -> u128 {
    let mut buf = [0u64; 4];
    let m = Memory { base: buf.as_mut_ptr() as *mut u8, bytes: 32 };
    set(m, d, 0, x);
    set(m, d, 1, y);
    let (mut a, mut b, mut o) = (Col::new(d, 1), Col::new(d, 1), Col::new(d, 1));
    // SAFETY: elements 0 to 2 lie in the 32 bytes of `buf`.
    unsafe {
        crate::loops::memio::load(m, d, 0, 1, 1, &mut a.as_mut());
        crate::loops::memio::load(m, d, 1, 1, 1, &mut b.as_mut());
        ops::binary(k, d, &a.as_ref(), &b.as_ref(), &mut o.as_mut(), 1, ops::Store::Cached);
        o.as_mut().settle(d, 1);
        crate::loops::memio::store(m, d, 2, 1, 1, &o.as_ref());
    }
    get(m, d, 2)
}

/// A scatter's case: the operands, the reference's result, and the
/// destination's buffer as the reference leaves it.
struct Case {
    axis: usize,
    dst: Arr,
    into: Option<Arr>,
    idx: Arr,
    upd: Arr,
    expect: Vec<u64>,
}

#[allow(clippy::too_many_arguments)]
fn scatter_case(c: Combine, unique: bool, d: Dtype, shape: &[usize], axis: usize, m: usize, in_place: bool, rng: &mut Rng) -> Case {
    scatter_case_of(c, unique, d, shape, axis, m, in_place, false, rng)
}

/// Bits of a finite value of a float or complex dtype (random bits of
/// another), of magnitude up to
/// about 1000, with a fraction to round away.
fn finite(d: Dtype, rng: &mut Rng) -> u128 {
    if !d.is_float() && !d.is_complex() {
        return rng.next() as u128 & mask(d);
    }
    let mut x = || (rng.next() % 2_000_000) as f32 / 1000.0 - 1000.0;
    match d {
        Dtype::Float32 => x().to_bits() as u128,
        Dtype::Float64 => (x() as f64 * 1.000_000_1).to_bits() as u128,
        Dtype::Complex64 => x().to_bits() as u128 | (x().to_bits() as u128) << 32,
        Dtype::Complex128 => x().to_bits() as u128 | ((x() as f64).to_bits() as u128) << 64,
        _ => narrow::encode_f32(d, x() / 200.0).unwrap() as u128,
    }
}

/// As [`scatter_case`], the updates and into all finite where `finite`
/// (a float or complex dtype), so that a sum in another order shows.
#[allow(clippy::too_many_arguments)]
fn scatter_case_of(
    c: Combine,
    unique: bool,
    d: Dtype,
    shape: &[usize],
    axis: usize,
    m: usize,
    in_place: bool,
    finite_values: bool,
    rng: &mut Rng,
) -> Case {
    let mut us = shape.to_vec();
    us[axis] = m;
    let t = shape[axis];
    let size: usize = us.iter().product();
    let slices = size / m.max(1);
    let mut pos = vec![0i64; size];
    for s in 0..slices {
        // A unique slice's positions are distinct: a shuffle of 0..m, those
        // past t outside the axis.
        let mut perm: Vec<i64> = (0..m as i64).collect();
        for i in (1..m).rev() {
            perm.swap(i, rng.below(i + 1));
        }
        let off_shape: Vec<usize> = us.iter().enumerate().filter(|&(a, _)| a != axis).map(|(_, &n)| n).collect();
        let off = coords(&off_shape, s);
        let mut c = vec![0; us.len()];
        for (k, &q) in perm.iter().enumerate() {
            let mut it = off.iter();
            for (a, x) in c.iter_mut().enumerate() {
                *x = if a == axis { k } else { *it.next().unwrap() };
            }
            pos[position(&us, &c)] = if unique { q } else { random_position(t, rng) };
        }
    }
    let idx = Arr::positions(&us, &pos, rng);
    let mut upd = Arr::new(d, &us, true, rng);
    let mut dst = Arr::new(d, shape, false, rng);
    let mut into = (!in_place).then(|| Arr::new(d, shape, true, rng));
    if finite_values {
        for a in [Some(&mut upd), into.as_mut(), Some(&mut dst)].into_iter().flatten() {
            let vals: Vec<u128> = (0..a.layout.size()).map(|_| finite(d, rng)).collect();
            a.buf = a.with(&vals);
        }
    }
    let xv = into.as_mut().unwrap_or(&mut dst).values();
    let uv = upd.values();
    let mut lists: Vec<Vec<u128>> = vec![Vec::new(); xv.len()];
    for p in 0..size {
        if let Ok(q) = usize::try_from(pos[p]) {
            if q < t {
                let mut c = coords(&us, p);
                c[axis] = q;
                lists[position(shape, &c)].push(uv[p]);
            }
        }
    }
    let want: Vec<u128> = xv.iter().zip(&lists).map(|(&x, l)| combine(c, d, x, l)).collect();
    let expect = dst.with(&want);
    Case { axis, dst, into, idx, upd, expect }
}

/// Whether two elements of `d` are equal, a NaN equal to any NaN (a
/// complex number part by part): the contract leaves a computed NaN's sign
/// and payload unspecified.
fn same_value(d: Dtype, a: u128, b: u128) -> bool {
    let nan = |d: Dtype, x: u128| match d {
        Dtype::Float32 => f32::from_bits(x as u32).is_nan(),
        Dtype::Float64 => f64::from_bits(x as u64).is_nan(),
        _ => narrow::decode(d, x as u16).is_some_and(f32::is_nan),
    };
    match d {
        Dtype::Complex64 | Dtype::Complex128 => {
            let (p, w) = (d.part(), d.bits() / 2);
            let m = (1u128 << w) - 1;
            same_value(p, a & m, b & m) && same_value(p, a >> w, b >> w)
        }
        _ if d.is_float() => a == b || (nan(d, a) && nan(d, b)),
        _ => a == b,
    }
}

/// Checks a scatter's destination against the reference's buffer: its
/// elements equal as [`same_value`] says (bit for bit under Set), every
/// other bit of the buffer unchanged.
fn check_scatter(c: Combine, k: &mut Case, what: &str) {
    check_values(c == Combine::Set, &mut k.dst, &k.expect, what)
}

/// Checks a destination against the reference's buffer `expect`: its
/// elements equal bit for bit (`bits`) or as [`same_value`] says, every
/// other bit of the buffer unchanged.
fn check_values(bits: bool, dst: &mut Arr, expect: &[u64], what: &str) {
    let d = dst.layout.dtype;
    let mut want = Arr { buf: expect.to_vec(), layout: dst.layout.clone() };
    let (got, wanted) = (dst.values(), want.values());
    for (p, (&g, &w)) in got.iter().zip(&wanted).enumerate() {
        let ok = if bits { g == w } else { same_value(d, g, w) };
        assert!(ok, "{what}: element {p} is {g:#x}, not {w:#x}");
    }
    assert_eq!(dst.with(&wanted), expect, "{what}: bits outside the destination's elements");
}

fn run_scatter(host: Host, c: Combine, unique: bool, k: &mut Case) -> Strategy {
    let into = match &mut k.into {
        Some(a) => a.view(),
        None => k.dst.view(),
    };
    let plan = scatter::plan(c, unique, k.axis, k.dst.view(), into, k.idx.view(), k.upd.view()).unwrap().on(host);
    let s = plan.strategy();
    plan.run().unwrap();
    s
}

const COMBINES: [Combine; 4] = [Combine::Set, Combine::Add, Combine::Max, Combine::Min];

#[test]
fn scatter_matches_the_reference() {
    let mut rng = Rng(3);
    for threads in [1, 3] {
        pool::set_threads(threads).unwrap();
        for d in Dtype::ALL {
            for c in COMBINES {
                for rank in 1..=4 {
                    for _ in 0..3 {
                        let shape = random_shape(rank, &mut rng);
                        let axis = rng.below(rank);
                        let m = rng.below(6);
                        let unique = rng.below(3) == 0;
                        let in_place = rng.coin();
                        let mut k = scatter_case(c, unique, d, &shape, axis, m, in_place, &mut rng);
                        // Both strategies: a cache of no bytes sends every
                        // case of fewer slices than threads to ByTarget.
                        let cache = if rng.coin() { 0 } else { usize::MAX };
                        run_scatter(Host { threads, cache }, c, unique, &mut k);
                        check_scatter(c, &mut k, &format!("{} {c:?} unique {unique} {shape:?} axis {axis} m {m}", d.name()));
                    }
                }
            }
        }
    }
}

#[test]
fn scatter_add_sums_left_to_right_on_both_strategies() {
    // 2^16 updates and more into one slice: the strategy follows the
    // cache, forced to either side of the slice's bytes.
    let mut rng = Rng(4);
    for d in [Dtype::Float32, Dtype::Float64, Dtype::Complex64, Dtype::Bfloat16, Dtype::Float8E5m2, Dtype::Int16] {
        let t = 1000;
        let bytes = t * if d.is_narrow_float() { 4 } else { d.bytes() };
        for (cache, want) in [(bytes - 1, Strategy::ByTarget), (bytes, Strategy::PerSlice)] {
            for threads in [1, 3] {
                pool::set_threads(threads).unwrap();
                let mut k = scatter_case_of(Combine::Add, false, d, &[t], 0, 70_000, rng.coin(), true, &mut rng);
                let s = run_scatter(Host { threads: 3, cache }, Combine::Add, false, &mut k);
                assert_eq!(s, want);
                check_scatter(Combine::Add, &mut k, &format!("{} cache {cache} threads {threads}", d.name()));
            }
        }
    }
}

#[test]
fn scatter_by_target_reads_positions_in_batches_for_each_host() {
    // Split by target, each thread reads the positions AHEAD for each of
    // the host's threads at a time (48, 80 and 256 for 3, 5 and 16), keeps
    // those in its range and combines them while it reads the next batch:
    // a number of updates that no batch divides, positions of every
    // layout, some outside the axis (dropped), one slice and two along a
    // second axis, each combine.
    let mut rng = Rng(21);
    pool::set_threads(3).unwrap();
    for threads in [3, 5, 16] {
        for c in COMBINES {
            for d in [Dtype::Float32, Dtype::Int4, Dtype::Complex64] {
                for shape in [vec![1000], vec![700, 2]] {
                    let m = (1 << 16) + 33;
                    let mut k = scatter_case_of(c, false, d, &shape, 0, m, rng.coin(), false, &mut rng);
                    let s = run_scatter(Host { threads, cache: 0 }, c, false, &mut k);
                    assert_eq!(s, Strategy::ByTarget);
                    check_scatter(c, &mut k, &format!("{} {c:?} {shape:?} host of {threads} threads", d.name()));
                }
            }
        }
    }
}

#[test]
fn scatter_add_has_the_same_bits_on_1_and_3_threads_by_sizes() {
    // The host's own cache, and slices of targets on either side of it:
    // 1000 targets sum each slice on one thread, cache / width + 1 targets
    // sort (here filter) the updates by target on every thread. Each case
    // runs on 1 thread (one slice a thread) and 3 (the strategy its sizes
    // take), from the same operands, NaNs and infinities among them: the
    // destinations' buffers must be equal bit for bit, and match the
    // left-to-right reference.
    let mut rng = Rng(9);
    let cache = crate::core::caches::largest();
    for d in [Dtype::Float32, Dtype::Bfloat16, Dtype::Complex64] {
        let width = if d.is_narrow_float() { 4 } else { d.bytes() };
        let big = cache / width + 1;
        let mut sizes = vec![(1000, Strategy::PerSlice)];
        // Past 2^25 targets the test would hold gigabytes: the strategy is
        // then forced by a small cache in the test above alone.
        if d != Dtype::Complex64 && big <= 1 << 25 {
            sizes.push((big, Strategy::ByTarget));
        }
        for (t, want) in sizes {
            let mut k = scatter_case_of(Combine::Add, false, d, &[t], 0, 70_000, false, false, &mut rng);
            let start = k.dst.buf.clone();
            let mut outs = Vec::new();
            for (threads, strategy) in [(1, Strategy::PerSlice), (3, want)] {
                pool::set_threads(threads).unwrap();
                k.dst.buf.clone_from(&start);
                let s = run_scatter(Host { threads, cache }, Combine::Add, false, &mut k);
                assert_eq!(s, strategy, "{} {t} targets on {threads} threads", d.name());
                check_scatter(Combine::Add, &mut k, &format!("{} {t} targets threads {threads}", d.name()));
                outs.push(k.dst.buf.clone());
            }
            assert!(outs[0] == outs[1], "{} {t} targets: 1 and 3 threads differ", d.name());
        }
    }
}

#[test]
fn scatter_narrow_add_keeps_every_sum_over_chunks_of_updates() {
    // More updates than targets and 2^19: sorted by blocks of targets in
    // chunks of 2^22 updates, every target's float32 sum kept from chunk
    // to chunk and rounded once, left to right as the reference.
    let mut rng = Rng(12);
    let (t, m) = (3000, (1 << 22) + 5000);
    let mut k = scatter_case_of(Combine::Add, false, Dtype::Bfloat16, &[t], 0, m, false, true, &mut rng);
    pool::set_threads(3).unwrap();
    let s = run_scatter(Host { threads: 3, cache: 0 }, Combine::Add, false, &mut k);
    assert_eq!(s, Strategy::ByTarget);
    check_scatter(Combine::Add, &mut k, "bfloat16 Add over chunks");
}

#[test]
fn scatter_set_splits_targets_among_threads_past_the_cache_from_2_16_updates() {
    // Set takes the last update in C order whatever the strategy, each
    // thread storing those of its range of targets where they exceed the
    // cache (their targets then prefetched), one thread storing them all
    // where they fit it.
    let mut rng = Rng(13);
    for d in [Dtype::Float32, Dtype::Int4, Dtype::Complex128] {
        for (m, cache, want) in [
            (1 << 16, 0, Strategy::ByTarget),
            ((1 << 16) - 1, 0, Strategy::PerSlice),
            (1 << 16, usize::MAX, Strategy::PerSlice),
        ] {
            for threads in [1, 3] {
                let mut k = scatter_case_of(Combine::Set, false, d, &[1000], 0, m, rng.coin(), false, &mut rng);
                pool::set_threads(threads).unwrap();
                let s = run_scatter(Host { threads, cache }, Combine::Set, false, &mut k);
                assert_eq!(s, if threads == 1 { Strategy::PerSlice } else { want });
                check_scatter(Combine::Set, &mut k, &format!("{} Set of {m} cache {cache} threads {threads}", d.name()));
            }
        }
    }
}

#[test]
fn scatter_set_under_unique_splits_updates_among_threads_from_2_16() {
    // Under unique, Set's updates split among the threads whatever the
    // cache, each target written by the one part holding its update, from
    // 2^16 updates a slice on, where the slices are fewer than the threads;
    // a slice of fewer updates, or Set without the promise in the cache,
    // stays on one thread. Slices along a second axis, in place or not.
    let mut rng = Rng(17);
    for d in [Dtype::Float32, Dtype::Bit, Dtype::Int4, Dtype::Int16, Dtype::Complex128] {
        for (shape, axis, m, unique, want) in [
            (vec![70_000], 0, 1 << 16, true, Strategy::ByUpdate),
            (vec![70_000], 0, (1 << 16) - 1, true, Strategy::PerSlice),
            (vec![70_000], 0, 1 << 16, false, Strategy::PerSlice),
            (vec![2, 50_000], 1, 1 << 16, true, Strategy::ByUpdate),
        ] {
            for (threads, cache) in [(1, 0), (3, 0), (3, usize::MAX)] {
                let mut k = scatter_case_of(Combine::Set, unique, d, &shape, axis, m, rng.coin(), false, &mut rng);
                pool::set_threads(threads).unwrap();
                let s = run_scatter(Host { threads, cache }, Combine::Set, unique, &mut k);
                let want = match (threads, want) {
                    (1, _) => Strategy::PerSlice,
                    // Without the promise, past the cache: targets split.
                    (_, Strategy::PerSlice) if m >= 1 << 16 && cache == 0 => Strategy::ByTarget,
                    _ => want,
                };
                assert_eq!(s, want, "{} {shape:?} m {m} unique {unique} threads {threads} cache {cache}", d.name());
                check_scatter(Combine::Set, &mut k, &format!("{} Set {shape:?} m {m} unique {unique} threads {threads} cache {cache}", d.name()));
            }
        }
    }
}

#[test]
fn scatter_strategy_rule() {
    let mut rng = Rng(5);
    let plan = |host: Host, d: Dtype, shape: &[usize], m: usize, rng: &mut Rng| {
        let mut k = scatter_case(Combine::Add, false, d, shape, 0, m, false, rng);
        let into = k.into.as_mut().unwrap().view();
        scatter::plan(Combine::Add, false, 0, k.dst.view(), into, k.idx.view(), k.upd.view()).unwrap().on(host).strategy()
    };
    let h = |threads, cache| Host { threads, cache };
    // Fewer than 2^16 updates of float32: each slice on one thread.
    assert_eq!(plan(h(3, 0), Dtype::Float32, &[10], 100, &mut rng), Strategy::PerSlice);
    // As many slices as threads: each slice on one thread.
    assert_eq!(plan(h(3, 0), Dtype::Float16, &[10, 3], 2, &mut rng), Strategy::PerSlice);
    // A narrow float of fewer slices than threads, past the cache.
    assert_eq!(plan(h(3, 0), Dtype::Float16, &[10, 2], 2, &mut rng), Strategy::ByTarget);
    // 2 slices of 8 float16 targets: 64 bytes of float32 sums.
    assert_eq!(plan(h(3, 64), Dtype::Float16, &[8, 2], 2, &mut rng), Strategy::PerSlice);
    assert_eq!(plan(h(3, 63), Dtype::Float16, &[8, 2], 2, &mut rng), Strategy::ByTarget);
    // The cache the machine reports.
    assert!(crate::core::caches::largest() >= 1 << 15);
    assert_eq!(Host::current().cache, crate::core::caches::largest());
}

#[test]
fn scatter_add_of_negative_zeros_is_negative_zero() {
    let mut rng = Rng(6);
    for d in [Dtype::Float16, Dtype::Bfloat16, Dtype::Float8E4m3fn, Dtype::Float8E5m2, Dtype::Float4E2m1fn, Dtype::Float32, Dtype::Float64] {
        let neg = narrow::encode_f32(d, -0.0).map(u128::from).unwrap_or(if d == Dtype::Float32 { 1 << 31 } else { 1 << 63 });
        let mut k = scatter_case(Combine::Add, false, d, &[2], 0, 3, false, &mut rng);
        let into = k.into.as_mut().unwrap();
        let b = into.with(&[neg, neg]);
        into.buf = b;
        let b = k.upd.with(&[neg, neg, neg]);
        k.upd.buf = b;
        let b = k.idx.with(&[0, 0, 5]);
        k.idx.buf = b;
        run_scatter(Host::current(), Combine::Add, false, &mut k);
        assert_eq!(k.dst.values(), vec![neg, neg], "{}", d.name());
    }
}

#[test]
fn assemble_matches_the_reference() {
    let mut rng = Rng(7);
    for threads in [1, 3] {
        pool::set_threads(threads).unwrap();
        for d in Dtype::ALL {
            for rank in 0..=4 {
                for _ in 0..5 {
                    let shape = random_shape(rank, &mut rng);
                    let mut dst = Arr::new(d, &shape, false, &mut rng);
                    let n = rng.below(5);
                    let mut pieces: Vec<(Vec<(usize, usize)>, Arr)> = (0..n)
                        .map(|_| {
                            let region: Vec<(usize, usize)> = shape
                                .iter()
                                .map(|&e| {
                                    let a = rng.below(e + 1);
                                    (a, a + rng.below(e - a + 1))
                                })
                                .collect();
                            let ps: Vec<usize> = region.iter().map(|&(a, b)| b - a).collect();
                            (region, Arr::new(d, &ps, true, &mut rng))
                        })
                        .collect();
                    let fill = rng.next() as u128 & mask(d);
                    let size: usize = shape.iter().product();
                    let vals: Vec<Vec<u128>> = pieces.iter_mut().map(|(_, a)| a.values()).collect();
                    let want: Vec<u128> = (0..size)
                        .map(|p| {
                            let c = coords(&shape, p);
                            (pieces.iter().zip(&vals).rev())
                                .find(|((r, _), _)| c.iter().zip(r).all(|(&i, &(a, b))| a <= i && i < b))
                                .map_or(fill, |((r, a), v)| {
                                    let inner: Vec<usize> = c.iter().zip(r).map(|(&i, &(s, _))| i - s).collect();
                                    v[position(&a.layout.shape, &inner)]
                                })
                        })
                        .collect();
                    let expect = dst.with(&want);
                    let ps = pieces.iter_mut().map(|(r, a)| Piece { region: r.clone(), view: a.view() }).collect();
                    assemble::plan(fill, dst.view(), ps).unwrap().run().unwrap();
                    assert_eq!(dst.buf, expect, "{} {shape:?}", d.name());
                }
            }
        }
    }
}

#[test]
fn refusals_come_before_any_write() {
    let mut rng = Rng(8);
    let d = Dtype::Float32;
    let mut x = Arr::new(d, &[4, 3], false, &mut rng);
    let mut dst = Arr::new(d, &[2, 3], false, &mut rng);
    let mut idx = Arr::positions(&[2, 3], &[0; 6], &mut rng);
    let mut f64s = Arr::new(Dtype::Float64, &[2, 3], false, &mut rng);
    let before = dst.buf.clone();
    let mut overlapping = dst.view();
    overlapping.layout.shape = vec![2, 3];
    let mut bcast = dst.view();
    bcast.layout.strides[0] = 0;
    let g = |axis, dst: View, idx: View, x: View| gather::plan(axis, dst, idx, x).err().unwrap();
    assert!(g(2, dst.view(), idx.view(), x.view()).contains("axis 2"));
    assert!(g(0, dst.view(), dst.view(), x.view()).contains("int64"));
    assert!(g(0, f64s.view(), idx.view(), x.view()).contains("float32"));
    assert!(g(1, dst.view(), idx.view(), x.view()).contains("off axis 1"));
    assert!(g(0, dst.view(), idx.view(), overlapping.clone()).contains("overlaps"));
    assert!(g(0, bcast.clone(), idx.view(), x.view()).contains("several indices"));
    let s = |dst: View, into: View, idx: View, upd: View| {
        scatter::plan(Combine::Add, false, 0, dst, into, idx, upd).err().unwrap()
    };
    let mut upd = Arr::new(d, &[2, 3], false, &mut rng);
    assert!(s(x.view(), dst.view(), idx.view(), upd.view()).contains("into has shape"));
    assert!(s(dst.view(), f64s.view(), idx.view(), upd.view()).contains("share a dtype"));
    assert!(s(dst.view(), x.view().clone(), idx.view(), upd.view()).contains("shape"));
    assert!(s(dst.view(), dst.view(), idx.view(), dst.view()).contains("overlaps the updates"));
    let mut shifted = dst.view();
    shifted.layout.offset += 1;
    shifted.layout.shape = vec![1, 3];
    let mut i1 = Arr::positions(&[1, 3], &[0; 3], &mut rng);
    let mut u1 = Arr::new(d, &[1, 3], false, &mut rng);
    let mut d1 = dst.view();
    d1.layout.shape = vec![1, 3];
    assert!(s(d1, shifted, i1.view(), u1.view()).contains("without being it"));
    let a = |fill, dst: View, pieces| assemble::plan(fill, dst, pieces).err().unwrap();
    let p = |region: Vec<(usize, usize)>, v: View| vec![Piece { region, view: v }];
    assert!(a(0, dst.view(), p(vec![(0, 2), (0, 3)], x.view())).contains("has shape"));
    assert!(a(0, dst.view(), p(vec![(0, 2), (1, 4)], upd.view())).contains("not within"));
    assert!(a(0, dst.view(), p(vec![(0, 2)], upd.view())).contains("region of 1 axes"));
    assert!(a(0, dst.view(), p(vec![(0, 2), (0, 3)], f64s.view())).contains("float64"));
    assert!(a(0, dst.view(), p(vec![(0, 2), (0, 3)], overlapping)).contains("overlaps"));
    assert_eq!(dst.buf, before);
}


/// The reference's gather_ranges: each destination element found one at a
/// time, its run by a walk of the ends from the first, its source position
/// in int64 arithmetic modulo 2^64.
fn ranges_reference(xv: &[u128], xs: &[usize], starts: &[i64], ends: &[i64], is: &[usize], ds: &[usize]) -> Vec<u128> {
    let lead = is.len() - 1;
    let (k, n) = (is[lead], xs[lead]);
    (0..ds.iter().product())
        .map(|pos| {
            let c = coords(ds, pos);
            let p = c[lead] as i64;
            let mut ic = c[..lead].to_vec();
            ic.push(0);
            let row = position(is, &ic);
            let Some(j) = (0..k).find(|&j| ends[row + j] > p) else { return 0 };
            let e = if j == 0 { 0 } else { ends[row + j - 1] };
            let q = starts[row + j].wrapping_add(p).wrapping_sub(e);
            if q < 0 || q >= n as i64 {
                return 0;
            }
            let mut xc = c.clone();
            xc[lead] = q as usize;
            xv[position(xs, &xc)]
        })
        .collect()
}

/// Random runs for a source of `n` along the packed axis: each end mostly
/// the previous one plus a short length, sometimes anywhere, below 0 or
/// at int64's extremes; each start mostly the previous end plus a small
/// shift (so the exact sum lies near the axis, even where the two lie at
/// opposite extremes of int64), sometimes an extreme itself.
fn random_runs(k: usize, n: usize, size: usize, rng: &mut Rng) -> (Vec<i64>, Vec<i64>) {
    let (mut starts, mut ends) = (Vec::with_capacity(k), Vec::with_capacity(k));
    let mut prev = 0i64;
    for _ in 0..k {
        let shift = rng.below(n + 6) as i64 - 3;
        let start = match rng.below(10) {
            0 => [i64::MIN, i64::MAX, i64::MIN + 1, i64::MAX - 1][rng.below(4)],
            _ => prev.wrapping_add(shift),
        };
        let end = match rng.below(12) {
            0 => -(rng.below(4) as i64),
            1 => i64::MIN + rng.below(3) as i64,
            2 => i64::MAX - rng.below(3) as i64,
            3 => rng.below(size + 4) as i64,
            _ => prev.max(0).saturating_add(rng.below(4) as i64),
        };
        starts.push(start);
        ends.push(end);
        prev = end;
    }
    (starts, ends)
}

/// Concatenates per-lead-index runs into one array's values.
fn ranges_case(d: Dtype, is: &[usize], xs: &[usize], ds: &[usize], rng: &mut Rng) -> (Arr, Arr, Arr, Arr, Vec<u64>) {
    let lead = is.len() - 1;
    let rows: usize = is[..lead].iter().product();
    let (mut starts, mut ends) = (Vec::new(), Vec::new());
    for _ in 0..rows {
        let (s, e) = random_runs(is[lead], xs[lead], ds[lead], rng);
        starts.extend(s);
        ends.extend(e);
    }
    let (st, en) = (Arr::positions(is, &starts, rng), Arr::positions(is, &ends, rng));
    let mut x = Arr::new(d, xs, true, rng);
    let mut dst = Arr::new(d, ds, false, rng);
    let want = ranges_reference(&x.values(), xs, &starts, &ends, is, ds);
    let expect = dst.with(&want);
    (dst, st, en, x, expect)
}

#[test]
fn gather_ranges_matches_the_reference() {
    let mut rng = Rng(10);
    for threads in [1, 3] {
        pool::set_threads(threads).unwrap();
        for d in Dtype::ALL {
            for rank in 1..=4 {
                for _ in 0..8 {
                    let lead = rng.below(rank);
                    let mut is = random_shape(lead, &mut rng);
                    is.push(rng.below(6));
                    let cells = random_shape(rank - lead - 1, &mut rng);
                    let (n, size) = (rng.below(7), rng.below(9));
                    let xs: Vec<usize> = is[..lead].iter().copied().chain([n]).chain(cells.iter().copied()).collect();
                    let ds = gather_ranges::shape(&is, size, &xs).unwrap();
                    let (mut dst, mut st, mut en, mut x, expect) = ranges_case(d, &is, &xs, &ds, &mut rng);
                    gather_ranges::plan(dst.view(), st.view(), en.view(), x.view()).unwrap().run().unwrap();
                    assert_eq!(dst.buf, expect, "{} starts {is:?} x {xs:?} dst {ds:?}", d.name());
                }
            }
        }
    }
}

#[test]
fn gather_ranges_reads_modulo_2_64_at_int64_extremes() {
    // e = ends[0] near int64's least, starts[1] near its greatest: the exact
    // starts[1] + p - e is about 2^64 + p - 3, which modulo 2^64 reads x at
    // p - 3; run 0 holds no position (its end is below 0).
    let mut rng = Rng(11);
    let d = Dtype::Int32;
    let mut x = Arr::new(d, &[6], false, &mut rng);
    x.layout = Layout::contiguous(d, &[6]);
    let mut st = Arr::positions(&[3], &[7, i64::MAX - 1, 0], &mut rng);
    let mut en = Arr::positions(&[3], &[i64::MIN + 1, 5, i64::MAX], &mut rng);
    let mut dst = Arr::new(d, &[9], false, &mut rng);
    let xv = x.values();
    // Run 1: positions 0..5 read p - 3; run 2: positions 5..9 read
    // 0 + p - 5.
    let want: Vec<u128> = (0..9).map(|p: i64| if p < 5 { if p >= 3 { xv[(p - 3) as usize] } else { 0 } } else { xv[(p - 5) as usize] }).collect();
    let expect = dst.with(&want);
    gather_ranges::plan(dst.view(), st.view(), en.view(), x.view()).unwrap().run().unwrap();
    assert_eq!(dst.buf, expect);
}

#[test]
fn gather_ranges_has_the_same_bits_on_1_and_3_threads() {
    // Destinations of several parts (2^16 elements a part): contiguous
    // with an offset (cut at cache lines, copied by memcpy) and laid out
    // at random (reversed, gaps), sub-byte dtypes included.
    let mut rng = Rng(12);
    for d in [Dtype::Bit, Dtype::Int4, Dtype::Float32, Dtype::Complex128] {
        for contiguous in [true, false] {
            let (is, xs) = ([2, 40], [2, 300_000]);
            let ds = [2, 250_000];
            let lead_rows = 2;
            let (mut starts, mut ends) = (Vec::new(), Vec::new());
            for _ in 0..lead_rows {
                let mut e = 0i64;
                for _ in 0..40 {
                    starts.push(rng.below(300_100) as i64 - 50);
                    e += rng.below(12_000) as i64;
                    ends.push(e);
                }
            }
            let (mut st, mut en) = (Arr::positions(&is, &starts, &mut rng), Arr::positions(&is, &ends, &mut rng));
            let mut x = Arr::new(d, &xs, false, &mut rng);
            let mut dst = Arr::new(d, &ds, false, &mut rng);
            if contiguous {
                x.relayout(Layout { offset: 5, ..Layout::contiguous(d, &xs) }, &mut rng);
                dst.relayout(Layout { offset: 3, ..Layout::contiguous(d, &ds) }, &mut rng);
            }
            let want = ranges_reference(&x.values(), &xs, &starts, &ends, &is, &ds);
            let expect = dst.with(&want);
            let start = dst.buf.clone();
            for threads in [1, 3] {
                pool::set_threads(threads).unwrap();
                dst.buf.clone_from(&start);
                gather_ranges::plan(dst.view(), st.view(), en.view(), x.view()).unwrap().run().unwrap();
                assert!(dst.buf == expect, "{} contiguous {contiguous} threads {threads}", d.name());
            }
        }
    }
}

/// A random pad for an operand of `shape` whose windows fit it.
fn random_pad(shape: &[usize], rng: &mut Rng) -> Pad {
    let r = shape.len();
    let before: Vec<usize> = (0..r).map(|_| rng.below(3)).collect();
    let after: Vec<usize> = (0..r).map(|_| rng.below(3)).collect();
    let windows: Vec<Option<Window>> = (0..r)
        .map(|a| {
            let w = Window { size: 1 + rng.below(3), stride: 1 + rng.below(3), dilation: 1 + rng.below(2) };
            let padded = shape[a] + before[a] + after[a];
            (rng.coin() && (w.size - 1) * w.dilation < padded).then_some(w)
        })
        .collect();
    let windows = if windows.iter().all(Option::is_none) && rng.coin() { vec![] } else { windows };
    Pad { before, after, windows, fill: 0.0 }
}

/// The reference's fold: each destination element's terms found one at a
/// time, their taps in C order, summed left to right by the loops' Add one
/// element at a time; +0 (zero bits) where no tap reads it.
fn fold_reference(d: Dtype, p: &Pad, xv: &[u128], xs: &[usize], ds: &[usize]) -> Vec<u128> {
    let r = ds.len();
    let win = |a: usize| p.windows.get(a).copied().flatten();
    let wa: Vec<usize> = (0..r).filter(|&a| win(a).is_some()).collect();
    let taps: Vec<usize> = wa.iter().map(|&a| win(a).unwrap().size).collect();
    let ntaps: usize = taps.iter().product();
    (0..ds.iter().product())
        .map(|pos| {
            let c = coords(ds, pos);
            let terms: Vec<u128> = (0..ntaps)
                .filter_map(|tp| {
                    let t = coords(&taps, tp);
                    let mut xc = Vec::with_capacity(xs.len());
                    for a in 0..r {
                        let q = (c[a] + p.before[a]) as i64;
                        match win(a) {
                            None => xc.push(q as usize),
                            Some(w) => {
                                let k = wa.iter().position(|&b| b == a).unwrap();
                                let q = q - (t[k] * w.dilation) as i64;
                                if q < 0 || q % w.stride as i64 != 0 || q / w.stride as i64 >= xs[a] as i64 {
                                    return None;
                                }
                                xc.push((q / w.stride as i64) as usize);
                            }
                        }
                    }
                    xc.extend(&t);
                    Some(xv[position(xs, &xc)])
                })
                .collect();
            // A sum of one term is that term, a bool's as its value, 0 or 1.
            match terms.split_first() {
                None => 0,
                Some((&first, rest)) => {
                    let first = if d == Dtype::Bool { (first != 0) as u128 } else { first };
                    rest.iter().fold(first, |acc, &u| binary(Binary::Add, d, acc, u))
                }
            }
        })
        .collect()
}

#[test]
fn fold_matches_the_reference() {
    let mut rng = Rng(13);
    for threads in [1, 3] {
        pool::set_threads(threads).unwrap();
        for d in Dtype::ALL {
            for rank in 0..=4 {
                for _ in 0..6 {
                    let ds = random_shape(rank, &mut rng);
                    let p = random_pad(&ds, &mut rng);
                    let xs = p.shape(&ds).unwrap();
                    let mut x = Arr::new(d, &xs, true, &mut rng);
                    if rng.coin() {
                        // Finite values, so that a sum in another order or
                        // rounded otherwise shows.
                        let vals: Vec<u128> = (0..x.layout.size()).map(|_| finite(d, &mut rng)).collect();
                        x.buf = x.with(&vals);
                    }
                    let mut dst = Arr::new(d, &ds, false, &mut rng);
                    let want = fold_reference(d, &p, &x.values(), &xs, &ds);
                    let expect = dst.with(&want);
                    fold::plan(p.clone(), dst.view(), x.view()).unwrap().run().unwrap();
                    check_values(false, &mut dst, &expect, &format!("{} fold {p:?} of {ds:?}", d.name()));
                }
            }
        }
    }
}

#[test]
fn fold_keeps_a_single_negative_zero_and_rounds_each_addition() {
    let mut rng = Rng(14);
    // One window of 2 taps, stride 1, over [3]: element 1 has two terms,
    // elements 0 and 2 one each.
    let p = Pad { before: vec![0], after: vec![0], windows: vec![Some(Window { size: 2, stride: 1, dilation: 1 })], fill: 0.0 };
    for d in [Dtype::Float32, Dtype::Float16, Dtype::Bfloat16, Dtype::Float8E4m3fn, Dtype::Float4E2m1fn] {
        let enc = |v: f32| narrow::encode_f32(d, v).map(u128::from).unwrap_or(v.to_bits() as u128);
        let mut x = Arr::new(d, &[2, 2], false, &mut rng);
        // Taps of window 0: elements 0, 1; of window 1: elements 1, 2.
        x.buf = x.with(&[enc(-0.0), enc(-0.0), enc(-0.0), enc(-0.0)]);
        let mut dst = Arr::new(d, &[3], false, &mut rng);
        fold::plan(p.clone(), dst.view(), x.view()).unwrap().run().unwrap();
        assert_eq!(dst.values(), vec![enc(-0.0); 3], "{}", d.name());
    }
    // float16: 1 + 2^-11 + 2^-11 rounds each addition to even (1, then 1),
    // where a float32 sum rounded once would give 1 + 2^-10.
    let d = Dtype::Float16;
    let three = Pad { before: vec![0], after: vec![0], windows: vec![Some(Window { size: 3, stride: 1, dilation: 1 })], fill: 0.0 };
    let mut x = Arr::new(d, &[1, 3], false, &mut rng);
    let h = |v: f32| narrow::encode_f32(d, v).unwrap() as u128;
    let tiny = 1.0 / 2048.0;
    x.buf = x.with(&[h(1.0), h(tiny), h(tiny)]);
    let mut dst = Arr::new(d, &[3], false, &mut rng);
    fold::plan(three, dst.view(), x.view()).unwrap().run().unwrap();
    assert_eq!(dst.values(), vec![h(1.0), h(tiny), h(tiny)]);
    let mut x = Arr::new(d, &[3, 3], false, &mut rng);
    let one_window = Pad { before: vec![2], after: vec![2], windows: vec![Some(Window { size: 3, stride: 1, dilation: 1 })], fill: 0.0 };
    // Element 0 is read by window 2's tap 0, window 1's tap 1 and window
    // 0's tap 2: terms 1, then 2^-11, then 2^-11, in tap order.
    let mut vals = vec![h(0.0); 9];
    vals[2 * 3] = h(1.0);
    vals[3 + 1] = h(tiny);
    vals[2] = h(tiny);
    x.buf = x.with(&vals);
    let mut dst = Arr::new(d, &[1], false, &mut rng);
    fold::plan(one_window, dst.view(), x.view()).unwrap().run().unwrap();
    assert_eq!(dst.values(), vec![h(1.0)]);
}

#[test]
fn fold_is_the_adjoint_of_a_padded_load_on_integers() {
    // <fold(y), x> = <y, load(x)> exactly, modulo 2^w for w-bit integers,
    // load(x) the map's padded load of x (fill 0).
    let mut rng = Rng(15);
    for d in [Dtype::Int4, Dtype::Uint8, Dtype::Int32, Dtype::Int64] {
        for rank in 1..=3 {
            for _ in 0..8 {
                let ds: Vec<usize> = (0..rank).map(|_| 1 + rng.below(5)).collect();
                let p = random_pad(&ds, &mut rng);
                let ys = p.shape(&ds).unwrap();
                let mut x = Arr::new(d, &ds, true, &mut rng);
                let mut y = Arr::new(d, &ys, true, &mut rng);
                let mut loaded = Arr::new(d, &ys, false, &mut rng);
                let mut folded = Arr::new(d, &ds, false, &mut rng);
                let id = Prog::new(vec![d], vec![Node::Load(0)], vec![0]).unwrap();
                map::plan_loads(id, vec![loaded.view()], vec![map::Load::Padded(p.clone(), x.view())]).unwrap().run().unwrap();
                fold::plan(p.clone(), folded.view(), y.view()).unwrap().run().unwrap();
                let dot = |a: Vec<u128>, b: Vec<u128>| a.iter().zip(&b).fold(0u64, |s, (&u, &v)| s.wrapping_add((u as u64).wrapping_mul(v as u64)));
                let m = mask(d) as u64;
                let left = dot(folded.values(), x.values()) & m;
                let right = dot(y.values(), loaded.values()) & m;
                assert_eq!(left, right, "{} {p:?} of {ds:?}", d.name());
            }
        }
    }
}

#[test]
fn fold_has_the_same_bits_on_1_and_3_threads() {
    // Rows enough for several parts: 3x3 windows, stride 1, pad 1, and a
    // strided, dilated one; NaNs and infinities among the terms.
    let mut rng = Rng(16);
    let ds = [64, 12, 40];
    let w = |size, stride, dilation| Some(Window { size, stride, dilation });
    let pads = [
        Pad { before: vec![0, 1, 1], after: vec![0, 1, 1], windows: vec![None, w(3, 1, 1), w(3, 1, 1)], fill: 0.0 },
        Pad { before: vec![1, 0, 2], after: vec![0, 1, 0], windows: vec![w(2, 2, 1), None, w(3, 2, 2)], fill: 0.0 },
    ];
    for d in [Dtype::Float32, Dtype::Float16, Dtype::Int4, Dtype::Complex64] {
        for p in &pads {
            let xs = p.shape(&ds).unwrap();
            let mut x = Arr::new(d, &xs, false, &mut rng);
            let mut dst = Arr::new(d, &ds, false, &mut rng);
            let start = dst.buf.clone();
            let want = fold_reference(d, p, &x.values(), &xs, &ds);
            let expect = dst.with(&want);
            let mut outs = Vec::new();
            for threads in [1, 3] {
                pool::set_threads(threads).unwrap();
                dst.buf.clone_from(&start);
                fold::plan(p.clone(), dst.view(), x.view()).unwrap().run().unwrap();
                check_values(false, &mut dst, &expect, &format!("{} {p:?} threads {threads}", d.name()));
                outs.push(dst.buf.clone());
            }
            assert!(outs[0] == outs[1], "{}: 1 and 3 threads differ", d.name());
        }
    }
}

#[test]
fn gather_ranges_and_fold_refuse_before_any_write() {
    let mut rng = Rng(17);
    let d = Dtype::Float32;
    let mut x = Arr::new(d, &[2, 5, 3], false, &mut rng);
    let mut dst = Arr::new(d, &[2, 4, 3], false, &mut rng);
    let mut st = Arr::positions(&[2, 2], &[0; 4], &mut rng);
    let mut en = Arr::positions(&[2, 2], &[1; 4], &mut rng);
    let mut en3 = Arr::positions(&[2, 3], &[1; 6], &mut rng);
    let mut f64s = Arr::new(Dtype::Float64, &[2, 4, 3], false, &mut rng);
    let mut scalar = Arr::positions(&[], &[0], &mut rng);
    let before = dst.buf.clone();
    let g = |dst: View, s: View, e: View, x: View| gather_ranges::plan(dst, s, e, x).err().unwrap();
    assert!(g(dst.view(), x.view(), en.view(), x.view()).contains("int64"));
    assert!(g(dst.view(), st.view(), en3.view(), x.view()).contains("the ends have shape"));
    assert!(g(dst.view(), scalar.view(), scalar.view(), x.view()).contains("0-d"));
    assert!(g(f64s.view(), st.view(), en.view(), x.view()).contains("float64"));
    let mut short = Arr::new(d, &[3, 5, 3], false, &mut rng);
    assert!(g(dst.view(), st.view(), en.view(), short.view()).contains("must begin"));
    let mut wide = Arr::new(d, &[2, 4, 2], false, &mut rng);
    assert!(g(wide.view(), st.view(), en.view(), x.view()).contains("not [2, 4, 3]"));
    let mut bcast = dst.view();
    bcast.layout.strides[1] = 0;
    assert!(g(bcast, st.view(), en.view(), x.view()).contains("several indices"));
    let mut over = dst.view();
    over.layout.shape = vec![2, 5, 3];
    let mut small = dst.view();
    small.layout.shape = vec![2, 2];
    small.layout.strides = vec![2, 1];
    small.layout.dtype = Dtype::Int64;
    assert!(g(dst.view(), small, en.view(), x.view()).contains("overlaps the starts"));
    let p = Pad { before: vec![0, 1, 0], after: vec![0, 0, 0], windows: vec![], fill: 0.0 };
    let f = |p: &Pad, dst: View, x: View| fold::plan(p.clone(), dst, x).err().unwrap();
    let mut xp = Arr::new(d, &[2, 6, 3], false, &mut rng);
    assert!(f(&p, dst.view(), xp.view()).contains("gives [2, 5, 3]"));
    assert!(f(&p, f64s.view(), x.view()).contains("float64"));
    assert!(f(&Pad { before: vec![0], ..p.clone() }, dst.view(), x.view()).contains("rank 3"));
    assert!(f(&p, dst.view(), over).contains("overlaps the source"));
    assert_eq!(dst.buf, before);
}
