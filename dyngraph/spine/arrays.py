"""What the spine needs to know about an array to describe it: which device holds it, and its
numbers on the host. numpy only; a CuPy array is recognised through ``sys.modules`` (one can only
exist once cupy is imported), so the spine never imports cupy. backend.py, above the spine,
re-exports these two and keeps everything else about devices (loading cupy, moving arrays).
"""

from __future__ import annotations

import sys

import numpy as np

CPU = "cpu"
CUDA = "cuda"


def _is_cupy(array: object) -> bool:
    cupy = sys.modules.get("cupy")
    return cupy is not None and isinstance(array, cupy.ndarray)


def device_of(array: object) -> str:
    """"cpu" for a numpy array (and anything else), "cuda" for a CuPy array."""
    if type(array) is np.ndarray:
        return CPU
    return CUDA if _is_cupy(array) else CPU


def to_numpy(array: object) -> np.ndarray:
    """A host (numpy) view or copy. NOTE: on a GPU this is a synchronising copy; call it only when
    something on the host needs the numbers (a preview for a subscriber, .numpy(), repr)."""
    if type(array) is np.ndarray:
        return array
    if _is_cupy(array):
        return array.get()  # type: ignore[attr-defined]
    return np.asarray(array)


def squared_norm(array: object) -> float:
    """The sum of the squared magnitudes of ``array``'s elements, computed where it lives (on
    the GPU for a CuPy array: only the number comes back)."""
    xp = sys.modules["cupy"] if _is_cupy(array) else np
    return float(xp.vdot(array, array).real)
