(** Kernels for host memory ("nx.cpu"), written in Rust.

    Each kernel computes from operands of any layouts on memory the host
    addresses, claims every operand through the door for the extent of its
    call, and answers [Done] once its work is done or a refusal before any
    write. A result is a function of the operands' values alone: neither
    layouts nor threads change a bit of it, but for a NaN's sign and payload.

    On x86-64 the library needs AVX2, FMA, F16C, BMI2, SSE4.2 and POPCNT, with
    the system saving the AVX registers: on a host without them, initialising
    the library raises [Failure].

    A call keeps other domains waiting to collect for no longer than about
    one core's copy of 1 MiB: longer work runs with the domain lock
    released. Several domains may call concurrently; a job that takes
    several threads waits for any other such job to end.

    {1 Threads}

    Kernels split their work over a pool of [NX_CPU_THREADS] threads (read
    when the pool first starts; by default the cores the process may use),
    changed by {!set_threads}. Results never depend on the count.

    {1 Instruction sets}

    On x86-64 every kernel runs on the baseline above, and those with a
    wider compilation take AVX-512 (F, VL, DQ, BW) where the CPU has it.
    [NX_CPU_ISA=avx2], read when a kernel first asks, keeps every kernel to
    the baseline, so that its speed can be measured on a machine with
    AVX-512; any other value, or none, lets kernels take the widest the
    CPU has. Results never depend on it. *)

include Nx_kernel.S

val threads : unit -> int
(** The number of threads kernels use. *)

val isa : unit -> string
(** The instruction set kernels run: ["avx512"], ["avx2"] (x86-64's
    baseline) or ["baseline"] (another architecture). *)

val set_threads : int -> unit
(** Sets the number of threads kernels use, from 1 to 1024. Calls already
    running keep theirs. Raises [Invalid_argument] outside that range. *)
