"""Every op, forward and backward side by side, written once against the array module ``xp``.

- ``elementwise``: + - * / ** neg abs exp log sqrt sin cos tanh sigmoid relu clamp maximum
  minimum where
- ``reduce``: sum mean max min var logsumexp softmax log_softmax
- ``shape``: reshape permute expand cast to-device index set-item cat stack
- ``matmul``: @ (1-D, 2-D, batched)
- ``nn``: fused cross-entropy
"""

from .elementwise import (
    Abs,
    Add,
    Clamp,
    Cos,
    Div,
    Exp,
    Log,
    Maximum,
    Minimum,
    Mul,
    Neg,
    Pow,
    Relu,
    Sigmoid,
    Sin,
    Sqrt,
    Sub,
    Tanh,
    Where,
)
from .matmul import MatMul
from .nn import CrossEntropy
from .reduce import LogSoftmax, LogSumExp, Max, Mean, Min, Softmax, Sum, Var
from .shape import Cast, Cat, Expand, Index, IndexAdd, Permute, Reshape, SetItem, Stack, ToDevice

__all__ = [
    "Abs", "Add", "Cast", "Cat", "Clamp", "Cos", "CrossEntropy", "Div", "Exp", "Expand", "Index",
    "IndexAdd", "Log", "LogSoftmax", "LogSumExp", "MatMul", "Max", "Maximum", "Mean", "Min",
    "Minimum", "Mul", "Neg", "Permute", "Pow", "Relu", "Reshape", "SetItem", "Sigmoid", "Sin",
    "Softmax", "Sqrt", "Stack", "Sub", "Sum", "Tanh", "ToDevice", "Var", "Where",
]
