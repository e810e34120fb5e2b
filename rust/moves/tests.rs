//! Tests of the moves against slow references that take one element at a
//! time, on arrays of every dtype laid out awkwardly (permuted axes,
//! negative strides, gaps, offsets, broadcast sources, empty extents),
//! under 1 and 3 threads. Each checks the destination's whole buffer, so a
//! write outside the destination's elements, a neighbour's bits included,
//! fails it.

use super::assemble::{self, Piece};
use super::gather;
use super::scatter::{self, Combine, Host, Strategy};
use crate::core::call::Call;
use crate::loops::column::Col;
use crate::core::dtype::Dtype;
use crate::core::layout::{Layout, Memory, View};
use crate::core::narrow;
use crate::loops::ops;
use crate::core::pool;
use crate::loops::prog::Binary;
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
                    gather::plan(axis, dst.view(), idx.view(), x.view()).unwrap().run().unwrap();
                    assert_eq!(dst.buf, expect, "{} {shape:?} axis {axis} from {xs:?}", d.name());
                }
            }
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
    let mut buf = [0u64; 4];
    let m = Memory { base: buf.as_mut_ptr() as *mut u8, bytes: 32 };
    us.iter().fold(x, |acc, &u| {
        set(m, d, 0, acc);
        set(m, d, 1, u);
        let (mut a, mut b, mut o) = (Col::new(d, 1), Col::new(d, 1), Col::new(d, 1));
        // SAFETY: elements 0 to 2 lie in the 32 bytes of `buf`.
        unsafe {
            crate::loops::memio::load(m, d, 0, 1, 1, &mut a.as_mut());
            crate::loops::memio::load(m, d, 1, 1, 1, &mut b.as_mut());
            ops::binary(k, d, &a.as_ref(), &b.as_ref(), &mut o.as_mut(), 1);
            o.as_mut().settle(d, 1);
            crate::loops::memio::store(m, d, 2, 1, 1, &o.as_ref());
        }
        get(m, d, 2)
    })
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
    let d = k.dst.layout.dtype;
    let mut want = Arr { buf: k.expect.clone(), layout: k.dst.layout.clone() };
    let (got, wanted) = (k.dst.values(), want.values());
    for (p, (&g, &w)) in got.iter().zip(&wanted).enumerate() {
        let ok = if c == Combine::Set { g == w } else { same_value(d, g, w) };
        assert!(ok, "{what}: element {p} is {g:#x}, not {w:#x}");
    }
    assert_eq!(k.dst.with(&wanted), k.expect, "{what}: bits outside the destination's elements");
}

fn run_scatter(host: Host, c: Combine, unique: bool, k: &mut Case) -> Strategy {
    let into = match &mut k.into {
        Some(a) => a.view(),
        None => k.dst.view(),
    };
    let plan = scatter::plan_on(host, c, unique, k.axis, k.dst.view(), into, k.idx.view(), k.upd.view()).unwrap();
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
fn scatter_strategy_rule() {
    let mut rng = Rng(5);
    let plan = |host: Host, d: Dtype, shape: &[usize], m: usize, rng: &mut Rng| {
        let mut k = scatter_case(Combine::Add, false, d, shape, 0, m, false, rng);
        let into = k.into.as_mut().unwrap().view();
        scatter::plan_on(host, Combine::Add, false, 0, k.dst.view(), into, k.idx.view(), k.upd.view()).unwrap().strategy()
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
    assert!(scatter::largest_cache() >= 1 << 15);
    assert_eq!(Host::current().cache, scatter::largest_cache());
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

