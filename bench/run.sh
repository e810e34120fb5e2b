#!/usr/bin/env bash
# Benchmarks nx_cpu side by side with numpy (`make bench`, QUICK=1 for
# --quick): sets up a pinned Python environment in _build/bench-venv, builds
# the OCaml side and the machine-limits probe, runs every case and writes
# bench/RESULTS.md, bench/results.csv and bench/ratios.png.
#
# Usage: bash bench/run.sh [--quick] [--only CASE,...] [--isa avx2]   (with the toolchain
# on the PATH, as tools/in-root gives it; run from anywhere). --only runs
# those cases alone and writes into _build/bench-only instead of bench/, so
# that bench/ keeps the last whole run. --isa avx2 runs our kernels on the
# AVX2 baseline whatever the CPU has (NX_CPU_ISA=avx2), numpy and its
# OpenBLAS held to their AVX2 paths likewise (driver.py's AVX2_PEER), and
# writes a whole run into bench/avx2 instead.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v dune >/dev/null 2>&1; then exec tools/in-root bash bench/run.sh "$@"; fi

usage() { echo "usage: bench/run.sh [--quick] [--only CASE,...] [--isa avx2]" >&2; exit 2; }
options=()
out=bench
while (($#)); do
  case $1 in
    --quick) options+=(--quick) ;;
    --only)
      (($# >= 2)) || usage
      options+=(--only "$2")
      out=_build/bench-only
      shift
      ;;
    --isa)
      (($# >= 2)) && [[ $2 == avx2 ]] || usage
      export NX_CPU_ISA=avx2
      isa_out=bench/avx2
      shift
      ;;
    *) usage ;;
  esac
  shift
done

# A whole run on the forced baseline goes beside the default one.
if [[ -n ${isa_out-} && $out == bench ]]; then out=$isa_out; fi

start=$SECONDS
venv=_build/bench-venv
# Reinstalls when requirements.txt changes.
if ! cmp -s bench/requirements.txt "$venv/requirements.txt"; then
  echo "bench: setting up $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  # A wheel folder that this machine names but lacks only makes pip warn.
  if [[ -n ${PIP_FIND_LINKS-} && ! -d $PIP_FIND_LINKS ]]; then unset PIP_FIND_LINKS; fi
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r bench/requirements.txt
  cp bench/requirements.txt "$venv/requirements.txt"
fi

echo "bench: building"
bin=_build/bench-bin
mkdir -p "$bin" "$out"
# The release profile, as `opam install` builds the library: dune's default
# (dev) compiles each module -opaque, so no OCaml call is inlined across modules.
dune build --profile release bench/nx_bench.exe
# A copy, which a concurrent dune build cannot replace during the run.
cp -f _build/default/bench/nx_bench.exe "$bin/nx_bench.exe"
gcc -O3 -march=native -fopenmp -Wall -o "$bin/limits" bench/limits.c

# No __pycache__ in bench/.
PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg "$venv/bin/python" bench/driver.py "${options[@]}" \
  --nx "$bin/nx_bench.exe" --limits "$bin/limits" --out "$out"
echo "bench: wrote $out/RESULTS.md, $out/results.csv, $out/ratios.png in $((SECONDS - start)) s"
