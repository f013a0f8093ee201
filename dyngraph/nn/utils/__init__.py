"""Helpers around training (PyTorch's ``torch.nn.utils``): gradient clipping, and ``rnn``
(padded batches of sequences of different lengths).

Gradient clipping guards against the occasional huge step (an RNN's exploding gradient)::

    loss.backward()
    dg.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ... import backend
from ...grad_mode import no_grad
from ...tensor import Tensor
from . import rnn


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    """Scale all the gradients together, so that their joint norm is at most ``max_norm``.

    The joint norm is the norm of the vector of every gradient's entries (``norm_type`` 2 by
    default; ``float('inf')`` for the largest absolute entry). When it exceeds ``max_norm``
    every gradient is multiplied by ``max_norm / (norm + 1e-6)`` (PyTorch's formula), so the
    direction of the step is kept. Returns the norm before clipping, as a 0-d tensor.
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    params = [p for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    if not params:
        return Tensor(np.zeros((), dtype=np.float32))
    grads = [p.grad.array for p in params]
    xp = backend.get_array_module(grads[0])
    if math.isinf(norm_type):
        norms = [xp.abs(g).max() for g in grads]
        total = xp.stack(norms).max()
    else:
        norms = [xp.sum(xp.abs(g) ** norm_type) ** (1.0 / norm_type) for g in grads]
        total = xp.sum(xp.stack(norms) ** norm_type) ** (1.0 / norm_type)
    total = total.astype(grads[0].dtype)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    coef = min(float(max_norm) / (float(total) + 1e-6), 1.0)
    with no_grad():
        for p in params:
            # NOTE: always scaled (by 1.0 when under the limit), and in place, as PyTorch does:
            # ``g = p.grad`` taken before sees the clipped values.
            p.grad.mul_(p.grad.array.dtype.type(coef))
    return Tensor(total)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float) -> None:
    """Clamp every gradient entry into [-clip_value, clip_value]."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    with no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.copy_(p.grad.clamp(-clip_value, clip_value))  # in place, as PyTorch


__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "rnn",
           "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Every parameter flattened and joined into one vector (recorded: gradients flow back)."""
    from ...functions import cat

    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive pieces of ``vec`` into the parameters' ``.data``, in order."""
    start = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[start:start + n].view_as(p).data
        start += n
