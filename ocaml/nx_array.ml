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

module Dtype = struct
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

  type any = Any : ('v, 's) t -> any

  let all =
    [ Any Bool; Any Bit; Any Int4; Any Uint4; Any Int8; Any Int16; Any Int32;
      Any Int64; Any Uint8; Any Uint16; Any Uint32; Any Uint64;
      Any Float4_e2m1fn; Any Float8_e4m3fn; Any Float8_e5m2; Any Float16;
      Any Bfloat16; Any Float32; Any Float64; Any Complex64; Any Complex128 ]

  let table = Array.of_list all

  let code : type v s. (v, s) t -> int = function
    | Bool -> 0 | Bit -> 1 | Int4 -> 2 | Uint4 -> 3 | Int8 -> 4 | Int16 -> 5
    | Int32 -> 6 | Int64 -> 7 | Uint8 -> 8 | Uint16 -> 9 | Uint32 -> 10
    | Uint64 -> 11 | Float4_e2m1fn -> 12 | Float8_e4m3fn -> 13
    | Float8_e5m2 -> 14 | Float16 -> 15 | Bfloat16 -> 16 | Float32 -> 17
    | Float64 -> 18 | Complex64 -> 19 | Complex128 -> 20

  let of_code c = if c >= 0 && c < Array.length table then Some table.(c) else None

  let name : type v s. (v, s) t -> string = function
    | Bool -> "bool" | Bit -> "bit" | Int4 -> "int4" | Uint4 -> "uint4"
    | Int8 -> "int8" | Int16 -> "int16" | Int32 -> "int32" | Int64 -> "int64"
    | Uint8 -> "uint8" | Uint16 -> "uint16" | Uint32 -> "uint32"
    | Uint64 -> "uint64" | Float4_e2m1fn -> "float4_e2m1fn"
    | Float8_e4m3fn -> "float8_e4m3fn" | Float8_e5m2 -> "float8_e5m2"
    | Float16 -> "float16" | Bfloat16 -> "bfloat16" | Float32 -> "float32"
    | Float64 -> "float64" | Complex64 -> "complex64"
    | Complex128 -> "complex128"

  let bits : type v s. (v, s) t -> int = function
    | Bit -> 1
    | Int4 | Uint4 | Float4_e2m1fn -> 4
    | Bool | Int8 | Uint8 | Float8_e4m3fn | Float8_e5m2 -> 8
    | Int16 | Uint16 | Float16 | Bfloat16 -> 16
    | Int32 | Uint32 | Float32 -> 32
    | Int64 | Uint64 | Float64 | Complex64 -> 64
    | Complex128 -> 128

  let equal a b = code a = code b

  let same : type a b c d. (a, b) t -> (c, d) t -> (a * b, c * d) Type.eq option =
   fun x y ->
    match (x, y) with
    | Bool, Bool -> Some Type.Equal | Bit, Bit -> Some Type.Equal
    | Int4, Int4 -> Some Type.Equal | Uint4, Uint4 -> Some Type.Equal
    | Int8, Int8 -> Some Type.Equal | Int16, Int16 -> Some Type.Equal
    | Int32, Int32 -> Some Type.Equal | Int64, Int64 -> Some Type.Equal
    | Uint8, Uint8 -> Some Type.Equal | Uint16, Uint16 -> Some Type.Equal
    | Uint32, Uint32 -> Some Type.Equal | Uint64, Uint64 -> Some Type.Equal
    | Float4_e2m1fn, Float4_e2m1fn -> Some Type.Equal
    | Float8_e4m3fn, Float8_e4m3fn -> Some Type.Equal
    | Float8_e5m2, Float8_e5m2 -> Some Type.Equal
    | Float16, Float16 -> Some Type.Equal
    | Bfloat16, Bfloat16 -> Some Type.Equal
    | Float32, Float32 -> Some Type.Equal
    | Float64, Float64 -> Some Type.Equal
    | Complex64, Complex64 -> Some Type.Equal
    | Complex128, Complex128 -> Some Type.Equal
    | _ -> None

  let is_float : type v s. (v, s) t -> bool = function
    | Float4_e2m1fn | Float8_e4m3fn | Float8_e5m2 | Float16 | Bfloat16
    | Float32 | Float64 -> true
    | _ -> false

  let is_complex : type v s. (v, s) t -> bool = function
    | Complex64 | Complex128 -> true
    | _ -> false

  let is_integer : type v s. (v, s) t -> bool = function
    | Int4 | Uint4 | Int8 | Int16 | Int32 | Int64 | Uint8 | Uint16 | Uint32
    | Uint64 -> true
    | _ -> false

  let bigarray_kind : type v s. (v, s) t -> (v, s) Bigarray.kind option =
    function
    | Int8 -> Some Bigarray.Int8_signed
    | Int16 -> Some Bigarray.Int16_signed
    | Int32 -> Some Bigarray.Int32
    | Int64 -> Some Bigarray.Int64
    | Uint8 -> Some Bigarray.Int8_unsigned
    | Uint16 -> Some Bigarray.Int16_unsigned
    | Float16 -> Some Bigarray.Float16
    | Float32 -> Some Bigarray.Float32
    | Float64 -> Some Bigarray.Float64
    | Complex64 -> Some Bigarray.Complex32
    | Complex128 -> Some Bigarray.Complex64
    | _ -> None
end

type bytes_ba = (char, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t

external alloc_bytes : int -> bytes_ba = "nx_cpu_alloc"
external bytes_of_bigarray : ('a, 'b, 'c) Bigarray.Genarray.t -> bytes_ba = "nx_cpu_bytes_of"
external narrow_encode : int -> float -> int = "nx_cpu_narrow_encode"
external narrow_decode : int -> int -> float = "nx_cpu_narrow_decode"
external get16 : bytes_ba -> int -> int = "%caml_bigstring_get16"
external get32 : bytes_ba -> int -> int32 = "%caml_bigstring_get32"
external get64 : bytes_ba -> int -> int64 = "%caml_bigstring_get64"
external set16 : bytes_ba -> int -> int -> unit = "%caml_bigstring_set16"
external set32 : bytes_ba -> int -> int32 -> unit = "%caml_bigstring_set32"
external set64 : bytes_ba -> int -> int64 -> unit = "%caml_bigstring_set64"

external l2_bytes : unit -> int = "nx_cpu_l2_bytes"
external young_bytes : unit -> int = "nx_cpu_young_bytes"
external set_minor_pile : int -> unit = "nx_cpu_set_minor_pile"

(* The GC's pace for arrays' memory, set once, before the first buffer,
   unless OCAMLRUNPARAM or CAMLRUNPARAM sets it (M=, n= and m=). The GC
   counts a buffer's bytes against the OCaml heap: by default a major cycle
   runs each time dead buffers reach 44% of the heap's size, and for arrays
   much larger than the heap that meant a cycle every few calls (a loop of
   316x316 [Nx.add] spent 60% of its time marking and sweeping). Ten times
   the heap lets a loop's dead results pile up a little longer and be freed
   together. Buffers up to the GC's custom_minor_max_size (70 000 bytes by
   default) lie in the minor heap and die with a minor collection, larger
   ones in the major heap until a major cycle. The GC runs a minor
   collection once the young ones reach custom_minor_ratio percent of the
   minor heap's size (2 MiB), just after the buffer that passes it, which
   moves to the major heap, live then: a loop of small results cycled
   through 2 MiB of buffers, and one of 316x316 results through a dozen,
   each written cold. So [nx_cpu_alloc] runs the collection itself, before
   the buffer that would take those in the minor heap past a fifth of the
   second-level cache (half the minor heap at most): the dead are freed
   first and the next buffer takes back memory still in the caches
   ([Nx.add] of 316x316 float32 ~22 -> ~11 us, of 32x32 ~570 -> ~490 ns,
   where that cache is 2 MiB). custom_minor_max_size is raised to the
   buffers of [young_bytes] (below 32 MiB: those whose blocks the next
   buffer of their size takes back at once), and the ratio so that one of
   them alone stays within it. Bounded by half the second-level cache, a
   512 KiB one left 316x316 results (400 KB) in the major heap: [Nx.add]
   took ~40 us against ~20 for [Nx_cpu.map] into the same array, ~220 us
   against ~100 for 724x724 (2 MiB); bounded by 4 MiB, 1448x1448 results
   (8 MiB) took ~1250 us against ~700 (~1000 since). See the README,
   "Memory of freed arrays". *)
let () =
  let sets p v =
    match Sys.getenv_opt v with
    | Some s -> List.exists (fun e -> String.length e >= 2 && String.sub e 0 2 = p) (String.split_on_char ',' s)
    | None -> false
  in
  let sets p = sets p "OCAMLRUNPARAM" || sets p "CAMLRUNPARAM" in
  let gc = Gc.get () in
  let minor_bytes = gc.minor_heap_size * (Sys.word_size / 8) in
  let gc = if sets "M=" then gc else { gc with custom_major_ratio = Stdlib.max 1000 gc.custom_major_ratio } in
  let pile = Stdlib.min (l2_bytes () / 5) (minor_bytes / 2) in
  let young = young_bytes () in
  let gc = if sets "n=" then gc else { gc with custom_minor_max_size = Stdlib.max gc.custom_minor_max_size young } in
  (* Percents of the minor heap that hold the largest young buffer, a
     percent counted as the runtime counts it (a hundredth, rounded down). *)
  let percent = minor_bytes / 100 in
  let ratio = (gc.custom_minor_max_size + percent - 1) / percent in
  let gc = if sets "m=" then gc else { gc with custom_minor_ratio = Stdlib.max gc.custom_minor_ratio ratio } in
  Gc.set gc;
  set_minor_pile (if sets "m=" then 0 else pile)

module Buffer = struct
  (* [owner] keeps alive the bigarray whose memory [bytes] views. *)
  type owner = Own | Shared : ('a, 'b, 'c) Bigarray.Genarray.t -> owner
  type t = { bytes : bytes_ba; owner : owner [@warning "-69"] (* read by nobody: held *) }

  let create n =
    if n < 0 then invalid_arg (Printf.sprintf "Nx_array.Buffer.create: %d bytes" n);
    { bytes = alloc_bytes n; owner = Own }

  let of_bigarray ba = { bytes = bytes_of_bigarray ba; owner = Shared ba }
  let length b = Bigarray.Array1.dim b.bytes
  let fill_byte b x = Bigarray.Array1.fill b.bytes (Char.chr (x land 0xFF))
end

type ('v, 's) t = {
  dtype : ('v, 's) Dtype.t;
  buffer : Buffer.t;
  shape : int array;
  strides : int array;
  offset : int;
}

type any = Any : ('v, 's) t -> any

let fail fmt = Printf.ksprintf invalid_arg fmt

(* A copy of an int array: one of rank 4 or less built in place, without
   the runtime call [Array.copy] makes (a small call copies a few shapes). *)
let copy_ints (a : int array) : int array =
  match a with
  | [||] -> [||]
  | [| x |] -> [| x |]
  | [| x; y |] -> [| x; y |]
  | [| x; y; z |] -> [| x; y; z |]
  | [| x; y; z; w |] -> [| x; y; z; w |]
  | a -> Array.copy a

let contiguous_strides shape =
  match shape with
  | [||] -> [||]
  | [| _ |] -> [| 1 |]
  | [| _; y |] -> [| max 1 y; 1 |]
  | [| _; y; z |] -> [| max 1 y * max 1 z; max 1 z; 1 |]
  | _ ->
      let n = Array.length shape in
      let s = Array.make n 0 in
      let step = ref 1 in
      for a = n - 1 downto 0 do
        s.(a) <- !step;
        step := !step * max 1 shape.(a)
      done;
      s

(* Whether an extent of [shape] is 0, compared as ints: [Array.mem] calls
   the generic comparison on each extent. *)
let has_zero shape = Array.exists (fun n -> n = 0) shape

let view dtype ~shape ~strides ~offset buffer =
  let rank = Array.length shape in
  if Array.length strides <> rank then
    fail "Nx_array.view: %d axes but %d strides" rank (Array.length strides);
  for a = 0 to rank - 1 do
    if shape.(a) < 0 then fail "Nx_array.view: axis %d has extent %d" a shape.(a)
  done;
  if offset < 0 then fail "Nx_array.view: offset %d" offset;
  if not (has_zero shape) then begin
    let lo = ref offset and hi = ref offset in
    for a = 0 to rank - 1 do
      let n = shape.(a) in
      let reach = (n - 1) * strides.(a) in
      if n > 1 && reach / (n - 1) <> strides.(a) then
        fail "Nx_array.view: axis %d's reach overflows" a;
      if reach < 0 then lo := !lo + reach else hi := !hi + reach
    done;
    let extent = Buffer.length buffer * 8 / Dtype.bits dtype in
    if !lo < 0 || !hi >= extent then
      fail "Nx_array.view: elements %d to %d of a buffer of %d %s elements" !lo !hi
        extent (Dtype.name dtype)
  end;
  { dtype; buffer; shape = copy_ints shape; strides = copy_ints strides; offset }

let size_of shape = Array.fold_left ( * ) 1 shape

(* Built directly: a fresh contiguous layout lies in its buffer, so [view]'s
   checks have nothing to find. *)
let create dtype shape =
  let size = ref 1 in
  for a = 0 to Array.length shape - 1 do
    let n = shape.(a) in
    if n < 0 then fail "Nx_array.create: axis %d has extent %d" a n;
    if n > 0 && !size > max_int / n then fail "Nx_array.create: the element count overflows at axis %d" a;
    size := !size * n
  done;
  if !size > (max_int - 7) / Dtype.bits dtype then
    fail "Nx_array.create: %d elements of %d bits overflow the byte count" !size (Dtype.bits dtype);
  let bytes = ((!size * Dtype.bits dtype) + 7) / 8 in
  let shape = copy_ints shape in
  { dtype; buffer = Buffer.create bytes; shape; strides = contiguous_strides shape; offset = 0 }

let zeros dtype shape =
  let a = create dtype shape in
  Buffer.fill_byte a.buffer 0;
  a

let dtype a = a.dtype
let shape a = copy_ints a.shape
let strides a = copy_ints a.strides
let offset a = a.offset
let buffer a = a.buffer
let rank a = Array.length a.shape
let size a = size_of a.shape
let extent a i = a.shape.(i)
let stride a i = a.strides.(i)
let rig _ = Rig.host
let buffer_bytes (b : Buffer.t) = b.bytes

let element a index =
  if Array.length index <> Array.length a.shape then
    fail "Nx_array: index of rank %d into an array of rank %d" (Array.length index)
      (Array.length a.shape);
  let e = ref a.offset in
  Array.iteri
    (fun ax i ->
      if i < 0 || i >= a.shape.(ax) then
        fail "Nx_array: index %d outside [0, %d) along axis %d" i a.shape.(ax) ax;
      e := !e + (i * a.strides.(ax)))
    index;
  !e

let nibble bytes e = (Char.code (Bigarray.Array1.get bytes (e / 2)) lsr (4 * (e land 1))) land 15

let set_bits bytes ~at ~shift ~mask v =
  let old = Char.code (Bigarray.Array1.get bytes at) in
  let b = old land lnot (mask lsl shift) lor ((v land mask) lsl shift) in
  Bigarray.Array1.set bytes at (Char.chr b)

let sign_extend bits x = (x lsl (Sys.int_size - bits)) asr (Sys.int_size - bits)

let get : type v s. (v, s) t -> int array -> v =
 fun a index ->
  let e = element a index in
  let b = a.buffer.bytes in
  let byte i = Char.code (Bigarray.Array1.get b i) in
  match a.dtype with
  | Bool -> byte e <> 0
  | Bit -> (byte (e / 8) lsr (e land 7)) land 1 = 1
  | Int4 -> sign_extend 4 (nibble b e)
  | Uint4 -> nibble b e
  | Int8 -> sign_extend 8 (byte e)
  | Uint8 -> byte e
  | Int16 -> sign_extend 16 (get16 b (2 * e))
  | Uint16 -> get16 b (2 * e)
  | Int32 -> get32 b (4 * e)
  | Uint32 -> Int32.to_int (get32 b (4 * e)) land 0xFFFF_FFFF
  | Int64 -> get64 b (8 * e)
  | Uint64 -> get64 b (8 * e)
  | Float32 -> Int32.float_of_bits (get32 b (4 * e))
  | Float64 -> Int64.float_of_bits (get64 b (8 * e))
  | Complex64 ->
      { Complex.re = Int32.float_of_bits (get32 b (8 * e));
        im = Int32.float_of_bits (get32 b ((8 * e) + 4)) }
  | Complex128 ->
      { Complex.re = Int64.float_of_bits (get64 b (16 * e));
        im = Int64.float_of_bits (get64 b ((16 * e) + 8)) }
  | Float4_e2m1fn -> narrow_decode 12 (nibble b e)
  | Float8_e4m3fn -> narrow_decode 13 (byte e)
  | Float8_e5m2 -> narrow_decode 14 (byte e)
  | Float16 -> narrow_decode 15 (get16 b (2 * e))
  | Bfloat16 -> narrow_decode 16 (get16 b (2 * e))

let set : type v s. (v, s) t -> int array -> v -> unit =
 fun a index v ->
  let e = element a index in
  let b = a.buffer.bytes in
  let byte i x = Bigarray.Array1.set b i (Char.chr (x land 0xFF)) in
  let put_nibble x = set_bits b ~at:(e / 2) ~shift:(4 * (e land 1)) ~mask:15 x in
  match a.dtype with
  | Bool -> byte e (Bool.to_int v)
  | Bit -> set_bits b ~at:(e / 8) ~shift:(e land 7) ~mask:1 (Bool.to_int v)
  | Int4 -> put_nibble v
  | Uint4 -> put_nibble v
  | Int8 -> byte e v
  | Uint8 -> byte e v
  | Int16 -> set16 b (2 * e) (v land 0xFFFF)
  | Uint16 -> set16 b (2 * e) (v land 0xFFFF)
  | Int32 -> set32 b (4 * e) v
  | Uint32 -> set32 b (4 * e) (Int32.of_int v)
  | Int64 -> set64 b (8 * e) v
  | Uint64 -> set64 b (8 * e) v
  | Float32 -> set32 b (4 * e) (Int32.bits_of_float v)
  | Float64 -> set64 b (8 * e) (Int64.bits_of_float v)
  | Complex64 ->
      set32 b (8 * e) (Int32.bits_of_float v.Complex.re);
      set32 b ((8 * e) + 4) (Int32.bits_of_float v.Complex.im)
  | Complex128 ->
      set64 b (16 * e) (Int64.bits_of_float v.Complex.re);
      set64 b ((16 * e) + 8) (Int64.bits_of_float v.Complex.im)
  | Float4_e2m1fn -> put_nibble (narrow_encode 12 v)
  | Float8_e4m3fn -> byte e (narrow_encode 13 v)
  | Float8_e5m2 -> byte e (narrow_encode 14 v)
  | Float16 -> set16 b (2 * e) (narrow_encode 15 v)
  | Bfloat16 -> set16 b (2 * e) (narrow_encode 16 v)

(* Calls [f] on every index of [shape] in C order. *)
let iter_indices shape f =
  let rank = Array.length shape in
  if not (has_zero shape) then begin
    let index = Array.make rank 0 in
    let rec go axis = if axis = rank then f index else
        for i = 0 to shape.(axis) - 1 do
          index.(axis) <- i;
          go (axis + 1)
        done
    in
    go 0
  end

let init dtype shape f =
  let a = create dtype shape in
  iter_indices shape (fun i -> set a i (f (Array.copy i)));
  a

let to_list a =
  let acc = ref [] in
  iter_indices a.shape (fun i -> acc := get a i :: !acc);
  List.rev !acc

let of_bigarray : type v s l. (v, s, l) Bigarray.Genarray.t -> (v, s) t =
 fun ba ->
  let dims = Bigarray.Genarray.dims ba in
  let buffer = Buffer.of_bigarray ba in
  let with_dtype (dtype : (v, s) Dtype.t) =
    let strides =
      match Bigarray.Genarray.layout ba with
      | Bigarray.C_layout -> contiguous_strides dims
      | Bigarray.Fortran_layout ->
          let rev = Array.of_list (List.rev (Array.to_list dims)) in
          Array.of_list (List.rev (Array.to_list (contiguous_strides rev)))
    in
    view dtype ~shape:dims ~strides ~offset:0 buffer
  in
  match Bigarray.Genarray.kind ba with
  | Bigarray.Float16 -> with_dtype Float16
  | Bigarray.Float32 -> with_dtype Float32
  | Bigarray.Float64 -> with_dtype Float64
  | Bigarray.Int8_signed -> with_dtype Int8
  | Bigarray.Int8_unsigned -> with_dtype Uint8
  | Bigarray.Int16_signed -> with_dtype Int16
  | Bigarray.Int16_unsigned -> with_dtype Uint16
  | Bigarray.Int32 -> with_dtype Int32
  | Bigarray.Int64 -> with_dtype Int64
  | Bigarray.Complex32 -> with_dtype Complex64
  | Bigarray.Complex64 -> with_dtype Complex128
  | Bigarray.Int | Bigarray.Nativeint | Bigarray.Char ->
      invalid_arg "Nx_array.of_bigarray: char, int and nativeint bigarrays are not dtypes"

type answer = Done | Declined of string | Refused of string

let max_operands = 16

let value_bits : type v s. (v, s) Dtype.t -> v -> int64 * int64 =
 fun d v ->
  match d with
  | Complex128 -> (Int64.bits_of_float v.Complex.re, Int64.bits_of_float v.Complex.im)
  | _ ->
      let a = create d [||] in
      set a [||] v;
      let b = a.buffer.bytes in
      let w = ref 0L in
      for i = Bigarray.Array1.dim b - 1 downto 0 do
        w := Int64.logor (Int64.shift_left !w 8) (Int64.of_int (Char.code (Bigarray.Array1.get b i)))
      done;
      (!w, 0L)

module Move = struct
  type range = { start : int; stop : int }
end
