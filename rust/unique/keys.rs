//! The keys a numbering has met, in order of their first rows, and the
//! hash table of linear probing that finds a key's number from its words.

use crate::sort::scratch::Scratch;

/// Keys of `w` words each, numbered from 0 as they were added: their
/// words, hashes, first rows and counts, and a table of slots (0 for an
/// empty one, else a key's number plus one) of 1024 slots or 2 to 4 times
/// the keys, probed from a hash's low bits (a long table on huge pages,
/// where the system has them: its probes land at random).
pub struct Keys {
    w: usize,
    pub words: Vec<u64>,
    pub hashes: Vec<u64>,
    pub first: Vec<u64>,
    pub counts: Vec<u64>,
    slots: Scratch<u64>,
}

impl Keys {
    /// No keys of `w` words, with a table of 1024 slots, or none where
    /// `table` is false (keys numbered by a direct table instead).
    pub fn new(w: usize, table: bool) -> Keys {
        let slots = Scratch::zeroed(if table { 1024 } else { 0 });
        Keys { w, words: Vec::new(), hashes: Vec::new(), first: Vec::new(), counts: Vec::new(), slots }
    }

    /// No keys of `w` words, with room for `keys` of them: a table of
    /// 1024 slots or 2 to 4 times them, and their words, hashes, first
    /// rows and counts reserved.
    pub fn with_room(w: usize, keys: usize) -> Keys {
        let slots = Scratch::zeroed((2 * keys).next_power_of_two().max(1024));
        let v = || Vec::with_capacity(keys);
        Keys { w, words: Vec::with_capacity(w * keys), hashes: v(), first: v(), counts: v(), slots }
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
    pub fn key(&self, id: usize) -> &[u64] {
        &self.words[id * self.w..(id + 1) * self.w]
    }

    /// Adds a key of hash `h` whose words `word(j)` gives, first met at row
    /// `first`, with no rows counted; gives its number. The table is not
    /// changed.
    pub fn add(&mut self, h: u64, word: impl Fn(usize) -> u64, first: u64) -> u64 {
        self.words.extend((0..self.w).map(word));
        self.hashes.push(h);
        self.first.push(first);
        self.counts.push(0);
        (self.len() - 1) as u64
    }

    /// Asks the processor to fetch the slot a probe for hash `h` starts at.
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let p = self.slots.as_ptr().wrapping_add(h as usize & (self.slots.len().max(1) - 1));
            // SAFETY: a prefetch never faults nor changes memory, whatever
            // its address; SSE is part of x86-64's baseline.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// The number of the key of hash `h` whose words `word(j)` gives, added
    /// (first met at row `first`) where the table lacks it.
    #[inline]
    pub fn find_or_add(&mut self, h: u64, word: impl Fn(usize) -> u64, first: u64) -> u64 {
        let mask = self.slots.len() - 1;
        let mut p = h as usize & mask;
        loop {
            let s = self.slots[p];
            if s == 0 {
                break;
            }
            let id = (s - 1) as usize;
            if self.hashes[id] == h && self.key(id).iter().enumerate().all(|(j, &x)| x == word(j)) {
                return id as u64;
            }
            p = (p + 1) & mask;
        }
        let id = self.add(h, word, first);
        self.slots[p] = id + 1;
        if 2 * self.len() > self.slots.len() {
            self.grow();
        }
        id
    }

    /// Rebuilds the table at twice the keys rounded up to a power of 2, 2
    /// to 4 times them (grown once they pass half its slots, it doubles).
    fn grow(&mut self) {
        let size = (2 * self.len()).next_power_of_two();
        let mask = size - 1;
        self.slots = Scratch::zeroed(size);
        for (id, &h) in self.hashes.iter().enumerate() {
            if let Some(&ahead) = self.hashes.get(id + 16) {
                self.prefetch(ahead);
            }
            let mut p = h as usize & mask;
            while self.slots[p] != 0 {
                p = (p + 1) & mask;
            }
            self.slots[p] = id as u64 + 1;
        }
    }
}
