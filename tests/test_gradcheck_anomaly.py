"""dg.gradcheck (finite differences in float64) and dg.detect_anomaly (which forward line made
the NaN or Inf that backward produced)."""

from __future__ import annotations

import inspect
import os
import warnings

import numpy as np
import pytest

import dyngraph as dg

# numpy warns when backward divides by zero; the anomaly tests are about exactly that
pytestmark = pytest.mark.filterwarnings(
    "ignore:divide by zero:RuntimeWarning", "ignore:invalid value:RuntimeWarning"
)

# ----------------------------------------------------------------------------- gradcheck


def _double(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return dg.tensor(rng.standard_normal(shape), requires_grad=True)  # float64 array stays 64


@pytest.mark.parametrize(
    ("name", "fn", "shapes"),
    [
        ("square_sum", lambda t: (t * t).sum(), [(3,)]),
        ("tanh", lambda t: t.tanh(), [(2, 3)]),
        ("exp_sin", lambda t: t.exp() * t.sin(), [(4,)]),
        ("matmul", lambda a, b: a @ b, [(2, 3), (3, 2)]),
        ("broadcast_div", lambda a, b: a / (b * b + 1), [(3, 1), (1, 4)]),
        ("softmax", lambda t: t.softmax(), [(2, 3)]),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_gradcheck_passes_for_correct_float64_ops(name, fn, shapes):
    inputs = [_double(*shape, seed=i) for i, shape in enumerate(shapes)]
    assert dg.gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True) is True


def test_gradcheck_accepts_a_single_tensor_and_constant_inputs():
    x = _double(3)
    c = dg.tensor(np.array([1.0, 2.0, 3.0]))
    assert dg.gradcheck(lambda a, b: a * b, (x, c)) is True
    assert dg.gradcheck(lambda a: a.sin(), x) is True


def test_gradcheck_leaves_inputs_and_their_grad_untouched():
    x = _double(4)
    before = x.detach().numpy().copy()
    dg.gradcheck(lambda t: (t**3).sum(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x.grad is None


def test_gradcheck_warns_about_float32_inputs():
    x = dg.tensor([0.5, 1.5], requires_grad=True)
    with pytest.warns(UserWarning, match="double precision"):
        dg.gradcheck(lambda t: t * 2, (x,), raise_exception=False)


def test_gradcheck_does_not_warn_for_float64_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dg.gradcheck(lambda t: t * 2, (_double(2),))


def test_gradcheck_needs_an_input_that_requires_grad():
    x = dg.tensor(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="at least one input"):
        dg.gradcheck(lambda t: t * 2, (x,))


class WrongSquare(dg.autograd.Function):
    """z = x^2 with a deliberately wrong backward (x instead of 2x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz * x


class RightSquare(dg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return 2 * gz * x


def test_gradcheck_accepts_a_correct_custom_function():
    assert dg.gradcheck(RightSquare.apply, (_double(3),)) is True


def test_gradcheck_catches_a_wrong_custom_backward():
    with pytest.raises(dg.GradcheckError) as info:
        dg.gradcheck(WrongSquare.apply, (_double(3),))
    assert "Jacobian mismatch for output 0 with respect to input 0" in str(info.value)


def test_gradcheck_names_the_input_whose_gradient_is_wrong():
    def fn(a, b):
        return a + WrongSquare.apply(b)

    with pytest.raises(dg.GradcheckError, match="with respect to input 1"):
        dg.gradcheck(fn, (_double(2, seed=1), _double(2, seed=2)))


def test_gradcheck_returns_false_instead_of_raising_when_asked():
    assert dg.gradcheck(WrongSquare.apply, (_double(3),), raise_exception=False) is False


def test_gradcheck_error_is_a_runtime_error():
    assert issubclass(dg.GradcheckError, RuntimeError)


# ----------------------------------------------------------------------------- anomaly mode


def test_detect_anomaly_names_the_op_and_the_forward_line_of_an_inf():
    x = dg.tensor([0.0], requires_grad=True)
    with dg.detect_anomaly():
        line = inspect.currentframe().f_lineno + 1
        y = x.sqrt()
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    message = str(info.value)
    assert "Sqrt" in message
    assert os.path.basename(__file__) in message
    assert f"line {line}" in message
    assert "inf" in message


def test_detect_anomaly_names_log_at_zero():
    x = dg.tensor([0.0, 1.0], requires_grad=True)
    with dg.detect_anomaly():
        line = inspect.currentframe().f_lineno + 1
        loss = x.log().sum()
        with pytest.raises(RuntimeError) as info:
            loss.backward()
    message = str(info.value)
    assert "Log" in message
    assert os.path.basename(__file__) in message
    assert f"line {line}" in message


def test_detect_anomaly_catches_a_nan():
    x = dg.tensor([0.0], requires_grad=True)
    with dg.detect_anomaly():
        line = inspect.currentframe().f_lineno + 1
        y = x.sqrt() * 0  # sqrt'(0) * 0 = inf * 0 = nan
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    message = str(info.value)
    assert "Sqrt" in message
    assert "nan" in message
    assert f"line {line}" in message


def test_without_detect_anomaly_no_error_is_raised():
    x = dg.tensor([0.0], requires_grad=True)
    x.sqrt().sum().backward()
    assert np.isinf(x.grad.numpy()).all()
    w = dg.tensor([0.0], requires_grad=True)
    w.log().sum().backward()
    assert np.isinf(w.grad.numpy()).all()


def test_detect_anomaly_passes_finite_gradients():
    x = dg.tensor([1.0, 4.0], requires_grad=True)
    with dg.detect_anomaly():
        x.sqrt().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 0.25])


def test_detect_anomaly_is_restored_and_the_engine_stays_usable():
    assert dg.is_anomaly_enabled() is False
    x = dg.tensor([0.0], requires_grad=True)
    with pytest.raises(RuntimeError), dg.detect_anomaly():
        with dg.detect_anomaly():
            pass
        assert dg.is_anomaly_enabled() is True
        x.sqrt().sum().backward()
    assert dg.is_anomaly_enabled() is False
    assert dg.is_grad_enabled()
    fresh = dg.tensor([2.0], requires_grad=True)
    (fresh * fresh).sum().backward()
    np.testing.assert_allclose(fresh.grad.numpy(), [4.0])
