external host_missing : unit -> string = "nx_cpu_host_missing"
external threads : unit -> int = "nx_cpu_threads"
external set_threads_raw : int -> string = "nx_cpu_set_threads"
external isa : unit -> string = "nx_cpu_isa"

external reduction_raw : string -> bytes -> bytes -> bytes -> Nx_array.Buffer.t array -> Nx_array.answer
  = "nx_cpu_reduction"

external map_raw : string -> bytes -> bytes -> int -> Nx_array.Buffer.t array -> Nx_array.answer
  = "nx_cpu_map"

external moves_raw : bytes -> bytes -> Nx_array.Buffer.t array -> Nx_array.answer = "nx_cpu_moves"

external sort_raw : bytes -> int -> int -> Nx_array.Buffer.t array -> Nx_array.answer = "nx_cpu_sort"

(* Before any Rust code, compiled for these instructions, can run. *)
let () =
  match String.split_on_char ' ' (String.trim (host_missing ())) with
  | [ "" ] -> ()
  | missing ->
      failwith
        ("nx.cpu needs an x86-64 host with AVX2, FMA, F16C, BMI2, SSE4.2 and POPCNT, the system saving \
          AVX state; this one lacks " ^ String.concat ", " missing)
let name = "nx.cpu"
let computes_on d = Rig.reaches Rig.host d

let set_threads n =
  match set_threads_raw n with "" -> () | why -> invalid_arg ("Nx_cpu.set_threads: " ^ why)

external set64_unchecked : Bytes.t -> int -> int64 -> unit = "%caml_bytes_set64u"
external swap64 : int64 -> int64 = "%bswap_int64"

(* [set_word b w x] writes [x] as word [w] of [b], little-endian, unchecked:
   each caller sizes [b] for the words it writes ([Bytes.set_int64_le]'s
   checks took a tenth of a small map's instructions). *)
let set_word b w x =
  let x = Int64.of_int x in
  set64_unchecked b (8 * w) (if Sys.big_endian then swap64 x else x)

(* Each view's words: dtype, buffer index, rank, offset, shape, strides;
   and the views' buffers, in order. Written in place, reading [arrays]
   directly (through an accessor, each of a small map's ~10 reads was a
   closure's call): a call of few small operands spends most of its time
   outside its kernel. *)
let views (arrays : Nx_array.any array) =
  let n = Array.length arrays in
  let words = ref 0 in
  for i = 0 to n - 1 do
    let (Nx_array.Any a) = arrays.(i) in
    words := !words + 4 + (2 * Nx_array.rank a)
  done;
  let b = Bytes.create (8 * !words) in
  (* Every word written lies below the count above. *)
  let put = set_word b in
  let w = ref 0 in
  for i = 0 to n - 1 do
    let (Nx_array.Any a) = arrays.(i) in
    let r = Nx_array.rank a and at = !w in
    put at (Nx_array.Dtype.code (Nx_array.dtype a));
    put (at + 1) i;
    put (at + 2) r;
    put (at + 3) (Nx_array.offset a);
    for k = 0 to r - 1 do
      put (at + 4 + k) (Nx_array.extent a k);
      put (at + 4 + r + k) (Nx_array.stride a k)
    done;
    w := at + 4 + (2 * r)
  done;
  let buffer i = let (Nx_array.Any a) = arrays.(i) in Nx_array.buffer a in
  (* Built in place for a call of few operands: [Array.init] calls the runtime. *)
  let buffers =
    match n with
    | 1 -> [| buffer 0 |]
    | 2 -> [| buffer 0; buffer 1 |]
    | 3 -> [| buffer 0; buffer 1; buffer 2 |]
    | 4 -> [| buffer 0; buffer 1; buffer 2; buffer 3 |]
    | n -> Array.init n buffer
  in
  (b, buffers)

(* Each load's pad: 0, or 1, the befores' count and befores, the afters'
   count and afters, the windows' count, three words a window (0 0 0 for
   none), the fill's bits. Plain loads alone: a zero word each. *)
(* Plain loads' pads, by their count: never written, so shared by calls. *)
let plain_pads = Array.init (Nx_array.max_operands + 1) (fun n -> Bytes.make (8 * n) '\000')

let pads loads =
  let n = Iarray.length loads in
  if Iarray.for_all (function Nx_kernel.Plain _ -> true | Nx_kernel.Padded _ -> false) loads then
    if n <= Nx_array.max_operands then plain_pads.(n) else Bytes.make (8 * n) '\000'
  else begin
    let b = Buffer.create 64 in
    let int i = Buffer.add_int64_le b (Int64.of_int i) in
    Iarray.iter
      (function
        | Nx_kernel.Plain _ -> int 0
        | Nx_kernel.Padded (p, _) ->
            int 1;
            int (Array.length p.before);
            Array.iter int p.before;
            int (Array.length p.after);
            Array.iter int p.after;
            int (Array.length p.windows);
            Array.iter
              (function
                | None -> int 0; int 0; int 0
                | Some (w : Nx_kernel.window) -> int w.size; int w.stride; int w.dilation)
              p.windows;
            Buffer.add_int64_le b (Int64.bits_of_float p.fill))
      loads;
    Buffer.to_bytes b
  end

let operand = function Nx_kernel.Plain a | Nx_kernel.Padded (_, a) -> a

(* The views of a call's arrays: [first]'s, then the loads' operands. *)
let call_views first loads =
  let n = Iarray.length first in
  let get i = if i < n then Iarray.get first i else operand (Iarray.get loads (i - n)) in
  (* In place where they are few, as [views]' buffers. *)
  views
    (match n + Iarray.length loads with
    | 2 -> [| get 0; get 1 |]
    | 3 -> [| get 0; get 1; get 2 |]
    | 4 -> [| get 0; get 1; get 2; get 3 |]
    | k -> Array.init k get)

(* The kernels check every call in full (Nx_kernel.map_refusal's rules and
   the layouts against their buffers) before any write. *)
let map p ~dsts loads =
  let words, buffers = call_views dsts loads in
  (map_raw (Nx_kernel.Prog.words p) words (pads loads) (Iarray.length dsts) buffers)

(* A reduction's code, as the kernels read it. *)
let reduction_code : Nx_kernel.reduction -> int = function
  | Monoid Sum -> 0 | Monoid Prod -> 1 | Monoid Max -> 2 | Monoid Min -> 3
  | Arg Max -> 4 | Arg Min -> 5 | Logsumexp -> 6 | Moments -> 7
  | Arg (Sum | Prod) -> invalid_arg "Nx_cpu: Arg of Sum or Prod"

let words ints =
  let b = Buffer.create 64 in
  List.iter (fun i -> Buffer.add_int64_le b (Int64.of_int i)) ints;
  Buffer.to_bytes b

let reduction p ~call ~first loads =
  let view_words, buffers = call_views (Iarray.of_list first) loads in
  (reduction_raw (Nx_kernel.Prog.words p) view_words (pads loads) (words call) buffers)

(* The kernels check every call in full (Nx_kernel.reduce_refusal's rules
   and the layouts against their buffers) before any write, as map's do: a
   small reduction spends most of its time outside its kernel. An Arg of
   Sum or Prod, which has no code, is refused here in reduce_refusal's
   words. *)
let reduce p ~shape ~axes rs ~dsts loads =
  let uncoded = function Nx_kernel.Arg (Sum | Prod), _ -> true | _ -> false in
  if Iarray.exists uncoded rs then
    Nx_array.Refused
      ("nx.cpu reduce: "
      ^ Option.value ~default:"an Arg of Sum or Prod" (Nx_kernel.reduce_refusal p ~shape ~axes rs ~dsts loads))
  else
    let n = Iarray.length shape and m = Iarray.length axes and q = Iarray.length rs in
    let b = Bytes.create (8 * (4 + n + m + (2 * q))) in
    (* Every word written below lies below that count. *)
    let put = set_word b in
    put 0 0;
    put 1 n;
    for i = 0 to n - 1 do put (2 + i) (Iarray.get shape i) done;
    put (2 + n) m;
    for i = 0 to m - 1 do put (3 + n + i) (Iarray.get axes i) done;
    put (3 + n + m) q;
    for i = 0 to q - 1 do
      let r, k = Iarray.get rs i in
      put (4 + n + m + (2 * i)) (reduction_code r);
      put (5 + n + m + (2 * i)) k
    done;
    let view_words, buffers = call_views dsts loads in
    (reduction_raw (Nx_kernel.Prog.words p) view_words (pads loads) b buffers)

let scan ?carry p ~axis (r, k) ~dsts loads =
  match Nx_kernel.scan_refusal ?carry p ~axis (r, k) ~dsts loads with
  | Some why -> Nx_array.Refused ("nx.cpu scan: " ^ why)
  | None ->
      let (Nx_array.Any d0) = Iarray.get dsts 0 in
      let shape = Array.to_list (Nx_array.shape d0) in
      let call = [ 1; List.length shape ] @ shape @ [ axis; reduction_code r; k; Bool.to_int (carry <> None) ] in
      reduction p ~call ~first:(Iarray.to_list dsts @ Option.to_list carry) loads

(* Fourier transforms: the call's words (the kind, 0 a Forward c2c, 1 an
   Inverse c2c, 2 r2c, 3 c2r; the axes' count and axes), then dst's and x's
   views. The kernel checks every call in full before any write. *)
external fft_raw : bytes -> bytes -> Nx_array.Buffer.t array -> Nx_array.answer = "nx_cpu_fft"

let fft kind ~axes dst x =
  let view_words, buffers = views [| dst; x |] in
  (fft_raw (words ((kind :: Iarray.length axes :: Iarray.to_list axes))) view_words buffers)

let c2c d ~axes ~dst x =
  fft (match d with Nx_kernel.Forward -> 0 | Nx_kernel.Inverse -> 1) ~axes (Nx_array.Any dst) (Nx_array.Any x)

let r2c ~axes ~dst x = fft 2 ~axes (Nx_array.Any dst) (Nx_array.Any x)
let c2r ~axes ~dst x = fft 3 ~axes (Nx_array.Any dst) (Nx_array.Any x)

external contract_raw : bytes -> bytes -> Nx_array.Buffer.t array -> Nx_array.answer = "nx_cpu_contract"

(* A contraction's words: each pairs' count and pairs, the acc's code,
   whether init is given, each operand's scale (0, or 1 for values or 2
   for codes, the rank and the blocks), the segments (0; 1 and b_axis; 2,
   pair and groups); its arrays: dst, init, a, b, the scales, the ids. *)
let contract ~batch ~contracting ~segments ~acc ~dst ~init (a : Nx_kernel.operand) (b : Nx_kernel.operand) =
  let init = Option.map (fun i -> Nx_array.Any i) init in
  match Nx_kernel.contract_refusal ~batch ~contracting ~segments ~acc ~dst:(Nx_array.Any dst) ~init a b with
  | Some why -> Nx_array.Refused ("nx.cpu contract: " ^ why)
  | None ->
      let pairs p = Iarray.length p :: List.concat_map (fun (x, y) -> [ x; y ]) (Iarray.to_list p) in
      let scale (op : Nx_kernel.operand) =
        match op.scale with
        | None -> ([ 0 ], [])
        | Some (Value (block, s)) -> (1 :: Array.length block :: Array.to_list block, [ s ])
        | Some (Code (block, s)) -> (2 :: Array.length block :: Array.to_list block, [ Nx_array.Any s ])
      in
      let (Nx_array.Dtype.Any acc) = acc in
      let (wa, sa), (wb, sb) = (scale a, scale b) in
      let ws, ids =
        match segments with
        | None -> ([ 0 ], [])
        | Some (Nx_kernel.Rows { ids; b_axis }) -> ([ 1; b_axis ], [ Nx_array.Any ids ])
        | Some (Nx_kernel.Contracting { ids; pair; groups }) -> ([ 2; pair; groups ], [ Nx_array.Any ids ])
      in
      let call = pairs batch @ pairs contracting @ [ Nx_array.Dtype.code acc; Bool.to_int (init <> None) ] @ wa @ wb @ ws in
      let arrays = (Nx_array.Any dst :: Option.to_list init) @ [ a.array; b.array ] @ sa @ sb @ ids in
      let view_words, buffers = views (Array.of_list arrays) in
      (contract_raw (words call) view_words buffers)

(* The moves: one external, the call's first word naming the kernel (0
   gather, 1 scatter, 2 assemble, 3 gather_ranges, 4 fold), then [call]'s
   other words and [tail]'s bytes; the views those of [arrays]. *)
let moves ?(tail = Bytes.empty) ~call arrays =
  let b = Buffer.create 64 in
  List.iter (Buffer.add_int64_le b) call;
  Buffer.add_bytes b tail;
  let view_words, buffers = views arrays in
  (moves_raw (Buffer.to_bytes b) view_words buffers)

let refused kernel = function Some why -> Some (Nx_array.Refused ("nx.cpu " ^ kernel ^ ": " ^ why)) | None -> None

let gather ~axis ~dst idx x =
  match refused "gather" (Nx_kernel.gather_refusal ~axis ~dst idx x) with
  | Some r -> r
  | None -> moves ~call:[ 0L; Int64.of_int axis ] [| Any dst; Any idx; Any x |]

let scatter c ~unique ~axis ~dst ~into idx updates =
  match refused "scatter" (Nx_kernel.scatter_refusal c ~axis ~dst ~into idx updates) with
  | Some r -> r
  | None ->
      let code = match (c : Nx_kernel.combine) with Set -> 0L | Add -> 1L | Max -> 2L | Min -> 3L in
      moves ~call:[ 1L; code; (if unique then 1L else 0L); Int64.of_int axis ]
        [| Any dst; Any into; Any idx; Any updates |]

let assemble ~fill ~dst pieces =
  match refused "assemble" (Nx_kernel.assemble_refusal ~dst pieces) with
  | Some r -> r
  | None ->
      let lo, hi = Nx_array.value_bits (Nx_array.dtype dst) fill in
      let regions =
        List.concat_map
          (fun (region, _) ->
            Int64.of_int (Iarray.length region)
            :: List.concat_map
                 (fun { Nx_array.Move.start; stop } -> [ Int64.of_int start; Int64.of_int stop ])
                 (Iarray.to_list region))
          (Iarray.to_list pieces)
      in
      moves ~call:(2L :: lo :: hi :: Int64.of_int (Iarray.length pieces) :: regions)
        (Array.of_list (Nx_array.Any dst :: List.map (fun (_, p) -> Nx_array.Any p) (Iarray.to_list pieces)))

let gather_ranges ~dst ~starts ~ends x =
  match refused "gather_ranges" (Nx_kernel.gather_ranges_refusal ~dst ~starts ~ends x) with
  | Some r -> r
  | None -> moves ~call:[ 3L ] [| Any dst; Any starts; Any ends; Any x |]

(* A fold's words: 4, then its pad's as a padded load's (pads). *)
let fold p ~dst x =
  match refused "fold" (Nx_kernel.fold_refusal p ~dst x) with
  | Some r -> r
  | None -> moves ~tail:(pads (Iarray.of_list [ Nx_kernel.Padded (p, Any x) ])) ~call:[ 4L ] [| Any dst; Any x |]

(* Sorts: the kernel checks every call in full (shapes, dtypes, overlaps,
   the layouts against their buffers) before any write. A negative axis is
   refused there. *)
let sort ~axis ~descending ~values ~positions x =
  let words, buffers = views [| Nx_array.Any values; Nx_array.Any positions; Nx_array.Any x |] in
  (sort_raw words axis (Bool.to_int descending) buffers)

(* Matrices: a routine's words (code, triangle, adjoint, unit_diagonal),
   the views of the destinations then the operands, the destinations'
   count. The refusal function checks first; the kernels check it all
   again, with overlaps, before any write. *)
external linalg_raw : bytes -> bytes -> int -> Nx_array.Buffer.t array -> Nx_array.answer = "nx_cpu_linalg"

let linalg ~name ~code ?(triangle = Nx_kernel.Lower) ?(adjoint = false) ?(unit_diagonal = false) refusal dsts operands =
  match refusal with
  | Some why -> Nx_array.Refused ("nx.cpu " ^ name ^ ": " ^ why)
  | None ->
      let call =
        words [ code; (match triangle with Nx_kernel.Lower -> 0 | Upper -> 1); Bool.to_int adjoint; Bool.to_int unit_diagonal ]
      in
      let view_words, buffers = views (Array.of_list (dsts @ operands)) in
      (linalg_raw call view_words (List.length dsts) buffers)

let cholesky t ~dst a =
  linalg ~name:"cholesky" ~code:0 ~triangle:t (Nx_kernel.cholesky_refusal ~dst a) [ Nx_array.Any dst ] [ Nx_array.Any a ]

let lu ~lu ~pivots ~perm a =
  linalg ~name:"lu" ~code:1 (Nx_kernel.lu_refusal ~lu ~pivots ~perm a)
    [ Nx_array.Any lu; Nx_array.Any pivots; Nx_array.Any perm ] [ Nx_array.Any a ]

let solve_triangular t ~adjoint ~unit_diagonal ~dst a b =
  linalg ~name:"solve_triangular" ~code:2 ~triangle:t ~adjoint ~unit_diagonal
    (Nx_kernel.solve_triangular_refusal ~dst a b) [ Nx_array.Any dst ] [ Nx_array.Any a; Nx_array.Any b ]

let qr ~q ~r a = linalg ~name:"qr" ~code:3 (Nx_kernel.qr_refusal ~q ~r a) [ Nx_array.Any q; Nx_array.Any r ] [ Nx_array.Any a ]

(* Numbering: the views of ids, first, counts, count and the keys. The
   refusal function checks the shapes first; the kernel checks it all
   again, with dtypes and overlaps, before any write, and declines keys of
   2^40 - 1 rows or more. *)
external unique_raw : bytes -> Nx_array.Buffer.t array -> Nx_array.answer = "nx_cpu_unique"

let unique ~ids ~first ~counts ~count keys =
  match refused "unique" (Nx_kernel.unique_refusal ~ids ~first ~counts ~count keys) with
  | Some r -> r
  | None ->
      let view_words, buffers = views [| Nx_array.Any ids; Any first; Any counts; Any count; Any keys |] in
      (unique_raw view_words buffers)
