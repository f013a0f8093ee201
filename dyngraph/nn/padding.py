"""Padding layers (PyTorch's ``torch.nn``): ZeroPad1d/2d, ConstantPad1d/2d, ReflectionPad1d/2d,
ReplicationPad1d/2d. Each holds its padding as PyTorch does, ``(left, right)`` or ``(left,
right, top, bottom)`` (an int: the same on every side), and calls ``F.pad`` with its mode.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import functional as F
from .module import Module


class _PadNd(Module):
    """``F.pad(x, self.padding, mode, value)``, padding the last ``dims`` dimensions."""

    dims = 0
    mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = (padding,) * (2 * self.dims) if isinstance(padding, int) else tuple(
            padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode, getattr(self, "value", None))

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    """Pads with ``value``."""

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``: (*, L) -> (*, left + L + right)."""

    dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with ``value``: (*, H, W) -> (*, top + H + bottom, left + W +
    right)."""

    dims = 2


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Zeros on both ends of the last dim."""

    dims = 1


class ZeroPad2d(_ZeroPadNd):
    """A border of zeros around images (*, H, W).

    >>> dg.nn.ZeroPad2d((1, 1, 2, 0))(dg.ones(1, 1, 2, 2)).shape
    (1, 1, 4, 4)
    """

    dims = 2


class ReflectionPad1d(_PadNd):
    """The last dim mirrored at its ends, the edge not repeated (3 2 | 1 2 3 4 | 3 2);
    (C, L) or (N, C, L) inputs."""

    dims = 1
    mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Images (C, H, W) or (N, C, H, W) mirrored at their borders, the edge not repeated (a
    border with no false edge, as style transfer's and pix2pix's generators pad)."""

    dims = 2
    mode = "reflect"


class ReplicationPad1d(_PadNd):
    """The last dim's end values repeated outwards; (C, L) or (N, C, L) inputs."""

    dims = 1
    mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Images (C, H, W) or (N, C, H, W) with their border pixels repeated outwards."""

    dims = 2
    mode = "replicate"
