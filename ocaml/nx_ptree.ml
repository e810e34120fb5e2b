(** Nx's parameter trees: the traversal interface Ptree.S and the stock
   dynamic tree Ptree.t. No kernel runs here: a traversal calls the
   caller's function on each leaf. Built on Nx_printing. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_printing.Make (K)

  module Ptree = struct
    type ('a, 'b) leaf = ('a, 'b) t
    type map_fn = { map : 'a 'b. ('a, 'b) leaf -> ('a, 'b) leaf }
    type map2_fn = { map2 : 'a 'b. ('a, 'b) leaf -> ('a, 'b) leaf -> ('a, 'b) leaf }
    type iter_fn = { iter : 'a 'b. ('a, 'b) leaf -> unit }

    module type S = sig
      type t

      val map : map_fn -> t -> t
      val map2 : map2_fn -> t -> t -> t
      val iter : iter_fn -> t -> unit
    end

    type tensor = P : ('a, 'b) leaf -> tensor
    type t = Tensor of tensor | List of t list | Dict of (string * t) list

    let tensor x = Tensor (P x)
    let list ts = List ts

    let dict kvs =
      let keys = List.map fst kvs in
      if List.length (List.sort_uniq String.compare keys) <> List.length keys then
        fail "Ptree.dict" "a repeated key among %s" (String.concat ", " keys);
      Dict kvs

    let rec map f = function
      | Tensor (P x) -> Tensor (P (f.map x))
      | List ts -> List (List.map (map f) ts)
      | Dict kvs -> Dict (List.map (fun (k, v) -> (k, map f v)) kvs)

    let rec iter f = function
      | Tensor (P x) -> f.iter x
      | List ts -> List.iter (iter f) ts
      | Dict kvs -> List.iter (fun (_, v) -> iter f v) kvs

    (* [path] is the reversed path from the root, for messages. *)
    let show_path path = match path with [] -> "the root" | _ -> String.concat "." (List.rev path)

    let kind = function Tensor _ -> "a tensor" | List l -> Printf.sprintf "a list of %d" (List.length l) | Dict _ -> "a dict"

    let map2 f a b =
      let differ path what = fail "Ptree.map2" "at %s: %s" (show_path path) what in
      let rec go path a b =
        match (a, b) with
        | Tensor (P x), Tensor (P y) -> (
            match D.same (dtype x) (dtype y) with
            | Some Type.Equal -> Tensor (P (f.map2 x y))
            | None -> differ path (Printf.sprintf "%s and %s leaves" (D.name (dtype x)) (D.name (dtype y))))
        | List xs, List ys when List.length xs = List.length ys ->
            List (List.mapi (fun i (x, y) -> go (string_of_int i :: path) x y) (List.combine xs ys))
        | Dict xs, Dict ys when List.map fst xs = List.map fst ys ->
            Dict (List.map2 (fun (k, x) (_, y) -> (k, go (k :: path) x y)) xs ys)
        | Dict xs, Dict ys ->
            differ path (Printf.sprintf "the keys %s and %s" (String.concat ", " (List.map fst xs)) (String.concat ", " (List.map fst ys)))
        | _ -> differ path (Printf.sprintf "%s and %s" (kind a) (kind b))
      in
      go [] a b
  end
end
