(* Nx's gathers, scatters, sorts and random permutations against plain
   OCaml loops, on transposed, negative-stride, broadcast and empty
   operands, and their errors. *)

open Nx
open Nx_support

let i32 shape l = create int32 shape (Array.of_list (List.map Int32.of_int l))

let norm n i = if i < 0 then i + n else i

let take_ref ~axis x idx =
  let sx = shape x and si = shape idx in
  let out = Array.concat [ Array.sub sx 0 axis; si; Array.sub sx (axis + 1) (Array.length sx - axis - 1) ] in
  init float64 out (fun o ->
      let ri = Array.length si in
      let j = Array.sub o axis ri in
      let src = Array.concat [ Array.sub o 0 axis; [| norm sx.(axis) (Int32.to_int (get idx j)) |];
                               Array.sub o (axis + ri) (Array.length o - axis - ri) ] in
      get x src)

let take_ () =
  let x = awkward (small [| 3; 4 |] 1) in
  let idx = i32 [| 2; 2 |] [ 0; -1; 2; 1 ] in
  close "take axis 1" (take_ref ~axis:1 x idx) (take ~axis:1 idx x);
  close "take axis 0" (take_ref ~axis:0 x (i32 [| 3 |] [ 2; 2; -3 ])) (take ~axis:0 (i32 [| 3 |] [ 2; 2; -3 ]) x);
  let flat = reshape [| 12 |] (contiguous x) in
  close "take flattened" (take_ref ~axis:0 flat idx) (take idx x);
  let b = broadcast_to [| 3; 4 |] (small [| 4 |] 2) in
  close "take of a broadcast" (take_ref ~axis:0 b (i32 [| 2 |] [ 1; 0 ])) (take ~axis:0 (i32 [| 2 |] [ 1; 0 ]) b);
  let w = i32 [| 4 |] [ -5; 4; 13; -1 ] in
  close "wrap" (take_ref ~axis:1 x (i32 [| 4 |] [ 3; 0; 1; 3 ])) (take ~axis:1 ~mode:`wrap w x);
  close "clip" (take_ref ~axis:1 x (i32 [| 4 |] [ 0; 3; 3; 0 ])) (take ~axis:1 ~mode:`clip w x);
  shape_is "no indices" [ 3; 0 ] (take ~axis:1 (i32 [| 0 |] []) x);
  shape_is "from an empty axis" [ 0; 2 ] (take ~axis:0 (i32 [| 0 |] []) (zeros float32 [| 0; 2 |]));
  raises_named "take" (fun () -> take ~axis:1 (i32 [| 1 |] [ 4 ]) x);
  raises_named "take" (fun () -> take ~axis:1 (i32 [| 1 |] [ -5 ]) x);
  raises_named "take" (fun () -> take ~axis:2 (i32 [| 1 |] [ 0 ]) x);
  raises_named "take" (fun () -> take ~mode:`wrap (i32 [| 1 |] [ 0 ]) (zeros float32 [| 0 |]))

let take_along () =
  let x = awkward (small [| 3; 4 |] 3) in
  let idx = i32 [| 3; 2 |] [ 0; 3; -1; 1; 2; 2 ] in
  let want = init float64 [| 3; 2 |] (fun o -> get x [| o.(0); norm 4 (Int32.to_int (get idx o)) |]) in
  close "along axis 1" want (take_along_axis ~axis:1 idx x);
  let row = i32 [| 1; 2 |] [ 1; 0 ] in
  let want = init float64 [| 3; 2 |] (fun o -> get x [| o.(0); Int32.to_int (get row [| 0; o.(1) |]) |]) in
  close "indices broadcast" want (take_along_axis ~axis:1 row x);
  let cols = expand_dims [ 0 ] (argmax ~axis:0 x) in
  close "the maxima by argmax" (max ~axes:[ 0 ] ~keepdims:true x) (take_along_axis ~axis:0 cols x);
  raises_named "take_along_axis" (fun () -> take_along_axis ~axis:1 (i32 [| 2 |] [ 0; 1 ]) x);
  raises_named "take_along_axis" (fun () -> take_along_axis ~axis:1 (i32 [| 2; 1 |] [ 0; 1 ]) x);
  raises_named "take_along_axis" (fun () -> take_along_axis ~axis:1 (i32 [| 3; 1 |] [ 0; 1; 4 ]) x)

let puts () =
  let x = zeros int32 [| 5 |] in
  put ~indices:(i32 [| 3 |] [ 1; 3; 0 ]) ~values:(i32 [| 3 |] [ 10; 20; 30 ]) x;
  Alcotest.(check (list int32)) "put" [ 30l; 10l; 0l; 20l; 0l ] (Array.to_list (to_array x));
  put ~indices:(i32 [| 3 |] [ 2; 2; -1 ]) ~values:(i32 [| 3 |] [ 1; 2; 3 ]) x;
  Alcotest.(check (list int32)) "the last write wins" [ 30l; 10l; 2l; 20l; 3l ] (Array.to_list (to_array x));
  put ~mode:`clip ~indices:(i32 [| 2 |] [ -1; 5 ]) ~values:(i32 [| 1 |] [ 99 ]) x;
  Alcotest.(check (list int32)) "clip, values broadcast" [ 99l; 10l; 2l; 20l; 99l ] (Array.to_list (to_array x));
  (* into a transposed view, flattened in its own C order *)
  let base = zeros float64 [| 3; 2 |] in
  let t = transpose base in
  put ~indices:(i32 [| 2 |] [ 1; 5 ]) ~values:(create float64 [| 2 |] [| 7.; 8. |]) t;
  Alcotest.(check (list (float 0.))) "through a copy" [ 0.; 0.; 7.; 0.; 0.; 8. ] (Array.to_list (to_array base));
  let y = small [| 3; 4 |] 4 in
  let before = copy y in
  let v = small [| 3; 2 |] 5 in
  put ~axis:1 ~indices:(i32 [| 2 |] [ 3; -4 ]) ~values:v y;
  let want = init float64 [| 3; 4 |] (fun o ->
      if o.(1) = 3 then get v [| o.(0); 0 |] else if o.(1) = 0 then get v [| o.(0); 1 |] else get before o) in
  close "put along axis 1" want y;
  raises_named "put" (fun () -> put ~indices:(i32 [| 1 |] [ 5 ]) ~values:(i32 [| 1 |] [ 1 ]) x);
  Alcotest.(check (list int32)) "untouched by a refused put" [ 99l; 10l; 2l; 20l; 99l ] (Array.to_list (to_array x));
  raises_named "put" (fun () -> put ~indices:(i32 [| 2 |] [ 0; 1 ]) ~values:(i32 [| 3 |] [ 1; 2; 3 ]) x)

let index_puts () =
  let t = zeros float32 [| 3; 3 |] in
  index_put ~indices:[| i32 [| 4 |] [ 0; 2; 1; 2 ]; i32 [| 4 |] [ 1; 0; 2; 0 ] |]
    ~values:(create float32 [| 4 |] [| 10.; 20.; 30.; 40. |]) t;
  Alcotest.(check (list (float 0.))) "duplicates: the last wins" [ 0.; 10.; 0.; 0.; 0.; 30.; 40.; 0.; 0. ]
    (Array.to_list (to_array t));
  let t = zeros int32 [| 2; 3 |] in
  index_put ~indices:[| i32 [| 2; 1 |] [ 0; 1 ]; i32 [| 3 |] [ 0; -1; 1 ] |] ~values:(i32 [||] [ 5 ]) t;
  Alcotest.(check (list int32)) "broadcast indices" [ 5l; 5l; 5l; 5l; 5l; 5l ] (Array.to_list (to_array t));
  let base = zeros int32 [| 3; 2 |] in
  index_put ~indices:[| i32 [| 1 |] [ 1 ]; i32 [| 1 |] [ 2 ] |] ~values:(i32 [| 1 |] [ 7 ]) (transpose base);
  Alcotest.(check (list int32)) "into a transposed view" [ 0l; 0l; 0l; 0l; 0l; 7l ] (Array.to_list (to_array base));
  index_put ~mode:`wrap ~indices:[| i32 [| 1 |] [ 4 ]; i32 [| 1 |] [ -1 ] |] ~values:(i32 [| 1 |] [ 9 ]) base;
  Alcotest.(check (list int32)) "wrap" [ 0l; 0l; 0l; 9l; 0l; 7l ] (Array.to_list (to_array base));
  raises_named "index_put" (fun () -> index_put ~indices:[| i32 [| 1 |] [ 0 ] |] ~values:(i32 [| 1 |] [ 1 ]) base);
  raises_named "index_put" (fun () ->
      index_put ~indices:[| i32 [| 1 |] [ 3 ]; i32 [| 1 |] [ 0 ] |] ~values:(i32 [| 1 |] [ 1 ]) base)

let scatters () =
  let x = awkward (small [| 3; 4 |] 6) in
  let before = copy x in
  let idx = i32 [| 3; 2 |] [ 1; 1; 0; 3; -1; 2 ] in
  let v = small [| 3; 2 |] 7 in
  let ref_ combine =
    let r = Array.init 3 (fun i -> Array.init 4 (fun j -> get x [| i; j |])) in
    List.iter (fun o ->
        let j = norm 4 (Int32.to_int (get idx o)) in
        r.(o.(0)).(j) <- combine r.(o.(0)).(j) (get v o))
      (indices [| 3; 2 |]);
    init float64 [| 3; 4 |] (fun o -> r.(o.(0)).(o.(1)))
  in
  close "Set" (ref_ (fun _ u -> u)) (scatter ~axis:1 ~indices:idx ~values:v x);
  close "Add" (ref_ ( +. )) (scatter ~mode:`Add ~axis:1 ~indices:idx ~values:v x);
  close "scatter leaves its operand" before x;
  close "values broadcast" (ref_ (fun _ _ -> 2.)) (scatter ~axis:1 ~indices:idx ~values:(full float64 [||] 2.) x);
  let y = copy x in
  put_along_axis ~axis:1 ~indices:idx ~values:v y;
  close "put_along_axis" (ref_ (fun _ u -> u)) y;
  raises_named "scatter" (fun () -> scatter ~axis:1 ~indices:(i32 [| 4; 1 |] [ 0; 0; 0; 0 ]) ~values:v x);
  raises_named "scatter" (fun () -> scatter ~axis:1 ~indices:(i32 [| 3; 1 |] [ 0; 4; 0 ]) ~values:v x);
  raises_named "put_along_axis" (fun () -> put_along_axis ~axis:2 ~indices:idx ~values:v y)

let selections () =
  let x = awkward (small [| 3; 4 |] 8) in
  let cond = create bool [| 3 |] [| true; false; true |] in
  close "compress axis 0" (init float64 [| 2; 4 |] (fun o -> get x [| 2 * o.(0); o.(1) |])) (compress ~axis:0 ~condition:cond x);
  let flat = to_array (contiguous x) in
  let want l = create float64 [| List.length l |] (Array.of_list (List.map (fun i -> flat.(i)) l)) in
  close "compress flattened, a short condition" (want [ 0; 2 ]) (compress ~condition:cond x);
  let mask = greater_s x 0. in
  let pos = List.filter (fun i -> flat.(i) > 0.) (List.init 12 Fun.id) in
  close "extract" (want pos) (extract ~condition:mask x);
  shape_is "nothing selected" [ 0 ] (extract ~condition:(zeros bool [| 3; 4 |]) x);
  shape_is "compress of nothing" [ 3; 0 ] (compress ~axis:1 ~condition:(zeros bool [| 0 |]) x);
  let nz = nonzero x in
  Alcotest.(check int) "nonzero: one per axis" 2 (Array.length nz);
  Alcotest.(check (list int)) "rows" (List.map (fun i -> i / 4) (List.filter (fun i -> flat.(i) <> 0.) (List.init 12 Fun.id)))
    (List.map Int32.to_int (Array.to_list (to_array nz.(0))));
  Alcotest.(check (list int)) "columns" (List.map (fun i -> i mod 4) (List.filter (fun i -> flat.(i) <> 0.) (List.init 12 Fun.id)))
    (List.map Int32.to_int (Array.to_list (to_array nz.(1))));
  let aw = argwhere x in
  shape_is "argwhere" [ List.length (List.filter (fun v -> v <> 0.) (Array.to_list flat)); 2 ] aw;
  Alcotest.(check (list int32)) "argwhere's rows are nonzero's columns" (Array.to_list (to_array nz.(1)))
    (Array.to_list (to_array (contiguous (slice [ A; I 1 ] aw))));
  shape_is "argwhere of nothing" [ 0; 2 ] (argwhere (zeros int32 [| 2; 2 |]));
  shape_is "argwhere of a 0-d" [ 1; 0 ] (argwhere (scalar int32 3l));
  raises_named "compress" (fun () -> compress ~axis:1 ~condition:(zeros bool [| 5 |]) x);
  raises_named "compress" (fun () -> compress ~condition:(zeros bool [| 1; 1 |]) x);
  raises_named "extract" (fun () -> extract ~condition:(zeros bool [| 3 |]) x)

(* The total order of the sort: -0 below +0, NaNs last. *)
let total a b =
  match (Float.is_nan a, Float.is_nan b) with
  | true, true -> 0 | true, false -> 1 | false, true -> -1
  | false, false -> if a = 0. && b = 0. then compare (1. /. a) (1. /. b) else compare a b

let sorts () =
  let vals = [| 3.; Float.nan; -0.; 0.; 1.; 3.; Float.neg_infinity; -2.; Float.nan; 0.; 1. |] in
  let x = flip (create float64 [| 11 |] vals) in
  let xs = Array.init 11 (fun i -> get x [| i |]) in
  let check descending =
    let order = List.stable_sort (fun i j -> if descending then total xs.(j) xs.(i) else total xs.(i) xs.(j)) (List.init 11 Fun.id) in
    let v, p = sort ~descending x in
    Alcotest.(check (list int)) "positions" order (List.map Int32.to_int (Array.to_list (to_array p)));
    List.iteri (fun k i ->
        let g = get v [| k |] in
        if Int64.bits_of_float g <> Int64.bits_of_float xs.(i) then Alcotest.failf "value %d: %g, not %g" k g xs.(i))
      order
  in
  check false;
  check true;
  let m = awkward (small [| 4; 3 |] 9) in
  let v, p = sort ~axis:0 m in
  List.iter (fun c ->
      let col = List.init 4 (fun r -> get m [| r; c |]) in
      let order = List.stable_sort (fun i j -> compare (List.nth col i) (List.nth col j)) (List.init 4 Fun.id) in
      Alcotest.(check (list int)) "argsort of a column" order (List.init 4 (fun r -> Int32.to_int (get p [| r; c |])));
      Alcotest.(check (list (float 0.))) "a column sorted" (List.map (List.nth col) order) (List.init 4 (fun r -> get v [| r; c |])))
    [ 0; 1; 2 ];
  Alcotest.(check (list int32)) "argsort" [ 1l; 3l; 0l; 2l; 4l ] (Array.to_list (to_array (argsort (i32 [| 5 |] [ 3; 1; 4; 1; 5 ]))));
  Alcotest.(check (list int32)) "descending, stable" [ 4l; 2l; 0l; 1l; 3l ]
    (Array.to_list (to_array (argsort ~descending:true (i32 [| 5 |] [ 3; 1; 4; 1; 5 ]))));
  shape_is "an empty sort" [ 2; 0 ] (fst (sort (zeros float32 [| 2; 0 |])));
  raises_named "sort" (fun () -> sort (scalar float32 1.));
  raises_named "argsort" (fun () -> argsort ~axis:2 m)

let permutations () =
  Rng.run ~seed:3 (fun () ->
      let p = permutation 50 in
      Alcotest.(check (list int)) "a permutation" (List.init 50 Fun.id)
        (List.sort compare (List.map Int32.to_int (Array.to_list (to_array p))));
      let x = small [| 6; 2 |] 10 in
      let s = shuffle x in
      let rows t = List.sort compare (List.init 6 (fun r -> (get t [| r; 0 |], get t [| r; 1 |]))) in
      Alcotest.(check (list (pair (float 0.) (float 0.)))) "shuffle keeps the rows" (rows x) (rows s);
      shape_is "shuffle of a 0-d" [] (shuffle (scalar float32 1.)));
  let a = Rng.run ~seed:5 (fun () -> to_array (permutation 20)) and b = Rng.run ~seed:5 (fun () -> to_array (permutation 20)) in
  Alcotest.(check (array int32)) "a seed's permutation" a b;
  raises_named "permutation" (fun () -> permutation 0)

(* Gathers, scatters and sorts move bits: packed, boolean and complex
   dtypes included. *)
let dtypes () =
  let idx = i32 [| 3 |] [ 2; 0; -1 ] in
  let q = create int4 [| 4 |] [| -8; 7; -1; 3 |] in
  Alcotest.(check (list int)) "take int4" [ -1; -8; 3 ] (Array.to_list (to_array (take idx q)));
  let b = create bool [| 4 |] [| true; false; false; true |] in
  Alcotest.(check (list bool)) "take bool" [ false; true; true ] (Array.to_list (to_array (take idx b)));
  let c k = { Complex.re = float k; im = float (-k) } in
  let z = create complex128 [| 4 |] (Array.init 4 c) in
  Alcotest.(check (list (pair (float 0.) (float 0.)))) "take complex128" [ (2., -2.); (0., 0.); (3., -3.) ]
    (List.map (fun (v : Complex.t) -> (v.re, v.im)) (Array.to_list (to_array (take idx z))));
  let s = scatter ~mode:`Add ~axis:0 ~indices:(i32 [| 2 |] [ 1; 1 ]) ~values:(create int4 [| 2 |] [| 3; 4 |]) q in
  Alcotest.(check (list int)) "scatter Add int4 wraps" [ -8; -2; -1; 3 ] (Array.to_list (to_array s));
  let zs = create complex64 [| 3 |] [| { Complex.re = 1.; im = 5. }; { Complex.re = 0.; im = 2. }; { Complex.re = 1.; im = -1. } |] in
  Alcotest.(check (list int32)) "sort complex: real, then imaginary part" [ 1l; 2l; 0l ] (Array.to_list (to_array (argsort zs)));
  Alcotest.(check (list bool)) "sort bool" [ false; false; true; true ] (Array.to_list (to_array (fst (sort b))));
  Alcotest.(check (list int32)) "nonzero of bool" [ 0l; 3l ] (Array.to_list (to_array (nonzero b).(0)))

let tests =
  [ ("take", `Quick, take_); ("take_along_axis", `Quick, take_along); ("put", `Quick, puts);
    ("index_put", `Quick, index_puts); ("scatter and put_along_axis", `Quick, scatters);
    ("compress, extract, nonzero, argwhere", `Quick, selections); ("sort and argsort", `Quick, sorts);
    ("permutation and shuffle", `Quick, permutations); ("every kind of dtype", `Quick, dtypes) ]
