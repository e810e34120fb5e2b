(** Nx's gathers and scatters, through the gather and scatter kernels:
   [take], [take_along_axis], [put], [index_put], [put_along_axis],
   [scatter], [compress], [extract], [nonzero], [argwhere]. Positions are
   int64 tensors that one map computes from the caller's indices (wrapped,
   clipped, or checked by one reduce of Min and Max, then counted from the end where
   negative); the positions of true elements come from a scan and a
   scatter. Built on Nx_reductions. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_reductions.Make (K)

  (* The positions of [idx] along an axis of extent [n], as int64: under
     `raise checked to lie in [-n, n) and counted from the end where
     negative; under `wrap taken modulo [n]; under `clip clamped to
     [0, n - 1]. *)
  let positions name ?(mode = `raise) n (idx : ('a, 'b) t) : (int64, int64_elt) t =
    let d = dtype idx in
    if not (D.is_integer d) then fail name "%s indices are not integers" (D.name d);
    if size idx > 0 && n = 0 then fail name "an index into an axis of extent 0";
    if mode = `raise && size idx > 0 then begin
      (* the least and the greatest index, in one pass *)
      let lo = Arr.create D.Int64 [||] and hi = Arr.create D.Int64 [||] in
      let p = program name ~operands:[| D.Any d |] (identity_nodes D.Int64) D.Int64 in
      answer name
        (K.reduce p ~shape:(Iarray.of_array (shape idx)) ~axes:(Iarray.init (ndim idx) Fun.id)
           (Iarray.of_list [ (Nx_kernel.Monoid Nx_kernel.Min, 0); (Nx_kernel.Monoid Nx_kernel.Max, 0) ])
           ~dsts:(Iarray.of_list [ Arr.Any lo; Arr.Any hi ]) (loads [ Arr.Any idx ]));
      let lo = Arr.get lo [||] and hi = Arr.get hi [||] in
      let bad = if Int64.compare lo (Int64.of_int (-n)) < 0 then Some lo
        else if Int64.compare hi (Int64.of_int n) >= 0 then Some hi else None in
      Option.iter (fun i -> fail name "index %Ld is out of bounds for an axis of extent %d" i n) bad
    end;
    let i64 v = constant D.Int64 (Int64.of_int v) in
    let cast = P.Op1 (P.Cast (D.Any D.Int64), 0) in
    let nodes =
      match mode with
      | `raise -> [| P.Load 0; cast; i64 0; P.Op2 (P.Lt, 1, 2); i64 n; P.Op2 (P.Add, 1, 4); P.Where (3, 5, 1) |]
      | `wrap -> [| P.Load 0; cast; i64 n; P.Op2 (P.Mod, 1, 2) |]
      | `clip -> [| P.Load 0; cast; i64 0; P.Op2 (P.Maximum, 1, 2); i64 (n - 1); P.Op2 (P.Minimum, 3, 4) |]
    in
    elementwise name D.Int64 [ Arr.Any idx ] nodes

  (* [sh] with its axis [a] replaced by the axes [mid]. *)
  let around sh a mid = Array.concat [ Array.sub sh 0 a; mid; Array.sub sh (a + 1) (Array.length sh - a - 1) ]

  (* The 1-D positions [pos] as an index of [target], varying along axis [a]
     alone (stride 0 elsewhere). *)
  let along_axis pos target a =
    let flat = reshaped "positions" [| size pos |] pos in
    view flat ~shape:target ~strides:(Array.mapi (fun i _ -> if i = a then (Arr.strides flat).(0) else 0) target)
      ~offset:(offset flat)

  (* [t]'s slices at the 1-D positions [pos] along axis [a]. *)
  let gather_along name a pos t =
    let target = around (shape t) a [| size pos |] in
    let dst = Arr.create (dtype t) target in
    answer name (K.gather ~axis:a ~dst (along_axis pos target a) t);
    dst

  let take ?axis:ax ?mode indices t =
    let t, a = match ax with None -> (flat_copy t, 0) | Some ax -> (t, axis "take" (ndim t) ax) in
    let pos = positions "take" ?mode (shape t).(a) indices in
    reshape_named "take" (around (shape t) a (shape indices)) (gather_along "take" a pos t)

  (* The shape both operands of a gather or scatter along [a] take: [idx]'s
     extent along [a], elsewhere [sh] and [idx]'s extents broadcast, or
     [sh]'s alone where [fixed]. *)
  let along_shape name ~fixed a sh idx =
    let nd = Array.length sh in
    if Array.length idx <> nd then fail name "indices of %d dimensions for a tensor of %d" (Array.length idx) nd;
    let off s = Array.mapi (fun i n -> if i = a then 1 else n) s in
    let s = broadcast_pair name (off sh) (off idx) in
    if fixed && s <> off sh then
      fail name "indices of shape %s do not fit a tensor of shape %s off axis %d" (show_shape idx) (show_shape sh) a;
    s.(a) <- idx.(a);
    s

  let take_along_axis ~axis:ax indices t =
    let a = axis "take_along_axis" (ndim t) ax in
    let target = along_shape "take_along_axis" ~fixed:false a (shape t) (shape indices) in
    let pos = broadcast_view "take_along_axis" target (positions "take_along_axis" (shape t).(a) indices) in
    let src = broadcast_view "take_along_axis" (around target a [| (shape t).(a) |]) t in
    let dst = Arr.create (dtype t) target in
    answer "take_along_axis" (K.gather ~axis:a ~dst pos src);
    dst

  (* Runs [f] on a 1-D view of [t]'s elements in C order: [t] itself where
     it is C-contiguous, else a copy of it, copied back into [t] after. *)
  let through_flat name t f =
    if is_c_contiguous t then f (reshape_named name [| size t |] t)
    else begin
      let c = copy t in
      f (reshape_named name [| size c |] c);
      copy_into name c t
    end

  (* Scatters [values], of the shape [target] (the extent of [pos] at axis
     [a]), into [into] at [pos] along [a], by [combine], into [dst]. *)
  let scatter_along name ?(combine = Nx_kernel.Set) ?(unique = false) ~dst ~into a pos values =
    answer name (K.scatter combine ~unique ~axis:a ~dst ~into pos values)

  let put ?axis:ax ~indices ~values ?mode t =
    let go target a =
      let pos = positions "put" ?mode (shape target).(a) indices in
      let ushape = around (shape target) a [| size pos |] in
      let vals = reshaped "put" ushape (broadcast_view "put" (around (shape target) a (shape indices)) values) in
      scatter_along "put" ~dst:target ~into:target a (along_axis pos ushape a) vals
    in
    match ax with
    | None -> through_flat "put" t (fun flat -> go flat 0)
    | Some ax -> go t (axis "put" (ndim t) ax)

  let index_put ~indices ~values ?mode t =
    let nd = ndim t in
    if Array.length indices <> nd then fail "index_put" "%d index tensors for %d dimensions" (Array.length indices) nd;
    let sh = shape t in
    let u = Array.fold_left (fun s i -> broadcast_pair "index_put" s (shape i)) [||] indices in
    let per_axis = Array.to_list (Array.mapi (fun a i -> positions "index_put" ?mode sh.(a) i) indices) in
    (* the position in C order: the sum of each axis's position times its stride *)
    let b = builder () in
    let strides = Arr.contiguous_strides sh in
    let terms = List.mapi (fun a _ ->
        emit b (P.Op2 (P.Mul, emit b (P.Load a), emit b (constant D.Int64 (Int64.of_int strides.(a)))))) per_axis in
    ignore (List.fold_left (fun acc x -> emit b (P.Op2 (P.Add, acc, x))) (emit b (constant D.Int64 0L)) terms);
    let flat = elementwise "index_put" D.Int64 (List.map (fun p -> Arr.Any (broadcast_view "index_put" u p)) per_axis) (nodes_of b) in
    let n = Array.fold_left ( * ) 1 u in
    let vals = reshaped "index_put" [| n |] (broadcast_view "index_put" u values) in
    through_flat "index_put" t (fun dst ->
        scatter_along "index_put" ~dst ~into:dst 0 (reshape_named "index_put" [| n |] flat) vals)

  let put_along_axis ~axis:ax ~indices ~values t =
    let a = axis "put_along_axis" (ndim t) ax in
    let target = along_shape "put_along_axis" ~fixed:true a (shape t) (shape indices) in
    let pos = broadcast_view "put_along_axis" target (positions "put_along_axis" (shape t).(a) indices) in
    scatter_along "put_along_axis" ~dst:t ~into:t a pos (broadcast_view "put_along_axis" target values)

  let scatter ?(mode = `Set) ?(unique_indices = false) ~axis:ax ~indices ~values t =
    let a = axis "scatter" (ndim t) ax in
    let target = along_shape "scatter" ~fixed:true a (shape t) (shape indices) in
    let pos = broadcast_view "scatter" target (positions "scatter" (shape t).(a) indices) in
    let dst = Arr.create (dtype t) (shape t) in
    let combine = match mode with `Set -> Nx_kernel.Set | `Add -> Nx_kernel.Add in
    scatter_along "scatter" ~combine ~unique:unique_indices ~dst ~into:t a pos (broadcast_view "scatter" target values);
    dst

  (* The int64 positions, increasing, of the true elements of the 1-D
     [cond]: a scan counts them, and each true element's count less one is
     where a scatter puts its position. *)
  let true_positions name (cond : (bool, bool_elt) t) =
    let c = size cond in
    let counts = Arr.create D.Int64 [| c |] in
    let p = program name ~operands:[| D.Any D.Bool |] (identity_nodes D.Int64) D.Int64 in
    answer name
      (K.scan p ~axis:0 (Nx_kernel.Monoid Nx_kernel.Sum, 0) ~dsts:(Iarray.of_list [ Arr.Any counts ]) (loads [ Arr.Any cond ]));
    let k = if c = 0 then 0 else Int64.to_int (Arr.get counts [| c - 1 |]) in
    let slot =
      elementwise name D.Int64 [ Arr.Any cond; Arr.Any counts ]
        [| P.Load 0; P.Load 1; constant D.Int64 1L; P.Op2 (P.Sub, 1, 2); constant D.Int64 (-1L); P.Where (0, 3, 4) |]
    in
    let pos = Arr.create D.Int64 [| k |] in
    scatter_along name ~unique:true ~dst:pos ~into:pos 0 slot (generate name D.Int64 [| c |] [| P.Coord 0 |]);
    pos

  let compress ?axis:ax ~condition t =
    if ndim condition <> 1 then fail "compress" "a condition of %d dimensions, not 1" (ndim condition);
    let t, a = match ax with None -> (flat_copy t, 0) | Some ax -> (t, axis "compress" (ndim t) ax) in
    let n = (shape t).(a) in
    if size condition > n then fail "compress" "a condition of %d elements for an axis of extent %d" (size condition) n;
    gather_along "compress" a (true_positions "compress" condition) t

  let extract ~condition t =
    if size condition <> size t then
      fail "extract" "a condition of %d elements for a tensor of %d" (size condition) (size t);
    gather_along "extract" 0 (true_positions "extract" (flat_copy condition)) (flat_copy t)

  (* The positions in C order of the elements of [t] that are not zero. *)
  let nonzero_positions name t =
    let cond = elementwise name D.Bool [ Arr.Any t ] [| P.Load 0; P.Op1 (P.Cast (D.Any D.Bool), 0) |] in
    true_positions name (reshape_named name [| size t |] cond)

  let coordinates name t =
    let nd = ndim t in
    let pos = nonzero_positions name t in
    let k = size pos in
    let row a = broadcast_view name [| k; nd |] (create D.Int64 [| nd |] (Array.map Int64.of_int a)) in
    (* coordinate a of position p: p / stride(a) mod extent(a) *)
    elementwise name D.Int32
      [ Arr.Any (broadcast_view name [| k; nd |] (reshape_named name [| k; 1 |] pos));
        Arr.Any (row (Arr.contiguous_strides (shape t))); Arr.Any (row (shape t)) ]
      [| P.Load 0; P.Load 1; P.Load 2; P.Op2 (P.Div, 0, 1); P.Op2 (P.Mod, 3, 2) |]

  let argwhere t = coordinates "argwhere" t

  let nonzero t =
    let c = coordinates "nonzero" t in
    Array.init (ndim t) (fun a -> copy (slice [ A; I a ] c))
end
