(** Nx's products and matrices: [outer], [kron], [cross] by the map kernel;
   [dot], [matmul], [vdot], [vecdot], [inner], [tensordot], [einsum],
   [multi_dot], [matrix_power] by the contract kernel (matrix_power's
   inverse by lu and solve_triangular); [cholesky] and [qr] by theirs.
   Built on Nx_sorting. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_sorting.Make (K)

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

  (* {1 Contractions} *)

  (* The dtype a contraction of [d] accumulates in: [d] where the kernels
     accumulate in it, float32 for the narrow floats, int64 for bool and
     bit (so a product of bools is whether any term is true). *)
  let acc_of d =
    if Nx_kernel.accumulates (D.Any d) then D.Any d else if D.is_float d then D.Any D.Float32 else D.Any D.Int64

  (* The contraction of [a] with [b] by the pairs of axes [batch] (leading
     the result) and [contracting] (summed over), then a's free axes, then
     b's, of a's dtype. *)
  let contract name ~batch ~contracting a b =
    let batch = Iarray.of_list batch and contracting = Iarray.of_list contracting in
    let sh =
      try Nx_kernel.Shape.contract ~batch ~contracting ~segments:None (shape a) (shape b)
      with Invalid_argument m -> fail name "%s" (strip "Nx_kernel.Shape.contract: " m)
    in
    let dst = Arr.create (dtype a) sh in
    answer name
      (K.contract ~batch ~contracting ~segments:None ~acc:(acc_of (dtype a)) ~dst ~init:None (Nx_kernel.operand a)
         (Nx_kernel.operand b));
    dst

  let not_scalar name a b =
    if ndim a = 0 || ndim b = 0 then
      fail name "a 0-d operand (shapes %s and %s)" (show_shape (shape a)) (show_shape (shape b))

  (* Extents [n] and [m] that a contraction pairs. *)
  let same_extent name a b n m =
    if n <> m then
      fail name "the contracted extents %d and %d differ (shapes %s and %s)" n m (show_shape (shape a)) (show_shape (shape b))

  let dot a b =
    not_scalar "dot" a b;
    let na = ndim a and nb = ndim b in
    let kb = if nb = 1 then 0 else nb - 2 in
    same_extent "dot" a b (shape a).(na - 1) (shape b).(kb);
    contract "dot" ~batch:[] ~contracting:[ (na - 1, kb) ] a b

  let matmul a b =
    not_scalar "matmul" a b;
    let na = ndim a and nb = ndim b in
    (* a vector as a matrix of one row (a) or one column (b), dropped after *)
    let a2 = if na = 1 then reshape_named "matmul" [| 1; size a |] a else a in
    let b2 = if nb = 1 then reshape_named "matmul" [| size b; 1 |] b else b in
    let sa = shape a2 and sb = shape b2 in
    let ra = Array.length sa and rb = Array.length sb in
    same_extent "matmul" a b sa.(ra - 1) sb.(rb - 2);
    let batch = broadcast_pair "matmul" (Array.sub sa 0 (ra - 2)) (Array.sub sb 0 (rb - 2)) in
    let r = Array.length batch in
    let a3 = broadcast_view "matmul" (Array.append batch (Array.sub sa (ra - 2) 2)) a2 in
    let b3 = broadcast_view "matmul" (Array.append batch (Array.sub sb (rb - 2) 2)) b2 in
    let p = contract "matmul" ~batch:(List.init r (fun i -> (i, i))) ~contracting:[ (r + 1, r) ] a3 b3 in
    drop_axes p (fun i -> not ((na = 1 && i = r) || (nb = 1 && i = r + 1)))

  (* [t], conjugated where complex. *)
  let conj_if_complex t = if D.is_complex (dtype t) then conjugate t else t

  let vdot a b =
    if size a <> size b then fail "vdot" "%d and %d elements" (size a) (size b);
    contract "vdot" ~batch:[] ~contracting:[ (0, 0) ] (flat_copy (conj_if_complex a)) (flat_copy b)

  let vecdot ?axis:(ax = -1) a b =
    not_scalar "vecdot" a b;
    let s = broadcast_pair "vecdot" (shape a) (shape b) in
    let nd = Array.length s in
    let k = axis "vecdot" nd ax in
    (* the extents along the axis, counted from the end in each operand *)
    let along t = let j = k - (nd - ndim t) in if j < 0 then 1 else (shape t).(j) in
    same_extent "vecdot" a b (along a) (along b);
    let a' = broadcast_view "vecdot" s (conj_if_complex a) and b' = broadcast_view "vecdot" s b in
    let batch = List.filter (fun i -> i <> k) (List.init nd Fun.id) in
    contract "vecdot" ~batch:(List.map (fun i -> (i, i)) batch) ~contracting:[ (k, k) ] a' b'

  let inner a b =
    not_scalar "inner" a b;
    let na = ndim a and nb = ndim b in
    same_extent "inner" a b (shape a).(na - 1) (shape b).(nb - 1);
    contract "inner" ~batch:[] ~contracting:[ (na - 1, nb - 1) ] a b

  let tensordot ?axes a b =
    let la, lb = match axes with None -> ([ -1 ], [ 0 ]) | Some p -> p in
    if List.length la <> List.length lb then
      fail "tensordot" "%d axes of a paired with %d of b" (List.length la) (List.length lb);
    let la = List.map (axis "tensordot" (ndim a)) la and lb = List.map (axis "tensordot" (ndim b)) lb in
    List.iter2 (fun i j -> same_extent "tensordot" a b (shape a).(i) (shape b).(j)) la lb;
    contract "tensordot" ~batch:[] ~contracting:(List.combine la lb) a b

  (* {2 einsum} *)

  (* An operand with a letter per axis. *)
  type ('a, 'b) labelled = { lt : ('a, 'b) t; labels : char list }

  (* The position of letter [c] in [l]. *)
  let position c l =
    let rec go i = function [] -> invalid_arg "position" | x :: r -> if x = c then i else go (i + 1) r in
    go 0 l

  (* The view of [t] whose axes of one letter are one axis: its extent,
     the sum of their strides (a diagonal). *)
  let merge_repeated name t labels =
    let sh = shape t and st = Arr.strides t in
    let order = List.fold_left (fun acc c -> if List.mem c acc then acc else acc @ [ c ]) [] labels in
    let axes_of c = List.filter_map (fun (i, l) -> if l = c then Some i else None) (List.mapi (fun i l -> (i, l)) labels) in
    let dims =
      List.map
        (fun c ->
          let axes = axes_of c in
          let n = sh.(List.hd axes) in
          List.iter (fun a -> if sh.(a) <> n then fail name "the letter %c has the extents %d and %d" c n sh.(a)) axes;
          (n, List.fold_left (fun s a -> s + st.(a)) 0 axes))
        order
    in
    { lt = view t ~shape:(Array.of_list (List.map fst dims)) ~strides:(Array.of_list (List.map snd dims)) ~offset:(offset t);
      labels = order }

  (* [x] summed over its letters that [keep] does not hold. *)
  let sum_out x keep =
    let gone = List.filter (fun c -> not (List.mem c keep)) x.labels in
    if gone = [] then x
    else { lt = sum ~axes:(List.map (fun c -> position c x.labels) gone) x.lt; labels = List.filter (fun c -> List.mem c keep) x.labels }

  (* The contraction of two labelled operands: letters in both that [keep]
     holds run along as batch axes, the others are summed over. *)
  let pair name x y keep =
    let common = List.filter (fun c -> List.mem c y.labels) x.labels in
    let batch = List.filter (fun c -> List.mem c keep) common and summed = List.filter (fun c -> not (List.mem c keep)) common in
    List.iter
      (fun c ->
        let n = (shape x.lt).(position c x.labels) and m = (shape y.lt).(position c y.labels) in
        if n <> m then fail name "the letter %c has the extents %d and %d" c n m)
      common;
    let pairs l = List.map (fun c -> (position c x.labels, position c y.labels)) l in
    let t = contract name ~batch:(pairs batch) ~contracting:(pairs summed) x.lt y.lt in
    let free z = List.filter (fun c -> not (List.mem c common)) z.labels in
    { lt = t; labels = batch @ free x @ free y }

  let einsum subscripts operands =
    let name = "einsum" in
    let spec = String.concat "" (String.split_on_char ' ' subscripts) in
    let inputs, output =
      match String.index_opt spec '-' with
      | Some i when i + 1 < String.length spec && spec.[i + 1] = '>' ->
          (String.sub spec 0 i, Some (String.sub spec (i + 2) (String.length spec - i - 2)))
      | Some _ -> fail name "%S: a '-' without '>'" subscripts
      | None -> (spec, None)
    in
    let letters s =
      List.init (String.length s) (fun i ->
          let c = s.[i] in
          if not ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) then
            fail name "%S: %C is not a letter (ellipses are not supported)" subscripts c;
          c)
    in
    let ins = List.map letters (String.split_on_char ',' inputs) in
    if List.length ins <> Array.length operands then
      fail name "%S names %d operands, %d given" subscripts (List.length ins) (Array.length operands);
    let all = List.concat ins in
    let count c = List.length (List.filter (( = ) c) all) in
    let out =
      match output with
      | Some o ->
          let o = letters o in
          List.iter (fun c -> if not (List.mem c all) then fail name "%S: the output letter %c is in no input" subscripts c) o;
          if List.length (List.sort_uniq compare o) <> List.length o then fail name "%S: a repeated output letter" subscripts;
          o
      | None -> List.filter (fun c -> count c = 1) (List.sort_uniq compare all)
    in
    let xs =
      List.mapi
        (fun i l ->
          let t = operands.(i) in
          if List.length l <> ndim t then
            fail name "%S: operand %d has %d dimensions, its subscript %d letters" subscripts i (ndim t) (List.length l);
          merge_repeated name t l)
        ins
    in
    (* fold left to right, summing each letter once no later operand or the output needs it *)
    let needed rest = out @ List.concat_map (fun x -> x.labels) rest in
    let rec go acc = function
      | [] -> acc
      | y :: rest ->
          let keep = needed rest in
          let acc = sum_out acc (keep @ y.labels) and y = sum_out y (keep @ acc.labels) in
          go (pair name acc y keep) rest
    in
    let r =
      match xs with
      | [] -> fail name "no operands"
      | x :: rest -> sum_out (go (sum_out x (needed rest)) rest) out
    in
    let perm = List.map (fun c -> position c r.labels) out in
    let res = permute name (Array.of_list perm) r.lt in
    if Array.exists (fun t -> Arr.buffer t == Arr.buffer res) operands then copy res else res

  (* {2 Chains and powers} *)

  let float_or_complex name d =
    if not (D.is_float d || D.is_complex d) then fail name "%s is not a float or complex dtype" (D.name d)

  let multi_dot ts =
    let n = Array.length ts in
    if n = 0 then fail "multi_dot" "no tensors";
    float_or_complex "multi_dot" (dtype ts.(0));
    if n = 1 then copy ts.(0)
    else begin
      let first = ndim ts.(0) = 1 and last = ndim ts.(n - 1) = 1 in
      let ms =
        Array.mapi
          (fun i t ->
            if i = 0 && first then reshape_named "multi_dot" [| 1; size t |] t
            else if i = n - 1 && last then reshape_named "multi_dot" [| size t; 1 |] t
            else if ndim t <> 2 then fail "multi_dot" "tensor %d has %d dimensions, not 2" i (ndim t)
            else t)
          ts
      in
      let dims = Array.init (n + 1) (fun i -> if i < n then (shape ms.(i)).(0) else (shape ms.(n - 1)).(1)) in
      Array.iteri
        (fun i m -> if (shape m).(1) <> dims.(i + 1) then
            fail "multi_dot" "tensors %d and %d do not chain (shapes %s and %s)" i (i + 1)
              (show_shape (shape ts.(i))) (show_shape (shape ts.(i + 1))))
        (Array.sub ms 0 (n - 1));
      (* the cheapest order: cost.(i).(j) multiplications for ms i..j, split after best.(i).(j) *)
      let cost = Array.make_matrix n n 0 and best = Array.make_matrix n n 0 in
      for len = 1 to n - 1 do
        for i = 0 to n - 1 - len do
          let j = i + len in
          cost.(i).(j) <- Int.max_int;
          for s = i to j - 1 do
            let c = cost.(i).(s) + cost.(s + 1).(j) + (dims.(i) * dims.(s + 1) * dims.(j + 1)) in
            if c < cost.(i).(j) then (cost.(i).(j) <- c; best.(i).(j) <- s)
          done
        done
      done;
      let rec chain i j = if i = j then ms.(i) else matmul (chain i best.(i).(j)) (chain (best.(i).(j) + 1) j) in
      let r = chain 0 (n - 1) in
      drop_axes r (fun a -> not ((first && a = 0) || (last && a = 1)))
    end

  (* A function of tensors of the matrix routines' dtypes. *)
  type matrix_fn = { run : 'v 's. ('v, 's) t -> ('v, 's) t }

  (* [fn] of [t], through float32 where [t] is of a narrow float dtype. *)
  let full_precision (type a b) name (fn : matrix_fn) (t : (a, b) t) : (a, b) t =
    let d = dtype t in
    if Nx_kernel.full_precision (D.Any d) then fn.run t
    else if D.is_float d then cast d (fn.run (cast D.Float32 t))
    else fail name "%s is not a float or complex dtype" (D.name d)

  let check_square name t =
    let nd = ndim t in
    if nd < 2 then fail name "%d dimensions, not at least 2" nd;
    let sh = shape t in
    if sh.(nd - 1) <> sh.(nd - 2) then fail name "the matrices of shape %s are not square" (show_shape sh)

  (* Fails where [t] has a NaN, the kernels' mark of a matrix they could
     not factor. *)
  let no_nan name what t = if item [] (any (isnan t)) then fail name "%s" what

  (* The inverse of each matrix of [t]: P a = L U by lu, then L U x = P I
     by two triangular solves. *)
  let inverse name t =
    let sh = shape t in
    let nd = Array.length sh in
    let lu = Arr.create (dtype t) sh in
    let pshape, qshape = Nx_kernel.lu_shapes sh in
    let pivots = Arr.create D.Int64 pshape and perm = Arr.create D.Int64 qshape in
    answer name (K.lu ~lu ~pivots ~perm t);
    (* row i of P I is the unit row perm.(i) *)
    let rows = broadcast_view name sh (unsqueeze_named name [ nd - 1 ] perm) in
    let pi =
      elementwise name (dtype t) [ Arr.Any rows ]
        [| P.Load 0; P.Coord (nd - 1); P.Op2 (P.Eq, 0, 1); P.Op1 (P.Cast (D.Any (dtype t)), 2) |]
    in
    answer name (K.solve_triangular Nx_kernel.Lower ~adjoint:false ~unit_diagonal:true ~dst:pi lu pi);
    answer name (K.solve_triangular Nx_kernel.Upper ~adjoint:false ~unit_diagonal:false ~dst:pi lu pi);
    no_nan name "a matrix is singular" pi;
    pi

  let matrix_power t n =
    check_square "matrix_power" t;
    let sh = shape t in
    let m = sh.(Array.length sh - 1) in
    let rec power x k =
      if k = 1 then x
      else
        let h = power x (k / 2) in
        let h2 = matmul h h in
        if k mod 2 = 0 then h2 else matmul h2 x
    in
    full_precision "matrix_power"
      { run = (fun t ->
            if n = 0 then copy (broadcast_view "matrix_power" sh (eye (dtype t) m))
            else if n > 0 then (if n = 1 then copy t else power t n)
            else power (inverse "matrix_power" t) (-n)) }
      t

  (* {1 Factorisations} *)

  let cholesky ?(upper = false) a =
    check_square "cholesky" a;
    full_precision "cholesky"
      { run = (fun a ->
            let dst = Arr.create (dtype a) (shape a) in
            answer "cholesky" (K.cholesky (if upper then Nx_kernel.Upper else Nx_kernel.Lower) ~dst a);
            no_nan "cholesky" "a matrix is not positive-definite" dst;
            dst) }
      a

  let qr ?(mode = `Reduced) a =
    if ndim a < 2 then fail "qr" "%d dimensions, not at least 2" (ndim a);
    let f = match mode with `Reduced -> Nx_kernel.Reduced | `Complete -> Nx_kernel.Complete in
    let qs, rs = Nx_kernel.qr_shapes f (shape a) in
    let go (type v s) (a : (v, s) t) =
      let q = Arr.create (dtype a) qs and r = Arr.create (dtype a) rs in
      answer "qr" (K.qr ~q ~r a);
      (q, r)
    in
    let d = dtype a in
    if Nx_kernel.full_precision (D.Any d) then go a
    else if D.is_float d then
      let q, r = go (cast D.Float32 a) in
      (cast d q, cast d r)
    else fail "qr" "%s is not a float or complex dtype" (D.name d)
end
