"""The floors the open issues set, checked against a results.csv.

floors.csv holds one floor per line: the issue that sets it, the rows it
covers (case, dtype and shape as fnmatch patterns, `|` between alternative
cases; threads 1, all or both), and what those rows must meet: a least ratio
(peer time / ours), a greatest time of ours in seconds, or, where
peak_within_peer says yes, memory past the operands no more than the peer's.
A floor that no row of the run matches is reported as not measured, which
is not met.

    python3 bench/floors.py [results.csv] [floors.csv]

prints the table that RESULTS.md carries (section "The issues' floors").
"""

import csv
import os
import sys
from fnmatch import fnmatchcase

HERE = os.path.dirname(os.path.abspath(__file__))


def read_floors(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_results(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def covers(floor, row, all_threads):
    """Whether the floor speaks of this row of results.csv."""
    t = int(row["threads"])
    wanted = {"1": {1}, "all": {all_threads}, "both": {1, all_threads}}[floor["threads"]]
    return (t in wanted
            and any(fnmatchcase(row["case"], c) for c in floor["case"].split("|"))
            and fnmatchcase(row["dtype"], floor["dtype"])
            and fnmatchcase(row["shape"], floor["shape"]))


def verdict(floor, row):
    """(what the row shows, whether it meets the floor)."""
    nx, peer = float(row["nx_median_s"]), float(row["peer_median_s"])
    shown, ok = [], True
    if floor["min_ratio"]:
        r = peer / nx
        shown.append(f"{r:.2f} (>= {float(floor['min_ratio']):g})")
        ok &= r >= float(floor["min_ratio"])
    if floor["max_nx_s"]:
        shown.append(f"{nx * 1e9:.0f} ns (<= {float(floor['max_nx_s']) * 1e9:.0f} ns)")
        ok &= nx <= float(floor["max_nx_s"])
    if floor["peak_within_peer"] == "yes":
        ours, theirs = int(row["nx_peak_bytes"]), int(row["peer_peak_bytes"])
        shown.append(f"peak {ours / 2**20:.0f} MiB (<= {theirs / 2**20:.0f} MiB)")
        ok &= ours <= theirs
    return "; ".join(shown), ok


def check(results, floors):
    """One entry per (floor, row) pair, and one per floor no row matches:
    (issue, row name, threads, shown, ok), ok None where unmeasured."""
    all_threads = max((int(r["threads"]) for r in results), default=1)
    out = []
    for fl in floors:
        rows = [r for r in results if covers(fl, r, all_threads)]
        if not rows:
            name = f"{fl['case']} {fl['dtype']} {fl['shape']}"
            out.append((fl["issue"], name, fl["threads"], "not measured", None))
        for r in rows:
            shown, ok = verdict(fl, r)
            out.append((fl["issue"], f"{r['case']} {r['dtype']} {r['shape']}",
                        r["threads"], shown, ok))
    return out


def table(results, floors):
    """Markdown lines: per issue, how many of its checks pass, miss or were
    not measured, then every check that misses, then the unmeasured ones."""
    checks = check(results, floors)
    issues = sorted({c[0] for c in checks}, key=int)
    lines = ["Each open issue's speed floors (`bench/floors.csv`) against this run: "
             "how many of its checks pass, then each that misses. A floor no row of the "
             "run matches is not measured, and so not met.", "",
             "| issue | met | missed | not measured |", "|---|---:|---:|---:|"]
    for i in issues:
        mine = [c[4] for c in checks if c[0] == i]
        lines.append(f"| {i} | {mine.count(True)} | {mine.count(False)} | {mine.count(None)} |")
    lines += ["", "| issue | row | threads | ours against the floor |", "|---|---|---:|---|"]
    lines += [f"| {i} | {name} | {t} | {shown} |" for i, name, t, shown, ok in checks if ok is False]
    unmeasured = [f"{i}: {name} ({t})" for i, name, t, _, ok in checks if ok is None]
    if unmeasured:
        lines += ["", "Not measured: " + "; ".join(unmeasured) + "."]
    return lines


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results.csv")
    floors = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "floors.csv")
    print("\n".join(table(read_results(results), read_floors(floors))))


if __name__ == "__main__":
    main()
