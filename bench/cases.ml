(* The table of benchmark cases, mirrored by the one in cases.py. A case is
   a map (a source and a destination dtype to the program [Nx_cpu.map] runs,
   whose operands are the program's), a reduction ([Nx_cpu.reduce] of its
   one input along some axes), a mean (the Sum reduction of every term, then
   that sum divided by their count in place by [Nx_cpu.map], as numpy's
   [x.mean()] does) or a scan ([Nx_cpu.scan] of its one input along its last
   axis). *)

open Nx_array
module P = Nx_kernel.Prog
module K = Nx_kernel

type t =
  | Map of (Dtype.any -> Dtype.any -> P.t)
  | Reduce of (int -> int array) * K.reduction
      (** The axes reduced, of a loop of the given rank, and the reduction. *)
  | Mean
  | Scan of K.reduction

let unary kind src _dst = P.of_node (P.Op1 (P.Unary kind, 0)) [| src |]
let binary kind src _dst = P.of_node (P.Op2 (kind, 0, 1)) [| src; src |]

(* a * b + c in one pass. *)
let fma src _dst =
  P.make ~operands:[| src; src; src |]
    [| P.Load 0; P.Load 1; P.Load 2; P.Op2 (P.Mul, 0, 1); P.Op2 (P.Add, 3, 2) |]
    ~outputs:[| 4 |]

let cast src dst = P.of_node (P.Op1 (P.Cast dst, 0)) [| src |]
let every rank = Array.init rank Fun.id

let all : (string * t) list =
  [
    ("add", Map (binary P.Add));
    ("fma", Map fma);
    ("cast", Map cast);
    ("exp", Map (unary P.Exp));
    ("sum", Reduce (every, K.Monoid K.Sum));
    ("sum_axis0", Reduce ((fun _ -> [| 0 |]), K.Monoid K.Sum));
    ("sum_axis1", Reduce ((fun _ -> [| 1 |]), K.Monoid K.Sum));
    ("max", Reduce (every, K.Monoid K.Max));
    ("argmax", Reduce (every, K.Arg K.Max));
    ("mean", Mean);
    (* Moments gives the mean and the variance together, in two passes. *)
    ("var", Reduce (every, K.Moments));
    ("logsumexp", Reduce (every, K.Logsumexp));
    ("cumsum", Scan (K.Monoid K.Sum));
    (* One element: the fixed cost of a call. *)
    ("add_one", Map (binary P.Add));
    ("sum_one", Reduce (every, K.Monoid K.Sum));
  ]

let find name =
  match List.assoc_opt name all with
  | Some case -> case
  | None -> failwith ("no case " ^ name)
