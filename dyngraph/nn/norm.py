"""Normalisation layers: LayerNorm, BatchNorm1d, BatchNorm2d, InstanceNorm1d and InstanceNorm2d
(PyTorch's ``torch.nn``).

Each rescales activations to mean 0 and variance 1 and then applies a learnt per-feature scale
(``weight``, starting at 1) and shift (``bias``, starting at 0), unless made without them. They
differ in *what* they average over:

- ``LayerNorm`` averages over the last dimensions of each example on its own, so it behaves
  the same in training and evaluation and for a batch of one;
- ``BatchNorm`` averages each feature over the batch. In training it uses the batch's
  statistics and keeps running averages of them in *buffers* (``running_mean``,
  ``running_var``, ``num_batches_tracked``: saved in ``state_dict()``, never trained); in
  ``eval()`` mode it uses those running averages, so one example's output no longer depends
  on the rest of its batch.
- ``InstanceNorm`` averages each channel of each example over its positions (``F.
  instance_norm``): by default with no learnt scale and shift (``affine=False``) and no
  running averages (``track_running_stats=False``), so it is the same in training and eval.

NOTE [running statistics] As in PyTorch: ``running = (1 - momentum) * running + momentum *
batch``, where the batch variance put into ``running_var`` is the unbiased one (divided by
n - 1) while the normalisation itself uses the biased one (divided by n); ``momentum=None``
gives a plain cumulative average over the batches seen.
"""

from __future__ import annotations

import warnings
from typing import Any

from .. import factories, grad_mode
from ..tensor import DEFAULT_FLOAT, Tensor
from . import functional as F
from .module import Module, Parameter


class LayerNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias, with mean and (biased) var taken over
    the last ``len(normalized_shape)`` dimensions of each example.

    >>> ln = dg.nn.LayerNorm(4)
    >>> ln(dg.randn(2, 3, 4)).shape
    (2, 3, 4)
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.weight = self.bias = None
        if elementwise_affine:
            self.weight = _ones(self.normalized_shape, device, dtype)
            self.bias = _zeros(self.normalized_shape, device, dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class _BatchNorm(Module):
    """Parameters weight, bias (num_features,); buffers running_mean, running_var
    (num_features,) and num_batches_tracked (an int64 scalar)."""

    expected_ndims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        self.weight = _ones((num_features,), device, dtype) if affine else None
        self.bias = _zeros((num_features,), device, dtype) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", _full((num_features,), 0.0, device, dtype))
            self.register_buffer("running_var", _full((num_features,), 1.0, device, dtype))
            self.register_buffer("num_batches_tracked",
                                 factories.tensor(0, dtype="int64", device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with grad_mode.no_grad():
                self.running_mean.fill_(0.0)
                self.running_var.fill_(1.0)
                self.num_batches_tracked.fill_(0)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self.expected_ndims or x.shape[1] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}({self.num_features}) expects input of "
                f"{' or '.join(f'{n}-D' for n in self.expected_ndims)} shape with "
                f"{self.num_features} features in dimension 1, got {tuple(x.shape)}"
            )
        axes = (0,) + tuple(range(2, x.ndim))  # every dimension but the features
        shape = (1, self.num_features) + (1,) * (x.ndim - 2)  # to broadcast per feature
        use_batch = self.training or not self.track_running_stats
        if use_batch:
            count = x.numel() // self.num_features
            if count <= 1:
                raise ValueError(
                    f"Expected more than 1 value per channel when training, got input size "
                    f"{tuple(x.shape)}"
                )
            mean = x.mean(axes, True)
            var = x.var(axes, keepdim=True, correction=0)
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var, count)
        else:
            mean = self.running_mean.reshape(shape)
            var = self.running_var.reshape(shape)
        out = (x - mean) / (var + self.eps).sqrt()
        if self.weight is not None:
            out = out * self.weight.reshape(shape)
        if self.bias is not None:
            out = out + self.bias.reshape(shape)
        return out

    @grad_mode.no_grad()
    def _update_running_stats(self, mean: Tensor, var: Tensor, count: int) -> None:
        self.num_batches_tracked += 1
        if self.momentum is None:  # a cumulative average
            factor = 1.0 / int(self.num_batches_tracked.item())
        else:
            factor = self.momentum
        unbiased = var.reshape(self.num_features) * (count / (count - 1))
        self.running_mean *= 1.0 - factor
        self.running_mean += factor * mean.reshape(self.num_features)
        self.running_var *= 1.0 - factor
        self.running_var += factor * unbiased

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs, per feature C.

    >>> bn = dg.nn.BatchNorm1d(3)
    >>> y = bn(dg.randn(8, 3))            # training: the batch's statistics
    >>> [name for name, _ in bn.named_buffers()]
    ['running_mean', 'running_var', 'num_batches_tracked']
    """

    expected_ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of images (N, C, H, W), per channel C."""

    expected_ndims = (4,)


class _InstanceNorm(_BatchNorm):
    """BatchNorm's parameters and buffers (PyTorch's _NormBase), with InstanceNorm's defaults
    and ``F.instance_norm``: the running averages, when tracked, are used in eval mode only."""

    spatial = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in (self.spatial + 1, self.spatial + 2):
            raise ValueError(f"{type(self).__name__}: expected {self.spatial + 1}D or "
                             f"{self.spatial + 2}D input (got {x.ndim}D input)")
        channels = x.shape[-self.spatial - 1]
        if channels != self.num_features:
            message = (f"expected input's size at dim={x.ndim - self.spatial - 1} to match "
                       f"num_features ({self.num_features}), but got: {channels}.")
            if self.affine:
                raise ValueError(message)
            warnings.warn(f"{message} num_features is not used because affine=False",
                          stacklevel=2)
        batched = x if x.ndim == self.spatial + 2 else x.unsqueeze(0)
        out = F.instance_norm(batched, self.running_mean, self.running_var, self.weight,
                              self.bias, self.training or not self.track_running_stats,
                              0.0 if self.momentum is None else self.momentum, self.eps)
        return out if x.ndim == self.spatial + 2 else out.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) inputs: each channel of each sample
    over its L positions."""

    spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of images (N, C, H, W) or (C, H, W): each channel of each image
    over its pixels (style transfer's generators).

    >>> dg.nn.InstanceNorm2d(3)(dg.randn(2, 3, 8, 8)).shape
    (2, 3, 8, 8)
    """

    spatial = 2


def _full(shape: tuple[int, ...], value: float, device: Any, dtype: Any) -> Tensor:
    return factories.full(shape, value, dtype=DEFAULT_FLOAT if dtype is None else dtype,
                          device=device)


def _ones(shape: tuple[int, ...], device: Any, dtype: Any) -> Parameter:
    return Parameter(_full(shape, 1.0, device, dtype))


def _zeros(shape: tuple[int, ...], device: Any, dtype: Any) -> Parameter:
    return Parameter(_full(shape, 0.0, device, dtype))
