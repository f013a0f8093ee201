"""Stateless neural-network functions (PyTorch's ``torch.nn.functional``)."""

from __future__ import annotations

from typing import Any

from .. import factories
from ..ops import CrossEntropy, LogSoftmax, Relu, Sigmoid, Softmax, Tanh
from ..tensor import Tensor


def relu(x: Tensor) -> Tensor:
    """max(x, 0) elementwise."""
    return Relu.apply(x)


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + exp(-x)) elementwise."""
    return Sigmoid.apply(x)


def tanh(x: Tensor) -> Tensor:
    return Tanh.apply(x)


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) along ``axis``."""
    return Softmax.apply(x, axis=axis)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """x - logsumexp(x) along ``axis`` (a numerically safe log(softmax(x)))."""
    return LogSoftmax.apply(x, axis=axis)


def cross_entropy(logits: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Softmax cross-entropy of logits (N, C) against integer class indices (N,).

    >>> loss = F.cross_entropy(model(x), y)      # y: int64 tensor or array of class ids
    """
    return CrossEntropy.apply(logits, target, reduction=reduction)


def mse_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """mean((input - target)^2)."""
    diff = input - target
    squared = diff * diff
    if reduction == "mean":
        return squared.mean()
    if reduction == "sum":
        return squared.sum()
    if reduction == "none":
        return squared
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p) (training
    only; seeded by dg.manual_seed)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be between 0 and 1, got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = factories.generator().random(x.shape) >= p
    mask = factories.tensor(keep, dtype=x.dtype, device=x.device) / (1.0 - p)
    return x * mask


def embedding(indices: Any, weight: Tensor) -> Tensor:
    """Rows of ``weight`` picked by integer ``indices`` (gradients add up for repeats)."""
    return weight[indices]
