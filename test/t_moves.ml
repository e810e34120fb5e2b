(* Nx_cpu.gather, scatter and assemble against the same moves by hand, one
   element at a time, over Support's awkward layouts (transposed, reversed,
   broadcast sources, offsets) and a sub-byte dtype; refusals before any
   write. The Rust tests cover every dtype and thread count; these check
   the boundary: the words each call is described in, and its answers. *)

open Nx_array
module K = Nx_kernel

let idx_of shape f = init Dtype.Int64 shape (fun i -> f i)

let vector d l =
  let a = Array.of_list l in
  init d [| Array.length a |] (fun i -> a.(i.(0)))

let gather_case (type v s) (d : (v, s) Dtype.t) eq () =
  let xs = [| 4; 3 |] and shape = [| 5; 3 |] in
  List.iter
    (fun (name, x) ->
      let idx = idx_of shape (fun i -> Int64.of_int ((i.(0) * 7 + i.(1)) mod 7 - 1)) in
      let dst = create d shape in
      Support.check_answer name Done (Nx_cpu.gather ~axis:0 ~dst idx x);
      let zero = get (zeros d [||]) [||] in
      for a = 0 to 4 do
        for b = 0 to 2 do
          let p = Int64.to_int (get idx [| a; b |]) in
          let want = if p < 0 || p >= 4 then zero else get x [| p; b |] in
          if not (eq want (get dst [| a; b |])) then Alcotest.failf "%s: element %d %d" name a b
        done
      done)
    (Support.layouts d xs)

(* Add's left-to-right sum by hand, in float32: 1e8 + 1 + ... stays 1e8
   where a sum from the updates first would not. *)
let scatter_add () =
  let into = init Dtype.Float32 [| 3 |] (fun i -> if i.(0) = 0 then 1e8 else -0.) in
  let dst = create Dtype.Float32 [| 3 |] in
  let updates = vector Dtype.Float32 [ 1.; 1.; -1e8; -0.; 5. ] in
  let idx = vector Dtype.Int64 [ 0L; 0L; 0L; 2L; 3L ] in
  Support.check_answer "add" Done (Nx_cpu.scatter K.Add ~unique:false ~axis:0 ~dst ~into idx updates);
  let f32 x = Int32.float_of_bits (Int32.bits_of_float x) in
  let want = f32 (f32 (f32 1e8 +. 1.) +. 1.) -. 1e8 in
  Alcotest.(check (float 0.)) "left to right" want (get dst [| 0 |]);
  Alcotest.(check bool) "untouched -0 keeps its sign" true (1. /. get dst [| 1 |] < 0.);
  Alcotest.(check bool) "-0 + -0 is -0" true (1. /. get dst [| 2 |] < 0.);
  (* In place, Set: the last update in C order; Max: a NaN where one is. *)
  let upd2 = vector Dtype.Float32 [ 7.; 8.; nan; 2. ] in
  let idx2 = vector Dtype.Int64 [ 1L; 1L; 2L; -1L ] in
  Support.check_answer "set" Done (Nx_cpu.scatter K.Set ~unique:false ~axis:0 ~dst ~into:dst idx2 upd2);
  Alcotest.(check (float 0.)) "last" 8. (get dst [| 1 |]);
  Support.check_answer "max" Done (Nx_cpu.scatter K.Max ~unique:false ~axis:0 ~dst ~into:dst idx2 upd2);
  Alcotest.(check bool) "NaN" true (Float.is_nan (get dst [| 2 |]))

let scatter_layouts () =
  (* Int4 along axis 1 of transposed and reversed views, against a copy
     combined by hand. *)
  let shape = [| 3; 4 |] in
  List.iter
    (fun (name, into) ->
      let ushape = [| 3; 6 |] in
      let updates = init Dtype.Int4 ushape (fun i -> (i.(0) + 3 * i.(1)) mod 16 - 8) in
      let idx = idx_of ushape (fun i -> Int64.of_int ((5 * i.(1) + i.(0)) mod 6 - 1)) in
      let dst = create Dtype.Int4 shape in
      Support.check_answer name Done (Nx_cpu.scatter K.Add ~unique:false ~axis:1 ~dst ~into idx updates);
      for a = 0 to 2 do
        for b = 0 to 3 do
          let want = ref (get into [| a; b |]) in
          for k = 0 to 5 do
            if Int64.to_int (get idx [| a; k |]) = b then want := !want + get updates [| a; k |]
          done;
          let w = ((!want + 8) land 15) - 8 in
          Alcotest.(check int) (Printf.sprintf "%s %d %d" name a b) w (get dst [| a; b |])
        done
      done)
    (Support.layouts Dtype.Int4 shape)

let assemble_case () =
  let range start stop = { Move.start; stop } in
  let a = init Dtype.Float64 [| 2; 3 |] (fun i -> float (10 * i.(0) + i.(1))) in
  let b = init Dtype.Float64 [| 1; 2 |] (fun i -> float (100 + i.(1))) in
  let dst = create Dtype.Float64 [| 3; 4 |] in
  let pieces = Iarray.of_list [ (Iarray.of_list [ range 0 2; range 0 3 ], a); (Iarray.of_list [ range 1 2; range 2 4 ], b) ] in
  Support.check_answer "assemble" Done (Nx_cpu.assemble ~fill:(-1.) ~dst pieces);
  Alcotest.(check (list (float 0.))) "elements"
    [ 0.; 1.; 2.; -1.; 10.; 11.; 100.; 101.; -1.; -1.; -1.; -1. ]
    (to_list dst);
  Alcotest.(check (array int)) "Shape.assemble" [| 2; 3 |] (K.Shape.assemble (Iarray.of_list [ range 0 2; range 1 4 ]))

let refusals () =
  let x = init Dtype.Float32 [| 4; 3 |] (fun i -> float i.(0)) in
  let dst = init Dtype.Float32 [| 2; 3 |] (fun _ -> 42.) in
  let before = to_list dst in
  let idx = idx_of [| 2; 2 |] (fun _ -> 0L) in
  Support.is_refused_with ~needle:"positions" (Nx_cpu.gather ~axis:0 ~dst idx x);
  Support.is_refused_with ~needle:"axis 2" (Nx_cpu.gather ~axis:2 ~dst (idx_of [| 2; 3 |] (fun _ -> 0L)) x);
  (* The kernel's own check: the destination overlaps the updates. *)
  Support.is_refused_with ~needle:"overlaps"
    (Nx_cpu.scatter K.Add ~unique:false ~axis:0 ~dst ~into:dst (idx_of [| 2; 3 |] (fun _ -> 0L)) dst);
  Support.is_refused_with ~needle:"not within"
    (Nx_cpu.assemble ~fill:0. ~dst (Iarray.of_list [ (Iarray.of_list [ { Move.start = 1; stop = 5 }; { Move.start = 0; stop = 3 } ], x) ]));
  Alcotest.(check (list (float 0.))) "untouched" before (to_list dst)

(* gather_ranges over Support's layouts of the source, int4 and float32,
   against the runs by hand: a run past the source's end reads zeros, an
   end below the last one takes no position, and starts and ends at
   opposite extremes of int64 read modulo 2^64. *)
let gather_ranges_case (type v s) (d : (v, s) Dtype.t) eq () =
  let xs = [| 2; 6; 3 |] in
  let starts = init Dtype.Int64 [| 2; 3 |] (fun i ->
    [| [| 4L; Int64.(sub max_int 1L); 0L |]; [| 1L; 5L; -2L |] |].(i.(0)).(i.(1))) in
  let ends = init Dtype.Int64 [| 2; 3 |] (fun i ->
    [| [| Int64.(add min_int 1L); 5L; 9L |]; [| 3L; 2L; 6L |] |].(i.(0)).(i.(1))) in
  let source l p e j = (* run j's source position for position p *)
    Int64.(to_int (sub (add (get starts [| l; j |]) (of_int p)) e)) in
  let want l p =
    let rec go j e =
      if j = 3 then None
      else
        let end_ = get ends [| l; j |] in
        if Int64.compare end_ (Int64.of_int p) > 0 then Some (source l p e j) else go (j + 1) end_
    in
    go 0 0L
  in
  List.iter
    (fun (name, x) ->
      let dst = create d [| 2; 8; 3 |] in
      Support.check_answer name Done (Nx_cpu.gather_ranges ~dst ~starts ~ends x);
      let zero = get (zeros d [||]) [||] in
      for l = 0 to 1 do
        for p = 0 to 7 do
          for c = 0 to 2 do
            let w = match want l p with Some q when q >= 0 && q < 6 -> get x [| l; q; c |] | _ -> zero in
            if not (eq w (get dst [| l; p; c |])) then Alcotest.failf "%s: element %d %d %d" name l p c
          done
        done
      done)
    (Support.layouts d xs);
  Alcotest.(check (array int)) "Shape.gather_ranges" [| 2; 8; 3 |] (K.Shape.gather_ranges [| 2; 3 |] ~size:8 xs)

(* fold of a 3-tap window, stride 1, pad 1, against the sums by hand in
   tap order; and <fold y, x> = <y, load x> with map's padded load. *)
let fold_case () =
  let p = { K.before = [| 1 |]; after = [| 1 |]; windows = [| Some { K.size = 3; stride = 1; dilation = 1 } |]; fill = 7. } in
  let x = init Dtype.Int16 [| 5 |] (fun i -> (3 * i.(0)) - 4) in
  let y = init Dtype.Int16 [| 5; 3 |] (fun i -> (i.(0) * 5) + (2 * i.(1)) - 6) in
  Alcotest.(check (array int)) "the load's shape" [| 5; 3 |] (K.Shape.padded p [| 5 |]);
  let folded = create Dtype.Int16 [| 5 |] in
  Support.check_answer "fold" Done (Nx_cpu.fold p ~dst:folded y);
  for i = 0 to 4 do
    (* Window w's tap t reads padded index w + t, element w + t - 1. *)
    let want = ref 0 in
    for t = 0 to 2 do
      let w = i + 1 - t in
      if w >= 0 && w < 5 then want := !want + get y [| w; t |]
    done;
    Alcotest.(check int) (Printf.sprintf "element %d" i) !want (get folded [| i |])
  done;
  let p0 = { p with K.fill = 0. } in
  let loaded = create Dtype.Int16 [| 5; 3 |] in
  let id = K.Prog.of_node (K.Prog.Op1 (K.Prog.Cast (Dtype.Any Dtype.Int16), 0)) [| Dtype.Any Dtype.Int16 |] in
  Support.check_answer "load" Done
    (Nx_cpu.map id ~dsts:(Iarray.of_list [ Any loaded ]) (Iarray.of_list [ K.Padded (p0, Any x) ]));
  let dot a b = List.fold_left2 (fun s u v -> s + (u * v)) 0 (to_list a) (to_list b) in
  Alcotest.(check int) "adjoint" (dot y loaded) (dot folded x);
  (* A single -0 keeps its sign; an element no tap reads is +0. *)
  let q = { p with K.before = [| 0 |]; after = [| 0 |]; windows = [| Some { K.size = 1; stride = 2; dilation = 1 } |] } in
  let z = init Dtype.Float32 [| 2; 1 |] (fun _ -> -0.) in
  let dz = init Dtype.Float32 [| 3 |] (fun _ -> 5.) in
  Support.check_answer "fold -0" Done (Nx_cpu.fold q ~dst:dz z);
  Alcotest.(check (list bool)) "signs" [ true; false; true ] (List.map (fun v -> 1. /. v < 0.) (to_list dz))

let ranges_fold_refusals () =
  let x = init Dtype.Float32 [| 2; 5 |] (fun i -> float i.(1)) in
  let dst = init Dtype.Float32 [| 2; 4 |] (fun _ -> 42.) in
  let before = to_list dst in
  let starts = idx_of [| 2; 3 |] (fun _ -> 0L) in
  Support.is_refused_with ~needle:"the ends have shape"
    (Nx_cpu.gather_ranges ~dst ~starts ~ends:(idx_of [| 2; 2 |] (fun _ -> 0L)) x);
  Support.is_refused_with ~needle:"must begin"
    (Nx_cpu.gather_ranges ~dst ~starts:(idx_of [| 3; 1 |] (fun _ -> 0L)) ~ends:(idx_of [| 3; 1 |] (fun _ -> 0L)) x);
  Support.is_refused_with ~needle:"0-d"
    (Nx_cpu.gather_ranges ~dst ~starts:(idx_of [||] (fun _ -> 0L)) ~ends:(idx_of [||] (fun _ -> 0L)) x);
  let p = { K.before = [| 0; 1 |]; after = [| 0; 0 |]; windows = [||]; fill = 0. } in
  Support.is_refused_with ~needle:"gives [2; 5]" (Nx_cpu.fold p ~dst dst);
  Support.is_refused_with ~needle:"rank 2" (Nx_cpu.fold { p with K.before = [| 0 |] } ~dst x);
  (* The kernel's own check: the destination overlaps the source. *)
  Support.is_refused_with ~needle:"overlaps" (Nx_cpu.fold { p with K.before = [| 0; 0 |] } ~dst dst);
  Alcotest.(check (list (float 0.))) "untouched" before (to_list dst)

let tests =
  [ Alcotest.test_case "gather float32" `Quick (gather_case Dtype.Float32 (fun a b -> Int32.bits_of_float a = Int32.bits_of_float b));
    Alcotest.test_case "gather int4" `Quick (gather_case Dtype.Int4 ( = ));
    Alcotest.test_case "gather complex128" `Quick (gather_case Dtype.Complex128 ( = ));
    Alcotest.test_case "scatter Add, Set, Max" `Quick scatter_add;
    Alcotest.test_case "scatter int4 over layouts" `Quick scatter_layouts;
    Alcotest.test_case "assemble" `Quick assemble_case;
    Alcotest.test_case "refusals" `Quick refusals;
    Alcotest.test_case "gather_ranges float32" `Quick
      (gather_ranges_case Dtype.Float32 (fun a b -> Int32.bits_of_float a = Int32.bits_of_float b));
    Alcotest.test_case "gather_ranges int4" `Quick (gather_ranges_case Dtype.Int4 ( = ));
    Alcotest.test_case "fold" `Quick fold_case;
    Alcotest.test_case "gather_ranges and fold refusals" `Quick ranges_fold_refusals ]
