(* The operands of a case (inputs of the values cases.py also makes, laid
   out contiguous or transposed, and contiguous destinations) and the call of
   its program over them. *)

open Nx_array
module P = Nx_kernel.Prog

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

let check : answer -> unit = function Done -> () | Declined why | Refused why -> failwith why

(* Input [k] of a side x side case: ((i * 7919 + k * 104729) mod 2001) / 100 - 10
   at flat index i, in [-10, 10], cast into [dtype] by our own kernel. *)
let input (Dtype.Any dtype) side k =
  let n = side * side in
  let values =
    Bigarray.Array1.init Bigarray.Float64 Bigarray.c_layout n (fun i ->
        (float (((i * 7919) + (k * 104729)) mod 2001) /. 100.) -. 10.)
  in
  let f64 = of_bigarray (Bigarray.genarray_of_array1 values) in
  let a = create dtype [| side; side |] in
  let flat = view dtype ~shape:[| n |] ~strides:[| 1 |] ~offset:0 (buffer a) in
  let cast = P.of_node (P.Op1 (P.Cast (Dtype.Any dtype), 0)) [| Dtype.Any Dtype.Float64 |] in
  check (Nx_cpu.map cast ~dsts:(Iarray.of_list [ Any flat ]) (Iarray.of_list [ Nx_kernel.Plain (Any f64) ]));
  Any a

(* The array a load reads: [a] itself or its transpose. *)
let laid layout (Any a) =
  match layout with
  | Contiguous -> Any a
  | Transposed ->
      let side = (shape a).(0) in
      Any (view (dtype a) ~shape:[| side; side |] ~strides:[| 1; side |] ~offset:0 (buffer a))

(* A destination, every byte written once so its pages are resident. *)
let output (Dtype.Any dtype) side =
  let a = create dtype [| side; side |] in
  Buffer.fill_byte (buffer a) 0;
  Any a

(* One call of case [name] over fresh side x side operands, as a closure. *)
let call name ~spec ~side ~layout =
  let src, dst = dtypes_of_spec spec in
  let p = Cases.find name src dst in
  let loads = Array.mapi (fun k d -> Nx_kernel.Plain (laid layout (input d side k))) (P.operands p) in
  let dsts = Array.init (Array.length (P.outputs p)) (fun k -> output (P.output_dtype p k) side) in
  let loads = Iarray.of_array loads and dsts = Iarray.of_array dsts in
  fun () -> check (Nx_cpu.map p ~dsts loads)
