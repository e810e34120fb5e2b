//! The hash keys are numbered by: each word folded in by wyhash's mix, the
//! high and low halves of a 128-bit product xored, keyed by secrets made
//! from a seed drawn once a process from the system's random source, so
//! that keys chosen in advance cannot share their hashes. Numbers never
//! depend on the seed: only the probes' lengths do.

use std::hash::BuildHasher;
use std::sync::OnceLock;

/// wyhash's mix of two words: their 128-bit product's halves xored.
#[inline(always)]
pub fn mix(a: u64, b: u64) -> u64 {
    let r = a as u128 * b as u128;
    (r >> 64) as u64 ^ r as u64
}

/// The secrets a hash is keyed by.
#[derive(Clone, Copy, Debug)]
pub struct Secrets([u64; 4]);

impl Secrets {
    /// The secrets of a seed, as the `wyhash` crate makes them.
    pub fn of_seed(seed: u64) -> Secrets {
        Secrets(wyhash::final3::make_secret(seed))
    }

    /// The process's secrets, from a seed drawn from the system's random
    /// source on first use (the standard library's `RandomState` keys,
    /// which it draws from the system).
    pub fn process() -> Secrets {
        static SEED: OnceLock<Secrets> = OnceLock::new();
        *SEED.get_or_init(|| Secrets::of_seed(std::collections::hash_map::RandomState::new().hash_one(0x6e78_u64)))
    }

    /// The hash of a key's words.
    #[inline(always)]
    pub fn hash(&self, words: impl Iterator<Item = u64>) -> u64 {
        let s = &self.0;
        let mut h = s[0];
        for w in words {
            h = mix(w ^ s[1], h ^ s[2]);
        }
        mix(h ^ s[3], s[1])
    }
}
