(* Run when `#require "nx_cpu"` loads the library into the toplevel, after
   nx_cpu's own archive: the toplevel then prints tensors with Nx.pp, as
   utop does by the attribute on Nx.pp. *)

let () =
  ignore Nx.pp;
  match !Toploop.parse_toplevel_phrase (Lexing.from_string "#install_printer Nx.pp;;") with
  | phrase -> ignore (Toploop.execute_phrase false Format.err_formatter phrase)
  | exception _ -> ()
