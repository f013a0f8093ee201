"""Autograd semantics, modelled on PyTorch's: order, accumulation, freeing, grad modes, hooks,
higher-order gradients, dg.autograd.grad, custom Functions and broadcasting."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import dyngraph as dg

# ----------------------------------------------------------------------------- deep graphs


def test_a_gradient_handed_to_two_inputs_is_never_added_into():
    """Add hands one array to both inputs; later contributions to x must not change y's
    (autograd.add_into_sum adds in place only into a sum the pass made itself)."""
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = dg.tensor([3.0, 4.0], requires_grad=True)
    z = (x * 2).sum() + (x * 3).sum() + (x + y).sum()  # Add is newest: its gradient comes first
    z.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])
    np.testing.assert_array_equal(y.grad.numpy(), [1.0, 1.0])


def test_add_into_sum_adds_in_place_only_into_the_pass_own_sum():
    from dyngraph import autograd

    first = np.ones(3, dtype=np.float32)
    g = np.full(3, 2.0, dtype=np.float32)
    total = autograd.add_into_sum(first, g, total_is_a_sum=False)
    assert total is not first and first.tolist() == [1.0, 1.0, 1.0]  # someone else's: untouched
    again = autograd.add_into_sum(total, g, total_is_a_sum=True)
    assert again is total and total.tolist() == [5.0, 5.0, 5.0]  # the pass's own: in place
    wider = autograd.add_into_sum(total, g.astype(np.float64), total_is_a_sum=True)
    assert wider is not total and wider.dtype == np.float64  # another dtype: as numpy adds
    broadcast = autograd.add_into_sum(total, np.ones((2, 3), np.float32), total_is_a_sum=True)
    assert broadcast is not total and broadcast.shape == (2, 3)



@pytest.mark.slow
def test_a_100000_op_chain_backpropagates_without_recursion_error():
    x = dg.tensor([1.0], dtype=dg.float64, requires_grad=True)
    h = x
    for i in range(100_000):
        h = h * 1.0001 if i % 2 else h + 0.0
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0001**50_000], rtol=1e-9)
    assert repr(h).startswith("tensor([")
    assert "grad_fn=<MulBackward>" in repr(h)
    del h  # tearing the chain down must not overflow the stack either


# ----------------------------------------------------------------------------- order


def _normalised_grad_order(log):
    """grad_computed ids, renamed to the position of their node_created event."""
    position = {}
    for event in log:
        if event.kind == "node_created":
            position.setdefault(event.id, len(position))
    return [position[event.id] for event in log if event.kind == "grad_computed"]


def _run_small_program():
    log = []
    with dg.events.subscribe(log.append):
        a = dg.tensor([1.0, 2.0], requires_grad=True, name="a")
        b = dg.tensor([3.0, 4.0], requires_grad=True, name="b")
        c = a * b
        d = a + b
        e = (c * d).tanh()
        loss = (e * c).sum()
        loss.backward()
    return log, (a, b)


def test_engine_order_is_identical_across_two_runs():
    first, _ = _run_small_program()
    second, _ = _run_small_program()
    assert _normalised_grad_order(first) == _normalised_grad_order(second)
    assert len(_normalised_grad_order(first)) == 8  # 6 ops + 2 leaves


def test_engine_runs_nodes_newest_first_and_leaves_last():
    log, leaves = _run_small_program()
    leaf_ids = {t.id for t in leaves}
    order = [e.id for e in log if e.kind == "grad_computed"]
    op_ids = [i for i in order if i not in leaf_ids]
    assert op_ids == sorted(op_ids, reverse=True)  # reverse creation order
    assert set(order[len(op_ids) :]) == leaf_ids  # the leaves come after every op node
    created = [e.id for e in log if e.kind == "node_created" and e.op not in ("leaf", "constant")]
    assert op_ids == list(reversed(created))


def test_grad_computed_ids_are_in_reverse_creation_order_including_leaves():
    log, _ = _run_small_program()
    order = [e.id for e in log if e.kind == "grad_computed"]
    assert order == sorted(order, reverse=True)


_DETERMINISM_PROGRAM = """
import json
import dyngraph as dg
log = []
with dg.events.subscribe(log.append):
    a = dg.tensor([1.0, 2.0], requires_grad=True, name="a")
    b = dg.tensor([3.0, 4.0], requires_grad=True, name="b")
    c = dg.tensor([0.5, 0.1], requires_grad=True, name="c")
    d = a * b + c
    e = (d.tanh() * a).sum() + (c * b).sum()
    e.backward()
rows = [(ev.kind, ev.op, list(ev.inputs)) if ev.kind == "node_created" else (ev.kind, ev.id)
        for ev in log if ev.kind in ("node_created", "grad_computed")]
print(json.dumps(rows))
"""


@pytest.mark.slow
def test_engine_order_is_identical_across_processes_with_different_hash_seeds():
    root = Path(__file__).resolve().parents[1]
    outputs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
        result = subprocess.run(
            [sys.executable, "-c", _DETERMINISM_PROGRAM],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    assert '"grad_computed"' in outputs[0]


# ----------------------------------------------------------------------------- accumulation


def test_gradients_accumulate_over_two_backward_calls():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_gradients_accumulate_over_two_separate_graphs():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    (x * 5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 8.0])


def test_reused_input_gets_both_contributions():
    a = dg.tensor([1.0, 2.0], requires_grad=True)
    b = a + a
    b.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])


def test_diamond_graph_gradients():
    a = dg.tensor([2.0, -1.0], dtype=dg.float64, requires_grad=True)
    b = dg.tensor([3.0, 0.5], dtype=dg.float64, requires_grad=True)
    c = a * b
    d = a + b
    e = c * d  # e = ab(a + b) = a^2 b + a b^2
    e.sum().backward()
    av, bv = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), 2 * av * bv + bv**2)
    np.testing.assert_allclose(b.grad.numpy(), av**2 + 2 * av * bv)


def test_leaf_grad_keeps_its_own_memory():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = dg.tensor([1.0, 2.0], requires_grad=True)
    (x + y).sum().backward()
    assert x.grad.array is not y.grad.array
    x.grad.array[0] = 100.0
    assert y.grad.tolist() == [1.0, 1.0]


# ----------------------------------------------------------------------------- non-leaf .grad


def test_non_leaf_grad_is_none_with_one_warning_about_retain_grad():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.sum().backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert h.grad is None
    user_warnings = [w for w in caught if issubclass(w.category, UserWarning)]
    assert len(user_warnings) == 1
    assert "retain_grad" in str(user_warnings[0].message)


def test_leaf_grad_access_does_not_warn():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is None


def test_retain_grad_populates_a_non_leaf_grad():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.retain_grad()
    (h * h).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(h.grad, dg.Tensor)
    np.testing.assert_allclose(h.grad.numpy(), [4.0, 8.0])  # d(h^2)/dh = 2h
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 16.0])


# ----------------------------------------------------------------------------- freeing


def test_second_backward_raises_after_buffers_were_freed():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    message = str(info.value)
    assert "second time" in message
    assert "retain_graph=True" in message
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])  # the failed call added nothing


def test_retain_graph_allows_a_second_backward_that_accumulates():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x.tanh().sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)


def test_a_graph_that_saved_nothing_may_be_backpropagated_twice():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 1).sum()  # add and sum save nothing, so nothing is freed
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


# ----------------------------------------------------------------------------- seeds


def test_backward_of_a_non_scalar_needs_a_gradient():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="scalar"):
        (x * 2).backward()
    assert x.grad is None


def test_a_shape_1_output_counts_as_a_scalar():
    x = dg.tensor([3.0], requires_grad=True)
    (x * 2).backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0])


def test_backward_with_an_explicit_gradient():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward(gradient=dg.tensor([1.0, 10.0]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])


def test_a_gradient_of_the_wrong_shape_names_both_shapes():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        (x * 2).backward(gradient=dg.ones(3))
    assert "(3,)" in str(info.value)
    assert "(2,)" in str(info.value)


def test_backward_of_a_tensor_that_does_not_require_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        dg.tensor([1.0]).backward()


# ----------------------------------------------------------------------------- grad modes


def test_no_grad_results_do_not_require_grad():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.no_grad():
        y = x * 2
        z = y.exp().sum()
    assert y.requires_grad is False and y.grad_fn is None
    assert z.requires_grad is False and z.grad_fn is None
    assert (x * 2).requires_grad  # recording again afterwards


def test_grad_modes_nest_and_restore():
    assert dg.is_grad_enabled()
    with dg.no_grad():
        assert not dg.is_grad_enabled()
        with dg.enable_grad():
            assert dg.is_grad_enabled()
            with dg.set_grad_enabled(False):
                assert not dg.is_grad_enabled()
                with dg.no_grad():
                    assert not dg.is_grad_enabled()
                assert not dg.is_grad_enabled()
            assert dg.is_grad_enabled()
        assert not dg.is_grad_enabled()
        with dg.set_grad_enabled(True):
            assert dg.is_grad_enabled()
        assert not dg.is_grad_enabled()
    assert dg.is_grad_enabled()


def test_enable_grad_records_inside_no_grad():
    x = dg.tensor([1.0], requires_grad=True)
    with dg.no_grad(), dg.enable_grad():
        y = x * 2
    assert y.requires_grad and y.grad_fn is not None


@pytest.mark.parametrize(
    "make_context",
    [dg.no_grad, dg.enable_grad, lambda: dg.set_grad_enabled(False)],
    ids=["no_grad", "enable_grad", "set_grad_enabled"],
)
def test_grad_modes_restore_when_an_exception_passes_through(make_context):
    with dg.no_grad():
        with pytest.raises(KeyError), make_context():
            raise KeyError("inside")
        assert not dg.is_grad_enabled()
    with pytest.raises(KeyError), make_context():
        raise KeyError("inside")
    assert dg.is_grad_enabled()


def test_no_grad_as_a_decorator():
    @dg.no_grad()
    def step(t):
        assert not dg.is_grad_enabled()
        return t * 2

    x = dg.tensor([1.0], requires_grad=True)
    assert step(x).requires_grad is False
    assert dg.is_grad_enabled()


def test_enable_grad_as_a_decorator():
    @dg.enable_grad()
    def record(t):
        return t * 2

    x = dg.tensor([1.0], requires_grad=True)
    with dg.no_grad():
        y = record(x)
        assert not dg.is_grad_enabled()
    assert y.requires_grad


def test_set_grad_enabled_as_a_decorator():
    @dg.set_grad_enabled(False)
    def step(t):
        return t * 2

    assert dg.is_grad_enabled()  # decorating does not switch the mode
    x = dg.tensor([1.0], requires_grad=True)
    assert step(x).requires_grad is False
    assert dg.is_grad_enabled()


def test_decorated_function_restores_mode_when_it_raises():
    @dg.no_grad()
    def fail():
        raise ValueError("x")

    with pytest.raises(ValueError):
        fail()
    assert dg.is_grad_enabled()


def test_set_grad_enabled_called_directly_switches_the_mode():
    try:
        dg.set_grad_enabled(False)
        assert not dg.is_grad_enabled()
    finally:
        dg.set_grad_enabled(True)
    assert dg.is_grad_enabled()


# ----------------------------------------------------------------------------- hooks


def test_register_hook_sees_the_gradient_and_can_be_removed():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]]
    handle.remove()
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]]


def test_non_leaf_hook_can_be_removed():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    seen = []
    handle = h.register_hook(lambda g: seen.append(g.tolist()))
    handle.remove()
    (h * 3).sum().backward()
    assert seen == []
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_hook_on_a_non_leaf_may_replace_the_gradient():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.register_hook(lambda g: g * 10)
    (h * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [60.0, 60.0])  # the replacement flows on


def test_hook_on_a_leaf_may_replace_the_gradient():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])


def test_hook_returning_a_wrong_shape_raises():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.register_hook(lambda g: dg.ones(3))
    with pytest.raises(RuntimeError, match="changed the size"):
        h.sum().backward()


def test_leaf_hook_returning_a_wrong_shape_raises():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: dg.ones(2, 2))
    with pytest.raises(RuntimeError, match="changed the size"):
        (x * 2).sum().backward()


class _HookError(Exception):
    pass


@pytest.mark.parametrize("on_leaf", [False, True], ids=["non_leaf", "leaf"])
def test_hook_exception_propagates_unchanged_and_engine_stays_usable(on_leaf):
    error = _HookError("boom")

    def hook(g):
        raise error

    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    (x if on_leaf else h).register_hook(hook)
    with pytest.raises(_HookError) as info:
        (h * 3).sum().backward()
    assert info.value is error
    assert dg.is_grad_enabled()
    fresh = dg.tensor([1.0, 2.0], requires_grad=True)
    (fresh * fresh).sum().backward()
    np.testing.assert_allclose(fresh.grad.numpy(), [2.0, 4.0])
    assert (fresh * 2).requires_grad


def test_hook_exception_inside_no_grad_restores_no_grad():
    x = dg.tensor([1.0], requires_grad=True)
    y = (x * 2).sum()
    y.register_hook(lambda g: 1 / 0)
    with dg.no_grad():
        with pytest.raises(ZeroDivisionError):
            y.backward()
        assert not dg.is_grad_enabled()
    assert dg.is_grad_enabled()


# ----------------------------------------------------------------------------- higher order


def test_create_graph_gives_the_second_derivative_of_a_cube():
    x = dg.tensor([1.0, -2.0, 3.0], dtype=dg.float64, requires_grad=True)
    (gx,) = dg.autograd.grad((x**3).sum(), x, create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), 3 * x.detach().numpy() ** 2)
    assert gx.requires_grad
    (ggx,) = dg.autograd.grad(gx.sum(), x)
    np.testing.assert_allclose(ggx.detach().numpy(), 6 * x.detach().numpy())


def test_backward_with_create_graph_makes_grad_differentiable():
    x = dg.tensor([1.0, -2.0, 3.0], dtype=dg.float64, requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    gx = x.grad
    assert gx.requires_grad and gx.grad_fn is not None
    x.grad = None
    gx.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy())


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


SECOND_DERIVATIVES = {
    "tanh": (lambda t: t.tanh(), lambda v: -2 * np.tanh(v) * (1 - np.tanh(v) ** 2)),
    "sin": (lambda t: t.sin(), lambda v: -np.sin(v)),
    "exp": (lambda t: t.exp(), np.exp),
    "log": (lambda t: t.log(), lambda v: -1 / v**2),
    "sigmoid": (
        lambda t: t.sigmoid(),
        lambda v: _sigmoid(v) * (1 - _sigmoid(v)) * (1 - 2 * _sigmoid(v)),
    ),
}


@pytest.mark.parametrize("name", sorted(SECOND_DERIVATIVES))
def test_second_derivative_matches_the_analytic_formula(name):
    fn, expected = SECOND_DERIVATIVES[name]
    x = dg.tensor([0.3, 1.2, 2.5], dtype=dg.float64, requires_grad=True)
    (gx,) = dg.autograd.grad(fn(x).sum(), x, create_graph=True)
    (ggx,) = dg.autograd.grad(gx.sum(), x)
    np.testing.assert_allclose(ggx.detach().numpy(), expected(x.detach().numpy()),
                               rtol=1e-10, atol=1e-12)


def test_second_derivative_of_softmax_matches_the_analytic_hessian():
    xv = np.array([0.2, -1.0, 0.7])
    w = np.array([0.3, -0.7, 1.1])
    v = np.array([1.0, 2.0, -0.5])
    x = dg.tensor(xv, requires_grad=True)  # a float64 numpy array stays float64
    (gx,) = dg.autograd.grad((x.softmax() * dg.tensor(w)).sum(), x, create_graph=True)
    (ggx,) = dg.autograd.grad((gx * dg.tensor(v)).sum(), x)

    s = np.exp(xv) / np.exp(xv).sum()
    m = w @ s
    np.testing.assert_allclose(gx.detach().numpy(), s * (w - m), rtol=1e-10)
    # d g_i / d x_j for g_i = s_i (w_i - m)
    hessian = (np.diag(s) - np.outer(s, s)) * (w - m)[:, None] - np.outer(s, s * (w - m))
    np.testing.assert_allclose(ggx.numpy(), v @ hessian, rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------- autograd.grad


def test_autograd_grad_returns_gradients_without_touching_dot_grad():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    w = dg.tensor([3.0, 4.0], requires_grad=True)
    gx, gw = dg.autograd.grad((x * w).sum(), [x, w])
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(gw.numpy(), [1.0, 2.0])
    assert isinstance(gx, dg.Tensor)
    assert x.grad is None and w.grad is None


def test_autograd_grad_with_respect_to_a_non_leaf():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    (gh,) = dg.autograd.grad((h * h).sum(), h)
    np.testing.assert_allclose(gh.numpy(), [4.0, 8.0])
    assert x.grad is None


def test_autograd_grad_raises_for_an_unused_input():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    unused = dg.tensor([5.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        dg.autograd.grad((x * 2).sum(), [x, unused])


def test_autograd_grad_allow_unused_gives_none():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    unused = dg.tensor([5.0], requires_grad=True)
    gx, gu = dg.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), [2.0, 2.0])
    assert gu is None


# ----------------------------------------------------------------------------- custom Functions


class Cube(dg.autograd.Function):
    """z = x ** 3;  dz/dx = 3 x^2"""

    seen: dict = {}

    @staticmethod
    def forward(ctx, x):
        Cube.seen["xp"] = ctx.xp
        Cube.seen["input"] = x
        Cube.seen["grad mode in forward"] = dg.is_grad_enabled()
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, gz):
        Cube.seen["needs"] = ctx.needs_input_grad
        Cube.seen["gz type"] = type(gz)
        (x,) = ctx.saved_tensors
        Cube.seen["saved"] = x
        return 3 * x * x * gz


class ScaledAdd(dg.autograd.Function):
    """z = x + k y;  dz/dx = 1,  dz/dy = k"""

    needs: list = []

    @staticmethod
    def forward(ctx, x, y, k=2.0):
        ctx.k = k
        return x + k * y

    @staticmethod
    def backward(ctx, gz):
        ScaledAdd.needs.append(ctx.needs_input_grad)
        need_x, need_y = ctx.needs_input_grad
        return (gz if need_x else None), (ctx.k * gz if need_y else None)


def test_custom_function_sees_tensors_as_in_pytorch_and_backward_works():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    assert Cube.seen["xp"] is np
    assert Cube.seen["input"] is x  # the Tensor as given, with grad mode off inside forward
    assert Cube.seen["grad mode in forward"] is False
    assert repr(y.grad_fn) == "<CubeBackward>"
    assert y.grad_fn.parents == (x,)  # one node: the ops inside forward were not recorded
    np.testing.assert_allclose(y.detach().numpy(), [1.0, 8.0])
    y.sum().backward()
    assert Cube.seen["needs"] == (True,)
    assert Cube.seen["gz type"] is dg.Tensor and Cube.seen["saved"] is x
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])


def test_custom_function_needs_input_grad_and_options():
    ScaledAdd.needs.clear()
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = dg.tensor([1.0, 1.0])
    ScaledAdd.apply(x, y, k=3.0).sum().backward()
    assert ScaledAdd.needs == [(True, False)]
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])
    w = dg.tensor([1.0, 1.0], requires_grad=True)
    ScaledAdd.apply(y, w, k=3.0).sum().backward()
    assert ScaledAdd.needs[-1] == (False, True)
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 3.0])


def test_custom_function_saved_tensors_are_released_after_backward():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        node.saved_tensors  # noqa: B018 - the property raises


class WrongShape(dg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, gz):
        return gz, dg.ones(2, 3)


def test_custom_backward_of_the_wrong_shape_names_op_index_and_shapes():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = dg.tensor([3.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        WrongShape.apply(x, y).sum().backward()
    message = str(info.value)
    assert "WrongShape" in message
    assert "index 1" in message
    assert "(2, 3)" in message
    assert "(2,)" in message


class WrongCount(dg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, gz):
        return gz * 2, gz


def test_custom_backward_returning_too_many_gradients_raises_clearly():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        WrongCount.apply(x).sum().backward()
    message = str(info.value)
    assert "WrongCount" in message
    assert "2 gradient" in message
    assert "1 input" in message


class EngineOpReturnsTensor(dg.Function):
    """An op of the engine's own convention (dg.Function: arrays in and out)."""

    @staticmethod
    def forward(ctx, x):
        return dg.tensor(x)


def test_an_engine_op_returning_a_tensor_is_explained():
    with pytest.raises(TypeError, match="raw arrays.*subclass dg.autograd.Function"):
        EngineOpReturnsTensor.apply(dg.tensor([1.0], requires_grad=True))


class ReturnsArray(dg.autograd.Function):
    """A custom op written for the older convention: forward returns a numpy array."""

    @staticmethod
    def forward(ctx, x):
        return x.detach().numpy() * 2

    @staticmethod
    def backward(ctx, gz):
        return gz * 2


def test_a_custom_forward_returning_an_array_still_works():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = ReturnsArray.apply(x)
    assert isinstance(y, dg.Tensor) and repr(y.grad_fn) == "<ReturnsArrayBackward>"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


class NumpyOnTensors(dg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return ctx.xp.exp(x)  # the older, raw-array convention


def test_numpy_functions_on_the_tensors_a_custom_op_receives_are_explained():
    with pytest.raises(TypeError, match=r"receive Tensors, as in PyTorch.*x\.exp\(\)"):
        NumpyOnTensors.apply(dg.tensor([1.0], requires_grad=True))


# ----------------------------------------------------------------------------- broadcasting


def test_broadcast_gradients_are_summed_back_to_the_input_shape():
    a = dg.ones(3, 1, requires_grad=True)
    b = dg.ones(1, 4, requires_grad=True)
    (a + b).sum().backward()
    assert a.grad.shape == (3, 1)
    np.testing.assert_allclose(a.grad.numpy(), np.full((3, 1), 4.0))
    assert b.grad.shape == (1, 4)
    np.testing.assert_allclose(b.grad.numpy(), np.full((1, 4), 3.0))


def test_broadcast_against_a_lower_rank_input():
    a = dg.ones(2, 3, requires_grad=True)
    bias = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (a * bias).sum().backward()
    assert bias.grad.shape == (3,)
    np.testing.assert_allclose(bias.grad.numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(a.grad.numpy(), [[1.0, 2.0, 3.0]] * 2)
