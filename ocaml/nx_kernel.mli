(** The device-neutral kernel interface: programs, loads, refusals and the
    signature {!S} that each kernel library ([Nx_cpu] for host memory)
    implements.

    {1 Kernels}

    A kernel computes from operands of any layouts. It checks everything
    before its first write: a refusal ([Nx_array.Refused]) leaves every
    destination untouched. It claims every operand for the extent of its call
    (the door), so that calls from other domains never write memory that
    another call reads or writes; claims are taken all at once, so calls
    never deadlock on them.

    {1 Loops}

    A loop runs a program at every index of its destinations' shape. Load [i]
    reads operand [i] of the program and has the loop's shape; a loop without
    loads runs over its shape alone. Coord nodes read axes of that shape. *)

type ('v, 's) a = ('v, 's) Nx_array.t
(** The arrays kernels take. *)

type index = (int64, Bigarray.int64_elt) a
(** Positions, ends and ids: an int64 array, as gathers, scatters, sorts,
    numberings, segmented contractions and pivots read and write them. *)

val same_precision : Nx_array.Dtype.any -> Nx_array.Dtype.any -> bool
(** Whether two dtypes are of one precision, real or complex: float32 and
    complex64, or float64 and complex128, in any pairing. The transforms
    and the matrix routines take a real and a complex operand so. *)

val full_precision : Nx_array.Dtype.any -> bool
(** Whether a dtype is float32, float64, complex64 or complex128: the
    dtypes the matrix routines compute in. *)

(** A Fourier transform's direction. Both are unnormalised: scaling, as by
    [1/n] for an inverse, is the caller's. *)
type direction =
  | Forward  (** [y.(k) = Σ_j x.(j) e^(-2πi jk/n)]. *)
  | Inverse  (** [y.(k) = Σ_j x.(j) e^(+2πi jk/n)]. *)

(** Programs: typed DAGs of nodes evaluated at every index of a loop. *)
module Prog : sig
  (** One-operand kinds. Integers wrap and never trap. *)
  type unary =
    | Neg  (** Negation; the most negative integer is its own negation. *)
    | Abs
        (** Magnitude; the most negative integer is its own; a complex
            number's modulus is of its parts' dtype. *)
    | Sign  (** -1, 0 or 1; a float keeps a zero's sign and a NaN; a complex number is x / |x|. *)
    | Square  (** x * x. *)
    | Sqrt
        (** Correctly rounded square root of a float; a complex number's
            principal root, within 1.3 ulps of its modulus per part. *)
    | Recip  (** 1 / x, correctly rounded (floats; complex numbers as Div). *)
    | Trunc  (** Rounding toward zero (floats). *)
    | Ceil  (** Rounding up (floats). *)
    | Floor  (** Rounding down (floats). *)
    | Round  (** Rounding to nearest, halves away from zero (floats). *)
    | Is_nan  (** Whether a NaN (complex: either part), as a bool. *)
    | Is_inf  (** Whether infinite (complex: either part), as a bool. *)
    | Is_finite  (** Whether finite (complex: both parts), as a bool. *)
    | Not  (** Logical negation of a bool or bit. *)
    | Bit_not  (** Bitwise complement of an integer; negation of a bool or bit. *)
    | Conj  (** Complex conjugate; a real number itself. *)
    | Real  (** Real part, of the parts' dtype; a real number itself. *)
    | Imag  (** Imaginary part, of the parts' dtype; +0 for a real number. *)
    | Exp | Exp2 | Expm1 | Log | Log2 | Log1p | Sin | Cos | Tan | Asin | Acos
    | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh | Erf | Rsqrt
        (** The math library's kinds, on floats, and on complex numbers for
            Exp, Log, the trigonometric and hyperbolic kinds and their
            inverses (C99 Annex G's branch cuts and special values; measured
            within 3.3 ulps of |f z| per part in complex128, 0.5 in
            complex64): each computes through one function whose bits are
            the same on every target, subnormals kept. Exp is within 2 ulps and Log within 1 ulp in float32 and 2
            in float64 (measured: below 0.7 in both); Exp2 is exact at
            integers whose power the dtype holds and Log2 at powers of two;
            every other kind is within 4 ulps (measured: at most 1.9 in
            float64, 1.1 in float32). A narrow float computes in float32 and
            rounds once. *)

  (** Two-operand kinds; both operands have one dtype. *)
  type binary =
    | Add  (** Sum; integers wrap; or on bool and bit. *)
    | Sub  (** Difference; integers wrap. *)
    | Mul
        (** Product; integers wrap; and on bool and bit; complex numbers as
            (ac - bd, ad + bc). *)
    | Div
        (** True division on floats, complex numbers by Smith's algorithm;
            integers truncate toward zero, a zero divisor gives 0 and the
            most negative value over -1 wraps to itself. *)
    | Maximum  (** The greater, a NaN where either is, +0 above -0. *)
    | Minimum  (** The lesser, a NaN where either is, -0 below +0. *)
    | Eq | Ne | Lt | Le | Gt | Ge
        (** Comparisons, as a bool; false where a NaN takes part (Ne: true);
            complex numbers ordered by real part, then imaginary. *)
    | And | Or | Xor  (** Logical, of bools or bits. *)
    | Bit_and | Bit_or | Bit_xor  (** Bitwise, of integers (logical on bool and bit). *)
    | Shl  (** Left shift; 0 where the count is negative or at least the width. *)
    | Shr
        (** Right shift, arithmetic on signed dtypes; where the count is
            negative or at least the width, 0, or -1 for a negative value. *)
    | Pow
        (** x{^y}: floats with C99's special cases, within 4 ulps; complex
            numbers as numpy (z{^0} = 1; integer powers by squaring). *)
    | Atan2  (** atan2 x y, the angle of the point (y, x), C99's quadrants (floats). *)
    | Hypot  (** sqrt(x{^2} + y{^2}) without intermediate overflow (floats). *)
    | Mod
        (** The remainder with the divisor's sign, as Python's [%]: integers
            (a zero divisor gives 0) and floats (exact, then the divisor
            added once where the signs differ; a zero takes its sign). *)

  (** Operations of one operand. *)
  type op1 =
    | Unary of unary
    | Cast of Nx_array.Dtype.any
        (** Cast into a dtype, each value rounded once: into a float an
            integer or float rounds to nearest, ties to even, straight from
            its value, a complex number gives its real part; into an integer
            an integer wraps modulo 2{^w}, a float rounds toward zero and
            saturates at the dtype's ends, NaN giving 0; into bool or bit,
            whether not zero (a NaN is not zero); into a complex dtype a real
            value gives the real part and +0. Into [Float8_e4m3fn] a value
            past its range or an infinity gives NaN; into [Float4_e2m1fn],
            which has neither, it saturates at ±6 and a NaN gives a zero of
            its sign. *)

  (** A constant: a dtype and one of its values. *)
  type constant = Constant : ('v, 's) Nx_array.Dtype.t * 'v -> constant

  (** A node reads earlier nodes by their positions. *)
  type node =
    | Load of int  (** Operand [i], through load [i]. *)
    | Const of constant  (** The same value at every index. *)
    | Coord of int  (** The index along an axis of the loop, as an int64. *)
    | Op1 of op1 * int
    | Op2 of binary * int * int
    | Where of int * int * int
        (** Where the first (a bool) is true the second, else the third. *)

  type t
  (** A checked program: operands, nodes, outputs and every node's dtype. *)

  val make : operands:Nx_array.Dtype.any array -> node array -> outputs:int array -> t
  (** [make ~operands nodes ~outputs] checks a program: each node reads
      earlier nodes only; the dtypes fit each kind; outputs name nodes.
      Raises [Invalid_argument] naming the node and the rule broken. *)

  val of_node : node -> Nx_array.Dtype.any array -> t
  (** [of_node n operands] is the program of the one node [n] over
      [Load 0] to [Load (k - 1)] of [operands], its output [n]. *)

  val single : t -> node option
  (** The node of a program that {!of_node} makes, or [None]. *)

  val is_single : t -> bool
  (** Whether {!single} finds the node. *)

  val operands : t -> Nx_array.Dtype.any array
  val nodes : t -> node array
  val outputs : t -> int array

  val node_dtype : t -> int -> Nx_array.Dtype.any
  (** The dtype of a node. *)

  val output_dtype : t -> int -> Nx_array.Dtype.any
  (** The dtype of output [k]. *)

  val words : t -> string
  (** The program as kernel libraries read it: little-endian 64-bit words,
      [n_operands], operand dtype codes, [n_nodes], five words a node
      ([tag, a, b, c, d]: 0 [Load i], 1 [Const dtype lo hi] with the
      constant's memory bits, 2 [Coord axis], 3 [Unary kind x], 4
      [Binary kind x y], 5 [Where c x y], 6 [Cast dtype x]), [n_outputs],
      output nodes. Kinds are numbered in their order of declaration. *)
end

(** {1 Loads} *)

type window = { size : int; stride : int; dilation : int }
(** A window along an axis: [size] taps, [stride] elements between
    neighbouring windows, [dilation] elements between neighbouring taps. *)

type pad = {
  before : int array;  (** Elements of fill before each axis. *)
  after : int array;  (** Elements of fill after each axis. *)
  windows : window option array;
      (** Per axis, a window or none; the empty array for no windows. *)
  fill : float;
      (** The padding's value, cast into the operand's dtype as
          {!Prog.op1.Cast} casts it ([neg_infinity] gives an integer's
          least value). *)
}
(** A pad of an operand, then windows over it: the loop reads the padded
    operand's windows, one trailing axis of taps appended per windowed axis.
    An element's tap is its index along those appended axes. *)

(** How a loop reads an operand. *)
type load =
  | Plain of Nx_array.any  (** Element by element at the loop's index. *)
  | Padded of pad * Nx_array.any
      (** Through a pad's windows, from one padded copy the call holds; an
          axis the operand broadcasts and the pad leaves alone held at one
          element. A pad that fits no operand of the load's shape, or a
          padded shape other than the loop's, is refused before the copy is
          made. *)

(** {1 Reductions}

    {2 Lane order}

    Lane order puts the terms of a sum or a product, numbered in C order of
    the reduced axes, into blocks of 1024 consecutive numbers and, within a
    block, into 16 lanes by number modulo 16, each lane adding its terms in
    increasing number from +0, or multiplying them from its first. Lane i
    takes lane i + 8 for i below 8, then lane i + 4 for i below 4, then
    i + 2 for i below 2, then lane 0 takes lane 1, a lane holding no term
    taking no part. The blocks are combined by a binary tree whose left part
    holds the largest power of two of blocks below their count, each part
    combined the same way. Threads take whole subtrees, so the bits never
    depend on the thread count, and a reduction along a strided axis has the
    bits of the same reduction along a contiguous one.

    {2 Scans}

    A Sum, Prod, Max or Min scan cuts each slice along its axis into chunks
    of 4096 terms. A chunk's total is its terms reduced in lane order. The
    carry into chunk 0 is the slice's element of a given carry, else the
    identity, but a Prod, Max or Min given none starts from its first term;
    the carry into chunk c + 1 is the carry into chunk c combined with c's
    total, and each result is its chunk's carry combined with the chunk's
    terms up to it, left to right. So a scan resumed from a chunk's start
    with the carry into that chunk has the bits of the whole scan.

    A Logsumexp or Moments scan combines its states by the odd/even
    network: the network of n states x{_0} … x{_n-1} combines each pair into
    y{_k} = x{_2k} ⊕ x{_2k+1}, runs the network of the ⌊n/2⌋ states y, giving
    Y{_k}, then gives at position 2k + 1 the result Y{_k}, at position 2k
    (k ≥ 1) Y{_k-1} ⊕ x{_2k}, and at position 0 x{_0}; a ⊕ b always holds
    a's terms before b's. So result i depends on terms 0 to i alone: with
    i + 1 = 2{^a1} + … + 2{^ap}, a1 > … > ap, the terms fall into p
    consecutive blocks, each block's state its two halves' states combined,
    and result i is (…((B{_1} ⊕ B{_2}) ⊕ B{_3}) … ⊕ B{_p}). A term's state
    passes at most ⌊log₂ (i + 1)⌋ + popcount (i + 1) − 1 combinations on its
    way to result i; the network's depth D over n terms is the greatest of
    these, at most 2 ⌊log₂ n⌋.

    {2 Error bounds}

    γ(n) = n u / (1 − n u) for n u < 1, u the unit roundoff of the carrier
    (2{^-24} for float32, 2{^-53} for float64, of the parts' dtype for complex).
    Each addition, multiplication and fused multiply-add rounds once, so a
    real term that passes r roundings is within γ(r) of itself, and a sum
    whose terms each pass at most r roundings is within γ(r) Σ|t{_k}| of the
    exact one, barring overflow and underflow. A Sum of n terms in lane
    order passes a term through at most L + D roundings, L = ⌈min(n, 1024) /
    16⌉ + 3 and D = ⌈log₂ ⌈n / 1024⌉⌉: it is within γ(L + D) Σ|t{_k}|. A Sum
    scan's result i is within γ(i + 1) (|carry| + Σ|t{_k}|). Logsumexp and
    Moments meet the bounds of the contract's sections of those names. *)

(** How a scatter combines the updates u{_1}, …, u{_n}, in C order of
    their indices, that land on one element x. Where none lands, the
    result is x, its bits unchanged, a signalling NaN's included. *)
type combine =
  | Set  (** u{_n}. *)
  | Add
      (** The sum by {!Prog.binary.Add} of x and u{_1} to u{_n}, left to
          right, (… ((x + u{_1}) + u{_2}) + …) + u{_n}, with no +0 before x,
          so that a -0 target and -0 updates sum to -0; a narrow float's sum
          computed in float32 and rounded once into its dtype. *)
  | Max  (** {!Prog.binary.Maximum} of x, u{_1}, …, u{_n}: a NaN where one is. *)
  | Min  (** {!Prog.binary.Minimum} of x, u{_1}, …, u{_n}: a NaN where one is. *)
(* Before [monoid], whose [Max] and [Min] an unqualified constructor then
   names. *)

(** The monoids. *)
type monoid = Sum | Prod | Max | Min

(** A reduction of one program output. *)
type reduction =
  | Monoid of monoid
      (** The terms combined in their carrier: Sum and Prod in lane order;
          Max and Min a NaN where a term is one, +0 above -0. An empty
          reduction is the monoid's identity (Max: -∞ or the least value). *)
  | Arg of monoid
      (** Of [Max] or [Min]: the extreme, in the carrier, and its position
          along the reduced axes in C order, an int64. Equal extremes give
          the first; a NaN is the extreme, the first NaN if several. An empty
          one is the identity at position -1. *)
  | Logsumexp  (** log Σ exp, by two passes (floats). *)
  | Moments  (** The mean, then the variance, by two passes (floats). *)

val carrier : Nx_array.Dtype.any -> Nx_array.Dtype.any
(** The dtype terms reduce in: int64 for bool, bit and signed integers,
    uint64 for unsigned ones, float32 for the narrow floats, the dtype itself
    otherwise. *)

val accepts : reduction -> Nx_array.Dtype.any -> bool
(** Whether a reduction takes terms of a dtype: Arg only of Max or Min and
    not of complex numbers, Logsumexp and Moments only of floats. *)

(** {1 Contraction}

    A contraction ([contract] of {!S}) of [a] with [b] pairs axes of the two:
    each batch pair (axis of a, axis of b) runs along together and leads dst;
    each contracting pair is summed over. a's other axes, its free axes in
    increasing order, are dst's rows; b's are its columns. The rows, the
    columns and the depth are the products of those extents.

    The products of an output are numbered in C order of the contracted
    axes, the first contracting pair's slowest, and lane order and chain
    order take them in that numbering. A product of two complex numbers
    a · b is two terms, numbered 2k and 2k + 1: re a · b, then i im a · b,
    each part of a term fused into its part of the sum (re += re a re b and
    im += re a im b, then re += -im a im b and im += im a re b). An output
    without products is init, or +0 without init.

    Chain order: each output's sum starts from init (cast into the acc) or
    +0 and takes its products (terms) one fused multiply-add at a time in
    increasing number. Lane order: the terms go into lane order (Lane order
    above), each lane fusing its terms' products into its sum, then init is
    added. A library states which order it takes for which extents.

    A scaled operand's elements each have a scale: the operand is cut into
    blocks of [block] extents (the last along an axis may be short), and
    the scale array holds one scale per block, of the shape
    [⌈extent / block⌉] along each axis. *)

(** One scale per block of an operand. *)
type scale =
  | Value of int array * Nx_array.any
      (** Block extents, and the scales as values of any dtype, each cast
          into the acc as {!Prog.op1.Cast} casts it. *)
  | Code of int array * (int, Bigarray.int8_unsigned_elt) a
      (** Block extents, and the scales as e8m0 codes: code e is
          2{^e - 127}, and 255 a NaN. *)

type operand = { array : Nx_array.any; scale : scale option }
(** An operand of a contraction: an array with its optional scales. *)

val operand : ?scale:scale -> ('v, 's) a -> operand
(** [operand ?scale x] is [{ array = Any x; scale }]. *)

(** How a segmented contraction groups indices by ids (int64 arrays). *)
type 'i segments =
  | Rows of { ids : 'i; b_axis : int }
      (** Each row of a (for each batch index) reads b's matrix at its id
          along [b_axis], an axis of b in no pair: ids has the shape of the
          batch pairs' extents then a's free axes; dst's columns are b's
          free axes but [b_axis]. Ids lie in [\[0, extent)] of [b_axis]. *)
  | Contracting of { ids : 'i; pair : int; groups : int }
      (** The indices along contracting pair number [pair] each go to the
          group of its id, in [\[0, groups)]; ids has that pair's extent as
          its shape, and dst a leading axis of [groups]: group g's output
          sums the products whose index along the pair is in g. *)

val accumulates : Nx_array.Dtype.any -> bool
(** Whether a contraction accumulates in a dtype: float32, float64,
    complex64, complex128 and the integers of 4 to 64 bits. An integer acc
    of w bits sums modulo 2{^w}. *)

(** The shapes kernels compute. *)
module Shape : sig
  val reduce : int array -> axes:int array -> int array
  (** The shape of a reduction's destinations: the loop's without [axes]. *)

  val scan : int array -> int array
  (** The shape of a scan's destinations: the loop's. *)

  val carry : int array -> axis:int -> int array
  (** The shape of a scan's carry: the loop's without [axis]. *)

  val padded : pad -> int array -> int array
  (** [padded p shape] is the shape a load by [p] of an operand of [shape]
      has: each axis padded, windowed axes counted in windows
      ([(padded - (size - 1) * dilation - 1) / stride + 1]), then one axis of
      [size] taps per windowed axis. Raises [Invalid_argument] where [p]'s
      arrays do not have the operand's rank, an extent is negative, a size,
      stride or dilation is below 1, or a window spans more than its padded
      axis. *)

  val contract :
    batch:(int * int) iarray -> contracting:(int * int) iarray -> segments:'i segments option ->
    int array -> int array -> int array
  (** [contract ~batch ~contracting ~segments a b] is the shape of a
      contraction's dst from a's shape and b's: a segmented one by
      [Contracting]'s groups, then the batch pairs' extents, a's free axes,
      then b's free axes (without [Rows]' [b_axis]). Raises
      [Invalid_argument] where an axis is past its operand's rank or paired
      twice, a pair joins two extents that differ, or [b_axis] or [pair]
      is not one a segment can take. *)

  val assemble : Nx_array.Move.range iarray -> int array
  (** The shape of an assembly's piece over a region: [stop - start] along
      each axis. Raises [Invalid_argument] where a range's [stop] is below
      its [start] or its [start] is negative. *)

  val gather_ranges : int array -> size:int -> int array -> int array
  (** [gather_ranges index ~size x] is the shape of a gather_ranges'
      destination for starts and ends of shape [index] ([\[lead…; k\]]),
      [size] positions along the packed axis and a source of shape [x]
      ([\[lead…; n; cells…\]]): [\[lead…; size; cells…\]]. The packed axis
      is [x]'s axis [rank index - 1]. Raises [Invalid_argument] where
      [index] is 0-d, [size] is negative, or [x] does not begin with
      [index]'s axes but the last, then one more. *)
end

val map_refusal : Prog.t -> dsts:Nx_array.any iarray -> load iarray -> string option
(** Why a map of a program into [dsts] over [loads] does not fit, or [None]:
    the counts of destinations and loads against the program's outputs and
    operands, their dtypes, and their shapes (every destination and load has
    the loop's shape). *)

val reduce_refusal :
  Prog.t -> shape:int iarray -> axes:int iarray -> (reduction * int) iarray ->
  dsts:Nx_array.any iarray -> load iarray -> string option
(** Why a reduce does not fit, or [None]: axes in range and distinct; at
    least one reduction, each of an output the program has and whose dtype
    it {!accepts}; destinations following the reductions (two for Arg and
    Moments, an Arg's second of int64), each of {!Shape.reduce}'s shape;
    loads of the loop's shape. *)

val scan_refusal :
  ?carry:Nx_array.any -> Prog.t -> axis:int -> reduction * int ->
  dsts:Nx_array.any iarray -> load iarray -> string option
(** Why a scan does not fit, or [None]: as {!reduce_refusal} along one axis,
    the destinations of the loop's shape, a carry only for a Monoid scan, of
    {!Shape.carry}'s shape and the output's {!carrier}. *)

val contract_refusal :
  batch:(int * int) iarray -> contracting:(int * int) iarray -> segments:index segments option ->
  acc:Nx_array.Dtype.any -> dst:Nx_array.any -> init:Nx_array.any option -> operand -> operand ->
  string option
(** Why a contraction does not fit, or [None]: the pairs against the
    operands ({!Shape.contract}), dst of that shape and init of dst's, each
    scale array of ⌈extent / block⌉ along each axis of its operand, blocks
    at least 1, and ids of the shape their segments state. The ids' values
    and the acc are the library's to check. *)

(** {1 Gathers, scatters and assemblies}

    A gather reads, and a scatter writes, at positions along an axis that an
    {!index} holds, one per element; a position outside [\[0, d)], [d] the
    extent along that axis, reads the element of zero bits (+0, false,
    0 + 0i) or drops its update. A gather, a scatter by [Set] and an
    assembly are moves: they copy bits, NaN payloads included. *)

val gather_refusal : axis:int -> dst:('v, 's) a -> index -> ('v, 's) a -> string option
(** Why a gather does not fit, or [None]: [axis] below [dst]'s rank, the
    positions of [dst]'s shape, the source of [dst]'s rank and of its
    extents off [axis]. The kernel also refuses a destination that maps two
    indices to one element or shares memory with an operand. *)

val scatter_refusal :
  combine -> axis:int -> dst:('v, 's) a -> into:('v, 's) a -> index -> ('v, 's) a -> string option
(** Why a scatter does not fit, or [None]: [axis] below [dst]'s rank, [into]
    of [dst]'s shape, the updates of [dst]'s rank and of its extents off
    [axis], the positions of the updates' shape. The kernel also refuses a
    destination that maps two indices to one element, shares memory with
    the positions or the updates, or with [into] without being [into]
    itself, element for element (a scatter in place). *)

val assemble_refusal : dst:('v, 's) a -> (Nx_array.Move.range iarray * ('v, 's) a) iarray -> string option
(** Why an assembly does not fit, or [None]: each piece's region of [dst]'s
    rank and within its extents, and the piece of the shape
    {!Shape.assemble} gives it. The kernel also refuses a destination that
    maps two indices to one element or shares memory with a piece. *)

val gather_ranges_refusal : dst:('v, 's) a -> starts:index -> ends:index -> ('v, 's) a -> string option
(** Why a gather_ranges does not fit, or [None]: [starts] of at least one
    axis, [ends] of its shape, the source and [dst] of the shapes
    {!Shape.gather_ranges} relates. The kernel also refuses a destination
    that maps two indices to one element or shares memory with an
    operand. *)

val fold_refusal : pad -> dst:('v, 's) a -> ('v, 's) a -> string option
(** [fold_refusal p ~dst x] is why a fold does not fit, or [None]: [p]
    fitting an operand of [dst]'s shape and [x] of the shape
    {!Shape.padded} [p] gives it. The kernel also refuses a destination
    that maps two indices to one element or shares memory with [x]. *)

(** {1 Matrices}

    The matrix routines compute on each matrix of an operand: its last two
    axes are a matrix's rows and columns, the axes before them its batch,
    which leads every operand and destination of the call alike. Each
    matrix is computed on its own, and one that fails is NaN in its own
    results alone. They take the {!full_precision} dtypes, every operand and
    matrix destination of one dtype, pivots and permutations of int64
    ({!index}). *)

(** A triangle of a square matrix, diagonal included. *)
type triangle = Lower | Upper

(** The factors of a qr of an m × n matrix, k = min(m, n): [Reduced], q of
    m × k and r of k × n; [Complete], q of m × m and r of m × n. Where m ≤ n
    they are the same. *)
type factors = Reduced | Complete

val factors : q:('v, 's) a -> ('w, 'r) a -> factors option
(** [factors ~q a] is the factors q's shape states for a qr of [a]
    ([Reduced] where both fit), or [None] where it states neither. *)

val qr_shapes : factors -> int array -> int array * int array
(** [qr_shapes f s] is the shapes of q and r for an operand of shape [s].
    Raises [Invalid_argument] where [s] has fewer than 2 axes. *)

val lu_shapes : int array -> int array * int array
(** [lu_shapes s] is the shapes of [pivots], the batch then min(m, n), and
    [perm], the batch then m, for an operand of shape [s]. Raises
    [Invalid_argument] where [s] has fewer than 2 axes. *)

val cholesky_refusal : dst:('v, 's) a -> ('v, 's) a -> string option
(** Why a cholesky of [a] into [dst] does not fit, or [None]: [a] of a
    {!full_precision} dtype, of at least 2 axes, its matrices square, and
    [dst] of its shape. *)

val lu_refusal : lu:('v, 's) a -> pivots:index -> perm:index -> ('v, 's) a -> string option
(** Why an lu does not fit, or [None]: [a] of a {!full_precision} dtype and
    at least 2 axes, [lu] of its shape, [pivots] and [perm] of the shapes
    {!lu_shapes} gives. *)

val solve_triangular_refusal : dst:('v, 's) a -> ('v, 's) a -> ('v, 's) a -> string option
(** [solve_triangular_refusal ~dst a b] is why a solve_triangular does not
    fit, or [None]: [a] of a {!full_precision} dtype, of at least 2 axes and
    square matrices n × n; [b] and [dst] of one shape, [a]'s batch then
    n × k. *)

val qr_refusal : q:('v, 's) a -> r:('v, 's) a -> ('v, 's) a -> string option
(** Why a qr does not fit, or [None]: [a] of a {!full_precision} dtype and
    at least 2 axes, [q] of the shape of some {!factors} and [r] of that
    factors' shape ({!qr_shapes}). *)

(** {1 Numbering}

    A numbering ([S.unique]) reads rows of 64-bit words. *)

type keys = (int64, Bigarray.int64_elt) a
(** The rows a numbering numbers: an [[n; w]] int64 array whose elements are
    read as the unsigned 64-bit words of their bits, so that two rows are
    one key iff their words are equal, bit for bit. Rows of another dtype
    are numbered through a view of their bits over the same buffer
    ({!keys_of_rows}, or {!Nx_array.view} at [Int64]): an [[n; c]] array of
    [b]-bit elements whose rows are contiguous, [c b] a multiple of 64,
    reads as [[n; c b / 64]] words, [[n; 2]] int32 pairs as one word a row.
    Bits are compared, not values: [-0.] and [+0.] are two keys, as are NaNs
    of two payloads; rows whose bytes are not whole words are first widened
    into words (by a cast into int64 columns, say), and a sub-byte dtype's
    packed rows likewise. *)

val keys_of_rows : ('v, 's) a -> keys option
(** [keys_of_rows x] is the {!keys} view of the bits of [x], an [[n; c]]
    array of a dtype of whole bytes whose rows each lie in whole 64-bit
    words of its buffer: the elements of a row one after the other (stride
    1 along axis 1, unless [c] is 1), [c] times the dtype's bits a multiple
    of 64, and [x]'s offset and row stride, in bits, multiples of 64 too.
    A [c] of 0 gives [[n; 0]]. [None] where [x] is not so. *)

val unique_refusal : ids:index -> first:index -> counts:index -> count:index -> keys -> string option
(** Why a numbering does not fit, or [None]: [keys] of shape [[n; w]], [ids]
    of shape [[n]], [first] and [counts] of one shape [[m]], [count] 0-d.
    The kernel also refuses a destination that maps two indices to one
    element, or that shares memory with the keys or another destination. *)

(** A kernel library. *)
module type S = sig
  val name : string
  (** The library's name in messages, as ["nx.cpu"]. *)

  val computes_on : Rig.t -> bool
  (** Whether the kernels compute on a device's memory. *)

  val map : Prog.t -> dsts:Nx_array.any iarray -> load iarray -> Nx_array.answer
  (** [map p ~dsts loads] stores output [k] of [p] at each index into
      [dsts.(k)], of that output's dtype. It is the one elementwise kernel:
      one kind over operands is the program {!Prog.of_node} makes. *)

  val reduce :
    Prog.t -> shape:int iarray -> axes:int iarray -> (reduction * int) iarray ->
    dsts:Nx_array.any iarray -> load iarray -> Nx_array.answer
  (** [reduce p ~shape ~axes rs ~dsts loads] reduces, for each [(r, k)] of
      [rs], output [k] of [p] over the loop of [shape] along [axes] by [r],
      into [dsts] in order (the extreme then the position for Arg, the mean
      then the variance for Moments), each result rounded once into its
      destination's dtype. A destination may be an operand: the operand is
      then read as it was. *)

  val scan :
    ?carry:Nx_array.any -> Prog.t -> axis:int -> reduction * int ->
    dsts:Nx_array.any iarray -> load iarray -> Nx_array.answer
  (** [scan ?carry p ~axis (r, k) ~dsts loads] stores at each index the
      reduction [r] of output [k] of [p] over the indices along [axis] up to
      it, inclusive. The loop's shape is the destinations'. With [carry], a
      Monoid scan of each slice continues from the slice's element of it. *)

  (** {2 Fourier transforms}

      Each transform runs along each of [axes], strictly increasing and not
      empty, at any layout and batch. A transform of zero points is the
      empty sum. Each library states its error bound. *)

  val c2c :
    direction -> axes:int iarray -> dst:(Stdlib.Complex.t, 's) a -> (Stdlib.Complex.t, 's) a ->
    Nx_array.answer
  (** [c2c d ~axes ~dst x] stores the transform [d] of [x] into [dst], of
      [x]'s shape and dtype. *)

  val r2c : axes:int iarray -> dst:(Stdlib.Complex.t, 'c) a -> (float, 'r) a -> Nx_array.answer
  (** [r2c ~axes ~dst x] stores the [Forward] transform of [x], bins [0] to
      [n/2] along the last of [axes], [n] [x]'s extent there ([dst]'s is
      [n/2 + 1]). For [n = 0] it is one bin of [+0]. [x] and [dst] are of
      one precision ({!same_precision}). *)

  val c2r : axes:int iarray -> dst:(float, 'r) a -> (Stdlib.Complex.t, 'c) a -> Nx_array.answer
  (** [c2r ~axes ~dst x] reads [n/2 + 1] bins [X] along the last of [axes],
      [n] [dst]'s extent there. It is the [Inverse] transform along each of
      [axes] but the last, then along the last the real parts of the
      [Inverse] transform of [X'], [X'.(k) = X.(k)] for [k <= n/2] and
      [conj X.(n - k)] above: the imaginary parts of bin [0] and, for an
      even [n], of bin [n/2] never contribute. It is this linear map for
      every operand, Hermitian or not. [dst] and [x] are of one precision
      ({!same_precision}). *)

  val contract :
    batch:(int * int) iarray -> contracting:(int * int) iarray -> segments:index segments option ->
    acc:Nx_array.Dtype.any -> dst:('v, 's) a -> init:('v, 's) a option -> operand -> operand ->
    Nx_array.answer
  (** [contract ~batch ~contracting ~segments ~acc ~dst ~init a b] stores
      into dst, of {!Shape.contract}'s shape,
      [dst\[B, I, J\] = init\[B, I, J\] + Σ_K a\[B, I, K\] · b\[B, K, J\]]
      computed in acc, which {!accumulates} accepts: each element of a, b
      and init enters acc as {!Prog.op1.Cast} casts it, times its scale
      where its operand has scales, and the sum, in the library's order
      (Contraction), enters dst rounded once as Cast rounds it. Integers
      wrap in acc. *)

  val gather : axis:int -> dst:('v, 's) a -> index -> ('v, 's) a -> Nx_array.answer
  (** [gather ~axis ~dst idx x] stores into [dst] at each index j [x]'s
      element at j with axis [axis] replaced by [idx]'s element at j, the
      element of zero bits where that position lies outside [x]'s axis. *)

  val scatter :
    combine -> unique:bool -> axis:int -> dst:('v, 's) a -> into:('v, 's) a -> index -> ('v, 's) a ->
    Nx_array.answer
  (** [scatter c ~unique ~axis ~dst ~into idx updates] stores into [dst]
      [into] with [updates] combined by [c]: update j targets [into]'s
      element at j with axis [axis] replaced by [idx]'s element at j, and is
      dropped where that position lies outside [into]'s axis. [dst] may be
      [into] itself. Under [unique] the caller promises each target at most
      one update; where two share one, the result there is unspecified. *)

  val assemble :
    fill:'v -> dst:('v, 's) a -> (Nx_array.Move.range iarray * ('v, 's) a) iarray -> Nx_array.answer
  (** [assemble ~fill ~dst pieces] stores into [dst], at each index, the
      element at that index of the last piece whose region holds it, or
      [fill] where none does. *)

  val gather_ranges : dst:('v, 's) a -> starts:index -> ends:index -> ('v, 's) a -> Nx_array.answer
  (** [gather_ranges ~dst ~starts ~ends x] packs runs of [x] along its axis
      [a = rank starts - 1] into [dst] ({!Shape.gather_ranges}). At each
      lead index, position [p] of [dst] along [a] belongs to the first run
      [j] whose end [ends.{j}] exceeds [p], and reads [x] at
      [starts.{j} + p - e], [e] being [ends.{j - 1}], or 0 for [j = 0],
      computed in int64 modulo 2{^64}. A position past every end, or
      outside [\[0, n)], [n] [x]'s extent along [a], reads the element of
      zero bits. For ends the running sums of lengths that are not
      negative, run [j] copies its [ends.{j} - e] elements from
      [starts.{j}], cut at [dst]'s extent. It is a move: bits copied. *)

  val fold : pad -> dst:('v, 's) a -> ('v, 's) a -> Nx_array.answer
  (** [fold p ~dst x] stores into [dst] the adjoint of a [Padded] load by
      [p] of [dst]'s shape, [x] of the shape that load gives
      ({!Shape.padded}): [dst]'s element at an index is the sum by
      {!Prog.binary.Add} of its terms, the elements of [x] the load reads
      from that index, in C order of their taps, with no +0 before the
      first (a single -0 keeps its sign), and +0 where the load reads it
      nowhere. The pad's fill takes no part. Each library states its sums'
      association and whether a narrow float's sum rounds at each addition
      or once from float32. *)

  (** {2 Sorts} *)

  val sort :
    axis:int -> descending:bool -> values:('v, 's) a -> positions:index -> ('v, 's) a -> Nx_array.answer
  (** [sort ~axis ~descending ~values ~positions x] orders each slice of [x]
      along [axis], stably, into [values], bits unchanged, and their int64
      positions along [axis] into [positions]. Where [values] is shorter
      than [x] along [axis], it keeps the first elements of the sorted order
      (top-k). [values] and [positions] have [x]'s shape but along [axis],
      where they are as long as each other and no longer than [x].

      The order is the one {!Prog}'s domains state, [-0] below [+0], with
      every NaN, and every complex number with a NaN part, above [+∞] and
      equal to each other: [-∞ < … < -0 < +0 < … < +∞ < NaN]; a complex
      number by its real part, then its imaginary part; [false < true];
      integers by value. [descending] reverses the order and keeps equal
      elements in increasing position. Every dtype sorts. [values] may be
      [x] itself (each slice is read whole before it is written); no other
      overlap of [values] or [positions] with [x] or each other is taken. *)

  (** {2 Numbering} *)

  val unique : ids:index -> first:index -> counts:index -> count:index -> keys -> Nx_array.answer
  (** [unique ~ids ~first ~counts ~count keys] numbers the rows of [keys]
      ({!keys}, [[n; w]]): two rows are one key iff their words are equal,
      and a [w] of 0 makes every row one key. Keys are numbered from 0 in
      order of their first rows, [k] of them. [ids], of [n] entries, gets
      each row's key. [first] and [counts] have one length [m]: entry [g]
      below [min m k] gets key [g]'s first row and its number of rows, and
      entries from [k] on get [n] and 0. [count], 0-d, gets [k]. The
      numbers follow first appearance alone, whatever the threads or the
      hash. {!unique_refusal} decides whether a call fits; a library may
      decline keys of too many rows, as its doc states. *)

  val cholesky : triangle -> dst:('v, 's) a -> ('v, 's) a -> Nx_array.answer
  (** [cholesky t ~dst a] stores L with a = L Lᴴ under [Lower], or U = Lᴴ
      under [Upper], +0 in the other triangle and its diagonal real and
      positive. It reads a's lower triangle and the real parts of its
      diagonal alone, whatever [t]. A matrix whose factorisation meets a
      pivot that is not positive, or NaN, is NaN. {!cholesky_refusal}
      decides whether a call fits. *)

  val lu : lu:('v, 's) a -> pivots:index -> perm:index -> ('v, 's) a -> Nx_array.answer
  (** [lu ~lu ~pivots ~perm a] stores into [lu] the unit lower triangular L
      below its diagonal, its ones unstored, and the upper triangular U on
      and above it. At step j, rows j and [pivots[j]] were interchanged, the
      row a search of column j down from row j ends at: the search starts at
      j and moves to a later row only where that row's magnitude, |re| + |im|
      on complex, is greater than the current one's; a NaN is never
      greater, and nothing is greater than a NaN. Row i of L U is row
      [perm[i]] of a. A zero pivot stays in U and its column of L is not
      divided. {!lu_refusal} decides whether a call fits. *)

  val qr : q:('v, 's) a -> r:('v, 's) a -> ('v, 's) a -> Nx_array.answer
  (** [qr ~q ~r a] stores q with orthonormal columns and r, upper triangular
      with +0 below its diagonal, a = q r, reduced or complete as q's shape
      states ({!factors}). {!qr_refusal} decides whether a call fits. *)

  val solve_triangular :
    triangle -> adjoint:bool -> unit_diagonal:bool -> dst:('v, 's) a -> ('v, 's) a -> ('v, 's) a -> Nx_array.answer
  (** [solve_triangular t ~adjoint ~unit_diagonal ~dst a b] stores x with
      a x = b, or aᴴ x = b under [adjoint], each column of b a right-hand
      side. It reads a's triangle [t], without its diagonal under
      [unit_diagonal], whose ones it takes instead. A zero on a diagonal it
      reads makes that matrix's x NaN. [dst] may be [a] or [b].
      {!solve_triangular_refusal} decides whether a call fits. *)
end
