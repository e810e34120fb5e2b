(* The fixed cost of a kernel call: one-element and small map, reduce and
   scan calls timed in a loop, and Nx's elementwise and reduction functions
   over small tensors. Each figure is the least, over [rounds] rounds, of a
   round's CPU time per call: on a machine other work shares, the least is
   the figure that work disturbs least. Run it on one thread
   (NX_CPU_THREADS=1): the CPU time of a process counts all its threads.

     dune exec bench/overhead.exe [-- ROUNDS [CASE...]]

   Not part of `make bench` (which compares against numpy); for working on
   the call path. *)

open Nx_array
module P = Nx_kernel.Prog
module K = Nx_kernel

let check = function Done -> () | Declined m | Refused m -> failwith m
let f32 = Dtype.Any Dtype.Float32

let filled n =
  let a = create Dtype.Float32 [| n |] in
  for i = 0 to n - 1 do set a [| i |] (float ((i * 7919) mod 2001) /. 100.) done;
  a

let add_p = P.of_node (P.Op2 (P.Add, 0, 1)) [| f32; f32 |]
let id_p = P.of_node (P.Op1 (P.Cast f32, 0)) [| f32 |]

(* [transposed]: the operands are read through their transpose (the bench's
   `.T` rows), the destination written in order. *)
let map_case ?(transposed = false) shape =
  let n = Array.fold_left ( * ) 1 shape in
  let strides = contiguous_strides shape in
  let strides = if transposed then Array.of_list (List.rev (Array.to_list strides)) else strides in
  let x = Any (view Dtype.Float32 ~shape ~strides ~offset:0 (buffer (filled n))) in
  let z = Any (create Dtype.Float32 shape) in
  let dsts = Iarray.of_list [ z ] and loads = Iarray.of_list [ K.Plain x; K.Plain x ] in
  fun () -> check (Nx_cpu.map add_p ~dsts loads)

(* A reduction of the float32 [shape] along [axes] into a fresh destination. *)
let reduce_case ?(axes = [| 0 |]) shape r =
  let n = Array.fold_left ( * ) 1 shape in
  let x = view Dtype.Float32 ~shape ~strides:(contiguous_strides shape) ~offset:0 (buffer (filled n)) in
  let out = Array.of_list (List.filteri (fun i _ -> not (Array.mem i axes)) (Array.to_list shape)) in
  let dsts =
    match r with
    | K.Arg _ -> Iarray.of_list [ Any (create Dtype.Float32 out); Any (create Dtype.Int64 out) ]
    | _ -> Iarray.of_list [ Any (create Dtype.Float32 out) ]
  in
  let loads = Iarray.of_list [ K.Plain (Any x) ] in
  let shape = Iarray.of_array shape and axes = Iarray.of_array axes and rs = Iarray.of_list [ (r, 0) ] in
  fun () -> check (Nx_cpu.reduce id_p ~shape ~axes rs ~dsts loads)

let scan_case n =
  let x = filled n in
  let dsts = Iarray.of_list [ Any (create Dtype.Float32 [| n |]) ] in
  let loads = Iarray.of_list [ K.Plain (Any x) ] in
  fun () -> check (Nx_cpu.scan id_p ~axis:0 (K.Monoid K.Sum, 0) ~dsts loads)

let nx_add side =
  let a = Nx.ones Nx.float32 [| side; side |] in
  fun () -> ignore (Sys.opaque_identity (Nx.add a a))

let nx_sum n =
  let a = Nx.ones Nx.float32 [| n |] in
  fun () -> ignore (Sys.opaque_identity (Nx.sum a))

(* The sum of the first half of the rows, every other column: a strided view. *)
let nx_slice_sum side =
  let a = Nx.ones Nx.float32 [| side; side |] in
  fun () -> ignore (Sys.opaque_identity (Nx.sum (Nx.slice [ Nx.R (0, side / 2); Nx.Rs (0, side, 2) ] a)))

(* The steps of softmax along axis 1 of [rows; 1024], one at a time. *)
let softmax_steps rows =
  let x = Nx.init Nx.float32 [| rows; 1024 |] (fun i -> float ((i.(0) * 31 + i.(1) * 7) mod 97) /. 10.) in
  let m = Nx.max ~axes:[ 1 ] ~keepdims:true x in
  let d = Nx.sub x m in
  let e = Nx.exp d in
  let s = Nx.sum ~axes:[ 1 ] ~keepdims:true e in
  let name step = Printf.sprintf "softmax %dx1024 %s" rows step in
  [
    (name "max", fun () -> ignore (Sys.opaque_identity (Nx.max ~axes:[ 1 ] ~keepdims:true x)));
    (name "sub", fun () -> ignore (Sys.opaque_identity (Nx.sub x m)));
    (name "exp", fun () -> ignore (Sys.opaque_identity (Nx.exp d)));
    (name "sum", fun () -> ignore (Sys.opaque_identity (Nx.sum ~axes:[ 1 ] ~keepdims:true e)));
    (name "div", fun () -> ignore (Sys.opaque_identity (Nx.div e s)));
  ]

let cases =
  softmax_steps 512
  @ [
    ("map add float32 1", map_case [| 1 |]);
    ("map add float32 32x32", map_case [| 32; 32 |]);
    ("map add.T float32 32x32", map_case ~transposed:true [| 32; 32 |]);
    ("map add.T float32 316x316", map_case ~transposed:true [| 316; 316 |]);
    ("reduce sum float32 1", reduce_case [| 1 |] (K.Monoid K.Sum));
    ("reduce sum float32 1024", reduce_case [| 1024 |] (K.Monoid K.Sum));
    ("reduce max float32 1024", reduce_case [| 1024 |] (K.Monoid K.Max));
    ("reduce argmax float32 1024", reduce_case [| 1024 |] (K.Arg K.Max));
    ("reduce sum_axis0 float32 32x32", reduce_case [| 32; 32 |] (K.Monoid K.Sum));
    ("reduce sum_axis1 float32 32x32", reduce_case ~axes:[| 1 |] [| 32; 32 |] (K.Monoid K.Sum));
    ("scan sum float32 1024", scan_case 1024);
    ("Nx.add float32 1x1", nx_add 1);
    ("Nx.add float32 32x32", nx_add 32);
    ("Nx.sum float32 1024", nx_sum 1024);
    ("Nx.add float32 316x316", nx_add 316);
    ("Nx.slice sum float32 256x256", nx_slice_sum 256);
  ]

(* The process's CPU time: other work on the machine delays a round less
   than it does on the wall clock. *)
let cpu () =
  let t = Unix.times () in
  t.tms_utime +. t.tms_stime

let time rounds f =
  let per = 1000 in
  for _ = 1 to 200 do f () done;
  let best = ref infinity in
  for _ = 1 to rounds do
    let t = cpu () in
    for _ = 1 to per do f () done;
    best := Float.min !best ((cpu () -. t) /. float per)
  done;
  !best

let () =
  let args = List.tl (Array.to_list Sys.argv) in
  let rounds, only = match args with r :: only -> (int_of_string r, only) | [] -> (50, []) in
  List.iter
    (fun (name, f) ->
      if only = [] || List.exists (fun o -> String.starts_with ~prefix:o name) only then
        Printf.printf "%-30s %8.0f ns\n%!" name (1e9 *. time rounds f))
    cases
