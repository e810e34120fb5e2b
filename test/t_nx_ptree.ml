(* Nx.Ptree: traversals of the dynamic tree and of a record that
   implements Ptree.S, and map2's errors naming the path. *)

open Nx
open Nx_support

let tree () =
  Ptree.dict
    [ ("w", Ptree.list [ Ptree.tensor (create float32 [| 2 |] [| 1.; 2. |]); Ptree.tensor (create int32 [| 1 |] [| 3l |]) ]);
      ("b", Ptree.tensor (scalar float64 4.)) ]

(* The leaves in order, each as the floats it holds. *)
let leaves t =
  let acc = ref [] in
  Ptree.iter { iter = (fun x -> acc := Array.to_list (to_array (cast float64 x)) :: !acc) } t;
  List.rev !acc

(* A record of tensors with its traversals, as a user writes one. *)
type params = { w : (float, float32_elt) t; b : (int32, int32_elt) t }

module Params : Ptree.S with type t = params = struct
  type t = params

  let map (f : Ptree.map_fn) p = { w = f.map p.w; b = f.map p.b }
  let map2 (f : Ptree.map2_fn) p q = { w = f.map2 p.w q.w; b = f.map2 p.b q.b }
  let iter (f : Ptree.iter_fn) p = f.iter p.w; f.iter p.b
end

let ptree () =
  let t = tree () in
  Alcotest.(check (list (list (float 0.)))) "iter in order" [ [ 1.; 2. ]; [ 3. ]; [ 4. ] ] (leaves t);
  let doubled = Ptree.map { map = (fun x -> add x x) } t in
  Alcotest.(check (list (list (float 0.)))) "map keeps each dtype" [ [ 2.; 4. ]; [ 6. ]; [ 8. ] ] (leaves doubled);
  Alcotest.(check (list (list (float 0.)))) "map2" [ [ 3.; 6. ]; [ 9. ]; [ 12. ] ] (leaves (Ptree.map2 { map2 = add } t doubled));
  let module T : Ptree.S with type t = Ptree.t = Ptree in
  Alcotest.(check (list (list (float 0.)))) "Ptree.t is an S" [ [ 1.; 2. ]; [ 3. ]; [ 4. ] ] (leaves (T.map { map = Fun.id } t));
  let p = { w = create float32 [| 2 |] [| 1.; -1. |]; b = create int32 [| 1 |] [| 5l |] } in
  let q = Params.map2 { map2 = sub } (Params.map { map = (fun x -> mul x x) } p) p in
  Alcotest.(check (list (float 0.))) "a record's map and map2" [ 0.; 2. ] (Array.to_list (to_array q.w));
  Alcotest.(check (list int32)) "at its own dtype" [ 20l ] (Array.to_list (to_array q.b));
  let swapped = Ptree.dict [ ("w", Ptree.list [ Ptree.tensor (create float32 [| 2 |] [| 1.; 2. |]); Ptree.tensor (scalar float32 3.) ]);
                             ("b", Ptree.tensor (scalar float64 4.)) ] in
  (match Ptree.map2 { map2 = add } t swapped with
   | _ -> Alcotest.fail "map2 of different dtypes"
   | exception Invalid_argument m -> Alcotest.(check string) "the path" "Ptree.map2: at w.1: int32 and float32 leaves" m);
  raises_named "Ptree.map2" (fun () -> Ptree.map2 { map2 = add } t (Ptree.list []));
  raises_named "Ptree.map2" (fun () -> Ptree.map2 { map2 = add } t (Ptree.dict [ ("b", Ptree.list []); ("w", Ptree.list []) ]));
  raises_named "Ptree.dict" (fun () -> Ptree.dict [ ("a", t); ("a", t) ])

let tests = [ ("traversals", `Quick, ptree) ]
