# Sourced by the scripts that use the library outside dune's own
# executables: installs it into a scratch prefix, removed on exit, and
# points findlib and the bytecode stubs at it.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dune build @install
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
dune install --prefix "$prefix" --display=quiet nx_cpu 2>/dev/null
export OCAMLPATH="$prefix/lib${OCAMLPATH:+:$OCAMLPATH}"
export CAML_LD_LIBRARY_PATH="$prefix/lib/stublibs${CAML_LD_LIBRARY_PATH:+:$CAML_LD_LIBRARY_PATH}"
