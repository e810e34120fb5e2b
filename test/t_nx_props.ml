(* Properties of Nx's broadcasting, slicing, reshaping, products, gathers,
   scatters and sorts against plain references, over random shapes and
   layouts: every operand is a view of a larger buffer, its axes stepped,
   flipped, permuted, offset or broadcast (stride 0). The references read
   elements one by one with Nx_array.get. *)

open Nx

(* A random layout of [shape]: a view of a larger random int32 tensor, each
   axis stepped by 1 to 3 from a random start and maybe reversed, the axes
   stored in a random order; or a stride-0 broadcast of a smaller tensor. *)
let layout st shape =
  let r = Array.length shape in
  let values dims = init int32 dims (fun _ -> Int32.of_int (Random.State.int st 1000)) in
  if r > 0 && Random.State.int st 5 = 0 then begin
    let small = Array.map (fun n -> if Random.State.bool st then 1 else n) shape in
    broadcast_to shape (values small)
  end
  else begin
    let perm = Array.init r Fun.id in
    for i = r - 1 downto 1 do
      let j = Random.State.int st (i + 1) in
      let x = perm.(i) in
      perm.(i) <- perm.(j);
      perm.(j) <- x
    done;
    let steps = Array.init r (fun _ -> 1 + Random.State.int st 3) in
    let starts = Array.init r (fun _ -> Random.State.int st 2) in
    (* base axis i holds the result's axis perm.(i) *)
    let base = values (Array.init r (fun i -> let a = perm.(i) in starts.(a) + (shape.(a) * steps.(a)) + 1)) in
    let picked =
      slice (List.init r (fun i -> let a = perm.(i) in Rs (starts.(a), starts.(a) + (shape.(a) * steps.(a)), steps.(a)))) base
    in
    let flipped = flip ~axes:(List.filter (fun _ -> Random.State.bool st) (List.init r Fun.id)) picked in
    let inverse = Array.make r 0 in
    Array.iteri (fun i a -> inverse.(a) <- i) perm;
    transpose ~axes:(Array.to_list inverse) flipped
  end

let random_shape st ~max_rank ~max_extent =
  Array.init (Random.State.int st (max_rank + 1)) (fun _ -> Random.State.int st (max_extent + 1))

(* Every index of [shape] in C order. *)
let indices shape =
  let r = Array.length shape in
  let acc = ref [] in
  let idx = Array.make r 0 in
  let rec go a = if a = r then acc := Array.copy idx :: !acc else for i = 0 to shape.(a) - 1 do idx.(a) <- i; go (a + 1) done in
  go 0;
  List.rev !acc

let show t = Printf.sprintf "shape %s strides %s offset %d" (String.concat ";" (Array.to_list (Array.map string_of_int (shape t))))
    (String.concat ";" (Array.to_list (Array.map string_of_int (Nx_array.strides t)))) (offset t)

(* Runs [n] cases of [prop], each from its own seed, so a failure names a
   seed that reproduces it. *)
let cases name n prop =
  QCheck.Test.make ~count:n ~name QCheck.(make ~print:string_of_int Gen.(int_bound 1_000_000))
    (fun seed -> prop (Random.State.make [| seed |]))

let broadcasting =
  cases "add broadcasts as numpy, operands read through stride-0 views" 300 (fun st ->
      let out = random_shape st ~max_rank:4 ~max_extent:4 in
      (* each operand: a suffix of [out] with some extents set to 1 *)
      let operand () =
        let r = Random.State.int st (Array.length out + 1) in
        Array.map (fun n -> if Random.State.int st 3 = 0 then 1 else n) (Array.sub out (Array.length out - r) r)
      in
      let sa = operand () and sb = operand () in
      let a = layout st sa and b = layout st sb in
      let c = add a b in
      let rank = Stdlib.max (Array.length sa) (Array.length sb) in
      let extent s i = let k = i - (rank - Array.length s) in if k < 0 then 1 else s.(k) in
      let want_shape = Array.init rank (fun i -> if extent sa i = 1 then extent sb i else extent sa i) in
      if shape c <> want_shape then QCheck.Test.fail_reportf "shape of %s + %s" (show a) (show b);
      let at t idx =
        let s = shape t in
        let k = Array.length idx - Array.length s in
        Nx_array.get t (Array.mapi (fun j n -> if n = 1 then 0 else idx.(j + k)) s)
      in
      List.for_all (fun idx -> Nx_array.get c idx = Int32.add (at a idx) (at b idx)) (indices (shape c))
      || QCheck.Test.fail_reportf "%s + %s" (show a) (show b))

(* One random spec of an axis of extent [n], and the indices it selects. *)
let spec st n =
  match Random.State.int st 6 with
  | 0 when n > 0 -> let i = Random.State.int st n in (I (if Random.State.bool st then i - n else i), Some [ i ])
  | 1 ->
      let s = Random.State.int st (n + 1) and e = Random.State.int st (n + 1) in
      (R (s, e), Some (List.init (Stdlib.max 0 (e - s)) (fun k -> s + k)))
  | 2 when n > 0 ->
      let step = (1 + Random.State.int st 3) * if Random.State.bool st then 1 else -1 in
      let s = Random.State.int st n and e = Random.State.int st (n + 1) in
      let sel = if step > 0 then List.filter (fun i -> i >= s && i < e && (i - s) mod step = 0) (List.init n Fun.id)
        else List.rev (List.filter (fun i -> i <= s && i > e && (s - i) mod -step = 0) (List.init n Fun.id)) in
      (Rs (s, e, step), Some sel)
  | 3 when n > 0 ->
      let l = List.init (Random.State.int st 4) (fun _ -> Random.State.int st n) in
      (L l, Some l)
  | _ -> (A, Some (List.init n Fun.id))

let slicing =
  cases "slice selects as its specs say, over any layout" 300 (fun st ->
      let sh = random_shape st ~max_rank:4 ~max_extent:5 in
      let t = layout st sh in
      let r = Array.length sh in
      let k = Random.State.int st (r + 1) in
      let specs = List.init k (fun a -> spec st sh.(a)) in
      (* N axes inserted at random places *)
      let specs = List.concat_map (fun s -> if Random.State.int st 6 = 0 then [ (N, None); s ] else [ s ]) specs in
      let got = slice (List.map fst specs) t in
      (* the reference: per output axis, the input axis and its indices *)
      let sels = List.map snd specs @ List.init (r - k) (fun a -> Some (List.init sh.(k + a) Fun.id)) in
      let kinds = List.map fst specs @ List.init (r - k) (fun _ -> A) in
      let want_shape =
        List.concat (List.map2 (fun kind sel -> match (kind, sel) with
          | I _, _ -> [] | N, _ -> [ 1 ] | _, Some l -> [ List.length l ] | _, None -> []) kinds sels)
      in
      if Array.to_list (shape got) <> want_shape then QCheck.Test.fail_reportf "shape of a slice of %s" (show t);
      List.for_all
        (fun out ->
          let pos = ref 0 in
          let src =
            List.concat (List.map2 (fun kind sel ->
                match (kind, sel) with
                | N, _ -> incr pos; []
                | I _, Some [ i ] -> [ i ]
                | _, Some l -> let i = List.nth l out.(!pos) in incr pos; [ i ]
                | _ -> [])
              kinds sels)
          in
          Nx_array.get got out = Nx_array.get t (Array.of_list src))
        (indices (shape got))
      || QCheck.Test.fail_reportf "slice of %s" (show t))

(* The factorisations of [n] into [r] extents, one at random. *)
let rec factors st n r =
  if r = 1 then [ n ]
  else if n = 0 then (if Random.State.bool st then 0 else Random.State.int st 3) :: factors st 0 (r - 1)
  else
    let ds = List.filter (fun d -> n mod d = 0) (List.init n (fun i -> i + 1)) in
    let d = List.nth ds (Random.State.int st (List.length ds)) in
    d :: factors st (n / d) (r - 1)

let reshaping =
  cases "reshape keeps C order, is a view, and refuses only where a copy is needed" 300 (fun st ->
      let sh = random_shape st ~max_rank:4 ~max_extent:4 in
      let t = layout st sh in
      let n = size t in
      let target = Array.of_list (factors st n (1 + Random.State.int st 4)) in
      let target = if Array.fold_left ( * ) 1 target <> n then [| n |] else target in
      let elements x = Nx_array.to_list x in
      (match reshape target t with
       | v ->
           (Nx_array.buffer v == Nx_array.buffer t || QCheck.Test.fail_reportf "copied %s" (show t))
           && (elements v = elements t || QCheck.Test.fail_reportf "order of %s" (show t))
       | exception Invalid_argument _ ->
           (* a copy is needed: the contiguous copy reshapes, and the view is not contiguous *)
           (not (is_c_contiguous t) || QCheck.Test.fail_reportf "refused a contiguous %s" (show t))
           && (elements (reshape target (contiguous t)) = elements t || QCheck.Test.fail_reportf "copy of %s" (show t)))
      && (* flatten then unflatten round-trips when it is a view *)
      match ravel t with
      | f -> elements (reshape sh f) = elements t
      | exception Invalid_argument _ -> not (is_c_contiguous t))

(* A contiguous tensor always reshapes; a transposed one to its own
   transposed shape too, axis by axis. *)
let reshape_contiguous =
  cases "a C-contiguous tensor reshapes to every shape of its size" 200 (fun st ->
      let sh = random_shape st ~max_rank:4 ~max_extent:5 in
      let t = contiguous (layout st sh) in
      let target = Array.of_list (factors st (size t) (1 + Random.State.int st 4)) in
      Array.fold_left ( * ) 1 target <> size t
      || Nx_array.to_list (reshape target t) = Nx_array.to_list t)

(* A layout without broadcast axes, whose elements can be written. *)
let rec writable st shape =
  let t = layout st shape in
  if Array.exists (fun s -> s = 0) (Nx_array.strides t) && size t > 1 then writable st shape else t

let setting_slices =
  cases "set_slice writes where slice reads, last write winning" 300 (fun st ->
      let sh = random_shape st ~max_rank:3 ~max_extent:4 in
      let t = writable st sh in
      let r = Array.length sh in
      let k = Random.State.int st (r + 1) in
      let specs = List.map fst (List.init k (fun a -> spec st sh.(a))) in
      let target = slice specs t in
      (* values of the selection's shape, or of a broadcastable suffix *)
      let vs = shape target in
      let vs = if Random.State.bool st && Array.length vs > 0 then Array.sub vs 1 (Array.length vs - 1) else vs in
      let v = init int32 vs (fun _ -> Int32.of_int (1000 + Random.State.int st 1000)) in
      (* the reference: t's elements by index, then each selected index set *)
      let want = Hashtbl.create 64 in
      List.iter (fun idx -> Hashtbl.replace want idx (Nx_array.get t idx)) (indices sh);
      (* read the source index of each selected element through a slice of
         an index tensor: the same specs over the tensor of flat numbers *)
      let numbers = reshape sh (arange int64 0 (Array.fold_left ( * ) 1 sh) 1) in
      let picked = slice specs numbers in
      let vb = broadcast_to (shape picked) v in
      let strides = Nx_array.contiguous_strides sh in
      let unflat f = Array.mapi (fun a s -> f / s mod sh.(a)) strides in
      List.iter
        (fun out -> Hashtbl.replace want (unflat (Int64.to_int (Nx_array.get picked out))) (Nx_array.get vb out))
        (indices (shape picked));
      set_slice specs t v;
      List.for_all (fun idx -> Nx_array.get t idx = Hashtbl.find want idx) (indices sh)
      || QCheck.Test.fail_reportf "set_slice into %s" (show t))

let movements =
  cases "transpose, flip, roll, tile, repeat, pad, split and concatenate move elements as their index maps say" 200 (fun st ->
      let sh = random_shape st ~max_rank:3 ~max_extent:4 in
      let r = Array.length sh in
      let t = layout st sh in
      let get = Nx_array.get in
      let agrees name out f =
        List.for_all (fun idx -> get out idx = f idx) (indices (shape out))
        || QCheck.Test.fail_reportf "%s of %s" name (show t)
      in
      let perm = Array.of_list (List.map snd (List.sort compare (List.init r (fun a -> (Random.State.bits st, a))))) in
      let flips = List.filter (fun _ -> Random.State.bool st) (List.init r Fun.id) in
      let reps = Array.init r (fun _ -> Random.State.int st 3) in
      let widths = Array.init r (fun _ -> (Random.State.int st 2, Random.State.int st 2)) in
      agrees "transpose" (transpose ~axes:(Array.to_list perm) t) (fun idx ->
          let src = Array.make r 0 in
          Array.iteri (fun i a -> src.(a) <- idx.(i)) perm;
          get t src)
      && agrees "flip" (flip ~axes:flips t) (fun idx -> get t (Array.mapi (fun a i -> if List.mem a flips then sh.(a) - 1 - i else i) idx))
      && agrees "tile" (tile reps t) (fun idx -> get t (Array.mapi (fun a i -> i mod sh.(a)) idx))
      && agrees "pad" (pad widths 7l t) (fun idx ->
             let src = Array.mapi (fun a i -> i - fst widths.(a)) idx in
             if Array.for_all2 (fun i n -> i >= 0 && i < n) src sh then get t src else 7l)
      && (r = 0
         ||
         let a = Random.State.int st r in
         let n = sh.(a) and shift = Random.State.int st 9 - 4 and k = Random.State.int st 3 in
         agrees "roll" (roll ~axis:a shift t) (fun idx ->
             get t (Array.mapi (fun b i -> if b = a then (((i - shift) mod n) + n) mod n else i) idx))
         && agrees "repeat" (repeat ~axis:a k t) (fun idx -> get t (Array.mapi (fun b i -> if b = a then i / k else i) idx))
         && agrees "concatenate of array_split" (concatenate ~axis:a (array_split ~axis:a (`Count (1 + Random.State.int st 3)) t)) (get t)))

let get = Nx_array.get
let i32s l = create int32 [| List.length l |] (Array.of_list (List.map Int32.of_int l))

let matmuls =
  cases "matmul agrees with loops, batch axes broadcast, over any layouts and empty extents" 300 (fun st ->
      let m = Random.State.int st 4 and k = Random.State.int st 4 and n = Random.State.int st 4 in
      let batch = random_shape st ~max_rank:2 ~max_extent:3 in
      let ones () = Array.map (fun e -> if Random.State.int st 3 = 0 then 1 else e) batch in
      let a = layout st (Array.append (ones ()) [| m; k |]) and b = layout st (Array.append (ones ()) [| k; n |]) in
      let c = matmul a b in
      let r = Array.length batch in
      let pick t o = Array.mapi (fun i e -> if e = 1 then 0 else o.(i)) (Array.sub (shape t) 0 r) in
      List.for_all
        (fun o ->
          let bi = Array.sub o 0 r in
          let s = ref 0l in
          for l = 0 to k - 1 do
            s := Int32.add !s (Int32.mul (get a (Array.append (pick a bi) [| o.(r); l |])) (get b (Array.append (pick b bi) [| l; o.(r + 1) |])))
          done;
          get c o = !s || QCheck.Test.fail_reportf "matmul of %s and %s" (show a) (show b))
        (indices (shape c))
      && (shape c = Array.concat [ Array.map2 (fun x y -> if x = 1 then y else x) (Array.sub (shape a) 0 r) (Array.sub (shape b) 0 r); [| m; n |] ]
         || QCheck.Test.fail_reportf "the shape of matmul of %s and %s" (show a) (show b)))

let gathers =
  cases "take and take_along_axis agree with loops over any layouts" 300 (fun st ->
      let sh = random_shape st ~max_rank:3 ~max_extent:4 in
      let sh = if Array.length sh = 0 then [| 1 + Random.State.int st 3 |] else sh in
      let t = layout st sh in
      let a = Random.State.int st (Array.length sh) in
      let n = sh.(a) in
      let k = Random.State.int st 4 in
      let idx = List.init (if n = 0 then 0 else k) (fun _ -> Random.State.int st (2 * n) - n) in
      let norm i = if i < 0 then i + n else i in
      let got = take ~axis:a (i32s idx) t in
      let idxa = Array.of_list idx in
      List.for_all (fun o ->
          get got o = get t (Array.mapi (fun b i -> if b = a then norm idxa.(i) else i) o)
          || QCheck.Test.fail_reportf "take along %d of %s" a (show t))
        (indices (shape got))
      &&
      let ish = Array.mapi (fun b e -> if b = a then (if n = 0 then 0 else k) else e) sh in
      (* positions in [-n, n) *)
      let pos = if n = 0 then zeros int32 ish else sub_s (mod_s (layout st ish) (Int32.of_int (2 * n))) (Int32.of_int n) in
      let got = take_along_axis ~axis:a pos t in
      List.for_all (fun o ->
          get got o = get t (Array.mapi (fun b i -> if b = a then norm (Int32.to_int (get pos o)) else i) o)
          || QCheck.Test.fail_reportf "take_along_axis along %d of %s" a (show t))
        (indices (shape got)))

let sorts =
  cases "sort is a stable sort along its axis over any layouts" 300 (fun st ->
      let sh = random_shape st ~max_rank:3 ~max_extent:5 in
      let sh = if Array.length sh = 0 then [| 3 |] else sh in
      let t = mod_s (layout st sh) 7l in
      let a = Random.State.int st (Array.length sh) in
      let descending = Random.State.bool st in
      let v, p = sort ~descending ~axis:a t in
      List.for_all (fun o ->
          o.(a) <> 0
          ||
          let line = List.init sh.(a) (fun i -> get t (Array.mapi (fun b x -> if b = a then i else x) o)) in
          let order = List.stable_sort (fun i j -> let c = compare (List.nth line i) (List.nth line j) in if descending then -c else c) (List.init sh.(a) Fun.id) in
          List.for_all (fun (r, i) ->
              let at = Array.mapi (fun b x -> if b = a then r else x) o in
              (Int32.to_int (get p at) = i && get v at = List.nth line i)
              || QCheck.Test.fail_reportf "sort along %d of %s" a (show t))
            (List.mapi (fun r i -> (r, i)) order))
        (indices sh))

let scatters =
  cases "scatter `Add agrees with loops over any layouts" 300 (fun st ->
      let sh = random_shape st ~max_rank:3 ~max_extent:4 in
      let sh = if Array.length sh = 0 || Array.exists (( = ) 0) sh then [| 2; 3 |] else sh in
      let t = layout st sh in
      let a = Random.State.int st (Array.length sh) in
      let k = Random.State.int st 4 in
      let ish = Array.mapi (fun b e -> if b = a then k else e) sh in
      let pos = init int32 ish (fun _ -> Int32.of_int (Random.State.int st sh.(a))) in
      let values = layout st ish in
      let got = scatter ~mode:`Add ~axis:a ~indices:pos ~values t in
      let want = Hashtbl.create 16 in
      List.iter (fun o ->
          let at = Array.mapi (fun b x -> if b = a then Int32.to_int (get pos o) else x) o in
          let cur = Option.value (Hashtbl.find_opt want at) ~default:(get t at) in
          Hashtbl.replace want at (Int32.add cur (get values o)))
        (indices ish);
      List.for_all (fun o ->
          get got o = Option.value (Hashtbl.find_opt want o) ~default:(get t o)
          || QCheck.Test.fail_reportf "scatter along %d into %s" a (show t))
        (indices sh))

(* A fixed seed, so a failure reproduces; each case prints its own seed. *)
let tests =
  List.map (QCheck_alcotest.to_alcotest ~rand:(Random.State.make [| 2026 |])) [ broadcasting; slicing; setting_slices; reshaping; reshape_contiguous; movements; matmuls; gathers; sorts; scatters ]
