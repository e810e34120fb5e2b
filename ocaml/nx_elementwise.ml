(** Nx's elementwise functions: arithmetic with its scalar forms, math,
   comparisons, logic, bitwise, [where], [clip]: each one map call over
   broadcast operands. Built on Nx_indexing. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_indexing.Make (K)

  let unary name kind t = elementwise name (dtype t) [ Arr.Any t ] [| P.Load 0; P.Op1 (P.Unary kind, 0) |]

  let binary name kind a b =
    elementwise name (dtype a) [ Arr.Any a; Arr.Any b ] [| P.Load 0; P.Load 1; P.Op2 (kind, 0, 1) |]

  let binary_s name kind t s =
    elementwise name (dtype t) [ Arr.Any t ] [| P.Load 0; constant (dtype t) s; P.Op2 (kind, 0, 1) |]

  let binary_rs name kind s t =
    elementwise name (dtype t) [ Arr.Any t ] [| P.Load 0; constant (dtype t) s; P.Op2 (kind, 1, 0) |]

  let comparison name kind a b =
    elementwise name D.Bool [ Arr.Any a; Arr.Any b ] [| P.Load 0; P.Load 1; P.Op2 (kind, 0, 1) |]

  let comparison_s name kind t s =
    elementwise name D.Bool [ Arr.Any t ] [| P.Load 0; constant (dtype t) s; P.Op2 (kind, 0, 1) |]

  let add a b = binary "add" P.Add a b
  let add_s t s = binary_s "add_s" P.Add t s
  let radd_s s t = binary_rs "radd_s" P.Add s t
  let sub a b = binary "sub" P.Sub a b
  let sub_s t s = binary_s "sub_s" P.Sub t s
  let rsub_s s t = binary_rs "rsub_s" P.Sub s t
  let mul a b = binary "mul" P.Mul a b
  let mul_s t s = binary_s "mul_s" P.Mul t s
  let rmul_s s t = binary_rs "rmul_s" P.Mul s t
  let div a b = binary "div" P.Div a b
  let div_s t s = binary_s "div_s" P.Div t s
  let rdiv_s s t = binary_rs "rdiv_s" P.Div s t
  let pow a b = binary "pow" P.Pow a b
  let pow_s t s = binary_s "pow_s" P.Pow t s
  let rpow_s s t = binary_rs "rpow_s" P.Pow s t
  let mod_ a b = binary "mod_" P.Mod a b
  let mod_s t s = binary_s "mod_s" P.Mod t s
  let rmod_s s t = binary_rs "rmod_s" P.Mod s t
  let maximum a b = binary "maximum" P.Maximum a b
  let maximum_s t s = binary_s "maximum_s" P.Maximum t s
  let rmaximum_s s t = binary_rs "rmaximum_s" P.Maximum s t
  let minimum a b = binary "minimum" P.Minimum a b
  let minimum_s t s = binary_s "minimum_s" P.Minimum t s
  let rminimum_s s t = binary_rs "rminimum_s" P.Minimum s t
  let atan2 y x = binary "atan2" P.Atan2 y x
  let hypot x y = binary "hypot" P.Hypot x y
  let bitwise_xor a b = binary "bitwise_xor" P.Bit_xor a b
  let bitwise_or a b = binary "bitwise_or" P.Bit_or a b
  let bitwise_and a b = binary "bitwise_and" P.Bit_and a b
  let neg t = unary "neg" P.Neg t
  let conjugate t = unary "conjugate" P.Conj t
  let abs t = unary "abs" P.Abs t
  let sign t = unary "sign" P.Sign t
  let square t = unary "square" P.Square t
  let sqrt t = unary "sqrt" P.Sqrt t
  let rsqrt t = unary "rsqrt" P.Rsqrt t
  let recip t = unary "recip" P.Recip t
  let log t = unary "log" P.Log t
  let log2 t = unary "log2" P.Log2 t
  let exp t = unary "exp" P.Exp t
  let exp2 t = unary "exp2" P.Exp2 t
  let sin t = unary "sin" P.Sin t
  let cos t = unary "cos" P.Cos t
  let tan t = unary "tan" P.Tan t
  let asin t = unary "asin" P.Asin t
  let acos t = unary "acos" P.Acos t
  let atan t = unary "atan" P.Atan t
  let sinh t = unary "sinh" P.Sinh t
  let cosh t = unary "cosh" P.Cosh t
  let tanh t = unary "tanh" P.Tanh t
  let asinh t = unary "asinh" P.Asinh t
  let acosh t = unary "acosh" P.Acosh t
  let atanh t = unary "atanh" P.Atanh t
  let bitwise_not t = unary "bitwise_not" P.Bit_not t
  let invert t = unary "invert" P.Bit_not t

  (* Rounding: integers are whole already. *)
  let rounding name kind t = if D.is_integer (dtype t) then copy t else unary name kind t
  let trunc t = rounding "trunc" P.Trunc t
  let ceil t = rounding "ceil" P.Ceil t
  let floor t = rounding "floor" P.Floor t
  let round t = rounding "round" P.Round t

  let lerp a b w =
    elementwise "lerp" (dtype a) [ Arr.Any a; Arr.Any b; Arr.Any w ]
      [| P.Load 0; P.Load 1; P.Load 2; P.Op2 (P.Sub, 1, 0); P.Op2 (P.Mul, 2, 3); P.Op2 (P.Add, 0, 4) |]

  let lerp_scalar_weight a b w =
    elementwise "lerp_scalar_weight" (dtype a) [ Arr.Any a; Arr.Any b ]
      [| P.Load 0; P.Load 1; constant (dtype a) w; P.Op2 (P.Sub, 1, 0); P.Op2 (P.Mul, 2, 3); P.Op2 (P.Add, 0, 4) |]

  let classify name kind ~otherwise t =
    let d = dtype t in
    if D.is_float d || D.is_complex d then
      elementwise name D.Bool [ Arr.Any t ] [| P.Load 0; P.Op1 (P.Unary kind, 0) |]
    else full D.Bool (shape t) otherwise

  let isinf t = classify "isinf" P.Is_inf ~otherwise:false t
  let isnan t = classify "isnan" P.Is_nan ~otherwise:false t
  let isfinite t = classify "isfinite" P.Is_finite ~otherwise:true t

  let cmplt a b = comparison "cmplt" P.Lt a b
  let less a b = comparison "less" P.Lt a b
  let less_s t s = comparison_s "less_s" P.Lt t s
  let cmpne a b = comparison "cmpne" P.Ne a b
  let not_equal a b = comparison "not_equal" P.Ne a b
  let not_equal_s t s = comparison_s "not_equal_s" P.Ne t s
  let cmpeq a b = comparison "cmpeq" P.Eq a b
  let equal a b = comparison "equal" P.Eq a b
  let equal_s t s = comparison_s "equal_s" P.Eq t s
  let cmpgt a b = comparison "cmpgt" P.Gt a b
  let greater a b = comparison "greater" P.Gt a b
  let greater_s t s = comparison_s "greater_s" P.Gt t s
  let cmple a b = comparison "cmple" P.Le a b
  let less_equal a b = comparison "less_equal" P.Le a b
  let less_equal_s t s = comparison_s "less_equal_s" P.Le t s
  let cmpge a b = comparison "cmpge" P.Ge a b
  let greater_equal a b = comparison "greater_equal" P.Ge a b
  let greater_equal_s t s = comparison_s "greater_equal_s" P.Ge t s

  let logical name kind a b =
    elementwise name (dtype a) [ Arr.Any a; Arr.Any b ]
      [| P.Load 0; P.Load 1; P.Op1 (P.Cast (D.Any D.Bool), 0); P.Op1 (P.Cast (D.Any D.Bool), 1); P.Op2 (kind, 2, 3) |]

  let logical_and a b = logical "logical_and" P.And a b
  let logical_or a b = logical "logical_or" P.Or a b
  let logical_xor a b = logical "logical_xor" P.Xor a b

  let logical_not t =
    elementwise "logical_not" (dtype t) [ Arr.Any t ]
      [| P.Load 0; P.Op1 (P.Cast (D.Any D.Bool), 0); P.Op1 (P.Unary P.Not, 1) |]

  let where cond a b =
    elementwise "where" (dtype a) [ Arr.Any cond; Arr.Any a; Arr.Any b ]
      [| P.Load 0; P.Load 1; P.Load 2; P.Where (0, 1, 2) |]

  let clamp_named name ?min ?max t =
    let d = dtype t in
    let nodes = ref [ P.Load 0 ] in
    let apply kind v =
      let last = List.length !nodes - 1 in
      nodes := !nodes @ [ constant d v; P.Op2 (kind, last, last + 1) ]
    in
    Option.iter (apply P.Maximum) min;
    Option.iter (apply P.Minimum) max;
    if List.length !nodes = 1 then copy t
    else elementwise name d [ Arr.Any t ] (Array.of_list !nodes)

  let clamp ?min ?max t = clamp_named "clamp" ?min ?max t
  let clip ?min ?max t = clamp_named "clip" ?min ?max t

  let shift name kind t n =
    let d = dtype t in
    if not (D.is_integer d) then fail name "%s is not an integer dtype" (D.name d);
    if n < 0 then fail name "the negative shift %d" n;
    binary_s name kind t (of_int d n)

  let lshift t n = shift "lshift" P.Shl t n
  let rshift t n = shift "rshift" P.Shr t n
end
