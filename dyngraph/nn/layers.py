"""Layers without memory: Linear, Bilinear, Embedding, Dropout and the activation functions as
modules.

Weights are laid out as in PyTorch (Linear's weight is (out_features, in_features)), so a
PyTorch model's ``state_dict()`` loads into the dyngraph one and the other way round. Initial
values follow PyTorch's defaults and come from dyngraph's seeded generator (``dg.manual_seed``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import factories
from ..grad_mode import no_grad
from ..tensor import DEFAULT_FLOAT, Tensor, resolve_dtype
from . import functional as F
from .module import Module, Parameter


def uniform_parameter(shape: tuple[int, ...], bound: float, device: Any = None,
                      dtype: Any = None) -> Parameter:
    """A Parameter of samples from U(-bound, bound), drawn from dyngraph's generator."""
    values = factories.generator().uniform(-bound, bound, size=shape)
    return _parameter(values, device, dtype)


def normal_parameter(shape: tuple[int, ...], device: Any = None, dtype: Any = None) -> Parameter:
    """A Parameter of samples from N(0, 1), drawn from dyngraph's generator."""
    return _parameter(factories.generator().standard_normal(shape), device, dtype)


def _parameter(values: np.ndarray, device: Any, dtype: Any) -> Parameter:
    dtype = resolve_dtype(DEFAULT_FLOAT if dtype is None else dtype)
    return Parameter(factories.tensor(values, dtype=dtype, device=device))


def affine(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """x @ weight.T + bias: the affine map of every layer here, F.linear (which checks that
    x has the weights' dtype, as PyTorch does)."""
    return F.linear(x, weight, bias)


class Linear(Module):
    """y = x @ W.T + b, with W of shape (out_features, in_features) and b of shape
    (out_features,).

    Initialised like PyTorch: W and b from U(-k, k) with k = 1 / sqrt(in_features).

    >>> fc = dg.nn.Linear(2, 3)
    >>> fc(dg.randn(5, 2)).shape
    (5, 3)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        k = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = uniform_parameter((out_features, in_features), k, device, dtype)
        self.bias = uniform_parameter((out_features,), k, device, dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return affine(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y = x1^T A_o x2 + b_o for each output feature o (``F.bilinear``): weight (out_features,
    in1_features, in2_features), bias (out_features,).

    Initialised like PyTorch: weight and bias from U(-k, k) with k = 1 / sqrt(in1_features).

    >>> dg.nn.Bilinear(2, 3, 4)(dg.randn(5, 2), dg.randn(5, 3)).shape
    (5, 4)
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        k = 1.0 / math.sqrt(in1_features) if in1_features > 0 else 0.0
        self.weight = uniform_parameter((out_features, in1_features, in2_features), k, device,
                                        dtype)
        self.bias = uniform_parameter((out_features,), k, device, dtype) if bias else None

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Embedding(Module):
    """A lookup table: ``embedding(i) = W[i]``, one row of W (num_embeddings, embedding_dim)
    per integer index. The gradient adds up in the rows that were looked up.

    Initialised like PyTorch: W from N(0, 1), and the row ``padding_idx`` (the padding token's,
    if given) zeros; that row gets no gradient, so it stays as it is while the others learn.

    >>> emb = dg.nn.Embedding(10, 4)
    >>> emb([1, 2, 1]).shape
    (3, 4)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 *, device: Any = None, dtype: Any = None, _weight: Tensor | None = None,
                 _freeze: bool = False) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = (None if padding_idx is None
                            else F.padding_index(padding_idx, num_embeddings))
        if _weight is not None:
            self.weight = Parameter(_weight, requires_grad=not _freeze)
            return
        self.weight = normal_parameter((num_embeddings, embedding_dim), device, dtype)
        if self.padding_idx is not None:  # PyTorch starts the padding row at zeros
            with no_grad():
                self.weight[self.padding_idx].fill_(0.0)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None) -> Embedding:
        """An Embedding holding ``embeddings`` (d2l's GloVe vectors), frozen unless
        ``freeze=False``."""
        rows, dim = embeddings.shape
        return cls(rows, dim, padding_idx=padding_idx, _weight=embeddings, _freeze=freeze)

    def forward(self, indices: Any) -> Tensor:
        return F.embedding(indices, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        padding = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{padding}"


class EmbeddingBag(Module):
    """An :class:`Embedding` that reduces each bag of indices to one row: the sum, mean or max
    of the rows it looks up (``F.embedding_bag``). A 2-D input is one bag per row; a 1-D input
    is cut into bags at ``offsets``. Initialised like PyTorch: W from N(0, 1).

    >>> bag = dg.nn.EmbeddingBag(10, 4, mode="sum")
    >>> bag(dg.tensor([1, 2, 4, 5, 4]), dg.tensor([0, 2])).shape      # bags [1, 2], [4, 5, 4]
    (2, 4)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, mode: str = "mean",
                 include_last_offset: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.mode = mode
        self.include_last_offset = include_last_offset
        self.weight = normal_parameter((num_embeddings, embedding_dim), device, dtype)

    def forward(self, input: Any, offsets: Any = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.mode, per_sample_weights,
                               self.include_last_offset)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"


class Dropout(Module):
    """In training mode, zero each element with probability p and scale the survivors by
    1 / (1 - p), so the expected value is unchanged; in eval mode, the identity.

    >>> drop = dg.nn.Dropout(0.5)
    >>> drop.eval()(dg.ones(3))
    tensor([1., 1., 1.])
    """

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability must be between 0 and 1, got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class ReLU(Module):
    """relu(x) = max(x, 0), elementwise (``inplace=True``: into x, NOTE [inplace
    activations] in functional.py)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    """sigmoid(x) = 1 / (1 + exp(-x)), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class GELU(Module):
    """gelu(x) = x * Phi(x), Phi the standard normal CDF (``approximate="tanh"``: the tanh
    approximation), elementwise."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class LeakyReLU(Module):
    """leaky_relu(x) = x if x > 0 else negative_slope * x, elementwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class Softmax(Module):
    """softmax(x) = exp(x) / sum(exp(x)) along ``dim``.

    >>> dg.nn.Softmax(dim=1)(dg.zeros(1, 4))
    tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, _softmax_dim(self.dim, x))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log(softmax(x)) along ``dim``, computed safely as x - logsumexp(x)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, _softmax_dim(self.dim, x))


def _softmax_dim(dim: int | None, x: Tensor) -> int:
    """PyTorch's legacy choice when no dim is given: 0 for 0-, 1- and 3-D inputs, else 1."""
    if dim is not None:
        return dim
    return 0 if x.ndim in (0, 1, 3) else 1


class Identity(Module):
    """Returns its input unchanged (a placeholder, e.g. for a removed layer). Any
    constructor arguments are ignored, as in PyTorch."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        return x


class Flatten(Module):
    """Flattens dimensions ``start_dim`` to ``end_dim`` into one: (N, C, H, W) -> (N, C*H*W)
    with the defaults, which keep the batch dimension.

    >>> dg.nn.Flatten()(dg.zeros(2, 3, 4, 5)).shape
    (2, 60)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
