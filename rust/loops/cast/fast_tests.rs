//! Tests of the fast paths of casts and of narrow floats' memory I/O, bit
//! for bit against the scalar definitions (Rust's `as` for a float into an
//! integer; `Narrow`'s per-element encoder and decoder for the narrow
//! floats), over every edge and a large random sample, at lengths, offsets
//! and steps that exercise vector bodies and tails; and their timing.
//!
//! Timing of casts as `map` runs them: tiles of 1024 elements loaded from
//! memory, cast, settled and stored, over 10M elements on one thread, and
//! over 16K elements (in cache) as many times:
//! `cargo test --release --no-default-features --lib cast::fast_tests::timing
//! -- --ignored --nocapture`.

use crate::loops::column::{Col, C32, C64};
use crate::core::dtype::Dtype;
use crate::core::layout::Memory;
use crate::loops::memio;
use crate::core::narrow::Narrow;
use std::fmt::Debug;
use std::time::Instant;

// ---------------------------------------------------------------------------
// Inputs.

/// A xorshift generator, the same sequence at every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        crate::core::test_rng::xorshift(&mut self.0)
    }
}

/// Magnitudes around which casts change behaviour: every integer dtype's
/// ends and their halves, the powers of two where float32 and float64
/// spacing passes 1, each narrow float's largest finite value, overflow
/// threshold and least normal and subnormal, and small values.
fn pivots() -> Vec<f64> {
    let mut p = vec![0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 6.0, 7.0, 8.0, 15.0, 16.0, 100.5];
    for bits in [4, 8, 16, 32, 64] {
        let half = 2f64.powi(bits - 1);
        p.extend([half, half - 1.0, half + 1.0, 2.0 * half, 2.0 * half - 1.0, 2.0 * half + 1.0]);
    }
    p.extend([2f64.powi(23), 2f64.powi(24), 2f64.powi(52), 2f64.powi(53), 2f64.powi(62), 2f64.powi(65)]);
    // float16: largest finite, the tie to infinity, least normal and
    // subnormal, half the least subnormal; bfloat16's largest and its tie;
    // the 8- and 4-bit formats' largest and ties.
    p.extend([65504.0, 65520.0, 65536.0, 2f64.powi(-14), 2f64.powi(-24), 2f64.powi(-25), 3.0 * 2f64.powi(-25)]);
    p.extend([3.3895313892515355e38, 3.3961775292304957e38, 2f64.powi(-126), 2f64.powi(-133), 2f64.powi(-134)]);
    p.extend([57344.0, 61440.0, 448.0, 464.0, 480.0, 2f64.powi(-9), 2f64.powi(-10), 2f64.powi(-17)]);
    p.extend([f64::from(f32::MAX), f64::MAX, f64::MIN_POSITIVE, 1e-300, 5e-324]);
    p
}

/// Float32 bit patterns of every edge: both zeros, the subnormal and normal
/// ends, infinities, NaNs quiet and signalling with payloads of both signs,
/// and each pivot's float32 of both signs with its three neighbours either
/// side.
fn f32_edges() -> Vec<f32> {
    let mut bits: Vec<u32> = vec![
        0x0000_0000, 0x0000_0001, 0x0000_1000, 0x0040_0000, 0x007f_ffff, 0x0080_0000, 0x7f7f_ffff, 0x7f80_0000,
        0x7f80_0001, 0x7f80_1fff, 0x7f80_2000, 0x7fa0_0000, 0x7fbf_ffff, 0x7fc0_0000, 0x7fc0_0001, 0x7fc0_2000,
        0x7fd5_5555, 0x7fff_e000, 0x7fff_ffff,
    ];
    for p in pivots() {
        let b = (p as f32).to_bits();
        bits.extend((0..7).map(|k| b.wrapping_add(k).wrapping_sub(3) & 0x7fff_ffff));
    }
    bits.iter().flat_map(|&b| [b, b | 0x8000_0000]).map(f32::from_bits).collect()
}

/// As [`f32_edges`], float64 patterns, with every float32 edge widened.
fn f64_edges() -> Vec<f64> {
    let mut bits: Vec<u64> = vec![
        0, 1, 0x000f_ffff_ffff_ffff, 0x0010_0000_0000_0000, 0x7fef_ffff_ffff_ffff, 0x7ff0_0000_0000_0000,
        0x7ff0_0000_0000_0001, 0x7ff4_0000_0000_0000, 0x7ff8_0000_0000_0000, 0x7ff8_0000_0000_0001,
        0x7fff_ffff_ffff_ffff, 0x7ff0_0400_0000_0000,
    ];
    for p in pivots() {
        let b = p.to_bits();
        bits.extend((0..7).map(|k| b.wrapping_add(k).wrapping_sub(3) & 0x7fff_ffff_ffff_ffff));
    }
    let mut v: Vec<f64> = bits.iter().flat_map(|&b| [b, b | 1 << 63]).map(f64::from_bits).collect();
    v.extend(f32_edges().into_iter().map(f64::from));
    v
}

/// The edges then `n` random float32s: a quarter any bit pattern, the rest
/// of exponents within a few binades of 2^0 to 2^66 and of the narrow
/// floats' range, both signs.
fn f32_sample(n: usize) -> Vec<f32> {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let mut v = f32_edges();
    v.extend((0..n).map(|i| {
        let b = r.next() as u32;
        let e = match i % 4 {
            0 => return f32::from_bits(b),
            1 => 127 + (b >> 23) % 67,
            _ => 100 + (b >> 23) % 48,
        };
        f32::from_bits((b & 0x807f_ffff) | e << 23)
    }));
    v
}

/// As [`f32_sample`], float64s.
fn f64_sample(n: usize) -> Vec<f64> {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut v = f64_edges();
    v.extend((0..n).map(|i| {
        let b = r.next();
        let e = match i % 4 {
            0 => return f64::from_bits(b),
            1 => 1023 + (b >> 52) % 67,
            _ => 996 + (b >> 52) % 48,
        };
        f64::from_bits((b & 0x800f_ffff_ffff_ffff) | e << 52)
    }));
    v
}

// ---------------------------------------------------------------------------
// The harness.

/// Values compared by their bits, so that NaNs compare.
trait Bits: Copy + Debug {
    fn bits(self) -> u64;
}

macro_rules! int_bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            fn bits(self) -> u64 {
                self as u64
            }
        }
    )*};
}
int_bits!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Bits for f32 {
    fn bits(self) -> u64 {
        self.to_bits().into()
    }
}

/// Runs `fast` over `xs` cut into runs of every length up to 40 and, from
/// each start below 16, over the rest whole, so that each value passes
/// through every lane of a vector body and of a tail; checks each output
/// against `reference` of its input, bit for bit.
fn check_runs<T: Copy + Debug, U: Bits + Default>(
    what: &str,
    xs: &[T],
    fast: impl Fn(&[T], &mut [U]),
    reference: impl Fn(T) -> U,
) {
    let want: Vec<U> = xs.iter().map(|&x| reference(x)).collect();
    let mut out = vec![U::default(); xs.len()];
    let mut check = |lo: usize, hi: usize| {
        fast(&xs[lo..hi], &mut out[lo..hi]);
        for i in lo..hi {
            assert_eq!(out[i].bits(), want[i].bits(), "{what}: {:?} gives {:?}, not {:?}", xs[i], out[i], want[i]);
        }
    };
    for len in 1..=40 {
        for lo in (0..xs.len()).step_by(len) {
            check(lo, (lo + len).min(xs.len()));
        }
    }
    for lo in 0..16.min(xs.len()) {
        check(lo, xs.len());
    }
}

/// `cast` of a column of `from` holding `x` into `to`.
fn cast_col(from: Dtype, to: Dtype, x: Col) -> Col {
    let n = x.len();
    let mut out = Col::new(to, n);
    super::cast(from, to, &x.as_ref(), &mut out.as_mut(), n, true);
    out
}

// ---------------------------------------------------------------------------
// Floats into integers.

/// Casts of float32 and float64 columns (and complex ones, by their real
/// parts) into an integer dtype against `as`.
macro_rules! check_float_to_int {
    ($f32s:expr, $f64s:expr, $($d:ident $col:ident $t:ty),*) => {$(
        check_runs(concat!("float32 -> ", stringify!($t)), $f32s, |x: &[f32], out: &mut [$t]| {
            let Col::$col(v) = cast_col(Dtype::Float32, Dtype::$d, Col::F32(x.to_vec())) else { unreachable!() };
            out.copy_from_slice(&v);
        }, |x| x as $t);
        check_runs(concat!("float64 -> ", stringify!($t)), $f64s, |x: &[f64], out: &mut [$t]| {
            let Col::$col(v) = cast_col(Dtype::Float64, Dtype::$d, Col::F64(x.to_vec())) else { unreachable!() };
            out.copy_from_slice(&v);
        }, |x| x as $t);
        let c32: Vec<C32> = $f32s.iter().map(|&x| C32::new(x, 1.0)).collect();
        let Col::$col(v) = cast_col(Dtype::Complex64, Dtype::$d, Col::C32(c32)) else { unreachable!() };
        assert!(v.iter().zip($f32s).all(|(&o, &x)| o == x as $t));
        let c64: Vec<C64> = $f64s.iter().map(|&x| C64::new(x, -1.0)).collect();
        let Col::$col(v) = cast_col(Dtype::Complex128, Dtype::$d, Col::C64(c64)) else { unreachable!() };
        assert!(v.iter().zip($f64s).all(|(&o, &x)| o == x as $t));
    )*};
}

/// On the baseline compilation of the casts' loops and on the AVX-512 one.
#[test]
fn floats_into_integers_as_rust_casts() {
    let (f32s, f64s) = (f32_sample(20_000), f64_sample(20_000));
    let (f32s, f64s) = (&f32s[..], &f64s[..]);
    crate::kinds::wide::on_each_compilation(|_| {
        check_float_to_int!(f32s, f64s,
            Int8 I8 i8, Int16 I16 i16, Int32 I32 i32, Int64 I64 i64,
            Uint8 U8 u8, Uint16 U16 u16, Uint32 U32 u32, Uint64 U64 u64);
        // int4 and uint4 saturate at their ends.
        let Col::I8(v) = cast_col(Dtype::Float32, Dtype::Int4, Col::F32(f32s.to_vec())) else { unreachable!() };
        assert!(v.iter().zip(f32s).all(|(&o, &x)| o == (x as i8).clamp(-8, 7)));
        let Col::U8(v) = cast_col(Dtype::Float64, Dtype::Uint4, Col::F64(f64s.to_vec())) else { unreachable!() };
        assert!(v.iter().zip(f64s).all(|(&o, &x)| o == (x as u8).min(15)));
    });
}

/// Every cast from one of the 21 dtypes into another, of random bits (NaNs
/// of many payloads, infinities, subnormals, values past every integer's
/// ends) and of float32's and float64's edges, stores the same bytes from
/// the baseline compilation of its loop as from the AVX-512 one, over a
/// vector body and a tail.
#[test]
fn every_cast_the_same_on_each_compilation() {
    let mut r = Rng(0x5eed_ca57_f00d_b175);
    let n = 1000 + 37;
    let mut bytes: Vec<u8> = (0..n * 16).map(|_| r.next() as u8).collect();
    let (e32, e64) = (f32_edges(), f64_edges());
    for (i, chunk) in bytes.chunks_mut(16).enumerate() {
        // A quarter of the floats are edges, in either of the words read.
        if i % 4 == 0 {
            chunk[..4].copy_from_slice(&e32[i / 4 % e32.len()].to_le_bytes());
            chunk[8..].copy_from_slice(&e64[i / 4 % e64.len()].to_le_bytes());
        }
    }
    let src = Memory { base: bytes.as_mut_ptr(), bytes: bytes.len() };
    for from in Dtype::ALL {
        let mut x = Col::new(from, n);
        // SAFETY: n elements of at most 16 bytes lie in the n * 16 bytes.
        unsafe { memio::load(src, from, 0, 1, n, &mut x.as_mut()) };
        for to in Dtype::ALL {
            let stored = std::cell::RefCell::new(Vec::new());
            crate::kinds::wide::on_each_compilation(|isa| {
                let out = cast_col(from, to, x.clone());
                let mut mem = vec![0u8; n * 16];
                let m = Memory { base: mem.as_mut_ptr(), bytes: mem.len() };
                // SAFETY: as for the load.
                unsafe { memio::store(m, to, 0, 1, n, &out.as_ref()) };
                stored.borrow_mut().push((isa.to_string(), mem));
            });
            let stored = stored.into_inner();
            for (isa, mem) in &stored[1..] {
                assert!(*mem == stored[0].1, "{} -> {}: {isa} differs from {}", from.name(), to.name(), stored[0].0);
            }
        }
    }
}

/// Every float32 pattern, a tenth of them by a stride prime to 2, into
/// every integer width, against `as`, on each compilation of the casts'
/// loops.
#[test]
fn float32_sweep_into_integers() {
    crate::kinds::wide::on_each_compilation(|_| sweep_f32_into_integers(11));
}

/// As [`float32_sweep_into_integers`], every pattern: `cargo test --release
/// --no-default-features --lib cast::fast_tests::every_float32 --
/// --ignored`.
#[test]
#[ignore]
fn every_float32_into_integers() {
    sweep_f32_into_integers(1);
}

/// Casts the float32 patterns `stride` apart into every integer width, in
/// blocks of `map`'s tile, checking each against `as`.
fn sweep_f32_into_integers(stride: u64) {
    let mut x = Col::new(Dtype::Float32, 1024);
    let mut outs: Vec<(Dtype, Col)> = [Dtype::Int8, Dtype::Int16, Dtype::Int32, Dtype::Int64]
        .into_iter()
        .chain([Dtype::Uint8, Dtype::Uint16, Dtype::Uint32, Dtype::Uint64])
        .map(|d| (d, Col::new(d, 1024)))
        .collect();
    let mut b = 0u64;
    while b < 1 << 32 {
        let Col::F32(v) = &mut x else { unreachable!() };
        let mut n = 0;
        while n < v.len() && b < 1 << 32 {
            v[n] = f32::from_bits(b as u32);
            (n, b) = (n + 1, b + stride);
        }
        let Col::F32(v) = &x else { unreachable!() };
        let v = &v[..n];
        for (d, out) in outs.iter_mut() {
            super::cast(Dtype::Float32, *d, &x.as_ref(), &mut out.as_mut(), n, true);
            let ok = match &*out {
                Col::I8(o) => o.iter().zip(v).all(|(&o, &x)| o == x as i8),
                Col::I16(o) => o.iter().zip(v).all(|(&o, &x)| o == x as i16),
                Col::I32(o) => o.iter().zip(v).all(|(&o, &x)| o == x as i32),
                Col::I64(o) => o.iter().zip(v).all(|(&o, &x)| o == x as i64),
                Col::U8(o) => o.iter().zip(v).all(|(&o, &x)| o == x as u8),
                Col::U16(o) => o.iter().zip(v).all(|(&o, &x)| o == x as u16),
                Col::U32(o) => o.iter().zip(v).all(|(&o, &x)| o == x as u32),
                Col::U64(o) => o.iter().zip(v).all(|(&o, &x)| o == x as u64),
                _ => unreachable!(),
            };
            assert!(ok, "float32 -> {} in the block before {b:#x}", d.name());
        }
    }
}

// ---------------------------------------------------------------------------
// Narrow floats.

/// Float32 inputs for the narrow formats: the sample, and for each format
/// every value, each with its three neighbours either side, and the
/// midpoint of each pair of neighbouring values (their ties).
fn narrow_inputs() -> Vec<f32> {
    let mut v = f32_sample(50_000);
    for n in Narrow::ALL {
        let vals: Vec<f32> = (0..1u32 << n.bits()).map(|b| n.decode(b as u16)).filter(|x| !x.is_nan()).collect();
        for w in vals.windows(2) {
            if w[0].is_finite() && w[1].is_finite() && w[0].is_sign_negative() == w[1].is_sign_negative() {
                v.push((w[0] + w[1]) / 2.0);
            }
        }
        for x in vals {
            v.extend((0..7).map(|k| f32::from_bits(x.to_bits().wrapping_add(k).wrapping_sub(3))));
        }
    }
    v
}

/// Every bit pattern of a format, in a shuffled order, so that runs mix
/// NaNs, infinities, subnormals and normals.
fn patterns(n: Narrow) -> Vec<u16> {
    let mut v: Vec<u16> = (0..1u32 << n.bits()).map(|b| b as u16).collect();
    let mut r = Rng(0x1234_5678_9abc_def1);
    for i in (1..v.len()).rev() {
        v.swap(i, (r.next() % (i as u64 + 1)) as usize);
    }
    v
}

#[test]
fn every_narrow_pattern_decodes_as_one_element() {
    for n in Narrow::ALL {
        let bits = patterns(n);
        if n.bits() == 16 {
            check_runs(&format!("decode {n:?}"), &bits, |b, out| n.decode_slice(b, out), |b| n.decode(b));
        } else {
            // Every byte: the bits above the format's are not read.
            let bytes: Vec<u8> = (0..=255).collect();
            check_runs(&format!("decode {n:?}"), &bytes, |b, out| n.decode_bytes(b, out), |b| n.decode(b.into()));
            let wide: Vec<u16> = bytes.iter().map(|&b| b.into()).collect();
            check_runs(&format!("decode {n:?}"), &wide, |b, out| n.decode_slice(b, out), |b| n.decode(b));
        }
    }
}

#[test]
fn narrow_slices_encode_and_round_as_one_element() {
    let xs = narrow_inputs();
    let wide = f64_sample(20_000);
    for n in Narrow::ALL {
        let name = format!("{n:?}");
        check_runs(&name, &xs, |x, out| n.encode_f32_slice(x, out), |x| n.encode_f32(x));
        if n.bits() <= 8 {
            check_runs(&name, &xs, |x, out| n.encode_f32_bytes(x, out), |x| n.encode_f32(x) as u8);
        }
        check_runs(&name, &xs, |x, out| n.round_f32_into(x, out), |x| n.round_from_f32(x));
        check_runs(
            &name,
            &xs,
            |x, out: &mut [f32]| {
                out.copy_from_slice(x);
                n.round_f32_slice(out)
            },
            |x| n.round_from_f32(x),
        );
        check_runs(&name, &wide, |x, out| n.round_f64_into(x, out), |x| n.round_from_f64(x));
    }
}

/// Casts into each narrow float, from float32, float64 and the integers
/// and complex numbers (which pass through float64), against the
/// per-element rounding.
#[test]
fn casts_into_narrow_floats_round_as_one_element() {
    let xs = narrow_inputs();
    let wide = f64_sample(20_000);
    let ints: Vec<i64> = wide.iter().map(|&x| x as i64).chain(xs.iter().map(|&x| x as i64)).collect();
    for n in Narrow::ALL {
        let d = n.dtype();
        let name = format!("{n:?}");
        let check = |from: Dtype, x: Col, want: Vec<f32>| {
            let Col::F32(v) = cast_col(from, d, x) else { unreachable!() };
            for (i, (g, w)) in v.iter().zip(&want).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "{name} from {} at {i}", from.name());
            }
        };
        check(Dtype::Float32, Col::F32(xs.clone()), xs.iter().map(|&x| n.round_from_f32(x)).collect());
        check(Dtype::Float64, Col::F64(wide.clone()), wide.iter().map(|&x| n.round_from_f64(x)).collect());
        check(Dtype::Int64, Col::I64(ints.clone()), ints.iter().map(|&x| n.round_from_f64(x as f64)).collect());
        let u: Vec<u64> = ints.iter().map(|&x| x as u64).collect();
        check(Dtype::Uint64, Col::U64(u.clone()), u.iter().map(|&x| n.round_from_f64(x as f64)).collect());
        let c: Vec<C32> = xs.iter().map(|&x| C32::new(x, 2.0)).collect();
        check(Dtype::Complex64, Col::C32(c), xs.iter().map(|&x| n.round_from_f64(x.into())).collect());
        // Lengths about the chunks of the integers' buffer.
        for k in [0, 1, 7, 255, 256, 257, 1000] {
            let x: Vec<i32> = (0..k).map(|i| i * 977 - 3000).collect();
            let want = x.iter().map(|&x| n.round_from_f64(x.into())).collect();
            check(Dtype::Int32, Col::I32(x), want);
        }
    }
}

/// Every float32 pattern, a tenth of them by a stride prime to 2, encoded
/// and rounded into each narrow float by the slices, against the
/// per-element encoder.
#[test]
fn float32_sweep_into_narrow_floats() {
    sweep_f32_into_narrow(&Narrow::ALL, 11);
}

/// As [`float32_sweep_into_narrow_floats`], every pattern into float16 and
/// bfloat16: `cargo test --release --no-default-features --lib
/// cast::fast_tests::every_float32 -- --ignored`.
#[test]
#[ignore]
fn every_float32_into_float16_and_bfloat16() {
    sweep_f32_into_narrow(&[Narrow::Float16, Narrow::Bfloat16], 1);
}

/// Encodes and rounds the float32 patterns `stride` apart into each of
/// `formats`, in blocks of 1021 (so that tails are met), checking each
/// against the per-element encoder.
fn sweep_f32_into_narrow(formats: &[Narrow], stride: u64) {
    const B: usize = 1021;
    let (mut x, mut bits, mut round) = (vec![0f32; B], vec![0u16; B], vec![0f32; B]);
    let mut b = 0u64;
    while b < 1 << 32 {
        let mut k = 0;
        while k < B && b < 1 << 32 {
            x[k] = f32::from_bits(b as u32);
            (k, b) = (k + 1, b + stride);
        }
        for &n in formats {
            n.encode_f32_slice(&x[..k], &mut bits[..k]);
            round[..k].copy_from_slice(&x[..k]);
            n.round_f32_slice(&mut round[..k]);
            for i in 0..k {
                let want = n.encode_f32(x[i]);
                assert_eq!(bits[i], want, "{n:?} of {:#x}", x[i].to_bits());
                assert_eq!(round[i].to_bits(), n.decode(want).to_bits(), "{n:?} of {:#x}", x[i].to_bits());
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Memory runs.

/// The bits of element `i` of `width` bits (16, 8, 4 or 1) in `mem`.
fn element(mem: &[u8], width: u32, i: usize) -> u16 {
    match width {
        16 => u16::from_ne_bytes([mem[2 * i], mem[2 * i + 1]]),
        8 => mem[i].into(),
        w => ((mem[i * w as usize / 8] >> (i * w as usize % 8)) & ((1 << w) - 1)).into(),
    }
}

/// Runs of `n` elements `step` apart: each step, a length about the
/// chunks and the vectors, and a first element at each position in a byte
/// of sub-byte elements; the run's lowest element index and its start.
fn runs() -> Vec<(isize, usize, usize, isize)> {
    let mut v = Vec::new();
    for step in [1isize, 2, 3, -1, -2, 0] {
        for n in [1, 2, 3, 7, 8, 9, 17, 511, 512, 513, 1030] {
            for lo in 0..9 {
                let start = if step < 0 { lo as isize + (n as isize - 1) * -step } else { lo as isize };
                v.push((step, n, lo, start));
            }
        }
    }
    v
}

/// Stores of each narrow float's column along every run, against the
/// per-element encoder, the elements off the run left as they were; and
/// loads of every run of random bits, against the per-element decoder.
#[test]
fn narrow_runs_in_memory_as_one_element() {
    let xs = narrow_inputs();
    let mut r = Rng(0xdead_beef_cafe_f00d);
    for n in Narrow::ALL {
        let (d, width) = (n.dtype(), n.bits());
        for (c, &(step, k, lo, start)) in runs().iter().enumerate() {
            let span = lo + (k - 1) * step.unsigned_abs() + 1;
            let before: Vec<u8> = (0..(span * width as usize).div_ceil(8) + 3).map(|_| r.next() as u8).collect();
            let elem = |j: usize| (start + j as isize * step) as usize;
            // Load.
            let mut mem = before.clone();
            let m = Memory { base: mem.as_mut_ptr(), bytes: mem.len() };
            let mut col = Col::new(d, k);
            // SAFETY: every element of the run lies in `mem`.
            unsafe { memio::load(m, d, start, step, k, &mut col.as_mut()) };
            let Col::F32(got) = &col else { unreachable!() };
            for (j, g) in got.iter().enumerate() {
                let want = n.decode(element(&before, width, elem(j)));
                assert_eq!(g.to_bits(), want.to_bits(), "load {n:?} step {step} n {k} from {start}, {j}");
            }
            if step == 0 {
                continue;
            }
            // Store.
            let x: Vec<f32> = (0..k).map(|j| xs[(c * 997 + j * 31) % xs.len()]).collect();
            // SAFETY: as above.
            unsafe { memio::store(m, d, start, step, k, &Col::F32(x.clone()).as_ref()) };
            let mut mine = vec![None; span];
            for (j, &x) in x.iter().enumerate() {
                mine[elem(j)] = Some(n.encode_f32(x));
            }
            for (i, want) in mine.iter().enumerate() {
                let want = want.unwrap_or_else(|| element(&before, width, i));
                assert_eq!(element(&mem, width, i), want, "store {n:?} step {step} n {k} from {start}, element {i}");
            }
            assert_eq!(mem[(span * width as usize).div_ceil(8)..], before[(span * width as usize).div_ceil(8)..]);
        }
    }
}

/// Stores of int4, uint4 and bit along every run, whole bytes and single
/// elements, the elements off the run left as they were.
#[test]
fn sub_byte_integer_runs_keep_their_neighbours() {
    let mut r = Rng(0x0bad_5eed_1234_4321);
    for (d, width) in [(Dtype::Int4, 4), (Dtype::Uint4, 4), (Dtype::Bit, 1)] {
        for &(step, k, lo, start) in runs().iter().filter(|r| r.0 != 0) {
            let span = lo + (k - 1) * step.unsigned_abs() + 1;
            let before: Vec<u8> = (0..(span * width).div_ceil(8) + 2).map(|_| r.next() as u8).collect();
            let vals: Vec<u8> = (0..k).map(|_| r.next() as u8).collect();
            let col = match d {
                Dtype::Int4 => Col::I8(vals.iter().map(|&v| crate::loops::column::wrap_i4(v as i8)).collect()),
                Dtype::Uint4 => Col::U8(vals.iter().map(|&v| v & 15).collect()),
                _ => Col::Bool(vals.iter().map(|&v| v & 1 != 0).collect()),
            };
            let mut mem = before.clone();
            let m = Memory { base: mem.as_mut_ptr(), bytes: mem.len() };
            // SAFETY: every element of the run lies in `mem`.
            unsafe { memio::store(m, d, start, step, k, &col.as_ref()) };
            let mut mine = vec![None; span];
            for (j, &v) in vals.iter().enumerate() {
                mine[(start + j as isize * step) as usize] = Some(u16::from(v) & ((1 << width) - 1));
            }
            for (i, want) in mine.iter().enumerate() {
                let want = want.unwrap_or_else(|| element(&before, width as u32, i));
                assert_eq!(element(&mem, width as u32, i), want, "{} step {step} n {k} from {start}, element {i}", d.name());
            }
            let mut back = Col::new(d, k);
            // SAFETY: as above.
            unsafe { memio::load(m, d, start, step, k, &mut back.as_mut()) };
            assert_eq!(back, col);
        }
    }
}

/// A tile of `map`.
const TILE: usize = 1024;

/// Elements per timed run.
const N: usize = 10_000_000;

/// `n` elements' worth of bytes of `d`, `step` apart, of pseudo-random
/// finite values in about ±3e4 (which every float dtype here holds but the
/// 8- and 4-bit ones, which saturate or give NaN), as the dtype's bits.
fn source(d: Dtype, n: usize, step: usize) -> Vec<u8> {
    let elems = (n - 1) * step + 1;
    let mut mem = vec![0u8; (elems * d.bits()).div_ceil(8) + 16];
    let mut col = Col::new(Dtype::Float64, elems);
    let Col::F64(v) = &mut col else { unreachable!() };
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    for x in v.iter_mut() {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *x = ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 6e4;
    }
    let mut out = Col::new(d, elems);
    crate::loops::cast::cast(Dtype::Float64, d, &col.as_ref(), &mut out.as_mut(), elems, true);
    out.as_mut().settle(d, elems);
    let m = Memory { base: mem.as_mut_ptr(), bytes: mem.len() };
    // SAFETY: elements 0..elems of `d` lie in `mem`, sized for them.
    unsafe { memio::store(m, d, 0, 1, elems, &out.as_ref()) };
    mem
}

/// The best of five runs of `from` -> `to` as `map` runs a cast, over `n`
/// elements `reps` times, source and destination elements `step` apart
/// (negative: they run backwards, from the last of `n` elements), in ns per
/// element.
fn time_cast(from: Dtype, to: Dtype, src_step: isize, dst_step: isize, n: usize, reps: usize) -> f64 {
    let mut src = source(from, n, src_step.unsigned_abs());
    let mut dst = vec![0u8; ((n - 1) * dst_step.unsigned_abs() + 1) * to.bits() / 8 + 16];
    let sm = Memory { base: src.as_mut_ptr(), bytes: src.len() };
    let dm = Memory { base: dst.as_mut_ptr(), bytes: dst.len() };
    let mut a = Col::new(from, TILE);
    let mut b = Col::new(to, TILE);
    let start = |j: usize, step: isize| if step < 0 { (n - 1 - j) as isize } else { j as isize * step };
    let mut run = || {
        let t = Instant::now();
        for _ in 0..reps {
            for j in (0..n).step_by(TILE) {
                let k = TILE.min(n - j);
                // SAFETY: elements start + i * step for i < k lie in the
                // buffers, sized for n elements at these steps.
                unsafe { memio::load(sm, from, start(j, src_step), src_step, k, &mut a.as_mut()) };
                a.as_mut().settle(from, k);
                crate::loops::cast::cast(from, to, &a.as_ref(), &mut b.as_mut(), k, true);
                b.as_mut().settle(to, k);
                // SAFETY: as above.
                unsafe { memio::store(dm, to, start(j, dst_step), dst_step, k, &b.as_ref()) };
            }
        }
        t.elapsed().as_secs_f64() * 1e9 / (n * reps) as f64
    };
    run(); // warm the pages
    (0..5).map(|_| run()).fold(f64::INFINITY, f64::min)
}

#[test]
#[ignore]
fn timing() {
    use Dtype::*;
    let cases = [
        (Float32, Int32, 1, 1),
        (Float32, Int64, 1, 1),
        (Float32, Uint32, 1, 1),
        (Float32, Uint8, 1, 1),
        (Float32, Int16, 1, 1),
        (Float64, Int32, 1, 1),
        (Float64, Int64, 1, 1),
        (Float64, Uint64, 1, 1),
        (Float32, Float16, 1, 1),
        (Float32, Float16, 1, -1),
        (Float32, Float16, 1, 3),
        (Float16, Float32, 1, 1),
        (Float16, Float32, 3, 1),
        (Float32, Bfloat16, 1, 1),
        (Bfloat16, Float32, 1, 1),
        (Float64, Float16, 1, 1),
        (Float32, Float8E4m3fn, 1, 1),
        (Float8E4m3fn, Float32, 1, 1),
        (Float32, Float4E2m1fn, 1, 1),
        (Float32, Float32, 1, 1),
    ];
    for (from, to, ss, ds) in cases {
        let big = time_cast(from, to, ss, ds, N, 1);
        let small = time_cast(from, to, ss, ds, 1 << 14, N >> 14);
        println!(
            "{:>14} -> {:<14} steps {ss:>2} {ds:>2}: {big:6.3} ns/element at 10M, {small:6.3} at 16K",
            from.name(),
            to.name()
        );
    }
}
