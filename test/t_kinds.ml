(* The math kinds through Nx_cpu.map against OCaml's own libm, in float64
   (within the contract's ulps, plus libm's own half ulp) and float32
   (rounded from the float64 reference), special values included. *)

open Nx_array
module P = Nx_kernel.Prog

(* Distance in units in the last place between two floats of a format of
   [bits] mantissa bits; 0 when both are NaN or equal. *)
let ulps ~mant ~emin got want =
  if Float.is_nan got && Float.is_nan want then 0.
  else if Float.is_nan got || Float.is_nan want then infinity
  else if got = want then 0.
  else if Float.is_integer got && Float.abs want = infinity then infinity
  else
    let e = Int.max (snd (Float.frexp want) - 1) emin in
    let ulp = Float.ldexp 1. (e - mant) in
    Float.abs (got -. want) /. ulp

let args = [ 0.; -0.; 1.; -1.; 0.5; 2.; 10.; -10.; 100.; 700.; -700.; 1e-300; 3e-310; 1e10; -1e10; infinity; neg_infinity; nan; 0.999; 1.001; 3.14159; 1e300 ]
let sample = args @ List.init 400 (fun _ -> Float.ldexp (Random.State.float Support.rng 2. -. 1.) (Random.State.int Support.rng 40 - 20)) |> Array.of_list

let run1 (type v s) (d : (v, s) Dtype.t) kind (xs : float array) (to_v : float -> v) (of_v : v -> float) =
  let n = Array.length xs in
  let x = init d [| n |] (fun i -> to_v xs.(i.(0))) and z = create d [| n |] in
  let p = P.of_node (P.Op1 (P.Unary kind, 0)) [| Dtype.Any d |] in
  Support.check_answer "map" Done
    (Nx_cpu.map p ~dsts:(Iarray.of_list [ Any z ]) (Iarray.of_list [ Nx_kernel.Plain (Any x) ]));
  Array.init n (fun i -> (of_v (get x [| i |]), of_v (get z [| i |])))

let r32 x = Int32.float_of_bits (Int32.bits_of_float x)

let check name kind reference ~bound64 ~bound32 () =
  Array.iter
    (fun (x, got) ->
      let e = ulps ~mant:52 ~emin:(-1022) got (reference x) in
      if e > bound64 +. 0.5 then Alcotest.failf "%s float64 at %h: %h, libm %h (%.2f ulps)" name x got (reference x) e)
    (run1 Dtype.Float64 kind sample Fun.id Fun.id);
  Array.iter
    (fun (x, got) ->
      let want = r32 (reference x) in
      let e = ulps ~mant:23 ~emin:(-126) got want in
      let finite32 = Float.abs want < 0x1p127 && Float.abs (reference x) > 0x1p-126 in
      if finite32 && e > bound32 +. 0.5 then Alcotest.failf "%s float32 at %h: %h, libm %h (%.2f ulps)" name x got want e)
    (run1 Dtype.Float32 kind sample r32 Fun.id)

let tests =
  List.map
    (fun (name, kind, f, b) -> (name, `Quick, check name kind f ~bound64:b ~bound32:b))
    [ ("exp", P.Exp, Float.exp, 2.); ("log", P.Log, Float.log, 1.); ("expm1", P.Expm1, Float.expm1, 4.);
      ("log1p", P.Log1p, Float.log1p, 4.); ("sin", P.Sin, Float.sin, 4.); ("cos", P.Cos, Float.cos, 4.);
      ("tan", P.Tan, Float.tan, 4.); ("atan", P.Atan, Float.atan, 4.); ("tanh", P.Tanh, Float.tanh, 4.);
      ("asinh", P.Asinh, Float.asinh, 4.); ("erf", P.Erf, Float.erf, 4.); ("log2", P.Log2, Float.log2, 4.);
      ("exp2", P.Exp2, Float.exp2, 4.) ]
  @ [ ("exp2 exact at integers, log2 at powers of two", `Quick,
       fun () ->
         let ints = Array.init 2098 (fun i -> float (i - 1074)) in
         Array.iter (fun (x, got) -> Alcotest.(check (float 0.)) "exp2" (Float.ldexp 1. (truncate x)) got)
           (run1 Dtype.Float64 P.Exp2 ints Fun.id Fun.id);
         let pows = Array.init 2098 (fun i -> Float.ldexp 1. (i - 1074)) in
         Array.iter (fun (x, got) -> Alcotest.(check (float 0.)) "log2" (float (snd (Float.frexp x) - 1)) got)
           (run1 Dtype.Float64 P.Log2 pows Fun.id Fun.id)) ]

(* Complex kinds against OCaml's Complex module (libm parts), relative to
   the result's modulus. *)
let complex_kinds () =
  let zs = List.concat_map (fun re -> List.map (fun im -> { Complex.re; im }) [ -2.5; -0.5; 0.; 0.75; 3. ]) [ -3.; -1.; 0.25; 1.; 2. ] in
  let n = List.length zs in
  let check kind reference =
    let x = init Dtype.Complex128 [| n |] (fun i -> List.nth zs i.(0)) and z = create Dtype.Complex128 [| n |] in
    let p = P.of_node (P.Op1 (P.Unary kind, 0)) [| Dtype.Any Dtype.Complex128 |] in
    Support.check_answer "map" Done (Nx_cpu.map p ~dsts:(Iarray.of_list [ Any z ]) (Iarray.of_list [ Nx_kernel.Plain (Any x) ]));
    List.iteri
      (fun i a ->
        let want = reference a and got = get z [| i |] in
        let err = Complex.norm (Complex.sub got want) /. Float.max (Complex.norm want) 1e-300 in
        if err > 1e-14 then Alcotest.failf "at %g%+gi: %g%+gi, want %g%+gi" a.Complex.re a.im got.Complex.re got.im want.re want.im)
      zs
  in
  check P.Exp Complex.exp;
  check P.Log Complex.log;
  check P.Sqrt Complex.sqrt

let tests = tests @ [ ("complex exp, log, sqrt", `Quick, complex_kinds) ]
