"""The array-module look-alike that backward formulas get when ``create_graph=True``.

Backward formulas are written against ``ctx.xp``: normally numpy or cupy, so backward runs on
raw arrays at full speed. For higher-order gradients the engine hands them this module instead
and Tensors instead of arrays; every function here is then a recorded op, so the backward pass
itself becomes a graph that can be differentiated again (PyTorch does the same by writing its
derivative formulas with differentiable tensor ops).

NOTE [one formula, two array modules] Each function here has numpy's name and arguments, so an
op's backward is written once, against ``ctx.xp``, and that one formula is both the fast
first-order backward (numpy) and the recorded one (this module). Piecewise constants (``sign``)
and index bookkeeping (an ``arange``, an identity matrix) are constants of the graph: their
derivative is zero, so they are made as arrays that need no gradient. An op whose backward
needs something numpy spells differently (writing into a fresh array of zeros) dispatches on
``isinstance(values, Tensor)`` in one helper, next to the op (``scatter_into_zeros`` in
shape.py, ``_add_patches`` in conv.py, ``erf`` in pointwise.py).
"""

from __future__ import annotations

from .. import backend
from ..tensor import Tensor
from . import elementwise
from .arc_and_round import Cosh, Sinh
from .elementwise import Abs, Cos, Exp, Log, Maximum, Sin, Tanh, Where
from .index import Flip, Tril, Triu
from .linalg import Einsum
from .pointwise import Log1p
from .shape import Expand, Permute
from .stats import CumSum


def exp(x):
    return Exp.apply(x)


def log(x):
    return Log.apply(x)


def log1p(x):
    return Log1p.apply(x)


def sin(x):
    return Sin.apply(x)


def cos(x):
    return Cos.apply(x)


def tanh(x):
    return Tanh.apply(x)


def sinh(x):
    return Sinh.apply(x)


def cosh(x):
    return Cosh.apply(x)


def abs(x):  # noqa: A001 - numpy's name
    return Abs.apply(x)


def maximum(x, y):
    return Maximum.apply(x, y)


def logaddexp(x, y):
    """log(exp(x) + exp(y)), shifted by the larger of the two so that exp cannot overflow. The
    shift is a constant: it cancels in the value, so its derivative is not needed."""
    a, b = (v.array if isinstance(v, Tensor) else v for v in (x, y))
    xp = backend.get_array_module(b if isinstance(a, (int, float)) else a)
    shift = xp.maximum(a, b)
    return Log.apply(Exp.apply(x - shift) + Exp.apply(y - shift)) + shift


def sign(x):
    """Piecewise constant: its derivative is zero, so it is a constant in the graph."""
    data = x.array if isinstance(x, Tensor) else x
    return Tensor(elementwise.sign(backend.get_array_module(data), data))


def where(cond, x, y):
    return Where.apply(cond.array if isinstance(cond, Tensor) else cond, x, y)


def broadcast_to(x, shape):
    return Expand.apply(x, shape=tuple(shape))


def transpose(x, axes):
    return Permute.apply(x, axes=tuple(axes))


def moveaxis(x, source, destination):
    axes = [axis for axis in range(x.ndim) if axis != source % x.ndim]
    axes.insert(destination % x.ndim, source % x.ndim)
    return Permute.apply(x, axes=tuple(axes))


def flip(x, axis):
    return Flip.apply(x, dims=axis)


def cumsum(x, axis):
    return CumSum.apply(x, dim=axis)


def tril(x, k=0):
    return Tril.apply(x, diagonal=k)


def triu(x, k=0):
    return Triu.apply(x, diagonal=k)


def einsum(equation, *operands):
    return Einsum.apply(*operands, equation=equation)
