(* The table of benchmark cases, mirrored by the one in cases.py. A case maps
   a source and a destination dtype to the program [Nx_cpu.map] runs; its
   operands are the program's. *)

open Nx_array
module P = Nx_kernel.Prog

let unary kind src _dst = P.of_node (P.Op1 (P.Unary kind, 0)) [| src |]
let binary kind src _dst = P.of_node (P.Op2 (kind, 0, 1)) [| src; src |]

(* a * b + c in one pass. *)
let fma src _dst =
  P.make ~operands:[| src; src; src |]
    [| P.Load 0; P.Load 1; P.Load 2; P.Op2 (P.Mul, 0, 1); P.Op2 (P.Add, 3, 2) |]
    ~outputs:[| 4 |]

let cast src dst = P.of_node (P.Op1 (P.Cast dst, 0)) [| src |]

let all : (string * (Dtype.any -> Dtype.any -> P.t)) list =
  [ ("add", binary P.Add); ("fma", fma); ("cast", cast); ("exp", unary P.Exp) ]

let find name =
  match List.assoc_opt name all with
  | Some make -> make
  | None -> failwith ("no case " ^ name)
