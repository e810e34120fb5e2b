(* Helpers shared by the suites of Nx: errors that name their function,
   the indices of a shape, small whole-valued tensors and awkward layouts. *)

open Nx

(* Checks that [f ()] raises Invalid_argument with a message that starts
   with [name ^ ": "]. *)
let raises_named name f =
  match f () with
  | _ -> Alcotest.failf "%s: no exception" name
  | exception Invalid_argument m ->
      let p = name ^ ": " in
      if String.length m < String.length p || String.sub m 0 (String.length p) <> p then
        Alcotest.failf "the message %S does not start with %S" m p

let shape_is msg want t = Alcotest.(check (list int)) msg want (Array.to_list (shape t))

(* The element of any view at an index, read by Nx_array, not by a kernel. *)
let get t i = Nx_array.get t i

(* Every index of a shape, in C order. *)
let indices sh =
  let n = Array.fold_left ( * ) 1 sh in
  List.init n (fun k ->
      let idx = Array.make (Array.length sh) 0 and r = ref k in
      for a = Array.length sh - 1 downto 0 do
        idx.(a) <- !r mod sh.(a);
        r := !r / sh.(a)
      done;
      idx)

(* A float64 tensor of whole values in [-4, 4] drawn from [seed], so that
   every sum of products of a few is exact. *)
let small shape seed =
  let st = Random.State.make [| seed |] in
  init float64 shape (fun _ -> float (Random.State.int st 9 - 4))

(* The values of [t] under a transposed and flipped layout: negative
   strides, an offset, axes in reverse memory order. *)
let awkward t =
  let nd = ndim t in
  let axes = List.init nd (fun i -> nd - 1 - i) in
  flip (transpose ~axes (contiguous (transpose ~axes (flip t))))

(* Checks that [got] has [want]'s shape and, at each index, its value
   within [tol] (default 0), NaN where [want] is NaN. *)
let close ?(tol = 0.) msg want got =
  Alcotest.(check (list int)) (msg ^ ": shape") (Array.to_list (shape want)) (Array.to_list (shape got));
  List.iter
    (fun i ->
      let w = get want i and g = get got i in
      let ok = if Float.is_nan w then Float.is_nan g else Float.abs (w -. g) <= tol in
      if not ok then
        Alcotest.failf "%s: at [%s], %g where %g" msg (String.concat "; " (List.map string_of_int (Array.to_list i))) g w)
    (indices (shape want))
