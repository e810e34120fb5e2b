//! `unique` against a slow reference (a map from each key's words to its
//! first row), on adversarial keys, layouts, two seeds and 1 and 3 threads.

use super::*;
use crate::core::layout::{Layout, Memory};
use crate::core::test_rng::splitmix;
use std::collections::HashMap;

/// The reference: each row's number, each key's first row and count.
fn reference(rows: &[Vec<u64>]) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let mut seen: HashMap<&[u64], u64> = HashMap::new();
    let (mut ids, mut first, mut counts) = (vec![], vec![], vec![]);
    for (i, r) in rows.iter().enumerate() {
        let id = *seen.entry(&r[..]).or_insert_with(|| {
            first.push(i as u64);
            counts.push(0);
            first.len() as u64 - 1
        });
        counts[id as usize] += 1;
        ids.push(id);
    }
    (ids, first, counts)
}

/// An int64 buffer of `n` words of 0x5a bytes, and its memory.
fn buf(n: usize) -> Vec<u64> {
    vec![0x5a5a_5a5a_5a5a_5a5a; n.max(1)]
}

fn mem(b: &mut [u64]) -> Memory {
    Memory { base: b.as_mut_ptr() as *mut u8, bytes: b.len() * 8 }
}

/// Numbers `rows` (n rows of w words), laid out transposed where
/// `transpose`, with rows reversed where `flip`, into `m` entries of first
/// and counts, under `seed` and `threads`; checks against the reference
/// and gives every destination's words.
fn case(rows: &[Vec<u64>], w: usize, m: usize, transpose: bool, flip: bool, seed: u64, threads: usize) -> Vec<u64> {
    let n = rows.len();
    let mut kb = buf(n * w + 2);
    let (mut s0, mut s1) = if transpose { (1isize, n as isize) } else { (w as isize, 1isize) };
    let mut offset = 2usize;
    if flip && n > 0 {
        offset += (n - 1) * s0 as usize;
        s0 = -s0;
    }
    if w == 0 {
        (s0, s1) = (0, 0);
    }
    let kl = Layout { dtype: Dtype::Uint64, shape: vec![n, w], strides: vec![s0, s1], offset };
    for (i, r) in rows.iter().enumerate() {
        for (j, &x) in r.iter().enumerate() {
            kb[(offset as isize + i as isize * s0 + j as isize * s1) as usize] = x;
        }
    }
    let (mut ib, mut fb, mut cb, mut nb) = (buf(2 * n), buf(m), buf(m), buf(1));
    let keys = View::new(kl, mem(&mut kb)).unwrap();
    // ids one after the other beside keys in rows side by side (the layout
    // that takes its own compilation), else every other word, backwards.
    let (is, io) = if transpose { (-2isize, 2 * n.max(1) - 2) } else { (1, 0) };
    let il = Layout { dtype: Dtype::Int64, shape: vec![n], strides: vec![is], offset: io };
    let ids = View::new(il, mem(&mut ib)).unwrap();
    let first = View::new(Layout::contiguous(Dtype::Int64, &[m]), mem(&mut fb)).unwrap();
    let counts = View::new(Layout::contiguous(Dtype::Int64, &[m]), mem(&mut cb)).unwrap();
    let count = View::new(Layout::contiguous(Dtype::Int64, &[]), mem(&mut nb)).unwrap();
    pool::set_threads(threads).unwrap();
    plan(ids, first, counts, count, keys).unwrap().with_seed(seed).run().unwrap();
    let (want_ids, want_first, want_counts) = reference(rows);
    let k = want_first.len();
    let at = |i: usize| (io as isize + i as isize * is) as usize;
    let got_ids: Vec<u64> = (0..n).map(|i| ib[at(i)]).collect();
    // No word of ib but the ids' is written.
    let (mut theirs, fill) = (vec![false; ib.len()], buf(1)[0]);
    (0..n).for_each(|i| theirs[at(i)] = true);
    assert!(ib.iter().zip(&theirs).all(|(&x, &t)| t || x == fill), "a write outside the ids");
    assert_eq!(got_ids, want_ids, "ids, n {n} w {w}");
    let pad = |v: Vec<u64>, fill: u64| (0..m).map(|g| v.get(g).copied().unwrap_or(fill)).collect::<Vec<_>>();
    assert_eq!(fb[..m], pad(want_first, n as u64)[..], "first");
    assert_eq!(cb[..m], pad(want_counts, 0)[..], "counts");
    assert_eq!(nb, [k as u64], "count");
    [got_ids, fb, cb, nb].concat()
}

/// Checks rows under two seeds and 1 and 3 threads, the bits all equal.
fn all_ways(rows: &[Vec<u64>], w: usize, m: usize) {
    let mut bits = None;
    for (seed, threads) in [(1, 1), (0xdead_beef, 3), (1, 3), (0xdead_beef, 1)] {
        for (transpose, flip) in [(false, false), (true, true)] {
            let b = case(rows, w, m, transpose, flip, seed, threads);
            assert!(bits.as_ref().is_none_or(|x| *x == b), "bits differ, seed {seed} threads {threads}");
            bits = Some(b);
        }
    }
}

fn rows_of(n: usize, w: usize, mut f: impl FnMut(usize, usize) -> u64) -> Vec<Vec<u64>> {
    (0..n).map(|i| (0..w).map(|j| f(i, j)).collect()).collect()
}

#[test]
fn adversarial_keys() {
    let mut s = 9u64;
    // Three blocks on three threads.
    let n = 3 * BLOCK + 1000;
    // All equal; all distinct; colliding in their low bits; few keys at
    // random, runs of equal rows.
    all_ways(&rows_of(n, 2, |_, _| 7), 2, 3);
    all_ways(&rows_of(n, 1, |i, _| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)), 1, 10);
    all_ways(&rows_of(n, 3, |i, j| ((i as u64 % 5000) << 44) + j as u64), 3, 6000);
    all_ways(&rows_of(n, 4, |_, _| splitmix(&mut s) % 3), 4, 100);
    all_ways(&rows_of(n, 5, |i, j| (i / 7 % 300) as u64 * (j as u64 + 1)), 5, 0);
    // Few keys spread over the words (numbered by hash), in runs of equal
    // rows and not.
    let spread = |i: usize| ((i % 1000) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    all_ways(&rows_of(n, 1, |i, _| spread(i / 3)), 1, 1000);
    all_ways(&rows_of(n, 1, |i, _| spread(i * 7)), 1, 1001);
    all_ways(&rows_of(n, 2, |i, j| spread(i / (j + 1)) >> j), 2, 40);
    // Many keys (more than a quarter of the rows, numbered by shares of
    // their hashes on several threads), each met twice to four times.
    let scattered = |i: usize| ((i % 150_000) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    all_ways(&rows_of(n, 1, |i, _| scattered(i)), 1, 200_000);
    all_ways(&rows_of(n, 2, |i, j| scattered(i) >> (8 * j)), 2, 7);
}

#[test]
fn many_keys_told_from_few_by_a_sample() {
    let n = 1 << 20;
    let mut s = 16u64;
    for (keys, many) in [(n, true), (n / 2, true), (n / 16, false), (1000, false)] {
        let mut kb: Vec<u64> = (0..n).map(|_| splitmix(&mut s) % keys as u64).collect();
        if keys == n {
            kb.iter_mut().enumerate().for_each(|(i, k)| *k = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        }
        let (mut ib, mut fb, mut cb, mut nb) = (buf(n), buf(1), buf(1), buf(1));
        let v = |m: Memory, s: &[usize]| View::new(Layout::contiguous(Dtype::Int64, s), m).unwrap();
        let p = plan(v(mem(&mut ib), &[n]), v(mem(&mut fb), &[1]), v(mem(&mut cb), &[1]), v(mem(&mut nb), &[]), v(mem(&mut kb), &[n, 1])).unwrap();
        let guess = p.many_keys(Fixed::<1>);
        assert_eq!(guess.is_some(), many, "{keys} keys");
        // About the keys: within a factor of 2 where they are many.
        assert!(guess.is_none_or(|g| g <= n && 2 * g >= keys && g <= 2 * keys), "{keys} keys, guessed {guess:?}");
    }
}

#[test]
fn spans_inside_and_outside_the_direct_table() {
    let n = 3 * BLOCK + 1000;
    // One thread's limit: 2 n + 1024 values; three threads' blocks are
    // smaller, so the same keys take the hash there.
    let limit = 2 * n as u64 + 1024;
    let mut s = 10u64;
    for span in [limit, limit + 1] {
        let lo = u64::MAX - span + 1;
        let mut rows = rows_of(n, 1, |_, _| lo + splitmix(&mut s) % span);
        rows[0][0] = lo;
        rows[1][0] = u64::MAX;
        all_ways(&rows, 1, 50);
    }
    // Two columns whose spans multiply to just inside and outside 2^20.
    for (a, b) in [(1024u64, 1024u64), (1024, 1025)] {
        let mut rows = rows_of(600_000, 2, |_, j| splitmix(&mut s) % if j == 0 { a } else { b });
        rows[0] = vec![a - 1, b - 1];
        rows[1] = vec![0, 0];
        all_ways(&rows, 2, 5);
    }
}

#[test]
fn no_words_no_rows_and_one_row() {
    all_ways(&rows_of(5, 0, |_, _| 0), 0, 3);
    all_ways(&rows_of(0, 0, |_, _| 0), 0, 2);
    all_ways(&rows_of(0, 3, |_, _| 0), 3, 2);
    all_ways(&rows_of(1, 4, |_, j| j as u64), 4, 1);
}

#[test]
fn refusals_write_nothing() {
    let (mut kb, mut ib, mut fb, mut cb, mut nb) = (buf(12), buf(4), buf(4), buf(4), buf(1));
    let v = |m: Memory, d: Dtype, shape: &[usize]| View::new(Layout::contiguous(d, shape), m).unwrap();
    let keys = v(mem(&mut kb), Dtype::Int64, &[4, 3]);
    let (im, fm, cm, nm) = (mem(&mut ib), mem(&mut fb), mem(&mut cb), mem(&mut nb));
    let ids = v(im, Dtype::Int64, &[4]);
    let first = v(fm, Dtype::Int64, &[4]);
    let counts = v(cm, Dtype::Int64, &[4]);
    let count = v(nm, Dtype::Int64, &[]);
    let bad = [
        (plan(ids.clone(), first.clone(), counts.clone(), count.clone(), v(mem(&mut kb), Dtype::Float64, &[4, 3])), "not int64 or uint64"),
        (plan(ids.clone(), first.clone(), counts.clone(), count.clone(), v(mem(&mut kb), Dtype::Int64, &[12])), "not [n; w]"),
        (plan(v(im, Dtype::Int64, &[3]), first.clone(), counts.clone(), count.clone(), keys.clone()), "ids have shape"),
        (plan(ids.clone(), v(fm, Dtype::Int32, &[4]), counts.clone(), count.clone(), keys.clone()), "first is int32"),
        (plan(ids.clone(), first.clone(), v(cm, Dtype::Int64, &[3]), count.clone(), keys.clone()), "not one [m]"),
        (plan(ids.clone(), first.clone(), counts.clone(), v(nm, Dtype::Int64, &[1]), keys.clone()), "not 0-d"),
        (plan(ids.clone(), v(im, Dtype::Int64, &[4]), counts.clone(), count.clone(), keys.clone()), "ids and first overlap"),
        (plan(v(mem(&mut kb), Dtype::Int64, &[4]), first.clone(), counts.clone(), count.clone(), keys.clone()), "ids overlaps the keys"),
        (
            plan(View::new(Layout { strides: vec![0], ..Layout::contiguous(Dtype::Int64, &[4]) }, im).unwrap(), first, counts, count, keys),
            "several indices",
        ),
    ];
    for (r, want) in bad {
        let e = r.err().expect("refused");
        assert!(e.contains(want), "{e:?} lacks {want:?}");
    }
    assert!([ib, fb, cb, nb].concat().iter().all(|&w| w == 0x5a5a_5a5a_5a5a_5a5a));
}

#[test]
fn declined_from_two_to_the_forty_minus_one_rows() {
    // Views over memory that is never touched: the plans are checked and
    // asked whether they decline, never run. The keys broadcast one word.
    let mut kb = buf(1);
    let fake = Memory { base: std::ptr::NonNull::<u64>::dangling().as_ptr() as *mut u8, bytes: 8 << 40 };
    let mut small = buf(3);
    for (n, declined) in [(MOST_ROWS - 1, false), (MOST_ROWS, true)] {
        let keys = View::new(Layout { dtype: Dtype::Int64, shape: vec![n, 1], strides: vec![0, 0], offset: 0 }, mem(&mut kb)).unwrap();
        let ids = View::new(Layout::contiguous(Dtype::Int64, &[n]), fake).unwrap();
        let sm = mem(&mut small);
        let one = |o: usize, s: &[usize]| View::new(Layout { offset: o, ..Layout::contiguous(Dtype::Int64, s) }, sm).unwrap();
        let p = plan(ids, one(0, &[1]), one(1, &[1]), one(2, &[]), keys).unwrap();
        assert_eq!(p.declined().is_some_and(|w| w.contains("2^40 - 1")), declined, "{n} rows");
    }
}

/// A find_or_add: a key's number from its hash, words and first row.
type Find<'a> = dyn FnMut(u64, &dyn Fn(usize) -> u64, u64) -> u64 + 'a;

/// The hash table alone, under hashes chosen: keys of one hash (their tags
/// equal, so that a window's first match is another key), homes at the
/// table's end (windows through the copies of its first slots), runs
/// longer than a window, and growth; each key keeps its number, through
/// [`Keys::find_or_add`] and through [`Hot`], which counts the rows it is
/// given.
#[test]
fn probes_through_equal_tags_the_table_end_and_growth() {
    let mut s = 12u64;
    let hashes: Vec<u64> = (0..3000u64).map(|i| if i % 3 == 0 { 1023 } else if i % 3 == 1 { splitmix(&mut s) } else { 1022 | i << 40 }).collect();
    // A key's width and its word j of row i.
    type Words<'a> = &'a dyn Fn(u64, usize) -> u64;
    let widths: [(usize, Words); 2] = [(1, &|i, _| i * 7), (3, &|i, j| i << j)];
    for (w, key) in widths {
        for hot in [false, true] {
            let mut keys = Keys::new(Any(w), true);
            let check = |find: &mut Find| {
                for round in 0..2 {
                    for (i, &hash) in hashes.iter().enumerate() {
                        let id = find(hash, &|j| key(i as u64, j), 10 * i as u64);
                        assert_eq!(id, i as u64, "key {i} round {round} w {w} hot {hot}");
                    }
                }
            };
            if hot {
                let mut h = Hot::new(&mut keys);
                check(&mut |hash, word, first| {
                    let id = h.find_or_add(hash, word, first);
                    h.count(&[id]);
                    id
                });
                h.count(&[2999]);
            } else {
                check(&mut |hash, word, first| keys.find_or_add(hash, word, first));
            }
            assert_eq!(keys.len(), hashes.len());
            assert_eq!(keys.first[2999], 29990);
            let counted = |id: usize| if hot { 2 + (id == 2999) as u64 } else { 0 };
            assert!(keys.counts.iter().enumerate().all(|(id, &c)| c == counted(id)), "counts, w {w} hot {hot}");
        }
    }
}
