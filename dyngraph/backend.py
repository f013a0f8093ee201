"""Array backends: numpy on the CPU, CuPy on a CUDA GPU.

Every op is written once against an array module ``xp`` (chainer's ``get_array_module``): it calls
``xp.exp(x)``, never ``np.exp(x)``. This module is the only one that imports cupy, and it does so
lazily, the first time a GPU is asked for, so ``import dyngraph`` never loads it.
"""

from __future__ import annotations

import math
import sys
from types import ModuleType

import numpy as np

from .extras import install_command
from .spine.arrays import CPU, CUDA, device_of, to_numpy  # noqa: F401 - re-exported

_cupy: ModuleType | None = None
_cupy_checked = False

GPU_INSTALL_HINT = f"install CuPy with `{install_command('gpu')}` on a machine with a CUDA GPU"


def _load_cupy() -> ModuleType | None:
    """Import cupy once; None when it is not installed or no CUDA device is present."""
    global _cupy, _cupy_checked
    if not _cupy_checked:
        _cupy_checked = True
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() > 0:
                _cupy = cupy
        except Exception:  # not installed, no driver, no device: all mean "no GPU"
            _cupy = None
    return _cupy


def cuda_is_available() -> bool:
    """True when CuPy is installed and a CUDA device is present."""
    return _load_cupy() is not None


def normalize_device(device: object) -> str:
    """'cpu' or 'cuda' from what a user may pass ('cuda:0', 'CPU', None)."""
    if device is None:
        return CPU
    name = str(device).lower()
    if name == CPU:
        return CPU
    if name == CUDA or name.startswith("cuda:"):
        return CUDA
    raise ValueError(f"unknown device {device!r}: use 'cpu' or 'cuda'")


class device(str):  # noqa: N801 - PyTorch's name
    """What ``torch.device("cpu")`` is for: dyngraph's devices are the names 'cpu' and 'cuda',
    so a device is its name (a str, equal to "cpu"), with PyTorch's ``type`` and ``index``
    (``torch.device("cpu").type`` and ``x.device.type`` in a program run here too)."""

    __slots__ = ()  # a name, nothing more: no attributes of its own

    def __new__(cls, type: str) -> device:  # noqa: A002 - PyTorch's argument name
        return super().__new__(cls, normalize_device(type))

    @property
    def type(self) -> str:  # noqa: A003 - PyTorch's attribute
        return str(self)

    @property
    def index(self) -> None:
        return None


def module_for(device: str) -> ModuleType:
    """The array module for a device name; a clear error when CUDA is asked for without it."""
    if device == CPU:
        return np
    cupy = _load_cupy()
    if cupy is None:
        raise RuntimeError(
            f"device 'cuda' was requested but no CUDA GPU is usable: {GPU_INSTALL_HINT}"
        )
    return cupy


def get_array_module(array: object) -> ModuleType:
    """numpy for numpy arrays (and anything else), cupy for cupy arrays."""
    if type(array) is np.ndarray or _cupy is None:
        return np
    return _cupy if isinstance(array, _cupy.ndarray) else np


def xp_of(array_type: type) -> ModuleType:
    """The array module for an array *type* (numpy.ndarray or cupy.ndarray)."""
    if array_type is np.ndarray or _cupy is None:
        return np
    return _cupy if issubclass(array_type, _cupy.ndarray) else np


def is_array(value: object) -> bool:
    """True for an array a Tensor can hold as it is: a numpy array (subclasses included) or a
    cupy array. False for Python numbers, numpy scalars, lists.

    NOTE: by type, not by an attribute such as ``__array_namespace__`` (numpy 1.x arrays lack
    it). A cupy array can only exist once cupy is imported, so this looks cupy up in
    sys.modules and never imports it."""
    if isinstance(value, np.ndarray):
        return True
    cupy = sys.modules.get("cupy")
    return cupy is not None and isinstance(value, cupy.ndarray)


def expand(xp: ModuleType, array: object, shape: tuple) -> object:
    """``array`` broadcast to ``shape`` without a copy, writable as PyTorch's expand() is
    (numpy's broadcast_to is read-only; in-place ops on repeated elements are refused by the
    Tensor that writes, not here)."""
    expanded = xp.broadcast_to(array, shape)
    if isinstance(expanded, np.ndarray):
        expanded = np.lib.stride_tricks.as_strided(array, expanded.shape, expanded.strides)
    return expanded


def data_address(array: object) -> int:
    """The address of an array's first element (numpy's or CuPy's memory)."""
    interface = getattr(array, "__array_interface__", None)
    return interface["data"][0] if interface is not None else array.data.ptr  # type: ignore


def device_of_module(xp: ModuleType) -> str:
    """The device of an array module: "cpu" for numpy, "cuda" for cupy (a node keeps its
    inputs' module, ``Function.xp``)."""
    return CPU if xp is np else CUDA


def to_device(array: object, device: str) -> object:
    """A copy of ``array`` on ``device`` (the same object when it is already there)."""
    if device_of(array) == device:
        return array
    if device == CPU:
        return array.get()  # cupy -> numpy: a device-to-host copy
    return module_for(CUDA).asarray(array)


def scatter_add(xp: ModuleType, target: object, index: object, values: object) -> None:
    """``target[index] += values`` with repeated indices accumulated (the gradient of indexing)."""
    if xp is np:
        np.add.at(target, index, values)
    else:
        import cupyx  # only reached with cupy arrays, so cupy is installed

        cupyx.scatter_add(target, index, values)


def erf(array: object) -> object:
    """The error function, elementwise, on either device (numpy has none: math.erf per element
    on the CPU, which is exact to double precision; cupyx.scipy.special.erf on a GPU)."""
    if device_of(array) == CUDA:
        from cupyx.scipy.special import erf as cupy_erf

        return cupy_erf(array)
    values = np.frompyfunc(math.erf, 1, 1)(array)
    return np.asarray(values, dtype=np.result_type(array, np.float32))
