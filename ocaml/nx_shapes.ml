(** Nx's shapes and views: [reshape], broadcasting, [transpose], [flip],
   joins and splits, [pad], [tile], [repeat], triangles, diagonals,
   [meshgrid], [one_hot]. Views are O(1); the rest copy through the map
   kernel. Built on Nx_creation. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_creation.Make (K)

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
    if Array.exists (fun n -> n = 0) sh then Some (Arr.contiguous_strides target)
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

  (* [t] reshaped to [target], through a copy where no view has that shape. *)
  let reshaped name target t =
    match reshape_strides (shape t) (Arr.strides t) target with
    | Some _ -> reshape_named name target t
    | None -> reshape_named name target (copy t)

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
      reshaped "flatten" target t
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
end
