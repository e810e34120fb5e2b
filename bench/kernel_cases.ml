(* The benchmark cases of the kernel families (contractions, gathers and
   scatters, sorts, Fourier transforms, matrix routines), mirrored by
   kernel_cases.py. A case's SHAPE is its parameters, as kernel_cases.py
   documents them case by case; its operands hold the values of [mix], which
   kernel_cases.py computes alike, so both sides work on the same numbers. *)

open Nx_array
module K = Nx_kernel

let check : answer -> unit = function Done -> () | Declined why | Refused why -> failwith why

(* splitmix64 of element [i] of stream [k]: ((i + 1 + k 2^40) φ64), mixed. *)
let mix k i =
  let open Int64 in
  let z = mul (add (of_int (i + 1)) (shift_left (of_int k) 40)) 0x9E3779B97F4A7C15L in
  let z = mul (logxor z (shift_right_logical z 30)) 0xBF58476D1CE4E5B9L in
  let z = mul (logxor z (shift_right_logical z 27)) 0x94D049BB133111EBL in
  logxor z (shift_right_logical z 31)

(* In [-10, 10): the top 24 bits of [mix k i], scaled. *)
let real k i = (Int64.to_float (Int64.shift_right_logical (mix k i) 40) /. 16777216. *. 20.) -. 10.

(* A bigarray of [kind] and [shape] whose element at flat index i is [f i]. *)
let genarray kind shape f =
  let size = Array.fold_left ( * ) 1 shape in
  let flat = Bigarray.Array1.create kind Bigarray.c_layout size in
  for i = 0 to size - 1 do
    Bigarray.Array1.unsafe_set flat i (f i)
  done;
  Bigarray.reshape (Bigarray.genarray_of_array1 flat) shape

(* The same as an array, copied by [Nx.copy] into a buffer of our own
   allocator, as [Nx]'s functions make a user's tensors: from 4 MiB, on
   transparent huge pages where the system gives them on request, as
   numpy's are. (The bigarray itself lies on OCaml's small pages, and a
   pass over it would walk 4 KiB pages where numpy's walk 2 MiB ones.) *)
let init kind shape f = Nx.copy (of_bigarray (genarray kind shape f))

(* A float array of stream [k]: [real k i] at flat index i. *)
let reals (type s) (d : (float, s) Dtype.t) shape k : (float, s) t =
  match Dtype.bigarray_kind d with
  | Some kind -> init kind shape (real k)
  | None -> failwith ("no bigarray kind for " ^ Dtype.name d)

(* A complex array of streams [k] and [k + 1]. *)
let complexes (type s) (d : (Complex.t, s) Dtype.t) shape k : (Complex.t, s) t =
  match Dtype.bigarray_kind d with
  | Some kind -> init kind shape (fun i -> { Complex.re = real k i; im = real (k + 1) i })
  | None -> failwith ("no bigarray kind for " ^ Dtype.name d)

(* Positions in [0, n): [mix k i] modulo n. *)
let positions shape n k : K.index =
  init Bigarray.int64 shape (fun i -> Int64.unsigned_rem (mix k i) (Int64.of_int n))

(* The transpose of a square matrix, as a view. *)
let transposed (a : ('v, 's) t) =
  match shape a with
  | [| n; m |] -> view (dtype a) ~shape:[| m; n |] ~strides:[| 1; m |] ~offset:0 (buffer a)
  | _ -> failwith "transposed: a matrix"

let zeros d shape =
  let a = create d shape in
  Buffer.fill_byte (buffer a) 0;
  a

(* Contractions. SHAPE: m x k x n (a product of [m; k] by [k; n]), b x m x
   k x n (a batch of b), or m x k (a matrix by a vector). SPEC: the dtype, or
   "in->acc" (inputs of dtype in, acc and dst of dtype acc). Layout T reads a
   through its transpose. *)
let contract ~spec ~shape ~layout =
  let src, acc =
    match String.split_on_char '>' spec with
    | [ s ] -> (s, s)
    | [ s; a ] -> (String.sub s 0 (String.length s - 1), a)
    | _ -> failwith ("spec " ^ spec)
  in
  let any name = match List.find_opt (fun (Dtype.Any d) -> Dtype.name d = name) Dtype.all with
    | Some d -> d
    | None -> failwith ("no dtype " ^ name)
  in
  let batch, a_shape, b_shape, contracting =
    match shape with
    | [| m; k; n |] -> ([||], [| m; k |], [| k; n |], [| (1, 0) |])
    | [| b; m; k; n |] -> ([| (0, 0) |], [| b; m; k |], [| b; k; n |], [| (2, 1) |])
    | [| m; k |] -> ([||], [| m; k |], [| k |], [| (1, 0) |])
    | _ -> failwith "contract: m x k x n, b x m x k x n or m x k"
  in
  let batch = Iarray.of_array batch and contracting = Iarray.of_array contracting in
  let src = any src in
  let operand k shape =
    match (layout, shape) with
    | Operands.Transposed, [| r; c |] when k = 0 ->
        let (Any t) = Operands.input src [| c; r |] k in
        K.operand (transposed t)
    | _ ->
        let (Any a) = Operands.input src shape k in
        K.operand a
  in
  let a = operand 0 a_shape and b = operand 1 b_shape in
  let (Dtype.Any acc_d) = any acc in
  let dst = zeros acc_d (K.Shape.contract ~batch ~contracting ~segments:None a_shape b_shape) in
  fun () -> check (Nx_cpu.contract ~batch ~contracting ~segments:None ~acc:(Dtype.Any acc_d) ~dst ~init:None a b)

(* Sorts. SHAPE: n (a vector), rows x n (each row along axis 1), or n x k
   (top_k: the first k of a vector of n). *)
let sort ~top ~spec ~shape ~layout:_ =
  let x_shape = if top then [| shape.(0) |] else shape in
  let go (type v s) (d : (v, s) Dtype.t) (x : (v, s) t) =
    let out = if top then [| shape.(1) |] else shape in
    let axis = Array.length x_shape - 1 in
    let values = zeros d out and positions = zeros Dtype.Int64 out in
    fun () -> check (Nx_cpu.sort ~axis ~descending:false ~values ~positions x)
  in
  match spec with
  | "float32" -> go Dtype.Float32 (reals Dtype.Float32 x_shape 0)
  | "int64" -> go Dtype.Int64 (init Bigarray.int64 x_shape (mix 0))
  | _ -> failwith ("sort: spec " ^ spec)

(* Numberings. SHAPE: n x keys: n rows of one word, each a key drawn from
   [keys] values spread over the int64 range (keys = n: every row a key of
   its own); first and counts of [keys] entries. *)
let unique ~spec:_ ~shape ~layout:_ =
  let n, keys = (shape.(0), shape.(1)) in
  let rows =
    if keys >= n then init Bigarray.int64 [| n; 1 |] (fun i -> mix 2 i)
    else init Bigarray.int64 [| n; 1 |] (fun i -> mix 3 (Int64.to_int (Int64.unsigned_rem (mix 2 i) (Int64.of_int keys))))
  in
  let ids = zeros Dtype.Int64 [| n |] and first = zeros Dtype.Int64 [| keys |] in
  let counts = zeros Dtype.Int64 [| keys |] and count = zeros Dtype.Int64 [||] in
  fun () -> check (Nx_cpu.unique ~ids ~first ~counts ~count rows)

(* Rows of two int32. SHAPE: n x keys: n rows, each a pair drawn from [keys]
   pairs (pair j: the low 32 bits of [mix 3 (2 j)] and [mix 3 (2 j + 1)]),
   numbered as one 64-bit word a row through the view of their bits. *)
let unique_rows ~spec:_ ~shape ~layout:_ =
  let n, keys = (shape.(0), shape.(1)) in
  let pick i = Int64.to_int (Int64.unsigned_rem (mix 2 (i / 2)) (Int64.of_int keys)) in
  let x = init Bigarray.int32 [| n; 2 |] (fun i -> Int64.to_int32 (mix 3 ((2 * pick i) + (i mod 2)))) in
  let rows = match K.keys_of_rows x with Some r -> r | None -> failwith "unique_rows: no view of the rows' bits" in
  let ids = zeros Dtype.Int64 [| n |] and first = zeros Dtype.Int64 [| keys |] in
  let counts = zeros Dtype.Int64 [| keys |] and count = zeros Dtype.Int64 [||] in
  fun () -> check (Nx_cpu.unique ~ids ~first ~counts ~count rows)

(* Gathers. SHAPE: n x m (m positions out of a vector of n) or rows x width
   x m (m rows of a [rows; width] matrix along axis 0, the positions
   broadcast along axis 1). *)
let take ~spec:_ ~shape ~layout:_ =
  match shape with
  | [| n; m |] ->
      let x = reals Dtype.Float32 [| n |] 0 and idx = positions [| m |] n 1 in
      let dst = zeros Dtype.Float32 [| m |] in
      fun () -> check (Nx_cpu.gather ~axis:0 ~dst idx x)
  | [| rows; width; m |] ->
      let x = reals Dtype.Float32 [| rows; width |] 0 in
      let idx = positions [| m |] rows 1 in
      let idx = view Dtype.Int64 ~shape:[| m; width |] ~strides:[| 1; 0 |] ~offset:0 (buffer idx) in
      let dst = zeros Dtype.Float32 [| m; width |] in
      fun () -> check (Nx_cpu.gather ~axis:0 ~dst idx x)
  | _ -> failwith "take: n x m or rows x width x m"

(* Scatters into a vector, in place. SHAPE: n x m (m updates into n
   targets). Add: positions drawn at random; Set: m distinct positions. *)
let scatter combine ~spec:_ ~shape ~layout:_ =
  let n, m = (shape.(0), shape.(1)) in
  let into = reals Dtype.Float32 [| n |] 0 and updates = reals Dtype.Float32 [| m |] 2 in
  let unique, idx =
    match combine with
    | K.Set ->
        (* m distinct positions: i * (n / m) plus an offset below n / m. *)
        let step = n / m in
        (true, init Bigarray.int64 [| m |] (fun i ->
             Int64.(add (of_int (i * step)) (unsigned_rem (mix 1 i) (of_int step)))))
    | _ -> (false, positions [| m |] n 1)
  in
  fun () -> check (Nx_cpu.scatter combine ~unique ~axis:0 ~dst:into ~into idx updates)

(* Assemblies. SHAPE: pieces x n: that many vectors of n joined end to end. *)
let assemble ~spec:_ ~shape ~layout:_ =
  let pieces, n = (shape.(0), shape.(1)) in
  let each = Array.init pieces (fun k ->
    (Iarray.of_list [ { Move.start = k * n; stop = (k + 1) * n } ], reals Dtype.Float32 [| n |] k)) in
  let dst = zeros Dtype.Float32 [| pieces * n |] in
  fun () -> check (Nx_cpu.assemble ~fill:0. ~dst (Iarray.of_array each))

(* Runs packed end to end. SHAPE: n x runs x length: that many runs of
   that length out of a vector of n, each from a position drawn at random. *)
let ranges ~spec:_ ~shape ~layout:_ =
  let n, runs, length = (shape.(0), shape.(1), shape.(2)) in
  let x = reals Dtype.Float32 [| n |] 0 in
  let starts = init Bigarray.int64 [| runs |] (fun j -> Int64.unsigned_rem (mix 1 j) (Int64.of_int (n - length + 1))) in
  let ends = init Bigarray.int64 [| runs |] (fun j -> Int64.of_int ((j + 1) * length)) in
  let dst = zeros Dtype.Float32 [| runs * length |] in
  fun () -> check (Nx_cpu.gather_ranges ~dst ~starts ~ends x)

(* The adjoint of a load of k x k windows, stride 1, padded by k / 2 on
   both sides of the last two axes. SHAPE: the destination's, then k. *)
let fold ~spec:_ ~shape ~layout:_ =
  let k = shape.(3) and dst_shape = Array.sub shape 0 3 in
  let window = Some { K.size = k; stride = 1; dilation = 1 } in
  let h = k / 2 in
  let pad = { K.before = [| 0; h; h |]; after = [| 0; h; h |]; windows = [| None; window; window |]; fill = 0. } in
  let x = reals Dtype.Float32 (K.Shape.padded pad dst_shape) 0 in
  let dst = zeros Dtype.Float32 dst_shape in
  fun () -> check (Nx_cpu.fold pad ~dst x)

(* Fourier transforms. SHAPE: the operand's; the transform runs along its
   last axis, or its last two for [two]. *)
let fft ~two ~spec ~shape ~layout:_ =
  let r = Array.length shape in
  let axes = Iarray.of_array (if two then [| r - 2; r - 1 |] else [| r - 1 |]) in
  let go (type s) (d : (Complex.t, s) Dtype.t) =
    let x = complexes d shape 0 and dst = zeros d shape in
    fun () -> check (Nx_cpu.c2c K.Forward ~axes ~dst x)
  in
  match spec with
  | "complex64" -> go Dtype.Complex64
  | "complex128" -> go Dtype.Complex128
  | _ -> failwith ("fft: spec " ^ spec)

(* Real transforms of float32 vectors of SHAPE n: r2c, or c2r of n/2 + 1 bins. *)
let rfft ~inverse ~spec:_ ~shape ~layout:_ =
  let n = shape.(0) in
  let axes = Iarray.of_list [ 0 ] in
  if inverse then begin
    let x = complexes Dtype.Complex64 [| (n / 2) + 1 |] 0 and dst = zeros Dtype.Float32 [| n |] in
    fun () -> check (Nx_cpu.c2r ~axes ~dst x)
  end
  else begin
    let x = reals Dtype.Float32 [| n |] 0 and dst = zeros Dtype.Complex64 [| (n / 2) + 1 |] in
    fun () -> check (Nx_cpu.r2c ~axes ~dst x)
  end

(* Matrices. SHAPE: batch x n x n or n x n. The operand: for cholesky and
   solve_triangular symmetric with [real] entries over 10 n off the diagonal
   and n + 1 on it (diagonally dominant, so positive definite), else [real]
   entries. *)
let matrix (type v s) (d : (v, s) Dtype.t) shape ~dominant : (v, s) t =
  let n = shape.(Array.length shape - 1) in
  let entry i =
    let within = i mod (n * n) and base = i - (i mod (n * n)) in
    let r, c = (within / n, within mod n) in
    let lo, hi = (min r c, max r c) in
    if dominant && r = c then float (n + 1)
    else if dominant then real 0 (base + (lo * n) + hi) /. float (10 * n)
    else real 0 (base + within)
  in
  match (d : (v, s) Dtype.t) with
  | Dtype.Float32 -> init Bigarray.float32 shape entry
  | Dtype.Float64 -> init Bigarray.float64 shape entry
  | Dtype.Complex64 -> init Bigarray.complex32 shape (fun i -> { Complex.re = entry i; im = 0.5 *. real 1 i })
  | Dtype.Complex128 -> init Bigarray.complex64 shape (fun i -> { Complex.re = entry i; im = 0.5 *. real 1 i })
  | _ -> failwith "matrix: float32, float64, complex64 or complex128"

let linalg routine ~spec ~shape ~layout:_ =
  let n = shape.(Array.length shape - 1) in
  let batch = Array.sub shape 0 (Array.length shape - 2) in
  let go (type v s) (d : (v, s) Dtype.t) =
    match routine with
    | `Cholesky ->
        let a = matrix d shape ~dominant:true and dst = zeros d shape in
        fun () -> check (Nx_cpu.cholesky K.Lower ~dst a)
    | `Lu ->
        let a = matrix d shape ~dominant:false and lu = zeros d shape in
        let pivots = zeros Dtype.Int64 (Array.append batch [| n |]) in
        let perm = zeros Dtype.Int64 (Array.append batch [| n |]) in
        fun () -> check (Nx_cpu.lu ~lu ~pivots ~perm a)
    | `Solve ->
        let a = matrix d shape ~dominant:true and b = matrix d shape ~dominant:false in
        let dst = zeros d shape in
        fun () -> check (Nx_cpu.solve_triangular K.Lower ~adjoint:false ~unit_diagonal:false ~dst a b)
    | `Qr ->
        let a = matrix d shape ~dominant:false in
        let q = zeros d shape and r = zeros d shape in
        fun () -> check (Nx_cpu.qr ~q ~r a)
  in
  match spec with
  | "float32" -> go Dtype.Float32
  | "float64" -> go Dtype.Float64
  | "complex64" -> go Dtype.Complex64
  | "complex128" -> go Dtype.Complex128
  | _ -> failwith ("linalg: spec " ^ spec)

let all =
  [
    ("matmul", contract);
    ("cmatmul", contract);
    ("bmm", contract);
    ("matvec", contract);
    ("matmul_int8", contract);
    ("matmul_f16", contract);
    ("sort", sort ~top:false);
    ("sort_stable", sort ~top:false);
    ("sort_rows", sort ~top:false);
    ("top_k", sort ~top:true);
    ("unique", unique);
    ("unique_distinct", unique);
    ("unique_rows", unique_rows);
    ("take", take);
    ("take_rows", take);
    ("scatter_add", scatter K.Add);
    ("scatter_set", scatter K.Set);
    ("assemble", assemble);
    ("ranges", ranges);
    ("fold", fold);
    ("fft", fft ~two:false);
    ("fft_prime", fft ~two:false);
    ("fft2", fft ~two:true);
    ("fft_batch", fft ~two:false);
    ("fft_huge", fft ~two:false);
    ("rfft", rfft ~inverse:false);
    ("irfft", rfft ~inverse:true);
    ("cholesky", linalg `Cholesky);
    ("cholesky_batch", linalg `Cholesky);
    ("lu", linalg `Lu);
    ("solve_triangular", linalg `Solve);
    ("qr", linalg `Qr);
    ("cqr", linalg `Qr);
    ("qr_batch", linalg `Qr);
  ]

let find name = List.assoc_opt name all
