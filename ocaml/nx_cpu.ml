external init : unit -> string = "nx_cpu_init"
external threads : unit -> int = "nx_cpu_threads"
external set_threads_raw : int -> string = "nx_cpu_set_threads"

external map_raw : bytes -> bytes -> bytes -> int -> Nx_array.Buffer.t array -> int * string
  = "nx_cpu_map"

let () = match init () with "" -> () | why -> failwith why
let name = "nx.cpu"
let computes_on d = Rig.reaches Rig.host d

let set_threads n =
  match set_threads_raw n with "" -> () | why -> invalid_arg ("Nx_cpu.set_threads: " ^ why)

(* Each view's words: dtype, buffer index, rank, offset, shape, strides. *)
let views (arrays : Nx_array.any list) =
  let b = Buffer.create 256 in
  let int i = Buffer.add_int64_le b (Int64.of_int i) in
  let buffers =
    List.mapi
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
  (Buffer.to_bytes b, Array.of_list buffers)

(* Each load's pad: 0, or 1, rank, befores, afters, window count, three
   words a window (0 0 0 for none), the fill's bits. *)
let pads loads =
  let b = Buffer.create 64 in
  let int i = Buffer.add_int64_le b (Int64.of_int i) in
  List.iter
    (function
      | Nx_kernel.Plain _ -> int 0
      | Nx_kernel.Padded (p, _) ->
          int 1;
          int (Array.length p.before);
          Array.iter int p.before;
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

let answer = function
  | 0, _ -> Nx_array.Done
  | 1, why -> Nx_array.Declined why
  | _, why -> Nx_array.Refused why

let map p ~dsts loads =
  match Nx_kernel.map_refusal p ~dsts loads with
  | Some why -> Nx_array.Refused ("nx.cpu map: " ^ why)
  | None ->
      let loads = Iarray.to_list loads in
      let operand = function Nx_kernel.Plain a | Nx_kernel.Padded (_, a) -> a in
      let words, buffers = views (Iarray.to_list dsts @ List.map operand loads) in
      answer (map_raw (Nx_kernel.Prog.words p) words (pads loads) (Iarray.length dsts) buffers)
