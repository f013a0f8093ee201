"""The last differences from PyTorch that a learner meets (issue 28, item 6), each run on dyngraph
and on torch 2.13 from the same code.

Every test checks dyngraph on its own first (so that it means something where PyTorch is not
installed), then runs the same program with ``torch`` in place of ``dg`` and compares: values,
gradients, the error type, and that the message names the problem and the fix.

1. a (values, indices) pair, a tuple or a list as an operand: TypeError, naming ``.values``
2. ``x.max(dim)`` / ``x.min(dim)`` with ties: the gradient goes to the index returned
3. ``std`` / ``var`` with no degrees of freedom: nan and a warning; ``std`` of equal values: 0
4. sizes must be integers: factories, reshape / view / expand
5. dtypes must match: ``nn.Linear`` and ``@`` on float64 / int64 input; softmax of integers
6. ``.grad`` accumulates in place: the same tensor, the same memory
7. custom ``autograd.Function``: PyTorch's convention, Tensors in and out
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import import_torch

import dyngraph as dg


def _numpy(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _same(mine, theirs, **tol):
    np.testing.assert_allclose(_numpy(mine), _numpy(theirs), **(tol or {"rtol": 1e-6}))


def _error(fn):
    """The exception ``fn()`` raises (a test failure when it raises none)."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - any error is the subject here
        return exc
    pytest.fail("no error was raised")


# ----------------------------------------------------------------------------- 1. operands


def _operand_mistakes(lib):
    """The operands PyTorch refuses, as a learner writes them."""
    x = lib.ones(3, 4)
    return {
        "x - x.max(dim=1, keepdim=True)": lambda: x - x.max(dim=1, keepdim=True),
        "x + x.min(1)": lambda: x + x.min(1),
        "x * x.sort()": lambda: x * x.sort(),
        "x + (1, 2, 3, 4)": lambda: x + (1.0, 2.0, 3.0, 4.0),
        "x + [1, 2, 3, 4]": lambda: x + [1.0, 2.0, 3.0, 4.0],
        "[1, 2, 3, 4] - x": lambda: [1.0, 2.0, 3.0, 4.0] - x,
        "x / [1, 2, 3, 4]": lambda: x / [1.0, 2.0, 3.0, 4.0],
        "x @ [1, 2, 3, 4]": lambda: x @ [1.0, 2.0, 3.0, 4.0],
        "maximum(x, tuple)": lambda: lib.maximum(x, (1.0, 2.0, 3.0, 4.0)),
    }


@pytest.mark.parametrize("case", list(_operand_mistakes(dg)))
def test_a_tuple_or_list_operand_is_a_type_error_as_in_torch(case):
    error = _error(_operand_mistakes(dg)[case])
    assert isinstance(error, TypeError), error
    assert "unsupported operand type" in str(error)
    if ".max(" in case or ".min(" in case or ".sort(" in case:  # the fix, by name
        assert ".values" in str(error) and "x.max(dim=1, keepdim=True).values" in str(error)
    else:
        assert "dg.tensor(" in str(error)
    torch = import_torch()
    assert isinstance(_error(_operand_mistakes(torch)[case]), TypeError)


def test_with_values_the_subtraction_agrees_with_torch():
    rows = np.arange(12.0, dtype=np.float32).reshape(3, 4) % 5

    def program(lib):
        x = lib.tensor(rows, requires_grad=True)
        out = x - x.max(dim=1, keepdim=True).values
        (out * out).sum().backward()
        return out, x.grad

    mine = program(dg)
    assert mine[0].shape == (3, 4)  # not the (2, 3, 4) that broadcasting the pair made
    for m, t in zip(mine, program(import_torch())):
        _same(m, t)


def test_a_custom_function_still_takes_a_tuple_argument_as_in_torch():
    """Only built-in ops refuse sequences: a custom op's arguments are its own business."""

    def program(lib):
        class ViewAs(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, shape):
                ctx.shape = x.shape
                return x.reshape(shape)

            @staticmethod
            def backward(ctx, g):
                return g.reshape(ctx.shape), None

        x = lib.ones(4, requires_grad=True)
        y = ViewAs.apply(x, (2, 2))
        (y * 3).sum().backward()
        return y, x.grad

    mine = program(dg)
    assert mine[0].shape == (2, 2)
    for m, t in zip(mine, program(import_torch())):
        _same(m, t)


# ----------------------------------------------------------------------------- 2. ties


TIES = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]

TIE_CASES = {
    "max(dim=1).values": lambda x: x.max(dim=1).values,
    "min(dim=1).values": lambda x: x.min(dim=1).values,
    "max(0, keepdim=True).values": lambda x: x.max(0, keepdim=True).values,
    "max(dim=-1)[0]": lambda x: x.max(dim=-1)[0],
    "max()": lambda x: x.max(),
    "min()": lambda x: x.min(),
    "amax(1)": lambda x: x.amax(1),
    "amin(dim=(0, 1))": lambda x: x.amin(dim=(0, 1)),
}


@pytest.mark.parametrize("case", list(TIE_CASES))
def test_gradient_at_ties_goes_where_torch_sends_it(case):
    def program(lib):
        x = lib.tensor(TIES, requires_grad=True)
        TIE_CASES[case](x).sum().backward()
        return x.grad

    mine = program(dg)
    if case == "max(dim=1).values":  # the whole gradient at the index max returns
        np.testing.assert_array_equal(mine.numpy(), [[0, 1, 0], [1, 0, 0]])
        np.testing.assert_array_equal(dg.tensor(TIES).max(dim=1).indices.numpy(), [1, 0])
    if case == "max()":  # shared between the maxima
        np.testing.assert_array_equal(mine.numpy(), [[0, 0.5, 0.5], [0, 0, 0]])
    np.testing.assert_array_equal(mine.numpy(), program(import_torch()).numpy())


# ----------------------------------------------------------------------------- 3. std and var


@pytest.mark.parametrize("fn", ["std", "var"])
def test_no_degrees_of_freedom_gives_nan_and_a_warning_as_in_torch(fn):
    def program(lib):
        x = lib.tensor([3.0], requires_grad=True)
        rows = lib.tensor([[3.0, 4.0]], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            whole, per_column = getattr(x, fn)(), getattr(rows, fn)(dim=0)
        (whole + per_column.sum()).backward()
        messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        return whole, per_column, x.grad, rows.grad, messages

    mine = program(dg)
    assert all(np.isnan(_numpy(t)).all() for t in mine[:4])
    assert len(mine[4]) == 2 and all("degrees of freedom is <= 0" in m for m in mine[4])
    assert "correction=0" in mine[4][0]  # the fix
    theirs = program(import_torch())
    for m, t in zip(mine[:4], theirs[:4]):
        np.testing.assert_array_equal(_numpy(m), _numpy(t))  # nan where torch has nan
    assert all(f"{fn}(): degrees of freedom is <= 0" in m for m in theirs[4])


@pytest.mark.parametrize("fn", ["std", "var"])
def test_equal_values_have_a_zero_gradient_as_in_torch(fn):
    def program(lib):
        x = lib.tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]], requires_grad=True)
        flat = lib.tensor([5.0, 5.0], requires_grad=True)
        single = lib.tensor([3.0], requires_grad=True)
        out = getattr(x, fn)(1)
        (out.sum() + getattr(flat, fn)() + getattr(single, fn)(correction=0)).backward()
        return out, x.grad, flat.grad, single.grad

    mine = program(dg)
    np.testing.assert_array_equal(mine[1].numpy()[0], [0.0, 0.0, 0.0])  # not nan
    np.testing.assert_array_equal(mine[2].numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(mine[3].numpy(), [0.0])
    assert repr(mine[0].grad_fn) == f"<{fn.capitalize()}Backward>"
    for m, t in zip(mine, program(import_torch())):
        _same(m, t)


@pytest.mark.parametrize("fn", ["std", "var"])
def test_std_and_var_pass_gradcheck(fn):
    x = dg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert dg.gradcheck(lambda t: getattr(t, fn)(1), (x,))
    assert dg.gradcheck(lambda t: getattr(t, fn)(correction=0), (x,))
    (g,) = dg.autograd.grad(getattr(x, fn)(1).sum(), x, create_graph=True)  # twice
    assert dg.gradcheck(lambda t: dg.autograd.grad(getattr(t, fn)(1).sum(), t,
                                                   create_graph=True)[0], (x,))
    assert g.shape == (3, 4)


# ----------------------------------------------------------------------------- 4. sizes


def _float_sizes(lib):
    x = lib.ones(2, 3)
    return {
        "randn(2.5)": lambda: lib.randn(2.5),
        "randn(2.0)": lambda: lib.randn(2.0),
        "rand((2.5,))": lambda: lib.rand((2.5,)),
        "zeros(2, 3.0)": lambda: lib.zeros(2, 3.0),
        "ones([4 / 2])": lambda: lib.ones([4 / 2]),
        "full((2.5,), 1.0)": lambda: lib.full((2.5,), 1.0),
        "zeros(True)": lambda: lib.zeros(True),
        "linspace(0, 1, 5.0)": lambda: lib.linspace(0, 1, 5.0),
        "eye(2.5)": lambda: lib.eye(2.5),
        "x.reshape(3, 2.0)": lambda: x.reshape(3, 2.0),
        "x.reshape((6.0,))": lambda: x.reshape((6.0,)),
        "x.view(3.0, 2)": lambda: x.view(3.0, 2),
        "x.expand(2, 2, 3.0)": lambda: x.expand(2, 2, 3.0),
    }


@pytest.mark.parametrize("case", list(_float_sizes(dg)))
def test_a_float_size_is_a_type_error_as_in_torch(case):
    error = _error(_float_sizes(dg)[case])
    assert isinstance(error, TypeError), error
    assert "must be" in str(error) and "int" in str(error) and "n // 2" in str(error)
    torch = import_torch()
    assert isinstance(_error(_float_sizes(torch)[case]), TypeError)


def _integer_sizes(lib):
    x = lib.ones(2, 3)
    return {
        "zeros(np.int64(2), 3)": lambda: lib.zeros(np.int64(2), 3),
        "randn((2, 3))": lambda: lib.randn((2, 3)),
        "ones([])": lambda: lib.ones([]),
        "zeros(tensor(2))": lambda: lib.zeros(lib.tensor(2)),
        "x.reshape(tensor(3), -1)": lambda: x.reshape(lib.tensor(3), -1),
        "x.view(-1)": lambda: x.view(-1),
        "x.expand(4, -1, 3)": lambda: x.expand(4, -1, 3),
        "arange(2.5)": lambda: lib.arange(2.5),  # a range, not a size: floats are fine
    }


@pytest.mark.parametrize("case", list(_integer_sizes(dg)))
def test_integer_sizes_make_torchs_shapes(case):
    mine = _integer_sizes(dg)[case]()
    theirs = _integer_sizes(import_torch())[case]()
    assert tuple(mine.shape) == tuple(theirs.shape)


def test_a_negative_size_is_refused_by_factories_as_in_torch():
    error = _error(lambda: dg.randn(2, -1))
    assert isinstance(error, RuntimeError) and "negative dimension -1" in str(error)
    torch = import_torch()
    assert "negative dimension -1" in str(_error(lambda: torch.randn(2, -1)))


# ----------------------------------------------------------------------------- 5. dtypes


def _dtype_mistakes(lib):
    layer = lib.nn.Linear(3, 2)
    x = lib.ones(4, 3)
    return {
        "Linear(float64)": (lambda: layer(x.double()), RuntimeError,
                            "mat1 and mat2 must have the same dtype, but got Double and Float"),
        "Linear(int64)": (lambda: layer(lib.ones(4, 3, dtype=lib.int64)), RuntimeError,
                          "mat1 and mat2 must have the same dtype, but got Long and Float"),
        "float32 @ float64": (lambda: x @ lib.ones(3, 2, dtype=lib.float64), RuntimeError,
                              "same dtype"),
        "float64 @ float32 (1-D)": (lambda: lib.ones(3).double() @ lib.ones(3), RuntimeError,
                                    "same dtype"),
        "mm(float32, int64)": (lambda: lib.mm(x, lib.ones(3, 2, dtype=lib.int64)),
                               RuntimeError, "same dtype"),
        "softmax(int64)": (lambda: lib.softmax(lib.ones(3, dtype=lib.int64), 0),
                           NotImplementedError, "not implemented for 'Long'"),
        "int64.log_softmax": (lambda: lib.ones(3, dtype=lib.int64).log_softmax(0),
                              NotImplementedError, "not implemented for 'Long'"),
        "F.softmax(int64)": (lambda: lib.nn.functional.softmax(lib.ones(3, dtype=lib.int64),
                                                               dim=0),
                             NotImplementedError, "not implemented for 'Long'"),
        "cross_entropy(int64 logits)": (
            lambda: lib.nn.functional.cross_entropy(lib.ones(2, 3, dtype=lib.int64),
                                                    lib.tensor([0, 1])),
            NotImplementedError, "not implemented for 'Long'"),
    }


@pytest.mark.parametrize("case", list(_dtype_mistakes(dg)))
def test_a_dtype_mismatch_is_refused_as_in_torch(case):
    fn, error_type, words = _dtype_mistakes(dg)[case]
    error = _error(fn)
    assert type(error) is error_type and words in str(error), error
    fixes = ("x.float()", "layer.double()", "x.to(dg.", "y.to(dg.", "x.float().")
    assert any(fix in str(error) for fix in fixes), error  # the message names the fix
    fn, error_type, words = _dtype_mistakes(import_torch())[case]
    error = _error(fn)
    assert type(error) is error_type, error
    if words.startswith("mat1"):  # PyTorch's own wording, word for word
        assert words in str(error)


def test_matching_dtypes_and_softmax_with_dtype_agree_with_torch():
    def program(lib):
        ints = lib.tensor([[1, 2], [3, 4]])
        probabilities = lib.softmax(ints, 1, dtype=lib.float32)
        return (ints @ ints, probabilities, lib.nn.functional.log_softmax(ints, 0,
                                                                         dtype=lib.float64))

    mine = program(dg)
    assert mine[0].dtype == np.int64 and mine[1].dtype == np.float32
    assert mine[2].dtype == np.float64
    for m, t in zip(mine, program(import_torch())):
        _same(m, t)


# ----------------------------------------------------------------------------- 6. .grad in place


def _grad_identity(lib):
    """What stays the same object, and what a held .grad sees, in torch's rules."""
    out = {}
    x = lib.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    out["second backward: same tensor"] = x.grad is g
    out["second backward: held grad sees the sum"] = g
    mine = lib.zeros(3)
    x.grad = mine
    (x * 2).sum().backward()
    out["assigned grad: same tensor"] = x.grad is mine
    out["assigned grad: accumulated into"] = mine
    opt = lib.optim.SGD([x], lr=0.1)
    g = x.grad
    opt.zero_grad()  # set_to_none=True, the default
    out["zero_grad(): None"] = x.grad is None
    (x * 2).sum().backward()
    out["after zero_grad: a new tensor"] = x.grad is not g
    out["after zero_grad: the old one unchanged"] = g
    g = x.grad
    opt.zero_grad(set_to_none=False)
    out["zero_grad(set_to_none=False): same tensor, zeros"] = (x.grad is g, g.sum().item())
    x.grad = None
    (x * 2).sum().backward()
    g = x.grad
    lib.nn.utils.clip_grad_norm_([x], 1.0)
    out["clip_grad_norm_: in place"] = (x.grad is g, g)
    y = x * 2
    y.retain_grad()
    y.sum().backward(retain_graph=True)
    gy = y.grad
    y.sum().backward()
    out["retained non-leaf: a new tensor each time"] = (y.grad is gy, gy, y.grad)
    return out


def test_grad_accumulates_in_place_as_in_torch():
    mine = _grad_identity(dg)
    assert mine["second backward: same tensor"] is True
    np.testing.assert_array_equal(mine["second backward: held grad sees the sum"].numpy(), 5.0)
    assert mine["assigned grad: same tensor"] is True
    theirs = _grad_identity(import_torch())
    assert list(mine) == list(theirs)
    for key in mine:
        m, t = mine[key], theirs[key]
        m, t = (m if isinstance(m, tuple) else (m,)), (t if isinstance(t, tuple) else (t,))
        for a, b in zip(m, t):
            if isinstance(a, (bool, float)):
                assert a == b, key
            else:
                _same(a, b, err_msg=key)


def test_the_gradient_shares_its_memory_across_backward_calls():
    x = dg.ones(2, 2, requires_grad=True)
    (x * x).sum().backward()
    memory = x.grad.array
    (x * x).sum().backward()
    assert x.grad.array is memory  # torch: x.grad.data_ptr() is unchanged
    np.testing.assert_array_equal(memory, 4.0)
    torch = import_torch()
    t = torch.ones(2, 2, requires_grad=True)
    (t * t).sum().backward()
    pointer = t.grad.data_ptr()
    (t * t).sum().backward()
    assert t.grad.data_ptr() == pointer


def test_a_scalar_leafs_gradient_accumulates_in_place_too():
    def program(lib):
        k = lib.tensor(2.0, requires_grad=True)  # 0-d: numpy hands backward a numpy scalar
        (3 * k).backward()
        g = k.grad
        (3 * k).backward()
        return k.grad is g, g

    mine = program(dg)
    assert mine[0] is True and mine[1].item() == 6.0
    assert program(import_torch())[0] is True


def test_create_graph_gradients_are_new_tensors_as_in_torch():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns of the parameter-gradient cycle
            (x * x).sum().backward(create_graph=True)
            g = x.grad
            (x * x).sum().backward(create_graph=True)
        return x.grad is g, g, x.grad

    mine = program(dg)
    assert mine[0] is False and mine[2].requires_grad
    theirs = program(import_torch())
    assert mine[0] == theirs[0]
    _same(mine[1], theirs[1])
    _same(mine[2], theirs[2])


def test_a_hook_returning_a_kept_tensor_does_not_see_later_sums():
    """The engine adds into a leaf's .grad in place, so a gradient that a hook hands over (a
    tensor the caller may keep) is copied first."""
    kept = dg.full((3,), 5.0)
    x = dg.ones(3, requires_grad=True)
    x.register_hook(lambda g: kept)
    x.sum().backward()
    x.sum().backward()
    np.testing.assert_array_equal(kept.numpy(), 5.0)
    np.testing.assert_array_equal(x.grad.numpy(), 10.0)


def test_assigning_a_grad_of_another_dtype_is_refused_as_in_torch():
    x = dg.ones(3, requires_grad=True)
    error = _error(lambda: setattr(x, "grad", dg.zeros(3, dtype=dg.float64)))
    assert isinstance(error, RuntimeError) and "float64" in str(error) and ".to(" in str(error)
    torch = import_torch()
    t = torch.ones(3, requires_grad=True)
    assert isinstance(_error(lambda: setattr(t, "grad", torch.zeros(3, dtype=torch.float64))),
                      RuntimeError)


# ----------------------------------------------------------------------------- 7. custom ops


def _tutorial_functions(lib):
    """PyTorch's tutorial "Learning PyTorch with Examples", its two custom Functions, as they
    are written there (``lib`` in place of ``torch``)."""

    class MyReLU(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    class LegendrePolynomial3(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    return MyReLU, LegendrePolynomial3


def _two_layer_net_with_my_relu(lib):
    """The tutorial's two-layer net, trained a few steps with MyReLU."""
    MyReLU, _ = _tutorial_functions(lib)
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((16, 10)).astype(np.float32))
    y = lib.tensor(rng.standard_normal((16, 2)).astype(np.float32))
    w1 = lib.tensor(rng.standard_normal((10, 8)).astype(np.float32), requires_grad=True)
    w2 = lib.tensor(rng.standard_normal((8, 2)).astype(np.float32), requires_grad=True)
    losses = []
    for _ in range(5):
        y_pred = MyReLU.apply(x.mm(w1)).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with lib.no_grad():
            w1 -= 1e-3 * w1.grad
            w2 -= 1e-3 * w2.grad
            w1.grad = None
            w2.grad = None
    return losses, w1, w2


def _legendre_fit(lib):
    """The tutorial's fit of sin(x) by a + b P3(c + d x), a few hundred steps."""
    _, LegendrePolynomial3 = _tutorial_functions(lib)
    dtype = lib.float
    x = lib.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = lib.sin(x)
    a = lib.full((), 0.0, dtype=dtype, requires_grad=True)
    b = lib.full((), -1.0, dtype=dtype, requires_grad=True)
    c = lib.full((), 0.0, dtype=dtype, requires_grad=True)
    d = lib.full((), 0.3, dtype=dtype, requires_grad=True)
    learning_rate = 5e-6
    for _ in range(200):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with lib.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return loss.item(), a, b, c, d


def test_the_tutorials_my_relu_runs_unchanged_and_agrees_with_torch():
    losses, w1, w2 = _two_layer_net_with_my_relu(dg)
    assert losses[-1] < losses[0]
    MyReLU, _ = _tutorial_functions(dg)
    x = dg.tensor([-1.0, 2.0, -3.0, 4.0], dtype=dg.float64, requires_grad=True)
    assert repr(MyReLU.apply(x).grad_fn) == "<MyReLUBackward>"
    assert dg.gradcheck(MyReLU.apply, (x,))
    theirs = _two_layer_net_with_my_relu(import_torch())
    np.testing.assert_allclose(losses, theirs[0], rtol=1e-5)
    _same(w1, theirs[1], rtol=1e-5, atol=1e-6)
    _same(w2, theirs[2], rtol=1e-5, atol=1e-6)


def test_the_tutorials_legendre_polynomial_runs_unchanged_and_agrees_with_torch():
    mine = _legendre_fit(dg)
    x = dg.tensor([-0.5, 0.1, 0.9], dtype=dg.float64, requires_grad=True)
    _, LegendrePolynomial3 = _tutorial_functions(dg)
    assert dg.gradcheck(LegendrePolynomial3.apply, (x,))
    theirs = _legendre_fit(import_torch())
    for m, t in zip(mine, theirs):
        _same(m, t, rtol=1e-4, atol=1e-6)


def _conventions(lib):
    """What a custom Function's forward and backward see."""
    seen = {}

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, k):
            seen["forward: Tensors"] = (type(x) is lib.Tensor, type(w) is lib.Tensor)
            seen["forward: the inputs as given"] = x is inputs[0]
            seen["forward: grad mode"] = lib.is_grad_enabled()
            seen["forward: needs_input_grad"] = ctx.needs_input_grad
            out = x * w * k
            seen["forward: ops inside are not recorded"] = out.requires_grad
            ctx.save_for_backward(x, w, out)
            ctx.k = k
            return out

        @staticmethod
        def backward(ctx, grad_output):
            x, w, out = ctx.saved_tensors
            seen["backward: a Tensor"] = type(grad_output) is lib.Tensor
            seen["backward: saved input is the input"] = x is inputs[0]
            seen["backward: saved output has the node"] = out.grad_fn is not None
            return grad_output * w * ctx.k, None, None

    inputs = (lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0]))
    y = Scale.apply(*inputs, 2.0)
    y.sum().backward()
    seen["gradient"] = tuple(inputs[0].grad.tolist())
    return seen


def test_forward_and_backward_see_what_they_see_in_torch():
    mine = _conventions(dg)
    assert mine["forward: Tensors"] == (True, True)
    assert mine["forward: grad mode"] is False
    assert mine["forward: needs_input_grad"] == (True, False, False)
    assert mine["gradient"] == (6.0, 8.0)
    assert mine == _conventions(import_torch())


def test_custom_ops_twice_differentiated_agree_with_torch():
    def program(lib):
        _, LegendrePolynomial3 = _tutorial_functions(lib)
        x = lib.tensor([0.3, -0.7], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(LegendrePolynomial3.apply(x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg

    mine = program(dg)
    np.testing.assert_allclose(mine[1].numpy(), 15 * np.array([0.3, -0.7]))  # P3'' = 15 x
    for m, t in zip(mine, program(import_torch())):
        _same(m, t)


def test_a_custom_op_in_a_traced_function_replays_with_tensors():
    MyReLU, _ = _tutorial_functions(dg)
    graph = dg.trace(lambda t: MyReLU.apply(t) * 2, dg.tensor([1.0, -1.0]))
    np.testing.assert_array_equal(graph(dg.tensor([-2.0, 3.0])).numpy(), [0.0, 6.0])


def test_what_dyngraph_custom_ops_do_not_do_is_said():
    class Dirty(dg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

    with pytest.raises(NotImplementedError, match="mark_dirty.*x \\+ 1"):
        Dirty.apply(dg.ones(2, requires_grad=True))
