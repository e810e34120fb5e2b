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

    {1 Contractions}

    [contract] computes in float32, float64, complex64, complex128 and the
    integers of 4 to 64 bits ({!Nx_kernel.accumulates}), of operands, init
    and dst of any dtypes and layouts, with or without segments, and
    declines any other acc, and scales in an acc other than float32 and
    float64. It adds an output's products in chain order where its rows
    and columns are both above 4 and multiply to at least 64 and its depth
    is below 128 times their product, else in lane order, then init (the
    threads then share the depth of few outputs); a segmented call takes
    one order from the whole call's rows (Rows: one id's columns) and depth
    (Contracting: the pair's whole extent). The order follows those extents
    and the dtypes alone: threads, layouts, batches, which operand is
    transposed and the instruction set never change a bit (the AVX2 panels
    fuse the same products in the same order as the portable loop). An
    integer acc of w bits computes modulo 2{^32} or 2{^64} and keeps w bits:
    exact modulo 2{^w}.

    A scale multiplies each element, rounded once into the acc (of the
    three choices Contraction leaves, the first), at any contracted extent:
    each scaled operand adds one unit roundoff of the acc per term to the
    bound, barring overflow of an element times its scale. The bound is
    γ(K + 1) (|init| + Σ|a||b|) for a real acc and γ(2K + 2) of the same
    sum of moduli for a complex one, K an output's products. A segmented
    call reads the ids whole before any write (they may be dst itself) and
    groups the indices by id; each group computes as an unsegmented call
    of its indices alone, over their offsets, with no copy but a scratch
    copy of dst where dst shares memory with an operand.

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

(** {1 Fourier transforms}

    [c2c], [r2c] and [c2r] compute every case that fits, in complex64 and
    float32 or complex128 and float64. A transform's result is a function of
    its operand's values alone, whatever its layout, its batch or the
    threads, but for a NaN's sign and payload. It works in host memory the
    call holds until it returns. Barring underflow and overflow, a transform
    [ŷ] of [N] points, the product of the points along each of [axes], is
    within [‖ŷ - y‖₂ <= ε u √N ‖x‖₂] of the exact [y], [u] the unit roundoff
    of [x]'s parts and [‖x‖₂] its norm, a c2r's [√2] times its operand's,
    the parts that never contribute included. [ε] is the sum over [axes] of
    [e(n)], [n] the points along the axis:
    - [e(n) = 8 Σ p^(3/2) + 8] over [n]'s prime factors [p], with
      multiplicity: a line computes by passes of radix 2, 4 and [n]'s odd
      primes, or, from [2^15] points, by Bailey's four steps;
    - where a prime factor of [n] exceeds 250, [e(n) = 6 e(m) + 26], [m] the
      least power of two at least [2n - 1]: the line computes by
      Bluestein's convolution of [m] points, unless the transform of the
      conjugate chirp [e^(πi j²/n)], wrapped at [m], exceeds [2 √(2n - 1)]
      in magnitude, when it computes by passes within the first [e(n)];
    - the last axis of a real transform of even [n >= 512] counts
      [e(n/2) + 8] in place of [e(n)]: its lines compute through complex
      ones of [n/2] points. *)

(** {1 Packed runs and folds}

    [gather_ranges] walks each lead index's ends once in order and copies
    each run's rows by one memcpy where the source's and the destination's
    rows lie one after the other, else element by element; it splits the
    destination among threads at whole cache lines where the destination
    is C-contiguous, so that no two threads write one byte.

    [fold] takes every dtype. Each element sums its terms left to right, in
    C order of their taps, each addition by {!Nx_kernel.Prog.binary.Add}
    rounded into the dtype: a narrow float's sum rounds at each addition
    (from float32), a sub-byte integer's wraps at each. Each element is
    summed whole by one thread, so the bits do not depend on the threads or
    the layouts. *)

(** {1 Numbering}

    [unique] declines keys of [2{^40} - 1] rows or more. Its [k] keys of [w]
    words each find their number in a hash table of linear probing, by a
    hash that folds each word in by wyhash's mix (the high and low halves
    of a 128-bit product xored), keyed by secrets from a seed drawn from
    the system's random source when the library first numbers; a row of
    the previous row's key takes its number without a probe. Keys of at
    most 4 words whose columns' spans multiply to at most [2{^20}] values,
    and to at most twice a thread's rows and 1024 more, find it in a direct
    table of 4 bytes a value, from one more read of the keys that finds the
    spans. A thread takes up to [2 (w + 3) k] words for its keys and a table
    of 1024 slots or 2 to 4 times its keys, a word each. On several
    threads each numbers a block of consecutive rows, the blocks' keys then
    merge in order of the blocks, and a last pass maps each row's number in
    its block to its key's. The numbers never depend on the seed or the
    threads. *)
