(* The numpy-like module over the host kernels. *)

include Nx_frontend.Make (Nx_cpu)
