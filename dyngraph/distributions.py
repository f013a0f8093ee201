"""The two of ``torch.distributions`` the material learners bring uses most
(docs/pytorch_inventory.md): ``Categorical`` (a policy's actions in pytorch/examples'
reinforcement learning) and ``Binomial`` (d2l's and fast.ai's coin flips).

Each is written from dyngraph's own ops, so ``log_prob`` and ``entropy`` are differentiable with
respect to the parameters (``probs`` or ``logits``) as in PyTorch: the policy gradient
``-m.log_prob(action) * reward`` backpropagates into the network that made ``probs``.

>>> m = dg.distributions.Categorical(probs=dg.tensor([0.25, 0.75]))
>>> action = m.sample()
>>> m.log_prob(action)

NOTE [samples are dyngraph's] A sample is drawn with dyngraph's random numbers (``dg.manual_seed``,
or a ``generator=``), so the same seed gives other draws than PyTorch's; the values and
gradients of ``log_prob`` and ``entropy``, and the means and variances, are PyTorch's.
"""

from __future__ import annotations

import math
import sys
import types
from typing import Any

import numpy as np

from . import backend
from .factories import Generator, _rng_of, tensor
from .nn import functional as F
from .tensor import Tensor

__all__ = ["Categorical", "Binomial"]


def _parameter(probs: Any, logits: Any, name: str) -> tuple[Tensor | None, Tensor | None]:
    """Exactly one of ``probs`` and ``logits``, as a float Tensor."""
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: give either probs or logits, not both or neither, as "
                         f"torch.distributions.{name} takes them")
    value = probs if probs is not None else logits
    value = value if isinstance(value, Tensor) else tensor(value)
    if value.dtype.kind != "f":
        value = value.float()
    return (value, None) if probs is not None else (None, value)


def _shape(sample_shape: Any) -> tuple[int, ...]:
    return tuple(sample_shape) if isinstance(sample_shape, (tuple, list)) else (
        (int(sample_shape),) if not isinstance(sample_shape, tuple) else sample_shape)


class Categorical:
    """One of K categories, with probabilities ``probs`` (non-negative, normalised along the
    last dim) or unnormalised log-probabilities ``logits``; the last dim is K, the others are
    the batch."""

    def __init__(self, probs: Any = None, logits: Any = None) -> None:
        probs, logits = _parameter(probs, logits, "Categorical")
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("Categorical: probs needs at least one dimension (the categories)")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = self.probs.log()
        else:
            if logits.ndim < 1:
                raise ValueError("Categorical: logits need at least one dimension (the categories)")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)  # normalised, as torch's
            self.probs = self.logits.exp()
        self.batch_shape = tuple(self.probs.shape[:-1])

    def sample(self, sample_shape: Any = (), *, generator: Generator | None = None) -> Tensor:
        """Category indices (int64) of shape ``sample_shape + batch_shape`` (NOTE [samples are
        dyngraph's])."""
        shape = _shape(sample_shape)
        p = backend.to_numpy(self.probs.detach().array).astype(np.float64)
        rows = p.reshape(-1, p.shape[-1])
        rng = _rng_of(generator)
        n = math.prod(shape)
        drawn = np.stack([rng.choice(rows.shape[1], n, p=row / row.sum()) for row in rows], -1)
        return tensor(drawn.reshape(shape + self.batch_shape).astype(np.int64))

    def log_prob(self, value: Any) -> Tensor:
        """log P(value): the normalised logit of each category index in ``value``."""
        value = value if isinstance(value, Tensor) else tensor(value)
        index = value.long()
        logits = self.logits
        if index.ndim > len(self.batch_shape):  # samples of several draws: broadcast the batch
            logits = logits.expand(*index.shape, logits.shape[-1])
        return logits.gather(-1, index.unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> Tensor:
        """-sum p log p over the categories (a category of probability 0 adds 0)."""
        p_log_p = self.probs * self.logits.clamp(min=float(np.finfo(np.float32).min))
        return -p_log_p.sum(-1)

    def __repr__(self) -> str:
        return f"Categorical(probs: {tuple(self.probs.shape)})"


class Binomial:
    """The number of successes in ``total_count`` independent trials, each a success with
    probability ``probs`` (or ``sigmoid(logits)``)."""

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None) -> None:
        probs, logits = _parameter(probs, logits, "Binomial")
        self.total_count = total_count if isinstance(total_count, Tensor) else tensor(
            float(total_count) if not isinstance(total_count, (list, tuple, np.ndarray))
            else total_count)
        param = probs if probs is not None else logits
        self.total_count = self.total_count.to(param.dtype)  # as torch's broadcast_all
        if probs is not None:
            self.probs = probs
            self.logits = probs.log() - (1 - probs).log()
        else:
            self.logits = logits
            self.probs = logits.sigmoid()
        self.batch_shape = tuple(np.broadcast_shapes(tuple(self.probs.shape),
                                                     tuple(self.total_count.shape)))

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = (), *, generator: Generator | None = None) -> Tensor:
        """Counts, in the parameters' float dtype as PyTorch's, of shape ``sample_shape +
        batch_shape`` (NOTE [samples are dyngraph's])."""
        shape = _shape(sample_shape) + self.batch_shape
        n = np.broadcast_to(backend.to_numpy(self.total_count.array), shape).astype(np.int64)
        p = np.broadcast_to(backend.to_numpy(self.probs.detach().array), shape).astype(np.float64)
        return tensor(_rng_of(generator).binomial(n, p)).to(self.probs.dtype)

    def log_prob(self, value: Any) -> Tensor:
        """log C(n, k) + k log p + (n - k) log(1 - p), written with the logits (as PyTorch's:
        no log of 0 at p = 0 or 1 when k allows it)."""
        value = value if isinstance(value, Tensor) else tensor(value)
        k = value.to(self.logits.dtype)
        n = self.total_count
        counts = np.broadcast_to(backend.to_numpy(n.array), np.broadcast_shapes(
            tuple(n.shape), tuple(k.shape)))
        ks = np.broadcast_to(backend.to_numpy(k.array), counts.shape)
        lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
        log_choose = lgamma(counts + 1) - lgamma(ks + 1) - lgamma(counts - ks + 1)
        # k log p + (n - k) log(1 - p) = k * logits - n * log(1 + exp(logits))
        return (tensor(log_choose, dtype=self.logits.dtype)
                + k * self.logits - n * F.softplus(self.logits))

    def entropy(self) -> Tensor:
        """-sum over the support 0..n of P(k) log P(k) (a scalar total_count, as PyTorch
        requires)."""
        if self.total_count.numel() != 1:
            raise NotImplementedError("Binomial.entropy: the total count must be one number, "
                                      "as torch.distributions.Binomial requires")
        n = int(self.total_count.item())
        support = tensor(np.arange(n + 1, dtype=np.float32)).reshape(
            (n + 1,) + (1,) * len(self.batch_shape))
        log_p = self.log_prob(support)
        return -(log_p.exp() * log_p).sum(0)

    def __repr__(self) -> str:
        return f"Binomial(total_count: {tuple(self.total_count.shape)}, probs: " \
               f"{tuple(self.probs.shape)})"


def _submodule(name: str, **members: Any) -> types.ModuleType:
    """``torch.distributions.binomial`` and ``.categorical`` are modules of their own (d2l writes
    ``torch.distributions.binomial.Binomial``): the same names here, as small modules."""
    module = types.ModuleType(f"{__name__}.{name}")
    module.__dict__.update(members)
    sys.modules[module.__name__] = module
    return module


binomial = _submodule("binomial", Binomial=Binomial)
categorical = _submodule("categorical", Categorical=Categorical)
