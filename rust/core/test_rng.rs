//! The tests' pseudo-random numbers: two small generators, the same
//! sequence at every run, that each test's own `Rng` shapes into the values
//! it needs.

/// Xorshift (shifts 13, 7, 17): advances the state `s` (never 0) and gives
/// its new value.
pub fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// SplitMix64: advances the state `s` (any value) by the golden-ratio step
/// and gives the mixed value.
pub fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
