//! The odd/even network, run one term at a time (see the module doc of
//! [`reduce`](super) for the order it fixes).

/// A dyadic block's state, and the fold of every block up to it.
#[derive(Clone, Copy, Debug)]
struct Entry<S> {
    level: u32,
    block: S,
    fold: S,
}

/// The network's state after some terms: their dyadic blocks, largest
/// first, as a binary counter holds them.
#[derive(Clone, Debug)]
pub(crate) struct Network<S> {
    stack: Vec<Entry<S>>,
}

impl<S: Copy> Network<S> {
    /// The network before any term.
    pub(crate) fn new() -> Self {
        Network { stack: Vec::new() }
    }

    /// Takes the next term's state and gives the result's: the left fold of
    /// the dyadic blocks of the terms so far, each block the combination of
    /// its halves.
    #[inline]
    pub(crate) fn push(&mut self, x: S, combine: impl Fn(S, S) -> S) -> S {
        let mut block = x;
        let mut level = 0;
        while let Some(top) = self.stack.last() {
            if top.level != level {
                break;
            }
            block = combine(top.block, block);
            self.stack.pop();
            level += 1;
        }
        let fold = match self.stack.last() {
            Some(below) => combine(below.fold, block),
            None => block,
        };
        self.stack.push(Entry { level, block, fold });
        fold
    }
}

/// The depth of result `i` (`i + 1` terms): the most combinations a term's
/// state passes on its way there, ⌊log₂ (i + 1)⌋ + popcount (i + 1) - 1.
pub fn result_depth(i: usize) -> u32 {
    let j = i + 1;
    j.ilog2() + j.count_ones() - 1
}

/// The network's depth D over a slice of `n` terms: the greatest
/// [`result_depth`] of its results, at most 2 ⌊log₂ n⌋ (0 for n ≤ 1).
pub fn network_depth(n: usize) -> u32 {
    if n <= 1 {
        return 0;
    }
    // The most ones of a count up to x.
    fn most_ones(x: usize) -> u32 {
        if x == 0 {
            return 0;
        }
        let top = x.ilog2();
        top.max(1 + most_ones(x - (1 << top)))
    }
    let k = n.ilog2();
    (2 * k - 2).max(k - 1 + 1 + most_ones(n - (1 << k)))
}
