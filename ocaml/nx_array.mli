(** Arrays in host memory: dtypes, buffers, views and the answers kernels
    give.

    An array is a view of a {!Buffer.t}: a dtype, a shape, strides and an
    offset, both in elements. Strides may be [0] (broadcast) or negative.
    Sub-byte dtypes ([Bit], [Int4], [Uint4], [Float4_e2m1fn]) are packed, the
    element of lowest index in the lowest bits of its byte. *)

(** {1 Element kinds of dtypes that [Bigarray] lacks} *)

type bool_elt
type bit_elt
type int4_elt
type uint4_elt
type uint32_elt
type uint64_elt
type float4_e2m1fn_elt
type float8_e4m3fn_elt
type float8_e5m2_elt
type bfloat16_elt

(** {1 Dtypes} *)

module Dtype : sig
  (** A dtype: ['v] is the OCaml type of its values, ['s] its storage kind
      ([Bigarray]'s where it has one).

      Values in OCaml: [Uint32] as a non-negative [int]; [Uint64] as the
      [int64] of the same bits; the 4- and 8-bit integers as [int]. *)
  type ('v, 's) t =
    | Bool : (bool, bool_elt) t
    | Bit : (bool, bit_elt) t
    | Int4 : (int, int4_elt) t
    | Uint4 : (int, uint4_elt) t
    | Int8 : (int, Bigarray.int8_signed_elt) t
    | Int16 : (int, Bigarray.int16_signed_elt) t
    | Int32 : (int32, Bigarray.int32_elt) t
    | Int64 : (int64, Bigarray.int64_elt) t
    | Uint8 : (int, Bigarray.int8_unsigned_elt) t
    | Uint16 : (int, Bigarray.int16_unsigned_elt) t
    | Uint32 : (int, uint32_elt) t
    | Uint64 : (int64, uint64_elt) t
    | Float4_e2m1fn : (float, float4_e2m1fn_elt) t
    | Float8_e4m3fn : (float, float8_e4m3fn_elt) t
    | Float8_e5m2 : (float, float8_e5m2_elt) t
    | Float16 : (float, Bigarray.float16_elt) t
    | Bfloat16 : (float, bfloat16_elt) t
    | Float32 : (float, Bigarray.float32_elt) t
    | Float64 : (float, Bigarray.float64_elt) t
    | Complex64 : (Complex.t, Bigarray.complex32_elt) t
    | Complex128 : (Complex.t, Bigarray.complex64_elt) t

  (** A dtype whatever its types. *)
  type any = Any : ('v, 's) t -> any

  val all : any list
  (** Every dtype, in code order. *)

  val code : ('v, 's) t -> int
  (** The dtype's position in {!all}, which kernels receive. *)

  val of_code : int -> any option
  (** The dtype of a code. *)

  val name : ('v, 's) t -> string
  (** The dtype's name, as ["float32"]. *)

  val bits : ('v, 's) t -> int
  (** Bits one element takes in memory. *)

  val equal : ('a, 'b) t -> ('c, 'd) t -> bool
  (** Whether two dtypes are one. *)

  val same : ('a, 'b) t -> ('c, 'd) t -> ('a * 'b, 'c * 'd) Type.eq option
  (** The proof that two dtypes are one, where they are. *)

  val is_float : ('v, 's) t -> bool
  (** Whether the dtype is a real float, narrow ones included. *)

  val is_complex : ('v, 's) t -> bool
  (** Whether the dtype is complex. *)

  val is_integer : ('v, 's) t -> bool
  (** Whether the dtype is an integer, signed or not. *)

  val bigarray_kind : ('v, 's) t -> ('v, 's) Bigarray.kind option
  (** [Bigarray]'s kind of the dtype, where it has one. *)
end

(** {1 Buffers} *)

module Buffer : sig
  (** Host memory, in bytes. *)
  type t

  val create : int -> t
  (** [create n] is [n] bytes aligned to 64 bytes, uninitialised, freed by
      the GC. Raises [Invalid_argument] if [n] is negative. *)

  val of_bigarray : ('a, 'b, 'c) Bigarray.Genarray.t -> t
  (** The memory of a bigarray, shared: writes through either are seen by
      both. The buffer keeps the bigarray alive. *)

  val length : t -> int
  (** Bytes. *)

  val fill_byte : t -> int -> unit
  (** Sets every byte. *)
end

(** {1 Arrays} *)

type ('v, 's) t
(** An array of dtype [('v, 's) Dtype.t]. *)

type any = Any : ('v, 's) t -> any  (** An array whatever its dtype. *)

val view :
  ('v, 's) Dtype.t ->
  shape:int array ->
  strides:int array ->
  offset:int ->
  Buffer.t ->
  ('v, 's) t
(** [view dtype ~shape ~strides ~offset buf] is an array over [buf]. Raises
    [Invalid_argument] naming what is wrong where an extent or the offset is
    negative, the ranks differ or an element lies outside [buf]. *)

val contiguous_strides : int array -> int array
(** The C-order strides of a shape, in elements. *)

val create : ('v, 's) Dtype.t -> int array -> ('v, 's) t
(** A fresh C-contiguous array, uninitialised. *)

val zeros : ('v, 's) Dtype.t -> int array -> ('v, 's) t
(** A fresh C-contiguous array of zero bits ([+0], [false], [0 + 0i]). *)

val init : ('v, 's) Dtype.t -> int array -> (int array -> 'v) -> ('v, 's) t
(** A fresh C-contiguous array whose element at each index is [f index]. *)

val of_bigarray : ('v, 's, 'l) Bigarray.Genarray.t -> ('v, 's) t
(** The array of a bigarray's elements, sharing its memory, for the kinds
    that are dtypes; Fortran layout gives reversed strides. Raises
    [Invalid_argument] for the kinds that are not dtypes (char, caml int,
    nativeint). *)

val dtype : ('v, 's) t -> ('v, 's) Dtype.t
val shape : ('v, 's) t -> int array
val strides : ('v, 's) t -> int array
val offset : ('v, 's) t -> int
val buffer : ('v, 's) t -> Buffer.t
val rank : ('v, 's) t -> int
val size : ('v, 's) t -> int
(** The number of elements. *)

val extent : ('v, 's) t -> int -> int
(** [extent a i] is [(shape a).(i)], without copying the shape. Raises
    [Invalid_argument] where [i] is not an axis. *)

val stride : ('v, 's) t -> int -> int
(** [stride a i] is [(strides a).(i)], without copying the strides. Raises
    [Invalid_argument] where [i] is not an axis. *)

val get : ('v, 's) t -> int array -> 'v
(** The element at an index. Raises [Invalid_argument] outside the shape. *)

val set : ('v, 's) t -> int array -> 'v -> unit
(** Stores a value at an index, converted as {!Nx_kernel.Prog} casts: a
    float rounds once to a narrow float; an integer wraps into its width.
    Raises [Invalid_argument] outside the shape. *)

val to_list : ('v, 's) t -> 'v list
(** The elements in C order. *)

val rig : ('v, 's) t -> Rig.t
(** The device whose memory holds the array: {!Rig.host}. *)

(** {1 Answers} *)

type answer =
  | Done  (** The work is done. *)
  | Declined of string
      (** The library does not compute this case, as its doc allows; nothing
          was written. *)
  | Refused of string
      (** The call is not well formed; the message says what is wrong.
          Nothing was written. *)

val max_operands : int
(** The most operands (loads and destinations) whose tables a loop keeps in
    place; a loop of more keeps them on the heap for the call. *)

(** {1 For kernel libraries} *)

val value_bits : ('v, 's) Dtype.t -> 'v -> int64 * int64
(** The memory bits of a value of a dtype, as {!set} stores it, in the low
    bits of the first word (a [Complex128]'s imaginary part in the second). *)

val buffer_bytes : Buffer.t -> (char, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t
(** The bytes of a buffer. Valid while the buffer is reachable. *)

(** {1 Moves} *)

module Move : sig
  type range = { start : int; stop : int }
  (** A region's extent along one axis: the indices from [start] up to,
      not including, [stop]. An assembly's piece lies over one range per
      axis of its destination (Nx_kernel.Shape.assemble). *)
end
