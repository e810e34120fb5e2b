(* The numpy-like module, written once against a kernel library.

   Everything here builds views (shape, strides, offset) and kernel calls:
   every element loop runs in K's kernels (map, reduce, scan, gather,
   scatter, sort, contract, the matrix routines). OCaml touches
   elements one by one only to build a tensor from an OCaml array or
   function, to read one out (to_array, item) and to print. Arguments are
   checked before any kernel runs; a refusal comes back as Invalid_argument
   naming the function. *)

module type S = Nx_frontend_intf.S

(* The parts, each a functor over the kernel library built on the one
   before it: Nx_core (types, views, programs, broadcasting), Nx_creation,
   Nx_shapes, Nx_indexing, Nx_elementwise, Nx_reductions, Nx_gathers,
   Nx_sorting, Nx_linalg, Nx_random, Nx_printing, Nx_ptree; the operators
   are here. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_ptree.Make (K)

  module Infix = struct
    let ( + ) = add
    let ( - ) = sub
    let ( * ) = mul
    let ( / ) = div
    let ( ** ) = pow
    let ( +$ ) = add_s
    let ( -$ ) = sub_s
    let ( *$ ) = mul_s
    let ( /$ ) = div_s
    let ( **$ ) = pow_s
    let ( < ) = less
    let ( <> ) = not_equal
    let ( = ) = equal
    let ( > ) = greater
    let ( <= ) = less_equal
    let ( >= ) = greater_equal
    let ( =$ ) = equal_s
    let ( <>$ ) = not_equal_s
    let ( <$ ) = less_s
    let ( >$ ) = greater_s
    let ( <=$ ) = less_equal_s
    let ( >=$ ) = greater_equal_s
    let ( lxor ) = bitwise_xor
    let ( lor ) = bitwise_or
    let ( land ) = bitwise_and
    let ( % ) = mod_
    let ( mod ) = mod_
    let ( %$ ) = mod_s
    let ( ^ ) = logical_xor
    let ( && ) = logical_and
    let ( || ) = logical_or
    let ( ~- ) = neg
    let ( .%{} ) t i = get i t
    let ( .%{}<- ) t i v = set i t v
    let ( .${} ) t s = slice s t
    let ( .${}<- ) t s v = set_slice s t v
  end
end
