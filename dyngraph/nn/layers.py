"""Layers without memory: Linear, Embedding, Dropout and the activation functions as modules.

Weights are laid out as in PyTorch (Linear's weight is (out_features, in_features)), so a
PyTorch model's ``state_dict()`` loads into the dyngraph one and the other way round. Initial
values follow PyTorch's defaults and come from dyngraph's seeded generator (``dg.manual_seed``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import factories
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
    """x @ weight.T + bias: the affine map of every layer here (PyTorch's F.linear)."""
    out = x @ weight.T
    return out if bias is None else out + bias


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


class Embedding(Module):
    """A lookup table: ``embedding(i) = W[i]``, one row of W (num_embeddings, embedding_dim)
    per integer index. The gradient adds up in the rows that were looked up.

    Initialised like PyTorch: W from N(0, 1).

    >>> emb = dg.nn.Embedding(10, 4)
    >>> emb([1, 2, 1]).shape
    (3, 4)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.weight = normal_parameter((num_embeddings, embedding_dim), device, dtype)

    def forward(self, indices: Any) -> Tensor:
        return F.embedding(indices, self.weight)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


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
    """relu(x) = max(x, 0), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


class Tanh(Module):
    """tanh(x), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    """sigmoid(x) = 1 / (1 + exp(-x)), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)
