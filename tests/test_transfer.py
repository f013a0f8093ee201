"""Transfer: learner programs written once for PyTorch run on dyngraph and agree.

Each program in ``tests/transfer_programs/`` is a function of a PyTorch-like module. It runs on
torch 2.13 (when importable) and on dyngraph from the same initial weights, and every result it
returns (losses, gradients, parameters after training) must agree within float32 tolerances.
Without torch the dyngraph side still runs (so a missing API is still caught) and the
comparison is skipped with the reason.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from transfer_programs import PROGRAMS, SameWeights, to_numpy

import dyngraph

DEFAULT_TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}

def run_both(name: str):
    """(dyngraph results, torch results or None, the reason torch did not run)."""
    module = importlib.import_module(f"transfer_programs.{name}")
    try:
        import torch
    except ImportError:
        torch = None
    recorded = None
    theirs = None
    if torch is not None:
        torch.manual_seed(0)
        same = SameWeights()
        theirs = {k: to_numpy(v) for k, v in module.program(torch, same).items()}
        recorded = same.recorded
    dyngraph.manual_seed(0)
    # a program that makes an Inf or a NaN on purpose says so with its ERRSTATE: numpy warns
    # where torch is silent, and a warning fails a test here (pyproject.toml)
    with np.errstate(**getattr(module, "ERRSTATE", {})):
        mine = {k: to_numpy(v)
                for k, v in module.program(dyngraph, SameWeights(recorded)).items()}
    return mine, theirs, getattr(module, "TOLERANCE", DEFAULT_TOLERANCE)


def max_difference(mine: dict, theirs: dict) -> float:
    """The largest absolute difference over every numeric result."""
    worst = 0.0
    for key, a in mine.items():
        b = theirs[key]
        if a.dtype.kind in "fiu" and b.dtype.kind in "fiu" and a.size:
            worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
    return worst


@pytest.mark.slow
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_runs_the_same_on_torch_and_dyngraph(name):
    mine, theirs, tolerance = run_both(name)
    assert all(np.all(np.isfinite(v)) for v in mine.values() if v.dtype.kind == "f"), mine
    if theirs is None:
        pytest.skip("PyTorch is not installed: the dyngraph side ran, nothing to compare with")
    assert list(mine) == list(theirs)
    for key, a in mine.items():
        b = theirs[key]
        assert a.shape == b.shape, f"{name}: {key} has shape {a.shape}, torch's {b.shape}"
        assert a.dtype == b.dtype, f"{name}: {key} is {a.dtype}, torch's {b.dtype}"
        if a.dtype.kind in "bU" or b.dtype.kind in "bU":  # flags, and names (layer types)
            np.testing.assert_array_equal(a, b, err_msg=f"{name}: {key}")
        else:
            np.testing.assert_allclose(a, b, err_msg=f"{name}: {key}", **tolerance)
