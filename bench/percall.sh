#!/usr/bin/env bash
# Instructions per call of an overhead.exe case, by function, counted by
# valgrind's callgrind: the difference between runs of 4 and 12 rounds
# (8000 calls) leaves out the program's set-up. Unlike a timing, the count
# is the same on a busy machine as on a quiet one, so a change to the call
# path of a few percent shows. Kernels are held to AVX2 (valgrind knows no
# AVX-512), one thread. Needs valgrind on the host (Debian's `valgrind`).
#
#   tools/in-root dune build --profile release bench/overhead.exe
#   bash bench/percall.sh "map add float32 1" [LINES]
#
# CASE is a prefix of overhead.exe's case names, so it must name one case
# alone. Each line is a function's own instructions a call; a line that
# starts `=>` is a call edge's, which counts its callees too and which the
# total (the last line) leaves out.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
case_=$1
lines=${2:-40}
exe=_build/default/bench/overhead.exe
root=/opt/nx_cpu/sid
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in 4 12; do
  NX_CPU_THREADS=1 NX_CPU_ISA=avx2 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$r" \
    "$root/lib64/ld-linux-x86-64.so.2" --library-path "$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu" \
    "$exe" "$r" "$case_" >/dev/null 2>&1
  callgrind_annotate --threshold=100 "$tmp/cg.$r" | sed -n '/file:function/,$p' | tail -n +3 | sed 's/,//g' |
    sed -E "s/^ *([0-9]+) +\( *[0-9.]+%\) +/\1\t/; s/'2//" |
    awk -F'\t' '{a[$2]+=$1} END {for (k in a) print a[k] "\t" k}' | sort -t$'\t' -k2 >"$tmp/f.$r"
done
join -t$'\t' -1 2 -2 2 -a2 -e0 -o '0,1.1,2.1' "$tmp/f.4" "$tmp/f.12" >"$tmp/joined"
awk -F'\t' '{d = ($3 - $2) / 8000; if (d >= 1) printf "%7.1f  %s\n", d, $1}' "$tmp/joined" | sort -rn | sed -n "1,${lines}p"
awk -F'\t' '$1 !~ /^=>/ {t += ($3 - $2) / 8000} END {printf "total %.0f instructions a call\n", t}' "$tmp/joined"
