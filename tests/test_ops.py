"""Every op of the op table (tests/op_table.py), on every available backend:

- forward in float32 equals the numpy reference (same shape, float32 kept);
- backward in float64 agrees with central finite differences (``dg.gradcheck``);
- gradients in float32 stay float32 all the way to the inputs, have their input's shape, and
  agree with the float64 ones;
- the dtype of mixed-precision arithmetic follows numpy's promotion rules;
- dropout: identity in eval mode, kept values and gradients scaled by 1 / (1 - p) in training.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from op_table import ALL_CASES, dg_inputs, ids, ref_inputs

import dyngraph as dg
import dyngraph.nn.functional as F

FLOAT32_FORWARD = {"rtol": 1e-5, "atol": 1e-6}
GRADCHECK = {"eps": 1e-6, "atol": 1e-5, "rtol": 1e-3}


def _differentiable(case, inputs):
    return [t for spec, t in zip(case.inputs, inputs) if spec.differentiable]


@pytest.mark.parametrize("case", ALL_CASES, ids=ids(ALL_CASES))
def test_forward_matches_numpy(case, backend):
    arrays = case.arrays()
    out = case.dg(*dg_inputs(case, arrays, backend.device, np.float32))
    expected = np.asarray(case.ref(*ref_inputs(arrays, np.float32)))

    assert isinstance(out, dg.Tensor)
    assert out.device == backend.device
    assert out.shape == expected.shape
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.detach().numpy(), expected, **FLOAT32_FORWARD)


@pytest.mark.parametrize("case", ALL_CASES, ids=ids(ALL_CASES))
def test_backward_matches_finite_differences(case, backend):
    inputs = dg_inputs(case, case.arrays(), backend.device, np.float64)
    assert dg.gradcheck(case.dg, inputs, **GRADCHECK)


@pytest.mark.parametrize("case", ALL_CASES, ids=ids(ALL_CASES))
def test_float32_gradients_keep_dtype_and_match_float64(case, backend):
    arrays = case.arrays()
    seed = np.random.default_rng(1).standard_normal(case.dg(*dg_inputs(case, arrays)).shape)
    grads = {}
    for dtype in (np.float32, np.float64):
        inputs = dg_inputs(case, arrays, backend.device, dtype)
        arriving = []  # the gradient as it reaches each input, before .grad stores it
        for leaf in _differentiable(case, inputs):
            leaf.register_hook(lambda g, seen=arriving: seen.append(g.dtype))
        out = case.dg(*inputs)
        out.backward(backend.tensor(seed, dtype=dtype))
        assert arriving and all(d == dtype for d in arriving), (
            f"gradients reaching {np.dtype(dtype)} inputs had dtypes {arriving}"
        )
        grads[dtype] = []
        for leaf in _differentiable(case, inputs):
            assert leaf.grad is not None, "a differentiable input got no gradient"
            assert leaf.grad.shape == leaf.shape
            assert leaf.grad.dtype == dtype
            assert leaf.grad.device == backend.device
            grads[dtype].append(leaf.grad.numpy())
    for g32, g64 in zip(grads[np.float32], grads[np.float64]):
        np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------- dtype promotion

_OPERATORS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "pow": operator.pow,
    "maximum": lambda a, b: np.maximum(a, b) if _is_numpy(a, b) else dg.maximum(a, b),
}
_OPERANDS = {  # a Python number stays a Python number; dtypes make tensors/arrays
    "f32-tensor+f64-tensor": (np.float32, np.float64),
    "f64-tensor+f32-tensor": (np.float64, np.float32),
    "f32-tensor+py-float": (np.float32, 1.5),
    "py-float+f32-tensor": (1.5, np.float32),
    "f32-tensor+py-int": (np.float32, 2),
    "f64-tensor+py-float": (np.float64, 1.5),
}


def _is_numpy(*values):
    return not any(isinstance(v, dg.Tensor) for v in values)


@pytest.mark.parametrize("operands", list(_OPERANDS.values()), ids=list(_OPERANDS))
@pytest.mark.parametrize("op", list(_OPERATORS.values()), ids=list(_OPERATORS))
def test_result_dtype_follows_numpy_promotion(op, operands, backend):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2.0, (2, 3)).astype(o) if isinstance(o, type) else o
              for o in operands]
    tensors = [backend.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) else a
               for a in arrays]
    expected = op(*arrays)

    out = op(*tensors)
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-6)
    out.sum().backward()
    for t in tensors:
        if isinstance(t, dg.Tensor):
            assert t.grad.dtype == t.dtype, "a leaf's gradient keeps the leaf's dtype"


def test_matmul_of_float32_and_float64_is_refused_as_in_pytorch(backend):
    a = backend.tensor(np.ones((2, 3)), dtype=np.float32, requires_grad=True)
    b = backend.tensor(np.ones((3, 2)), dtype=np.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="same dtype, but got: Float != Double"):
        a @ b
    out = a.double() @ b  # converted first: float64, and each gradient in its tensor's dtype
    assert out.dtype == np.float64
    out.sum().backward()
    assert (a.grad.dtype, b.grad.dtype) == (np.float32, np.float64)


# ---------------------------------------------------------------------------- dropout


def _nonzero_values(shape, dtype):
    rng = np.random.default_rng(3)
    return (rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)).astype(dtype)


def test_dropout_in_eval_mode_is_identity(backend):
    x = backend.tensor(_nonzero_values((4, 5), np.float32), requires_grad=True)
    y = F.dropout(x, p=0.5, training=False)
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    assert y.dtype == np.float32
    (y * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((4, 5), 3.0, np.float32))


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_scales_kept_values_and_gradient_by_one_over_keep(backend, p):
    dg.manual_seed(1234)
    values = _nonzero_values((20, 50), np.float32)
    x = backend.tensor(values, requires_grad=True)
    y = F.dropout(x, p=p, training=True)
    out = y.detach().numpy()
    kept = out != 0  # inputs are never 0, so a 0 output means "dropped"

    assert y.dtype == np.float32 and y.shape == x.shape
    assert abs(kept.mean() - (1 - p)) < 0.1, f"kept {kept.mean():.2f} of values at p={p}"
    np.testing.assert_allclose(out[kept], values[kept] / np.float32(1 - p), rtol=1e-6)

    upstream = np.random.default_rng(4).standard_normal(x.shape).astype(np.float32)
    y.backward(backend.tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), upstream * kept / np.float32(1 - p), rtol=1e-6)
