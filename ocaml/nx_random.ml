(** Nx's random numbers: keys ([Rng]) and samplers, each a program of
   counter-based bits that the map kernel runs; [permutation] and
   [shuffle] by the sort and gather kernels. Built on Nx_linalg. *)

module Make (K : Nx_kernel.S) = struct
  include Nx_linalg.Make (K)

  (* SplitMix64's finaliser. *)
  let mix64 z =
    let open Int64 in
    let z = mul (logxor z (shift_right_logical z 30)) 0xBF58476D1CE4E5B9L in
    let z = mul (logxor z (shift_right_logical z 27)) 0x94D049BB133111EBL in
    logxor z (shift_right_logical z 31)

  let golden = 0x9E3779B97F4A7C15L

  module Rng = struct
    type key = int

    let key seed = Int64.to_int (Int64.shift_right_logical (mix64 (Int64.of_int seed)) 2)
    let fold_in k data = key (Int64.to_int (Int64.add (Int64.mul (Int64.of_int k) golden) (Int64.of_int data)) lxor 0x5bd1e995)

    let split ?(n = 2) k =
      if n < 0 then fail "Rng.split" "%d keys" n;
      Array.init n (fun i -> fold_in (fold_in k (-1)) i)

    let to_int k = k

    (* The innermost scope of the domain: its key and the keys given so far. *)
    type scope = { base : key; mutable given : int }

    let scope = Domain.DLS.new_key (fun () -> ref None)
    let fallback = Domain.DLS.new_key Random.State.make_self_init

    let next_key () =
      match !(Domain.DLS.get scope) with
      | Some s ->
          s.given <- s.given + 1;
          fold_in s.base s.given
      | None -> key (Random.State.bits (Domain.DLS.get fallback))

    let with_key k f =
      let r = Domain.DLS.get scope in
      let outer = !r in
      r := Some { base = k; given = 0 };
      Fun.protect ~finally:(fun () -> r := outer) f

    let run ~seed f = with_key (key seed) f
  end

  let u64 b x = emit b (constant D.Uint64 x)
  let f64 b x = emit b (constant D.Float64 x)

  (* 64 random bits (uint64) at each index of a loop of [shape]: the
     finaliser of the index's row-major number mixed with [seed]. *)
  let random_bits b shape seed =
    let flat = ref (emit b (constant D.Int64 0L)) in
    Array.iteri
      (fun a s ->
        let c = emit b (P.Coord a) in
        let term = emit b (P.Op2 (P.Mul, c, emit b (constant D.Int64 (Int64.of_int s)))) in
        flat := emit b (P.Op2 (P.Add, !flat, term)))
      (Arr.contiguous_strides shape);
    let x = emit b (P.Op1 (P.Cast (D.Any D.Uint64), !flat)) in
    let x = emit b (P.Op2 (P.Mul, x, u64 b golden)) in
    let x = emit b (P.Op2 (P.Add, x, u64 b seed)) in
    let step x shift m =
      let y = emit b (P.Op2 (P.Bit_xor, x, emit b (P.Op2 (P.Shr, x, u64 b (Int64.of_int shift))))) in
      match m with Some c -> emit b (P.Op2 (P.Mul, y, u64 b c)) | None -> y
    in
    step (step (step x 30 (Some 0xBF58476D1CE4E5B9L)) 27 (Some 0x94D049BB133111EBL)) 31 None

  (* The top [p] of 64 bits as a float64 in [0, 1), a multiple of 2^-p. *)
  let unit_float b bits p =
    let k = emit b (P.Op2 (P.Shr, bits, u64 b (Int64.of_int (64 - p)))) in
    let k = emit b (P.Op1 (P.Cast (D.Any D.Float64), k)) in
    emit b (P.Op2 (P.Mul, k, f64 b (Float.ldexp 1. (-p))))

  (* The significant bits of a float dtype, so that every value of
     [unit_float] is one of its values below 1. *)
  let precision : type a b. (a, b) dtype -> int = function
    | D.Float64 -> 53 | D.Float32 -> 24 | D.Float16 -> 11 | D.Bfloat16 -> 8
    | D.Float8_e4m3fn -> 4 | D.Float8_e5m2 -> 3 | D.Float4_e2m1fn -> 1 | _ -> 53

  let seeds () =
    let s = mix64 (Int64.of_int (Rng.next_key ())) in
    (s, mix64 (Int64.logxor s golden))

  let float_dtype name d = if not (D.is_float d) then fail name "%s is not a float dtype" (D.name d)

  let rand d shape =
    float_dtype "rand" d;
    check_shape "rand" shape;
    let b = builder () in
    let s, _ = seeds () in
    ignore (unit_float b (random_bits b shape s) (precision d));
    generate "rand" d shape (nodes_of b)

  (* Box-Muller in float64: sqrt (-2 log u1) cos (2 pi u2), u1 in (0, 1]. *)
  let normal_nodes b shape =
    let s1, s2 = seeds () in
    let u1 = unit_float b (random_bits b shape s1) 53 in
    let u1 = emit b (P.Op2 (P.Sub, f64 b 1., u1)) in
    let u2 = unit_float b (random_bits b shape s2) 53 in
    let r = emit b (P.Op1 (P.Unary P.Sqrt, emit b (P.Op2 (P.Mul, f64 b (-2.), emit b (P.Op1 (P.Unary P.Log, u1)))))) in
    let c = emit b (P.Op1 (P.Unary P.Cos, emit b (P.Op2 (P.Mul, f64 b (2. *. Float.pi), u2)))) in
    emit b (P.Op2 (P.Mul, r, c))

  let randn d shape =
    float_dtype "randn" d;
    check_shape "randn" shape;
    let b = builder () in
    ignore (normal_nodes b shape);
    generate "randn" d shape (nodes_of b)

  let randint d ?(high = 10) shape low =
    if not (D.is_integer d) then fail "randint" "%s is not an integer dtype" (D.name d);
    if low >= high then fail "randint" "low %d is not below high %d" low high;
    check_shape "randint" shape;
    let b = builder () in
    let s, _ = seeds () in
    (* low + bits mod (high - low), in int64 *)
    let r = emit b (P.Op2 (P.Mod, random_bits b shape s, u64 b (Int64.of_int (high - low)))) in
    let r = emit b (P.Op1 (P.Cast (D.Any D.Int64), r)) in
    ignore (emit b (P.Op2 (P.Add, r, emit b (constant D.Int64 (Int64.of_int low)))));
    generate "randint" d shape (nodes_of b)

  let bernoulli ~p shape =
    if not (p >= 0. && p <= 1.) then fail "bernoulli" "p = %g is not in [0, 1]" p;
    check_shape "bernoulli" shape;
    let b = builder () in
    let s, _ = seeds () in
    let u = unit_float b (random_bits b shape s) 53 in
    ignore (emit b (P.Op2 (P.Lt, u, f64 b p)));
    generate "bernoulli" D.Bool shape (nodes_of b)

  (* erfinv y, y in (-1, 1), given w = -log (1 - y²): Giles's polynomial
     approximations (w < 5, else in sqrt w), then two Newton steps on the
     kernels' erf. *)
  let erfinv_nodes b y w =
    let poly x coefficients =
      List.fold_left (fun acc c -> emit b (P.Op2 (P.Add, emit b (P.Op2 (P.Mul, acc, x)), f64 b c))) (f64 b (List.hd coefficients)) (List.tl coefficients)
    in
    let central =
      poly (emit b (P.Op2 (P.Sub, w, f64 b 2.5)))
        [ 2.81022636e-08; 3.43273939e-07; -3.5233877e-06; -4.39150654e-06; 0.00021858087; -0.00125372503;
          -0.00417768164; 0.246640727; 1.50140941 ]
    in
    let tail =
      poly (emit b (P.Op2 (P.Sub, emit b (P.Op1 (P.Unary P.Sqrt, w)), f64 b 3.)))
        [ -0.000200214257; 0.000100950558; 0.00134934322; -0.00367342844; 0.00573950773; -0.0076224613;
          0.00943887047; 1.00167406; 2.83297682 ]
    in
    let p = emit b (P.Where (emit b (P.Op2 (P.Lt, w, f64 b 5.)), central, tail)) in
    let newton x =
      let e = emit b (P.Op2 (P.Sub, emit b (P.Op1 (P.Unary P.Erf, x)), y)) in
      let slope = emit b (P.Op2 (P.Mul, f64 b (2. /. Float.sqrt Float.pi), emit b (P.Op1 (P.Unary P.Exp, emit b (P.Op1 (P.Unary P.Neg, emit b (P.Op1 (P.Unary P.Square, x)))))))) in
      emit b (P.Op2 (P.Sub, x, emit b (P.Op2 (P.Div, e, slope))))
    in
    newton (newton (emit b (P.Op2 (P.Mul, p, y))))

  let truncated_normal d ~lower ~upper shape =
    float_dtype "truncated_normal" d;
    if not (lower < upper) then fail "truncated_normal" "lower %g is not below upper %g" lower upper;
    check_shape "truncated_normal" shape;
    (* above zero, sample [-upper, -lower] and negate, where the normal's
       distribution function keeps its precision *)
    let flip = lower > 0. in
    let lo, hi = if flip then (-.upper, -.lower) else (lower, upper) in
    let cdf x = 0.5 *. (1. +. Float.erf (x /. Float.sqrt 2.)) in
    let pa = cdf lo and pb = cdf hi in
    let b = builder () in
    let s, _ = seeds () in
    let u = unit_float b (random_bits b shape s) 53 in
    (* p = pa + u (pb - pa); y = 2p - 1; w = -log (4 p (1 - p)) = -log (1 - y²) *)
    let p = emit b (P.Op2 (P.Add, f64 b pa, emit b (P.Op2 (P.Mul, u, f64 b (pb -. pa))))) in
    let y = emit b (P.Op2 (P.Sub, emit b (P.Op2 (P.Mul, p, f64 b 2.)), f64 b 1.)) in
    let q = emit b (P.Op2 (P.Sub, f64 b 1., p)) in
    let w = emit b (P.Op1 (P.Unary P.Neg, emit b (P.Op1 (P.Unary P.Log, emit b (P.Op2 (P.Mul, f64 b 4., emit b (P.Op2 (P.Mul, p, q)))))))) in
    let x = emit b (P.Op2 (P.Mul, f64 b (Float.sqrt 2.), erfinv_nodes b y w)) in
    let x = emit b (P.Op2 (P.Minimum, emit b (P.Op2 (P.Maximum, x, f64 b lo)), f64 b hi)) in
    if flip then ignore (emit b (P.Op1 (P.Unary P.Neg, x)));
    generate "truncated_normal" d shape (nodes_of b)

  let categorical ?axis:(ax = -1) ?shape:(batch = [||]) logits =
    float_dtype "categorical" (dtype logits);
    check_shape "categorical" batch;
    let a = axis "categorical" (ndim logits) ax in
    let full_shape = Array.append batch (shape logits) in
    let b = builder () in
    let l = emit b (P.Load 0) in
    let l = emit b (P.Op1 (P.Cast (D.Any D.Float64), l)) in
    (* Gumbel noise -log (-log u), u in (0, 1) *)
    let s, _ = seeds () in
    let u = unit_float b (random_bits b full_shape s) 53 in
    let u = emit b (P.Op2 (P.Add, u, f64 b (Float.ldexp 1. (-54)))) in
    let g = emit b (P.Op1 (P.Unary P.Neg, emit b (P.Op1 (P.Unary P.Log, emit b (P.Op1 (P.Unary P.Neg, emit b (P.Op1 (P.Unary P.Log, u)))))))) in
    ignore (emit b (P.Op2 (P.Add, l, g)));
    let scores = elementwise "categorical" D.Float64 [ Arr.Any (broadcast_view "categorical" full_shape logits) ] (nodes_of b) in
    argmax ~axis:(a + Array.length batch) scores

  let permutation n =
    if n <= 0 then fail "permutation" "%d elements" n;
    (* the order of n uniform floats: each ordering equally likely, ties aside (2^-53 apart) *)
    argsort (rand D.Float64 [| n |])

  let shuffle t =
    if ndim t = 0 || (shape t).(0) = 0 then copy t else take ~axis:0 (permutation (shape t).(0)) t
end
