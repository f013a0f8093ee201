"""Convolution (1, 2 or 3 spatial dimensions) and max pooling, one node each.

Both cut the (padded) input into patches, im2col-style, with one strided slice per kernel
offset: ``patches[n, c, i, j, h, w] = x_padded[n, c, h*stride + i*dilation, w*stride +
j*dilation]``. A convolution is then one einsum of the patches with the weight; its backward is
two einsums and the patches' gradient added back into place (``_add_patches``).
"""

from __future__ import annotations

import itertools

from .. import backend
from ..function import Function
from ..meta import PADDING, POSITIVE_INT, WINDOW, Meta, count, is_int
from ..tensor import Tensor

_SPATIAL = "hwd"  # einsum letters of the output positions (up to 3 spatial dims)
_KERNEL = "ijk"  # einsum letters of the kernel offsets


def _window(offset, stride, dilation, count):
    """The slice of a padded axis that kernel offset ``offset`` sees at each output position."""
    start = offset * dilation
    return slice(start, start + stride * (count - 1) + 1, stride)


def _out_size(n, k, stride, padding, dilation):
    return (n + 2 * padding - dilation * (k - 1) - 1) // stride + 1


def _pad(xp, x, padding, fill):
    """x with ``padding[d]`` values ``fill`` on both sides of each spatial dim (no xp.pad: a
    zeros-and-slice copy is the same on numpy and CuPy)."""
    if not any(padding):
        return x
    lead = x.shape[:2]
    shape = lead + tuple(n + 2 * p for n, p in zip(x.shape[2:], padding))
    out = xp.full(shape, fill, dtype=x.dtype)
    inner = tuple(slice(p, p + n) for p, n in zip(padding, x.shape[2:]))
    out[(slice(None), slice(None)) + inner] = x
    return out


def _patches(xp, x, kernel, stride, padding, dilation, out, fill=0):
    """patches of shape (N, C, *kernel, *out) from x of shape (N, C, *spatial). Given a Tensor
    (a backward with create_graph=True), the recorded op Patches."""
    if isinstance(x, Tensor):
        return Patches.apply(x, kernel=kernel, stride=stride, padding=padding,
                             dilation=dilation, out=out)
    xpad = _pad(xp, x, padding, fill)
    patches = xp.empty(x.shape[:2] + tuple(kernel) + tuple(out), dtype=x.dtype)
    for offsets in itertools.product(*[range(k) for k in kernel]):
        window = tuple(_window(o, s, d, m) for o, s, d, m in zip(offsets, stride, dilation, out))
        patches[(slice(None), slice(None)) + offsets] = xpad[(slice(None), slice(None)) + window]
    return patches


def _add_patches(xp, gpatches, input_shape, kernel, stride, padding, dilation, out):
    """The gradient of ``_patches``: each patch's gradient added back where it was cut from
    (overlapping windows accumulate), then the padding cut off. Given a Tensor (a backward
    with create_graph=True), the recorded op AddPatches."""
    if isinstance(gpatches, Tensor):
        return AddPatches.apply(gpatches, input_shape=input_shape, kernel=kernel, stride=stride,
                                padding=padding, dilation=dilation, out=out)
    padded = input_shape[:2] + tuple(n + 2 * p for n, p in zip(input_shape[2:], padding))
    grad = xp.zeros(padded, dtype=gpatches.dtype)
    for offsets in itertools.product(*[range(k) for k in kernel]):
        window = tuple(_window(o, s, d, m) for o, s, d, m in zip(offsets, stride, dilation, out))
        grad[(slice(None), slice(None)) + window] += gpatches[(slice(None), slice(None)) + offsets]
    inner = tuple(slice(p, p + n) for p, n in zip(padding, input_shape[2:]))
    return grad[(slice(None), slice(None)) + inner]


def _geometry(ctx, x, kernel, stride, padding, dilation):
    spatial = x.ndim - 2
    ctx.kernel = tuple(kernel)
    ctx.stride = tuple(stride)
    ctx.padding = tuple(padding)
    ctx.dilation = tuple(dilation)
    ctx.input_shape = x.shape
    ctx.out = tuple(
        _out_size(n, k, s, p, d)
        for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation)
    )
    if any(m <= 0 for m in ctx.out):
        raise RuntimeError(
            f"the kernel {tuple(kernel)} (dilation {tuple(dilation)}) is larger than the padded "
            f"input {tuple(n + 2 * p for n, p in zip(x.shape[2:], padding))}: the output would "
            "be empty"
        )
    return _KERNEL[:spatial], _SPATIAL[:spatial]


class Conv(Function):
    """z[n, o, h, w] = b[o] + sum_{c, i, j} W[o, c, i, j] x_pad[n, c, h*s + i, w*s + j];
    dL/dx = gz times W added back over the patches,  dL/dW = einsum(gz, patches),  dL/db = sum gz
    (1, 2 or 3 spatial dims: F.conv1d, F.conv2d, F.conv3d; with groups, each group of channels
    on its own)"""

    option_types = {"stride": WINDOW, "padding": PADDING, "dilation": WINDOW,
                    "groups": POSITIVE_INT}

    @staticmethod
    def forward(ctx, x, weight, *bias, stride, padding, dilation, groups=1):
        k, s = _geometry(ctx, x, weight.shape[2:], stride, padding, dilation)
        patches = _patches(ctx.xp, x, ctx.kernel, ctx.stride, ctx.padding, ctx.dilation, ctx.out)
        n, c, o = x.shape[0], x.shape[1], weight.shape[0]
        # one group axis g: patches (n, g, c/g, kernel, out), weight (g, o/g, c/g, kernel)
        patches = patches.reshape((n, groups, c // groups) + patches.shape[2:])
        ctx.terms = (f"ngc{k}{s}", f"goc{k}", f"ngo{s}")  # patches, weight, output
        ctx.grouped = (patches.shape, (groups, o // groups) + weight.shape[1:])
        # NOTE: the input and the weight as they came, and the patches made from x: with
        # create_graph, the patches are cut again from x by a recorded op (made here, they
        # would be constants of the graph, and the second derivative would miss them)
        ctx.save_for_backward(x, weight, patches)
        grouped_weight = weight.reshape(ctx.grouped[1])
        z = ctx.xp.einsum(f"{ctx.terms[0]},{ctx.terms[1]}->{ctx.terms[2]}", patches,
                          grouped_weight)
        z = z.reshape((n, o) + ctx.out)
        if bias:
            z = z + bias[0].reshape((1, -1) + (1,) * len(s))
        return z

    @staticmethod
    def backward(ctx, gz):
        x, weight, patches = ctx.saved_tensors
        xp, (tp, tw, tz) = ctx.xp, ctx.terms
        need = ctx.needs_input_grad
        if ctx.create_graph and need[1]:
            patches = _patches(xp, x, ctx.kernel, ctx.stride, ctx.padding, ctx.dilation,
                               ctx.out).reshape(ctx.grouped[0])
        weight = weight.reshape(ctx.grouped[1])
        g = gz.reshape(gz.shape[:1] + weight.shape[:2] + gz.shape[2:])  # (n, g, o/g, out)
        gx = gw = None
        if need[0]:
            gpatches = xp.einsum(f"{tz},{tw}->{tp}", g, weight)
            gpatches = gpatches.reshape(ctx.input_shape[:2] + gpatches.shape[3:])
            gx = _add_patches(xp, gpatches, ctx.input_shape, ctx.kernel, ctx.stride, ctx.padding,
                              ctx.dilation, ctx.out)
        if need[1]:
            gw = xp.einsum(f"{tz},{tp}->{tw}", g, patches)
            gw = gw.reshape((-1,) + gw.shape[2:])
        if len(need) == 2:
            return gx, gw
        gb = gz.sum(axis=(0,) + tuple(range(2, gz.ndim))) if need[2] else None
        return gx, gw, gb

    @classmethod
    def meta(cls, shapes, dtypes, stride, padding, dilation, groups=1):
        # the gathered windows, times the output channels of each group
        elements = window_count(shapes[0], shapes[1][2:], stride, padding, dilation)
        elements += sum(map(count, shapes))
        work = elements * max(shapes[1][0] // max(groups, 1), 1)
        return Meta(elements, None, cls.promotion.dtype(dtypes), work)


class MaxPool(Function):
    """z[n, c, h, w] = max over the window at (h, w) of x;  dz/dx = 1 at each window's maximum
    (the first one on a tie), else 0; overlapping windows add up  (F.max_pool1d / max_pool2d)"""

    option_types = {"kernel_size": WINDOW, "stride": WINDOW, "padding": PADDING,
                    "dilation": WINDOW}

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, dilation):
        _geometry(ctx, x, kernel_size, stride, padding, dilation)
        windows, winner = _windows_and_winners(ctx.xp, x, ctx.kernel, ctx.stride, ctx.padding,
                                               ctx.dilation, ctx.out)
        ctx.save_for_backward(winner)
        return ctx.xp.take_along_axis(windows, winner[:, :, None], axis=2)[:, :, 0]

    @staticmethod
    def backward(ctx, gz):
        (winner,) = ctx.saved_tensors
        xp = backend.get_array_module(winner)  # the winners are constants, also for Tensors
        size = 1
        for k in ctx.kernel:
            size *= k
        offsets = xp.arange(size).reshape((1, 1, -1) + (1,) * len(ctx.out))
        gwindows = gz[:, :, None] * (offsets == winner[:, :, None])
        gpatches = gwindows.reshape(gz.shape[:2] + ctx.kernel + ctx.out)
        return _add_patches(xp, gpatches, ctx.input_shape, ctx.kernel, ctx.stride, ctx.padding,
                            ctx.dilation, ctx.out)

    @classmethod
    def meta(cls, shapes, dtypes, kernel_size, stride, padding, dilation):
        kernel = per_dim(kernel_size, len(shapes[0]) - 2)
        elements = window_count(shapes[0], kernel, stride, padding, dilation)
        elements += sum(map(count, shapes))
        return Meta(elements, None, cls.promotion.dtype(dtypes), elements)


def _windows_and_winners(xp, x, kernel, stride, padding, dilation, out):
    """The windows of x (N, C, kernel offsets in one axis, *out), the padding never winning,
    and the offset of each window's maximum (the first one on a tie)."""
    fill = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
    patches = _patches(xp, x, kernel, stride, padding, dilation, out, fill=fill)
    windows = patches.reshape(x.shape[:2] + (-1,) + tuple(out))
    return windows, windows.argmax(axis=2)


def window_positions(xp, spatial_shape, kernel, stride, padding, dilation):
    """For each kernel offset (one axis) and output position (*out), the flat index into a
    plane of ``spatial_shape`` (``h * W + w`` for images) of the element the window sees there,
    -1 in the padding: the plane's own indices cut into windows as ``_patches`` cuts x. The
    table behind max_pool's indices and F.unfold / F.fold."""
    out = tuple(_out_size(n, k, s, p, d)
                for n, k, s, p, d in zip(spatial_shape, kernel, stride, padding, dilation))
    plane = xp.arange(count(spatial_shape), dtype=xp.int64).reshape((1, 1) + tuple(spatial_shape))
    positions = _patches(xp, plane, kernel, stride, padding, dilation, out, fill=-1)
    return positions.reshape((-1,) + out)


def max_pool_indices(xp, x, kernel, stride, padding, dilation):
    """Where each window's maximum lies, as PyTorch's ``return_indices=True`` says it: the flat
    index into the input's plane, per batch item and channel (each window's winner picks its
    position from ``window_positions``)."""
    positions = window_positions(xp, x.shape[2:], kernel, stride, padding, dilation)
    _, winner = _windows_and_winners(xp, x, kernel, stride, padding, dilation,
                                     positions.shape[1:])
    positions = xp.broadcast_to(positions, winner.shape[:2] + positions.shape)
    return xp.take_along_axis(positions, winner[:, :, None], axis=2)[:, :, 0]


def window_count(x, kernel, stride, padding, dilation):
    """How many elements Conv's and MaxPool's gathered windows hold: (n, c, kernel..., out...)."""
    spatial = len(x) - 2
    stride, padding, dilation = (per_dim(v, spatial) for v in (stride, padding, dilation))
    if spatial < 1 or len(kernel) != spatial:
        raise ValueError(f"a {len(kernel)}-d window does not fit an input of shape {x}")
    out = [_out_size(n, k, s, p, d) for n, k, s, p, d in zip(x[2:], kernel, stride, padding,
                                                             dilation)]
    if any(m <= 0 for m in out):
        raise ValueError(f"the window is larger than the padded input {x}")
    return x[0] * x[1] * count(kernel) * count(out)


def per_dim(value, spatial):
    """A window option as one value per spatial dim."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * spatial
    if len(values) != spatial or not all(is_int(v) and v >= 0 for v in values):
        raise ValueError(f"{value!r} is not {spatial} non-negative integer(s)")
    return values


class Patches(Function):
    """z = the patches of x (im2col: ``_patches``);  dz/dx: each patch's gradient added back
    where it was cut from (``_add_patches``). Recorded only in a backward with create_graph."""

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, dilation, out):
        ctx.geometry = (x.shape, kernel, stride, padding, dilation, out)
        return _patches(ctx.xp, x, kernel, stride, padding, dilation, out)

    @staticmethod
    def backward(ctx, gz):
        return _add_patches(ctx.xp, gz, *ctx.geometry)


class AddPatches(Function):
    """z = patches added back into an input's shape (col2im: ``_add_patches``);  dz/dpatches:
    the patches of gz (``_patches``), its transpose. Recorded only with create_graph."""

    @staticmethod
    def forward(ctx, gpatches, input_shape, kernel, stride, padding, dilation, out):
        ctx.geometry = (kernel, stride, padding, dilation, out)
        return _add_patches(ctx.xp, gpatches, input_shape, kernel, stride, padding, dilation, out)

    @staticmethod
    def backward(ctx, gz):
        return _patches(ctx.xp, gz, *ctx.geometry)
