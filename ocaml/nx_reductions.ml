(** Nx's reductions and scans through the reduce and scan kernels: [sum],
   [max], [mean], [var], [argmax], [cumsum], ... Built on Nx_elementwise. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_elementwise.Make (K)

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
      (K.reduce p ~shape:(freeze (shape t)) ~axes:(iarray_of_list axes) (freeze [| (r, 0) |])
         ~dsts:(iarray_of_list dsts) (loads [ Arr.Any t ]))

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
end
