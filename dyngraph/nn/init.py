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


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """Samples of N(mean, std^2) kept inside [a, b]: each one outside is drawn again (the ViT
    and GPT-style initialisations; dyngraph's draws, not PyTorch's inverse-CDF ones)."""
    with no_grad():
        tensor.normal_(mean, std, generator=generator)
        outside = (tensor < a) | (tensor > b)
        while bool(outside.any()):
            fresh = tensor.detach().clone().normal_(mean, std, generator=generator)
            tensor.copy_(tensor.masked_fill(outside, 0.0) + fresh.masked_fill(~outside, 0.0))
            outside = (tensor < a) | (tensor > b)
        return tensor


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


# ----------------------------------------------------------------------------- the learners' names
# Counted in the learners' material (issue 37, item 3; docs/pytorch_inventory.md).


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The gain that keeps activations' variance steady through ``nonlinearity``, PyTorch's
    table: 1 for linear, conv and sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 +
    slope^2)) for leaky_relu (slope 0.01 unless given), 3/4 for selu."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He's uniform: U(-b, b) with b = gain * sqrt(3 / fan) (fan_in by default)."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He's normal: N(0, std^2) with std = gain / sqrt(fan) (fan_in by default)."""
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix, times ``gain``: the Q of the QR decomposition of a normal
    sample, its signs fixed by R's diagonal, as PyTorch makes it (the weight's trailing
    dimensions are flattened into columns)."""
    import numpy as np

    from ..factories import randn

    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    sample = randn(rows, cols, generator=generator, dtype=np.float64).numpy()
    if rows < cols:
        sample = sample.T
    q, r = np.linalg.qr(sample)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(Tensor(np.ascontiguousarray(q.reshape(tensor.shape) * gain)
                            .astype(tensor.dtype)))
    return tensor
