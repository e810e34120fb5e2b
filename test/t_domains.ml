(* Several domains calling map at once while another allocates and forces
   major collections; and two domains writing one destination, which the
   door serialises so that neither call's writes interleave. The domains
   note what goes wrong and the main one checks it: Alcotest's checks
   print through one formatter, which two domains may not share. *)

open Nx_array
module P = Nx_kernel.Prog

let f64 = Dtype.Float64
let add = P.of_node (P.Op2 (P.Add, 0, 1)) [| Dtype.Any f64; Dtype.Any f64 |]
let run p dsts loads = Nx_cpu.map p ~dsts:(Iarray.of_list dsts) (Iarray.of_list (List.map (fun a -> Nx_kernel.Plain a) loads))

(* A domain's note of an answer other than Done. *)
let unless_done what = function Done -> [] | a -> [ Printf.sprintf "%s: %s" what (Support.show_answer a) ]

let concurrent_maps_under_gc () =
  let stop = Atomic.make false in
  let churn =
    Domain.spawn (fun () ->
        let kept = ref [] in
        while not (Atomic.get stop) do
          kept := List.init 1000 (fun i -> Array.make 10 i) :: (match !kept with _ :: t when List.length t > 20 -> [] | l -> l);
          Gc.full_major ()
        done)
  in
  let n = 300_000 in
  let worker k () =
    let x = init f64 [| n |] (fun i -> float (i.(0) + k)) and y = init f64 [| n |] (fun i -> float (2 * i.(0))) in
    List.concat_map
      (fun round ->
        let z = create f64 [| n |] in
        let answer = run add [ Any z ] [ Any x; Any y ] in
        Gc.minor ();
        let wrong = List.filter (fun i -> get z [| i |] <> float ((3 * i) + k)) (List.init n Fun.id) in
        unless_done (Printf.sprintf "domain %d round %d" k round) answer
        @ List.map (Printf.sprintf "domain %d round %d element %d" k round) (List.filteri (fun j _ -> j < 3) wrong))
      (List.init 6 succ)
  in
  let workers = List.init 3 (fun k -> Domain.spawn (worker k)) in
  let problems = List.concat_map Domain.join workers in
  Atomic.set stop true;
  Domain.join churn;
  Alcotest.(check (list string)) "what went wrong" [] problems

let one_destination_two_writers () =
  let n = 1_000_000 in
  let z = create f64 [| n |] in
  let writer c () =
    let x = init f64 [| n |] (fun _ -> c) and zero = init f64 [| n |] (fun _ -> 0.) in
    List.concat_map (fun r -> unless_done (Printf.sprintf "writer %g call %d" c r) (run add [ Any z ] [ Any x; Any zero ])) (List.init 5 succ)
  in
  let a = Domain.spawn (writer 1.) and b = Domain.spawn (writer 2.) in
  let problems = Domain.join a @ Domain.join b in
  Alcotest.(check (list string)) "what went wrong" [] problems;
  let first = get z [| 0 |] in
  Alcotest.(check bool) "a writer's value" true (first = 1. || first = 2.);
  for i = 0 to n - 1 do
    if get z [| i |] <> first then Alcotest.failf "element %d is %g, element 0 %g: writes interleaved" i (get z [| i |]) first
  done

let tests =
  [ ("concurrent maps under major collections", `Slow, concurrent_maps_under_gc);
    ("two writers of one destination", `Slow, one_destination_two_writers) ]
