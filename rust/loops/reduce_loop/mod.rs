//! `reduce` and `scan`: reductions of a program's outputs over a loop, by
//! the lane-order core of `crate::reduce`.
//!
//! A call is planned first: every check is made before any write. To run,
//! each reduction's terms, the program's output over the loop cast into its
//! carrier, are read in place where the output is a plain load already of
//! the carrier, laid out so that each result's terms are one run or the
//! reduced axes lead, and are otherwise mapped into an array the call holds
//! (so a reduction of an output has the bits of the output mapped, then
//! reduced). Results are computed into arrays of the carrier, then cast into
//! the destinations once every result is known: a destination may be the
//! operand itself.

use crate::loops::cast;
use crate::loops::column::{self, C32, C64};
use crate::loops::memio;
use crate::core::call::Call;
use crate::core::door::{self, Claim};
use crate::core::dtype::{Dtype, Family};
use crate::core::layout::{ranges_meet, same_dims, Layout, Memory, View};
use crate::loops::map::{self, Load};
use crate::core::pool;
use crate::loops::prog::{Node, Prog};
use std::sync::Arc;
use crate::reduce::{self as core, EveryOther, Fill, Max, Min, Prod, Strided, Sum, Terms as Source};

/// The monoids of a Monoid reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Monoidal {
    Sum,
    Prod,
    Max,
    Min,
}

/// A reduction of one program output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// The monoid of the terms, in their carrier.
    Monoid(Monoidal),
    /// The extreme (Max or Min) and its position along the reduced axes in
    /// C order, an int64: the first of equal extremes, the first NaN if any.
    Arg(Monoidal),
    /// log Σ exp, by two passes.
    Logsumexp,
    /// The mean and the variance, by two passes.
    Moments,
}

impl Reduction {
    /// Destinations the reduction writes: two for Arg and Moments.
    pub fn outputs(self) -> usize {
        match self {
            Reduction::Arg(_) | Reduction::Moments => 2,
            _ => 1,
        }
    }
}

/// The dtype terms reduce in: int64 for bool, bit and signed integers,
/// uint64 for unsigned ones, float32 for the narrow floats, the dtype itself
/// otherwise.
pub fn carrier(d: Dtype) -> Dtype {
    match d.family() {
        Family::Logical | Family::Signed => Dtype::Int64,
        Family::Unsigned => Dtype::Uint64,
        Family::Float if d.is_narrow_float() => Dtype::Float32,
        _ => d,
    }
}

/// Whether a reduction takes terms of dtype `d`: Logsumexp and Moments only
/// floats, Arg any but complex.
pub fn accepts(r: Reduction, d: Dtype) -> bool {
    match r {
        Reduction::Monoid(_) => true,
        Reduction::Arg(_) => !d.is_complex(),
        Reduction::Logsumexp | Reduction::Moments => d.is_float(),
    }
}

/// The shape of a reduction's destinations: the loop's without `axes`.
pub fn reduced_shape(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    (0..shape.len()).filter(|a| !axes.contains(a)).map(|a| shape[a]).collect()
}

/// Elements below which a call reduces on the calling thread alone.
/// Handing work to the pool's threads costs tens of microseconds where
/// they sleep (measured on a 2-core virtual machine), more than splitting
/// a pass over fewer elements saves.
const PARALLEL_MIN: usize = 1 << 18;

/// Whether work of `elements` terms splits over the pool's threads: where it
/// is large and the pool has several. With one thread set, the core's
/// `parallel` paths would run on rayon's global pool instead.
fn parallel(elements: usize) -> bool {
    elements >= PARALLEL_MIN && pool::threads() > 1
}

/// Runs `f` in the pool where `big` (see [`parallel`]), otherwise on the
/// calling thread: handing small work to the pool costs more than it takes.
fn in_pool_if<R: Send>(big: bool, f: impl FnOnce() -> R + Send) -> R {
    if big {
        pool::install(f)
    } else {
        f()
    }
}

/// A checked reduce or scan call.
pub struct Plan {
    prog: Arc<Prog>,
    shape: Vec<usize>,
    loads: Vec<Load>,
    dsts: Vec<View>,
    kind: Kind,
    /// The element spans ([`Layout::span`]) of the destinations, a scan's
    /// carry and the loads, in that order: a plan's layouts are fixed, its
    /// memory not.
    spans: Vec<Option<(i128, i128)>>,
    /// Their byte ranges over the plan's memory ([`View::byte_range`]),
    /// asked for several times a call: taken when the plan is made and
    /// each time it is put over other memory.
    ranges: Vec<Option<(usize, usize)>>,
}

enum Kind {
    Reduce { axes: Vec<usize>, rs: Vec<(Reduction, usize)> },
    Scan { axis: usize, r: Reduction, k: usize, carry: Option<View> },
}

fn check_loop(prog: &Prog, shape: &[usize], dsts: &[View], loads: &[Load]) -> Result<(), String> {
    map::check_loads(prog, loads, Some(shape))?;
    check_apart(dsts)
}

/// Refuses destinations that overlap.
fn check_apart(dsts: &[View]) -> Result<(), String> {
    apart(dsts.len(), |i| dsts[i].byte_range())
}

/// Refuses `n` destinations of which two have byte ranges (`range`) that meet.
fn apart(n: usize, range: impl Fn(usize) -> Option<(usize, usize)>) -> Result<(), String> {
    if (0..n).any(|i| (0..i).any(|j| ranges_meet(range(i), range(j)))) {
        return Err("two destinations overlap".into());
    }
    Ok(())
}

fn check_dst(d: &View, i: usize, shape: &[usize], position: bool) -> Result<(), String> {
    if !same_dims(&d.layout.shape, shape) {
        return Err(format!("destination {i} has shape {:?}, not {shape:?}", d.layout.shape));
    }
    if position && d.layout.dtype != Dtype::Int64 {
        return Err(format!("destination {i} holds positions but is {}, not int64", d.layout.dtype.name()));
    }
    if map::self_overlaps(&d.layout) {
        return Err(format!("destination {i} maps several indices to one element"));
    }
    Ok(())
}

fn check_reduction(prog: &Prog, r: Reduction, k: usize) -> Result<Dtype, String> {
    let d = *prog
        .outputs
        .get(k)
        .map(|&o| &prog.dtypes[o])
        .ok_or_else(|| format!("output {k} of a program of {} outputs", prog.outputs.len()))?;
    if !accepts(r, d) {
        return Err(format!("{r:?} does not take {}", d.name()));
    }
    Ok(d)
}

/// Checks a reduce call: `rs` reduces output k of `prog` over the loop of
/// `shape` along `axes`; `dsts` follow `rs` (two for Arg and Moments), each
/// of the reduced shape.
pub fn plan_reduce(
    prog: impl Into<Arc<Prog>>,
    shape: Vec<usize>,
    axes: Vec<usize>,
    rs: Vec<(Reduction, usize)>,
    dsts: Vec<View>,
    loads: Vec<Load>,
) -> Result<Plan, String> {
    let prog: Arc<Prog> = prog.into();
    if rs.is_empty() {
        return Err("a reduce of no reduction".into());
    }
    let mut sorted = axes.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != axes.len() {
        return Err(format!("axes {axes:?} repeat an axis"));
    }
    if let Some(&a) = sorted.iter().find(|&&a| a >= shape.len()) {
        return Err(format!("axis {a} of a loop of rank {}", shape.len()));
    }
    let want: usize = rs.iter().map(|(r, _)| r.outputs()).sum();
    if dsts.len() != want {
        return Err(format!("{} destinations for reductions that write {want}", dsts.len()));
    }
    let out_shape = reduced_shape(&shape, &sorted);
    let mut i = 0;
    for &(r, k) in &rs {
        check_reduction(&prog, r, k)?;
        for j in 0..r.outputs() {
            check_dst(&dsts[i], i, &out_shape, matches!(r, Reduction::Arg(_)) && j == 1)?;
            i += 1;
        }
    }
    check_loop(&prog, &shape, &dsts, &loads)?;
    Ok(Plan::new(prog, shape, loads, dsts, Kind::Reduce { axes: sorted, rs }))
}

/// Checks a scan call: reduction `r` of output `k` along `axis`, into
/// `dsts` of the loop's shape, from an optional carry of the loop's shape
/// without `axis`, in the output's carrier (Monoid scans only).
pub fn plan_scan(
    prog: impl Into<Arc<Prog>>,
    shape: Vec<usize>,
    axis: usize,
    (r, k): (Reduction, usize),
    carry: Option<View>,
    dsts: Vec<View>,
    loads: Vec<Load>,
) -> Result<Plan, String> {
    let prog: Arc<Prog> = prog.into();
    if axis >= shape.len() {
        return Err(format!("axis {axis} of a loop of rank {}", shape.len()));
    }
    let d = check_reduction(&prog, r, k)?;
    if dsts.len() != r.outputs() {
        return Err(format!("{} destinations for a {r:?} scan, which writes {}", dsts.len(), r.outputs()));
    }
    for (i, dst) in dsts.iter().enumerate() {
        check_dst(dst, i, &shape, matches!(r, Reduction::Arg(_)) && i == 1)?;
    }
    if let Some(c) = &carry {
        if !matches!(r, Reduction::Monoid(_)) {
            return Err(format!("a {r:?} scan takes no carry"));
        }
        let want = reduced_shape(&shape, &[axis]);
        if !same_dims(&c.layout.shape, &want) || c.layout.dtype != carrier(d) {
            return Err(format!(
                "the carry is {} {:?}, not {} {want:?}",
                c.layout.dtype.name(),
                c.layout.shape,
                carrier(d).name()
            ));
        }
    }
    check_loop(&prog, &shape, &dsts, &loads)?;
    Ok(Plan::new(prog, shape, loads, dsts, Kind::Scan { axis, r, k, carry }))
}

/// An array of `d` and `shape`, C-contiguous: memory the call holds, or a
/// destination written in place (`words` empty).
struct Held {
    _words: Vec<u64>,
    view: View,
}

impl Held {
    fn new(d: Dtype, shape: &[usize]) -> Result<Held, String> {
        let layout = Layout::contiguous(d, shape);
        let bytes = (layout.size() * d.bits()).div_ceil(8);
        let mut words = vec![0u64; bytes.div_ceil(8).max(1)];
        let memory = Memory { base: words.as_mut_ptr() as *mut u8, bytes };
        let view = View::new(layout, memory)?;
        Ok(Held { _words: words, view })
    }

    /// A destination written in place: C-contiguous, aligned, of a whole-byte
    /// dtype, touching no load.
    fn over(view: View) -> Held {
        Held { _words: Vec::new(), view }
    }

    /// Whether the array is a destination written in place.
    fn in_place(&self) -> bool {
        self._words.is_empty()
    }

    /// The held values as a slice of `T`, the Rust type of its dtype.
    fn slice<T>(&self) -> &[T] {
        // SAFETY: the memory is 8-aligned (held words) or aligned for T
        // (checked by `in_place_destination`), holds `size` elements of T
        // (its dtype's register type, which the callers match to the dtype,
        // C-contiguous from element 0 of the view) and lives as long as
        // `self` (held) or the call (a destination).
        unsafe { std::slice::from_raw_parts(self.view.memory.base as *const T, self.view.layout.size()) }
    }

    fn slice_mut<T>(&mut self) -> &mut [T] {
        // SAFETY: as `slice`; `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.view.memory.base as *mut T, self.view.layout.size()) }
    }
}

/// A view with its axes reordered: axis `i` of the result is `order[i]`.
fn permuted(v: &View, order: &[usize]) -> View {
    let mut w = v.clone();
    w.layout.shape = order.iter().map(|&a| v.layout.shape[a]).collect();
    w.layout.strides = order.iter().map(|&a| v.layout.strides[a]).collect();
    w
}

/// The loop's output `k` cast into `d`, mapped into held memory whose C
/// order follows `order` (a permutation of the loop's axes).
fn materialize(p: &Plan, k: usize, d: Dtype, order: &[usize]) -> Result<Held, String> {
    let pshape: Vec<usize> = order.iter().map(|&a| p.shape[a]).collect();
    let held = Held::new(d, &pshape)?;
    let mut dst = held.view.clone();
    let mut inverse = vec![0; order.len()];
    for (i, &a) in order.iter().enumerate() {
        inverse[a] = i;
    }
    dst = permuted(&dst, &inverse);
    let mut nodes = p.prog.nodes.clone();
    nodes.push(Node::Cast(d, p.prog.outputs[k]));
    let prog = Prog::new(p.prog.operands.clone(), nodes.clone(), vec![nodes.len() - 1])?;
    map::plan_loads(prog, vec![dst], p.loads.clone())?.run()?;
    Ok(held)
}

/// Whether a view's axes, in `axes` order, step through memory as one run
/// of consecutive elements aligned for `T`.
fn contiguous_run<T>(v: &View, axes: impl DoubleEndedIterator<Item = usize>) -> bool {
    let mut step = 1isize;
    for a in axes.rev() {
        if v.layout.shape[a] != 1 && v.layout.strides[a] != step {
            return false;
        }
        step *= v.layout.shape[a] as isize;
    }
    (v.memory.base as usize).is_multiple_of(std::mem::align_of::<T>()) && !v.layout.dtype.is_sub_byte()
}

/// The plain load that output `k` reads as it is (through casts that keep
/// the dtype), where it is already of its carrier and no destination
/// overlaps it.
fn direct_operand(p: &Plan, k: usize) -> Option<&View> {
    let mut node = p.prog.outputs[k];
    loop {
        match p.prog.nodes[node] {
            Node::Cast(d, x) if d == p.prog.dtypes[x] => node = x,
            Node::Load(i) => {
                return match &p.loads[i] {
                    Load::Plain(v)
                        if carrier(v.layout.dtype) == v.layout.dtype
                            && !(0..p.dsts.len()).any(|j| ranges_meet(p.range(j), p.range(p.first_load() + i))) =>
                    {
                        Some(v)
                    }
                    _ => None,
                }
            }
            _ => return None,
        }
    }
}

/// The reductions of one carrier's Rust type, dispatched once per call.
trait Carried: Copy + Default + Send + Sync + 'static {
    const DTYPE: Dtype;
    /// The monoid `m` of a run of terms.
    fn monoid<S: Source<Self> + ?Sized>(m: Monoidal, terms: &S, parallel: bool) -> Self;
    /// The monoid `m` of each column of a grid, side by side.
    fn columns(m: Monoidal, grid: &Strided<Self>, out: &mut [Self], parallel: bool);
    /// The extreme of a run and its position; the empty run's is the
    /// monoid's identity at position -1.
    fn arg(m: Monoidal, terms: &[Self], parallel: bool) -> (Self, i64);
    /// The scan by `m` of a slice into `out`, from a carry where given.
    fn scan(m: Monoidal, terms: &[Self], carry: Option<Self>, out: &mut [Self], parallel: bool);
    /// The running extreme of a slice and its positions.
    fn arg_scan(m: Monoidal, terms: &[Self], values: &mut [Self], positions: &mut [i64]);
    /// Logsumexp and Moments, which only the float carriers have.
    fn real() -> Option<RealOps<Self>> {
        None
    }
}

/// Logsumexp and Moments of a float carrier, reductions and scans.
struct RealOps<T> {
    lse: fn(&[T], bool) -> T,
    moments: fn(&[T], bool) -> (T, T),
    lse_scan: fn(&[T], &mut [T]),
    moments_scan: fn(&[T], &mut [T], &mut [T]),
}

macro_rules! by_monoid {
    ($m:expr, $f:path, ( $($arg:expr),* )) => {
        match $m {
            Monoidal::Sum => $f(Sum, $($arg),*),
            Monoidal::Prod => $f(Prod, $($arg),*),
            Monoidal::Max => $f(Max, $($arg),*),
            Monoidal::Min => $f(Min, $($arg),*),
        }
    };
}

macro_rules! carried {
    ($($t:ty => $d:ident $(, $real:ident)?);*) => {$(
        impl Carried for $t {
            const DTYPE: Dtype = Dtype::$d;
            fn monoid<S: Source<Self> + ?Sized>(m: Monoidal, terms: &S, parallel: bool) -> Self {
                by_monoid!(m, core::reduce, (terms, parallel))
            }
            fn columns(m: Monoidal, grid: &Strided<Self>, out: &mut [Self], parallel: bool) {
                by_monoid!(m, core::reduce_columns, (grid, out, parallel))
            }
            fn arg(m: Monoidal, terms: &[Self], parallel: bool) -> (Self, i64) {
                let r = if m == Monoidal::Max { core::arg(Max, terms, parallel) } else { core::arg(Min, terms, parallel) };
                r.unwrap_or_else(|| (Self::monoid(m, &[] as &[Self], false), -1))
            }
            fn scan(m: Monoidal, terms: &[Self], carry: Option<Self>, out: &mut [Self], parallel: bool) {
                by_monoid!(m, core::scan, (terms, carry, out, parallel))
            }
            fn arg_scan(m: Monoidal, terms: &[Self], values: &mut [Self], positions: &mut [i64]) {
                if m == Monoidal::Max {
                    core::arg_scan(Max, terms, values, positions)
                } else {
                    core::arg_scan(Min, terms, values, positions)
                }
            }
            $(fn $real() -> Option<RealOps<Self>> {
                Some(RealOps {
                    lse: |t, par| core::logsumexp(t, par),
                    moments: |t, par| core::moments(t, par),
                    lse_scan: |t, o| core::logsumexp_scan(t, o),
                    moments_scan: |t, m, v| core::moments_scan(t, m, v),
                })
            })?
        }
    )*};
}

carried!(i64 => Int64; u64 => Uint64; f32 => Float32, real; f64 => Float64, real; C32 => Complex64; C64 => Complex128);

/// Runs `f` with the carrier's Rust type of `d`.
macro_rules! with_carrier {
    ($d:expr, $f:ident ( $($arg:expr),* )) => {
        match $d {
            Dtype::Int64 => $f::<i64>($($arg),*),
            Dtype::Uint64 => $f::<u64>($($arg),*),
            Dtype::Float32 => $f::<f32>($($arg),*),
            Dtype::Float64 => $f::<f64>($($arg),*),
            Dtype::Complex64 => $f::<C32>($($arg),*),
            Dtype::Complex128 => $f::<C64>($($arg),*),
            d => unreachable!("{} is no carrier", d.name()),
        }
    };
}

/// Where the terms of every output lie: each output's run of `len` terms,
/// or a grid whose columns are the outputs.
enum Terms<'a, T> {
    Runs { data: &'a [T], starts: Vec<usize>, len: usize },
    Columns(Strided<'a, T>),
    /// Each output's terms read a block at a time from its elements, which
    /// lie near each other but not in one run (a sliced or strided view).
    Gathered(Gathered<'a, T>),
}

/// Terms of each output in memory at `starts[o]` (element index from `data`'s
/// first) plus, for the term of index i over the reduced axes in C order,
/// the sum of i's indices times `steps`.
struct Gathered<'a, T> {
    data: &'a [T],
    starts: Vec<usize>,
    shape: Vec<usize>,
    steps: Vec<isize>,
}

/// The most bytes between neighbouring terms of an output that are read
/// where they lie ([`Terms::Gathered`]) rather than copied into a run
/// first: a cache line then brings in several terms.
const GATHERED_STEP_BYTES: usize = 32;

impl<'a, T: Copy + Default + Sync> Gathered<'a, T> {
    /// Output `o`'s terms, as the reductions take them.
    fn of(&self, o: usize) -> Fill<impl Fn(usize, &mut [T]) + Sync + '_> {
        let count = self.shape.iter().product();
        Fill { count, fill: move |start: usize, buf: &mut [T]| self.fill(o, start, buf) }
    }

    /// Output `o`'s terms read in place where they are every other element
    /// of one run ([`EveryOther`]): the reduced axes one step-2 axis, of a
    /// carrier of at most 8 bytes (the 32 accumulators of a wider one take
    /// every vector register).
    fn every_other(&self, o: usize) -> Option<EveryOther<'_, T>> {
        match (&self.shape[..], &self.steps[..]) {
            (&[n], &[2]) if std::mem::size_of::<T>() <= 8 => EveryOther::new(&self.data[self.starts[o]..], n),
            _ => None,
        }
    }

    /// Terms `start..start + buf.len()` of output `o` into `buf`.
    fn fill(&self, o: usize, start: usize, buf: &mut [T]) {
        let r = self.shape.len();
        let mut index = [0usize; 8];
        let index = if r <= 8 { &mut index[..r] } else { return self.fill_wide(o, start, buf) };
        let mut rest = start;
        let mut at = self.starts[o] as isize;
        for a in (0..r).rev() {
            index[a] = rest % self.shape[a];
            rest /= self.shape[a];
            at += index[a] as isize * self.steps[a];
        }
        let (inner, step) = (self.shape[r - 1], self.steps[r - 1]);
        let mut done = 0;
        while done < buf.len() {
            let n = (inner - index[r - 1]).min(buf.len() - done);
            strided_copy(self.data, at, step, &mut buf[done..done + n]);
            at += step * n as isize;
            done += n;
            // Onto the next row of the reduced axes: the innermost index
            // wraps, carrying outwards.
            at -= step * (index[r - 1] + n) as isize;
            index[r - 1] = 0;
            at += self.next_row(index);
        }
    }

    /// Steps `index` (its innermost place 0) to the next row over the outer
    /// reduced axes; gives the change in element index.
    fn next_row(&self, index: &mut [usize]) -> isize {
        let mut moved = 0isize;
        for a in (0..index.len() - 1).rev() {
            index[a] += 1;
            moved += self.steps[a];
            if index[a] < self.shape[a] {
                return moved;
            }
            moved -= self.steps[a] * self.shape[a] as isize;
            index[a] = 0;
        }
        moved
    }

    /// As [`Gathered::fill`] for more than 8 reduced axes, term by term.
    fn fill_wide(&self, o: usize, start: usize, buf: &mut [T]) {
        for (j, x) in buf.iter_mut().enumerate() {
            let mut rest = start + j;
            let mut at = self.starts[o] as isize;
            for a in (0..self.shape.len()).rev() {
                at += (rest % self.shape[a]) as isize * self.steps[a];
                rest /= self.shape[a];
            }
            *x = self.data[at as usize];
        }
    }
}

/// `out.len()` elements of `data` from index `at`, `step` apart, into
/// `out`: the elements' run read from its lowest end upwards, by a loop
/// the compiler vectorises for the small steps of sliced views, then put
/// in `step`'s order.
#[inline]
fn strided_copy<T: Copy>(data: &[T], at: isize, step: isize, out: &mut [T]) {
    let Some(last) = out.len().checked_sub(1) else { return };
    let lo = at.min(at + step * last as isize) as usize;
    match step.unsigned_abs() {
        0 => return out.fill(data[lo]),
        1 => out.copy_from_slice(&data[lo..lo + out.len()]),
        2 => every::<T, 2>(data, lo, out),
        3 => every::<T, 3>(data, lo, out),
        4 => every::<T, 4>(data, lo, out),
        s => out.iter_mut().zip(data[lo..].iter().step_by(s)).for_each(|(x, &y)| *x = y),
    }
    if step < 0 {
        out.reverse();
    }
}

/// `out[i] = data[lo + i * S]`: whole groups of `S` as arrays (no bounds
/// check within), the last term alone where its group runs past `data`.
#[inline]
fn every<T: Copy, const S: usize>(data: &[T], lo: usize, out: &mut [T]) {
    let (groups, _) = data[lo..].as_chunks::<S>();
    let whole = out.len().min(groups.len());
    for (x, g) in out[..whole].iter_mut().zip(groups) {
        *x = g[0];
    }
    for (k, x) in out[whole..].iter_mut().enumerate() {
        *x = data[lo + (whole + k) * S];
    }
}

/// The terms of output `k` reduced along `axes`: in place where they can
/// be read so, else mapped into `held` with the reduced axes last or, where
/// `columns` allows and the loop's last axis is kept, first.
fn terms_of<'a, T: Carried>(
    p: &'a Plan,
    k: usize,
    axes: &[usize],
    held: &'a mut Option<Held>,
    columns: bool,
) -> Result<Terms<'a, T>, String> {
    let outer: Vec<usize> = (0..p.shape.len()).filter(|a| !axes.contains(a)).collect();
    let len: usize = axes.iter().map(|&a| p.shape[a]).product();
    let outputs: usize = outer.iter().map(|&a| p.shape[a]).product();
    if let Some(v) = direct_operand(p, k) {
        if let Some((lo, _)) = v.layout.span().ok().flatten() {
            let base = lo as usize;
            let size = v.memory.extent(v.layout.dtype) - base;
            let aligned = (v.memory.base as usize).is_multiple_of(std::mem::align_of::<T>()) && !v.layout.dtype.is_sub_byte();
            // SAFETY: the view's elements lie in its memory from element
            // `lo` on (`View::new` checked), of T's dtype, aligned for T
            // (both checked before use); no destination overlaps them and
            // the door keeps other calls from writing them.
            let data = || unsafe { std::slice::from_raw_parts((v.memory.base as *const T).add(base), size) };
            if aligned && contiguous_run::<T>(v, axes.iter().copied()) {
                return Ok(Terms::Runs { data: data(), starts: starts_of(v, &outer, base), len });
            }
            // A grid row narrower than a cache line reduces column by column
            // nearly term by term: such outputs gather their terms instead.
            if outputs * std::mem::size_of::<T>() < 64 {
                if let Some(g) = gathered(p, k, axes, &outer, columns) {
                    return Ok(Terms::Gathered(g));
                }
            }
            if aligned && columns {
                if let Some(stride) = column_stride(v, axes, &outer) {
                    let start = v.layout.offset - base;
                    let grid = Strided::new(&data()[start..], len, outputs, stride);
                    if let Some(g) = grid {
                        return Ok(Terms::Columns(g));
                    }
                }
            }
        }
    }
    if let Some(g) = gathered(p, k, axes, &outer, columns) {
        return Ok(Terms::Gathered(g));
    }
    let lead = columns && !p.shape.is_empty() && !axes.contains(&(p.shape.len() - 1));
    let order: Vec<usize> =
        if lead { axes.iter().chain(&outer).copied().collect() } else { outer.iter().chain(axes).copied().collect() };
    *held = Some(materialize(p, k, T::DTYPE, &order)?);
    let data = held.as_ref().expect("just held").slice::<T>();
    Ok(if lead {
        Terms::Columns(Strided::new(data, len, outputs, outputs).expect("a held grid fits"))
    } else {
        Terms::Runs { data, starts: (0..outputs).map(|o| o * len).collect(), len }
    })
}

/// Output `k`'s terms read where they lie ([`Terms::Gathered`]), for a
/// Monoid (`monoid`) of a direct operand (see [`direct_operand`]) aligned
/// for `T`, whose innermost reduced axis steps at most
/// [`GATHERED_STEP_BYTES`]. The terms and their order are those of a copy
/// with the reduced axes last, so the bits are too.
fn gathered<'a, T: Carried>(p: &'a Plan, k: usize, axes: &[usize], outer: &[usize], monoid: bool) -> Option<Gathered<'a, T>> {
    let v = direct_operand(p, k).filter(|_| monoid && !axes.is_empty())?;
    let (lo, _) = v.layout.span().ok().flatten()?;
    let base = lo as usize;
    let aligned = (v.memory.base as usize).is_multiple_of(std::mem::align_of::<T>()) && !v.layout.dtype.is_sub_byte();
    let step = v.layout.strides[*axes.last()?].unsigned_abs() * std::mem::size_of::<T>();
    if !aligned || step > GATHERED_STEP_BYTES {
        return None;
    }
    // SAFETY: the view's elements lie in its memory from element `lo` on
    // (`View::new` checked), of T's dtype, aligned for T (checked above); no
    // destination overlaps them and the door keeps other calls from writing
    // them.
    let data = unsafe { std::slice::from_raw_parts((v.memory.base as *const T).add(base), v.memory.extent(v.layout.dtype) - base) };
    let (shape, steps) = merged(axes.iter().map(|&a| (p.shape[a], v.layout.strides[a])));
    Some(Gathered { data, starts: starts_of(v, outer, base), shape, steps })
}

/// The reduced axes' extents and steps with axes of extent 1 dropped and
/// each axis that steps over a whole run of the next merged into it (so
/// the terms' C order is unchanged and the runs are as long as they can
/// be); at least one axis.
fn merged(axes: impl Iterator<Item = (usize, isize)>) -> (Vec<usize>, Vec<isize>) {
    let (mut shape, mut steps) = (vec![], vec![]);
    for (n, s) in axes.filter(|&(n, _)| n != 1) {
        match (shape.last_mut(), steps.last()) {
            (Some(m), Some(&t)) if t == s * n as isize => {
                *m *= n;
                *steps.last_mut().expect("as shape") = s;
            }
            _ => {
                shape.push(n);
                steps.push(s);
            }
        }
    }
    if shape.is_empty() {
        (vec![1], vec![0])
    } else {
        (shape, steps)
    }
}

/// The step between rows of a grid whose columns are the outputs, where the
/// view reads so: the outer axes one run of consecutive elements, the
/// reduced axes C-contiguous among themselves at a step of at least the
/// outputs' count, all strides positive.
fn column_stride(v: &View, axes: &[usize], outer: &[usize]) -> Option<usize> {
    let runs = |axes: &[usize], mut step: isize| {
        for &a in axes.iter().rev() {
            if v.layout.shape[a] != 1 && v.layout.strides[a] != step {
                return None;
            }
            step *= v.layout.shape[a] as isize;
        }
        Some(step)
    };
    let outputs = runs(outer, 1)?;
    let last = *axes.last()?;
    let stride = v.layout.strides[last];
    if stride < outputs || stride <= 0 {
        return None;
    }
    runs(axes, stride)?;
    Some(stride as usize)
}

/// The first element of each output's run, in C order of the outer axes.
fn starts_of(v: &View, outer: &[usize], base: usize) -> Vec<usize> {
    let mut starts = vec![v.layout.offset as isize - base as isize];
    for &a in outer {
        let (n, s) = (v.layout.shape[a], v.layout.strides[a]);
        starts = starts.iter().flat_map(|&b| (0..n as isize).map(move |i| b + i * s)).collect();
    }
    starts.into_iter().map(|s| s as usize).collect()
}

/// Calls `f(o, slot)` for each output `o` and its slot, `width` values of
/// `out` each, over the pool's threads where the work (`len` terms an
/// output) is large: split among the outputs, or, where one output's work
/// is large enough for the pool ([`parallel`]) and `f` may use the pool
/// itself, output after output in the pool.
fn per_output<T: Send>(out: &mut [T], width: usize, len: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let n = out.len() / width.max(1);
    if n <= 1 || n * len < PARALLEL_MIN || parallel(len) {
        in_pool_if(parallel(n * len), || out.chunks_mut(width.max(1)).enumerate().for_each(|(o, slot)| f(o, slot)));
        return;
    }
    let parts = (pool::threads() * 4).min(n);
    let mut groups: Vec<std::sync::Mutex<(usize, &mut [T])>> = Vec::with_capacity(parts);
    let mut rest = out;
    for part in 0..parts {
        let (first, end) = (n * part / parts, n * (part + 1) / parts);
        let (group, tail) = rest.split_at_mut((end - first) * width);
        groups.push(std::sync::Mutex::new((first, group)));
        rest = tail;
    }
    pool::run_parts(parts, |part| {
        let mut g = groups[part].lock().unwrap_or_else(|e| e.into_inner());
        let first = g.0;
        g.1.chunks_mut(width).enumerate().for_each(|(i, slot)| f(first + i, slot));
    });
}

/// Casts held results into a destination (both in one axis order).
fn store(held: &Held, dst: &View) -> Result<(), String> {
    let from = held.view.layout.dtype;
    if dst.layout.size() == 1 {
        // SAFETY: element 0 of the held array lies in its checked layout.
        unsafe { store_one(from, held.view.memory, held.view.layout.offset as isize, dst) };
        return Ok(());
    }
    if dst.layout.size() > 0 && from == dst.layout.dtype && column::bitwise(from) && contiguous_run::<u8>(dst, 0..dst.layout.shape.len()) {
        // Values of the destination's dtype into its elements in C order:
        // one copy of their bytes, without planning a map (a small axis
        // reduction's fixed cost).
        let (size, n) = (from.bytes(), dst.layout.size());
        // SAFETY: the held array is C-contiguous from its offset, with
        // `n` elements of `from` (its layout, checked when made), and so
        // is the destination (`contiguous_run`, a whole-byte dtype), its
        // elements in its checked layout; the call's claims keep other
        // calls off it. `copy` allows the two to meet.
        unsafe {
            std::ptr::copy(
                held.view.memory.base.add(held.view.layout.offset * size),
                dst.memory.base.add(dst.layout.offset * size),
                n * size,
            )
        };
        return Ok(());
    }
    let id = Prog::new(vec![from], vec![Node::Load(0), Node::Cast(dst.layout.dtype, 0)], vec![1])?;
    map::plan(id, vec![dst.clone()], vec![held.view.clone()])?.run()
}

/// Casts the one value of dtype `from` at element `at` of `mem` into the one
/// element of `dst`: the map's load, cast and store without the planning
/// of a loop, in columns this thread keeps.
///
/// # Safety
/// Element `at` of `mem` holds a value of `from`.
unsafe fn store_one(from: Dtype, mem: Memory, at: isize, dst: &View) {
    let to = dst.layout.dtype;
    if from == to && column::bitwise(from) {
        // The cast of a dtype its register type holds bit for bit into
        // itself keeps the bits: the element's bytes are copied, without
        // the columns (a small reduction's fixed cost).
        let size = from.bytes();
        // SAFETY: element `at` of `mem` holds a value of `from` (this
        // function's contract) and the destination's one element, at its
        // offset, lies in its checked layout, `size` bytes each; the
        // call's claims keep other calls off it. `copy` allows the two to
        // be one (a result held in its destination).
        unsafe {
            std::ptr::copy(mem.base.offset(at * size as isize), dst.memory.base.add(dst.layout.offset * size), size)
        };
        return;
    }
    let mut cols = column::take_all(&[from, to], |_| 1);
    let [x, y] = &mut cols[..] else { unreachable!("two columns taken") };
    // SAFETY: as this function's contract.
    unsafe { memio::load(mem, from, at, 0, 1, &mut x.as_mut()) };
    cast::cast(from, to, &x.as_ref(), &mut y.as_mut(), 1, false);
    // SAFETY: the destination's one element, at its offset, lies in its
    // checked layout; the call's claims keep other calls off it.
    unsafe { memio::store(dst.memory, to, dst.layout.offset as isize, 0, 1, &y.as_ref()) };
    column::give_back(cols);
}

/// Casts `value` into the one element of `dst` ([`store_one`]).
fn store_value<T: Carried>(value: T, dst: &View) {
    let one = [value];
    let mem = Memory { base: one.as_ptr() as *mut u8, bytes: std::mem::size_of::<T>() };
    // SAFETY: `mem` is `one`, which holds a value of T's dtype at element 0.
    unsafe { store_one(T::DTYPE, mem, 0, dst) }
}

/// Whether output `k`'s terms are one run of a direct operand (see
/// [`direct_operand`], [`contiguous_run`]), every axis of the loop reduced.
fn whole_run<T: Carried>(p: &Plan, k: usize) -> bool {
    direct_operand(p, k).is_some_and(|v| contiguous_run::<T>(v, 0..p.shape.len()))
}

/// Output `k`'s whole reduction `r` (Monoid or Arg) of the terms of one run
/// ([`whole_run`]), stored into the next destinations of `dsts`.
fn reduce_whole<'a, T: Carried>(p: &Plan, r: Reduction, k: usize, dsts: &mut impl Iterator<Item = &'a View>) {
    let v = direct_operand(p, k).expect("a whole run's operand");
    let len = v.layout.size();
    let terms: &[T] = if len == 0 {
        &[]
    } else {
        // SAFETY: the run of `len` elements from the view's offset lies in
        // its memory (`View::new` checked), of T's dtype, aligned for T
        // (`whole_run`); no destination overlaps it and the door keeps
        // other calls from writing it.
        unsafe { std::slice::from_raw_parts((v.memory.base as *const T).add(v.layout.offset), len) }
    };
    let par = parallel(len);
    let mut next = || dsts.next().expect("a destination for each output");
    match r {
        Reduction::Monoid(m) => store_value(in_pool_if(par, || T::monoid(m, terms, par)), next()),
        Reduction::Arg(m) => {
            let (value, position) = in_pool_if(par, || T::arg(m, terms, par));
            store_value(value, next());
            store_value(position, next());
        }
        _ => unreachable!("whole runs are Monoid or Arg reductions"),
    }
}

fn reduce_one<T: Carried>(p: &Plan, r: Reduction, k: usize, axes: &[usize], out_shape: &[usize]) -> Result<Vec<Held>, String> {
    let mut held = None;
    let terms = terms_of::<T>(p, k, axes, &mut held, matches!(r, Reduction::Monoid(_)))?;
    let mut first = Held::new(T::DTYPE, out_shape)?;
    match (r, &terms) {
        (Reduction::Monoid(m), Terms::Columns(g)) => {
            let out = first.slice_mut::<T>();
            let big = parallel(out.len() * axes.iter().map(|&a| p.shape[a]).product::<usize>());
            in_pool_if(big, || T::columns(m, g, out, big));
            Ok(vec![first])
        }
        (_, Terms::Columns(_)) => unreachable!("only Monoid reductions read columns"),
        (Reduction::Monoid(m), Terms::Gathered(g)) => {
            let len = g.shape.iter().product();
            let par = parallel(len);
            per_output(first.slice_mut::<T>(), 1, len, |o, slot| {
                slot[0] = match g.every_other(o) {
                    Some(terms) => T::monoid(m, &terms, par),
                    None => T::monoid(m, &g.of(o), par),
                }
            });
            Ok(vec![first])
        }
        (_, Terms::Gathered(_)) => unreachable!("only Monoid reductions gather"),
        (Reduction::Monoid(m), Terms::Runs { data, starts, len }) => {
            let par = parallel(*len);
            per_output(first.slice_mut::<T>(), 1, *len, |o, slot| slot[0] = T::monoid(m, &data[starts[o]..starts[o] + len], par));
            Ok(vec![first])
        }
        (Reduction::Arg(m), Terms::Runs { data, starts, len }) => {
            let mut pairs = vec![(T::monoid(m, &[] as &[T], false), 0i64); first.view.layout.size()];
            let par = parallel(*len);
            per_output(&mut pairs, 1, *len, |o, slot| slot[0] = T::arg(m, &data[starts[o]..starts[o] + len], par));
            let mut positions = Held::new(Dtype::Int64, out_shape)?;
            first.slice_mut::<T>().iter_mut().zip(&pairs).for_each(|(v, p)| *v = p.0);
            positions.slice_mut::<i64>().iter_mut().zip(&pairs).for_each(|(v, p)| *v = p.1);
            Ok(vec![first, positions])
        }
        (Reduction::Logsumexp, Terms::Runs { data, starts, len }) => {
            let ops = T::real().expect("Logsumexp takes floats");
            let par = parallel(*len);
            per_output(first.slice_mut::<T>(), 1, *len, |o, slot| slot[0] = (ops.lse)(&data[starts[o]..starts[o] + len], par));
            Ok(vec![first])
        }
        (Reduction::Moments, Terms::Runs { data, starts, len }) => {
            let ops = T::real().expect("Moments takes floats");
            let zero = T::monoid(Monoidal::Sum, &[] as &[T], false);
            let mut pairs = vec![(zero, zero); first.view.layout.size()];
            let par = parallel(*len);
            per_output(&mut pairs, 1, *len, |o, slot| slot[0] = (ops.moments)(&data[starts[o]..starts[o] + len], par));
            let mut var = Held::new(T::DTYPE, out_shape)?;
            first.slice_mut::<T>().iter_mut().zip(&pairs).for_each(|(v, p)| *v = p.0);
            var.slice_mut::<T>().iter_mut().zip(&pairs).for_each(|(v, p)| *v = p.1);
            Ok(vec![first, var])
        }
    }
}

/// A scan's destination in the order [other axes..., axis], where results
/// can be written into it in place: of the carrier, one C-contiguous run
/// from its offset, aligned, overlapping no load or carry.
fn in_place_destination<T: Carried>(p: &Plan, r: Reduction, order: &[usize]) -> Option<Held> {
    let d = permuted(p.dsts.first()?, order);
    let all: Vec<usize> = (0..order.len()).collect();
    let carry = match &p.kind {
        Kind::Scan { carry, .. } => carry.as_ref(),
        Kind::Reduce { .. } => None,
    };
    let touches = p.loads.iter().map(Load::view).chain(carry).any(|v| v.overlaps(&d));
    let single = matches!(r, Reduction::Monoid(_) | Reduction::Logsumexp);
    if !single || touches || d.layout.dtype != T::DTYPE || !contiguous_run::<T>(&d, all.iter().copied()) {
        return None;
    }
    let mut v = d;
    // The view from its first element, C-contiguous.
    let bytes = T::DTYPE.bits() / 8;
    v.memory.base = v.memory.base.wrapping_add(v.layout.offset * bytes);
    v.memory.bytes -= v.layout.offset * bytes;
    v.layout.offset = 0;
    ((v.memory.base as usize).is_multiple_of(std::mem::align_of::<T>())).then(|| Held::over(v))
}

fn scan_one<T: Carried>(p: &Plan, r: Reduction, k: usize, axis: usize, carry: Option<&View>) -> Result<Vec<Held>, String> {
    let mut held = None;
    let terms = terms_of::<T>(p, k, &[axis], &mut held, false)?;
    let Terms::Runs { data, starts, len } = terms else { unreachable!("scans read runs") };
    let others: Vec<usize> = (0..p.shape.len()).filter(|&a| a != axis).collect();
    let pshape: Vec<usize> = others.iter().chain(&[axis]).map(|&a| p.shape[a]).collect();
    let carries = match carry {
        Some(c) => {
            let h = Held::new(T::DTYPE, &c.layout.shape)?;
            store_into(c, &h)?;
            Some(h)
        }
        None => None,
    };
    let carry_of = |o: usize| carries.as_ref().map(|h| h.slice::<T>()[o]);
    let parallel = parallel(len);
    let w = len.max(1);
    let order: Vec<usize> = others.iter().chain(&[axis]).copied().collect();
    let mut first = match in_place_destination::<T>(p, r, &order) {
        Some(h) => h,
        None => Held::new(T::DTYPE, &pshape)?,
    };
    let slice = |o: usize| &data[starts[o]..starts[o] + len];
    match r {
        Reduction::Monoid(m) => {
            per_output(first.slice_mut::<T>(), w, len, |o, out| T::scan(m, slice(o), carry_of(o), out, parallel));
            Ok(vec![first])
        }
        Reduction::Logsumexp => {
            let ops = T::real().expect("Logsumexp takes floats");
            per_output(first.slice_mut::<T>(), w, len, |o, out| (ops.lse_scan)(slice(o), out));
            Ok(vec![first])
        }
        Reduction::Arg(m) => {
            let mut positions = Held::new(Dtype::Int64, &pshape)?;
            let (values, pos) = (first.slice_mut::<T>(), positions.slice_mut::<i64>());
            let pos_chunks: Vec<std::sync::Mutex<&mut [i64]>> = pos.chunks_mut(w).map(std::sync::Mutex::new).collect();
            per_output(values, w, len, |o, out| {
                let mut ps = pos_chunks[o].lock().unwrap_or_else(|e| e.into_inner());
                T::arg_scan(m, slice(o), out, &mut ps)
            });
            drop(pos_chunks);
            Ok(vec![first, positions])
        }
        Reduction::Moments => {
            let ops = T::real().expect("Moments takes floats");
            let mut var = Held::new(T::DTYPE, &pshape)?;
            let vs: Vec<std::sync::Mutex<&mut [T]>> = var.slice_mut::<T>().chunks_mut(w).map(std::sync::Mutex::new).collect();
            per_output(first.slice_mut::<T>(), w, len, |o, mean| {
                let mut v = vs[o].lock().unwrap_or_else(|e| e.into_inner());
                (ops.moments_scan)(slice(o), mean, &mut v)
            });
            drop(vs);
            Ok(vec![first, var])
        }
    }
}

/// Casts an array into held memory of its shape.
fn store_into(src: &View, h: &Held) -> Result<(), String> {
    let id = Prog::new(vec![src.layout.dtype], vec![Node::Load(0), Node::Cast(h.view.layout.dtype, 0)], vec![1])?;
    map::plan(id, vec![h.view.clone()], vec![src.clone()])?.run()
}

impl Call for Plan {
    fn claims(&self) -> Vec<Claim> {
        self.with_claims(|c| c.to_vec())
    }

    fn with_claims<R>(&self, f: impl FnOnce(&[Claim]) -> R) -> R {
        let n_dsts = self.dsts.len();
        let claim = |i: usize| self.range(i).map(|(lo, hi)| Claim { lo, hi, write: i < n_dsts });
        // The loads and a scan's carry read, the destinations written.
        door::gathered((n_dsts..self.spans.len()).chain(0..n_dsts).filter_map(claim), f)
    }

    fn work(&self) -> usize {
        let size: usize = self.shape.iter().product();
        let per: usize = self.loads.iter().map(|l| l.view().layout.dtype.bits().div_ceil(8)).sum::<usize>()
            + 16 * (self.prog.nodes.len() + self.dsts.len());
        size.saturating_mul(per)
    }

    fn run(self) -> Result<(), String> {
        self.run_kept()
    }
}

impl Plan {
    /// The plan over other memory: view `i` (destinations, then a scan's
    /// carry, then the loads, as the boundary's words give them) over
    /// `mems(i)`, checked to hold it, and the destinations checked apart
    /// again; refused as planning refuses, whereupon the plan is not to run.
    pub fn rebind(&mut self, mems: impl Fn(usize) -> Memory) -> Result<(), String> {
        let carry = match &mut self.kind {
            Kind::Scan { carry, .. } => carry.as_mut(),
            Kind::Reduce { .. } => None,
        };
        let views = self.dsts.iter_mut().chain(carry).chain(self.loads.iter_mut().map(Load::view_mut));
        for (i, v) in views.enumerate() {
            let m = mems(i);
            // The layout was checked in full when planned: only its last
            // element's place against the new extent is left to check.
            if self.spans[i].is_some_and(|(_, hi)| hi >= m.extent(v.layout.dtype) as i128) {
                v.layout.check_within(m.extent(v.layout.dtype)).map_err(|e| format!("operand {i} {e}"))?;
            }
            v.memory = m;
            // Its byte range over the new memory, taken here rather than by
            // a second walk of the views: an Arg Max of 1024 float32 spent
            // 6% of its time in that walk (perf).
            self.ranges[i] = v.byte_range_of(self.spans[i]);
        }
        apart(self.dsts.len(), |j| self.range(j))
    }

    /// A plan of checked views, their spans taken.
    fn new(prog: Arc<Prog>, shape: Vec<usize>, loads: Vec<Load>, dsts: Vec<View>, kind: Kind) -> Plan {
        let mut p = Plan { prog, shape, loads, dsts, kind, spans: Vec::new(), ranges: Vec::new() };
        p.spans = p.views().map(|v| v.layout.span().ok().flatten()).collect();
        p.ranges = p.views().zip(&p.spans).map(|(v, &span)| v.byte_range_of(span)).collect();
        p
    }

    /// The views in the boundary's order: destinations, a scan's carry, loads.
    fn views(&self) -> impl Iterator<Item = &View> {
        let carry = match &self.kind {
            Kind::Scan { carry, .. } => carry.as_ref(),
            Kind::Reduce { .. } => None,
        };
        self.dsts.iter().chain(carry).chain(self.loads.iter().map(Load::view))
    }

    /// The place of the first load among [`Plan::views`].
    fn first_load(&self) -> usize {
        self.spans.len() - self.loads.len()
    }

    /// The byte range of view `i` of [`Plan::views`] ([`View::byte_range`]).
    fn range(&self, i: usize) -> Option<(usize, usize)> {
        self.ranges[i]
    }

    /// Runs the plan, leaving it as it was.
    pub fn run_kept(&self) -> Result<(), String> {
        let p = self;
        let results: Vec<(Held, &View)> = match &self.kind {
            Kind::Reduce { axes, rs } => {
                // A whole reduction of runs, the usual small call, holds
                // nothing: its results go straight into its destinations.
                let whole = axes.len() == self.shape.len()
                    && rs.iter().all(|&(r, k)| {
                        matches!(r, Reduction::Monoid(_) | Reduction::Arg(_))
                            && with_carrier!(carrier(self.prog.output_dtype(k)), whole_run(p, k))
                    });
                if whole {
                    let mut dsts = self.dsts.iter();
                    for &(r, k) in rs {
                        with_carrier!(carrier(self.prog.output_dtype(k)), reduce_whole(p, r, k, &mut dsts));
                    }
                    return Ok(());
                }
                let out_shape = reduced_shape(&self.shape, axes);
                let mut all = Vec::new();
                for &(r, k) in rs {
                    let c = carrier(self.prog.output_dtype(k));
                    all.extend(with_carrier!(c, reduce_one(p, r, k, axes, &out_shape))?);
                }
                all.into_iter().zip(&self.dsts).collect()
            }
            Kind::Scan { axis, r, k, carry } => {
                let c = carrier(self.prog.output_dtype(*k));
                let held = with_carrier!(c, scan_one(p, *r, *k, *axis, carry.as_ref()))?;
                // The held results are in the order [other axes..., axis].
                let order: Vec<usize> = (0..self.shape.len()).filter(|a| a != axis).chain([*axis]).collect();
                let dsts: Vec<&View> = self.dsts.iter().collect();
                return held
                    .iter()
                    .zip(dsts)
                    .filter(|(h, _)| !h.in_place())
                    .try_for_each(|(h, d)| store(h, &permuted(d, &order)));
            }
        };
        results.iter().try_for_each(|(h, d)| store(h, d))
    }
}

#[cfg(test)]
mod tests;
