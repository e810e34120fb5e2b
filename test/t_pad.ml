(* Padded loads through Nx_cpu.map, against padding and windowing by hand;
   Nx_kernel.Shape.padded; refusals before any copy or write. *)

open Nx_array
module K = Nx_kernel
module P = K.Prog

let win size stride dilation = Some { K.size; stride; dilation }

(* The element a padded load reads at a loop index, by hand. *)
let by_hand (p : K.pad) x idx =
  let shape = shape x in
  let r = Array.length shape in
  let tap = ref r in
  let pos =
    Array.init r (fun a ->
        let w = if Array.length p.windows = 0 then None else p.windows.(a) in
        (match w with
         | None -> idx.(a)
         | Some w ->
             let t = idx.(!tap) in
             incr tap;
             (idx.(a) * w.K.stride) + (t * w.dilation))
        - p.before.(a))
  in
  if Array.exists2 (fun q n -> q < 0 || q >= n) pos shape then None else Some (get x pos)

let check_pad (type v s) (d : (v, s) Dtype.t) (fill_value : v) (p : K.pad) shape value eq () =
  let x = init d shape value in
  let out_shape = K.Shape.padded p shape in
  let z = create d out_shape in
  let id = P.of_node (P.Op1 (P.Cast (Dtype.Any d), 0)) [| Dtype.Any d |] in
  Support.check_answer "map" Done
    (Nx_cpu.map id ~dsts:(Iarray.of_list [ Any z ]) (Iarray.of_list [ K.Padded (p, Any x) ]));
  let n = Array.fold_left ( * ) 1 out_shape in
  for flat = 0 to n - 1 do
    let idx = Array.make (Array.length out_shape) 0 and rest = ref flat in
    for a = Array.length out_shape - 1 downto 0 do
      idx.(a) <- !rest mod out_shape.(a);
      rest := !rest / out_shape.(a)
    done;
    let want = Option.value (by_hand p x idx) ~default:fill_value in
    if not (eq (get z idx) want) then Alcotest.failf "element %d differs" flat
  done

let tests =
  [ ("float32 padding, no windows", `Quick,
     check_pad Dtype.Float32 (-2.5) { K.before = [| 1; 0 |]; after = [| 2; 3 |]; windows = [||]; fill = -2.5 } [| 3; 4 |]
       (fun i -> float ((10 * i.(0)) + i.(1))) Float.equal);
    ("int16 3x3 windows, stride 2, -inf fill saturates", `Quick,
     check_pad Dtype.Int16 (-32768) { K.before = [| 1; 1 |]; after = [| 1; 1 |]; windows = [| win 3 2 1; win 3 2 1 |]; fill = neg_infinity }
       [| 7; 6 |] (fun i -> (i.(0) * 7) - i.(1)) Int.equal);
    ("dilated window along one axis", `Quick,
     check_pad Dtype.Float64 0. { K.before = [| 0; 2 |]; after = [| 0; 2 |]; windows = [| None; win 3 1 2 |]; fill = 0. }
       [| 2; 9 |] (fun i -> float (i.(0) - i.(1))) Float.equal);
    ("shapes and refusals", `Quick,
     fun () ->
       let p = { K.before = [| 0 |]; after = [| 0 |]; windows = [| win 2 2 3 |]; fill = 0. } in
       Alcotest.(check (array int)) "windows" [| 4; 2 |] (K.Shape.padded p [| 10 |]);
       (match K.Shape.padded p [| 3 |] with
        | exception Invalid_argument _ -> ()
        | _ -> Alcotest.fail "a window wider than its axis");
       let x = init Dtype.Float32 [| 4 |] (fun i -> float i.(0)) in
       let z = create Dtype.Float32 [| 5 |] in
       Buffer.fill_byte (buffer z) 0x33;
       let before = Support.bytes_of_buffer (buffer z) in
       let id = P.of_node (P.Op1 (P.Cast (Dtype.Any Dtype.Float32), 0)) [| Dtype.Any Dtype.Float32 |] in
       let pad = { K.before = [| 1 |]; after = [| 1 |]; windows = [||]; fill = 0. } in
       Support.is_refused_with ~needle:"shape"
         (Nx_cpu.map id ~dsts:(Iarray.of_list [ Any z ]) (Iarray.of_list [ K.Padded (pad, Any x) ]));
       let bad = { pad with before = [| 1; 1 |] } in
       Support.is_refused_with ~needle:"rank"
         (Nx_cpu.map id ~dsts:(Iarray.of_list [ Any z ]) (Iarray.of_list [ K.Padded (bad, Any x) ]));
       Alcotest.(check bool) "untouched" true (String.equal before (Support.bytes_of_buffer (buffer z)))) ]
