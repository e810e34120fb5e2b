(* Nx's products and matrices: [outer], [kron], [cross]. Built on
   Nx_reductions. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_reductions.Make (K)

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
end
