//! Timing of Max, Arg Max and Sum over 10M float32 through `plan_reduce`
//! (the entry the OCaml reductions call), one thread, no OCaml boundary:
//! `cargo test --release --no-default-features --lib reduce::tests::bench -- --ignored --nocapture`.
//! `REDUCE_BENCH_PAGES=small` puts the terms on 4 KiB pages rather than
//! huge ones. Times per call: the thread's CPU time, best and median of the
//! runs, and the wall clock's median. The comparisons with numpy are in
//! `bench/`.

use super::data::Rng;
use crate::core::call::Call;
use crate::core::cpu_clock::thread_cpu_s;
use crate::core::dtype::Dtype;
use crate::core::layout::{Layout, Memory, View};
use crate::loops::map::Load;
use crate::core::pool;
use crate::loops::prog::{Node, Prog};
use crate::loops::reduce_loop::{plan_reduce, Monoidal, Reduction};

/// Float32 terms: about numpy's benchmark's size.
const N: usize = 10_000_000;

/// 10M float32 of either sign on huge pages, as `Nx_array`'s buffers of
/// that size lie (where transparent huge pages are on `madvise`), or on
/// ordinary pages where `REDUCE_BENCH_PAGES=small`.
fn terms() -> Huge {
    extern "C" {
        fn madvise(addr: *mut core::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    const MADV_HUGEPAGE: i32 = 14;
    let layout = std::alloc::Layout::from_size_align(4 * N, 1 << 21).unwrap();
    // SAFETY: the layout's size is not zero.
    let p = unsafe { std::alloc::alloc(layout) };
    assert!(!p.is_null());
    if std::env::var("REDUCE_BENCH_PAGES").as_deref() != Ok("small") {
        // SAFETY: [p, p + 4N) is this allocation, page-aligned, not yet
        // touched; the advice changes how the kernel backs it, never its
        // contents.
        unsafe { madvise(p.cast(), 4 * N, MADV_HUGEPAGE) };
    }
    let mut r = Rng(7);
    for i in 0..N {
        // SAFETY: i < N, within the allocation of 4N bytes, aligned for f32.
        unsafe { p.cast::<f32>().add(i).write(r.mixed(20) as f32) };
    }
    Huge(p.cast(), layout)
}

/// An allocation of `N` float32 at a huge page's alignment.
struct Huge(*mut f32, std::alloc::Layout);

impl core::ops::Deref for Huge {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        // SAFETY: the allocation holds N float32, all written by `terms`.
        unsafe { core::slice::from_raw_parts(self.0, N) }
    }
}

impl Drop for Huge {
    fn drop(&mut self) {
        // SAFETY: allocated by `terms` with this layout.
        unsafe { std::alloc::dealloc(self.0.cast(), self.1) }
    }
}

/// Seconds per call of `f` over `runs` runs of one call: the best and the
/// median of the thread's CPU time, and the median of the wall clock.
fn time(runs: usize, mut f: impl FnMut()) -> (f64, f64, f64) {
    f();
    let (mut cpu, mut wall): (Vec<f64>, Vec<f64>) = (0..runs)
        .map(|_| {
            let (s, w) = (thread_cpu_s(), std::time::Instant::now());
            f();
            (thread_cpu_s() - s, w.elapsed().as_secs_f64())
        })
        .unzip();
    cpu.sort_by(f64::total_cmp);
    wall.sort_by(f64::total_cmp);
    (cpu[0], cpu[runs / 2], wall[runs / 2])
}

/// Prints one line of times from [`time`].
fn report(name: &str, (best, median, wall): (f64, f64, f64)) {
    println!("{name:20} best {:7.3} ms  median {:7.3} ms  wall median {:7.3} ms", best * 1e3, median * 1e3, wall * 1e3);
}

#[test]
#[ignore]
fn bench() {
    pool::set_threads(1).unwrap();
    let x = terms();
    let src = View::new(Layout::contiguous(Dtype::Float32, &[N]), Memory { base: x.0.cast(), bytes: 4 * N }).unwrap();
    println!("{}", std::fs::read_to_string("/proc/self/smaps_rollup").unwrap().lines().find(|l| l.starts_with("AnonHuge")).unwrap_or(""));
    let mut out = [0u64; 2];
    let base = out.as_mut_ptr().cast::<u8>();
    let value = View::new(Layout::contiguous(Dtype::Float32, &[]), Memory { base, bytes: 8 }).unwrap();
    let position = View::new(Layout::contiguous(Dtype::Int64, &[]), Memory { base: base.wrapping_add(8), bytes: 8 }).unwrap();
    let load = Prog::new(vec![Dtype::Float32], vec![Node::Load(0)], vec![0]).unwrap();
    let cases = [
        ("max", Reduction::Monoid(Monoidal::Max), vec![value.clone()]),
        ("argmax", Reduction::Arg(Monoidal::Max), vec![value.clone(), position.clone()]),
        ("sum", Reduction::Monoid(Monoidal::Sum), vec![value.clone()]),
    ];
    report("raw read (u32 max)", time(20, || {
        std::hint::black_box(x.iter().fold(0u32, |a, v| a.max(v.to_bits())));
    }));
    for (name, red, dsts) in cases {
        let call = || {
            let p = plan_reduce(load.clone(), vec![N], vec![0], vec![(red, 0)], dsts.clone(), vec![Load::Plain(src.clone())]).unwrap();
            p.run().unwrap();
        };
        report(&format!("{name} float32 10M"), time(30, call));
    }
    // Every other term of the rows of a [N / 8192; 8192] grid, as
    // `Nx.sum (slice [...; Rs (0, 8192, 2)] x)` reads them.
    let rows = N / 8192;
    let grid = Layout { dtype: Dtype::Float32, shape: vec![rows, 4096], strides: vec![8192, 2], offset: 0 };
    let every_other = View::new(grid, src.memory).unwrap();
    let sum = Reduction::Monoid(Monoidal::Sum);
    let call = || {
        let p = plan_reduce(load.clone(), vec![rows, 4096], vec![0, 1], vec![(sum, 0)], vec![value.clone()], vec![Load::Plain(every_other.clone())]).unwrap();
        p.run().unwrap();
    };
    report("sum of a stride-2 view", time(30, call));
}
