//! Tests of `reduce` and `scan` against the lane-order core applied to terms
//! gathered by hand, on layouts where the reduced axes lead, trail or
//! interleave, under several thread counts, with programs, padded loads,
//! several reductions, and destinations that alias the operand.

use super::*;
use crate::core::call::Call;
use crate::loops::pad::Pad;

struct Buf(Vec<u64>);

impl Buf {
    fn new(bytes: usize) -> Buf {
        Buf(vec![0; bytes.div_ceil(8) + 1])
    }
    fn memory(&mut self) -> Memory {
        Memory { base: self.0.as_mut_ptr() as *mut u8, bytes: self.0.len() * 8 }
    }
}

fn f32s(v: &View) -> Vec<f32> {
    // C order of the view's shape.
    let n = v.layout.size();
    let mut out = Buf::new(4 * n);
    let dst = View::new(Layout::contiguous(Dtype::Float32, &v.layout.shape), out.memory()).unwrap();
    let id = Prog::new(vec![v.layout.dtype], vec![Node::Load(0), Node::Cast(Dtype::Float32, 0)], vec![1]).unwrap();
    map::plan(id, vec![dst.clone()], vec![v.clone()]).unwrap().run().unwrap();
    (0..n).map(|i| unsafe { (dst.memory.base as *const f32).add(i).read() }).collect()
}

fn array(buf: &mut Buf, shape: &[usize], strides: &[isize], offset: usize, values: impl Fn(usize) -> f32) -> View {
    let v = View::new(Layout { dtype: Dtype::Float32, shape: shape.to_vec(), strides: strides.to_vec(), offset }, buf.memory()).unwrap();
    let n = v.layout.size();
    let mut src = Buf::new(4 * n);
    let s = View::new(Layout::contiguous(Dtype::Float32, shape), src.memory()).unwrap();
    for i in 0..n {
        unsafe { (s.memory.base as *mut f32).add(i).write(values(i)) };
    }
    let id = Prog::new(vec![Dtype::Float32], vec![Node::Load(0)], vec![0]).unwrap();
    map::plan(id, vec![v.clone()], vec![s]).unwrap().run().unwrap();
    v
}

fn value(i: usize) -> f32 {
    let x = (i as f32 * 0.618_034).fract();
    (x - 0.5) * 10f32.powi((i % 7) as i32 - 3)
}

/// Terms of one output by hand: C order over the reduced axes of `values`
/// (C order of the loop).
fn gather(values: &[f32], shape: &[usize], axes: &[usize], out_index: &[usize]) -> Vec<f32> {
    let r = shape.len();
    let reduced: Vec<usize> = axes.to_vec();
    let len: usize = reduced.iter().map(|&a| shape[a]).product();
    (0..len)
        .map(|t| {
            let mut idx = vec![0; r];
            let mut rest = t;
            for &a in reduced.iter().rev() {
                idx[a] = rest % shape[a];
                rest /= shape[a];
            }
            let mut o = out_index.iter();
            for (a, slot) in idx.iter_mut().enumerate() {
                if !reduced.contains(&a) {
                    *slot = *o.next().unwrap();
                }
            }
            let flat = idx.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i);
            values[flat]
        })
        .collect()
}

fn out_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let total: usize = shape.iter().product();
    (0..total)
        .map(|mut f| {
            let mut idx = vec![0; shape.len()];
            for a in (0..shape.len()).rev() {
                idx[a] = f % shape[a];
                f /= shape[a];
            }
            idx
        })
        .collect()
}

fn load_prog() -> Prog {
    Prog::new(vec![Dtype::Float32], vec![Node::Load(0)], vec![0]).unwrap()
}

#[test]
fn sums_along_any_axes_match_lane_order_of_the_gathered_terms() {
    // 277,500 elements: past the size from which a call splits over threads.
    let shape = [37usize, 5, 1500];
    assert!(shape.iter().product::<usize>() >= PARALLEL_MIN);
    let c = Layout::contiguous(Dtype::Float32, &shape).strides;
    let layouts: Vec<(Vec<isize>, usize)> = vec![
        (c.clone(), 0),
        (vec![1, 37, 185], 0),                      // transposed
        (vec![-c[0], c[1], c[2]], (shape[0] - 1) * c[0] as usize), // reversed axis 0
        // Every other element (a slice's step): read where they lie.
        (vec![2 * c[0], 2 * c[1], 2], 1),
        (vec![2 * c[0], 2 * c[1], -2], 2 * (shape[2] - 1)), // and reversed
        // Rows apart, each a run; steps of 3 and 4; a reversed step of 5.
        (vec![2 * c[0], 2 * c[1], 1], 3),
        (vec![3 * c[0], 3 * c[1], 3], 0),
        (vec![4 * c[0], 4 * c[1], 4], 1),
        (vec![5 * c[0], 5 * c[1], -5], 5 * (shape[2] - 1)),
    ];
    for axes in [vec![0], vec![1], vec![2], vec![0, 2], vec![0, 1, 2], vec![]] {
        for (strides, offset) in &layouts {
            let mut b = Buf::new(20 * shape.iter().product::<usize>() + 32);
            let x = array(&mut b, &shape, strides, *offset, value);
            let values = f32s(&x);
            let out_shape = reduced_shape(&shape, &axes);
            for threads in [1, 3] {
                pool::set_threads(threads).unwrap();
                let mut ob = Buf::new(4 * out_shape.iter().product::<usize>());
                let dst = View::new(Layout::contiguous(Dtype::Float32, &out_shape), ob.memory()).unwrap();
                let p = plan_reduce(load_prog(), shape.to_vec(), axes.clone(), vec![(Reduction::Monoid(Monoidal::Sum), 0)], vec![dst.clone()], vec![Load::Plain(x.clone())]).unwrap();
                p.run().unwrap();
                let got = f32s(&dst);
                for (o, idx) in out_indices(&out_shape).iter().enumerate() {
                    let want = core::reduce(Sum, &gather(&values, &shape, &axes, idx)[..], false);
                    assert_eq!(got[o].to_bits(), want.to_bits(), "axes {axes:?} strides {strides:?} output {idx:?}, {threads} threads");
                }
            }
        }
    }
}

/// Each monoid of int64 and float64 views that step by two, every output's
/// terms one run of every other element (read in place) or rows apart
/// (copied), against the core's reduction of the terms gathered by hand:
/// memory that ends at the view's last term, NaN, infinities, both zeros
/// and subnormals among the terms and the elements between them, 1 and 3
/// threads.
#[test]
fn views_of_every_other_element_reduce_to_the_bits_of_their_terms() {
    fn check<T: Carried>(make: impl Fn(usize) -> T, bits: impl Fn(T) -> u64) {
        // (shape, strides, offset, reduced axes)
        let cases: [(&[usize], &[isize], usize, &[usize]); 7] = [
            (&[3, 1500], &[3000, 2], 0, &[0, 1]), // one run
            (&[3, 1500], &[3000, 2], 1, &[1]),    // a run an output
            (&[3, 1500], &[3003, 2], 0, &[0, 1]), // rows apart
            (&[2, 2100], &[1, 4], 0, &[1]),       // interleaved rows
            (&[1, 17], &[34, 2], 3, &[0, 1]),     // one row of 16 and a term
            (&[5], &[2], 0, &[0]),                // fewer terms than lanes
            (&[0, 4], &[8, 2], 0, &[1]),          // no output
        ];
        for (shape, strides, offset, axes) in cases {
            let last = offset + shape.iter().zip(strides).map(|(&n, &s)| n.saturating_sub(1) * s as usize).sum::<usize>();
            let mut data: Vec<T> = (0..=last).map(&make).collect();
            let memory = Memory { base: data.as_mut_ptr().cast(), bytes: std::mem::size_of_val(&data[..]) };
            let x = View::new(Layout { dtype: T::DTYPE, shape: shape.to_vec(), strides: strides.to_vec(), offset }, memory).unwrap();
            let out_shape = reduced_shape(shape, axes);
            let load = Prog::new(vec![T::DTYPE], vec![Node::Load(0)], vec![0]).unwrap();
            for m in [Monoidal::Sum, Monoidal::Prod, Monoidal::Max, Monoidal::Min] {
                for threads in [1, 3] {
                    pool::set_threads(threads).unwrap();
                    let mut out = vec![T::default(); out_shape.iter().product()];
                    let dst_memory = Memory { base: out.as_mut_ptr().cast(), bytes: std::mem::size_of_val(&out[..]) };
                    let dst = View::new(Layout::contiguous(T::DTYPE, &out_shape), dst_memory).unwrap();
                    let p = plan_reduce(load.clone(), shape.to_vec(), axes.to_vec(), vec![(Reduction::Monoid(m), 0)], vec![dst], vec![Load::Plain(x.clone())]).unwrap();
                    p.run().unwrap();
                    for (o, idx) in out_indices(&out_shape).iter().enumerate() {
                        let len: usize = axes.iter().map(|&a| shape[a]).product();
                        let terms: Vec<T> = (0..len)
                            .map(|t| {
                                let (mut at, mut rest, mut outer) = (offset as isize, t, idx.iter().rev());
                                for a in (0..shape.len()).rev() {
                                    let i = if axes.contains(&a) { rest % shape[a] } else { *outer.next().unwrap() };
                                    rest /= if axes.contains(&a) { shape[a] } else { 1 };
                                    at += i as isize * strides[a];
                                }
                                data[at as usize]
                            })
                            .collect();
                        let want = T::monoid(m, &terms[..], false);
                        assert_eq!(bits(out[o]), bits(want), "{m:?} of {} {shape:?} strides {strides:?} offset {offset} axes {axes:?} output {idx:?}, {threads} threads", T::DTYPE.name());
                    }
                }
            }
        }
    }
    let float = |i: usize| match i % 97 {
        5 => f64::NAN,
        11 => f64::INFINITY,
        13 => -0.0,
        17 => 0.0,
        19 => 3e-310,
        23 => -5e-324,
        _ => ((i as f64 * 0.618_033_988_7).fract() - 0.5) * 4.0,
    };
    // A NaN result's sign and payload are unspecified (the spec's first
    // section): any NaN is the NaN.
    let bits = |x: f64| if x.is_nan() { f64::NAN.to_bits() } else { x.to_bits() };
    check::<f64>(float, bits);
    // Without NaN and infinities too, so that the sums and products keep
    // their rounding visible.
    check::<f64>(|i| if i % 97 < 12 { 1.0 + i as f64 * 1e-9 } else { float(i) }, bits);
    check::<i64>(|i| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64 >> (i % 61), |x| x as u64);
}

#[test]
fn sums_of_a_broadcast_operand_read_its_repeated_terms() {
    // A (37, 5) array read as (37, 5, 1500), axis 2 of step 0.
    let shape = [37usize, 5, 1500];
    let mut b = Buf::new(4 * 37 * 5);
    let small = array(&mut b, &[37, 5], &[5, 1], 0, value);
    let x = View::new(Layout { dtype: Dtype::Float32, shape: shape.to_vec(), strides: vec![5, 1, 0], offset: 0 }, small.memory).unwrap();
    let values = f32s(&x);
    for axes in [vec![2], vec![0, 2], vec![0, 1, 2]] {
        let out_shape = reduced_shape(&shape, &axes);
        for threads in [1, 3] {
            pool::set_threads(threads).unwrap();
            let mut ob = Buf::new(4 * out_shape.iter().product::<usize>());
            let dst = View::new(Layout::contiguous(Dtype::Float32, &out_shape), ob.memory()).unwrap();
            let sum = vec![(Reduction::Monoid(Monoidal::Sum), 0)];
            plan_reduce(load_prog(), shape.to_vec(), axes.clone(), sum, vec![dst.clone()], vec![Load::Plain(x.clone())]).unwrap().run().unwrap();
            let got = f32s(&dst);
            for (o, idx) in out_indices(&out_shape).iter().enumerate() {
                let want = core::reduce(Sum, &gather(&values, &shape, &axes, idx)[..], false);
                assert_eq!(got[o].to_bits(), want.to_bits(), "axes {axes:?} output {idx:?}, {threads} threads");
            }
        }
    }
}

#[test]
fn several_reductions_programs_and_narrow_destinations() {
    let shape = [6usize, 1500];
    let mut b = Buf::new(4 * 9000);
    let x = array(&mut b, &shape, &[1500, 1], 0, value);
    let values = f32s(&x);
    // out 0 = x * x (float32), out 1 = x (float32)
    let p = Prog::new(vec![Dtype::Float32], vec![Node::Load(0), Node::Binary(crate::loops::prog::Binary::Mul, 0, 0)], vec![1, 0]).unwrap();
    let rs = vec![
        (Reduction::Monoid(Monoidal::Max), 0),
        (Reduction::Arg(Monoidal::Min), 0),
        (Reduction::Moments, 0),
        (Reduction::Logsumexp, 0),
        (Reduction::Monoid(Monoidal::Sum), 1),
    ];
    let mut bufs: Vec<Buf> = (0..7).map(|_| Buf::new(64)).collect();
    let dtypes = [Dtype::Bfloat16, Dtype::Float32, Dtype::Int64, Dtype::Float64, Dtype::Float32, Dtype::Float32, Dtype::Float64];
    let dsts: Vec<View> = bufs.iter_mut().zip(dtypes).map(|(b, d)| View::new(Layout::contiguous(d, &[6]), b.memory()).unwrap()).collect();
    plan_reduce(p, shape.to_vec(), vec![1], rs, dsts.clone(), vec![Load::Plain(x)]).unwrap().run().unwrap();
    let got: Vec<Vec<f32>> = dsts.iter().map(f32s).collect();
    for o in 0..6 {
        let t: Vec<f32> = values[o * 1500..(o + 1) * 1500].to_vec();
        let sq: Vec<f32> = t.iter().map(|v| v * v).collect();
        let nw = crate::core::narrow::Narrow::Bfloat16;
        assert_eq!(got[0][o], nw.round_from_f32(core::reduce(Max, &sq[..], false)));
        let (mn, pos) = core::arg(Min, &sq[..], false).unwrap();
        assert_eq!((got[1][o], got[2][o]), (mn, pos as f32));
        let (mean, var) = core::moments(&sq[..], false);
        assert_eq!((got[3][o], got[4][o]), (mean, var));
        assert_eq!(got[5][o], core::logsumexp(&sq[..], false));
        assert_eq!(got[6][o], core::reduce(Sum, &t[..], false) as f64 as f32);
    }
}

#[test]
fn whole_reductions_into_one_element_destinations_of_any_dtype_and_offset() {
    // A reduction to one value stores it without planning a map: its cast
    // into each destination's dtype, at each destination's offset (0-d
    // views into the middle of their buffers), the neighbours left alone.
    let shape = [3usize, 700];
    let mut b = Buf::new(4 * 2100);
    let x = array(&mut b, &shape, &[700, 1], 0, value);
    let values = f32s(&x);
    let rs = vec![
        (Reduction::Monoid(Monoidal::Max), 0),
        (Reduction::Arg(Monoidal::Min), 0),
        (Reduction::Monoid(Monoidal::Sum), 0),
        (Reduction::Monoid(Monoidal::Sum), 0),
    ];
    let dtypes = [Dtype::Bfloat16, Dtype::Float32, Dtype::Int64, Dtype::Float64, Dtype::Int4];
    let mut bufs: Vec<Buf> = dtypes.iter().map(|_| Buf::new(64)).collect();
    for b in &mut bufs {
        b.0.iter_mut().for_each(|w| *w = 0xA5A5_A5A5_A5A5_A5A5);
    }
    let at = |i: usize| 3 + i;
    let dsts: Vec<View> = (bufs.iter_mut().zip(dtypes).enumerate())
        .map(|(i, (b, d))| View::new(Layout { dtype: d, shape: vec![], strides: vec![], offset: at(i) }, b.memory()).unwrap())
        .collect();
    plan_reduce(load_prog(), shape.to_vec(), vec![0, 1], rs, dsts.clone(), vec![Load::Plain(x)]).unwrap().run().unwrap();
    let got: Vec<f32> = dsts.iter().map(|v| f32s(v)[0]).collect();
    let nw = crate::core::narrow::Narrow::Bfloat16;
    assert_eq!(got[0], nw.round_from_f32(core::reduce(Max, &values[..], false)));
    let (mn, pos) = core::arg(Min, &values[..], false).unwrap();
    assert_eq!((got[1], got[2]), (mn, pos as f32));
    let sum = core::reduce(Sum, &values[..], false);
    assert_eq!(got[3], sum as f64 as f32);
    // Into int4: truncated toward zero, saturated at -8 and 7.
    assert_eq!(got[4], sum.trunc().clamp(-8.0, 7.0));
    // Every byte but the element's is as it was.
    for (i, (b, d)) in bufs.iter().zip(dtypes).enumerate() {
        let bytes: Vec<u8> = b.0.iter().flat_map(|w| w.to_le_bytes()).collect();
        let bits = d.bits();
        let (lo, hi) = (at(i) * bits / 8, (at(i) * bits + bits).div_ceil(8));
        for (j, &byte) in bytes.iter().enumerate().filter(|&(j, _)| j < lo || j >= hi) {
            assert_eq!(byte, 0xA5, "{} destination, byte {j}", d.name());
        }
        if bits == 4 {
            // The other nibble of the element's byte (element i is the
            // high nibble of byte i / 2 where i is odd).
            let other = if at(i) % 2 == 1 { bytes[lo] & 15 } else { bytes[lo] >> 4 };
            assert_eq!(other, if at(i) % 2 == 1 { 0x5 } else { 0xA }, "the int4 element's neighbour");
        }
    }
}

#[test]
fn axis_reductions_into_destinations_of_any_layout_and_offset() {
    // Several outputs of the destination's own dtype are copied into a
    // C-contiguous destination whole, at its offset; any other layout, and
    // another dtype, takes a map: each output lands at its own index, and
    // no byte outside the destination's elements changes.
    let shape = [4usize, 7, 5];
    let mut b = Buf::new(4 * 140);
    let x = array(&mut b, &shape, &[35, 5, 1], 0, value);
    let values = f32s(&x);
    let out_shape = [4usize, 5];
    let layouts: Vec<(Dtype, Vec<isize>, usize)> = vec![
        (Dtype::Float32, vec![5, 1], 0),
        (Dtype::Float32, vec![5, 1], 3),    // C order at an offset
        (Dtype::Float32, vec![1, 4], 2),    // transposed
        (Dtype::Float32, vec![-5, -1], 19), // both axes reversed
        (Dtype::Float32, vec![10, 2], 1),   // every other element
        (Dtype::Float64, vec![5, 1], 1),    // another dtype, C order
    ];
    for (d, strides, offset) in layouts {
        let mut ob = Buf::new(8 * 48);
        ob.0.iter_mut().for_each(|w| *w = 0xA5A5_A5A5_A5A5_A5A5);
        let dst = View::new(Layout { dtype: d, shape: out_shape.to_vec(), strides: strides.clone(), offset }, ob.memory()).unwrap();
        let rs = vec![(Reduction::Monoid(Monoidal::Sum), 0)];
        plan_reduce(load_prog(), shape.to_vec(), vec![1], rs, vec![dst.clone()], vec![Load::Plain(x.clone())]).unwrap().run().unwrap();
        let got = f32s(&dst);
        let mut written = vec![false; ob.0.len() * 8];
        for (o, idx) in out_indices(&out_shape).iter().enumerate() {
            let want = core::reduce(Sum, &gather(&values, &shape, &[1], idx)[..], false);
            assert_eq!(got[o].to_bits(), want.to_bits(), "{} strides {strides:?} offset {offset} output {idx:?}", d.name());
            let at = (offset as isize + idx[0] as isize * strides[0] + idx[1] as isize * strides[1]) as usize;
            written[at * d.bytes()..(at + 1) * d.bytes()].iter_mut().for_each(|w| *w = true);
        }
        let bytes: Vec<u8> = ob.0.iter().flat_map(|w| w.to_le_bytes()).collect();
        for (j, &byte) in bytes.iter().enumerate().filter(|&(j, _)| !written[j]) {
            assert_eq!(byte, 0xA5, "{} strides {strides:?} offset {offset}: byte {j}", d.name());
        }
    }
}

#[test]
fn a_destination_identical_to_the_operand_reads_a_copy() {
    // Sum of each row of x written over x's first column.
    let mut b = Buf::new(4 * 40);
    let x = array(&mut b, &[4, 10], &[10, 1], 0, |i| i as f32);
    let col = View::new(Layout { dtype: Dtype::Float32, shape: vec![4], strides: vec![10], offset: 0 }, x.memory).unwrap();
    plan_reduce(load_prog(), vec![4, 10], vec![1], vec![(Reduction::Monoid(Monoidal::Sum), 0)], vec![col.clone()], vec![Load::Plain(x)]).unwrap().run().unwrap();
    assert_eq!(f32s(&col), vec![45.0, 145.0, 245.0, 345.0]);
}

#[test]
fn scans_resume_from_a_chunk_boundary_with_its_carry() {
    let n = 3 * core::CHUNK + 77;
    let mut b = Buf::new(4 * 2 * n);
    let x = array(&mut b, &[2, n], &[n as isize, 1], 0, value);
    let mut ob = Buf::new(4 * 2 * n);
    let whole = View::new(Layout::contiguous(Dtype::Float32, &[2, n]), ob.memory()).unwrap();
    let sum = (Reduction::Monoid(Monoidal::Sum), 0);
    plan_scan(load_prog(), vec![2, n], 1, sum, None, vec![whole.clone()], vec![Load::Plain(x.clone())]).unwrap().run().unwrap();
    let all = f32s(&whole);
    // Resume at chunk 2 with the carry into it: the sum of chunks 0 and 1 in
    // the scan's chunk order.
    let from = 2 * core::CHUNK;
    let values = f32s(&x);
    let mut cb = Buf::new(8);
    let carry = View::new(Layout::contiguous(Dtype::Float32, &[2]), cb.memory()).unwrap();
    for row in 0..2 {
        let mut s = core::Scan::new(Sum, None);
        let mut scratch = vec![0f32; core::CHUNK];
        for c in 0..2 {
            s.chunk(&values[row * n + c * core::CHUNK..row * n + (c + 1) * core::CHUNK], &mut scratch);
        }
        unsafe { (carry.memory.base as *mut f32).add(row).write(s.carry().unwrap()) };
    }
    let rest = n - from;
    let xs = View::new(Layout { dtype: Dtype::Float32, shape: vec![2, rest], strides: vec![n as isize, 1], offset: from }, x.memory).unwrap();
    let mut rb = Buf::new(4 * 2 * rest);
    let part = View::new(Layout::contiguous(Dtype::Float32, &[2, rest]), rb.memory()).unwrap();
    plan_scan(load_prog(), vec![2, rest], 1, sum, Some(carry), vec![part.clone()], vec![Load::Plain(xs)]).unwrap().run().unwrap();
    let resumed = f32s(&part);
    for row in 0..2 {
        for i in 0..rest {
            assert_eq!(resumed[row * rest + i].to_bits(), all[row * n + from + i].to_bits(), "row {row} term {i}");
        }
    }
}

#[test]
fn scans_along_a_strided_axis_have_the_contiguous_bits() {
    let (r, c) = (700usize, 3usize);
    let mut b1 = Buf::new(4 * r * c);
    let rows = array(&mut b1, &[c, r], &[r as isize, 1], 0, value);
    let mut b2 = Buf::new(4 * r * c);
    // The same values, the scanned axis strided: element (j, i) at i * c + j.
    let cols = array(&mut b2, &[c, r], &[1, c as isize], 0, value);
    for red in [Reduction::Monoid(Monoidal::Prod), Reduction::Logsumexp, Reduction::Arg(Monoidal::Max)] {
        let outs = |buf: &mut Vec<Buf>| -> Vec<View> {
            (0..red.outputs())
                .map(|j| {
                    buf.push(Buf::new(8 * r * c));
                    let d = if j == 1 && matches!(red, Reduction::Arg(_)) { Dtype::Int64 } else { Dtype::Float32 };
                    View::new(Layout::contiguous(d, &[c, r]), buf.last_mut().unwrap().memory()).unwrap()
                })
                .collect()
        };
        let (mut ba, mut bb) = (Vec::new(), Vec::new());
        let (da, db) = (outs(&mut ba), outs(&mut bb));
        plan_scan(load_prog(), vec![c, r], 1, (red, 0), None, da.clone(), vec![Load::Plain(rows.clone())]).unwrap().run().unwrap();
        plan_scan(load_prog(), vec![c, r], 1, (red, 0), None, db.clone(), vec![Load::Plain(cols.clone())]).unwrap().run().unwrap();
        for (a, b) in da.iter().zip(&db) {
            let (fa, fb) = (f32s(a), f32s(b));
            assert!(fa.iter().zip(&fb).all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())), "{red:?}");
        }
    }
}

#[test]
fn padded_loads_and_empty_reductions() {
    // A 3-wide max pool with -inf padding, as a Max over the taps axis.
    let n = 10;
    let mut b = Buf::new(4 * n);
    let x = array(&mut b, &[n], &[1], 0, |i| ((i * 7) % 10) as f32);
    let pad = Pad { before: vec![1], after: vec![1], windows: vec![Some(crate::loops::pad::Window { size: 3, stride: 1, dilation: 1 })], fill: f64::NEG_INFINITY };
    let mut ob = Buf::new(4 * n);
    let dst = View::new(Layout::contiguous(Dtype::Float32, &[n]), ob.memory()).unwrap();
    plan_reduce(load_prog(), vec![n, 3], vec![1], vec![(Reduction::Monoid(Monoidal::Max), 0)], vec![dst.clone()], vec![Load::Padded(pad, x.clone())]).unwrap().run().unwrap();
    let v = f32s(&x);
    let want: Vec<f32> = (0..n).map(|i| (i.saturating_sub(1)..(i + 2).min(n)).map(|j| v[j]).fold(f32::NEG_INFINITY, f32::max)).collect();
    assert_eq!(f32s(&dst), want);
    // Zero terms: Sum +0, Prod 1, Logsumexp -inf.
    let mut eb = Buf::new(8);
    let empty = View::new(Layout::contiguous(Dtype::Float32, &[0, 3]), eb.memory()).unwrap();
    for (red, want) in [(Monoidal::Sum, 0.0f32), (Monoidal::Prod, 1.0)] {
        let mut rb = Buf::new(16);
        let d = View::new(Layout::contiguous(Dtype::Float32, &[3]), rb.memory()).unwrap();
        plan_reduce(load_prog(), vec![0, 3], vec![0], vec![(Reduction::Monoid(red), 0)], vec![d.clone()], vec![Load::Plain(empty.clone())]).unwrap().run().unwrap();
        assert_eq!(f32s(&d), vec![want; 3]);
    }
}

#[test]
fn refusals() {
    let mut b = Buf::new(64);
    let x = View::new(Layout::contiguous(Dtype::Float32, &[4]), b.memory()).unwrap();
    let mut ob = Buf::new(64);
    let s = View::new(Layout::contiguous(Dtype::Float32, &[]), ob.memory()).unwrap();
    let i = View::new(Layout::contiguous(Dtype::Int32, &[4]), ob.memory()).unwrap();
    let e = |r: Result<Plan, String>| r.err().unwrap();
    let sum = (Reduction::Monoid(Monoidal::Sum), 0);
    assert!(e(plan_reduce(load_prog(), vec![4], vec![1], vec![sum], vec![s.clone()], vec![Load::Plain(x.clone())])).contains("axis 1"));
    assert!(e(plan_reduce(load_prog(), vec![4], vec![0, 0], vec![sum], vec![s.clone()], vec![Load::Plain(x.clone())])).contains("repeat"));
    assert!(e(plan_reduce(load_prog(), vec![5], vec![0], vec![sum], vec![s.clone()], vec![Load::Plain(x.clone())])).contains("shape"));
    assert!(e(plan_reduce(load_prog(), vec![4], vec![0], vec![sum, sum], vec![s.clone()], vec![Load::Plain(x.clone())])).contains("destinations"));
    let ip = Prog::new(vec![Dtype::Int32], vec![Node::Load(0)], vec![0]).unwrap();
    assert!(e(plan_reduce(ip, vec![4], vec![0], vec![(Reduction::Logsumexp, 0)], vec![s.clone()], vec![Load::Plain(i)])).contains("does not take"));
    assert!(e(plan_scan(load_prog(), vec![4], 0, (Reduction::Logsumexp, 0), Some(s.clone()), vec![x.clone()], vec![Load::Plain(x.clone())])).contains("carry"));
    let arg = (Reduction::Arg(Monoidal::Max), 0);
    assert!(e(plan_reduce(load_prog(), vec![4], vec![0], vec![arg], vec![s.clone(), s.clone()], vec![Load::Plain(x)])).contains("positions"));
}
