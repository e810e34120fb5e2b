(* A tour of nx_cpu from OCaml: arrays of several dtypes and layouts, and
   programs run by Nx_cpu.map, fused into one pass. *)

open Nx_array
module P = Nx_kernel.Prog

let show_floats name a =
  Printf.printf "%-34s %s\n" name
    (String.concat " " (List.map (Printf.sprintf "%g") (to_list a)))

let run p dsts loads =
  match Nx_cpu.map p ~dsts:(Iarray.of_list dsts) (Iarray.of_list (List.map (fun a -> Nx_kernel.Plain a) loads)) with
  | Done -> ()
  | Declined why | Refused why -> failwith why

let () =
  Printf.printf "nx_cpu demo: %s kernels on %d threads\n\n" Nx_cpu.name (Nx_cpu.threads ());
  let f32 = Dtype.Float32 in
  let x = init f32 [| 2; 3 |] (fun i -> float ((3 * i.(0)) + i.(1))) in
  let y = init f32 [| 2; 3 |] (fun i -> 0.5 *. float (i.(1) + 1)) in
  show_floats "x" x;
  show_floats "y" y;
  (* One kind over two operands: the program Prog.of_node makes. *)
  let add = P.of_node (P.Op2 (P.Add, 0, 1)) [| Dtype.Any f32; Dtype.Any f32 |] in
  let z = create f32 [| 2; 3 |] in
  run add [ Any z ] [ Any x; Any y ];
  show_floats "x + y" z;
  (* A fused program of two outputs: x * y + x, and whether x > y. *)
  let fused =
    P.make ~operands:[| Dtype.Any f32; Dtype.Any f32 |]
      [| P.Load 0; P.Load 1; P.Op2 (P.Mul, 0, 1); P.Op2 (P.Add, 2, 0); P.Op2 (P.Gt, 0, 1) |]
      ~outputs:[| 3; 4 |]
  in
  let fma = create f32 [| 2; 3 |] and gt = create Dtype.Bool [| 2; 3 |] in
  run fused [ Any fma; Any gt ] [ Any x; Any y ];
  show_floats "x * y + x (one pass)" fma;
  Printf.printf "%-34s %s\n" "x > y" (String.concat " " (List.map string_of_bool (to_list gt)));
  (* Layouts: the transpose of x is a view, no copy. *)
  let xt = view f32 ~shape:[| 3; 2 |] ~strides:[| 1; 3 |] ~offset:0 (buffer x) in
  let neg = P.of_node (P.Op1 (P.Unary P.Neg, 0)) [| Dtype.Any f32 |] in
  let nt = create f32 [| 3; 2 |] in
  run neg [ Any nt ] [ Any xt ];
  show_floats "-(transpose x)" nt;
  (* Casts round once: float64 into float16 and bfloat16, and into int8. *)
  let v = init Dtype.Float64 [| 4 |] (fun i -> [| 0.1; 1.0009765625; 65519.; -3.7 |].(i.(0))) in
  let cast d = P.of_node (P.Op1 (P.Cast (Dtype.Any d), 0)) [| Dtype.Any Dtype.Float64 |] in
  let h = create Dtype.Float16 [| 4 |] and b = create Dtype.Bfloat16 [| 4 |] and i8 = create Dtype.Int8 [| 4 |] in
  run (cast Dtype.Float16) [ Any h ] [ Any v ];
  run (cast Dtype.Bfloat16) [ Any b ] [ Any v ];
  run (cast Dtype.Int8) [ Any i8 ] [ Any v ];
  show_floats "v (float64)" v;
  show_floats "v as float16" h;
  show_floats "v as bfloat16" b;
  Printf.printf "%-34s %s\n" "v as int8 (toward zero)" (String.concat " " (List.map string_of_int (to_list i8)));
  (* A refusal says what is wrong and writes nothing. *)
  (match Nx_cpu.map add ~dsts:(Iarray.of_list [ Any (create f32 [| 3 |]) ]) (Iarray.of_list [ Nx_kernel.Plain (Any x); Nx_kernel.Plain (Any y) ]) with
   | Refused why -> Printf.printf "\na refused call: %s\n" why
   | Done | Declined _ -> print_endline "unexpected answer");
  (* A big map runs on every thread with the domain lock released. *)
  let n = 10_000_000 in
  let a = init f32 [| n |] (fun i -> float (i.(0) land 1023)) in
  let s = create f32 [| n |] in
  let t0 = Unix.gettimeofday () in
  run add [ Any s ] [ Any a; Any a ];
  Printf.printf "a + a over %d float32: %.1f ms, s[1023] = %g\n" n ((Unix.gettimeofday () -. t0) *. 1000.) (get s [| 1023 |])

(* The same through Nx, the numpy-like module: views, broadcasting,
   reductions and printing, every loop in the kernels above. *)
let () =
  let open Nx in
  print_endline "\nNx:";
  let x = reshape [| 2; 3 |] (arange_f float32 0. 6. 1.) in
  let col = create float32 [| 2; 1 |] [| 10.; 20. |] in
  Format.printf "@[x = %a@]@." pp x;
  Format.printf "@[x + col (col read with stride 0) = %a@]@." pp (add x col);
  Format.printf "@[transpose x (a view) = %a@]@." pp (transpose x);
  Format.printf "@[sum ~axes:[ 1 ] x = %a, mean = %g, std = %g@]@." pp (sum ~axes:[ 1 ] x) (item [] (mean x)) (item [] (std x));
  Format.printf "@[cumsum x = %a@]@." pp (cumsum x);
  Format.printf "@[slice [ A; Rs (2, -4, -2) ] x = %a@]@." pp (slice [ A; Rs (2, -4, -2) ] x);
  Format.printf "@[argmax ~axis:0 (sin x) = %a@]@." pp (argmax ~axis:0 (sin x));
  Format.printf "@[arange int32 0 1000 1 = %a@]@." pp (arange int32 0 1000 1);
  (try ignore (reshape [| 4 |] x) with Invalid_argument m -> Format.printf "an error: %s@." m)
