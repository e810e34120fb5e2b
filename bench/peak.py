"""Peak memory of one numpy case, in a fresh process, measured as rss.ml
measures ours: the bytes by which resident memory grows over three calls,
past the operands (allocated and written first).

Usage: python peak.py CASE SPEC SHAPE LAYOUT   (SHAPE as "3162x3162" or "9998244")"""

import gc
import sys

import cases


def status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def main(name: str, spec: str, shape_name: str, layout: str) -> None:
    shape = tuple(int(e) for e in shape_name.split("x"))
    # A first small call loads what numpy loads lazily before the baseline.
    cases.call(name, spec, tuple(min(e, 8) for e in shape), layout)()
    f = cases.call(name, spec, shape, layout)
    gc.collect()
    before = 1024 * status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as r:
        r.write("5")
    for _ in range(3):
        f()
    print(max(0, 1024 * status_kib("VmHWM") - before))


if __name__ == "__main__":
    main(*sys.argv[1:])
