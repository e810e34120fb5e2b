(* Nx against its documentation: values computed by hand, views that share
   memory, errors that name their function, printing. *)

open Nx

let raises_named = Nx_support.raises_named

let ints t = Array.to_list (Array.map Int32.to_int (to_array t))
let floats t = Array.to_list (to_array t)
let shape_is msg want t = Alcotest.(check (list int)) msg want (Array.to_list (shape t))
let check_ints msg want t = Alcotest.(check (list int)) msg want (ints t)
let check_floats msg want t = Alcotest.(check (list (float 0.))) msg want (floats t)
let check_bools msg want t = Alcotest.(check (list bool)) msg want (Array.to_list (to_array t))
let i32 shape l = create int32 shape (Array.of_list (List.map Int32.of_int l))
let f32 shape l = create float32 shape (Array.of_list l)
let f64 shape l = create float64 shape (Array.of_list l)
let shares a b = Nx_array.buffer a == Nx_array.buffer b

let errors () =
  let x = i32 [| 2; 3 |] [ 1; 2; 3; 4; 5; 6 ] in
  (match reshape [| 4 |] x with
   | _ -> Alcotest.fail "reshape to 4"
   | exception Invalid_argument m -> Alcotest.(check string) "message" "reshape: cannot reshape [2; 3] to [4]" m);
  raises_named "reshape" (fun () -> reshape [| -1; -1 |] x);
  raises_named "reshape" (fun () -> reshape [| 6 |] (transpose x));
  raises_named "add" (fun () -> add x (i32 [| 4 |] [ 1; 2; 3; 4 ]));
  (match sin x with
   | _ -> Alcotest.fail "sin of int32"
   | exception Invalid_argument m -> Alcotest.(check string) "a kind's refusal" "sin: Sin does not take int32" m);
  raises_named "create" (fun () -> i32 [| 2; 2 |] [ 1 ]);
  raises_named "arange" (fun () -> arange int32 0 3 0);
  raises_named "get" (fun () -> get [ 2 ] x);
  raises_named "item" (fun () -> item [ 0 ] x);
  raises_named "slice" (fun () -> slice [ Rs (0, 2, 0) ] x);
  raises_named "slice" (fun () -> slice [ M (full bool [| 2 |] true) ] x);
  raises_named "set_slice" (fun () -> set_slice [ N ] x x);
  raises_named "sum" (fun () -> sum ~axes:[ 2 ] x);
  raises_named "sum" (fun () -> sum ~axes:[ 0; -2 ] x);
  raises_named "lshift" (fun () -> lshift x (-1));
  raises_named "lshift" (fun () -> lshift (f32 [| 1 |] [ 1. ]) 1);
  raises_named "var" (fun () -> var ~ddof:6 x);
  raises_named "strides" (fun () -> strides (zeros int4 [| 2 |]));
  raises_named "to_bigarray" (fun () -> to_bigarray (zeros bool [| 2 |]));
  raises_named "squeeze" (fun () -> squeeze ~axes:[ 0 ] x);
  raises_named "unsqueeze" (fun () -> unsqueeze x);
  raises_named "transpose" (fun () -> transpose ~axes:[ 0; 0 ] x);
  raises_named "concatenate" (fun () -> concatenate ~axis:0 [ x; i32 [| 1; 2 |] [ 1; 2 ] ]);
  raises_named "concatenate" (fun () -> concatenate ([] : (int32, int32_elt) t list));
  raises_named "split" (fun () -> split ~axis:1 2 x);
  raises_named "one_hot" (fun () -> one_hot ~num_classes:3 (f32 [| 1 |] [ 0. ]));
  raises_named "geomspace" (fun () -> geomspace float32 0. 1. 3);
  raises_named "argmax" (fun () -> argmax (zeros float32 [| 0 |]));
  raises_named "max" (fun () -> max (zeros int32 [| 0 |]));
  raises_named "min" (fun () -> min ~axes:[ 1 ] (zeros float32 [| 2; 0 |]));
  raises_named "blit" (fun () -> blit x (zeros int32 [| 3; 2 |]));
  raises_named "pad" (fun () -> pad [| (1, 1) |] 0l x);
  raises_named "tril" (fun () -> tril (i32 [| 2 |] [ 1; 2 ]));
  (* nothing was written by a refused call *)
  let dst = zeros int32 [| 2; 3 |] in
  raises_named "set" (fun () -> set [] dst (i32 [| 4 |] [ 1; 2; 3; 4 ]));
  check_ints "untouched" [ 0; 0; 0; 0; 0; 0 ] dst

let properties () =
  let x = f32 [| 2; 3 |] [ 1.; 2.; 3.; 4.; 5.; 6. ] in
  Alcotest.(check (list int)) "byte strides" [ 12; 4 ] (Array.to_list (strides x));
  Alcotest.(check int) "stride" 4 (stride (-1) x);
  Alcotest.(check (list int)) "transposed" [ 4; 12 ] (Array.to_list (strides (transpose x)));
  Alcotest.(check int) "dim" 3 (dim (-1) x);
  Alcotest.(check int) "itemsize" 4 (itemsize x);
  Alcotest.(check int) "nbytes" 24 (nbytes x);
  Alcotest.(check int) "packed nbytes" 2 (nbytes (zeros int4 [| 3 |]));
  Alcotest.(check bool) "contiguous" true (is_c_contiguous x);
  Alcotest.(check bool) "transposed" false (is_c_contiguous (transpose x));
  Alcotest.(check bool) "row" true (is_c_contiguous (get [ 1 ] x));
  Alcotest.(check int) "offset" 3 (offset (get [ 1 ] x));
  Alcotest.(check int) "size" 6 (numel x);
  Alcotest.(check int) "ndim" 0 (ndim (scalar float32 1.))

let views_share () =
  let x = arange int32 0 12 1 in
  let m = reshape [| 3; 4 |] x in
  List.iter
    (fun (name, v) -> if not (shares x v) then Alcotest.failf "%s copied" name)
    [ ("reshape", m); ("transpose", transpose m); ("flip", flip m); ("slice", slice [ Rs (2, 0, -1); I 1 ] m);
      ("broadcast_to", broadcast_to [| 2; 3; 4 |] m); ("squeeze", squeeze (reshape [| 1; 12 |] x));
      ("unsqueeze", unsqueeze ~axes:[ 0 ] x); ("get", get [ 1 ] m); ("shrink", shrink [| (1, 2); (0, 4) |] m);
      ("diagonal", diagonal m); ("moveaxis", moveaxis 0 1 m); ("ravel", ravel m);
      ("flatten", flatten m); ("array_split", List.hd (array_split ~axis:1 (`Count 3) m));
      ("expand", expand [| 2; -1; -1 |] m); ("slice L evenly", slice [ A; L [ 3; 1 ] ] m) ];
  (* a broadcast axis is stride 0; the operand of a broadcast sum is not copied *)
  Alcotest.(check (list int)) "stride 0" [ 0; 16; 4 ] (Array.to_list (strides (broadcast_to [| 2; 3; 4 |] m)));
  let col = slice [ A; R (0, 1) ] m in
  Alcotest.(check (list int)) "stride 0 operand" [ 16; 0 ] (Array.to_list (strides (broadcast_to [| 3; 4 |] col)));
  check_ints "broadcast sum" [ 0; 1; 2; 3; 8; 9; 10; 11; 16; 17; 18; 19 ] (add m col);
  (* writes through a view are seen by the base *)
  set_slice [ I 0 ] m (i32 [||] [ 7 ]);
  check_ints "written" [ 7; 7; 7; 7 ] (get [ 0 ] m);
  set_item [ 0 ] 0l x;
  Alcotest.(check int32) "item" 0l (item [ 0; 0 ] m);
  (* a bigarray is shared *)
  let ba = Bigarray.Genarray.create Bigarray.float64 Bigarray.c_layout [| 2; 2 |] in
  Bigarray.Genarray.fill ba 1.;
  let t = of_bigarray ba in
  set_item [ 1; 1 ] 5. t;
  Alcotest.(check (float 0.)) "of_bigarray shares" 5. (Bigarray.Genarray.get ba [| 1; 1 |]);
  let back = to_bigarray t in
  set_item [ 0; 0 ] 9. t;
  Alcotest.(check (float 0.)) "to_bigarray copies" 1. (Bigarray.Genarray.get back [| 0; 0 |]);
  Alcotest.(check bool) "to_buffer shares when contiguous" true (shares t (to_buffer t));
  Alcotest.(check bool) "to_buffer copies otherwise" false (shares t (to_buffer (transpose t)));
  check_floats "to_buffer order" [ 9.; 1.; 1.; 5. ] (to_buffer (transpose t));
  check_floats "of_buffer" [ 9.; 1.; 1.; 5. ] (of_buffer (data t) ~shape:[| 4 |]);
  shape_is "of_buffer shape" [ 2; 2 ] (of_buffer (to_buffer t) ~shape:[| 2; 2 |])

let creation () =
  check_ints "eye m k: n rows, m columns" [ 0; 0; 1; 0; 0; 1 ] (eye ~m:2 ~k:(-1) int32 3);
  shape_is "eye m" [ 3; 2 ] (eye ~m:2 int32 3);
  check_ints "arange down" [ 5; 3; 1 ] (arange int32 5 0 (-2));
  check_ints "arange empty" [] (arange int32 0 0 1);
  let l = linspace float64 0. 1. 7 in
  Alcotest.(check (float 0.)) "linspace endpoint exact" 1. (item [ 6 ] l);
  check_floats "arange_f down" [ 1.; 0.75; 0.5; 0.25 ] (arange_f float64 1. 0. (-0.25));
  check_floats "geomspace ends" [ 2.; 2000. ] (slice [ L [ 0; 3 ] ] (geomspace float64 2. 2000. 4));
  Alcotest.(check (list int)) "one_hot out of range" [ 0; 1; 0; 0; 0; 0 ]
    (Array.to_list (to_array (one_hot ~num_classes:3 (create int64 [| 2 |] [| 1L; 7L |]))));
  let m = reshape [| 3; 3 |] (arange int32 1 10 1) in
  check_ints "tril" [ 1; 0; 0; 4; 5; 0; 7; 8; 9 ] (tril m);
  check_ints "triu k" [ 0; 2; 3; 0; 0; 6; 0; 0; 0 ] (triu ~k:1 m);
  check_ints "diag k" [ 2; 6 ] (diag ~k:1 m);
  check_ints "diag of 1-D k<0" [ 0; 0; 0; 1; 0; 0; 0; 2; 0 ] (diag ~k:(-1) (i32 [| 2 |] [ 1; 2 ]));
  check_ints "full" [ 3; 3 ] (full int32 [| 2 |] 3l);
  check_bools "ones bool" [ true ] (ones bool [| 1 |]);
  Alcotest.(check (list (float 0.))) "complex ones" [ 1.; 0. ]
    (let c = item [] (ones complex64 [||]) in [ c.Complex.re; c.im ]);
  let a, b = meshgrid ~indexing:`ij (i32 [| 2 |] [ 1; 2 ]) (i32 [| 3 |] [ 5; 6; 7 ]) in
  check_ints "meshgrid ij x" [ 1; 1; 1; 2; 2; 2 ] a;
  check_ints "meshgrid ij y" [ 5; 6; 7; 5; 6; 7 ] b;
  check_ints "init" [ 0; 10; 1; 11 ] (init int32 [| 2; 2 |] (fun i -> Int32.of_int (i.(0) + (10 * i.(1)))));
  check_floats "fill" [ 2.; 2. ] (fill 2. (f32 [| 2 |] [ 1.; 1. ]))

let shapes () =
  let m = reshape [| 2; 3 |] (arange int32 0 6 1) in
  check_ints "reshape of a view that allows it" [ 0; 3; 1; 4; 2; 5 ] (reshape [| 6 |] (contiguous (transpose m)));
  shape_is "reshape a slice" [ 3 ] (reshape [| 3 |] (slice [ I 1 ] m));
  shape_is "reshape a broadcast keeping its axis" [ 4; 1; 3 ] (reshape [| 4; 1; 3 |] (broadcast_to [| 4; 3 |] (i32 [| 3 |] [ 1; 2; 3 ])));
  check_ints "roll axis" [ 2; 0; 1; 5; 3; 4 ] (roll ~axis:1 1 m);
  check_ints "roll flat back" [ 1; 2; 3; 4; 5; 0 ] (roll (-1) m);
  shape_is "roll keeps shape" [ 2; 3 ] (roll 1 m);
  check_ints "pad" [ 9; 9; 9; 9; 9; 0; 1; 2; 9; 3; 4; 5 ] (pad [| (1, 0); (1, 0) |] 9l m |> ravel);
  check_ints "tile" [ 0; 1; 2; 0; 1; 2 ] (tile [| 2 |] (i32 [| 3 |] [ 0; 1; 2 ]));
  shape_is "tile prepends" [ 2; 2; 6 ] (tile [| 2; 1; 2 |] m);
  check_ints "repeat axis" [ 0; 1; 2; 0; 1; 2; 3; 4; 5; 3; 4; 5 ] (repeat ~axis:0 2 m);
  check_ints "concatenate flat" [ 0; 1; 2; 3; 4; 5; 7 ] (concatenate [ m; i32 [| 1 |] [ 7 ] ]);
  check_ints "hstack 1-D" [ 1; 2; 3 ] (hstack [ i32 [| 2 |] [ 1; 2 ]; i32 [| 1 |] [ 3 ] ]);
  shape_is "dstack" [ 1; 2; 2 ] (dstack [ i32 [| 2 |] [ 1; 2 ]; i32 [| 2 |] [ 3; 4 ] ]);
  check_ints "stack -1" [ 0; 10; 1; 11 ] (stack ~axis:(-1) [ i32 [| 2 |] [ 0; 1 ]; i32 [| 2 |] [ 10; 11 ] ]);
  Alcotest.(check (list (list int))) "array_split indices" [ [ 0; 1 ]; [ 2; 3 ]; [ 4; 5 ] ]
    (List.map ints (array_split ~axis:0 (`Indices [ 2; 4 ]) (arange int32 0 6 1)));
  Alcotest.(check (list (list int))) "split" [ [ 0; 1; 2 ]; [ 3; 4; 5 ] ] (List.map ints (split ~axis:0 2 m));
  shape_is "moveaxis" [ 3; 4; 2 ] (moveaxis 0 (-1) (zeros int8 [| 2; 3; 4 |]));
  shape_is "swapaxes" [ 4; 3; 2 ] (swapaxes 0 2 (zeros int8 [| 2; 3; 4 |]));
  shape_is "unflatten -1" [ 3; 2; 5 ] (unflatten 0 [| -1; 2 |] (zeros int8 [| 6; 5 |]));
  shape_is "flatten scalar" [ 1 ] (flatten (scalar int8 1));
  check_ints "flatten copies where it must" [ 0; 3; 1; 4; 2; 5 ] (flatten (transpose m));
  Alcotest.(check bool) "flatten is a view where it can" true (shares m (flatten ~start_dim:1 m));
  let a, b = broadcasted ~reverse:true (zeros int8 [| 3; 1 |]) (zeros int8 [| 5 |]) in
  shape_is "broadcasted" [ 3; 5 ] a;
  shape_is "broadcasted" [ 3; 5 ] b;
  Alcotest.(check (list (list int))) "broadcast_arrays" [ [ 2; 3; 4 ]; [ 2; 3; 4 ] ]
    (List.map (fun t -> Array.to_list (shape t)) (broadcast_arrays [ scalar float32 5.; ones float32 [| 2; 3; 4 |] ]))

let indexing () =
  let m = reshape [| 3; 4 |] (arange int32 0 12 1) in
  check_ints "negative step" [ 11; 9; 7; 5 ] (slice [ Rs (-1, 0, -1); Rs (-1, 0, -2) ] m |> contiguous |> ravel);
  check_ints "clamped range" [ 8; 9; 10; 11 ] (slice [ R (2, 100) ] m);
  check_ints "gather copy" [ 3; 0; 3; 7; 4; 7 ] (slice [ R (0, 2); L [ 3; 0; -1 ] ] m);
  check_ints "two gathers" [ 11; 8; 3; 0 ] (slice [ L [ 2; 0 ]; L [ 3; 0 ] ] m);
  shape_is "new axes" [ 1; 3; 1; 4 ] (slice [ N; A; N ] m);
  check_ints "get negative" [ 8; 9; 10; 11 ] (get [ -1 ] m);
  let t = zeros int32 [| 3; 4 |] in
  set_slice [ L [ 2; 0 ]; R (1, 3) ] t (i32 [| 2; 2 |] [ 1; 2; 3; 4 ]);
  check_ints "set_slice gather" [ 0; 3; 4; 0; 0; 0; 0; 0; 0; 1; 2; 0 ] t;
  set_slice [ A; I 0 ] t (i32 [||] [ 9 ]);
  check_ints "set_slice broadcast" [ 9; 9; 9 ] (slice [ A; I 0 ] t);
  set [ 1 ] t (i32 [| 4 |] [ 5; 6; 7; 8 ]);
  check_ints "set" [ 5; 6; 7; 8 ] (get [ 1 ] t);
  let open Infix in
  check_ints "infix get" [ 4; 5; 6; 7 ] m.%{[ 1 ]};
  check_ints "infix slice" [ 1; 5; 9 ] m.${[ A; I 1 ]}

let elementwise () =
  let x = i32 [| 3 |] [ 7; -8; 9 ] and two = i32 [||] [ 2 ] in
  check_ints "div" [ 3; -4; 4 ] (div x two);
  check_ints "mod_ has the divisor's sign" [ 1; 0; 1 ] (mod_ x two);
  check_ints "rmod_s" [ 3; -5; 3 ] (rmod_s 3l x);
  check_ints "rsub_s" [ 3; 18; 1 ] (rsub_s 10l x);
  check_ints "rdiv_s" [ 2; -2; 2 ] (rdiv_s 18l x);
  check_ints "maximum_s" [ 7; 0; 9 ] (maximum_s x 0l);
  check_ints "rminimum_s" [ 0; -8; 0 ] (rminimum_s 0l x);
  check_ints "clamp" [ 5; -2; 5 ] (clamp ~min:(-2l) ~max:5l x);
  check_ints "clip min" [ 7; 0; 9 ] (clip ~min:0l x);
  check_ints "abs" [ 7; 8; 9 ] (abs x);
  check_ints "neg" [ -7; 8; -9 ] (neg x);
  check_ints "square" [ 49; 64; 81 ] (square x);
  check_ints "sign" [ 1; -1; 1 ] (sign x);
  check_ints "rshift arithmetic" [ 1; -2; 2 ] (rshift x 2);
  check_ints "bitwise" [ 6; 0; 8 ] (bitwise_and x (i32 [| 3 |] [ 6; 7; 8 ]));
  check_ints "bitwise_not" [ -8; 7; -10 ] (bitwise_not x);
  check_ints "logical_not" [ 0; 1 ] (logical_not (i32 [| 2 |] [ 5; 0 ]));
  check_ints "logical_and" [ 1; 0; 0 ] (logical_and (i32 [| 3 |] [ 5; 0; 2 ]) (i32 [| 3 |] [ 3; 1; 0 ]));
  check_ints "logical_xor" [ 0; 1; 1 ] (logical_xor (i32 [| 3 |] [ 5; 0; 2 ]) (i32 [| 3 |] [ 3; 1; 0 ]));
  check_bools "isnan of ints" [ false; false; false ] (isnan x);
  check_bools "isfinite of ints" [ true; true; true ] (isfinite x);
  check_ints "round of ints" [ 7; -8; 9 ] (round x);
  let f = f32 [| 4 |] [ 1.; -0.5; Float.nan; 4. ] in
  check_bools "isnan" [ false; false; true; false ] (isnan f);
  check_bools "less_s" [ true; true; false; false ] (less_s f 2.);
  check_bools "not_equal nan" [ false; false; true; false ] (not_equal f f);
  check_floats "pow_s" [ 1.; 0.25; 16. ] (pow_s (f32 [| 3 |] [ 1.; -0.5; 4. ]) 2.);
  check_floats "rpow_s" [ 2.; 0.5 ] (rpow_s 2. (f32 [| 2 |] [ 1.; -1. ]));
  check_floats "floor" [ 2.; -3. ] (floor (f32 [| 2 |] [ 2.5; -2.5 ]));
  check_floats "ceil" [ 3.; -2. ] (ceil (f32 [| 2 |] [ 2.5; -2.5 ]));
  check_floats "trunc" [ 2.; -2. ] (trunc (f32 [| 2 |] [ 2.5; -2.5 ]));
  check_floats "sqrt" [ 3.; 0.5 ] (sqrt (f32 [| 2 |] [ 9.; 0.25 ]));
  check_floats "recip" [ 0.5; -4. ] (recip (f32 [| 2 |] [ 2.; -0.25 ]));
  check_floats "exp2" [ 8.; 0.5 ] (exp2 (f64 [| 2 |] [ 3.; -1. ]));
  check_floats "log2" [ 3.; -1. ] (log2 (f64 [| 2 |] [ 8.; 0.5 ]));
  Alcotest.(check (float 1e-12)) "atan2 y x" (Float.pi /. 2.) (item [] (atan2 (scalar float64 1.) (scalar float64 0.)));
  Alcotest.(check (float 1e-12)) "atan2 quadrant" (-3. *. Float.pi /. 4.) (item [] (atan2 (scalar float64 (-1.)) (scalar float64 (-1.))));
  check_floats "lerp_scalar_weight" [ 2.; 3.5 ] (lerp_scalar_weight (f32 [| 2 |] [ 1.; 2. ]) (f32 [| 2 |] [ 5.; 8. ]) 0.25);
  check_ints "where broadcast" [ 1; 1; 0; 0 ]
    (where (create bool [| 2; 1 |] [| true; false |]) (i32 [| 2 |] [ 1; 1 ]) (i32 [||] [ 0 ]));
  let c = create complex64 [| 1 |] [| { Complex.re = 3.; im = 4. } |] in
  Alcotest.(check (float 0.)) "complex abs" 5. (item [ 0 ] (abs c)).re;
  Alcotest.(check (float 0.)) "conjugate" (-4.) (item [ 0 ] (conjugate c)).im;
  let open Infix in
  check_ints "infix" [ 15; -15; 19 ] ((x * two) +$ 1l);
  check_bools "infix compare" [ true; false; true ] (x >$ 0l)

let reductions () =
  let m = reshape [| 2; 3 |] (arange int32 1 7 1) in
  check_ints "sum axes" [ 5; 7; 9 ] (sum ~axes:[ 0 ] m);
  check_ints "sum -1 keepdims" [ 6; 15 ] (sum ~axes:[ -1 ] ~keepdims:true m);
  shape_is "keepdims shape" [ 2; 1 ] (sum ~axes:[ -1 ] ~keepdims:true m);
  shape_is "keepdims all" [ 1; 1 ] (sum ~keepdims:true m);
  check_ints "prod" [ 6; 120 ] (prod ~axes:[ 1 ] m);
  check_ints "max" [ 4; 5; 6 ] (max ~axes:[ 0 ] m);
  check_ints "min" [ 1 ] (min ~keepdims:true (ravel m));
  check_ints "sum of no axes" [ 1; 2; 3; 4; 5; 6 ] (sum ~axes:[] m |> ravel);
  check_ints "sum of nothing" [ 0 ] (sum (zeros int32 [| 0 |]) |> reshape [| 1 |]);
  check_bools "all of nothing" [ true ] (all (zeros int32 [| 0 |]) |> reshape [| 1 |]);
  check_bools "any of nothing" [ false ] (any (zeros int32 [| 0 |]) |> reshape [| 1 |]);
  check_bools "any axes" [ false; true ] (any ~axes:[ 1 ] (i32 [| 2; 2 |] [ 0; 0; 0; 1 ]));
  check_bools "all of floats" [ false ] (all (f32 [| 2 |] [ 1.; 0. ]) |> reshape [| 1 |]);
  check_floats "mean axes" [ 2.; 5. ] (mean ~axes:[ 1 ] (cast float32 m));
  check_ints "mean of ints rounds toward zero" [ 2; 5 ] (mean ~axes:[ 1 ] m);
  check_floats "var" [ 2.25 ] (var ~axes:[ 0 ] (f64 [| 2 |] [ 1.; 4. ]));
  check_floats "std ddof" [ Float.sqrt 4.5 ] (std ~ddof:1 ~axes:[ 0 ] (f64 [| 2 |] [ 1.; 4. ]));
  check_ints "std of ints, rounded toward zero" [ 2; 1 ] (stack [ std (i32 [| 2 |] [ 0; 5 ]); std (i32 [| 5 |] [ 1; 2; 3; 4; 5 ]) ]);
  check_bools "std of bools" [ false ] (std (create bool [| 2 |] [| true; true |]) |> reshape [| 1 |]);
  let c = create complex128 [| 2 |] [| { Complex.re = 1.; im = 1. }; { Complex.re = -1.; im = -1. } |] in
  Alcotest.(check (list (float 1e-15))) "complex var" [ 2.; 0. ] (let v = item [] (var c) in [ v.re; v.im ]);
  Alcotest.(check (float 1e-15)) "complex std ddof" 2. (item [] (std ~ddof:1 c)).re;
  Alcotest.(check bool) "max nan" true (Float.is_nan (item [] (max (f32 [| 3 |] [ 1.; Float.nan; 3. ]))));
  check_ints "argmax axis" [ 2; 2 ] (argmax ~axis:1 m);
  check_ints "argmin ties first" [ 1 ] (argmin (i32 [| 4 |] [ 3; 1; 2; 1 ]) |> reshape [| 1 |]);
  check_ints "argmax flattened" [ 5 ] (argmax m |> reshape [| 1 |]);
  shape_is "argmax keepdims" [ 2; 1 ] (argmax ~axis:1 ~keepdims:true m);
  check_ints "cumsum axis" [ 1; 2; 3; 5; 7; 9 ] (cumsum ~axis:0 m);
  check_ints "cumsum flat" [ 1; 3; 6; 10; 15; 21 ] (cumsum m);
  shape_is "cumsum flat shape" [ 6 ] (cumsum m);
  check_ints "cumprod" [ 1; 2; 6; 4; 20; 120 ] (cumprod ~axis:1 m);
  check_ints "cummax" [ 3; 3; 5 ] (cummax (i32 [| 3 |] [ 3; 1; 5 ]));
  Alcotest.(check (list bool)) "cummax: NaN from the first NaN on" [ false; true; true ]
    (List.map Float.is_nan (floats (cummax (f32 [| 3 |] [ 1.; Float.nan; 3. ]))));
  Alcotest.(check bool) "mean: NaN propagates" true (Float.is_nan (item [] (mean (f32 [| 2 |] [ 1.; Float.nan ]))));
  check_ints "cummin" [ 3; 1; 1 ] (cummin (i32 [| 3 |] [ 3; 1; 5 ]));
  Alcotest.(check bool) "array_equal shapes" false (item [] (array_equal m (ravel m)));
  Alcotest.(check bool) "array_equal" true (item [] (array_equal m (copy m)))

(* The bits of a sum are the kernel's: the same through a transposed view. *)
let kernel_bits () =
  let n = 3000 in
  let x = init float32 [| 3; n |] (fun i -> Float.of_int ((i.(1) * 7919) mod 1013) /. 17. -. 29.) in
  let t = contiguous (transpose x) in
  let a = sum ~axes:[ 1 ] x and b = sum ~axes:[ 0 ] t in
  Alcotest.(check (list int64)) "bits" (List.map Int64.bits_of_float (floats a)) (List.map Int64.bits_of_float (floats b));
  let z = Nx_array.create Nx_array.Dtype.Float32 [| 3 |] in
  let p = Nx_kernel.Prog.of_node (Nx_kernel.Prog.Op1 (Nx_kernel.Prog.Cast (Nx_array.Dtype.Any Nx_array.Dtype.Float32), 0)) [| Nx_array.Dtype.Any Nx_array.Dtype.Float32 |] in
  ignore
    (Nx_cpu.reduce p ~shape:(Iarray.of_list [ 3; n ]) ~axes:(Iarray.of_list [ 1 ])
       (Iarray.of_list [ (Nx_kernel.Monoid Nx_kernel.Sum, 0) ])
       ~dsts:(Iarray.of_list [ Nx_array.Any z ]) (Iarray.of_list [ Nx_kernel.Plain (Nx_array.Any x) ]));
  Alcotest.(check (list int64)) "the kernel's" (List.map Int64.bits_of_float (floats a)) (List.map Int64.bits_of_float (floats z))

let printing () =
  let s = to_string in
  Alcotest.(check string) "scalar" "5" (s (scalar int32 5l));
  Alcotest.(check string) "vector" "[1, 2.5]" (s (f32 [| 2 |] [ 1.; 2.5 ]));
  Alcotest.(check string) "empty" "[]" (s (zeros float32 [| 0 |]));
  Alcotest.(check string) "bool" "[true, false]" (s (create bool [| 2 |] [| true; false |]));
  Alcotest.(check string) "special floats" "[nan, inf, -inf, -0]" (s (f64 [| 4 |] [ Float.nan; Float.infinity; Float.neg_infinity; -0. ]));
  Alcotest.(check string) "complex" "[1-2i]" (s (create complex128 [| 1 |] [| { Complex.re = 1.; im = -2. } |]));
  Alcotest.(check string) "uint64" "[18446744073709551615]" (s (create uint64 [| 1 |] [| -1L |]));
  Alcotest.(check string) "3-D" "int32 [2; 1; 2] [[[0, 1]],\n                 [[2, 3]]]" (s (reshape [| 2; 1; 2 |] (arange int32 0 4 1)));
  Alcotest.(check string) "elided rows"
    "int32 [6; 1] [[0],\n              [1],\n              ...,\n              [4],\n              [5]]"
    (s (reshape [| 6; 1 |] (arange int32 0 6 1)));
  Alcotest.(check string) "long row" "int32 [1000] [0, 1, ..., 998, 999]" (s (arange int32 0 1000 1))

let products () =
  check_ints "kron" [ 0; 5; 0; 10; 6; 7; 12; 14; 0; 15; 0; 20; 18; 21; 24; 28 ]
    (kron (i32 [| 2; 2 |] [ 1; 2; 3; 4 ]) (i32 [| 2; 2 |] [ 0; 5; 6; 7 ]));
  shape_is "kron ranks" [ 2; 6 ] (kron (i32 [| 3 |] [ 1; 2; 3 ]) (i32 [| 2; 2 |] [ 1; 0; 0; 1 ]));
  check_ints "cross" [ -3; 6; -3; 0; 0; 1 ]
    (cross (i32 [| 2; 3 |] [ 1; 2; 3; 1; 0; 0 ]) (i32 [| 2; 3 |] [ 4; 5; 6; 0; 1; 0 ]));
  check_ints "cross axis 0, broadcast" [ 0; 0; 1 ] (cross ~axis:0 (i32 [| 3 |] [ 1; 0; 0 ]) (i32 [| 3 |] [ 0; 1; 0 ]));
  raises_named "cross" (fun () -> cross (i32 [| 2 |] [ 1; 2 ]) (i32 [| 2 |] [ 1; 2 ]));
  check_ints "outer" [ 3; 4; 6; 8 ] (outer (i32 [| 2 |] [ 1; 2 ]) (i32 [| 2 |] [ 3; 4 ]))

let random () =
  let n = 200_000 in
  let u = Rng.run ~seed:7 (fun () -> rand float32 [| n |]) in
  Alcotest.(check bool) "in [0, 1)" true (item [] (all (less_s u 1.)) && item [] (all (greater_equal_s u 0.)));
  Alcotest.(check (float 0.01)) "uniform mean" 0.5 (item [] (mean u));
  Alcotest.(check (float 0.01)) "uniform variance" (1. /. 12.) (item [] (var u));
  let again = Rng.run ~seed:7 (fun () -> rand float32 [| n |]) in
  Alcotest.(check bool) "a seed repeats" true (item [] (array_equal u again));
  Nx_cpu.set_threads 1;
  let one = Rng.run ~seed:7 (fun () -> rand float32 [| n |]) in
  Nx_cpu.set_threads 3;
  Alcotest.(check bool) "whatever the threads" true (item [] (array_equal u one));
  Nx_cpu.set_threads 2;
  let other = Rng.run ~seed:8 (fun () -> rand float32 [| n |]) in
  Alcotest.(check bool) "another seed differs" false (item [] (array_equal u other));
  let k1, k2 = Rng.run ~seed:1 (fun () -> (Rng.next_key (), Rng.next_key ())) in
  Alcotest.(check bool) "next keys differ" true (k1 <> k2);
  let z = Rng.run ~seed:3 (fun () -> randn float64 [| n |]) in
  Alcotest.(check (float 0.01)) "normal mean" 0. (item [] (mean z));
  Alcotest.(check (float 0.01)) "normal std" 1. (item [] (std z));
  let r = Rng.run ~seed:4 (fun () -> randint int32 ~high:7 [| n |] (-3)) in
  check_ints "randint range" [ -3; 6 ] (stack [ min r; max r ]);
  let b = Rng.run ~seed:5 (fun () -> bernoulli ~p:0.3 [| n |]) in
  Alcotest.(check (float 0.01)) "bernoulli" 0.3 (item [] (mean (cast float64 b)));
  check_bools "bernoulli 0" [ false ] (any (bernoulli ~p:0. [| 100 |]) |> reshape [| 1 |]);
  let logits = create float32 [| 2 |] [| 0.; Float.log 3. |] in
  let c = Rng.run ~seed:6 (fun () -> categorical ~shape:[| n |] logits) in
  shape_is "categorical shape" [ n ] c;
  Alcotest.(check (float 0.01)) "categorical" 0.75 (item [] (mean (cast float64 c)));
  let t = Rng.run ~seed:9 (fun () -> truncated_normal float64 ~lower:(-1.) ~upper:2. [| n |]) in
  Alcotest.(check bool) "truncated within bounds" true
    (item [] (all (greater_equal_s t (-1.))) && item [] (all (less_equal_s t 2.)));
  (* the mean of the standard normal truncated to [a, b]: (φ(a) - φ(b)) / (Φ(b) - Φ(a)) *)
  let pdf x = Float.exp (-.x *. x /. 2.) /. Float.sqrt (2. *. Float.pi) and cdf x = 0.5 *. (1. +. Float.erf (x /. Float.sqrt 2.)) in
  Alcotest.(check (float 0.01)) "truncated mean" ((pdf (-1.) -. pdf 2.) /. (cdf 2. -. cdf (-1.))) (item [] (mean t));
  let tail = Rng.run ~seed:10 (fun () -> truncated_normal float64 ~lower:4. ~upper:5. [| n |]) in
  Alcotest.(check (float 0.01)) "truncated tail mean" ((pdf 4. -. pdf 5.) /. (cdf 5. -. cdf 4.)) (item [] (mean tail));
  Alcotest.(check bool) "tail within bounds" true (item [] (all (greater_equal_s tail 4.)) && item [] (all (less_equal_s tail 5.)));
  raises_named "truncated_normal" (fun () -> truncated_normal float32 ~lower:1. ~upper:1. [| 2 |]);
  raises_named "rand" (fun () -> rand int32 [| 2 |]);
  raises_named "randint" (fun () -> randint int32 ~high:1 [| 2 |] 1);
  raises_named "bernoulli" (fun () -> bernoulli ~p:2. [| 2 |])

(* Every dtype builds, copies, casts, reduces and prints. *)
let every_dtype () =
  List.iter
    (fun (Nx_array.Dtype.Any d) ->
      let name = Nx_array.Dtype.name d in
      let o = ones d [| 2; 3 |] in
      let back = cast float64 (copy (transpose o)) in
      Alcotest.(check (list (float 0.))) (name ^ " ones") [ 1.; 1.; 1.; 1.; 1.; 1. ] (floats back);
      Alcotest.(check (list (float 0.))) (name ^ " zeros") [ 0.; 0. ] (floats (cast float64 (zeros d [| 2 |])));
      let s = cast float64 (sum ~axes:[ 0 ] o) in
      let want = if Nx_array.Dtype.equal d Nx_array.Dtype.Bool || Nx_array.Dtype.equal d Nx_array.Dtype.Bit then 1. else 2. in
      Alcotest.(check (list (float 0.))) (name ^ " sum") [ want; want; want ] (floats s);
      Alcotest.(check int) (name ^ " to_array") 6 (Array.length (to_array o));
      Alcotest.(check bool) (name ^ " prints") true (String.length (to_string (slice [ A; Rs (2, -4, -1) ] o)) > 0);
      Alcotest.(check (list int)) (name ^ " views") [ 3; 2 ] (Array.to_list (shape (transpose o))))
    Nx_array.Dtype.all

(* Nx over a kernel library that counts its calls: elementwise functions
   make one map call, reductions one reduce, views none. *)
module Counting = struct
  include Nx_cpu

  let maps = ref 0
  let reduces = ref 0
  let scans = ref 0

  let map p ~dsts loads =
    incr maps;
    Nx_cpu.map p ~dsts loads

  let reduce p ~shape ~axes rs ~dsts loads =
    incr reduces;
    Nx_cpu.reduce p ~shape ~axes rs ~dsts loads

  let scan ?carry p ~axis r ~dsts loads =
    incr scans;
    Nx_cpu.scan ?carry p ~axis r ~dsts loads

  (* gathers, scatters, sorts and contractions, in that order *)
  let moves = Array.make 4 0

  let gather ~axis ~dst idx x =
    moves.(0) <- moves.(0) + 1;
    Nx_cpu.gather ~axis ~dst idx x

  let scatter c ~unique ~axis ~dst ~into idx u =
    moves.(1) <- moves.(1) + 1;
    Nx_cpu.scatter c ~unique ~axis ~dst ~into idx u

  let sort ~axis ~descending ~values ~positions x =
    moves.(2) <- moves.(2) + 1;
    Nx_cpu.sort ~axis ~descending ~values ~positions x

  let contract ~batch ~contracting ~segments ~acc ~dst ~init a b =
    moves.(3) <- moves.(3) + 1;
    Nx_cpu.contract ~batch ~contracting ~segments ~acc ~dst ~init a b
end

module Counted = Nx_frontend.Make (Counting)

let calls () =
  let a = Counted.create Counted.float32 [| 2; 3 |] [| 1.; 2.; 3.; 4.; 5.; 6. |] in
  let row = Counted.create Counted.float32 [| 3 |] [| 1.; 2.; 3. |] in
  let count name f want =
    Counting.maps := 0;
    Counting.reduces := 0;
    Counting.scans := 0;
    Array.fill Counting.moves 0 4 0;
    ignore (f ());
    let got = [ !Counting.maps; !Counting.reduces; !Counting.scans ] @ Array.to_list Counting.moves in
    let want = if List.length want = 3 then want @ [ 0; 0; 0; 0 ] else want in
    Alcotest.(check (list int)) (name ^ ": maps, reduces, scans, gathers, scatters, sorts, contractions") want got
  in
  let idx = Counted.create Counted.int32 [| 2 |] [| 1l; 0l |] in
  count "add with a broadcast row" (fun () -> Counted.add a row) [ 1; 0; 0 ];
  count "where" (fun () -> Counted.where (Counted.greater a a) a row) [ 2; 0; 0 ];
  count "add_s" (fun () -> Counted.add_s a 1.) [ 1; 0; 0 ];
  count "lerp" (fun () -> Counted.lerp a a a) [ 1; 0; 0 ];
  count "clamp" (fun () -> Counted.clamp ~min:0. ~max:1. a) [ 1; 0; 0 ];
  count "sum" (fun () -> Counted.sum ~axes:[ 1 ] ~keepdims:true a) [ 0; 1; 0 ];
  count "mean" (fun () -> Counted.mean a) [ 0; 1; 0 ];
  count "cumsum" (fun () -> Counted.cumsum ~axis:1 a) [ 0; 0; 1 ];
  count "arange" (fun () -> Counted.arange Counted.int32 0 10 1) [ 1; 0; 0 ];
  count "eye" (fun () -> Counted.eye Counted.float32 3) [ 1; 0; 0 ];
  count "rand" (fun () -> Counted.rand Counted.float32 [| 4 |]) [ 1; 0; 0 ];
  count "views"
    (fun () ->
      Counted.slice [ Counted.R (0, 1); Counted.Rs (2, -4, -1) ]
        (Counted.transpose (Counted.reshape [| 3; 2 |] (Counted.broadcast_to [| 2; 3 |] row |> Counted.contiguous |> Counted.flip))))
    [ 1; 0; 0 ];
  count "matmul of a transposed view" (fun () -> Counted.matmul a (Counted.transpose a)) [ 0; 0; 0; 0; 0; 0; 1 ];
  count "matmul, batch broadcast" (fun () -> Counted.matmul (Counted.reshape [| 1; 2; 3 |] a) (Counted.broadcast_to [| 4; 3; 2 |] (Counted.transpose a)))
    [ 0; 0; 0; 0; 0; 0; 1 ];
  count "take: bounds by one reduce, positions by one map" (fun () -> Counted.take ~axis:1 idx a) [ 1; 1; 0; 1; 0; 0; 0 ];
  count "take, wrapped" (fun () -> Counted.take ~mode:`wrap idx a) [ 1; 0; 0; 1; 0; 0; 0 ];
  count "scatter" (fun () -> Counted.scatter ~axis:0 ~indices:(Counted.reshape [| 2; 1 |] idx) ~values:row a) [ 1; 1; 0; 0; 1; 0; 0 ];
  count "sort" (fun () -> Counted.sort a) [ 1; 0; 0; 0; 0; 1; 0 ];
  count "compress" (fun () -> Counted.compress ~axis:1 ~condition:(Counted.create Counted.bool [| 3 |] [| true; false; true |]) a)
    [ 2; 0; 1; 1; 1; 0; 0 ];
  count "refused before any kernel" (fun () -> try ignore (Counted.add a (Counted.ones Counted.float32 [| 4 |])) with Invalid_argument _ -> ()) [ 1; 0; 0 ]

(* Programs that differ only in a constant's bits, a kind, a dtype or
   their operands' order are told apart by the cache of programs, the
   second time round too. *)
let programs_told_apart () =
  let sign t = Array.to_list (Array.map (fun x -> Int64.bits_of_float x < 0L) (to_array t)) in
  let z = f64 [| 2 |] [ -0.; -0. ] in
  let bits msg want t = Alcotest.(check (list bool)) msg want (sign t) in
  for _ = 1 to 2 do
    bits "-0 + +0" [ false; false ] (add_s z 0.);
    bits "-0 + -0" [ true; true ] (add_s z (-0.));
    let a = f32 [| 2 |] [ 3.; 5. ] and b = f32 [| 2 |] [ 2.; 7. ] in
    check_floats "add" [ 5.; 12. ] (add a b);
    check_floats "mul" [ 6.; 35. ] (mul a b);
    check_floats "sub" [ 1.; -2. ] (sub a b);
    check_floats "sub, swapped" [ -1.; 2. ] (sub b a);
    check_ints "add int32" [ 5; 12 ] (add (i32 [| 2 |] [ 3; 5 ]) (i32 [| 2 |] [ 2; 7 ]));
    check_floats "astype float64" [ 3.; 5. ] (astype float64 a);
    check_ints "astype int32" [ 3; 5 ] (astype int32 a)
  done;
  (* NaN constants of two payloads, each found again with its own bits;
     and more programs than a domain keeps (1024), each right after the
     cache starts afresh. *)
  let nan_with p = Int64.float_of_bits (Int64.logor 0x7FF8_0000_0000_0000L p) in
  let first_bits t = Int64.bits_of_float (to_array t).(0) in
  for _ = 1 to 2 do
    List.iter
      (fun p -> Alcotest.(check int64) "a NaN constant's payload" (Int64.bits_of_float (nan_with p)) (first_bits (full float64 [| 1 |] (nan_with p))))
      [ 1L; 2L; 3L ]
  done;
  for i = 0 to 1100 do
    let x = float i in
    if (to_array (full float64 [| 1 |] x)).(0) <> x then Alcotest.failf "full %g" x
  done

let tests =
  [ ("errors name their function", `Quick, errors); ("properties", `Quick, properties);
    ("views share memory", `Quick, views_share); ("creation", `Quick, creation); ("shapes", `Quick, shapes);
    ("indexing", `Quick, indexing); ("elementwise", `Quick, elementwise); ("reductions and scans", `Quick, reductions);
    ("a sum's bits are the kernel's", `Quick, kernel_bits); ("printing", `Quick, printing);
    ("kron, cross, outer", `Quick, products); ("random numbers", `Quick, random);
    ("every dtype", `Quick, every_dtype); ("kernel calls", `Quick, calls);
    ("programs told apart", `Quick, programs_told_apart) ]
