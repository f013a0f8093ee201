"""More reductions and orderings: prod, cumsum, norm, sort, topk.

As in reduce.py, a reduction's gradient is spread back over the reduced axes through
``kept_shape`` (the output shape with those axes kept as size 1).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .. import backend
from ..function import Function
from ..meta import COUNT, DIM, FLAG, NORM_ORDER, Meta, Promotion, count
from .index import along_key
from .reduce import kept_shape, reduced_shape, reduction_meta
from .shape import scatter_into_zeros

# ----------------------------------------------------------------------------- reductions


class Prod(Function):
    """z = prod of x over dim;  dz/dx_i = prod of the other x_j (no division: zeros are fine)"""

    promotion = Promotion.ACCUMULATE
    option_types = {"dim": DIM, "keepdim": FLAG}

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        ctx.save_for_backward(x)
        ctx.dim, ctx.kept = dim, kept_shape(x.shape, dim)
        return x.prod(axis=dim, keepdims=keepdim)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        if x.size == 0:  # the product of nothing is 1, and no entry to send a gradient to
            return gz.reshape(ctx.kept) * x
        xp = ctx.xp
        flat = x.reshape(-1) if ctx.dim is None else xp.moveaxis(x, ctx.dim, -1)
        if ctx.create_graph:
            others = _others_recorded(xp, flat)
        else:  # product of the others = (product of those before) * (product of those after)
            ones = xp.ones(flat.shape[:-1] + (1,), dtype=x.dtype)
            before = xp.cumprod(xp.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
            after = xp.flip(xp.cumprod(xp.flip(xp.concatenate([flat[..., 1:], ones], axis=-1),
                                               axis=-1), axis=-1), axis=-1)
            others = before * after
        others = others.reshape(x.shape) if ctx.dim is None else xp.moveaxis(others, -1, ctx.dim)
        return gz.reshape(ctx.kept) * others

    @classmethod
    def meta(cls, shapes, dtypes, dim=None, keepdim=False):
        return reduction_meta(cls, shapes, dtypes, dim, keepdim)


def _others_recorded(xp, flat):
    """The product of the others along the last axis, as recorded ops (create_graph=True): row
    i of an n x n copy has x_i replaced by 1, and Prod multiplies each row. O(n^2), where the
    cumulative products above are O(n); but dyngraph has no recorded cumprod, and this form is
    differentiable again (by Prod itself)."""
    n = flat.shape[-1]
    copies = flat.reshape(flat.shape[:-1] + (1, n))  # broadcast against the n x n identity
    identity = backend.get_array_module(flat.array).eye(n, dtype=bool)  # a constant
    return xp.where(identity, 1.0, copies).prod(axis=-1)


class CumSum(Function):
    """z_i = x_0 + ... + x_i along dim;  dL/dx_i = gz_i + ... + gz_last (a reversed cumsum)"""

    promotion = Promotion.ACCUMULATE
    elementwise = True
    option_types = {"dim": DIM}

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return ctx.xp.cumsum(x, axis=dim)

    @staticmethod
    def backward(ctx, gz):
        xp = ctx.xp
        return xp.flip(xp.cumsum(xp.flip(gz, axis=ctx.dim), axis=ctx.dim), axis=ctx.dim)


class Norm(Function):
    """z = (sum |x|^p)^(1/p) over dim (p = 2: sqrt(sum x^2));
    dz/dx = sign(x) |x|^(p-1) / z^(p-1)  (x / z for p = 2; p = inf: sign(x) at the max |x|)"""

    promotion = Promotion.INT_TO_DEFAULT_FLOAT
    option_types = {"p": NORM_ORDER, "dim": DIM, "keepdim": FLAG}

    @staticmethod
    def forward(ctx, x, p=2.0, dim=None, keepdim=False):
        xp = ctx.xp
        ctx.p, ctx.dim, ctx.kept = p, dim, kept_shape(x.shape, dim)
        a = xp.abs(x)
        if p == float("inf"):
            z = a.max(axis=dim, keepdims=True)
        elif p == 2:
            z = xp.sqrt((x * x).sum(axis=dim, keepdims=True))
        else:
            z = (a**p).sum(axis=dim, keepdims=True) ** (1.0 / p)
        z = z if keepdim else z.reshape(reduced_shape(x.shape, dim))
        ctx.save_for_backward(x, z)  # the output itself: with create_graph, a function of x
        return z

    @staticmethod
    def backward(ctx, gz):
        x, z = ctx.saved_tensors
        xp, p, g, z = ctx.xp, ctx.p, gz.reshape(ctx.kept), z.reshape(ctx.kept)
        safe_z = xp.where(z == 0, 1, z)  # the gradient at x = 0 is taken as 0, as in PyTorch
        if p == float("inf"):  # (the places of the max: a constant 0/1 weight)
            at_max = ((xp.sign(x) * x == z) & (z != 0)) * 1.0
            return g * xp.sign(x) * at_max / xp.maximum(at_max.sum(axis=ctx.dim, keepdims=True), 1)
        if p == 2:
            return g * x / safe_z
        return g * xp.sign(x) * xp.abs(x) ** (p - 1) / safe_z ** (p - 1) * (z != 0)

    @classmethod
    def meta(cls, shapes, dtypes, p=2.0, dim=None, keepdim=False):
        stated = reduction_meta(cls, shapes, dtypes, dim, keepdim)
        # p = inf: the largest |x|, in x's own dtype
        return stated._replace(dtype=dtypes[0]) if p == float("inf") else stated


# ----------------------------------------------------------------------------- ordering


def sort_order(xp, x, dim, descending=False):
    """The indices that sort x along dim (stable: equal values keep their order). A NaN counts
    as the largest value, as in PyTorch (first when descending: -NaN would sort last)."""
    keys = x
    if descending:
        keys = -x if x.dtype.kind != "f" else xp.where(xp.isnan(x), -xp.inf, -x)
    return xp.argsort(keys, axis=dim, kind="stable")


class Sort(Function):
    """z = x sorted along dim (z = x[order]);  dz/dx: gz put back in x's order"""

    promotion = Promotion.FIRST_INPUT
    elementwise = True
    option_types = {"dim": DIM, "descending": FLAG}

    @staticmethod
    def forward(ctx, x, dim=-1, descending=False):
        order = sort_order(ctx.xp, x, dim, descending)
        ctx.dim, ctx.order = dim, order
        return ctx.xp.take_along_axis(x, order, axis=dim)

    @staticmethod
    def backward(ctx, gz):
        xp = backend.get_array_module(ctx.order)  # index bookkeeping: arrays, also for Tensors
        inverse = xp.argsort(ctx.order, axis=ctx.dim)  # where each value went
        return gz[along_key(xp, inverse, ctx.dim % ctx.order.ndim)]  # (a recorded Index)


class TopK(Function):
    """z = the k largest (or smallest) x along dim;  dz/dx: gz at the chosen places, else 0"""

    promotion = Promotion.FIRST_INPUT
    option_types = {"k": COUNT, "dim": DIM, "largest": FLAG}

    @staticmethod
    def forward(ctx, x, k, dim=-1, largest=True):
        order = topk_order(ctx.xp, x, k, dim, largest)
        ctx.input_shape, ctx.key = x.shape, along_key(ctx.xp, order, dim)
        return x[ctx.key]

    @staticmethod
    def backward(ctx, gz):
        return scatter_into_zeros(ctx.xp, gz, ctx.input_shape, ctx.key)

    @classmethod
    def meta(cls, shapes, dtypes, k, dim=-1, largest=True):  # x, with k along dim
        x = shapes[0]
        out = tuple(k if i == dim % len(x) else n for i, n in enumerate(x)) if x else ()
        return Meta(count(x), out, cls.promotion.dtype(dtypes), count(x))


def topk_order(xp, x, k, dim, largest=True):
    """The indices of the k largest (or smallest) values along dim, best first."""
    if not 0 <= k <= x.shape[dim]:
        raise RuntimeError(
            f"topk: k ({k}) is out of range: dimension {dim} has {x.shape[dim]} elements"
        )
    order = sort_order(xp, x, dim, descending=largest)
    return xp.take(order, xp.arange(k), axis=dim)


class SortResult(NamedTuple):
    """What ``sort`` returns (PyTorch's ``torch.return_types.sort``): values, indices."""

    values: Any
    indices: Any


class TopKResult(NamedTuple):
    """What ``topk`` returns (PyTorch's ``torch.return_types.topk``): values, indices."""

    values: Any
    indices: Any
