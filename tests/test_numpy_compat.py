"""What must hold on every supported numpy, 1.24 to 2.x (tools/python_matrix.py runs this file
on the oldest numpy too):

- float32 stays float32. numpy 1.x computes float64 when a 0-d float32 array (the result of a
  full reduction) meets a Python number; numpy 2 does not. Forward results and the gradients
  that reach each tensor (hooks see them) keep the tensor's dtype either way.
- arrays are recognised by type: numpy 1.x arrays have no ``__array_namespace__``, and an array
  subclass handed to a Tensor stays that subclass.
"""

from __future__ import annotations

import numpy as np
import pytest

import dyngraph as dg
import dyngraph.nn.functional as F
from dyngraph import backend


def _gradients_arriving(leaf: dg.Tensor) -> list:
    """The dtypes of the gradients that reach ``leaf``, as its hook sees them."""
    seen = []
    leaf.register_hook(lambda g: seen.append(g.dtype))
    return seen


# A 0-d float32 tensor meeting Python numbers, in forward and in each op's backward formula.
SCALAR_PROGRAMS = {
    "times a float": lambda s: s * 0.5,
    "divided by an int": lambda s: s / 3,
    "square": lambda s: s**2,
    "two to the power": lambda s: 2**s,
    "exp times two": lambda s: s.exp() * 2,
    "sqrt": lambda s: s.sqrt(),
    "sigmoid": lambda s: s.sigmoid(),
    "tanh plus one": lambda s: s.tanh() + 1,
    "clamp": lambda s: s.clamp(-1.0, 1.0),
}


@pytest.mark.parametrize("program", SCALAR_PROGRAMS.values(), ids=SCALAR_PROGRAMS.keys())
def test_a_full_reduction_meeting_python_numbers_stays_float32(program):
    x = dg.tensor([0.5, 1.5, 2.0], requires_grad=True)
    arriving = _gradients_arriving(x)
    out = program(x.sum())
    out.backward()
    assert out.dtype == np.float32
    assert arriving == [np.float32]
    assert x.grad.dtype == np.float32


REDUCED_LOSSES = {
    "var": lambda x: x.var(),
    "std": lambda x: x.std(),
    "mean": lambda x: x.mean(),
    "mean cross_entropy": lambda x: F.cross_entropy(x, dg.tensor([0, 2, 1, 0])),
    "weighted cross_entropy": lambda x: F.cross_entropy(
        x, dg.tensor([0, 2, 1, 0]), weight=dg.tensor([1.0, 2.0, 0.5])
    ),
    "cross_entropy with probabilities": lambda x: F.cross_entropy(
        x, dg.full((4, 3), 1 / 3), label_smoothing=0.1
    ),
    "nll_loss": lambda x: F.nll_loss(x.log_softmax(1), dg.tensor([0, 2, 1, 0])),
    "mse_loss": lambda x: F.mse_loss(x, dg.zeros(4, 3)),
}


@pytest.mark.parametrize("loss_of", REDUCED_LOSSES.values(), ids=REDUCED_LOSSES.keys())
def test_mean_reductions_and_losses_keep_float32(loss_of):
    x = dg.tensor(np.linspace(-1.0, 1.0, 12).reshape(4, 3), dtype=dg.float32, requires_grad=True)
    arriving = _gradients_arriving(x)
    loss = loss_of(x)
    (loss * 2.0).backward()
    assert loss.dtype == np.float32
    assert arriving == [np.float32]


def test_a_float32_input_of_a_mixed_precision_op_gets_a_float32_gradient():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = dg.tensor([3.0, 4.0], dtype=dg.float64, requires_grad=True)
    hidden = x.exp()  # a float32 node between x and the float64 product
    at_hidden = _gradients_arriving(hidden)
    at_x = _gradients_arriving(x)
    out = (hidden * y).sum()
    out.backward()
    assert out.dtype == np.float64
    assert at_hidden == [np.float32] and at_x == [np.float32]
    assert y.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]) * [3.0, 4.0], rtol=1e-6)


def test_a_custom_op_whose_backward_returns_float64_is_cast_to_its_input_dtype():
    class Double(dg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, gz):
            return (gz * 2).double()

    x = dg.tensor([1.0, 2.0], requires_grad=True)
    arriving = _gradients_arriving(x)
    Double.apply(x).sum().backward()
    assert arriving == [np.float32]
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_create_graph_keeps_float32_through_a_full_reduction():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    (g,) = dg.autograd.grad((x * x).sum() * 0.5, x, create_graph=True)
    assert g.dtype == np.float32
    g.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


# ---------------------------------------------------------------------------- arrays by type


class TaggedArray(np.ndarray):
    """A numpy array subclass, as libraries make them (masked arrays, astropy quantities)."""


def test_is_array_goes_by_type():
    assert backend.is_array(np.zeros(2))
    assert backend.is_array(np.zeros(2).view(TaggedArray))
    assert backend.is_array(np.array(1.0))  # 0-d arrays are arrays
    assert not backend.is_array(np.float32(1.0))  # numpy scalars are numbers
    assert not backend.is_array(1.0)
    assert not backend.is_array([1.0, 2.0])


def test_a_tensor_keeps_an_array_subclass():
    tagged = np.arange(3, dtype=np.float32).view(TaggedArray)
    t = dg.Tensor(tagged)
    assert type(t.array) is TaggedArray
    assert t.array is tagged  # held as it is, not copied

    holder = dg.zeros(3)
    holder.data = tagged
    assert type(holder.array) is TaggedArray


def test_an_array_subclass_constant_is_an_array_operand_not_a_number():
    x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    scale = np.array([1.0, 10.0, 100.0], dtype=np.float32).view(TaggedArray)
    out = x * scale
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 10.0, 100.0])


def test_numpy_scalars_become_0d_arrays():
    t = dg.Tensor(np.float32(2.5))
    assert type(t.array) is np.ndarray
    assert t.shape == () and t.dtype == np.float32
