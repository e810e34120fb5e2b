(** The numpy-like frontend, written once against a kernel library: {!Nx}
    is [Make (Nx_cpu)]. *)

module type S = Nx_frontend_intf.S
(** The frontend's values, documented in {!Nx_frontend_intf.S}. *)

module Make (_ : Nx_kernel.S) : S
(** [Make (K)] is the frontend whose every loop over elements runs in
    [K]'s kernels. *)
