(** Numpy-like tensors over the host kernels ({!Nx_cpu}): [open Nx] and
    compute.

    {[
      # open Nx;;
      # create float32 [| 2; 3 |] [| 1.; 2.; 3.; 4.; 5.; 6. |];;
      - : (float, float32_elt) t = float32 [2; 3] [[1, 2, 3],
                                                   [4, 5, 6]]
    ]}

    The values are those of {!Nx_frontend_intf.S}, documented there. *)

include Nx_frontend_intf.S

val pp : Format.formatter -> ('a, 'b) t -> unit
[@@ocaml.toplevel_printer]
(** [pp] formats a tensor (see {!Nx_frontend_intf.S.pp}); utop installs it
    as the toplevel printer of tensors by this attribute, and loading the
    library into [ocaml] installs it too. *)
