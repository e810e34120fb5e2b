(* Nx_cpu.contract against references written from the contract's words:
   chain order (init or +0, one fused multiply-add a product in increasing
   number) and lane order (blocks of 1024, 16 lanes from +0 fusing their
   products, the lanes' and blocks' trees, then init), in float64, where
   OCaml's Float.fma rounds as the acc does; integer accs wrapping; scales
   by codes; bits equal across threads and layouts; refusals and declines
   leave dst untouched. *)

open Nx_array
module K = Nx_kernel

let ia = Iarray.of_list
let mm = ia [ (1, 0) ]
let none = ia []

let chain ?(init = 0.) terms = List.fold_left (fun s (x, y) -> Float.fma x y s) init terms

let lanes terms =
  let terms = Array.of_list terms in
  let n = Array.length terms in
  let block b =
    let l = Array.make 16 0. in
    let len = min 1024 (n - (b * 1024)) in
    for q = 0 to len - 1 do
      let x, y = terms.((b * 1024) + q) in
      l.(q mod 16) <- Float.fma x y l.(q mod 16)
    done;
    let present = ref (min len 16) in
    List.iter
      (fun step ->
        for i = 0 to step - 1 do
          if i + step < !present then l.(i) <- l.(i) +. l.(i + step)
        done;
        present := min !present step)
      [ 8; 4; 2; 1 ];
    l.(0)
  in
  let rec tree lo hi =
    if hi - lo = 1 then block lo
    else
      let k = ref 1 in
      while !k * 2 < hi - lo do k := !k * 2 done;
      tree lo (lo + !k) +. tree (lo + !k) hi
  in
  tree 0 ((n + 1023) / 1024)

let value i j = Float.of_int (((i * 7919) + (j * 104729)) mod 10007) /. 10007. -. 0.5

(* a [m, k] and b [k, n] of float64; dst = init + a b by the order rule. *)
let float64_case ~m ~n ~k ~with_init () =
  let a = init Dtype.Float64 [| m; k |] (fun ix -> value ix.(0) ix.(1) *. 3.7) in
  let b = init Dtype.Float64 [| k; n |] (fun ix -> value (ix.(0) + 11) ix.(1) /. 1.3) in
  let i0 = init Dtype.Float64 [| m; n |] (fun ix -> value ix.(0) (ix.(1) + 5)) in
  let chain_order = m > 4 && n > 4 && m * n >= 64 && k < 128 * m * n in
  let want i j =
    let terms = List.init k (fun t -> (get a [| i; t |], get b [| t; j |])) in
    let init = if with_init then get i0 [| i; j |] else 0. in
    if chain_order then chain ~init terms
    else if k = 0 then init
    else if with_init then lanes terms +. init
    else lanes terms
  in
  List.iter
    (fun threads ->
      Nx_cpu.set_threads threads;
      let dst = create Dtype.Float64 [| m; n |] in
      let init = if with_init then Some i0 else None in
      let ans = Nx_cpu.contract ~batch:none ~contracting:mm ~segments:None ~acc:(Dtype.Any Dtype.Float64) ~dst ~init (K.operand a) (K.operand b) in
      Alcotest.(check bool) "done" true (ans = Done);
      for i = 0 to m - 1 do
        for j = 0 to n - 1 do
          let w = want i j and g = get dst [| i; j |] in
          if Int64.bits_of_float w <> Int64.bits_of_float g then
            Alcotest.failf "%dx%dx%d on %d threads at (%d, %d): %h, want %h" m n k threads i j g w
        done
      done)
    [ 1; 3 ]

(* A transposed a (a view of a's transpose) gives the same bits. *)
let transposed () =
  let m, n, k = (20, 9, 300) in
  let at = init Dtype.Float32 [| k; m |] (fun ix -> value ix.(1) ix.(0)) in
  let a_t = view Dtype.Float32 ~shape:[| m; k |] ~strides:[| 1; m |] ~offset:0 (buffer at) in
  let a = init Dtype.Float32 [| m; k |] (fun ix -> value ix.(0) ix.(1)) in
  let b = init Dtype.Float32 [| k; n |] (fun ix -> value ix.(1) (ix.(0) + 3)) in
  let run a =
    let dst = create Dtype.Float32 [| m; n |] in
    ignore (Nx_cpu.contract ~batch:none ~contracting:mm ~segments:None ~acc:(Dtype.Any Dtype.Float32) ~dst ~init:None (K.operand a) (K.operand b));
    List.map Int32.bits_of_float (to_list dst)
  in
  Alcotest.(check (list int32)) "same bits" (run a) (run a_t)

(* int8 operands into an int8 acc wrap modulo 2^8, into an int32 dst. *)
let integers () =
  let m, n, k = (6, 7, 50) in
  let a = init Dtype.Int8 [| m; k |] (fun ix -> ((ix.(0) * 37) + (ix.(1) * 11)) mod 256 - 128) in
  let b = init Dtype.Int8 [| k; n |] (fun ix -> ((ix.(0) * 13) + (ix.(1) * 29)) mod 256 - 128) in
  List.iter
    (fun (acc, wrap) ->
      let dst = create Dtype.Int32 [| m; n |] in
      let ans = Nx_cpu.contract ~batch:none ~contracting:mm ~segments:None ~acc ~dst ~init:None (K.operand a) (K.operand b) in
      Alcotest.(check bool) "done" true (ans = Done);
      for i = 0 to m - 1 do
        for j = 0 to n - 1 do
          let s = ref 0 in
          for t = 0 to k - 1 do s := !s + (get a [| i; t |] * get b [| t; j |]) done;
          Alcotest.(check int32) "sum" (Int32.of_int (wrap !s)) (get dst [| i; j |])
        done
      done)
    [ (Dtype.Any Dtype.Int32, Fun.id); (Dtype.Any Dtype.Int8, fun s -> ((s land 255) lxor 128) - 128) ]

(* Codes scale b's blocks: code e is 2^(e - 127), exact here. *)
let scales () =
  let m, n, k = (3, 4, 64) in
  let a = init Dtype.Float32 [| m; k |] (fun ix -> Float.of_int ((ix.(0) + ix.(1)) mod 5 - 2)) in
  let b = init Dtype.Float32 [| k; n |] (fun ix -> Float.of_int ((ix.(0) * 3 + ix.(1)) mod 7 - 3)) in
  let codes = init Dtype.Uint8 [| 2; n |] (fun ix -> 125 + ix.(0) + ix.(1)) in
  let dst = create Dtype.Float32 [| m; n |] in
  let scale = K.Code ([| 32; 1 |], codes) in
  let ans = Nx_cpu.contract ~batch:none ~contracting:mm ~segments:None ~acc:(Dtype.Any Dtype.Float32) ~dst ~init:None (K.operand a) (K.operand ~scale b) in
  Alcotest.(check bool) "done" true (ans = Done);
  for i = 0 to m - 1 do
    for j = 0 to n - 1 do
      let s = ref 0. in
      for t = 0 to k - 1 do
        s := !s +. (get a [| i; t |] *. get b [| t; j |] *. Float.pow 2. (Float.of_int (get codes [| t / 32; j |] - 127)))
      done;
      Alcotest.(check (float 0.)) "scaled" !s (get dst [| i; j |])
    done
  done

(* Rows segments: row i reads b's matrix ids.(i); Contracting: dst.(g)
   sums the products of the depths of id g. Integers, exact. *)
let segments () =
  let m, n, k = (5, 3, 6) in
  let a = init Dtype.Int16 [| m; k |] (fun ix -> ix.(0) + ix.(1)) in
  let b = init Dtype.Int16 [| 2; k; n |] (fun ix -> (ix.(0) * 10) + ix.(1) - ix.(2)) in
  let ids = init Dtype.Int64 [| m |] (fun ix -> Int64.of_int (ix.(0) mod 2)) in
  let dst = create Dtype.Int32 [| m; n |] in
  let ans =
    Nx_cpu.contract ~batch:none ~contracting:(ia [ (1, 1) ]) ~segments:(Some (K.Rows { ids; b_axis = 0 }))
      ~acc:(Dtype.Any Dtype.Int32) ~dst ~init:None (K.operand a) (K.operand b)
  in
  Alcotest.(check bool) "rows done" true (ans = Done);
  for i = 0 to m - 1 do
    for j = 0 to n - 1 do
      let s = ref 0 in
      for t = 0 to k - 1 do s := !s + (get a [| i; t |] * get b [| i mod 2; t; j |]) done;
      Alcotest.(check int32) "row sum" (Int32.of_int !s) (get dst [| i; j |])
    done
  done;
  let b2 = init Dtype.Int16 [| k; n |] (fun ix -> ix.(0) - ix.(1)) in
  let cids = init Dtype.Int64 [| k |] (fun ix -> Int64.of_int (ix.(0) mod 3)) in
  let dst3 = create Dtype.Int32 [| 3; m; n |] in
  let ans =
    Nx_cpu.contract ~batch:none ~contracting:mm ~segments:(Some (K.Contracting { ids = cids; pair = 0; groups = 3 }))
      ~acc:(Dtype.Any Dtype.Int32) ~dst:dst3 ~init:None (K.operand a) (K.operand b2)
  in
  Alcotest.(check bool) "contracting done" true (ans = Done);
  for g = 0 to 2 do
    for i = 0 to m - 1 do
      for j = 0 to n - 1 do
        let s = ref 0 in
        for t = 0 to k - 1 do if t mod 3 = g then s := !s + (get a [| i; t |] * get b2 [| t; j |]) done;
        Alcotest.(check int32) "group sum" (Int32.of_int !s) (get dst3 [| g; i; j |])
      done
    done
  done;
  set ids [| 2 |] 7L;
  match
    Nx_cpu.contract ~batch:none ~contracting:(ia [ (1, 1) ]) ~segments:(Some (K.Rows { ids; b_axis = 0 }))
      ~acc:(Dtype.Any Dtype.Int32) ~dst ~init:None (K.operand a) (K.operand b)
  with
  | Refused _ -> ()
  | _ -> Alcotest.fail "an id out of range refused"

let untouched () =
  let a = init Dtype.Float32 [| 3; 4 |] (fun _ -> 1.) in
  let b = init Dtype.Float32 [| 5; 2 |] (fun _ -> 1.) in
  let b' = init Dtype.Float32 [| 4; 2 |] (fun _ -> 1.) in
  let dst = init Dtype.Float32 [| 3; 2 |] (fun _ -> 7.) in
  let call ?(segments = None) acc b = Nx_cpu.contract ~batch:none ~contracting:mm ~segments ~acc ~dst ~init:None (K.operand a) (K.operand b) in
  (match call (Dtype.Any Dtype.Float32) b with Refused _ -> () | _ -> Alcotest.fail "extents 4 and 5 refused");
  (match call (Dtype.Any Dtype.Float16) b' with Declined _ -> () | _ -> Alcotest.fail "a float16 acc declined");
  (match Nx_cpu.contract ~batch:(ia [ (1, 0) ]) ~contracting:mm ~segments:None ~acc:(Dtype.Any Dtype.Float32) ~dst ~init:None (K.operand a) (K.operand b') with
   | Refused _ -> ()
   | _ -> Alcotest.fail "a repeated axis refused");
  Alcotest.(check (list (float 0.))) "dst untouched" (List.init 6 (fun _ -> 7.)) (to_list dst);
  Alcotest.(check (array int)) "Shape.contract" [| 3; 2 |] (K.Shape.contract ~batch:none ~contracting:mm ~segments:None [| 3; 4 |] [| 4; 2 |]);
  Alcotest.(check bool) "accumulates" true (K.accumulates (Dtype.Any Dtype.Uint4) && not (K.accumulates (Dtype.Any Dtype.Bfloat16)))

let tests =
  [ Alcotest.test_case "chain order, float64 13x8x50 with init" `Quick (float64_case ~m:13 ~n:8 ~k:50 ~with_init:true);
    Alcotest.test_case "lane order, float64 4x9x2100" `Quick (float64_case ~m:4 ~n:9 ~k:2100 ~with_init:true);
    Alcotest.test_case "lane order, float64 1x1x3000, no init" `Quick (float64_case ~m:1 ~n:1 ~k:3000 ~with_init:false);
    Alcotest.test_case "no products: init" `Quick (float64_case ~m:6 ~n:12 ~k:0 ~with_init:true);
    Alcotest.test_case "a transposed view keeps the bits" `Quick transposed;
    Alcotest.test_case "integer accs wrap" `Quick integers;
    Alcotest.test_case "codes scale blocks" `Quick scales;
    Alcotest.test_case "segments" `Quick segments;
    Alcotest.test_case "refusals and declines leave dst untouched" `Quick untouched ]
