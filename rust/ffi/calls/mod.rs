//! The fixed cost of a call: decoding a map, reduce or scan call from its
//! boundary words with as little allocation as the plans allow.
//!
//! A call of `Nx_cpu.map`, `reduce` or `scan` passes a program, views, pads
//! and (for a reduction) the call's words as byte strings of little-endian
//! 64-bit words. Here they are decoded into a plan of
//! [`crate::loops::map`] or [`crate::loops::reduce_loop`], every check made
//! as [`crate::ffi::wire`] makes it (the same functions, the same
//! messages), but:
//!
//! - words are read in place where the bytes are aligned for them, as OCaml
//!   strings and bytes are, rather than copied ([`le_words`]);
//! - a program is decoded and checked once per thread and program: the
//!   plans share the checked program ([`prog`]), keyed by its words;
//! - views move into the plan rather than being cloned;
//! - a plan is kept, per thread, with the words it was made from
//!   ([`kept`]): a call of the same words again (each step of a loop, a
//!   fresh result of the same shape) takes it, checks only what depends on
//!   its buffers' memory (each view within its buffer, destinations apart,
//!   which loads a destination overlaps) and runs it, planning nothing.
//!
//! Nothing here knows OCaml, so the decoding is tested and timed with the
//! crate alone (`bench`).

use crate::core::call::Call;
use crate::core::door::Claim;
use crate::core::layout::{Memory, View};
use crate::ffi::wire::{loads, pads, reduction_of, view_buffers, views, words, Reader};
use crate::loops::map;
use crate::loops::prog::Prog;
use crate::loops::reduce_loop;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::thread::LocalKey;

/// Programs each thread keeps decoded: a loop over a few programs (the
/// usual training step) finds each of them here.
const CACHED_PROGS: usize = 32;

/// The bytes past which a program is decoded afresh rather than kept:
/// programs this long are fused loops whose work outweighs their decoding.
const CACHED_PROG_BYTES: usize = 4096;

/// A decoded program and the words it was decoded from.
type Decoded = (Box<[u8]>, Arc<Prog>);

thread_local! {
    /// This thread's decoded programs, most recently used first.
    static PROGS: RefCell<Vec<Decoded>> = const { RefCell::new(Vec::new()) };
}

/// The little-endian 64-bit words of `b`: read in place where `b` is aligned
/// for them on a little-endian machine, else copied ([`words`]). Refuses a
/// partial word as [`words`] does.
pub fn le_words(b: &[u8]) -> Result<Cow<'_, [i64]>, String> {
    if cfg!(target_endian = "little") && b.len().is_multiple_of(8) {
        // SAFETY: every bit pattern of 8 bytes is an i64; `align_to` gives
        // the middle part only at an address aligned for i64, within `b`.
        let (head, mid, tail) = unsafe { b.align_to::<i64>() };
        if head.is_empty() && tail.is_empty() {
            return Ok(Cow::Borrowed(mid));
        }
    }
    words(b).map(Cow::Owned)
}

/// The checked program of the words `b` ([`Prog::decode`]), decoded once per
/// thread and kept while it is among the [`CACHED_PROGS`] most recently
/// used; a refused program is decoded (and refused) again each time.
pub fn prog(b: &[u8]) -> Result<Arc<Prog>, String> {
    let hit = PROGS.with_borrow_mut(|progs| {
        let i = progs.iter().position(|(k, _)| k[..] == *b)?;
        let p = progs[i].1.clone();
        if i > 0 {
            progs[..=i].rotate_right(1);
        }
        Some(p)
    });
    if let Some(p) = hit {
        return Ok(p);
    }
    let p = Arc::new(Prog::decode(&le_words(b)?)?);
    if b.len() <= CACHED_PROG_BYTES {
        PROGS.with_borrow_mut(|progs| {
            progs.truncate(CACHED_PROGS - 1);
            progs.insert(0, (b.into(), p.clone()));
        });
    }
    Ok(p)
}

/// Plans a map call from its words: the program, the views (destinations
/// first), the loads' pads and the number of destinations, the views over
/// `mems`; a plan of the same words kept from an earlier call where there
/// is one ([`kept`]).
pub fn plan_map(prog_b: &[u8], view_b: &[u8], pad_b: &[u8], n_dsts: i64, mems: &[Memory]) -> Result<Box<Kept<map::Plan>>, String> {
    let n_b = n_dsts.to_le_bytes();
    kept([prog_b, view_b, pad_b, &n_b], mems, || {
        let (view_w, pad_w) = (le_words(view_b), le_words(pad_b));
        let p = prog(prog_b)?;
        let view_w = view_w?;
        let mut all = views(&view_w, mems)?;
        let n_dsts = usize::try_from(n_dsts).ok().filter(|&n| n <= all.len()).ok_or("a destination count past the views")?;
        let pads = pads(&pad_w?)?;
        let operands = all.split_off(n_dsts);
        Ok((map::plan_loads(p, all, loads(operands, pads)?)?, view_buffers(&view_w)))
    })
}

/// Whether a reduction call's words describe a scan: whole words, the
/// first 1.
pub fn is_scan(call_b: &[u8]) -> bool {
    call_b.len() >= 8 && call_b.len().is_multiple_of(8) && call_b[..8] == 1i64.to_le_bytes()
}

/// Plans a reduce or scan call from its words: the program, the views
/// (destinations, then a scan's carry if any, then the loads), the loads'
/// pads and the call's words, the views over `mems`. The call's words: 0,
/// the loop's rank and shape, the axes' count and axes, the reductions'
/// count and (code, output) each, for a reduce; 1, the rank and shape, the
/// axis, a code and an output, whether a carry is given (0 or 1), for a
/// scan.
///
/// A plan of the same words kept from an earlier call is taken where there
/// is one ([`kept`]).
pub fn plan_reduction(
    prog_b: &[u8],
    view_b: &[u8],
    pad_b: &[u8],
    call_b: &[u8],
    mems: &[Memory],
) -> Result<Box<Kept<reduce_loop::Plan>>, String> {
    kept([prog_b, view_b, pad_b, call_b], mems, || {
        let view_w = le_words(view_b)?;
        let plan = reduction_from_words(prog_b, &view_w, pad_b, call_b, mems)?;
        Ok((plan, view_buffers(&view_w)))
    })
}

/// [`plan_reduction`]'s plan made afresh.
fn reduction_from_words(
    prog_b: &[u8],
    view_w: &[i64],
    pad_b: &[u8],
    call_b: &[u8],
    mems: &[Memory],
) -> Result<reduce_loop::Plan, String> {
    let (pad_w, call_w) = (le_words(pad_b), le_words(call_b));
    let p = prog(prog_b)?;
    let call_w = call_w?;
    let mut r = Reader::new(&call_w, "reduction");
    let scan = r.count("kind")? == 1;
    let rank = r.count("rank")?;
    let shape = r.counts(rank, "extent")?;
    let pads = pads(&pad_w?)?;
    let mut all: Vec<View> = views(view_w, mems)?;
    if scan {
        let axis = r.count("axis")?;
        let red = reduction_of(r.word()?)?;
        let k = r.count("output")?;
        let with_carry = r.count("carry")? == 1;
        r.finish()?;
        let (n_dsts, n_carry) = (red.outputs(), with_carry as usize);
        if all.len() < n_dsts + n_carry {
            return Err(format!("{} arrays for a {red:?} scan's destinations and carry", all.len()));
        }
        let operands = all.split_off(n_dsts + n_carry);
        let carry = if with_carry { all.pop() } else { None };
        reduce_loop::plan_scan(p, shape, axis, (red, k), carry, all, loads(operands, pads)?)
    } else {
        let axes = {
            let n = r.count("axis count")?;
            r.counts(n, "axis")?
        };
        let n = r.count("reduction count")?;
        let mut rs = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            let red = reduction_of(r.word()?)?;
            rs.push((red, r.count("output")?));
        }
        r.finish()?;
        let n_dsts: usize = rs.iter().map(|(red, _)| red.outputs()).sum();
        if all.len() < n_dsts {
            return Err(format!("{} arrays for reductions that write {n_dsts}", all.len()));
        }
        let operands = all.split_off(n_dsts);
        reduce_loop::plan_reduce(p, shape, axes, rs, all, loads(operands, pads)?)
    }
}

/// Plans each thread keeps, most recently used first.
const KEPT_PLANS: usize = 32;

/// A plan that a call of the same words again may take: `rebind` puts its
/// views over that call's memory (view `i` over `mems(i)`, destinations
/// first, as the words list them), checking what planning checked of
/// memory; `run_kept` runs it, keeping what the next run may take again.
pub trait Keepable: Call + Sized + 'static {
    /// This thread's kept plans of this kind.
    fn shelf() -> &'static LocalKey<Shelf<Self>>;
    /// As the plan's own `rebind`.
    fn rebind(&mut self, mems: impl Fn(usize) -> Memory) -> Result<(), String>;
    /// As the plan's own `run_kept`.
    fn run_kept(&mut self) -> Result<(), String>;
}

/// A thread's kept plans of one kind, boxed so that a plan taken from the
/// shelf or put back moves as a pointer, not as its whole struct; a deque,
/// so that taking the first and putting it back first moves none of the
/// others.
pub type Shelf<P> = RefCell<VecDeque<Box<Kept<P>>>>;

thread_local! {
    static MAPS: Shelf<map::Plan> = const { RefCell::new(VecDeque::new()) };
    static REDUCTIONS: Shelf<reduce_loop::Plan> = const { RefCell::new(VecDeque::new()) };
}

/// A plan type's [`Keepable`], by its own `rebind` and `run_kept`, on `shelf`.
macro_rules! keepable {
    ($plan:ty, $shelf:ident) => {
        impl Keepable for $plan {
            fn shelf() -> &'static LocalKey<Shelf<Self>> {
                &$shelf
            }
            fn rebind(&mut self, mems: impl Fn(usize) -> Memory) -> Result<(), String> {
                <$plan>::rebind(self, mems)
            }
            fn run_kept(&mut self) -> Result<(), String> {
                <$plan>::run_kept(self)
            }
        }
    };
}

keepable!(map::Plan, MAPS);
keepable!(reduce_loop::Plan, REDUCTIONS);

/// A checked plan with the words it was made from and the buffer each of
/// its views names. Between calls its views' memory is that of the last
/// call, never read before a [`Keepable::rebind`] to the next call's. Boxed,
/// so that the shelf moves pointers only.
pub struct Kept<P> {
    words: [Box<[u8]>; 4],
    buffers: Box<[usize]>,
    plan: P,
}

/// Whether two byte strings are equal; empty ones (whose pointer may dangle)
/// compared without `memcmp` (see [`crate::core::layout::same_dims`]).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

/// The plan of a call of `words` over `mems`: this thread's kept plan of the
/// same words, put over `mems` (refused as planning refuses), or `fresh`'s
/// plan and the buffer each of its views names.
pub fn kept<P: Keepable>(
    words: [&[u8]; 4],
    mems: &[Memory],
    fresh: impl FnOnce() -> Result<(P, Vec<usize>), String>,
) -> Result<Box<Kept<P>>, String> {
    let found = P::shelf().with_borrow_mut(|shelf| {
        // By index: the deque's own iterator, over its two slices, cost
        // more than the moves it spares.
        let i = (0..shelf.len()).find(|&i| shelf[i].words.iter().zip(words).all(|(a, b)| same_bytes(a, b)))?;
        shelf.remove(i)
    });
    match found {
        Some(mut k) => {
            if let Some((i, b)) = k.buffers.iter().enumerate().find(|&(_, &b)| b >= mems.len()) {
                return Err(format!("operand {i} names buffer {b}"));
            }
            let buffers = &k.buffers;
            k.plan.rebind(|i| mems[buffers[i]])?;
            Ok(k)
        }
        None => {
            let (plan, buffers) = fresh()?;
            Ok(Box::new(Kept { words: words.map(Box::from), buffers: buffers.into(), plan }))
        }
    }
}

impl<P: Keepable> Call for Box<Kept<P>> {
    fn claims(&self) -> Vec<Claim> {
        self.plan.claims()
    }
    fn with_claims<R>(&self, f: impl FnOnce(&[Claim]) -> R) -> R {
        self.plan.with_claims(f)
    }
    fn work(&self) -> usize {
        self.plan.work()
    }
    fn declined(&self) -> Option<String> {
        self.plan.declined()
    }
    /// Runs the plan, then keeps it on this thread's shelf, first.
    fn run(mut self) -> Result<(), String> {
        let r = self.plan.run_kept();
        P::shelf().with_borrow_mut(|shelf| {
            shelf.truncate(KEPT_PLANS - 1);
            shelf.push_front(self);
        });
        r
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod bench;
