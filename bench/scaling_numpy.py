"""numpy's side of bench/scaling.sh: its matmul on each thread count given
(as "1,2,4"), then its sort, stable argsort, add and exp on one thread (numpy
runs them on one whatever the setting). Each the best of a few calls."""
import sys
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits


def best(f, reps: int) -> float:
    f()
    least = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        f()
        least = min(least, time.perf_counter() - t)
    return least


def main() -> None:
    threads = [int(t) for t in sys.argv[1].split(",")]
    print("blas:", ", ".join(f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}" for i in threadpool_info()))
    rng = np.random.default_rng(1)
    n = 2048
    for d in (np.float32, np.float64):
        a, b = rng.random((n, n)).astype(d), rng.random((n, n)).astype(d)
        out = np.empty_like(a)
        rates = []
        for t in threads:
            with threadpool_limits(t):
                s = best(lambda: np.matmul(a, b, out=out), 5)
            rates.append(f"{t} thr {2 * n**3 / s / 1e9:7.1f}")
        print(f"matmul {np.dtype(d).name} {n}^3 GFLOP/s: " + " | ".join(rates))
    x = rng.random(10_000_000).astype(np.float32)
    y = rng.integers(0, 2**63, 10_000_000, dtype=np.int64)
    print(f"sort float32 10M            {1e3 * best(lambda: np.sort(x), 3):10.3f} ms")
    print(f"argsort stable float32 10M  {1e3 * best(lambda: np.argsort(x, kind='stable'), 2):10.3f} ms")
    print(f"sort int64 10M              {1e3 * best(lambda: np.sort(y), 3):10.3f} ms")
    a = rng.random((3162, 3162)).astype(np.float32)
    b, o = a.copy(), np.empty_like(a)
    print(f"add float32 3162^2          {1e6 * best(lambda: np.add(a, b, out=o), 10):10.3f} µs")
    print(f"exp float32 3162^2          {1e6 * best(lambda: np.exp(a, out=o), 10):10.3f} µs")


if __name__ == "__main__":
    main()
