"""``dg.testing.assert_close``: PyTorch's ``torch.testing.assert_close``, which the tutorials
use to check a result against a reference.

Close means |actual - expected| <= atol + rtol * |expected| for every element, with
PyTorch's default tolerances for the dtype (float32: rtol 1.3e-6, atol 1e-5; float64: 1e-7
and 1e-7; float16: 1e-3 and 1e-5; integers and bools: exactly equal). Shapes must match, and
dtypes too unless ``check_dtype=False``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend
from .tensor import Tensor

_TOLERANCES = {np.dtype(np.float16): (1e-3, 1e-5), np.dtype(np.float32): (1.3e-6, 1e-5),
               np.dtype(np.float64): (1e-7, 1e-7)}


def _array(value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        return backend.to_numpy(value.detach().array)
    return np.asarray(value)


def assert_close(actual: Any, expected: Any, *, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_dtype: bool = True,
                 msg: str | None = None) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` (tensors, arrays, numbers,
    or lists/tuples/dicts of them) are close, element by element."""
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != "
                                 f"{len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if actual.keys() != expected.keys():
            raise AssertionError(f"The keys of the mappings do not match: {sorted(actual)} != "
                                 f"{sorted(expected)}")
        for key in actual:
            assert_close(actual[key], expected[key], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    a, e = _array(actual), _array(expected)
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: {a.shape} "
                                    f"!= {e.shape}.")
    if check_dtype and isinstance(actual, Tensor) and isinstance(expected, Tensor) \
            and a.dtype != e.dtype:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: {a.dtype} "
                                    f"!= {e.dtype}.")
    if rtol is None:
        rtol, atol = _TOLERANCES.get(np.result_type(a, e), (0.0, 0.0))
    close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    difference = np.abs(a.astype(np.float64) - e.astype(np.float64))
    relative = difference / np.maximum(np.abs(e.astype(np.float64)), np.finfo(np.float64).tiny)
    worst = np.unravel_index(np.nanargmax(np.where(close, -1, difference)), a.shape)
    worst_relative = np.unravel_index(np.nanargmax(np.where(close, -1, relative)), a.shape)
    mismatched = int((~close).sum())
    raise AssertionError(msg or (
        f"Tensor-likes are not close!\n\nMismatched elements: {mismatched} / {a.size} "
        f"({100 * mismatched / max(a.size, 1):.1f}%)\n"
        f"Greatest absolute difference: {difference[worst]} at index {tuple(map(int, worst))} "
        f"(up to {atol} allowed)\n"
        f"Greatest relative difference: {relative[worst_relative]} at index "
        f"{tuple(map(int, worst_relative))} (up to {rtol} allowed)"))
