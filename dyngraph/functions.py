"""Top-level functions: ``dg.exp(x)``, ``dg.cat([a, b])``, ``dg.where(c, x, y)``, ...

Each one calls the op (the same as the Tensor method), accepting numbers and arrays too.
"""

from __future__ import annotations

import builtins
import itertools
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


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def cdist(x1: Any, x2: Any, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M):
    (..., P, R), out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p, the batch dims
    broadcast. Written as the norm of every difference (P R M numbers, fine at a learner's
    sizes; ``compute_mode`` changes nothing here), so its gradient at a zero distance is 0 as
    PyTorch's, and it is twice differentiable.

    >>> dg.cdist(dg.tensor([[0., 0.], [3., 4.]]), dg.tensor([[0., 0.]])).tolist()
    [[0.0], [5.0]]
    """
    x1, x2 = _tensor(x1), _tensor(x2)
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
        if x.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{x.dtype} (x.float())")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"cdist: expected both inputs of one dtype, got {x1.dtype} and "
                           f"{x2.dtype} (convert one, e.g. x2.to(x1.dtype))")
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return p_distance(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, "cdist")


def p_distance(differences: Tensor, p: float, fn: str) -> Tensor:
    """||d||_p over the last dim, as cdist and pdist measure it: p = 0 counts the coordinates
    that differ (a count: its gradient is 0, as PyTorch's), p = inf is the largest."""
    if p < 0:
        raise RuntimeError(f"{fn} only supports non-negative p values")
    if p == 0:
        return ((differences != 0).type_as(differences) + differences * 0).sum(-1)
    return differences.norm(p, -1)


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



# ------------------------------------------------- more of PyTorch's math (issue 37, the sweep)
# The function spellings of the Tensor methods of the same name (tensor.py, "issue 37: more
# math"), each composed from differentiable ops there.


def lerp(input: Any, end: Any, weight: Any) -> Tensor:
    return _tensor(input).lerp(end, weight)


def addmm(input: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _tensor(input).addmm(mat1, mat2, beta=beta, alpha=alpha)


def baddbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _tensor(input).baddbmm(batch1, batch2, beta=beta, alpha=alpha)


def addcmul(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    return _tensor(input).addcmul(tensor1, tensor2, value=value)


def addcdiv(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    return _tensor(input).addcdiv(tensor1, tensor2, value=value)


def hypot(input: Any, other: Any) -> Tensor:
    return _tensor(input).hypot(other)


def logaddexp(input: Any, other: Any) -> Tensor:
    return _tensor(input).logaddexp(other)


def xlogy(input: Any, other: Any) -> Tensor:
    return _tensor(input).xlogy(other)


def sinc(input: Any) -> Tensor:
    return _tensor(input).sinc()


def frac(input: Any) -> Tensor:
    return _tensor(input).frac()


def trunc(input: Any) -> Tensor:
    return _tensor(input).trunc()


def fmod(input: Any, other: Any) -> Tensor:
    return _tensor(input).fmod(other)


def copysign(input: Any, other: Any) -> Tensor:
    return _tensor(input).copysign(other)


def nan_to_num(input: Any, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    return _tensor(input).nan_to_num(nan, posinf, neginf)


def nansum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    return _tensor(input).nansum(dim, keepdim, dtype=dtype)


def nanmean(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    return _tensor(input).nanmean(dim, keepdim, dtype=dtype)


def median(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return _tensor(input).median(dim, keepdim)


def mode(input: Any, dim: int = -1, keepdim: bool = False) -> Any:
    return _tensor(input).mode(dim, keepdim)


def kthvalue(input: Any, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    return _tensor(input).kthvalue(k, dim, keepdim)


def quantile(input: Any, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    return _tensor(input).quantile(q, dim, keepdim, interpolation=interpolation)


def msort(input: Any) -> Tensor:
    return _tensor(input).msort()


def index_add(input: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
    return _tensor(input).index_add(dim, index, source, alpha=alpha)


def index_copy(input: Any, dim: int, index: Any, source: Any) -> Tensor:
    return _tensor(input).index_copy(dim, index, source)


def index_fill(input: Any, dim: int, index: Any, value: Any) -> Tensor:
    return _tensor(input).index_fill(dim, index, value)


def scatter_reduce(input: Any, dim: int, index: Any, src: Any, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    return _tensor(input).scatter_reduce(dim, index, src, reduce, include_self=include_self)


def bincount(input: Any, weights: Any = None, minlength: int = 0) -> Tensor:
    return _tensor(input).bincount(weights, minlength)


def histc(input: Any, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    return _tensor(input).histc(bins, min, max)


def heaviside(input: Any, values: Any) -> Tensor:
    return _tensor(input).heaviside(values)


def gcd(input: Any, other: Any) -> Tensor:
    return _tensor(input).gcd(other)


def lcm(input: Any, other: Any) -> Tensor:
    return _tensor(input).lcm(other)


def unique_consecutive(input: Any, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    return _tensor(input).unique_consecutive(return_inverse, return_counts, dim)


def kron(input: Any, other: Any) -> Tensor:
    return _tensor(input).kron(_tensor(other))


def rot90(input: Any, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    return _tensor(input).rot90(k, dims)


def cummax(input: Any, dim: int) -> Any:
    return _tensor(input).cummax(dim)


def cummin(input: Any, dim: int) -> Any:
    return _tensor(input).cummin(dim)


def logcumsumexp(input: Any, dim: int) -> Tensor:
    return _tensor(input).logcumsumexp(dim)


def take_along_dim(input: Any, indices: Any, dim: int | None = None) -> Tensor:
    return _tensor(input).take_along_dim(_tensor(indices), dim)


# Functions PyTorch has no Tensor method for.


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """Whether each of ``elements`` is among ``test_elements`` (either may be one number):
    a boolean tensor of elements' shape (``invert``: is not), no gradient."""
    found = np.isin(_host_values(elements), _host_values(test_elements),
                    assume_unique=assume_unique, invert=invert)
    return Tensor(np.asarray(found))


def searchsorted(sorted_sequence: Any, values: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Any = None) -> Tensor:
    """Where each of ``values`` would go in ``sorted_sequence`` to keep it sorted: the first
    such place (``right=True`` or ``side="right"``: the last). A sequence of several dims is
    one sorted row per leading index, matched with the values' rows. int64 (``out_int32``:
    int32), no gradient."""
    sequence, wanted = _host_values(sorted_sequence), _host_values(values)
    if sorter is not None:
        sequence = np.take_along_axis(sequence, _host_values(sorter), -1)
    side = side or ("right" if right else "left")
    if sequence.ndim > 1 and sequence.shape[:-1] != wanted.shape[:-1]:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(sequence.shape)} and input value tensor "
            f"{list(wanted.shape)}")
    if sequence.ndim <= 1:
        places = np.searchsorted(sequence, wanted, side=side)
    else:
        rows, queries = sequence.reshape(-1, sequence.shape[-1]), \
            wanted.reshape(-1, wanted.shape[-1])
        places = np.stack([np.searchsorted(r, q, side=side) for r, q in zip(rows, queries)])
        places = places.reshape(wanted.shape)
    return Tensor(np.asarray(places, dtype=np.int32 if out_int32 else np.int64))


def bucketize(input: Any, boundaries: Any, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The bucket of each entry among the sorted 1-D ``boundaries``: i where
    boundaries[i-1] < x <= boundaries[i] (``right=True``: boundaries[i-1] <= x <
    boundaries[i]). int64 (``out_int32``: int32), no gradient."""
    if _tensor(boundaries).ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got "
                           f"dim({_tensor(boundaries).ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (2, N) coordinates of the lower triangle of a row x col matrix (entries on and
    below the ``offset``-th diagonal), row by row."""
    return _triangle_indices(np.tril_indices, row, col, offset, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (2, N) coordinates of the upper triangle (on and above the ``offset``-th
    diagonal), row by row."""
    return _triangle_indices(np.triu_indices, row, col, offset, dtype, device)


def cartesian_prod(*tensors: Any) -> Tensor:
    """Every combination of one entry from each 1-D tensor, as rows (itertools.product's
    order): the meshgrid's grids flattened and stacked, so gradients flow back."""
    vectors = [_tensor(t) for t in tensors]
    if len(vectors) == 1:
        return vectors[0]
    if len({v.dtype for v in vectors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype (convert them "
                           "to one)")
    return stack([grid.reshape(-1) for grid in meshgrid(*vectors, indexing="ij")], dim=1)


def combinations(input: Any, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Every choice of ``r`` entries of a 1-D tensor in order, as rows (itertools'
    combinations, or combinations_with_replacement): entries picked by indexing, so
    gradients flow back to them."""
    x = _tensor(input)
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if r == 0:
        return factories.zeros(0, dtype=x.dtype)
    choose = itertools.combinations_with_replacement if with_replacement \
        else itertools.combinations
    rows = np.array(list(choose(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return x[Tensor(rows)]


def tensordot(a: Any, b: Any, dims: Any = 2) -> Tensor:
    """The sum of products over pairs of dims: ``dims`` = n pairs a's last n with b's first
    n; ``([1, 2], [1, 0])`` names them. The contracted dims moved together and a matmul of
    the reshaped operands, so its gradients are the matmul's."""
    a, b = _tensor(a), _tensor(b)
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [normalize_dim(d, a.ndim, fn="tensordot") for d in dims_a]
    dims_b = [normalize_dim(d, b.ndim, fn="tensordot") for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} "
                               f"in dim {db}")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    inner = math.prod(a.shape[d] for d in dims_a)
    left = a.permute(*free_a, *dims_a).reshape(-1, inner)
    right = b.permute(*dims_b, *free_b).reshape(inner, -1)
    return (left @ right).reshape(*[a.shape[d] for d in free_a], *[b.shape[d] for d in free_b])


def block_diag(*tensors: Any) -> Tensor:
    """The tensors as blocks on the diagonal of one matrix, zeros elsewhere (a number is a
    1x1 block, a vector one row): each block padded with zeros to the full width, the rows
    joined, so gradients flow back to the blocks."""
    blocks = []
    for i, t in enumerate(map(_tensor, tensors)):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    dtype = np.result_type(*[b.dtype for b in blocks]) if blocks else factories.DEFAULT_FLOAT
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, start = [], 0
    for b in blocks:
        n, m = b.shape
        rows.append(cat([factories.zeros(n, start, dtype=dtype), b.to(dtype),
                         factories.zeros(n, width - start - m, dtype=dtype)], dim=1))
        start += m
    return cat(rows, dim=0) if rows else factories.zeros(1, 0, dtype=dtype)


def trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoid rule along ``dim``: the sum of (y[i] + y[i+1]) / 2 times the spacing
    (x[i+1] - x[i], or ``dx``, default 1). Slices and sums, so gradients flow to y and x."""
    y = _tensor(y)
    if x is not None and dx is not None:
        raise TypeError("trapezoid(): give the sample points x or the spacing dx, not both")
    dim = normalize_dim(dim, y.ndim, fn="trapezoid")
    n = y.shape[dim]
    if n <= 1:
        return (y.sum(dim) * 0).to(y.dtype if y.dtype.kind == "f" else factories.DEFAULT_FLOAT)
    heights = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) / 2
    if x is None:
        return heights.sum(dim) * (1 if dx is None else dx)
    x = _tensor(x)
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        x = x.reshape(*[n if d == dim else 1 for d in range(y.ndim)])
        along = dim
    else:
        along = normalize_dim(dim, x.ndim, fn="trapezoid")
    widths = x.narrow(along, 1, n - 1) - x.narrow(along, 0, n - 1)
    return (heights * widths).sum(dim)


def trapz(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """``trapezoid`` by its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def _host_values(value: Any) -> np.ndarray:
    """A tensor's, an array's or a number's values as a numpy array."""
    data = value.array if isinstance(value, Tensor) else value
    return backend.to_numpy(data) if backend.is_array(data) else np.asarray(data)


def _triangle_indices(triangle: Any, row: int, col: int, offset: int, dtype: Any,
                      device: Any) -> Tensor:
    for name, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{name} must be non-negative, got{n}")
    rows, cols = triangle(row, offset, col)
    return factories.tensor(np.stack([rows, cols]).astype(np.int64),
                            dtype=dtype or np.int64, device=device)
