//! One block's lane order: 16 lanes by number modulo 16, each starting from
//! its first term, then the lanes' tree (i + 8, i + 4, i + 2, 1).

use super::LANES;

/// What the lanes do with terms: how a lane starts from its first term and
/// how two partial results combine, `combine(a, b)` taking `a` as the
/// earlier terms'. Every [`Monoid`](super::monoid::Monoid) is one.
pub(crate) trait Lane<T> {
    /// A lane's value after its first term.
    fn start(x: T) -> T;
    /// The partial result of `a`'s terms then `b`'s.
    fn combine(a: T, b: T) -> T;
}

/// The lane-order result of one block of 1 to [`BLOCK`](super::BLOCK) terms.
#[inline]
pub(crate) fn block<T: Copy, M: Lane<T>>(terms: &[T]) -> T {
    let n = terms.len();
    debug_assert!((1..=super::BLOCK).contains(&n));
    if n >= LANES {
        let mut acc: [T; LANES] = core::array::from_fn(|l| M::start(terms[l]));
        let full = n - n % LANES;
        rows::<T, M>(&mut acc, &terms[LANES..full]);
        for (a, &x) in acc.iter_mut().zip(&terms[full..]) {
            *a = M::combine(*a, x);
        }
        fold16::<T, M>(&mut acc, LANES)
    } else {
        // Lanes from `n` on hold a placeholder and take no part.
        let mut acc: [T; LANES] = core::array::from_fn(|l| M::start(terms[l.min(n - 1)]));
        fold16::<T, M>(&mut acc, n)
    }
}

/// [`block`]'s result for the `n` terms `data[0], data[2], ..,
/// data[2 (n - 1)]`: every other element of a run, without a copy. Each row
/// of 16 terms is read as the 32 elements it spans, combined element by
/// element into 32 accumulators of which the even ones are the lanes (the
/// odd ones take the elements between the terms and are dropped): the loop
/// of a run, rather than a gather or a copy and a second pass. A row whose
/// 32 elements run past `data` (which may end at the last term) is taken
/// term by term. Measured on Zen 3, a sum of every other float32 of 10M
/// (`reduce::tests::bench`) ran 2.2 to 2.7 ms through a copy, 1.4 to 1.6
/// without, about a plain read of the 40 MB.
#[inline]
pub(crate) fn block_every_other<T: Copy, M: Lane<T>>(data: &[T], n: usize) -> T {
    debug_assert!((1..=super::BLOCK).contains(&n) && data.len() > 2 * (n - 1));
    if n < LANES {
        let terms: [T; LANES] = core::array::from_fn(|l| data[2 * l.min(n - 1)]);
        return block::<T, M>(&terms[..n]);
    }
    let (rows, _) = data.as_chunks::<{ 2 * LANES }>();
    let whole = (n / LANES).min(rows.len());
    let (mut acc, next): ([T; LANES], usize) = match rows[..whole].split_first() {
        Some((first, rest)) => {
            let mut pairs: [T; 2 * LANES] = core::array::from_fn(|j| M::start(first[j]));
            pair_rows::<T, M>(&mut pairs, rest);
            (core::array::from_fn(|l| pairs[2 * l]), whole * LANES)
        }
        None => (core::array::from_fn(|l| M::start(data[2 * l])), LANES),
    };
    for t in next..n {
        acc[t % LANES] = M::combine(acc[t % LANES], data[2 * t]);
    }
    fold16::<T, M>(&mut acc, LANES)
}

/// Rows of 32 elements into 32 accumulators, element by element: the
/// lanes of [`block_every_other`] and the elements between their terms;
/// out of line for the vectoriser, as [`rows`].
#[inline(never)]
fn pair_rows<T: Copy, M: Lane<T>>(acc: &mut [T; 2 * LANES], rows: &[[T; 2 * LANES]]) {
    let mut a = *acc;
    for row in rows {
        for j in 0..2 * LANES {
            a[j] = M::combine(a[j], row[j]);
        }
    }
    *acc = a;
}

/// The lanes' tree of one output, lanes `present..` holding no term: its
/// result. With every lane present, the steps combine whole halves, which
/// stay in registers: measured, float32 sums of blocks in the L1 cache run
/// 1.7 times as fast as through [`fold_lanes`].
#[inline(always)]
pub(crate) fn fold16<T: Copy, M: Lane<T>>(acc: &mut [T; LANES], present: usize) -> T {
    if present == LANES {
        for step in [8, 4, 2, 1] {
            for i in 0..step {
                acc[i] = M::combine(acc[i], acc[i + step]);
            }
        }
    } else {
        fold_lanes::<T, M>(acc, 1, present);
    }
    acc[0]
}

/// Whole rows of 16 terms into the 16 lanes, lane `l` taking term `l` of
/// each row in turn; out of line, so that the vectoriser sees the lanes
/// alone: inlined into a block, they stay scalar.
#[inline(never)]
fn rows<T: Copy, M: Lane<T>>(acc: &mut [T; LANES], terms: &[T]) {
    let mut a = *acc;
    for row in terms.chunks_exact(LANES) {
        let row: &[T; LANES] = row.try_into().unwrap();
        for l in 0..LANES {
            a[l] = M::combine(a[l], row[l]);
        }
    }
    *acc = a;
}

/// The lanes' tree for `w` outputs side by side, lane `l` at
/// `acc[l * w..][..w]`, lanes `present..` holding no term: lane `i` takes
/// lane `i + 8` for `i < 8`, then `i + 4`, `i + 2`, then lane 0 takes lane 1.
/// Leaves the results in `acc[..w]`.
#[inline]
pub(crate) fn fold_lanes<T: Copy, M: Lane<T>>(acc: &mut [T], w: usize, present: usize) {
    let mut present = present;
    for step in [8, 4, 2, 1] {
        for i in 0..step {
            if i + step < present {
                let (lo, hi) = acc.split_at_mut((i + step) * w);
                for (a, &b) in lo[i * w..][..w].iter_mut().zip(&hi[..w]) {
                    *a = M::combine(*a, b);
                }
            }
        }
        present = present.min(step);
    }
}
