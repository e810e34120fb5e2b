(* Nx's products (dot, matmul, vdot, vecdot, inner, tensordot, einsum,
   multi_dot, matrix_power) and factorisations (cholesky, qr) against plain
   OCaml loops, on broadcast, transposed, negative-stride and empty
   operands, and their errors. Operands hold small whole numbers, so every
   product's sum is exact and compared bit for bit. *)

open Nx
open Nx_support

(* The batched matrix product by loops, batch axes broadcast. *)
let matmul_ref a b =
  let sa = shape a and sb = shape b in
  let ra = Array.length sa and rb = Array.length sb in
  let m = sa.(ra - 2) and k = sa.(ra - 1) and n = sb.(rb - 1) in
  let batch = shape (add (zeros float64 (Array.sub sa 0 (ra - 2))) (zeros float64 (Array.sub sb 0 (rb - 2)))) in
  let r = Array.length batch in
  let pick s bi = Array.init (Array.length s - 2) (fun i -> let j = i + r - (Array.length s - 2) in if s.(i) = 1 then 0 else bi.(j)) in
  init float64 (Array.append batch [| m; n |]) (fun o ->
      let bi = Array.sub o 0 r in
      let s = ref 0. in
      for l = 0 to k - 1 do
        s := !s +. (get a (Array.append (pick sa bi) [| o.(r); l |]) *. get b (Array.append (pick sb bi) [| l; o.(r + 1) |]))
      done;
      !s)

let dots () =
  let a = create float32 [| 2 |] [| 1.; 2. |] and b = create float32 [| 2 |] [| 3.; 4. |] in
  Alcotest.(check (float 0.)) "1-D" 11. (item [] (dot a b));
  let a = awkward (small [| 3; 4; 5 |] 1) and b = awkward (small [| 5; 6 |] 2) in
  let want = init float64 [| 3; 4; 6 |] (fun o ->
      let s = ref 0. in
      for l = 0 to 4 do s := !s +. (get a [| o.(0); o.(1); l |] *. get b [| l; o.(2) |]) done;
      !s) in
  close "3-D by 2-D" want (dot a b);
  let c = small [| 2; 5; 3 |] 3 in
  let want = init float64 [| 3; 4; 2; 3 |] (fun o ->
      let s = ref 0. in
      for l = 0 to 4 do s := !s +. (get a [| o.(0); o.(1); l |] *. get c [| o.(2); l; o.(3) |]) done;
      !s) in
  close "N-D by M-D concatenates" want (dot a c);
  close "matrix by vector" (init float64 [| 3; 4 |] (fun o ->
      let s = ref 0. in
      for l = 0 to 4 do s := !s +. get a [| o.(0); o.(1); l |] *. float l done;
      !s)) (dot a (arange float64 0 5 1));
  raises_named "dot" (fun () -> dot a (scalar float64 1.));
  raises_named "dot" (fun () -> dot a (small [| 4; 6 |] 4))

let matmuls () =
  let a = awkward (small [| 1; 3; 4 |] 5) and b = flip (small [| 5; 4; 2 |] 6) in
  close "batch broadcast" (matmul_ref a b) (matmul a b);
  let a2 = small [| 3; 4 |] 7 in
  let bb = broadcast_to [| 2; 4; 3 |] (small [| 4; 3 |] 8) in
  close "a broadcast operand" (matmul_ref a2 bb) (matmul a2 bb);
  let v = small [| 4 |] 9 in
  close "matrix by vector" (reshape [| 3 |] (matmul_ref a2 (reshape [| 4; 1 |] v))) (matmul a2 v);
  close "vector by batch" (reshape [| 2; 3 |] (matmul_ref (reshape [| 1; 4 |] v) bb)) (matmul v bb);
  shape_is "vector by vector" [] (matmul v v);
  let i = create int32 [| 2; 2 |] [| 1l; 2l; 3l; 4l |] in
  Alcotest.(check (list int32)) "int32" [ 7l; 10l; 15l; 22l ] (Array.to_list (to_array (matmul i i)));
  let bo = create bool [| 2; 2 |] [| true; false; false; false |] in
  Alcotest.(check (list bool)) "bool: whether some term is true" [ true; false; false; false ] (Array.to_list (to_array (matmul bo bo)));
  let i8 = create int8 [| 1; 2 |] [| 100; 100 |] in
  Alcotest.(check (list int)) "int8 wraps, as numpy" [ 32 ] (Array.to_list (to_array (matmul i8 (transpose i8))));
  let h = cast float16 a2 in
  close "float16" (matmul_ref a2 (transpose a2)) (cast float64 (matmul h (transpose h)));
  close "an empty depth" (zeros float64 [| 3; 2 |]) (matmul (zeros float64 [| 3; 0 |]) (zeros float64 [| 0; 2 |]));
  shape_is "no rows" [ 0; 2 ] (matmul (zeros float64 [| 0; 4 |]) (small [| 4; 2 |] 1));
  raises_named "matmul" (fun () -> matmul a2 a2);
  raises_named "matmul" (fun () -> matmul (scalar float64 1.) a2);
  raises_named "matmul" (fun () -> matmul (small [| 2; 3; 4 |] 1) (small [| 3; 4; 2 |] 1))

let vector_products () =
  let z = create complex128 [| 2 |] [| { Complex.re = 1.; im = 2. }; { Complex.re = 3.; im = -1. } |] in
  let w = create complex128 [| 2 |] [| { Complex.re = 2.; im = 1. }; { Complex.re = 0.; im = 1. } |] in
  (* conj(1+2i)(2+i) + conj(3-i)(i) = (4 - 3i) + (-1 + 3i) *)
  Alcotest.(check (pair (float 0.) (float 0.))) "vdot conjugates" (3., 0.)
    (let c = item [] (vdot z w) in (c.re, c.im));
  let a = awkward (small [| 2; 3 |] 11) and b = small [| 3; 2 |] 12 in
  let fa = to_array (contiguous a) and fb = to_array b in
  Alcotest.(check (float 0.)) "vdot flattens" (Array.fold_left ( +. ) 0. (Array.map2 ( *. ) fa fb)) (item [] (vdot a b));
  let c = small [| 4; 1; 3 |] 13 and d = flip (small [| 2; 3 |] 14) in
  let want = init float64 [| 4; 2 |] (fun o ->
      let s = ref 0. in
      for l = 0 to 2 do s := !s +. (get c [| o.(0); 0; l |] *. get d [| o.(1); l |]) done;
      !s) in
  close "vecdot broadcasts" want (vecdot c d);
  close "vecdot along axis 0" (init float64 [| 3 |] (fun o -> get a [| 0; o.(0) |] *. get a [| 0; o.(0) |] +. get a [| 1; o.(0) |] *. get a [| 1; o.(0) |]))
    (vecdot ~axis:0 a a);
  let want = init float64 [| 2; 2 |] (fun o ->
      let s = ref 0. in
      for l = 0 to 2 do s := !s +. (get a [| o.(0); l |] *. get (transpose b) [| o.(1); l |]) done;
      !s) in
  close "inner" want (inner a (transpose b));
  let t = small [| 2; 3; 4 |] 15 and u = awkward (small [| 4; 3; 5 |] 16) in
  let want = init float64 [| 2; 5 |] (fun o ->
      let s = ref 0. in
      for i = 0 to 2 do for j = 0 to 3 do s := !s +. (get t [| o.(0); i; j |] *. get u [| j; i; o.(1) |]) done done;
      !s) in
  close "tensordot" want (tensordot ~axes:([ 1; -1 ], [ 1; 0 ]) t u);
  close "tensordot's default" (dot t (small [| 4; 2 |] 17)) (tensordot t (small [| 4; 2 |] 17));
  raises_named "vdot" (fun () -> vdot a (small [| 5 |] 1));
  raises_named "vecdot" (fun () -> vecdot a (small [| 2 |] 1));
  raises_named "inner" (fun () -> inner a (small [| 2; 2 |] 1));
  raises_named "tensordot" (fun () -> tensordot ~axes:([ 0 ], [ 0 ]) t u);
  raises_named "tensordot" (fun () -> tensordot ~axes:([ 0; 1 ], [ 0 ]) t u)

let einsums () =
  let a = small [| 2; 3 |] 21 and b = awkward (small [| 3; 2 |] 22) in
  close "ij,jk->ik" (matmul a b) (einsum "ij,jk->ik" [| a; b |]);
  close "implicit output" (matmul a b) (einsum "ij,jk" [| a; b |]);
  let s = small [| 3; 3 |] 23 in
  close "ii->i" (init float64 [| 3 |] (fun o -> get s [| o.(0); o.(0) |])) (einsum "ii->i" [| s |]);
  close "ii, the trace" (scalar float64 (get s [| 0; 0 |] +. get s [| 1; 1 |] +. get s [| 2; 2 |])) (einsum "ii" [| s |]);
  let tr = einsum "ij->ji" [| s |] in
  close "ij->ji" (transpose s) tr;
  Alcotest.(check bool) "a copy" false (Nx_array.buffer tr == Nx_array.buffer s);
  let x = small [| 4; 2; 3 |] 24 and y = flip (small [| 4; 3; 5 |] 25) in
  close "bij,bjk->bik" (matmul x y) (einsum "bij,bjk->bik" [| x; y |]);
  close "bij,bjk->kib" (transpose ~axes:[ 2; 1; 0 ] (matmul x y)) (einsum "bij,bjk->kib" [| x; y |]);
  let v = small [| 3 |] 26 in
  close "i,i->" (dot v v) (einsum "i,i->" [| v; v |]);
  close "ij->" (sum a) (einsum "ij->" [| a |]);
  close "three operands" (matmul (matmul a b) a) (einsum "ij,jk,kl->il" [| a; b; a |]);
  close "an outer product" (outer v v) (einsum "i,j->ij" [| v; v |]);
  raises_named "einsum" (fun () -> einsum "ij,jk->ik" [| a |]);
  raises_named "einsum" (fun () -> einsum "ij,jk->iz" [| a; b |]);
  raises_named "einsum" (fun () -> einsum "ij,ik->jk" [| a; b |]);
  raises_named "einsum" (fun () -> einsum "...i->i" [| a |]);
  raises_named "einsum" (fun () -> einsum "ijk->i" [| a |])

let chains () =
  let a = small [| 10; 3 |] 31 and b = small [| 3; 8 |] 32 and c = awkward (small [| 8; 2 |] 33) and v = small [| 2 |] 34 in
  close "multi_dot" (matmul (matmul a b) c) (multi_dot [| a; b; c |]);
  close "vector ends" (matmul (matmul (matmul (small [| 10 |] 35) a) b) c) (multi_dot [| small [| 10 |] 35; a; b; c |]);
  close "column end" (matmul (matmul a b) (matmul c v)) (multi_dot [| a; b; c; v |]);
  raises_named "multi_dot" (fun () -> multi_dot ([||] : (float, float64_elt) t array));
  raises_named "multi_dot" (fun () -> multi_dot [| a; c |]);
  raises_named "multi_dot" (fun () -> multi_dot [| create int32 [| 1; 1 |] [| 1l |]; create int32 [| 1; 1 |] [| 1l |] |]);
  let m = awkward (small [| 2; 3; 3 |] 36) in
  close "power 0" (broadcast_to [| 2; 3; 3 |] (eye float64 3)) (matrix_power m 0);
  close "power 1" m (matrix_power m 1);
  close "power 5" (matmul m (matmul (matmul m m) (matmul m m))) (matrix_power m 5);
  let g = create float64 [| 2; 2 |] [| 4.; 7.; 2.; 6. |] in
  close ~tol:1e-12 "power -1" (create float64 [| 2; 2 |] [| 0.6; -0.7; -0.2; 0.4 |]) (matrix_power g (-1));
  close ~tol:1e-12 "power -2" (matmul (matrix_power g (-1)) (matrix_power g (-1))) (matrix_power g (-2));
  let p = create float64 [| 3; 3 |] [| 0.; 1.; 0.; 0.; 0.; 2.; 4.; 0.; 0. |] in
  close ~tol:1e-12 "a pivoting inverse" (eye float64 3) (matmul p (matrix_power p (-1)));
  close ~tol:1e-3 "float16 through float32" (cast float16 (matmul g g) |> cast float64) (cast float64 (matrix_power (cast float16 g) 2));
  raises_named "matrix_power" (fun () -> matrix_power (create float64 [| 2; 2 |] [| 1.; 2.; 2.; 4. |]) (-1));
  raises_named "matrix_power" (fun () -> matrix_power (small [| 2; 3 |] 1) 2);
  raises_named "matrix_power" (fun () -> matrix_power (create int32 [| 1; 1 |] [| 2l |]) 2)

let factorisations () =
  let b = small [| 2; 4; 4 |] 41 in
  let spd = add (matmul b (matrix_transpose b)) (mul_s (broadcast_to [| 2; 4; 4 |] (eye float64 4)) 4.) in
  let l = cholesky (awkward spd) in
  close ~tol:1e-9 "L Lᵀ" spd (matmul l (matrix_transpose l));
  close "L is lower" (tril l) l;
  let u = cholesky ~upper:true spd in
  close ~tol:1e-9 "Uᵀ U" spd (matmul (matrix_transpose u) u);
  close "U is upper" (triu u) u;
  let lf = cholesky (cast float32 spd) in
  close ~tol:1e-3 "float32" spd (cast float64 (matmul lf (matrix_transpose lf)));
  raises_named "cholesky" (fun () -> cholesky (create float64 [| 2; 2 |] [| 1.; 2.; 2.; 1. |]));
  raises_named "cholesky" (fun () -> cholesky (small [| 2; 3 |] 1));
  raises_named "cholesky" (fun () -> cholesky (create int32 [| 1; 1 |] [| 1l |]));
  let a = awkward (small [| 3; 5; 3 |] 42) in
  let q, r = qr a in
  shape_is "reduced q" [ 3; 5; 3 ] q;
  shape_is "reduced r" [ 3; 3; 3 ] r;
  close ~tol:1e-9 "q r" a (matmul q r);
  close ~tol:1e-9 "qᵀ q" (broadcast_to [| 3; 3; 3 |] (eye float64 3)) (matmul (matrix_transpose q) q);
  close "r is upper" (triu r) r;
  let q, r = qr ~mode:`Complete a in
  shape_is "complete q" [ 3; 5; 5 ] q;
  shape_is "complete r" [ 3; 5; 3 ] r;
  close ~tol:1e-9 "complete q r" a (matmul q r);
  let w = flip (small [| 2; 4 |] 43) in
  let q, r = qr w in
  close ~tol:1e-9 "wide" w (matmul q r);
  (* complex: a = L Lᴴ, a = q r, and vecdot conjugates its first operand *)
  let cplx re im = init complex128 (shape re) (fun i -> { Complex.re = get re i; im = get im i }) in
  let bz = cplx (small [| 3; 3 |] 44) (small [| 3; 3 |] 45) in
  let herm = add (matmul bz (conjugate (matrix_transpose bz))) (mul_s (eye complex128 3) { Complex.re = 3.; im = 0. }) in
  let lz = cholesky herm in
  let parts t = (init float64 (shape t) (fun i -> (get t i).Complex.re), init float64 (shape t) (fun i -> (get t i).Complex.im)) in
  let back = matmul lz (conjugate (matrix_transpose lz)) in
  close ~tol:1e-9 "complex L Lᴴ: real" (fst (parts herm)) (fst (parts back));
  close ~tol:1e-9 "complex L Lᴴ: imaginary" (snd (parts herm)) (snd (parts back));
  let qz, rz = qr bz in
  let back = matmul qz rz in
  close ~tol:1e-9 "complex q r: real" (fst (parts bz)) (fst (parts back));
  close ~tol:1e-9 "complex q r: imaginary" (snd (parts bz)) (snd (parts back));
  let v = vecdot bz bz in
  close "vecdot of complex rows: |x|²" (sum ~axes:[ 1 ] (fst (parts (mul (conjugate bz) bz)))) (fst (parts v));
  close "vecdot of complex rows: real" (zeros float64 [| 3 |]) (snd (parts v));
  raises_named "qr" (fun () -> qr (small [| 3 |] 1));
  raises_named "qr" (fun () -> qr (create int32 [| 1; 1 |] [| 1l |]))

let tests =
  [ ("dot", `Quick, dots); ("matmul", `Quick, matmuls); ("vdot, vecdot, inner, tensordot", `Quick, vector_products);
    ("einsum", `Quick, einsums); ("multi_dot and matrix_power", `Quick, chains);
    ("cholesky and qr", `Quick, factorisations) ]
