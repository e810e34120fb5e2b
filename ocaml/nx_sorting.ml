(** Nx's sorts, through the sort kernel: [sort], [argsort]. Built on
   Nx_gathers. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_gathers.Make (K)

  let sort_named name ~descending ax t =
    let a = axis name (ndim t) ax in
    let values = Arr.create (dtype t) (shape t) and positions = Arr.create D.Int64 (shape t) in
    answer name (K.sort ~axis:a ~descending ~values ~positions t);
    (values, cast D.Int32 positions)

  let sort ?(descending = false) ?(axis = -1) t = sort_named "sort" ~descending axis t
  let argsort ?(descending = false) ?(axis = -1) t = snd (sort_named "argsort" ~descending axis t)
end
