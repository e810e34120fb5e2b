(* Nx_cpu's matrix routines through the boundary: exact factors of small
   integer matrices, complex ones within their bounds, the pivot rules,
   NaN of a failed matrix alone, the same bits over every layout and
   threads, and refusals that leave destinations untouched. *)

open Nx_array
module K = Nx_kernel

let f64 = Dtype.Float64
let of_rows d rows = init d [| Array.length rows; Array.length rows.(0) |] (fun i -> rows.(i.(0)).(i.(1)))
let floats a = Array.of_list (to_list a)
let check_floats msg want got = Alcotest.(check (array (float 0.))) msg want (floats got)
let done_ msg a = Support.check_answer msg Done a

(* A copy of [a] in each awkward layout Support makes (broadcast left out:
   the routines' destinations may not map two indices to one element). *)
let in_layouts d a =
  List.filter_map
    (fun (name, x) ->
      if name = "broadcast" then None
      else begin
        let s = shape a in
        for i = 0 to s.(0) - 1 do
          for j = 0 to s.(1) - 1 do
            set x [| i; j |] (get a [| i; j |])
          done
        done;
        Some (name, x)
      end)
    (Support.layouts d (shape a))

let spd = of_rows f64 [| [| 4.; 12.; -16. |]; [| 12.; 37.; -43. |]; [| -16.; -43.; 98. |] |]

let cholesky_exact () =
  List.iter
    (fun threads ->
      Nx_cpu.set_threads threads;
      List.iter
        (fun (name, a) ->
          List.iter
            (fun (dname, l) ->
              done_ name (Nx_cpu.cholesky K.Lower ~dst:l a);
              check_floats (name ^ " into " ^ dname) [| 2.; 0.; 0.; 6.; 1.; 0.; -8.; 5.; 3. |] l;
              done_ name (Nx_cpu.cholesky K.Upper ~dst:l a);
              check_floats (name ^ " upper into " ^ dname) [| 2.; 6.; -8.; 0.; 1.; 5.; 0.; 0.; 3. |] l)
            (in_layouts f64 (zeros f64 [| 3; 3 |])))
        (in_layouts f64 spd))
    [ 1; 3 ];
  Nx_cpu.set_threads 2

let cholesky_fails_alone () =
  let a = init f64 [| 3; 2; 2 |] (fun i -> match i with [| 1; 0; 1 |] | [| 1; 1; 0 |] -> 3. | [| _; r; c |] when r = c -> 1. | _ -> 0.) in
  let l = create f64 [| 3; 2; 2 |] in
  done_ "batch" (Nx_cpu.cholesky K.Lower ~dst:l a);
  let v = floats l in
  Alcotest.(check (array (float 0.))) "first" [| 1.; 0.; 0.; 1. |] (Array.sub v 0 4);
  Alcotest.(check bool) "second NaN" true (Array.for_all Float.is_nan (Array.sub v 4 4));
  Alcotest.(check (array (float 0.))) "third" [| 1.; 0.; 0.; 1. |] (Array.sub v 8 4)

let complex_cholesky () =
  let c = Dtype.Complex128 in
  let a = of_rows c [| [| Complex.{ re = 2.; im = 0. }; Complex.{ re = 9.; im = 9. } |]; [| Complex.{ re = 1.; im = 1. }; Complex.{ re = 3.; im = 0. } |] |] in
  let l = create c [| 2; 2 |] in
  done_ "complex" (Nx_cpu.cholesky K.Lower ~dst:l a);
  (* L = [[√2, 0], [(1 + i)/√2, √2]] *)
  let l10 = get l [| 1; 0 |] and l11 = get l [| 1; 1 |] and l00 = get l [| 0; 0 |] in
  Alcotest.(check (float 1e-15)) "l00" (sqrt 2.) l00.re;
  Alcotest.(check (float 1e-15)) "l10 re" (1. /. sqrt 2.) l10.re;
  Alcotest.(check (float 1e-15)) "l10 im" (1. /. sqrt 2.) l10.im;
  Alcotest.(check (float 1e-15)) "l11" (sqrt 2.) l11.re;
  Alcotest.(check (float 0.)) "l11 im" 0. l11.im

let solve () =
  let l = of_rows f64 [| [| 2.; 99. |]; [| 6.; 1. |] |] in
  let b = of_rows f64 [| [| 4.; 2. |]; [| 13.; 7. |] |] in
  let x = create f64 [| 2; 2 |] in
  done_ "lower" (Nx_cpu.solve_triangular K.Lower ~adjoint:false ~unit_diagonal:false ~dst:x l b);
  check_floats "lower" [| 2.; 1.; 1.; 1. |] x;
  done_ "upper adjoint" (Nx_cpu.solve_triangular K.Upper ~adjoint:true ~unit_diagonal:false ~dst:x l b);
  (* aᴴ = [[2, 0], [99, 1]] *)
  check_floats "upper adjoint" [| 2.; 1.; -185.; -92. |] x;
  (* dst identical to b *)
  done_ "in place" (Nx_cpu.solve_triangular K.Lower ~adjoint:false ~unit_diagonal:true ~dst:b l b);
  check_floats "unit, in place" [| 4.; 2.; -11.; -5. |] b;
  let z = of_rows f64 [| [| 0.; 0. |]; [| 1.; 1. |] |] in
  done_ "zero diagonal" (Nx_cpu.solve_triangular K.Lower ~adjoint:false ~unit_diagonal:false ~dst:x z b);
  Alcotest.(check bool) "NaN" true (Array.for_all Float.is_nan (floats x))

let lu () =
  let a = of_rows f64 [| [| 1.; 2. |]; [| 3.; 4. |]; [| -3.; 0. |] |] in
  let lu = create f64 [| 3; 2 |] in
  let pivots, perm = K.lu_shapes [| 3; 2 |] in
  let pivots = create Dtype.Int64 pivots and perm = create Dtype.Int64 perm in
  done_ "lu" (Nx_cpu.lu ~lu ~pivots ~perm a);
  Alcotest.(check (list int64)) "pivots: the first of equal magnitudes" [ 1L; 2L ] (to_list pivots);
  Alcotest.(check (list int64)) "perm" [ 1L; 2L; 0L ] (to_list perm);
  check_floats "lu" [| 3.; 4.; -1.; 4.; 1. /. 3.; Float.fma (-.(1. /. 3.)) 4. 2. /. 4. |] lu

let qr () =
  let a = of_rows f64 [| [| 3.; 1. |]; [| 4.; 2. |]; [| 0.; 5. |] |] in
  List.iter
    (fun f ->
      let qs, rs = K.qr_shapes f [| 3; 2 |] in
      let q = create f64 qs and r = create f64 rs in
      done_ "qr" (Nx_cpu.qr ~q ~r a);
      let c = qs.(1) in
      for i = 0 to 2 do
        for j = 0 to 1 do
          let s = ref 0. in
          for p = 0 to c - 1 do
            s := !s +. (get q [| i; p |] *. get r [| p; j |])
          done;
          Alcotest.(check (float 1e-14)) "q r = a" (get a [| i; j |]) !s
        done
      done;
      for i = 0 to c - 1 do
        for j = 0 to c - 1 do
          let s = ref 0. in
          for p = 0 to 2 do
            s := !s +. (get q [| p; i |] *. get q [| p; j |])
          done;
          Alcotest.(check (float 1e-14)) "qᵀq = I" (if i = j then 1. else 0.) !s
        done
      done;
      Alcotest.(check (float 0.)) "r below" 0. (get r [| 1; 0 |]);
      Alcotest.(check (float 1e-14)) "|r00|" 5. (Float.abs (get r [| 0; 0 |])))
    [ K.Reduced; K.Complete ]

let refusals () =
  let a = of_rows f64 [| [| 1.; 2. |]; [| 3.; 4. |] |] in
  let dst = of_rows f64 [| [| 7.; 7.; 7. |]; [| 7.; 7.; 7. |] |] in
  let before = Support.bytes_of_buffer (buffer dst) in
  Support.is_refused_with ~needle:"dst has shape" (Nx_cpu.cholesky K.Lower ~dst a);
  Support.is_refused_with ~needle:"not square" (Nx_cpu.cholesky K.Lower ~dst:(create f64 [| 2; 3 |]) (create f64 [| 2; 3 |]));
  let i = init Dtype.Int32 [| 2; 2 |] (fun _ -> 1l) in
  Support.is_refused_with ~needle:"int32" (Nx_cpu.cholesky K.Lower ~dst:(create Dtype.Int32 [| 2; 2 |]) i);
  Support.is_refused_with ~needle:"q has shape"
    (Nx_cpu.qr ~q:dst ~r:(create f64 [| 3; 2 |]) a);
  Support.is_refused_with ~needle:"b has shape"
    (Nx_cpu.solve_triangular K.Lower ~adjoint:false ~unit_diagonal:false ~dst a (create f64 [| 3; 3 |]));
  Support.is_refused_with ~needle:"pivots"
    (Nx_cpu.lu ~lu:(create f64 [| 2; 2 |]) ~pivots:(create Dtype.Int64 [| 3 |]) ~perm:(create Dtype.Int64 [| 2 |]) a);
  (* Destinations that overlap: refused by the kernels. *)
  let q = create f64 [| 2; 2 |] in
  Support.is_refused_with ~needle:"overlap" (Nx_cpu.qr ~q ~r:q a);
  Alcotest.(check string) "untouched" before (Support.bytes_of_buffer (buffer dst))

let tests =
  [ ("cholesky: exact factors in every layout, 1 and 3 threads", `Quick, cholesky_exact);
    ("cholesky: a matrix that fails is NaN alone", `Quick, cholesky_fails_alone);
    ("cholesky: complex", `Quick, complex_cholesky);
    ("solve_triangular: triangles, adjoint, unit diagonal, in place, zero diagonal", `Quick, solve);
    ("lu: pivots, perm and factors", `Quick, lu);
    ("qr: reduced and complete", `Quick, qr);
    ("refusals leave destinations untouched", `Quick, refusals) ]
