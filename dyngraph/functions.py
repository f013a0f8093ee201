"""Top-level functions: ``dg.exp(x)``, ``dg.cat([a, b])``, ``dg.where(c, x, y)``, ...

Each one calls the op (the same as the Tensor method), accepting numbers and arrays too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import backend, factories, ops
from .ops.dims import normalize_dim, one_spelling
from .tensor import Tensor


def _tensor(x: Any) -> Tensor:
    """x as a Tensor: an array wrapped as it is; numbers and lists as ``dg.tensor`` makes them
    (Python floats: float32; not PyTorch's legacy constructor, for which 3 is a size)."""
    if isinstance(x, Tensor):
        return x
    return Tensor(x) if backend.is_array(x) else factories.tensor(x)


def exp(x: Any) -> Tensor:
    return ops.Exp.apply(_tensor(x))


def log(x: Any) -> Tensor:
    return ops.Log.apply(_tensor(x))


def sqrt(x: Any) -> Tensor:
    return ops.Sqrt.apply(_tensor(x))


def sin(x: Any) -> Tensor:
    return ops.Sin.apply(_tensor(x))


def cos(x: Any) -> Tensor:
    return ops.Cos.apply(_tensor(x))


def tanh(x: Any) -> Tensor:
    return ops.Tanh.apply(_tensor(x))


def sigmoid(x: Any) -> Tensor:
    return ops.Sigmoid.apply(_tensor(x))


def relu(x: Any) -> Tensor:
    return ops.Relu.apply(_tensor(x))


def abs(x: Any) -> Tensor:  # noqa: A001 - the name learners know
    return ops.Abs.apply(_tensor(x))


def clamp(x: Any, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
    return _tensor(x).clamp(min, max)


def clamp_min(x: Any, min: float) -> Tensor:  # noqa: A002
    return _tensor(x).clamp_min(min)


def clamp_max(x: Any, max: float) -> Tensor:  # noqa: A002
    return _tensor(x).clamp_max(max)


def repeat_interleave(x: Any, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """``x.repeat_interleave(repeats, dim)``; with one tensor of counts alone,
    ``dg.repeat_interleave(counts)``, the positions it repeats (``[2, 1]`` -> ``[0, 0, 1]``),
    as in PyTorch."""
    if repeats is None:
        counts = _tensor(x)
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
        from .tensor import repeat_index

        n = counts.numel()
        return Tensor(repeat_index(n, counts.reshape(-1).array, output_size).astype(np.int64))
    return _tensor(x).repeat_interleave(repeats, dim, output_size=output_size)


def maximum(x: Any, y: Any) -> Tensor:
    return ops.Maximum.apply(x, y)


def minimum(x: Any, y: Any) -> Tensor:
    return ops.Minimum.apply(x, y)


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """x where condition is true, else y (no gradient flows to the condition). With the
    condition alone, PyTorch's ``nonzero(condition, as_tuple=True)``: the indices where it
    is true, one tensor per dimension."""
    if x is None and y is None:
        return nonzero(condition, as_tuple=True)
    if x is None or y is None:
        raise TypeError("where(condition, x, y) needs both x and y (or neither)")
    if isinstance(condition, Tensor):
        condition = condition.array
    return ops.Where.apply(condition, x, y)


def matmul(x: Any, y: Any) -> Tensor:
    return ops.MatMul.apply(x, y)


def sum(x: Any, dim: Any = None, keepdim: bool | None = None, *, axis: Any = None,  # noqa: A001
        keepdims: bool | None = None) -> Tensor:
    return _tensor(x).sum(dim, keepdim, axis=axis, keepdims=keepdims)


def mean(x: Any, dim: Any = None, keepdim: bool | None = None, *, axis: Any = None,
         keepdims: bool | None = None) -> Tensor:
    return _tensor(x).mean(dim, keepdim, axis=axis, keepdims=keepdims)


def max(x: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - PyTorch's name
    """dg.max(x), dg.max(x, dim) -> (values, indices), dg.max(x, other) = maximum."""
    return _tensor(x).max(*args, **kwargs)


def min(x: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - PyTorch's name
    return _tensor(x).min(*args, **kwargs)


def argmax(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _tensor(x).argmax(dim, keepdim)


def argmin(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _tensor(x).argmin(dim, keepdim)


def log10(x: Any) -> Tensor:
    return ops.Log10.apply(_tensor(x))


def log2(x: Any) -> Tensor:
    return ops.Log2.apply(_tensor(x))


def clone(x: Any) -> Tensor:
    return _tensor(x).clone()


def softmax(x: Any, dim: Any = None, dtype: Any = None, *, axis: Any = None) -> Tensor:
    return _tensor(x).softmax(dim, dtype, axis=axis)


def log_softmax(x: Any, dim: Any = None, dtype: Any = None, *, axis: Any = None) -> Tensor:
    return _tensor(x).log_softmax(dim, dtype, axis=axis)


def logsumexp(x: Any, dim: Any = None, keepdim: bool | None = None, *, axis: Any = None,
              keepdims: bool | None = None) -> Tensor:
    return _tensor(x).logsumexp(dim, keepdim, axis=axis, keepdims=keepdims)


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Any = None,
         append: Any = None) -> Tensor:
    """torch.diff: the differences of neighbours along ``dim``, ``out[i] = x[i + 1] - x[i]``,
    ``n`` times; ``prepend`` / ``append`` are joined on first. Built from slicing and
    subtraction, so it backpropagates as they do. (``dg.diff(graph_a, graph_b)``, two graphs,
    is the diagram of two runs: graph_diff.py.)"""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"diff: n must be a non-negative int, got {n!r}")
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    for name, joined in (("prepend", prepend), ("append", append)):
        if joined is not None and not isinstance(joined, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not "
                            f"{type(joined).__name__}")
    parts = [p for p in (prepend, input, append) if p is not None]
    x = cat(parts, dim=dim) if len(parts) > 1 else input
    axis = dim % x.ndim
    for _ in range(n):
        length = x.shape[axis]
        if length == 0:
            break
        x = x.narrow(axis, 1, length - 1) - x.narrow(axis, 0, length - 1)
    return x


def cat(tensors: Sequence[Any], dim: Any = None, *, axis: Any = None) -> Tensor:
    """Join tensors along an existing dimension ``dim`` (default 0)."""
    if not tensors:
        raise ValueError("cat() needs at least one tensor")
    tensors = [_tensor(t) for t in tensors]
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(
                f"zero-dimensional tensor (at position {i}) cannot be concatenated: use stack, "
                "or reshape it to 1-D first"
            )
    dim = normalize_dim(one_spelling("cat", "dim", dim, "axis", axis, 0), tensors[0].ndim,
                        "dim", "cat")
    return ops.Cat.apply(*tensors, axis=dim)


def stack(tensors: Sequence[Any], dim: Any = None, *, axis: Any = None) -> Tensor:
    """Join tensors of equal shape along a new dimension ``dim`` (default 0)."""
    if not tensors:
        raise ValueError("stack() needs at least one tensor")
    tensors = [_tensor(t) for t in tensors]
    dim = normalize_dim(one_spelling("stack", "dim", dim, "axis", axis, 0), tensors[0].ndim + 1,
                        "dim", "stack")
    return ops.Stack.apply(*tensors, axis=dim)


def reshape(x: Tensor, *shape: Any) -> Tensor:
    return _tensor(x).reshape(*shape)


def transpose(x: Tensor, dim0: int = -2, dim1: int = -1) -> Tensor:
    return _tensor(x).transpose(dim0, dim1)


def permute(x: Tensor, *axes: Any) -> Tensor:
    return _tensor(x).permute(*axes)


# ------------------------------------------------------------------------- more ops (PyTorch names)
# Issue 13: each calls the Tensor method of the same name (which checks dim= and calls the op).


def std(x: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _tensor(x).std(*args, **kwargs)


def prod(x: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _tensor(x).prod(*args, **kwargs)


def cumsum(x: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _tensor(x).cumsum(*args, **kwargs)


def norm(x: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _tensor(x).norm(*args, **kwargs)


def amax(x: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _tensor(x).amax(*args, **kwargs)


def amin(x: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _tensor(x).amin(*args, **kwargs)


def all(x: Any, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A001 - PyTorch's name
    return _tensor(x).all(*args, **kwargs)


def any(x: Any, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A001 - PyTorch's name
    return _tensor(x).any(*args, **kwargs)


def sort(x: Any, *args: Any, **kwargs: Any) -> Any:
    """(values, indices) sorted along dim (default -1)."""
    return _tensor(x).sort(*args, **kwargs)


def topk(x: Any, *args: Any, **kwargs: Any) -> Any:
    """(values, indices) of the k largest elements along dim (default -1)."""
    return _tensor(x).topk(*args, **kwargs)


def split(x: Any, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    return _tensor(x).split(split_size_or_sections, dim)


def chunk(x: Any, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    return _tensor(x).chunk(chunks, dim)


def unbind(x: Any, dim: int = 0) -> tuple[Tensor, ...]:
    return _tensor(x).unbind(dim)


def gather(x: Any, dim: int, index: Any) -> Tensor:
    return _tensor(x).gather(dim, index)


def scatter_add(x: Any, dim: int, index: Any, src: Any) -> Tensor:
    return _tensor(x).scatter_add(dim, index, src)


def masked_fill(x: Any, mask: Any, value: Any) -> Tensor:
    return _tensor(x).masked_fill(mask, value)


def flip(x: Any, dims: Any) -> Tensor:
    return _tensor(x).flip(dims)


def sign(x: Any) -> Tensor:
    return _tensor(x).sign()


def log1p(x: Any) -> Tensor:
    return _tensor(x).log1p()


def square(x: Any) -> Tensor:
    return _tensor(x).square()


def t(x: Any) -> Tensor:
    return _tensor(x).t()


def tril(x: Any, diagonal: int = 0) -> Tensor:
    return _tensor(x).tril(diagonal)


def triu(x: Any, diagonal: int = 0) -> Tensor:
    return _tensor(x).triu(diagonal)


def mm(x: Any, mat2: Any) -> Tensor:
    return _tensor(x).mm(mat2)


def bmm(x: Any, mat2: Any) -> Tensor:
    return _tensor(x).bmm(mat2)


def mv(x: Any, vec: Any) -> Tensor:
    return _tensor(x).mv(vec)


def allclose(x: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Are all |x - other| <= atol + rtol |other| (a Python bool, no graph)?"""
    a, b = _tensor(x).array, _tensor(other).array
    return bool(backend.get_array_module(a).allclose(a, b, rtol=rtol, atol=atol,
                                                     equal_nan=equal_nan))


def outer(x: Any, vec2: Any) -> Tensor:
    return _tensor(x).outer(vec2)


def det(x: Any) -> Tensor:
    """The determinant of each matrix of a batch: ``dg.det(x)`` is ``x.det()``."""
    return _tensor(x).det()


def inverse(x: Any) -> Tensor:
    """The inverse of each matrix of a batch: ``dg.inverse(x)`` is ``x.inverse()``."""
    return _tensor(x).inverse()


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation: ``dg.einsum('bij,bjk->bik', a, b)`` is a batched matmul. Letters that
    appear in the inputs but not after '->' are summed over; without '->', the output has the
    letters that appear once, in alphabetical order. One node in the graph.

    >>> scores = dg.einsum("bhqd,bhkd->bhqk", q, k)      # attention scores
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must provide at least one operand")
    operands = [_tensor(x) for x in operands]
    if len(operands) == 1:  # 'ij->ji', 'ii->i': a view of the operand, as in PyTorch (when
        return operands[0]._make_view(ops.Einsum, equation=equation)  # nothing is summed)
    return ops.Einsum.apply(*operands, equation=equation)


# ----------------------------------------------------------------------------- the learners' names
# Counted in the learners' material (issue 37, item 3; docs/pytorch_inventory.md): the
# function spellings of Tensor methods, and a few constructors. (``torch.trace(A)`` is
# ``dg.trace(A)``, which is dyngraph's tracer too: NOTE [dg.trace is also torch.trace].)

pi = math.pi


def add(x: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    return _tensor(x).add(other, alpha=alpha)


def sub(x: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    return _tensor(x).sub(other, alpha=alpha)


def mul(x: Any, other: Any) -> Tensor:
    return _tensor(x) * other


def div(x: Any, other: Any) -> Tensor:
    return _tensor(x) / other


def neg(x: Any) -> Tensor:
    return -_tensor(x)


def pow(x: Any, exponent: Any) -> Tensor:  # noqa: A001 - PyTorch's name
    return _tensor(x) ** exponent


def flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return _tensor(x).flatten(start_dim, end_dim)


def unsqueeze(x: Any, dim: int) -> Tensor:
    return _tensor(x).unsqueeze(dim)


def squeeze(x: Any, dim: Any = None) -> Tensor:
    return _tensor(x).squeeze(dim)


def floor(x: Any) -> Tensor:
    return _tensor(x).floor()


def ceil(x: Any) -> Tensor:
    return _tensor(x).ceil()


def round(x: Any) -> Tensor:  # noqa: A001 - PyTorch's name
    return _tensor(x).round()


def acos(x: Any) -> Tensor:
    return _tensor(x).acos()


def asin(x: Any) -> Tensor:
    return _tensor(x).asin()


def atan(x: Any) -> Tensor:
    return _tensor(x).atan()


def atan2(input: Any, other: Any) -> Tensor:  # noqa: A002
    """The angle of the point (other, input), in (-pi, pi]."""
    if not isinstance(input, Tensor):
        raise TypeError(f"atan2(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.atan2(other)


def sinh(x: Any) -> Tensor:
    return _tensor(x).sinh()


def cosh(x: Any) -> Tensor:
    return _tensor(x).cosh()


def expm1(x: Any) -> Tensor:
    return _tensor(x).expm1()


def diag(x: Any, diagonal: int = 0) -> Tensor:
    return _tensor(x).diag(diagonal)


def nonzero(x: Any, *, as_tuple: bool = False) -> Any:
    return _tensor(x).nonzero(as_tuple=as_tuple)


def unique(x: Any, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    return _tensor(x).unique(sorted, return_inverse, return_counts, dim)


def cumprod(x: Any, dim: int, *, dtype: Any = None) -> Tensor:
    return _tensor(x).cumprod(dim, dtype=dtype)


def numel(x: Tensor) -> int:
    return x.numel()


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a tensor: a tensor of that dtype comes back as it is (no copy)."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == np.dtype(dtype)):
        return data
    return factories.tensor(data, dtype=dtype, device=device)


def empty(*size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` whose values are not to be read before they are written. PyTorch
    leaves the memory as it was; dyngraph gives zeros, so a program that reads it anyway
    gets the same numbers every run."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return factories.zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_like(x: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    return factories.zeros(*x.shape, dtype=dtype or x.dtype, device=device or x.device,
                           requires_grad=requires_grad)


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids: ``indexing="ij"`` (PyTorch's default) or ``"xy"``; each grid is
    its vector expanded, so gradients flow back to the vectors."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f'meshgrid: indexing is "ij" or "xy", got {indexing!r}')
    vectors = [_tensor(t) for t in tensors]
    sizes = [v.shape[0] for v in vectors]
    if indexing == "xy" and len(vectors) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grids = []
    for i, v in enumerate(vectors):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(vectors) >= 2 else i
        shape = [1] * len(vectors)
        shape[axis] = v.shape[0]
        grids.append(v.reshape(*shape).expand(*sizes))
    return tuple(grids)


# ---------------------------------------------- the fresh programs' names (issue 37, done-when 4)


def isnan(x: Any) -> Tensor:
    return _tensor(x).isnan()


def isinf(x: Any) -> Tensor:
    return _tensor(x).isinf()


def isfinite(x: Any) -> Tensor:
    return _tensor(x).isfinite()


def argsort(x: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    return _tensor(x).argsort(dim, descending)


def index_select(x: Any, dim: int, index: Any) -> Tensor:
    return _tensor(x).index_select(dim, index)


def masked_select(x: Any, mask: Any) -> Tensor:
    return _tensor(x).masked_select(mask)


def clip(x: Any, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """``clamp`` by its numpy name."""
    return _tensor(x).clamp(min, max)


def var(x: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _tensor(x).var(*args, **kwargs)


def dist(x: Any, other: Any, p: float = 2) -> Tensor:
    return _tensor(x).dist(other, p)


def logical_not(x: Any) -> Tensor:
    return _tensor(x).logical_not()


def logical_and(x: Any, other: Any) -> Tensor:
    return _tensor(x).logical_and(other)


def logical_or(x: Any, other: Any) -> Tensor:
    return _tensor(x).logical_or(other)


def reciprocal(x: Any) -> Tensor:
    return _tensor(x).reciprocal()


def rsqrt(x: Any) -> Tensor:
    return _tensor(x).rsqrt()


def count_nonzero(x: Any, dim: Any = None) -> Tensor:
    return _tensor(x).count_nonzero(dim)


def roll(x: Any, shifts: Any, dims: Any = None) -> Tensor:
    return _tensor(x).roll(shifts, dims)


def hstack(tensors: Any) -> Tensor:
    """Joined along dim 1 (dim 0 for 1-D tensors)."""
    tensors = [_tensor(t) for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors: Any) -> Tensor:
    """Stacked as rows: joined along dim 0, 1-D tensors first made rows (1, n)."""
    return cat([t.reshape(1, -1) if t.ndim == 1 else t for t in map(_tensor, tensors)], 0)


def equal(x: Any, other: Any) -> bool:
    """Same shape and the same values."""
    x, other = _tensor(x), _tensor(other)
    return x.shape == other.shape and bool((x == other).all())


def isclose(x: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|x - other| <= atol + rtol * |other|, entry by entry (bool, outside the graph)."""
    x, other = _tensor(x), _tensor(other)
    xp = backend.get_array_module(x.array)
    return Tensor(xp.isclose(x.array, other.array, rtol=rtol, atol=atol, equal_nan=equal_nan))


def get_default_dtype() -> Any:
    """The dtype of tensors made from Python floats: float32, as PyTorch's default."""
    return factories.DEFAULT_FLOAT


def erf(x: Any) -> Tensor:
    return _tensor(x).erf()


def bernoulli(input: Any, *, generator: Any = None) -> Tensor:
    """1 with probability ``input`` (entry by entry), else 0, in input's dtype: dyngraph's
    own draws (NOTE [samples are dyngraph's] in distributions.py)."""
    p = _tensor(input)
    if ((p.detach() < 0) | (p.detach() > 1)).any():
        raise RuntimeError("bernoulli: every probability must be in [0, 1]")
    return (factories.rand(*p.shape, generator=generator) < p.detach()).to(p.dtype)


def compile(model: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 (PyTorch's name)
    """``torch.compile(model)`` gives the model back as it is: dyngraph runs (and records)
    every op as written, which is what it is for; nanoGPT's ``model = torch.compile(model)``
    runs unchanged."""
    return model


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Nothing to switch: dyngraph's kernels (numpy's, CuPy's) give the same numbers every run."""

