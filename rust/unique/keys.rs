//! The keys a numbering has met, in order of their first rows, and the
//! hash table of linear probing that finds a key's number from its words.
//!
//! A slot is a word: 0 where empty, else a mark bit, the high bits of its
//! key's hash (a tag) and the key's number in the low 40 bits. A probe
//! first compares the tags of the [`WINDOW`] slots from its hash's home in
//! one vector operation, and checks the words of the key of the first
//! slot whose tag matches: a key met before is found there but where its
//! run from its home is longer, or another key's tag matches first, and a
//! probe slot by slot from the home then finds it or its empty slot.

use crate::sort::scratch::Scratch;

/// Slots whose tags a probe compares at once (one load of 32 bytes).
const WINDOW: usize = 4;

/// The bit that marks a slot full.
const MARK: u64 = 1 << 63;

/// The bits of a slot that hold its key's number (keys are fewer than
/// 2^40, as rows are).
const ID: u64 = (1 << 40) - 1;

/// The number of words a key holds: known to the compiler ([`Fixed`]) or
/// not ([`Any`]), so that the loops over a key's words of the common
/// widths unroll.
pub trait Width: Copy + Send + Sync {
    /// The number of words.
    fn get(self) -> usize;
}

/// Keys of `W` words.
#[derive(Clone, Copy)]
pub struct Fixed<const W: usize>;

impl<const W: usize> Width for Fixed<W> {
    #[inline(always)]
    fn get(self) -> usize {
        W
    }
}

/// Keys of a number of words known when the call runs.
#[derive(Clone, Copy)]
pub struct Any(pub usize);

impl Width for Any {
    #[inline(always)]
    fn get(self) -> usize {
        self.0
    }
}

/// Keys of `w` words each, numbered from 0 as they were added: their
/// words, hashes, first rows and counts, and a table of slots of 1024
/// slots or 2 to 4 times the keys, probed from a hash's low bits, and
/// followed by copies of its first `WINDOW - 1` slots, so that a window
/// from any home lies in it (a long table on huge pages, where the system
/// has them: its probes land at random).
pub struct Keys<W: Width> {
    w: W,
    pub words: Vec<u64>,
    pub hashes: Vec<u64>,
    pub first: Vec<u64>,
    pub counts: Vec<u64>,
    slots: Scratch<u64>,
    /// The table's slots less one (a power of two less one), 0 where it
    /// has none.
    mask: usize,
    /// Whether probes fetch their slots ahead ([`far`]).
    far: bool,
}

/// Whether a table of `mask` + 1 slots is too long for the second-level
/// cache, so that a probe's slots are worth fetching ahead of it. A
/// shorter table stays in the caches, where fetching ahead only slows
/// the probes (on a Zen 3, 1000 keys of 10M rows took 75 ms without,
/// 110 with; a million keys took 73 ms with, 119 without).
fn far(mask: usize) -> bool {
    (mask + 1) * std::mem::size_of::<u64>() > crate::core::caches::sizes().l2
}

/// A table of `size` slots (a power of two) and their copies.
fn table(size: usize) -> Scratch<u64> {
    Scratch::zeroed(size + WINDOW - 1)
}

impl<W: Width> Keys<W> {
    /// No keys of `w` words, with a table of 1024 slots, or none where
    /// `table` is false (keys numbered by a direct table instead).
    pub fn new(w: W, with_table: bool) -> Keys<W> {
        let (slots, mask) = if with_table { (table(1024), 1023) } else { (Scratch::zeroed(0), 0) };
        Keys { w, words: Vec::new(), hashes: Vec::new(), first: Vec::new(), counts: Vec::new(), slots, mask, far: far(mask) }
    }

    /// No keys of `w` words, with room for `keys` of them: a table of
    /// 1024 slots or 2 to 4 times them, and their words, hashes, first
    /// rows and counts reserved.
    pub fn with_room(w: W, keys: usize) -> Keys<W> {
        let size = (2 * keys).next_power_of_two().max(1024);
        let v = || Vec::with_capacity(keys);
        let (slots, mask) = (table(size), size - 1);
        Keys { w, words: Vec::with_capacity(w.get() * keys), hashes: v(), first: v(), counts: v(), slots, mask, far: far(mask) }
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.first.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }

    /// Key `id`'s words.
    #[inline(always)]
    pub fn key(&self, id: usize) -> &[u64] {
        let w = self.w.get();
        &self.words[id * w..(id + 1) * w]
    }

    /// Adds a key of hash `h` whose words `word(j)` gives, first met at row
    /// `first`, with no rows counted; gives its number. The table is not
    /// changed.
    pub fn add(&mut self, h: u64, word: impl Fn(usize) -> u64, first: u64) -> u64 {
        self.words.extend((0..self.w.get()).map(word));
        self.hashes.push(h);
        self.first.push(first);
        self.counts.push(0);
        (self.len() - 1) as u64
    }

    /// Counts one more row of each key of `ids`, numbered before. The
    /// numberings count a batch of rows once their keys are found: a row
    /// counted as its key was found made the finds after it wait, now and
    /// then, on the store of the count of the same key a row or two
    /// before (on a Zen 3, 10M rows of 100 keys: ~65 -> ~47 ms).
    #[inline(always)]
    pub fn count(&mut self, ids: &[u64]) {
        let counts = &mut self.counts[..];
        for &id in ids {
            counts[id as usize] += 1;
        }
    }

    /// Asks the processor to fetch the slots a probe for hash `h` starts
    /// at, where the table is [`far`].
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        if self.far {
            prefetch(self.slots.as_ptr(), self.mask, h)
        }
    }

    /// Whether key `id`'s words are those `word(j)` gives.
    #[inline(always)]
    fn holds(&self, id: usize, word: impl Fn(usize) -> u64) -> bool {
        self.key(id).iter().enumerate().all(|(j, &x)| x == word(j))
    }

    /// The key of the first slot of the window from `p` whose tag and mark
    /// are `want`, where its words are those `word(j)` gives.
    #[inline(always)]
    fn look(&self, p: usize, want: u64, word: impl Fn(usize) -> u64) -> Option<u64> {
        assert!(p + WINDOW <= self.slots.len(), "a window lies in the table");
        // SAFETY: the window lies in the table (checked above), and every
        // full slot holds the number of one of the keys.
        unsafe { look(self.w, self.slots.as_ptr(), self.words.as_ptr(), p, want, word) }
    }

    /// The number of the key of hash `h` whose words `word(j)` gives, added
    /// (first met at row `first`) where the table lacks it.
    #[inline(always)]
    pub fn find_or_add(&mut self, h: u64, word: impl Fn(usize) -> u64 + Copy, first: u64) -> u64 {
        let p = h as usize & self.mask;
        let want = MARK | (h & !ID);
        match self.look(p, want, word) {
            Some(id) => id,
            None => self.probe(p, want, h, word, first),
        }
    }

    /// [`Keys::find_or_add`] slot by slot from the home `p`.
    #[inline]
    fn probe(&mut self, mut p: usize, want: u64, h: u64, word: impl Fn(usize) -> u64 + Copy, first: u64) -> u64 {
        loop {
            let s = self.slots[p];
            if s == 0 {
                break;
            }
            if s & !ID == want && self.holds((s & ID) as usize, word) {
                return s & ID;
            }
            p = (p + 1) & self.mask;
        }
        let id = self.add(h, word, first);
        self.put(p, want | id);
        if 2 * self.len() > self.mask + 1 {
            self.grow();
        }
        id
    }

    /// Sets slot `p` to `s`, and its copy past the table where it has one.
    #[inline(always)]
    fn put(&mut self, p: usize, s: u64) {
        self.slots[p] = s;
        if p < WINDOW - 1 {
            self.slots[self.mask + 1 + p] = s;
        }
    }

    /// Rebuilds the table at twice the keys rounded up to a power of 2, 2
    /// to 4 times them (grown once they pass half its slots, it doubles).
    fn grow(&mut self) {
        let size = (2 * self.len()).next_power_of_two();
        (self.mask, self.far) = (size - 1, far(size - 1));
        self.slots = table(size);
        for id in 0..self.len() {
            if let Some(&ahead) = self.hashes.get(id + 16) {
                self.prefetch(ahead);
            }
            let h = self.hashes[id];
            let mut p = h as usize & self.mask;
            while self.slots[p] != 0 {
                p = (p + 1) & self.mask;
            }
            self.put(p, MARK | (h & !ID) | id as u64);
        }
    }
}

/// Asks the processor to fetch the slots of the table at `slots` (of
/// `mask` + 1 slots) a probe for hash `h` starts at.
#[inline(always)]
fn prefetch(slots: *const u64, mask: usize, h: u64) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = slots.wrapping_add(h as usize & mask);
        // SAFETY: a prefetch never faults nor changes memory, whatever its
        // address; SSE is part of x86-64's baseline.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slots, mask, h);
}

/// The key of the first slot of the window from `p` of the table at
/// `slots` whose tag and mark are `want`, where its words (among the keys'
/// words at `words`) are those `word(j)` gives.
///
/// # Safety
/// The window's [`WINDOW`] slots lie in the table, each of whose full
/// slots holds the number of a key whose `w` words lie at `words`.
#[inline(always)]
unsafe fn look<W: Width>(w: W, slots: *const u64, words: *const u64, p: usize, want: u64, word: impl Fn(usize) -> u64) -> Option<u64> {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    let hits = {
        use std::arch::x86_64::*;
        // SAFETY: the window lies in the table (caller); AVX2 is compiled
        // in (the cfg).
        unsafe {
            let v = _mm256_loadu_si256(slots.add(p) as *const __m256i);
            let tags = _mm256_and_si256(v, _mm256_set1_epi64x(!ID as i64));
            _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(tags, _mm256_set1_epi64x(want as i64)))) as u32
        }
    };
    // SAFETY: slot p lies in the table (caller).
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    let hits = (unsafe { *slots.add(p) } & !ID == want) as u32;
    if hits == 0 {
        return None;
    }
    // SAFETY: the slot lies in the window, in the table; it is full (its
    // mark matched), so it holds a key's number, whose words lie at words
    // (caller).
    unsafe {
        let id = *slots.add(p + hits.trailing_zeros() as usize) & ID;
        let key = words.add(id as usize * w.get());
        (0..w.get()).all(|j| *key.add(j) == word(j)).then_some(id)
    }
}

/// A numbering's hot path through a table of [`Keys`]: finds or adds each
/// row's key, and counts the rows, from the addresses of the table and
/// the keys' words held apart from the keys (where the compiler keeps them
/// in registers), taken again whenever a key is added.
pub struct Hot<'a, W: Width> {
    keys: &'a mut Keys<W>,
    slots: *const u64,
    words: *const u64,
    mask: usize,
    far: bool,
}

impl<'a, W: Width> Hot<'a, W> {
    /// The hot path through `keys`, which have a table.
    pub fn new(keys: &'a mut Keys<W>) -> Hot<'a, W> {
        assert!(keys.slots.len() == keys.mask + WINDOW, "the keys have a table");
        let (slots, words, mask, far) = (keys.slots.as_ptr(), keys.words.as_ptr(), keys.mask, keys.far);
        Hot { keys, slots, words, mask, far }
    }

    /// [`Keys::prefetch`].
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        if self.far {
            prefetch(self.slots, self.mask, h)
        }
    }

    /// [`Keys::find_or_add`].
    #[inline(always)]
    pub fn find_or_add(&mut self, h: u64, word: impl Fn(usize) -> u64 + Copy, first: u64) -> u64 {
        let p = h as usize & self.mask;
        let want = MARK | (h & !ID);
        // SAFETY: the addresses are the keys' since the last key was added
        // (new, and below); p <= mask, and the table holds mask + WINDOW
        // slots (new, grow), every full one a key's number.
        if let Some(id) = unsafe { look(self.keys.w, self.slots, self.words, p, want, word) } {
            return id;
        }
        let id = self.keys.probe(p, want, h, word, first);
        let k = &mut *self.keys;
        (self.slots, self.words, self.far, self.mask) = (k.slots.as_ptr(), k.words.as_ptr(), k.far, k.mask);
        id
    }

    /// [`Keys::count`].
    #[inline(always)]
    pub fn count(&mut self, ids: &[u64]) {
        self.keys.count(ids)
    }
}
