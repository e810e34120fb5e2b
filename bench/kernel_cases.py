"""The benchmark cases of the kernel families on the peer's side, mirrored by
kernel_cases.ml: contractions, gathers and scatters, sorts, Fourier
transforms and matrix routines.

A case's shape is its parameters (as kernel_cases.ml documents them), one
per size of the run (small, mid, large; None where the case skips a size).
Operands hold the values of `mix`, which kernel_cases.ml computes alike. The
peer is numpy unless the case names scipy, which is faster there and what
users pick; scipy's transforms take the thread count as `workers`."""

from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.fft
import scipy.linalg

Shape = tuple[int, ...]

# The thread count of the setting being timed: scipy.fft takes it per call
# (threadpoolctl governs BLAS alone). The driver sets it.
threads = 1


def mix(k: int, n: int) -> np.ndarray:
    """splitmix64 of elements 0..n-1 of stream k, as uint64."""
    with np.errstate(over="ignore"):
        z = (np.arange(1, n + 1, dtype=np.uint64) + np.uint64(k << 40)) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def real(k: int, n: int) -> np.ndarray:
    """In [-10, 10): the top 24 bits of mix, scaled (float64)."""
    return (mix(k, n) >> np.uint64(40)).astype(np.float64) / 16777216.0 * 20.0 - 10.0


def reals(dtype, shape: Shape, k: int) -> np.ndarray:
    return real(k, int(np.prod(shape))).astype(dtype).reshape(shape)


def complexes(dtype, shape: Shape, k: int) -> np.ndarray:
    n = int(np.prod(shape))
    return (real(k, n) + 1j * real(k + 1, n)).astype(dtype).reshape(shape)


def positions(m: int, n: int, k: int) -> np.ndarray:
    return (mix(k, m) % np.uint64(n)).astype(np.int64)


def inputs(dtype, shape: Shape, k: int) -> np.ndarray:
    """operands.ml's input k: ((i * 7919 + k * 104729) mod 2001) / 100 - 10."""
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((i * 7919 + k * 104729) % 2001) / 100 - 10).astype(dtype).reshape(shape)


@dataclass(frozen=True)
class KernelCase:
    name: str
    specs: tuple[str, ...]
    sizes: tuple[Shape | None, Shape | None, Shape | None]  # small, mid, large
    make: Callable[[str, Shape, str], Callable[[], object]]  # (spec, shape, layout) -> one call
    moved: Callable[[str, Shape], int]  # bytes read and written, each element once
    peer: str = "numpy"
    layouts: tuple[str, ...] = ("C",)
    flops: Callable[[str, Shape], int] | None = None  # real flops of a call, where counted

    def shapes(self, sides: tuple[int, ...]) -> list[Shape | None]:
        """The case's shapes for a run of these sides: the small and mid ones
        for a quick run (two sides), all three for a full one."""
        return list(self.sizes[: len(sides)])


def itemsize(spec: str) -> int:
    return np.dtype(spec.split("->")[0]).itemsize


# Contractions: (m, k, n), (b, m, k, n) or (m, k); spec "dtype" or "in->acc".

def contract_dims(shape: Shape) -> tuple[int, int, int, int]:
    """(batch, m, k, n), n = 1 for a matrix by a vector."""
    if len(shape) == 3:
        return 1, *shape
    if len(shape) == 4:
        return shape
    return 1, shape[0], shape[1], 1


def contract(spec: str, shape: Shape, layout: str):
    src, _, acc = spec.partition("->")
    b, m, k, n = contract_dims(shape)
    if layout == "T":
        a = inputs(src, (k, m), 0).T
    else:
        a = inputs(src, (b, m, k) if len(shape) == 4 else (m, k), 0)
    bb = inputs(src, (b, k, n) if len(shape) == 4 else ((k,) if len(shape) == 2 else (k, n)), 1)
    if acc and np.dtype(acc).kind == "i":
        # numpy has no int8 product into int32: its product of int32 copies.
        a, bb = a.astype(acc), bb.astype(acc)
    out = np.zeros((b, m, n) if len(shape) == 4 else (m, n) if len(shape) == 3 else (m,), a.dtype)
    return lambda: np.matmul(a, bb, out=out)


def contract_moved(spec: str, shape: Shape) -> int:
    b, m, k, n = contract_dims(shape)
    src, _, acc = spec.partition("->")
    return b * (m * k + k * n) * np.dtype(src).itemsize + b * m * n * np.dtype(acc or src).itemsize


def contract_flops(spec: str, shape: Shape) -> int:
    b, m, k, n = contract_dims(shape)
    per = 8 if np.dtype(spec.split("->")[0]).kind == "c" else 2
    return per * b * m * k * n


def matmul_case(name, specs, sizes, layouts=("C",)) -> KernelCase:
    return KernelCase(name, specs, sizes, contract, contract_moved, layouts=layouts, flops=contract_flops)


# Sorts: (n,), (rows, n) along axis 1, or (n, k) for top_k.

def sort(spec: str, shape: Shape, layout: str):
    x = reals(spec, shape, 0) if spec.startswith("float") else mix(0, int(np.prod(shape))).view(np.int64).reshape(shape)
    return lambda: np.sort(x, axis=-1)


def sort_stable(spec: str, shape: Shape, layout: str):
    x = reals(spec, shape, 0)
    return lambda: np.argsort(x, kind="stable")


def top_k(spec: str, shape: Shape, layout: str):
    n, k = shape
    x = reals(spec, (n,), 0)

    def run():
        part = np.argpartition(x, k - 1)[:k]
        return part[np.argsort(x[part], kind="stable")]
    return run


def sort_moved(spec: str, shape: Shape) -> int:
    """The input read, values and int64 positions written."""
    n = int(np.prod(shape))
    return n * (2 * itemsize(spec) + 8)


def top_k_moved(spec: str, shape: Shape) -> int:
    n, k = shape
    return n * itemsize(spec) + k * (itemsize(spec) + 8)


# Numberings: (n, keys) rows of one word.

def unique(spec: str, shape: Shape, layout: str):
    n, keys = shape
    if keys >= n:
        x = mix(2, n).view(np.int64)
    else:
        x = mix(3, keys).view(np.int64)[(mix(2, n) % np.uint64(keys)).astype(np.int64)]
    return lambda: np.unique(x, return_index=True, return_inverse=True, return_counts=True)


def unique_moved(spec: str, shape: Shape) -> int:
    """Keys read, ids written, first and counts written."""
    return shape[0] * 16 + shape[1] * 16


def unique_rows(spec: str, shape: Shape, layout: str):
    """(n, keys) rows of two int32, each row a pair drawn from `keys`
    pairs (pair j: the low 32 bits of mix(3, 2j) and mix(3, 2j + 1)); ours
    numbers them as one 64-bit word a row, a view of their bits."""
    n, keys = shape
    pairs = mix(3, 2 * keys).astype(np.uint32).view(np.int32).reshape(keys, 2)
    x = pairs[(mix(2, n) % np.uint64(keys)).astype(np.int64)]
    return lambda: np.unique(x, axis=0, return_index=True, return_inverse=True, return_counts=True)


# Gathers and scatters: (n, m) into or out of a vector, (rows, width, m) rows.

def take(spec: str, shape: Shape, layout: str):
    if len(shape) == 2:
        n, m = shape
        x, idx = reals(np.float32, (n,), 0), positions(m, n, 1)
        out = np.zeros(m, np.float32)
        return lambda: np.take(x, idx, out=out)
    rows, width, m = shape
    x, idx = reals(np.float32, (rows, width), 0), positions(m, rows, 1)
    out = np.zeros((m, width), np.float32)
    return lambda: np.take(x, idx, axis=0, out=out)


def take_moved(spec: str, shape: Shape) -> int:
    """Positions read, elements read and written."""
    if len(shape) == 2:
        return shape[1] * (8 + 8)
    rows, width, m = shape
    return m * 8 + 2 * m * width * 4


def scatter_add(spec: str, shape: Shape, layout: str):
    n, m = shape
    into, upd, idx = reals(np.float32, (n,), 0), reals(np.float32, (m,), 2), positions(m, n, 1)
    return lambda: np.add.at(into, idx, upd)


def scatter_set(spec: str, shape: Shape, layout: str):
    n, m = shape
    step = n // m
    idx = (np.arange(m, dtype=np.int64) * step + (mix(1, m) % np.uint64(step)).astype(np.int64))
    into, upd = reals(np.float32, (n,), 0), reals(np.float32, (m,), 2)

    def run():
        into[idx] = upd
    return run


def scatter_moved(spec: str, shape: Shape) -> int:
    """Positions and updates read, targets read and written."""
    return shape[1] * (8 + 4 + 8)


def assemble(spec: str, shape: Shape, layout: str):
    pieces, n = shape
    each = [reals(np.float32, (n,), k) for k in range(pieces)]
    out = np.zeros(pieces * n, np.float32)
    return lambda: np.concatenate(each, out=out)


def assemble_moved(spec: str, shape: Shape) -> int:
    return 2 * shape[0] * shape[1] * 4


def ranges(spec: str, shape: Shape, layout: str):
    n, runs, length = shape
    x = reals(np.float32, (n,), 0)
    starts = (mix(1, runs) % np.uint64(n - length + 1)).astype(np.int64)
    pieces = [x[s:s + length] for s in starts]
    out = np.zeros(runs * length, np.float32)
    return lambda: np.concatenate(pieces, out=out)


def ranges_moved(spec: str, shape: Shape) -> int:
    return 2 * shape[1] * shape[2] * 4


def fold(spec: str, shape: Shape, layout: str):
    """A loop over taps adding shifted slices into a padded sum, then its
    inside."""
    b, rows, cols, k = shape
    h = k // 2
    x = reals(np.float32, (b, rows + 2 * h - k + 1, cols + 2 * h - k + 1, k, k), 0)
    padded = np.zeros((b, rows + 2 * h, cols + 2 * h), np.float32)

    def run():
        padded.fill(0)
        for i in range(k):
            for j in range(k):
                padded[:, i:i + x.shape[1], j:j + x.shape[2]] += x[..., i, j]
        return padded[:, h:h + rows, h:h + cols].copy()
    return run


def fold_moved(spec: str, shape: Shape) -> int:
    b, rows, cols, k = shape
    return (k * k + 1) * b * rows * cols * 4


# Fourier transforms, by scipy.fft with the setting's threads.

def fft(spec: str, shape: Shape, layout: str):
    x = complexes(spec, shape, 0)
    return lambda: scipy.fft.fft(x, axis=-1, workers=threads)


def fft2(spec: str, shape: Shape, layout: str):
    x = complexes(spec, shape, 0)
    return lambda: scipy.fft.fft2(x, workers=threads)


def rfft(spec: str, shape: Shape, layout: str):
    x = reals(np.float32, shape, 0)
    return lambda: scipy.fft.rfft(x, workers=threads)


def irfft(spec: str, shape: Shape, layout: str):
    n = shape[0]
    x = complexes(np.complex64, (n // 2 + 1,), 0)
    return lambda: scipy.fft.irfft(x, n, workers=threads)


def fft_moved(spec: str, shape: Shape) -> int:
    return 2 * int(np.prod(shape)) * np.dtype(spec).itemsize


def rfft_moved(spec: str, shape: Shape) -> int:
    n = shape[0]
    return n * 4 + (n // 2 + 1) * 8


def fft_flops(spec: str, shape: Shape) -> int:
    """The usual 5 n log2 n per line."""
    n = shape[-1] if len(shape) != 2 or shape[0] != shape[1] else shape[0] * shape[1]
    return int(5 * int(np.prod(shape)) * np.log2(max(n, 2)))


# Matrix routines: (n, n) or (batch, n, n); the operands of kernel_cases.ml.

def matrix(dtype, shape: Shape, dominant: bool) -> np.ndarray:
    n = shape[-1]
    total = int(np.prod(shape))
    i = np.arange(total, dtype=np.int64)
    within, base = i % (n * n), i - i % (n * n)
    r, c = within // n, within % n
    lo, hi = np.minimum(r, c), np.maximum(r, c)
    flat = real(0, total) if not dominant else real(0, total)[base + lo * n + hi] / (10 * n)
    if dominant:
        flat = np.where(r == c, float(n + 1), flat)
    x = flat.astype(np.float64)
    if np.dtype(dtype).kind == "c":
        x = x + 0.5j * real(1, total)
    return x.astype(dtype).reshape(shape)


def cholesky(spec, shape, layout):
    a = matrix(spec, shape, True)
    return lambda: np.linalg.cholesky(a)


def lu(spec, shape, layout):
    a = matrix(spec, shape, False)
    return lambda: scipy.linalg.lu_factor(a, check_finite=False)


def solve_triangular(spec, shape, layout):
    a, b = matrix(spec, shape, True), matrix(spec, shape, False)
    return lambda: scipy.linalg.solve_triangular(a, b, lower=True, check_finite=False)


def qr(spec, shape, layout):
    a = matrix(spec, shape, False)
    return lambda: np.linalg.qr(a)


def matrix_moved(spec: str, shape: Shape) -> int:
    return 2 * int(np.prod(shape)) * np.dtype(spec).itemsize


def cube_flops(scale: float):
    """scale n³ flops per matrix (real; 4 times as many for complex)."""
    def flops(spec: str, shape: Shape) -> int:
        n = shape[-1]
        per = 4 if np.dtype(spec).kind == "c" else 1
        return int(per * scale * n ** 3 * int(np.prod(shape[:-2])))
    return flops


CASES = [
    matmul_case("matmul", ("float32", "float64"), ((256, 256, 256), (1024, 1024, 1024), (2048, 2048, 2048)),
                ("C", "T")),
    matmul_case("cmatmul", ("complex64",), (None, (1024, 1024, 1024), None)),
    matmul_case("bmm", ("float32",), (None, None, (64, 128, 128, 128))),
    matmul_case("matvec", ("float32",), (None, (1024, 1024), (4096, 4096))),
    matmul_case("matmul_int8", ("int8->int32",), (None, None, (1024, 1024, 1024))),
    matmul_case("matmul_f16", ("float16->float32",), (None, None, (1024, 1024, 1024))),
    KernelCase("sort", ("float32", "int64"), ((10000,), (1000000,), (10000000,)), sort, sort_moved),
    KernelCase("sort_stable", ("float32",), (None, (1000000,), (10000000,)), sort_stable, sort_moved),
    KernelCase("sort_rows", ("float32",), (None, (1000, 1000), (10000, 1000)), sort, sort_moved),
    KernelCase("top_k", ("float32",), (None, (1000000, 100), (10000000, 100)), top_k, top_k_moved),
    KernelCase("unique", ("int64",), (None, (1000000, 1000), (10000000, 1000)), unique, unique_moved),
    KernelCase("unique_distinct", ("int64",), ((100000, 100000), (1000000, 1000000), (10000000, 10000000)), unique,
               unique_moved),
    KernelCase("unique_rows", ("int32",), (None, (1000000, 10000), (10000000, 10000)), unique_rows, unique_moved),
    KernelCase("take", ("float32",), (None, (1000000, 1000000), (10000000, 10000000)), take, take_moved),
    KernelCase("take_rows", ("float32",), (None, (100000, 64, 10000), (1000000, 64, 100000)), take, take_moved),
    KernelCase("scatter_add", ("float32",), (None, (100000, 1000000), (1000000, 10000000)), scatter_add,
               scatter_moved),
    KernelCase("scatter_set", ("float32",), (None, (1000000, 100000), (10000000, 1000000)), scatter_set,
               scatter_moved),
    KernelCase("assemble", ("float32",), (None, (8, 100000), (8, 1000000)), assemble, assemble_moved),
    KernelCase("ranges", ("float32",), (None, (1000000, 100, 5000), (10000000, 1000, 5000)), ranges, ranges_moved),
    KernelCase("fold", ("float32",), (None, (8, 64, 64, 3), (64, 256, 256, 3)), fold, fold_moved),
    KernelCase("fft", ("complex64", "complex128"), ((1024,), (65536,), (1048576,)), fft, fft_moved, "scipy",
               flops=fft_flops),
    KernelCase("fft_prime", ("complex128",), (None, None, (1000003,)), fft, fft_moved, "scipy", flops=fft_flops),
    KernelCase("fft2", ("complex64",), (None, (256, 256), (1024, 1024)), fft2, fft_moved, "scipy", flops=fft_flops),
    KernelCase("fft_batch", ("complex64",), (None, (256, 1024), (4096, 1024)), fft, fft_moved, "scipy",
               flops=fft_flops),
    # 2^25 points, 256 MiB: Bailey's four steps, the points kept in the
    # result between steps on Linux; peak memory past the operands compared.
    KernelCase("fft_huge", ("complex64",), (None, None, (1 << 25,)), fft, fft_moved, "scipy", flops=fft_flops),
    KernelCase("rfft", ("float32",), (None, (65536,), (1048576,)), rfft, rfft_moved, "scipy"),
    KernelCase("irfft", ("float32",), (None, (65536,), (1048576,)), irfft, rfft_moved, "scipy"),
    KernelCase("cholesky", ("float32", "float64"), (None, (256, 256), (1024, 1024)), cholesky, matrix_moved,
               flops=cube_flops(1 / 3)),
    KernelCase("cholesky_batch", ("float64",), (None, None, (10000, 4, 4)), cholesky, matrix_moved),
    KernelCase("lu", ("float64",), (None, (256, 256), (1024, 1024)), lu, matrix_moved, "scipy",
               flops=cube_flops(2 / 3)),
    KernelCase("solve_triangular", ("float64",), (None, (256, 256), (1024, 1024)), solve_triangular,
               matrix_moved, "scipy", flops=cube_flops(1)),
    KernelCase("qr", ("float64",), (None, (256, 256), (1024, 1024)), qr, matrix_moved, flops=cube_flops(4 / 3)),
    KernelCase("cqr", ("complex128",), (None, None, (512, 512)), qr, matrix_moved, flops=cube_flops(4 / 3)),
    KernelCase("qr_batch", ("float32",), (None, None, (10000, 8, 8)), qr, matrix_moved),
]
