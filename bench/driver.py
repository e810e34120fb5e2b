"""Runs the benchmarks: the machine's limits, then every case of cases.py (or
those --only names) on our side (nx_bench serve, the same case of cases.ml)
and numpy's, in alternation, on one thread and on all, then each case's peak
memory; writes the results through report.py.

Usage: python driver.py [--quick] [--only CASE,...] --nx NX_BENCH --limits LIMITS --out DIR"""

import os

# OpenBLAS settings that this machine may set for older builds and that slow
# a current numpy: unset for numpy alone (this process), kept for the others.
NUMPY_UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
ORIGINAL_ENV = dict(os.environ)
for _var in NUMPY_UNSET:
    os.environ.pop(_var, None)

# A run of our AVX2 path (NX_CPU_ISA=avx2) stands for a machine without
# AVX-512, so numpy is held to what such a machine gives it: its dispatch to
# the AVX2 targets (numpy 2.5 names those past them X86_V4, AVX512_ICL and
# AVX512_SPR) and OpenBLAS to its Haswell kernels, set before numpy loads;
# check_peer refuses the run where numpy or a BLAS still runs wider.
AVX2_PEER = {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR", "OPENBLAS_CORETYPE": "Haswell"}
PEER_ENV = AVX2_PEER if os.environ.get("NX_CPU_ISA") == "avx2" else {}
os.environ.update(PEER_ENV)

import argparse  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402

import cases  # noqa: E402
import kernel_cases  # noqa: E402
import report  # noqa: E402

# A fixed malloc threshold makes glibc map every block of 64 KiB or more
# afresh and unmap it when freed, so resident memory follows what is live.
PEAK_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "0"}


@dataclass(frozen=True)
class Settings:
    sides: tuple[int, ...]  # small, mid, large: each case's shapes follow them
    reps: int  # timed samples per library
    sample_s: float  # least duration of one sample
    warmup_s: float  # least duration of the warm-up
    stream_mib: int  # MiB per array of the bandwidth measurement
    limit_reps: int
    retry_s: float  # time the run may spend timing disturbed rows again


# The full run's warm-up: a pass over 10M float32 ran up to a third slower
# over its first 150 ms of calls than after; both sides warm up alike.
FULL = Settings((32, 316, 3162), 15, 0.02, 0.3, 512, 5, 180)
QUICK = Settings((32, 316), 5, 0.003, 0.01, 256, 3, 0)


@dataclass
class Row:
    case: str  # the name, ".T" added for transposed inputs
    spec: str
    shape: tuple[int, ...]
    size: int  # the index of the run's side the shape follows
    threads: int
    bytes_moved: int
    peer: str  # the library timed beside us: numpy, or scipy
    flops: int  # real flops of a call where the case counts them, else 0
    nx: list[float] = field(default_factory=list)
    numpy: list[float] = field(default_factory=list)
    nx_extra: int = 0  # peak bytes past the operands
    numpy_extra: int = 0
    elsewhere: float | None = None  # cores busy with other work while timed


class Nx:
    """Our side: a nx_bench serve process."""

    def __init__(self, exe: str):
        self.exe = exe
        self.proc = subprocess.Popen([exe, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=ORIGINAL_ENV)

    def ask(self, command: str) -> str:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().strip()
        if not reply or reply.startswith("error"):
            sys.exit(f"nx_bench: {command}: {reply or 'no answer'}")
        return reply

    def time(self, k: int) -> float:
        return float(self.ask(f"time {k}"))

    def cpu_s(self) -> float:
        """CPU seconds the process has used."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def numpy_timer(f):
    """Seconds per call over k calls of f."""
    def time_k(k: int) -> float:
        t = time.perf_counter()
        for _ in range(k):
            f()
        return (time.perf_counter() - t) / k
    return time_k


def calls_per_sample(time_k, s: Settings) -> int:
    """Warms up, then the calls that make a sample last sample_s."""
    start, best, n = time.perf_counter(), math.inf, 0
    while n < 3 or time.perf_counter() - start < s.warmup_s:
        best, n = min(best, time_k(1)), n + 1
    k = 1
    while best <= 0:  # one call below the clock's resolution: time batches
        k *= 10
        best = time_k(k)
    return max(1, math.ceil(s.sample_s / best))


def machine_busy_s() -> float:
    """CPU seconds every core of the machine has spent busy (steal included)."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, f.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class OtherWork:
    """The cores that processes other than ours keep busy from now on: this
    one, its finished children and nx_bench serve are ours."""

    def __init__(self, nx: Nx | None):
        self.nx = nx
        self.start = self.reading()

    def reading(self) -> tuple[float, float, float]:
        ours = sum(os.times()[:4]) + (self.nx.cpu_s() if self.nx else 0.0)
        return time.perf_counter(), machine_busy_s(), ours

    def cores(self) -> float | None:
        """Their mean busy cores so far, or None over less than half a
        second, where the kernel's accounting (in ticks) is too coarse."""
        (w0, b0, o0), (w1, b1, o1) = self.start, self.reading()
        return max(0.0, (b1 - b0 - (o1 - o0)) / (w1 - w0)) if w1 - w0 >= 0.5 else None


def settle() -> None:
    """Waits until the threads of this process, numpy's, have gone to sleep:
    the first window of report.SETTLE_QUIET_S in which they used under a
    twentieth of it in CPU time, or report.SETTLE_MOST_S."""
    start = time.perf_counter()
    while time.perf_counter() - start < report.SETTLE_MOST_S:
        cpu = time.process_time()
        time.sleep(report.SETTLE_QUIET_S)
        if time.process_time() - cpu < report.SETTLE_QUIET_S / 20:
            return


def samples(nx: Nx, numpy_time, s: Settings, threads: int) -> tuple[list[float], list[float], float | None]:
    """Interleaved samples of both sides, the order swapped every round, and
    the cores other work kept busy meanwhile."""
    other = OtherWork(nx)
    k_nx, k_np = calls_per_sample(nx.time, s), calls_per_sample(numpy_time, s)
    ours, theirs = [], []
    for r in range(s.reps):
        pair = [(ours, nx.time, k_nx), (theirs, numpy_time, k_np)]
        for into, time_k, k in pair if r % 2 == 0 else reversed(pair):
            into.append(time_k(k))
            if into is theirs and threads > 1:
                settle()
    return ours, theirs, other.cores()


def disturbed(cores: float | None) -> bool:
    return cores is not None and cores > report.BUSY


@dataclass
class Retries:
    seconds_left: float  # for timing disturbed rows again, over the run


def measure(row: Row, nx: Nx, numpy_time, s: Settings, retries: Retries) -> None:
    """Times the row; while other work disturbs it and the retries last,
    waits up to 10 s for a quiet machine and times it again, up to three
    times in all, keeping the least disturbed attempt."""
    row.nx, row.numpy, row.elsewhere = samples(nx, numpy_time, s, row.threads)
    for _ in range(2):
        if not disturbed(row.elsewhere) or retries.seconds_left <= 0:
            return
        start = time.perf_counter()
        while time.perf_counter() - start < 10 and disturbed(other_cores_over(nx, 0.5)):
            pass
        attempt = samples(nx, numpy_time, s, row.threads)
        if (attempt[2] or 0.0) < row.elsewhere:
            row.nx, row.numpy, row.elsewhere = attempt
        retries.seconds_left -= time.perf_counter() - start


def other_cores_over(nx: Nx, seconds: float) -> float | None:
    """The cores other work keeps busy over the next few seconds."""
    other = OtherWork(nx)
    time.sleep(seconds)
    return other.cores()


def peak(command: list[str], env: dict) -> int:
    out = subprocess.run(command, env={**env, **PEAK_ENV}, check=True, capture_output=True, text=True)
    return int(out.stdout)


def limits(exe: str, s: Settings) -> dict[str, float]:
    out = subprocess.run([exe, str(s.stream_mib), str(s.limit_reps)], env=ORIGINAL_ENV,
                         check=True, capture_output=True, text=True)
    return {k: float(v) for k, v in (line.split() for line in out.stdout.splitlines())}


def bench(nx: Nx, name: str, spec: str, size: int, shape: tuple[int, ...], layout: str,
          all_threads: int, s: Settings, retries: Retries) -> list[Row]:
    """The rows of one case, dtype, shape and layout: one a thread setting."""
    label = name + (".T" if layout == "T" else "")
    shape_name = cases.shape_name(shape)
    print(f"{label:10} {spec:18} {shape_name}", flush=True)
    nx.ask(f"setup {name} {spec} {shape_name} {layout}")
    numpy_time = numpy_timer(cases.call(name, spec, shape, layout))
    args = [name, spec, shape_name, layout]
    numpy_extra = peak([sys.executable, os.path.join(os.path.dirname(__file__), "peak.py"), *args],
                       dict(os.environ))
    rows = []
    for threads in sorted({1, all_threads}):
        row = Row(label, spec, shape, size, threads, cases.bytes_moved(name, spec, shape),
                  cases.peer(name), cases.flops(name, spec, shape))
        nx.ask(f"threads {threads}")
        kernel_cases.threads = threads
        with threadpool_limits(limits=threads):
            measure(row, nx, numpy_time, s, retries)
        row.nx_extra = peak([nx.exe, "peak", *args, str(threads)], ORIGINAL_ENV)
        row.numpy_extra = numpy_extra
        rows.append(row)
    return rows


def selected(only: str | None) -> list[cases.Case]:
    """The cases --only names (comma-separated), in the table's order; every
    case without it."""
    if only is None:
        return cases.ALL
    names = [n for n in only.split(",") if n]
    unknown = [n for n in names if n not in {c.name for c in cases.ALL}]
    if unknown or not names:
        sys.exit(f"--only {only}: no case {', '.join(unknown)}; the cases are "
                 f"{','.join(c.name for c in cases.ALL)}")
    return [c for c in cases.ALL if c.name in names]


def numpy_simd() -> list[str]:
    """The SIMD targets numpy dispatches to here, past its baseline."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    return [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]


def check_peer() -> None:
    """Exits where PEER_ENV holds numpy to AVX2 but numpy found a wider
    target or a BLAS library runs other kernels than Haswell's."""
    if not PEER_ENV:
        return
    wider = [t for t in numpy_simd() if t != "X86_V3"]
    kernels = {lib.get("architecture") for lib in threadpool_info() if lib.get("internal_api") == "openblas"}
    if wider or kernels - {"Haswell"}:
        sys.exit(f"driver: numpy is not held to AVX2: targets {wider}, OpenBLAS kernels {sorted(kernels)}")


def run(args) -> None:
    s = QUICK if args.quick else FULL
    check_peer()
    chosen = selected(args.only)
    started = time.time()
    load_before = os.getloadavg()
    print("machine limits ...", flush=True)
    other = OtherWork(None)
    lim = limits(args.limits, s)
    limits_elsewhere = other.cores()
    all_threads = int(lim["threads_all"])
    nx = Nx(args.nx)
    isa = nx.ask("isa")
    other, retries = OtherWork(nx), Retries(s.retry_s)
    rows = [row for case in chosen for spec in case.specs
            for size, shape in enumerate(case.shapes(s.sides)) if shape is not None
            for layout in case.layouts for row in bench(nx, case.name, spec, size, shape, layout, all_threads, s, retries)]
    elsewhere = other.cores()
    nx.close()
    meta = {
        "elsewhere": elsewhere,
        "limits_elsewhere": limits_elsewhere,
        "quick": args.quick,
        "only": args.only,
        "settings": s,
        "seconds": time.time() - started,
        "load": (load_before, os.getloadavg()),
        "blas": threadpool_info(),
        "unset": {v: ORIGINAL_ENV[v] for v in NUMPY_UNSET if v in ORIGINAL_ENV},
        "peer_env": PEER_ENV,
        "numpy_simd": numpy_simd(),
        "all_threads": all_threads,
        "isa": isa,
        "isa_forced": os.environ.get("NX_CPU_ISA", ""),
    }
    report.write(args.out, rows, lim, meta)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", help="the cases to run, comma-separated (all by default)")
    p.add_argument("--nx", required=True)
    p.add_argument("--limits", required=True)
    p.add_argument("--out", required=True)
    run(p.parse_args())
