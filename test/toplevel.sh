#!/usr/bin/env bash
# The library loaded outside dune's own executables: installed into a
# scratch prefix, then used from the `ocaml` toplevel through findlib and
# from a bytecode program linked by ocamlfind, from utop and from dune utop,
# each running a map.
set -euo pipefail
source "$(dirname "$0")/installed.sh"

script='
module P = Nx_kernel.Prog
let x = Nx_array.init Nx_array.Dtype.Float64 [| 3 |] (fun i -> float i.(0))
let z = Nx_array.create Nx_array.Dtype.Float64 [| 3 |]
let p = P.of_node (P.Op2 (P.Add, 0, 1)) [| Nx_array.Dtype.Any Nx_array.Dtype.Float64; Nx_array.Dtype.Any Nx_array.Dtype.Float64 |]
let () = match Nx_cpu.map p ~dsts:(Iarray.of_list [ Nx_array.Any z ]) (Iarray.of_list [ Nx_kernel.Plain (Nx_array.Any x); Nx_kernel.Plain (Nx_array.Any x) ]) with
  | Nx_array.Done -> print_endline (String.concat " " (List.map string_of_float (Nx_array.to_list z)))
  | _ -> exit 1
'
want="0. 2. 4."

got=$(printf '#use "topfind";;\n#require "nx_cpu";;\n%s;;\n' "$script" | ocaml -stdin 2>&1 | tail -n 1)
[[ $got == "$want" ]] || { echo "toplevel: got '$got', want '$want'"; exit 1; }

dir=$(mktemp -d -p "$prefix")
printf '%s\n' "$script" > "$dir/t.ml"
ocamlfind ocamlc -package nx_cpu -linkpkg "$dir/t.ml" -o "$dir/t.byte" 2>/dev/null
got=$("$dir/t.byte")
[[ $got == "$want" ]] || { echo "bytecode: got '$got', want '$want'"; exit 1; }
got=$(printf '#use "topfind";;\n#require "nx_cpu";;\nprint_int (Nx_cpu.threads ());;\n' | NX_CPU_THREADS=3 ocaml -stdin 2>&1 | tail -n 1)
[[ $got == 3 ]] || { echo "NX_CPU_THREADS=3 gave $got threads"; exit 1; }
got=$(printf '#use "topfind";;\n#require "nx_cpu";;\nprint_string (Nx_cpu.isa ());;\n' | NX_CPU_ISA=avx2 ocaml -stdin 2>&1 | tail -n 1)
case $(uname -m) in x86_64) isa_want=avx2 ;; *) isa_want=baseline ;; esac
[[ $got == "$isa_want" ]] || { echo "NX_CPU_ISA=avx2 gave the path '$got'"; exit 1; }

got=$(utop -require nx_cpu "$dir/t.ml" 2>&1 | tail -n 1)
[[ $got == "$want" ]] || { echo "utop: got '$got', want '$want'"; exit 1; }

got=$(dune utop --display=quiet ocaml -- "$dir/t.ml" 2>/dev/null | tail -n 1)
[[ $got == "$want" ]] || { echo "dune utop: got '$got', want '$want'"; exit 1; }
echo "toplevel, bytecode, NX_CPU_THREADS, NX_CPU_ISA, utop and dune utop: 6 passed, 0 failed"
