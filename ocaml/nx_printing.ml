(** Nx's printing: [pp], [to_string], [print]. Built on Nx_random. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_random.Make (K)

  let float_text x =
    if Float.is_nan x then "nan"
    else if x = Float.infinity then "inf"
    else if x = Float.neg_infinity then "-inf"
    else Printf.sprintf "%g" x

  let complex_text (v : Complex.t) =
    let im = v.im in
    let sign = if im < 0. || (im = 0. && 1. /. im < 0.) then "-" else "+" in
    float_text v.re ^ sign ^ float_text (Float.abs im) ^ "i"

  let element_text : type a b. (a, b) dtype -> a -> string =
   fun d v ->
    match d with
    | D.Bool -> string_of_bool v
    | D.Bit -> string_of_bool v
    | D.Int4 -> string_of_int v | D.Uint4 -> string_of_int v | D.Int8 -> string_of_int v
    | D.Int16 -> string_of_int v | D.Uint8 -> string_of_int v | D.Uint16 -> string_of_int v
    | D.Uint32 -> string_of_int v
    | D.Int32 -> Int32.to_string v
    | D.Int64 -> Int64.to_string v
    | D.Uint64 -> Printf.sprintf "%Lu" v
    | D.Float4_e2m1fn -> float_text v | D.Float8_e4m3fn -> float_text v
    | D.Float8_e5m2 -> float_text v | D.Float16 -> float_text v | D.Bfloat16 -> float_text v
    | D.Float32 -> float_text v | D.Float64 -> float_text v
    | D.Complex64 -> complex_text v
    | D.Complex128 -> complex_text v

  (* Axes longer than this show their first and last [edge] entries. *)
  let threshold = 4
  let edge = 2

  let positions n = if n > threshold then List.init edge Fun.id @ [ -1 ] @ List.init edge (fun i -> n - edge + i) else List.init n Fun.id

  let pp fmt t =
    let sh = shape t in
    let nd = Array.length sh in
    let d = dtype t in
    if nd > 1 || Array.exists (fun n -> n > threshold) sh then
      Format.fprintf fmt "%s %s@ " (D.name d) (show_shape sh);
    let idx = Array.make nd 0 in
    let rec go a =
      if a = nd then Format.pp_print_string fmt (element_text d (Arr.get t idx))
      else begin
        (* The last axis on one line; the others a vertical box, a row a line. *)
        let last = a = nd - 1 in
        if last then Format.pp_print_string fmt "[" else Format.fprintf fmt "@[<v 1>[";
        List.iteri
          (fun k i ->
            if k > 0 then (if last then Format.pp_print_string fmt ", " else Format.fprintf fmt ",@,");
            if i < 0 then Format.pp_print_string fmt "..."
            else begin
              idx.(a) <- i;
              go (a + 1)
            end)
          (positions sh.(a));
        if last then Format.pp_print_string fmt "]" else Format.fprintf fmt "]@]"
      end
    in
    go 0

  let to_string t = Format.asprintf "@[%a@]" pp t
  let print t = Format.printf "@[%a@]@." pp t
end
