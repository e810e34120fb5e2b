//! Tests of `contract` against slow references written from the
//! definitions: one output at a time, each product fused into its chain, or
//! the terms dealt into lane order's blocks and lanes by hand; on every
//! kind of layout, both sides of each threshold of the order rule, under 1
//! and 3 threads.

use super::*;
use crate::loops::cast::cast;
use crate::loops::column::Col;
use crate::core::layout::{Layout, Memory};
use crate::loops::memio;
use crate::core::pool;
use crate::core::test_rng::splitmix;

/// Memory for a test array, 8-byte aligned, with room to spare.
struct Buf(Vec<u64>);

impl Buf {
    fn new(bytes: usize) -> Buf {
        Buf(vec![0; bytes.div_ceil(8) + 2])
    }
    fn memory(&mut self) -> Memory {
        Memory { base: self.0.as_mut_ptr() as *mut u8, bytes: self.0.len() * 8 }
    }
}

/// How a test lays an array out in memory.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Lay {
    /// C order from element 0.
    C,
    /// Fortran order (every axis transposed).
    F,
    /// C order with every stride negated.
    Neg,
    /// C order from element 3.
    Off,
    /// C order but axis 0 broadcast (stride 0; the values must repeat).
    Bcast,
    /// C order from element 3, the runs along the last axis 5 elements
    /// further apart than they need (a view of a wider array's columns).
    Gap,
}

fn layout(d: Dtype, shape: &[usize], lay: Lay) -> Layout {
    let mut l = Layout::contiguous(d, shape);
    match lay {
        Lay::C => {}
        Lay::F => {
            let rev: Vec<usize> = shape.iter().rev().copied().collect();
            let mut s = Layout::contiguous(d, &rev).strides;
            s.reverse();
            l.strides = s;
        }
        Lay::Neg => {
            let span: isize = shape.iter().zip(&l.strides).map(|(&n, &s)| (n.max(1) as isize - 1) * s).sum();
            l.strides.iter_mut().for_each(|s| *s = -*s);
            l.offset = span as usize;
        }
        Lay::Off => l.offset = 3,
        Lay::Gap => {
            let mut wide = shape.to_vec();
            if let Some(last) = wide.last_mut() {
                *last += 5;
            }
            l = Layout { offset: 3, ..Layout::contiguous(d, &wide) };
            l.shape = shape.to_vec();
        }
        Lay::Bcast => {
            if !shape.is_empty() {
                l.strides[0] = 0;
            }
        }
    }
    l
}

/// The C-order index of multi-index `ix` in `shape`.
fn linear(shape: &[usize], ix: &[usize]) -> usize {
    shape.iter().zip(ix).fold(0, |a, (&n, &i)| a * n + i)
}

/// The multi-index of C-order index `t` in `shape`.
fn unravel(shape: &[usize], mut t: usize) -> Vec<usize> {
    let mut ix = vec![0; shape.len()];
    for (x, &n) in ix.iter_mut().zip(shape).rev() {
        *x = t % n;
        t /= n;
    }
    ix
}

/// The element index of multi-index `ix` in layout `l`.
fn element(l: &Layout, ix: &[usize]) -> isize {
    l.offset as isize + ix.iter().zip(&l.strides).map(|(&i, &s)| i as isize * s).sum::<isize>()
}

/// Stores one value, cast from complex128 (which holds it), at element `at`.
fn put(mem: Memory, d: Dtype, at: isize, v: C64) {
    let mut out = Col::new(d, 1);
    cast(Dtype::Complex128, d, &Col::C64(vec![v]).as_ref(), &mut out.as_mut(), 1, false);
    // SAFETY: the tests' layouts lie in their buffers.
    unsafe { memio::store(mem, d, at, 1, 1, &out.as_ref()) };
}

/// Stores one integer, cast from int64, at element `at`.
fn put_int(mem: Memory, d: Dtype, at: isize, v: i64) {
    let mut out = Col::new(d, 1);
    cast(Dtype::Int64, d, &Col::I64(vec![v]).as_ref(), &mut out.as_mut(), 1, false);
    // SAFETY: as in `put`.
    unsafe { memio::store(mem, d, at, 1, 1, &out.as_ref()) };
}

/// Loads element `at` cast into `to`.
fn get(mem: Memory, d: Dtype, at: isize, to: Dtype) -> Col {
    let mut x = Col::new(d, 1);
    // SAFETY: as in `put`.
    unsafe { memio::load(mem, d, at, 1, 1, &mut x.as_mut()) };
    let mut out = Col::new(to, 1);
    cast(d, to, &x.as_ref(), &mut out.as_mut(), 1, false);
    out
}

/// An array of logical values in C order, placed in memory by a layout.
struct Arr {
    _buf: Buf,
    view: View,
}

fn place(d: Dtype, shape: &[usize], lay: Lay, vals: &[C64]) -> Arr {
    let l = layout(d, shape, lay);
    let (_, hi) = l.span().unwrap().unwrap_or((0, 0));
    let mut buf = Buf::new(((hi as usize + 2) * d.bits()).div_ceil(8) + 16);
    let view = View::new(l, buf.memory()).unwrap();
    let n: usize = shape.iter().product();
    assert!(vals.len() >= n, "a value for each of {n} elements");
    for (t, &v) in vals.iter().enumerate().take(n) {
        let ix = unravel(shape, t);
        put(view.memory, d, element(&view.layout, &ix), v);
    }
    Arr { _buf: buf, view }
}

fn place_ints(d: Dtype, shape: &[usize], lay: Lay, vals: &[i64]) -> Arr {
    let mut a = place(d, shape, lay, &vec![C64::new(0.0, 0.0); vals.len()]);
    let mem = a.view.memory;
    for (t, &v) in vals.iter().enumerate() {
        let at = element(&a.view.layout, &unravel(shape, t));
        put_int(mem, d, at, v);
    }
    a.view.memory = mem;
    a
}

/// dst's values in C order, cast into `to`.
fn read_all(v: &View, to: Dtype) -> Vec<Col> {
    (0..v.layout.size()).map(|t| get(v.memory, v.layout.dtype, element(&v.layout, &unravel(&v.layout.shape, t)), to)).collect()
}

/// A test's random numbers.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        (splitmix(&mut self.0) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A value of dtype `d`, of a magnitude about 2^-3 to 2^3 for floats,
    /// any of its values for integers of at most 16 bits, below 2^20 else.
    fn value(&mut self, d: Dtype) -> C64 {
        let x = (self.unit() * 2.0 - 1.0) * 2f64.powi((self.unit() * 6.0) as i32 - 3);
        let y = (self.unit() * 2.0 - 1.0) * 2f64.powi((self.unit() * 6.0) as i32 - 3);
        let mut c = match d.family() {
            crate::core::dtype::Family::Logical => C64::new((self.unit() < 0.5) as u8 as f64, 0.0),
            crate::core::dtype::Family::Complex => C64::new(x, y),
            crate::core::dtype::Family::Float => C64::new(x, 0.0),
            _ => {
                let w = d.bits().min(20) as i32;
                let r = (self.unit() * 2f64.powi(w)).floor();
                let signed = d.family() == crate::core::dtype::Family::Signed;
                C64::new(if signed { r - 2f64.powi(w - 1) } else { r }, 0.0)
            }
        };
        // Round into the dtype, so that the logical value is the stored one.
        let mut col = Col::new(d, 1);
        cast(Dtype::Complex128, d, &Col::C64(vec![c]).as_ref(), &mut col.as_mut(), 1, false);
        let mut back = Col::new(Dtype::Complex128, 1);
        cast(d, Dtype::Complex128, &col.as_ref(), &mut back.as_mut(), 1, false);
        if let Col::C64(v) = back {
            c = v[0];
        }
        c
    }
    fn values(&mut self, d: Dtype, shape: &[usize], bcast: bool) -> Vec<C64> {
        let n: usize = shape.iter().product();
        let mut v: Vec<C64> = (0..n).map(|_| self.value(d)).collect();
        if bcast && !shape.is_empty() && n > 0 {
            // Every index along axis 0 holds the values of index 0.
            let inner = n / shape[0];
            for t in inner..n {
                v[t] = v[t % inner];
            }
        }
        v
    }
}

/// The accs the references compute in, written from the definitions.
trait Acc: Copy + PartialEq + std::fmt::Debug {
    const DTYPE: Dtype;
    const TERMS: usize;
    fn zero() -> Self;
    /// A logical value cast into the acc (it holds the test values exactly
    /// or rounds them as Cast does).
    fn of(c: C64) -> Self;
    /// Term `t` of the product `a b` fused into `s`.
    fn term(a: Self, b: Self, t: usize, s: Self) -> Self;
    fn add(x: Self, y: Self) -> Self;
    fn col(self) -> Col;
}

impl Acc for f32 {
    const DTYPE: Dtype = Dtype::Float32;
    const TERMS: usize = 1;
    fn zero() -> f32 {
        0.0
    }
    fn of(c: C64) -> f32 {
        c.re as f32
    }
    fn term(a: f32, b: f32, _t: usize, s: f32) -> f32 {
        a.mul_add(b, s)
    }
    fn add(x: f32, y: f32) -> f32 {
        x + y
    }
    fn col(self) -> Col {
        Col::F32(vec![self])
    }
}

impl Acc for f64 {
    const DTYPE: Dtype = Dtype::Float64;
    const TERMS: usize = 1;
    fn zero() -> f64 {
        0.0
    }
    fn of(c: C64) -> f64 {
        c.re
    }
    fn term(a: f64, b: f64, _t: usize, s: f64) -> f64 {
        a.mul_add(b, s)
    }
    fn add(x: f64, y: f64) -> f64 {
        x + y
    }
    fn col(self) -> Col {
        Col::F64(vec![self])
    }
}

macro_rules! complex_acc {
    ($t:ty, $f:ty, $d:ident, $col:ident) => {
        impl Acc for $t {
            const DTYPE: Dtype = Dtype::$d;
            const TERMS: usize = 2;
            fn zero() -> $t {
                <$t>::new(0.0, 0.0)
            }
            fn of(c: C64) -> $t {
                <$t>::new(c.re as $f, c.im as $f)
            }
            fn term(a: $t, b: $t, t: usize, s: $t) -> $t {
                // Term 0: re a · b; term 1: i im a · b.
                if t == 0 {
                    <$t>::new(a.re.mul_add(b.re, s.re), a.re.mul_add(b.im, s.im))
                } else {
                    <$t>::new((-a.im).mul_add(b.im, s.re), a.im.mul_add(b.re, s.im))
                }
            }
            fn add(x: $t, y: $t) -> $t {
                <$t>::new(x.re + y.re, x.im + y.im)
            }
            fn col(self) -> Col {
                Col::$col(vec![self])
            }
        }
    };
}
complex_acc!(C32, f32, Complex64, C32);
complex_acc!(C64, f64, Complex128, C64);

/// The lane-order sum of `terms` (each a closure fusing one term into a
/// lane), init aside, dealt by hand.
fn lane_sum<T: Acc>(terms: &[(T, T, usize)]) -> T {
    fn tree<T: Acc>(blocks: &[T]) -> T {
        if blocks.len() == 1 {
            return blocks[0];
        }
        let mut left = 1;
        while left * 2 < blocks.len() {
            left *= 2;
        }
        T::add(tree(&blocks[..left]), tree(&blocks[left..]))
    }
    let sums: Vec<T> = terms
        .chunks(1024)
        .map(|block| {
            let mut lanes = [T::zero(); 16];
            for (q, &(a, b, t)) in block.iter().enumerate() {
                lanes[q % 16] = T::term(a, b, t, lanes[q % 16]);
            }
            let mut present = block.len().min(16);
            for step in [8, 4, 2, 1] {
                for i in 0..step {
                    if i + step < present {
                        lanes[i] = T::add(lanes[i], lanes[i + step]);
                    }
                }
                present = present.min(step);
            }
            lanes[0]
        })
        .collect();
    tree(&sums)
}

/// A contraction to test: operands' shapes, pairs, dtypes and layouts.
#[derive(Clone, Debug)]
struct Case {
    a: Vec<usize>,
    b: Vec<usize>,
    pairs: Pairs,
    da: Dtype,
    db: Dtype,
    dd: Dtype,
    init: Option<Dtype>,
    lays: [Lay; 4],
}

impl Case {
    fn mm(m: usize, n: usize, k: usize, d: Dtype) -> Case {
        Case {
            a: vec![m, k],
            b: vec![k, n],
            pairs: Pairs { batch: vec![], contracting: vec![(1, 0)] },
            da: d,
            db: d,
            dd: d,
            init: None,
            lays: [Lay::C; 4],
        }
    }
}

/// The logical operands of a case and the index maps of its outputs.
struct Setup {
    a: Vec<C64>,
    b: Vec<C64>,
    init: Option<Vec<C64>>,
    dst_shape: Vec<usize>,
    /// For each output (C order of dst) and each product number, the C
    /// index of its a and b elements.
    index: Box<dyn Fn(usize, usize) -> (usize, usize)>,
    k: usize,
}

fn setup(c: &Case, rng: &mut Rng) -> Setup {
    let (ra, rb) = c.pairs.roles(&c.a, &c.b).unwrap();
    let dst_shape = c.pairs.dst_shape(&c.a, &c.b).unwrap();
    let ext = |s: &[usize], axes: &[usize]| -> Vec<usize> { axes.iter().map(|&x| s[x]).collect() };
    let (bs, fa, fb, ks) = (ext(&c.a, &ra.batch), ext(&c.a, &ra.free), ext(&c.b, &rb.free), ext(&c.a, &ra.depth));
    let k: usize = ks.iter().product();
    let (sa, sb) = (c.a.clone(), c.b.clone());
    let index = move |out: usize, kk: usize| {
        let ix = unravel(&[bs.iter().product(), fa.iter().product(), fb.iter().product::<usize>()], out);
        let (bi, fi, fj, di) = (unravel(&bs, ix[0]), unravel(&fa, ix[1]), unravel(&fb, ix[2]), unravel(&ks, kk));
        let mut xa = vec![0; sa.len()];
        let mut xb = vec![0; sb.len()];
        for (t, &ax) in ra.batch.iter().enumerate() {
            xa[ax] = bi[t];
        }
        for (t, &ax) in rb.batch.iter().enumerate() {
            xb[ax] = bi[t];
        }
        for (t, &ax) in ra.free.iter().enumerate() {
            xa[ax] = fi[t];
        }
        for (t, &ax) in rb.free.iter().enumerate() {
            xb[ax] = fj[t];
        }
        for (t, &ax) in ra.depth.iter().enumerate() {
            xa[ax] = di[t];
        }
        for (t, &ax) in rb.depth.iter().enumerate() {
            xb[ax] = di[t];
        }
        (linear(&sa, &xa), linear(&sb, &xb))
    };
    Setup {
        a: rng.values(c.da, &c.a, c.lays[0] == Lay::Bcast),
        b: rng.values(c.db, &c.b, c.lays[1] == Lay::Bcast),
        init: c.init.map(|d| rng.values(d, &dst_shape, c.lays[3] == Lay::Bcast)),
        dst_shape,
        index: Box::new(index),
        k,
    }
}

/// The reference dst of a float or complex case in acc `T`, each output
/// by the order rule's order, cast once into dst's dtype.
fn reference<T: Acc>(c: &Case, s: &Setup, chain: bool) -> Vec<Col> {
    let outs: usize = s.dst_shape.iter().product();
    (0..outs)
        .map(|o| {
            let init = s.init.as_ref().map(|v| T::of(v[o]));
            let terms: Vec<(T, T, usize)> = (0..s.k)
                .flat_map(|kk| {
                    let (ia, ib) = (s.index)(o, kk);
                    let (x, y) = (T::of(s.a[ia]), T::of(s.b[ib]));
                    (0..T::TERMS).map(move |t| (x, y, t))
                })
                .collect();
            let sum = if chain {
                terms.iter().fold(init.unwrap_or(T::zero()), |acc, &(x, y, t)| T::term(x, y, t, acc))
            } else if terms.is_empty() {
                init.unwrap_or(T::zero())
            } else {
                let l = lane_sum(&terms);
                init.map_or(l, |i| T::add(l, i))
            };
            let mut out = Col::new(c.dd, 1);
            cast(T::DTYPE, c.dd, &sum.col().as_ref(), &mut out.as_mut(), 1, false);
            out
        })
        .collect()
}

/// Runs a case; gives dst's values (cast into complex128 or int64) and
/// the answer.
fn run_case(c: &Case, s: &Setup, acc: Dtype, threads: usize) -> (Vec<Col>, Answer) {
    let a = place(c.da, &c.a, c.lays[0], &s.a);
    let b = place(c.db, &c.b, c.lays[1], &s.b);
    let zeros = vec![C64::new(0.0, 0.0); s.dst_shape.iter().product()];
    let dst = place(c.dd, &s.dst_shape, c.lays[2], &zeros);
    let init = c.init.map(|d| place(d, &s.dst_shape, c.lays[3], s.init.as_ref().unwrap()));
    pool::set_threads(threads).unwrap();
    let ans = contract(&c.pairs, acc, &dst.view, init.as_ref().map(|i| &i.view), &a.view, &b.view);
    (read_all(&dst.view, c.dd), ans)
}

/// Whether two lists of values are equal bit for bit, any NaN equal to
/// any other (Debug prints every float so that it reads back exactly,
/// -0 apart from +0, and every NaN alike).
fn same_cols(x: &[Col], y: &[Col]) -> bool {
    x.len() == y.len() && x.iter().zip(y).all(|(p, q)| format!("{p:?}") == format!("{q:?}"))
}

/// Runs a float or complex case under 1 and 3 threads against the
/// reference in acc `T`.
fn check<T: Acc>(c: &Case, seed: u64) {
    let mut rng = Rng(seed);
    let s = setup(c, &mut rng);
    let (ra, rb) = c.pairs.roles(&c.a, &c.b).unwrap();
    let (m, n) = (shape::extent(&c.a, &ra.free), shape::extent(&c.b, &rb.free));
    let chain = chain_order(m, n, s.k);
    let want = reference::<T>(c, &s, chain);
    if s.k >= 100 && c.dd.bits() >= 32 {
        // The other order's bits differ: the test tells the orders apart.
        assert!(!same_cols(&want, &reference::<T>(c, &s, !chain)), "{c:?}");
    }
    for threads in [1, 3] {
        let (got, ans) = run_case(c, &s, T::DTYPE, threads);
        assert_eq!(ans, Answer::Done, "{c:?}");
        assert!(same_cols(&got, &want), "{c:?} on {threads} threads:\n got {got:?}\nwant {want:?}");
    }
}

#[test]
fn the_order_rule_and_its_thresholds() {
    assert!(chain_order(5, 13, 100) && chain_order(8, 8, 8191) && chain_order(5, 13, 8319));
    assert!(!chain_order(4, 100, 10) && !chain_order(100, 4, 10));
    assert!(!chain_order(5, 12, 10) && !chain_order(7, 9, 10));
    assert!(!chain_order(8, 8, 8192) && !chain_order(5, 13, 8320));
}

/// Shapes (m, n, k) on both sides of each threshold, blocks' edges and
/// the packed loop's slices.
const SHAPES: [(usize, usize, usize); 12] = [
    (5, 13, 7),
    (5, 12, 7),
    (8, 8, 40),
    (7, 9, 40),
    (4, 30, 33),
    (30, 4, 33),
    (5, 5, 3199),
    (5, 5, 3200),
    (1, 1, 2049),
    (3, 2, 1025),
    (1, 1, 0),
    (37, 70, 300),
];

#[test]
fn real_matrix_products_in_both_orders_on_every_layout() {
    let lays = [Lay::C, Lay::F, Lay::Neg, Lay::Off, Lay::Gap];
    for (t, &(m, n, k)) in SHAPES.iter().enumerate() {
        for (u, &d) in [Dtype::Float32, Dtype::Float64].iter().enumerate() {
            let mut c = Case::mm(m, n, k, d);
            c.lays = [lays[t % 5], lays[(t + u + 1) % 5], lays[(t + 2) % 5], lays[(t + 3) % 5]];
            c.init = (t % 3 == 0).then_some(d);
            if d == Dtype::Float32 {
                check::<f32>(&c, 10 + t as u64);
            } else {
                check::<f64>(&c, 10 + t as u64);
            }
        }
    }
}

/// Where dst holds the acc's values in rows of unit column step, the last
/// depth slice stores each whole microkernel tile straight into dst, and
/// where there is no init the first starts its sums from +0: the bits are
/// the reference's with tiles whole and partial, one slice and several,
/// dst contiguous, offset, its rows further apart than its columns (and
/// negated or transposed, which take the scratch), init or none, on every
/// instruction set's microkernels.
#[test]
fn sums_stored_straight_into_dst_keep_every_bit() {
    let shapes = [(24, 64, 200), (25, 65, 450), (12, 32, 1), (100, 40, 7), (36, 96, 1100)];
    let lays = [Lay::C, Lay::Off, Lay::Gap, Lay::Neg, Lay::F];
    for baseline in [false, true] {
        crate::core::isa::baseline_here(baseline);
        for (t, &(m, n, k)) in shapes.iter().enumerate() {
            let mut c = Case::mm(m, n, k, Dtype::Float32);
            c.lays = [Lay::C, Lay::F, lays[t % 5], lays[(t + 2) % 5]];
            c.init = (t % 2 == 1).then_some(Dtype::Float32);
            check::<f32>(&c, 500 + t as u64);
            c.da = Dtype::Float64;
            c.db = Dtype::Float64;
            c.dd = Dtype::Float64;
            c.init = (t % 2 == 0).then_some(Dtype::Float64);
            check::<f64>(&c, 520 + t as u64);
            c.da = Dtype::Complex64;
            c.db = Dtype::Complex64;
            c.dd = Dtype::Complex64;
            c.init = None;
            check::<C32>(&c, 540 + t as u64);
        }
    }
    crate::core::isa::baseline_here(false);
}

/// A matrix times a vector, in lane order four rows at a time: groups
/// short of four at the end and at parts' edges (400 rows over 3 threads),
/// every layout, init or none, batched, complex.
#[test]
fn matrix_vector_products_four_rows_at_a_time() {
    let lays = [Lay::C, Lay::F, Lay::Neg, Lay::Off];
    for (t, &(m, k)) in [(37usize, 1500usize), (6, 1024), (9, 17), (4, 3000), (400, 1500)].iter().enumerate() {
        for d in [Dtype::Float32, Dtype::Float64] {
            let mut c = Case::mm(m, 1, k, d);
            c.lays = [lays[t % 4], lays[(t + 1) % 4], lays[(t + 2) % 4], lays[(t + 3) % 4]];
            c.init = (t % 2 == 0).then_some(d);
            assert!(!chain_order(m, 1, k));
            if d == Dtype::Float32 {
                check::<f32>(&c, 700 + t as u64);
            } else {
                check::<f64>(&c, 720 + t as u64);
            }
        }
    }
    let batched = Case {
        a: vec![3, 13, 700],
        b: vec![3, 700],
        pairs: Pairs { batch: vec![(0, 0)], contracting: vec![(2, 1)] },
        init: Some(Dtype::Float32),
        lays: [Lay::Neg, Lay::C, Lay::Off, Lay::C],
        ..Case::mm(0, 0, 0, Dtype::Float32)
    };
    check::<f32>(&batched, 740);
    check::<C32>(&Case { lays: [Lay::F, Lay::C, Lay::C, Lay::C], ..Case::mm(37, 1, 700, Dtype::Complex64) }, 741);
}

/// A matrix times a vector stores each part's outputs together, a run of
/// rows of one batch index at a time: into a dst whose rows do not lie one
/// step apart (two free axes of a, dst in Fortran order), across batch
/// indices within a part, and into scratch where dst is the vector itself
/// (x = A x); the reference's bits on 1 and 3 threads.
#[test]
fn matrix_vector_outputs_stored_by_runs_of_rows() {
    let free2 = Case { a: vec![5, 7, 300], b: vec![300], pairs: Pairs { batch: vec![], contracting: vec![(2, 0)] }, lays: [Lay::C, Lay::Neg, Lay::F, Lay::C], ..Case::mm(0, 0, 0, Dtype::Float32) };
    check::<f32>(&free2, 760);
    let batched = Case {
        a: vec![3, 200, 1500],
        b: vec![3, 1500],
        pairs: Pairs { batch: vec![(0, 0)], contracting: vec![(2, 1)] },
        lays: [Lay::C, Lay::Off, Lay::Neg, Lay::C],
        ..Case::mm(0, 0, 0, Dtype::Float64)
    };
    check::<f64>(&batched, 761);
    for (m, threads) in [(300usize, 1usize), (300, 3), (7, 3)] {
        let c = Case::mm(m, 1, m, Dtype::Float64);
        let s = setup(&c, &mut Rng(770 + m as u64));
        let (want, _) = run_case(&c, &s, Dtype::Float64, threads);
        let a = place(Dtype::Float64, &c.a, Lay::C, &s.a);
        let b = place(Dtype::Float64, &c.b, Lay::C, &s.b);
        pool::set_threads(threads).unwrap();
        assert_eq!(contract(&c.pairs, Dtype::Float64, &b.view, None, &a.view, &b.view), Answer::Done);
        assert!(same_cols(&read_all(&b.view, Dtype::Float64), &want), "{m} on {threads} threads");
    }
}

#[test]
fn complex_matrix_products_in_both_orders() {
    for (t, &(m, n, k)) in SHAPES.iter().enumerate() {
        let k = if t == 9 { 513 } else { k.min(600) };
        let mut c = Case::mm(m, n, k, Dtype::Complex64);
        c.lays = [Lay::F, Lay::Neg, Lay::C, Lay::Off];
        c.init = (t % 2 == 0).then_some(Dtype::Complex64);
        check::<C32>(&c, 40 + t as u64);
        c.da = Dtype::Complex128;
        c.db = Dtype::Complex128;
        c.dd = Dtype::Complex128;
        c.init = c.init.map(|_| Dtype::Complex128);
        check::<C64>(&c, 60 + t as u64);
    }
}

/// The AVX2 and AVX-512 microkernels of float32, float64, complex64 and
/// complex128 (tiles of 4, 6 and 12 rows, depth
/// slices of different lengths) each give the reference's bits, so the
/// same bits: shapes off every tile's multiple, depths over several
/// slices, transposed, negated, offset and broadcast operands, with and
/// without init.
#[test]
fn both_instruction_sets_give_the_reference_bits() {
    let shapes = [(29, 45, 300), (13, 70, 517), (50, 9, 1030), (7, 33, 129)];
    let lays = [Lay::C, Lay::F, Lay::Neg, Lay::Off, Lay::Bcast];
    for baseline in [true, false] {
        crate::core::isa::baseline_here(baseline);
        if !baseline && !crate::core::isa::avx512() {
            println!("note: no AVX-512 on this CPU; its microkernels not run");
            break;
        }
        for (t, &(m, n, k)) in shapes.iter().enumerate() {
            for d in [Dtype::Float32, Dtype::Float64, Dtype::Complex64, Dtype::Complex128] {
                let mut c = Case::mm(m, n, k, d);
                c.lays = [lays[t % 5], lays[(t + 1) % 5], lays[(t + 2) % 4], Lay::C];
                c.init = (t % 2 == 1).then_some(d);
                assert!(chain_order(m, n, k));
                match d {
                    Dtype::Float32 => check::<f32>(&c, 200 + t as u64),
                    Dtype::Float64 => check::<f64>(&c, 300 + t as u64),
                    Dtype::Complex64 => check::<C32>(&c, 400 + t as u64),
                    _ => check::<C64>(&c, 500 + t as u64),
                }
            }
        }
    }
    crate::core::isa::baseline_here(false);
}

#[test]
fn batches_several_axes_and_broadcast_operands() {
    // a [k1, B, m, k2], b [B, n1, k2, k1, n2]: batch (1, 0), contracting
    // (0, 3) then (3, 2); dst [B, m, n1, n2].
    let base = Case {
        a: vec![3, 4, 6, 5],
        b: vec![4, 2, 5, 3, 7],
        pairs: Pairs { batch: vec![(1, 0)], contracting: vec![(0, 3), (3, 2)] },
        da: Dtype::Float32,
        db: Dtype::Float32,
        dd: Dtype::Float32,
        init: Some(Dtype::Float32),
        lays: [Lay::C; 4],
    };
    for (t, lays) in [[Lay::C; 4], [Lay::F, Lay::Neg, Lay::Off, Lay::F], [Lay::Bcast, Lay::C, Lay::F, Lay::Bcast]].into_iter().enumerate() {
        check::<f32>(&Case { lays, ..base.clone() }, 80 + t as u64);
    }
    // A batch of many small products, lane order (2 rows): b broadcast
    // along the batch.
    let small = Case {
        a: vec![9, 2, 70],
        b: vec![9, 70, 3],
        pairs: Pairs { batch: vec![(0, 0)], contracting: vec![(2, 1)] },
        lays: [Lay::Off, Lay::Bcast, Lay::Neg, Lay::C],
        ..base.clone()
    };
    check::<f32>(&small, 90);
    check::<C64>(&Case { da: Dtype::Complex128, db: Dtype::Complex128, dd: Dtype::Complex128, init: None, ..small }, 91);
}

#[test]
fn a_batch_split_or_a_transposed_operand_keeps_every_bit() {
    // The whole batch against each batch index alone, and a^T b against
    // the same values in another layout.
    let mut rng = Rng(7);
    let (nb, m, n, k) = (3, 20, 9, 300);
    let c = Case {
        a: vec![nb, m, k],
        b: vec![nb, k, n],
        pairs: Pairs { batch: vec![(0, 0)], contracting: vec![(2, 1)] },
        ..Case::mm(0, 0, 0, Dtype::Float32)
    };
    let s = setup(&c, &mut rng);
    let (whole, _) = run_case(&c, &s, Dtype::Float32, 3);
    for bi in 0..nb {
        let one = Case { a: vec![1, m, k], b: vec![1, k, n], ..c.clone() };
        let part = Setup {
            a: s.a[bi * m * k..][..m * k].to_vec(),
            b: s.b[bi * k * n..][..k * n].to_vec(),
            init: None,
            dst_shape: vec![1, m, n],
            index: Box::new(|_, _| (0, 0)),
            k,
        };
        let (got, _) = run_case(&one, &part, Dtype::Float32, 1);
        assert!(same_cols(&got, &whole[bi * m * n..][..m * n]));
    }
    let t = Case { lays: [Lay::F, Lay::F, Lay::C, Lay::C], ..c.clone() };
    let (transposed, _) = run_case(&t, &s, Dtype::Float32, 2);
    assert!(same_cols(&transposed, &whole));
}

/// Each element enters the acc as Cast casts it: the reader of every
/// dtype into every acc against `cast` of the element, on awkward values.
#[test]
fn elements_enter_the_acc_as_cast_casts_them() {
    let specials = [0.0, -0.0, 1.0, -1.5, 2.5, 127.9, -128.5, 255.0, 65535.5, 3.0e9, -3.0e9, 1.0e20, -1.0e20, 6.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1.0e-40];
    let accs = [Dtype::Float32, Dtype::Float64, Dtype::Complex64, Dtype::Complex128, Dtype::Int4, Dtype::Uint4, Dtype::Int8, Dtype::Uint16, Dtype::Int32, Dtype::Uint32, Dtype::Int64, Dtype::Uint64];
    for src in Dtype::ALL {
        for &x in &specials {
            let mut buf = Buf::new(64);
            let mem = buf.memory();
            put(mem, src, 1, C64::new(x, -x / 3.0));
            for acc in accs {
                let want = get(mem, src, 1, acc);
                let kind = elem::kind(acc).unwrap();
                let got = {
                    // SAFETY: element 1 lies in the buffer.
                    macro_rules! via {
                        ($t:ty) => {{
                            let v: $t = unsafe { elem::reader::<$t>(src)(mem.base, 1, acc) };
                            let mut o = Col::new(acc, 1);
                            cast(<$t as Elem>::DTYPE, acc, &<$t as Elem>::column(&[v]), &mut o.as_mut(), 1, false);
                            o
                        }};
                    }
                    match kind {
                        Kind::F32 => via!(f32),
                        Kind::F64 => via!(f64),
                        Kind::C32 => via!(C32),
                        Kind::C64 => via!(C64),
                        Kind::I32 => via!(i32),
                        Kind::I64 => via!(i64),
                    }
                };
                assert!(same_cols(std::slice::from_ref(&got), std::slice::from_ref(&want)), "{src:?} {x} into {acc:?}: {got:?} {want:?}");
            }
        }
    }
    // Wide integers that no float holds enter an integer acc exactly.
    let mut buf = Buf::new(64);
    let mem = buf.memory();
    put_int(mem, Dtype::Int64, 0, i64::MIN + 12345);
    // SAFETY: element 0 lies in the buffer.
    assert_eq!(unsafe { elem::reader::<i64>(Dtype::Int64)(mem.base, 0, Dtype::Int64) }, i64::MIN + 12345);
    assert_eq!(unsafe { elem::reader::<i32>(Dtype::Int64)(mem.base, 0, Dtype::Int8) }, (12345i64 as i8) as i32);
}

/// Integer accs of 4 to 64 bits wrap: against exact sums in i128 cut to
/// the acc's width, from operands of every integer and truth dtype and
/// floats that saturate.
#[test]
fn integer_accs_wrap_modulo_their_width() {
    let accs = [Dtype::Int4, Dtype::Uint4, Dtype::Int8, Dtype::Uint8, Dtype::Int16, Dtype::Uint16, Dtype::Int32, Dtype::Uint32, Dtype::Int64, Dtype::Uint64];
    let srcs = [Dtype::Int8, Dtype::Uint8, Dtype::Int32, Dtype::Int64, Dtype::Uint64, Dtype::Bool, Dtype::Int4, Dtype::Float32];
    let mut rng = Rng(5);
    for (t, &acc) in accs.iter().enumerate() {
        for (u, &(m, n, k)) in [(9, 8, 70), (2, 3, 1500)].iter().enumerate() {
            let (da, db) = (srcs[t % srcs.len()], srcs[(t + u + 3) % srcs.len()]);
            let c = Case { da, db, dd: Dtype::Int64, lays: [Lay::F, Lay::Neg, Lay::C, Lay::C], ..Case::mm(m, n, k, da) };
            let gen = |rng: &mut Rng, d: Dtype, len: usize| -> Vec<i64> {
                (0..len)
                    .map(|_| match d {
                        Dtype::Int64 | Dtype::Uint64 => splitmix(&mut rng.0) as i64,
                        Dtype::Float32 => ((rng.unit() - 0.5) * 1.0e12) as i64,
                        d => rng.value(d).re as i64,
                    })
                    .collect()
            };
            let (av, bv) = (gen(&mut rng, da, m * k), gen(&mut rng, db, k * n));
            let a = place_ints(da, &c.a, c.lays[0], &av);
            let b = place_ints(db, &c.b, c.lays[1], &bv);
            let (bits, signed) = (acc.bits() as u32, acc.family() == crate::core::dtype::Family::Signed);
            // An element of the acc: an integer wraps, a float saturates.
            let enter = |d: Dtype, v: i64| -> i128 {
                let lo: i128 = if signed { -(1i128 << (bits - 1)) } else { 0 };
                let hi: i128 = if signed { (1i128 << (bits - 1)) - 1 } else { (1i128 << bits) - 1 };
                let v = if d == Dtype::Uint64 { v as u64 as i128 } else { v as i128 };
                if d == Dtype::Float32 {
                    (v as f32 as i128).clamp(lo, hi)
                } else {
                    v
                }
            };
            let wrap = |x: i128| -> i64 {
                let s = 128 - bits;
                let w = if signed { (x << s) >> s } else { ((x << s) as u128 >> s) as i128 };
                w as i64
            };
            for threads in [1, 3] {
                let dst = place_ints(Dtype::Int64, &[m, n], Lay::C, &vec![0; m * n]);
                pool::set_threads(threads).unwrap();
                assert_eq!(contract(&c.pairs, acc, &dst.view, None, &a.view, &b.view), Answer::Done);
                for i in 0..m {
                    for j in 0..n {
                        let exact: i128 = (0..k).map(|kk| enter(da, av[i * k + kk]).wrapping_mul(enter(db, bv[kk * n + j]))).fold(0i128, |s, x| s.wrapping_add(x));
                        let want = wrap(exact);
                        let got = match get(dst.view.memory, Dtype::Int64, (i * n + j) as isize, Dtype::Int64) {
                            Col::I64(v) => v[0],
                            _ => unreachable!(),
                        };
                        // An unsigned 64-bit sum read as int64 keeps its bits.
                        assert_eq!(got, want, "acc {acc:?} from {da:?} {db:?} at ({i}, {j})");
                    }
                }
            }
        }
    }
}

/// Narrow float, bool and sub-byte operands, and destinations narrower
/// than the acc, which round once from it.
#[test]
fn narrow_inputs_and_narrow_destinations() {
    let narrow = [Dtype::Float16, Dtype::Bfloat16, Dtype::Float8E4m3fn, Dtype::Float8E5m2, Dtype::Float4E2m1fn, Dtype::Bool, Dtype::Bit, Dtype::Int4, Dtype::Uint4];
    for (t, &d) in narrow.iter().enumerate() {
        for &(m, n, k) in &[(6, 20, 50), (3, 1, 1100)] {
            let dd = narrow[(t + 1) % narrow.len()];
            let c = Case { db: Dtype::Float32, dd, init: Some(d), lays: [Lay::Neg, Lay::F, Lay::Off, Lay::F], ..Case::mm(m, n, k, d) };
            check::<f32>(&c, 100 + t as u64);
            let c = Case { dd: Dtype::Float16, init: None, ..c };
            check::<f64>(&c, 120 + t as u64);
        }
    }
}

/// The error bound on ill-conditioned data: within γ(K + 1) (γ(2K + 2)
/// complex) of |init| + Σ|a||b| from the exact sum, which double-double
/// sums give, in both orders.
#[test]
fn within_the_bound_of_exact_sums_on_ill_conditioned_data() {
    fn two_sum(a: f64, b: f64) -> (f64, f64) {
        let s = a + b;
        let bb = s - a;
        (s, (a - (s - bb)) + (b - bb))
    }
    /// Adds `x y` exactly into the double-double (hi, lo).
    fn add_prod(acc: (f64, f64), x: f64, y: f64) -> (f64, f64) {
        let p = x * y;
        let e = x.mul_add(y, -p);
        let (s, t) = two_sum(acc.0, p);
        let (s2, t2) = two_sum(s, t + e + acc.1);
        (s2, t2)
    }
    for acc in [Dtype::Float32, Dtype::Float64, Dtype::Complex64, Dtype::Complex128] {
        let u = if acc.part() == Dtype::Float32 { 2f64.powi(-24) } else { 2f64.powi(-53) };
        for &(m, n, k) in &[(6, 11, 700), (2, 3, 3000), (5, 5, 3300)] {
            let c = Case { init: Some(acc), ..Case::mm(m, n, k, acc) };
            let mut rng = Rng(200 + k as u64);
            let mut s = setup(&c, &mut rng);
            // Magnitudes from 2^-30 to 2^30, signs at random: sums that
            // cancel.
            let wild = |rng: &mut Rng| {
                let mut f = || (rng.unit() * 2.0 - 1.0) * 2f64.powi((rng.unit() * 60.0) as i32 - 30);
                let (re, im) = (f(), f());
                if acc.part() == Dtype::Float32 { C64::new(re as f32 as f64, im as f32 as f64) } else { C64::new(re, im) }
            };
            let real = !acc.is_complex();
            for v in s.a.iter_mut().chain(s.b.iter_mut()).chain(s.init.as_mut().unwrap().iter_mut()) {
                *v = wild(&mut rng);
                if real {
                    v.im = 0.0;
                }
            }
            let (got, ans) = run_case(&c, &s, acc, 3);
            assert_eq!(ans, Answer::Done);
            let terms = if real { k + 1 } else { 2 * k + 2 } as f64;
            let gamma = terms * u / (1.0 - terms * u);
            for (o, g) in got.iter().enumerate() {
                let g = match g {
                    Col::F32(v) => C64::new(v[0] as f64, 0.0),
                    Col::F64(v) => C64::new(v[0], 0.0),
                    Col::C32(v) => C64::new(v[0].re as f64, v[0].im as f64),
                    Col::C64(v) => v[0],
                    _ => unreachable!(),
                };
                let init = s.init.as_ref().unwrap()[o];
                let (mut re, mut im) = ((init.re, 0.0), (init.im, 0.0));
                let mut mags = init.norm();
                for kk in 0..k {
                    let (ia, ib) = (s.index)(o, kk);
                    let (x, y) = (s.a[ia], s.b[ib]);
                    re = add_prod(add_prod(re, x.re, y.re), -x.im, y.im);
                    im = add_prod(add_prod(im, x.re, y.im), x.im, y.re);
                    mags += x.norm() * y.norm();
                }
                let err = C64::new((g.re - re.0) - re.1, (g.im - im.0) - im.1).norm();
                assert!(err <= gamma * mags * (1.0 + 1e-9), "{acc:?} {m}x{n}x{k} output {o}: error {err:e} past {:e}", gamma * mags);
            }
        }
    }
}

/// A refused call, for a wrong shape, a repeated or missing axis, and a
/// declined one, for an acc nx.cpu does not accumulate in, leave dst as
/// it was.
#[test]
fn refusals_and_declines_leave_dst_untouched() {
    let a = place(Dtype::Float32, &[3, 4], Lay::C, &[C64::new(1.0, 0.0); 12]);
    let b = place(Dtype::Float32, &[4, 5], Lay::C, &vec![C64::new(1.0, 0.0); 20]);
    let b_bad = place(Dtype::Float32, &[3, 5], Lay::C, &vec![C64::new(1.0, 0.0); 15]);
    let sentinel = vec![C64::new(7.0, 0.0); 15];
    let dst = place(Dtype::Float32, &[3, 5], Lay::C, &sentinel);
    let wrong = place(Dtype::Float32, &[5, 3], Lay::C, &sentinel);
    let mm = Pairs { batch: vec![], contracting: vec![(1, 0)] };
    let before = read_all(&dst.view, Dtype::Float32);
    let refused = |ans: Answer, what: &str| match ans {
        Answer::Refused(m) => assert!(m.contains(what), "{m} lacks {what}"),
        other => panic!("{other:?} where a refusal for {what} was due"),
    };
    refused(contract(&mm, Dtype::Float32, &dst.view, None, &a.view, &b_bad.view), "extents");
    refused(contract(&mm, Dtype::Float32, &wrong.view, None, &a.view, &b.view), "shape");
    refused(contract(&mm, Dtype::Float32, &dst.view, Some(&wrong.view), &a.view, &b.view), "init");
    let twice = Pairs { batch: vec![(1, 0)], contracting: vec![(1, 0)] };
    refused(contract(&twice, Dtype::Float32, &dst.view, None, &a.view, &b.view), "twice");
    let past = Pairs { batch: vec![], contracting: vec![(2, 0)] };
    refused(contract(&past, Dtype::Float32, &dst.view, None, &a.view, &b.view), "rank");
    for acc in [Dtype::Float16, Dtype::Bool, Dtype::Bit, Dtype::Bfloat16, Dtype::Float8E4m3fn] {
        assert!(matches!(contract(&mm, acc, &dst.view, None, &a.view, &b.view), Answer::Declined(_)));
    }
    let wrong_before = read_all(&wrong.view, Dtype::Float32);
    assert!(same_cols(&read_all(&dst.view, Dtype::Float32), &before));
    assert!(same_cols(&read_all(&wrong.view, Dtype::Float32), &wrong_before));
    // And the same call done.
    assert_eq!(contract(&mm, Dtype::Float32, &dst.view, None, &a.view, &b.view), Answer::Done);
    assert!(read_all(&dst.view, Dtype::Float32).iter().all(|c| same_cols(std::slice::from_ref(c), &[Col::F32(vec![4.0])])));
}

/// dst may be init itself (C += A B), or share memory with an operand
/// (A = A B): every operand is read as it was before the call.
#[test]
fn dst_may_be_init_or_an_operand() {
    for (m, k, threads) in [(12, 12, 3), (3, 3, 1), (40, 40, 3)] {
        let c = Case { init: Some(Dtype::Float32), ..Case::mm(m, m, k, Dtype::Float32) };
        let mut rng = Rng(300 + m as u64);
        let s = setup(&c, &mut rng);
        let (want, _) = run_case(&c, &s, Dtype::Float32, threads);
        // init is dst.
        let a = place(Dtype::Float32, &c.a, Lay::C, &s.a);
        let b = place(Dtype::Float32, &c.b, Lay::F, &s.b);
        let d = place(Dtype::Float32, &s.dst_shape, Lay::C, s.init.as_ref().unwrap());
        pool::set_threads(threads).unwrap();
        assert_eq!(contract(&c.pairs, Dtype::Float32, &d.view, Some(&d.view), &a.view, &b.view), Answer::Done);
        assert!(same_cols(&read_all(&d.view, Dtype::Float32), &want));
        // dst is a, and init a transposed view of a: a = init + a b.
        let c2 = Case { init: Some(Dtype::Float32), ..c.clone() };
        let s2 = Setup { init: Some((0..m * m).map(|t| s.a[(t % m) * m + t / m]).collect()), index: Box::new(move |o, kk| ((o / m) * m + kk, kk * m + o % m)), ..s };
        let (want2, _) = run_case(&c2, &s2, Dtype::Float32, threads);
        let a = place(Dtype::Float32, &c.a, Lay::C, &s2.a);
        let init_view = View { layout: Layout { strides: vec![1, m as isize], ..a.view.layout.clone() }, memory: a.view.memory };
        assert_eq!(contract(&c.pairs, Dtype::Float32, &a.view, Some(&init_view), &a.view, &b.view), Answer::Done);
        assert!(same_cols(&read_all(&a.view, Dtype::Float32), &want2));
    }
}

/// A matrix times a vector where the matrix is past
/// [`streamed_past`](crate::core::caches::streamed_past) (eight rows at
/// a time, by the streaming kernel where the CPU has one) has the bits of
/// the same product computed in pieces of rows that each fit in half of it
/// (four rows at a time), on 1 and 3 threads; the last group short of its
/// rows, the depth three blocks and a tail.
#[test]
fn matrix_vector_streamed_has_the_bits_of_its_pieces() {
    let past = crate::core::caches::streamed_past();
    let k = 2049;
    let m = (past / (4 * k) + 1).next_multiple_of(8) + 3;
    // Values exact in float32, not all of one sign.
    let vals = |n: usize, s: usize| (0..n).map(|t| C64::new(((t * 2654435761 + s) % 1999) as f64 / 256.0 - 3.9, 0.0)).collect::<Vec<_>>();
    let a = place(Dtype::Float32, &[m, k], Lay::C, &vals(m * k, 1));
    let b = place(Dtype::Float32, &[k], Lay::C, &vals(k, 7));
    let zeros = vec![C64::new(0.0, 0.0); m];
    let (whole, pieces) = (place(Dtype::Float32, &[m], Lay::C, &zeros), place(Dtype::Float32, &[m], Lay::C, &zeros));
    let pairs = Pairs { batch: vec![], contracting: vec![(1, 0)] };
    let piece = (past / 2 / (4 * k)).max(1);
    for threads in [1, 3] {
        pool::set_threads(threads).unwrap();
        assert_eq!(contract(&pairs, Dtype::Float32, &whole.view, None, &a.view, &b.view), Answer::Done);
        for i0 in (0..m).step_by(piece) {
            let rows = piece.min(m - i0);
            let av = View { layout: Layout { shape: vec![rows, k], offset: a.view.layout.offset + i0 * k, ..a.view.layout.clone() }, memory: a.view.memory };
            let dv = View { layout: Layout { shape: vec![rows], offset: pieces.view.layout.offset + i0, ..pieces.view.layout.clone() }, memory: pieces.view.memory };
            assert_eq!(contract(&pairs, Dtype::Float32, &dv, None, &av, &b.view), Answer::Done);
        }
        assert!(same_cols(&read_all(&whole.view, Dtype::Float32), &read_all(&pieces.view, Dtype::Float32)), "{threads} threads");
    }
}

/// GFLOP/s of the cases later sessions bench against numpy, on 1 and 2
/// threads (and AVX2's path too where `CONTRACT_AVX2` is set):
/// `cargo test --release --no-default-features --lib contract::tests::speed -- --ignored --nocapture`
/// (`CONTRACT_SPEED=name` keeps the cases whose name contains it). The
/// median and best wall-clock times of several calls, and the process's
/// CPU time (all threads) a call, which shows work that threads repeat or
/// spend waiting where other processes load the machine.
#[test]
#[ignore]
fn speed() {
    let only = std::env::var("CONTRACT_SPEED").unwrap_or_default();
    let paths: &[bool] = if std::env::var("CONTRACT_AVX2").is_ok() { &[false, true] } else { &[false] };
    crate::contract::chain::TIME_PARTS.store(true, std::sync::atomic::Ordering::Relaxed);
    for (name, c, acc, flops) in speed_cases().into_iter().filter(|(name, ..)| name.contains(&only)) {
        let (a, b, d) = operands(&c);
        for &baseline in paths {
            crate::core::isa::baseline_here(baseline);
            for threads in [1, 2] {
                pool::set_threads(threads).unwrap();
                let reps = (4e9 / flops).clamp(5.0, 200.0) as usize;
                // The first call starts the pool and its scratch.
                assert_eq!(contract(&c.pairs, acc, &d.view, None, &a.view, &b.view), Answer::Done);
                let mut walls = vec![];
                let mut crits = vec![];
                let cpu = process_cpu_s();
                for _ in 0..reps {
                    crate::contract::chain::PART_CPU.lock().unwrap().clear();
                    let t = std::time::Instant::now();
                    assert_eq!(contract(&c.pairs, acc, &d.view, None, &a.view, &b.view), Answer::Done);
                    walls.push(t.elapsed().as_secs_f64());
                    // The busiest thread's CPU time in the call's parts.
                    let mut per: Vec<(std::thread::ThreadId, f64)> = vec![];
                    for (id, s) in crate::contract::chain::PART_CPU.lock().unwrap().drain(..) {
                        match per.iter_mut().find(|(i, _)| *i == id) {
                            Some((_, t)) => *t += s,
                            None => per.push((id, s)),
                        }
                    }
                    crits.push(per.iter().map(|x| x.1).fold(0.0, f64::max));
                }
                crits.sort_by(f64::total_cmp);
                let cpu = (process_cpu_s() - cpu) / reps as f64;
                walls.sort_by(f64::total_cmp);
                let (med, best) = (walls[reps / 2], walls[0]);
                let isa = crate::core::isa::name();
                println!(
                    "{name:<28} {isa:6} {threads} thr: median {:9.3} ms best {:9.3} ms {:7.1} GFLOP/s cpu {:9.3} ms busiest thread cpu {:9.3} ms",
                    med * 1e3,
                    best * 1e3,
                    flops / best / 1e9,
                    cpu * 1e3,
                    crits[0] * 1e3
                );
            }
        }
        crate::core::isa::baseline_here(false);
    }
}

/// The timed cases: name, case, the dtype products accumulate in, flops a call.
fn speed_cases() -> Vec<(String, Case, Dtype, f64)> {
    let mut cases = vec![];
    for n in [256, 1024, 2048] {
        for d in [Dtype::Float32, Dtype::Float64] {
            cases.push((format!("{} {n}^3", d.name()), Case::mm(n, n, n, d), d, 2.0 * (n * n * n) as f64));
        }
    }
    let f = 2.0 * 1024f64.powi(3);
    let at_b = Case { lays: [Lay::F, Lay::C, Lay::C, Lay::C], ..Case::mm(1024, 1024, 1024, Dtype::Float32) };
    cases.push(("float32 1024^3 a^T b".into(), at_b, Dtype::Float32, f));
    cases.push(("complex64 1024^3".into(), Case::mm(1024, 1024, 1024, Dtype::Complex64), Dtype::Complex64, 4.0 * f));
    let bmm = Case { a: vec![64, 128, 128], b: vec![64, 128, 128], pairs: Pairs { batch: vec![(0, 0)], contracting: vec![(2, 1)] }, ..Case::mm(0, 0, 0, Dtype::Float32) };
    cases.push(("float32 bmm 64x128^3".into(), bmm, Dtype::Float32, 2.0 * 64.0 * 128f64.powi(3)));
    for n in [1024, 4096] {
        cases.push((format!("float32 matvec {n}"), Case::mm(n, 1, n, Dtype::Float32), Dtype::Float32, 2.0 * (n * n) as f64));
    }
    let i8mm = Case { dd: Dtype::Int32, ..Case::mm(1024, 1024, 1024, Dtype::Int8) };
    cases.push(("int8->int32 1024^3".into(), i8mm, Dtype::Int32, f));
    let h = Case { dd: Dtype::Float32, ..Case::mm(1024, 1024, 1024, Dtype::Float16) };
    cases.push(("float16->float32 1024^3".into(), h, Dtype::Float32, f));
    cases
}

/// A case's operands and destination in memory, of `setup`'s values.
fn operands(c: &Case) -> (Arr, Arr, Arr) {
    let s = setup(c, &mut Rng(1));
    let a = place(c.da, &c.a, c.lays[0], &s.a);
    let b = place(c.db, &c.b, c.lays[1], &s.b);
    let d = place(c.dd, &s.dst_shape, Lay::C, &vec![C64::new(0.0, 0.0); s.dst_shape.iter().product()]);
    (a, b, d)
}

/// Seconds of CPU time the process has used, all its threads, in the
/// ticks of 1/100 s Linux counts (`/proc/self/stat`'s utime and stime).
fn process_cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command's closing parenthesis: state is the
    // first, utime the 12th, stime the 13th.
    let rest = &stat[stat.rfind(')').expect("a command in parentheses") + 2..];
    let f: Vec<f64> = rest.split(' ').skip(11).take(2).map(|x| x.parse().expect("a tick count")).collect();
    (f[0] + f[1]) / 100.0
}

/// Scales multiply each element, rounded once into the acc: a scaled call
/// has the bits of the call on the elements multiplied by their scales
/// beforehand, in both orders; codes 0, 127, 254 and 255 (NaN) included.
#[test]
fn scales_multiply_each_element_rounded_once() {
    for acc in [Dtype::Float32, Dtype::Float64] {
        for &(m, n, k) in &[(7usize, 9usize, 70usize), (2, 3, 100), (6, 40, 33)] {
            let mut rng = Rng(400 + k as u64);
            let (ba, bb) = ([2usize, 32usize], [16usize, 1usize]);
            let sa_shape = [m.div_ceil(ba[0]), k.div_ceil(ba[1])];
            let sb_shape = [k.div_ceil(bb[0]), n.div_ceil(bb[1])];
            let av = rng.values(Dtype::Float16, &[m, k], false);
            let bv = rng.values(Dtype::Float32, &[k, n], false);
            let sav = rng.values(Dtype::Float32, &sa_shape, false);
            let codes: Vec<i64> = (0..sb_shape[0] * sb_shape[1])
                .map(|t| match t % 11 {
                    0 => 0,
                    1 => 254,
                    2 if k == 70 => 255,
                    3 => 127,
                    _ => 120 + (splitmix(&mut rng.0) % 15) as i64,
                })
                .collect();
            let code = |c: i64| if c == 255 { f64::NAN } else { 2f64.powi(c as i32 - 127) };
            // The elements times their scales, each product rounded once in the acc.
            let round = |x: f64, s: f64| if acc == Dtype::Float32 { (x as f32 * s as f32) as f64 } else { x * s };
            let pa: Vec<C64> = (0..m * k).map(|t| C64::new(round(av[t].re, sav[(t / k / ba[0]) * sa_shape[1] + (t % k) / ba[1]].re), 0.0)).collect();
            let pb: Vec<C64> = (0..k * n).map(|t| C64::new(round(bv[t].re, code(codes[(t / n / bb[0]) * sb_shape[1] + (t % n) / bb[1]])), 0.0)).collect();
            let a = place(Dtype::Float16, &[m, k], Lay::F, &av);
            let b = place(Dtype::Float32, &[k, n], Lay::Neg, &bv);
            let sa = place(Dtype::Float32, &sa_shape, Lay::Off, &sav);
            let sb = place_ints(Dtype::Uint8, &sb_shape, Lay::F, &codes);
            let pre_a = place(acc, &[m, k], Lay::C, &pa);
            let pre_b = place(acc, &[k, n], Lay::C, &pb);
            let pairs = Pairs { batch: vec![], contracting: vec![(1, 0)] };
            let zeros = vec![C64::new(0.0, 0.0); m * n];
            let (want, got) = (place(acc, &[m, n], Lay::C, &zeros), place(acc, &[m, n], Lay::C, &zeros));
            for threads in [1, 3] {
                pool::set_threads(threads).unwrap();
                assert_eq!(contract(&pairs, acc, &want.view, None, &pre_a.view, &pre_b.view), Answer::Done);
                let oa = Operand { view: a.view.clone(), scale: Some(Scale { kind: ScaleKind::Value, block: ba.to_vec(), view: sa.view.clone() }) };
                let ob = Operand { view: b.view.clone(), scale: Some(Scale { kind: ScaleKind::Code, block: bb.to_vec(), view: sb.view.clone() }) };
                assert_eq!(contract_operands(&pairs, acc, &got.view, None, &oa, &ob, None), Answer::Done);
                let (w, g) = (read_all(&want.view, acc), read_all(&got.view, acc));
                assert!(same_cols(&g, &w), "{acc:?} {m}x{n}x{k}");
                // A NaN code makes its block's terms NaN: the outputs of
                // its columns are NaN (code 254 may make others so too,
                // an infinity less another).
                let nans = g.iter().filter(|c| format!("{c:?}").contains("NaN")).count();
                assert!(k != 70 || nans > 0, "{acc:?} {m}x{n}x{k}");
                // Complex and integer accs decline scales; a scale of the
                // wrong shape is refused.
                assert!(matches!(contract_operands(&pairs, Dtype::Complex64, &got.view, None, &oa, &ob, None), Answer::Declined(_)));
                let bad = Operand { scale: Some(Scale { block: vec![1, 1], ..ob.scale.clone().unwrap() }), ..ob.clone() };
                assert!(matches!(contract_operands(&pairs, acc, &got.view, None, &oa, &bad, None), Answer::Refused(_)));
            }
        }
    }
}

fn f64s(v: &View) -> Vec<f64> {
    read_all(v, Dtype::Float64).iter().map(|c| if let Col::F64(x) = c { x[0] } else { unreachable!() }).collect()
}

/// Rows: each row of a reads b at its id, in the order of the whole
/// call's extents: against the reference (chain order) and against one
/// unsegmented call a group (lane order, which groups of any size share).
#[test]
fn rows_segments_against_references_and_per_group_calls() {
    let (m, k, groups) = (40usize, 30usize, 3usize);
    for n in [9usize, 3] {
        let mut rng = Rng(500 + n as u64);
        let av = rng.values(Dtype::Float64, &[m, k], false);
        let bv = rng.values(Dtype::Float64, &[groups, k, n], false);
        let iv = rng.values(Dtype::Float64, &[m, n], false);
        let ids: Vec<i64> = (0..m).map(|i| ((i * 7 + 3) % 5 % groups) as i64).collect();
        let a = place(Dtype::Float64, &[m, k], Lay::F, &av);
        let b = place(Dtype::Float64, &[groups, k, n], Lay::Neg, &bv);
        let init = place(Dtype::Float64, &[m, n], Lay::C, &iv);
        let idv = place_ints(Dtype::Int64, &[m], Lay::Off, &ids);
        let dst = place(Dtype::Float64, &[m, n], Lay::C, &vec![C64::new(0.0, 0.0); m * n]);
        let pairs = Pairs { batch: vec![], contracting: vec![(1, 1)] };
        let seg = Segments::Rows { ids: idv.view.clone(), b_axis: 0 };
        for threads in [1, 3] {
            pool::set_threads(threads).unwrap();
            let ans = contract_operands(&pairs, Dtype::Float64, &dst.view, Some(&init.view), &(&a.view).into(), &(&b.view).into(), Some(&seg));
            assert_eq!(ans, Answer::Done);
            let got = f64s(&dst.view);
            let chain = chain_order(m, n, k);
            for i in 0..m {
                let g = ids[i] as usize;
                for j in 0..n {
                    let terms: Vec<(f64, f64, usize)> = (0..k).map(|t| (av[i * k + t].re, bv[(g * k + t) * n + j].re, 0)).collect();
                    let want = if chain {
                        terms.iter().fold(iv[i * n + j].re, |s, &(x, y, _)| x.mul_add(y, s))
                    } else {
                        lane_sum(&terms) + iv[i * n + j].re
                    };
                    assert_eq!(got[i * n + j].to_bits(), want.to_bits(), "n {n} at ({i}, {j})");
                }
            }
            if !chain {
                // Each group alone, unsegmented: the same bits.
                for g in 0..groups {
                    let rows: Vec<usize> = (0..m).filter(|&i| ids[i] as usize == g).collect();
                    let ag: Vec<C64> = rows.iter().flat_map(|&i| av[i * k..][..k].to_vec()).collect();
                    let ig: Vec<C64> = rows.iter().flat_map(|&i| iv[i * n..][..n].to_vec()).collect();
                    let a1 = place(Dtype::Float64, &[rows.len(), k], Lay::C, &ag);
                    let b1 = place(Dtype::Float64, &[k, n], Lay::C, &bv[g * k * n..][..k * n]);
                    let i1 = place(Dtype::Float64, &[rows.len(), n], Lay::C, &ig);
                    let d1 = place(Dtype::Float64, &[rows.len(), n], Lay::C, &vec![C64::new(0.0, 0.0); rows.len() * n]);
                    let mm = Pairs { batch: vec![], contracting: vec![(1, 0)] };
                    assert_eq!(contract(&mm, Dtype::Float64, &d1.view, Some(&i1.view), &a1.view, &b1.view), Answer::Done);
                    let one = f64s(&d1.view);
                    for (r, &i) in rows.iter().enumerate() {
                        for j in 0..n {
                            assert_eq!(one[r * n + j].to_bits(), got[i * n + j].to_bits());
                        }
                    }
                }
            }
        }
    }
}

/// Contracting: each group sums the products of its indices along the
/// pair, as an unsegmented call of those indices alone (both chain order
/// here); a group without indices is init; ids may be dst itself; an id out
/// of range is refused before any write.
#[test]
fn contracting_segments_against_per_group_calls_and_ids_in_dst() {
    let (m, n, k, groups) = (8usize, 9usize, 100usize, 4usize);
    let mut rng = Rng(600);
    let av = rng.values(Dtype::Float32, &[m, k], false);
    let bv = rng.values(Dtype::Float32, &[k, n], false);
    // Group 2 has no index.
    let ids: Vec<i64> = (0..k).map(|t| [0, 1, 3][(t * 5 + t / 7) % 3]).collect();
    let a = place(Dtype::Float32, &[m, k], Lay::C, &av);
    let b = place(Dtype::Float32, &[k, n], Lay::F, &bv);
    let idv = place_ints(Dtype::Int64, &[k], Lay::C, &ids);
    let pairs = Pairs { batch: vec![], contracting: vec![(1, 0)] };
    let dst = place(Dtype::Float64, &[groups, m, n], Lay::C, &vec![C64::new(5.0, 0.0); groups * m * n]);
    let seg = Segments::Contracting { ids: idv.view.clone(), pair: 0, groups };
    let run = |dst: &View, seg: &Segments| contract_operands(&pairs, Dtype::Float32, dst, None, &(&a.view).into(), &(&b.view).into(), Some(seg));
    assert_eq!(run(&dst.view, &seg), Answer::Done);
    let got = f64s(&dst.view);
    for g in 0..groups {
        let idx: Vec<usize> = (0..k).filter(|&t| ids[t] as usize == g).collect();
        let ag: Vec<C64> = (0..m).flat_map(|i| idx.iter().map(move |&t| (i, t))).map(|(i, t)| av[i * k + t]).collect();
        let bg: Vec<C64> = idx.iter().flat_map(|&t| bv[t * n..][..n].to_vec()).collect();
        let a1 = place(Dtype::Float32, &[m, idx.len()], Lay::C, &ag);
        let b1 = place(Dtype::Float32, &[idx.len(), n], Lay::C, &bg);
        let d1 = place(Dtype::Float64, &[m, n], Lay::C, &vec![C64::new(0.0, 0.0); m * n]);
        assert_eq!(contract(&pairs, Dtype::Float32, &d1.view, None, &a1.view, &b1.view), Answer::Done);
        assert_eq!(f64s(&d1.view), got[g * m * n..][..m * n].to_vec(), "group {g}");
    }
    assert!(got[2 * m * n..][..m * n].iter().all(|&x| x.to_bits() == 0));
    // The ids in dst's own memory: the first k elements of an int64 dst.
    let d2 = place_ints(Dtype::Int64, &[groups, m, n], Lay::C, &vec![0; groups * m * n]);
    let in_dst = View { layout: Layout::contiguous(Dtype::Int64, &[k]), memory: d2.view.memory };
    for (t, &id) in ids.iter().enumerate() {
        put_int(d2.view.memory, Dtype::Int64, t as isize, id);
    }
    assert_eq!(run(&d2.view, &Segments::Contracting { ids: in_dst, pair: 0, groups }), Answer::Done);
    let ints: Vec<i64> = read_all(&d2.view, Dtype::Int64).iter().map(|c| if let Col::I64(x) = c { x[0] } else { unreachable!() }).collect();
    let want: Vec<i64> = got.iter().map(|&x| x as f32 as i64).collect();
    assert_eq!(ints, want);
    // An id out of range: refused, dst untouched.
    put_int(idv.view.memory, Dtype::Int64, 50, groups as i64);
    let before = f64s(&dst.view);
    assert!(matches!(run(&dst.view, &seg), Answer::Refused(_)));
    assert_eq!(f64s(&dst.view), before);
}

/// GFLOP/s of the bare microkernels of float32 and float64 on panels in
/// the L1 cache (their share of the FMA peak), at several depths:
/// `cargo test --release --no-default-features --lib contract::tests::micro_speed -- --ignored --nocapture`
#[test]
#[ignore]
fn micro_speed() {
    fn one<E: crate::contract::elem::Elem>(name: &str) {
        let mk = E::micro(crate::core::isa::avx512());
        for kc in [64usize, 128, 256, 384, 512] {
            let (pa, pb) = (vec![E::ZERO; mk.mr * kc], vec![E::ZERO; mk.nr * kc]);
            let ldc = mk.nr + 16;
            let mut c = vec![E::ZERO; mk.mr * ldc];
            let reps = (1usize << 26) / (kc * mk.mr * mk.nr) + 1;
            let ms = crate::core::cpu_clock::best_wall_ms(5, || {
                for _ in 0..reps {
                    // SAFETY: the panels hold kc depths of mr and nr values; the tile lies in `c`.
                    unsafe { (mk.run)(kc, pa.as_ptr(), pb.as_ptr(), crate::contract::elem::Tile::at(c.as_mut_ptr(), ldc)) };
                }
            });
            let flops = 2.0 * (reps * kc * mk.mr * mk.nr) as f64;
            println!("{name} {}x{} kc {kc:4}: {:6.1} GFLOP/s", mk.mr, mk.nr, flops / ms / 1e6);
        }
    }
    one::<f32>("float32");
    one::<f64>("float64");
}

/// GFLOP/s by the wall clock (the best of several calls) on each thread
/// count of `CONTRACT_THREADS` (as `1,2,4`; 1 and 2 where unset), to see
/// how the products scale: `CONTRACT_SPEED=name` keeps the cases whose name
/// contains it;
/// `cargo test --release --no-default-features --lib contract::tests::thread_speed -- --ignored --nocapture`
#[test]
#[ignore]
fn thread_speed() {
    let only = std::env::var("CONTRACT_SPEED").unwrap_or_default();
    let threads: Vec<usize> = std::env::var("CONTRACT_THREADS").unwrap_or_default().split(',').filter_map(|t| t.parse().ok()).collect();
    let threads = if threads.is_empty() { vec![1, 2] } else { threads };
    for (name, c, acc, flops) in speed_cases().into_iter().filter(|(name, ..)| name.contains(&only)) {
        let (a, b, d) = operands(&c);
        let reps = (8e9 / flops).clamp(5.0, 200.0) as usize;
        let rates: Vec<String> = threads
            .iter()
            .map(|&t| {
                pool::set_threads(t).unwrap();
                let best = (0..reps)
                    .map(|_| {
                        let t0 = std::time::Instant::now();
                        assert_eq!(contract(&c.pairs, acc, &d.view, None, &a.view, &b.view), Answer::Done);
                        t0.elapsed().as_secs_f64()
                    })
                    .fold(f64::INFINITY, f64::min);
                format!("{t} thr {:7.1}", flops / best / 1e9)
            })
            .collect();
        println!("{name:<28} GFLOP/s: {}", rates.join(" | "));
    }
    pool::set_threads(1).unwrap();
}

/// GFLOP/s on one thread by the calling thread's CPU time (the least of
/// several calls), which other processes loading the machine disturb less
/// than the wall clock: `CONTRACT_SPEED=name` keeps the cases whose name
/// contains it;
/// `cargo test --release --no-default-features --lib contract::tests::cpu_speed -- --ignored --nocapture`
#[test]
#[ignore]
fn cpu_speed() {
    let only = std::env::var("CONTRACT_SPEED").unwrap_or_default();
    pool::set_threads(1).unwrap();
    for (name, c, acc, flops) in speed_cases().into_iter().filter(|(name, ..)| name.contains(&only)) {
        let (a, b, d) = operands(&c);
        let reps = std::env::var("CONTRACT_REPS").map_or((8e9 / flops).clamp(5.0, 400.0) as usize, |r| r.parse().unwrap());
        for ph in &crate::contract::chain::PHASES {
            ph.store(0, std::sync::atomic::Ordering::Relaxed);
        }
        let mut times: Vec<f64> = (0..reps)
            .map(|_| {
                let t = crate::core::cpu_clock::thread_cpu_s();
                assert_eq!(contract(&c.pairs, acc, &d.view, None, &a.view, &b.view), Answer::Done);
                crate::core::cpu_clock::thread_cpu_s() - t
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let (best, median) = (times[0], times[reps / 2]);
        println!("{name:<28} 1 thr cpu: best {:9.3} ms {:7.1} GFLOP/s, median {:9.3} ms", best * 1e3, flops / best / 1e9, median * 1e3);
        let ph: Vec<f64> = crate::contract::chain::PHASES.iter().map(|p| p.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e6 / reps as f64).collect();
        println!("   phases ms/call: init {:.3} pack a {:.3} pack b {:.3} kernel {:.3} put {:.3}", ph[0], ph[1], ph[2], ph[3], ph[4]);
    }
}
