"""Reductions and the softmax family: ops that combine values along an axis.

The gradient of a reduction is spread back over the reduced axes: ``kept_shape`` is the output
shape with those axes kept as size 1, so ``gz.reshape(kept)`` broadcasts against the input.
"""

from __future__ import annotations

import math

from ..function import Function
from ..meta import AXIS, FLAG, INT64, NUMBER, Meta, Promotion, count, one_of
from ..tensor import scalar_type_name


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


def reduction_meta(cls, shapes, dtypes, axis, keepdims) -> Meta:
    """A reduction's statement: x's shape with the reduced axes removed (or kept as 1s), in
    the dtype of the op's promotion, each element of x touched once."""
    x = shapes[0]
    shape = kept_shape(x, axis) if keepdims else reduced_shape(x, axis)
    return Meta(count(x), shape, cls.promotion.dtype(dtypes), count(x))


# ----------------------------------------------------------------------------- reductions


class Sum(Function):
    """z = sum of x over axis;  dz/dx = 1 (gz is broadcast back over the summed axes)"""

    promotion = Promotion.ACCUMULATE
    option_types = {"axis": AXIS, "keepdims": FLAG}

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        ctx.input_shape, ctx.kept = x.shape, kept_shape(x.shape, axis)
        return x.sum(axis=axis, keepdims=keepdims)

    @staticmethod
    def backward(ctx, gz):
        return ctx.xp.broadcast_to(gz.reshape(ctx.kept), ctx.input_shape)

    @classmethod
    def meta(cls, shapes, dtypes, axis=None, keepdims=False):
        return reduction_meta(cls, shapes, dtypes, axis, keepdims)


class Mean(Function):
    """z = mean of x over axis (n values);  dz/dx = 1 / n"""

    promotion = Promotion.INT_TO_DEFAULT_FLOAT
    option_types = {"axis": AXIS, "keepdims": FLAG}

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        if x.size == 0:  # the mean of nothing is NaN, silently as in PyTorch (numpy warns)
            z = x.sum(axis=axis, keepdims=keepdims) * math.nan
        else:
            z = x.mean(axis=axis, keepdims=keepdims)
        ctx.input_shape, ctx.kept = x.shape, kept_shape(x.shape, axis)
        ctx.count = max(x.size // max(z.size, 1), 1)  # (an empty x has no gradient to share)
        return z

    @staticmethod
    def backward(ctx, gz):
        return ctx.xp.broadcast_to(gz.reshape(ctx.kept) / ctx.count, ctx.input_shape)

    @classmethod
    def meta(cls, shapes, dtypes, axis=None, keepdims=False):
        return reduction_meta(cls, shapes, dtypes, axis, keepdims)


class Max(Function):
    """z = max of x over axis;  dz/dx = 1 at the maximum (its index, or shared by ties), else 0

    Ties, as in PyTorch: ``x.max(dim)`` returns an index, and its gradient goes all to that
    index, the first maximum (``ties="first"``); ``x.max()`` and ``amax`` share it equally
    between the maxima (``ties="share"``). A NaN is the maximum (and the minimum) wherever
    there is one: ``max`` and ``max(dim)`` send its gradient to the NaNs, ``amax`` to no entry
    equal to it, so its gradient is NaN (``ties="share among equal"``), as PyTorch does.
    """

    option_types = {"axis": AXIS, "keepdims": FLAG,
                    "ties": one_of("share", "first", "share among equal")}

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False, ties="share"):
        return _extreme(ctx, x, x.max(axis=axis, keepdims=True), axis, keepdims, ties)

    @staticmethod
    def backward(ctx, gz):
        (weights,) = ctx.saved_tensors
        return gz.reshape(ctx.kept) * weights

    @classmethod
    def meta(cls, shapes, dtypes, axis=None, keepdims=False, ties="share"):
        return reduction_meta(cls, shapes, dtypes, axis, keepdims)


class Min(Function):
    """z = min of x over axis;  dz/dx = 1 at the minimum (its index, or shared by ties), else 0

    Ties as in Max: ``x.min(dim)`` sends the gradient to the index it returns.
    """

    option_types = {"axis": AXIS, "keepdims": FLAG,
                    "ties": one_of("share", "first", "share among equal")}

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False, ties="share"):
        return _extreme(ctx, x, x.min(axis=axis, keepdims=True), axis, keepdims, ties)

    backward = staticmethod(Max.backward)

    @classmethod
    def meta(cls, shapes, dtypes, axis=None, keepdims=False, ties="share"):
        return reduction_meta(cls, shapes, dtypes, axis, keepdims)


def _extreme(ctx, x, z_kept, axis, keepdims, ties):
    """Shared forward of Max and Min: remember which entries won (a constant mask of weights)."""
    xp = ctx.xp
    winners = x == z_kept
    if ties != "share among equal" and x.dtype.kind == "f":
        nan_won = xp.isnan(z_kept)
        if nan_won.any():  # a NaN maximum was won by the NaNs (one pass over x only then)
            winners |= xp.isnan(x) & nan_won
    winners = winners.astype(x.dtype)
    if ties == "first":  # one axis: keep the first winner along it (where argmax points)
        winners *= xp.cumsum(winners, axis=axis) == 1
    else:  # (none equal to a NaN maximum: 0 / 0 is NaN, without numpy's warning)
        count = winners.sum(axis=axis, keepdims=True)
        winners = winners / xp.where(count == 0, xp.nan, count)
    ctx.save_for_backward(winners)
    ctx.kept = z_kept.shape
    return z_kept if keepdims else z_kept.reshape(reduced_shape(x.shape, axis))


class Var(Function):
    """z = sum((x - mean)^2) / (n - correction);  dz/dx = 2 (x - mean) / (n - correction)

    With no degrees of freedom left (n - correction <= 0: the variance of one number) the
    value and its gradient are nan, as in PyTorch (Tensor.var warns).
    """

    promotion = Promotion.INT_TO_DEFAULT_FLOAT
    option_types = {"axis": AXIS, "keepdims": FLAG, "correction": NUMBER}

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False, correction=1):
        ctx.save_for_backward(x)
        ctx.axis, ctx.kept = axis, kept_shape(x.shape, axis)
        ctx.dof = x.size // (math.prod(reduced_shape(x.shape, axis)) or 1) - correction
        centered = x - x.mean(axis=axis, keepdims=True)
        return _per_dof((centered * centered).sum(axis=axis, keepdims=keepdims), ctx.dof)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        centered = x - x.mean(axis=ctx.axis, keepdims=True)
        return _per_dof(gz.reshape(ctx.kept) * centered * 2.0, ctx.dof)

    @classmethod
    def meta(cls, shapes, dtypes, axis=None, keepdims=False, correction=1):
        return reduction_meta(cls, shapes, dtypes, axis, keepdims)


class Std(Function):
    """z = sqrt(var(x));  dz/dx = (x - mean) / ((n - correction) z), and 0 where z = 0

    Where all the values are equal (z = 0) PyTorch's gradient is 0, not the nan of sqrt's
    derivative at 0: a loss with a std term stays finite while a batch happens to be constant.
    """

    promotion = Promotion.INT_TO_DEFAULT_FLOAT
    option_types = {"axis": AXIS, "keepdims": FLAG, "correction": NUMBER}

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False, correction=1):
        z = ctx.xp.sqrt(Var.forward(ctx, x, axis, keepdims, correction))
        ctx.save_for_backward(x, z)
        return z

    @staticmethod
    def backward(ctx, gz):
        x, z = ctx.saved_tensors
        xp = ctx.xp
        z = z.reshape(ctx.kept)
        spread = z != 0  # (nan != 0: the std of one number keeps its nan gradient)
        gz_over_z = xp.where(spread, gz.reshape(ctx.kept) / xp.where(spread, z, 1.0), 0.0)
        centered = x - x.mean(axis=ctx.axis, keepdims=True)
        return _per_dof(gz_over_z * centered, ctx.dof)

    @classmethod
    def meta(cls, shapes, dtypes, axis=None, keepdims=False, correction=1):
        return reduction_meta(cls, shapes, dtypes, axis, keepdims)


def _per_dof(value, dof):
    """value / dof, the degrees of freedom n - correction; nan when there are none."""
    return value / dof if dof > 0 else value * math.nan


# ----------------------------------------------------------------------------- softmax family


class LogSumExp(Function):
    """z = log(sum(exp(x))) over axis;  dz/dx = exp(x - z) = softmax(x)"""

    promotion = Promotion.INT_TO_FLOAT
    option_types = {"axis": AXIS, "keepdims": FLAG}

    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        z = _logsumexp(ctx.xp, x, axis)
        ctx.kept = z.shape
        z = z if keepdims else z.reshape(reduced_shape(x.shape, axis))
        ctx.save_for_backward(x, z)  # z is the output: with create_graph, a function of x
        return z

    @staticmethod
    def backward(ctx, gz):
        x, z = ctx.saved_tensors
        return gz.reshape(ctx.kept) * ctx.xp.exp(x - z.reshape(ctx.kept))

    @classmethod
    def meta(cls, shapes, dtypes, axis=None, keepdims=False):
        stated = reduction_meta(cls, shapes, dtypes, axis, keepdims)
        if dtypes[0].kind == "b":  # (a bool x is shifted by int64 zeros first)
            return stated._replace(dtype=cls.promotion.dtype([INT64]))
        return stated


class Softmax(Function):
    """y = exp(x) / sum(exp(x)) over axis;  dL/dx = y * (gy - sum(gy * y))"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True
    option_types = {"axis": AXIS}

    @staticmethod
    def forward(ctx, x, axis=-1):
        need_floats("softmax", x)
        e = ctx.xp.exp(x - _largest(ctx.xp, x, axis))
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

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True
    option_types = {"axis": AXIS}

    @staticmethod
    def forward(ctx, x, axis=-1):
        need_floats("log_softmax", x)
        xp = ctx.xp
        shifted = x - _largest(ctx.xp, x, axis)  # subtract first: float32 keeps its digits
        y = shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))
        ctx.axis = axis
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, gy):
        (y,) = ctx.saved_tensors
        return gy - ctx.xp.exp(y) * gy.sum(axis=ctx.axis, keepdims=True)


def need_floats(fn, x, convert=None):
    """softmax (or a loss) of an integer tensor: PyTorch refuses it (where numpy would compute in
    float64 without a word), and says so with its error type and words."""
    if x.dtype.kind != "f":
        convert = convert or f"x.float().{fn}(dim=-1) (or pass dtype=dg.float32)"
        raise NotImplementedError(
            f'"{fn}" not implemented for \'{scalar_type_name(x.dtype)}\': it needs floating '
            f"point values; convert first, e.g. {convert}"
        )


def _logsumexp(xp, x, axis):
    """log(sum(exp(x))) over axis with keepdims, shifted by the max so exp cannot overflow."""
    shift = _largest(xp, x, axis)
    shift = xp.where(xp.isfinite(shift), shift, 0)  # all -inf (or inf) rows: no shift
    return xp.log(xp.exp(x - shift).sum(axis=axis, keepdims=True)) + shift


def _largest(xp, x, axis):
    """The max over axis with keepdims, the shift that keeps exp from overflowing; 0 over an
    empty axis (numpy's max of nothing raises; the sum of nothing is 0, log(0) = -inf)."""
    if x.size == 0:
        return xp.zeros(kept_shape(x.shape, axis), dtype=x.dtype)
    return x.max(axis=axis, keepdims=True)
