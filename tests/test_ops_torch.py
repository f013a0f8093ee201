"""The op table against PyTorch: forward values and gradients in float64.

Finite differences (test_ops.py) check that each backward is the derivative of its own forward;
PyTorch checks that both are the function a learner expects from the PyTorch-shaped name. Every
case with a ``torch`` spelling runs here; the whole module is skipped, with the reason, when
PyTorch is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_table import TORCH_CASES, dg_inputs, ids

import dyngraph as dg

pytestmark = pytest.mark.torch

FLOAT64 = {"rtol": 1e-7, "atol": 1e-10}


def _torch_inputs(torch, case, arrays):
    """float64 leaves requiring grad for differentiable inputs; int64/bool tensors otherwise."""
    return [
        torch.from_numpy(np.array(a, dtype=np.float64)).requires_grad_(True)
        if spec.differentiable
        else torch.from_numpy(np.array(a))
        for spec, a in zip(case.inputs, arrays)
    ]


@pytest.mark.parametrize("case", TORCH_CASES, ids=ids(TORCH_CASES))
def test_forward_and_gradients_match_torch(case, torch):
    arrays = case.arrays()
    dg_in = dg_inputs(case, arrays, "cpu", np.float64)
    torch_in = _torch_inputs(torch, case, arrays)

    out = case.dg(*dg_in)
    expected = case.torch(*torch_in)
    assert out.shape == tuple(expected.shape)
    assert expected.dtype == torch.float64
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **FLOAT64)

    upstream = np.random.default_rng(7).standard_normal(out.shape)
    out.backward(upstream)
    expected.backward(torch.from_numpy(np.array(upstream)))
    for position, (spec, mine, theirs) in enumerate(zip(case.inputs, dg_in, torch_in)):
        if not spec.differentiable:
            continue
        assert theirs.grad is not None, f"torch computed no gradient for input {position}"
        assert mine.grad is not None, f"dyngraph computed no gradient for input {position}"
        np.testing.assert_allclose(
            mine.grad.numpy(), theirs.grad.numpy(), **FLOAT64,
            err_msg=f"gradient of input {position}",
        )



# ---------------------------------------------------------------------------- at the kinks
# Finite differences cannot check a gradient where the function has a kink or a tie; there the
# gradient is a convention, and dyngraph follows PyTorch's so that what learners see transfers.

KINKS = [
    pytest.param(lambda x: x.relu(), lambda x: x.relu(), [[0.0, 1.0, -1.0]], id="relu-at-0"),
    pytest.param(lambda x: x.abs(), lambda x: x.abs(), [[0.0, 1.0, -1.0]], id="abs-at-0"),
    pytest.param(lambda x: x.clamp(-1.0, 1.0), lambda x: x.clamp(-1.0, 1.0),
                 [[-1.0, 1.0, 0.0, 2.0]], id="clamp-at-bounds"),
    # x.max() and amax / amin share the gradient between ties; x.max(dim) / x.min(dim) return
    # an index, and send the whole gradient to it (issue 28)
    pytest.param(lambda x: x.max(), lambda x: x.max(), [[1.0, 3.0, 3.0]], id="max-ties"),
    pytest.param(lambda x: x.min(), lambda x: x.min(), [[1.0, 1.0, 3.0]], id="min-ties"),
    pytest.param(lambda x: x.amax(dim=1), lambda x: x.amax(dim=1),
                 [[[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]], id="amax-axis-ties"),
    pytest.param(lambda x: x.amin(dim=0, keepdim=True), lambda x: x.amin(dim=0, keepdim=True),
                 [[[1.0, 2.0], [1.0, 0.0]]], id="amin-axis0-ties"),
    pytest.param(lambda x: x.min(axis=1).values, lambda x: x.min(dim=1).values,
                 [[[1.0, 1.0, 3.0], [2.0, 2.0, 2.0]]], id="min-axis-ties"),
    pytest.param(lambda x: x.max(axis=0, keepdims=True).values,
                 lambda x: x.max(dim=0, keepdim=True).values,
                 [[[1.0, 2.0], [1.0, 0.0]]], id="max-axis0-ties"),
    pytest.param(lambda x, y: x.maximum(y), lambda x, y: x.maximum(y),
                 [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]], id="maximum-ties"),
    pytest.param(lambda x, y: x.minimum(y), lambda x, y: x.minimum(y),
                 [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]], id="minimum-ties"),
]


@pytest.mark.parametrize("dg_fn, torch_fn, values", KINKS)
def test_gradient_conventions_at_kinks_match_torch(dg_fn, torch_fn, values, torch):
    mine = [dg.tensor(v, dtype=dg.float64, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    dg_fn(*mine).sum().backward()
    torch_fn(*theirs).sum().backward()
    for m, t in zip(mine, theirs):
        np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())
