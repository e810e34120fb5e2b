//! Tests of `map` against a slow reference: the same program evaluated one
//! element at a time, at the element's own address, on awkward layouts
//! (transposed, negative, broadcast, offset, sub-byte, zero-size, 0-d), with
//! the bits compared across thread counts.

use super::*;
use crate::core::call::Call;
use crate::loops::prog::{Binary, Constant, Unary};
use crate::core::test_rng::xorshift as next;

/// A buffer of random bytes and the memory it spans.
struct Buf(Vec<u64>);

impl Buf {
    fn random(bytes: usize, seed: &mut u64) -> Buf {
        Buf((0..bytes.div_ceil(8)).map(|_| next(seed)).collect())
    }
    fn zeros(bytes: usize) -> Buf {
        Buf(vec![0; bytes.div_ceil(8)])
    }
    fn memory(&mut self) -> Memory {
        self.memory_from(0)
    }
    /// The memory from its byte `skip` on: off the alignment of every
    /// register type wider than a byte where `skip` is odd.
    fn memory_from(&mut self, skip: usize) -> Memory {
        Memory { base: (self.0.as_mut_ptr() as *mut u8).wrapping_add(skip), bytes: self.0.len() * 8 - skip }
    }
}

/// The loop of a plan reading its own loads.
fn loop_of(p: &Plan) -> Loop {
    Loop::new(p, &p.loads)
}

/// Layouts of `shape` over a buffer of `extent` elements: contiguous,
/// transposed, reversed along axis 0, broadcast along axis 0 and along the
/// last axis, offset.
fn layouts(d: Dtype, shape: &[usize]) -> Vec<(Layout, usize)> {
    let c = Layout::contiguous(d, shape);
    let size = c.size();
    let mut out = vec![(c.clone(), size)];
    if shape.len() >= 2 {
        // Transposed: a contiguous array of the reversed shape, its axes reversed.
        let rev: Vec<usize> = shape.iter().rev().copied().collect();
        let t = Layout::contiguous(d, &rev);
        out.push((Layout { dtype: d, shape: shape.to_vec(), strides: t.strides.iter().rev().copied().collect(), offset: 0 }, size));
    }
    if !shape.is_empty() && size > 0 {
        let mut neg = c.clone();
        neg.strides[0] = -neg.strides[0];
        neg.offset = (shape[0] - 1) * c.strides[0] as usize;
        out.push((neg, size));
        let mut bc = c.clone();
        bc.strides[0] = 0;
        out.push((bc, size / shape[0]));
        if shape.len() >= 2 {
            // Broadcast along the last axis: each row one element repeated.
            let last = shape.len() - 1;
            let mut rows = shape.to_vec();
            rows[last] = 1;
            let mut bl = Layout::contiguous(d, &rows);
            bl.shape = shape.to_vec();
            bl.strides[last] = 0;
            out.push((bl, size / shape[last]));
        }
        let mut off = c.clone();
        off.offset = 3;
        out.push((off, size + 3));
    }
    out
}

fn view(layout: Layout, buf: &mut Buf) -> View {
    View::new(layout, buf.memory()).unwrap()
}

/// The reference: each element evaluated alone, at its own address.
fn reference(prog: &Prog, dsts: &[View], loads: &[View]) {
    let shape = dsts[0].layout.shape.clone();
    let size: usize = shape.iter().product();
    for flat in 0..size {
        let mut idx = vec![0usize; shape.len()];
        let mut r = flat;
        for a in (0..shape.len()).rev() {
            idx[a] = r % shape[a];
            r /= shape[a];
        }
        let at = |l: &Layout| -> isize {
            l.offset as isize + idx.iter().zip(&l.strides).map(|(&i, &s)| i as isize * s).sum::<isize>()
        };
        let mut cols: Vec<Col> = prog.dtypes.iter().map(|&d| Col::new(d, 1)).collect();
        for i in 0..prog.nodes.len() {
            let (done, rest) = cols.split_at_mut(i);
            let out = &mut rest[0];
            match prog.nodes[i] {
                Node::Load(k) => unsafe {
                    memio::load(loads[k].memory, loads[k].layout.dtype, at(&loads[k].layout), 0, 1, &mut out.as_mut())
                },
                Node::Const(c) => *out = constant_column(c.dtype, c.lo, c.hi, 1),
                Node::Coord(a) => *out = Col::I64(vec![idx[a] as i64]),
                Node::Unary(k, x) => ops::unary(k, &done[x].as_ref(), &mut out.as_mut(), 1, ops::Store::Cached),
                Node::Binary(k, x, y) => ops::binary(k, prog.dtypes[x], &done[x].as_ref(), &done[y].as_ref(), &mut out.as_mut(), 1, ops::Store::Cached),
                Node::Where(c, x, y) => ops::select(&done[c].as_ref(), &done[x].as_ref(), &done[y].as_ref(), &mut out.as_mut(), 1),
                Node::Cast(d, x) => cast::cast(prog.dtypes[x], d, &done[x].as_ref(), &mut out.as_mut(), 1, false),
            }
            out.as_mut().settle(prog.dtypes[i], 1);
        }
        for (k, &o) in prog.outputs.iter().enumerate() {
            unsafe { memio::store(dsts[k].memory, dsts[k].layout.dtype, at(&dsts[k].layout), 0, 1, &cols[o].as_ref()) }
        }
    }
}

/// Reads every element of a view as bits, in C order.
fn bits_of(v: &View) -> Vec<u128> {
    let l = &v.layout;
    let c = Layout::contiguous(Dtype::Uint64, &l.shape);
    let mut out = Buf::zeros(c.size() * 16 + 16);
    // Copy through a program that casts nothing: load and store the same dtype.
    let dst = View::new(Layout::contiguous(l.dtype, &l.shape), out.memory()).unwrap();
    let id = Prog::new(vec![l.dtype], vec![Node::Load(0)], vec![0]).unwrap();
    plan(id, vec![dst.clone()], vec![v.clone()]).unwrap().run().unwrap();
    let n = l.size();
    let bits = l.dtype.bits();
    let bytes: Vec<u8> = out.0.iter().flat_map(|w| w.to_le_bytes()).collect();
    (0..n)
        .map(|i| {
            let mut x = 0u128;
            for b in 0..bits {
                let at = i * bits + b;
                x |= (((bytes[at / 8] >> (at % 8)) & 1) as u128) << b;
            }
            x
        })
        .collect()
}

/// The bits of an element, every NaN of a float or complex dtype made one
/// value: the contract leaves a NaN result's sign and payload unspecified.
fn nan_canonical(d: Dtype, bits: u128) -> u128 {
    let nan = match d {
        Dtype::Float32 => f32::from_bits(bits as u32).is_nan(),
        Dtype::Float64 => f64::from_bits(bits as u64).is_nan(),
        Dtype::Complex64 => {
            f32::from_bits(bits as u32).is_nan() || f32::from_bits((bits >> 32) as u32).is_nan()
        }
        Dtype::Complex128 => {
            f64::from_bits(bits as u64).is_nan() || f64::from_bits((bits >> 64) as u64).is_nan()
        }
        d if d.is_narrow_float() => crate::core::narrow::Narrow::of(d).unwrap().decode(bits as u16).is_nan(),
        _ => false,
    };
    if nan { u128::MAX } else { bits }
}

/// Runs `prog` over loads of every layout, comparing with the reference
/// under one and three threads; odd variants place every operand a byte
/// off its buffer's alignment.
fn check(prog: Prog, shape: &[usize], seed: u64) {
    let mut seed = seed | 1;
    let n_loads = prog.operands.len();
    for variant in 0..6 {
        let skip = variant % 2;
        let mut bufs = Vec::new();
        let mut loads = Vec::new();
        for k in 0..n_loads {
            let ls = layouts(prog.operands[k], shape);
            let (l, extent) = ls[(variant + k) % ls.len()].clone();
            let mut b = Buf::random((extent * l.dtype.bits()).div_ceil(8) + 8, &mut seed);
            loads.push(View::new(l, b.memory_from(skip)).unwrap());
            bufs.push(b);
        }
        let mut want_bufs = Vec::new();
        let mut want = Vec::new();
        let mut got_bufs = Vec::new();
        let mut got = Vec::new();
        for k in 0..prog.outputs.len() {
            let d = prog.output_dtype(k);
            let ls: Vec<_> = layouts(d, shape).into_iter().filter(|(l, _)| !self_overlaps(l)).collect();
            let (l, extent) = ls[(variant + k) % ls.len()].clone();
            let bytes = (extent * d.bits()).div_ceil(8) + 8;
            let mut a = Buf::zeros(bytes);
            let mut b = Buf::zeros(bytes);
            want.push(View::new(l.clone(), a.memory_from(skip)).unwrap());
            got.push(View::new(l, b.memory_from(skip)).unwrap());
            want_bufs.push(a);
            got_bufs.push(b);
        }
        reference(&prog, &want, &loads);
        for threads in [1, 3] {
            pool::set_threads(threads).unwrap();
            // Helpers woken, so that they linger: a loop shorter than
            // PARALLEL_MIN shares its tiles with them alone.
            pool::run_parts(threads, |_| {});
            plan(prog.clone(), got.clone(), loads.clone()).unwrap().run().unwrap();
            for k in 0..got.len() {
                let d = got[k].layout.dtype;
                let canon = |v: Vec<u128>| -> Vec<u128> { v.into_iter().map(|b| nan_canonical(d, b)).collect() };
                let (g, w) = (canon(bits_of(&got[k])), canon(bits_of(&want[k])));
                if let Some(i) = (0..g.len()).find(|&i| g[i] != w[i]) {
                    panic!(
                        "{:?}: output {k} element {i}: {:#x} where the reference has {:#x} \
                         (variant {variant}, {threads} threads, shape {shape:?})",
                        prog.nodes, g[i], w[i]
                    );
                }
            }
        }
    }
}

fn load_all(ds: &[Dtype]) -> Vec<Node> {
    (0..ds.len()).map(Node::Load).collect()
}

#[test]
fn casts_between_every_pair_of_dtypes() {
    for &from in &Dtype::ALL {
        for &to in &Dtype::ALL {
            let p = Prog::new(vec![from], vec![Node::Load(0), Node::Cast(to, 0)], vec![1]).unwrap();
            check(p, &[3, 37], from as u64 * 31 + to as u64);
        }
    }
}

#[test]
fn arithmetic_and_comparisons_at_every_dtype() {
    for &d in &Dtype::ALL {
        for k in Binary::ALL {
            let mut nodes = load_all(&[d, d]);
            nodes.push(Node::Binary(k, 0, 1));
            if let Ok(p) = Prog::new(vec![d, d], nodes, vec![2]) {
                check(p, &[5, 1030], d as u64 * 97 + k as u64);
            }
        }
        for k in Unary::ALL {
            if let Ok(p) = Prog::new(vec![d], vec![Node::Load(0), Node::Unary(k, 0)], vec![1]) {
                check(p, &[2, 3, 7], d as u64 * 89 + k as u64);
            }
        }
    }
}

/// A loop past the size from which it splits over threads, its operands
/// in every layout (in place, through columns, a byte off alignment):
/// under one and three threads, the reference's results.
#[test]
fn loops_split_over_threads_match_the_reference() {
    let f = Dtype::Float32;
    let shape = [300, 900];
    assert!(shape.iter().product::<usize>() >= PARALLEL_MIN);
    let nodes = vec![Node::Load(0), Node::Load(1), Node::Unary(Unary::Exp, 0), Node::Binary(Binary::Add, 2, 1)];
    check(Prog::new(vec![f, f], nodes, vec![3]).unwrap(), &shape, 19);
}

/// A loop past the size from which it shares its tiles with lingering
/// threads, short of the one from which it wakes them: the reference's
/// results under one and three threads.
#[test]
fn loops_shared_with_lingering_threads_match_the_reference() {
    let f = Dtype::Float64;
    let shape = [90, 400];
    let size = shape.iter().product::<usize>();
    assert!((SHARED_MIN..PARALLEL_MIN).contains(&size));
    let nodes = vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Mul, 0, 1), Node::Unary(Unary::Sqrt, 2)];
    check(Prog::new(vec![f, f], nodes, vec![3]).unwrap(), &shape, 23);
}

/// A loop that computes one value in place from the caches, of rows
/// longer than a tile: on one thread whole rows, on three shared tiles;
/// the reference's results either way, and a second value keeps its
/// tiles.
#[test]
fn one_pass_loops_in_whole_rows_match_the_reference() {
    let f = Dtype::Float32;
    let shape = [2, 3 * TILE_LONG + 5];
    let mut bufs: Vec<Buf> = (0..3).map(|_| Buf::zeros(4 * shape[0] * shape[1])).collect();
    let add = Prog::new(vec![f, f], vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Add, 0, 1)], vec![2]).unwrap();
    let two = Prog::new(vec![f], vec![Node::Load(0), Node::Unary(Unary::Neg, 0), Node::Unary(Unary::Abs, 0)], vec![1, 2]).unwrap();
    let views: Vec<View> = bufs.iter_mut().map(|b| View::new(Layout::contiguous(f, &shape), b.memory()).unwrap()).collect();
    let lp = loop_of(&plan(add.clone(), vec![views[0].clone()], views[1..].to_vec()).unwrap());
    assert!(lp.tiling == Tiling::CachedInPlace && lp.tile < lp.inner && lp.one_pass_in_place(&add));
    let lp = loop_of(&plan(two.clone(), views[..2].to_vec(), views[2..].to_vec()).unwrap());
    assert!(lp.tiling == Tiling::CachedInPlace && !lp.one_pass_in_place(&two));
    check(add, &shape, 29);
    check(two, &shape, 31);
}

/// A loop of no outer axis finds each tile's elements from its index alone
/// (`Loop::locate`): over several tiles, reversed, broadcast and offset
/// layouts, the reference's results.
#[test]
fn one_axis_loops_of_several_tiles_match_the_reference() {
    let f = Dtype::Float32;
    let nodes = vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Sub, 0, 1), Node::Unary(Unary::Sqrt, 2)];
    let p = Prog::new(vec![f, f], nodes, vec![3]).unwrap();
    for n in [1, TILE + 1, 3 * TILE_LONG + 7] {
        check(p.clone(), &[n], 41 + n as u64);
    }
}

/// Loops whose operands are strided along the innermost axis run their
/// rows in blocks, partial ones too, and may take another axis as the
/// innermost: the results are the reference's.
#[test]
fn blocked_and_reordered_loops() {
    let (f32, f64) = (Dtype::Float32, Dtype::Float64);
    let add = Prog::new(vec![f64, f64], vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Add, 0, 1)], vec![2]).unwrap();
    check(add, &[37, 2100], 11);
    let nodes = vec![Node::Load(0), Node::Load(1), Node::Unary(Unary::Exp, 0), Node::Binary(Binary::Mul, 2, 1)];
    let exp_mul = Prog::new(vec![f32, f32], nodes, vec![3]).unwrap();
    check(exp_mul, &[2100, 37], 13);
    check(Prog::new(vec![f32], vec![Node::Load(0), Node::Unary(Unary::Neg, 0)], vec![1]).unwrap(), &[3, 40, 70], 17);
}

#[test]
fn fused_programs_with_constants_coordinates_and_several_outputs() {
    let f = Dtype::Float32;
    let two = Constant { dtype: f, lo: 2f32.to_bits() as u64, hi: 0 };
    // out0 = where(x < y, x * 2 + coord0, y); out1 = (float16) x
    let nodes = vec![
        Node::Load(0),
        Node::Load(1),
        Node::Const(two),
        Node::Coord(0),
        Node::Cast(f, 3),
        Node::Binary(Binary::Mul, 0, 2),
        Node::Binary(Binary::Add, 5, 4),
        Node::Binary(Binary::Lt, 0, 1),
        Node::Where(7, 6, 1),
        Node::Cast(Dtype::Float16, 0),
    ];
    check(Prog::new(vec![f, f], nodes, vec![8, 9]).unwrap(), &[4, 2000], 7);
}

#[test]
fn more_operands_than_the_table_holds() {
    let n = MAX_OPERANDS + 5;
    let d = Dtype::Int32;
    let mut nodes = load_all(&vec![d; n]);
    for i in 1..n {
        let prev = if i == 1 { 0 } else { nodes.len() - 1 };
        nodes.push(Node::Binary(Binary::Add, prev, i));
    }
    let last = nodes.len() - 1;
    check(Prog::new(vec![d; n], nodes, vec![last, 3]).unwrap(), &[9, 11], 3);
}

#[test]
fn zero_size_and_zero_d() {
    let d = Dtype::Float64;
    let p = Prog::new(vec![d], vec![Node::Load(0), Node::Unary(Unary::Neg, 0)], vec![1]).unwrap();
    check(p.clone(), &[], 5);
    check(p.clone(), &[0, 4], 5);
    check(p, &[4, 0], 5);
}

#[test]
fn refusals_name_the_problem() {
    let d = Dtype::Float32;
    let mut a = Buf::zeros(64);
    let mut b = Buf::zeros(64);
    let p = Prog::new(vec![d], vec![Node::Load(0)], vec![0]).unwrap();
    let v = |buf: &mut Buf, shape: &[usize], dt| View::new(Layout::contiguous(dt, shape), buf.memory()).unwrap();
    let e = |r: Result<Plan, String>| r.err().unwrap();
    assert!(e(plan(p.clone(), vec![v(&mut a, &[4], d)], vec![v(&mut b, &[5], d)])).contains("shape"));
    assert!(e(plan(p.clone(), vec![v(&mut a, &[4], Dtype::Int32)], vec![v(&mut b, &[4], d)])).contains("int32"));
    assert!(e(plan(p.clone(), vec![], vec![v(&mut b, &[4], d)])).contains("destinations"));
    let bc = View::new(Layout { dtype: d, shape: vec![4], strides: vec![0], offset: 0 }, a.memory()).unwrap();
    assert!(e(plan(p.clone(), vec![bc], vec![v(&mut b, &[4], d)])).contains("several indices"));
    let half = View::new(Layout { dtype: d, shape: vec![4], strides: vec![1], offset: 2 }, a.memory()).unwrap();
    let p2 = Prog::new(vec![d], vec![Node::Load(0)], vec![0, 0]).unwrap();
    assert!(e(plan(p2, vec![v(&mut a, &[4], d), half], vec![v(&mut b, &[4], d)])).contains("overlap"));
    let pc = Prog::new(vec![], vec![Node::Coord(1)], vec![0]).unwrap();
    assert!(e(plan(pc, vec![v(&mut a, &[4], Dtype::Int64)], vec![])).contains("axis 1"));
}

#[test]
fn destinations_aliasing_loads_give_fresh_results() {
    // y[i] = x[i] + x[i+1] computed in place over a shifted view of x itself.
    let d = Dtype::Int32;
    let n = 3000;
    let mut buf = Buf::zeros(4 * (n + 1));
    let m = buf.memory();
    for i in 0..=n {
        unsafe { (m.base as *mut i32).add(i).write(i as i32 * 3) };
    }
    let at = |offset| View::new(Layout { dtype: d, shape: vec![n], strides: vec![1], offset }, m).unwrap();
    let p = Prog::new(vec![d, d], vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Add, 0, 1)], vec![2]).unwrap();
    pool::set_threads(2).unwrap();
    plan(p, vec![at(1)], vec![at(0), at(1)]).unwrap().run().unwrap();
    for i in 0..n {
        let got = unsafe { (m.base as *const i32).add(i + 1).read() };
        assert_eq!(got, (i as i32 * 3) + (i as i32 + 1) * 3, "element {i}");
    }
}

/// A padded load's element at an index of the loop, by hand: each axis's
/// padded coordinate (window start plus tap times dilation), minus the pad
/// before, read from the operand or the fill.
fn padded_reference(p: &crate::loops::pad::Pad, x: &[f64], shape: &[usize], idx: &[usize], fill: f64) -> f64 {
    let r = shape.len();
    let mut tap = r;
    let mut flat = 0usize;
    for a in 0..r {
        let pos = match p.windows.get(a).copied().flatten() {
            None => idx[a] as isize,
            Some(w) => {
                let t = idx[tap];
                tap += 1;
                (idx[a] * w.stride + t * w.dilation) as isize
            }
        } - p.before[a] as isize;
        if pos < 0 || pos >= shape[a] as isize {
            return fill;
        }
        flat = flat * shape[a] + pos as usize;
    }
    x[flat]
}

#[test]
fn padded_loads_match_padding_and_windowing_by_hand() {
    use crate::loops::pad::{Pad, Window};
    let w = |size, stride, dilation| Some(Window { size, stride, dilation });
    let cases = vec![
        (vec![5, 7], Pad { before: vec![1, 2], after: vec![2, 0], windows: vec![], fill: -1.5 }),
        (vec![6, 9], Pad { before: vec![1, 1], after: vec![1, 1], windows: vec![w(3, 1, 1), w(3, 2, 1)], fill: 0.0 }),
        (vec![11], Pad { before: vec![2], after: vec![3], windows: vec![w(3, 2, 3)], fill: f64::NEG_INFINITY }),
        (vec![4, 5], Pad { before: vec![0, 3], after: vec![0, 3], windows: vec![None, w(4, 3, 2)], fill: 7.0 }),
    ];
    for (shape, pad) in cases {
        let n: usize = shape.iter().product();
        let x: Vec<f64> = (0..n).map(|i| (i as f64) * 0.5 - 3.0).collect();
        let mut xb = Buf::zeros(8 * n);
        let xm = xb.memory();
        for (i, v) in x.iter().enumerate() {
            unsafe { (xm.base as *mut f64).add(i).write(*v) };
        }
        let xv = View::new(Layout::contiguous(Dtype::Float64, &shape), xm).unwrap();
        let out_shape = pad.shape(&shape).unwrap();
        for threads in [1, 2] {
            pool::set_threads(threads).unwrap();
            let mut ob = Buf::zeros(8 * out_shape.iter().product::<usize>() + 8);
            let ov = View::new(Layout::contiguous(Dtype::Float64, &out_shape), ob.memory()).unwrap();
            let id = Prog::new(vec![Dtype::Float64], vec![Node::Load(0)], vec![0]).unwrap();
            plan_loads(id, vec![ov.clone()], vec![Load::Padded(pad.clone(), xv.clone())]).unwrap().run().unwrap();
            let total: usize = out_shape.iter().product();
            for flat in 0..total {
                let mut idx = vec![0; out_shape.len()];
                let mut rest = flat;
                for a in (0..out_shape.len()).rev() {
                    idx[a] = rest % out_shape[a];
                    rest /= out_shape[a];
                }
                let got = unsafe { (ov.memory.base as *const f64).add(flat).read() };
                let want = padded_reference(&pad, &x, &shape, &idx, pad.fill);
                assert_eq!(got.to_bits(), want.to_bits(), "{pad:?} at {idx:?}");
            }
        }
    }
}

#[test]
fn padded_loads_refuse_before_copying() {
    use crate::loops::pad::{Pad, Window};
    let mut xb = Buf::zeros(64);
    let xv = View::new(Layout::contiguous(Dtype::Int8, &[4, 4]), xb.memory()).unwrap();
    let mut ob = Buf::zeros(64);
    let ov = View::new(Layout::contiguous(Dtype::Int8, &[4, 4]), ob.memory()).unwrap();
    let id = Prog::new(vec![Dtype::Int8], vec![Node::Load(0)], vec![0]).unwrap();
    let rank = Pad { before: vec![1], after: vec![1], windows: vec![], fill: 0.0 };
    let big = Pad { before: vec![0, 0], after: vec![0, 0], windows: vec![None, Some(Window { size: 5, stride: 1, dilation: 1 })], fill: 0.0 };
    let shape = Pad { before: vec![1, 0], after: vec![0, 0], windows: vec![], fill: 0.0 };
    for (p, needle) in [(rank, "rank 2"), (big, "spans 5"), (shape, "shape")] {
        let e = plan_loads(id.clone(), vec![ov.clone()], vec![Load::Padded(p, xv.clone())]).err().unwrap();
        assert!(e.contains(needle), "{e}");
    }
}

#[test]
fn a_broadcast_axis_the_pad_leaves_alone_is_held_at_one_element() {
    use crate::loops::pad::Pad;
    let mut xb = Buf::zeros(64);
    let xv = View::new(Layout { dtype: Dtype::Float32, shape: vec![1000, 3], strides: vec![0, 1], offset: 0 }, xb.memory()).unwrap();
    let p = Pad { before: vec![0, 1], after: vec![0, 1], windows: vec![], fill: 0.0 };
    assert_eq!(p.copy_bytes(&xv), 4 * 5);
    let (view, buf) = p.materialize(&xv).unwrap();
    assert_eq!(buf.len() * 8, 24);
    assert_eq!(view.layout.shape, vec![1000, 5]);
    assert_eq!(view.layout.strides, vec![0, 1]);
}

/// A loop too large for the caches takes other tiles (long ones through a
/// transcendental kind, shorter ones otherwise) and writes its destination
/// by non-temporal stores; its results are those of the same program run
/// piece by piece over pieces that the caches hold, which take whole tiles
/// and plain stores.
#[test]
fn results_do_not_depend_on_the_tile() {
    let (f32, f64) = (Dtype::Float32, Dtype::Float64);
    // Just past the bytes a loop reads from the caches: 20 an element.
    let n = cached_bytes() / 20 + (3 << 16);
    let mut seed = 7u64;
    let mut a = Buf::random(4 * n, &mut seed);
    let mut b = Buf::random(8 * n, &mut seed);
    pool::set_threads(2).unwrap();
    for kind in [Unary::Exp, Unary::Sqrt] {
        let nodes = vec![
            Node::Load(0),
            Node::Load(1),
            Node::Unary(kind, 0),
            Node::Cast(f64, 2),
            Node::Binary(Binary::Mul, 3, 1),
        ];
        let prog = Prog::new(vec![f32, f64], nodes, vec![4]).unwrap();
        let (mut whole, mut pieces) = (Buf::zeros(8 * n), Buf::zeros(8 * n));
        let at = |buf: &mut Buf, d: Dtype, offset: usize, len: usize| {
            view(Layout { dtype: d, shape: vec![len], strides: vec![1], offset }, buf)
        };
        let whole_views = [at(&mut whole, f64, 0, n), at(&mut a, f32, 0, n), at(&mut b, f64, 0, n)];
        let tiling = |views: &[View]| loop_of(&plan(prog.clone(), vec![views[0].clone()], views[1..].to_vec()).unwrap()).tiling;
        let streamed = tiling(&whole_views);
        assert!(
            if kind == Unary::Exp { streamed == Tiling::Fetched } else { matches!(streamed, Tiling::Streamed(t) if t < TILE) },
            "{kind:?}: {streamed:?}"
        );
        plan(prog.clone(), vec![whole_views[0].clone()], whole_views[1..].to_vec()).unwrap().run().unwrap();
        let m = 5000;
        for start in (0..n).step_by(m) {
            let len = m.min(n - start);
            let views = [at(&mut pieces, f64, start, len), at(&mut a, f32, start, len), at(&mut b, f64, start, len)];
            assert_eq!(tiling(&views), Tiling::Cached);
            plan(prog.clone(), vec![views[0].clone()], views[1..].to_vec()).unwrap().run().unwrap();
        }
        assert!(whole.0 == pieces.0, "a whole loop of {kind:?} and its pieces differ");
    }
}

#[test]
fn contiguous_aligned_runs_are_read_and_written_in_place() {
    let f = Dtype::Float32;
    // out0 = x + y, out1 = x: the sum goes straight into its destination;
    // x, a destination's output, is read from its column, y in place.
    let nodes = vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Add, 0, 1)];
    let prog = Prog::new(vec![f, f], nodes, vec![2, 0]).unwrap();
    let mut bufs: Vec<Buf> = (0..4).map(|_| Buf::zeros(4 * 64 + 8)).collect();
    let columns = |bufs: &mut [Buf], skip: usize| {
        let v: Vec<View> = bufs.iter_mut().map(|b| View::new(Layout::contiguous(f, &[8, 8]), b.memory_from(skip)).unwrap()).collect();
        let p = plan(prog.clone(), v[..2].to_vec(), v[2..].to_vec()).unwrap();
        let lp = loop_of(&p);
        (lp.direct.to_vec(), lp.borrowed.to_vec())
    };
    assert_eq!(columns(&mut bufs, 0), (vec![None, None, Some(0)], vec![false, true, false]));
    // A byte off the alignment of f32: every run through a column.
    assert_eq!(columns(&mut bufs, 1), (vec![None; 3], vec![false; 3]));
    // A destination that a load reaches takes its values from a column.
    let v: Vec<View> = bufs.iter_mut().map(|b| View::new(Layout::contiguous(f, &[8, 8]), b.memory()).unwrap()).collect();
    let p = plan(prog.clone(), vec![v[2].clone(), v[1].clone()], v[2..].to_vec()).unwrap();
    assert_eq!(loop_of(&p).direct.to_vec(), vec![None; 3]);
}

/// Short rows that do not merge stack into one column a work item: a sum
/// of transposed 32 x 32 operands into a contiguous destination reads its
/// loads in place across rows and writes the destination row by row; and
/// loops of short rows, stacks partial ones too, of every layout (rows
/// side by side moved as transposed blocks) and of sub-byte, narrow,
/// 8-byte and complex dtypes give the reference's results.
#[test]
fn short_rows_stack_into_one_column() {
    let f = Dtype::Float32;
    let add = |d| Prog::new(vec![d, d], vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Add, 0, 1)], vec![2]).unwrap();
    let mut bufs: Vec<Buf> = (0..3).map(|_| Buf::zeros(4 * 1024)).collect();
    let v: Vec<View> = bufs
        .iter_mut()
        .enumerate()
        .map(|(k, b)| {
            let c = Layout::contiguous(f, &[32, 32]);
            let l = if k == 0 { c } else { Layout { strides: vec![1, 32], ..c } };
            View::new(l, b.memory()).unwrap()
        })
        .collect();
    let lp = loop_of(&plan(add(f), v[..1].to_vec(), v[1..].to_vec()).unwrap());
    assert_eq!((lp.stack, lp.inner, lp.item_rows()), (32, 32, 1));
    assert_eq!(lp.borrowed.to_vec(), vec![true, true, false]);
    assert_eq!(lp.direct.to_vec(), vec![None; 3]);
    assert!(!lp.ops[0].joins && lp.ops[1].joins);
    for d in [f, Dtype::Int4, Dtype::Bool, Dtype::Float16, Dtype::Int64, Dtype::Complex128] {
        if let Ok(p) = Prog::new(vec![d, d], vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Maximum, 0, 1)], vec![2]) {
            check(p.clone(), &[1000, 3], d as u64 + 5);
            check(p.clone(), &[3, 7, 300, 5], d as u64 + 7);
            // Whole tiles of a transposed block, and their edges.
            check(p.clone(), &[32, 32], d as u64 + 11);
            check(p, &[2, 45, 37], d as u64 + 13);
        }
        let cast = Prog::new(vec![d], vec![Node::Load(0), Node::Cast(Dtype::Int4, 0)], vec![1]).unwrap();
        check(cast, &[2, 700, 3], d as u64 + 9);
    }
    // One row, or a Coord node: no stack.
    assert_eq!(stacked_rows(None, 4, false, false, false), 1);
    assert_eq!(stacked_rows(Some(100), 4, true, false, false), 1);
    assert_eq!(stacked_rows(Some(100), 4, false, true, false), 1);
    assert_eq!(stacked_rows(Some(100), TILE / 8 + 1, false, false, false), 1);
    assert_eq!(stacked_rows(Some(100), TILE / 8, false, false, false), 8);
    assert_eq!(stacked_rows(Some(100), 4, false, false, false), 100);
    assert_eq!(stacked_rows(Some(1000), 4, false, false, false), TILE / 4);
    // Long rows of a transposable operand: a transposed tile's rows, fewer
    // where the loop has fewer; none with a Coord node or blocks of rows.
    assert_eq!(stacked_rows(Some(100), 5000, false, false, true), transpose::TILE);
    assert_eq!(stacked_rows(Some(3), 5000, false, false, true), 3);
    assert_eq!(stacked_rows(Some(100), 5000, true, false, true), 1);
    assert_eq!(stacked_rows(Some(100), 5000, false, true, true), 1);
    assert_eq!(stacked_rows(None, 5000, false, false, true), 1);
}

/// Long rows of an operand read (or written) across them, its rows side
/// by side, go in items of a transposed tile's rows, the operand moved by
/// whole tiles: a cast from a transposed 316 x 316 float32 operand into a
/// contiguous int32 one stacks 8 whole rows, which the destination joins
/// (so the cast writes it in place), and one of rows of 1100 stacks 8
/// parts of 128, which neither operand joins; and such loops, of rows that
/// the items' parts and stacks do not divide, in every layout and of 4-,
/// 8- and 16-byte and other dtypes, give the reference's results on 1 and
/// 3 threads.
#[test]
fn long_transposed_rows_move_by_tiles() {
    let (f, i) = (Dtype::Float32, Dtype::Int32);
    let cast = |from, to| Prog::new(vec![from], vec![Node::Load(0), Node::Cast(to, 0)], vec![1]).unwrap();
    let mut src = Buf::zeros(4 * 1100 * 316);
    let mut dst = Buf::zeros(4 * 1100 * 316);
    let mut transposed = |rows: usize, cols: usize| {
        let t = Layout { strides: vec![1, rows as isize], ..Layout::contiguous(f, &[rows, cols]) };
        let x = View::new(t, src.memory()).unwrap();
        let z = View::new(Layout::contiguous(i, &[rows, cols]), dst.memory()).unwrap();
        loop_of(&plan(cast(f, i), vec![z], vec![x]).unwrap())
    };
    let lp = transposed(316, 316);
    assert_eq!((lp.stack, lp.inner, lp.tile, lp.item_rows()), (transpose::TILE, 316, 316, 316usize.div_ceil(8)));
    assert!(lp.ops[0].joins && !lp.ops[1].joins);
    assert_eq!(lp.direct.to_vec(), vec![None, Some(0)]);
    let lp = transposed(316, 1100);
    assert_eq!((lp.stack, lp.inner, lp.tile), (transpose::TILE, 1100, TILE / transpose::TILE));
    assert!(!lp.ops[0].joins && !lp.ops[1].joins);
    assert_eq!(lp.direct.to_vec(), vec![None; 2]);
    for (d, e) in [(f, i), (Dtype::Float64, Dtype::Float64), (Dtype::Complex128, Dtype::Complex128), (Dtype::Float16, f), (Dtype::Int8, Dtype::Int64)] {
        check(cast(d, e), &[131, 300], d as u64 + 3);
        check(cast(d, e), &[2, 13, 141], d as u64 + 5);
        check(cast(d, e), &[19, 1100], d as u64 + 7);
    }
    let add = Prog::new(vec![f, f], vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Add, 0, 1)], vec![2]).unwrap();
    check(add, &[45, 260], 17);
}

/// A cached loop between a transposed operand of transposed tiles and
/// one without (a narrow float, bool) runs along the latter's rows, the
/// former moving by tiles; a streamed one along the wider side's rows, as
/// before. Either way the results are the reference's.
#[test]
fn narrow_operands_of_cached_transposes_run_along_their_rows() {
    let (f, h) = (Dtype::Float32, Dtype::Float16);
    let cast = |from, to| Prog::new(vec![from], vec![Node::Load(0), Node::Cast(to, 0)], vec![1]).unwrap();
    let (mut src, mut dst) = (Buf::zeros(4 * 32 * 32), Buf::zeros(4 * 32 * 32));
    let t = Layout { strides: vec![1, 32], ..Layout::contiguous(f, &[32, 32]) };
    let x = View::new(t, src.memory()).unwrap();
    let z = View::new(Layout::contiguous(h, &[32, 32]), dst.memory()).unwrap();
    let lp = loop_of(&plan(cast(f, h), vec![z], vec![x]).unwrap());
    assert_eq!((lp.ops[0].inner, lp.ops[1].inner), (1, 32), "the float16 destination along its rows");
    // Streamed, the float32 operand's rows (axis 0 here) go innermost.
    let (mut extents, mut steps) = ([3162, 3162], [3162, 1, 1, 3162]);
    innermost_by_strides(&mut extents, &mut steps, 2, |op| stride_weight([h, f][op], false));
    assert_eq!(steps, [1, 3162, 3162, 1]);
    let (mut extents, mut steps) = ([3162, 3162], [3162, 1, 1, 3162]);
    innermost_by_strides(&mut extents, &mut steps, 2, |op| stride_weight([h, f][op], true));
    assert_eq!(steps, [3162, 1, 1, 3162]);
    for (d, e) in [(f, h), (h, f), (f, Dtype::Bool), (Dtype::Bool, Dtype::Float64), (Dtype::Int4, f)] {
        check(cast(d, e), &[32, 32], d as u64 + 3);
        check(cast(d, e), &[131, 300], d as u64 + 5);
    }
}

#[test]
fn cached_bytes_lie_within_their_bounds() {
    let c = cached_bytes();
    assert!((CACHED_BYTES.0..=CACHED_BYTES.1).contains(&c), "{c}");
}

#[test]
fn streamed_loops_of_transcendental_kinds_take_long_tiles_their_kinds_fetch() {
    let f = Dtype::Float64;
    // Past the bytes a loop reads from the caches, 16 an element.
    let n = cached_bytes() / 16 + 64;
    let mut bufs: Vec<Buf> = (0..3).map(|_| Buf::zeros(8 * n)).collect();
    let with = |k: Node| vec![Node::Load(0), Node::Load(1), k];
    let tiling_of = |bufs: &mut [Buf], nodes: Vec<Node>, shape: &[usize], transposed: bool| {
        let out = nodes.len() - 1;
        let prog = Prog::new(vec![f, f], nodes, vec![out]).unwrap();
        let v: Vec<View> = bufs
            .iter_mut()
            .enumerate()
            .map(|(k, b)| {
                let mut l = Layout::contiguous(f, shape);
                if transposed && k == 1 {
                    l.strides.reverse();
                    l.shape.reverse();
                }
                View::new(l, b.memory()).unwrap()
            })
            .collect();
        loop_of(&plan(prog, v[..1].to_vec(), v[1..].to_vec()).unwrap()).tiling
    };
    let exp = with(Node::Unary(Unary::Exp, 0));
    let pow = with(Node::Binary(Binary::Pow, 0, 1));
    let add = with(Node::Binary(Binary::Add, 0, 1));
    let sqrt = with(Node::Unary(Unary::Sqrt, 1));
    assert_eq!(tiling_of(&mut bufs, exp.clone(), &[n], false), Tiling::Fetched);
    assert_eq!(tiling_of(&mut bufs, pow, &[n], false), Tiling::Fetched);
    assert_eq!(Tiling::Fetched.tile(Streaming::Prefetched), (TILE_LONG, false));
    // Fitted tiles where prefetched: 2 float64 columns and 3 runs of 8 bytes.
    let fitted = (TILE_BYTES / 40).next_power_of_two() / 2;
    assert_eq!(tiling_of(&mut bufs, add, &[n], false), Tiling::Streamed(fitted));
    assert_eq!(tiling_of(&mut bufs, sqrt, &[n], false), Tiling::Streamed(fitted));
    assert_eq!(Tiling::Streamed(fitted).tile(Streaming::Prefetched), (fitted, true));
    assert_eq!(Tiling::Streamed(fitted).tile(Streaming::Hardware), (TILE_LONG, false));
    // exp(a * b): the kind reads a column that nothing fetches ahead.
    let mut exp_of_product = with(Node::Binary(Binary::Mul, 0, 1));
    exp_of_product.push(Node::Unary(Unary::Exp, 2));
    assert!(matches!(tiling_of(&mut bufs, exp_of_product.clone(), &[n], false), Tiling::Streamed(t) if t <= TILE));
    // A strided operand keeps the fitted tiles, prefetched, for its blocks.
    let side = n.isqrt();
    assert_eq!(tiling_of(&mut bufs, exp.clone(), &[side, side], true), Tiling::Blocked(fitted));
    assert_eq!(Tiling::Blocked(fitted).tile(Streaming::Hardware), (fitted, true));
    // In the caches: whole tiles, fetched by the hardware; long ones where
    // every node reads or writes its operand in place.
    assert_eq!(tiling_of(&mut bufs, exp, &[1000], false), Tiling::CachedInPlace);
    assert_eq!(Tiling::CachedInPlace.tile(Streaming::Prefetched), (TILE_LONG, false));
    assert_eq!(tiling_of(&mut bufs, exp_of_product, &[1000], false), Tiling::Cached);
    assert_eq!(Tiling::Cached.tile(Streaming::Prefetched), (TILE, false));
    let transcendental: Vec<Unary> = Unary::ALL.into_iter().filter(|k| k.is_transcendental()).collect();
    assert_eq!(transcendental.first(), Some(&Unary::Exp));
    assert_eq!(transcendental.last(), Some(&Unary::Erf));
    assert_eq!(transcendental.len(), 19);
}

#[test]
fn the_loop_that_measures_the_streaming_way_computes_what_any_loop_does() {
    let f = Dtype::Float32;
    // A streamed loop of one row, long enough to measure, and a partial
    // last tile.
    let n = CALIBRATION_MIN.max(cached_bytes() / 12) + 12345;
    let mut seed = 11u64;
    let values = |seed: &mut u64| -> Vec<f32> { (0..n).map(|_| (next(seed) % 20001) as f32 / 64.0 - 150.0).collect() };
    let (mut a, mut b) = (values(&mut seed), values(&mut seed));
    let want: Vec<u32> = a.iter().zip(&b).map(|(x, y)| (x + y).to_bits()).collect();
    let prog = Prog::new(vec![f, f], vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Add, 0, 1)], vec![2]).unwrap();
    let memory = |v: &mut Vec<f32>| Memory { base: v.as_mut_ptr() as *mut u8, bytes: 4 * v.len() };
    for threads in [1, 3] {
        pool::set_threads(threads).unwrap();
        for measured in [false, true] {
            if !measured {
                streaming::forget();
            }
            let mut out = vec![f32::NAN; n];
            let v = |m: Memory| View::new(Layout::contiguous(f, &[n]), m).unwrap();
            let p = plan(prog.clone(), vec![v(memory(&mut out))], vec![v(memory(&mut a)), v(memory(&mut b))]).unwrap();
            let lp = loop_of(&p);
            assert!(matches!(lp.tiling, Tiling::Streamed(_)), "{:?}", lp.tiling);
            p.run().unwrap();
            let got: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
            let first_wrong = got.iter().zip(&want).position(|(g, w)| g != w);
            assert_eq!(first_wrong, None, "threads {threads}, measured before: {measured}");
            // Loops that measure are the first few streamed ones; another
            // test's loops may measure meanwhile.
            if !measured {
                for _ in 1..streaming::MEASURED_LOOPS {
                    plan(prog.clone(), vec![v(memory(&mut out))], vec![v(memory(&mut a)), v(memory(&mut b))]).unwrap().run().unwrap();
                }
                assert!(streaming::choice().is_some());
            }
        }
    }
}
