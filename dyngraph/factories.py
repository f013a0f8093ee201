"""Making tensors: dg.tensor, zeros, ones, full, randn, rand, arange, linspace, eye, *_like.

Like PyTorch: Python floats become float32 (the default dtype), Python ints int64; a numpy
array keeps its dtype. ``manual_seed`` makes randn / rand / dropout repeatable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend
from .tensor import DEFAULT_FLOAT, Tensor, resolve_dtype

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)

_rng = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed dyngraph's random numbers (randn, rand, dropout)."""
    global _rng
    _rng = np.random.default_rng(seed)


def generator() -> np.random.Generator:
    return _rng


def tensor(
    data: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (a number, nested lists, an array).

    >>> x = dg.tensor([[1., 2.]], requires_grad=True, name="x")
    """
    if isinstance(data, Tensor):
        data = data.array
    source = backend.device_of(data)
    if source == backend.CPU and not isinstance(data, np.ndarray):  # Python numbers and lists
        try:
            data = np.asarray(data)
        except ValueError as exc:
            raise ValueError(f"could not make a tensor from this data: {exc}") from None
        if dtype is None and data.dtype == np.float64:
            dtype = DEFAULT_FLOAT  # Python floats -> the default float32
    if data.dtype.kind not in "biufc":  # objects, strings, dates: not numbers
        raise TypeError(
            f"could not make a tensor from data of dtype {data.dtype}: use numbers, or (nested) "
            "lists or arrays of numbers"
        )
    device = source if device is None else backend.normalize_device(device)
    xp = backend.module_for(device)
    dtype = None if dtype is None else resolve_dtype(dtype)
    array = xp.array(backend.to_device(data, device), dtype=dtype, copy=True)
    return Tensor(array, requires_grad=requires_grad, name=name)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing ``array``'s memory (no copy), as ``torch.from_numpy``: changes to one
    are seen in the other. numpy's writes are not counted by the version counter (NOTE
    [version counters]): change the values through the tensor's in-place ops instead.

    >>> a = np.array([1.0, 2.0]); t = dg.from_numpy(a); a[0] = 5.0   # t is now [5., 2.]
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"can't convert np.ndarray of type {array.dtype}: use bool, integer or float arrays"
        )
    return Tensor(array)


def _shape(shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(n) for n in shape)


def _make(array: np.ndarray, device: Any, requires_grad: bool, name: str | None) -> Tensor:
    device = backend.normalize_device(device)
    if device != backend.CPU:
        array = backend.to_device(array, device)
    return Tensor(array, requires_grad=requires_grad, name=name)


def zeros(*shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          name: str | None = None) -> Tensor:
    return full(_shape(shape), 0.0, dtype=dtype, device=device, requires_grad=requires_grad,
                name=name)


def ones(*shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         name: str | None = None) -> Tensor:
    return full(_shape(shape), 1.0, dtype=dtype, device=device, requires_grad=requires_grad,
                name=name)


def full(shape: Any, fill_value: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, name: str | None = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (float32 for floats, int64 for ints)."""
    if dtype is None:
        dtype = DEFAULT_FLOAT if isinstance(fill_value, float) else np.asarray(fill_value).dtype
    array = np.full(_shape((shape,)), fill_value, dtype=resolve_dtype(dtype))
    return _make(array, device, requires_grad, name)


def randn(*shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          name: str | None = None) -> Tensor:
    """Standard normal samples (float32 unless dtype says otherwise)."""
    dtype = resolve_dtype(dtype or DEFAULT_FLOAT)
    array = _rng.standard_normal(_shape(shape)).astype(dtype)
    return _make(array, device, requires_grad, name)


def rand(*shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         name: str | None = None) -> Tensor:
    """Uniform samples in [0, 1)."""
    dtype = resolve_dtype(dtype or DEFAULT_FLOAT)
    array = _rng.random(_shape(shape)).astype(dtype)
    return _make(array, device, requires_grad, name)


def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """start, start + step, ... below end (ints give int64, floats float32)."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, int) for v in (start, end, step))
        dtype = int64 if is_int else DEFAULT_FLOAT
    return _make(np.arange(start, end, step).astype(resolve_dtype(dtype)), device,
                 requires_grad, None)


def linspace(start: float, end: float, steps: int, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    array = np.linspace(start, end, steps).astype(resolve_dtype(dtype or DEFAULT_FLOAT))
    return _make(array, device, requires_grad, None)


def eye(n: int, m: int | None = None, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    array = np.eye(n, m, dtype=resolve_dtype(dtype or DEFAULT_FLOAT))
    return _make(array, device, requires_grad, None)


def _like(fn: Any, other: Tensor, dtype: Any, requires_grad: bool, **kw: Any) -> Tensor:
    return fn(other.shape, dtype=dtype or other.dtype, device=other.device,
              requires_grad=requires_grad, **kw)


def zeros_like(other: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _like(zeros, other, dtype, requires_grad)


def ones_like(other: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _like(ones, other, dtype, requires_grad)


def full_like(other: Tensor, fill_value: Any, dtype: Any = None,
              requires_grad: bool = False) -> Tensor:
    return full(other.shape, fill_value, dtype=dtype or other.dtype, device=other.device,
                requires_grad=requires_grad)


def randn_like(other: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _like(randn, other, dtype, requires_grad)


def rand_like(other: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _like(rand, other, dtype, requires_grad)
