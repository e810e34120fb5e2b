# Every target runs through tools/in-root: natively where OCaml >= 5.4, dune
# and alcotest are on the PATH, otherwise inside the Debian sid root that
# tools/toolchain builds once (a few minutes) at /opt/nx_cpu/sid.

IN_ROOT := tools/in-root

.PHONY: all build demo test test-rust test-ocaml test-toplevel utop toolchain clean bench

all: build

toolchain:
	@$(IN_ROOT) true

build:
	$(IN_ROOT) dune build

# The main job: a program that builds arrays and runs kernels from OCaml.
demo:
	$(IN_ROOT) dune exec --display=quiet demo/demo.exe

# Every test: the Rust crate's own tests (without OCaml), the OCaml suites,
# and the library loaded in bytecode and in the `ocaml` toplevel.
test: test-rust test-ocaml test-toplevel

test-rust:
	$(IN_ROOT) cargo test --release --locked --no-default-features

test-ocaml:
	$(IN_ROOT) dune build
	$(IN_ROOT) dune test --force

test-toplevel:
	$(IN_ROOT) bash test/toplevel.sh
	$(IN_ROOT) bash test/nx_examples.sh

utop:
	$(IN_ROOT) dune utop ocaml

clean:
	$(IN_ROOT) dune clean
	rm -rf target

# Benchmarks side by side with numpy, written to bench/RESULTS.md,
# bench/results.csv and bench/ratios.png. QUICK=1 for a short run; ISA=avx2
# runs our kernels on the AVX2 baseline (NX_CPU_ISA=avx2), numpy on its AVX2
# paths, into bench/avx2/.
bench:
	$(IN_ROOT) bash bench/run.sh $(if $(QUICK),--quick,) $(if $(ISA),--isa $(ISA),)
