(** Numpy-like tensors over the host kernels ({!Nx_cpu}): [open Nx] and
    compute.

    {[
      # open Nx;;
      # create float32 [| 2; 3 |] [| 1.; 2.; 3.; 4.; 5.; 6. |];;
      - : (float, float32_elt) t = float32 [2; 3] [[1, 2, 3],
                                                   [4, 5, 6]]
    ]}

    The values are those of {!Nx_frontend_intf.S}, documented there.
    [#require "nx_cpu"] installs {!pp} as the printer of tensors in [ocaml]
    (the archive of [nx_cpu.top], loaded in toplevels alone) and in utop
    (the attribute below). The plain [ocaml] toplevel writes types with
    their module, as [(float, Nx.float32_elt) Nx.t], unless started with
    [-short-paths]; utop writes them as above. *)

include Nx_frontend_intf.S

val pp : Format.formatter -> ('a, 'b) t -> unit
[@@ocaml.toplevel_printer]
(** [pp] formats a tensor (see {!Nx_frontend_intf.S.pp}); utop installs it
    as the toplevel printer of tensors by this attribute, and loading the
    library into [ocaml] installs it too. *)
