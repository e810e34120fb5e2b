external init : unit -> string = "nx_cpu_init"
external threads : unit -> int = "nx_cpu_threads"
external set_threads_raw : int -> string = "nx_cpu_set_threads"

external map_raw : bytes -> bytes -> int -> Nx_array.Buffer.t array -> int * string
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

let answer = function
  | 0, _ -> Nx_array.Done
  | 1, why -> Nx_array.Declined why
  | _, why -> Nx_array.Refused why

let map p ~dsts loads =
  match Nx_kernel.map_refusal p ~dsts loads with
  | Some why -> Nx_array.Refused ("nx.cpu map: " ^ why)
  | None ->
      let loads = Iarray.to_list (Iarray.map (fun (Nx_kernel.Plain a) -> a) loads) in
      let words, buffers = views (Iarray.to_list dsts @ loads) in
      answer (map_raw (Nx_kernel.Prog.words p) words (Iarray.length dsts) buffers)
