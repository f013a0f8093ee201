"""Un-broadcasting (autograd.sum_to_shape) and the leaves' .grad (BackwardPass.accumulate).

sum_to_shape is the one place that sums a broadcast gradient back to its input's shape; what it
returns must be exactly numpy's sum over the broadcast axes, in the input's shape, and a fresh
array (not a view), so that ``accumulate`` can keep it as ``.grad`` without copying it. A .grad
must still own its array when an op hands the same array to two inputs.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import autograd

# (gradient shape, input shape)
CASES = [
    ((64, 256), (256,)),  # a bias added to a batch
    ((64, 256), (1, 256)),  # a bias kept 2-D
    ((4, 3, 5), (3, 1)),  # a new axis in front and a stretched one
    ((2, 3, 4), (1, 3, 1)),  # stretched axes only
    ((2, 3, 4), ()),  # a scalar broadcast everywhere
    ((5, 1, 4), (1, 4)),  # a length-1 axis that was not stretched
    ((2, 3), (2, 3)),  # nothing to undo
]


def reference_sum(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """numpy's own un-broadcast: sum the leading axes, then the stretched ones, keeping 1s."""
    extra = grad.ndim - len(shape)
    total = grad.sum(axis=tuple(range(extra))) if extra else grad
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and total.shape[i] != 1)
    return total.sum(axis=stretched, keepdims=True) if stretched else total


@pytest.mark.parametrize(("grad_shape", "shape"), CASES, ids=[f"{g}->{s}" for g, s in CASES])
def test_sum_to_shape_sums_the_broadcast_axes_into_the_input_shape(grad_shape, shape):
    rng = np.random.default_rng(0)
    grad = rng.standard_normal(grad_shape).astype(np.float32)
    result = autograd.sum_to_shape(grad, shape, None, (grad,))
    assert result.shape == shape
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, reference_sum(grad, shape), rtol=1e-6, atol=1e-6)
    assert np.isclose(result.sum(), grad.sum(), rtol=1e-5)
    if grad_shape != shape:  # a fresh array: .grad can keep it as it is
        assert result.base is None


@pytest.mark.parametrize(("grad_shape", "shape"),
                         [((2, 3), (2,)), ((3,), (2, 3)), ((4, 2), (3, 2))])
def test_sum_to_shape_names_a_gradient_that_is_no_broadcast_of_the_input(grad_shape, shape):
    grad = np.ones(grad_shape)

    class Node:
        name = "Broken"

    expected = (f"Function Broken returned an invalid gradient at index 1: got shape {grad_shape} "
                f"but expected shape {shape}")
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        autograd.sum_to_shape(grad, shape, Node(), (None, grad))


def test_a_bias_gradient_is_the_sum_itself_not_a_copy_of_a_view():
    x = dg.tensor(np.ones((64, 8), np.float32))
    b = dg.tensor(np.zeros(8, np.float32), requires_grad=True)
    b2 = dg.tensor(np.zeros((1, 8), np.float32), requires_grad=True)
    ((x + b) * 2.0 + b2).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), np.full(8, 128.0, np.float32))
    np.testing.assert_array_equal(b2.grad.numpy(), np.full((1, 8), 64.0, np.float32))
    for grad in (b.grad.array, b2.grad.array):
        assert grad.base is None and grad.flags.writeable and grad.flags.owndata


def test_two_leaves_given_the_same_array_get_arrays_of_their_own():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = dg.tensor([3.0, 4.0], requires_grad=True)
    (x + y).sum().backward()  # Add's backward hands gz to both inputs
    assert x.grad.array is not y.grad.array
    x.grad.array[0] = 100.0
    assert y.grad.tolist() == [1.0, 1.0]


def test_second_backward_adds_into_grad_with_broadcasting():
    b = dg.tensor(np.zeros(3), requires_grad=True)
    x = dg.tensor(np.ones((4, 3)))
    for _ in range(2):
        (x * 2.0 + b).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [8.0, 8.0, 8.0])
