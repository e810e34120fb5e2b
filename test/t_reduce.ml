(* Nx_cpu.reduce and scan against references written from the contract's
   words: lane order in OCaml (float32 additions rounded from float64, exact
   for a sum of two float32), sequential scans within a chunk, integer sums
   modulo 2^64, numpy's argmax rules; bits equal across threads and layouts;
   refusals leave destinations untouched. *)

open Nx_array
module K = Nx_kernel
module P = K.Prog

let r32 x = Int32.float_of_bits (Int32.bits_of_float x)
let add32 a b = r32 (a +. b)

(* Lane order, from the contract: blocks of 1024, 16 lanes by number mod 16,
   each from +0; lanes i += i + 8, i + 4, i + 2, then lane 0 takes lane 1;
   blocks by a tree whose left part is the largest power of two below the
   count. *)
let lane_order add (terms : float array) =
  let n = Array.length terms in
  let block b =
    let lanes = Array.make 16 None in
    for j = b * 1024 to min n ((b + 1) * 1024) - 1 do
      let l = (j - (b * 1024)) mod 16 in
      lanes.(l) <- Some (add (Option.value lanes.(l) ~default:0.) terms.(j))
    done;
    let merge a b = match (a, b) with None, x | x, None -> x | Some x, Some y -> Some (add x y) in
    List.iter (fun step -> for i = 0 to step - 1 do lanes.(i) <- merge lanes.(i) lanes.(i + step) done) [ 8; 4; 2; 1 ];
    Option.get lanes.(0)
  in
  let rec tree lo hi =
    if hi - lo = 1 then block lo
    else
      let k = ref 1 in
      while !k * 2 < hi - lo do k := !k * 2 done;
      add (tree lo (lo + !k)) (tree (lo + !k) hi)
  in
  if n = 0 then 0. else tree 0 ((n + 1023) / 1024)

let value i = let x = Float.of_int ((i * 7919) mod 10007) /. 10007. in r32 ((x -. 0.5) *. (10. ** float ((i mod 7) - 3)))
let load_prog d = P.of_node (P.Op1 (P.Cast (Dtype.Any d), 0)) [| Dtype.Any d |]
let plain a = Iarray.of_list [ K.Plain (Any a) ]
let ia = Iarray.of_list

let sums_by_axis () =
  let rows = 300 and cols = 2100 in
  let x = init Dtype.Float32 [| rows; cols |] (fun i -> value ((i.(0) * cols) + i.(1))) in
  (* The same values through a transposed view: a [cols; rows] array read
     with its axes reversed. *)
  let t = init Dtype.Float32 [| cols; rows |] (fun i -> value ((i.(1) * cols) + i.(0))) in
  let xt = view Dtype.Float32 ~shape:[| rows; cols |] ~strides:[| 1; rows |] ~offset:0 (buffer t) in
  List.iter
    (fun axis ->
      let n_out = if axis = 0 then cols else rows in
      let want =
        Array.init n_out (fun o ->
            lane_order add32 (Array.init (if axis = 0 then rows else cols) (fun j -> if axis = 0 then get x [| j; o |] else get x [| o; j |])))
      in
      List.iter
        (fun (name, src) ->
          List.iter
            (fun threads ->
              Nx_cpu.set_threads threads;
              let z = create Dtype.Float32 [| n_out |] in
              Support.check_answer "reduce" Done
                (Nx_cpu.reduce (load_prog Dtype.Float32) ~shape:(ia [ rows; cols ]) ~axes:(ia [ axis ])
                   (ia [ (K.Monoid K.Sum, 0) ]) ~dsts:(ia [ Any z ]) (plain src));
              Array.iteri
                (fun o w ->
                  if Int64.bits_of_float (get z [| o |]) <> Int64.bits_of_float w then
                    Alcotest.failf "axis %d %s %d threads output %d: %h, lane order %h" axis name threads o (get z [| o |]) w)
                want)
            [ 1; 3 ])
        [ ("contiguous", x); ("transposed", xt) ])
    [ 0; 1 ];
  Nx_cpu.set_threads 2

let long_sum () =
  let n = 3_000_017 in
  let x = init Dtype.Float32 [| n |] (fun i -> value i.(0)) in
  let z = create Dtype.Float32 [||] in
  Support.check_answer "reduce" Done
    (Nx_cpu.reduce (load_prog Dtype.Float32) ~shape:(ia [ n ]) ~axes:(ia [ 0 ]) (ia [ (K.Monoid K.Sum, 0) ]) ~dsts:(ia [ Any z ]) (plain x));
  let want = lane_order add32 (Array.init n value) in
  Alcotest.(check (float 0.)) "lane order of 3M terms" want (get z [||]);
  let naive = Array.fold_left add32 0. (Array.init n value) in
  Alcotest.(check bool) "and the order matters here" true (naive <> want)

let integers_wrap () =
  let x = init Dtype.Int32 [| 5; 1000 |] (fun i -> Int32.of_int ((i.(1) * 2_000_003) + i.(0))) in
  let z32 = create Dtype.Int32 [| 5 |] and z64 = create Dtype.Int64 [| 5 |] in
  Support.check_answer "reduce" Done
    (Nx_cpu.reduce (load_prog Dtype.Int32) ~shape:(ia [ 5; 1000 ]) ~axes:(ia [ 1 ])
       (ia [ (K.Monoid K.Sum, 0); (K.Monoid K.Sum, 0) ]) ~dsts:(ia [ Any z32; Any z64 ]) (plain x));
  for r = 0 to 4 do
    let s = ref 0L in
    for j = 0 to 999 do s := Int64.add !s (Int64.of_int32 (get x [| r; j |])) done;
    Alcotest.(check int64) "in int64" !s (get z64 [| r |]);
    Alcotest.(check int32) "wrapped into int32" (Int64.to_int32 !s) (get z32 [| r |])
  done

let arg_rules () =
  let vals = [| 1.; 3.; nan; 3.; nan; -0.; 0. |] in
  let x = init Dtype.Float64 [| 7 |] (fun i -> vals.(i.(0))) in
  let check which want_pos =
    let v = create Dtype.Float64 [||] and p = create Dtype.Int64 [||] in
    Support.check_answer "reduce" Done
      (Nx_cpu.reduce (load_prog Dtype.Float64) ~shape:(ia [ 7 ]) ~axes:(ia [ 0 ]) (ia [ (K.Arg which, 0) ]) ~dsts:(ia [ Any v; Any p ]) (plain x));
    Alcotest.(check int64) "position" want_pos (get p [||]);
    Alcotest.(check bool) "a NaN" true (Float.is_nan (get v [||]))
  in
  check K.Max 2L;
  check K.Min 2L;
  let y = init Dtype.Float64 [| 5 |] (fun i -> [| 1.; 4.; 4.; -2.; -2. |].(i.(0))) in
  let v = create Dtype.Float64 [||] and p = create Dtype.Int64 [||] in
  Support.check_answer "reduce" Done
    (Nx_cpu.reduce (load_prog Dtype.Float64) ~shape:(ia [ 5 ]) ~axes:(ia [ 0 ]) (ia [ (K.Arg K.Max, 0) ]) ~dsts:(ia [ Any v; Any p ]) (plain y));
  Alcotest.(check int64) "first of equal maxima" 1L (get p [||])

let moments_and_logsumexp () =
  let n = 5000 in
  let xs = Array.init n (fun i -> 1e8 +. (Float.of_int ((i * 37) mod 101) /. 7.)) in
  let x = init Dtype.Float64 [| n |] (fun i -> xs.(i.(0))) in
  let mean = create Dtype.Float64 [||] and var = create Dtype.Float64 [||] and lse = create Dtype.Float64 [||] in
  Support.check_answer "reduce" Done
    (Nx_cpu.reduce (load_prog Dtype.Float64) ~shape:(ia [ n ]) ~axes:(ia [ 0 ]) (ia [ (K.Moments, 0); (K.Logsumexp, 0) ])
       ~dsts:(ia [ Any mean; Any var; Any lse ]) (plain x));
  (* References by exact-enough means: deviations from 1e8 are small. *)
  let d = Array.map (fun v -> v -. 1e8) xs in
  let m = Array.fold_left ( +. ) 0. d /. float n in
  let v = Array.fold_left (fun a x -> a +. ((x -. m) ** 2.)) 0. d /. float n in
  let mx = Array.fold_left Float.max neg_infinity d in
  let l = 1e8 +. mx +. Float.log (Array.fold_left (fun a x -> a +. Float.exp (x -. mx)) 0. d) in
  let close what want got tol = if Float.abs (got -. want) > tol then Alcotest.failf "%s: %.17g, want %.17g" what got want in
  close "mean" (1e8 +. m) (get mean [||]) 1e-7;
  close "variance" v (get var [||]) (1e-9 *. v);
  close "logsumexp" l (get lse [||]) 1e-7

let cumsum_and_carry () =
  let n = 9000 in
  let x = init Dtype.Float32 [| 2; n |] (fun i -> value ((i.(0) * n) + i.(1))) in
  let z = create Dtype.Float32 [| 2; n |] in
  Support.check_answer "scan" Done (Nx_cpu.scan (load_prog Dtype.Float32) ~axis:1 (K.Monoid K.Sum, 0) ~dsts:(ia [ Any z ]) (plain x));
  for r = 0 to 1 do
    (* Chunks of 4096: the carry is the previous chunks' lane-order totals
       added in turn; within a chunk, left to right. *)
    let carry = ref 0. in
    for c = 0 to (n - 1) / 4096 do
      let lo = c * 4096 and hi = min n ((c + 1) * 4096) in
      let acc = ref !carry in
      for j = lo to hi - 1 do
        acc := add32 !acc (get x [| r; j |]);
        if Int64.bits_of_float !acc <> Int64.bits_of_float (get z [| r; j |]) then Alcotest.failf "row %d term %d" r j
      done;
      carry := add32 !carry (lane_order add32 (Array.init (hi - lo) (fun j -> get x [| r; lo + j |])))
    done
  done;
  (* With a carry of the carrier. *)
  let c = init Dtype.Float32 [| 2 |] (fun i -> float (100 * (i.(0) + 1))) in
  let w = create Dtype.Float32 [| 2; n |] in
  Support.check_answer "scan" Done
    (Nx_cpu.scan ~carry:(Any c) (load_prog Dtype.Float32) ~axis:1 (K.Monoid K.Sum, 0) ~dsts:(ia [ Any w ]) (plain x));
  Alcotest.(check (float 0.)) "first term plus carry" (add32 100. (get x [| 0; 0 |])) (get w [| 0; 0 |])

let refusals () =
  let x = init Dtype.Float32 [| 3; 4 |] (fun _ -> 1.) in
  let z = create Dtype.Float32 [| 3 |] in
  Buffer.fill_byte (buffer z) 0x42;
  let before = Support.bytes_of_buffer (buffer z) in
  let p = load_prog Dtype.Float32 in
  let red ?(axes = [ 1 ]) ?(rs = [ (K.Monoid K.Sum, 0) ]) ?(shape = [ 3; 4 ]) dsts =
    Nx_cpu.reduce p ~shape:(ia shape) ~axes:(ia axes) (ia rs) ~dsts:(ia dsts) (plain x)
  in
  Support.is_refused_with ~needle:"axis" (red ~axes:[ 2 ] [ Any z ]);
  Support.is_refused_with ~needle:"repeat" (red ~axes:[ 1; 1 ] [ Any z ]);
  Support.is_refused_with ~needle:"shape" (red ~axes:[ 0 ] [ Any z ]);
  Support.is_refused_with ~needle:"int64" (red ~rs:[ (K.Arg K.Max, 0) ] [ Any z; Any z ]);
  Support.is_refused_with ~needle:"dtype" (red ~rs:[ (K.Arg K.Sum, 0) ] [ Any z; Any (create Dtype.Int64 [| 3 |]) ]);
  Support.is_refused_with ~needle:"loop" (red ~shape:[ 3; 5 ] [ Any z ]);
  Support.is_refused_with ~needle:"carry"
    (Nx_cpu.scan ~carry:(Any z) p ~axis:1 (K.Logsumexp, 0) ~dsts:(ia [ Any (create Dtype.Float32 [| 3; 4 |]) ]) (plain x));
  Alcotest.(check bool) "untouched" true (String.equal before (Support.bytes_of_buffer (buffer z)))

(* Nx_cpu.reduce leaves the checks to the kernels: it must refuse exactly
   the calls Nx_kernel.reduce_refusal refuses, over every combination of a
   few programs, shapes, axes, reductions, destinations and loads, good and
   bad (every destination its own array: overlapping ones are the layout
   rules' refusal, not the loop's). *)
let refuses_as_reduce_refusal () =
  let x32 = init Dtype.Float32 [| 3; 4 |] (fun _ -> 1.) and xi = init Dtype.Int32 [| 3; 4 |] (fun _ -> 1l) in
  let progs = [ load_prog Dtype.Float32; load_prog Dtype.Int32 ] in
  let shapes = [ [ 3; 4 ]; [ 3; 5 ]; []; [ 0; 4 ] ] in
  let axess = [ []; [ 0 ]; [ 1 ]; [ 0; 1 ]; [ 1; 1 ]; [ 2 ]; [ -1 ] ] in
  let rss =
    [ []; [ (K.Monoid K.Sum, 0) ]; [ (K.Arg K.Max, 0) ]; [ (K.Moments, 0) ]; [ (K.Logsumexp, 0) ];
      [ (K.Monoid K.Max, 1) ]; [ (K.Arg K.Sum, 0) ]; [ (K.Monoid K.Sum, 0); (K.Monoid K.Min, 0) ] ]
  in
  let dstss =
    [ []; [ (Dtype.Any Dtype.Float32, [| 3 |]) ]; [ (Dtype.Any Dtype.Float32, [| 4 |]) ];
      [ (Dtype.Any Dtype.Float32, [||]) ]; [ (Dtype.Any Dtype.Int32, [| 3 |]) ];
      [ (Dtype.Any Dtype.Float32, [| 3 |]); (Dtype.Any Dtype.Int64, [| 3 |]) ];
      [ (Dtype.Any Dtype.Float32, [| 3 |]); (Dtype.Any Dtype.Float32, [| 3 |]) ] ]
  in
  let loadss = [ []; [ Any x32 ]; [ Any xi ]; [ Any x32; Any x32 ] ] in
  let fresh (Dtype.Any d, s) = Any (create d s) in
  let calls = ref 0 and refused = ref 0 in
  List.iter (fun p -> List.iter (fun shape -> List.iter (fun axes -> List.iter (fun rs -> List.iter (fun dsts ->
    List.iter (fun loads ->
      let shape = ia shape and axes = ia axes and rs = ia rs and dsts = ia (List.map fresh dsts) in
      let loads = ia (List.map (fun a -> K.Plain a) loads) in
      let want = K.reduce_refusal p ~shape ~axes rs ~dsts loads in
      let got = Nx_cpu.reduce p ~shape ~axes rs ~dsts loads in
      incr calls;
      (match (want, got) with
       | Some _, Refused _ -> incr refused
       | None, Done -> ()
       | Some why, a -> Alcotest.failf "reduce_refusal refuses (%s) but the call answers %s" why (Support.show_answer a)
       | None, a -> Alcotest.failf "reduce_refusal accepts but the call answers %s" (Support.show_answer a)))
      loadss) dstss) rss) axess) shapes) progs;
  Alcotest.(check bool) "some calls accepted, some refused" true (!refused > 0 && !refused < !calls)

let tests =
  [ ("sums along each axis are lane order, any threads or layout", `Quick, sums_by_axis);
    ("a sum of 3M terms", `Quick, long_sum);
    ("integer sums wrap", `Quick, integers_wrap);
    ("Arg: first NaN, first of ties", `Quick, arg_rules);
    ("Moments and Logsumexp with a large offset", `Quick, moments_and_logsumexp);
    ("cumsum by chunks, and a carry", `Quick, cumsum_and_carry);
    ("refusals leave destinations untouched", `Quick, refusals);
    ("reduce refuses exactly what reduce_refusal refuses", `Quick, refuses_as_reduce_refusal) ]

(* Every dtype reduces in its carrier: bool and sub-byte integers count,
   narrow floats sum in float32 and round once, complex sums part by part. *)
let every_dtype () =
  let sum_into (type v s w t) (d : (v, s) Dtype.t) (values : int -> v) (out : (w, t) Dtype.t) =
    let n = 1000 in
    let x = init d [| n |] (fun i -> values i.(0)) in
    let z = create out [||] in
    Support.check_answer ("sum of " ^ Dtype.name d) Done
      (Nx_cpu.reduce (load_prog d) ~shape:(ia [ n ]) ~axes:(ia [ 0 ]) (ia [ (K.Monoid K.Sum, 0) ]) ~dsts:(ia [ Any z ]) (plain x));
    (x, get z [||])
  in
  let _, c = sum_into Dtype.Bool (fun i -> i mod 3 = 0) Dtype.Int64 in
  Alcotest.(check int64) "bools count" 334L c;
  let _, c = sum_into Dtype.Bit (fun i -> i mod 4 = 1) Dtype.Int32 in
  Alcotest.(check int32) "bits count" 250l c;
  let _, c = sum_into Dtype.Int4 (fun i -> (i mod 16) - 8) Dtype.Int64 in
  Alcotest.(check int64) "int4 in int64" (Int64.of_int (List.fold_left ( + ) 0 (List.init 1000 (fun i -> (i mod 16) - 8)))) c;
  let _, c = sum_into Dtype.Uint4 (fun i -> i mod 16) Dtype.Uint8 in
  Alcotest.(check int) "uint4 wraps into uint8" (List.fold_left ( + ) 0 (List.init 1000 (fun i -> i mod 16)) land 255) c;
  let x, c = sum_into Dtype.Float16 (fun i -> 0.1 *. float (i mod 10)) Dtype.Float16 in
  let exact32 = lane_order add32 (Array.init 1000 (fun i -> get x [| i |])) in
  let h = create Dtype.Float16 [||] in
  set h [||] exact32;
  Alcotest.(check (float 0.)) "float16 in float32, rounded once" (get h [||]) c;
  let _, c = sum_into Dtype.Complex128 (fun i -> { Complex.re = float i; im = -1. }) Dtype.Complex128 in
  Alcotest.(check (float 0.)) "complex real part" 499500. c.Complex.re;
  Alcotest.(check (float 0.)) "complex imaginary part" (-1000.) c.Complex.im;
  (* Max of uint64 compares unsigned; Prod of int8 wraps in int64. *)
  let u = init Dtype.Uint64 [| 3 |] (fun i -> [| 5L; -1L; 7L |].(i.(0))) in
  let m = create Dtype.Uint64 [||] in
  Support.check_answer "max" Done
    (Nx_cpu.reduce (load_prog Dtype.Uint64) ~shape:(ia [ 3 ]) ~axes:(ia [ 0 ]) (ia [ (K.Monoid K.Max, 0) ]) ~dsts:(ia [ Any m ]) (plain u));
  Alcotest.(check int64) "unsigned max" (-1L) (get m [||])

let tests = tests @ [ ("every dtype in its carrier", `Quick, every_dtype) ]
