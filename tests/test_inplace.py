"""In-place operations: they keep the Python object, bump the version counter, are checked
against saved tensors in backward, and are refused on leaves that require grad."""

from __future__ import annotations

import numpy as np
import pytest

import dyngraph as dg

# ----------------------------------------------------------------------------- really in place


INPLACE_UPDATES = {
    "iadd": (lambda t: t.__iadd__(1.0), [2.0, 3.0]),
    "isub": (lambda t: t.__isub__(1.0), [0.0, 1.0]),
    "imul": (lambda t: t.__imul__(3.0), [3.0, 6.0]),
    "itruediv": (lambda t: t.__itruediv__(2.0), [0.5, 1.0]),
    "add_": (lambda t: t.add_(dg.tensor([1.0, 1.0])), [2.0, 3.0]),
    "mul_": (lambda t: t.mul_(dg.tensor([2.0, 3.0])), [2.0, 6.0]),
    "zero_": (lambda t: t.zero_(), [0.0, 0.0]),
    "fill_": (lambda t: t.fill_(7.0), [7.0, 7.0]),
    "setitem": (lambda t: t.__setitem__(0, 5.0), [5.0, 2.0]),
}


@pytest.mark.parametrize("name", list(INPLACE_UPDATES))
def test_inplace_update_keeps_the_object_and_its_array_and_bumps_version(name):
    update, expected = INPLACE_UPDATES[name]
    t = dg.tensor([1.0, 2.0])
    identity, array = id(t), t.array
    result = update(t)
    assert result is None or result is t
    assert id(t) == identity
    assert t.array is array  # nothing is recorded here, so the array itself changed
    assert t.version == 1
    np.testing.assert_allclose(t.numpy(), expected)


def test_augmented_assignment_operators_keep_the_same_object():
    t = dg.tensor([1.0, 2.0])
    original = t
    t += 1
    t -= 0.5
    t *= 2
    t /= 3
    assert t is original
    assert t.version == 4
    np.testing.assert_allclose(t.numpy(), [1.0, 5.0 / 3.0])


def test_setitem_with_a_slice_and_a_tensor_value():
    t = dg.zeros(4)
    t[1:3] = dg.tensor([1.0, 2.0])
    assert t.tolist() == [0.0, 1.0, 2.0, 0.0]
    assert t.version == 1


# ----------------------------------------------------------------------------- saved tensors


def test_backward_through_a_modified_input_of_sin_raises():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = h.sin()  # Sin saved h
    h += 1
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    message = str(info.value)
    assert "modified by an inplace operation" in message
    assert "Sin" in message
    assert "version 1" in message
    assert "expected version 0" in message


def test_backward_through_a_modified_input_of_mul_raises():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    w = dg.tensor([3.0, 4.0])
    y = x * w  # Mul saved w
    w.mul_(2.0)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    message = str(info.value)
    assert "modified by an inplace operation" in message
    assert "Mul" in message
    assert "version 1" in message
    assert "expected version 0" in message


def test_two_modifications_report_the_current_version():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = h.sin()
    h += 1
    h[0] = 3.0
    with pytest.raises(RuntimeError, match="version 2") as info:
        y.sum().backward()
    assert "expected version 0" in str(info.value)


def test_backward_through_a_modified_saved_output_raises():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # Exp saved its own output y
    z = y.sum()
    y += 1
    with pytest.raises(RuntimeError) as info:
        z.backward()
    message = str(info.value)
    assert "modified by an inplace operation" in message
    assert "Exp" in message
    assert "version 1" in message
    assert "expected version 0" in message


def test_unmodified_saved_tensors_do_not_raise():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = h.sin()
    other = x * 3
    other += 1  # a different tensor: nothing y needs
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([1.0, 2.0]), rtol=1e-6)


# ----------------------------------------------------------------------------- leaves


@pytest.mark.parametrize(
    "update",
    [
        lambda w: w.__iadd__(1.0),
        lambda w: w.__isub__(1.0),
        lambda w: w.__imul__(2.0),
        lambda w: w.__itruediv__(2.0),
        lambda w: w.add_(1.0),
        lambda w: w.mul_(2.0),
        lambda w: w.zero_(),
        lambda w: w.fill_(3.0),
        lambda w: w.__setitem__(0, 5.0),
    ],
    ids=["iadd", "isub", "imul", "itruediv", "add_", "mul_", "zero_", "fill_", "setitem"],
)
def test_inplace_on_a_leaf_that_requires_grad_raises(update):
    w = dg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        update(w)
    assert w.tolist() == [1.0, 2.0]
    assert w.version == 0
    assert w.is_leaf


def test_the_classic_slip_of_updating_a_parameter_outside_no_grad():
    w = dg.tensor([1.0, 2.0], requires_grad=True, name="w")
    (w * w).sum().backward()
    original = w
    lr = 0.1
    with pytest.raises(RuntimeError, match="leaf"):
        w -= lr * w.grad
    assert w is original  # the name still refers to the parameter
    assert w.tolist() == [1.0, 2.0]
    assert w.is_leaf and w.grad_fn is None and w.requires_grad


def test_parameter_update_inside_no_grad_is_in_place_and_records_nothing():
    w = dg.tensor([1.0, 2.0], requires_grad=True, name="w")
    (w * w).sum().backward()
    original, array = w, w.array
    with dg.no_grad():
        w -= 0.1 * w.grad
    assert w is original
    assert w.array is array
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 1.6], rtol=1e-6)
    assert w.is_leaf and w.grad_fn is None and w.requires_grad
    assert w.version == 1
    (w * 1).sum().backward()  # still a usable parameter
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 5.0])


def test_zero_grad_style_update_inside_no_grad():
    w = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.no_grad():
        w.zero_()
        w[1] = 4.0
    assert w.tolist() == [0.0, 4.0]
    assert w.is_leaf and w.grad_fn is None


# ----------------------------------------------------------------------------- recorded in place


def test_recorded_inplace_on_a_non_leaf_gives_correct_gradients():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    original = h
    h += 1
    assert h is original
    assert h.grad_fn is not None
    np.testing.assert_allclose(h.detach().numpy(), [3.0, 5.0])
    h.sum().backward()  # Mul did not save h, so no "modified" error
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_recorded_inplace_multiply_on_a_non_leaf():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x + 0
    h *= x  # h = x * x
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_setitem_on_a_non_leaf_records_and_routes_the_value_gradient():
    x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = dg.tensor(7.0, requires_grad=True)
    h = x * 2
    original = h
    h[0] = v
    assert h is original
    assert h.version == 1
    np.testing.assert_allclose(h.detach().numpy(), [7.0, 4.0, 6.0])
    (h * h).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 16.0, 24.0])  # index 0 was overwritten
    np.testing.assert_allclose(v.grad.numpy(), 14.0)


def test_setitem_with_a_constant_on_a_non_leaf():
    x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 1
    h[0] = 5.0
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1.0, 1.0])


def test_setitem_of_a_grad_requiring_value_into_a_plain_tensor():
    t = dg.zeros(3)
    v = dg.tensor([2.0], requires_grad=True)
    t[1:2] = v
    assert t.requires_grad
    (t * 3).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), [3.0])


def test_inplace_with_a_shape_that_would_grow_the_tensor_raises():
    t = dg.zeros(3)
    with pytest.raises(RuntimeError, match=r"\(2, 3\)"):
        t += dg.zeros(2, 3)
    assert t.shape == (3,)
    assert t.version == 0


# ------------------------------ the in-place forms of out-of-place ops (NOTE [the in-place forms])

# (name, the op on a tensor of either library (lib, x)); x is float64, shape (2, 3)
INPLACE_FORMS = [
    ("clamp_", lambda lib, x: x.clamp_(-0.5, 0.7)),
    ("clamp_ min only", lambda lib, x: x.clamp_(min=0.1)),
    ("clip_", lambda lib, x: x.clip_(-0.2, 0.2)),
    ("clamp_min_", lambda lib, x: x.clamp_min_(0.0)),
    ("clamp_max_", lambda lib, x: x.clamp_max_(0.3)),
    ("exp_", lambda lib, x: x.exp_()),
    ("log_", lambda lib, x: x.abs_().log_()),
    ("sqrt_", lambda lib, x: x.abs_().sqrt_()),
    ("pow_", lambda lib, x: x.pow_(3)),
    ("neg_", lambda lib, x: x.neg_()),
    ("relu_", lambda lib, x: x.relu_()),
    ("sigmoid_", lambda lib, x: x.sigmoid_()),
    ("tanh_", lambda lib, x: x.tanh_()),
    ("masked_fill_", lambda lib, x: x.masked_fill_(lib.tensor([True, False, True]), -1.0)),
    ("index_fill_", lambda lib, x: x.index_fill_(1, lib.tensor([0, 2]), 0.5)),
    ("index_fill_ dim 0", lambda lib, x: x.index_fill_(0, lib.tensor([1]), 0.0)),
    ("lerp_", lambda lib, x: x.lerp_(lib.tensor(np.full((2, 3), 2.0)), 0.25)),
]
FORM_INPUT = np.array([[-1.2, 0.4, 0.9], [0.05, -0.3, 2.0]])


def _through_an_inplace_form(lib, form):
    """y = x * 1; form(y) in place; then values, gradient of x, and whether y is the same
    object, the version moved."""
    def version(t):
        return t.version if lib is dg else t._version

    x = lib.tensor(FORM_INPUT, requires_grad=True)
    y = x * 1
    before = version(y)
    same = form(lib, y) is y
    (y * lib.tensor(np.arange(1.0, 7.0).reshape(2, 3))).sum().backward()
    return y.detach().numpy(), x.grad.numpy(), same, version(y) > before


@pytest.mark.torch
@pytest.mark.parametrize("name,form", INPLACE_FORMS, ids=[n for n, _ in INPLACE_FORMS])
def test_inplace_forms_write_in_place_and_backpropagate_as_torch(torch, name, form):
    values, grad, same, bumped = _through_an_inplace_form(dg, form)
    their_values, their_grad, _, _ = _through_an_inplace_form(torch, form)
    assert same and bumped
    np.testing.assert_allclose(values, their_values, rtol=1e-12)
    np.testing.assert_allclose(grad, their_grad, rtol=1e-12)


@pytest.mark.parametrize("name,form", INPLACE_FORMS, ids=[n for n, _ in INPLACE_FORMS])
def test_inplace_forms_against_finite_differences(name, form):
    def f(x):
        y = x * 1
        form(dg, y)
        return y
    assert dg.gradcheck(f, (dg.tensor(FORM_INPUT, requires_grad=True),))


def test_inplace_forms_on_a_parameter_need_no_grad_and_keep_its_dtype():
    w = dg.nn.Parameter(dg.tensor([[-2.0, 0.5, 3.0]]))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w.clamp_(0, 1)
    with dg.no_grad():
        w.data.clamp_(0, 1)          # the neural style tutorial's input_img.data.clamp_(0, 1)
        w.clamp_max_(0.75)
    assert w.tolist() == [[0.0, 0.5, 0.75]] and w.dtype == dg.float32 and w.grad_fn is None
    with pytest.raises(RuntimeError, match="can't be cast"):
        dg.tensor([1, 2]).exp_()     # as PyTorch: a float result does not fit a long tensor


@pytest.mark.torch
def test_index_fill_and_lerp_out_of_place_as_torch(torch):
    for lib in (dg, torch):
        x = lib.tensor(FORM_INPUT, requires_grad=True)
        end = lib.tensor(np.ones((2, 3)), requires_grad=True)
        y = x.index_fill(-1, lib.tensor([1]), -3.0) + x.lerp(end, 0.3) * 2
        y.sum().backward()
        if lib is dg:
            mine = (y.detach().numpy(), x.grad.numpy(), end.grad.numpy())
    np.testing.assert_allclose(mine[0], y.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(mine[1], x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(mine[2], end.grad.numpy(), rtol=1e-12)
