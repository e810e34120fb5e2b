type ('v, 's) a = ('v, 's) Nx_array.t

module Prog = struct
  type unary =
    | Neg | Abs | Sign | Square | Sqrt | Recip | Trunc | Ceil | Floor | Round
    | Is_nan | Is_inf | Is_finite | Not | Bit_not | Conj | Real | Imag
    | Exp | Exp2 | Expm1 | Log | Log2 | Log1p | Sin | Cos | Tan | Asin | Acos
    | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh | Erf | Rsqrt

  type binary =
    | Add | Sub | Mul | Div | Maximum | Minimum | Eq | Ne | Lt | Le | Gt | Ge
    | And | Or | Xor | Bit_and | Bit_or | Bit_xor | Shl | Shr | Pow | Atan2
    | Hypot | Mod

  type op1 = Unary of unary | Cast of Nx_array.Dtype.any
  type constant = Constant : ('v, 's) Nx_array.Dtype.t * 'v -> constant

  type node =
    | Load of int
    | Const of constant
    | Coord of int
    | Op1 of op1 * int
    | Op2 of binary * int * int
    | Where of int * int * int

  type t = {
    operands : Nx_array.Dtype.any array;
    nodes : node array;
    outputs : int array;
    dtypes : Nx_array.Dtype.any array;
    words : bytes;
  }

  external check : bytes -> string * string = "nx_cpu_prog_check"

  (* Kinds are numbered in their order of declaration, as the kernels read
     them. *)
  let unary_code : unary -> int = function
    | Neg -> 0 | Abs -> 1 | Sign -> 2 | Square -> 3 | Sqrt -> 4 | Recip -> 5
    | Trunc -> 6 | Ceil -> 7 | Floor -> 8 | Round -> 9 | Is_nan -> 10
    | Is_inf -> 11 | Is_finite -> 12 | Not -> 13 | Bit_not -> 14 | Conj -> 15
    | Real -> 16 | Imag -> 17 | Exp -> 18 | Exp2 -> 19 | Expm1 -> 20 | Log -> 21
    | Log2 -> 22 | Log1p -> 23 | Sin -> 24 | Cos -> 25 | Tan -> 26 | Asin -> 27
    | Acos -> 28 | Atan -> 29 | Sinh -> 30 | Cosh -> 31 | Tanh -> 32
    | Asinh -> 33 | Acosh -> 34 | Atanh -> 35 | Erf -> 36 | Rsqrt -> 37

  let binary_code : binary -> int = function
    | Add -> 0 | Sub -> 1 | Mul -> 2 | Div -> 3 | Maximum -> 4 | Minimum -> 5
    | Eq -> 6 | Ne -> 7 | Lt -> 8 | Le -> 9 | Gt -> 10 | Ge -> 11 | And -> 12
    | Or -> 13 | Xor -> 14 | Bit_and -> 15 | Bit_or -> 16 | Bit_xor -> 17
    | Shl -> 18 | Shr -> 19 | Pow -> 20 | Atan2 -> 21 | Hypot -> 22 | Mod -> 23

  let code (Nx_array.Dtype.Any d) = Nx_array.Dtype.code d

  let node_words = function
    | Load i -> [ 0; i; 0; 0; 0 ]
    | Coord a -> [ 2; a; 0; 0; 0 ]
    | Op1 (Unary k, x) -> [ 3; unary_code k; x; 0; 0 ]
    | Op2 (k, x, y) -> [ 4; binary_code k; x; y; 0 ]
    | Where (c, x, y) -> [ 5; c; x; y; 0 ]
    | Op1 (Cast d, x) -> [ 6; code d; x; 0; 0 ]
    | Const _ -> assert false

  let encode operands nodes outputs =
    let b = Buffer.create 256 in
    let word w = Buffer.add_int64_le b w in
    let int i = word (Int64.of_int i) in
    int (Array.length operands);
    Array.iter (fun d -> int (code d)) operands;
    int (Array.length nodes);
    Array.iter
      (function
        | Const (Constant (d, v)) ->
            let lo, hi = Nx_array.value_bits d v in
            int 1; int (Nx_array.Dtype.code d); word lo; word hi; int 0
        | n -> List.iter int (node_words n))
      nodes;
    int (Array.length outputs);
    Array.iter int outputs;
    Buffer.to_bytes b

  let make ~operands nodes ~outputs =
    let words = encode operands nodes outputs in
    match check words with
    | codes, "" ->
        let dtypes =
          Array.init (String.length codes) (fun i ->
              Option.get (Nx_array.Dtype.of_code (Char.code codes.[i])))
        in
        { operands = Array.copy operands; nodes = Array.copy nodes;
          outputs = Array.copy outputs; dtypes; words }
    | _, why -> invalid_arg ("Nx_kernel.Prog.make: " ^ why)

  let of_node n operands =
    let loads = Array.init (Array.length operands) (fun i -> Load i) in
    make ~operands (Array.append loads [| n |]) ~outputs:[| Array.length operands |]

  let single p =
    let k = Array.length p.operands in
    let loads_first = ref (Array.length p.nodes = k + 1) in
    for i = 0 to min k (Array.length p.nodes) - 1 do
      if p.nodes.(i) <> Load i then loads_first := false
    done;
    if !loads_first && p.outputs = [| k |] then Some p.nodes.(k) else None

  let is_single p = Option.is_some (single p)
  let operands p = Array.copy p.operands
  let nodes p = Array.copy p.nodes
  let outputs p = Array.copy p.outputs
  let node_dtype p i = p.dtypes.(i)
  let output_dtype p k = p.dtypes.(p.outputs.(k))
  let words p = Bytes.copy p.words
end

type window = { size : int; stride : int; dilation : int }
type pad = { before : int array; after : int array; windows : window option array; fill : float }
type load = Plain of Nx_array.any | Padded of pad * Nx_array.any

module Shape = struct
  let padded p shape =
    let r = Array.length shape in
    let fail fmt = Printf.ksprintf (fun m -> invalid_arg ("Nx_kernel.Shape.padded: " ^ m)) fmt in
    if Array.length p.before <> r || Array.length p.after <> r
       || not (Array.length p.windows = 0 || Array.length p.windows = r)
    then
      fail "a pad of %d befores, %d afters and %d windows for an operand of rank %d"
        (Array.length p.before) (Array.length p.after) (Array.length p.windows) r;
    let taps = ref [] in
    let out =
      Array.init r (fun a ->
          if p.before.(a) < 0 || p.after.(a) < 0 then fail "axis %d pads by a negative count" a;
          let padded = shape.(a) + p.before.(a) + p.after.(a) in
          match if Array.length p.windows = 0 then None else p.windows.(a) with
          | None -> padded
          | Some w ->
              if w.size < 1 || w.stride < 1 || w.dilation < 1 then
                fail "axis %d's window has a size, stride or dilation below 1" a;
              let span = ((w.size - 1) * w.dilation) + 1 in
              if span > padded then fail "axis %d's window spans %d of a padded extent of %d" a span padded;
              taps := w.size :: !taps;
              ((padded - span) / w.stride) + 1)
    in
    Array.append out (Array.of_list (List.rev !taps))
end

let map_refusal p ~dsts loads =
  let outputs = Prog.outputs p and operands = Prog.operands p in
  let shape_of (Nx_array.Any a) = Nx_array.shape a in
  let code_of (Nx_array.Any a) = Nx_array.Dtype.code (Nx_array.dtype a) in
  let name_of (Nx_array.Any a) = Nx_array.Dtype.name (Nx_array.dtype a) in
  let pp_shape s = "[" ^ String.concat "; " (Array.to_list (Array.map string_of_int s)) ^ "]" in
  let err = Printf.ksprintf Option.some in
  match
    Iarray.map
      (function
        | Plain a -> (a, shape_of a)
        | Padded (p, a) -> (a, Shape.padded p (shape_of a)))
      loads
  with
  | exception Invalid_argument why -> Some why
  | loads ->
  if Iarray.length dsts <> Array.length outputs then
    err "%d destinations for a program of %d outputs" (Iarray.length dsts) (Array.length outputs)
  else if Iarray.length loads <> Array.length operands then
    err "%d loads for a program of %d operands" (Iarray.length loads) (Array.length operands)
  else
    let shape =
      if Iarray.length dsts > 0 then Some (shape_of (Iarray.get dsts 0))
      else if Iarray.length loads > 0 then Some (snd (Iarray.get loads 0))
      else None
    in
    let first = ref None in
    let note m = if !first = None then first := Some m in
    Iarray.iteri
      (fun k d ->
        if code_of d <> Prog.code (Prog.output_dtype p k) then
          note (Printf.sprintf "destination %d is %s but output %d is %s" k (name_of d) k
                  (let (Nx_array.Dtype.Any t) = Prog.output_dtype p k in Nx_array.Dtype.name t));
        if Some (shape_of d) <> shape then
          note (Printf.sprintf "destination %d has shape %s, the loop %s" k (pp_shape (shape_of d))
                  (pp_shape (Option.get shape))))
      dsts;
    Iarray.iteri
      (fun i (l, load_shape) ->
        if code_of l <> Prog.code operands.(i) then
          note (Printf.sprintf "load %d is %s but operand %d is %s" i (name_of l) i
                  (let (Nx_array.Dtype.Any t) = operands.(i) in Nx_array.Dtype.name t));
        if Some load_shape <> shape then
          note (Printf.sprintf "load %d has shape %s, the loop %s" i (pp_shape load_shape)
                  (pp_shape (Option.get shape))))
      loads;
    !first

module type S = sig
  val name : string
  val computes_on : Rig.t -> bool
  val map : Prog.t -> dsts:Nx_array.any iarray -> load iarray -> Nx_array.answer
end
