"""Filling parameters with their first values, in place (PyTorch's ``torch.nn.init``).

>>> dg.nn.init.normal_(layer.weight, mean=0.0, std=0.02)      # nanoGPT's _init_weights
>>> dg.nn.init.zeros_(layer.bias)
>>> net.apply(lambda m: dg.nn.init.xavier_uniform_(m.weight) if isinstance(m, nn.Linear) else None)

Each function fills the tensor under ``dg.no_grad()`` (setting a starting value is no step of
any graph, so a parameter that requires grad may be filled), keeps its dtype and device, and
returns it. The random ones draw from dyngraph's generator (``dg.manual_seed``), or from
``generator=``: the same distributions as PyTorch, not the same numbers.
"""

from __future__ import annotations

import math
from typing import Any

from ..grad_mode import no_grad
from ..tensor import Tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Samples of the uniform distribution on [a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Samples of the normal distribution N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Every element ``val``."""
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot's uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot's normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _fans(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight (out_features, in_features, *kernel), as PyTorch counts."""
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
            f"(got shape {tuple(tensor.shape)}): initialise a bias with zeros_ or uniform_"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive
