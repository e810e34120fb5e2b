//! Sort against a slow reference: a stable insertion sort under the
//! contract's total order, written from the values (decoded numbers), not
//! from the keys the kernel sorts by.

use super::*;
use crate::core::layout::{Layout, Memory};
use crate::core::narrow::Narrow;
use crate::core::test_rng::splitmix;
use std::cmp::Ordering;

/// An element's value as the order reads it.
#[derive(Clone, Copy, Debug)]
enum Val {
    Int(i128),
    /// A real float, NaN included.
    Real(f64),
    /// A complex number's parts.
    Pair(f64, f64),
}

/// The value of bits `b` of dtype `d`.
fn value(d: Dtype, b: u128) -> Val {
    let signed = |w: u32| Val::Int(((b << (128 - w)) as i128) >> (128 - w));
    match d {
        Dtype::Bool => Val::Int((b != 0) as i128),
        Dtype::Bit | Dtype::Uint4 | Dtype::Uint8 | Dtype::Uint16 | Dtype::Uint32 | Dtype::Uint64 => Val::Int(b as i128),
        Dtype::Int4 => signed(4),
        Dtype::Int8 => signed(8),
        Dtype::Int16 => signed(16),
        Dtype::Int32 => signed(32),
        Dtype::Int64 => signed(64),
        Dtype::Float32 => Val::Real(f32::from_bits(b as u32) as f64),
        Dtype::Float64 => Val::Real(f64::from_bits(b as u64)),
        Dtype::Complex64 => Val::Pair(f32::from_bits(b as u32) as f64, f32::from_bits((b >> 32) as u32) as f64),
        Dtype::Complex128 => Val::Pair(f64::from_bits(b as u64), f64::from_bits((b >> 64) as u64)),
        _ => Val::Real(Narrow::of(d).unwrap().decode(b as u16) as f64),
    }
}

/// The contract's order of two reals: NaNs above all and equal, -0 < +0.
fn real_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.total_cmp(&b),
    }
}

/// The contract's order of two values of one dtype.
fn cmp(a: Val, b: Val) -> Ordering {
    match (a, b) {
        (Val::Int(a), Val::Int(b)) => a.cmp(&b),
        (Val::Real(a), Val::Real(b)) => real_cmp(a, b),
        (Val::Pair(ar, ai), Val::Pair(br, bi)) => {
            let (an, bn) = (ar.is_nan() || ai.is_nan(), br.is_nan() || bi.is_nan());
            match (an, bn) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => real_cmp(ar, br).then(real_cmp(ai, bi)),
            }
        }
        _ => unreachable!("values of one dtype"),
    }
}

/// The reference: a stable insertion sort of (bits, position) pairs.
fn reference(d: Dtype, descending: bool, slice: &[u128]) -> Vec<(u128, i64)> {
    let mut out: Vec<(u128, i64)> = Vec::new();
    for (i, &b) in slice.iter().enumerate() {
        let mut j = out.len();
        let before = |o: &(u128, i64)| {
            let c = cmp(value(d, o.0), value(d, b));
            if descending { c == Ordering::Less } else { c == Ordering::Greater }
        };
        while j > 0 && before(&out[j - 1]) {
            j -= 1;
        }
        out.insert(j, (b, i as i64));
    }
    out
}

/// Bits a dtype's element takes, as a mask.
fn mask(d: Dtype) -> u128 {
    if d.bits() == 128 { u128::MAX } else { (1u128 << d.bits()) - 1 }
}

/// Awkward bits of a real format of `w` bits whose infinity (or greatest
/// finite magnitude) is `inf`: zeros, infinities, NaNs of several payloads
/// and both signs, subnormals, the greatest magnitude.
fn specials(w: u32, inf: u128) -> Vec<u128> {
    let s = 1u128 << (w - 1);
    let mag = s - 1;
    let mut v = vec![0, s, inf, s | inf, 1, s | 1, mag, s | mag, inf - 1, s | (inf - 1)];
    if inf < mag {
        v.extend([inf + 1, s | (inf + 1), mag - 1, s | mag, inf | ((mag - inf) / 2 + 1)]);
    }
    v
}

/// A dtype's awkward bits.
fn awkward(d: Dtype) -> Vec<u128> {
    match d {
        Dtype::Float32 => specials(32, 0x7f80_0000),
        Dtype::Float64 => specials(64, 0x7ff0_0000_0000_0000),
        Dtype::Float16 => specials(16, 0x7c00),
        Dtype::Bfloat16 => specials(16, 0x7f80),
        Dtype::Float8E5m2 => specials(8, 0x7c),
        Dtype::Float8E4m3fn => specials(8, 0x7e),
        Dtype::Float4E2m1fn => specials(4, 0x7),
        Dtype::Complex64 | Dtype::Complex128 => {
            let p = awkward(d.part());
            let w = d.part().bits();
            p.iter().flat_map(|&re| p.iter().map(move |&im| re | im << w)).collect()
        }
        _ => vec![0, 1, mask(d), mask(d) >> 1, (mask(d) >> 1) + 1],
    }
}

/// `n` elements of `d`: random bits, awkward ones and repeats.
fn elements(d: Dtype, n: usize, seed: &mut u64) -> Vec<u128> {
    let odd = awkward(d);
    let mut out: Vec<u128> = Vec::with_capacity(n);
    for _ in 0..n {
        let r = splitmix(seed);
        let b = match r % 4 {
            0 => odd[(r >> 8) as usize % odd.len()],
            1 if !out.is_empty() => out[(r >> 8) as usize % out.len()],
            _ => ((splitmix(seed) as u128) << 64 | splitmix(seed) as u128) & mask(d),
        };
        out.push(b);
    }
    out
}

/// A buffer of `bytes` bytes, 16-aligned, and its memory.
struct Buf(Vec<u128>);

impl Buf {
    fn new(elements: usize, d: Dtype) -> Buf {
        Buf(vec![0x5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a; (elements * d.bits()).div_ceil(128) + 1])
    }
    fn memory(&mut self) -> Memory {
        Memory { base: self.0.as_mut_ptr() as *mut u8, bytes: self.0.len() * 16 }
    }
}

/// Writes bits as element `e`.
fn put(m: Memory, d: Dtype, e: isize, b: u128) {
    let bits = Bits::new(m, d);
    // SAFETY: the tests' indices lie in their buffers.
    unsafe {
        match d.bits() {
            1 | 4 | 8 => bits.write(e, b as u8),
            16 => bits.write(e, b as u16),
            32 => bits.write(e, b as u32),
            64 => bits.write(e, b as u64),
            _ => bits.write(e, b),
        }
    }
}

/// Reads element `e`'s bits.
fn get(m: Memory, d: Dtype, e: isize) -> u128 {
    let bits = Bits::new(m, d);
    // SAFETY: the tests' indices lie in their buffers.
    unsafe {
        match d.bits() {
            1 | 4 | 8 => bits.read::<u8>(e) as u128,
            16 => bits.read::<u16>(e) as u128,
            32 => bits.read::<u32>(e) as u128,
            64 => bits.read::<u64>(e) as u128,
            _ => bits.read::<u128>(e),
        }
    }
}

/// A layout of `shape` over a buffer: C order, its axes reversed where
/// `flip` (a negative stride each), transposed where `transpose` (the
/// first two axes' strides swapped), from an offset of 3 elements.
fn layout(d: Dtype, shape: &[usize], flip: bool, transpose: bool) -> Layout {
    let mut order: Vec<usize> = (0..shape.len()).collect();
    if transpose && shape.len() > 1 {
        order.swap(0, 1);
    }
    let mut strides = vec![0isize; shape.len()];
    let mut step = 1isize;
    for &a in order.iter().rev() {
        strides[a] = step;
        step *= shape[a].max(1) as isize;
    }
    let mut offset = 3usize;
    if flip {
        for (s, &n) in strides.iter_mut().zip(shape) {
            offset += (n.max(1) - 1) * *s as usize;
            *s = -*s;
        }
    }
    Layout { dtype: d, shape: shape.to_vec(), strides, offset }
}

/// Every index of `shape` in C order.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &n in shape {
        out = out.into_iter().flat_map(|i| (0..n).map(move |j| [i.clone(), vec![j]].concat())).collect();
    }
    out
}

fn at(l: &Layout, i: &[usize]) -> isize {
    l.offset as isize + i.iter().zip(&l.strides).map(|(&i, &s)| i as isize * s).sum::<isize>()
}

/// One case: sorts `shape` of `d` along `axis`, keeping `k`, with the given
/// layouts, and checks every slice against the reference, the values'
/// bits and the positions; the destinations' buffers outside their views
/// unchanged.
#[allow(clippy::too_many_arguments)]
fn case(d: Dtype, shape: &[usize], axis: usize, k: usize, descending: bool, flip: bool, transpose: bool, seed: &mut u64) {
    case_into(d, shape, axis, k, descending, flip, transpose, false, seed)
}

/// [`case`], the destinations in C order where `plain` (the values and
/// positions of a slice one after the other, as x's where neither `flip`
/// nor `transpose`).
#[allow(clippy::too_many_arguments)]
fn case_into(d: Dtype, shape: &[usize], axis: usize, k: usize, descending: bool, flip: bool, transpose: bool, plain: bool, seed: &mut u64) {
    let size: usize = shape.iter().product();
    let mut kshape = shape.to_vec();
    kshape[axis] = k;
    let ksize: usize = kshape.iter().product();
    let (mut xb, mut vb, mut pb) = (Buf::new(size + 8, d), Buf::new(ksize + 8, d), Buf::new(ksize + 8, Dtype::Int64));
    let xl = layout(d, shape, flip, transpose);
    let vl = layout(d, &kshape, !flip && !plain, false);
    let pl = layout(Dtype::Int64, &kshape, flip && !plain, !transpose && !plain);
    let data = elements(d, size, seed);
    let idx = indices(shape);
    for (i, &b) in idx.iter().zip(&data) {
        put(xb.memory(), d, at(&xl, i), b);
    }
    let x = View::new(xl.clone(), xb.memory()).unwrap();
    let v = View::new(vl.clone(), vb.memory()).unwrap();
    let p = View::new(pl.clone(), pb.memory()).unwrap();
    let plan = plan(axis, descending, v, p, x).unwrap();
    plan.run().unwrap();
    // Each slice: the indices with axis `axis` at 0.
    for i in idx.iter().filter(|i| i[axis] == 0) {
        let slice: Vec<u128> = (0..shape[axis])
            .map(|j| {
                let mut ij = i.clone();
                ij[axis] = j;
                get(xb.memory(), d, at(&xl, &ij))
            })
            .collect();
        let want = reference(d, descending, &slice);
        for (j, w) in want.iter().take(k).enumerate() {
            let mut ij = i.clone();
            ij[axis] = j;
            let got = (get(vb.memory(), d, at(&vl, &ij)), get(pb.memory(), Dtype::Int64, at(&pl, &ij)) as i64);
            assert_eq!(got, *w, "{} shape {shape:?} axis {axis} k {k} desc {descending} flip {flip} at {ij:?}", d.name());
        }
    }
    // Every element of the destinations' buffers outside their views as
    // it was.
    let (mut fresh_v, mut fresh_p) = (Buf::new(ksize + 8, d), Buf::new(ksize + 8, Dtype::Int64));
    let kidx = indices(&kshape);
    for (b, fresh, l, dt) in [(&mut vb, &mut fresh_v, &vl, d), (&mut pb, &mut fresh_p, &pl, Dtype::Int64)] {
        let inside: std::collections::HashSet<isize> = kidx.iter().map(|i| at(l, i)).collect();
        for e in (0..(ksize + 8) as isize).filter(|e| !inside.contains(e)) {
            assert_eq!(get(b.memory(), dt, e), get(fresh.memory(), dt, e), "{} shape {shape:?} k {k}: element {e} outside the destination written", d.name());
        }
    }
}

#[test]
fn every_dtype_against_the_reference() {
    let mut seed = 1;
    for &d in Dtype::ALL.iter() {
        for (shape, axis) in [(vec![3, 37], 1), (vec![40, 2], 0), (vec![2, 3, 29], 2), (vec![77], 0)] {
            let n = shape[axis];
            for k in [n, n - 1, 2, 0] {
                for (descending, flip, transpose) in [(false, false, false), (true, true, false), (false, true, true), (true, false, true)] {
                    case(d, &shape, axis, k, descending, flip, transpose, &mut seed);
                }
            }
        }
    }
}

/// Slices of the lengths the network sorts, on AVX-512 (where the host has
/// it) and on the AVX2 baseline, against the reference: keys of 1 to 4
/// bytes, lengths from past insertion's to the network's most, a power of
/// 2 and not, whole and their first half (top-k); and slices whose
/// elements and destinations all lie one after the other (the network's
/// vectors of values and positions written out, then the tail past them),
/// from an offset, all of them, a half, one and none, on 1 and 3 threads.
#[test]
fn short_slices_by_the_network_and_by_radix_passes() {
    let mut seed = 6;
    for baseline in [true, false] {
        crate::core::isa::baseline_here(baseline);
        for d in [Dtype::Float32, Dtype::Int32, Dtype::Bfloat16, Dtype::Float16, Dtype::Uint8, Dtype::Int4, Dtype::Bool] {
            for n in [25, 64, 100, 1000, network::MOST] {
                case(d, &[2, n], 1, n, false, false, false, &mut seed);
                case(d, &[n, 2], 0, n / 2 + 1, true, true, true, &mut seed);
                for (k, threads) in [(n, 1), (n / 2 + 1, 3), (1, 1), (0, 3)] {
                    pool::set_threads(threads).unwrap();
                    case_into(d, &[3, n], 1, k, k % 2 == 0, false, false, true, &mut seed);
                }
            }
        }
    }
    crate::core::isa::baseline_here(false);
}

/// The orders of one slice by each path that can sort it: the network on
/// AVX-512 (where the host has it) and on AVX2 (where [`network::fits`]),
/// then the radix passes, as positions in order.
struct Paths<'a> {
    d: Dtype,
    slice: &'a [u128],
}

impl Visit for Paths<'_> {
    type Out = Vec<Vec<usize>>;
    fn visit<T: Word, K: Word, F: Fn(T) -> K + Copy + Send + Sync>(self, key: F) -> Vec<Vec<usize>> {
        let n = self.slice.len();
        let mut xb = Buf::new(n, self.d);
        self.slice.iter().enumerate().for_each(|(i, &b)| put(xb.memory(), self.d, i as isize, b));
        let bits = Bits::new(xb.memory(), self.d);
        // SAFETY: element i < n lies in the buffer, T of the dtype's width.
        let x: Vec<T> = (0..n).map(|i| unsafe { bits.read::<T>(i as isize) }).collect();
        let mut out = Vec::new();
        for baseline in [false, true] {
            crate::core::isa::baseline_here(baseline);
            if network::fits::<K>(n) {
                let mut w = vec![0; network::words(n)];
                network::sort(n, |i| x[i], key, &mut w);
                out.push(w[..n].iter().map(|&w| network::position(w)).collect());
            }
        }
        crate::core::isa::baseline_here(false);
        let (mut a, mut b) = (Scratch::<Item<T, u32>>::zeroed(n), Scratch::<Item<T, u32>>::zeroed(n));
        let runs = radix::sort(|i| x[i], &mut a, &mut b, 1, key);
        let mut r = vec![0; n];
        for (run, in_b) in runs {
            for j in run {
                r[j] = if in_b { b[j] } else { a[j] }.pos.get();
            }
        }
        out.push(r);
        out
    }
}

/// The network on either register (AVX-512's, where the host has it, and
/// AVX2's) against the radix passes and the reference order (the standard
/// library's stable sort under it, as insertion is too slow for so many
/// slices), position for position: float32 slices of every length from 0
/// to the network's most, ascending and descending, with NaNs, ±0 and
/// ties; keys of 1 to 4 bytes at lengths around powers of 2.
#[test]
fn the_network_on_either_register_and_radix_passes_agree() {
    let mut seed = 9;
    let lengths = |d: Dtype| -> Vec<usize> {
        if d == Dtype::Float32 { (0..=network::MOST).collect() } else { vec![0, 1, 3, 4, 5, 8, 9, 31, 33, 511, 1000, 1024, 1025, network::MOST - 1, network::MOST] }
    };
    for d in [Dtype::Float32, Dtype::Int32, Dtype::Uint32, Dtype::Bfloat16, Dtype::Int16, Dtype::Float8E4m3fn, Dtype::Int4, Dtype::Bool] {
        for n in lengths(d) {
            let slice = elements(d, n, &mut seed);
            for descending in [false, true] {
                let mut want: Vec<usize> = (0..n).collect();
                want.sort_by(|&a, &b| {
                    let c = cmp(value(d, slice[a]), value(d, slice[b]));
                    if descending { c.reverse() } else { c }
                });
                let paths = order::visit(d, descending, Paths { d, slice: &slice });
                let networks = if cfg!(all(target_arch = "x86_64", target_feature = "avx2")) { 2 } else { 0 };
                assert_eq!(paths.len(), networks + 1, "{} n {n}", d.name());
                for (i, got) in paths.iter().enumerate() {
                    assert_eq!(*got, want, "{} n {n} desc {descending} path {i}", d.name());
                }
            }
        }
    }
}

#[test]
fn empty_slices_and_no_slices() {
    let mut seed = 2;
    for d in [Dtype::Float32, Dtype::Int4, Dtype::Complex128] {
        case(d, &[4, 0], 1, 0, false, false, false, &mut seed);
        case(d, &[0, 5], 1, 3, true, true, false, &mut seed);
        case(d, &[3, 1], 1, 1, false, true, true, &mut seed);
    }
}

/// The values and positions of the first `k` of the sorted `n` elements
/// of `d` in `xb`, one slice one after the other.
fn first_k(xb: &mut Buf, d: Dtype, n: usize, k: usize, descending: bool) -> (Buf, Buf) {
    let (mut vb, mut pb) = (Buf::new(k, d), Buf::new(k, Dtype::Int64));
    let x = View::new(Layout::contiguous(d, &[n]), xb.memory()).unwrap();
    let v = View::new(Layout::contiguous(d, &[k]), vb.memory()).unwrap();
    let p = View::new(Layout::contiguous(Dtype::Int64, &[k]), pb.memory()).unwrap();
    plan(0, descending, v, p, x).unwrap().run().unwrap();
    (vb, pb)
}

/// Long slices against the standard library's stable sort under the
/// reference order (insertion is too slow there): the distributions by
/// the first digits, the top-k selection, on 1 and 3 threads.
#[test]
fn long_slices_on_one_and_three_threads() {
    let mut seed = 3;
    for (d, n) in [(Dtype::Float32, 150_000), (Dtype::Int64, 140_000), (Dtype::Float16, 100_000), (Dtype::Complex64, 70_000)] {
        let data = elements(d, n, &mut seed);
        // Few distinct top digits: floats in [1, 2) and their negatives.
        let narrow: Vec<u128> = match d {
            Dtype::Float32 => data.iter().map(|&b| (b & 0x807f_ffff) | 0x3f80_0000).collect(),
            _ => data.clone(),
        };
        for data in [data, narrow] {
            let mut xb = Buf::new(n, d);
            (0..n).for_each(|i| put(xb.memory(), d, i as isize, data[i]));
            for descending in [false, true] {
                let mut want: Vec<(u128, i64)> = data.iter().enumerate().map(|(i, &b)| (b, i as i64)).collect();
                want.sort_by(|a, b| {
                    let c = cmp(value(d, a.0), value(d, b.0));
                    if descending { c.reverse() } else { c }
                });
                for k in [n, 100, 7] {
                    let mut prev: Option<Vec<u128>> = None;
                    for threads in [1, 3] {
                        pool::set_threads(threads).unwrap();
                        let (mut vb, mut pb) = first_k(&mut xb, d, n, k, descending);
                        for (j, w) in want.iter().take(k).enumerate() {
                            let got = (get(vb.memory(), d, j as isize), get(pb.memory(), Dtype::Int64, j as isize) as i64);
                            assert_eq!(got, *w, "{} n {n} k {k} desc {descending} threads {threads} at {j}", d.name());
                        }
                        let bytes: Vec<u128> = vb.0.iter().chain(&pb.0).copied().collect();
                        assert!(prev.as_ref().is_none_or(|p| *p == bytes));
                        prev = Some(bytes);
                    }
                }
            }
        }
    }
}

/// Long slices by buckets, on one thread and on three (the count and the
/// distribution in chunks): 11, 22 and 32 bits live (of all 64 too for
/// int64); sorted on x itself, or into values and positions one after the
/// other (whose memory holds the items meanwhile: float32's in the
/// positions', int64's bits in the values' and positions in the
/// positions'), or positions reversed, or the first half of each slice
/// kept; two slices.
#[test]
fn buckets_in_place_and_into_positions() {
    let mut seed = 6;
    let (rows, n) = (2, 70_000);
    let shape = [rows, n];
    for (d, threads) in [(Dtype::Float32, 1), (Dtype::Float32, 3), (Dtype::Int64, 1), (Dtype::Int64, 3)] {
        pool::set_threads(threads).unwrap();
        for low in [0x7ff_u128, 0x3f_ffff, u128::MAX] {
            let data: Vec<u128> = elements(d, rows * n, &mut seed).into_iter().map(|b| if low == u128::MAX { b } else { (b & low) | 0x3f80_0000 }).collect();
            for (in_place, flip, k) in [(true, false, n), (false, false, n), (false, true, n), (false, false, n / 2)] {
                let (mut xb, mut vb, mut pb) = (Buf::new(rows * n, d), Buf::new(rows * k, d), Buf::new(rows * k + 3, Dtype::Int64));
                (0..rows * n).for_each(|i| put(xb.memory(), d, i as isize, data[i]));
                let x = View::new(Layout::contiguous(d, &shape), xb.memory()).unwrap();
                let v = if in_place { x.clone() } else { View::new(Layout::contiguous(d, &[rows, k]), vb.memory()).unwrap() };
                let pl = layout(Dtype::Int64, &[rows, k], flip, false);
                plan(1, false, v, View::new(pl.clone(), pb.memory()).unwrap(), x).unwrap().run().unwrap();
                for r in 0..rows {
                    let mut want: Vec<(u128, i64)> = (0..n).map(|i| (data[r * n + i], i as i64)).collect();
                    want.sort_by(|a, b| cmp(value(d, a.0), value(d, b.0)));
                    for (j, w) in want.iter().take(k).enumerate() {
                        let got = if in_place { get(xb.memory(), d, (r * n + j) as isize) } else { get(vb.memory(), d, (r * k + j) as isize) };
                        let got = (got, get(pb.memory(), Dtype::Int64, at(&pl, &[r, j])) as i64);
                        assert_eq!(got, *w, "threads {threads} low {low:x} in place {in_place} flip {flip} k {k} row {r} at {j}");
                    }
                }
            }
        }
    }
}

/// Int64 slices around the length from which `bucket::sort` takes them,
/// against the standard library's stable sort, on 1 and 3 threads, whole
/// and their first half: keys of every bit, so that buckets are finished
/// by top digits; two high values over random low words, so that two bins
/// each far past a bucket's cap are finished by nested top digits; five
/// high values over random low halfwords, so that a bucket's items share
/// the top bits its first passes sort by (one run, sorted on its own by
/// the bits below); small
/// numbers, which share their top bits (found by the sample of keys the
/// first count's bins come from), and small numbers but one far larger
/// or negative at a place the sample skips (so that the count misses its
/// bins and counts again); few distinct keys (buckets of one key); and
/// one key.
#[test]
fn buckets_by_every_finish() {
    let mut seed = 8;
    let d = Dtype::Int64;
    for n in [radix::SMALL, radix::SMALL + 1, 5 * radix::SMALL] {
        let families: [&dyn Fn(u64) -> u64; 6] = [
            &|r| r,
            &|r| (r >> 63) << 40 | (r & 0xffff_ffff),
            &|r| (r % 5) << 50 | (r & 0xffff),
            &|r| r % 1000,
            &|r| (r % 5).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            &|_| 42,
        ];
        let mut sets: Vec<Vec<u64>> = families.iter().map(|f| (0..n).map(|_| f(splitmix(&mut seed))).collect()).collect();
        for outlier in [1 << 50, -3i64 as u64] {
            let mut small: Vec<u64> = (0..n).map(|_| splitmix(&mut seed) % 1000).collect();
            small[1] = outlier;
            sets.push(small);
        }
        for data in sets {
            let mut xb = Buf::new(n, d);
            (0..n).for_each(|i| put(xb.memory(), d, i as isize, data[i] as u128));
            for descending in [false, true] {
                let mut want: Vec<(u64, i64)> = data.iter().enumerate().map(|(i, &b)| (b, i as i64)).collect();
                want.sort_by(|a, b| {
                    let c = (a.0 as i64).cmp(&(b.0 as i64));
                    if descending { c.reverse() } else { c }
                });
                for k in [n, n / 2] {
                    for threads in [1, 3] {
                        pool::set_threads(threads).unwrap();
                        let (mut vb, mut pb) = first_k(&mut xb, d, n, k, descending);
                        for (j, w) in want.iter().take(k).enumerate() {
                            let got = (get(vb.memory(), d, j as isize) as u64, get(pb.memory(), Dtype::Int64, j as isize) as i64);
                            assert_eq!(got, *w, "n {n} k {k} desc {descending} threads {threads} at {j}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn many_slices_on_three_threads() {
    let mut seed = 4;
    pool::set_threads(3).unwrap();
    for d in [Dtype::Bit, Dtype::Int4, Dtype::Float8E4m3fn, Dtype::Float64] {
        case(d, &[50, 33], 1, 33, false, true, false, &mut seed);
        case(d, &[50, 33], 1, 2, true, false, true, &mut seed);
    }
}

#[test]
fn in_place_on_x_itself() {
    let mut seed = 5;
    let d = Dtype::Float32;
    let shape = [4, 30];
    let data = elements(d, 120, &mut seed);
    let mut xb = Buf::new(120, d);
    let mut pb = Buf::new(120, Dtype::Int64);
    let l = layout(d, &shape, true, true);
    let idx = indices(&shape);
    idx.iter().zip(&data).for_each(|(i, &b)| put(xb.memory(), d, at(&l, i), b));
    let x = View::new(l.clone(), xb.memory()).unwrap();
    let p = View::new(Layout::contiguous(Dtype::Int64, &shape), pb.memory()).unwrap();
    plan(1, false, x.clone(), p, x).unwrap().run().unwrap();
    for r in 0..4 {
        let slice: Vec<u128> = (0..30).map(|j| data[r * 30 + j]).collect();
        for (j, w) in reference(d, false, &slice).iter().enumerate() {
            assert_eq!(get(xb.memory(), d, at(&l, &[r, j])), w.0);
            assert_eq!(get(pb.memory(), Dtype::Int64, (r * 30 + j) as isize) as i64, w.1);
        }
    }
}

#[test]
fn refusals_name_the_fault_and_write_nothing() {
    let d = Dtype::Float32;
    let mut xb = Buf::new(64, d);
    let mut vb = Buf::new(64, d);
    let mut pb = Buf::new(64, Dtype::Int64);
    let view = |m: Memory, d: Dtype, shape: &[usize]| View::new(Layout::contiguous(d, shape), m).unwrap();
    let (xm, vm, pm) = (xb.memory(), vb.memory(), pb.memory());
    let x = view(xm, d, &[4, 8]);
    let v = view(vm, d, &[4, 8]);
    let p = view(pm, Dtype::Int64, &[4, 8]);
    let bad: Vec<(Result<Plan, String>, &str)> = vec![
        (plan(2, false, v.clone(), p.clone(), x.clone()), "axis 2"),
        (plan(1, false, view(vm, Dtype::Float64, &[4, 8]), p.clone(), x.clone()), "values are float64"),
        (plan(1, false, v.clone(), view(pm, Dtype::Int32, &[4, 8]), x.clone()), "not int64"),
        (plan(1, false, v.clone(), view(pm, Dtype::Int64, &[4, 7]), x.clone()), "positions [4, 7]"),
        (plan(1, false, view(vm, d, &[4, 9]), view(pm, Dtype::Int64, &[4, 9]), x.clone()), "no longer"),
        (plan(1, false, view(vm, d, &[3, 8]), view(pm, Dtype::Int64, &[3, 8]), x.clone()), "no longer"),
        (plan(1, false, v.clone(), view(vm, Dtype::Int64, &[4, 8]), x.clone()), "values and positions overlap"),
        (plan(1, false, v.clone(), view(xm, Dtype::Int64, &[4, 8]), x.clone()), "positions overlap x"),
        (plan(1, false, view(xm, d, &[4, 4]), view(pm, Dtype::Int64, &[4, 4]), x.clone()), "other than as x itself"),
        (
            plan(1, false, View::new(Layout { strides: vec![0, 1], ..Layout::contiguous(d, &[4, 8]) }, vm).unwrap(), p.clone(), x.clone()),
            "several indices",
        ),
    ];
    for (r, want) in bad {
        let e = r.err().expect("refused");
        assert!(e.contains(want), "{e:?} lacks {want:?}");
    }
    assert!(vb.0.iter().chain(&pb.0).all(|&w| w == 0x5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a));
}

#[test]
fn sub_byte_elements_pack_from_the_low_bits() {
    let mut b = Buf::new(16, Dtype::Bit);
    let m = b.memory();
    let bytes = m.base;
    // SAFETY: byte 0 lies in the buffer.
    unsafe { *bytes = 0b1010_0110 };
    let bits: Vec<u128> = (0..8).map(|e| get(m, Dtype::Bit, e)).collect();
    assert_eq!(bits, [0, 1, 1, 0, 0, 1, 0, 1]);
    assert_eq!([get(m, Dtype::Int4, 0), get(m, Dtype::Int4, 1)], [0b0110, 0b1010]);
    put(m, Dtype::Int4, 1, 0b0011);
    put(m, Dtype::Bit, 0, 1);
    // SAFETY: as above.
    assert_eq!(unsafe { *bytes }, 0b0011_0111);
}

/// A bucket's cap: half of L2 in its two buffers for a slice that fills at
/// most as many buckets as half of L1 holds lines, more for a longer one,
/// up to filling L2, whatever the item's width and the caches' sizes.
#[test]
fn bucket_caps_grow_with_the_slice_within_l2() {
    let zen3 = crate::core::caches::Sizes { l1: 32 << 10, l2: 512 << 10, l3: 32 << 20 };
    // 256 streams: 1M float32 elements make 123 buckets of half of L2;
    // 10M would make 1221, so they grow, up to filling L2 (32768 items of
    // 8 bytes, 16384 of 16); 3M grow to 256 buckets' worth.
    assert_eq!(bucket::bucket_cap(1_000_000, 8, zen3), 8192);
    assert_eq!(bucket::bucket_cap(10_000_000, 8, zen3), 32768);
    assert_eq!(bucket::bucket_cap(10_000_000, 16, zen3), 16384);
    assert_eq!(bucket::bucket_cap(3_000_000, 8, zen3), 11719);
    for (l1, l2) in [(32 << 10, 256 << 10), (48 << 10, 2 << 20), (64 << 10, 1 << 20)] {
        let c = crate::core::caches::Sizes { l1, l2, l3: 8 << 20 };
        for item in [8, 16] {
            let mut last = 0;
            for n in [70_000, 1 << 20, 5 << 20, 1 << 24, 1 << 30] {
                let cap = bucket::bucket_cap(n, item, c);
                assert!(cap >= l2 / 64 && 2 * item * cap <= l2 && cap >= last, "l1 {l1} l2 {l2} item {item} n {n}: {cap}");
                last = cap;
            }
        }
    }
}

/// The top bits a large bucket is first sorted by: three more than count
/// its items, rounded up to even, in two digits whose values' lines the
/// first-level cache holds, at most the two digits of the passes in cache,
/// never none, whatever the cache reports.
#[test]
fn top_bits_follow_the_items_within_l1() {
    assert_eq!(bucket::top_bits(12, 48 << 10), 16);
    assert_eq!(bucket::top_bits(15, 48 << 10), 18);
    assert_eq!(bucket::top_bits(16, 32 << 10), 18);
    assert_eq!(bucket::top_bits(15, 4 << 10), 12);
    assert_eq!(bucket::top_bits(20, 1 << 20), 22);
    assert_eq!(bucket::top_bits(15, 0), 8);
    for l in 12..=32 {
        for l1 in [0, 64, 16 << 10, 32 << 10, 48 << 10, 1 << 30] {
            let b = bucket::top_bits(l, l1);
            assert!((8..=22).contains(&b) && b.is_multiple_of(2) && (l1 < 64 << 9 || b >= (l + 1).min(18)), "l {l} l1 {l1}: {b}");
        }
    }
}

/// Long slices by buckets read through strides: the rows of a buffer
/// transposed and reversed (each slice's elements two apart, going down),
/// of float32, int64, float16 and int4 (two elements a byte), against the
/// standard library's stable sort, on 1 and 3 threads, the same bits on
/// both.
#[test]
fn buckets_read_through_strides() {
    let mut seed = 9;
    let (rows, n) = (2, 70_000);
    for d in [Dtype::Float32, Dtype::Int64, Dtype::Float16, Dtype::Int4] {
        let data = elements(d, rows * n, &mut seed);
        let xl = layout(d, &[rows, n], true, true);
        let mut xb = Buf::new(rows * n + 3, d);
        for (e, &b) in data.iter().enumerate() {
            put(xb.memory(), d, at(&xl, &[e / n, e % n]), b);
        }
        let mut prev: Option<Vec<u128>> = None;
        for threads in [1, 3] {
            pool::set_threads(threads).unwrap();
            let (mut vb, mut pb) = (Buf::new(rows * n, d), Buf::new(rows * n, Dtype::Int64));
            let x = View::new(xl.clone(), xb.memory()).unwrap();
            let v = View::new(Layout::contiguous(d, &[rows, n]), vb.memory()).unwrap();
            let p = View::new(Layout::contiguous(Dtype::Int64, &[rows, n]), pb.memory()).unwrap();
            plan(1, false, v, p, x).unwrap().run().unwrap();
            for r in 0..rows {
                let mut want: Vec<(u128, i64)> = (0..n).map(|i| (data[r * n + i], i as i64)).collect();
                want.sort_by(|a, b| cmp(value(d, a.0), value(d, b.0)));
                for (j, w) in want.iter().enumerate() {
                    let e = (r * n + j) as isize;
                    let got = (get(vb.memory(), d, e), get(pb.memory(), Dtype::Int64, e) as i64);
                    assert_eq!(got, *w, "{} threads {threads} row {r} at {j}", d.name());
                }
            }
            let bytes: Vec<u128> = vb.0.iter().chain(&pb.0).copied().collect();
            assert!(prev.as_ref().is_none_or(|p| *p == bytes), "{}: threads change the bits", d.name());
            prev = Some(bytes);
        }
    }
}

/// The network's `between` is called for each part in turn, once each,
/// whatever the slice's length (where the network runs) and on either
/// instruction set (AVX2's first runs are of two vectors, AVX-512's of
/// one), and the words are those of `network::sort`.
#[test]
fn network_calls_between_for_each_part() {
    let mut seed = 10;
    for baseline in [false, true] {
        crate::core::isa::baseline_here(baseline);
        for n in [1, 7, 8, 9, 16, 33, 100, 1000, 2048] {
            if !network::fits::<u32>(n) {
                continue;
            }
            let x: Vec<u32> = (0..n).map(|_| splitmix(&mut seed) as u32).collect();
            let (mut w, mut w2) = (vec![0u64; network::words(n)], vec![0u64; network::words(n)]);
            let mut calls = vec![];
            network::sort_between(n, |i| x[i], |b: u32| b, &mut w, |part, parts| calls.push((part, parts)));
            network::sort(n, |i| x[i], |b: u32| b, &mut w2);
            let parts = calls.first().map_or(0, |c| c.1);
            assert!(parts >= 1 && calls == (0..parts).map(|p| (p, parts)).collect::<Vec<_>>(), "n {n}, baseline {baseline}: {calls:?}");
            assert_eq!(w, w2, "n {n}, baseline {baseline}");
        }
    }
    crate::core::isa::baseline_here(false);
}
