"""Small helpers for the lessons' exercises: tell a learner how right (or wrong) they are.

Modelled on nn-zero-to-hero's ``cmp``: one line per check, exact / close / max difference, so a
learner sees *how far* off an answer is, not just that it is wrong.

>>> compare("dL/dx", my_grad, x.grad)
dL/dx        | exact: True  | close: True  | max diff: 0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .tensor import Tensor


def _array(value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        return value.detach().numpy()
    return np.asarray(value)


def compare(name: str, mine: Any, reference: Any, rtol: float = 1e-4, atol: float = 1e-6) -> bool:
    """Print whether ``mine`` equals ``reference`` exactly, approximately, and by how much;
    returns True when they are close."""
    a, b = _array(mine), _array(reference)
    if a.shape != b.shape:
        print(f"{name:12s} | shape mismatch: yours {a.shape}, expected {b.shape}")
        return False
    exact = bool(np.array_equal(a, b))
    close = bool(np.allclose(a, b, rtol=rtol, atol=atol))
    diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
    print(f"{name:12s} | exact: {exact!s:5} | close: {close!s:5} | max diff: {diff:.2g}")
    return close


def check(name: str, passed: bool, hint: str = "") -> bool:
    """Print PASS or FAIL (with a hint on failure) for a yes/no exercise."""
    print(f"{name}: PASS" if passed else f"{name}: FAIL{' - ' + hint if hint else ''}")
    return bool(passed)


def optional_torch() -> Any:
    """Return the ``torch`` module for a lesson's "Now in PyTorch" cells, or None after printing
    one line saying how to install it. Cells guard themselves with ``if torch:``.

    dyngraph never needs PyTorch; the lessons only compare with it where it is installed.
    """
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: pip install torch==2.13.0 "
              "to run the 'Now in PyTorch' cells")
        return None
    return torch
