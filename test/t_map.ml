(* Nx_cpu.map against an OCaml reference computed element by element, over
   awkward layouts and special values, bits equal across thread counts, and
   every refusal leaving the destinations' bytes as they were. *)

open Nx_array
module P = Nx_kernel.Prog

let specials = [| nan; -.nan; infinity; neg_infinity; 0.; -0.; 0x1p-1074; -0x1p-1022; 0x1.fffffffffffffp1023; 1.; -1.5; 3e-310; 0.1; -7.25; 1e300; 2.5 |]

let float_value i = if i mod 3 = 0 then specials.(i / 3 mod Array.length specials) else Random.State.float Support.rng 200. -. 100.

let int_value i = if i mod 5 = 0 then [| 0; -1; 1; max_int; min_int |].(i / 5 mod 5) else Random.State.bits Support.rng - (1 lsl 29)

let indices shape =
  let acc = ref [] in
  let rank = Array.length shape in
  let idx = Array.make rank 0 in
  let rec go ax =
    if ax = rank then acc := Array.copy idx :: !acc
    else for i = 0 to shape.(ax) - 1 do idx.(ax) <- i; go (ax + 1) done
  in
  if not (Array.mem 0 shape) then go 0;
  List.rev !acc

(* Fills an array through [set] with values drawn by position. *)
let fill_with a value = List.iteri (fun k idx -> set a idx (value k)) (indices (shape a))

let run p dsts loads =
  Nx_cpu.map p ~dsts:(Iarray.of_list dsts) (Iarray.of_list (List.map (fun a -> Nx_kernel.Plain a) loads))

let same_float a b = Int64.equal (Int64.bits_of_float a) (Int64.bits_of_float b) || (Float.is_nan a && Float.is_nan b)
let round32 x = Int32.float_of_bits (Int32.bits_of_float x)

(* Runs a one-node program of two operands over every pairing of layouts,
   checking each element against [reference]. *)
let check_binary (type v s w t) ~(d : (v, s) Dtype.t) ~(out : (w, t) Dtype.t) kind ~value ~(reference : v -> v -> w) ~eq ~show ~(show_out : w -> string) shape () =
  let p = P.of_node (P.Op2 (kind, 0, 1)) [| Dtype.Any d; Dtype.Any d |] in
  let xs = Support.layouts d shape and ys = Support.layouts d shape in
  List.iteri
    (fun i (lx, x) ->
      let ly, y = List.nth ys ((i + 1) mod List.length ys) in
      fill_with x value;
      fill_with y (fun k -> value (k + 7));
      List.iter
        (fun (lz, z) ->
          if lz <> "broadcast" then begin
            Support.check_answer "map" Done (run p [ Any z ] [ Any x; Any y ]);
            List.iter
              (fun idx ->
                let want = reference (get x idx) (get y idx) and got = get z idx in
                if not (eq got want) then
                  Alcotest.failf "%s %s/%s into %s at [%s]: %s op %s gave %s, not %s" (Dtype.name d) lx ly lz
                    (String.concat ";" (Array.to_list (Array.map string_of_int idx)))
                    (show (get x idx)) (show (get y idx)) (show_out got) (show_out want))
              (indices shape)
          end)
        (Support.layouts out shape))
    xs

let wrap8 x = ((x land 0xFF) lxor 0x80) - 0x80
let sf = Printf.sprintf "%h"
let f64 = Dtype.Float64 and f32 = Dtype.Float32

let float64_ops =
  List.map
    (fun (name, k, r) ->
      (name ^ " float64", `Quick, check_binary ~d:f64 ~out:f64 k ~value:float_value ~reference:r ~eq:same_float ~show:sf ~show_out:sf [| 7; 9 |]))
    [ ("add", P.Add, ( +. )); ("sub", P.Sub, ( -. )); ("mul", P.Mul, ( *. )); ("div", P.Div, ( /. )) ]

let float32_ops =
  List.map
    (fun (name, k, r) ->
      (name ^ " float32", `Quick,
       check_binary ~d:f32 ~out:f32 k ~value:(fun i -> round32 (float_value i))
         ~reference:(fun a b -> round32 (r a b)) ~eq:same_float ~show:sf ~show_out:sf [| 3; 1100 |]))
    [ ("add", P.Add, ( +. )); ("mul", P.Mul, ( *. )); ("div", P.Div, ( /. )) ]

let int_ops =
  [ ("add int8 wraps", `Quick,
     check_binary ~d:Dtype.Int8 ~out:Dtype.Int8 P.Add ~value:(fun i -> wrap8 (int_value i))
       ~reference:(fun a b -> wrap8 (a + b)) ~eq:Int.equal ~show:string_of_int ~show_out:string_of_int [| 4; 33 |]);
    ("div int32 truncates, 0 by zero", `Quick,
     check_binary ~d:Dtype.Int32 ~out:Dtype.Int32 P.Div ~value:(fun i -> Int32.of_int (int_value i / 1000))
       ~reference:(fun a b -> if b = 0l then 0l else if a = Int32.min_int && b = -1l then a else Int32.div a b)
       ~eq:Int32.equal ~show:Int32.to_string ~show_out:Int32.to_string [| 5; 6 |]);
    ("mul int64 wraps", `Quick,
     check_binary ~d:Dtype.Int64 ~out:Dtype.Int64 P.Mul ~value:(fun i -> Int64.of_int (int_value i))
       ~reference:Int64.mul ~eq:Int64.equal ~show:Int64.to_string ~show_out:Int64.to_string [| 2; 3; 5 |]) ]

let comparisons =
  List.map
    (fun (name, k, r) ->
      (name ^ " float64 with NaN", `Quick,
       check_binary ~d:f64 ~out:Dtype.Bool k ~value:float_value ~reference:r ~eq:Bool.equal ~show:sf ~show_out:string_of_bool [| 6; 5 |]))
    [ ("lt", P.Lt, ( < )); ("ge", P.Ge, ( >= )); ("eq", P.Eq, ( = )); ("ne", P.Ne, ( <> )) ]

(* Casts through a one-node program, against [reference] on each element. *)
let check_cast (type v s w t) (d : (v, s) Dtype.t) (out : (w, t) Dtype.t) ~value ~(reference : v -> w) ~eq ~(show : w -> string) () =
  let p = P.of_node (P.Op1 (P.Cast (Dtype.Any out), 0)) [| Dtype.Any d |] in
  List.iter
    (fun (lx, x) ->
      fill_with x value;
      let z = create out (shape x) in
      Support.check_answer "map" Done (run p [ Any z ] [ Any x ]);
      List.iter
        (fun idx ->
          let want = reference (get x idx) and got = get z idx in
          if not (eq got want) then
            Alcotest.failf "cast %s -> %s (%s): %s gave %s, not %s" (Dtype.name d) (Dtype.name out) lx
              (Printf.sprintf "element %s" (String.concat ";" (Array.to_list (Array.map string_of_int idx))))
              (show got) (show want))
        (indices (shape x)))
    (Support.layouts d [| 4; 37 |])

(* The float16 nearest a float64, by Nx_array's own encoder. *)
let to_f16 x = let a = create Dtype.Float16 [||] in set a [||] x; get a [||]

let casts =
  [ ("float64 -> int32 truncates, saturates, NaN 0", `Quick,
     check_cast f64 Dtype.Int32 ~value:(fun i -> float_value i *. 1e7)
       ~reference:(fun x ->
         if Float.is_nan x then 0l
         else if x >= 2147483647. then Int32.max_int
         else if x <= -2147483648. then Int32.min_int
         else Int32.of_float x)
       ~eq:Int32.equal ~show:Int32.to_string);
    ("float64 -> float16 rounds once", `Quick,
     check_cast f64 Dtype.Float16 ~value:(fun i -> float_value i *. 1.0001) ~reference:to_f16 ~eq:same_float ~show:sf);
    ("int64 -> int4 wraps", `Quick,
     check_cast Dtype.Int64 Dtype.Int4 ~value:(fun i -> Int64.of_int (int_value i))
       ~reference:(fun x -> ((Int64.to_int x land 15) lxor 8) - 8) ~eq:Int.equal ~show:string_of_int);
    ("float64 -> uint8 saturates", `Quick,
     check_cast f64 Dtype.Uint8 ~value:float_value
       ~reference:(fun x -> if Float.is_nan x then 0 else if x >= 255. then 255 else if x <= 0. then 0 else truncate x)
       ~eq:Int.equal ~show:string_of_int);
    ("complex128 -> float64 takes the real part", `Quick,
     check_cast Dtype.Complex128 f64 ~value:(fun i -> { Complex.re = float_value i; im = float_value (i + 1) })
       ~reference:(fun c -> c.Complex.re) ~eq:same_float ~show:sf);
    ("bit -> float32", `Quick,
     check_cast Dtype.Bit f32 ~value:(fun i -> i mod 3 = 0) ~reference:(fun b -> if b then 1. else 0.) ~eq:same_float ~show:sf) ]

(* where(x < y, x * 2 + coord0, y) and (float16) x, as one program of two
   outputs, constants and a coordinate. *)
let fused () =
  let nodes =
    [| P.Load 0; P.Load 1; P.Const (P.Constant (f32, 2.)); P.Coord 0; P.Op1 (P.Cast (Dtype.Any f32), 3);
       P.Op2 (P.Mul, 0, 2); P.Op2 (P.Add, 5, 4); P.Op2 (P.Lt, 0, 1); P.Where (7, 6, 1);
       P.Op1 (P.Cast (Dtype.Any Dtype.Float16), 0) |]
  in
  let p = P.make ~operands:[| Dtype.Any f32; Dtype.Any f32 |] nodes ~outputs:[| 8; 9 |] in
  Alcotest.(check bool) "not single" false (P.is_single p);
  let shape = [| 5; 301 |] in
  let x = create f32 shape and y = create f32 shape in
  fill_with x (fun i -> round32 (float_value i));
  fill_with y (fun i -> round32 (float_value (i + 3)));
  let o0 = create f32 shape and o1 = create Dtype.Float16 shape in
  Support.check_answer "map" Done (run p [ Any o0; Any o1 ] [ Any x; Any y ]);
  List.iter
    (fun idx ->
      let a = get x idx and b = get y idx in
      let want = if a < b then round32 (round32 (a *. 2.) +. float idx.(0)) else b in
      if not (same_float (get o0 idx) want) then Alcotest.failf "out0 at %d,%d" idx.(0) idx.(1);
      if not (same_float (get o1 idx) (to_f16 a)) then Alcotest.failf "out1 at %d,%d" idx.(0) idx.(1))
    (indices shape)

let single () =
  let p = P.of_node (P.Op2 (P.Add, 0, 1)) [| Dtype.Any f32; Dtype.Any f32 |] in
  Alcotest.(check bool) "is_single" true (P.is_single p);
  Alcotest.(check bool) "single" true (P.single p = Some (P.Op2 (P.Add, 0, 1)))

let many_operands () =
  let n = max_operands + 4 in
  let d = Dtype.Int32 in
  let loads = Array.init n (fun i -> P.Load i) in
  let sums = Array.init (n - 1) (fun i -> P.Op2 (P.Add, (if i = 0 then 0 else n + i - 1), i + 1)) in
  let p = P.make ~operands:(Array.make n (Dtype.Any d)) (Array.append loads sums) ~outputs:[| (2 * n) - 2 |] in
  let xs = List.init n (fun k -> init d [| 3; 50 |] (fun idx -> Int32.of_int ((k * 1000) + (idx.(0) * 50) + idx.(1)))) in
  let z = create d [| 3; 50 |] in
  Support.check_answer "map" Done (run p [ Any z ] (List.map (fun x -> Any x) xs));
  List.iter
    (fun idx ->
      let want = List.fold_left (fun acc x -> Int32.add acc (get x idx)) 0l xs in
      Alcotest.(check int32) "sum" want (get z idx))
    (indices [| 3; 50 |])

let zero_size_and_zero_d () =
  let p = P.of_node (P.Op1 (P.Unary P.Neg, 0)) [| Dtype.Any f64 |] in
  let x = init f64 [||] (fun _ -> 2.5) and z = create f64 [||] in
  Support.check_answer "0-d" Done (run p [ Any z ] [ Any x ]);
  Alcotest.(check (float 0.)) "0-d value" (-2.5) (get z [||]);
  let e = create f64 [| 0; 3 |] in
  Support.check_answer "zero-size" Done (run p [ Any e ] [ Any (create f64 [| 0; 3 |]) ])

(* The same fused program under 1 and 4 threads gives the same bytes. *)
let threads_keep_bits () =
  let shape = [| 311; 297 |] in
  let x = create f32 shape and y = create f32 shape in
  fill_with x (fun i -> round32 (float_value i));
  fill_with y (fun i -> round32 (float_value (i + 1)));
  let p =
    P.make ~operands:[| Dtype.Any f32; Dtype.Any f32 |]
      [| P.Load 0; P.Load 1; P.Op2 (P.Mul, 0, 1); P.Op2 (P.Add, 2, 0); P.Op1 (P.Cast (Dtype.Any Dtype.Bfloat16), 3) |]
      ~outputs:[| 4 |]
  in
  let once threads =
    Nx_cpu.set_threads threads;
    let z = create Dtype.Bfloat16 shape in
    Support.check_answer "map" Done (run p [ Any z ] [ Any x; Any y ]);
    Support.bytes_of_buffer (buffer z)
  in
  let before = Nx_cpu.threads () in
  let one = once 1 in
  List.iter (fun t -> Alcotest.(check bool) (Printf.sprintf "%d threads" t) true (String.equal one (once t))) [ 2; 4; 7 ];
  Nx_cpu.set_threads before;
  match Nx_cpu.set_threads 0 with
  | exception Invalid_argument _ -> ()
  | () -> Alcotest.fail "0 threads accepted"

(* Each refusal answers before any write: the destination's bytes stay. *)
let refusals_leave_bytes () =
  let add = P.of_node (P.Op2 (P.Add, 0, 1)) [| Dtype.Any f32; Dtype.Any f32 |] in
  let x = init f32 [| 4; 4 |] (fun _ -> 1.) in
  let cases =
    [ ("shape", [ Any (create f32 [| 4; 5 |]) ], [ Any x; Any x ]);
      ("is int32", [ Any (create Dtype.Int32 [| 4; 4 |]) ], [ Any x; Any x ]);
      ("loads for a program", [ Any (create f32 [| 4; 4 |]) ], [ Any x ]);
      ("destinations for a program", [ Any (create f32 [| 4; 4 |]); Any (create f32 [| 4; 4 |]) ], [ Any x; Any x ]);
      ("several indices",
       [ Any (view f32 ~shape:[| 4; 4 |] ~strides:[| 0; 1 |] ~offset:0 (Buffer.create 16)) ], [ Any x; Any x ]) ]
  in
  List.iter
    (fun (needle, dsts, loads) ->
      let before = List.map (fun (Any a) -> Support.bytes_of_buffer (buffer a)) dsts in
      Support.is_refused_with ~needle (run add dsts loads);
      List.iter2
        (fun b (Any a) -> Alcotest.(check bool) ("unchanged after " ^ needle) true (String.equal b (Support.bytes_of_buffer (buffer a))))
        before dsts)
    cases;
  (* Two outputs into overlapping destinations. *)
  let two = P.make ~operands:[| Dtype.Any f32 |] [| P.Load 0 |] ~outputs:[| 0; 0 |] in
  let buf = Buffer.create 64 in
  Buffer.fill_byte buf 0x5A;
  let a = view f32 ~shape:[| 4; 4 |] ~strides:[| 4; 1 |] ~offset:0 buf in
  let b = view f32 ~shape:[| 4; 4 |] ~strides:[| 1; 4 |] ~offset:0 buf in
  let before = Support.bytes_of_buffer buf in
  Support.is_refused_with ~needle:"overlap" (run two [ Any a; Any b ] [ Any x ]);
  Alcotest.(check bool) "overlap leaves bytes" true (String.equal before (Support.bytes_of_buffer buf));
  (* Programs break a dtype rule: Invalid_argument from Prog.make. *)
  match P.make ~operands:[| Dtype.Any f32; Dtype.Any Dtype.Int8 |] [| P.Load 0; P.Load 1; P.Op2 (P.Add, 0, 1) |] ~outputs:[| 2 |] with
  | exception Invalid_argument m -> Alcotest.(check bool) "names the rule" true (String.length m > 0)
  | _ -> Alcotest.fail "mixed dtypes accepted"

(* A destination that is a shifted view of a load reads the load as it was. *)
let aliasing () =
  let n = 5000 in
  let buf = Buffer.create (4 * (n + 1)) in
  let at off = view Dtype.Int32 ~shape:[| n |] ~strides:[| 1 |] ~offset:off buf in
  let whole = view Dtype.Int32 ~shape:[| n + 1 |] ~strides:[| 1 |] ~offset:0 buf in
  for i = 0 to n do set whole [| i |] (Int32.of_int (3 * i)) done;
  let p = P.of_node (P.Op2 (P.Add, 0, 1)) [| Dtype.Any Dtype.Int32; Dtype.Any Dtype.Int32 |] in
  Support.check_answer "map" Done (run p [ Any (at 1) ] [ Any (at 0); Any (at 1) ]);
  for i = 0 to n - 1 do
    Alcotest.(check int32) "fresh result" (Int32.of_int ((3 * i) + (3 * (i + 1)))) (get whole [| i + 1 |])
  done

let tests =
  float64_ops @ float32_ops @ int_ops @ comparisons @ casts
  @ [ ("fused program, constants, coordinates, two outputs", `Quick, fused);
      ("of_node and single", `Quick, single);
      ("more operands than max_operands", `Quick, many_operands);
      ("zero-size and 0-d", `Quick, zero_size_and_zero_d);
      ("bits equal across thread counts", `Quick, threads_keep_bits);
      ("refusals leave destinations untouched", `Quick, refusals_leave_bytes);
      ("destinations aliasing loads", `Quick, aliasing) ]
