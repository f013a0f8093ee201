"""Shape ops: move values around without changing them, so their gradients move them back."""

from __future__ import annotations

import math

from .. import backend
from ..function import Function
from ..meta import (
    AXES,
    DEVICE,
    DTYPE,
    NEW_AXIS,
    NUMBER_OR_ARRAY,
    SHAPE,
    Meta,
    Promotion,
    Shape,
    count,
    index_bound,
)
from ..tensor import Tensor

# ----------------------------------------------------------------------------- views


class Reshape(Function):
    """z = x viewed with a new shape;  dz/dx: gz reshaped back to x's shape"""

    option_types = {"shape": SHAPE}

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, gz):
        return gz.reshape(ctx.input_shape)

    @classmethod
    def meta(cls, shapes, dtypes, shape):
        out = reshaped(shapes[0], tuple(shape))
        return Meta(count(out), out, cls.promotion.dtype(dtypes), count(out))


def reshaped(shape: Shape, target: Shape) -> Shape:
    """``Reshape``'s output: ``target`` with its one -1 worked out from the elements."""
    known = count(n for n in target if n != -1)
    if list(target).count(-1) > 1 or (-1 not in target and known != count(shape)):
        raise ValueError(f"cannot reshape {shape} to {target}")
    if -1 not in target:
        return target
    if known == 0 or count(shape) % known:
        raise ValueError(f"cannot reshape {shape} to {target}")
    return tuple(count(shape) // known if n == -1 else n for n in target)


class Permute(Function):
    """z = x with its axes reordered;  dz/dx: gz with the inverse order"""

    option_types = {"axes": AXES}

    @staticmethod
    def forward(ctx, x, axes):
        if sorted(a % max(x.ndim, 1) for a in axes) != list(range(x.ndim)):
            raise ValueError(f"axes {tuple(axes)} are not a permutation of {x.ndim} dimensions")
        ctx.inverse = tuple(sorted(range(len(axes)), key=lambda i: axes[i] % x.ndim))
        return ctx.xp.transpose(x, axes)

    @staticmethod
    def backward(ctx, gz):
        return ctx.xp.transpose(gz, ctx.inverse)

    @classmethod
    def meta(cls, shapes, dtypes, axes):
        x = shapes[0]
        out = tuple(x[a % len(x)] for a in axes) if x else ()
        return Meta(count(x), out, cls.promotion.dtype(dtypes), count(x))


class Expand(Function):
    """z = x broadcast to a larger shape;  dz/dx: gz summed over the broadcast axes (that sum is
    the engine's central un-broadcast, so backward just passes gz on)"""

    option_types = {"shape": SHAPE}

    @staticmethod
    def forward(ctx, x, shape):
        return backend.expand(ctx.xp, x, shape)

    @staticmethod
    def backward(ctx, gz):
        return gz

    @classmethod
    def meta(cls, shapes, dtypes, shape):
        out = expanded(shapes[0], tuple(shape))
        return Meta(count(out), out, cls.promotion.dtype(dtypes), count(out))


def expanded(shape: Shape, target: Shape) -> Shape:
    """``Expand``'s output: -1 keeps the input's size, 1s broadcast (as torch's expand)."""
    if len(target) < len(shape):
        raise ValueError(f"cannot expand a {shape} input to {target}: fewer dims")
    padded = (None,) * (len(target) - len(shape)) + shape
    result = []
    for size, want in zip(padded, target):
        if want == -1:
            if size is None:
                raise ValueError(f"-1 in {target} stands for a new leading dim")
            want = size
        if size is not None and size not in (1, want):
            raise ValueError(f"cannot expand a {shape} input to {target}")
        result.append(want)
    return tuple(result)


class Clone(Function):
    """z = a copy of x (its own memory);  dz/dx = 1"""

    elementwise = True

    @staticmethod
    def forward(ctx, x):
        return x.copy()

    @staticmethod
    def backward(ctx, gz):
        return gz


class Cast(Function):
    """z = x converted to another dtype;  dz/dx: gz converted back"""

    sets_dtype = True  # Function.apply keeps the dtype it asked for (no type promotion)
    option_types = {"dtype": DTYPE}

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.input_dtype = x.dtype
        return x.astype(dtype)

    @staticmethod
    def backward(ctx, gz):
        return gz.astype(ctx.input_dtype)

    @classmethod
    def meta(cls, shapes, dtypes, dtype):
        return Meta(count(shapes[0]), shapes[0], dtype, count(shapes[0]))


class ToDevice(Function):
    """z = x copied to another device;  dz/dx: gz copied back"""

    elementwise = True  # (its output: its input, elsewhere)

    option_types = {"device": DEVICE}

    @staticmethod
    def forward(ctx, x, device):
        ctx.source = backend.device_of(x)
        return backend.to_device(x, device)

    @staticmethod
    def backward(ctx, gz):
        if ctx.create_graph:
            return gz.to(ctx.source)
        return backend.to_device(gz, ctx.source)


# ----------------------------------------------------------------------------- indexing


class Index(Function):
    """z = x[key];  dz/dx: zeros shaped like x with gz added at key (repeats accumulate)"""

    promotion = Promotion.FIRST_INPUT

    @staticmethod
    def forward(ctx, x, key):
        ctx.input_shape, ctx.key = x.shape, key
        z = x[key]
        if not isinstance(z, ctx.xp.ndarray):  # numpy gives a number for x[0] of a vector;
            z = x[(*key, Ellipsis) if isinstance(key, tuple) else (key, Ellipsis)]  # a 0-d view
        return z

    @staticmethod
    def backward(ctx, gz):
        return scatter_into_zeros(ctx.xp, gz, ctx.input_shape, ctx.key)

    @classmethod
    def meta(cls, shapes, dtypes, key):
        return indexing_meta(cls, shapes, dtypes, key)


def indexing_meta(cls: type, shapes: list[Shape], dtypes: list, key) -> Meta:
    """Index's, SetItem's and CopySlices' statement: a basic index (ints, slices, None, ...)
    selects at most what its input holds; integer or boolean arrays can select more, up to
    their broadcast size times the dims they leave."""
    parts = key if isinstance(key, tuple) else (key,)
    elements = sum(map(count, shapes))
    if any(isinstance(p, list) or backend.is_array(p) for p in parts):
        elements += index_bound(shapes[0], parts)
    return Meta(elements, None, cls.promotion.dtype(dtypes), elements)


class IndexAdd(Function):
    """z = zeros(shape) with x added at key;  dz/dx = gz[key]  (the gradient of Index)"""

    promotion = Promotion.FIRST_INPUT
    option_types = {"shape": SHAPE}

    @staticmethod
    def forward(ctx, x, shape, key):
        ctx.key = key
        return scatter_into_zeros(ctx.xp, x, shape, key)

    @staticmethod
    def backward(ctx, gz):
        return gz[ctx.key]

    @classmethod
    def meta(cls, shapes, dtypes, shape, key):
        out = tuple(shape)
        return Meta(count(out), out, cls.promotion.dtype(dtypes), count(out) + count(shapes[0]))


def scatter_into_zeros(xp, values, shape, key):
    """zeros(shape) with ``values`` added at ``key`` (repeated places accumulate): the gradient
    of picking values out (x[key], gather, topk). Given a Tensor (a backward with
    create_graph=True), the recorded op IndexAdd, whose own gradient picks them out again."""
    if isinstance(values, Tensor):
        return IndexAdd.apply(values, shape=shape, key=key)
    grad = xp.zeros(shape, dtype=values.dtype)
    backend.scatter_add(xp, grad, key, values)
    return grad


class SetItem(Function):
    """z = x with z[key] = value;  dz/dx = 1 outside key, 0 inside;  dz/dvalue = gz[key]

    (The out-of-place form of ``x[key] = value``, which x[key] = value recorded before views
    wrote into their base (CopySlices); kept so that traced graphs saved then still load.)"""

    promotion = Promotion.FIRST_INPUT
    option_types = {"value": NUMBER_OR_ARRAY}  # (an input, or an option)

    @staticmethod
    def forward(ctx, x, value, key):
        z = x.copy()
        z[key] = value
        outside = ctx.xp.ones(x.shape, dtype=x.dtype)
        outside[key] = 0
        ctx.key = key
        ctx.save_for_backward(outside)
        return z

    @staticmethod
    def backward(ctx, gz):
        (outside,) = ctx.saved_tensors
        need_x, need_value = ctx.needs_input_grad
        return (gz * outside if need_x else None), (gz[ctx.key] if need_value else None)

    @classmethod
    def meta(cls, shapes, dtypes, key):
        return indexing_meta(cls, shapes, dtypes, key)


class CopySlices(Function):
    """base[region] = src, in base's memory (an in-place op through a view);  dz/dbase = 1
    outside the region, 0 inside (PyTorch's CopySlices of an op such as y[0].mul_(w): that op's
    derivative inside);  dz/dsrc = 1 inside the region: gz[region] (PyTorch's: that op's
    derivative for its input w)

    The rule's parenthesised clauses are for PyTorch's node of the same name (dyngraph.torch
    draws it): PyTorch folds an in-place op through a view other than a plain copy into its
    CopySlices, whose inputs are then the base and that op's other inputs; dyngraph writes the
    op's result with a CopySlices of its own, so here the region always receives ``src``.

    NOTE [views and in-place] in tensor.py tells the story. The region is where the view lies
    in the base: its view ops (``steps``) replayed, then ``key`` (``x[1:] = y`` writes the key
    ``1:`` of the view ``x``)."""

    promotion = Promotion.FIRST_INPUT

    @staticmethod
    def forward(ctx, base, src, steps, key):
        ctx.steps, ctx.key, ctx.array_xp = steps, key, ctx.xp
        region(ctx.xp, base, steps)[key] = src  # every view of base sees it
        return base

    @staticmethod
    def backward(ctx, gz):
        # Where each element of the region lies in the base, as positions in the flattened base:
        # the same steps replayed on the numbers 0, 1, 2, ... (written once for arrays and, with
        # create_graph, for Tensors).
        xp = ctx.array_xp
        numbers = xp.arange(math.prod(gz.shape)).reshape(gz.shape)
        positions = region(xp, numbers, ctx.steps)[ctx.key]
        if any(op is Expand for op, _ in ctx.steps) and xp.unique(positions).size < positions.size:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location (an in-place op through an expand()ed view). "
                "Please clone() the tensor before performing the operation."
            )
        outside = xp.ones(numbers.size, dtype=gz.dtype)
        outside[positions] = 0
        need_base, need_src = ctx.needs_input_grad
        gbase = gz * outside.reshape(gz.shape) if need_base else None
        gsrc = gz.reshape(-1)[positions] if need_src else None
        return gbase, gsrc

    @classmethod
    def meta(cls, shapes, dtypes, steps, key):
        return indexing_meta(cls, shapes, dtypes, key)


def region(xp, array, steps):
    """``array`` seen through the view ops ``steps`` ((op, options), ...), as raw arrays."""
    for op, options in steps:
        ctx = op()
        ctx.xp = xp
        array = op.forward(ctx, array, **options)
    return array


# ----------------------------------------------------------------------------- joining


class Cat(Function):
    """z = x1, x2, ... joined along axis;  dz/dxi: the slice of gz where xi went"""

    option_types = {"axis": NEW_AXIS}

    @staticmethod
    def forward(ctx, *xs, axis=0):
        ctx.axis = axis % xs[0].ndim
        ctx.bounds = []
        start = 0
        for x in xs:
            ctx.bounds.append((start, start + x.shape[ctx.axis]))
            start += x.shape[ctx.axis]
        return ctx.xp.concatenate(xs, axis=axis)

    @staticmethod
    def backward(ctx, gz):
        lead = (slice(None),) * ctx.axis
        return tuple(gz[lead + (slice(a, b),)] for a, b in ctx.bounds)

    @classmethod
    def meta(cls, shapes, dtypes, axis=0):  # all of its inputs, side by side
        elements = sum(map(count, shapes))
        return Meta(elements, None, cls.promotion.dtype(dtypes), elements)


class Stack(Function):
    """z = x1, x2, ... stacked along a new axis;  dz/dxi = gz[..., i, ...]"""

    option_types = {"axis": NEW_AXIS}

    @staticmethod
    def forward(ctx, *xs, axis=0):
        ctx.axis, ctx.count = axis % (xs[0].ndim + 1), len(xs)
        return ctx.xp.stack(xs, axis=axis)

    @staticmethod
    def backward(ctx, gz):
        lead = (slice(None),) * ctx.axis
        return tuple(gz[lead + (i,)] for i in range(ctx.count))

    @classmethod
    def meta(cls, shapes, dtypes, axis=0):  # all of its inputs, side by side
        elements = sum(map(count, shapes))
        return Meta(elements, None, cls.promotion.dtype(dtypes), elements)


