//! Lane order written straight from the spec's words, slow and plain:
//! "blocks of 1024 consecutive numbers and, within a block, 16 lanes by
//! number modulo 16, each lane adding its terms in increasing number from
//! +0, or multiplying them from its first. Lane i takes lane i + 8 for i
//! below 8, then lane i + 4 for i below 4, then i + 2 for i below 2, then
//! lane 0 takes lane 1, a lane holding no term taking no part. The blocks are
//! combined by a binary tree whose left part holds the largest power of two
//! of blocks below their count, each part combined the same way."

/// How a lane begins: adding from a zero, or from its first term.
#[derive(Clone, Copy)]
pub enum From<T> {
    Zero(T),
    First,
}

/// The lane-order result of `terms`, `None` for no term.
pub fn lane_order<T: Copy>(terms: &[T], from: From<T>, op: &dyn Fn(T, T) -> T) -> Option<T> {
    let mut blocks = Vec::new();
    for (b, block) in terms.chunks(1024).enumerate() {
        let mut lanes: Vec<Vec<T>> = vec![Vec::new(); 16];
        for (j, &t) in block.iter().enumerate() {
            let number = b * 1024 + j;
            lanes[number % 16].push(t);
        }
        let mut value: Vec<Option<T>> = lanes
            .iter()
            .map(|lane| match (from, lane.first()) {
                (_, None) => None,
                (From::Zero(z), Some(_)) => Some(lane.iter().fold(z, |a, &t| op(a, t))),
                (From::First, Some(&f)) => Some(lane[1..].iter().fold(f, |a, &t| op(a, t))),
            })
            .collect();
        for step in [8, 4, 2, 1] {
            for i in 0..step {
                value[i] = match (value[i], value[i + step]) {
                    (Some(a), Some(b)) => Some(op(a, b)),
                    (a, None) => a,
                    (None, Some(_)) => unreachable!("lanes fill in order"),
                };
            }
        }
        blocks.push(value[0].unwrap());
    }
    fn tree<T: Copy>(b: &[T], op: &dyn Fn(T, T) -> T) -> T {
        if b.len() == 1 {
            return b[0];
        }
        let mut left = 1;
        while left * 2 < b.len() {
            left *= 2;
        }
        op(tree(&b[..left], op), tree(&b[left..], op))
    }
    (!blocks.is_empty()).then(|| tree(&blocks, op))
}

/// Left to right, as a naive loop adds.
pub fn naive<T: Copy>(terms: &[T], zero: T, op: &dyn Fn(T, T) -> T) -> T {
    terms.iter().fold(zero, |a, &t| op(a, t))
}

/// Max or Min from the definition: a NaN where a term is one, else the
/// greatest (least) in the order where -0 < +0.
pub fn extreme<T: crate::reduce::Ordered>(terms: &[T], max: bool) -> Option<T> {
    let mut best: Option<T> = None;
    for &t in terms {
        if t.nan() {
            return Some(t);
        }
        best = Some(match best {
            Some(b) if (max && !T::above(t, b)) || (!max && !T::above(b, t)) => b,
            _ => t,
        });
    }
    best
}
