type ('v, 's) a = ('v, 's) Nx_array.t
type index = (int64, Bigarray.int64_elt) a

let same_precision (Nx_array.Dtype.Any r) (Nx_array.Dtype.Any c) =
  match r, c with
  | (Float32 | Complex64), (Float32 | Complex64) | (Float64 | Complex128), (Float64 | Complex128) -> true
  | _ -> false

let full_precision (Nx_array.Dtype.Any d) =
  match d with Float32 | Float64 | Complex64 | Complex128 -> true | _ -> false

type direction = Forward | Inverse

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
    words : string;
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
          outputs = Array.copy outputs; dtypes; words = Bytes.to_string words }
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
  let words p = p.words
end

type window = { size : int; stride : int; dilation : int }
type pad = { before : int array; after : int array; windows : window option array; fill : float }
type load = Plain of Nx_array.any | Padded of pad * Nx_array.any

type combine = Set | Add | Max | Min

type monoid = Sum | Prod | Max | Min
type reduction = Monoid of monoid | Arg of monoid | Logsumexp | Moments

let carrier (Nx_array.Dtype.Any d as any) =
  let open Nx_array.Dtype in
  match d with
  | Bool | Bit | Int4 | Int8 | Int16 | Int32 | Int64 -> Any Int64
  | Uint4 | Uint8 | Uint16 | Uint32 | Uint64 -> Any Uint64
  | Float4_e2m1fn | Float8_e4m3fn | Float8_e5m2 | Float16 | Bfloat16 -> Any Float32
  | Float32 | Float64 | Complex64 | Complex128 -> any

let accepts r (Nx_array.Dtype.Any d) =
  match r with
  | Monoid _ -> true
  | Arg (Max | Min) -> not (Nx_array.Dtype.is_complex d)
  | Arg (Sum | Prod) -> false
  | Logsumexp | Moments -> Nx_array.Dtype.is_float d

type scale = Value of int array * Nx_array.any | Code of int array * (int, Bigarray.int8_unsigned_elt) a
type operand = { array : Nx_array.any; scale : scale option }

let operand ?scale x = { array = Nx_array.Any x; scale }

type 'i segments = Rows of { ids : 'i; b_axis : int } | Contracting of { ids : 'i; pair : int; groups : int }

let accumulates (Nx_array.Dtype.Any d) =
  match d with
  | Float32 | Float64 | Complex64 | Complex128 | Int4 | Uint4 | Int8 | Uint8 | Int16 | Uint16 | Int32 | Uint32 | Int64
  | Uint64 ->
      true
  | Bool | Bit | Float4_e2m1fn | Float8_e4m3fn | Float8_e5m2 | Float16 | Bfloat16 -> false

module Shape = struct
  let without shape drop = Array.of_list (List.filteri (fun a _ -> not (List.exists (Int.equal a) drop)) (Array.to_list shape))
  let reduce shape ~axes = without shape (Array.to_list axes)
  let scan shape = Array.copy shape
  let carry shape ~axis = without shape [ axis ]

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

  let contract ~batch ~contracting ~segments a b =
    let fail fmt = Printf.ksprintf (fun m -> invalid_arg ("Nx_kernel.Shape.contract: " ^ m)) fmt in
    let batch = Iarray.to_list batch and contracting = Iarray.to_list contracting in
    let used_a = Array.make (Array.length a) false and used_b = Array.make (Array.length b) false in
    let take used shape name ax =
      if ax < 0 || ax >= Array.length shape then fail "axis %d of %s is not below its rank %d" ax name (Array.length shape);
      if used.(ax) then fail "axis %d of %s is paired twice" ax name;
      used.(ax) <- true
    in
    List.iter
      (fun (x, y) ->
        take used_a a "a" x;
        take used_b b "b" y;
        if a.(x) <> b.(y) then fail "pair (%d, %d) joins extents %d and %d" x y a.(x) b.(y))
      (batch @ contracting);
    let groups, b_axis =
      match segments with
      | None -> ([], -1)
      | Some (Rows { b_axis; _ }) ->
          if b_axis < 0 || b_axis >= Array.length b || used_b.(b_axis) then
            fail "b_axis %d is not an axis of b in no pair" b_axis;
          ([], b_axis)
      | Some (Contracting { pair; groups; _ }) ->
          if pair < 0 || pair >= List.length contracting then fail "pair %d is not a contracting pair" pair;
          if groups < 0 then fail "%d groups" groups;
          ([ groups ], -1)
    in
    let free used shape skip = List.filteri (fun i _ -> (not used.(i)) && i <> skip) (Array.to_list shape) in
    Array.of_list (groups @ List.map (fun (x, _) -> a.(x)) batch @ free used_a a (-1) @ free used_b b b_axis)

  let assemble region =
    Array.map
      (fun { Nx_array.Move.start; stop } ->
        if start < 0 || stop < start then
          invalid_arg (Printf.sprintf "Nx_kernel.Shape.assemble: a range from %d to %d" start stop);
        stop - start)
      (Iarray.to_array region)

  let gather_ranges index ~size x =
    let fail fmt = Printf.ksprintf (fun m -> invalid_arg ("Nx_kernel.Shape.gather_ranges: " ^ m)) fmt in
    let text s = "[" ^ String.concat "; " (Array.to_list (Array.map string_of_int s)) ^ "]" in
    let lead = Array.length index - 1 in
    if lead < 0 then fail "0-d starts and ends: they need an axis of runs";
    if size < 0 then fail "a size of %d" size;
    if Array.length x <= lead || not (Array.for_all2 Int.equal (Array.sub x 0 lead) (Array.sub index 0 lead)) then
      fail "the starts have shape %s but the source %s: the source must begin with the starts' axes but the last, then the packed axis"
        (text index) (text x);
    Array.concat [ Array.sub index 0 lead; [| size |]; Array.sub x (lead + 1) (Array.length x - lead - 1) ]
end

(* Whether two shapes are equal, without the polymorphic comparison's C
   call: a small call makes several such checks. *)
let same_shape (a : int array) (b : int array) =
  Array.length a = Array.length b && Array.for_all2 Int.equal a b

let same_loop_shape a = function Some b -> same_shape a b | None -> false

(* Map's checks of a program of [n_outputs] outputs and these operands;
   [output_dtype k] is output k's dtype. *)
let loads_check ~n_outputs ~(operands : Nx_array.Dtype.any array) ~output_dtype ~dsts loads =
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
  if Iarray.length dsts <> n_outputs then
    err "%d destinations for a program of %d outputs" (Iarray.length dsts) n_outputs
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
        if code_of d <> Prog.code (output_dtype k) then
          note (Printf.sprintf "destination %d is %s but output %d is %s" k (name_of d) k
                  (let (Nx_array.Dtype.Any t) = output_dtype k in Nx_array.Dtype.name t));
        if not (same_loop_shape (shape_of d) shape) then
          note (Printf.sprintf "destination %d has shape %s, the loop %s" k (pp_shape (shape_of d))
                  (pp_shape (Option.get shape))))
      dsts;
    Iarray.iteri
      (fun i (l, load_shape) ->
        if code_of l <> Prog.code operands.(i) then
          note (Printf.sprintf "load %d is %s but operand %d is %s" i (name_of l) i
                  (let (Nx_array.Dtype.Any t) = operands.(i) in Nx_array.Dtype.name t));
        if not (same_loop_shape load_shape shape) then
          note (Printf.sprintf "load %d has shape %s, the loop %s" i (pp_shape load_shape)
                  (pp_shape (Option.get shape))))
      loads;
    !first

let map_refusal p ~dsts loads =
  loads_check ~n_outputs:(Array.length p.Prog.outputs) ~operands:p.Prog.operands
    ~output_dtype:(Prog.output_dtype p) ~dsts loads

let dtype_code (Nx_array.Any a) = Nx_array.Dtype.code (Nx_array.dtype a)
let shape_of (Nx_array.Any a) = Nx_array.shape a
let outputs_of = function Arg _ | Moments -> 2 | Monoid _ | Logsumexp -> 1

(* The reductions' own checks, the first failure's message. *)
let reduction_refusal p rs ~dsts ~dst_shape =
  let first = ref None in
  let note fmt = Printf.ksprintf (fun m -> if !first = None then first := Some m) fmt in
  let n_out = Array.length (Prog.outputs p) in
  let want = Array.fold_left (fun n (r, _) -> n + outputs_of r) 0 rs in
  if Array.length rs = 0 then note "no reduction"
  else if Iarray.length dsts <> want then
    note "%d destinations for reductions that write %d" (Iarray.length dsts) want
  else begin
    let i = ref 0 in
    Array.iter
      (fun (r, k) ->
        if k < 0 || k >= n_out then note "output %d of a program of %d outputs" k n_out
        else if not (accepts r (Prog.output_dtype p k)) then note "output %d's dtype does not fit its reduction" k;
        for j = 0 to outputs_of r - 1 do
          let d = Iarray.get dsts (!i + j) in
          if not (same_shape (shape_of d) dst_shape) then note "destination %d's shape is not the reduction's" (!i + j);
          let position = match r with Arg _ -> j = 1 | _ -> false in
          if position && dtype_code d <> Nx_array.Dtype.code Nx_array.Dtype.Int64 then
            note "destination %d holds positions but is not int64" (!i + j)
        done;
        i := !i + outputs_of r)
      rs
  end;
  !first

(* The loads against the program and the loop's shape, through map's checks
   of the program without outputs, with no destinations. *)
let loads_refusal p ~shape loads =
  let output_dtype _ = invalid_arg "Nx_kernel: no output" in
  match loads_check ~n_outputs:0 ~operands:p.Prog.operands ~output_dtype ~dsts:(Iarray.of_list []) loads with
  | Some why -> Some why
  | None ->
      let bad = ref None in
      Iarray.iteri
        (fun i l ->
          let s = match l with Plain a -> shape_of a | Padded (pd, a) -> Shape.padded pd (shape_of a) in
          if (not (same_shape s shape)) && !bad = None then bad := Some (Printf.sprintf "load %d's shape is not the loop's" i))
        loads;
      !bad

let reduce_refusal p ~shape ~axes rs ~dsts loads =
  let shape = Iarray.to_array shape and axes = Iarray.to_array axes in
  let rank = Array.length shape in
  (* Pair by pair: a small call's few axes, without sorting a list. *)
  let repeats = ref false and outside = ref false in
  Array.iteri
    (fun i a ->
      if a < 0 || a >= rank then outside := true;
      for j = 0 to i - 1 do if axes.(j) = a then repeats := true done)
    axes;
  if !repeats then Some "axes repeat an axis"
  else if !outside then Some (Printf.sprintf "an axis outside a loop of rank %d" rank)
  else
    match reduction_refusal p (Iarray.to_array rs) ~dsts ~dst_shape:(Shape.reduce shape ~axes) with
    | Some why -> Some why
    | None -> ( try loads_refusal p ~shape loads with Invalid_argument why -> Some why)

let scan_refusal ?carry p ~axis (r, k) ~dsts loads =
  let shape = if Iarray.length dsts > 0 then shape_of (Iarray.get dsts 0) else [||] in
  if axis < 0 || axis >= Array.length shape then Some (Printf.sprintf "axis %d of a loop of rank %d" axis (Array.length shape))
  else
    match reduction_refusal p [| (r, k) |] ~dsts ~dst_shape:shape with
    | Some why -> Some why
    | None -> (
        let carry_why =
          match (carry, r) with
          | None, _ -> None
          | Some _, (Arg _ | Logsumexp | Moments) -> Some "only a Monoid scan takes a carry"
          | Some c, Monoid _ ->
              if shape_of c <> Shape.carry shape ~axis then Some "the carry's shape is not the loop's without the axis"
              else if dtype_code c <> Prog.code (carrier (Prog.output_dtype p k)) then Some "the carry is not of the output's carrier"
              else None
        in
        match carry_why with
        | Some why -> Some why
        | None -> ( try loads_refusal p ~shape loads with Invalid_argument why -> Some why))


let shape_text s = "[" ^ String.concat "; " (Array.to_list (Array.map string_of_int s)) ^ "]"

(* The shape of [a] off [axis] against [want]'s, and the axis in range. *)
let along_refusal what ~axis ~dst a =
  let r = Nx_array.rank dst in
  if axis < 0 || axis >= r then Some (Printf.sprintf "axis %d of a destination of rank %d" axis r)
  else
    let s = Nx_array.shape a and d = Nx_array.shape dst in
    if Array.length s <> r || Array.exists Fun.id (Array.mapi (fun i n -> i <> axis && n <> d.(i)) s) then
      Some (Printf.sprintf "the %s have shape %s, the destination %s: they differ off axis %d" what (shape_text s)
              (shape_text d) axis)
    else None

(* The positions against the array whose shape they must have, [what]. *)
let positions_refusal idx what a =
  let s = Nx_array.shape idx and want = Nx_array.shape a in
  if same_shape s want then None
  else Some (Printf.sprintf "the positions have shape %s, the %s %s" (shape_text s) what (shape_text want))

let gather_refusal ~axis ~dst idx x =
  match along_refusal "source's elements" ~axis ~dst x with
  | Some why -> Some why
  | None -> positions_refusal idx "destination" dst

let scatter_refusal (_ : combine) ~axis ~dst ~into idx updates =
  if Nx_array.shape into <> Nx_array.shape dst then
    Some (Printf.sprintf "into has shape %s, the destination %s" (shape_text (Nx_array.shape into))
            (shape_text (Nx_array.shape dst)))
  else
    match along_refusal "updates" ~axis ~dst updates with
    | Some why -> Some why
    | None -> positions_refusal idx "updates" updates

let assemble_refusal ~dst pieces =
  let d = Nx_array.shape dst in
  let why = ref None in
  Iarray.iteri
    (fun j (region, piece) ->
      let note fmt = Printf.ksprintf (fun m -> if !why = None then why := Some (Printf.sprintf "piece %d: %s" j m)) fmt in
      if Iarray.length region <> Array.length d then
        note "a region of %d axes in a destination of rank %d" (Iarray.length region) (Array.length d)
      else begin
        Iarray.iteri
          (fun a { Nx_array.Move.start; stop } ->
            if start < 0 || stop < start || stop > d.(a) then note "axis %d's region %d..%d is not within 0..%d" a start stop d.(a))
          region;
        if !why = None && Nx_array.shape piece <> Shape.assemble region then
          note "shape %s, its region %s" (shape_text (Nx_array.shape piece)) (shape_text (Shape.assemble region))
      end)
    pieces;
  !why

let gather_ranges_refusal ~dst ~starts ~ends x =
  let is = Nx_array.shape starts and d = Nx_array.shape dst in
  if not (same_shape (Nx_array.shape ends) is) then
    Some (Printf.sprintf "the ends have shape %s, the starts %s" (shape_text (Nx_array.shape ends)) (shape_text is))
  else
    let lead = Array.length is - 1 in
    let size = if lead >= 0 && lead < Array.length d then d.(lead) else 0 in
    match Shape.gather_ranges is ~size (Nx_array.shape x) with
    | exception Invalid_argument why -> Some why
    | want when same_shape d want -> None
    | want -> Some (Printf.sprintf "the destination has shape %s, not %s" (shape_text d) (shape_text want))

let fold_refusal p ~dst x =
  match Shape.padded p (Nx_array.shape dst) with
  | exception Invalid_argument why -> Some why
  | want when same_shape (Nx_array.shape x) want -> None
  | want ->
      Some (Printf.sprintf "the source has shape %s, but the pad's load of the destination's shape %s gives %s"
              (shape_text (Nx_array.shape x)) (shape_text (Nx_array.shape dst)) (shape_text want))

(* Matrices *)

type triangle = Lower | Upper
type factors = Reduced | Complete

let matrix_shape name a =
  let s = Nx_array.shape a in
  let r = Array.length s in
  if r < 2 then Error (Printf.sprintf "%s has %d axes, not at least 2" name r)
  else Ok (Array.sub s 0 (r - 2), s.(r - 2), s.(r - 1))

let lu_shapes a =
  let r = Array.length a in
  if r < 2 then invalid_arg "Nx_kernel.lu_shapes: fewer than 2 axes";
  let batch = Array.sub a 0 (r - 2) in
  (Array.append batch [| min a.(r - 2) a.(r - 1) |], Array.append batch [| a.(r - 2) |])

let qr_shapes f a =
  let r = Array.length a in
  if r < 2 then invalid_arg "Nx_kernel.qr_shapes: fewer than 2 axes";
  let batch = Array.sub a 0 (r - 2) and m = a.(r - 2) and n = a.(r - 1) in
  let c = match f with Reduced -> min m n | Complete -> m in
  (Array.append batch [| m; c |], Array.append batch [| c; n |])

let pp_shape s = "[" ^ String.concat "; " (Array.to_list (Array.map string_of_int s)) ^ "]"

(* The first refusal of a list of checks, each run only where those before
   it pass. *)
let first checks = List.fold_left (fun acc f -> match acc with Some _ -> acc | None -> f ()) None checks

let has_shape name a want () =
  let s = Nx_array.shape a in
  if s = want then None else Some (Printf.sprintf "%s has shape %s, not %s" name (pp_shape s) (pp_shape want))

let full_precision_refusal a () =
  let d = Nx_array.dtype a in
  if full_precision (Nx_array.Dtype.Any d) then None
  else Some (Printf.sprintf "a is %s, not float32, float64, complex64 or complex128" (Nx_array.Dtype.name d))

let with_matrix a k = match matrix_shape "a" a with Error why -> Some why | Ok (batch, m, n) -> k batch m n

let cholesky_refusal ~dst a =
  with_matrix a (fun batch m n ->
      first
        [ full_precision_refusal a;
          (fun () -> if m <> n then Some (Printf.sprintf "a is %d × %d, not square" m n) else None);
          has_shape "dst" dst (Array.append batch [| m; n |]) ])

let lu_refusal ~lu ~pivots ~perm a =
  with_matrix a (fun _ _ _ ->
      let p, q = lu_shapes (Nx_array.shape a) in
      first
        [ full_precision_refusal a; has_shape "lu" lu (Nx_array.shape a); has_shape "pivots" pivots p;
          has_shape "perm" perm q ])

let solve_triangular_refusal ~dst a b =
  with_matrix a (fun batch m n ->
      let k = match matrix_shape "b" b with Ok (_, _, k) -> k | Error _ -> 0 in
      first
        [ full_precision_refusal a;
          (fun () -> if m <> n then Some (Printf.sprintf "a is %d × %d, not square" m n) else None);
          has_shape "b" b (Array.append batch [| n; k |]); has_shape "dst" dst (Array.append batch [| n; k |]) ])

let factors ~q a =
  let s = Nx_array.shape a in
  if Array.length s < 2 then None
  else
    List.find_opt (fun f -> fst (qr_shapes f s) = Nx_array.shape q) [ Reduced; Complete ]

let qr_refusal ~q ~r a =
  with_matrix a (fun _ _ _ ->
      first
        [ full_precision_refusal a;
          (fun () ->
            match factors ~q a with
            | Some f -> first [ has_shape "r" r (snd (qr_shapes f (Nx_array.shape a))) ]
            | None ->
                let s = Nx_array.shape a in
                Some
                  (Printf.sprintf "q has shape %s, not %s (reduced) or %s (complete)" (pp_shape (Nx_array.shape q))
                     (pp_shape (fst (qr_shapes Reduced s))) (pp_shape (fst (qr_shapes Complete s))))) ])

(* Numbering *)

type keys = (int64, Bigarray.int64_elt) a

let keys_of_rows (type v s) (x : (v, s) a) : keys option =
  let d = Nx_array.dtype x in
  let b = Nx_array.Dtype.bits d in
  let words bits = if bits mod 64 = 0 then Some (bits / 64) else None in
  if Nx_array.rank x <> 2 || b mod 8 <> 0 then None
  else
    let n = Nx_array.extent x 0 and c = Nx_array.extent x 1 in
    let buf = Nx_array.buffer x in
    if c = 0 then Some (Nx_array.view Nx_array.Dtype.Int64 ~shape:[| n; 0 |] ~strides:[| 0; 0 |] ~offset:0 buf)
    else if c > 1 && Nx_array.stride x 1 <> 1 then None
    else
      match (words (c * b), words (Nx_array.offset x * b), words (Nx_array.stride x 0 * b)) with
      | Some w, Some offset, Some step ->
          Some (Nx_array.view Nx_array.Dtype.Int64 ~shape:[| n; w |] ~strides:[| step; 1 |] ~offset buf)
      | _ -> None

let unique_refusal ~ids ~first ~counts ~count keys =
  match Nx_array.shape keys with
  | [| n; _ |] ->
      let shape name a = pp_shape (Nx_array.shape a) |> Printf.sprintf "%s has shape %s" name in
      if Nx_array.shape ids <> [| n |] then Some (Printf.sprintf "%s for keys of %d rows" (shape "ids" ids) n)
      else if Nx_array.rank first <> 1 || Nx_array.shape counts <> Nx_array.shape first then
        Some (Printf.sprintf "%s and counts %s, not one [m]" (shape "first" first) (pp_shape (Nx_array.shape counts)))
      else if Nx_array.rank count <> 0 then Some (Printf.sprintf "%s, not 0-d" (shape "count" count))
      else None
  | s -> Some (Printf.sprintf "keys have shape %s, not [n; w]" (pp_shape s))

module type S = sig
  val name : string
  val computes_on : Rig.t -> bool
  val map : Prog.t -> dsts:Nx_array.any iarray -> load iarray -> Nx_array.answer

  val reduce :
    Prog.t -> shape:int iarray -> axes:int iarray -> (reduction * int) iarray ->
    dsts:Nx_array.any iarray -> load iarray -> Nx_array.answer

  val scan :
    ?carry:Nx_array.any -> Prog.t -> axis:int -> reduction * int ->
    dsts:Nx_array.any iarray -> load iarray -> Nx_array.answer

  val c2c :
    direction -> axes:int iarray -> dst:(Stdlib.Complex.t, 's) a -> (Stdlib.Complex.t, 's) a ->
    Nx_array.answer

  val r2c : axes:int iarray -> dst:(Stdlib.Complex.t, 'c) a -> (float, 'r) a -> Nx_array.answer
  val c2r : axes:int iarray -> dst:(float, 'r) a -> (Stdlib.Complex.t, 'c) a -> Nx_array.answer

  val contract :
    batch:(int * int) iarray -> contracting:(int * int) iarray -> segments:index segments option ->
    acc:Nx_array.Dtype.any -> dst:('v, 's) a -> init:('v, 's) a option -> operand -> operand ->
    Nx_array.answer

  val gather : axis:int -> dst:('v, 's) a -> index -> ('v, 's) a -> Nx_array.answer

  val scatter :
    combine -> unique:bool -> axis:int -> dst:('v, 's) a -> into:('v, 's) a -> index -> ('v, 's) a ->
    Nx_array.answer

  val assemble :
    fill:'v -> dst:('v, 's) a -> (Nx_array.Move.range iarray * ('v, 's) a) iarray -> Nx_array.answer

  val gather_ranges : dst:('v, 's) a -> starts:index -> ends:index -> ('v, 's) a -> Nx_array.answer
  val fold : pad -> dst:('v, 's) a -> ('v, 's) a -> Nx_array.answer

  val sort :
    axis:int -> descending:bool -> values:('v, 's) a -> positions:index -> ('v, 's) a -> Nx_array.answer

  val unique : ids:index -> first:index -> counts:index -> count:index -> keys -> Nx_array.answer

  val cholesky : triangle -> dst:('v, 's) a -> ('v, 's) a -> Nx_array.answer
  val lu : lu:('v, 's) a -> pivots:index -> perm:index -> ('v, 's) a -> Nx_array.answer
  val qr : q:('v, 's) a -> r:('v, 's) a -> ('v, 's) a -> Nx_array.answer

  val solve_triangular :
    triangle -> adjoint:bool -> unit_diagonal:bool -> dst:('v, 's) a -> ('v, 's) a -> ('v, 's) a -> Nx_array.answer
end

let contract_refusal ~batch ~contracting ~segments ~acc:_ ~dst ~init a b =
  let shape_of (Nx_array.Any x) = Nx_array.shape x in
  let pp s = "[" ^ String.concat "; " (Array.to_list (Array.map string_of_int s)) ^ "]" in
  let err fmt = Printf.ksprintf Option.some fmt in
  let ( >>> ) r f = match r with Some _ -> r | None -> f () in
  let sa = shape_of a.array and sb = shape_of b.array in
  match Shape.contract ~batch ~contracting ~segments sa sb with
  | exception Invalid_argument why -> Some why
  | want ->
      let check_scale name shape block scale =
        if Array.length block <> Array.length shape then
          err "%s's scale has %d block extents for a rank of %d" name (Array.length block) (Array.length shape)
        else if Array.exists (fun b -> b < 1) block then err "%s's scale has a block extent below 1" name
        else
          let need = Array.mapi (fun i n -> (n + block.(i) - 1) / block.(i)) shape in
          if scale <> need then err "%s's scales have shape %s, not %s" name (pp scale) (pp need) else None
      in
      let scale_refusal name op =
        match op.scale with
        | None -> None
        | Some (Value (block, s)) -> check_scale name (shape_of op.array) block (shape_of s)
        | Some (Code (block, s)) -> check_scale name (shape_of op.array) block (Nx_array.shape s)
      in
      let ids_refusal () =
        let nbatch = Iarray.length batch in
        let afree = Array.length sa - nbatch - Iarray.length contracting in
        let need, ids =
          match segments with
          | None -> ([||], None)
          | Some (Rows { ids; _ }) -> (Array.sub want 0 (nbatch + afree), Some ids)
          | Some (Contracting { ids; pair; _ }) -> ([| sa.(fst (Iarray.get contracting pair)) |], Some ids)
        in
        match ids with
        | Some ids when Nx_array.shape ids <> need -> err "ids have shape %s, not %s" (pp (Nx_array.shape ids)) (pp need)
        | _ -> None
      in
      (if shape_of dst <> want then err "dst has shape %s, not the contraction's %s" (pp (shape_of dst)) (pp want) else None)
      >>> (fun () ->
            match init with
            | Some i when shape_of i <> want -> err "init has shape %s, not dst's %s" (pp (shape_of i)) (pp want)
            | _ -> None)
      >>> (fun () -> scale_refusal "a" a)
      >>> (fun () -> scale_refusal "b" b)
      >>> ids_refusal
