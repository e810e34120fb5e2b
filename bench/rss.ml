(* Resident memory of this process, from Linux's /proc/self, as peak.py
   reads numpy's. *)

let status_kib field =
  In_channel.with_open_text "/proc/self/status" In_channel.input_lines
  |> List.find_map (fun line ->
         Option.join (Scanf.sscanf_opt line "%s@: %d kB" (fun name kib -> if name = field then Some kib else None)))
  |> function
  | Some kib -> kib
  | None -> failwith ("no " ^ field ^ " in /proc/self/status")

(** Bytes resident now. *)
let current () = 1024 * status_kib "VmRSS"

(** Bytes resident at most since the last {!reset_peak}. *)
let peak () = 1024 * status_kib "VmHWM"

(** Restarts the peak from the bytes resident now. *)
let reset_peak () = Out_channel.with_open_text "/proc/self/clear_refs" (fun oc -> output_string oc "5")
