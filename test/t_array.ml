(* Nx_array: dtypes, buffers, views, element access, bigarrays; Rig. *)

open Nx_array

let dtype_codes () =
  List.iteri
    (fun i (Dtype.Any d) ->
      Alcotest.(check int) (Dtype.name d) i (Dtype.code d);
      match Dtype.of_code i with
      | Some (Dtype.Any e) -> Alcotest.(check bool) "of_code" true (Dtype.equal d e)
      | None -> Alcotest.fail "of_code")
    Dtype.all;
  Alcotest.(check int) "count" 21 (List.length Dtype.all);
  Alcotest.(check bool) "no code 21" true (Dtype.of_code 21 = None);
  Alcotest.(check bool) "same" true (Dtype.same Dtype.Float32 Dtype.Float32 <> None);
  Alcotest.(check bool) "not same" true (Dtype.same Dtype.Float32 Dtype.Int32 = None)

let round_trip (type v s) (d : (v, s) Dtype.t) (cases : (v * v) list) eq show () =
  let a = zeros d [| List.length cases; 3 |] in
  List.iteri
    (fun i (put, want) ->
      for j = 0 to 2 do set a [| i; j |] put done;
      for j = 0 to 2 do
        let got = get a [| i; j |] in
        if not (eq got want) then
          Alcotest.failf "%s: set %s then get gave %s, not %s" (Dtype.name d) (show put) (show got)
            (show want)
      done)
    cases

let feq a b = Int64.equal (Int64.bits_of_float a) (Int64.bits_of_float b) || (Float.is_nan a && Float.is_nan b)
let ieq = Int.equal
let f = Printf.sprintf "%h"
let i = string_of_int

let element_access =
  [ ("bool", round_trip Dtype.Bool [ (true, true); (false, false) ] Bool.equal string_of_bool);
    ("bit", round_trip Dtype.Bit [ (true, true); (false, false); (true, true) ] Bool.equal string_of_bool);
    ("int4", round_trip Dtype.Int4 [ (7, 7); (8, -8); (-9, 7); (-1, -1) ] ieq i);
    ("uint4", round_trip Dtype.Uint4 [ (15, 15); (16, 0); (-1, 15) ] ieq i);
    ("int8", round_trip Dtype.Int8 [ (127, 127); (128, -128); (-129, 127) ] ieq i);
    ("uint16", round_trip Dtype.Uint16 [ (65535, 65535); (65536, 0); (-1, 65535) ] ieq i);
    ("int32", round_trip Dtype.Int32 [ (Int32.min_int, Int32.min_int); (5l, 5l) ] Int32.equal Int32.to_string);
    ("uint32", round_trip Dtype.Uint32 [ (0xFFFF_FFFF, 0xFFFF_FFFF); (-1, 0xFFFF_FFFF) ] ieq i);
    ("uint64", round_trip Dtype.Uint64 [ (-1L, -1L); (Int64.min_int, Int64.min_int) ] Int64.equal Int64.to_string);
    ("float16",
     round_trip Dtype.Float16
       [ (1.0, 1.0); (1.0 +. 0x1p-11, 1.0); (1.0 +. 0x1p-11 +. 0x1p-40, 1.0 +. 0x1p-10); (65520., infinity);
         (0x1p-24, 0x1p-24); (-0., -0.); (nan, nan) ]
       feq f);
    ("bfloat16", round_trip Dtype.Bfloat16 [ (1.0 +. 0x1p-8, 1.0); (3.0, 3.0) ] feq f);
    ("float8_e4m3fn", round_trip Dtype.Float8_e4m3fn [ (448., 448.); (500., nan); (infinity, nan); (0x1p-9, 0x1p-9) ] feq f);
    ("float8_e5m2", round_trip Dtype.Float8_e5m2 [ (57344., 57344.); (1e6, infinity); (-0., -0.) ] feq f);
    ("float4_e2m1fn", round_trip Dtype.Float4_e2m1fn [ (6., 6.); (7., 6.); (neg_infinity, -6.); (0.25, 0.); (0.75, 1.) ] feq f);
    ("float32", round_trip Dtype.Float32 [ (0.1, Int32.float_of_bits (Int32.bits_of_float 0.1)); (0x1p-149, 0x1p-149) ] feq f);
    ("float64", round_trip Dtype.Float64 [ (nan, nan); (-0., -0.); (0x1p-1074, 0x1p-1074) ] feq f);
    ("complex128",
     round_trip Dtype.Complex128 [ ({ Complex.re = 1.5; im = -0. }, { Complex.re = 1.5; im = -0. }) ]
       (fun a b -> feq a.Complex.re b.Complex.re && feq a.im b.im)
       (fun c -> f c.Complex.re ^ "+" ^ f c.im ^ "i")) ]

let sub_byte_neighbours () =
  let a = zeros Dtype.Int4 [| 5 |] in
  List.iteri (fun i v -> set a [| i |] v) [ 1; -2; 3; -4; 5 ];
  Alcotest.(check (list int)) "nibbles kept apart" [ 1; -2; 3; -4; 5 ] (to_list a);
  let b = zeros Dtype.Bit [| 11 |] in
  set b [| 9 |] true;
  set b [| 2 |] true;
  Alcotest.(check (list bool)) "bits kept apart"
    [ false; false; true; false; false; false; false; false; false; true; false ]
    (to_list b)

let views_refuse_escapes () =
  let b = Buffer.create 16 in
  let raises name f =
    match f () with
    | exception Invalid_argument _ -> ()
    | _ -> Alcotest.failf "%s: no Invalid_argument" name
  in
  raises "past the end" (fun () -> view Dtype.Float32 ~shape:[| 5 |] ~strides:[| 1 |] ~offset:0 b);
  raises "negative reach" (fun () -> view Dtype.Float32 ~shape:[| 2 |] ~strides:[| -1 |] ~offset:0 b);
  raises "negative extent" (fun () -> view Dtype.Float32 ~shape:[| -1 |] ~strides:[| 1 |] ~offset:0 b);
  raises "ranks" (fun () -> view Dtype.Float32 ~shape:[| 2 |] ~strides:[||] ~offset:0 b);
  raises "index" (fun () -> get (zeros Dtype.Int8 [| 2 |]) [| 2 |]);
  raises "rank of index" (fun () -> get (zeros Dtype.Int8 [| 2 |]) [| 0; 0 |]);
  (* A zero-size view touches nothing, wherever it starts. *)
  ignore (view Dtype.Float32 ~shape:[| 0; 4 |] ~strides:[| 4; 1 |] ~offset:100 b);
  let s = view Dtype.Float32 ~shape:[| 4 |] ~strides:[| -1 |] ~offset:3 b in
  set s [| 0 |] 7.;
  Alcotest.(check (float 0.)) "negative stride writes the last element" 7.
    (get (view Dtype.Float32 ~shape:[| 4 |] ~strides:[| 1 |] ~offset:0 b) [| 3 |])

let bigarrays_are_shared () =
  let open Bigarray in
  let ba = Genarray.create float32 c_layout [| 2; 3 |] in
  Genarray.fill ba 0.;
  let a = of_bigarray ba in
  set a [| 1; 2 |] 5.;
  Alcotest.(check (float 0.)) "write through the array" 5. (Genarray.get ba [| 1; 2 |]);
  Genarray.set ba [| 0; 1 |] 3.;
  Alcotest.(check (float 0.)) "write through the bigarray" 3. (get a [| 0; 1 |]);
  let fa = Genarray.create int32 fortran_layout [| 2; 3 |] in
  Genarray.set fa [| 2; 1 |] 9l;
  let b = of_bigarray fa in
  Alcotest.(check (array int)) "fortran strides" [| 1; 2 |] (strides b);
  Alcotest.(check int32) "fortran element" 9l (get b [| 1; 0 |]);
  match of_bigarray (Genarray.create char c_layout [| 2 |]) with
  | exception Invalid_argument _ -> ()
  | _ -> Alcotest.fail "char bigarray accepted"

(* [create]: fresh shapes and C-order strides at every rank (those of rank
   4 or less built in place), refusals of negative extents and of sizes
   past [max_int] bytes, and buffers of every size freed by the GC (each
   small one a block freed through its proxy, each large one its own). *)
let created_arrays () =
  for rank = 0 to 6 do
    let shape = Array.init rank (fun a -> a + 2) in
    let a = create Dtype.Int16 shape in
    let want = Array.make rank 1 in
    for k = rank - 2 downto 0 do want.(k) <- want.(k + 1) * shape.(k + 1) done;
    Alcotest.(check (array int)) (Printf.sprintf "strides of rank %d" rank) want (strides a);
    if rank > 0 then shape.(0) <- 99;
    Alcotest.(check (array int)) "the shape is a copy" (Array.init rank (fun a -> a + 2)) (Nx_array.shape a);
    if rank > 0 then begin
      (Nx_array.shape a).(0) <- 99;
      (strides a).(0) <- 99;
      Alcotest.(check int) "shape gives a copy" 2 (extent a 0);
      Alcotest.(check int) "strides gives a copy" want.(0) (stride a 0)
    end
  done;
  Alcotest.(check (array int)) "zero extents" [| 1; 1 |] (strides (create Dtype.Float32 [| 0; 0 |]));
  let raises name f =
    match f () with
    | exception Invalid_argument m -> Alcotest.(check bool) (name ^ ": " ^ m) true (String.length m > 15)
    | _ -> Alcotest.failf "%s: no Invalid_argument" name
  in
  raises "negative extent" (fun () -> create Dtype.Float32 [| 2; -1 |]);
  raises "element count" (fun () -> create Dtype.Int8 [| 1 lsl 40; 1 lsl 40 |]);
  raises "byte count" (fun () -> create Dtype.Complex128 [| max_int / 64 |]);
  for k = 0 to 20_000 do
    let n = if k mod 1000 = 0 then 5 lsl 20 else k mod 300 in
    let a = create Dtype.Uint8 [| n |] in
    if n > 0 then begin
      set a [| 0 |] 7;
      set a [| n - 1 |] 9;
      if get a [| 0 |] + get a [| n - 1 |] <> (if n = 1 then 18 else 16) then Alcotest.fail "buffer bytes"
    end
  done;
  Gc.full_major ()

external l2_bytes : unit -> int = "nx_cpu_l2_bytes"
external young_bytes : unit -> int = "nx_cpu_young_bytes"

(* Nx_array's GC pace ("Memory of freed arrays" in the README), where the
   environment leaves it: dead arrays up to ten times the heap before a
   major cycle; arrays below 32 MiB counted whole in the minor heap, whose
   budget holds the largest alone; and a minor collection before an array
   that would take those made since the last past a fifth of the
   second-level cache (half the minor heap at most), so that arrays of a
   little more than half that pile, of 3 MiB and of nearly 32 MiB, made
   and dropped in turn, each find the one before collected, never
   promoted. *)
let gc_pace () =
  let sets p =
    List.exists
      (fun v ->
        match Sys.getenv_opt v with
        | Some s -> List.exists (String.starts_with ~prefix:p) (String.split_on_char ',' s)
        | None -> false)
      [ "OCAMLRUNPARAM"; "CAMLRUNPARAM" ]
  in
  ignore (zeros Dtype.Float32 [| 4 |]);
  let gc = Gc.get () in
  let minor_bytes = gc.minor_heap_size * (Sys.word_size / 8) in
  let young = young_bytes () in
  if not (sets "M=") then Alcotest.(check bool) "custom_major_ratio >= 1000" true (gc.custom_major_ratio >= 1000);
  if not (sets "n=") then Alcotest.(check bool) "custom_minor_max_size >= 32 MiB" true (gc.custom_minor_max_size >= young);
  if not (sets "m=") then
    Alcotest.(check bool) "the minor budget holds the largest young array" true
      (minor_bytes / 100 * gc.custom_minor_ratio >= gc.custom_minor_max_size);
  if not (sets "m=" || sets "n=") then begin
    let pile = min (l2_bytes () / 5) (minor_bytes / 2) in
    let rounds = 20 in
    List.iter
      (fun n ->
        Gc.full_major ();
        let before = Gc.quick_stat () in
        for _ = 1 to rounds do
          ignore (Sys.opaque_identity (Buffer.create n))
        done;
        let after = Gc.quick_stat () in
        let minors = after.minor_collections - before.minor_collections in
        if minors < rounds - 1 then
          Alcotest.failf "%d arrays of %d bytes, a pile of %d: %d minor collections, not one before each but the first" rounds n
            pile minors;
        (* Each died in the minor heap: the GC moved a few small values to
           the major heap (24 words in 20 rounds here), far less than an
           array a round (its record and bigarray, 10 words). *)
        let promoted = after.promoted_words -. before.promoted_words in
        if promoted > float (rounds * 4) then
          Alcotest.failf "%.0f words promoted over %d rounds of %d bytes: arrays outlived their minor collection" promoted rounds n)
      [ (pile / 2) + 4096; 3 lsl 20; young - 4096 ]
  end

type bytes_ba = (char, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t

external alloc_bytes : int -> bytes_ba = "nx_cpu_alloc"

(* Buffers of n bytes, whose blocks the library keeps once the GC frees
   them, below 4 MiB and from 32 MiB ("Memory of freed arrays" in the
   README): a block goes to a
   new buffer only once no bigarray holds it, a sub-array of OCaml's own
   included; such a buffer compares, hashes and marshals as any bigarray;
   an array over one reads what was written. n >= 1000, so that the
   thousand places written are distinct. *)
let buffers_kept n () =
  let open Bigarray in
  let fill_from a k = for i = 0 to 999 do Array1.unsafe_set a (i * 7919 mod n) (Char.chr ((i + k) land 255)) done in
  let holds a k = List.for_all (fun i -> Array1.get a (i * 7919 mod n) = Char.chr ((i + k) land 255)) [ 0; 1; 500; 999 ] in
  for round = 1 to 3 do
    let a = alloc_bytes n in
    fill_from a round;
    let sub = Array1.sub a (n / 2) (n / 4) in
    let tail = Array1.sub a (n - 10) 10 in
    Array1.fill tail 'z';
    let before = Array1.get sub 10 in
    (* a dies, its sub-arrays live on: its block must not go to b. *)
    Gc.full_major ();
    let b = alloc_bytes n in
    Array1.fill b '\xff';
    Alcotest.(check char) (Printf.sprintf "round %d: a sub-array keeps its bytes" round) before (Array1.get sub 10);
    Alcotest.(check char) "its last byte" 'z' (Array1.get tail 9);
    Alcotest.(check char) "the new buffer" '\xff' (Array1.get b (n - 1));
    ignore (Sys.opaque_identity (sub, tail));
    Gc.full_major ();
    (* b's and a's blocks are free now: fresh buffers take them back. *)
    let c = alloc_bytes n and d = alloc_bytes (n + 5) in
    fill_from c (round + 1);
    Array1.fill d 'q';
    Alcotest.(check bool) "a taken block holds what is written" true (holds c (round + 1));
    Alcotest.(check char) "beside another" 'q' (Array1.get d (n + 4));
    let e = alloc_bytes n in
    Array1.blit c e;
    Alcotest.(check bool) "compare" true (compare c e = 0 && c = e);
    Alcotest.(check int) "hash" (Hashtbl.hash c) (Hashtbl.hash e);
    let back : bytes_ba = Marshal.from_string (Marshal.to_string e []) 0 in
    Alcotest.(check bool) "marshal" true (back = c && Array1.dim back = n)
  done

let big_buffers_kept () =
  buffers_kept ((32 lsl 20) + 4099) ();
  let f = create Dtype.Float32 [| 4096; 2049 |] in
  set f [| 0; 0 |] 1.5;
  set f [| 4095; 2048 |] (-2.);
  Alcotest.(check (float 0.)) "an array of 32 MiB" (-2.) (get f [| 4095; 2048 |]);
  Alcotest.(check (float 0.)) "its first element" 1.5 (get f [| 0; 0 |])

let rig () =
  Alcotest.(check bool) "host reaches host" true (Rig.reaches Rig.host Rig.host);
  Alcotest.(check bool) "arrays live on the host" true (rig (zeros Dtype.Bool [| 1 |]) = Rig.host);
  Alcotest.(check bool) "nx.cpu computes on the host" true (Nx_cpu.computes_on Rig.host);
  Alcotest.(check string) "name" "nx.cpu" Nx_cpu.name

let tests =
  [ ("dtype codes", `Quick, dtype_codes);
    ("sub-byte neighbours", `Quick, sub_byte_neighbours);
    ("views refuse escapes", `Quick, views_refuse_escapes);
    ("bigarrays are shared", `Quick, bigarrays_are_shared);
    ("created arrays", `Quick, created_arrays);
    ("GC pace", `Quick, gc_pace);
    ("big buffers kept", `Quick, big_buffers_kept);
    ("small buffers kept", `Quick, fun () -> List.iter (fun n -> buffers_kept n ()) [ 1000; 1025; 5000; 400_000 ]);
    ("rig", `Quick, rig) ]
  @ List.map (fun (n, f) -> ("get/set " ^ n, `Quick, f)) element_access
