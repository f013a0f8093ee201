"""Losses: fused ops that would otherwise be several nodes (and several temporaries)."""

from __future__ import annotations

from .. import backend
from ..function import Function


class CrossEntropy(Function):
    """L = mean_i( logsumexp(x_i) - x_i[t_i] );  dL/dx = (softmax(x) - onehot(t)) / N

    ``x`` are logits of shape (N, C), ``t`` integer class indices of shape (N,).
    """

    @staticmethod
    def forward(ctx, x, target, reduction="mean"):
        xp = ctx.xp
        if x.ndim != 2 or target.shape != x.shape[:1]:
            raise ValueError(
                f"cross_entropy expects logits of shape (N, C) and targets of shape (N,), got "
                f"{tuple(x.shape)} and {tuple(target.shape)}"
            )
        if target.dtype.kind not in "iu":
            raise TypeError(
                f"cross_entropy targets must be integer class indices, got dtype {target.dtype}"
            )
        if target.size and (int(target.min()) < 0 or int(target.max()) >= x.shape[1]):
            raise IndexError(f"cross_entropy targets must lie in [0, {x.shape[1] - 1}]")
        shifted = x - x.max(axis=1, keepdims=True)  # subtract first: float32 keeps its digits
        e = xp.exp(shifted)
        total = e.sum(axis=1, keepdims=True)
        losses = xp.log(total)[:, 0] - shifted[xp.arange(x.shape[0]), target]
        ctx.save_for_backward(x, e / total)
        ctx.target, ctx.reduction = target, reduction
        if reduction == "mean":
            return losses.sum() / x.shape[0]
        if reduction == "sum":
            return losses.sum()
        if reduction == "none":
            return losses
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")

    @staticmethod
    def backward(ctx, gz):
        x, probs = ctx.saved_tensors
        if ctx.create_graph:  # probs was saved as numbers; for double backward, as a function of x
            e = ctx.xp.exp(x - x.max(axis=-1, keepdims=True))
            probs = e / e.sum(axis=-1, keepdims=True)
        classes = backend.get_array_module(ctx.target).arange(x.shape[1])
        onehot = ctx.target[:, None] == classes  # a raw array in every mode: a constant
        if ctx.reduction == "none":
            scale = gz.reshape((-1, 1))
        elif ctx.reduction == "sum":
            scale = gz
        else:
            scale = gz / x.shape[0]
        return (probs - onehot) * scale, None
