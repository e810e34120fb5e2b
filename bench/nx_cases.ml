(* The benchmark cases of the Nx module, mirrored by nx_cases.py: what a
   user writes after [open Nx], each call making a fresh result. SHAPE is
   the operand's. *)

(* A float32 tensor of the values of [Kernel_cases.real k]. *)
let reals shape k : (float, Nx.float32_elt) Nx.t = Kernel_cases.reals Nx_array.Dtype.Float32 shape k

let add ~spec:_ ~shape ~layout:_ =
  let a = reals shape 0 and b = reals shape 1 in
  fun () -> ignore (Nx.add a b)

let sum ~spec:_ ~shape ~layout:_ =
  let x = reals shape 0 in
  fun () -> ignore (Nx.sum x)

(* Softmax along axis 1, written out. *)
let softmax ~spec:_ ~shape ~layout:_ =
  let x = reals shape 0 in
  fun () ->
    let e = Nx.exp (Nx.sub x (Nx.max ~axes:[ 1 ] ~keepdims:true x)) in
    ignore (Nx.div e (Nx.sum ~axes:[ 1 ] ~keepdims:true e))

(* The sum of the first half of the rows, every other column. *)
let slice_sum ~spec:_ ~shape ~layout:_ =
  let x = reals shape 0 in
  let rows, cols = (shape.(0), shape.(1)) in
  fun () -> ignore (Nx.sum (Nx.slice [ Nx.R (0, rows / 2); Nx.Rs (0, cols, 2) ] x))

(* A product of two square matrices. *)
let matmul ~spec:_ ~shape ~layout:_ =
  let a = reals shape 0 and b = reals shape 1 in
  fun () -> ignore (Nx.matmul a b)

let all =
  [
    ("nx_add", add);
    ("nx_sum", sum);
    ("nx_softmax", softmax);
    ("nx_matmul", matmul);
    ("nx_slice_sum", slice_sum);
  ]
let find name = List.assoc_opt name all
