(* Helpers shared by the suites: layouts of every awkward kind over fresh
   buffers, and raw bytes of arrays. *)

open Nx_array

(* A deterministic generator, so failures reproduce. *)
let rng = Random.State.make [| 2026 |]

(* The layouts of [shape] a suite runs over, each a fresh buffer of random
   bytes: C-contiguous, transposed (axes reversed over a contiguous array of
   the reversed shape), reversed along axis 0 (negative stride and an
   offset), broadcast along axis 0 (stride 0) and offset by 3 elements. *)
let layouts : type v s. (v, s) Dtype.t -> int array -> (string * (v, s) t) list =
 fun d shape ->
  let rank = Array.length shape in
  let size = Array.fold_left ( * ) 1 shape in
  let buf elements =
    let b = Buffer.create (((elements * Dtype.bits d) + 7) / 8 + 8) in
    let bytes = buffer_bytes b in
    for i = 0 to Bigarray.Array1.dim bytes - 1 do
      Bigarray.Array1.set bytes i (Char.chr (Random.State.int rng 256))
    done;
    b
  in
  let c = contiguous_strides shape in
  let contiguous = ("contiguous", view d ~shape ~strides:c ~offset:0 (buf size)) in
  let rest =
    if rank = 0 || size = 0 then []
    else
      let rev = Array.of_list (List.rev (Array.to_list shape)) in
      let t = Array.of_list (List.rev (Array.to_list (contiguous_strides rev))) in
      let neg = Array.copy c in
      neg.(0) <- -c.(0);
      let bc = Array.copy c in
      bc.(0) <- 0;
      [ ("transposed", view d ~shape ~strides:t ~offset:0 (buf size));
        ("negative", view d ~shape ~strides:neg ~offset:((shape.(0) - 1) * c.(0)) (buf size));
        ("broadcast", view d ~shape ~strides:bc ~offset:0 (buf (size / shape.(0))));
        ("offset", view d ~shape ~strides:c ~offset:3 (buf (size + 3))) ]
  in
  contiguous :: rest

(* Every byte of a buffer, as a string. *)
let bytes_of_buffer b =
  let bytes = buffer_bytes b in
  String.init (Bigarray.Array1.dim bytes) (Bigarray.Array1.get bytes)

(* The bits of a float for comparisons that see -0 and NaN payloads. *)
let bits x = Int64.bits_of_float x

let show_answer = function
  | Done -> "Done"
  | Declined m -> "Declined " ^ m
  | Refused m -> "Refused " ^ m

let check_answer msg want got = Alcotest.(check string) msg (show_answer want) (show_answer got)

let is_refused_with ~needle = function
  | Refused m ->
      let n = String.length needle and l = String.length m in
      let rec has i = i + n <= l && (String.sub m i n = needle || has (i + 1)) in
      if not (has 0) then Alcotest.failf "refusal %S does not mention %S" m needle
  | Done -> Alcotest.failf "Done where a refusal mentioning %S was due" needle
  | Declined m -> Alcotest.failf "Declined %S where a refusal was due" m
