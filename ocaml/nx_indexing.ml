(** Nx's indexing by integers and ranges: [get], [set], [item], [slice],
   [set_slice]. Built on Nx_shapes. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_shapes.Make (K)

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
end
