(** The core of Nx, over a kernel library: types and dtypes, errors,
   properties, views, the cache of programs, broadcasting and the calls that
   run one program over broadcast operands ([elementwise], [copy_into]).
   Every other part of Nx is built on it (see Nx_frontend). *)

module Make (K : Nx_kernel.S) = struct
  module Arr = Nx_array
  module D = Nx_array.Dtype
  module P = Nx_kernel.Prog

  type ('a, 'b) t = ('a, 'b) Nx_array.t
  type ('a, 'b) dtype = ('a, 'b) Nx_array.Dtype.t

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

  let bool = D.Bool
  let bit = D.Bit
  let int4 = D.Int4
  let uint4 = D.Uint4
  let int8 = D.Int8
  let int16 = D.Int16
  let int32 = D.Int32
  let int64 = D.Int64
  let uint8 = D.Uint8
  let uint16 = D.Uint16
  let uint32 = D.Uint32
  let uint64 = D.Uint64
  let float4_e2m1fn = D.Float4_e2m1fn
  let float8_e4m3fn = D.Float8_e4m3fn
  let float8_e5m2 = D.Float8_e5m2
  let float16 = D.Float16
  let bfloat16 = D.Bfloat16
  let float32 = D.Float32
  let float64 = D.Float64
  let complex64 = D.Complex64
  let complex128 = D.Complex128

  type index =
    | I of int
    | L of int list
    | R of int * int
    | Rs of int * int * int
    | A
    | M of (bool, bool_elt) t
    | N

  (* {1 Errors} *)

  let fail name fmt = Printf.ksprintf (fun m -> invalid_arg (name ^ ": " ^ m)) fmt
  let show_ints a = "[" ^ String.concat "; " (List.map string_of_int (Array.to_list a)) ^ "]"
  let show_shape = show_ints

  (* {1 Properties} *)

  let shape = Arr.shape
  let dims = Arr.shape
  let dtype = Arr.dtype
  let ndim = Arr.rank
  let size = Arr.size
  let numel = Arr.size
  let offset = Arr.offset

  (* [axis name nd a] is [a] counted from the end where negative, checked
     against rank [nd]. *)
  let axis name nd a =
    let b = if a < 0 then a + nd else a in
    if b < 0 || b >= nd then fail name "axis %d is out of bounds for %d dimensions" a nd;
    b

  let dim i t = (shape t).(axis "dim" (ndim t) i)
  let itemsize t = (D.bits (dtype t) + 7) / 8

  let nbytes t =
    let bits = D.bits (dtype t) in
    if bits mod 8 = 0 then size t * (bits / 8) else ((size t * bits) + 7) / 8

  let strides t =
    let bits = D.bits (dtype t) in
    if bits mod 8 <> 0 then
      fail "strides" "%s elements are packed below a byte: they have no byte strides"
        (D.name (dtype t));
    Array.map (fun s -> s * (bits / 8)) (Arr.strides t)

  let stride i t =
    let a = axis "stride" (ndim t) i in
    let bits = D.bits (dtype t) in
    if bits mod 8 <> 0 then
      fail "stride" "%s elements are packed below a byte: they have no byte strides"
        (D.name (dtype t));
    (Arr.strides t).(a) * (bits / 8)

  let is_c_contiguous t =
    let sh = Arr.shape t and st = Arr.strides t in
    Array.exists (fun n -> n = 0) sh
    ||
    let expect = ref 1 and ok = ref true in
    for a = Array.length sh - 1 downto 0 do
      if sh.(a) <> 1 then begin
        if st.(a) <> !expect then ok := false;
        expect := !expect * sh.(a)
      end
    done;
    !ok

  (* {1 Views and kernel calls} *)

  let view t ~shape ~strides ~offset =
    Arr.view (Arr.dtype t) ~shape ~strides ~offset (Arr.buffer t)

  let check_shape name shape =
    Array.iteri (fun a n -> if n < 0 then fail name "axis %d has the negative extent %d" a n) shape

  let answer name = function
    | Arr.Done -> ()
    | Arr.Declined m -> fail name "%s declines: %s" K.name m
    | Arr.Refused m -> fail name "%s" m

  (* [m] without [prefix], if it starts with it. *)
  let strip prefix m =
    let n = String.length prefix in
    if String.length m >= n && String.sub m 0 n = prefix then String.sub m n (String.length m - n) else m

  (* Prog.make's reason, less its own name and the node's number (the
     program is ours, not the caller's). *)
  let reason m =
    let m = strip "Nx_kernel.Prog.make: " m in
    match String.index_opt m ':' with
    | Some i when String.length m > 5 && String.sub m 0 5 = "node " && i + 2 <= String.length m ->
        String.sub m (i + 2) (String.length m - i - 2)
    | _ -> m

  (* {1 The cache of programs}

     Each domain keeps the programs it has built, by operand dtypes, nodes
     and output dtype: a loop over small tensors builds each once. A lookup
     hashes and compares the caller's nodes field by field, allocating
     nothing (the generic [=] and [Hashtbl.hash] walked the whole key and
     took a tenth of a small call; a key built for the lookup took as much
     again). A constant is compared by its dtype and bits, so that 0. and
     -0. (equal to [=]) and NaNs (equal to nothing) are told apart and found
     again. The kinds are constant constructors, so [==] compares them. *)

  let code (D.Any d) = D.code d
  let mix h x = (h * 1_000_003) lxor x

  let const_bits (P.Constant (d, v)) = Arr.value_bits d v

  let node_hash = function
    | P.Load i -> mix 1 i
    | P.Coord i -> mix 2 i
    | P.Op1 (P.Unary u, x) -> mix (mix 3 (Hashtbl.hash u)) x
    | P.Op1 (P.Cast d, x) -> mix (mix 4 (code d)) x
    | P.Op2 (k, x, y) -> mix (mix (mix 5 (Hashtbl.hash k)) x) y
    | P.Where (c, x, y) -> mix (mix (mix 6 c) x) y
    | P.Const (P.Constant (d, _) as c) ->
        let lo, hi = const_bits c in
        mix (mix (mix 7 (D.code d)) (Int64.to_int lo)) (Int64.to_int hi)

  let node_equal a b =
    match (a, b) with
    | P.Load i, P.Load j | P.Coord i, P.Coord j -> i = j
    | P.Op1 (P.Unary u, x), P.Op1 (P.Unary v, y) -> u == v && x = y
    | P.Op1 (P.Cast d, x), P.Op1 (P.Cast e, y) -> code d = code e && x = y
    | P.Op2 (k, x, y), P.Op2 (k', x', y') -> k == k' && x = x' && y = y'
    | P.Where (c, x, y), P.Where (c', x', y') -> c = c' && x = x' && y = y'
    | P.Const (P.Constant (d, _) as c), P.Const (P.Constant (e, _) as c') ->
        D.code d = D.code e
        &&
        let lo, hi = const_bits c and lo', hi' = const_bits c' in
        Int64.equal lo lo' && Int64.equal hi hi'
    | _ -> false

  let key_hash operands nodes out =
    let h = ref out in
    for i = 0 to Array.length operands - 1 do h := mix !h (code operands.(i)) done;
    for i = 0 to Array.length nodes - 1 do h := mix !h (node_hash nodes.(i)) done;
    !h land max_int

  (* A program and its key, [out] the output dtype's code. *)
  type entry = { hash : int; operands : D.any array; nodes : P.node array; out : int; prog : P.t }

  let holds e hash operands nodes out =
    e.hash = hash
    && e.out = out
    && Array.length e.operands = Array.length operands
    && Array.length e.nodes = Array.length nodes
    &&
    let rec same_operands i = i < 0 || (code e.operands.(i) = code operands.(i) && same_operands (i - 1)) in
    let rec same_nodes i = i < 0 || (node_equal e.nodes.(i) nodes.(i) && same_nodes (i - 1)) in
    same_operands (Array.length operands - 1) && same_nodes (Array.length nodes - 1)

  (* A domain's programs: [buckets] (a power of two) lists of entries by
     hash. *)
  type cache = { buckets : entry list array; mutable count : int }

  let buckets = 1024
  let programs = Domain.DLS.new_key (fun () -> { buckets = Array.make buckets []; count = 0 })

  (* Programs a domain keeps at most: past them it starts afresh. *)
  let max_programs = 1024

  (* A program whose output is its last node, rounded into [out]. *)
  let program name ~operands nodes (out : ('v, 's) dtype) =
    let make nodes =
      try P.make ~operands nodes ~outputs:[| Array.length nodes - 1 |]
      with Invalid_argument m -> fail name "%s" (reason m)
    in
    let build () =
      let p = make nodes in
      let (D.Any got) = P.output_dtype p 0 in
      if D.equal got out then p
      else make (Array.append nodes [| P.Op1 (P.Cast (D.Any out), Array.length nodes - 1) |])
    in
    let cache = Domain.DLS.get programs and out_code = D.code out in
    let hash = key_hash operands nodes out_code in
    let slot = hash land (buckets - 1) in
    let rec find = function
      | e :: rest -> if holds e hash operands nodes out_code then Some e.prog else find rest
      | [] -> None
    in
    match find cache.buckets.(slot) with
    | Some p -> p
    | None ->
        let p = build () in
        if cache.count >= max_programs then begin
          Array.fill cache.buckets 0 buckets [];
          cache.count <- 0
        end;
        (* Copies of the operands' dtypes and the nodes, which the caller may change. *)
        let e = { hash; operands = Array.copy operands; nodes = Array.copy nodes; out = out_code; prog = p } in
        cache.buckets.(slot) <- e :: cache.buckets.(slot);
        cache.count <- cache.count + 1;
        p

  (* [freeze a] is [a] as an iarray, not copied: [a] is fresh, and nothing
     changes it after (a small call's arrays are built in place this way,
     where [Iarray.of_list] and [Iarray.of_array] call the runtime). *)
  external freeze : 'a array -> 'a iarray = "%opaque"

  (* [l]'s elements as an array, built in place where they are few:
     [Array.of_list] calls the runtime. So does a literal of elements of a
     type variable, as here (the runtime checks whether they are floats),
     so that the arrays of every call ([loads], a map's dtypes) are built
     where their elements' type is known. *)
  let array_of_list = function
    | [] -> [||]
    | [ a ] -> [| a |]
    | [ a; b ] -> [| a; b |]
    | [ a; b; c ] -> [| a; b; c |]
    | l -> Array.of_list l

  let iarray_of_list l = freeze (array_of_list l)

  let loads arrays =
    let p a = Nx_kernel.Plain a in
    freeze
      (match arrays with
      | [ a ] -> [| p a |]
      | [ a; b ] -> [| p a; p b |]
      | [ a; b; c ] -> [| p a; p b; p c |]
      | l -> Array.of_list (List.map p l))

  let map_into name p dst arrays = answer name (K.map p ~dsts:(freeze [| Arr.Any dst |]) (loads arrays))

  (* {1 Broadcasting} *)

  let broadcast_pair name a b =
    let ra = Array.length a and rb = Array.length b in
    let r = Stdlib.max ra rb in
    Array.init r (fun i ->
        let x = if i < r - ra then 1 else a.(i - (r - ra)) in
        let y = if i < r - rb then 1 else b.(i - (r - rb)) in
        if x = y || y = 1 then x
        else if x = 1 then y
        else fail name "cannot broadcast %s with %s" (show_shape a) (show_shape b))

  let broadcast_view name target t =
    let r = Array.length target in
    let same = ref (Arr.rank t = r) in
    for i = 0 to (if !same then r else 0) - 1 do
      if Arr.extent t i <> target.(i) then same := false
    done;
    (* Of the target's shape already: the view would be [t]'s own. *)
    if !same then t else
    let sh = Arr.shape t and st = Arr.strides t in
    let r = Array.length target and rt = Array.length sh in
    if rt > r then fail name "cannot broadcast %s to %s" (show_shape sh) (show_shape target);
    let strides =
      Array.init r (fun i ->
          let j = i - (r - rt) in
          if j < 0 then 0
          else if sh.(j) = target.(i) then st.(j)
          else if sh.(j) = 1 then 0
          else fail name "cannot broadcast %s to %s" (show_shape sh) (show_shape target))
    in
    view t ~shape:target ~strides ~offset:(Arr.offset t)

  (* The tensor of dtype [out] computed by [nodes] over [operands], which
     broadcast to one shape and are read through stride-0 views. *)
  let elementwise name (out : ('v, 's) dtype) (operands : Arr.any list) nodes : ('v, 's) t =
    let same_shape (Arr.Any a) (Arr.Any b) =
      let r = Arr.rank a in
      r = Arr.rank b
      &&
      let rec from i = i = r || (Arr.extent a i = Arr.extent b i && from (i + 1)) in
      from 0
    in
    let shape =
      match operands with
      (* Operands of one shape, the common case: nothing to broadcast. *)
      | (Arr.Any a as first) :: rest when List.for_all (same_shape first) rest -> Arr.shape a
      | _ -> List.fold_left (fun s (Arr.Any a) -> broadcast_pair name s (Arr.shape a)) [||] operands
    in
    let dtype (Arr.Any a) = D.Any (Arr.dtype a) in
    let dtypes =
      match operands with
      | [ a ] -> [| dtype a |]
      | [ a; b ] -> [| dtype a; dtype b |]
      | l -> Array.of_list (List.map dtype l)
    in
    let p = program name ~operands:dtypes nodes out in
    let arrays = List.map (fun (Arr.Any a) -> Arr.Any (broadcast_view name shape a)) operands in
    let dst = Arr.create out shape in
    map_into name p dst arrays;
    dst

  (* Copies [src], broadcast to [dst]'s shape, into [dst], cast to its dtype. *)
  let copy_into name src dst =
    let d = Arr.dtype dst in
    let p = program name ~operands:[| D.Any (Arr.dtype src) |] [| P.Load 0; P.Op1 (P.Cast (D.Any d), 0) |] d in
    map_into name p dst [ Arr.Any (broadcast_view name (Arr.shape dst) src) ]

  let constant d v = P.Const (P.Constant (d, v))

  (* A program under construction: nodes appended, each named by its index. *)
  type builder = { mutable rev : P.node list; mutable count : int }

  let emit b node =
    b.rev <- node :: b.rev;
    b.count <- b.count + 1;
    b.count - 1

  (* An empty program. *)
  let builder () = { rev = []; count = 0 }
  let nodes_of b = Array.of_list (List.rev b.rev)

  (* {1 Values of a dtype} *)

  let of_float : type a b. (a, b) dtype -> float -> a =
   fun d x ->
    match d with
    | D.Bool -> x <> 0. | D.Bit -> x <> 0.
    | D.Int4 -> int_of_float x | D.Uint4 -> int_of_float x | D.Int8 -> int_of_float x
    | D.Int16 -> int_of_float x | D.Uint8 -> int_of_float x | D.Uint16 -> int_of_float x
    | D.Uint32 -> int_of_float x
    | D.Int32 -> Int32.of_float x
    | D.Int64 -> Int64.of_float x | D.Uint64 -> Int64.of_float x
    | D.Float4_e2m1fn -> x | D.Float8_e4m3fn -> x | D.Float8_e5m2 -> x | D.Float16 -> x
    | D.Bfloat16 -> x | D.Float32 -> x | D.Float64 -> x
    | D.Complex64 -> { Complex.re = x; im = 0. } | D.Complex128 -> { Complex.re = x; im = 0. }

  let of_int d i = of_float d (float_of_int i)
  let zero d = of_float d 0.
  let one d = of_float d 1.
end
