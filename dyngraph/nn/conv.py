"""Convolution and pooling layers: Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
MaxPool2d, MaxUnpool1d, MaxUnpool2d; Unfold and Fold (im2col and col2im) (PyTorch's
``torch.nn``).

The modules hold the weights and the settings; the arithmetic is ``F.conv1d``, ``F.conv2d``
and ``F.max_pool2d``. Weights are laid out as in PyTorch, (out_channels, in_channels / groups,
*kernel_size), and initialised like PyTorch's: weight and bias from U(-k, k) with
k = 1 / sqrt(fan_in), fan_in = in_channels / groups * prod(kernel_size) (what PyTorch's
``kaiming_uniform_(a=sqrt(5))`` works out to).
"""

from __future__ import annotations

import math
from typing import Any

from ..tensor import Tensor
from . import functional as F
from .layers import uniform_parameter
from .module import Module


def _tuple(value: int | tuple[int, ...], n: int) -> tuple[int, ...]:
    return (value,) * n if isinstance(value, int) else tuple(value)


class _ConvNd(Module):
    """What every convolution layer holds. ``transposed`` (PyTorch's flag of the same name):
    a ConvTranspose's weight is (in_channels, out_channels / groups, *kernel_size), the
    layout of the convolution it is the transpose of."""

    dims = 0
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 output_padding: Any = 0) -> None:
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"in_channels ({in_channels}) and out_channels ({out_channels}) must both be "
                f"divisible by groups ({groups})"
            )
        if padding_mode != "zeros":
            raise NotImplementedError(f"padding_mode={padding_mode!r}: only 'zeros' is supported")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _tuple(kernel_size, self.dims)
        self.stride = _tuple(stride, self.dims)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, self.dims)
        self.dilation = _tuple(dilation, self.dims)
        self.output_padding = _tuple(output_padding, self.dims)
        self.groups = groups
        if self.transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        fan_in = shape[1] * math.prod(self.kernel_size)  # as PyTorch counts it, either way
        k = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        self.weight = uniform_parameter(shape, k, device, dtype)
        self.bias = uniform_parameter((out_channels,), k, device, dtype) if bias else None

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * self.dims:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * self.dims:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self.dims:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) inputs -> (N, C_out, L_out) (a cross-correlation,
    as in every deep-learning library).

    >>> conv = dg.nn.Conv1d(2, 4, kernel_size=3, padding=1)
    >>> conv(dg.randn(5, 2, 10)).shape
    (5, 4, 10)
    """

    dims = 1

    def forward(self, x: Tensor) -> Tensor:
        return F.conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over images (N, C_in, H, W) -> (N, C_out, H_out, W_out).

    >>> conv = dg.nn.Conv2d(1, 8, kernel_size=3)
    >>> conv(dg.randn(2, 1, 28, 28)).shape
    (2, 8, 26, 26)
    """

    dims = 2

    def forward(self, x: Tensor) -> Tensor:
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class Conv3d(_ConvNd):
    """3-D convolution over volumes or clips (N, C_in, D, H, W) -> (N, C_out, D_out, H_out,
    W_out).

    >>> conv = dg.nn.Conv3d(1, 4, kernel_size=3, padding=1)
    >>> conv(dg.randn(2, 1, 5, 6, 6)).shape
    (2, 4, 5, 6, 6)
    """

    dims = 3

    def forward(self, x: Tensor) -> Tensor:
        return F.conv3d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution: weight (in_channels, out_channels / groups, *kernel_size),
    initialised as PyTorch's, U(-k, k) with k = 1 / sqrt(out_channels / groups prod(kernel))."""

    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def forward(self, x: Tensor) -> Tensor:
        transpose = F.conv_transpose1d if self.dims == 1 else F.conv_transpose2d
        return transpose(x, self.weight, self.bias, self.stride, self.padding,
                         self.output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """The transpose of Conv1d (WaveNet-style upsampling; ``F.conv_transpose1d``): (N, C_in,
    L) -> (N, C_out, (L - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1).

    >>> dg.nn.ConvTranspose1d(2, 3, kernel_size=4, stride=2, padding=1)(dg.randn(1, 2, 5)).shape
    (1, 3, 10)
    """

    dims = 1


class ConvTranspose2d(_ConvTransposeNd):
    """The transpose of Conv2d (DCGAN's generator; ``F.conv_transpose2d``).

    >>> dg.nn.ConvTranspose2d(8, 3, kernel_size=4, stride=2, padding=1)(dg.randn(1, 8, 4, 4)).shape
    (1, 3, 8, 8)
    """

    dims = 2


class MaxPool2d(Module):
    """The maximum over each kernel_size window of an image (N, C, H, W); ``stride`` defaults
    to ``kernel_size`` (windows side by side).

    >>> dg.nn.MaxPool2d(2)(dg.randn(1, 3, 8, 8)).shape
    (1, 3, 4, 4)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False, ceil_mode: bool = False
                 ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, x: Tensor) -> Any:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class _MaxUnpoolNd(Module):
    """Puts max_pool's maxima back where they were (``F.max_unpool1d`` / ``max_unpool2d``)."""

    dims = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self.dims)
        self.stride = self.kernel_size if stride is None else _tuple(stride, self.dims)
        self.padding = _tuple(padding, self.dims)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        unpool = F.max_unpool1d if self.dims == 1 else F.max_unpool2d
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The inverse of MaxPool1d(return_indices=True): (N, C, L) and the indices -> (N, C,
    (L - 1) stride - 2 padding + kernel_size), zeros where no maximum was."""

    dims = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The inverse of MaxPool2d(return_indices=True) (SegNet's decoder).

    >>> pool, unpool = dg.nn.MaxPool2d(2, return_indices=True), dg.nn.MaxUnpool2d(2)
    >>> y, indices = pool(x)
    >>> unpool(y, indices).shape == x.shape
    True
    """

    dims = 2


class Unfold(Module):
    """The sliding windows of images (N, C, H, W) as columns (N, C kh kw, L): ``F.unfold``."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Columns (N, C kh kw, L) added back into images (N, C, *output_size): ``F.fold``."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
