//! `unique`: the rows of an [n; w] array of 64-bit words (int64 or uint64,
//! read as unsigned words) numbered from 0 in order of their first rows,
//! two rows one key iff their words are equal (a w of 0 makes every row one
//! key): each row's number into `ids`, each key's first row and count into
//! `first` and `counts` (n and 0 past the keys), the keys' count into the
//! 0-d `count`.
//!
//! A row equal to the previous row takes its number without a probe. Keys
//! of at most 4 words whose columns' spans multiply to at most 2^20 values,
//! and to at most twice a block's rows and 1024 more, find their number at
//! their place among those values in a direct table of 4 bytes a value,
//! from one more read of the keys that finds the spans; others in a hash
//! table of linear probing (`keys`, `hash`). On several threads each
//! numbers a block of consecutive rows, writing its own numbers into
//! `ids`; the blocks' keys then merge in order of the blocks into one
//! table, so that each key takes its number in order of first rows, and a
//! last pass maps each row's number in its block to its key's. Where a
//! sample of the rows says the keys are many (a quarter of the rows or
//! more, which the merge would take as long to number again), each thread
//! instead numbers the rows whose hash falls in its share, in order of
//! rows, and the first rows, counted along the rows, number the keys; the
//! sample's guess of the keys sizes the tables from the start (on one
//! thread too). No number depends on the threads or on the hash's seed.

pub mod hash;
pub mod keys;

use crate::core::call::Call;
use crate::core::door::Claim;
use crate::core::dtype::Dtype;
use crate::core::layout::View;
use crate::core::pool;
use hash::Secrets;
use keys::{Any, Fixed, Hot, Keys, Width};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A thread's result: set by that thread, taken once the threads are done.
type Slot<T> = std::sync::Mutex<Option<T>>;

/// A share's merge table: its keys and, for each, the block and the place
/// in it of the key's first row.
type Table<W> = (Keys<W>, Vec<(usize, usize)>);

/// Rows from which `unique` declines: 2^40 - 1.
pub const MOST_ROWS: usize = (1 << 40) - 1;

/// Values a direct table holds at most.
const DIRECT_VALUES: u64 = 1 << 20;

/// Rows whose keys are found (their hashes computed, and slots
/// prefetched, first) before they are counted, at a time.
const AHEAD: usize = 32;

/// Rows whose spans are read before they are checked against a direct
/// table's limit.
const SPAN_ROWS: usize = 1 << 12;

/// Rows sampled to tell whether the keys are many, and about how many
/// ([`Plan::many_keys`]).
const SAMPLE: usize = 1 << 12;

/// Rows a thread's block takes at least: below twice this, the blocks'
/// merge and last pass would cost more than a second thread saves where
/// the keys are many.
const BLOCK: usize = 1 << 17;

/// A checked numbering, ready to run once its claims are held.
pub struct Plan {
    keys: View,
    ids: View,
    first: View,
    counts: View,
    count: View,
    secrets: Secrets,
}

/// Checks a numbering of `keys` ([n; w], int64 or uint64) into `ids` ([n]),
/// `first` and `counts` (each [m]) and `count` (0-d), all int64, none
/// mapping two indices to one element, overlapping another or the keys.
pub fn plan(ids: View, first: View, counts: View, count: View, keys: View) -> Result<Plan, String> {
    let kl = &keys.layout;
    if !matches!(kl.dtype, Dtype::Int64 | Dtype::Uint64) {
        return Err(format!("keys are {}, not int64 or uint64", kl.dtype.name()));
    }
    if kl.shape.len() != 2 {
        return Err(format!("keys have shape {:?}, not [n; w]", kl.shape));
    }
    let dsts = [("ids", &ids), ("first", &first), ("counts", &counts), ("count", &count)];
    for (name, d) in dsts {
        if d.layout.dtype != Dtype::Int64 {
            return Err(format!("{name} is {}, not int64", d.layout.dtype.name()));
        }
    }
    if ids.layout.shape != [kl.shape[0]] {
        return Err(format!("ids have shape {:?} for keys of {} rows", ids.layout.shape, kl.shape[0]));
    }
    if first.layout.shape.len() != 1 || first.layout.shape != counts.layout.shape {
        return Err(format!("first has shape {:?} and counts {:?}, not one [m]", first.layout.shape, counts.layout.shape));
    }
    if !count.layout.shape.is_empty() {
        return Err(format!("count has shape {:?}, not 0-d", count.layout.shape));
    }
    for (i, (name, d)) in dsts.iter().enumerate() {
        if crate::loops::map::self_overlaps(&d.layout) {
            return Err(format!("{name} maps several indices to one element"));
        }
        if d.overlaps(&keys) {
            return Err(format!("{name} overlaps the keys"));
        }
        if let Some((other, _)) = dsts[..i].iter().find(|(_, e)| e.overlaps(d)) {
            return Err(format!("{other} and {name} overlap"));
        }
    }
    Ok(Plan { keys, ids, first, counts, count, secrets: Secrets::process() })
}

impl Plan {
    /// The same plan with the hash keyed by `seed`, for the tests that
    /// check that no number depends on it.
    #[cfg(test)]
    pub fn with_seed(self, seed: u64) -> Plan {
        Plan { secrets: Secrets::of_seed(seed), ..self }
    }

    fn rows(&self) -> usize {
        self.keys.layout.shape[0]
    }

    fn width(&self) -> usize {
        self.keys.layout.shape[1]
    }

    /// The direct table for blocks of `rows` rows, where the keys take one:
    /// found from the columns' spans, over `blocks` threads, each of which
    /// stops reading once its rows' spans are too wide.
    fn direct<W: Width>(&self, w: W, rows: usize, blocks: usize) -> Option<Direct> {
        let n = self.rows();
        if w.get() > 4 || n == 0 {
            return None;
        }
        let per = n.div_ceil(blocks);
        let limit = DIRECT_VALUES.min(2 * rows as u64 + 1024);
        let keys = Words::of(&self.keys);
        let spans: Vec<Slot<[(u64, u64); 4]>> = (0..blocks).map(|_| Default::default()).collect();
        pool::run_parts(blocks, |b| {
            let mut s = [(u64::MAX, 0u64); 4];
            let r = b * per..((b + 1) * per).min(n);
            for at in r.clone().step_by(SPAN_ROWS) {
                for i in at..(at + SPAN_ROWS).min(r.end) {
                    for (j, s) in s[..w.get()].iter_mut().enumerate() {
                        // SAFETY: i < n, j < w.
                        let x = unsafe { keys.get(i, j) };
                        *s = (s.0.min(x), s.1.max(x));
                    }
                }
                if values(&s[..w.get()], limit).is_none() {
                    return;
                }
            }
            *spans[b].lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
        });
        let mut s = [(u64::MAX, 0u64); 4];
        for b in spans {
            for (s, t) in s.iter_mut().zip(b.into_inner().unwrap_or_else(|e| e.into_inner())?) {
                *s = (s.0.min(t.0), s.1.max(t.1));
            }
        }
        let s = &s[..w.get()];
        let (mults, values) = values(s, limit)?;
        Some(Direct { mults, lows: s.iter().map(|&(lo, _)| lo).collect(), values: values as usize })
    }

    /// Numbers the rows `range` as a block, writing each row's number in the
    /// block into ids, by the direct table `direct` where given, else by
    /// hash ([`Plan::hash_block`]), in a table with room from the start
    /// for `room` keys where that is some; gives the block's keys. A row
    /// equal to the previous row takes its number without a probe.
    fn number_block<W: Width>(&self, w: W, range: std::ops::Range<usize>, direct: Option<&Direct>, room: Option<usize>) -> Keys<W> {
        let mut keys = match room {
            Some(r) if direct.is_none() => Keys::with_room(w, r),
            _ => Keys::new(w, direct.is_none()),
        };
        // Keys in rows side by side and ids one after the other, the
        // common layout, take a compilation of their own.
        match (Words::packed(&self.keys, w), Words::packed(&self.ids, Fixed::<1>)) {
            (Some(rows), Some(ids)) => self.number_in(w, range, direct, &mut keys, rows, ids),
            _ => self.number_in(w, range, direct, &mut keys, Words::of(&self.keys), Words::of(&self.ids)),
        }
        keys
    }

    /// [`Plan::number_block`] into `keys`, of the keys' and the ids' views
    /// `rows` and `ids`.
    fn number_in<W: Width, R: Steps, I: Steps>(&self, w: W, range: std::ops::Range<usize>, direct: Option<&Direct>, keys: &mut Keys<W>, rows: Words<R>, ids: Words<I>) {
        let Some(d) = direct else {
            return self.hash_block(w, range, Hot::new(keys), rows, ids);
        };
        let mut table: Vec<u32> = vec![0; d.values];
        let (mut prev, mut found) = (0, [0u64; AHEAD]);
        for at in range.clone().step_by(AHEAD) {
            let end = (at + AHEAD).min(range.end);
            for (i, f) in (at..end).zip(&mut found) {
                // SAFETY: i < n and j < w.
                let word = |j: usize| unsafe { rows.get(i, j) };
                // SAFETY: i > range.start, so row i - 1 < n.
                let id = if i > range.start && unsafe { rows.repeats(w, i) } {
                    prev
                } else {
                    // Words outside the spans (changed since they were read
                    // by a writer outside the call) fall outside the table,
                    // which its bounds check refuses.
                    let place = (0..w.get()).fold(0u64, |a, j| a.wrapping_add(word(j).wrapping_sub(d.lows[j]).wrapping_mul(d.mults[j])));
                    let slot = &mut table[place as usize];
                    if *slot == 0 {
                        keys.add(self.secrets.hash((0..w.get()).map(word)), word, i as u64);
                        *slot = keys.len() as u32;
                    }
                    (*slot - 1) as u64
                };
                // SAFETY: i < n, the extent of ids; blocks write their own rows.
                unsafe { ids.set(i, id) };
                (prev, *f) = (id, id);
            }
            keys.count(&found[..end - at]);
        }
    }

    /// [`Plan::number_block`] by hash, through `hot`, of the keys' and the
    /// ids' views `rows` and `ids`: hashes rows AHEAD at a time (the
    /// hashes of a batch computed side by side) and, where the table is
    /// longer than the second-level cache, prefetches their slots first,
    /// so that its misses overlap; a row's words are compared with the
    /// previous row's only where their hashes are equal.
    // Compiled apart from the direct table's loop: in one function, each
    // loop lost 10 to 30% to the other (on a Zen 3).
    #[inline(never)]
    fn hash_block<W: Width, R: Steps, I: Steps>(&self, w: W, range: std::ops::Range<usize>, mut hot: Hot<W>, rows: Words<R>, ids: Words<I>) {
        // SAFETY: a < n and j < w.
        let hash = |a: usize| self.secrets.hash((0..w.get()).map(|j| unsafe { rows.get(a, j) }));
        // The previous row's number and hash; no row's hash before the
        // first row.
        let (mut prev, mut last) = (0, if range.is_empty() { 0 } else { !hash(range.start) });
        let (mut hashes, mut found) = ([0u64; AHEAD], [0u64; AHEAD]);
        for at in range.clone().step_by(AHEAD) {
            let end = (at + AHEAD).min(range.end);
            for (a, h) in (at..end).zip(&mut hashes) {
                *h = hash(a);
                hot.prefetch(*h);
            }
            for ((i, &h), f) in (at..end).zip(&hashes).zip(&mut found) {
                // SAFETY: i < n and j < w.
                let word = |j: usize| unsafe { rows.get(i, j) };
                // SAFETY: h is the previous row's hash, so i > range.start
                // and row i - 1 < n.
                let id = if h == last && unsafe { rows.repeats(w, i) } { prev } else { hot.find_or_add(h, word, i as u64) };
                // SAFETY: i < n, the extent of ids; blocks write their own rows.
                unsafe { ids.set(i, id) };
                (prev, last, *f) = (id, h, id);
            }
            hot.count(&found[..end - at]);
        }
    }

    /// About how many keys there are, from [`SAMPLE`] rows spread evenly,
    /// where they look as many as a quarter of the rows or more (else
    /// None): among s sampled rows of K keys drawn at random, about
    /// s^2 / 2K pairs repeat a key, so K is about s^2 / 2 r from r
    /// repeats, and n where none repeats.
    fn many_keys<W: Width>(&self, w: W) -> Option<usize> {
        let n = self.rows();
        let s = SAMPLE.min(n);
        let rows = Words::of(&self.keys);
        let mut keys = Keys::with_room(w, s);
        for j in 0..s {
            let i = j * n / s;
            // SAFETY: i < n and j < w.
            let word = |c: usize| unsafe { rows.get(i, c) };
            keys.find_or_add(self.secrets.hash((0..w.get()).map(word)), word, i as u64);
        }
        let repeats = (s - keys.len()) as u128;
        let guess = if repeats == 0 { n } else { ((s as u128).pow(2) / (2 * repeats)).min(n as u128) as usize };
        (4 * guess > n).then_some(guess)
    }

    /// Numbers every row of w words into ids over `k` threads where the
    /// keys are many: each block of `per` rows hashes its rows and lists
    /// them by share of their hash's high bits; each thread then numbers
    /// the rows of its share, block after block, in a table of its own
    /// (each key's first row among all rows, its count, and each row's
    /// number in the share, marked at the first row of its key, into
    /// ids); the first rows, counted along the rows, give each key its
    /// number in order of first rows, which a last pass writes over each
    /// row's. Gives each key's first row and count, in that order.
    /// Each share's table has room from the start for its share of the
    /// `guess` of the keys.
    fn number_shared<W: Width>(&self, w: W, k: usize, per: usize, guess: usize) -> (Vec<u64>, Vec<u64>) {
        let n = self.rows();
        let range = |b: usize| b * per..((b + 1) * per).min(n);
        let share = |h: u64| (((h >> 32) * k as u64) >> 32) as usize;
        let (rows, ids) = (Words::of(&self.keys), Words::of(&self.ids));
        // Each block's (hash, row) pairs of each share, in order of rows.
        let lists: Vec<Vec<Vec<(u64, u64)>>> = crate::moves::walk::map_parts(k, |b| {
            let mut l: Vec<Vec<(u64, u64)>> = (0..k).map(|_| Vec::with_capacity(per / k + per / (4 * k) + 16)).collect();
            for i in range(b) {
                // SAFETY: i < n and j < w.
                let h = self.secrets.hash((0..w.get()).map(|j| unsafe { rows.get(i, j) }));
                l[share(h)].push((h, i as u64));
            }
            l
        });
        // Each share's keys; a key's first row marked NEW in ids, with its
        // number in the share; key g of share p is tag g k + p.
        let tables: Vec<Keys<W>> = crate::moves::walk::map_parts(k, |p| {
            let mut keys = Keys::with_room(w, guess / k + guess / (4 * k) + 16);
            for l in &lists {
                let l = &l[p];
                for (e, &(h, i)) in l.iter().enumerate() {
                    if let Some(&(ahead, _)) = l.get(e + AHEAD) {
                        keys.prefetch(ahead);
                    }
                    let i = i as usize;
                    let before = keys.len();
                    // SAFETY: i < n and j < w.
                    let g = keys.find_or_add(h, |j| unsafe { rows.get(i, j) }, i as u64);
                    keys.counts[g as usize] += 1;
                    let new = if keys.len() > before { NEW } else { 0 };
                    // SAFETY: i < n, the extent of ids; each row lies in one
                    // share, which this thread alone numbers.
                    unsafe { ids.set(i, new | (g * k as u64 + p as u64)) };
                }
            }
            keys
        });
        drop(lists);
        // The keys first met in each range of rows, then each tag's number.
        let before: Vec<u64> = {
            let news = crate::moves::walk::map_parts(k, |b| {
                // SAFETY: i < n, the extent of ids, which no thread writes now.
                range(b).filter(|&i| unsafe { ids.get(i, 0) } & NEW != 0).count() as u64
            });
            news.iter().scan(0, |at, &c| {
                let b = *at;
                *at += c;
                Some(b)
            }).collect()
        };
        let most = tables.iter().map(|t| t.len()).max().unwrap_or(0);
        let numbers: Vec<AtomicU64> = (0..most * k).map(|_| AtomicU64::new(0)).collect();
        pool::run_parts(k, |b| {
            let mut next = before[b];
            for i in range(b) {
                // SAFETY: i < n, the extent of ids, which no thread writes now.
                let v = unsafe { ids.get(i, 0) };
                if v & NEW != 0 {
                    numbers[(v & !NEW) as usize].store(next, Relaxed);
                    next += 1;
                }
            }
        });
        pool::run_parts(k, |b| {
            for i in range(b) {
                // SAFETY: i < n, the extent of ids; each range is written by
                // its own thread alone.
                unsafe { ids.set(i, numbers[(ids.get(i, 0) & !NEW) as usize].load(Relaxed)) };
            }
        });
        let total: usize = tables.iter().map(|t| t.len()).sum();
        let (first, counts): (Vec<AtomicU64>, Vec<AtomicU64>) = (0..total).map(|_| (AtomicU64::new(0), AtomicU64::new(0))).unzip();
        pool::run_parts(k, |p| {
            let t = &tables[p];
            for g in 0..t.len() {
                let at = numbers[g * k + p].load(Relaxed) as usize;
                first[at].store(t.first[g], Relaxed);
                counts[at].store(t.counts[g], Relaxed);
            }
        });
        let take = |v: Vec<AtomicU64>| v.into_iter().map(AtomicU64::into_inner).collect();
        (take(first), take(counts))
    }

    /// Numbers every row of w words into ids, over `blocks` blocks of `per`
    /// rows; gives each key's first row and count, in order of first rows.
    fn number<W: Width>(&self, w: W, blocks: usize, per: usize) -> (Vec<u64>, Vec<u64>) {
        let n = self.rows();
        let range = |b: usize| b * per..((b + 1) * per).min(n);
        let direct = self.direct(w, per, blocks);
        // Many keys on one thread take a table of room for them from the
        // start, rather than one grown (and its keys placed again) a dozen
        // times; a short call asks nothing of a sample.
        let many = if direct.is_none() && n > BLOCK { self.many_keys(w) } else { None };
        if let (Some(guess), true) = (many, blocks > 1) {
            return self.number_shared(w, blocks, per, guess);
        }
        let slots: Vec<std::sync::Mutex<Option<Keys<W>>>> = (0..blocks).map(|_| Default::default()).collect();
        pool::run_parts(blocks, |b| {
            *slots[b].lock().unwrap_or_else(|e| e.into_inner()) = Some(self.number_block(w, range(b), direct.as_ref(), many))
        });
        let parts: Vec<Keys<W>> = (slots.into_iter())
            .map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every block numbered"))
            .collect();
        if blocks == 1 {
            let k = parts.into_iter().next().expect("one block");
            return (k.first, k.counts);
        }
        let numbers = merge(&parts, w);
        // The first block's keys keep their numbers (they come first, in
        // order of their first rows): the rows after it are mapped, shared
        // evenly among the threads.
        let ids = Words::of(&self.ids);
        let share = (n - per).div_ceil(blocks);
        pool::run_parts(blocks, |t| {
            let mine = per + t * share..(per + (t + 1) * share).min(n);
            for b in 1..blocks {
                let map = &numbers.of[b];
                let r = range(b);
                for i in r.start.max(mine.start)..r.end.min(mine.end) {
                    // SAFETY: i < n, the extent of ids, which this thread
                    // alone writes; it holds the row's number in block b.
                    unsafe { ids.set(i, map[ids.get(i, 0) as usize].load(Relaxed)) };
                }
            }
        });
        (numbers.first, numbers.counts)
    }
}

/// Each column's multiplier in a direct table of the spans `s` (each
/// column's least and greatest word) and the values it holds, their
/// product, where that is at most `limit`.
fn values(s: &[(u64, u64)], limit: u64) -> Option<(Vec<u64>, u64)> {
    let mut mults = Vec::with_capacity(s.len());
    let mut values = 1u64;
    for &(lo, hi) in s {
        mults.push(values);
        values = values.checked_mul(hi.wrapping_sub(lo).checked_add(1)?).filter(|&v| v <= limit)?;
    }
    Some((mults, values))
}

/// The blocks' keys merged: each block key's number among all keys, and
/// each key's first row and count, in order of first rows.
struct Merged {
    of: Vec<Vec<AtomicU64>>,
    first: Vec<u64>,
    counts: Vec<u64>,
}

/// A block key's entry in a merge table: set where the key first appears
/// in its block, among the blocks in order.
const NEW: u64 = 1 << 63;

/// Merges the blocks' keys of w words, `parts[b]` block b's in order of
/// their first rows, over as many threads: thread p merges, block after
/// block, the keys whose hash's high bits fall in its share into a table
/// of its own, with room from the start for a share of every block's
/// keys; a key new there is new among all keys, and numbered by its rank
/// among the new keys (its first row's rank among the first rows): the
/// new keys of the earlier blocks, then those of its own block before it.
fn merge<W: Width>(parts: &[Keys<W>], w: W) -> Merged {
    let (blocks, shares) = (parts.len(), parts.len());
    let total: usize = parts.iter().map(|k| k.len()).sum();
    let share = |h: u64| (((h >> 32) * shares as u64) >> 32) as usize;
    // Each block key's table (its share) and place in it, NEW where it is
    // its key's first, then its number.
    let of: Vec<Vec<AtomicU64>> = parts.iter().map(|k| (0..k.len()).map(|_| AtomicU64::new(0)).collect()).collect();
    let tables: Vec<Slot<Table<W>>> = (0..shares).map(|_| Default::default()).collect();
    pool::run_parts(shares, |p| {
        let mut table = Keys::with_room(w, total / shares + total / (4 * shares) + 1024);
        // Each of the table's keys' block and place in it.
        let mut origin = Vec::new();
        for (b, k) in parts.iter().enumerate() {
            // By index: the loop also reads the hash AHEAD keys on.
            #[allow(clippy::needless_range_loop)]
            for id in 0..k.len() {
                if let Some(&ahead) = k.hashes.get(id + AHEAD) {
                    if share(ahead) == p {
                        table.prefetch(ahead);
                    }
                }
                let h = k.hashes[id];
                if share(h) != p {
                    continue;
                }
                let before = table.len();
                let g = table.find_or_add(h, |j| k.key(id)[j], k.first[id]);
                table.counts[g as usize] += k.counts[id];
                let new = if table.len() > before {
                    origin.push((b, id));
                    NEW
                } else {
                    0
                };
                of[b][id].store(new | g, Relaxed);
            }
        }
        *tables[p].lock().unwrap_or_else(|e| e.into_inner()) = Some((table, origin));
    });
    let tables: Vec<Table<W>> = (tables.into_iter())
        .map(|t| t.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every share merged"))
        .collect();
    // The new keys of the blocks before each block.
    let news: Vec<u64> = {
        let counts: Vec<AtomicU64> = (0..blocks).map(|_| AtomicU64::new(0)).collect();
        pool::run_parts(blocks, |b| counts[b].store(of[b].iter().filter(|e| e.load(Relaxed) & NEW != 0).count() as u64, Relaxed));
        let mut at = 0;
        (counts.iter())
            .map(|c| {
                let before = at;
                at += c.load(Relaxed);
                before
            })
            .collect()
    };
    // The new keys numbered by rank, then each table key's first entry's
    // number given to every entry of its key; its first row and count set
    // at its number.
    pool::run_parts(blocks, |b| {
        let mut next = news[b];
        for e in &of[b] {
            if e.load(Relaxed) & NEW != 0 {
                e.store(NEW | next, Relaxed);
                next += 1;
            }
        }
    });
    let number = |(b, id): (usize, usize)| of[b][id].load(Relaxed) & !NEW;
    let first: Vec<AtomicU64> = (0..total).map(|_| AtomicU64::new(0)).collect();
    let counts: Vec<AtomicU64> = (0..total).map(|_| AtomicU64::new(0)).collect();
    pool::run_parts(shares, |p| {
        let (table, origin) = &tables[p];
        for (g, &o) in origin.iter().enumerate() {
            let k = number(o) as usize;
            first[k].store(table.first[g], Relaxed);
            counts[k].store(table.counts[g], Relaxed);
        }
    });
    pool::run_parts(blocks, |b| {
        let k = &parts[b];
        for (id, e) in of[b].iter().enumerate() {
            let v = e.load(Relaxed);
            if v & NEW == 0 {
                e.store(number(tables[share(k.hashes[id])].1[v as usize]), Relaxed);
            }
        }
    });
    // The new entries' flags off: every entry holds its key's number.
    pool::run_parts(blocks, |b| of[b].iter().for_each(|e| e.store(e.load(Relaxed) & !NEW, Relaxed)));
    let k: usize = tables.iter().map(|t| t.1.len()).sum();
    let take = |v: Vec<AtomicU64>| v.into_iter().take(k).map(AtomicU64::into_inner).collect();
    Merged { of, first: take(first), counts: take(counts) }
}

/// A direct table's layout: each column's multiplier and least word, and
/// the values it holds (the spans' product).
struct Direct {
    mults: Vec<u64>,
    lows: Vec<u64>,
    values: usize,
}

/// How a [`Words`] view steps between its elements: the offset, in
/// elements, of element (i, j) from its first.
trait Steps: Copy {
    /// The offset of element (i, j).
    fn offset(self, i: usize, j: usize) -> isize;
}

/// Steps of any layout, in elements along each of two axes (0 past the
/// view's rank).
#[derive(Clone, Copy)]
struct Strided([isize; 2]);

impl Steps for Strided {
    #[inline(always)]
    fn offset(self, i: usize, j: usize) -> isize {
        i as isize * self.0[0] + j as isize * self.0[1]
    }
}

/// Rows of `W` words side by side, each row's words next to each other:
/// the layout of most calls, whose offsets need no multiply by a step
/// read from memory.
#[derive(Clone, Copy)]
struct Packed<W>(W);

impl<W: Width> Steps for Packed<W> {
    #[inline(always)]
    fn offset(self, i: usize, j: usize) -> isize {
        (i * self.0.get() + j) as isize
    }
}

/// A checked view of 64-bit elements of at most two axes, read and
/// written in place: its first element's address and its steps.
#[derive(Clone, Copy)]
struct Words<S = Strided> {
    at: usize,
    steps: S,
}

impl Words {
    fn of(v: &View) -> Words {
        let l = &v.layout;
        let step = |a: usize| l.strides.get(a).copied().unwrap_or(0);
        Words { at: v.memory.base as usize + 8 * l.offset, steps: Strided([step(0), step(1)]) }
    }

    /// The view `v`, of rows of `w` words (its last extent, or 1 for a
    /// 1-d view), stepped as rows side by side where its elements lie one
    /// after the other in C order.
    fn packed<W: Width>(v: &View, w: W) -> Option<Words<Packed<W>>> {
        let l = &v.layout;
        crate::moves::walk::dense(&l.shape, &l.strides).then(|| Words { at: Words::of(v).at, steps: Packed(w) })
    }
}

impl<S: Steps> Words<S> {
    /// The address of element (i, j).
    #[inline(always)]
    fn place(self, i: usize, j: usize) -> *mut u64 {
        (self.at as *mut u64).wrapping_offset(self.steps.offset(i, j))
    }

    /// Element (i, j): (0, 0) of a 0-d view, (i, 0) of a 1-d one.
    ///
    /// # Safety
    /// (i, j) is an index of the view, and no other thread writes it.
    #[inline(always)]
    unsafe fn get(self, i: usize, j: usize) -> u64 {
        // SAFETY: the element lies in the view's memory (caller), a
        // checked view.
        unsafe { self.place(i, j).read_unaligned() }
    }

    /// Whether row `i`'s `w` words are row i - 1's.
    ///
    /// # Safety
    /// 0 < i < the view's rows, w <= its columns, and no other thread
    /// writes them.
    #[inline(always)]
    unsafe fn repeats<W: Width>(self, w: W, i: usize) -> bool {
        // SAFETY: rows i and i - 1 and their w words lie in the view
        // (caller).
        (0..w.get()).all(|j| unsafe { self.get(i, j) == self.get(i - 1, j) })
    }

    /// Writes element `i` (0 of a 0-d view).
    ///
    /// # Safety
    /// i is an index of the 1-d (or 0 of the 0-d) view, and no other
    /// thread reads or writes it.
    #[inline(always)]
    unsafe fn set(self, i: usize, v: u64) {
        // SAFETY: as in get.
        unsafe { self.place(i, 0).write_unaligned(v) }
    }
}

impl Call for Plan {
    fn claims(&self) -> Vec<Claim> {
        let range = |v: &View, write| v.byte_range().map(|(lo, hi)| Claim { lo, hi, write });
        let dsts = [&self.ids, &self.first, &self.counts, &self.count].into_iter().filter_map(|v| range(v, true));
        range(&self.keys, false).into_iter().chain(dsts).collect()
    }

    fn declined(&self) -> Option<String> {
        let n = self.rows();
        (n >= MOST_ROWS).then(|| format!("nx.cpu unique: keys of {n} rows, 2^40 - 1 or more, which it declines"))
    }

    fn work(&self) -> usize {
        let m = self.first.layout.shape[0];
        self.rows().saturating_mul(8 * 3 * self.width() + 24).saturating_add(16 * m)
    }

    fn run(self) -> Result<(), String> {
        let (n, w) = (self.rows(), self.width());
        let threads = pool::threads();
        let blocks = if threads > 1 { (n / BLOCK).clamp(1, threads) } else { 1 };
        let per = n.div_ceil(blocks);
        let (first, counts): (Vec<u64>, Vec<u64>) = if w == 0 {
            let ids = Words::of(&self.ids);
            // SAFETY: i < n, the extent of ids.
            (0..n).for_each(|i| unsafe { ids.set(i, 0) });
            if n == 0 { (vec![], vec![]) } else { (vec![0], vec![n as u64]) }
        } else {
            match w {
                1 => self.number(Fixed::<1>, blocks, per),
                2 => self.number(Fixed::<2>, blocks, per),
                3 => self.number(Fixed::<3>, blocks, per),
                4 => self.number(Fixed::<4>, blocks, per),
                _ => self.number(Any(w), blocks, per),
            }
        };
        let k = first.len();
        let (fw, cw) = (Words::of(&self.first), Words::of(&self.counts));
        for g in 0..self.first.layout.shape[0] {
            // SAFETY: g < m, the extent of first and counts.
            unsafe {
                fw.set(g, if g < k { first[g] } else { n as u64 });
                cw.set(g, if g < k { counts[g] } else { 0 });
            }
        }
        // SAFETY: count is 0-d: element 0 is its one.
        unsafe { Words::of(&self.count).set(0, k as u64) };
        Ok(())
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod bench;
