"""Shared fixtures: the array backends (numpy always, CuPy when a GPU is usable) and PyTorch.

Backends are a fixture, not a copy of the test files (chainer's ``inject_backend_tests``): a test
that takes ``backend`` runs once per backend, and the CuPy run is marked ``gpu`` and skipped with
a reason on machines without one.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import dyngraph as dg

NO_GPU = "CuPy with a CUDA GPU is not available on this machine"
NO_TORCH = "PyTorch is not installed (pip install torch==2.13.0 to compare against it)"


@dataclass(frozen=True)
class Backend:
    """An array backend as tests see it: its name and the dyngraph device that uses it."""

    name: str  # "numpy" or "cupy"
    device: str  # "cpu" or "cuda"

    def tensor(self, array: Any, dtype: Any = None, requires_grad: bool = False) -> dg.Tensor:
        """A leaf tensor on this backend holding a copy of ``array``."""
        return dg.tensor(np.asarray(array), dtype=dtype, device=self.device,
                         requires_grad=requires_grad)


@pytest.fixture(
    params=["numpy", pytest.param("cupy", marks=pytest.mark.gpu)],
)
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "cupy":
        if not dg.cuda.is_available():
            pytest.skip(NO_GPU)
        return Backend("cupy", "cuda")
    return Backend("numpy", "cpu")


def import_torch() -> ModuleType:
    """The torch module, or a skip saying how to get it."""
    try:
        import torch
    except ImportError:
        pytest.skip(NO_TORCH)
    return torch


@pytest.fixture
def torch() -> ModuleType:
    return import_torch()


def pytest_collection_finish(session: pytest.Session) -> None:
    """NOTE [frozen heap] Once the tests are collected, everything imported so far (torch,
    hypothesis, Jupyter, the test modules) is moved out of the cycle collector's sight with
    ``gc.freeze()``. Many tests call ``gc.collect()`` to prove that a graph is freed, and the
    collector walks every tracked object each time: a heap of libraries made each such test
    take most of a second, now it walks only what the tests themselves made. Nothing a test
    makes is frozen, so a leak or a cycle it makes is found as before."""
    gc.collect()
    gc.freeze()


@pytest.fixture
def no_jupyter_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one without the jupyter extra, as the engine sees it: the browser
    player (NOTE [the player], dyngraph/player.py) cannot be loaded, and says what to install."""
    import dyngraph.player
    from dyngraph.extras import MissingExtra

    def missing() -> None:
        raise MissingExtra("anywidget", "jupyter", "The live graph widget")

    monkeypatch.setattr(dyngraph.player, "_loader", missing)
