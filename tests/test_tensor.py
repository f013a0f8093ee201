"""Tensor basics and factories: dtypes, conversions, repr, and the factory functions."""

from __future__ import annotations

import numpy as np
import pytest

import dyngraph as dg

# ----------------------------------------------------------------------------- dtypes


def test_python_floats_become_float32():
    assert dg.tensor([1.0, 2.0]).dtype == np.float32
    assert dg.tensor(3.0).dtype == np.float32


def test_float64_is_allowed_when_asked_for():
    t = dg.tensor([1.0, 2.0], dtype=dg.float64)
    assert t.dtype == np.float64
    assert dg.zeros(2, dtype=dg.float64).dtype == np.float64


def test_python_ints_become_int64():
    assert dg.tensor([1, 2]).dtype == np.int64
    assert dg.tensor(7).dtype == np.int64


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.int32, np.bool_])
def test_numpy_arrays_keep_their_dtype(dtype):
    array = np.zeros(3, dtype=dtype)
    assert dg.tensor(array).dtype == dtype


def test_tensor_copies_its_input_array():
    array = np.array([1.0, 2.0])
    t = dg.tensor(array)
    array[0] = 99.0
    assert t.tolist() == [1.0, 2.0]


def test_integer_tensor_cannot_require_grad_at_creation():
    with pytest.raises(RuntimeError, match="floating point"):
        dg.tensor([1, 2], requires_grad=True)


def test_integer_tensor_cannot_require_grad_later():
    t = dg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="floating point"):
        t.requires_grad_()
    assert t.requires_grad is False


def test_requires_grad_underscore_returns_self():
    t = dg.tensor([1.0, 2.0])
    assert t.requires_grad_() is t
    assert t.requires_grad is True


# ----------------------------------------------------------------------------- grad and repr


def test_grad_is_a_tensor():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    assert x.grad is None
    (x * x).sum().backward()
    assert isinstance(x.grad, dg.Tensor)
    assert isinstance(x.grad.numpy(), np.ndarray)
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_repr_of_an_op_output_shows_data_and_grad_fn():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward>)"


def test_repr_of_a_leaf_shows_requires_grad():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"


def test_repr_of_a_plain_tensor_is_just_the_data():
    assert repr(dg.tensor([1.0, 2.0])) == "tensor([1., 2.])"


def test_repr_of_a_float64_tensor_mentions_the_dtype():
    assert "dtype=float64" in repr(dg.tensor([1.0], dtype=dg.float64))


def test_grad_fn_repr_names_the_backward_of_the_op():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    assert repr((x * 2).grad_fn) == "<MulBackward>"
    assert repr(x.tanh().grad_fn) == "<TanhBackward>"


# ----------------------------------------------------------------------------- conversions


def test_numpy_returns_the_array():
    t = dg.tensor([[1.0, 2.0], [3.0, 4.0]])
    array = t.numpy()
    assert isinstance(array, np.ndarray)
    np.testing.assert_array_equal(array, [[1.0, 2.0], [3.0, 4.0]])


def test_item_returns_a_python_number():
    value = dg.tensor([2.5]).item()
    assert type(value) is float
    assert value == 2.5
    assert type(dg.tensor(3).item()) is int


def test_item_of_many_values_raises():
    with pytest.raises(RuntimeError, match="2 elements"):
        dg.tensor([1.0, 2.0]).item()


def test_tolist_gives_nested_python_lists():
    assert dg.tensor([[1.0, 2.0], [3.0, 4.0]]).tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_detach_shares_data_and_leaves_the_graph():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.requires_grad is False
    assert d.grad_fn is None
    assert d.is_leaf
    assert d.array is y.array
    np.testing.assert_array_equal(d.numpy(), [2.0, 4.0])


def test_shape_ndim_dtype_device():
    t = dg.zeros(2, 3)
    assert t.shape == (2, 3)
    assert t.ndim == 2
    assert t.dtype == np.float32
    assert t.device == "cpu"


def test_is_leaf_and_grad_fn():
    x = dg.tensor([1.0], requires_grad=True)
    y = x * 2
    assert x.is_leaf and x.grad_fn is None
    assert not y.is_leaf and y.grad_fn is not None
    assert dg.tensor([1.0]).is_leaf


def test_name_is_kept():
    x = dg.tensor([1.0], requires_grad=True, name="x")
    assert x.name == "x"
    assert dg.tensor([1.0]).name is None
    assert dg.randn(2, name="W").name == "W"


# ----------------------------------------------------------------------------- factories


def test_zeros_ones_full():
    np.testing.assert_array_equal(dg.zeros(2, 3).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(dg.ones((2, 3)).numpy(), np.ones((2, 3)))
    full = dg.full((2,), 3.5)
    np.testing.assert_array_equal(full.numpy(), [3.5, 3.5])
    assert full.dtype == np.float32
    assert dg.zeros(2).dtype == np.float32
    assert dg.ones(2).dtype == np.float32


def test_factories_can_require_grad():
    w = dg.zeros(2, requires_grad=True)
    assert w.requires_grad and w.is_leaf


def test_randn_and_rand_shapes_and_ranges():
    dg.manual_seed(1)
    r = dg.randn(200, 3)
    assert r.shape == (200, 3) and r.dtype == np.float32
    assert abs(float(r.numpy().mean())) < 0.3  # 600 standard normal samples
    u = dg.rand(500)
    assert u.dtype == np.float32
    assert float(u.numpy().min()) >= 0.0 and float(u.numpy().max()) < 1.0


def test_manual_seed_repeats_randn_and_rand():
    dg.manual_seed(123)
    a, u = dg.randn(5), dg.rand(5)
    dg.manual_seed(123)
    b, v = dg.randn(5), dg.rand(5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(u.numpy(), v.numpy())
    dg.manual_seed(124)
    assert not np.array_equal(dg.randn(5).numpy(), a.numpy())


def test_arange():
    ints = dg.arange(5)
    assert ints.tolist() == [0, 1, 2, 3, 4]
    assert ints.dtype == np.int64
    floats = dg.arange(0.0, 1.0, 0.25)
    np.testing.assert_allclose(floats.numpy(), [0.0, 0.25, 0.5, 0.75])
    assert floats.dtype == np.float32


def test_linspace():
    t = dg.linspace(0, 1, 5)
    np.testing.assert_allclose(t.numpy(), [0.0, 0.25, 0.5, 0.75, 1.0])
    assert t.dtype == np.float32


def test_eye():
    np.testing.assert_array_equal(dg.eye(3).numpy(), np.eye(3))
    assert dg.eye(2, 3).shape == (2, 3)


def test_like_factories_copy_shape_and_dtype():
    x = dg.tensor([[1.0, 2.0, 3.0]], dtype=dg.float64)
    for made in (dg.zeros_like(x), dg.ones_like(x), dg.randn_like(x), dg.rand_like(x)):
        assert made.shape == (1, 3)
        assert made.dtype == np.float64
    np.testing.assert_array_equal(dg.zeros_like(x).numpy(), [[0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(dg.ones_like(x).numpy(), [[1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(dg.full_like(x, 7.0).numpy(), [[7.0, 7.0, 7.0]])


def test_like_factories_do_not_inherit_requires_grad():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    assert dg.zeros_like(x).requires_grad is False
    assert dg.ones_like(x, requires_grad=True).requires_grad is True
