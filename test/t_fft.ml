(* Nx_cpu.c2c, r2c and c2r against a DFT written from the definition in
   float64; bits equal across layouts and threads; c2r's linear map on
   non-Hermitian bins; zero points; refusals leave destinations untouched. *)

open Nx_array
open Support
module K = Nx_kernel

let ia = Iarray.of_list
let pi = 4. *. atan 1.

(* The DFT of one line by its definition, sign -1 forward. *)
let dft sign (x : Complex.t array) =
  let n = Array.length x in
  Array.init n (fun k ->
      let acc = ref Complex.zero in
      Array.iteri
        (fun j v ->
          let t = sign *. 2. *. pi *. float ((j * k) mod n) /. float n in
          acc := Complex.add !acc (Complex.mul v { re = cos t; im = sin t }))
        x;
      !acc)

(* The transform of a 2-d array along axis 1, then along axis 0 where
   [both]. *)
let dft2 sign ~both (get : int -> int -> Complex.t) rows cols =
  let y = Array.init rows (fun r -> dft sign (Array.init cols (get r))) in
  if both then begin
    for c = 0 to cols - 1 do
      let col = dft sign (Array.init rows (fun r -> y.(r).(c))) in
      Array.iteri (fun r v -> y.(r).(c) <- v) col
    done
  end;
  y

let close ~tol what (want : Complex.t array array) (got : int -> int -> Complex.t) =
  let err = ref 0. and norm = ref 0. in
  Array.iteri
    (fun r row ->
      Array.iteri
        (fun c (w : Complex.t) ->
          let g = got r c in
          err := !err +. Complex.norm2 (Complex.sub g w);
          norm := !norm +. Complex.norm2 w)
        row)
    want;
  if sqrt !err > tol *. sqrt !norm then Alcotest.failf "%s: error %g of norm %g" what (sqrt !err) (sqrt !norm)

let value r c : Complex.t = { re = sin (float (3 * r + 7 * c)); im = cos (float (5 * r - c)) }

let c2c_against_the_definition () =
  let rows = 5 and cols = 12 in
  List.iter
    (fun (dir, sign) ->
      List.iter
        (fun both ->
          let axes = if both then ia [ 0; 1 ] else ia [ 1 ] in
          let want = dft2 sign ~both value rows cols in
          let x = init Dtype.Complex128 [| rows; cols |] (fun i -> value i.(0) i.(1)) in
          let d = create Dtype.Complex128 [| rows; cols |] in
          check_answer "c2c" Done (Nx_cpu.c2c dir ~axes ~dst:d x);
          close ~tol:1e-13 "complex128" want (fun r c -> get d [| r; c |]);
          let x = init Dtype.Complex64 [| rows; cols |] (fun i -> value i.(0) i.(1)) in
          let d = create Dtype.Complex64 [| rows; cols |] in
          check_answer "c2c" Done (Nx_cpu.c2c dir ~axes ~dst:d x);
          close ~tol:1e-5 "complex64" want (fun r c -> get d [| r; c |]))
        [ false; true ])
    [ (K.Forward, -1.); (K.Inverse, 1.) ]

let complex_bits (z : Complex.t) = (bits z.re, bits z.im)

(* Each layout of x (the broadcast one repeats row 0) against a contiguous
   copy of its values, at 1 and 3 threads, into a transposed dst. *)
let bits_follow_values () =
  let shape = [| 4; 300 |] in
  List.iter
    (fun (name, x) ->
      for r = 0 to 3 do
        for c = 0 to 299 do
          set x [| r; c |] (value r c)
        done
      done;
      let plain = init Dtype.Complex64 shape (fun i -> get x i) in
      let want = create Dtype.Complex64 shape in
      check_answer "contiguous" Done (Nx_cpu.c2c K.Forward ~axes:(ia [ 1 ]) ~dst:want plain);
      List.iter
        (fun threads ->
          Nx_cpu.set_threads threads;
          let t = create Dtype.Complex64 [| 300; 4 |] in
          let d = view Dtype.Complex64 ~shape ~strides:[| 1; 4 |] ~offset:0 (buffer t) in
          check_answer name Done (Nx_cpu.c2c K.Forward ~axes:(ia [ 1 ]) ~dst:d x);
          for r = 0 to 3 do
            for c = 0 to 299 do
              if complex_bits (get d [| r; c |]) <> complex_bits (get want [| r; c |]) then
                Alcotest.failf "%s, %d threads: bits differ at %d, %d" name threads r c
            done
          done)
        [ 1; 3 ])
    (layouts Dtype.Complex64 shape)

let real_round_trip () =
  List.iter
    (fun n ->
      let x = init Dtype.Float64 [| 3; n |] (fun i -> sin (float (i.(0) + (7 * i.(1))))) in
      let y = create Dtype.Complex128 [| 3; (n / 2) + 1 |] in
      check_answer "r2c" Done (Nx_cpu.r2c ~axes:(ia [ 1 ]) ~dst:y x);
      (* Bins against the complex transform of the real line. *)
      let want = dft2 (-1.) ~both:false (fun r c -> { re = get x [| r; c |]; im = 0. }) 3 n in
      let want = Array.map (fun row -> Array.sub row 0 ((n / 2) + 1)) want in
      close ~tol:1e-12 "r2c" want (fun r c -> get y [| r; c |]);
      let back = create Dtype.Float64 [| 3; n |] in
      check_answer "c2r" Done (Nx_cpu.c2r ~axes:(ia [ 1 ]) ~dst:back y);
      for r = 0 to 2 do
        for c = 0 to n - 1 do
          let w = float n *. get x [| r; c |] in
          if Float.abs (get back [| r; c |] -. w) > 1e-9 *. float n then
            Alcotest.failf "round trip %d at %d, %d: %g for %g" n r c (get back [| r; c |]) w
        done
      done)
    [ 9; 16; 600; 1024 ]

(* The imaginary parts of bin 0 and of bin n/2 never contribute. *)
let c2r_is_a_linear_map () =
  List.iter
    (fun n ->
      let bins = (n / 2) + 1 in
      let x = init Dtype.Complex64 [| bins |] (fun i -> value 1 i.(0)) in
      let d1 = create Dtype.Float32 [| n |] and d2 = create Dtype.Float32 [| n |] in
      check_answer "c2r" Done (Nx_cpu.c2r ~axes:(ia [ 0 ]) ~dst:d1 x);
      set x [| 0 |] { (get x [| 0 |]) with im = 123. };
      set x [| n / 2 |] { (get x [| n / 2 |]) with im = -55. };
      check_answer "c2r" Done (Nx_cpu.c2r ~axes:(ia [ 0 ]) ~dst:d2 x);
      List.iter2 (fun a b -> if bits a <> bits b then Alcotest.failf "n = %d: bins' imaginary parts entered" n) (to_list d1) (to_list d2))
    [ 10; 1024 ]

let zero_points () =
  let x = create Dtype.Float32 [| 2; 0 |] in
  let d = init Dtype.Complex64 [| 2; 1 |] (fun _ -> Complex.one) in
  check_answer "r2c of 0 points" Done (Nx_cpu.r2c ~axes:(ia [ 1 ]) ~dst:d x);
  List.iter (fun (z : Complex.t) -> if bits z.re <> 0L || bits z.im <> 0L then Alcotest.fail "not +0") (to_list d);
  let x = create Dtype.Complex64 [| 0; 3 |] and d = create Dtype.Complex64 [| 0; 3 |] in
  check_answer "c2c of an empty batch" Done (Nx_cpu.c2c K.Inverse ~axes:(ia [ 0; 1 ]) ~dst:d x)

let refusals () =
  let x = init Dtype.Complex64 [| 4; 6 |] (fun i -> value i.(0) i.(1)) in
  let d = init Dtype.Complex64 [| 4; 5 |] (fun _ -> Complex.one) in
  let before = bytes_of_buffer (buffer d) in
  is_refused_with ~needle:"shape" (Nx_cpu.c2c K.Forward ~axes:(ia [ 1 ]) ~dst:d x);
  is_refused_with ~needle:"increasing" (Nx_cpu.c2c K.Forward ~axes:(ia [ 1; 0 ]) ~dst:d x);
  is_refused_with ~needle:"no axes" (Nx_cpu.c2c K.Forward ~axes:(ia []) ~dst:d x);
  let r = init Dtype.Float64 [| 4; 8 |] (fun _ -> 1.) in
  is_refused_with ~needle:"precision" (Nx_cpu.r2c ~axes:(ia [ 1 ]) ~dst:d r);
  Alcotest.(check bool) "dst untouched" true (before = bytes_of_buffer (buffer d))

let tests =
  [ Alcotest.test_case "c2c against the definition" `Quick c2c_against_the_definition;
    Alcotest.test_case "bits follow values alone" `Quick bits_follow_values;
    Alcotest.test_case "r2c and c2r round trips" `Quick real_round_trip;
    Alcotest.test_case "c2r is a linear map" `Quick c2r_is_a_linear_map;
    Alcotest.test_case "zero points" `Quick zero_points;
    Alcotest.test_case "refusals" `Quick refusals ]
