#!/usr/bin/env bash
# Runs the examples of test/nx_examples.txt (those of the spec of Nx) in the
# `ocaml` toplevel with the library installed in a scratch prefix and loaded
# by `#require "nx_cpu"` alone (its printer installs itself), and compares
# what the toplevel prints with the text of each example. -short-paths makes
# the toplevel write types as the spec does ((float, float32_elt) t rather
# than (float, Nx.float32_elt) Nx.t); the values print the same either way.
set -euo pipefail
source "$(dirname "$0")/installed.sh"

# Each example N becomes $prefix/in.N (the phrase) and $prefix/want.N.
awk -v dir="$prefix" '
  /^;/ { next }
  /^pending:/ { skip = 1; next }
  /^# / { n++; phase = "in"; file = dir "/in." n; if (skip) { file = dir "/skip." n }
          sub(/^# /, ""); print > file; next }
  phase == "in" && /^  / { sub(/^  /, ""); print > file; next }
  phase == "in" && /^- :/ { phase = "out"; out = dir "/want." n; if (skip) { out = dir "/skipped." n } }
  phase == "out" && /^$/ { phase = ""; skip = 0; next }
  phase == "out" { print > out; next }
' test/nx_examples.txt

count=$(grep -c '^# ' test/nx_examples.txt)
{
  printf '#use "topfind";;\n#require "nx_cpu";;\nopen Nx;;\n'
  for n in $(seq "$count"); do
    [[ -f $prefix/in.$n ]] || continue
    printf 'print_string "@@example %s\\n";;\n' "$n"
    cat "$prefix/in.$n"
    printf ';;\n'
  done
  printf 'print_string "@@example end\\n";;\n'
} > "$prefix/session.ml"

ocaml -short-paths -noprompt -nopromptcont -color never < "$prefix/session.ml" > "$prefix/out" 2>&1 || true

# The output after each marker, less the marker's own "- : unit = ()".
awk -v dir="$prefix" '
  /^@@example / { n = $2; file = dir "/got." n; getline; next }
  n != "" { print > file }
' "$prefix/out"

passed=0 failed=0 skipped=$(find "$prefix" -maxdepth 1 -name 'skip.*' | wc -l)
for n in $(seq "$count"); do
  f=$prefix/in.$n
  [[ -f $f ]] || continue
  if diff -u "$prefix/want.$n" <(sed -e '/^$/d' "$prefix/got.$n" 2>/dev/null) > "$prefix/diff"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "example $n: $(head -n 1 "$f")"
    cat "$prefix/diff"
  fi
done
echo "Nx examples in the ocaml toplevel: $passed passed, $failed failed, $skipped pending"
[[ $failed == 0 ]]
