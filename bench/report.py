"""Writes the results of driver.py: RESULTS.md, results.csv and ratios.png."""

import csv
import os
import platform
import subprocess
import time
from statistics import median

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402

import floors  # noqa: E402

CSV_HEADER = ["case", "dtype", "shape", "threads", "nx_median_s", "peer", "peer_median_s",
              "nx_peak_bytes", "peer_peak_bytes"]


# After each of the peer's samples on several threads the driver waits for
# the peer's threads to sleep before the next sample: OpenBLAS's idle
# threads spin after a call for 2^28 cycles of the time-stamp counter
# (measured here: 141 ms after a 2-thread matmul, where a fixed pause of
# 100 ms let our 2-thread matmul 1024 share a core with them: median ~9.9
# against ~8.2 ms), and a sample of ours started meanwhile shares a core
# with them. Ours sleep at once, so waiting after the peer's alone suffices.
# The wait ends at the first window of SETTLE_QUIET_S in which the driver's
# process (whose threads are numpy's) used under a twentieth of it in CPU
# time, and after SETTLE_MOST_S at most.
SETTLE_QUIET_S = 0.02
SETTLE_MOST_S = 1.0

BUSY = 0.25  # cores of other work past which a row is marked


SIZES = ("small", "mid", "large")  # the summary's names for a case's shapes, by the run's sides


def shape(row):
    """"3162x3162", or "9998244" for a vector."""
    return "x".join(map(str, row.shape))


def mark(row):
    """† where other work kept more than BUSY cores busy while the row was timed."""
    return " †" if row.elsewhere is not None and row.elsewhere > BUSY else ""


def ratio(row):
    """The peer's median over ours: above 1, we are faster."""
    return median(row.numpy) / median(row.nx)


def gbs(row, samples):
    return row.bytes_moved / median(samples) / 1e9


def bandwidth(lim, threads):
    """The machine's memory bandwidth on that many threads: the better of
    copy and triad."""
    tag = "1" if threads == 1 else "all"
    return max(lim[f"copy_{tag}"], lim[f"triad_{tag}"])


def fmt_time(s):
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_cores(c):
    return "an unmeasured share of a core" if c is None else f"{c:.2f} cores"


def fmt_bytes(b):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b} B"


def tool_version(*command):
    try:
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def cpu_family_model():
    """The CPU's family and model numbers, which tell apart models of one name."""
    found = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() in ("cpu family", "model") and key.strip() not in found:
                found[key.strip()] = value.strip()
    return f"family {found.get('cpu family', '?')}, model {found.get('model', '?')}"


def memory_gib():
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(CSV_HEADER)
        for r in rows:
            w.writerow([r.case, r.spec, shape(r), r.threads, f"{median(r.nx):.6e}", r.peer,
                        f"{median(r.numpy):.6e}", r.bytes_moved + r.nx_extra,
                        r.bytes_moved + r.numpy_extra])


def write_chart(path, rows, all_threads):
    """Horizontal bars of peer/ours on a log scale, one bar per case and
    thread setting, 1 marked: right of it we are faster."""
    labels = list(dict.fromkeys(f"{named(r)} {r.spec} {shape(r)}" for r in rows))
    settings = sorted({r.threads for r in rows})
    colors = {1: "#4c72b0", all_threads: "#dd8452"}
    height = 0.8 / len(settings)
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.3 * len(labels)))
    for j, t in enumerate(settings):
        by_label = {f"{named(r)} {r.spec} {shape(r)}": ratio(r) for r in rows if r.threads == t}
        ys = [i + (j - (len(settings) - 1) / 2) * height for i in range(len(labels))]
        values = [by_label[label] for label in labels]
        ax.barh(ys, values, height=height, color=colors[t],
                label=f"{t} thread" + ("s" if t > 1 else ""))
        for y, v in zip(ys, values):
            ax.text(v * 1.04, y, f"{v:.2g}", va="center", fontsize=6)
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_xscale("log")
    lo, hi = min(min(ratio(r) for r in rows), 1) / 1.5, max(max(ratio(r) for r in rows), 1) * 2
    ax.set_xlim(lo, hi)
    ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20) if lo <= t <= hi]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_xlabel("peer time / nx_cpu time (log scale; right of 1: nx_cpu faster)")
    ax.set_title("nx_cpu against numpy (or scipy where named), median time per call")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", linewidth=0.3, alpha=0.5)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def limits_table(lim, meta):
    n = meta["all_threads"]
    s = meta["settings"]
    lines = [f"| | 1 thread | all {n} threads |", "|---|---:|---:|"]
    for key, label in (("copy", "copy (GB/s)"), ("triad", "triad (GB/s)")):
        lines.append(f"| {label} | {lim[key + '_1']:.1f} | {lim[key + '_all']:.1f} |")
    for width, isa in ((512, "AVX-512"), (256, "AVX2")):
        for bits in (32, 64):
            key = f"fma{width}_f{bits}"
            if key + "_1" in lim:
                lines.append(f"| FMA float{bits}, {isa} (GFLOP/s) | {lim[key + '_1']:.0f} | "
                             f"{lim[key + '_all']:.0f} |")
    lines.append("")
    lines.append(
        f"Bandwidth: `bench/limits.c` (gcc -O3 -march=native, OpenMP), STREAM-like loops over "
        f"three arrays of {s.stream_mib} MiB of float64, pages first touched by the threads "
        f"that use them; `copy` is c = a, `triad` is a = b + 3c; bytes counted as STREAM "
        f"counts them (read plus written, not the write-allocate reads); best of "
        f"{s.limit_reps}. FMA: 12 independent chains of vector FMAs per thread (enough to "
        f"cover the latency on two FMA ports), 2 flops per lane, best of {s.limit_reps}. "
        f"Other work kept {fmt_cores(meta['limits_elsewhere'])} busy meanwhile.")
    return lines


def named(row):
    """The row's case, with its peer where that is not numpy."""
    return row.case if row.peer == "numpy" else f"{row.case} (vs {row.peer})"


def results_table(rows, lim, threads):
    limit = bandwidth(lim, threads)
    lines = [
        "| case | dtype | shape | nx median (min) | peer median (min) | peer/nx "
        "| nx GB/s (% limit) | peer GB/s (% limit) | operands | peak past operands: nx / peer |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in (r for r in rows if r.threads == threads):
        ours, theirs = gbs(r, r.nx), gbs(r, r.numpy)
        lines.append(
            f"| {named(r)} | {r.spec} | {shape(r)} "
            f"| {fmt_time(median(r.nx))} ({fmt_time(min(r.nx))}) "
            f"| {fmt_time(median(r.numpy))} ({fmt_time(min(r.numpy))}) "
            f"| **{ratio(r):.2f}**{mark(r)} "
            f"| {ours:.1f} ({100 * ours / limit:.0f}%) | {theirs:.1f} ({100 * theirs / limit:.0f}%) "
            f"| {fmt_bytes(r.bytes_moved)} | {fmt_bytes(r.nx_extra)} / {fmt_bytes(r.numpy_extra)} |")
    return lines


def summary(rows):
    """peer/nx for every case, one column per size (small, mid, large: the
    case's shape for each of the run's sides) and thread setting."""
    columns = sorted({(r.size, r.threads) for r in rows})
    table = {}
    for r in rows:
        table.setdefault((named(r), r.spec), {})[(r.size, r.threads)] = r
    lines = ["| case | dtype | shapes | " +
             " | ".join(f"{SIZES[size]}, {t} thr." for size, t in columns) + " |",
             "|---|---|---|" + "---:|" * len(columns)]
    for (case, spec), by in table.items():
        cells = [(f"**{ratio(by[c]):.2f}**" if ratio(by[c]) >= 1 else f"{ratio(by[c]):.2f}") + mark(by[c])
                 if c in by else "" for c in columns]
        shapes = " / ".join(dict.fromkeys(shape(by[c]) for c in columns if c in by))
        lines.append(f"| {case} | {spec} | {shapes} | " + " | ".join(cells) + " |")
    slower = sum(ratio(r) < 1 for r in rows)
    busy = sum(mark(r) != "" for r in rows)
    lines += ["", f"We are faster (bold) in {len(rows) - slower} of {len(rows)} rows, "
              f"slower in {slower}."]
    if busy:
        lines += ["", f"† ({busy} rows): other processes kept more than {BUSY} of a core busy "
                  f"on average while the row was timed; its all-thread figures are the "
                  f"least trustworthy."]
    return lines


def fma_peak(lim, spec, threads):
    """The machine's FMA peak in GFLOP/s for a dtype spec's acc precision
    (float64 for float64 and complex128, float32 otherwise), on the widest
    vectors measured, or None."""
    acc = spec.split("->")[-1]
    bits = 64 if acc in ("float64", "complex128") else 32
    tag = "1" if threads == 1 else "all"
    found = [lim[k] for k in (f"fma512_f{bits}_{tag}", f"fma256_f{bits}_{tag}") if k in lim]
    return max(found) if found else None


def flops_table(rows, lim):
    """GFLOP/s of the rows whose case counts its flops, and their share of
    the FMA peak."""
    counted = [r for r in rows if r.flops]
    if not counted:
        return ["No case of this run counts its flops."]
    lines = ["Real flops per call: 2mkn for a real product (8mkn complex), 5 n log2 n per "
             "transform line, n³/3 (cholesky), 2n³/3 (lu), n³ (solve_triangular, n right-hand "
             "sides), 4n³/3 (qr), times 4 for complex matrices. Medians.", "",
             "| case | dtype | shape | threads | nx GFLOP/s (% FMA peak) | peer GFLOP/s |",
             "|---|---|---|---:|---:|---:|"]
    for r in counted:
        ours, theirs = r.flops / median(r.nx) / 1e9, r.flops / median(r.numpy) / 1e9
        peak = fma_peak(lim, r.spec, r.threads)
        share = f" ({100 * ours / peak:.0f}%)" if peak else ""
        lines.append(f"| {named(r)} | {r.spec} | {shape(r)} | {r.threads} | {ours:.1f}{share} "
                     f"| {theirs:.1f} |")
    return lines


def hidden(extra, row):
    """Whether a peak past the operands is more than allocator noise."""
    return extra > max(256 * 1024, row.bytes_moved // 100)


def memory_findings(rows):
    found = {}
    for r in rows:
        if hidden(r.nx_extra, r):
            found[("nx", r.case, r.spec, shape(r), r.threads)] = (r.nx_extra, r.bytes_moved)
        if hidden(r.numpy_extra, r):
            found[(r.peer, r.case, r.spec, shape(r), None)] = (r.numpy_extra, r.bytes_moved)
    if not found:
        return ["None above allocator noise (256 KiB or 1% of the operands)."]
    return [f"- {who}: {case} {spec} {sh}" + (f", {t} thread(s)" if t else "") +
            f": {fmt_bytes(extra)} past {fmt_bytes(io)} of operands"
            for (who, case, spec, sh, t), (extra, io) in found.items()]


def blas_lines(meta):
    out = []
    for lib in meta["blas"]:
        out.append(f"- numpy's {lib.get('user_api')} library: {lib.get('internal_api')} "
                   f"{lib.get('version')}, kernel `{lib.get('architecture')}`, threading "
                   f"`{lib.get('threading_layer')}`, {lib.get('num_threads')} threads "
                   f"(`{os.path.basename(lib.get('filepath', ''))}`).")
    simd = ", ".join(meta["numpy_simd"]) or "none"
    if meta["peer_env"]:
        out.append("- numpy held to what a machine without AVX-512 gives it, as our side is: " +
                   ", ".join(f"`{k}={v}`" for k, v in meta["peer_env"].items()) +
                   f" for numpy's process; its SIMD targets past the baseline: {simd}.")
    else:
        out.append(f"- numpy's SIMD targets past its baseline that this machine runs: {simd}.")
    unset = meta["unset"]
    if unset:
        out.append("- Unset for numpy's process only: " +
                   ", ".join(f"`{k}={v}`" for k, v in unset.items()) + ".")
    else:
        out.append("- `OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE` were not set here; the harness "
                   "unsets them for numpy's process only where they are (before the AVX2 run "
                   "sets its own).")
    return out


def other_work_method(s):
    said = ("- Other work: the harness reads, from /proc/stat less our processes' CPU time, how "
            "many cores other processes kept busy while each row was timed (rows of at least "
            "half a second).")
    if not s.retry_s:
        return said + " A quick run's rows are shorter: only the run's mean (above) counts."
    return said + (f" A row past {BUSY} of a core is timed again after up to 10 s of waiting "
                   f"for a quiet machine, at most three times in all and within {s.retry_s:.0f} s "
                   f"for the run, keeping the least disturbed attempt; † marks the rows still "
                   f"disturbed.")


ISA_NAMES = {"avx512": "AVX-512 (F, VL, DQ, BW) where a kernel has that compilation, AVX2 otherwise",
             "avx2": "AVX2, the baseline", "baseline": "the architecture's baseline"}


def isa_line(meta):
    """Which instruction set our kernels ran, and whether it was forced."""
    forced = f" (forced by NX_CPU_ISA={meta['isa_forced']})" if meta["isa_forced"] else ""
    return f"- Our kernels' path: {ISA_NAMES.get(meta['isa'], meta['isa'])}{forced}."


FIXED = ("add_one", "sum_one")  # the one-element cases: a call's fixed cost


def fixed_cost(rows):
    """The one-element cases' times on each side: what a call costs beyond
    its work."""
    found = [r for r in rows if r.case in FIXED]
    if not found:
        return ["Not measured in this run (cases `add_one`, `sum_one`)."]
    lines = ["One element: a call's time is its fixed cost (decoding, checks, planning, the "
             "door). Medians, min in brackets.", "",
             "| case | threads | nx | numpy |", "|---|---:|---:|---:|"]
    for r in found:
        lines.append(f"| {r.case} | {r.threads} | {fmt_time(median(r.nx))} ({fmt_time(min(r.nx))}) "
                     f"| {fmt_time(median(r.numpy))} ({fmt_time(min(r.numpy))}) |")
    return lines


def write_markdown(path, rows, lim, meta):
    s = meta["settings"]
    n = meta["all_threads"]
    (l1, _, _), (l2, _, _) = meta["load"]
    mode = "make bench QUICK=1" if meta["quick"] else "make bench"
    if meta["only"]:
        mode = f"bench/run.sh{' --quick' if meta['quick'] else ''} --only {meta['only']}"
    lines = [
        "# nx_cpu against numpy and scipy",
        "",
        f"Written by `{mode}` (bench/run.sh) on {time.strftime('%Y-%m-%d %H:%M %Z')}, "
        f"whose measurements took {meta['seconds']:.0f} s. Every figure below comes from that run.",
        "",
        "## Machine",
        "",
        f"- {cpu_model()} ({cpu_family_model()}), {n} threads for the process, {memory_gib():.0f} GiB of memory, "
        f"{platform.system()} {platform.release()}.",
        f"- Other work on the machine kept {fmt_cores(meta['elsewhere'])} busy on average "
        f"while the cases were timed (from /proc/stat, less our processes' CPU time); load "
        f"average (1 min) {l1:.2f} before the run and {l2:.2f} after. Other work slows the "
        f"all-thread figures first.",
        isa_line(meta),
        f"- numpy {np.__version__}, scipy {scipy.__version__} on Python {platform.python_version()}; OCaml "
        f"{tool_version('ocamlfind', 'ocamlopt', '-version')}; gcc {tool_version('gcc', '-dumpfullversion')}.",
        *blas_lines(meta),
        "",
        "## The machine's limits",
        "",
        *limits_table(lim, meta),
        "",
        "## Method",
        "",
        "- Each case runs through the public API over `Nx_array` operands, from an OCaml "
        "executable (`bench/nx_bench.ml`, built in dune's release profile, as `opam install` "
        "builds the library), as `bench/cases.ml` says: a map is `Nx_cpu.map` of "
        "an `Nx_kernel.Prog` program; a reduction `Nx_cpu.reduce`, and `cumsum` `Nx_cpu.scan` "
        "along its one axis, of the identity program of their input, which they read in place. "
        "The reductions are `Nx_kernel`'s: `sum` and the axis sums Monoid Sum, `max` Monoid "
        "Max, `argmax` Arg Max (the extreme and its position), `mean` Monoid Sum followed by "
        "a map dividing the sum by the count in place (numpy's `x.mean()` also sums, then "
        "divides), `var` Moments (two passes, which give the mean and the variance together), "
        "`logsumexp` Logsumexp, "
        "`cumsum` a Monoid Sum scan. numpy runs the same case (`bench/cases.py`): into a "
        "preallocated output (`out=`) for a map, an axis sum and `cumsum`, otherwise by the "
        "array's method (`x.sum()`, `x.max()`, `x.argmax()`, `x.mean()`, `x.var()`) or, for "
        "`logsumexp`, by `m = x.max(); m + np.log(np.exp(x - m).sum())`. Inputs hold the same "
        "values on both sides, in [-10, 10]. `fma` is one fused program on our side; numpy "
        "computes `a * b` into a temporary, then adds `c`.",
        "- The kernel families' cases (`bench/kernel_cases.ml`, `bench/kernel_cases.py`) call "
        "`Nx_cpu.contract`, `gather`, `scatter`, `assemble`, `sort`, `c2c`, `r2c`, `c2r`, "
        "`cholesky`, `lu`, `solve_triangular` and `qr` on operands of the same values on both "
        "sides (splitmix64 of the element's index). Their peer is numpy (`np.matmul` into `out=`, "
        "`np.sort`, `np.argsort(kind=\"stable\")`, `np.argpartition` then sorting the k, "
        "`np.take` into `out=`, `np.add.at`, `x[idx] = u`, `np.concatenate` into `out=`, "
        "`np.linalg.cholesky`, `np.linalg.qr`), or scipy where named, being faster there "
        "(`scipy.fft` with `workers=` the thread setting, `scipy.linalg.lu_factor`, "
        "`scipy.linalg.solve_triangular`). Their shapes are their parameters: m x k x n for a "
        "product, b x m x k x n batched, m x k a matrix by a vector; n x k for `top_k`; n x m "
        "for m positions into or out of n; rows x width x m for `take_rows`; pieces x n for "
        "`assemble`; the operand's shape for transforms and matrix routines. `matmul_int8` "
        "runs numpy on int32 copies (it has no int8 product into int32); `matmul_f16` runs "
        "numpy's float16 product.",
        f"- Shapes follow the run's sides ({', '.join(map(str, s.sides))}; the summary calls "
        f"them small, mid and large in turn): a map runs side x side matrices, `.T` reading every input through "
        f"its transpose (a view, strides swapped) into a contiguous output; `sum_axis0` and "
        f"`sum_axis1` side x side matrices, 4096x4096 for side 3162, along axis 0 and axis 1; "
        f"the other reductions and `cumsum` a vector of side² elements (9998244, about 10M, "
        f"for side 3162), whole; `add_one` and `sum_one` one element, whatever the sides.",
        f"- Timing alternates: for each case and thread setting both sides warm up (at least "
        f"{1000 * s.warmup_s:.0f} ms and 3 calls), then {s.reps} rounds each take one sample of ours "
        f"and one of numpy's, the order swapped every round, so drift hits both. A sample is "
        f"enough back-to-back calls to last {1000 * s.sample_s:.0f} ms (at least one), timed "
        f"around the loop; its time is per call. We report the median and the min of the samples. "
        f"On several threads each of the peer's samples is followed by a wait for its threads "
        f"to sleep (OpenBLAS's spin well over a tenth of a second after a call): until a window "
        f"of {1000 * SETTLE_QUIET_S:.0f} ms in which numpy's process used under a twentieth of it "
        f"in CPU time, {SETTLE_MOST_S:.0f} s at most, so that no sample of ours shares a core with them.",
        other_work_method(s),
        f"- Threads: ours through `Nx_cpu.set_threads` (1, then all {n}); numpy's through "
        f"threadpoolctl. numpy's elementwise functions, reductions and scans run on one thread "
        f"whatever the setting, so its all-thread figures are single-thread ones.",
        "- GB/s counts each element of the operands once (inputs read, output written where "
        "it is an array), as STREAM does; % limit is against the better of copy and triad at "
        "the same thread count. Cases that fit in the caches (the small and mid ones; on a "
        "machine with a large last-level cache, also the large ones, which the timing loop "
        "reads again and again) can pass 100%.",
        "- Peak memory: each case runs again in a fresh process (`nx_bench peak`, `peak.py`) "
        "with glibc's mmap threshold fixed at 64 KiB, so that every block from 64 KiB up is "
        "mapped afresh and unmapped when freed. Once the operands are allocated and written, "
        "the process resets its peak resident size (`/proc/self/clear_refs`), makes three "
        "calls and reads the peak (`VmHWM`) less the resident size before them: the memory a "
        "call needs past its operands, a hidden copy or temporary. results.csv gives operands "
        "plus that peak; below a few pages it is allocator noise.",
        "",
        "## Summary: peer time / nx time",
        "",
        "Above 1 we are faster. Medians; every figure is in the tables below.",
        "",
        *summary(rows),
        "",
        "## The issues' floors",
        "",
        *floors.table(floors.read_results(os.path.join(os.path.dirname(path), "results.csv")),
                      floors.read_floors(os.path.join(os.path.dirname(__file__), "floors.csv"))),
        "",
        "## Flops",
        "",
        *flops_table(rows, lim),
        "",
        "## Fixed cost of a call",
        "",
        *fixed_cost(rows),
        "",
        "## Results",
        "",
        *[line for t in sorted({1, n}) for line in
          (f"### {t} thread" + ("s" if t > 1 else ""), "", *results_table(rows, lim, t), "")],
        "## Memory past the operands",
        "",
        *memory_findings(rows),
        "",
        "## Chart",
        "",
        "![numpy time / nx_cpu time per case](ratios.png)",
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def write(out_dir, rows, lim, meta):
    # results.csv first: RESULTS.md's floors section reads it back.
    write_csv(os.path.join(out_dir, "results.csv"), rows)
    write_chart(os.path.join(out_dir, "ratios.png"), rows, meta["all_threads"])
    write_markdown(os.path.join(out_dir, "RESULTS.md"), rows, lim, meta)
