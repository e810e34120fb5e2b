"""The benchmark cases of the Nx module on numpy's side, mirrored by
nx_cases.ml: the same expressions, each making a fresh result."""

import numpy as np

from kernel_cases import KernelCase, reals


def add(spec, shape, layout):
    a, b = reals(np.float32, shape, 0), reals(np.float32, shape, 1)
    return lambda: a + b


def total(spec, shape, layout):
    x = reals(np.float32, shape, 0)
    return lambda: x.sum()


def softmax(spec, shape, layout):
    x = reals(np.float32, shape, 0)

    def run():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return run


def slice_sum(spec, shape, layout):
    x = reals(np.float32, shape, 0)
    rows, cols = shape
    return lambda: x[: rows // 2, 0:cols:2].sum()


def matmul(spec, shape, layout):
    a, b = reals(np.float32, shape, 0), reals(np.float32, shape, 1)
    return lambda: a @ b


def size(shape) -> int:
    return int(np.prod(shape))


CASES = [
    KernelCase("nx_add", ("float32",), ((32, 32), (316, 316), (3162, 3162)), add, lambda s, sh: 12 * size(sh)),
    KernelCase("nx_sum", ("float32",), ((1024,), (99856,), (9998244,)), total, lambda s, sh: 4 * size(sh)),
    KernelCase("nx_softmax", ("float32",), (None, (512, 1024), (4096, 1024)), softmax, lambda s, sh: 8 * size(sh)),
    KernelCase("nx_matmul", ("float32",), (None, (256, 256), (1024, 1024)), matmul, lambda s, sh: 12 * size(sh),
               flops=lambda s, sh: 2 * sh[0] ** 3),
    KernelCase("nx_slice_sum", ("float32",), (None, (1024, 1024), (4096, 4096)), slice_sum,
               lambda s, sh: size(sh)),
]
