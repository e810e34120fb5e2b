(* Nx_cpu.unique against a reference written from the contract's words: a
   map from each row's words to its first row, keys numbered in order of
   first rows. Adversarial keys (all equal, all distinct, colliding in their
   low bits, spans just inside and outside the direct table's limits), w = 0
   and w = 4, keys read backwards, bits equal on 1 and 3 threads; rows of
   other dtypes through Nx_kernel.keys_of_rows; refusals leave destinations
   untouched. *)

open Nx_array

(* Each row's number, each key's first row and count, in order of first rows. *)
let reference (rows : int64 array array) =
  let seen = Hashtbl.create 64 in
  let first = ref [] and counts = Hashtbl.create 64 in
  let ids =
    Array.mapi
      (fun i r ->
        let key = Array.to_list r in
        let id =
          match Hashtbl.find_opt seen key with
          | Some id -> id
          | None ->
              let id = Hashtbl.length seen in
              Hashtbl.add seen key id;
              first := i :: !first;
              id
        in
        Hashtbl.replace counts id (1 + Option.value ~default:0 (Hashtbl.find_opt counts id));
        id)
      rows
  in
  let first = Array.of_list (List.rev !first) in
  (ids, first, Array.init (Array.length first) (Hashtbl.find counts))

(* Numbers [rows] of [w] words, the keys laid out with their rows reversed
   (a negative stride), into [m] entries of first and counts on [threads];
   checks them against the reference and gives every destination's words. *)
let check ?(m = 8) ~w ~threads rows =
  Nx_cpu.set_threads threads;
  let n = Array.length rows in
  let stored = init Dtype.Int64 [| n; w |] (fun i -> rows.(n - 1 - i.(0)).(i.(1))) in
  let keys =
    if n = 0 || w = 0 then stored
    else view Dtype.Int64 ~shape:[| n; w |] ~strides:[| -w; 1 |] ~offset:((n - 1) * w) (buffer stored)
  in
  let ids = create Dtype.Int64 [| n |] and first = create Dtype.Int64 [| m |] in
  let counts = create Dtype.Int64 [| m |] and count = create Dtype.Int64 [||] in
  (match Nx_cpu.unique ~ids ~first ~counts ~count keys with
  | Done -> ()
  | Declined why | Refused why -> Alcotest.fail why);
  let want_ids, want_first, want_counts = reference rows in
  let k = Array.length want_first in
  let ints a = List.map Int64.to_int (to_list a) in
  let what s = Printf.sprintf "%s, n %d w %d threads %d" s n w threads in
  Alcotest.(check (list int)) (what "ids") (Array.to_list want_ids) (ints ids);
  Alcotest.(check (list int)) (what "first") (List.init m (fun g -> if g < k then want_first.(g) else n)) (ints first);
  Alcotest.(check (list int)) (what "counts") (List.init m (fun g -> if g < k then want_counts.(g) else 0)) (ints counts);
  Alcotest.(check int) (what "count") k (Int64.to_int (get count [||]));
  (to_list ids, to_list first, to_list counts)

(* The same rows on 1 and 3 threads, the bits equal. *)
let both ?m ~w rows =
  let one = check ?m ~w ~threads:1 rows in
  let three = check ?m ~w ~threads:3 rows in
  Alcotest.(check bool) "same bits on 1 and 3 threads" true (one = three)

let rows n w f = Array.init n (fun i -> Array.init w (fun j -> f i j))

(* A splitmix64 step, for keys at random. *)
let splitmix s =
  s := Int64.add !s 0x9e3779b97f4a7c15L;
  let z = !s in
  let z = Int64.mul (Int64.logxor z (Int64.shift_right_logical z 30)) 0xbf58476d1ce4e5b9L in
  let z = Int64.mul (Int64.logxor z (Int64.shift_right_logical z 27)) 0x94d049bb133111ebL in
  Int64.logxor z (Int64.shift_right_logical z 31)

let below s n = Int64.unsigned_rem (splitmix s) (Int64.of_int n)

(* 100 000 rows: 3 threads number blocks of them and merge. *)
let adversarial () =
  let n = 100_000 and s = ref 3L in
  both ~w:2 (rows n 2 (fun _ _ -> 7L));
  both ~w:1 (rows n 1 (fun i _ -> Int64.mul (Int64.of_int i) 0x9e3779b97f4a7c15L));
  both ~m:6000 ~w:3 (rows n 3 (fun i j -> Int64.add (Int64.shift_left (Int64.of_int (i mod 5000)) 44) (Int64.of_int j)));
  both ~w:4 (rows n 4 (fun _ _ -> below s 3));
  both ~m:0 ~w:5 (rows n 5 (fun i j -> Int64.of_int (i / 7 mod 300 * (j + 1))))

(* One column spanning 2 n + 1024 values (one thread's direct table) and
   one more; words near the top of the unsigned range, read as unsigned. *)
let direct_limits () =
  let n = 100_000 and s = ref 5L in
  List.iter
    (fun span ->
      let lo = Int64.sub (-1L) (Int64.of_int (span - 1)) in
      let r = rows n 1 (fun _ _ -> Int64.add lo (below s span)) in
      r.(0).(0) <- lo;
      r.(1).(0) <- -1L;
      both ~m:50 ~w:1 r)
    [ (2 * n) + 1024; (2 * n) + 1025 ];
  (* Two columns whose spans multiply to just inside and outside 2^20. *)
  List.iter
    (fun (a, b) ->
      let r = rows 300_000 2 (fun _ j -> below s (if j = 0 then a else b)) in
      r.(0) <- [| Int64.of_int (a - 1); Int64.of_int (b - 1) |];
      r.(1) <- [| 0L; 0L |];
      both ~m:5 ~w:2 r)
    [ (1024, 1024); (1024, 1025) ]

let no_words_and_no_rows () =
  both ~m:3 ~w:0 (rows 5 0 (fun _ _ -> 0L));
  both ~m:2 ~w:0 (rows 0 0 (fun _ _ -> 0L));
  both ~m:2 ~w:3 (rows 0 3 (fun _ _ -> 0L));
  both ~m:1 ~w:4 (rows 1 4 (fun _ j -> Int64.of_int j));
  both ~m:3 ~w:4 (rows 40_000 4 (fun i j -> Int64.of_int ((i * 7919) mod 1000 * (j + 1))))

(* int32 pairs as one word a row; float64 rows by their bits: -0 and +0
   two keys, NaNs of two payloads two keys. *)
let rows_of_other_dtypes () =
  let pairs = [| (1l, 2l); (2l, 1l); (1l, 2l); (-1l, 0l); (2l, 1l) |] in
  let x = init Dtype.Int32 [| 5; 2 |] (fun i -> let a, b = pairs.(i.(0)) in if i.(1) = 0 then a else b) in
  let keys = Option.get (Nx_kernel.keys_of_rows x) in
  Alcotest.(check (array int)) "pairs as words" [| 5; 1 |] (shape keys);
  let ids = create Dtype.Int64 [| 5 |] and first = create Dtype.Int64 [| 4 |] in
  let counts = create Dtype.Int64 [| 4 |] and count = create Dtype.Int64 [||] in
  ignore (Nx_cpu.unique ~ids ~first ~counts ~count keys);
  Alcotest.(check (list int64)) "pair ids" [ 0L; 1L; 0L; 2L; 1L ] (to_list ids);
  Alcotest.(check (list int64)) "pair counts" [ 2L; 2L; 1L; 0L ] (to_list counts);
  (* The NaNs' bits written through an int64 view, as a float's store may
     quiet or canonicalise a payload. *)
  let nan = Int64.bits_of_float Float.nan in
  let fs = [| 0L; Int64.bits_of_float (-0.); nan; Int64.logxor nan 2L; 0L; nan |] in
  let x = create Dtype.Float64 [| 6; 1 |] in
  let bits = view Dtype.Int64 ~shape:[| 6 |] ~strides:[| 1 |] ~offset:0 (buffer x) in
  Array.iteri (fun i b -> set bits [| i |] b) fs;
  let keys = Option.get (Nx_kernel.keys_of_rows x) in
  let ids = create Dtype.Int64 [| 6 |] in
  ignore (Nx_cpu.unique ~ids ~first ~counts ~count keys);
  Alcotest.(check (list int64)) "float64 bits" [ 0L; 1L; 2L; 3L; 0L; 2L ] (to_list ids);
  let odd = init Dtype.Int32 [| 4; 3 |] (fun _ -> 0l) in
  Alcotest.(check bool) "three int32s are not whole words" true (Nx_kernel.keys_of_rows odd = None);
  let shifted = view Dtype.Int32 ~shape:[| 2; 2 |] ~strides:[| 2; 1 |] ~offset:1 (buffer odd) in
  Alcotest.(check bool) "rows off a word's start" true (Nx_kernel.keys_of_rows shifted = None);
  let empty = Option.get (Nx_kernel.keys_of_rows (create Dtype.Float32 [| 3; 0 |])) in
  Alcotest.(check (array int)) "no columns" [| 3; 0 |] (shape empty)

let refusals () =
  let keys = init Dtype.Int64 [| 4; 3 |] (fun i -> Int64.of_int i.(0)) in
  let ids, first, counts, count =
    (zeros Dtype.Int64 [| 4 |], zeros Dtype.Int64 [| 4 |], zeros Dtype.Int64 [| 4 |], zeros Dtype.Int64 [||])
  in
  let refused what = function Refused _ -> () | _ -> Alcotest.fail (what ^ " was not refused") in
  refused "ids of 3" (Nx_cpu.unique ~ids:(zeros Dtype.Int64 [| 3 |]) ~first ~counts ~count keys);
  refused "counts of 3" (Nx_cpu.unique ~ids ~first ~counts:(zeros Dtype.Int64 [| 3 |]) ~count keys);
  refused "count of 1" (Nx_cpu.unique ~ids ~first ~counts ~count:(zeros Dtype.Int64 [| 1 |]) keys);
  refused "keys of rank 1" (Nx_cpu.unique ~ids ~first ~counts ~count (zeros Dtype.Int64 [| 4 |]));
  refused "first over ids" (Nx_cpu.unique ~ids ~first:ids ~counts ~count keys);
  refused "ids over the keys"
    (Nx_cpu.unique ~ids:(view Dtype.Int64 ~shape:[| 4 |] ~strides:[| 1 |] ~offset:0 (buffer keys)) ~first ~counts
       ~count keys);
  refused "ids of stride 0"
    (Nx_cpu.unique ~ids:(view Dtype.Int64 ~shape:[| 4 |] ~strides:[| 0 |] ~offset:0 (buffer ids)) ~first ~counts
       ~count keys);
  List.iter
    (fun (name, a) -> Alcotest.(check (list int64)) (name ^ " untouched") (List.map (fun _ -> 0L) (to_list a)) (to_list a))
    [ ("ids", ids); ("first", first); ("counts", counts); ("count", count) ];
  Alcotest.(check bool) "the refusal function agrees" true
    (Nx_kernel.unique_refusal ~ids ~first ~counts ~count keys = None
    && Nx_kernel.unique_refusal ~ids ~first:(zeros Dtype.Int64 [| 2; 2 |]) ~counts ~count keys <> None)

let tests =
  [ Alcotest.test_case "adversarial keys, 1 and 3 threads" `Quick adversarial;
    Alcotest.test_case "spans inside and outside the direct table" `Quick direct_limits;
    Alcotest.test_case "w = 0, no rows, w = 4" `Quick no_words_and_no_rows;
    Alcotest.test_case "rows of other dtypes through their bits" `Quick rows_of_other_dtypes;
    Alcotest.test_case "refusals write nothing" `Quick refusals ]
