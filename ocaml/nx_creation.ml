(** Nx's creation and conversions: [full], [create], [arange], [linspace],
   [copy], [cast], bigarrays and buffers. Built on Nx_core. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_core.Make (K)

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
end
