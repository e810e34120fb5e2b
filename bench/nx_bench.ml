(* The OCaml side of the benchmarks, driven by driver.py.

   nx_bench serve
     reads commands on stdin, one a line, and answers each with one line:
       setup CASE SPEC SHAPE LAYOUT  builds the operands       -> ok
       threads N                     Nx_cpu.set_threads N      -> ok
       time K                        K calls                   -> seconds per call
       isa                           Nx_cpu.isa ()             -> "avx512", "avx2", ...
     and "error MESSAGE" for a command that fails.

   nx_bench peak CASE SPEC SHAPE LAYOUT THREADS
     prints the bytes by which resident memory grows over three calls, past
     the operands (allocated and written first).

   A SHAPE is extents joined by "x": "3162x3162", or "9998244" for a
   vector. *)

(* One call of case [name] over fresh operands, as a closure: a kernel
   family's case (kernel_cases.ml), an Nx one (nx_cases.ml), or a map,
   reduction or scan (cases.ml). *)
let case_call name ~spec ~shape ~layout =
  match (Kernel_cases.find name, Nx_cases.find name) with
  | Some call, _ | None, Some call -> call ~spec ~shape ~layout
  | None, None -> Operands.call name ~spec ~shape ~layout

let serve () =
  let call = ref (fun () -> failwith "no setup") in
  let answer = function
    | [ "setup"; name; spec; shape; layout ] ->
        (* Frees the previous case's operands first. *)
        call := (fun () -> ());
        Gc.full_major ();
        call :=
          case_call name ~spec ~shape:(Operands.shape_of_string shape)
            ~layout:(Operands.layout_of_string layout);
        "ok"
    | [ "threads"; n ] ->
        Nx_cpu.set_threads (int_of_string n);
        "ok"
    | [ "isa" ] -> Nx_cpu.isa ()
    | [ "time"; k ] ->
        let k = int_of_string k and f = !call in
        let t = Unix.gettimeofday () in
        for _ = 1 to k do f () done;
        Printf.sprintf "%.9e" ((Unix.gettimeofday () -. t) /. float k)
    | _ -> failwith "unknown command"
  in
  let rec loop () =
    match In_channel.input_line stdin with
    | None -> ()
    | Some line ->
        let reply = try answer (String.split_on_char ' ' (String.trim line)) with Failure m | Invalid_argument m -> "error " ^ m in
        print_endline reply;
        loop ()
  in
  loop ()

let peak name spec shape layout threads =
  Nx_cpu.set_threads threads;
  let layout = Operands.layout_of_string layout in
  (* Starts the thread pool before the baseline. *)
  case_call name ~spec ~shape:(Array.map (min 8) shape) ~layout ();
  let f = case_call name ~spec ~shape ~layout in
  Gc.full_major ();
  let before = Rss.current () in
  Rss.reset_peak ();
  f (); f (); f ();
  Printf.printf "%d\n" (max 0 (Rss.peak () - before))

let () =
  match Array.to_list Sys.argv |> List.tl with
  | [ "serve" ] -> serve ()
  | [ "peak"; name; spec; shape; layout; threads ] ->
      peak name spec (Operands.shape_of_string shape) layout (int_of_string threads)
  | _ ->
      prerr_endline "usage: nx_bench serve | nx_bench peak CASE SPEC SHAPE LAYOUT THREADS";
      exit 2
