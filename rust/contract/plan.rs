//! A checked contraction: its operands' offsets along their roles, where
//! results go, and how elements are read into the acc and results written.

use super::elem::{reader, Elem, Read, Value};
use super::segments::{Segments, Segs};
use super::shape::{blocked_offsets, extent, offsets, uniform, Pairs};
use crate::core::call::Call;
use crate::loops::cast::cast;
use crate::loops::column::{Col, ColRef, Column};
use crate::core::door::Claim;
use crate::core::dtype::Dtype;
use crate::core::layout::{Memory, View};
use crate::loops::memio;

/// How a scale array holds its scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleKind {
    /// Values of any dtype, each cast into the acc.
    Value,
    /// uint8 e8m0 codes: e is 2^(e - 127), 255 a NaN.
    Code,
}

/// An operand's scales: one per block of `block` extents (the last along
/// an axis may be short), `view` of ⌈extent / block⌉ along each axis.
#[derive(Clone, Debug)]
pub struct Scale {
    pub kind: ScaleKind,
    pub block: Vec<usize>,
    pub view: View,
}

/// A contraction's operand: an array and its optional scales.
#[derive(Clone, Debug)]
pub struct Operand {
    pub view: View,
    pub scale: Option<Scale>,
}

impl From<&View> for Operand {
    fn from(v: &View) -> Operand {
        Operand { view: v.clone(), scale: None }
    }
}

/// Scales as the loops read them: the scale of the operand's element
/// (β, o, d) at `batch[β] + outer[o] + depth[d]`.
#[derive(Clone, Debug)]
pub struct Scales {
    pub mem: Memory,
    pub dtype: Dtype,
    pub kind: ScaleKind,
    pub batch: Vec<isize>,
    pub outer: Vec<isize>,
    pub depth: Vec<isize>,
}

impl Scales {
    /// The scale at element `at`, in the acc: a value cast by `read`, or a
    /// code's power of two.
    #[inline]
    pub fn get<E: Elem>(&self, read: Read<E>, acc: Dtype, at: isize) -> E {
        match self.kind {
            // SAFETY: the scales' view was checked against its buffer and
            // `at` is one of its elements (the loops derive it from the
            // operand's indices, each blocked into the scales' shape).
            ScaleKind::Value => unsafe { read(self.mem.base, at, acc) },
            ScaleKind::Code => {
                // SAFETY: as above; codes are uint8.
                let e = unsafe { *self.mem.base.offset(at) } as u64;
                let x = if e == 255 { f64::NAN } else { f64::from_bits((e + 1023 - 127) << 52) };
                E::of(Value::Real(x), acc)
            }
        }
    }
}

/// The reader of a side's scale values: of their dtype, or (for codes or
/// no scales, where none is called) of float32's.
pub fn scale_reader<E: Elem>(s: &Side) -> Read<E> {
    reader::<E>(s.scale.as_ref().map_or(Dtype::Float32, |s| s.dtype))
}

/// An operand as the loops read it: element (batch β, outer o, depth d)
/// lies at `batch[β] + outer[o] + depth[d]`, `outer` running along a's
/// rows or b's columns.
#[derive(Clone, Debug)]
pub struct Side {
    pub mem: Memory,
    pub dtype: Dtype,
    pub batch: Vec<isize>,
    pub outer: Vec<isize>,
    pub depth: Vec<isize>,
    /// The common step of `depth`, where there is one.
    pub depth_step: Option<isize>,
    /// The common step of `outer`, where there is one.
    pub outer_step: Option<isize>,
    /// The operand's scales, if any.
    pub scale: Option<Scales>,
}

impl Side {
    /// Element (bi, o, k) in the acc: cast by `read`, times its scale by
    /// `sread` where the operand has scales.
    #[inline(always)]
    pub fn get<E: Elem>(&self, read: Read<E>, sread: Read<E>, acc: Dtype, in_place: bool, (bi, o, k): (usize, usize, usize)) -> E {
        let at = self.batch[bi] + self.outer[o] + self.depth[k];
        let x = if in_place {
            // SAFETY: the view was checked against its buffer and (bi, o,
            // k) is one of its indices; its dtype's elements are E's values
            // bit for bit (the caller's `in_place`).
            unsafe { self.mem.base.cast::<E>().offset(at).read_unaligned() }
        } else {
            // SAFETY: as above; `read` reads the operand's dtype.
            unsafe { read(self.mem.base, at, acc) }
        };
        match &self.scale {
            None => x,
            Some(s) => E::mul(x, s.get(sread, acc, s.batch[bi] + s.outer[o] + s.depth[k])),
        }
    }

    /// Whether the operand's elements, of dtype `acc`, are E's values bit
    /// for bit.
    pub fn in_place<E: Elem>(&self, acc: Dtype) -> bool {
        self.dtype == acc && E::in_place(acc)
    }
}

/// dst or init as the loops reach it: output (β, i, j) at
/// `batch[β] + rows[i] + cols[j]`.
#[derive(Clone, Debug)]
pub struct Grid {
    pub mem: Memory,
    pub dtype: Dtype,
    pub batch: Vec<isize>,
    pub rows: Vec<isize>,
    pub cols: Vec<isize>,
    /// The common step of `cols`, where there is one.
    pub col_step: Option<isize>,
}

/// A contraction checked against its operands, ready to run.
#[derive(Debug)]
pub struct Plan {
    pub a: Side,
    pub b: Side,
    pub dst: Grid,
    pub init: Option<Grid>,
    /// The acc's dtype.
    pub acc: Dtype,
    /// Batch indices, rows, columns and depth.
    pub nb: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Whether results wait in scratch until every operand is read: dst
    /// shares memory with a or b, or with init other than as init's own
    /// elements.
    pub scratch: bool,
    /// Whether the products add in chain order, from the whole call's rows,
    /// columns and depth.
    pub chain: bool,
    /// The segments, if any, and dst's view, which a segmented call's
    /// scratch copies into.
    pub(super) segs: Option<(Segs, View, usize, usize)>,
    /// Byte ranges read, and the one written.
    pub(super) reads: Vec<Option<(usize, usize)>>,
    pub(super) writes: Option<(usize, usize)>,
}

/// Whether a float or complex contraction of `m` rows, `n` columns and
/// depth `k` adds its products in chain order (else in lane order): rows
/// and columns both above 4 and multiplying to at least 64, depth below 128
/// times their product.
pub fn chain_order(m: usize, n: usize, k: usize) -> bool {
    m > 4 && n > 4 && m.saturating_mul(n) >= 64 && (k as u128) < 128 * m as u128 * n as u128
}

fn side(op: &Operand, batch: &[usize], outer: &[usize], depth: &[usize]) -> Result<Side, String> {
    let v = &op.view;
    let l = &v.layout;
    let scale = op
        .scale
        .as_ref()
        .map(|s| -> Result<Scales, String> {
            let (sl, blk) = (&s.view.layout, Some(&s.block[..]));
            Ok(Scales {
                mem: s.view.memory,
                dtype: sl.dtype,
                kind: s.kind,
                batch: blocked_offsets(&l.shape, &sl.strides, blk, batch, sl.offset as isize)?,
                outer: blocked_offsets(&l.shape, &sl.strides, blk, outer, 0)?,
                depth: blocked_offsets(&l.shape, &sl.strides, blk, depth, 0)?,
            })
        })
        .transpose()?;
    let dep = offsets(&l.shape, &l.strides, depth, 0)?;
    let out = offsets(&l.shape, &l.strides, outer, 0)?;
    Ok(Side {
        mem: v.memory,
        dtype: l.dtype,
        batch: offsets(&l.shape, &l.strides, batch, l.offset as isize)?,
        depth_step: uniform(&dep),
        outer_step: uniform(&out),
        depth: dep,
        outer: out,
        scale,
    })
}

pub(super) fn grid(v: &View, nbatch: usize, nrows: usize) -> Result<Grid, String> {
    let l = &v.layout;
    let r = l.shape.len();
    let axes: Vec<usize> = (0..r).collect();
    let cols = offsets(&l.shape, &l.strides, &axes[nbatch + nrows..], 0)?;
    Ok(Grid {
        mem: v.memory,
        dtype: l.dtype,
        batch: offsets(&l.shape, &l.strides, &axes[..nbatch], l.offset as isize)?,
        rows: offsets(&l.shape, &l.strides, &axes[nbatch..nbatch + nrows], 0)?,
        col_step: uniform(&cols),
        cols,
    })
}

/// Checks an operand's scales: a block extent of at least 1 per axis,
/// the scales' shape ⌈extent / block⌉ along each, codes of uint8.
fn check_scale(name: &str, op: &Operand) -> Result<(), String> {
    let Some(s) = &op.scale else { return Ok(()) };
    let shape = &op.view.layout.shape;
    if s.block.len() != shape.len() || s.block.contains(&0) {
        return Err(format!("{name}'s scale blocks {:?} are not one extent of at least 1 per axis of {shape:?}", s.block));
    }
    let want: Vec<usize> = shape.iter().zip(&s.block).map(|(&n, &b)| n.div_ceil(b)).collect();
    if s.view.layout.shape != want {
        return Err(format!("{name}'s scales have shape {:?}, not {want:?}", s.view.layout.shape));
    }
    if s.kind == ScaleKind::Code && s.view.layout.dtype != Dtype::Uint8 {
        return Err(format!("{name}'s scale codes are {}, not uint8", s.view.layout.dtype.name()));
    }
    Ok(())
}

/// Checks a contraction of `a` with `b` paired by `pairs` into `dst` (of
/// the shape [`Pairs::dst_shape`] gives) from `init` (of dst's shape) in
/// `acc`, before any write. The acc's dtype is checked by
/// [`Plan::declined`], not here.
pub fn plan(pairs: &Pairs, acc: Dtype, dst: &View, init: Option<&View>, a: &Operand, b: &Operand, segments: Option<&Segments>) -> Result<Plan, String> {
    check_scale("a", a)?;
    check_scale("b", b)?;
    let (ao, bo) = (a, b);
    let (a, b) = (&a.view, &b.view);
    let (sa, sb) = (&a.layout.shape, &b.layout.shape);
    let (ra, mut rb) = pairs.roles(sa, sb)?;
    let mut want = pairs.dst_shape(sa, sb)?;
    let segs = segments.map(|s| s.resolve(pairs, &ra, &mut rb, &mut want, a, b)).transpose()?;
    let lead = matches!(segs, Some(Segs::Contracting { .. })) as usize;
    let dst_view = dst.clone();
    if dst.layout.shape != want {
        return Err(format!("dst has shape {:?}, not the contraction's {want:?}", dst.layout.shape));
    }
    if let Some(i) = init {
        if i.layout.shape != want {
            return Err(format!("init has shape {:?}, not dst's {want:?}", i.layout.shape));
        }
    }
    let (nb, m, n, k) = (extent(sa, &ra.batch), extent(sa, &ra.free), extent(sb, &rb.free), extent(sa, &ra.depth));
    let scale_views: Vec<&View> = [ao, bo].iter().filter_map(|o| o.scale.as_ref().map(|s| &s.view)).collect();
    let mut reads = vec![a.byte_range(), b.byte_range()];
    reads.extend(scale_views.iter().map(|v| v.byte_range()));
    if let Some(s) = &segs {
        reads.push(s.ids().byte_range());
    }
    let writes = dst.byte_range();
    let same = |x: &View, y: &View| {
        x.memory.base == y.memory.base && x.layout == y.layout
    };
    let scratch = dst.overlaps(a)
        || dst.overlaps(b)
        || scale_views.iter().any(|v| dst.overlaps(v))
        || init.is_some_and(|i| dst.overlaps(i) && !same(i, dst));
    if let Some(i) = init {
        reads.push(i.byte_range());
    }
    let empty = nb == 0 || m == 0 || n == 0 || want.contains(&0);
    // An empty dst needs no offsets, which its other extents might make
    // too many to hold.
    let (a, b, dst, init) = if empty {
        let none = |v: &View| Side { mem: v.memory, dtype: v.layout.dtype, batch: vec![], outer: vec![], depth: vec![], depth_step: None, outer_step: None, scale: None };
        let g = |v: &View| Grid { mem: v.memory, dtype: v.layout.dtype, batch: vec![], rows: vec![], cols: vec![], col_step: None };
        (none(a), none(b), g(dst), init.map(g))
    } else {
        (
            side(ao, &ra.batch, &ra.free, &ra.depth)?,
            side(bo, &rb.batch, &rb.free, &rb.depth)?,
            grid(dst, lead + ra.batch.len(), ra.free.len())?,
            init.map(|i| grid(i, lead + ra.batch.len(), ra.free.len())).transpose()?,
        )
    };
    let segs = segs.map(|s| (s, dst_view, lead + ra.batch.len(), ra.free.len()));
    Ok(Plan { a, b, dst, init, acc, nb, m, n, k, scratch, chain: chain_order(m, n, k), segs, reads, writes })
}

impl Plan {
    /// Why nx.cpu declines the call, or `None`: an acc other than float32,
    /// float64, complex64, complex128 or an integer of 4 to 64 bits, or
    /// scales in an acc other than float32 and float64.
    pub fn why_declined(&self) -> Option<String> {
        if super::elem::kind(self.acc).is_none() {
            return Some(format!("nx.cpu contract: no accumulation in {}", self.acc.name()));
        }
        let scaled = self.a.scale.is_some() || self.b.scale.is_some();
        if matches!(self.segs, Some((Segs::Rows { .. }, ..))) && self.b.scale.is_some() {
            return Some("nx.cpu contract: b's scales in a call segmented by rows are not computed yet".into());
        }
        (scaled && !matches!(self.acc, Dtype::Float32 | Dtype::Float64))
            .then(|| format!("nx.cpu contract: scales in a {} acc", self.acc.name()))
    }


    /// Reads init's outputs (β, i, j0..j0 + out.len()) into `out`, cast
    /// into the acc; +0 without init.
    pub fn init_row<E: Elem>(&self, read: Option<Read<E>>, bi: usize, i: usize, j0: usize, out: &mut [E]) {
        match (&self.init, read) {
            (Some(g), Some(read)) => {
                let at = g.batch[bi] + g.rows[i];
                for (o, &c) in out.iter_mut().zip(&g.cols[j0..]) {
                    // SAFETY: init's view was checked against its buffer,
                    // and (β, i, j) is one of its indices.
                    *o = unsafe { read(g.mem.base, at + c, self.acc) };
                }
            }
            _ => out.fill(E::ZERO),
        }
    }

    /// The reader of init's elements, if any.
    pub fn init_reader<E: Elem>(&self) -> Option<Read<E>> {
        self.init.as_ref().map(|g| reader::<E>(g.dtype))
    }
}

/// Where results go: dst itself, or scratch of every output in C order
/// until all are computed.
pub struct Sink<'p, E> {
    plan: &'p Plan,
    scratch: Option<Shared<E>>,
}

/// A slice that threads write disjoint parts of.
struct Shared<E> {
    ptr: *mut E,
    _keep: Vec<E>,
}

// SAFETY: the threads of a call write disjoint outputs of the scratch
// (each output belongs to one part of the work) and read it only after
// they have all ended.
unsafe impl<E: Send> Sync for Shared<E> {}

impl<'p, E: Elem> Sink<'p, E> {
    /// The sink of a plan's results.
    pub fn new(plan: &'p Plan) -> Sink<'p, E> {
        let scratch = plan.scratch.then(|| {
            let mut v = vec![E::ZERO; plan.nb * plan.m * plan.n];
            Shared { ptr: v.as_mut_ptr(), _keep: v }
        });
        Sink { plan, scratch }
    }

    /// The step of dst's rows where a microkernel may store its sums
    /// straight into dst ([`Sink::dst_at`]): no scratch, dst of the acc's
    /// dtype and `E`'s (so that a sum is its output bit for bit), its
    /// columns one element apart and its rows one positive step apart.
    pub fn direct_step(&self) -> Option<usize> {
        let (p, g) = (self.plan, &self.plan.dst);
        if self.scratch.is_some() || p.acc != E::DTYPE || g.dtype != E::DTYPE || g.col_step != Some(1) {
            return None;
        }
        uniform(&g.rows).filter(|&step| step > 0).map(|step| step as usize)
    }

    /// The place of output (β, i, j) in dst, where [`Sink::direct_step`]
    /// says a microkernel may store it: an element of dst's view.
    pub fn dst_at(&self, bi: usize, i: usize, j: usize) -> *mut E {
        let g = &self.plan.dst;
        g.mem.base.cast::<E>().wrapping_offset(g.batch[bi] + g.rows[i] + g.cols[j])
    }

    /// Stores outputs (β, i, j0..j0 + vals.len()), each sum in the acc
    /// rounded once into dst's dtype. Each output is stored by one thread,
    /// once.
    pub fn put(&self, bi: usize, i: usize, j0: usize, vals: &[E]) {
        let p = self.plan;
        match &self.scratch {
            Some(s) => {
                let at = (bi * p.m + i) * p.n + j0;
                // SAFETY: these outputs are this thread's alone (caller) and
                // lie in the scratch of every output.
                unsafe { std::ptr::copy_nonoverlapping(vals.as_ptr(), s.ptr.add(at), vals.len()) };
            }
            None => write(p, bi, i, j0, vals),
        }
    }

    /// Stores outputs (β, i0 + q, 0), `q < vals.len()`, of a plan of one
    /// column, as [`Sink::put`] stores each.
    pub fn put_column(&self, bi: usize, i0: usize, vals: &[E]) {
        let p = self.plan;
        debug_assert!(p.n == 1 && i0 + vals.len() <= p.m);
        match &self.scratch {
            Some(s) => {
                // SAFETY: as in `put`: outputs (bi, i0 + q, 0) lie one
                // after the next in the scratch of a plan of one column.
                unsafe { std::ptr::copy_nonoverlapping(vals.as_ptr(), s.ptr.add(bi * p.m + i0), vals.len()) };
            }
            None => {
                let g = &p.dst;
                let rows = &g.rows[i0..i0 + vals.len()];
                let at = g.batch[bi] + g.cols[0];
                store(p, vals, uniform(rows), |q| at + rows[q]);
            }
        }
    }

    /// Copies scratch, if any, into dst once every operand is read.
    pub fn finish(self) {
        if let Some(s) = &self.scratch {
            let p = self.plan;
            for bi in 0..p.nb {
                for i in 0..p.m {
                    let at = (bi * p.m + i) * p.n;
                    // SAFETY: every thread has ended; the row lies in the
                    // scratch.
                    let row = unsafe { std::slice::from_raw_parts(s.ptr.add(at), p.n) };
                    write(p, bi, i, 0, row);
                }
            }
        }
    }
}

/// Writes outputs (β, i, j0..) of dst: the values, of the acc's register
/// type, cast into the acc's dtype (an integer wrapping to its width) and
/// from it into dst's, then stored.
fn write<E: Elem>(p: &Plan, bi: usize, i: usize, j0: usize, vals: &[E]) {
    let g = &p.dst;
    let at = g.batch[bi] + g.rows[i];
    store(p, vals, g.col_step, |j| at + g.cols[j0 + j]);
}

/// Writes `vals` into dst, value j at element `at(j)`, each cast as
/// [`write`] casts it: by one store where `step` says the elements lie
/// `step` apart, else one by one. The elements are outputs of this
/// thread's alone.
fn store<E: Elem>(p: &Plan, vals: &[E], step: Option<isize>, at: impl Fn(usize) -> isize) {
    let n = vals.len();
    if n == 0 {
        return;
    }
    let mut owned: Option<Col> = None;
    if p.acc != E::DTYPE {
        let mut acc = Col::new(p.acc, n);
        cast(E::DTYPE, p.acc, &E::column(vals), &mut acc.as_mut(), n, false);
        owned = Some(acc);
    }
    if p.dst.dtype != p.acc {
        let mut out = Col::new(p.dst.dtype, n);
        cast(p.acc, p.dst.dtype, &owned.as_ref().map_or_else(|| E::column(vals), Col::as_ref), &mut out.as_mut(), n, false);
        owned = Some(out);
    }
    let col = owned.as_ref().map_or_else(|| E::column(vals), Col::as_ref);
    let g = &p.dst;
    // SAFETY: dst's view was checked against its buffer and `at` gives
    // outputs of it (the callers'); these outputs are this thread's alone,
    // and sub-byte elements sharing a byte with other threads' are stored
    // by memio's atomic read-modify-writes.
    unsafe {
        match step {
            Some(step) => memio::store(g.mem, g.dtype, at(0), step, n, &col),
            None => {
                for j in 0..n {
                    memio::store(g.mem, g.dtype, at(j), 1, 1, &from(&col, j));
                }
            }
        }
    }
}

/// The values of `col` from index `j` on.
fn from<'a>(col: &ColRef<'a>, j: usize) -> ColRef<'a> {
    match col {
        Column::Bool(v) => Column::Bool(&v[j..]),
        Column::I8(v) => Column::I8(&v[j..]),
        Column::I16(v) => Column::I16(&v[j..]),
        Column::I32(v) => Column::I32(&v[j..]),
        Column::I64(v) => Column::I64(&v[j..]),
        Column::U8(v) => Column::U8(&v[j..]),
        Column::U16(v) => Column::U16(&v[j..]),
        Column::U32(v) => Column::U32(&v[j..]),
        Column::U64(v) => Column::U64(&v[j..]),
        Column::F32(v) => Column::F32(&v[j..]),
        Column::F64(v) => Column::F64(&v[j..]),
        Column::C32(v) => Column::C32(&v[j..]),
        Column::C64(v) => Column::C64(&v[j..]),
    }
}

impl Call for Plan {
    fn claims(&self) -> Vec<Claim> {
        let read = self.reads.iter().flatten().map(|&(lo, hi)| Claim { lo, hi, write: false });
        read.chain(self.writes.map(|(lo, hi)| Claim { lo, hi, write: true })).collect()
    }

    fn work(&self) -> usize {
        let products = (self.nb as u128) * (self.m as u128) * (self.n as u128) * (self.k.max(1) as u128);
        usize::try_from(products * 16).unwrap_or(usize::MAX)
    }

    fn run(self) -> Result<(), String> {
        super::run(&self)
    }

    fn declined(&self) -> Option<String> {
        self.why_declined()
    }
}
