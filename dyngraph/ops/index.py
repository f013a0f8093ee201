"""Indexing along a dimension, masking and rearranging: gather, scatter_add, masked_fill, flip,
repeat, tril/triu. Their gradients put values back where they came from."""

from __future__ import annotations

from .. import backend
from ..function import Function
from ..meta import DIM, DIMS, NUMBER_OR_ARRAY, OFFSET, SIZES, Meta, Promotion, count
from .shape import scatter_into_zeros


def along_key(xp, index, dim):
    """The advanced-indexing key that picks ``x[..., index[i, j, ...], ...]`` along ``dim``:
    ``index`` itself at ``dim`` and an ``arange`` on every other axis (so that
    ``x[along_key(index, dim)]`` is PyTorch's ``x.gather(dim, index)``)."""
    key = []
    for axis, n in enumerate(index.shape):
        if axis == dim:
            key.append(index)
        else:
            shape = [1] * index.ndim
            shape[axis] = n
            key.append(xp.arange(n).reshape(shape))
    return tuple(key)


# ----------------------------------------------------------------------------- gather / scatter


class Gather(Function):
    """z[i][j] = x[index[i][j]][j] (dim=0);  dz/dx: gz added back at the gathered places"""

    promotion = Promotion.FIRST_INPUT
    option_types = {"dim": DIM}

    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.input_shape, ctx.key = x.shape, along_key(ctx.xp, index, dim)
        return x[ctx.key]

    @staticmethod
    def backward(ctx, gz):  # (repeated indices accumulate)
        return scatter_into_zeros(ctx.xp, gz, ctx.input_shape, ctx.key), None

    @classmethod
    def meta(cls, shapes, dtypes, dim):  # one value per index
        out = shapes[1]
        return Meta(count(out), out, cls.promotion.dtype(dtypes), count(out))


class ScatterAdd(Function):
    """z = x, then z[index[i][j]][j] += src[i][j] (dim=0);  dz/dx = 1,  dz/dsrc = gz[index]"""

    promotion = Promotion.FIRST_INPUT
    option_types = {"dim": DIM}

    @staticmethod
    def forward(ctx, x, index, src, dim):
        ctx.key, ctx.src_shape = along_key(ctx.xp, index, dim), src.shape
        ctx.used = tuple(slice(0, n) for n in index.shape)  # src beyond index's shape is unused
        z = x.copy()
        backend.scatter_add(ctx.xp, z, ctx.key, src[ctx.used])
        return z

    @staticmethod
    def backward(ctx, gz):
        need_x, _, need_src = ctx.needs_input_grad
        gsrc = None
        if need_src:  # gz at the places src was added to, in the part of src that was used
            gsrc = scatter_into_zeros(ctx.xp, gz[ctx.key], ctx.src_shape, ctx.used)
        return (gz if need_x else None), None, gsrc

    @classmethod
    def meta(cls, shapes, dtypes, dim):  # x, with src added in
        elements = sum(map(count, shapes))
        return Meta(elements, shapes[0], cls.promotion.dtype(dtypes), elements)


class MaskedFill(Function):
    """z = value where mask else x;  dz/dx = 0 where mask, else 1"""

    promotion = Promotion.FIRST_INPUT
    elementwise = True
    option_types = {"value": NUMBER_OR_ARRAY}

    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.save_for_backward(mask)
        return ctx.xp.where(mask, ctx.xp.asarray(value, dtype=x.dtype), x)

    @staticmethod
    def backward(ctx, gz):
        (mask,) = ctx.saved_tensors
        return ctx.xp.where(mask, 0, gz), None


# ----------------------------------------------------------------------------- rearranging


class Flip(Function):
    """z = x reversed along dims;  dz/dx: gz reversed back"""

    elementwise = True

    option_types = {"dims": DIMS}

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return ctx.xp.flip(x, axis=dims).copy()  # a copy, as PyTorch's (numpy's is a view)

    @staticmethod
    def backward(ctx, gz):
        return ctx.xp.flip(gz, axis=ctx.dims)


class Repeat(Function):
    """z = x tiled sizes[i] times along each dim;  dz/dx: the sum of gz over the copies"""

    option_types = {"sizes": SIZES}

    @staticmethod
    def forward(ctx, x, sizes):
        shape = (1,) * (len(sizes) - x.ndim) + x.shape  # new leading dims, as in PyTorch
        ctx.input_shape, ctx.sizes, ctx.padded = x.shape, sizes, shape
        return ctx.xp.tile(x.reshape(shape), sizes)

    @staticmethod
    def backward(ctx, gz):
        split = []  # (copies, size) per dim: sum over every "copies" axis
        for copies, n in zip(ctx.sizes, ctx.padded):
            split += [copies, n]
        copy_axes = tuple(range(0, len(split), 2))
        return gz.reshape(split).sum(axis=copy_axes).reshape(ctx.input_shape)

    @classmethod
    def meta(cls, shapes, dtypes, sizes):
        sizes = tuple(sizes)
        if len(sizes) < len(shapes[0]):
            raise ValueError(f"sizes {sizes} has fewer entries than the input has dims "
                             f"{shapes[0]}")
        padded = (1,) * (len(sizes) - len(shapes[0])) + shapes[0]
        out = tuple(a * b for a, b in zip(padded, sizes))
        return Meta(count(out), out, cls.promotion.dtype(dtypes), count(out))


class Tril(Function):
    """z = x with entries above the diagonal set to 0;  dz/dx = 1 on and below it, else 0"""

    elementwise = True

    option_types = {"diagonal": OFFSET}

    @staticmethod
    def forward(ctx, x, diagonal=0):
        ctx.diagonal = diagonal
        return ctx.xp.tril(x, diagonal)

    @staticmethod
    def backward(ctx, gz):
        return ctx.xp.tril(gz, ctx.diagonal)


class Triu(Function):
    """z = x with entries below the diagonal set to 0;  dz/dx = 1 on and above it, else 0"""

    elementwise = True

    option_types = {"diagonal": OFFSET}

    @staticmethod
    def forward(ctx, x, diagonal=0):
        ctx.diagonal = diagonal
        return ctx.xp.triu(x, diagonal)

    @staticmethod
    def backward(ctx, gz):
        return ctx.xp.triu(gz, ctx.diagonal)
