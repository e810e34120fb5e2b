external host_missing : unit -> string = "nx_cpu_host_missing"
external threads : unit -> int = "nx_cpu_threads"
external set_threads_raw : int -> string = "nx_cpu_set_threads"
external isa : unit -> string = "nx_cpu_isa"

external reduction_raw : string -> bytes -> bytes -> bytes -> Nx_array.Buffer.t array -> int * string
  = "nx_cpu_reduction"

external map_raw : string -> bytes -> bytes -> int -> Nx_array.Buffer.t array -> int * string
  = "nx_cpu_map"

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

(* Each view's words: dtype, buffer index, rank, offset, shape, strides;
   and the views' buffers, in order. *)
let views (arrays : Nx_array.any array) =
  let words = Array.fold_left (fun n (Nx_array.Any a) -> n + 4 + (2 * Nx_array.rank a)) 0 arrays in
  let b = Bytes.create (8 * words) in
  let pos = ref 0 in
  let int i =
    Bytes.set_int64_le b !pos (Int64.of_int i);
    pos := !pos + 8
  in
  let buffers =
    Array.mapi
      (fun i (Nx_array.Any a) ->
        int (Nx_array.Dtype.code (Nx_array.dtype a));
        int i;
        int (Nx_array.rank a);
        int (Nx_array.offset a);
        Array.iter int (Nx_array.shape a);
        Array.iter int (Nx_array.strides a);
        Nx_array.buffer a)
      arrays
  in
  (b, buffers)

(* Each load's pad: 0, or 1, the befores' count and befores, the afters'
   count and afters, the windows' count, three words a window (0 0 0 for
   none), the fill's bits. Plain loads alone: a zero word each. *)
let pads loads =
  if Iarray.for_all (function Nx_kernel.Plain _ -> true | Nx_kernel.Padded _ -> false) loads then
    Bytes.make (8 * Iarray.length loads) '\000'
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

(* The arrays of a call: [first], then the loads' operands. *)
let arrays first loads =
  let n = Array.length first in
  Array.init (n + Iarray.length loads) (fun i -> if i < n then first.(i) else operand (Iarray.get loads (i - n)))

let answer = function
  | 0, _ -> Nx_array.Done
  | 1, why -> Nx_array.Declined why
  | _, why -> Nx_array.Refused why

(* The kernels check every call in full (Nx_kernel.map_refusal's rules and
   the layouts against their buffers) before any write. *)
let map p ~dsts loads =
  let words, buffers = views (arrays (Iarray.to_array dsts) loads) in
  answer (map_raw (Nx_kernel.Prog.words p) words (pads loads) (Iarray.length dsts) buffers)

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
  let view_words, buffers = views (arrays (Array.of_list first) loads) in
  answer (reduction_raw (Nx_kernel.Prog.words p) view_words (pads loads) (words call) buffers)

let reduce p ~shape ~axes rs ~dsts loads =
  match Nx_kernel.reduce_refusal p ~shape ~axes rs ~dsts loads with
  | Some why -> Nx_array.Refused ("nx.cpu reduce: " ^ why)
  | None ->
      let list a = Iarray.to_list a in
      let call =
        [ 0; Iarray.length shape ] @ list shape @ [ Iarray.length axes ] @ list axes
        @ [ Iarray.length rs ] @ List.concat_map (fun (r, k) -> [ reduction_code r; k ]) (list rs)
      in
      reduction p ~call ~first:(Iarray.to_list dsts) loads

let scan ?carry p ~axis (r, k) ~dsts loads =
  match Nx_kernel.scan_refusal ?carry p ~axis (r, k) ~dsts loads with
  | Some why -> Nx_array.Refused ("nx.cpu scan: " ^ why)
  | None ->
      let (Nx_array.Any d0) = Iarray.get dsts 0 in
      let shape = Array.to_list (Nx_array.shape d0) in
      let call = [ 1; List.length shape ] @ shape @ [ axis; reduction_code r; k; Bool.to_int (carry <> None) ] in
      reduction p ~call ~first:(Iarray.to_list dsts @ Option.to_list carry) loads

(* Matrices: a routine's words (code, triangle, adjoint, unit_diagonal),
   the views of the destinations then the operands, the destinations'
   count. The refusal function checks first; the kernels check it all
   again, with overlaps, before any write. *)
external linalg_raw : bytes -> bytes -> int -> Nx_array.Buffer.t array -> int * string = "nx_cpu_linalg"

let linalg ~name ~code ?(triangle = Nx_kernel.Lower) ?(adjoint = false) ?(unit_diagonal = false) refusal dsts operands =
  match refusal with
  | Some why -> Nx_array.Refused ("nx.cpu " ^ name ^ ": " ^ why)
  | None ->
      let call =
        words [ code; (match triangle with Nx_kernel.Lower -> 0 | Upper -> 1); Bool.to_int adjoint; Bool.to_int unit_diagonal ]
      in
      let view_words, buffers = views (Array.of_list (dsts @ operands)) in
      answer (linalg_raw call view_words (List.length dsts) buffers)

let cholesky t ~dst a =
  linalg ~name:"cholesky" ~code:0 ~triangle:t (Nx_kernel.cholesky_refusal ~dst a) [ Nx_array.Any dst ] [ Nx_array.Any a ]

let lu ~lu ~pivots ~perm a =
  linalg ~name:"lu" ~code:1 (Nx_kernel.lu_refusal ~lu ~pivots ~perm a)
    [ Nx_array.Any lu; Nx_array.Any pivots; Nx_array.Any perm ] [ Nx_array.Any a ]

let solve_triangular t ~adjoint ~unit_diagonal ~dst a b =
  linalg ~name:"solve_triangular" ~code:2 ~triangle:t ~adjoint ~unit_diagonal
    (Nx_kernel.solve_triangular_refusal ~dst a b) [ Nx_array.Any dst ] [ Nx_array.Any a; Nx_array.Any b ]

let qr ~q ~r a = linalg ~name:"qr" ~code:3 (Nx_kernel.qr_refusal ~q ~r a) [ Nx_array.Any q; Nx_array.Any r ] [ Nx_array.Any a ]
