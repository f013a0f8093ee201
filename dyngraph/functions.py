"""Top-level functions: ``dg.exp(x)``, ``dg.cat([a, b])``, ``dg.where(c, x, y)``, ...

Each one calls the op (the same as the Tensor method), accepting numbers and arrays too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import ops
from .tensor import Tensor


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


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
    return ops.Clamp.apply(_tensor(x), low=min, high=max)


def maximum(x: Any, y: Any) -> Tensor:
    return ops.Maximum.apply(x, y)


def minimum(x: Any, y: Any) -> Tensor:
    return ops.Minimum.apply(x, y)


def where(condition: Any, x: Any, y: Any) -> Tensor:
    """x where condition is true, else y (no gradient flows to the condition)."""
    if isinstance(condition, Tensor):
        condition = condition.array
    return ops.Where.apply(condition, x, y)


def matmul(x: Any, y: Any) -> Tensor:
    return ops.MatMul.apply(x, y)


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A001
    return ops.Sum.apply(_tensor(x), axis=axis, keepdims=keepdims)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return ops.Mean.apply(_tensor(x), axis=axis, keepdims=keepdims)


def softmax(x: Any, axis: int = -1) -> Tensor:
    return ops.Softmax.apply(_tensor(x), axis=axis)


def log_softmax(x: Any, axis: int = -1) -> Tensor:
    return ops.LogSoftmax.apply(_tensor(x), axis=axis)


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return ops.LogSumExp.apply(_tensor(x), axis=axis, keepdims=keepdims)


def cat(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors along an existing axis."""
    if not tensors:
        raise ValueError("cat() needs at least one tensor")
    return ops.Cat.apply(*[_tensor(t) for t in tensors], axis=axis)


def stack(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors of equal shape along a new axis."""
    if not tensors:
        raise ValueError("stack() needs at least one tensor")
    return ops.Stack.apply(*[_tensor(t) for t in tensors], axis=axis)


def reshape(x: Tensor, *shape: Any) -> Tensor:
    return _tensor(x).reshape(*shape)


def transpose(x: Tensor, dim0: int = -2, dim1: int = -1) -> Tensor:
    return _tensor(x).transpose(dim0, dim1)


def permute(x: Tensor, *axes: Any) -> Tensor:
    return _tensor(x).permute(*axes)
