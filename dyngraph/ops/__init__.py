"""Every op, forward and backward side by side, written once against the array module ``xp``.

- ``elementwise``: + - * / ** neg abs exp log log10 log2 sqrt sin cos tanh sigmoid relu clamp
  hardtanh maximum minimum where
- ``reduce``: sum mean max min var std logsumexp softmax log_softmax
- ``shape``: reshape permute expand clone cast to-device index set-item cat stack
- ``dims``: not an op: the one helper that checks dimension arguments (PyTorch's errors)
- ``matmul``: @ (1-D, 2-D, batched)
- ``nn``: fused losses (cross-entropy, nll, binary cross-entropy with and without logits)
- ``pointwise``: sign log1p square and the activations leaky_relu gelu softplus logsigmoid
- ``stats``: prod cumsum norm sort topk
- ``index``: gather scatter_add masked_fill flip repeat tril triu
- ``linalg``: einsum outer det inverse
- ``conv``: convolution (1, 2 or 3 spatial dims) and max pooling
"""

from .arc_and_round import Logit
from .conv import Conv, MaxPool
from .elementwise import (
    Abs,
    Add,
    Clamp,
    ClampByTensors,
    Cos,
    Div,
    Exp,
    FloorDivide,
    Hardtanh,
    Log,
    Log2,
    Log10,
    Maximum,
    Minimum,
    Mul,
    Neg,
    Pow,
    Relu,
    RemainderOfNumber,
    Sigmoid,
    Sin,
    Sqrt,
    Sub,
    Tanh,
    Where,
)
from .index import Flip, Gather, MaskedFill, Repeat, ScatterAdd, Tril, Triu
from .linalg import Det, Einsum, Inverse, Outer
from .matmul import MatMul
from .nn import BinaryCrossEntropy, BinaryCrossEntropyWithLogits, CrossEntropy, NLLLoss
from .pointwise import Gelu, LeakyRelu, Log1p, LogSigmoid, Sign, Softplus, Square
from .reduce import LogSoftmax, LogSumExp, Max, Mean, Min, Softmax, Std, Sum, Var
from .shape import (
    Cast,
    Cat,
    Clone,
    CopySlices,
    Expand,
    Index,
    IndexAdd,
    Permute,
    Reshape,
    SetItem,
    Stack,
    ToDevice,
)
from .stats import CumSum, Norm, Prod, Sort, TopK

__all__ = [
    "Abs", "Add", "Cast", "Cat", "Clamp", "CopySlices", "Cos", "CrossEntropy", "Div", "Exp",
    "Expand", "Index",
    "IndexAdd", "Log", "LogSoftmax", "LogSumExp", "MatMul", "Max", "Maximum", "Mean", "Min",
    "Minimum", "Mul", "Neg", "Permute", "Pow", "Relu", "Reshape", "SetItem", "Sigmoid", "Sin",
    "Softmax", "Sqrt", "Stack", "Std", "Sub", "Sum", "Tanh", "ToDevice", "Var", "Where",
    # issue 13: more ops with PyTorch's names
    "BinaryCrossEntropy", "BinaryCrossEntropyWithLogits", "Conv", "CumSum", "Einsum", "Flip",
    "Gather", "Gelu", "LeakyRelu", "Log1p", "LogSigmoid", "MaskedFill", "MaxPool", "NLLLoss",
    "Norm", "Outer", "Prod", "Repeat", "ScatterAdd", "Sign", "Softplus", "Sort", "Square",
    "TopK", "Tril", "Triu",
    "Clone", "Log10", "Log2",  # issue 13: PyTorch's spellings
    "Det", "Inverse",  # issue 37: the inventory's last names
    # issue 37: PyTorch's gradients at the kinks and at NaN, and where it has none
    "ClampByTensors", "FloorDivide", "Hardtanh", "Logit", "RemainderOfNumber",
]
