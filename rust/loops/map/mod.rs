//! `map`: a program evaluated at every index of its destinations' shape.
//!
//! A call is planned first ([`plan`]): every check is made and every refusal
//! answered before any write. The plan's loop merges the axes that every
//! operand steps through as one (unless a Coord node reads axes), runs its
//! innermost axis in tiles of up to [`TILE`] elements, each node evaluated over a
//! whole tile so a fused program makes one pass over memory, and splits the
//! tiles among threads. Values never depend on the split.
//!
//! A node's values over a tile are a column ([`Col`]). Where an operand's
//! run along the innermost axis is contiguous, aligned and of a dtype its
//! register type holds bit for bit, no column is copied: a load's readers
//! read the run in place, and the node that computes a destination's values
//! writes them straight into its run where no load reaches the destination
//! (`Loop::direct`, `Loop::borrowed`).

use crate::loops::cast;
use std::borrow::Cow;
use crate::loops::column::{self, register_align, register_bytes, Col, ColMut, ColRef};
use crate::core::call::Call;
use crate::core::door::{self, Claim};
use crate::core::dtype::Dtype;
use crate::core::layout::{ranges_meet, same_dims, Layout, Memory, View};
use crate::loops::memio;
use crate::loops::ops;
use crate::loops::pad::Pad;
use crate::core::pool;
use crate::core::stream;
use crate::core::transpose;
use crate::loops::prog::{Node, Prog};
use std::sync::Arc;
use streaming::Streaming;

/// The most elements of a tile, but for `TILE_LONG`.
pub const TILE: usize = 1024;

/// Elements of a tile of a loop that streams its operands and leaves their
/// fetching to the hardware or to the kinds (see [`Tiling`]).
const TILE_LONG: usize = 8192;

/// The fewest elements of a tile: below, the fixed cost of each node's
/// pass over a tile outweighs what the tile saves.
const TILE_MIN: usize = 256;

/// Bytes a tile's columns and operand runs may take together where the
/// operands stream from memory: a loop whose tile holds more runs
/// measurably slower (the runs and the columns crowd each other out of the
/// first-level cache), one whose tile holds far less pays each node's
/// fixed cost too often.
const TILE_BYTES: usize = 12 << 10;

/// The fewest and the most bytes of operands that [`cached_bytes`] takes
/// a loop to read and write from the caches.
const CACHED_BYTES: (usize, usize) = (2 << 20, 64 << 20);

/// Bytes of operands that a loop reads and writes from the caches rather
/// than memory: half the largest cache ([`caches::largest`](crate::core::caches::largest),
/// which has a fallback where the system reports none), within
/// [`CACHED_BYTES`]. Such a loop takes
/// tiles of [`TILE`] elements, the fewest passes, and leaves the fetching to
/// the hardware: on a CPU of 480 MiB of third-level cache, a + b over
/// 1000 x 1000 float32 so ran a tenth faster, exp over as many float64 a
/// sixth, than on the streaming loop's shorter tiles.
fn cached_bytes() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        let last = crate::core::caches::largest() / 2;
        last.clamp(CACHED_BYTES.0, CACHED_BYTES.1)
    })
}

/// Whether a loop of `size` elements whose operands (destinations and
/// loads) take `runs` bytes an element in all streams them from memory:
/// they take more than [`cached_bytes`].
fn streams(runs: usize, size: usize) -> bool {
    runs.saturating_mul(size) > cached_bytes()
}

/// How a loop of `prog` over `operands` (destinations and loads) of `size`
/// elements walks its innermost axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tiling {
    /// The operands fit in the caches (see [`streams`]): tiles of [`TILE`]
    /// elements, fetched by the hardware.
    Cached,
    /// As `Cached`, where every node is a load read in place or a value
    /// written in place, so that no column holds a tile: tiles of
    /// [`TILE_LONG`] elements, which pay each node's fixed cost an eighth
    /// as often as tiles of [`TILE`].
    CachedInPlace,
    /// A transcendental kind reads a load (see
    /// [`Prog::loads_into_transcendental`]) and no operand is `strided` (see
    /// [`Operand::strided`]): tiles of [`TILE_LONG`] elements, not
    /// prefetched. The kinds' slice forms fetch their arguments a block
    /// ahead as they compute (`kinds::prefetch`), which streams them faster
    /// than a burst of prefetches at each tile's start (over 10M elements on
    /// one thread, exp in float32 ran 4.6 ms so against 3.3, in float64 11.9
    /// against 10.0, log and sin 5-15% faster).
    Fetched,
    /// An operand is strided: tiles of the given fitted length (see
    /// [`fitted_tile`]), prefetched, for the blocks of rows
    /// ([`Loop::block`]) to share.
    Blocked(usize),
    /// The operands stream from memory otherwise: as the process's
    /// [`Streaming`] choice says, tiles of the given fitted length
    /// prefetched, or of [`TILE_LONG`] elements fetched by the hardware.
    Streamed(usize),
}

impl Tiling {
    /// Whether the operands fit the caches, where casts take their AVX-512
    /// compilation ([`cast::cast`]): streaming from memory, the baseline's
    /// ran faster (float32 into int32 over 10M elements, on one thread of
    /// a Zen 5: 1.72 ms against 1.84).
    fn cached(self) -> bool {
        matches!(self, Tiling::Cached | Tiling::CachedInPlace)
    }

    /// The elements of a tile and whether the loop prefetches each tile's
    /// runs ([`Loop::prefetch`]), streaming as `way` where it streams.
    fn tile(self, way: Streaming) -> (usize, bool) {
        match (self, way) {
            (Tiling::Cached, _) => (TILE, false),
            (Tiling::CachedInPlace, _) | (Tiling::Fetched, _) | (Tiling::Streamed(_), Streaming::Hardware) => (TILE_LONG, false),
            (Tiling::Blocked(t), _) | (Tiling::Streamed(t), Streaming::Prefetched) => (t, true),
        }
    }
}

/// How a loop of `prog`, whose operands (destinations and loads) take
/// `runs` bytes an element in all, walks its innermost axis: `streamed`
/// where its operands stream from memory ([`streams`]), `strided` where
/// an operand is, `in_place` where every node is a load read in place or
/// a value written in place.
fn tiling(prog: &Prog, runs: usize, streamed: bool, strided: bool, in_place: bool) -> Tiling {
    if !streamed {
        if in_place { Tiling::CachedInPlace } else { Tiling::Cached }
    } else if strided {
        Tiling::Blocked(fitted_tile(prog, runs))
    } else if prog.loads_into_transcendental() {
        Tiling::Fetched
    } else {
        Tiling::Streamed(fitted_tile(prog, runs))
    }
}

/// The longest power of two from [`TILE_MIN`] to [`TILE`] elements whose
/// columns and runs fit in [`TILE_BYTES`]. Every node's column counts, those
/// read or written in place too: prefetched tiles so sized stream fastest
/// (a + b in float32 ran a fifth faster on tiles of 256 to 512 elements
/// than on 1024).
fn fitted_tile(prog: &Prog, runs: usize) -> usize {
    let columns: usize = prog.dtypes.iter().map(|&d| register_bytes(d)).sum();
    let fit = TILE_BYTES / (columns + runs).max(1);
    let pow2 = if fit == 0 { 1 } else { 1 << fit.ilog2() };
    pow2.clamp(TILE_MIN, TILE)
}

/// The fewest elements of a loop of one row that measures the process's
/// [`Streaming`] choice: [`SEGMENTS`] segments of at least 2^16 elements (a
/// quarter megabyte of float32 an operand) over its first half, measured,
/// then the rest of the loop.
const CALIBRATION_MIN: usize = 1 << 21;

/// Segments a measuring loop times, alternately each way.
const SEGMENTS: usize = 16;

/// The most operands (loads and destinations) whose tables a loop keeps in
/// place; a loop of more keeps them on the heap for the call.
pub const MAX_OPERANDS: usize = 16;

/// Work items ahead of the one a thread computes whose operands it
/// prefetches.
const AHEAD: usize = 2;

/// Rows of a block where an operand is strided (see [`Loop::block`]):
/// enough for a line of float32 written a column at a time to fill before
/// it leaves the first-level cache.
const BLOCK_ROWS: usize = 16;

/// Bytes of a cache line.
const LINE: usize = 64;

/// Elements below which a loop wakes none of the pool's threads: a wake-up
/// costs tens of microseconds (measured on a 2-core virtual machine), more
/// than splitting a pass over fewer elements saves.
const PARALLEL_MIN: usize = 1 << 18;

/// Elements below which a loop runs on the calling thread alone; from here
/// to [`PARALLEL_MIN`] it shares its tiles with threads still lingering
/// after an earlier call (`pool::share_parts`). On a 2-core Zen 3, Rust
/// alone, two threads, calls in a loop: a + b over 316² float32 19-26 ->
/// 12-14 µs, float32 into int32 13-20 -> 11-12 µs.
const SHARED_MIN: usize = 1 << 15;

/// A table of per-operand (or per-axis, or per-node) values, in place up to
/// [`MAX_OPERANDS`] entries and on the heap beyond: a small loop so
/// allocates none.
#[derive(Clone, Debug)]
enum Table<T: Copy + Default> {
    Inline([T; MAX_OPERANDS], usize),
    Heap(Vec<T>),
}

impl<T: Copy + Default> Table<T> {
    fn from_fn(n: usize, f: impl Fn(usize) -> T) -> Table<T> {
        if n <= MAX_OPERANDS {
            // Built where it lies, each entry once: filling a zeroed array
            // called memset, whose narrow stores the move into the enum then
            // read back as wide loads that stalled (a tenth of a small map).
            Table::Inline(std::array::from_fn(|i| if i < n { f(i) } else { T::default() }), n)
        } else {
            Table::Heap((0..n).map(f).collect())
        }
    }
    /// `n` entries of `x`: stored a vector at a time where they fit in
    /// place, where `from_fn` tests each of the sixteen places.
    fn filled(n: usize, x: T) -> Table<T> {
        if n <= MAX_OPERANDS {
            Table::Inline([x; MAX_OPERANDS], n)
        } else {
            Table::Heap(vec![x; n])
        }
    }
    fn as_slice(&self) -> &[T] {
        match self {
            Table::Inline(a, n) => &a[..*n],
            Table::Heap(v) => v,
        }
    }
    fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Table::Inline(a, n) => &mut a[..*n],
            Table::Heap(v) => v,
        }
    }
    fn truncate(&mut self, len: usize) {
        match self {
            Table::Inline(_, n) => *n = len.min(*n),
            Table::Heap(v) => v.truncate(len),
        }
    }
}

impl<T: Copy + Default> std::ops::Deref for Table<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy + Default> std::ops::DerefMut for Table<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

/// How a loop reads an operand.
#[derive(Clone, Debug)]
pub enum Load {
    /// Element by element at the loop's index.
    Plain(View),
    /// Through a pad's windows over a padded copy of the operand.
    Padded(Pad, View),
}

impl Load {
    /// The operand's view.
    pub fn view(&self) -> &View {
        match self {
            Load::Plain(v) | Load::Padded(_, v) => v,
        }
    }

    /// The operand's view, to change.
    pub fn view_mut(&mut self) -> &mut View {
        match self {
            Load::Plain(v) | Load::Padded(_, v) => v,
        }
    }
}

/// A checked map call, ready to run once its claims are held.
pub struct Plan {
    prog: Arc<Prog>,
    shape: Vec<usize>,
    dsts: Vec<View>,
    /// The operands' views, read as `pads` says.
    loads: Vec<View>,
    pads: Vec<Option<Pad>>,
    /// Plain loads to read from a copy, because a destination overlaps them
    /// otherwise than element for element.
    copied: Table<bool>,
    /// The element spans of the destinations, then of the loads
    /// ([`Layout::span`]): a plan's layouts are fixed, its memory not.
    spans: Vec<Option<(i128, i128)>>,
    /// The byte ranges of the destinations, then of the loads, as called.
    ranges: Vec<Option<(usize, usize)>>,
    /// For each destination, whether a load reaches its bytes.
    reached: Table<bool>,
    /// The loop of the last run over the plan's own loads and the
    /// streaming choice it was made under (see [`Plan::run_kept`]).
    last: Option<(Loop, Option<Streaming>)>,
    /// [`Call::work`], which depends on the layouts alone: reckoned once,
    /// for every call a kept plan serves.
    work: usize,
}

/// Whether a layout maps two indices to one element (a destination must
/// not): checked by the sufficient rule that, axes sorted by step, each step
/// exceeds the reach of the smaller ones.
pub fn self_overlaps(l: &Layout) -> bool {
    let mut axes: Vec<(usize, usize)> = l
        .shape
        .iter()
        .zip(&l.strides)
        .filter(|(&n, _)| n > 1)
        .map(|(&n, &s)| (s.unsigned_abs(), n))
        .collect();
    if l.shape.contains(&0) {
        return false;
    }
    axes.sort();
    let mut reach = 0usize;
    for (step, n) in axes {
        if step <= reach {
            return true;
        }
        reach = reach.saturating_add(step.saturating_mul(n - 1));
    }
    false
}

/// Whether two views reach the same elements in the same order of bytes, so
/// that reading one and writing the other element by element is safe.
fn same_elements(a: &View, b: &View) -> bool {
    a.memory.base == b.memory.base && a.layout.dtype.bits() == b.layout.dtype.bits() && {
        let (la, lb) = (&a.layout, &b.layout);
        same_dims(&la.shape, &lb.shape) && la.offset == lb.offset && same_dims(&la.strides, &lb.strides)
    }
}

/// Checks a map call: the program against its loads and destinations, their
/// shapes and dtypes, and the destinations' layouts.
pub fn plan(prog: impl Into<Arc<Prog>>, dsts: Vec<View>, loads: Vec<View>) -> Result<Plan, String> {
    plan_loads(prog, dsts, loads.into_iter().map(Load::Plain).collect())
}

/// Checks `loads` against `prog`: one a program operand, each of its
/// operand's dtype, and each of the loop's shape (`shape`, or the first
/// load's where `None`), which it gives, a padded load's shape being the
/// one its pad gives; and that no Coord node reads past the loop's rank.
pub fn check_loads(prog: &Prog, loads: &[Load], shape: Option<&[usize]>) -> Result<Vec<usize>, String> {
    if loads.len() != prog.operands.len() {
        return Err(format!("{} loads for a program of {} operands", loads.len(), prog.operands.len()));
    }
    let mut loop_shape: Option<Vec<usize>> = shape.map(<[usize]>::to_vec);
    for (i, l) in loads.iter().enumerate() {
        let v = l.view();
        if v.layout.dtype != prog.operands[i] {
            return Err(format!("load {i} is {} but operand {i} is {}", v.layout.dtype.name(), prog.operands[i].name()));
        }
        let s: Cow<[usize]> = match l {
            Load::Plain(v) => Cow::Borrowed(&v.layout.shape),
            Load::Padded(p, v) => Cow::Owned(p.shape(&v.layout.shape).map_err(|e| format!("load {i}: {e}"))?),
        };
        match &loop_shape {
            Some(want) if !same_dims(want, &s) => {
                return Err(format!("load {i} has shape {:?}, the loop {:?}", s, want));
            }
            Some(_) => {}
            None => loop_shape = Some(s.into_owned()),
        }
    }
    let loop_shape = loop_shape.unwrap_or_default();
    if let Some(a) = prog.max_coord_axis() {
        if a >= loop_shape.len() {
            return Err(format!("a Coord node reads axis {a} of a loop of rank {}", loop_shape.len()));
        }
    }
    Ok(loop_shape)
}

/// Checks a map call whose loads may be padded: as [`plan`], a padded load's
/// shape being the one its pad gives (refused before any copy is made).
pub fn plan_loads(prog: impl Into<Arc<Prog>>, dsts: Vec<View>, loads: Vec<Load>) -> Result<Plan, String> {
    let prog: Arc<Prog> = prog.into();
    if dsts.len() != prog.outputs.len() {
        return Err(format!(
            "{} destinations for a program of {} outputs",
            dsts.len(),
            prog.outputs.len()
        ));
    }
    let shape: &[usize] = dsts.first().map_or(&[], |d| &d.layout.shape);
    for (k, d) in dsts.iter().enumerate() {
        let want = prog.output_dtype(k);
        if d.layout.dtype != want {
            return Err(format!(
                "destination {k} is {} but output {k} is {}",
                d.layout.dtype.name(),
                want.name()
            ));
        }
        if !same_dims(&d.layout.shape, shape) {
            return Err(format!(
                "destination {k} has shape {:?}, destination 0 {:?}",
                d.layout.shape, shape
            ));
        }
        if self_overlaps(&d.layout) {
            return Err(format!("destination {k} maps several indices to one element"));
        }
    }
    let shape = check_loads(&prog, &loads, dsts.first().map(|_| shape))?;
    let (loads, pads) = loads
        .into_iter()
        .map(|l| match l {
            Load::Plain(v) => (v, None),
            Load::Padded(p, v) => (v, Some(p)),
        })
        .unzip();
    // The views were checked to lie in their memory, so their spans are.
    let spans: Vec<_> = dsts.iter().chain(&loads).map(|v| v.layout.span().ok().flatten()).collect();
    let ranges = dsts.iter().chain(&loads).zip(&spans).map(|(v, &span)| v.byte_range_of(span)).collect();
    let (copied, reached) = (Table::filled(0, false), Table::filled(0, false));
    let mut plan = Plan { prog, shape, dsts, loads, pads, copied, spans, ranges, reached, last: None, work: 0 };
    plan.work = plan.reckon_work();
    plan.bind()?;
    Ok(plan)
}

impl Plan {
    /// Derives what the plan's checks found in its views' memory, from
    /// their byte ranges (taken by the caller): those of the destinations
    /// must not meet, and which loads a destination overlaps.
    fn bind(&mut self) -> Result<(), String> {
        let (dsts, loads) = (&self.dsts, &self.loads);
        let n = dsts.len();
        let (dst_ranges, load_ranges) = self.ranges.split_at(n);
        for k in 0..n {
            if let Some(j) = (0..k).find(|&j| ranges_meet(dst_ranges[j], dst_ranges[k])) {
                return Err(format!("destinations {j} and {k} overlap"));
            }
        }
        // Tables, refilled by a few vector stores: vectors' `clear` and
        // `resize` took ~80 instructions of a small map.
        self.copied = Table::filled(loads.len(), false);
        self.reached = Table::filled(n, false);
        // Which loads each destination meets: usually none.
        for (k, &d) in dst_ranges.iter().enumerate() {
            for (i, &l) in load_ranges.iter().enumerate() {
                if ranges_meet(d, l) {
                    self.reached[k] = true;
                    if self.pads[i].is_none() && !same_elements(&dsts[k], &loads[i]) {
                        self.copied[i] = true;
                    }
                }
            }
        }
        Ok(())
    }

    /// The plan over other memory: view `i` (destinations, then loads) over
    /// `mems(i)`, checked to hold it, and what depends on memory derived
    /// again; refused as [`plan_loads`] refuses, whereupon the plan is not
    /// to run.
    pub fn rebind(&mut self, mems: impl Fn(usize) -> Memory) -> Result<(), String> {
        for (i, v) in self.dsts.iter_mut().chain(self.loads.iter_mut()).enumerate() {
            let m = mems(i);
            // The layout was checked in full when planned: only its last
            // element's place against the new extent is left to check.
            if self.spans[i].is_some_and(|(_, hi)| hi >= m.extent(v.layout.dtype) as i128) {
                v.layout.check_within(m.extent(v.layout.dtype)).map_err(|e| format!("operand {i} {e}"))?;
            }
            v.memory = m;
            // Its byte range, taken here rather than by a second walk of
            // the views through chained iterators.
            self.ranges[i] = v.byte_range_of(self.spans[i]);
        }
        self.bind()
    }

    /// An upper estimate of a call's work, in bytes of a plain copy
    /// ([`Call::work`]): every operand's bytes and four a node, an element,
    /// and a padded load's copy read and written.
    fn reckon_work(&self) -> usize {
        let size: usize = self.shape.iter().product();
        let bytes: usize = self
            .loads
            .iter()
            .chain(&self.dsts)
            .map(|v| v.layout.dtype.bits().div_ceil(8))
            .sum();
        let copies: usize = self
            .loads
            .iter()
            .zip(&self.pads)
            .filter_map(|(v, p)| p.as_ref().map(|p| 2 * p.copy_bytes(v)))
            .sum();
        size.saturating_mul(bytes + 4 * self.prog.nodes.len()).saturating_add(copies)
    }

    /// Runs the plan: loads a destination overlaps and padded ones are read
    /// from copies made for the run. A loop over the plan's own loads is
    /// kept for the next run, which takes it where only memory has changed
    /// ([`Loop::rebase`]) and the process's streaming choice has not.
    pub fn run_kept(&mut self) -> Result<(), String> {
        let size: usize = self.shape.iter().product();
        if size == 0 || self.dsts.is_empty() {
            return Ok(());
        }
        let mut scratch = Vec::new();
        let mut loads = Cow::Borrowed(&self.loads[..]);
        for i in 0..self.loads.len() {
            let copy = match &self.pads[i] {
                Some(p) => Some(p.materialize(&self.loads[i])?),
                None if self.copied[i] => Some(copy_of(&self.loads[i])?),
                None => None,
            };
            if let Some((view, buf)) = copy {
                loads.to_mut()[i] = view;
                scratch.push(buf);
            }
        }
        if let Cow::Owned(copies) = loads {
            Loop::new(self, &copies).run(&self.prog);
            return Ok(());
        }
        let choice = streaming::choice();
        // The kept loop runs where it lies: a loop is too large to move
        // about on every call of a small one.
        if let Some((lp, c)) = &mut self.last {
            if *c == choice && lp.rebase(self.dsts.iter().chain(&self.loads), &self.reached) {
                lp.run(&self.prog);
                return Ok(());
            }
        }
        let lp = Loop::new(self, &self.loads);
        lp.run(&self.prog);
        self.last = Some((lp, choice));
        Ok(())
    }
}

impl Call for Plan {
    fn claims(&self) -> Vec<Claim> {
        self.with_claims(|c| c.to_vec())
    }

    fn with_claims<R>(&self, f: impl FnOnce(&[Claim]) -> R) -> R {
        let n = self.dsts.len();
        let claim = |(i, r): (usize, &Option<(usize, usize)>)| r.map(|(lo, hi)| Claim { lo, hi, write: i < n });
        door::gathered(self.ranges.iter().enumerate().filter_map(claim), f)
    }

    fn work(&self) -> usize {
        self.work
    }

    fn run(mut self) -> Result<(), String> {
        self.run_kept()
    }
}

/// A contiguous copy of a view in memory the call holds.
fn copy_of(v: &View) -> Result<(View, Vec<u64>), String> {
    let layout = Layout::contiguous(v.layout.dtype, &v.layout.shape);
    let bytes = (layout.size() * layout.dtype.bits()).div_ceil(8);
    let mut buf = vec![0u64; bytes.div_ceil(8)];
    let memory = Memory { base: buf.as_mut_ptr() as *mut u8, bytes };
    let copy = View::new(layout, memory)?;
    let d = v.layout.dtype;
    let id = Prog::new(vec![d], vec![Node::Load(0)], vec![0])?;
    plan(id, vec![copy.clone()], vec![v.clone()])?.run()?;
    Ok((copy, buf))
}

/// An operand as a loop reads or writes it.
#[derive(Clone, Copy, Debug)]
struct Operand {
    mem: Memory,
    dtype: Dtype,
    /// The element index of its element at the loop's index 0.
    offset: isize,
    /// Its step along the innermost axis.
    inner: isize,
    /// Whether the rows a work item stacks (see [`Loop::stack`]) lie end
    /// to end in it, as they do where items stack none.
    joins: bool,
    /// Whether a run along the innermost axis is read or written in place
    /// as a column (see [`Operand::can_be_in_place`]).
    in_place: bool,
}

/// An empty operand, for a [`Table`]'s unused places.
impl Default for Operand {
    fn default() -> Operand {
        let mem = Memory { base: std::ptr::null_mut(), bytes: 0 };
        Operand { mem, dtype: Dtype::Bool, offset: 0, inner: 0, joins: true, in_place: false }
    }
}

impl Operand {
    /// Whether each element along the innermost axis lies on a cache line
    /// of its own: the hardware and [`Loop::prefetch`] cannot stream such an
    /// operand, which the loop's blocks serve instead ([`Loop::block`]).
    fn strided(&self) -> bool {
        self.inner.unsigned_abs() * self.dtype.bits() >= 8 * LINE
    }

    /// Whether its runs along the innermost axis can serve as columns in
    /// place: elements next to each other, a work item's rows too, held bit
    /// for bit by their register type, aligned for it.
    fn can_be_in_place(&self) -> bool {
        self.inner == 1
            && self.joins
            && column::bitwise(self.dtype)
            && (self.mem.base as usize).is_multiple_of(register_align(self.dtype))
    }

    /// The address of its element at element index `at`.
    fn at(&self, at: isize) -> *mut u8 {
        self.mem.base.wrapping_offset(at * self.dtype.bytes() as isize)
    }

    /// Its run of `n` elements from element index `at`, in place, to read.
    ///
    /// # Safety
    /// The operand is in place, the run lies in its checked layout, and
    /// nothing writes the run while the column lives.
    unsafe fn run<'a>(&self, at: isize, n: usize) -> ColRef<'a> {
        // SAFETY: as this function's contract; an operand in place is of a
        // bitwise dtype, aligned for its register type.
        unsafe { ColRef::in_memory(self.dtype, self.at(at), n) }.expect("an operand in place is of a bitwise dtype")
    }

    /// As [`Operand::run`], to write.
    ///
    /// # Safety
    /// As [`Operand::run`], and nothing else reads or writes the run while
    /// the column lives.
    unsafe fn run_mut<'a>(&self, at: isize, n: usize) -> ColMut<'a> {
        // SAFETY: as this function's contract.
        unsafe { ColMut::in_memory(self.dtype, self.at(at), n) }.expect("an operand in place is of a bitwise dtype")
    }
}

/// A move between an operand's elements and a work item's column (see
/// [`Loop::move_rows`]).
enum Move {
    /// `n` elements from element index `start`, at the operand's step
    /// along the innermost axis, and the column's values from `from` on.
    Run { start: isize, n: usize, from: usize },
    /// The whole item as a transposed block (see `memio::load_transposed`).
    Block,
}

/// The iteration of a plan: axes merged where they can be, the innermost one
/// in tiles.
#[derive(Clone)]
struct Loop {
    /// Extents of the outer axes (all but the innermost).
    outer: Table<usize>,
    /// The innermost axis's extent.
    inner: usize,
    /// The operands: destinations, then loads.
    ops: Table<Operand>,
    /// Steps along the outer axes, axis by axis: operand `op`'s along axis
    /// `a` at `a * ops.len() + op`.
    outer_steps: Table<isize>,
    n_dsts: usize,
    /// For each node of the program, the destination its values are
    /// written straight into, if any (see [`written_in_place`]).
    direct: Table<Option<usize>>,
    /// For each node of the program, whether it is a load whose runs its
    /// readers read in place (see [`read_in_place`]).
    borrowed: Table<bool>,
    /// Whether every node is a load read in place or a value written in
    /// place, so that a work item takes no column.
    columnless: bool,
    /// How the loop walks its innermost axis.
    tiling: Tiling,
    /// Elements of a tile (see [`Tiling::tile`]).
    tile: usize,
    /// Whether the loop prefetches each tile's runs (see [`Tiling::tile`]).
    prefetches: bool,
    /// Rows of the last outer axis that one work item stacks in its
    /// columns, one after the other (see [`stacked_rows`]); 1 for none.
    stack: usize,
    /// Rows of a block: [`BLOCK_ROWS`] where an operand is strided and the
    /// loop has rows and stacks none, else 1. A block's rows take a tile's
    /// columns in turn, so each line (and page) a strided operand brings in
    /// serves the rows of the block before it leaves the caches.
    block: usize,
}

impl Loop {
    /// The loop of plan `p` reading `loads` (its own, or copies of them).
    fn new(p: &Plan, loads: &[View]) -> Loop {
        let (n_dsts, n) = (p.dsts.len(), p.dsts.len() + loads.len());
        let view = |op: usize| if op < n_dsts { &p.dsts[op] } else { &loads[op - n_dsts] };
        let mut extents = Table::from_fn(p.shape.len(), |a| p.shape[a]);
        let mut steps = Table::from_fn(p.shape.len() * n, |i| view(i % n).layout.strides[i / n]);
        let runs = (0..n).map(|op| view(op).layout.dtype.bytes().max(1)).sum();
        let streamed = streams(runs, p.shape.iter().product());
        if p.prog.max_coord_axis().is_none() {
            innermost_by_strides(extents.as_mut_slice(), steps.as_mut_slice(), n, |op| stride_weight(view(op).layout.dtype, !streamed));
            let kept = merge_axes(extents.as_mut_slice(), steps.as_mut_slice(), n);
            extents.truncate(kept);
            steps.truncate(kept * n);
        }
        let (inner, r) = match extents.as_slice().last() {
            Some(&e) => (e, extents.as_slice().len() - 1),
            None => (1, 0),
        };
        // A destination is written in place only where no load reaches its
        // bytes (as called: a copy made since reaches none of them): its
        // values are then final when written, and no column read in place
        // aliases it.
        let mut ops = Table::from_fn(n, |op| {
            let v = view(op);
            Operand {
                mem: v.memory,
                dtype: v.layout.dtype,
                offset: v.layout.offset as isize,
                // A loop of no axes has one element, which is a run of
                // step 1 as well as of any other.
                inner: steps.as_slice().get(r * n + op).copied().unwrap_or(1),
                joins: true,
                in_place: false,
            }
        });
        let strided = ops.as_slice().iter().any(Operand::strided);
        let last_outer = r.checked_sub(1).map(|a| extents.as_slice()[a]);
        let blocked = strided && streamed;
        // An operand strided along the innermost axis whose rows lie side
        // by side, of values a transposed tile moves.
        let transposable = r > 0 && ops.as_slice().iter().enumerate().any(|(op, o)| o.strided() && steps.as_slice()[(r - 1) * n + op] == 1 && memio::tiles_transposed(o.dtype).is_some());
        let stack = stacked_rows(last_outer, inner, p.prog.max_coord_axis().is_some(), blocked, transposable);
        let whole = item_tile(stack, inner, TILE) == inner;
        for (op, o) in ops.as_mut_slice().iter_mut().enumerate() {
            o.joins = stack == 1 || (whole && steps.as_slice()[(r - 1) * n + op] == o.inner * inner as isize);
            o.in_place = o.can_be_in_place() && !(op < n_dsts && p.reached[op]);
        }
        let in_place = Table::from_fn(n, |op| ops.as_slice()[op].in_place);
        let direct = written_in_place(&p.prog, &in_place.as_slice()[..n_dsts]);
        let borrowed = read_in_place(&p.prog, &in_place.as_slice()[n_dsts..]);
        let columnless = (0..p.prog.nodes.len()).all(|i| borrowed.as_slice()[i] || direct.as_slice()[i].is_some());
        let tiling = tiling(&p.prog, runs, streamed, strided, columnless);
        let (tile, prefetches) = tiling.tile(streaming::choice().unwrap_or(streaming::UNMEASURED));
        extents.truncate(r);
        steps.truncate(r * n);
        Loop {
            outer: extents,
            inner,
            ops,
            outer_steps: steps,
            n_dsts,
            direct,
            borrowed,
            columnless,
            tiling,
            tile: item_tile(stack, inner, tile),
            prefetches,
            stack,
            block: if strided && r > 0 && stack == 1 { BLOCK_ROWS } else { 1 },
        }
    }

    /// Puts this loop of a plan (over its own loads) over the memory its
    /// `views` (destinations, then loads) now have, `reached` telling which
    /// destinations a load reaches; false where that changes an operand's
    /// being read or written in place ([`Operand::in_place`]), on which the
    /// rest of the loop depends: the loop is then not to run.
    fn rebase<'v>(&mut self, views: impl Iterator<Item = &'v View>, reached: &[bool]) -> bool {
        let n_dsts = self.n_dsts;
        let ops = self.ops.as_mut_slice();
        for (op, v) in views.enumerate() {
            let o = &mut ops[op];
            let moved = Operand { mem: v.memory, ..*o };
            let in_place = moved.can_be_in_place() && !(op < n_dsts && reached[op]);
            if in_place != o.in_place {
                return false;
            }
            o.mem = v.memory;
        }
        true
    }

    /// Runs the loop, measuring the process's [`Streaming`] choice first
    /// where it is unmeasured and the loop can (see [`Loop::calibration`]).
    fn run(&self, prog: &Prog) {
        match self.calibration() {
            Some(segment) => self.calibrate(prog, segment).run_from(prog, SEGMENTS * segment),
            None => self.run_from(prog, 0),
        }
    }

    /// The length of the segments over which this loop measures the
    /// process's [`Streaming`] choice, where it is unmeasured and this loop
    /// is streamed, of one row of at least [`CALIBRATION_MIN`] elements: a
    /// thirty-second of the row in whole [`TILE_LONG`] tiles, which every
    /// tiling's tiles divide.
    fn calibration(&self) -> Option<usize> {
        let one_row = self.outer.iter().all(|&n| n == 1);
        let measures = matches!(self.tiling, Tiling::Streamed(_)) && one_row && self.inner >= CALIBRATION_MIN;
        (measures && streaming::choice().is_none()).then(|| self.inner / (2 * SEGMENTS) / TILE_LONG * TILE_LONG)
    }

    /// This loop streaming as `way`.
    fn streaming_as(&self, way: Streaming) -> Loop {
        let (tile, prefetches) = self.tiling.tile(way);
        Loop { tile: item_tile(self.stack, self.inner, tile), prefetches, ..self.clone() }
    }

    /// Runs the first [`SEGMENTS`] segments of `segment` elements of this
    /// loop of one row on the calling thread, alternately streamed each way
    /// (in the order P H H P, repeated, so that a drift in the machine's
    /// speed weighs on both alike), adds each way's least segment time to
    /// the process's measurement ([`streaming::decide`]), and gives this
    /// loop streaming as the process now takes.
    fn calibrate(&self, prog: &Prog, segment: usize) -> Loop {
        let ways = [self.streaming_as(Streaming::Prefetched), self.streaming_as(Streaming::Hardware)];
        let mut spent = [f64::INFINITY; 2];
        for (k, way) in [0, 1, 1, 0].into_iter().cycle().take(SEGMENTS).enumerate() {
            let lp = &ways[way];
            let tiles = lp.inner.div_ceil(lp.tile);
            let clock = std::time::Instant::now();
            lp.run_items(prog, k * segment / lp.tile, (k + 1) * segment / lp.tile, 1, tiles);
            spent[way] = spent[way].min(clock.elapsed().as_secs_f64());
        }
        self.streaming_as(streaming::decide(spent[0], spent[1]))
    }

    /// Runs the loop from element `first` of its one row (0 where it has
    /// several), a multiple of its tile, to its end, its work items split
    /// among the pool's threads.
    fn run_from(&self, prog: &Prog, first: usize) {
        // The elements left (rows stack several rows of the outer axes').
        let size = self.outer.iter().product::<usize>() * self.inner - first;
        let shared = size >= SHARED_MIN && pool::threads() > 1;
        if !shared && self.tile < self.inner && self.one_pass_in_place(prog) {
            return Loop { tile: self.inner, ..self.clone() }.run_from(prog, first);
        }
        let rows = self.item_rows();
        let tiles = self.inner.div_ceil(self.tile);
        let (lo, items) = (first / self.tile, rows * tiles);
        // Run here, as one part, without the pool's bookkeeping.
        if !shared {
            return self.run_items(prog, lo, items, rows, tiles);
        }
        let left = items - lo;
        let parts = (pool::threads() * 4).min(left);
        let part = |part| {
            let (from, to) = (lo + left * part / parts, lo + left * (part + 1) / parts);
            self.run_items(prog, from, to, rows, tiles)
        };
        if size < PARALLEL_MIN { pool::share_parts(parts, part) } else { pool::run_parts(parts, part) }
    }

    /// Whether this loop reads its loads and writes its one computed value
    /// in place, from the caches, row by row: on one thread its work items
    /// are then whole rows rather than tiles, for a tile's end costs a
    /// stall (the stores left in flight hold up the next tile's
    /// bookkeeping). On a Zen 3, Rust alone, a + b over 316² float32
    /// against a plain loop over the same memory: 1.3-1.7 µs slower of
    /// about 16.5 in tiles of [`TILE_LONG`], ~0.5 in whole rows. A program
    /// of several values keeps its tiles, each value's pass reading its
    /// loads from the caches nearest the core, where an earlier pass left
    /// them.
    fn one_pass_in_place(&self, prog: &Prog) -> bool {
        self.tiling == Tiling::CachedInPlace && self.stack == 1 && prog.nodes.iter().filter(|n| !matches!(n, Node::Load(_))).count() == 1
    }

    /// The rows of work items: the outer axes' index count, the last outer
    /// axis's counted in stacks of [`Loop::stack`] rows.
    fn item_rows(&self) -> usize {
        let n = self.outer.len();
        self.outer.iter().enumerate().map(|(a, &e)| if a + 1 == n { e.div_ceil(self.stack) } else { e }).product()
    }

    /// The step of operand `op` along the last outer axis, from one row of
    /// a stack to the next; 0 where the loop has no outer axis.
    fn row_step(&self, op: usize) -> isize {
        let n = self.ops.len();
        self.outer.len().checked_sub(1).map_or(0, |a| self.outer_steps[a * n + op])
    }

    /// The row and the tile of work item `item` of a loop of `rows` rows of
    /// `tiles` tiles: rows go in blocks, a block's rows taking each tile in
    /// turn.
    fn row_tile(&self, item: usize, rows: usize, tiles: usize) -> (usize, usize) {
        let per_block = self.block * tiles;
        let b = item / per_block;
        let rows_here = self.block.min(rows - b * self.block);
        let rest = item - b * per_block;
        (b * self.block + rest % rows_here, rest / rows_here)
    }

    /// Finds work item `item`: its first row's index over the outer axes
    /// into `index`, each operand's element index at its first element into
    /// `base`; gives its first index on the innermost axis, the length of
    /// its rows and how many it stacks.
    fn locate(&self, item: usize, rows: usize, tiles: usize, index: &mut [usize], base: &mut [isize]) -> (usize, usize, usize) {
        // No outer axis: one row, whose tiles are the items.
        if self.outer.is_empty() {
            let j0 = item * self.tile;
            for (b, o) in base.iter_mut().zip(self.ops.as_slice()) {
                *b = o.offset + j0 as isize * o.inner;
            }
            return (j0, self.tile.min(self.inner - j0), 1);
        }
        // One tile a row, the rows are the items; one outer axis, the
        // row is its index: a small loop of many rows spares the divisions.
        let (row, tile) = if tiles == 1 { (item, 0) } else { self.row_tile(item, rows, tiles) };
        let last = self.outer.len().wrapping_sub(1);
        if let [i] = index {
            *i = row * self.stack;
        } else {
            let mut rest = row;
            for (a, &n) in self.outer.iter().enumerate().rev() {
                let n = if a == last { n.div_ceil(self.stack) } else { n };
                index[a] = rest % n;
                rest /= n;
            }
            if let Some(i) = index.last_mut() {
                *i *= self.stack;
            }
        }
        let stacked = match index.last() {
            Some(&i) => self.stack.min(self.outer[last] - i),
            None => 1,
        };
        let j0 = tile * self.tile;
        let n_ops = self.ops.len();
        for (op, (b, o)) in base.iter_mut().zip(self.ops.iter()).enumerate() {
            let outer: isize = index.iter().enumerate().map(|(a, &i)| i as isize * self.outer_steps[a * n_ops + op]).sum();
            *b = o.offset + outer + j0 as isize * o.inner;
        }
        (j0, self.tile.min(self.inner - j0), stacked)
    }

    /// Asks the CPU to bring into its caches the elements of a work item
    /// whose operands start at `base` and run `k` rows of `n` elements: the hardware
    /// prefetchers stop at page boundaries, about one tile, and so fall
    /// behind a loop that streams its operands tile by tile. Strided
    /// operands are left to the blocks.
    fn prefetch(&self, base: &[isize], n: usize, k: usize) {
        #[cfg(target_arch = "x86_64")]
        for (op, (o, &b)) in self.ops.iter().zip(base).enumerate() {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // A destination written in place past the caches is not read.
            if o.strided() || (op < self.n_dsts && self.streams_stores() && self.direct.contains(&Some(op))) {
                continue;
            }
            let bits = o.dtype.bits() as isize;
            let p = o.mem.base;
            for q in 0..k as isize {
                let first = b + q * self.row_step(op);
                let last = first + (n as isize - 1) * o.inner;
                let lo = (first.min(last) * bits).div_euclid(8);
                let hi = (first.max(last) * bits).div_euclid(8) + (bits + 7) / 8;
                for at in (lo..hi).step_by(LINE) {
                    // SAFETY: a prefetch is a hint that reads nothing the
                    // program sees and cannot fault; the address is computed
                    // with `wrapping_offset`, which is defined for any offset.
                    unsafe { _mm_prefetch(p.wrapping_offset(at).cast::<i8>(), _MM_HINT_T0) };
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (base, n, k);
    }

    /// Moves operand `op`'s `k` rows of `m` elements, the first at element
    /// index `at`, to or from the first `m * k` values of a work item's
    /// column, row after row, by `mv`: as one run where the rows lie end to
    /// end, as a transposed block where they lie side by side and `mv` can
    /// move one (it gives true), else row by row.
    fn move_rows(&self, op: usize, at: isize, m: usize, k: usize, mut mv: impl FnMut(Move) -> bool) {
        if self.ops[op].joins {
            mv(Move::Run { start: at, n: m * k, from: 0 });
            return;
        }
        let step = self.row_step(op);
        if step == 1 && mv(Move::Block) {
            return;
        }
        for q in 0..k {
            mv(Move::Run { start: at + q as isize * step, n: m, from: q * m });
        }
    }

    /// Runs work items `lo..hi` of a loop of `rows` rows of `tiles` tiles
    /// (see [`Loop::row_tile`]).
    fn run_items(&self, prog: &Prog, lo: usize, hi: usize, rows: usize, tiles: usize) {
        // Columns as long as the longest item: a small loop allocates little.
        // A loop of no column (of no constant, then) takes none.
        let width = self.stack * self.tile.min(self.inner);
        // The tables as slices once, not matched at each entry's reading.
        let (borrowed, direct, ops) = (self.borrowed.as_slice(), self.direct.as_slice(), self.ops.as_slice());
        // A node read and written in place, or a constant (its column
        // made below), needs no column of its own.
        let own = |i: usize| !(borrowed[i] || direct[i].is_some() || matches!(prog.nodes[i], Node::Const(_)));
        let mut cols = if self.columnless { Vec::new() } else { column::take_all(&prog.dtypes, |i| if own(i) { width } else { 0 }) };
        for (i, node) in prog.nodes.iter().enumerate() {
            if let Node::Const(c) = node {
                cols[i] = constant_column(c.dtype, c.lo, c.hi, width);
            }
        }
        let n_ops = self.ops.len();
        let mut base = Table::filled(n_ops, 0isize);
        let mut ahead = Table::filled(n_ops, 0isize);
        let mut index = Table::filled(self.outer.len(), 0usize);
        let mut ahead_index = Table::filled(self.outer.len(), 0usize);
        for item in lo..hi {
            let (j0, m, k) = self.locate(item, rows, tiles, index.as_mut_slice(), base.as_mut_slice());
            let n = m * k;
            if self.prefetches && item + AHEAD < hi {
                let (_, m, k) = self.locate(item + AHEAD, rows, tiles, ahead_index.as_mut_slice(), ahead.as_mut_slice());
                self.prefetch(ahead.as_slice(), m, k);
            }
            let base = base.as_slice();
            for i in 0..prog.nodes.len() {
                // A load read in place has nothing to do: its readers read
                // its run.
                if borrowed[i] {
                    continue;
                }
                // Of a columnless loop, both are empty: its nodes read
                // loads in place and write destinations in place.
                let at = i.min(cols.len());
                let (done, rest) = cols.split_at_mut(at);
                // Node x's values: its load's run read in place, or its column.
                let arg = |x: usize| -> ColRef<'_> {
                    match prog.nodes[x] {
                        Node::Load(l) if borrowed[x] => {
                            let op = self.n_dsts + l;
                            // SAFETY: the run lies in load l's checked layout;
                            // nothing writes it during the item: no
                            // destination written in place reaches a load's
                            // bytes, and the others are written after the
                            // nodes; another thread's destinations hold
                            // other elements, or overlap the load not at
                            // all (the plan reads it from a copy otherwise).
                            unsafe { ops[op].run(base[op], n) }
                        }
                        _ => done[x].as_ref(),
                    }
                };
                let mut out = match direct[i] {
                    // SAFETY: the run lies in destination d's checked layout,
                    // which no load reaches (see `Loop::new`), no other
                    // destination overlaps, and no other thread writes
                    // (threads take distinct items); this column is the
                    // only one made of it.
                    Some(d) => unsafe { ops[d].run_mut(base[d], n) },
                    None => rest[0].as_mut(),
                };
                // A destination's run written in place by a loop that
                // streams from memory is written by non-temporal stores
                // where the kind can (`ops::Store`).
                let store = if direct[i].is_some() && self.streams_stores() { ops::Store::Streamed } else { ops::Store::Cached };
                match prog.nodes[i] {
                    Node::Load(l) => {
                        let op = self.n_dsts + l;
                        let o = ops[op];
                        // The elements lie in load l's layout, checked
                        // against its memory by `View::new`; `out` is of
                        // its dtype's register type, of `width` values.
                        self.move_rows(op, base[op], m, k, |mv| match mv {
                            Move::Run { start, n, from } => {
                                // SAFETY: as above, the run's elements.
                                unsafe { memio::load(o.mem, o.dtype, start, o.inner, n, &mut out.tail(from)) };
                                true
                            }
                            // SAFETY: as above, the item's elements.
                            Move::Block => unsafe { memio::load_transposed(o.mem, o.dtype, base[op], o.inner, m, k, &mut out) },
                        })
                    }
                    Node::Const(_) => {}
                    Node::Coord(a) => {
                        let ColMut::I64(v) = &mut out else { unreachable!("Coord is int64") };
                        if a == self.outer.len() {
                            v[..n].iter_mut().enumerate().for_each(|(t, x)| *x = (j0 + t) as i64);
                        } else {
                            v[..n].fill(index.as_slice()[a] as i64);
                        }
                    }
                    // A kind computes in the register type, so its result
                    // settles into the node's dtype; loads, selections and
                    // casts give values of their dtype already.
                    Node::Unary(k, x) => {
                        ops::unary(k, &arg(x), &mut out, n, store);
                        out.settle(prog.dtypes[i], n);
                    }
                    Node::Binary(k, x, y) => {
                        ops::binary(k, prog.dtypes[x], &arg(x), &arg(y), &mut out, n, store);
                        out.settle(prog.dtypes[i], n);
                    }
                    Node::Where(c, x, y) => ops::select(&arg(c), &arg(x), &arg(y), &mut out, n),
                    Node::Cast(d, x) => cast::cast_stored(prog.dtypes[x], d, &arg(x), &mut out, n, self.tiling.cached(), store),
                }
            }
            for (d, &o) in prog.outputs.iter().enumerate() {
                if direct[o] == Some(d) {
                    continue;
                }
                let (op, col) = (ops[d], cols[o].as_ref());
                // The elements lie in destination d's checked layout; no
                // other thread writes them (threads take distinct items,
                // destinations do not overlap each other or map two indices
                // to one element), and sub-byte writes are atomic.
                self.move_rows(d, base[d], m, k, |mv| match mv {
                    Move::Run { start, n, from } => {
                        // SAFETY: as above, the run's elements.
                        unsafe { memio::store(op.mem, op.dtype, start, op.inner, n, &col.tail(from)) };
                        true
                    }
                    // SAFETY: as above, the item's elements.
                    Move::Block => unsafe { memio::store_transposed(op.mem, op.dtype, base[d], op.inner, m, k, &col) },
                })
            }
        }
        if !self.columnless {
            column::give_back(cols);
        }
        if self.streams_stores() {
            stream::fence();
        }
    }

    /// Whether the kinds that write destinations in place store past the
    /// caches ([`ops::Store::Streamed`]): where the operands stream from
    /// memory, so that a destination's lines are not read before they are
    /// written (a + b over 10M float32, a plain loop on one thread of a
    /// Zen 3, 5.1-5.8 ms so against 3.6-4.5).
    fn streams_stores(&self) -> bool {
        !self.tiling.cached()
    }
}

/// The elements of a row that a work item takes: where items stack
/// `stack` rows of `inner` elements, a whole row where the stack fills a
/// column of at most [`TILE_LONG`], else as much of one as fills a column
/// of [`TILE`] with the stack; else `tile`.
fn item_tile(stack: usize, inner: usize, tile: usize) -> usize {
    match stack {
        1 => tile,
        _ if stack * inner <= TILE_LONG => inner,
        _ => TILE / stack,
    }
}

/// Rows of the last outer axis that a work item of a loop stacks, where its
/// rows are `inner` elements and its last outer axis `last_outer` rows:
/// as many as fill a column of [`TILE`] elements where at least a
/// transposed tile's rows ([`transpose::TILE`]) fit in one, so that each node's fixed cost is paid once a column rather
/// than once a short row (add over transposed 32 x 32 float32 operands so
/// took a third of the instructions; stacks of 3 rows of 316, moved value
/// by value at the edges of transposed tiles, made exp over a transposed
/// 316 x 316 float32 operand a third slower). 1 where the loop has no outer axis,
/// where a Coord node reads the index (its column is made a row at a time),
/// or where the loop's blocks of rows gather a strided operand (`blocked`).
/// Where longer rows have an operand that is `transposable` (strided along
/// them, its rows side by side), a transposed tile's rows, so that items
/// of that many rows (whole, or parts where they are long: `item_tile`)
/// move it by whole tiles rather than value by value: over transposed 316
/// x 316 float32 operands on an AVX-512 Xeon, Rust alone, cast to int32
/// so ran ~41 -> ~27 µs, add ~48 -> ~28, exp ~71 -> ~45 (~53 on the AVX2
/// path).
fn stacked_rows(last_outer: Option<usize>, inner: usize, coords: bool, blocked: bool, transposable: bool) -> usize {
    match last_outer {
        Some(rows) if !coords && !blocked && inner > 0 && transpose::TILE * inner <= TILE => (TILE / inner).min(rows).max(1),
        Some(rows) if !coords && !blocked && transposable => transpose::TILE.min(rows),
        _ => 1,
    }
}

/// For each node of `prog`, the destination (of those `in_place`) that
/// takes its values straight from the kind that computes them: a node
/// computed by a kind (not a load, constant or coordinate), the output of
/// that destination alone, and read by no other node.
fn written_in_place(prog: &Prog, in_place: &[bool]) -> Table<Option<usize>> {
    let mut direct = Table::filled(prog.nodes.len(), None);
    for (k, &o) in prog.outputs.iter().enumerate() {
        let computed = !matches!(prog.nodes[o], Node::Load(_) | Node::Const(_) | Node::Coord(_));
        let once = prog.outputs.iter().filter(|&&p| p == o).count() == 1;
        if in_place[k] && computed && once && !prog.nodes.iter().any(|node| node.reads(o)) {
            direct.as_mut_slice()[o] = Some(k);
        }
    }
    direct
}

/// For each node of `prog`, whether its readers read it in place: a load of
/// an operand in place (`in_place`, by load), which no destination stores
/// from its column.
fn read_in_place(prog: &Prog, in_place: &[bool]) -> Table<bool> {
    Table::from_fn(prog.nodes.len(), |i| match prog.nodes[i] {
        Node::Load(k) => in_place[k] && !prog.outputs.contains(&i),
        _ => false,
    })
}

/// Moves to the innermost place the axis along which the most operand
/// bytes lie next to each other (the last axis where none does better),
/// each operand's weighed by `weight(op)` ([`stride_weight`]): a
/// transposed operand read into a contiguous destination of its dtype,
/// say, is then read along its rows and the destination written along its
/// columns. `steps` holds the `n` operands' steps axis by axis.
fn innermost_by_strides(extents: &mut [usize], steps: &mut [isize], n: usize, weight: impl Fn(usize) -> usize) {
    let Some(last) = extents.len().checked_sub(1) else { return };
    let unit_bytes = |a: usize| -> usize {
        let unit = |op: usize| (steps[a * n + op].unsigned_abs() == 1).then(|| weight(op));
        if extents[a] > 1 { (0..n).filter_map(unit).sum() } else { 0 }
    };
    let best = (0..last).rev().fold(last, |b, a| if unit_bytes(a) > unit_bytes(b) { a } else { b });
    extents[best..].rotate_left(1);
    steps[best * n..].rotate_left(n);
}

/// The weight of an operand of dtype `d` in [`innermost_by_strides`]: its
/// elements' bits, eight times over in a loop whose operands fit the
/// caches (`cached`, see [`streams`]) where a strided run of them moves one
/// element at a time rather than through transposed tiles
/// ([`memio::tiles_transposed`]: narrow floats, bool, sub-byte dtypes).
/// A float32 matrix transposed into float16, read along its rows, wrote
/// its float16 elements one by one, a run's fixed cost each; along the
/// destination's rows, the float32 side moves by tiles. Streamed from
/// memory, the wide side read along its rows and the narrow one written
/// in blocks of rows ([`BLOCK_ROWS`]) ran faster.
fn stride_weight(d: Dtype, cached: bool) -> usize {
    if cached && memio::tiles_transposed(d).is_none() {
        8 * d.bits()
    } else {
        d.bits()
    }
}

/// Merges neighbouring axes that every one of `n` operands steps through as
/// one, after dropping axes of extent 1; `steps` holds the operands' steps
/// axis by axis, as [`Loop::outer_steps`]. Gives the count of axes kept,
/// first in both.
fn merge_axes(extents: &mut [usize], steps: &mut [isize], n: usize) -> usize {
    let mut kept = 0;
    for a in 0..extents.len() {
        let e = extents[a];
        if e == 1 {
            continue;
        }
        let onto_last = kept > 0 && (0..n).all(|op| steps[(kept - 1) * n + op] == steps[a * n + op] * e as isize);
        let to = if onto_last { kept - 1 } else { kept };
        extents[to] = if onto_last { extents[to] * e } else { e };
        // Axis `a` is at or past `to`, so no step is overwritten unread.
        steps.copy_within(a * n..(a + 1) * n, to * n);
        kept = to + 1;
    }
    kept
}

/// A column of `n` copies of a constant given by its memory bits.
fn constant_column(d: Dtype, lo: u64, hi: u64, n: usize) -> Col {
    let words = [lo, hi];
    let memory = Memory { base: words.as_ptr() as *mut u8, bytes: 16 };
    let mut col = Col::new(d, n);
    // SAFETY: element 0 of `d` lies in the 16 bytes of `words`, read only
    // (step 0 reads it n times).
    unsafe { memio::load(memory, d, 0, 0, n, &mut col.as_mut()) };
    col
}

mod padded;
mod streaming;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod bench;
