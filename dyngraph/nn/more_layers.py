"""Modules counted in the learners' material (issue 37, item 3; docs/pytorch_inventory.md):
``SiLU``, ``Dropout2d``, ``AvgPool2d``, ``AdaptiveAvgPool2d``; the lazy layers d2l builds
its models with (``LazyLinear``, ``LazyConv2d``, ``LazyBatchNorm1d``, ``LazyBatchNorm2d``),
which learn their input size from the first batch; ``GroupNorm``, ``PixelShuffle``,
``Upsample`` and ``UpsamplingNearest2d`` (``ConvTranspose2d`` is conv.py's); ``AdaptiveMaxPool1d``
and ``AdaptiveMaxPool2d``.
"""

from __future__ import annotations

from typing import Any

from .. import factories
from ..tensor import Tensor
from . import functional as F
from .conv import Conv2d
from .layers import Linear
from .module import Module, Parameter
from .norm import BatchNorm1d, BatchNorm2d


class SiLU(Module):
    """z = x * sigmoid(x)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x)


class Dropout2d(Module):
    """Drop whole channels of (N, C, H, W) with probability ``p`` while training."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout2d(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace=False"


class AvgPool2d(Module):
    """The mean over each kernel_size window (``F.avg_pool2d``)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """The mean over windows that make an output of ``output_size`` whatever the input's."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


# ----------------------------------------------------------------------------- lazy layers

# NOTE [lazy layers] PyTorch's LazyLinear(out_features) has no input size until its first call:
# its parameters exist (``parameters()`` lists them, so an optimizer made before that call
# holds them) but are empty; the first call fills them in place, with the initialisation of
# the layer it becomes, and the module becomes that layer (``type(m) is nn.Linear``). Here
# the same: each placeholder is an empty Parameter whose array is replaced (``.data =``) by
# the values of a freshly built layer of the right size, so it stays the object an optimizer
# holds; buffers and plain attributes (``in_features``) are taken over, and the class
# changes.


class _LazyLayer(Module):
    becomes: type[Module]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self._lazy_args = (args, kwargs)
        template = self.becomes(0, *args, **kwargs)
        for name, param in template.named_parameters(recurse=False):
            setattr(self, name, Parameter(param.array[:0].reshape(0)))
        for name, param in vars(template).items():
            if name not in vars(self) and param is None:
                setattr(self, name, None)  # bias=False: the attribute exists, as None

    def input_size(self, x: Tensor) -> int:
        raise NotImplementedError

    def forward(self, x: Tensor) -> Any:
        args, kwargs = self._lazy_args
        built = self.becomes(self.input_size(x), *args, **kwargs)
        params = dict(self.named_parameters(recurse=False))
        for name, value in vars(built).items():
            if name.startswith("_") or name == "training":
                continue
            setattr(self, name, value)
        for name, param in built.named_parameters(recurse=False):
            params[name].data = param.data
            setattr(self, name, params[name])
        for name, buffer in built.named_buffers(recurse=False):
            self.register_buffer(name, buffer)
        del self._lazy_args
        self.__class__ = self.becomes
        return self.forward(x)

    def has_uninitialized_params(self) -> bool:
        return True


class LazyLinear(_LazyLayer):
    """``Linear`` whose ``in_features`` is the last size of its first input (d2l's
    ``nn.LazyLinear(10)``; NOTE [lazy layers])."""

    becomes = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(out_features, bias=bias, device=device, dtype=dtype)

    def input_size(self, x: Tensor) -> int:
        return x.shape[-1]


class LazyConv2d(_LazyLayer):
    """``Conv2d`` whose ``in_channels`` is the channel count of its first input."""

    becomes = Conv2d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)

    def input_size(self, x: Tensor) -> int:
        return x.shape[-3]


class _LazyBatchNorm(_LazyLayer):
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(eps, momentum, affine, track_running_stats, device=device, dtype=dtype)

    def input_size(self, x: Tensor) -> int:
        return x.shape[1]


class LazyBatchNorm1d(_LazyBatchNorm):
    """``BatchNorm1d`` whose ``num_features`` is the size of its first input's dimension 1."""

    becomes = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm):
    """``BatchNorm2d`` whose ``num_features`` is the channel count of its first input."""

    becomes = BatchNorm2d


# ----------------------------------------------------------------------------- more layers


class GroupNorm(Module):
    """Normalise over groups of channels (``F.group_norm``); weight ones and bias zeros, one
    per channel."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        self.weight = (Parameter(factories.ones(num_channels, dtype=dtype, device=device))
                       if affine else None)
        self.bias = (Parameter(factories.zeros(num_channels, dtype=dtype, device=device))
                     if affine else None)

    def forward(self, x: Tensor) -> Tensor:
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r) (``F.pixel_shuffle``)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class Upsample(Module):
    """Resize by ``scale_factor`` or to ``size`` (``F.interpolate``: mode "nearest",
    "linear", "bilinear" or "trilinear")."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.size = size
        self.scale_factor = None if scale_factor is None else (
            float(scale_factor) if isinstance(scale_factor, (int, float)) else
            tuple(float(f) for f in scale_factor))
        self.mode = mode
        self.align_corners = align_corners

    def forward(self, x: Tensor) -> Tensor:
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners)

    def extra_repr(self) -> str:
        what = (f"scale_factor={self.scale_factor}" if self.scale_factor is not None
                else f"size={self.size}")
        return f"{what}, mode='{self.mode}'"


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode="nearest")`` for images."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


# ------------------------------------ more activations and distances as modules (fresh programs)


class _Activation(Module):
    """An elementwise activation with its settings, calling ``F.<name>`` with them."""

    function: str = ""

    def __init__(self, **settings: Any) -> None:
        super().__init__()
        self.settings = settings

    def forward(self, x: Tensor) -> Tensor:
        return getattr(F, self.function)(x, **self.settings)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.settings.items())


class ELU(_Activation):
    """x where x > 0, else alpha (exp(x) - 1)."""

    function = "elu"

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(alpha=alpha, inplace=inplace)


class CELU(_Activation):
    """x where x > 0, else alpha (exp(x / alpha) - 1)."""

    function = "celu"

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(alpha=alpha, inplace=inplace)


class SELU(_Activation):
    """The self-normalising ELU."""

    function = "selu"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class Hardtanh(_Activation):
    """x clamped to [min_val, max_val]."""

    function = "hardtanh"

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__(min_val=min_val, max_val=max_val, inplace=inplace)


class ReLU6(_Activation):
    """min(max(x, 0), 6)."""

    function = "relu6"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class Hardsigmoid(_Activation):
    """relu6(x + 3) / 6."""

    function = "hardsigmoid"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class Hardswish(_Activation):
    """x * relu6(x + 3) / 6."""

    function = "hardswish"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class Threshold(_Activation):
    """x where x > threshold, else value."""

    function = "threshold"

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__(threshold=threshold, value=value, inplace=inplace)


class Hardshrink(_Activation):
    """x where |x| > lambd, else 0."""

    function = "hardshrink"

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__(lambd=lambd)


class Softshrink(_Activation):
    """x moved lambd towards 0 where |x| > lambd, else 0."""

    function = "softshrink"

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__(lambd=lambd)


class Tanhshrink(_Activation):
    """x - tanh(x)."""

    function = "tanhshrink"


class Mish(_Activation):
    """x * tanh(softplus(x))."""

    function = "mish"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace=inplace)


class Softsign(_Activation):
    """x / (1 + |x|)."""

    function = "softsign"


class Softplus(_Activation):
    """log(1 + exp(beta x)) / beta."""

    function = "softplus"

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__(beta=beta, threshold=threshold)


class LogSigmoid(_Activation):
    """log(sigmoid(x))."""

    function = "logsigmoid"


class GLU(_Activation):
    """a * sigmoid(b), the halves of the input along ``dim``."""

    function = "glu"

    def __init__(self, dim: int = -1) -> None:
        super().__init__(dim=dim)


class Softmin(_Activation):
    """softmax(-x) along ``dim``."""

    function = "softmin"

    def __init__(self, dim: int | None = None) -> None:
        super().__init__(dim=dim)


class PReLU(Module):
    """x where x >= 0, else a * x, the slope a learned (one, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(factories.full((num_parameters,), init, dtype=dtype))

    def forward(self, x: Tensor) -> Tensor:
        return F.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class CosineSimilarity(Module):
    """F.cosine_similarity(x1, x2, dim, eps)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """F.pairwise_distance(x1, x2, p, eps, keepdim)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (the inverse of Flatten)."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        dim = self.dim + x.ndim if self.dim < 0 else self.dim
        return x.reshape(*x.shape[:dim], *self.unflattened_size, *x.shape[dim + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class MaxPool1d(Module):
    """The maximum over each window of ``kernel_size`` along the last dim of (N, C, L)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False, ceil_mode: bool = False
                 ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, x: Tensor) -> Any:
        return F.max_pool1d(x, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """The mean over each window of ``kernel_size`` along the last dim of (N, C, L)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AdaptiveMaxPoolNd(Module):
    """The maximum over ``output_size`` windows tiling the input (``F.adaptive_max_pool1d``
    or ``F.adaptive_max_pool2d``); with ``return_indices``, where each maximum is too."""

    dims = 0

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, x: Tensor) -> Any:
        pool = F.adaptive_max_pool1d if self.dims == 1 else F.adaptive_max_pool2d
        return pool(x, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """The maximum over ``output_size`` windows tiling the last dim of (N, C, L) or (C, L)."""

    dims = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """The maximum over output_size windows tiling each image (N, C, H, W) or (C, H, W).

    >>> dg.nn.AdaptiveMaxPool2d((2, 3))(dg.randn(1, 4, 7, 9)).shape
    (1, 4, 2, 3)
    """

    dims = 2


class AdaptiveAvgPool1d(Module):
    """The mean over ``output_size`` windows tiling the last dim (1: one mean per channel)."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(x, self.output_size)
