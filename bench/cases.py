"""The table of benchmark cases on numpy's side, mirrored by cases.ml.

A case is a name, the dtype specs it runs ("float32" or "float32->int32":
source and destination), the number of inputs, numpy's way to compute it,
the shapes it runs at (from the run's sides), the layouts of its inputs, and
the shape of its output. A map and a scan write into a preallocated output,
`run(xs, out)`; a reduction into `out` where numpy takes one (an axis sum),
else into numpy's own result, `out` then None."""

from dataclasses import dataclass
from typing import Callable

import numpy as np

import kernel_cases
import nx_cases
from kernel_cases import KernelCase

Shape = tuple[int, ...]


def squares(sides: tuple[int, ...]) -> list[Shape]:
    """side x side matrices."""
    return [(s, s) for s in sides]


def vectors(sides: tuple[int, ...]) -> list[Shape]:
    """Vectors of side * side elements: 9998244 (about 10M) for 3162."""
    return [(s * s,) for s in sides]


def matrices(sides: tuple[int, ...]) -> list[Shape]:
    """side x side matrices, but 4096 x 4096 (64 MiB of float32) for the
    full run's largest side."""
    return [(4096, 4096) if s >= 3162 else (s, s) for s in sides]


def one(_sides: tuple[int, ...]) -> list[Shape]:
    """One element, whatever the sides: the fixed cost of a call."""
    return [(1,)]


def same(shape: Shape) -> Shape | None:
    return shape


def scalar(_shape: Shape) -> Shape | None:
    return None


@dataclass(frozen=True)
class Case:
    name: str
    specs: tuple[str, ...]
    inputs: int
    run: Callable[[list[np.ndarray], np.ndarray | None], object]
    shapes: Callable[[tuple[int, ...]], list[Shape]] = squares
    layouts: tuple[str, ...] = ("C", "T")  # "T": every input read through its transpose
    out: Callable[[Shape], Shape | None] = same


def logsumexp(x: np.ndarray):
    """numpy's usual formulation (scipy's, without scipy)."""
    m = x.max()
    return m + np.log(np.exp(x - m).sum())


def reduction(name, specs, run, shapes=vectors, out=scalar) -> Case:
    """A reduction of one input, contiguous."""
    return Case(name, specs, 1, run, shapes, ("C",), out)


F = ("float32",)
CASES = [
    Case("add", ("float32", "float64"), 2, lambda x, out: np.add(x[0], x[1], out=out)),
    # numpy has no fused multiply-add: the product is a temporary.
    Case("fma", ("float32", "float64"), 3, lambda x, out: np.add(x[0] * x[1], x[2], out=out)),
    Case("cast", ("float32->float16", "float32->int32"), 1,
         lambda x, out: np.copyto(out, x[0], casting="unsafe")),
    Case("exp", ("float32", "float64"), 1, lambda x, out: np.exp(x[0], out=out)),
    reduction("sum", ("float32", "float64"), lambda x, out: x[0].sum()),
    reduction("sum_axis0", F, lambda x, out: np.sum(x[0], axis=0, out=out), matrices,
              lambda s: s[1:]),
    reduction("sum_axis1", F, lambda x, out: np.sum(x[0], axis=1, out=out), matrices,
              lambda s: s[:1]),
    reduction("max", F, lambda x, out: x[0].max()),
    reduction("argmax", F, lambda x, out: x[0].argmax()),
    reduction("mean", F, lambda x, out: x[0].mean()),
    reduction("var", F, lambda x, out: x[0].var()),
    reduction("logsumexp", F, lambda x, out: logsumexp(x[0])),
    Case("cumsum", F, 1, lambda x, out: np.cumsum(x[0], out=out), vectors, ("C",)),
    Case("add_one", F, 2, lambda x, out: np.add(x[0], x[1], out=out), one, ("C",)),
    reduction("sum_one", F, lambda x, out: x[0].sum(), one),
]


# The kernel families' cases and Nx's come after the maps, reductions and scans.
ALL: list = CASES + kernel_cases.CASES + nx_cases.CASES


def find(name: str):
    return next(c for c in ALL if c.name == name)


def peer(name: str) -> str:
    """The library a case runs against: numpy, or scipy where it is faster."""
    case = find(name)
    return case.peer if isinstance(case, KernelCase) else "numpy"


def flops(name: str, spec: str, shape: Shape) -> int:
    """Real flops of a call where the case counts them, else 0."""
    case = find(name)
    return case.flops(spec, shape) if isinstance(case, KernelCase) and case.flops else 0


def dtypes(spec: str) -> tuple[np.dtype, np.dtype]:
    """The source and destination dtypes of a spec."""
    src, _, dst = spec.partition("->")
    return np.dtype(src), np.dtype(dst or src)


def shape_name(shape: Shape) -> str:
    """"3162x3162", or "9998244" for a vector: nx_bench's and results.csv's
    spelling."""
    return "x".join(map(str, shape))


def operands(case: Case, spec: str, shape: Shape, layout: str):
    """The inputs (of the values operands.ml makes, transposed for layout "T")
    and a written, contiguous output, or None."""
    src, dst = dtypes(spec)
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    xs = []
    for k in range(case.inputs):
        x = (((i * 7919 + k * 104729) % 2001) / 100 - 10).astype(src).reshape(shape)
        xs.append(x.T if layout == "T" else x)
    out_shape = case.out(shape)
    out = None
    if out_shape is not None:
        out = np.empty(out_shape, dtype=dst)
        out.fill(0)
    return xs, out


def call(name: str, spec: str, shape: Shape, layout: str) -> Callable[[], object]:
    """One call of a case over fresh operands, as a closure."""
    case = find(name)
    if isinstance(case, KernelCase):
        return case.make(spec, shape, layout)
    xs, out = operands(case, spec, shape, layout)
    return lambda: case.run(xs, out)


def bytes_moved(name: str, spec: str, shape: Shape) -> int:
    """Bytes one call reads and writes, each element once: the inputs, and
    the output where it is an array."""
    case = find(name)
    if isinstance(case, KernelCase):
        return case.moved(spec, shape)
    src, dst = dtypes(spec)
    out = case.out(shape)
    written = 0 if out is None else int(np.prod(out)) * dst.itemsize
    return int(np.prod(shape)) * case.inputs * src.itemsize + written
