"""The array-module look-alike that backward formulas get when ``create_graph=True``.

Backward formulas are written against ``ctx.xp``: normally numpy or cupy, so backward runs on
raw arrays at full speed. For higher-order gradients the engine hands them this module instead
and Tensors instead of arrays; every function here is then a recorded op, so the backward pass
itself becomes a graph that can be differentiated again (PyTorch does the same by writing its
derivative formulas with differentiable tensor ops).
"""

from __future__ import annotations

from .. import backend
from ..tensor import Tensor
from .elementwise import Cos, Exp, Log, Sin, Where
from .shape import Expand, Permute


def exp(x):
    return Exp.apply(x)


def log(x):
    return Log.apply(x)


def sin(x):
    return Sin.apply(x)


def cos(x):
    return Cos.apply(x)


def sign(x):
    """Piecewise constant: its derivative is zero, so it is a constant in the graph."""
    data = x.array if isinstance(x, Tensor) else x
    return Tensor(backend.get_array_module(data).sign(data))


def where(cond, x, y):
    return Where.apply(cond.array if isinstance(cond, Tensor) else cond, x, y)


def broadcast_to(x, shape):
    return Expand.apply(x, shape=tuple(shape))


def transpose(x, axes):
    return Permute.apply(x, axes=tuple(axes))
