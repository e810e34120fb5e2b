#!/usr/bin/env bash
# How the kernels scale past the two threads of CI's machine: each kernel
# family's Rust timing test (contract, sort, unique, map) on 1, 2, 4, ...
# threads up to the machine's, then numpy's on as many (scaling_numpy.py),
# where Python has numpy and threadpoolctl. Not part of `make bench`.
#
#   bash bench/scaling.sh            # builds the crate's tests (release), then runs
#   bash bench/scaling.sh TESTS_EXE  # runs a test binary built elsewhere (a machine
#                                    # without the toolchain: copy it and this folder)
#
# Times are the tests' own: wall clock on several threads, CPU time on one
# (map, sort, unique), the best of a few calls.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exe=${1-}
if [[ -z $exe ]]; then
  cd "$here/.."
  exe=$(cargo test --release --no-default-features --lib --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json, sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
fi
cores=$(nproc)
threads=()
for ((t = 1; t < cores; t *= 2)); do threads+=("$t"); done
threads+=("$cores")
list=$(IFS=,; echo "${threads[*]}")
run() { timeout 300 "$exe" "$@" --ignored --nocapture --test-threads 1 2>&1 | grep -E ' ms| µs|GFLOP|panicked' | sed 's/^test [^ ]* \.\.\. //' || true; }

echo "== machine: $cores threads; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
echo "   $(grep -o 'avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
for c in /sys/devices/system/cpu/cpu0/cache/index*; do
  if [[ -r $c/size ]]; then echo "   L$(cat "$c/level") $(cat "$c/type") $(cat "$c/size")"; fi
done
echo "== contract (GFLOP/s by the wall clock)"
CONTRACT_THREADS=$list CONTRACT_SPEED=2048 run contract::tests::thread_speed
for t in "${threads[@]}"; do
  echo "== $t threads: sort, unique, map"
  SORT_THREADS=$t SORT_ONLY=10M run sort::bench
  UNIQUE_THREADS=$t run unique::bench
  MAP_THREADS=$t MAP_BENCH=add,exp MAP_SIDES=3162 run loops::map::bench | grep -v '^raw' || true
done
if python3 -c 'import numpy, threadpoolctl' 2>/dev/null; then
  echo "== numpy"
  python3 "$here/scaling_numpy.py" "$list"
fi
