(* The numpy-like module, written once against a kernel library.

   Everything here builds views (shape, strides, offset) and kernel calls:
   every element loop runs in K.map, K.reduce or K.scan. OCaml touches
   elements one by one only to build a tensor from an OCaml array or
   function, to read one out (to_array, item) and to print. Arguments are
   checked before any kernel runs; a refusal comes back as Invalid_argument
   naming the function. *)

module type S = Nx_frontend_intf.S

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
    Array.mem 0 sh
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

  (* A program's node as the cache of programs compares it: a constant by
     its dtype and bits, so that 0. and -0. (equal to [=]) and NaNs (equal
     to nothing) are told apart and found again. *)
  type node_key = Node of P.node | Bits of int * int64 * int64

  let node_key = function
    | P.Const (P.Constant (d, v)) ->
        let lo, hi = Arr.value_bits d v in
        Bits (D.code d, lo, hi)
    | n -> Node n

  module Programs = Hashtbl.Make (struct
    type t = D.any array * node_key array * D.any

    let equal = ( = )
    let hash = Hashtbl.hash_param 64 256
  end)

  (* The programs each domain has built, by operands, nodes and output
     dtype: a loop over small tensors builds each once. *)
  let programs = Domain.DLS.new_key (fun () -> Programs.create 64)

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
    let cache = Domain.DLS.get programs in
    let key = (Array.copy operands, Array.map node_key nodes, D.Any out) in
    match Programs.find_opt cache key with
    | Some p -> p
    | None ->
        let p = build () in
        if Programs.length cache >= max_programs then Programs.reset cache;
        Programs.add cache key p;
        p

  let loads arrays = Iarray.of_list (List.map (fun a -> Nx_kernel.Plain a) arrays)

  let map_into name p dst arrays =
    answer name (K.map p ~dsts:(Iarray.of_list [ Arr.Any dst ]) (loads arrays))

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
    let shape =
      List.fold_left (fun s (Arr.Any a) -> broadcast_pair name s (Arr.shape a)) [||] operands
    in
    let dtypes = Array.of_list (List.map (fun (Arr.Any a) -> D.Any (Arr.dtype a)) operands) in
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

  (* {1 Creation} *)

  let full d shape v =
    check_shape "full" shape;
    let dst = Arr.create d shape in
    map_into "full" (program "full" ~operands:[||] [| constant d v |] d) dst [];
    dst

  let empty d shape =
    check_shape "empty" shape;
    Arr.create d shape

  let zeros d shape =
    check_shape "zeros" shape;
    Arr.zeros d shape

  let ones d shape = full d shape (one d)
  let scalar d v = full d [||] v
  let empty_like t = Arr.create (dtype t) (shape t)
  let full_like t v = full (dtype t) (shape t) v
  let ones_like t = ones (dtype t) (shape t)
  let zeros_like t = Arr.zeros (dtype t) (shape t)
  let scalar_like t v = scalar (dtype t) v

  let create d shape data =
    check_shape "create" shape;
    let n = Array.fold_left ( * ) 1 shape in
    if Array.length data <> n then
      fail "create" "%d values for the shape %s of %d elements" (Array.length data) (show_shape shape) n;
    match D.bigarray_kind d with
    | Some kind ->
        (* the values in a bigarray, which the tensor then views *)
        let flat = Arr.of_bigarray (Bigarray.genarray_of_array1 (Bigarray.Array1.of_array kind Bigarray.c_layout data)) in
        view flat ~shape ~strides:(Arr.contiguous_strides shape) ~offset:0
    | None ->
        let t = Arr.create d shape in
        let flat = view t ~shape:[| n |] ~strides:[| 1 |] ~offset:0 in
        Array.iteri (fun i v -> Arr.set flat [| i |] v) data;
        t

  let init d shape f =
    check_shape "init" shape;
    Arr.init d shape f

  let copy t =
    let dst = Arr.create (dtype t) (shape t) in
    copy_into "copy" t dst;
    dst

  let contiguous t = if is_c_contiguous t then t else copy t

  let cast d t =
    let dst = Arr.create d (shape t) in
    copy_into "cast" t dst;
    dst

  let astype = cast

  let blit src dst =
    if shape src <> shape dst then
      fail "blit" "the source's shape %s is not the destination's %s" (show_shape (shape src))
        (show_shape (shape dst));
    copy_into "blit" src dst

  let fill v t = full_like t v

  let generate name d shape nodes =
    check_shape name shape;
    let dst = Arr.create d shape in
    map_into name (program name ~operands:[||] nodes d) dst [];
    dst

  let eye ?m ?(k = 0) d n =
    let m = Option.value m ~default:n in
    if n < 0 || m < 0 then fail "eye" "a %d x %d matrix" n m;
    (* column - row = k, as a bool cast to d *)
    generate "eye" d [| n; m |]
      [| P.Coord 0; P.Coord 1; P.Op2 (P.Sub, 1, 0); constant D.Int64 (Int64.of_int k);
         P.Op2 (P.Eq, 2, 3); P.Op1 (P.Cast (D.Any d), 4) |]

  let identity d n = eye d n

  let arange d start stop step =
    if step = 0 then fail "arange" "the step is 0";
    let n = if step > 0 then (stop - start + step - 1) / step else (start - stop - step - 1) / -step in
    let n = Stdlib.max 0 n in
    (* start + i * step, in int64, then cast *)
    generate "arange" d [| n |]
      [| P.Coord 0; constant D.Int64 (Int64.of_int step); P.Op2 (P.Mul, 0, 1);
         constant D.Int64 (Int64.of_int start); P.Op2 (P.Add, 2, 3); P.Op1 (P.Cast (D.Any d), 4) |]

  (* start + i * step in float64 at each index i of [n], cast to [d];
     where [last] is given, the last element is that value exactly. *)
  let float_ramp name d n ~start ~step ?last () =
    let base =
      [| P.Coord 0; P.Op1 (P.Cast (D.Any D.Float64), 0); constant D.Float64 step;
         P.Op2 (P.Mul, 1, 2); constant D.Float64 start; P.Op2 (P.Add, 3, 4) |]
    in
    let nodes =
      match last with
      | None -> base
      | Some v ->
          Array.append base
            [| constant D.Int64 (Int64.of_int (n - 1)); P.Op2 (P.Eq, 0, 6); constant D.Float64 v;
               P.Where (7, 8, 5) |]
    in
    generate name d [| n |] nodes

  let arange_f d start stop step =
    if step = 0. then fail "arange_f" "the step is 0";
    if Float.is_nan start || Float.is_nan stop || Float.is_nan step then fail "arange_f" "a NaN bound or step";
    let n = Float.to_int (Float.ceil ((stop -. start) /. step)) in
    float_ramp "arange_f" d (Stdlib.max 0 n) ~start ~step ()

  let linspace_gen name d ?(endpoint = true) start stop n =
    if n < 0 then fail name "%d values" n;
    let div = if endpoint then n - 1 else n in
    let step = if div > 0 then (stop -. start) /. float_of_int div else 0. in
    let last = if endpoint && n > 1 then Some stop else None in
    float_ramp name d n ~start ~step ?last ()

  let linspace d ?endpoint start stop n = linspace_gen "linspace" d ?endpoint start stop n

  let logspace d ?endpoint ?(base = 10.0) start stop n =
    let x = linspace_gen "logspace" D.Float64 ?endpoint start stop n in
    elementwise "logspace" d [ Arr.Any x ] [| constant D.Float64 base; P.Load 0; P.Op2 (P.Pow, 0, 1) |]

  let geomspace d ?(endpoint = true) start stop n =
    if not (start > 0. && stop > 0.) then
      fail "geomspace" "the bounds %g and %g are not both positive" start stop;
    let x = linspace_gen "geomspace" D.Float64 ~endpoint (Float.log10 start) (Float.log10 stop) n in
    (* 10^x, with the first value start and (with endpoint) the last stop exactly *)
    let last = if endpoint then n - 1 else -1 in
    elementwise "geomspace" d [ Arr.Any x ]
      [| constant D.Float64 10.; P.Load 0; P.Op2 (P.Pow, 0, 1); P.Coord 0;
         constant D.Int64 0L; P.Op2 (P.Eq, 3, 4); constant D.Float64 start; P.Where (5, 6, 2);
         constant D.Int64 (Int64.of_int last); P.Op2 (P.Eq, 3, 8); constant D.Float64 stop;
         P.Where (9, 10, 7) |]

  let of_bigarray ba = Arr.of_bigarray ba

  let buffer_elements t = Arr.Buffer.length (Arr.buffer t) * 8 / D.bits (dtype t)
  let data t = view t ~shape:[| buffer_elements t |] ~strides:[| 1 |] ~offset:0

  let to_buffer t =
    let c = if is_c_contiguous t && offset t = 0 then t else copy t in
    view c ~shape:[| size c |] ~strides:[| 1 |] ~offset:0

  let of_buffer buf ~shape =
    check_shape "of_buffer" shape;
    if ndim buf <> 1 then fail "of_buffer" "a buffer of %d dimensions, not 1" (ndim buf);
    let n = Array.fold_left ( * ) 1 shape in
    if n <> size buf then
      fail "of_buffer" "the shape %s holds %d elements, the buffer %d" (show_shape shape) n (size buf);
    if size buf > 1 && (Arr.strides buf).(0) <> 1 then fail "of_buffer" "the buffer is not contiguous";
    view buf ~shape ~strides:(Arr.contiguous_strides shape) ~offset:(offset buf)

  let to_bigarray (type a b) (t : (a, b) t) : (a, b, Bigarray.c_layout) Bigarray.Genarray.t =
    match D.bigarray_kind (dtype t) with
    | None -> fail "to_bigarray" "%s has no Bigarray kind" (D.name (dtype t))
    | Some kind ->
        let ba = Bigarray.Genarray.create kind Bigarray.c_layout (shape t) in
        copy_into "to_bigarray" t (Arr.of_bigarray ba);
        ba

  let to_array (type a b) (t : (a, b) t) : a array =
    match D.bigarray_kind (dtype t) with
    | Some _ ->
        let flat = Bigarray.reshape_1 (to_bigarray t) (size t) in
        Array.init (size t) (Bigarray.Array1.unsafe_get flat)
    | None -> Array.of_list (Arr.to_list t)

  (* {1 Shape manipulation} *)

  (* The shape [spec] asks of the [n] elements of [from], its one -1
     inferred. *)
  let infer name ~from spec n =
    let unknown = List.length (List.filter (fun d -> d = -1) (Array.to_list spec)) in
    if unknown > 1 then fail name "more than one -1 in %s" (show_shape spec);
    Array.iter (fun d -> if d < -1 then fail name "the negative extent %d in %s" d (show_shape spec)) spec;
    let known = Array.fold_left (fun p d -> if d = -1 then p else p * d) 1 spec in
    if unknown = 1 then begin
      if known = 0 || n mod known <> 0 then fail name "cannot reshape %s to %s" from (show_shape spec);
      Array.map (fun d -> if d = -1 then n / known else d) spec
    end
    else if known <> n then fail name "cannot reshape %s to %s" from (show_shape spec)
    else Array.copy spec

  (* Strides that give [target] the elements of a view of [sh] and [st] in
     C order without copying, if there are any. *)
  let reshape_strides sh st target =
    if Array.mem 0 sh then Some (Arr.contiguous_strides target)
    else begin
      let old = List.filter (fun (n, _) -> n <> 1) (List.combine (Array.to_list sh) (Array.to_list st)) in
      let old = Array.of_list old in
      let no = Array.length old and nn = Array.length target in
      let ns = Array.make nn 1 in
      let oi = ref 0 and oj = ref 1 and ni = ref 0 and nj = ref 1 and ok = ref true in
      while !ok && !ni < nn && !oi < no do
        let np = ref target.(!ni) and op = ref (fst old.(!oi)) in
        while !np <> !op do
          if !np < !op then (np := !np * target.(!nj); incr nj)
          else (op := !op * fst old.(!oj); incr oj)
        done;
        for k = !oi to !oj - 2 do
          if snd old.(k) <> fst old.(k + 1) * snd old.(k + 1) then ok := false
        done;
        ns.(!nj - 1) <- snd old.(!oj - 1);
        for k = !nj - 1 downto !ni + 1 do
          ns.(k - 1) <- ns.(k) * target.(k)
        done;
        ni := !nj;
        incr nj;
        oi := !oj;
        incr oj
      done;
      if !ok then Some ns else None
    end

  let reshape_named name spec t =
    let target = infer name ~from:(show_shape (shape t)) spec (size t) in
    match reshape_strides (shape t) (Arr.strides t) target with
    | Some strides -> view t ~shape:target ~strides ~offset:(offset t)
    | None ->
        fail name "cannot reshape a view of shape %s and element strides %s to %s without copying; call contiguous first"
          (show_shape (shape t)) (show_ints (Arr.strides t)) (show_shape target)

  let reshape spec t = reshape_named "reshape" spec t

  let broadcast_to target t =
    check_shape "broadcast_to" target;
    broadcast_view "broadcast_to" target t

  let broadcasted ?(reverse = false) a b =
    let s = broadcast_pair "broadcasted" (shape a) (shape b) in
    let a' = broadcast_view "broadcasted" s a and b' = broadcast_view "broadcasted" s b in
    if reverse then (b', a') else (a', b')

  let broadcast_arrays ts =
    let s = List.fold_left (fun s t -> broadcast_pair "broadcast_arrays" s (shape t)) [||] ts in
    List.map (broadcast_view "broadcast_arrays" s) ts

  let expand spec t =
    let sh = shape t in
    let r = Array.length spec and rt = Array.length sh in
    if rt > r then fail "expand" "cannot expand %s to %s" (show_shape sh) (show_shape spec);
    let target =
      Array.mapi
        (fun i d ->
          if d = -1 then (if i < r - rt then fail "expand" "-1 at a new axis %d in %s" i (show_shape spec) else sh.(i - (r - rt)))
          else if d < 0 then fail "expand" "the negative extent %d in %s" d (show_shape spec)
          else d)
        spec
    in
    broadcast_view "expand" target t

  let flatten ?(start_dim = 0) ?(end_dim = -1) t =
    let nd = ndim t in
    if nd = 0 then reshape_named "flatten" [| 1 |] t
    else begin
      let s = axis "flatten" nd start_dim and e = axis "flatten" nd end_dim in
      if s > e then fail "flatten" "start_dim %d is after end_dim %d" start_dim end_dim;
      let sh = shape t in
      let merged = ref 1 in
      for a = s to e do merged := !merged * sh.(a) done;
      let target = Array.concat [ Array.sub sh 0 s; [| !merged |]; Array.sub sh (e + 1) (nd - e - 1) ] in
      match reshape_strides sh (Arr.strides t) target with
      | Some _ -> reshape_named "flatten" target t
      | None -> reshape_named "flatten" target (copy t)
    end

  let unflatten d sizes t =
    let nd = ndim t in
    let a = axis "unflatten" nd d in
    let sh = shape t in
    let sizes = infer "unflatten" ~from:(Printf.sprintf "axis %d of extent %d" a sh.(a)) sizes sh.(a) in
    reshape_named "unflatten" (Array.concat [ Array.sub sh 0 a; sizes; Array.sub sh (a + 1) (nd - a - 1) ]) t

  let ravel t = reshape_named "ravel" [| size t |] t

  (* A view keeping the axes [keep] says to keep. *)
  let drop_axes t keep =
    let sh = shape t and st = Arr.strides t in
    let pick a = Array.of_list (List.filteri (fun i _ -> keep i) (Array.to_list a)) in
    view t ~shape:(pick sh) ~strides:(pick st) ~offset:(offset t)

  let squeeze ?axes t =
    let sh = shape t in
    match axes with
    | None -> drop_axes t (fun i -> sh.(i) <> 1)
    | Some axes ->
        let axes = List.map (axis "squeeze" (ndim t)) axes in
        List.iter (fun a -> if sh.(a) <> 1 then fail "squeeze" "axis %d has size %d, not 1" a sh.(a)) axes;
        drop_axes t (fun i -> not (List.mem i axes))

  let squeeze_axis i t =
    let a = axis "squeeze_axis" (ndim t) i in
    if (shape t).(a) <> 1 then fail "squeeze_axis" "axis %d has size %d, not 1" a (shape t).(a);
    drop_axes t (fun j -> j <> a)

  let unsqueeze_named name axes t =
    let r = ndim t + List.length axes in
    let axes = List.map (axis name r) axes in
    if List.length (List.sort_uniq compare axes) <> List.length axes then fail name "repeated axes";
    let sh = shape t and st = Arr.strides t in
    let src = ref 0 in
    let dims =
      Array.init r (fun i ->
          if List.mem i axes then (1, 0)
          else begin
            let d = (sh.(!src), st.(!src)) in
            incr src;
            d
          end)
    in
    view t ~shape:(Array.map fst dims) ~strides:(Array.map snd dims) ~offset:(offset t)

  let unsqueeze ?axes t =
    match axes with
    | None -> fail "unsqueeze" "no axes given"
    | Some axes -> unsqueeze_named "unsqueeze" axes t

  let unsqueeze_axis i t = unsqueeze_named "unsqueeze_axis" [ i ] t
  let expand_dims axes t = unsqueeze_named "expand_dims" axes t

  let permute name perm t =
    let nd = ndim t in
    if Array.length perm <> nd then fail name "%d axes for %d dimensions" (Array.length perm) nd;
    let perm = Array.map (axis name nd) perm in
    if List.length (List.sort_uniq compare (Array.to_list perm)) <> nd then
      fail name "%s is not a permutation" (show_ints perm);
    let sh = shape t and st = Arr.strides t in
    view t ~shape:(Array.map (fun a -> sh.(a)) perm) ~strides:(Array.map (fun a -> st.(a)) perm) ~offset:(offset t)

  let transpose ?axes t =
    match axes with
    | None -> permute "transpose" (Array.init (ndim t) (fun i -> ndim t - 1 - i)) t
    | Some axes -> permute "transpose" (Array.of_list axes) t

  let flip ?axes t =
    let nd = ndim t in
    let axes = match axes with None -> List.init nd Fun.id | Some l -> List.map (axis "flip" nd) l in
    let sh = shape t and st = Arr.strides t in
    let off = ref (offset t) in
    let strides =
      Array.mapi
        (fun a s ->
          if List.mem a axes && sh.(a) > 0 then begin
            off := !off + ((sh.(a) - 1) * s);
            -s
          end
          else s)
        st
    in
    view t ~shape:sh ~strides ~offset:!off

  let moveaxis src dst t =
    let nd = ndim t in
    let s = axis "moveaxis" nd src and d = axis "moveaxis" nd dst in
    let rest = List.filter (fun a -> a <> s) (List.init nd Fun.id) in
    let perm = List.filteri (fun i _ -> i < d) rest @ [ s ] @ List.filteri (fun i _ -> i >= d) rest in
    permute "moveaxis" (Array.of_list perm) t

  let swapaxes a1 a2 t =
    let nd = ndim t in
    let a = axis "swapaxes" nd a1 and b = axis "swapaxes" nd a2 in
    permute "swapaxes" (Array.init nd (fun i -> if i = a then b else if i = b then a else i)) t

  (* The view of [t] over [lo, hi) along axis [a]. *)
  let along t a lo hi =
    let sh = shape t in
    sh.(a) <- hi - lo;
    view t ~shape:sh ~strides:(Arr.strides t) ~offset:(offset t + if hi > lo then lo * (Arr.strides t).(a) else 0)

  let shrink ranges t =
    let nd = ndim t in
    if Array.length ranges <> nd then fail "shrink" "%d ranges for %d dimensions" (Array.length ranges) nd;
    let sh = shape t in
    Array.iteri
      (fun a (lo, hi) ->
        if lo < 0 || hi < lo || hi > sh.(a) then
          fail "shrink" "the range [%d, %d) of axis %d of extent %d" lo hi a sh.(a))
      ranges;
    let r = ref t in
    Array.iteri (fun a (lo, hi) -> r := along !r a lo hi) ranges;
    !r

  let flat_copy t = reshape_named "ravel" [| size t |] (contiguous t)

  (* Joins [ts], of one rank, along axis [a], copying each into its part. *)
  let join name a ts =
    match ts with
    | [] -> fail name "no tensors"
    | first :: _ ->
        let nd = ndim first in
        let sh = shape first in
        List.iter
          (fun t ->
            let s = shape t in
            if Array.length s <> nd then fail name "tensors of %d and %d dimensions" nd (Array.length s);
            Array.iteri
              (fun i n ->
                if i <> a && n <> sh.(i) then
                  fail name "the shapes %s and %s differ outside axis %d" (show_shape sh) (show_shape s) a)
              s)
          ts;
        let total = List.fold_left (fun n t -> n + (shape t).(a)) 0 ts in
        let out_shape = Array.copy sh in
        out_shape.(a) <- total;
        let dst = Arr.create (dtype first) out_shape in
        ignore
          (List.fold_left
             (fun lo t ->
               let hi = lo + (shape t).(a) in
               copy_into name t (along dst a lo hi);
               hi)
             0 ts);
        dst

  let concatenate ?axis:ax ts =
    match ax with
    | None -> join "concatenate" 0 (List.map flat_copy ts)
    | Some ax -> (
        match ts with
        | [] -> fail "concatenate" "no tensors"
        | t :: _ -> join "concatenate" (axis "concatenate" (ndim t) ax) ts)

  let stack ?axis:(ax = 0) ts =
    match ts with
    | [] -> fail "stack" "no tensors"
    | t :: _ ->
        List.iter
          (fun u -> if shape u <> shape t then fail "stack" "the shapes %s and %s differ" (show_shape (shape t)) (show_shape (shape u)))
          ts;
        let a = axis "stack" (ndim t + 1) ax in
        join "stack" a (List.map (unsqueeze_named "stack" [ a ]) ts)

  let at_least name r t =
    match (ndim t, r) with
    | 0, _ -> reshape_named name (Array.make r 1) t
    | 1, 2 -> reshape_named name [| 1; size t |] t
    | 1, 3 -> reshape_named name [| 1; size t; 1 |] t
    | 2, 3 -> unsqueeze_named name [ 2 ] t
    | _ -> t

  let vstack ts = join "vstack" 0 (List.map (at_least "vstack" 2) ts)

  let hstack ts =
    let ts = List.map (at_least "hstack" 1) ts in
    if List.for_all (fun t -> ndim t = 1) ts then join "hstack" 0 ts else join "hstack" 1 ts

  let dstack ts = join "dstack" 2 (List.map (at_least "dstack" 3) ts)

  let array_split ~axis:ax spec t =
    let a = axis "array_split" (ndim t) ax in
    let n = (shape t).(a) in
    let bounds =
      match spec with
      | `Count k ->
          if k <= 0 then fail "array_split" "%d sections" k;
          let q = n / k and r = n mod k in
          List.init k (fun i ->
              let lo = (i * q) + Stdlib.min i r in
              (lo, lo + q + if i < r then 1 else 0))
      | `Indices is ->
          let clamp i = Stdlib.max 0 (Stdlib.min n (if i < 0 then i + n else i)) in
          let cuts = (0 :: List.map clamp is) @ [ n ] in
          let rec pairs = function
            | x :: (y :: _ as rest) -> (x, Stdlib.max x y) :: pairs rest
            | _ -> []
          in
          pairs cuts
    in
    List.map (fun (lo, hi) -> along t a lo hi) bounds

  let split ~axis:ax k t =
    let a = axis "split" (ndim t) ax in
    let n = (shape t).(a) in
    if k <= 0 || n mod k <> 0 then fail "split" "axis %d of extent %d does not split into %d equal parts" a n k;
    array_split ~axis:a (`Count k) t

  let roll ?axis:ax shift t =
    match ax with
    | None -> reshape_named "roll" (shape t) (
        let f = flat_copy t in
        let n = size f in
        let s = if n = 0 then 0 else ((shift mod n) + n) mod n in
        if s = 0 then copy f else join "roll" 0 [ along f 0 (n - s) n; along f 0 0 (n - s) ])
    | Some ax ->
        let a = axis "roll" (ndim t) ax in
        let n = (shape t).(a) in
        let s = if n = 0 then 0 else ((shift mod n) + n) mod n in
        if s = 0 then copy t else join "roll" a [ along t a (n - s) n; along t a 0 (n - s) ]

  let pad widths value t =
    let nd = ndim t in
    if Array.length widths <> nd then fail "pad" "%d widths for %d dimensions" (Array.length widths) nd;
    Array.iteri (fun a (b, e) -> if b < 0 || e < 0 then fail "pad" "the negative width (%d, %d) on axis %d" b e a) widths;
    let sh = shape t in
    let dst = full (dtype t) (Array.mapi (fun a n -> n + fst widths.(a) + snd widths.(a)) sh) value in
    let inner = ref dst in
    Array.iteri (fun a (b, _) -> inner := along !inner a b (b + sh.(a))) widths;
    copy_into "pad" t !inner;
    dst

  let tile reps t =
    Array.iter (fun r -> if r < 0 then fail "tile" "the negative repetition %d" r) reps;
    let nd = Stdlib.max (ndim t) (Array.length reps) in
    let reps = Array.append (Array.make (nd - Array.length reps) 1) reps in
    let t = reshape_named "tile" (Array.append (Array.make (nd - ndim t) 1) (shape t)) t in
    let sh = shape t and st = Arr.strides t in
    let v =
      view t
        ~shape:(Array.concat (List.init nd (fun a -> [| reps.(a); sh.(a) |])))
        ~strides:(Array.concat (List.init nd (fun a -> [| 0; st.(a) |])))
        ~offset:(offset t)
    in
    reshape_named "tile" (Array.mapi (fun a n -> n * reps.(a)) sh) (copy v)

  let repeat ?axis:ax n t =
    if n < 0 then fail "repeat" "the negative count %d" n;
    let t, a = match ax with None -> (flat_copy t, 0) | Some ax -> (t, axis "repeat" (ndim t) ax) in
    let sh = shape t and st = Arr.strides t in
    (* each element's axis followed by a stride-0 axis of n copies *)
    let ins arr x = Array.concat [ Array.sub arr 0 (a + 1); [| x |]; Array.sub arr (a + 1) (Array.length arr - a - 1) ] in
    let v = view t ~shape:(ins sh n) ~strides:(ins st 0) ~offset:(offset t) in
    let out = Array.copy sh in
    out.(a) <- sh.(a) * n;
    reshape_named "repeat" out (copy v)

  let tril_triu name ~upper ?(k = 0) x =
    let nd = ndim x in
    if nd < 2 then fail name "%d dimensions, not at least 2" nd;
    (* keep where column - row <= k (tril) or >= k (triu) *)
    elementwise name (dtype x) [ Arr.Any x ]
      [| P.Load 0; P.Coord (nd - 2); P.Coord (nd - 1); P.Op2 (P.Sub, 2, 1);
         constant D.Int64 (Int64.of_int k); P.Op2 ((if upper then P.Ge else P.Le), 3, 4);
         constant (dtype x) (zero (dtype x)); P.Where (5, 0, 6) |]

  let tril ?k x = tril_triu "tril" ~upper:false ?k x
  let triu ?k x = tril_triu "triu" ~upper:true ?k x

  let diagonal ?(offset = 0) ?axis1 ?axis2 t =
    let nd = ndim t in
    if nd < 2 then fail "diagonal" "%d dimensions, not at least 2" nd;
    let a1 = axis "diagonal" nd (Option.value axis1 ~default:(nd - 2)) in
    let a2 = axis "diagonal" nd (Option.value axis2 ~default:(nd - 1)) in
    if a1 = a2 then fail "diagonal" "axis1 and axis2 are both %d" a1;
    let sh = shape t and st = Arr.strides t in
    let n1, n2 = (sh.(a1), sh.(a2)) in
    let r0, c0 = if offset >= 0 then (0, offset) else (-offset, 0) in
    let len = Stdlib.max 0 (Stdlib.min (n1 - r0) (n2 - c0)) in
    let off = if len > 0 then Arr.offset t + (r0 * st.(a1)) + (c0 * st.(a2)) else Arr.offset t in
    let keep = List.filter (fun a -> a <> a1 && a <> a2) (List.init nd Fun.id) in
    view t
      ~shape:(Array.of_list (List.map (fun a -> sh.(a)) keep @ [ len ]))
      ~strides:(Array.of_list (List.map (fun a -> st.(a)) keep @ [ st.(a1) + st.(a2) ]))
      ~offset:off

  let diag ?(k = 0) v =
    match ndim v with
    | 1 ->
        let n = size v + Stdlib.abs k in
        let dst = zeros (dtype v) [| n; n |] in
        copy_into "diag" v (diagonal ~offset:k dst);
        dst
    | 2 -> diagonal ~offset:k v
    | d -> fail "diag" "%d dimensions, not 1 or 2" d

  let matrix_transpose t = if ndim t < 2 then t else swapaxes (-1) (-2) t

  let meshgrid ?(indexing = `xy) x y =
    if ndim x <> 1 || ndim y <> 1 then
      fail "meshgrid" "the shapes %s and %s are not both 1-D" (show_shape (shape x)) (show_shape (shape y));
    let nx = size x and ny = size y in
    match indexing with
    | `xy ->
        ( copy (broadcast_view "meshgrid" [| ny; nx |] x),
          copy (broadcast_view "meshgrid" [| ny; nx |] (reshape_named "meshgrid" [| ny; 1 |] y)) )
    | `ij ->
        ( copy (broadcast_view "meshgrid" [| nx; ny |] (reshape_named "meshgrid" [| nx; 1 |] x)),
          copy (broadcast_view "meshgrid" [| nx; ny |] y) )

  let one_hot ~num_classes indices =
    let d = dtype indices in
    if not (D.is_integer d) then fail "one_hot" "%s indices are not integers" (D.name d);
    if num_classes <= 0 then fail "one_hot" "%d classes" num_classes;
    let nd = ndim indices in
    let v = unsqueeze_named "one_hot" [ nd ] indices in
    let v = broadcast_view "one_hot" (Array.append (shape indices) [| num_classes |]) v in
    elementwise "one_hot" D.Uint8 [ Arr.Any v ]
      [| P.Load 0; P.Op1 (P.Cast (D.Any D.Int64), 0); P.Coord nd; P.Op2 (P.Eq, 1, 2) |]

  (* {1 Indexing} *)

  let index name n i =
    let j = if i < 0 then i + n else i in
    if j < 0 || j >= n then fail name "index %d is out of bounds for an axis of extent %d" i n;
    j

  let get indices t =
    let nd = ndim t in
    if List.length indices > nd then fail "get" "%d indices for %d dimensions" (List.length indices) nd;
    let sh = shape t and st = Arr.strides t in
    let k = List.length indices in
    let off = ref (offset t) in
    List.iteri (fun a i -> off := !off + (index "get" sh.(a) i * st.(a))) indices;
    view t ~shape:(Array.sub sh k (nd - k)) ~strides:(Array.sub st k (nd - k)) ~offset:!off

  let set indices t v = copy_into "set" v (get indices t)

  let full_index name indices t =
    let nd = ndim t in
    if List.length indices <> nd then fail name "%d indices for %d dimensions" (List.length indices) nd;
    let sh = shape t in
    Array.of_list (List.mapi (fun a i -> index name sh.(a) i) indices)

  let item indices t = Arr.get t (full_index "item" indices t)
  let set_item indices v t = Arr.set t (full_index "set_item" indices t) v

  (* One axis's selection, its indices checked. *)
  type pick = Pick of int | Span of int * int * int (* start, count, step *) | New

  (* The start and count of a Python-like range of an axis of extent n. *)
  let range n start stop step =
    let norm x = if x < 0 then x + n else x in
    let start = norm start and stop = norm stop in
    if step > 0 then
      let start = Stdlib.max 0 (Stdlib.min n start) and stop = Stdlib.max 0 (Stdlib.min n stop) in
      (start, Stdlib.max 0 ((stop - start + step - 1) / step))
    else
      let start = Stdlib.max (-1) (Stdlib.min (n - 1) start) and stop = Stdlib.max (-1) (Stdlib.min (n - 1) stop) in
      (start, Stdlib.max 0 ((start - stop - step - 1) / -step))

  (* Whether a list of indices steps evenly: its start, count and step. *)
  let progression = function
    | [] -> Some (0, 0, 1)
    | [ i ] -> Some (i, 1, 1)
    | i :: j :: _ as l ->
        let step = j - i in
        let rec even prev = function x :: rest -> x - prev = step && even x rest | [] -> true in
        if step <> 0 && even i (List.tl l) then Some (i, List.length l, step) else None

  (* The picks of [specs] over [sh], or the position of the first L that
     needs copies: (spec index, input axis, output axis, its indices). *)
  let picks name specs sh =
    let nd = Array.length sh in
    let rec go a out acc = function
      | [] ->
          if a > nd then fail name "%d axes indexed in %d dimensions" a nd;
          Ok (List.rev acc @ List.init (nd - a) (fun i -> Span (0, sh.(a + i), 1)))
      | N :: rest -> go a (out + 1) (New :: acc) rest
      | spec :: rest -> (
          if a >= nd then fail name "more indices than the %d dimensions" nd;
          let n = sh.(a) in
          match spec with
          | I i -> go (a + 1) out (Pick (index name n i) :: acc) rest
          | A -> go (a + 1) (out + 1) (Span (0, n, 1) :: acc) rest
          | R (s, e) -> let s, c = range n s e 1 in go (a + 1) (out + 1) (Span (s, c, 1) :: acc) rest
          | Rs (s, e, st) ->
              if st = 0 then fail name "a step of 0";
              let s, c = range n s e st in
              go (a + 1) (out + 1) (Span (s, c, st) :: acc) rest
          | M _ -> fail name "mask (M) specs are not supported yet"
          | L is -> (
              let is = List.map (index name n) is in
              match progression is with
              | Some (s, c, st) -> go (a + 1) (out + 1) (Span (s, c, st) :: acc) rest
              | None -> Error (List.length acc, a, out, is))
          | N -> assert false)
    in
    go 0 0 [] specs

  let view_of_picks t picks =
    let st = Arr.strides t in
    let off = ref (offset t) and dims = ref [] and a = ref 0 in
    List.iter
      (function
        | New -> dims := (1, 0) :: !dims
        | Pick i -> off := !off + (i * st.(!a)); incr a
        | Span (s, c, step) ->
            if c > 0 then off := !off + (s * st.(!a));
            dims := (c, step * st.(!a)) :: !dims;
            incr a)
      picks;
    let dims = Array.of_list (List.rev !dims) in
    view t ~shape:(Array.map fst dims) ~strides:(Array.map snd dims) ~offset:!off

  (* [specs] with its [k]-th spec, an L, replaced by index [i] kept as an axis. *)
  let with_one specs k i = List.mapi (fun j s -> if j = k then R (i, i + 1) else s) specs

  let rec slice_named name specs t =
    match picks name specs (shape t) with
    | Ok p -> view_of_picks t p
    | Error (k, _, out, is) -> join name out (List.map (fun i -> slice_named name (with_one specs k i) t) is)

  let slice specs t = slice_named "slice" specs t

  (* The shape [specs] select, an L counting its indices. *)
  let rec selection_shape name specs t =
    match picks name specs (shape t) with
    | Ok p -> shape (view_of_picks t p)
    | Error (k, _, out, is) ->
        let s = selection_shape name (with_one specs k (List.hd is)) t in
        s.(out) <- List.length is;
        s

  let rec set_slice specs t v =
    if List.exists (function N -> true | _ -> false) specs then
      fail "set_slice" "new-axis (N) specs are not supported for writes";
    match picks "set_slice" specs (shape t) with
    | Ok p -> copy_into "set_slice" v (view_of_picks t p)
    | Error (k, _, out, is) ->
        let v = broadcast_view "set_slice" (selection_shape "set_slice" specs t) v in
        List.iteri (fun j i -> set_slice (with_one specs k i) t (along v out j (j + 1))) is

  (* {1 Elementwise} *)

  let unary name kind t = elementwise name (dtype t) [ Arr.Any t ] [| P.Load 0; P.Op1 (P.Unary kind, 0) |]

  let binary name kind a b =
    elementwise name (dtype a) [ Arr.Any a; Arr.Any b ] [| P.Load 0; P.Load 1; P.Op2 (kind, 0, 1) |]

  let binary_s name kind t s =
    elementwise name (dtype t) [ Arr.Any t ] [| P.Load 0; constant (dtype t) s; P.Op2 (kind, 0, 1) |]

  let binary_rs name kind s t =
    elementwise name (dtype t) [ Arr.Any t ] [| P.Load 0; constant (dtype t) s; P.Op2 (kind, 1, 0) |]

  let comparison name kind a b =
    elementwise name D.Bool [ Arr.Any a; Arr.Any b ] [| P.Load 0; P.Load 1; P.Op2 (kind, 0, 1) |]

  let comparison_s name kind t s =
    elementwise name D.Bool [ Arr.Any t ] [| P.Load 0; constant (dtype t) s; P.Op2 (kind, 0, 1) |]

  let add a b = binary "add" P.Add a b
  let add_s t s = binary_s "add_s" P.Add t s
  let radd_s s t = binary_rs "radd_s" P.Add s t
  let sub a b = binary "sub" P.Sub a b
  let sub_s t s = binary_s "sub_s" P.Sub t s
  let rsub_s s t = binary_rs "rsub_s" P.Sub s t
  let mul a b = binary "mul" P.Mul a b
  let mul_s t s = binary_s "mul_s" P.Mul t s
  let rmul_s s t = binary_rs "rmul_s" P.Mul s t
  let div a b = binary "div" P.Div a b
  let div_s t s = binary_s "div_s" P.Div t s
  let rdiv_s s t = binary_rs "rdiv_s" P.Div s t
  let pow a b = binary "pow" P.Pow a b
  let pow_s t s = binary_s "pow_s" P.Pow t s
  let rpow_s s t = binary_rs "rpow_s" P.Pow s t
  let mod_ a b = binary "mod_" P.Mod a b
  let mod_s t s = binary_s "mod_s" P.Mod t s
  let rmod_s s t = binary_rs "rmod_s" P.Mod s t
  let maximum a b = binary "maximum" P.Maximum a b
  let maximum_s t s = binary_s "maximum_s" P.Maximum t s
  let rmaximum_s s t = binary_rs "rmaximum_s" P.Maximum s t
  let minimum a b = binary "minimum" P.Minimum a b
  let minimum_s t s = binary_s "minimum_s" P.Minimum t s
  let rminimum_s s t = binary_rs "rminimum_s" P.Minimum s t
  let atan2 y x = binary "atan2" P.Atan2 y x
  let hypot x y = binary "hypot" P.Hypot x y
  let bitwise_xor a b = binary "bitwise_xor" P.Bit_xor a b
  let bitwise_or a b = binary "bitwise_or" P.Bit_or a b
  let bitwise_and a b = binary "bitwise_and" P.Bit_and a b
  let neg t = unary "neg" P.Neg t
  let conjugate t = unary "conjugate" P.Conj t
  let abs t = unary "abs" P.Abs t
  let sign t = unary "sign" P.Sign t
  let square t = unary "square" P.Square t
  let sqrt t = unary "sqrt" P.Sqrt t
  let rsqrt t = unary "rsqrt" P.Rsqrt t
  let recip t = unary "recip" P.Recip t
  let log t = unary "log" P.Log t
  let log2 t = unary "log2" P.Log2 t
  let exp t = unary "exp" P.Exp t
  let exp2 t = unary "exp2" P.Exp2 t
  let sin t = unary "sin" P.Sin t
  let cos t = unary "cos" P.Cos t
  let tan t = unary "tan" P.Tan t
  let asin t = unary "asin" P.Asin t
  let acos t = unary "acos" P.Acos t
  let atan t = unary "atan" P.Atan t
  let sinh t = unary "sinh" P.Sinh t
  let cosh t = unary "cosh" P.Cosh t
  let tanh t = unary "tanh" P.Tanh t
  let asinh t = unary "asinh" P.Asinh t
  let acosh t = unary "acosh" P.Acosh t
  let atanh t = unary "atanh" P.Atanh t
  let bitwise_not t = unary "bitwise_not" P.Bit_not t
  let invert t = unary "invert" P.Bit_not t

  (* Rounding: integers are whole already. *)
  let rounding name kind t = if D.is_integer (dtype t) then copy t else unary name kind t
  let trunc t = rounding "trunc" P.Trunc t
  let ceil t = rounding "ceil" P.Ceil t
  let floor t = rounding "floor" P.Floor t
  let round t = rounding "round" P.Round t

  let lerp a b w =
    elementwise "lerp" (dtype a) [ Arr.Any a; Arr.Any b; Arr.Any w ]
      [| P.Load 0; P.Load 1; P.Load 2; P.Op2 (P.Sub, 1, 0); P.Op2 (P.Mul, 2, 3); P.Op2 (P.Add, 0, 4) |]

  let lerp_scalar_weight a b w =
    elementwise "lerp_scalar_weight" (dtype a) [ Arr.Any a; Arr.Any b ]
      [| P.Load 0; P.Load 1; constant (dtype a) w; P.Op2 (P.Sub, 1, 0); P.Op2 (P.Mul, 2, 3); P.Op2 (P.Add, 0, 4) |]

  let classify name kind ~otherwise t =
    let d = dtype t in
    if D.is_float d || D.is_complex d then
      elementwise name D.Bool [ Arr.Any t ] [| P.Load 0; P.Op1 (P.Unary kind, 0) |]
    else full D.Bool (shape t) otherwise

  let isinf t = classify "isinf" P.Is_inf ~otherwise:false t
  let isnan t = classify "isnan" P.Is_nan ~otherwise:false t
  let isfinite t = classify "isfinite" P.Is_finite ~otherwise:true t

  let cmplt a b = comparison "cmplt" P.Lt a b
  let less a b = comparison "less" P.Lt a b
  let less_s t s = comparison_s "less_s" P.Lt t s
  let cmpne a b = comparison "cmpne" P.Ne a b
  let not_equal a b = comparison "not_equal" P.Ne a b
  let not_equal_s t s = comparison_s "not_equal_s" P.Ne t s
  let cmpeq a b = comparison "cmpeq" P.Eq a b
  let equal a b = comparison "equal" P.Eq a b
  let equal_s t s = comparison_s "equal_s" P.Eq t s
  let cmpgt a b = comparison "cmpgt" P.Gt a b
  let greater a b = comparison "greater" P.Gt a b
  let greater_s t s = comparison_s "greater_s" P.Gt t s
  let cmple a b = comparison "cmple" P.Le a b
  let less_equal a b = comparison "less_equal" P.Le a b
  let less_equal_s t s = comparison_s "less_equal_s" P.Le t s
  let cmpge a b = comparison "cmpge" P.Ge a b
  let greater_equal a b = comparison "greater_equal" P.Ge a b
  let greater_equal_s t s = comparison_s "greater_equal_s" P.Ge t s

  let logical name kind a b =
    elementwise name (dtype a) [ Arr.Any a; Arr.Any b ]
      [| P.Load 0; P.Load 1; P.Op1 (P.Cast (D.Any D.Bool), 0); P.Op1 (P.Cast (D.Any D.Bool), 1); P.Op2 (kind, 2, 3) |]

  let logical_and a b = logical "logical_and" P.And a b
  let logical_or a b = logical "logical_or" P.Or a b
  let logical_xor a b = logical "logical_xor" P.Xor a b

  let logical_not t =
    elementwise "logical_not" (dtype t) [ Arr.Any t ]
      [| P.Load 0; P.Op1 (P.Cast (D.Any D.Bool), 0); P.Op1 (P.Unary P.Not, 1) |]

  let where cond a b =
    elementwise "where" (dtype a) [ Arr.Any cond; Arr.Any a; Arr.Any b ]
      [| P.Load 0; P.Load 1; P.Load 2; P.Where (0, 1, 2) |]

  let clamp_named name ?min ?max t =
    let d = dtype t in
    let nodes = ref [ P.Load 0 ] in
    let apply kind v =
      let last = List.length !nodes - 1 in
      nodes := !nodes @ [ constant d v; P.Op2 (kind, last, last + 1) ]
    in
    Option.iter (apply P.Maximum) min;
    Option.iter (apply P.Minimum) max;
    if List.length !nodes = 1 then copy t
    else elementwise name d [ Arr.Any t ] (Array.of_list !nodes)

  let clamp ?min ?max t = clamp_named "clamp" ?min ?max t
  let clip ?min ?max t = clamp_named "clip" ?min ?max t

  let shift name kind t n =
    let d = dtype t in
    if not (D.is_integer d) then fail name "%s is not an integer dtype" (D.name d);
    if n < 0 then fail name "the negative shift %d" n;
    binary_s name kind t (of_int d n)

  let lshift t n = shift "lshift" P.Shl t n
  let rshift t n = shift "rshift" P.Shr t n

  (* {1 Reductions and scans} *)

  let reduction_axes name nd = function
    | None -> List.init nd Fun.id
    | Some axes ->
        let axes = List.map (axis name nd) axes in
        if List.length (List.sort_uniq compare axes) <> List.length axes then fail name "repeated axes";
        List.sort compare axes

  let identity_nodes d = [| P.Load 0; P.Op1 (P.Cast (D.Any d), 0) |]

  (* Reduces [t] along [axes] by [r] of [nodes]' output into [dsts]. *)
  let reduce_into name t ~axes nodes out r dsts =
    let p = program name ~operands:[| D.Any (dtype t) |] nodes out in
    answer name
      (K.reduce p ~shape:(Iarray.of_array (shape t)) ~axes:(Iarray.of_list axes)
         (Iarray.of_list [ (r, 0) ]) ~dsts:(Iarray.of_list dsts) (loads [ Arr.Any t ]))

  let kept name keepdims sh axes dst =
    if keepdims then reshape_named name (Array.mapi (fun a n -> if List.mem a axes then 1 else n) sh) dst else dst

  let reduce_with name (out : ('v, 's) dtype) nodes r ?axes ?(keepdims = false) t : ('v, 's) t =
    let sh = shape t in
    let axes = reduction_axes name (ndim t) axes in
    let dst = Arr.create out (Nx_kernel.Shape.reduce sh ~axes:(Array.of_list axes)) in
    reduce_into name t ~axes nodes out r [ Arr.Any dst ];
    kept name keepdims sh axes dst

  let monoid name m ?axes ?keepdims t =
    reduce_with name (dtype t) (identity_nodes (dtype t)) (Nx_kernel.Monoid m) ?axes ?keepdims t

  let sum ?axes ?keepdims t = monoid "sum" Nx_kernel.Sum ?axes ?keepdims t
  let prod ?axes ?keepdims t = monoid "prod" Nx_kernel.Prod ?axes ?keepdims t
  (* An extreme of nothing has no value in the dtype: refused, as numpy does. *)
  let extreme name m ?axes ?keepdims t =
    let sh = shape t in
    if List.exists (fun a -> sh.(a) = 0) (reduction_axes name (ndim t) axes) then
      fail name "an empty reduction has no %s" (if m = Nx_kernel.Max then "maximum" else "minimum");
    monoid name m ?axes ?keepdims t

  let max ?axes ?keepdims t = extreme "max" Nx_kernel.Max ?axes ?keepdims t
  let min ?axes ?keepdims t = extreme "min" Nx_kernel.Min ?axes ?keepdims t

  (* whether each term is not zero, reduced in int64 by Prod (all) or Sum (any) *)
  let truth name m ?axes ?keepdims t =
    reduce_with name D.Bool [| P.Load 0; P.Op1 (P.Cast (D.Any D.Bool), 0) |] (Nx_kernel.Monoid m) ?axes ?keepdims t

  let all ?axes ?keepdims t = truth "all" Nx_kernel.Prod ?axes ?keepdims t
  let any ?axes ?keepdims t = truth "any" Nx_kernel.Sum ?axes ?keepdims t

  (* The mean and the population variance of a float tensor, by Moments. *)
  let moments name ?axes ?(keepdims = false) t =
    let sh = shape t in
    let axes = reduction_axes name (ndim t) axes in
    let rshape = Nx_kernel.Shape.reduce sh ~axes:(Array.of_list axes) in
    let m = Arr.create (dtype t) rshape and v = Arr.create (dtype t) rshape in
    reduce_into name t ~axes (identity_nodes (dtype t)) (dtype t) Nx_kernel.Moments [ Arr.Any m; Arr.Any v ];
    let count = List.fold_left (fun n a -> n * sh.(a)) 1 axes in
    (kept name keepdims sh axes m, kept name keepdims sh axes v, count)

  (* A function of float tensors of any float dtype. *)
  type float_fn = { f : 'e. (float, 'e) t -> (float, 'e) t }

  (* [fn] of [t] if it is float, else of its cast to float64, cast back. *)
  let through_float (type a b) name fn (t : (a, b) t) : (a, b) t =
    match dtype t with
    | D.Complex64 -> fail name "complex dtypes are not supported"
    | D.Complex128 -> fail name "complex dtypes are not supported"
    | D.Float4_e2m1fn -> fn.f t | D.Float8_e4m3fn -> fn.f t | D.Float8_e5m2 -> fn.f t
    | D.Float16 -> fn.f t | D.Bfloat16 -> fn.f t | D.Float32 -> fn.f t | D.Float64 -> fn.f t
    | d -> cast d (fn.f (cast D.Float64 t))

  let mean ?axes ?keepdims t =
    let d = dtype t in
    if D.is_complex d then begin
      let s = monoid "mean" Nx_kernel.Sum ?axes ?keepdims t in
      let n = size t / Stdlib.max 1 (size s) in
      div_s s (of_int d n)
    end
    else
      let go (type e) (x : (float, e) t) : (float, e) t =
        let m, _, _ = moments "mean" ?axes ?keepdims x in
        m
      in
      through_float "mean" { f = go } t

  (* The variance of a complex tensor: the mean of |x - mean x|², as a
     complex number of zero imaginary part. *)
  let complex_variance name ?axes ?(keepdims = false) ~ddof t =
    let d = dtype t in
    let sh = shape t in
    let axes = reduction_axes name (ndim t) axes in
    let n = List.fold_left (fun n a -> n * sh.(a)) 1 axes in
    if ddof >= n then fail name "ddof %d is not below the %d elements reduced" ddof n;
    let centred = sub t (div_s (sum ~axes ~keepdims:true t) (of_int d n)) in
    let magnitude = unary name P.Abs centred in
    let squares = sum ~axes ~keepdims (mul magnitude magnitude) in
    div_s squares (of_int d (n - ddof))

  (* The variance of a real tensor, [ddof] checked before any kernel runs. *)
  let real_variance name ?axes ?keepdims ~ddof t =
    let n = List.fold_left (fun n a -> n * (shape t).(a)) 1 (reduction_axes name (ndim t) axes) in
    if ddof >= n then fail name "ddof %d is not below the %d elements reduced" ddof n;
    let go (type e) (x : (float, e) t) : (float, e) t =
      let _, v, _ = moments name ?axes ?keepdims x in
      if ddof = 0 then v else mul_s v (float_of_int n /. float_of_int (n - ddof))
    in
    through_float name { f = go } t

  let var ?axes ?keepdims ?(ddof = 0) t =
    if D.is_complex (dtype t) then complex_variance "var" ?axes ?keepdims ~ddof t
    else real_variance "var" ?axes ?keepdims ~ddof t

  let std ?axes ?keepdims ?(ddof = 0) t =
    let v =
      if D.is_complex (dtype t) then complex_variance "std" ?axes ?keepdims ~ddof t
      else real_variance "std" ?axes ?keepdims ~ddof t
    in
    let d = dtype t in
    if not (D.is_float d || D.is_complex d) then through_float "std" { f = (fun x -> unary "std" P.Sqrt x) } v
    else unary "std" P.Sqrt v

  let arg name m ?axis:ax ?(keepdims = false) t =
    let nd = ndim t in
    let sh = shape t in
    let axes = match ax with None -> List.init nd Fun.id | Some a -> [ axis name nd a ] in
    let count = List.fold_left (fun n a -> n * sh.(a)) 1 axes in
    if count = 0 then fail name "an empty reduction has no position";
    let rshape = Nx_kernel.Shape.reduce sh ~axes:(Array.of_list axes) in
    let ext = Arr.create (dtype t) rshape and pos = Arr.create D.Int64 rshape in
    reduce_into name t ~axes (identity_nodes (dtype t)) (dtype t) (Nx_kernel.Arg m) [ Arr.Any ext; Arr.Any pos ];
    kept name keepdims sh axes (cast D.Int32 pos)

  let argmax ?axis ?keepdims t = arg "argmax" Nx_kernel.Max ?axis ?keepdims t
  let argmin ?axis ?keepdims t = arg "argmin" Nx_kernel.Min ?axis ?keepdims t

  let scan name m ?axis:ax t =
    let t, a = match ax with None -> (flat_copy t, 0) | Some ax -> (t, axis name (ndim t) ax) in
    let d = dtype t in
    let dst = Arr.create d (shape t) in
    let p = program name ~operands:[| D.Any d |] (identity_nodes d) d in
    answer name (K.scan p ~axis:a (Nx_kernel.Monoid m, 0) ~dsts:(Iarray.of_list [ Arr.Any dst ]) (loads [ Arr.Any t ]));
    dst

  let cumsum ?axis t = scan "cumsum" Nx_kernel.Sum ?axis t
  let cumprod ?axis t = scan "cumprod" Nx_kernel.Prod ?axis t
  let cummax ?axis t = scan "cummax" Nx_kernel.Max ?axis t
  let cummin ?axis t = scan "cummin" Nx_kernel.Min ?axis t

  let array_equal a b =
    if shape a <> shape b then full D.Bool [||] false else all (equal a b)

  let outer a b =
    let a = flat_copy a and b = flat_copy b in
    mul (reshape_named "outer" [| size a; 1 |] a) (reshape_named "outer" [| 1; size b |] b)

  let kron a b =
    let r = Stdlib.max (ndim a) (ndim b) in
    let lift t = reshape_named "kron" (Array.append (Array.make (r - ndim t) 1) (shape t)) t in
    let a = lift a and b = lift b in
    (* a's axis i then b's, side by side: their products in Kronecker order *)
    let interleave t ~first =
      let sh = shape t and st = Arr.strides t in
      let pair i = if first then [| sh.(i); 1 |] else [| 1; sh.(i) |] in
      let spair i = if first then [| st.(i); 0 |] else [| 0; st.(i) |] in
      view t ~shape:(Array.concat (List.init r pair)) ~strides:(Array.concat (List.init r spair)) ~offset:(offset t)
    in
    let p = binary "kron" P.Mul (interleave a ~first:true) (interleave b ~first:false) in
    reshape_named "kron" (Array.init r (fun i -> (shape a).(i) * (shape b).(i))) p

  let cross ?axis:(ax = -1) a b =
    let sh = broadcast_pair "cross" (shape a) (shape b) in
    let a = broadcast_view "cross" sh a and b = broadcast_view "cross" sh b in
    let k = axis "cross" (Array.length sh) ax in
    if sh.(k) <> 3 then fail "cross" "axis %d has extent %d, not 3" k sh.(k);
    let dst = Arr.create (dtype a) sh in
    let part t i = along t k i (i + 1) in
    let d = D.Any (dtype a) in
    let p =
      program "cross" ~operands:[| d; d; d; d |]
        [| P.Load 0; P.Load 1; P.Load 2; P.Load 3; P.Op2 (P.Mul, 0, 1); P.Op2 (P.Mul, 2, 3); P.Op2 (P.Sub, 4, 5) |]
        (dtype a)
    in
    (* component i is a_j b_k - a_k b_j, (i, j, k) a cyclic order *)
    for i = 0 to 2 do
      let j = (i + 1) mod 3 and l = (i + 2) mod 3 in
      map_into "cross" p (part dst i)
        [ Arr.Any (part a j); Arr.Any (part b l); Arr.Any (part a l); Arr.Any (part b j) ]
    done;
    dst

  (* {1 Random numbers} *)

  (* SplitMix64's finaliser. *)
  let mix64 z =
    let open Int64 in
    let z = mul (logxor z (shift_right_logical z 30)) 0xBF58476D1CE4E5B9L in
    let z = mul (logxor z (shift_right_logical z 27)) 0x94D049BB133111EBL in
    logxor z (shift_right_logical z 31)

  let golden = 0x9E3779B97F4A7C15L

  module Rng = struct
    type key = int

    let key seed = Int64.to_int (Int64.shift_right_logical (mix64 (Int64.of_int seed)) 2)
    let fold_in k data = key (Int64.to_int (Int64.add (Int64.mul (Int64.of_int k) golden) (Int64.of_int data)) lxor 0x5bd1e995)

    let split ?(n = 2) k =
      if n < 0 then fail "Rng.split" "%d keys" n;
      Array.init n (fun i -> fold_in (fold_in k (-1)) i)

    let to_int k = k

    (* The innermost scope of the domain: its key and the keys given so far. *)
    type scope = { base : key; mutable given : int }

    let scope = Domain.DLS.new_key (fun () -> ref None)
    let fallback = Domain.DLS.new_key Random.State.make_self_init

    let next_key () =
      match !(Domain.DLS.get scope) with
      | Some s ->
          s.given <- s.given + 1;
          fold_in s.base s.given
      | None -> key (Random.State.bits (Domain.DLS.get fallback))

    let with_key k f =
      let r = Domain.DLS.get scope in
      let outer = !r in
      r := Some { base = k; given = 0 };
      Fun.protect ~finally:(fun () -> r := outer) f

    let run ~seed f = with_key (key seed) f
  end

  (* A program under construction: nodes appended, each named by its index. *)
  type builder = { mutable rev : P.node list; mutable count : int }

  let emit b node =
    b.rev <- node :: b.rev;
    b.count <- b.count + 1;
    b.count - 1

  let nodes_of b = Array.of_list (List.rev b.rev)
  let u64 b x = emit b (constant D.Uint64 x)
  let f64 b x = emit b (constant D.Float64 x)

  (* 64 random bits (uint64) at each index of a loop of [shape]: the
     finaliser of the index's row-major number mixed with [seed]. *)
  let random_bits b shape seed =
    let flat = ref (emit b (constant D.Int64 0L)) in
    Array.iteri
      (fun a s ->
        let c = emit b (P.Coord a) in
        let term = emit b (P.Op2 (P.Mul, c, emit b (constant D.Int64 (Int64.of_int s)))) in
        flat := emit b (P.Op2 (P.Add, !flat, term)))
      (Arr.contiguous_strides shape);
    let x = emit b (P.Op1 (P.Cast (D.Any D.Uint64), !flat)) in
    let x = emit b (P.Op2 (P.Mul, x, u64 b golden)) in
    let x = emit b (P.Op2 (P.Add, x, u64 b seed)) in
    let step x shift m =
      let y = emit b (P.Op2 (P.Bit_xor, x, emit b (P.Op2 (P.Shr, x, u64 b (Int64.of_int shift))))) in
      match m with Some c -> emit b (P.Op2 (P.Mul, y, u64 b c)) | None -> y
    in
    step (step (step x 30 (Some 0xBF58476D1CE4E5B9L)) 27 (Some 0x94D049BB133111EBL)) 31 None

  (* The top [p] of 64 bits as a float64 in [0, 1), a multiple of 2^-p. *)
  let unit_float b bits p =
    let k = emit b (P.Op2 (P.Shr, bits, u64 b (Int64.of_int (64 - p)))) in
    let k = emit b (P.Op1 (P.Cast (D.Any D.Float64), k)) in
    emit b (P.Op2 (P.Mul, k, f64 b (Float.ldexp 1. (-p))))

  (* The significant bits of a float dtype, so that every value of
     [unit_float] is one of its values below 1. *)
  let precision : type a b. (a, b) dtype -> int = function
    | D.Float64 -> 53 | D.Float32 -> 24 | D.Float16 -> 11 | D.Bfloat16 -> 8
    | D.Float8_e4m3fn -> 4 | D.Float8_e5m2 -> 3 | D.Float4_e2m1fn -> 1 | _ -> 53

  let seeds () =
    let s = mix64 (Int64.of_int (Rng.next_key ())) in
    (s, mix64 (Int64.logxor s golden))

  let float_dtype name d = if not (D.is_float d) then fail name "%s is not a float dtype" (D.name d)

  let rand d shape =
    float_dtype "rand" d;
    check_shape "rand" shape;
    let b = { rev = []; count = 0 } in
    let s, _ = seeds () in
    ignore (unit_float b (random_bits b shape s) (precision d));
    generate "rand" d shape (nodes_of b)

  (* Box-Muller in float64: sqrt (-2 log u1) cos (2 pi u2), u1 in (0, 1]. *)
  let normal_nodes b shape =
    let s1, s2 = seeds () in
    let u1 = unit_float b (random_bits b shape s1) 53 in
    let u1 = emit b (P.Op2 (P.Sub, f64 b 1., u1)) in
    let u2 = unit_float b (random_bits b shape s2) 53 in
    let r = emit b (P.Op1 (P.Unary P.Sqrt, emit b (P.Op2 (P.Mul, f64 b (-2.), emit b (P.Op1 (P.Unary P.Log, u1)))))) in
    let c = emit b (P.Op1 (P.Unary P.Cos, emit b (P.Op2 (P.Mul, f64 b (2. *. Float.pi), u2)))) in
    emit b (P.Op2 (P.Mul, r, c))

  let randn d shape =
    float_dtype "randn" d;
    check_shape "randn" shape;
    let b = { rev = []; count = 0 } in
    ignore (normal_nodes b shape);
    generate "randn" d shape (nodes_of b)

  let randint d ?(high = 10) shape low =
    if not (D.is_integer d) then fail "randint" "%s is not an integer dtype" (D.name d);
    if low >= high then fail "randint" "low %d is not below high %d" low high;
    check_shape "randint" shape;
    let b = { rev = []; count = 0 } in
    let s, _ = seeds () in
    (* low + bits mod (high - low), in int64 *)
    let r = emit b (P.Op2 (P.Mod, random_bits b shape s, u64 b (Int64.of_int (high - low)))) in
    let r = emit b (P.Op1 (P.Cast (D.Any D.Int64), r)) in
    ignore (emit b (P.Op2 (P.Add, r, emit b (constant D.Int64 (Int64.of_int low)))));
    generate "randint" d shape (nodes_of b)

  let bernoulli ~p shape =
    if not (p >= 0. && p <= 1.) then fail "bernoulli" "p = %g is not in [0, 1]" p;
    check_shape "bernoulli" shape;
    let b = { rev = []; count = 0 } in
    let s, _ = seeds () in
    let u = unit_float b (random_bits b shape s) 53 in
    ignore (emit b (P.Op2 (P.Lt, u, f64 b p)));
    generate "bernoulli" D.Bool shape (nodes_of b)

  (* erfinv y, y in (-1, 1), given w = -log (1 - y²): Giles's polynomial
     approximations (w < 5, else in sqrt w), then two Newton steps on the
     kernels' erf. *)
  let erfinv_nodes b y w =
    let poly x coefficients =
      List.fold_left (fun acc c -> emit b (P.Op2 (P.Add, emit b (P.Op2 (P.Mul, acc, x)), f64 b c))) (f64 b (List.hd coefficients)) (List.tl coefficients)
    in
    let central =
      poly (emit b (P.Op2 (P.Sub, w, f64 b 2.5)))
        [ 2.81022636e-08; 3.43273939e-07; -3.5233877e-06; -4.39150654e-06; 0.00021858087; -0.00125372503;
          -0.00417768164; 0.246640727; 1.50140941 ]
    in
    let tail =
      poly (emit b (P.Op2 (P.Sub, emit b (P.Op1 (P.Unary P.Sqrt, w)), f64 b 3.)))
        [ -0.000200214257; 0.000100950558; 0.00134934322; -0.00367342844; 0.00573950773; -0.0076224613;
          0.00943887047; 1.00167406; 2.83297682 ]
    in
    let p = emit b (P.Where (emit b (P.Op2 (P.Lt, w, f64 b 5.)), central, tail)) in
    let newton x =
      let e = emit b (P.Op2 (P.Sub, emit b (P.Op1 (P.Unary P.Erf, x)), y)) in
      let slope = emit b (P.Op2 (P.Mul, f64 b (2. /. Float.sqrt Float.pi), emit b (P.Op1 (P.Unary P.Exp, emit b (P.Op1 (P.Unary P.Neg, emit b (P.Op1 (P.Unary P.Square, x)))))))) in
      emit b (P.Op2 (P.Sub, x, emit b (P.Op2 (P.Div, e, slope))))
    in
    newton (newton (emit b (P.Op2 (P.Mul, p, y))))

  let truncated_normal d ~lower ~upper shape =
    float_dtype "truncated_normal" d;
    if not (lower < upper) then fail "truncated_normal" "lower %g is not below upper %g" lower upper;
    check_shape "truncated_normal" shape;
    (* above zero, sample [-upper, -lower] and negate, where the normal's
       distribution function keeps its precision *)
    let flip = lower > 0. in
    let lo, hi = if flip then (-.upper, -.lower) else (lower, upper) in
    let cdf x = 0.5 *. (1. +. Float.erf (x /. Float.sqrt 2.)) in
    let pa = cdf lo and pb = cdf hi in
    let b = { rev = []; count = 0 } in
    let s, _ = seeds () in
    let u = unit_float b (random_bits b shape s) 53 in
    (* p = pa + u (pb - pa); y = 2p - 1; w = -log (4 p (1 - p)) = -log (1 - y²) *)
    let p = emit b (P.Op2 (P.Add, f64 b pa, emit b (P.Op2 (P.Mul, u, f64 b (pb -. pa))))) in
    let y = emit b (P.Op2 (P.Sub, emit b (P.Op2 (P.Mul, p, f64 b 2.)), f64 b 1.)) in
    let q = emit b (P.Op2 (P.Sub, f64 b 1., p)) in
    let w = emit b (P.Op1 (P.Unary P.Neg, emit b (P.Op1 (P.Unary P.Log, emit b (P.Op2 (P.Mul, f64 b 4., emit b (P.Op2 (P.Mul, p, q)))))))) in
    let x = emit b (P.Op2 (P.Mul, f64 b (Float.sqrt 2.), erfinv_nodes b y w)) in
    let x = emit b (P.Op2 (P.Minimum, emit b (P.Op2 (P.Maximum, x, f64 b lo)), f64 b hi)) in
    if flip then ignore (emit b (P.Op1 (P.Unary P.Neg, x)));
    generate "truncated_normal" d shape (nodes_of b)

  let categorical ?axis:(ax = -1) ?shape:(batch = [||]) logits =
    float_dtype "categorical" (dtype logits);
    check_shape "categorical" batch;
    let a = axis "categorical" (ndim logits) ax in
    let full_shape = Array.append batch (shape logits) in
    let b = { rev = []; count = 0 } in
    let l = emit b (P.Load 0) in
    let l = emit b (P.Op1 (P.Cast (D.Any D.Float64), l)) in
    (* Gumbel noise -log (-log u), u in (0, 1) *)
    let s, _ = seeds () in
    let u = unit_float b (random_bits b full_shape s) 53 in
    let u = emit b (P.Op2 (P.Add, u, f64 b (Float.ldexp 1. (-54)))) in
    let g = emit b (P.Op1 (P.Unary P.Neg, emit b (P.Op1 (P.Unary P.Log, emit b (P.Op1 (P.Unary P.Neg, emit b (P.Op1 (P.Unary P.Log, u)))))))) in
    ignore (emit b (P.Op2 (P.Add, l, g)));
    let scores = elementwise "categorical" D.Float64 [ Arr.Any (broadcast_view "categorical" full_shape logits) ] (nodes_of b) in
    argmax ~axis:(a + Array.length batch) scores

  (* {1 Printing} *)

  let float_text x =
    if Float.is_nan x then "nan"
    else if x = Float.infinity then "inf"
    else if x = Float.neg_infinity then "-inf"
    else Printf.sprintf "%g" x

  let complex_text (v : Complex.t) =
    let im = v.im in
    let sign = if im < 0. || (im = 0. && 1. /. im < 0.) then "-" else "+" in
    float_text v.re ^ sign ^ float_text (Float.abs im) ^ "i"

  let element_text : type a b. (a, b) dtype -> a -> string =
   fun d v ->
    match d with
    | D.Bool -> string_of_bool v
    | D.Bit -> string_of_bool v
    | D.Int4 -> string_of_int v | D.Uint4 -> string_of_int v | D.Int8 -> string_of_int v
    | D.Int16 -> string_of_int v | D.Uint8 -> string_of_int v | D.Uint16 -> string_of_int v
    | D.Uint32 -> string_of_int v
    | D.Int32 -> Int32.to_string v
    | D.Int64 -> Int64.to_string v
    | D.Uint64 -> Printf.sprintf "%Lu" v
    | D.Float4_e2m1fn -> float_text v | D.Float8_e4m3fn -> float_text v
    | D.Float8_e5m2 -> float_text v | D.Float16 -> float_text v | D.Bfloat16 -> float_text v
    | D.Float32 -> float_text v | D.Float64 -> float_text v
    | D.Complex64 -> complex_text v
    | D.Complex128 -> complex_text v

  (* Axes longer than this show their first and last [edge] entries. *)
  let threshold = 4
  let edge = 2

  let positions n = if n > threshold then List.init edge Fun.id @ [ -1 ] @ List.init edge (fun i -> n - edge + i) else List.init n Fun.id

  let pp fmt t =
    let sh = shape t in
    let nd = Array.length sh in
    let d = dtype t in
    if nd > 1 || Array.exists (fun n -> n > threshold) sh then
      Format.fprintf fmt "%s %s@ " (D.name d) (show_shape sh);
    let idx = Array.make nd 0 in
    let rec go a =
      if a = nd then Format.pp_print_string fmt (element_text d (Arr.get t idx))
      else begin
        (* The last axis on one line; the others a vertical box, a row a line. *)
        let last = a = nd - 1 in
        if last then Format.pp_print_string fmt "[" else Format.fprintf fmt "@[<v 1>[";
        List.iteri
          (fun k i ->
            if k > 0 then (if last then Format.pp_print_string fmt ", " else Format.fprintf fmt ",@,");
            if i < 0 then Format.pp_print_string fmt "..."
            else begin
              idx.(a) <- i;
              go (a + 1)
            end)
          (positions sh.(a));
        if last then Format.pp_print_string fmt "]" else Format.fprintf fmt "]@]"
      end
    in
    go 0

  let to_string t = Format.asprintf "@[%a@]" pp t
  let print t = Format.printf "@[%a@]@." pp t

  module Infix = struct
    let ( + ) = add
    let ( - ) = sub
    let ( * ) = mul
    let ( / ) = div
    let ( ** ) = pow
    let ( +$ ) = add_s
    let ( -$ ) = sub_s
    let ( *$ ) = mul_s
    let ( /$ ) = div_s
    let ( **$ ) = pow_s
    let ( < ) = less
    let ( <> ) = not_equal
    let ( = ) = equal
    let ( > ) = greater
    let ( <= ) = less_equal
    let ( >= ) = greater_equal
    let ( =$ ) = equal_s
    let ( <>$ ) = not_equal_s
    let ( <$ ) = less_s
    let ( >$ ) = greater_s
    let ( <=$ ) = less_equal_s
    let ( >=$ ) = greater_equal_s
    let ( lxor ) = bitwise_xor
    let ( lor ) = bitwise_or
    let ( land ) = bitwise_and
    let ( % ) = mod_
    let ( mod ) = mod_
    let ( %$ ) = mod_s
    let ( ^ ) = logical_xor
    let ( && ) = logical_and
    let ( || ) = logical_or
    let ( ~- ) = neg
    let ( .%{} ) t i = get i t
    let ( .%{}<- ) t i v = set i t v
    let ( .${} ) t s = slice s t
    let ( .${}<- ) t s v = set_slice s t v
  end
end
