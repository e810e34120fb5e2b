"""The table of benchmark cases on numpy's side, mirrored by cases.ml.

A case is a name, the dtype specs it runs ("float32" or "float32->int32":
source and destination), the number of inputs, and numpy's way to compute
it into a preallocated output."""

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Case:
    name: str
    specs: tuple[str, ...]
    inputs: int
    run: Callable[[list[np.ndarray], np.ndarray], object]


CASES = [
    Case("add", ("float32", "float64"), 2, lambda x, out: np.add(x[0], x[1], out=out)),
    # numpy has no fused multiply-add: the product is a temporary.
    Case("fma", ("float32", "float64"), 3, lambda x, out: np.add(x[0] * x[1], x[2], out=out)),
    Case("cast", ("float32->float16", "float32->int32"), 1,
         lambda x, out: np.copyto(out, x[0], casting="unsafe")),
    Case("exp", ("float32", "float64"), 1, lambda x, out: np.exp(x[0], out=out)),
]


def find(name: str) -> Case:
    return next(c for c in CASES if c.name == name)


def dtypes(spec: str) -> tuple[np.dtype, np.dtype]:
    """The source and destination dtypes of a spec."""
    src, _, dst = spec.partition("->")
    return np.dtype(src), np.dtype(dst or src)


def operands(case: Case, spec: str, side: int, layout: str):
    """The inputs (of the values operands.ml makes, transposed for layout "T")
    and a written, contiguous output of a side x side case."""
    src, dst = dtypes(spec)
    i = np.arange(side * side, dtype=np.int64)
    xs = []
    for k in range(case.inputs):
        x = (((i * 7919 + k * 104729) % 2001) / 100 - 10).astype(src).reshape(side, side)
        xs.append(x.T if layout == "T" else x)
    out = np.empty((side, side), dtype=dst)
    out.fill(0)
    return xs, out


def call(name: str, spec: str, side: int, layout: str) -> Callable[[], object]:
    """One call of a case over fresh operands, as a closure."""
    case = find(name)
    xs, out = operands(case, spec, side, layout)
    return lambda: case.run(xs, out)


def bytes_moved(name: str, spec: str, side: int) -> int:
    """Bytes one call reads and writes, each element once."""
    src, dst = dtypes(spec)
    return side * side * (find(name).inputs * src.itemsize + dst.itemsize)
