"""Reductions and the softmax family: ops that combine values along an axis.

The gradient of a reduction is spread back over the reduced axes: ``kept_shape`` is the output
shape with those axes kept as size 1, so ``gz.reshape(kept)`` broadcasts against the input.
"""

from __future__ import annotations

import math

from ..function import Function


def reduced_axes(ndim: int, axis) -> set[int]:
    """The set of axes a reduction over ``axis`` (None, an int, or a tuple) removes."""
    if axis is None:
        return set(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return {a % ndim for a in axes} if ndim else set()


def kept_shape(shape: tuple[int, ...], axis) -> tuple[int, ...]:
    """``shape`` with the reduced axes set to 1 (the result shape with keepdims=True)."""
    axes = reduced_axes(len(shape), axis)
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def reduced_shape(shape: tuple[int, ...], axis) -> tuple[int, ...]:
    """``shape`` with the reduced axes removed (the result shape with keepdims=False)."""
    axes = reduced_axes(len(shape), axis)
    return tuple(n for i, n in enumerate(shape) if i not in axes)


# ----------------------------------------------------------------------------- reductions


class Sum(Function):
    """z = sum of x over axis;  dz/dx = 1 (gz is broadcast back over the summed axes)"""

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        ctx.input_shape, ctx.kept = x.shape, kept_shape(x.shape, axis)
        return x.sum(axis=axis, keepdims=keepdims)

    @staticmethod
    def backward(ctx, gz):
        return ctx.xp.broadcast_to(gz.reshape(ctx.kept), ctx.input_shape)


class Mean(Function):
    """z = mean of x over axis (n values);  dz/dx = 1 / n"""

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        z = x.mean(axis=axis, keepdims=keepdims)
        ctx.input_shape, ctx.kept = x.shape, kept_shape(x.shape, axis)
        ctx.count = x.size // max(z.size, 1)
        return z

    @staticmethod
    def backward(ctx, gz):
        return ctx.xp.broadcast_to(gz.reshape(ctx.kept) / ctx.count, ctx.input_shape)


class Max(Function):
    """z = max of x over axis;  dz/dx = 1 at the maximum (shared equally between ties), else 0"""

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        return _extreme(ctx, x, x.max(axis=axis, keepdims=True), axis, keepdims)

    @staticmethod
    def backward(ctx, gz):
        (weights,) = ctx.saved_tensors
        return gz.reshape(ctx.kept) * weights


class Min(Function):
    """z = min of x over axis;  dz/dx = 1 at the minimum (shared equally between ties), else 0"""

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        return _extreme(ctx, x, x.min(axis=axis, keepdims=True), axis, keepdims)

    backward = staticmethod(Max.backward)


def _extreme(ctx, x, z_kept, axis, keepdims):
    """Shared forward of Max and Min: remember which entries won (a constant mask)."""
    winners = (x == z_kept).astype(x.dtype)
    ctx.save_for_backward(winners / winners.sum(axis=axis, keepdims=True))
    ctx.kept = z_kept.shape
    return z_kept if keepdims else z_kept.reshape(reduced_shape(x.shape, axis))


class Var(Function):
    """z = sum((x - mean)^2) / (n - correction);  dz/dx = 2 (x - mean) / (n - correction)"""

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False, correction=1):
        ctx.save_for_backward(x)
        ctx.axis, ctx.kept = axis, kept_shape(x.shape, axis)
        n = x.size // math.prod(reduced_shape(x.shape, axis))
        ctx.denominator = max(n - correction, 0)
        centered = x - x.mean(axis=axis, keepdims=True)
        return (centered * centered).sum(axis=axis, keepdims=keepdims) / ctx.denominator

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        centered = x - x.mean(axis=ctx.axis, keepdims=True)
        return gz.reshape(ctx.kept) * centered * (2.0 / ctx.denominator)


# ----------------------------------------------------------------------------- softmax family


class LogSumExp(Function):
    """z = log(sum(exp(x))) over axis;  dz/dx = exp(x - z) = softmax(x)"""

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        z = _logsumexp(ctx.xp, x, axis)
        ctx.kept = z.shape
        z = z if keepdims else z.reshape(reduced_shape(x.shape, axis))
        ctx.save_for_backward(x, z)
        return z

    @staticmethod
    def backward(ctx, gz):
        x, z = ctx.saved_tensors
        return gz.reshape(ctx.kept) * ctx.xp.exp(x - z.reshape(ctx.kept))


class Softmax(Function):
    """y = exp(x) / sum(exp(x)) over axis;  dL/dx = y * (gy - sum(gy * y))"""

    @staticmethod
    def forward(ctx, x, axis=-1):
        e = ctx.xp.exp(x - x.max(axis=axis, keepdims=True))
        y = e / e.sum(axis=axis, keepdims=True)
        ctx.axis = axis
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, gy):
        (y,) = ctx.saved_tensors
        return y * (gy - (gy * y).sum(axis=ctx.axis, keepdims=True))


class LogSoftmax(Function):
    """y = x - logsumexp(x) over axis;  dL/dx = gy - softmax(x) * sum(gy)"""

    @staticmethod
    def forward(ctx, x, axis=-1):
        xp = ctx.xp
        shifted = x - x.max(axis=axis, keepdims=True)  # subtract first: float32 keeps its digits
        y = shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))
        ctx.axis = axis
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, gy):
        (y,) = ctx.saved_tensors
        return gy - ctx.xp.exp(y) * gy.sum(axis=ctx.axis, keepdims=True)


def _logsumexp(xp, x, axis):
    """log(sum(exp(x))) over axis with keepdims, shifted by the max so exp cannot overflow."""
    shift = x.max(axis=axis, keepdims=True)
    shift = xp.where(xp.isfinite(shift), shift, 0)  # all -inf (or inf) rows: no shift
    return xp.log(xp.exp(x - shift).sum(axis=axis, keepdims=True)) + shift
