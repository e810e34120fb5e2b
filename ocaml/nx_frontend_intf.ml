(** The signature of the numpy-like module {!Nx}, which {!Nx_frontend.Make}
    builds over any kernel library ({!Nx_kernel.S}).

    {1 Tensors, views and kernels}

    A tensor is an {!Nx_array.t}: a view of a buffer with a dtype, a shape,
    strides and an offset (both in elements). Functions documented as views
    ({!S.reshape}, {!S.transpose}, {!S.slice}, {!S.broadcast_to}, ...) build a new
    view of the same buffer in O(1): writes through one are seen through the
    other. Other functions return a fresh C-contiguous tensor, but where
    their documentation says they may return a view or the tensor itself
    ({!S.contiguous}, {!S.flatten}, {!S.to_buffer}, {!S.of_buffer}, {!S.data}).

    {b Broadcasting.} Operands of different shapes are aligned from the
    right; along each axis their extents must be equal or one of them 1. An
    operand that broadcasts is read through a view of stride 0, never copied.

    {b Kernels.} Every loop over elements runs in the kernel library: its
    [map], [reduce], [scan], [gather], [scatter], [sort], [contract] and
    matrix routines: sums, products, extremes, means and scans have the
    kernels' bits (lane order, see {!Nx_kernel}), whatever the layouts and
    threads. OCaml code reads or writes elements one by one only to build a
    tensor from OCaml values ({!S.create}, {!S.init}), to read them out
    ({!S.to_array}, {!S.item}) and to print.

    {b Errors.} A function raises [Invalid_argument] whose message starts
    with the function's name and says what is wrong, as
    ["reshape: cannot reshape [2; 3] to [4]"], before any kernel runs; a
    kernel's refusal also comes back as [Invalid_argument] naming the
    function.

    {b Printing.} A tensor prints as its dtype, shape and elements, as
    [float32 [2; 3] [[1, 2, 3],] / [ [4, 5, 6]]]; an axis longer than 4 shows
    its first two and last two entries around ["..."]. A tensor of at most one
    dimension with nothing elided prints as its elements alone ([[1, 2, 3]],
    or [5] for a scalar), so short vectors read as in the examples.
    {!S.pp} is a toplevel printer: loading the library into [ocaml] or [utop]
    installs it. *)

module type S = sig
  (** {1:types Types} *)

  type ('a, 'b) t = ('a, 'b) Nx_array.t
  (** The type for tensors with OCaml element type ['a] and buffer element
      kind ['b]: arrays of {!Nx_array}, views of a buffer. *)

  type ('a, 'b) dtype = ('a, 'b) Nx_array.Dtype.t
  (** The type for dtypes: ['a] is the OCaml type of the values, ['b] the
      element kind. *)

  (** {2 Element kinds} *)

  type bool_elt = Nx_array.bool_elt
  type bit_elt = Nx_array.bit_elt
  type int4_elt = Nx_array.int4_elt
  type uint4_elt = Nx_array.uint4_elt
  type int8_elt = Bigarray.int8_signed_elt
  type int16_elt = Bigarray.int16_signed_elt
  type int32_elt = Bigarray.int32_elt
  type int64_elt = Bigarray.int64_elt
  type uint8_elt = Bigarray.int8_unsigned_elt
  type uint16_elt = Bigarray.int16_unsigned_elt
  type uint32_elt = Nx_array.uint32_elt
  type uint64_elt = Nx_array.uint64_elt
  type float4_e2m1fn_elt = Nx_array.float4_e2m1fn_elt
  type float8_e4m3fn_elt = Nx_array.float8_e4m3fn_elt
  type float8_e5m2_elt = Nx_array.float8_e5m2_elt
  type float16_elt = Bigarray.float16_elt
  type bfloat16_elt = Nx_array.bfloat16_elt
  type float32_elt = Bigarray.float32_elt
  type float64_elt = Bigarray.float64_elt
  type complex32_elt = Bigarray.complex32_elt
  type complex64_elt = Bigarray.complex64_elt

  (** {2 Dtypes}

      Every dtype of {!Nx_array.Dtype}. Values of [uint32] are non-negative
      [int]s, of [uint64] the [int64] of the same bits, of the 4- and 8-bit
      integers [int]s. *)

  val bool : (bool, bool_elt) dtype (** Booleans, a byte each. *)

  val bit : (bool, bit_elt) dtype (** Booleans packed eight to a byte. *)

  val int4 : (int, int4_elt) dtype (** Signed 4-bit integers, packed. *)

  val uint4 : (int, uint4_elt) dtype (** Unsigned 4-bit integers, packed. *)

  val int8 : (int, int8_elt) dtype (** Signed 8-bit integers. *)

  val int16 : (int, int16_elt) dtype (** Signed 16-bit integers. *)

  val int32 : (int32, int32_elt) dtype (** Signed 32-bit integers. *)

  val int64 : (int64, int64_elt) dtype (** Signed 64-bit integers. *)

  val uint8 : (int, uint8_elt) dtype (** Unsigned 8-bit integers. *)

  val uint16 : (int, uint16_elt) dtype (** Unsigned 16-bit integers. *)

  val uint32 : (int, uint32_elt) dtype (** Unsigned 32-bit integers. *)

  val uint64 : (int64, uint64_elt) dtype (** Unsigned 64-bit integers. *)

  val float4_e2m1fn : (float, float4_e2m1fn_elt) dtype (** 4-bit floats (e2m1, finite only), packed. *)

  val float8_e4m3fn : (float, float8_e4m3fn_elt) dtype (** 8-bit floats (e4m3, no infinities). *)

  val float8_e5m2 : (float, float8_e5m2_elt) dtype (** 8-bit floats (e5m2). *)

  val float16 : (float, float16_elt) dtype (** IEEE half precision. *)

  val bfloat16 : (float, bfloat16_elt) dtype (** Brain floats: float32's exponent, 8 bits of precision. *)

  val float32 : (float, float32_elt) dtype (** IEEE single precision. *)

  val float64 : (float, float64_elt) dtype (** IEEE double precision. *)

  val complex64 : (Complex.t, complex32_elt) dtype (** Complex numbers of two float32 parts. *)

  val complex128 : (Complex.t, complex64_elt) dtype (** Complex numbers of two float64 parts. *)

  (** {2 Index specifications} *)

  (** The type for index specifications used by {!slice} and {!set_slice},
      one per axis from the first; axes left over are taken whole. *)
  type index =
    | I of int  (** [I i] selects index [i] and drops the axis; negative from the end. *)
    | L of int list
        (** [L is] gathers the listed indices (a view when they step evenly,
            copies otherwise); negative from the end. *)
    | R of int * int
        (** [R (start, stop)] selects \[[start], [stop]); negative values count
            from the end and both are clamped to the axis, as Python's slices. *)
    | Rs of int * int * int
        (** [Rs (start, stop, step)] selects every [step]-th index from [start]
            towards [stop] (exclusive); [step] may be negative, not zero. *)
    | A  (** [A] selects the whole axis. *)
    | M of (bool, bool_elt) t  (** [M mask] selects where [mask] is true: not supported yet, it raises. *)
    | N  (** [N] inserts a new axis of size 1 without consuming one. *)

  (** {1:props Properties} *)

  val data : ('a, 'b) t -> ('a, 'b) t
  (** [data t] is the flat buffer under [t]: a 1-D tensor at offset 0 over
      every element the buffer holds. It is shared: writes through it are seen
      through [t] and back. It may be larger than [t] when [t] is a strided
      view. *)

  val shape : ('a, 'b) t -> int array
  (** [shape t] is the extents of [t]'s axes; a scalar's is [[||]]. *)

  val dtype : ('a, 'b) t -> ('a, 'b) dtype
  (** [dtype t] is the dtype of [t]. *)

  val strides : ('a, 'b) t -> int array
  (** [strides t] is the stride of each axis of [t] in bytes (0 along a
      broadcast axis, negative along a flipped one).

      Raises [Invalid_argument] if [t]'s elements are packed below a byte
      ([bit], [int4], [uint4], [float4_e2m1fn]): they have no byte strides.
      See also {!stride}. *)

  val stride : int -> ('a, 'b) t -> int
  (** [stride i t] is the stride of axis [i] in bytes.

      Raises [Invalid_argument] if [i] is out of bounds or as {!strides}. *)

  val dims : ('a, 'b) t -> int array
  (** [dims t] is [shape t]. *)

  val dim : int -> ('a, 'b) t -> int
  (** [dim i t] is the extent of axis [i] (negative from the end).

      Raises [Invalid_argument] if [i] is out of bounds. *)

  val ndim : ('a, 'b) t -> int
  (** [ndim t] is the number of axes of [t]. *)

  val itemsize : ('a, 'b) t -> int
  (** [itemsize t] is the number of bytes an element takes: 1 for the
      dtypes packed below a byte, whose elements share their bytes. *)

  val size : ('a, 'b) t -> int
  (** [size t] is the number of elements of [t]. *)

  val numel : ('a, 'b) t -> int
  (** [numel t] is [size t]. *)

  val nbytes : ('a, 'b) t -> int
  (** [nbytes t] is [size t * itemsize t], or for the dtypes packed below a
      byte the bytes their elements fill. *)

  val offset : ('a, 'b) t -> int
  (** [offset t] is the element offset of [t] in its buffer. *)

  val is_c_contiguous : ('a, 'b) t -> bool
  (** [is_c_contiguous t] is [true] iff [t]'s elements lie next to each
      other in row-major order (axes of extent 1 aside). See {!contiguous}. *)

  val to_bigarray : ('a, 'b) t -> ('a, 'b, Bigarray.c_layout) Bigarray.Genarray.t
  (** [to_bigarray t] is a fresh C-layout bigarray of [t]'s shape and
      elements. It always copies.

      Raises [Invalid_argument] if [t]'s dtype has no [Bigarray] kind (bool,
      bit, the 4-bit dtypes, uint32, uint64, the 8-bit floats, bfloat16).
      See {!of_bigarray}. *)

  val to_buffer : ('a, 'b) t -> ('a, 'b) t
  (** [to_buffer t] is a flat contiguous 1-D tensor of [t]'s elements in
      row-major order: a view of [t]'s own buffer when [t] is C-contiguous at
      offset 0, else of a copy. *)

  val to_array : ('a, 'b) t -> 'a array
  (** [to_array t] is a fresh OCaml array of [t]'s elements in row-major
      order.

      {[
        # let t = create int32 [| 2; 2 |] [| 1l; 2l; 3l; 4l |] in to_array t
        - : int32 array = [|1l; 2l; 3l; 4l|]
      ]} *)

  (** {1:creation Creation} *)

  val create : ('a, 'b) dtype -> int array -> 'a array -> ('a, 'b) t
  (** [create dtype shape data] is a tensor of [shape] holding [data] in
      row-major order.

      Raises [Invalid_argument] if [data] does not hold as many values as
      [shape] has elements, or an extent is negative.

      {[
        # create float32 [| 2; 3 |] [| 1.; 2.; 3.; 4.; 5.; 6. |]
        - : (float, float32_elt) t = float32 [2; 3] [[1, 2, 3],
                                                     [4, 5, 6]]
      ]} *)

  val init : ('a, 'b) dtype -> int array -> (int array -> 'a) -> ('a, 'b) t
  (** [init dtype shape f] is the tensor whose element at index [i] is
      [f i], called in row-major order. *)

  val empty : ('a, 'b) dtype -> int array -> ('a, 'b) t
  (** [empty dtype shape] is a tensor whose elements are arbitrary until
      written. *)

  val full : ('a, 'b) dtype -> int array -> 'a -> ('a, 'b) t
  (** [full dtype shape v] is a tensor of [shape] whose every element is [v]. *)

  val ones : ('a, 'b) dtype -> int array -> ('a, 'b) t
  (** [ones dtype shape] is [full dtype shape] of one. *)

  val zeros : ('a, 'b) dtype -> int array -> ('a, 'b) t
  (** [zeros dtype shape] is [full dtype shape] of zero. *)

  val scalar : ('a, 'b) dtype -> 'a -> ('a, 'b) t
  (** [scalar dtype v] is the tensor of shape [[||]] holding [v]. *)

  val empty_like : ('a, 'b) t -> ('a, 'b) t
  (** [empty_like t] is {!empty} of [t]'s dtype and shape. *)

  val full_like : ('a, 'b) t -> 'a -> ('a, 'b) t
  (** [full_like t v] is {!full} of [t]'s dtype and shape. *)

  val ones_like : ('a, 'b) t -> ('a, 'b) t
  (** [ones_like t] is {!ones} of [t]'s dtype and shape. *)

  val zeros_like : ('a, 'b) t -> ('a, 'b) t
  (** [zeros_like t] is {!zeros} of [t]'s dtype and shape. *)

  val scalar_like : ('a, 'b) t -> 'a -> ('a, 'b) t
  (** [scalar_like t v] is {!scalar} of [t]'s dtype. *)

  val eye : ?m:int -> ?k:int -> ('a, 'b) dtype -> int -> ('a, 'b) t
  (** [eye ?m ?k dtype n] is the [n] × [m] matrix ([m] defaults to [n])
      with ones on diagonal [k] (0 by default; above the main one where
      positive) and zeros elsewhere. *)

  val identity : ('a, 'b) dtype -> int -> ('a, 'b) t
  (** [identity dtype n] is [eye dtype n]. *)

  val diag : ?k:int -> ('a, 'b) t -> ('a, 'b) t
  (** [diag ?k v] is, for a 1-D [v], the square matrix with [v] on diagonal
      [k] (default 0) and zeros elsewhere; for a 2-D [v], its diagonal [k] as
      a 1-D view.

      Raises [Invalid_argument] if [v] is neither 1-D nor 2-D. *)

  val arange : ('a, 'b) dtype -> int -> int -> int -> ('a, 'b) t
  (** [arange dtype start stop step] is the 1-D tensor [start], [start +
      step], ... up to [stop] excluded.

      Raises [Invalid_argument] if [step] is 0. *)

  val arange_f : ('a, 'b) dtype -> float -> float -> float -> ('a, 'b) t
  (** [arange_f dtype start stop step] is {!arange} for floats: element [i]
      is [start +. float i *. step] computed in float64, then rounded to
      [dtype].

      Raises [Invalid_argument] if [step] is 0. or a value is NaN. *)

  val linspace : ('a, 'b) dtype -> ?endpoint:bool -> float -> float -> int -> ('a, 'b) t
  (** [linspace dtype ?endpoint start stop n] is [n] values evenly spaced
      from [start] to [stop], [stop] included (exactly) unless [endpoint] is
      [false].

      Raises [Invalid_argument] if [n] is negative. *)

  val logspace :
    ('a, 'b) dtype -> ?endpoint:bool -> ?base:float -> float -> float -> int -> ('a, 'b) t
  (** [logspace dtype ?endpoint ?base start stop n] is [base] (default
      10.) raised to [linspace float64 ?endpoint start stop n].

      Raises [Invalid_argument] if [n] is negative. *)

  val geomspace : ('a, 'b) dtype -> ?endpoint:bool -> float -> float -> int -> ('a, 'b) t
  (** [geomspace dtype ?endpoint start stop n] is [n] values evenly spaced
      on a logarithmic scale from [start] to [stop], both exact.

      Raises [Invalid_argument] if [start] or [stop] is not positive. *)

  val meshgrid : ?indexing:[ `xy | `ij ] -> ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t * ('a, 'b) t
  (** [meshgrid ?indexing x y] is the pair of 2-D coordinate grids of 1-D
      [x] and [y]: with [`xy] (the default) of shape [[ny; nx]], [x] varying
      along columns; with [`ij] of shape [[nx; ny]], [x] along rows.

      Raises [Invalid_argument] if [x] or [y] is not 1-D. *)

  val tril : ?k:int -> ('a, 'b) t -> ('a, 'b) t
  (** [tril ?k x] is [x] with the elements above diagonal [k] (default 0)
      of its last two axes set to zero.

      Raises [Invalid_argument] if [x] has fewer than 2 dimensions. *)

  val triu : ?k:int -> ('a, 'b) t -> ('a, 'b) t
  (** [triu ?k x] is [x] with the elements below diagonal [k] (default 0)
      of its last two axes set to zero.

      Raises [Invalid_argument] if [x] has fewer than 2 dimensions. *)

  val of_bigarray : ('a, 'b, Bigarray.c_layout) Bigarray.Genarray.t -> ('a, 'b) t
  (** [of_bigarray ba] is a tensor over [ba]'s memory, without copying:
      writes through either are seen through both. *)

  val of_buffer : ('a, 'b) t -> shape:int array -> ('a, 'b) t
  (** [of_buffer buf ~shape] is a C-contiguous view of the flat 1-D
      contiguous tensor [buf] (as {!data} and {!to_buffer} give) with
      [shape].

      Raises [Invalid_argument] if [buf] is not flat and contiguous or
      [shape] does not have [size buf] elements. *)

  val one_hot : num_classes:int -> ('a, 'b) t -> (int, uint8_elt) t
  (** [one_hot ~num_classes indices] has a trailing axis of [num_classes]
      appended, holding 1 at each index's class and 0 elsewhere; an index
      outside \[0, [num_classes]) gives a row of zeros.

      Raises [Invalid_argument] if [indices] is not of an integer dtype or
      [num_classes <= 0]. *)

  (** {1:shapes Shape manipulation} *)

  val reshape : int array -> ('a, 'b) t -> ('a, 'b) t
  (** [reshape shape t] is a view of [t]'s elements in row-major order with
      [shape], where one extent may be -1 (inferred).

      Raises [Invalid_argument] if [shape] does not hold [size t] elements,
      has more than one -1, or if [t]'s strides cannot give [shape] without
      copying (call {!contiguous} first). *)

  val broadcast_to : int array -> ('a, 'b) t -> ('a, 'b) t
  (** [broadcast_to shape t] is a view of [t] with [shape], axes aligned
      from the right, each of [t]'s of extent 1 or [shape]'s; a broadcast
      axis has stride 0 (no copy).

      Raises [Invalid_argument] if the shapes do not broadcast. *)

  val broadcasted : ?reverse:bool -> ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t * ('a, 'b) t
  (** [broadcasted ?reverse a b] is the views of [a] and [b] broadcast to
      their common shape, in the order [(b', a')] if [reverse] (default
      [false]).

      Raises [Invalid_argument] if the shapes do not broadcast. *)

  val expand : int array -> ('a, 'b) t -> ('a, 'b) t
  (** [expand shape t] is {!broadcast_to} where -1 in [shape] keeps [t]'s
      extent.

      Raises [Invalid_argument] if an extent of [shape] is negative but -1,
      or as {!broadcast_to}. *)

  val flatten : ?start_dim:int -> ?end_dim:int -> ('a, 'b) t -> ('a, 'b) t
  (** [flatten ?start_dim ?end_dim t] is [t] with axes [start_dim]
      (default 0) to [end_dim] (default -1, the last) merged into one;
      negative axes count from the end. It is a view where [t]'s strides
      allow one, else a copy (unlike {!reshape} and {!ravel}). A scalar gives
      shape [[|1|]].

      Raises [Invalid_argument] if an axis is out of bounds or [start_dim]
      comes after [end_dim]. *)

  val unflatten : int -> int array -> ('a, 'b) t -> ('a, 'b) t
  (** [unflatten dim sizes t] is the view of [t] with axis [dim] split into
      [sizes], one of which may be -1 (inferred).

      Raises [Invalid_argument] if [dim] is out of bounds or [sizes] does
      not hold the axis's extent. *)

  val ravel : ('a, 'b) t -> ('a, 'b) t
  (** [ravel t] is the 1-D view of [t]'s elements in row-major order.

      Raises [Invalid_argument] if that needs a copy: call {!contiguous}
      first. *)

  val squeeze : ?axes:int list -> ('a, 'b) t -> ('a, 'b) t
  (** [squeeze ?axes t] is the view of [t] without its axes of extent 1, or
      only [axes] (negative from the end) when given.

      Raises [Invalid_argument] if an axis of [axes] does not have extent
      1. *)

  val unsqueeze : ?axes:int list -> ('a, 'b) t -> ('a, 'b) t
  (** [unsqueeze ?axes t] is the view of [t] with axes of extent 1 inserted
      at [axes], positions in the result (negative from its end).

      Raises [Invalid_argument] if [axes] is missing, repeats an axis or
      holds one out of bounds. *)

  val squeeze_axis : int -> ('a, 'b) t -> ('a, 'b) t
  (** [squeeze_axis i t] is the view of [t] without axis [i].

      Raises [Invalid_argument] if axis [i] does not have extent 1. *)

  val unsqueeze_axis : int -> ('a, 'b) t -> ('a, 'b) t
  (** [unsqueeze_axis i t] is [unsqueeze ~axes:[ i ] t]. *)

  val expand_dims : int list -> ('a, 'b) t -> ('a, 'b) t
  (** [expand_dims axes t] is [unsqueeze ~axes t]. *)

  val transpose : ?axes:int list -> ('a, 'b) t -> ('a, 'b) t
  (** [transpose ?axes t] is the view of [t] whose axis [i] is [t]'s axis
      [List.nth axes i]; all axes reversed by default.

      Raises [Invalid_argument] if [axes] is not a permutation of [t]'s
      axes. *)

  val flip : ?axes:int list -> ('a, 'b) t -> ('a, 'b) t
  (** [flip ?axes t] is the view of [t] reversed along [axes] (all by
      default), by negative strides.

      Raises [Invalid_argument] if an axis is out of bounds. *)

  val moveaxis : int -> int -> ('a, 'b) t -> ('a, 'b) t
  (** [moveaxis src dst t] is the view of [t] with axis [src] moved to
      position [dst], the others in order.

      Raises [Invalid_argument] if either is out of bounds. *)

  val swapaxes : int -> int -> ('a, 'b) t -> ('a, 'b) t
  (** [swapaxes a1 a2 t] is the view of [t] with axes [a1] and [a2]
      exchanged.

      Raises [Invalid_argument] if either is out of bounds. *)

  val roll : ?axis:int -> int -> ('a, 'b) t -> ('a, 'b) t
  (** [roll ?axis shift t] is [t] with its elements along [axis] moved
      [shift] places on, wrapping around (back where [shift] is negative);
      without [axis], over the flattened elements, the shape kept. *)

  val pad : (int * int) array -> 'a -> ('a, 'b) t -> ('a, 'b) t
  (** [pad widths value t] is [t] with [fst widths.(i)] elements of [value]
      before axis [i] and [snd widths.(i)] after.

      Raises [Invalid_argument] if [widths] does not have [ndim t] entries or
      one is negative. *)

  val shrink : (int * int) array -> ('a, 'b) t -> ('a, 'b) t
  (** [shrink ranges t] is the view of [t] over \[[fst ranges.(i)],
      [snd ranges.(i)]) along each axis [i].

      Raises [Invalid_argument] if [ranges] does not have [ndim t] entries or
      one is not within its axis. *)

  val tile : int array -> ('a, 'b) t -> ('a, 'b) t
  (** [tile reps t] is [t] repeated [reps.(i)] times along axis [i]; axes
      of extent 1 are prepended to the shorter of [reps] and [t]'s shape.

      Raises [Invalid_argument] if a count is negative. *)

  val repeat : ?axis:int -> int -> ('a, 'b) t -> ('a, 'b) t
  (** [repeat ?axis n t] is [t] with each element repeated [n] times along
      [axis], or along the flattened elements without [axis].

      Raises [Invalid_argument] if [n] is negative or [axis] out of bounds. *)

  val concatenate : ?axis:int -> ('a, 'b) t list -> ('a, 'b) t
  (** [concatenate ?axis ts] is [ts] joined along [axis], or their
      flattened elements joined without [axis]. It always copies.

      Raises [Invalid_argument] if [ts] is empty or the shapes differ but
      along [axis]. *)

  val stack : ?axis:int -> ('a, 'b) t list -> ('a, 'b) t
  (** [stack ?axis ts] is [ts], of one shape, joined along a new axis
      [axis] (default 0; negative from the end of the result).

      Raises [Invalid_argument] if [ts] is empty, the shapes differ or
      [axis] is out of bounds. *)

  val vstack : ('a, 'b) t list -> ('a, 'b) t
  (** [vstack ts] is [ts] joined along axis 0, 1-D tensors taken as rows
      (shape [[1; n]]).

      Raises [Invalid_argument] as {!concatenate}. *)

  val hstack : ('a, 'b) t list -> ('a, 'b) t
  (** [hstack ts] is [ts] joined along axis 1, or along axis 0 if all are
      1-D.

      Raises [Invalid_argument] as {!concatenate}. *)

  val dstack : ('a, 'b) t list -> ('a, 'b) t
  (** [dstack ts] is [ts] joined along axis 2, a 1-D [[n]] taken as
      [[1; n; 1]] and a 2-D [[m; n]] as [[m; n; 1]].

      Raises [Invalid_argument] as {!concatenate}. *)

  val broadcast_arrays : ('a, 'b) t list -> ('a, 'b) t list
  (** [broadcast_arrays ts] is the views of [ts] broadcast to their common
      shape.

      Raises [Invalid_argument] if the shapes do not broadcast. *)

  val array_split :
    axis:int -> [< `Count of int | `Indices of int list ] -> ('a, 'b) t -> ('a, 'b) t list
  (** [array_split ~axis spec t] is views of [t] cut along [axis]: with
      [`Count n] into [n] parts as even as can be, the first ones one longer;
      with [`Indices [i0; i1; ...]] at those indices: \[0, i0), \[i0, i1),
      ..., \[ik, end).

      Raises [Invalid_argument] if [axis] is out of bounds or [n <= 0]. *)

  val split : axis:int -> int -> ('a, 'b) t -> ('a, 'b) t list
  (** [split ~axis n t] is [t] cut into [n] views of equal extent along
      [axis].

      Raises [Invalid_argument] if the extent is not a multiple of [n]. *)

  (** {1:convert Conversion and copies} *)

  val cast : ('c, 'd) dtype -> ('a, 'b) t -> ('c, 'd) t
  (** [cast dtype t] is a copy of [t] with each element converted to
      [dtype] (floats into integers round toward zero, saturating; see
      {!Nx_kernel.Prog.op1.Cast}). *)

  val astype : ('c, 'd) dtype -> ('a, 'b) t -> ('c, 'd) t
  (** [astype] is {!cast}. *)

  val contiguous : ('a, 'b) t -> ('a, 'b) t
  (** [contiguous t] is [t] if it is C-contiguous, else a contiguous copy. *)

  val copy : ('a, 'b) t -> ('a, 'b) t
  (** [copy t] is a fresh C-contiguous copy of [t]. *)

  val blit : ('a, 'b) t -> ('a, 'b) t -> unit
  (** [blit src dst] copies [src]'s elements into [dst].

      Raises [Invalid_argument] if the shapes differ. *)

  val fill : 'a -> ('a, 'b) t -> ('a, 'b) t
  (** [fill v t] is a fresh tensor of [t]'s dtype and shape whose every
      element is [v]; [t] is left alone. *)

  (** {1:indexing Indexing} *)

  val get : int list -> ('a, 'b) t -> ('a, 'b) t
  (** [get indices t] is the view of [t] at [indices] along its first axes
      (negative from the end): a scalar view when every axis is indexed.

      Raises [Invalid_argument] if an index is out of bounds or there are
      more indices than axes. *)

  val set : int list -> ('a, 'b) t -> ('a, 'b) t -> unit
  (** [set indices t v] writes [v], broadcast, into [get indices t].

      Raises [Invalid_argument] as {!get} or if [v] does not broadcast. *)

  val slice : index list -> ('a, 'b) t -> ('a, 'b) t
  (** [slice specs t] is the part of [t] that [specs] select, a view
      unless an {!constructor-L} list does not step evenly.

      Raises [Invalid_argument] if an index is out of bounds, a step is 0, a
      mask is given (not supported yet) or there are more specs than axes. *)

  val set_slice : index list -> ('a, 'b) t -> ('a, 'b) t -> unit
  (** [set_slice specs t v] writes [v], broadcast, into the part of [t] that
      [specs] select.

      Raises [Invalid_argument] if [specs] hold {!constructor-N}, or as {!slice}. *)

  val item : int list -> ('a, 'b) t -> 'a
  (** [item indices t] is the element of [t] at [indices] (negative from
      the end).

      Raises [Invalid_argument] if there is not one index per axis or one is
      out of bounds. *)

  val set_item : int list -> 'a -> ('a, 'b) t -> unit
  (** [set_item indices v t] stores [v] at [indices] in [t].

      Raises [Invalid_argument] as {!item}. *)

  (** {2:gathers Gathers and scatters}

      Indices are [int32] tensors. Under [?mode] [`raise] (the default) an
      index must lie in \[-n, n), [n] the extent it indexes, and a negative
      one counts from the end; [`wrap] takes it modulo [n]; [`clip] clamps
      it to \[0, n - 1\]. Out-of-bounds indices raise before anything is
      read or written. *)

  val take : ?axis:int -> ?mode:[ `raise | `wrap | `clip ] -> (int32, int32_elt) t -> ('a, 'b) t -> ('a, 'b) t
  (** [take ?axis ?mode indices t] is the slices of [t] at [indices] along
      [axis], of shape [t]'s with that axis replaced by [indices]' shape;
      without [axis], the elements of the flattened [t] at [indices], of
      [indices]' shape.

      Raises [Invalid_argument] if an index is out of bounds under [`raise],
      or [indices] index an axis of extent 0. *)

  val take_along_axis : axis:int -> (int32, int32_elt) t -> ('a, 'b) t -> ('a, 'b) t
  (** [take_along_axis ~axis indices t] is, at each index [j] of
      [indices], [t]'s element at [j] with its position along [axis]
      replaced by [indices]' element at [j]. [indices] has [t]'s rank and
      broadcasts with it off [axis].

      Raises [Invalid_argument] if the ranks differ, the shapes do not
      broadcast off [axis], or an index is out of bounds. *)

  val put :
    ?axis:int -> indices:(int32, int32_elt) t -> values:('a, 'b) t -> ?mode:[ `raise | `wrap | `clip ] -> ('a, 'b) t -> unit
  (** [put ?axis ~indices ~values ?mode t] writes into [t] the inverse of
      {!take}: [values], broadcast to the shape [take ?axis indices t]
      has, at [indices] along [axis] (of the flattened [t] without [axis]);
      where indices repeat, the last write wins.

      Raises [Invalid_argument] as {!take}, or if [values] does not
      broadcast. *)

  val index_put :
    indices:(int32, int32_elt) t array -> values:('a, 'b) t -> ?mode:[ `raise | `wrap | `clip ] -> ('a, 'b) t -> unit
  (** [index_put ~indices ~values ?mode t] writes [values] into [t] at the
      coordinates [indices] hold, one index tensor per axis of [t], all
      broadcast to one shape, [values] to it too; where coordinates repeat,
      the last write (in C order) wins.

      Raises [Invalid_argument] if the number of index tensors is not
      [ndim t], the shapes do not broadcast, or an index is out of
      bounds. *)

  val put_along_axis : axis:int -> indices:(int32, int32_elt) t -> values:('a, 'b) t -> ('a, 'b) t -> unit
  (** [put_along_axis ~axis ~indices ~values t] writes into [t] the inverse
      of {!take_along_axis}: at each index [j] of [indices] (broadcast to
      [t]'s extents off [axis]), [values]' element at [j] (broadcast to
      that shape); where positions repeat, the last wins.

      Raises [Invalid_argument] if the shapes are incompatible or an index
      is out of bounds. *)

  val scatter :
    ?mode:[ `Set | `Add ] -> ?unique_indices:bool -> axis:int -> indices:(int32, int32_elt) t -> values:('a, 'b) t ->
    ('a, 'b) t -> ('a, 'b) t
  (** [scatter ?mode ?unique_indices ~axis ~indices ~values t] is a new
      tensor: [t] with [values] placed as {!put_along_axis} places them,
      [`Set] (the default) keeping the last update at a repeated position,
      [`Add] adding every update to [t]'s element in C order of the
      updates. [unique_indices] promises no position repeats; broken, the
      result there is unspecified.

      Raises [Invalid_argument] as {!put_along_axis}. *)

  val compress : ?axis:int -> condition:(bool, bool_elt) t -> ('a, 'b) t -> ('a, 'b) t
  (** [compress ?axis ~condition t] is the slices of [t] along [axis] (of
      the flattened [t] without it) where the 1-D [condition] is [true];
      [condition] may be shorter than the axis, the rest unselected.

      Raises [Invalid_argument] if [condition] is not 1-D or is longer than
      the axis. *)

  val extract : condition:(bool, bool_elt) t -> ('a, 'b) t -> ('a, 'b) t
  (** [extract ~condition t] is the 1-D tensor of [t]'s elements where
      [condition] is [true], both flattened.

      Raises [Invalid_argument] if their sizes differ. *)

  val nonzero : ('a, 'b) t -> (int32, int32_elt) t array
  (** [nonzero t] is, per axis of [t], the 1-D tensor of the coordinates
      along it of [t]'s elements that are not zero, in C order. *)

  val argwhere : ('a, 'b) t -> (int32, int32_elt) t
  (** [argwhere t] is the tensor of shape [[k; ndim t]] whose rows are the
      coordinates of [t]'s [k] elements that are not zero, in C order. *)

  (** {1:arith Arithmetic}

      Binary functions broadcast their operands; [_s] forms take a scalar
      on the right, [r*_s] forms on the left. *)

  val add : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** [add a b] is [a + b] elementwise. *)

  val add_s : ('a, 'b) t -> 'a -> ('a, 'b) t (** [add_s t s] is [t + s] elementwise. *)

  val radd_s : 'a -> ('a, 'b) t -> ('a, 'b) t (** [radd_s s t] is [s + t] elementwise. *)

  val sub : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** [sub a b] is [a - b] elementwise. *)

  val sub_s : ('a, 'b) t -> 'a -> ('a, 'b) t (** [sub_s t s] is [t - s] elementwise. *)

  val rsub_s : 'a -> ('a, 'b) t -> ('a, 'b) t (** [rsub_s s t] is [s - t] elementwise. *)

  val mul : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** [mul a b] is [a * b] elementwise. *)

  val mul_s : ('a, 'b) t -> 'a -> ('a, 'b) t (** [mul_s t s] is [t * s] elementwise. *)

  val rmul_s : 'a -> ('a, 'b) t -> ('a, 'b) t (** [rmul_s s t] is [s * t] elementwise. *)

  val div : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [div a b] is [a / b] elementwise: true division of floats, integers
      truncated toward zero (a zero divisor gives 0). *)

  val div_s : ('a, 'b) t -> 'a -> ('a, 'b) t (** [div_s t s] is [t / s] elementwise. *)

  val rdiv_s : 'a -> ('a, 'b) t -> ('a, 'b) t (** [rdiv_s s t] is [s / t] elementwise. *)

  val pow : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** [pow base exp] is [base{^exp}] elementwise. *)

  val pow_s : ('a, 'b) t -> 'a -> ('a, 'b) t (** [pow_s t s] is [t{^s}] elementwise. *)

  val rpow_s : 'a -> ('a, 'b) t -> ('a, 'b) t (** [rpow_s s t] is [s{^t}] elementwise. *)

  val mod_ : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [mod_ a b] is the remainder of [a / b] elementwise, of [b]'s sign (as
      Python's [%]). *)

  val mod_s : ('a, 'b) t -> 'a -> ('a, 'b) t (** [mod_s t s] is [mod_] by the scalar [s]. *)

  val rmod_s : 'a -> ('a, 'b) t -> ('a, 'b) t (** [rmod_s s t] is [mod_] of the scalar [s] by [t]. *)

  val neg : ('a, 'b) t -> ('a, 'b) t (** [neg t] is [-t] elementwise. *)

  val conjugate : ('a, 'b) t -> ('a, 'b) t
  (** [conjugate t] is the complex conjugate of [t]; a real [t]'s copy. *)

  val abs : ('a, 'b) t -> ('a, 'b) t
  (** [abs t] is the magnitude of each element (a complex number's modulus,
      as a complex number). *)

  val sign : ('a, 'b) t -> ('a, 'b) t
  (** [sign t] is -1, 0 or 1 by each element's sign (1 for a non-zero
      unsigned integer). *)

  val square : ('a, 'b) t -> ('a, 'b) t (** [square t] is [t * t] elementwise. *)

  val sqrt : ('a, 'b) t -> ('a, 'b) t (** [sqrt t] is the square root of each element. *)

  val rsqrt : ('a, 'b) t -> ('a, 'b) t (** [rsqrt t] is [1 / sqrt t] elementwise. *)

  val recip : ('a, 'b) t -> ('a, 'b) t (** [recip t] is [1 / t] elementwise. *)

  val log : ('a, 'b) t -> ('a, 'b) t (** [log t] is the natural logarithm of each element. *)

  val log2 : ('a, 'b) t -> ('a, 'b) t (** [log2 t] is the base-2 logarithm of each element. *)

  val exp : ('a, 'b) t -> ('a, 'b) t (** [exp t] is [e{^t}] elementwise. *)

  val exp2 : ('a, 'b) t -> ('a, 'b) t (** [exp2 t] is [2{^t}] elementwise. *)

  val sin : ('a, 'b) t -> ('a, 'b) t (** [sin t] is the sine of each element. *)

  val cos : ('a, 'b) t -> ('a, 'b) t (** [cos t] is the cosine of each element. *)

  val tan : ('a, 'b) t -> ('a, 'b) t (** [tan t] is the tangent of each element. *)

  val asin : ('a, 'b) t -> ('a, 'b) t (** [asin t] is the arcsine of each element. *)

  val acos : ('a, 'b) t -> ('a, 'b) t (** [acos t] is the arccosine of each element. *)

  val atan : ('a, 'b) t -> ('a, 'b) t (** [atan t] is the arctangent of each element. *)

  val atan2 : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [atan2 y x] is the angle of the point ([x], [y]) elementwise, in
      \[-π, π\]. *)

  val sinh : ('a, 'b) t -> ('a, 'b) t (** [sinh t] is the hyperbolic sine of each element. *)

  val cosh : ('a, 'b) t -> ('a, 'b) t (** [cosh t] is the hyperbolic cosine of each element. *)

  val tanh : ('a, 'b) t -> ('a, 'b) t (** [tanh t] is the hyperbolic tangent of each element. *)

  val asinh : ('a, 'b) t -> ('a, 'b) t (** [asinh t] is the inverse hyperbolic sine of each element. *)

  val acosh : ('a, 'b) t -> ('a, 'b) t (** [acosh t] is the inverse hyperbolic cosine of each element. *)

  val atanh : ('a, 'b) t -> ('a, 'b) t (** [atanh t] is the inverse hyperbolic tangent of each element. *)

  val trunc : ('a, 'b) t -> ('a, 'b) t (** [trunc t] rounds each element toward zero. *)

  val ceil : ('a, 'b) t -> ('a, 'b) t (** [ceil t] rounds each element toward +∞. *)

  val floor : ('a, 'b) t -> ('a, 'b) t (** [floor t] rounds each element toward -∞. *)

  val round : ('a, 'b) t -> ('a, 'b) t
  (** [round t] rounds each element to the nearest integer, ties away from
      zero. *)

  val hypot : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [hypot x y] is [sqrt (x² + y²)] elementwise, without intermediate
      overflow. *)

  val lerp : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [lerp a b w] is [a + w * (b - a)] elementwise. *)

  val lerp_scalar_weight : ('a, 'b) t -> ('a, 'b) t -> 'a -> ('a, 'b) t
  (** [lerp_scalar_weight a b w] is {!lerp} with the scalar weight [w]. *)

  (** {1:compare Classification, comparison and logic} *)

  val isinf : ('a, 'b) t -> (bool, bool_elt) t
  (** [isinf t] is [true] where [t] is +∞ or -∞; all [false] for dtypes
      other than floats and complex numbers. *)

  val isnan : ('a, 'b) t -> (bool, bool_elt) t
  (** [isnan t] is [true] where [t] is NaN; all [false] for dtypes other
      than floats and complex numbers. *)

  val isfinite : ('a, 'b) t -> (bool, bool_elt) t
  (** [isfinite t] is [true] where [t] is neither infinite nor NaN; all
      [true] for dtypes other than floats and complex numbers. *)

  val cmplt : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [cmplt a b] is [true] where [a < b]. *)

  val less : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [less] is {!cmplt}. *)

  val less_s : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** [less_s t s] is [true] where [t < s]. *)

  val cmpne : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [cmpne a b] is [true] where [a ≠ b]. *)

  val not_equal : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [not_equal] is {!cmpne}. *)

  val not_equal_s : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** [not_equal_s t s] is [true] where [t ≠ s]. *)

  val cmpeq : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [cmpeq a b] is [true] where [a = b]. *)

  val equal : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [equal] is {!cmpeq}. *)

  val equal_s : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** [equal_s t s] is [true] where [t = s]. *)

  val cmpgt : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [cmpgt a b] is [true] where [a > b]. *)

  val greater : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [greater] is {!cmpgt}. *)

  val greater_s : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** [greater_s t s] is [true] where [t > s]. *)

  val cmple : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [cmple a b] is [true] where [a ≤ b]. *)

  val less_equal : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [less_equal] is {!cmple}. *)

  val less_equal_s : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** [less_equal_s t s] is [true] where [t ≤ s]. *)

  val cmpge : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [cmpge a b] is [true] where [a ≥ b]. *)

  val greater_equal : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** [greater_equal] is {!cmpge}. *)

  val greater_equal_s : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** [greater_equal_s t s] is [true] where [t ≥ s]. *)

  val array_equal : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t
  (** [array_equal a b] is the scalar [true] iff [a] and [b] have one shape
      and equal elements. *)

  val maximum : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** [maximum a b] is the greater of [a] and [b] elementwise (NaN if either is). *)

  val maximum_s : ('a, 'b) t -> 'a -> ('a, 'b) t (** [maximum_s t s] is {!maximum} with the scalar [s]. *)

  val rmaximum_s : 'a -> ('a, 'b) t -> ('a, 'b) t (** [rmaximum_s s t] is [maximum_s t s]. *)

  val minimum : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** [minimum a b] is the lesser of [a] and [b] elementwise (NaN if either is). *)

  val minimum_s : ('a, 'b) t -> 'a -> ('a, 'b) t (** [minimum_s t s] is {!minimum} with the scalar [s]. *)

  val rminimum_s : 'a -> ('a, 'b) t -> ('a, 'b) t (** [rminimum_s s t] is [minimum_s t s]. *)

  val logical_and : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [logical_and a b] is 1 where both are non-zero, else 0. *)

  val logical_or : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [logical_or a b] is 1 where either is non-zero, else 0. *)

  val logical_xor : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [logical_xor a b] is 1 where exactly one is non-zero, else 0. *)

  val logical_not : ('a, 'b) t -> ('a, 'b) t
  (** [logical_not t] is 1 where [t] is zero, else 0. *)

  val where : (bool, bool_elt) t -> ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [where cond if_true if_false] is [if_true] where [cond] is true and
      [if_false] elsewhere, the three broadcast to one shape. *)

  val clamp : ?min:'a -> ?max:'a -> ('a, 'b) t -> ('a, 'b) t
  (** [clamp ?min ?max t] is [t] with elements below [min] raised to it and
      above [max] lowered to it; either bound may be left out. *)

  val clip : ?min:'a -> ?max:'a -> ('a, 'b) t -> ('a, 'b) t
  (** [clip] is {!clamp}. *)

  val bitwise_xor : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** [bitwise_xor a b] is the bitwise exclusive or. *)

  val bitwise_or : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** [bitwise_or a b] is the bitwise or. *)

  val bitwise_and : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** [bitwise_and a b] is the bitwise and. *)

  val bitwise_not : ('a, 'b) t -> ('a, 'b) t (** [bitwise_not t] is the bitwise complement. *)

  val invert : ('a, 'b) t -> ('a, 'b) t (** [invert] is {!bitwise_not}. *)

  val lshift : ('a, 'b) t -> int -> ('a, 'b) t
  (** [lshift t n] shifts each element left by [n] bits (0 past the width).

      Raises [Invalid_argument] if [n] is negative or [t] not of an integer
      dtype. *)

  val rshift : ('a, 'b) t -> int -> ('a, 'b) t
  (** [rshift t n] shifts each element right by [n] bits, arithmetically on
      signed dtypes.

      Raises [Invalid_argument] as {!lshift}. *)

  (** {1:reduce Reductions and scans}

      [?axes] are the axes reduced (negative from the end; all by default);
      [?keepdims] (default [false]) keeps them with extent 1. Sums and
      products combine in lane order (see {!Nx_kernel}), integers in int64
      (uint64 unsigned), narrow floats in float32, each result rounded once
      into the dtype. *)

  val sum : ?axes:int list -> ?keepdims:bool -> ('a, 'b) t -> ('a, 'b) t
  (** [sum ?axes ?keepdims t] is the sum of [t] along [axes].

      Raises [Invalid_argument] if an axis is out of bounds or repeated. *)

  val max : ?axes:int list -> ?keepdims:bool -> ('a, 'b) t -> ('a, 'b) t
  (** [max ?axes ?keepdims t] is the greatest element along [axes]; NaN
      where one is.

      Raises [Invalid_argument] if a reduced axis has extent 0. *)

  val min : ?axes:int list -> ?keepdims:bool -> ('a, 'b) t -> ('a, 'b) t
  (** [min ?axes ?keepdims t] is the least element along [axes]; NaN where
      one is.

      Raises [Invalid_argument] if a reduced axis has extent 0. *)

  val prod : ?axes:int list -> ?keepdims:bool -> ('a, 'b) t -> ('a, 'b) t
  (** [prod ?axes ?keepdims t] is the product along [axes]. *)

  val cumsum : ?axis:int -> ('a, 'b) t -> ('a, 'b) t
  (** [cumsum ?axis t] is the inclusive running sum along [axis], or along
      the flattened elements (a 1-D result) without [axis]. *)

  val cumprod : ?axis:int -> ('a, 'b) t -> ('a, 'b) t
  (** [cumprod ?axis t] is the inclusive running product, as {!cumsum}. *)

  val cummax : ?axis:int -> ('a, 'b) t -> ('a, 'b) t
  (** [cummax ?axis t] is the inclusive running maximum, NaN from the first
      NaN on, as {!cumsum}. *)

  val cummin : ?axis:int -> ('a, 'b) t -> ('a, 'b) t
  (** [cummin ?axis t] is the inclusive running minimum, as {!cummax}. *)

  val mean : ?axes:int list -> ?keepdims:bool -> ('a, 'b) t -> ('a, 'b) t
  (** [mean ?axes ?keepdims t] is the arithmetic mean along [axes] (NaN
      where one is); integer tensors are averaged in float64 and the mean
      rounded toward zero. *)

  val var : ?axes:int list -> ?keepdims:bool -> ?ddof:int -> ('a, 'b) t -> ('a, 'b) t
  (** [var ?axes ?keepdims ?ddof t] is the variance Σ|x - mean|² / (N -
      [ddof]) along [axes], N the number of elements reduced; [ddof] defaults
      to 0. Floats use the kernels' Moments (two passes); integers are
      computed in float64 and rounded toward zero; complex numbers give a
      real variance as a complex number.

      Raises [Invalid_argument] if [ddof >= N]. *)

  val std : ?axes:int list -> ?keepdims:bool -> ?ddof:int -> ('a, 'b) t -> ('a, 'b) t
  (** [std ?axes ?keepdims ?ddof t] is the square root of {!var}. *)

  val all : ?axes:int list -> ?keepdims:bool -> ('a, 'b) t -> (bool, bool_elt) t
  (** [all ?axes ?keepdims t] is [true] where every element along [axes] is
      non-zero ([true] when there is none). *)

  val any : ?axes:int list -> ?keepdims:bool -> ('a, 'b) t -> (bool, bool_elt) t
  (** [any ?axes ?keepdims t] is [true] where some element along [axes] is
      non-zero. *)

  val argmax : ?axis:int -> ?keepdims:bool -> ('a, 'b) t -> (int32, int32_elt) t
  (** [argmax ?axis ?keepdims t] is the position of the first greatest
      element along [axis] (a NaN counting as the greatest), or in the
      flattened elements without [axis].

      Raises [Invalid_argument] if [axis] is out of bounds or the reduction
      is empty. *)

  val argmin : ?axis:int -> ?keepdims:bool -> ('a, 'b) t -> (int32, int32_elt) t
  (** [argmin ?axis ?keepdims t] is the position of the first least
      element, as {!argmax}. *)

  (** {1:sorting Sorting} *)

  val sort : ?descending:bool -> ?axis:int -> ('a, 'b) t -> ('a, 'b) t * (int32, int32_elt) t
  (** [sort ?descending ?axis t] is [t] sorted along [axis] (default -1),
      ascending unless [descending], stably, with the positions the sorted
      elements had along [axis]. The order is total: [-0] below [+0], NaNs
      last ascending (first descending), complex numbers by real then
      imaginary part.

      Raises [Invalid_argument] if [axis] is out of bounds. *)

  val argsort : ?descending:bool -> ?axis:int -> ('a, 'b) t -> (int32, int32_elt) t
  (** [argsort ?descending ?axis t] is [snd (sort ?descending ?axis t)]. *)

  (** {1:linalg Matrices} *)

  val diagonal : ?offset:int -> ?axis1:int -> ?axis2:int -> ('a, 'b) t -> ('a, 'b) t
  (** [diagonal ?offset ?axis1 ?axis2 t] is the view of the diagonals
      [offset] (default 0) of the planes of axes [axis1] and [axis2]
      (default the last two), as a last axis.

      Raises [Invalid_argument] if [axis1 = axis2] or either is out of
      bounds. *)

  val matrix_transpose : ('a, 'b) t -> ('a, 'b) t
  (** [matrix_transpose t] is the view of [t] with its last two axes
      exchanged; [t] itself if it has fewer than two. *)

  val outer : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [outer a b] is the matrix of the products of [a]'s and [b]'s
      flattened elements, of shape [[numel a; numel b]]. *)

  val kron : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [kron a b] is the Kronecker product of [a] and [b], of shape
      [[a.shape.(i) * b.shape.(i)]], the shorter shape prefixed by 1s. It is
      one elementwise product of two stride-0 views. *)

  val cross : ?axis:int -> ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [cross ?axis a b] is the cross product of the 3-vectors of [a] and
      [b] along [axis] (default -1), the two broadcast.

      Raises [Invalid_argument] if that axis's extent is not 3. *)

  (** {2:products Products}

      The products run in the contract kernel, in the operands' dtype
      (narrow floats accumulate in float32, bool in int64, so a bool product
      is whether some term is true), each result rounded once. *)

  val dot : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [dot a b] contracts the last axis of [a] with the only axis of a 1-D
      [b], else with [b]'s second-to-last axis; the result has [a]'s other
      axes then [b]'s (no broadcasting).

      Raises [Invalid_argument] if either is 0-D or the contracted extents
      differ. *)

  val matmul : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [matmul a b] is the matrix product over the last two axes, the axes
      before them broadcast; a 1-D [a] is a row, a 1-D [b] a column, their
      axis dropped from the result.

      Raises [Invalid_argument] if either is 0-D, the inner extents differ
      or the batch axes do not broadcast. *)

  val vdot : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [vdot a b] is the 0-D sum of the products of the flattened [a],
      conjugated where complex, and [b].

      Raises [Invalid_argument] if their sizes differ. *)

  val vecdot : ?axis:int -> ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [vecdot ?axis a b] is the sum along [axis] (default -1) of the
      products of [a], conjugated where complex, and [b], broadcast.

      Raises [Invalid_argument] if their extents along [axis] differ. *)

  val inner : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [inner a b] contracts the last axes of [a] and [b]; the result has
      [a]'s other axes then [b]'s.

      Raises [Invalid_argument] if either is 0-D or the last extents
      differ. *)

  val tensordot : ?axes:int list * int list -> ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t
  (** [tensordot ?axes a b] contracts the axes of [a] in [fst axes] with
      those of [b] in [snd axes], pair by pair (default: [a]'s last with
      [b]'s first); the result has [a]'s other axes then [b]'s.

      Raises [Invalid_argument] if the lists differ in length, an axis is
      out of bounds or paired extents differ. *)

  val einsum : string -> ('a, 'b) t array -> ('a, 'b) t
  (** [einsum subscripts operands] is Einstein summation: ["ij,jk->ik"]
      names each operand's axes by letters; a letter repeated within an
      operand takes its diagonal, letters absent from the output are summed
      over, and the output's axes are in its order (without ["->"], the
      letters used once, alphabetically). Operands contract left to right.

      Raises [Invalid_argument] if the subscripts are malformed (ellipses
      are not supported), do not fit the operands, or one letter has two
      extents. *)

  val multi_dot : ('a, 'b) t array -> ('a, 'b) t
  (** [multi_dot ts] is the product of the matrices [ts] (the first may be
      a row vector, the last a column vector), in the association order of
      fewest multiplications.

      Raises [Invalid_argument] if [ts] is empty, the shapes do not chain,
      or the dtype is not a float or complex dtype. *)

  val matrix_power : ('a, 'b) t -> int -> ('a, 'b) t
  (** [matrix_power t n] is each square matrix of [t] to the power [n], by
      repeated squaring: the identity for [n = 0], powers of the inverse
      (by an lu) for [n < 0].

      Raises [Invalid_argument] if the matrices are not square, the dtype is
      not a float or complex dtype, or [n < 0] and a matrix is singular. *)

  (** {2:factor Factorisations}

      They compute on each matrix of the last two axes, in float32 for the
      narrow floats. *)

  val cholesky : ?upper:bool -> ('a, 'b) t -> ('a, 'b) t
  (** [cholesky ?upper a] is the lower triangular L with [a = L Lᴴ], or
      with [upper] the upper triangular U with [a = Uᴴ U]; it reads [a]'s
      lower triangle alone.

      Raises [Invalid_argument] if a matrix is not square or not
      positive-definite, or the dtype is not a float or complex dtype. *)

  val qr : ?mode:[ `Complete | `Reduced ] -> ('a, 'b) t -> ('a, 'b) t * ('a, 'b) t
  (** [qr ?mode a] is [(q, r)] with [a = q r], [q]'s columns orthonormal
      and [r] upper triangular: for an m × n matrix and k = min(m, n),
      [`Reduced] (the default) gives q of m × k and r of k × n,
      [`Complete] q of m × m and r of m × n.

      Raises [Invalid_argument] if [a] has fewer than 2 axes or the dtype
      is not a float or complex dtype. *)

  (** {1:random Random numbers}

      Every sample is computed by one kernel call from a key: the bits at
      each element are SplitMix64's finaliser of the element's row-major
      number mixed with the key, so a key gives the same tensor whatever the
      threads. The functions take their key from {!Rng.next_key}. *)

  (** Splittable keys and implicit key management. *)
  module Rng : sig
    type key = int
    (** The type for keys: non-negative integers. *)

    val key : int -> key
    (** [key seed] is the key of [seed]. *)

    val split : ?n:int -> key -> key array
    (** [split ?n k] is [n] (default 2) keys derived from [k], each
        independent of the others and of [k]'s own samples.

        Raises [Invalid_argument] if [n] is negative. *)

    val fold_in : key -> int -> key
    (** [fold_in k data] is the key derived from [k] and [data]. *)

    val to_int : key -> int
    (** [to_int k] is [k]. *)

    val next_key : unit -> key
    (** [next_key ()] is the next key of the innermost {!run} or {!with_key}
        scope of the calling domain: the scope's key folded with the count of
        keys it gave. Outside any scope, a key from a generator seeded by the
        system, different at each run. *)

    val run : seed:int -> (unit -> 'a) -> 'a
    (** [run ~seed f] is [f ()] in a scope of key [key seed]: the same seed
        and calls give the same keys, and so the same samples. Scopes nest;
        the outer one resumes when [f] returns or raises. *)

    val with_key : key -> (unit -> 'a) -> 'a
    (** [with_key k f] is {!run} from the key [k]. *)
  end

  val rand : ('a, 'b) dtype -> int array -> ('a, 'b) t
  (** [rand dtype shape] samples uniformly from \[0, 1): multiples of
      2{^-p}, [p] the dtype's precision, so that none rounds to 1.

      Raises [Invalid_argument] if [dtype] is not a float dtype. *)

  val randn : ('a, 'b) dtype -> int array -> ('a, 'b) t
  (** [randn dtype shape] samples the standard normal distribution by the
      Box-Muller transform, in float64 then rounded to [dtype].

      Raises [Invalid_argument] if [dtype] is not a float dtype. *)

  val randint : ('a, 'b) dtype -> ?high:int -> int array -> int -> ('a, 'b) t
  (** [randint dtype ?high shape low] samples integers uniformly from
      \[[low], [high]) ([high] defaults to 10), as 64 random bits modulo
      [high - low].

      Raises [Invalid_argument] if [dtype] is not an integer dtype or [low >=
      high]. *)

  val bernoulli : p:float -> int array -> (bool, bool_elt) t
  (** [bernoulli ~p shape] samples booleans, [true] with probability [p].

      Raises [Invalid_argument] if [p] is not in \[0, 1\]. *)

  val permutation : int -> (int32, int32_elt) t
  (** [permutation n] is a random permutation of \[0, n - 1\].

      Raises [Invalid_argument] if [n <= 0]. *)

  val shuffle : ('a, 'b) t -> ('a, 'b) t
  (** [shuffle t] is a copy of [t] with its first axis randomly permuted;
      a copy of [t] if it is 0-D. *)

  val truncated_normal : ('a, 'b) dtype -> lower:float -> upper:float -> int array -> ('a, 'b) t
  (** [truncated_normal dtype ~lower ~upper shape] samples the standard
      normal distribution truncated to \[[lower], [upper]\], by its inverse
      distribution function (erfinv by Giles's approximation refined by two
      Newton steps, in float64) at uniform points between the bounds'
      probabilities.

      Raises [Invalid_argument] if [dtype] is not a float dtype or [lower >=
      upper]. *)

  val categorical : ?axis:int -> ?shape:int array -> ('a, 'b) t -> (int32, int32_elt) t
  (** [categorical ?axis ?shape logits] samples class indices along [axis]
      (default -1) from the unnormalised log-probabilities [logits], by the
      Gumbel-max trick: {!argmax} of [logits] plus Gumbel noise. [shape]
      prepends batch axes.

      Raises [Invalid_argument] if [logits] is not of a float dtype or
      [axis] is out of bounds. *)

  (** {1:printing Printing} *)

  val pp : Format.formatter -> ('a, 'b) t -> unit
  (** [pp] formats a tensor as described above: dtype and shape (unless a
      short vector or scalar), a break hint, then the elements, one row a
      line, rows in a vertical box. Like other Format printers it opens no
      box around the whole: within one (the toplevel's, or ["@[%a@]"] as
      {!to_string} and {!print} use) the elements stay on the header's line
      when they fit. *)

  val to_string : ('a, 'b) t -> string
  (** [to_string t] is [t] as {!pp} formats it. *)

  val print : ('a, 'b) t -> unit
  (** [print t] writes [t] and a newline on standard output. *)

  (** {1:ptree Parameter trees} *)

  (** Parameter trees: structures whose leaves are tensors. {!Ptree.S} is
      the traversal interface (a record of tensors with one-line
      traversals, typically); {!Ptree.t} is the stock instance for
      structures known only at run time, and is itself an {!Ptree.S}. The
      functions a traversal applies are polymorphic in the leaves' types,
      so they come in records ({!Ptree.map_fn}, ...). *)
  module Ptree : sig
    type ('a, 'b) leaf = ('a, 'b) t
    (** A leaf: a tensor of any dtype. *)

    type map_fn = { map : 'a 'b. ('a, 'b) leaf -> ('a, 'b) leaf }
    (** A function of each leaf, at its own dtype. *)

    type map2_fn = { map2 : 'a 'b. ('a, 'b) leaf -> ('a, 'b) leaf -> ('a, 'b) leaf }
    (** A function of two corresponding leaves, of one dtype. *)

    type iter_fn = { iter : 'a 'b. ('a, 'b) leaf -> unit }
    (** An action on each leaf. *)

    (** Structures whose tensor leaves can be traversed. [map f t] applies
        [f] to every leaf of [t] once and keeps [t]'s structure; [map2 f a
        b] applies [f] to the corresponding leaves of [a] and [b], which
        have one structure; [iter f t] applies [f] to every leaf once, in
        an order that does not change. *)
    module type S = sig
      type t
      (** The structure. *)

      val map : map_fn -> t -> t
      (** [map f t] is [t] with [f.map] applied to each leaf. *)

      val map2 : map2_fn -> t -> t -> t
      (** [map2 f a b] is [a] and [b] combined leaf by leaf with [f.map2].

          Raises [Invalid_argument] if they differ in structure. *)

      val iter : iter_fn -> t -> unit
      (** [iter f t] applies [f.iter] to each leaf of [t]. *)
    end

    (** A leaf whatever its dtype. *)
    type tensor = P : ('a, 'b) leaf -> tensor

    (** The stock dynamic tree, itself an {!S}. *)
    type t =
      | Tensor of tensor  (** A leaf. *)
      | List of t list  (** An ordered branch. *)
      | Dict of (string * t) list  (** A branch of named parts, in order. *)

    val tensor : ('a, 'b) leaf -> t
    (** [tensor x] is [Tensor (P x)]. *)

    val list : t list -> t
    (** [list ts] is [List ts]. *)

    val dict : (string * t) list -> t
    (** [dict kvs] is [Dict kvs].

        Raises [Invalid_argument] if a key repeats. *)

    val map : map_fn -> t -> t
    (** [map f t] is [t] with [f.map] applied to each leaf, in the order of
        {!val-iter}. *)

    val map2 : map2_fn -> t -> t -> t
    (** [map2 f a b] is [a] and [b] combined leaf by leaf with [f.map2].

        Raises [Invalid_argument] naming the path (["Ptree.map2: at w.0:
        ..."]) where they differ in structure, keys or a leaf's dtype. *)

    val iter : iter_fn -> t -> unit
    (** [iter f t] applies [f.iter] to each leaf, lists in order, dicts in
        the order of their keys as given. *)
  end

  (** {1:infix Operators} *)

  (** Infix operators. *)
  module Infix : sig
    val ( + ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!add}. *)

    val ( - ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!sub}. *)

    val ( * ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!mul}. *)

    val ( / ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!div}. *)

    val ( ** ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!pow}. *)

    val ( +$ ) : ('a, 'b) t -> 'a -> ('a, 'b) t (** {!add_s}. *)

    val ( -$ ) : ('a, 'b) t -> 'a -> ('a, 'b) t (** {!sub_s}. *)

    val ( *$ ) : ('a, 'b) t -> 'a -> ('a, 'b) t (** {!mul_s}. *)

    val ( /$ ) : ('a, 'b) t -> 'a -> ('a, 'b) t (** {!div_s}. *)

    val ( **$ ) : ('a, 'b) t -> 'a -> ('a, 'b) t (** {!pow_s}. *)

    val ( < ) : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** {!less}. *)

    val ( <> ) : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** {!not_equal}. *)

    val ( = ) : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** {!equal}. *)

    val ( > ) : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** {!greater}. *)

    val ( <= ) : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** {!less_equal}. *)

    val ( >= ) : ('a, 'b) t -> ('a, 'b) t -> (bool, bool_elt) t (** {!greater_equal}. *)

    val ( =$ ) : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** {!equal_s}. *)

    val ( <>$ ) : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** {!not_equal_s}. *)

    val ( <$ ) : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** {!less_s}. *)

    val ( >$ ) : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** {!greater_s}. *)

    val ( <=$ ) : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** {!less_equal_s}. *)

    val ( >=$ ) : ('a, 'b) t -> 'a -> (bool, bool_elt) t (** {!greater_equal_s}. *)

    val ( lxor ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!bitwise_xor}. *)

    val ( lor ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!bitwise_or}. *)

    val ( land ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!bitwise_and}. *)

    val ( % ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!mod_}. *)

    val ( mod ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!mod_}. *)

    val ( %$ ) : ('a, 'b) t -> 'a -> ('a, 'b) t (** {!mod_s}. *)

    val ( ^ ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!logical_xor}. *)

    val ( && ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!logical_and}. *)

    val ( || ) : ('a, 'b) t -> ('a, 'b) t -> ('a, 'b) t (** {!logical_or}. *)

    val ( ~- ) : ('a, 'b) t -> ('a, 'b) t (** {!neg}. *)

    val ( .%{} ) : ('a, 'b) t -> int list -> ('a, 'b) t (** [t.%{is}] is [get is t]. *)

    val ( .%{}<- ) : ('a, 'b) t -> int list -> ('a, 'b) t -> unit (** [t.%{is} <- v] is [set is t v]. *)

    val ( .${} ) : ('a, 'b) t -> index list -> ('a, 'b) t (** [t.${s}] is [slice s t]. *)

    val ( .${}<- ) : ('a, 'b) t -> index list -> ('a, 'b) t -> unit (** [t.${s} <- v] is [set_slice s t v]. *)
  end
end
