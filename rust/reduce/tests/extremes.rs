//! Max, Min and Arg of floats and integers at their edges: both zeros, both
//! infinities, NaNs of either sign, runs all negative or all positive, ties
//! within and across blocks and leaves, against definitions from the order.

use super::data::{same, Bits, Rng};
use super::reference::extreme;
use crate::reduce::{arg, reduce, EveryOther, Fill, Max, Min, Ordered, Pick};

/// Arg from its definition: the first term no later one is better than.
fn first_best<T: Ordered, P: Pick<T>>(terms: &[T]) -> Option<(T, i64)> {
    let mut best: Option<(T, i64)> = None;
    for (i, &t) in terms.iter().enumerate() {
        if best.is_none_or(|b| P::better(t, b.0)) {
            best = Some((t, i as i64));
        }
    }
    best
}

/// Max and Min, of the terms in memory (leaves of several blocks), handed
/// over by a callback (a block a leaf) and every other element of a run,
/// and Arg, each on one thread and split over three, against their
/// definitions; Max and Min again on each compilation (AVX-512's and
/// AVX2's passes).
fn check<T: Ordered + Bits + Default + core::fmt::Debug>(x: &[T], what: &str) {
    let lowest = reduce(Max, &[][..], false);
    let highest = reduce(Min, &[][..], false);
    let filled = Fill { count: x.len(), fill: |start: usize, out: &mut [T]| out.copy_from_slice(&x[start..start + out.len()]) };
    // Every other element of a run, the terms reversed between them.
    let pairs: Vec<T> = x.iter().zip(x.iter().rev()).flat_map(|(&t, &u)| [t, u]).collect();
    let every = EveryOther::new(&pairs, x.len()).unwrap();
    let key = |r: Option<(T, i64)>| r.map(|(v, i)| (v.bits(), i));
    for parallel in [false, true] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for (max, min, terms) in pool.install(|| {
            [
                (reduce(Max, x, parallel), reduce(Min, x, parallel), "in memory"),
                (reduce(Max, &filled, parallel), reduce(Min, &filled, parallel), "filled"),
                (reduce(Max, &every, parallel), reduce(Min, &every, parallel), "every other"),
            ]
        }) {
            same(max, extreme(x, true).unwrap_or(lowest), &format!("max {what}, {terms}, parallel {parallel}"));
            same(min, extreme(x, false).unwrap_or(highest), &format!("min {what}, {terms}, parallel {parallel}"));
        }
        let (a, b) = pool.install(|| (arg(Max, x, parallel), arg(Min, x, parallel)));
        assert_eq!(key(a), key(first_best::<T, Max>(x)), "argmax {what}");
        assert_eq!(key(b), key(first_best::<T, Min>(x)), "argmin {what}");
    }
    crate::kinds::wide::on_each_compilation(|isa| {
        same(reduce(Max, x, false), extreme(x, true).unwrap_or(lowest), &format!("max {what}, {isa}"));
        same(reduce(Min, x, false), extreme(x, false).unwrap_or(highest), &format!("min {what}, {isa}"));
    });
}

/// Lengths around lanes, blocks and Arg's leaves of 16 blocks.
const LENGTHS: [usize; 12] = [1, 15, 16, 17, 1023, 1024, 1025, 16 * 1024 - 1, 16 * 1024 + 1, 33 * 1024 + 5, 70_000, 300_001];

fn floats(r: &mut Rng, n: usize, pick: &[f64]) -> Vec<f64> {
    (0..n).map(|_| pick[(r.next() % pick.len() as u64) as usize]).collect()
}

#[test]
fn float_extremes_at_their_edges() {
    let mut r = Rng(31);
    let inf = f64::INFINITY;
    // Extremes that are zeros send the CPU's max and min to the spans.
    let sets: [&[f64]; 8] = [
        &[-0.0, 0.0, 1.5, -1.5, 7.0, -7.0],
        &[-0.0, 0.0, -1.0, -5.0],
        &[0.0, -0.0, 1.0, 5.0],
        &[-0.0, -1.0, -2.0, -inf, -1e-310],
        &[0.0, 1.0, 2.0, inf, 1e-310],
        &[-0.0],
        &[-inf, inf, 0.0, -0.0],
        &[-3.0, -3.0, 5.0, 5.0, -0.0, 0.0, 1e300, -1e300],
    ];
    for set in sets {
        for n in LENGTHS {
            let x = floats(&mut r, n, set);
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            check(&x, &format!("f64 {set:?} n={n}"));
            check(&x32, &format!("f32 {set:?} n={n}"));
            // NaNs of either sign, one, then another earlier.
            let neg_nan = f64::from_bits(f64::NAN.to_bits() | 1 << 63);
            for (at, nan) in [(n - 1, f64::NAN), (n / 2, neg_nan), (n / 3, f64::NAN), (n - 1, neg_nan), (0, neg_nan)] {
                let mut y = x.clone();
                y[at] = nan;
                let y32: Vec<f32> = y.iter().map(|&v| v as f32).collect();
                check(&y, &format!("f64 {set:?} n={n} NaN at {at}"));
                check(&y32, &format!("f32 {set:?} n={n} NaN at {at}"));
            }
        }
    }
    // Zeros of both signs in one lane of the CPU's max and min, where the
    // instruction keeps the later: -0 after +0 for Max, +0 after -0 for Min.
    for n in [64, 256, 1000, 20_000] {
        let mut x = vec![-0.0f64; n];
        x[3] = 0.0;
        let mut y = vec![0.0f64; n];
        y[3] = -0.0;
        for (v, what) in [(&x, "-0 but one +0"), (&y, "+0 but one -0")] {
            check(&v[..], &format!("f64 {what} n={n}"));
            let v32: Vec<f32> = v.iter().map(|&t| t as f32).collect();
            check(&v32[..], &format!("f32 {what} n={n}"));
        }
    }
    // Ties across leaves: the extreme first in the second leaf and again later.
    let mut x = vec![1.0f32; 300_001];
    x[20_000] = 2.0;
    x[250_000] = 2.0;
    x[100_000] = -2.0;
    x[299_999] = -2.0;
    check(&x, "ties across leaves");
}

#[test]
fn integer_extremes_at_their_edges() {
    let mut r = Rng(32);
    for n in LENGTHS {
        let mut a: Vec<i64> = (0..n).map(|_| (r.next() % 7) as i64 - 3).collect();
        let mut b: Vec<u64> = (0..n).map(|_| r.next() % 5 + (1 << 63) - 2).collect();
        check(&a, &format!("i64 n={n}"));
        check(&b, &format!("u64 n={n}"));
        a[n / 2] = i64::MIN;
        a[n - 1] = i64::MAX;
        b[n / 3] = u64::MAX;
        b[n - 1] = 0;
        check(&a, &format!("i64 with its bounds n={n}"));
        check(&b, &format!("u64 with its bounds n={n}"));
    }
}

/// Max, Min, Arg Max and Arg Min of `x` (one thread), each value as its
/// raw bits, NaN payloads and all.
fn raw_extremes<T: Ordered>(x: &[T], raw: impl Fn(T) -> u64) -> [(u64, i64); 4] {
    let pair = |r: Option<(T, i64)>| r.map_or((0, -1), |(v, i)| (raw(v), i));
    [
        (raw(reduce(Max, x, false)), 0),
        (raw(reduce(Min, x, false)), 0),
        pair(arg(Max, x, false)),
        pair(arg(Min, x, false)),
    ]
}

/// Runs of `pick`'s values at lengths around the vectors (16), the CPU max
/// and min's groups of four vectors (32 float64, 64 float32), the blocks
/// (1024) and Arg's leaves (16 blocks), from a few starting offsets, with
/// and without one NaN placed late: each run's results by `raw_extremes`.
fn awkward_results<T: Ordered>(r: &mut Rng, pick: &[T], nan: T, raw: impl Fn(T) -> u64 + Copy) -> Vec<[(u64, i64); 4]> {
    const AROUND: [usize; 24] = [
        1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1008, 1023, 1024, 1025, 1040, 2047, 2048, 2049, 16383,
        16385,
    ];
    let mut out = Vec::new();
    for n in AROUND {
        let x: Vec<T> = (0..n + 3).map(|_| pick[(r.next() % pick.len() as u64) as usize]).collect();
        for off in 0..3 {
            let mut y = x[off..off + n].to_vec();
            out.push(raw_extremes(&y, raw));
            y[n - 1 - n / 7] = nan;
            out.push(raw_extremes(&y, raw));
        }
    }
    out
}

/// The AVX-512 and the baseline compilations of the Max, Min and Arg block
/// passes give the same bits, NaN payloads included, on NaNs of either
/// sign and several payloads, both zeros, both infinities, subnormals and
/// ties.
#[test]
fn both_compilations_of_the_extremes_give_the_same_bits() {
    let f32s = |b: &[u32]| b.iter().map(|&b| f32::from_bits(b)).collect::<Vec<f32>>();
    let f64s = |b: &[u64]| b.iter().map(|&b| f64::from_bits(b)).collect::<Vec<f64>>();
    let sets32: [Vec<f32>; 4] = [
        // NaNs (quiet and signalling, either sign, payloads), ±0, ±∞, subnormals.
        f32s(&[0x7fc0_0000, 0xffc0_0000, 0x7f80_0001, 0xff81_2345, 0x7fc1_2345, 0, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 1, 0x8000_0001, 0x807f_ffff, 0x3f80_0000]),
        // No NaN: ties of ±0, ±∞, subnormals and the extreme normals.
        f32s(&[0, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 1, 0x8000_0001, 0x007f_ffff, 0x807f_ffff, 0x7f7f_ffff, 0xff7f_ffff, 0x0080_0000]),
        // All negative, -0 and negative subnormals among them.
        f32s(&[0x8000_0000, 0x8000_0001, 0x807f_ffff, 0xbf80_0000, 0xff80_0000, 0xc040_0000]),
        // Few distinct values: long ties.
        vec![-3.0, 5.0, -0.0, 0.0],
    ];
    let sets64: [Vec<f64>; 3] = [
        f64s(&[0x7ff8_0000_0000_0000, 0xfff8_0000_0000_0000, 0x7ff0_0000_0000_0001, 0xfff8_0000_1234_5678, 0, 1 << 63, 1, (1 << 63) | 1, 0x7ff0_0000_0000_0000, 0xfff0_0000_0000_0000]),
        f64s(&[0, 1 << 63, 1, (1 << 63) | 1, 0x000f_ffff_ffff_ffff, 0x7fef_ffff_ffff_ffff, 0xffef_ffff_ffff_ffff, 0x7ff0_0000_0000_0000]),
        vec![-3.0, 5.0, -0.0, 0.0],
    ];
    let ints = [i64::MIN, -1, 0, 1, i64::MAX];
    let nan32 = f32::from_bits(0xff81_2345);
    let nan64 = f64::from_bits(0x7ff0_0000_0000_0001);
    let runs = core::cell::RefCell::new(Vec::new());
    crate::kinds::wide::on_each_compilation(|isa| {
        let mut r = Rng(41);
        let mut all = Vec::new();
        for set in &sets32 {
            all.extend(awkward_results(&mut r, set, nan32, |v: f32| v.to_bits() as u64));
        }
        for set in &sets64 {
            all.extend(awkward_results(&mut r, set, nan64, |v: f64| v.to_bits()));
        }
        all.extend(awkward_results(&mut r, &ints, i64::MIN, |v: i64| v as u64));
        runs.borrow_mut().push((isa.to_string(), all));
    });
    let runs = runs.into_inner();
    for (isa, got) in &runs[1..] {
        for (k, (a, b)) in runs[0].1.iter().zip(got).enumerate() {
            assert_eq!(a, b, "run {k}: {} and {isa} differ", runs[0].0);
        }
    }
}

/// Max and Min where this thread's MXCSR treats subnormal inputs as zeros
/// (DAZ), which would make the CPU's max and min tie subnormals, and where
/// it traps on invalid operations, which a NaN in their pass would raise:
/// both give the exact results by the spans (and no trap); and where the
/// invalid-operation flag is already up. The control word is restored at
/// once; between, the reductions compare bits and test for NaNs by
/// unordered compares, which neither setting changes on these terms (quiet
/// NaNs and subnormals, no arithmetic on the subnormals).
#[cfg(target_arch = "x86_64")]
#[test]
fn extremes_whatever_the_mxcsr() {
    // The CPU's max and min pass runs in these tests.
    assert!(crate::reduce::flagged::raises_ie(), "the probe of IE");
    fn with_mxcsr<R>(set: u32, clear: u32, f: impl FnOnce() -> R) -> R {
        let mut saved = 0u32;
        // SAFETY: stmxcsr writes the 4 bytes of `saved`.
        unsafe { core::arch::asm!("stmxcsr dword ptr [{}]", in(reg) &mut saved as *mut u32, options(nostack)) };
        let changed = (saved | set) & !clear;
        // SAFETY: ldmxcsr reads a valid control word (the saved one with a
        // control bit changed); see the test's documentation for the code
        // run under it.
        unsafe { core::arch::asm!("ldmxcsr dword ptr [{}]", in(reg) &changed as *const u32, options(nostack)) };
        let r = f();
        // SAFETY: as above, the word this thread had.
        unsafe { core::arch::asm!("ldmxcsr dword ptr [{}]", in(reg) &saved as *const u32, options(nostack)) };
        r
    }
    const DAZ: u32 = 1 << 6;
    const IM: u32 = 1 << 7;
    let tiny = f32::from_bits(5);
    let mut x: Vec<f32> = (0..1000).map(|i| if i % 3 == 0 { -tiny } else { -f32::from_bits(9) }).collect();
    x[700] = -f32::from_bits(2);
    let (max, min) = with_mxcsr(DAZ, 0, || (reduce(Max, &x[..], false), reduce(Min, &x[..], false)));
    same(max, -f32::from_bits(2), "max under DAZ");
    same(min, -f32::from_bits(9), "min under DAZ");
    let y: Vec<f64> = x.iter().map(|&v| -f64::from_bits((-v).to_bits() as u64)).collect();
    let (max, min) = with_mxcsr(DAZ, 0, || (reduce(Max, &y[..], false), reduce(Min, &y[..], false)));
    same(max, -f64::from_bits(2), "f64 max under DAZ");
    same(min, -f64::from_bits(9), "f64 min under DAZ");
    // The invalid-operation flag already raised does not pass for a NaN.
    let (max, min) = with_mxcsr(1, 0, || (reduce(Max, &x[..], false), reduce(Min, &x[..], false)));
    same(max, -f32::from_bits(2), "max with the invalid-operation flag up");
    same(min, -f32::from_bits(9), "min with the invalid-operation flag up");
    x[500] = f32::NAN;
    let (max, min) = with_mxcsr(0, IM, || (reduce(Max, &x[..], false), reduce(Min, &x[..], false)));
    same(max, f32::NAN, "max with invalid operations unmasked");
    same(min, f32::NAN, "min with invalid operations unmasked");
}
