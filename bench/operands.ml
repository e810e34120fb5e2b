(* The operands of a case (inputs of the values cases.py also makes, laid
   out contiguous or transposed, and contiguous destinations) and the call of
   the case over them. *)

open Nx_array
module P = Nx_kernel.Prog
module K = Nx_kernel

type layout = Contiguous | Transposed

let layout_of_string = function
  | "C" -> Contiguous
  | "T" -> Transposed
  | s -> failwith ("layout " ^ s ^ " (C or T)")

let dtype_of_string s =
  match List.find_opt (fun (Dtype.Any d) -> Dtype.name d = s) Dtype.all with
  | Some d -> d
  | None -> failwith ("no dtype " ^ s)

(* "float32" is one dtype for source and destination; "float32->int32" two. *)
let dtypes_of_spec spec =
  match String.split_on_char '-' spec with
  | [ one ] -> (dtype_of_string one, dtype_of_string one)
  | [ src; dst ] when String.length dst > 1 && dst.[0] = '>' ->
      (dtype_of_string src, dtype_of_string (String.sub dst 1 (String.length dst - 1)))
  | _ -> failwith ("dtype spec " ^ spec)

(* "3162x3162" is a matrix, "9998244" a vector. *)
let shape_of_string s =
  let extent e =
    match int_of_string_opt e with
    | Some n when n >= 1 -> n
    | _ -> failwith ("shape " ^ s)
  in
  Array.of_list (List.map extent (String.split_on_char 'x' s))

let check : answer -> unit = function Done -> () | Declined why | Refused why -> failwith why

(* Input [k] of a case of [shape]: ((i * 7919 + k * 104729) mod 2001) / 100 - 10
   at flat index i, in [-10, 10], cast into [dtype] by our own kernel. *)
let input (Dtype.Any dtype) shape k =
  let n = Array.fold_left ( * ) 1 shape in
  let values =
    Bigarray.Array1.init Bigarray.Float64 Bigarray.c_layout n (fun i ->
        (float (((i * 7919) + (k * 104729)) mod 2001) /. 100.) -. 10.)
  in
  let f64 = of_bigarray (Bigarray.genarray_of_array1 values) in
  let a = create dtype shape in
  let flat = view dtype ~shape:[| n |] ~strides:[| 1 |] ~offset:0 (buffer a) in
  let cast = P.of_node (P.Op1 (P.Cast (Dtype.Any dtype), 0)) [| Dtype.Any Dtype.Float64 |] in
  check (Nx_cpu.map cast ~dsts:(Iarray.of_list [ Any flat ]) (Iarray.of_list [ K.Plain (Any f64) ]));
  Any a

(* The array a load reads: [a] itself or, of a square matrix, its transpose. *)
let laid layout (Any a) =
  match (layout, shape a) with
  | Contiguous, _ -> Any a
  | Transposed, [| side; side' |] when side = side' ->
      Any (view (dtype a) ~shape:[| side; side |] ~strides:[| 1; side |] ~offset:0 (buffer a))
  | Transposed, _ -> failwith "only a square matrix is transposed"

(* A destination, every byte written once so its pages are resident. *)
let output (Dtype.Any dtype) shape =
  let a = create dtype shape in
  Buffer.fill_byte (buffer a) 0;
  Any a

(* The destinations of a reduction or a scan: the extreme then the position
   for Arg, the mean then the variance for Moments. *)
let outputs r dst shape =
  match r with
  | K.Monoid _ | K.Logsumexp -> [ output dst shape ]
  | K.Arg _ -> [ output dst shape; output (Dtype.Any Dtype.Int64) shape ]
  | K.Moments -> [ output dst shape; output dst shape ]

(* The identity program of one operand, which reductions and scans read in
   place. *)
let identity src = P.of_node (P.Op1 (P.Cast src, 0)) [| src |]

(* The reduction [r] of [load], of dtype [src] and [shape], along [axes],
   as a function of its destinations. *)
let reduction src shape axes r load =
  let p = identity src and loads = Iarray.of_list [ load ] in
  let shape = Iarray.of_array shape and axes = Iarray.of_array axes in
  let rs = Iarray.of_list [ (r, 0) ] in
  fun dsts -> check (Nx_cpu.reduce p ~shape ~axes rs ~dsts loads)

(* The program dividing its one operand, of [dtype], by the count [n]. *)
let dividing dtype n =
  P.make ~operands:[| dtype |]
    [| P.Load 0; P.Const (P.Constant (Dtype.Float64, float n)); P.Op1 (P.Cast dtype, 1); P.Op2 (P.Div, 0, 2) |]
    ~outputs:[| 3 |]

(* One call of case [name] over fresh operands of [shape], as a closure. *)
let call name ~spec ~shape ~layout =
  let src, dst = dtypes_of_spec spec in
  let load d k = K.Plain (laid layout (input d shape k)) in
  match Cases.find name with
  | Cases.Map make ->
      let p = make src dst in
      let loads = Iarray.of_array (Array.mapi (fun k d -> load d k) (P.operands p)) in
      let dsts = Iarray.init (Array.length (P.outputs p)) (fun k -> output (P.output_dtype p k) shape) in
      fun () -> check (Nx_cpu.map p ~dsts loads)
  | Cases.Reduce (axes_of, r) ->
      let axes = axes_of (Array.length shape) in
      let f = reduction src shape axes r (load src 0) in
      let dsts = Iarray.of_list (outputs r dst (K.Shape.reduce shape ~axes)) in
      fun () -> f dsts
  | Cases.Mean ->
      let sum = reduction src shape (Cases.every (Array.length shape)) (K.Monoid K.Sum) (load src 0) in
      let mean = dividing dst (Array.fold_left ( * ) 1 shape) in
      let result = Iarray.of_list [ output dst [||] ] in
      fun () ->
        sum result;
        check (Nx_cpu.map mean ~dsts:result (Iarray.map (fun d -> K.Plain d) result))
  | Cases.Scan r ->
      let p = identity src and axis = Array.length shape - 1 in
      let dsts = Iarray.of_list (outputs r dst (K.Shape.scan shape)) in
      let loads = Iarray.of_list [ load src 0 ] in
      fun () -> check (Nx_cpu.scan p ~axis (r, 0) ~dsts loads)
