(* Nx_cpu.sort against a reference written from the contract's words: a
   stable sort (List.stable_sort) under the total order -inf < ... < -0 <
   +0 < ... < +inf < NaN, every NaN equal; values' bits and positions
   compared; top-k, descending, a negative stride, a packed dtype, bits
   equal on 1 and 3 threads; refusals leave destinations untouched. *)

open Nx_array

(* The contract's order of two floats. *)
let order a b =
  match (Float.is_nan a, Float.is_nan b) with
  | true, true -> 0
  | true, false -> 1
  | false, true -> -1
  | false, false ->
      if a = 0. && b = 0. then compare (Float.sign_bit b) (Float.sign_bit a) else compare a b

let bits32 x = Int32.bits_of_float x

(* float32 values with NaNs of two payloads and both signs, zeros of both
   signs, infinities and ties. *)
let specials =
  [| 1.5; Float.nan; -0.; 0.; Float.infinity; Float.neg_infinity; -2.; 1.5;
     Int32.float_of_bits 0x7fc00001l; Int32.float_of_bits 0xffc00000l; 0.; -0.; 3.; -2.; 1e-40; 7. |]

let sorted_ref ~descending xs =
  let l = List.mapi (fun i x -> (x, i)) xs in
  let c (a, _) (b, _) = if descending then order b a else order a b in
  List.stable_sort c l

(* Sorts each row of a [rows; n] float32 array read with its columns
   reversed (a negative stride), keeping k, and checks it. *)
let check_rows ~descending ~k ~threads () =
  Nx_cpu.set_threads threads;
  let rows, n = (3, Array.length specials) in
  let x0 = init Dtype.Float32 [| rows; n |] (fun i -> specials.((i.(1) * (i.(0) + 1)) mod n)) in
  let x = view Dtype.Float32 ~shape:[| rows; n |] ~strides:[| n; -1 |] ~offset:(n - 1) (buffer x0) in
  let values = create Dtype.Float32 [| rows; k |] in
  let positions = create Dtype.Int64 [| rows; k |] in
  (match Nx_cpu.sort ~axis:1 ~descending ~values ~positions x with
  | Done -> ()
  | Declined w | Refused w -> Alcotest.fail w);
  for r = 0 to rows - 1 do
    let row = List.init n (fun j -> get x [| r; j |]) in
    List.iteri
      (fun j (v, p) ->
        if j < k then begin
          Alcotest.(check int32) (Printf.sprintf "row %d value %d" r j) (bits32 v) (bits32 (get values [| r; j |]));
          Alcotest.(check int64) (Printf.sprintf "row %d position %d" r j) (Int64.of_int p) (get positions [| r; j |])
        end)
      (sorted_ref ~descending row)
  done;
  (List.map bits32 (to_list values), to_list positions)

let float32_rows () =
  List.iter
    (fun (descending, k) ->
      let one = check_rows ~descending ~k ~threads:1 () in
      let three = check_rows ~descending ~k ~threads:3 () in
      Alcotest.(check bool) "same bits on 1 and 3 threads" true (one = three))
    [ (false, 16); (true, 16); (false, 3); (true, 1); (false, 0) ]

(* int4 is packed two to a byte: values -8..7. *)
let int4_column () =
  let xs = [ 3; -8; 7; 0; -1; 3; -8; 5; 2 ] in
  let n = List.length xs in
  let x = init Dtype.Int4 [| n; 1 |] (fun i -> List.nth xs i.(0)) in
  let values = create Dtype.Int4 [| n; 1 |] and positions = create Dtype.Int64 [| n; 1 |] in
  (match Nx_cpu.sort ~axis:0 ~descending:false ~values ~positions x with Done -> () | _ -> Alcotest.fail "int4 sort");
  let want = List.stable_sort (fun (a, _) (b, _) -> compare a b) (List.mapi (fun i x -> (x, i)) xs) in
  Alcotest.(check (list int)) "values" (List.map fst want) (to_list values);
  Alcotest.(check (list int64)) "positions" (List.map (fun (_, p) -> Int64.of_int p) want) (to_list positions)

let refusals () =
  let x = init Dtype.Float32 [| 2; 4 |] (fun i -> float i.(1)) in
  let values = zeros Dtype.Float32 [| 2; 4 |] and positions = zeros Dtype.Int64 [| 2; 4 |] in
  let refused what = function
    | Refused _ -> ()
    | _ -> Alcotest.fail (what ^ " was not refused")
  in
  refused "axis -1" (Nx_cpu.sort ~axis:(-1) ~descending:false ~values ~positions x);
  refused "axis 2" (Nx_cpu.sort ~axis:2 ~descending:false ~values ~positions x);
  refused "longer values"
    (Nx_cpu.sort ~axis:1 ~descending:false ~values:(zeros Dtype.Float32 [| 2; 5 |])
       ~positions:(zeros Dtype.Int64 [| 2; 5 |]) x);
  refused "positions overlapping values"
    (Nx_cpu.sort ~axis:1 ~descending:false ~values
       ~positions:(view Dtype.Int64 ~shape:[| 2; 2 |] ~strides:[| 2; 1 |] ~offset:0 (buffer values)) x);
  Alcotest.(check (list (float 0.))) "values untouched" (List.init 8 (fun _ -> 0.)) (to_list values);
  Alcotest.(check (list int64)) "positions untouched" (List.init 8 (fun _ -> 0L)) (to_list positions)

let tests =
  [ Alcotest.test_case "float32 rows: NaNs, zeros, ties, top-k, descending, threads" `Quick float32_rows;
    Alcotest.test_case "int4, packed" `Quick int4_column;
    Alcotest.test_case "refusals write nothing" `Quick refusals ]
