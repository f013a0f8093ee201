"""The engine's common path in C (``Function.apply`` and ``BackwardPass.propagate``, installed by
dyngraph/_accelerated.py) does what the readable definitions in function.py and autograd.py do:
each program below runs once with each, and everything it produces is compared - values,
gradients, the graph's nodes, the events subscribers receive, and the errors learners see."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import _accelerated, autograd, events
from dyngraph.function import Function, FunctionHook

ROOT = Path(__file__).resolve().parents[1]
needs_accelerated = pytest.mark.skipif(
    _accelerated.speedups is None,
    reason="dyngraph._speedups is not built (no C compiler at install time, or "
    "DYNGRAPH_PURE_PYTHON is set): only the readable engine exists here",
)


def test_the_common_path_is_installed_where_it_is_built():
    if _accelerated.speedups is None:
        pytest.skip("dyngraph._speedups is not built: the readable engine runs, nothing to check")
    assert Function.__dict__["apply"].__func__ is _accelerated.speedups.apply
    assert autograd.BackwardPass.propagate is not _accelerated.readable_propagate


def test_pure_python_keeps_every_readable_definition():
    """DYNGRAPH_PURE_PYTHON=1: nothing is replaced (the engine, the spine, the replay)."""
    code = (
        "import dyngraph as dg\n"
        "from dyngraph import _accelerated as a, autograd, events as e\n"
        "print(a.speedups is None, a.READABLE == {},\n"
        "      dg.Function.__dict__['apply'].__func__ is a.readable_apply,\n"
        "      autograd.BackwardPass.propagate is a.readable_propagate,\n"
        "      e.preview.__module__ == e.where_from_stack.__module__ == 'dyngraph.events')"
    )
    env = {**os.environ, "DYNGRAPH_PURE_PYTHON": "1", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True"] * 5


# ---------------------------------------------------------------------------- running both


def _run_with(engine: str, program: Callable[[], Any]) -> tuple[Any, list, BaseException | None]:
    """Run ``program`` with the readable or the accelerated engine, under a subscriber that
    keeps every event. Returns what it returned, the events, and what it raised."""
    if engine == "readable":
        _accelerated.uninstall_engine()
    received: list = []
    dg.manual_seed(0)
    try:
        with events.subscribe(received.append):
            try:
                result, error = program(), None
            except Exception as exc:  # compared below
                result, error = None, exc
    finally:
        _accelerated.install_engine()
    return result, received, error


def _run_quietly(engine: str, program: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    """The same, with nobody listening (the path the engine takes most)."""
    if engine == "readable":
        _accelerated.uninstall_engine()
    dg.manual_seed(0)
    try:
        try:
            return program(), None
        except Exception as exc:
            return None, exc
    finally:
        _accelerated.install_engine()


class _Ids:
    """Node ids differ between two runs (they count up for the whole process): compare them
    by order of first appearance."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}

    def __call__(self, value: int) -> int:
        return self.seen.setdefault(value, len(self.seen))


def _plain(value: Any, ids: _Ids, key: str = "") -> Any:
    """An event field, comparable between runs: ids renumbered, arrays as lists, times dropped."""
    if key in ("id", "node", "input", "root") and isinstance(value, int):
        return ids(value)
    if key in ("inputs", "ids"):
        return tuple(ids(v) for v in value)
    if key == "elapsed":
        return value is not None
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__,) + tuple(
            _plain(v, ids, k) for k, v in zip(value._fields, value)
        )
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v, ids) for v in value)
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tolist())
    return value


def _outcome(result: Any, ids: _Ids) -> Any:
    """What a program returned, comparable: tensors by value, dtype and graph position."""
    if isinstance(result, dg.Tensor):
        return ("tensor", result.dtype.str, tuple(result.shape), result.array.tolist(),
                result.requires_grad, _graph(result.grad_fn, ids))
    if isinstance(result, (list, tuple)):
        return tuple(_outcome(r, ids) for r in result)
    if isinstance(result, np.ndarray):
        return ("array", result.dtype.str, result.tolist())
    return result


def _graph(node: Function | None, ids: _Ids) -> tuple:
    """Every node behind a tensor, newest first, each with what it holds."""
    found: dict[int, Function] = {}
    stack = [node] if node is not None else []
    while stack:
        item = stack.pop()
        if isinstance(item, Function) and item.id not in found:
            found[item.id] = item
            stack.extend(item.parents)
    return tuple(_node(found[k], ids) for k in sorted(found, reverse=True))


def _node(node: Function, ids: _Ids) -> tuple:
    parents = tuple(
        None if p is None else (type(p).__name__, ids(p.id)) for p in node.parents
    )
    saved = node.saved_arrays
    sources = _saved_sources(node)
    return (node.name, ids(node.id), tuple(node.shape), str(node.dtype), parents,
            node.needs_input_grad, node.xp.__name__,
            None if saved is None else len(saved), sources)


def _saved_sources(node: Function) -> Any:
    try:
        sources = node._saved_sources
    except AttributeError:
        return "unset"
    return tuple(
        (type(s).__name__, s.position,
         s.tensor if isinstance(s.tensor, str) else ("tensor", tuple(s.tensor.shape)), s.version)
        for s in sources
    )


def _error(error: BaseException | None) -> Any:
    if error is None:
        return None
    return (type(error).__name__, str(error), error.__cause__ is None,
            error.__suppress_context__, type(error.__context__).__name__)


def _same_on_both(program: Callable[[], Any], listen: bool = True) -> Any:
    """Run ``program`` with both engines; assert they agree; return the readable outcome."""
    outcomes = []
    for engine in ("readable", "accelerated"):
        ids = _Ids()
        if listen:
            result, received, error = _run_with(engine, program)
            stream = [_plain(event, ids) for event in received]
        else:
            (result, error), stream = _run_quietly(engine, program), []
        outcomes.append((_outcome(result, ids), stream, _error(error)))
    readable, accelerated = outcomes
    assert accelerated[2] == readable[2], "the errors differ"
    assert accelerated[0] == readable[0], "the results differ"
    assert len(accelerated[1]) == len(readable[1]), "a different number of events"
    for i, (a, r) in enumerate(zip(accelerated[1], readable[1])):
        assert a == r, f"event {i} differs"
    return readable


# ---------------------------------------------------------------------------- the programs


def _chain() -> Any:
    """W1's chain, with constants and Python numbers on either side."""
    x = dg.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 8), requires_grad=True)
    b, w = dg.full((1, 8), 0.1), dg.full((1, 8), 0.9)
    h = x
    for i in range(12):
        h = (h + b, h * w, h.tanh(), 2.0 * h, h - 1, h * 0.5)[i % 6]
    total = h.sum()
    total.backward()
    return total, x.grad


def _mlp() -> Any:
    """A 2-layer MLP on a batch: matmul, broadcast bias (un-broadcast in backward), relu,
    cross-entropy with integer targets, parameters as leaves."""
    model = dg.nn.Sequential(dg.nn.Linear(6, 5), dg.nn.ReLU(), dg.nn.Linear(5, 3))
    x = dg.randn(4, 6)
    y = dg.tensor([0, 2, 1, 2])
    loss = dg.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss, [p.grad for p in model.parameters()]


def _fan_in() -> Any:
    """A tensor used three times: its gradient is a sum (the accumulated flag in events)."""
    x = dg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * x + x
    z = (y * x).sum()
    z.backward()
    return z, x.grad


def _mixed_dtypes() -> Any:
    """float32 meets float64 and int64: NOTE [type promotion], NOTE [gradient dtype]."""
    a = dg.tensor([1.0, 2.0], dtype=dg.float32, requires_grad=True)
    b = dg.tensor([3.0, 4.0], dtype=dg.float64, requires_grad=True)
    n = dg.tensor([1, 2])
    c = (a * b + n * 2.5).sum() + (n / 2).sum()
    c.backward()
    return c, a.grad, b.grad, n * a


def _no_grad_and_constants() -> Any:
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.no_grad():
        y = x * 3
    z = dg.tensor([5.0]) + 1
    return y, z, x + np.float32(2.0), x * np.array([1.0, 2.0], dtype=np.float32)


def _hooks_and_retained() -> Any:
    x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 2
    h.retain_grad()
    seen = []
    h.register_hook(lambda g: seen.append(g.numpy().tolist()))
    k = h.tanh()
    k.register_hook(lambda g: g * 10)
    k.sum().backward()
    return h.grad, x.grad, seen


def _retain_graph_twice() -> Any:
    x = dg.tensor([0.5, -0.5], requires_grad=True)
    y = (x * x).tanh().sum()
    y.backward(retain_graph=True)
    y.backward()
    return x.grad


def _second_backward() -> Any:
    x = dg.tensor([0.5, -0.5], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _inplace_after_save() -> Any:
    x = dg.tensor([0.5, -0.5], requires_grad=True)
    h = x * 1
    y = h * h
    h.add_(1)
    y.sum().backward()


def _shapes_that_do_not_broadcast() -> Any:
    return dg.ones(2, 3, requires_grad=True) + dg.ones(4, 5)


def _matmul_mismatch() -> Any:
    return dg.ones(2, 3, requires_grad=True) @ dg.ones(4, 5)


class _Twice(Function):
    """A custom op: forward returns a Python float for a scalar input (made an array)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return float(x.sum()) * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return np.ones_like(x) * g * 2


class _Fails(Function):
    @staticmethod
    def forward(ctx, x):
        raise ValueError("my own op's message")


class _TooManyGrads(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        return g, g


class _Pair(Function):
    @staticmethod
    def forward(ctx, x):
        return x, x


def _custom_ops() -> Any:
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = _Twice.apply(x)
    y.backward()
    return y, x.grad


def _custom_error() -> Any:
    return _Fails.apply(dg.tensor([1.0], requires_grad=True))


def _custom_wrong_count() -> Any:
    _TooManyGrads.apply(dg.tensor([1.0], requires_grad=True)).sum().backward()


def _custom_tuple() -> Any:
    return _Pair.apply(dg.tensor([1.0], requires_grad=True))


def _options_and_many_inputs() -> Any:
    x = dg.randn(3, 4, requires_grad=True)
    parts = [x * k for k in range(1, 11)]
    s = dg.cat(parts, dim=1).sum(dim=0, keepdim=True).mean()
    s.backward()
    return s, x.grad


def _leaf_gradient_accumulates() -> Any:
    w = dg.tensor([[1.0, 2.0]], requires_grad=True)
    for _ in range(3):
        (w * w).sum().backward()
    return w.grad


def _rnn_weights_summed_over_steps() -> Any:
    """A weight used at every step: its gradient is a running sum of 20 contributions
    (autograd.add_into_sum adds them in place once the sum is the pass's own)."""
    w = dg.randn(4, 4, requires_grad=True)
    b = dg.zeros(4, requires_grad=True)
    h = dg.randn(1, 4)
    for _ in range(20):
        h = (h @ w + b).tanh()
    h.sum().backward()
    return w.grad, b.grad


def _one_gradient_handed_to_two_inputs() -> Any:
    """Add hands one array to both inputs; later contributions to x must not change y's."""
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = dg.tensor([3.0, 4.0], requires_grad=True)
    z = (x * 2).sum() + (x * 3).sum() + (x + y).sum()  # Add is newest: its gradient comes first
    z.backward()
    return x.grad, y.grad


PROGRAMS = {
    "rnn_weights_summed_over_steps": _rnn_weights_summed_over_steps,
    "one_gradient_handed_to_two_inputs": _one_gradient_handed_to_two_inputs,
    "chain": _chain,
    "mlp": _mlp,
    "fan_in": _fan_in,
    "mixed_dtypes": _mixed_dtypes,
    "no_grad_and_constants": _no_grad_and_constants,
    "hooks_and_retained": _hooks_and_retained,
    "retain_graph_twice": _retain_graph_twice,
    "second_backward": _second_backward,
    "inplace_after_save": _inplace_after_save,
    "shapes_that_do_not_broadcast": _shapes_that_do_not_broadcast,
    "matmul_mismatch": _matmul_mismatch,
    "custom_ops": _custom_ops,
    "custom_error": _custom_error,
    "custom_wrong_count": _custom_wrong_count,
    "custom_tuple": _custom_tuple,
    "options_and_many_inputs": _options_and_many_inputs,
    "leaf_gradient_accumulates": _leaf_gradient_accumulates,
}

ERRORS = {"second_backward", "inplace_after_save", "shapes_that_do_not_broadcast",
          "matmul_mismatch", "custom_error", "custom_wrong_count", "custom_tuple"}


@needs_accelerated
@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("listen", [False, True], ids=["quiet", "watched"])
def test_both_engines_agree(name, listen):
    result, stream, error = _same_on_both(PROGRAMS[name], listen=listen)
    assert (error is not None) == (name in ERRORS), error  # each program does what it says
    if listen:
        assert stream, "a watched program emits events"


@needs_accelerated
def test_a_learners_line_names_the_node_on_both():
    """NOTE [variable names]: the node is named after the variable of the learner's line, found
    by walking the frames from apply's caller (which has no frame of apply's own in C)."""

    def program() -> Any:
        x = dg.tensor([1.0, 2.0], requires_grad=True)
        hidden = x * 3
        logits = dg.nn.functional.relu(hidden).reshape(1, 2)
        return dg.nn.functional.cross_entropy(logits, dg.tensor([1]))

    _, stream, _ = _same_on_both(program)
    names = [event[9] for event in stream if event[0] == "NodeCreated"]
    assert "hidden" in names


@needs_accelerated
def test_a_forward_error_reads_the_same_on_both():
    _, _, error = _same_on_both(_shapes_that_do_not_broadcast)
    kind, message, no_cause, suppressed, context = error
    assert kind == "RuntimeError" and "cannot be broadcast together" in message
    assert no_cause and suppressed and context == "ValueError"  # raise ... from None


@needs_accelerated
def test_a_function_hook_sees_every_op_on_both():
    class Count(FunctionHook):
        def __init__(self) -> None:
            self.ops: list[str] = []

        def forward_postprocess(self, cls, args, options, output):
            self.ops.append(cls.__name__)

    def program() -> Any:
        with Count() as count:
            _chain()
        return count.ops

    ops, _, _ = _same_on_both(program)
    assert ops[:3] == ("Add", "Mul", "Tanh")


@needs_accelerated
def test_gradients_match_finite_differences_on_the_accelerated_engine():
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((3, 4))
    w0 = rng.standard_normal((4, 2))

    def f(x: np.ndarray) -> float:
        return float(np.sum(np.tanh(x @ w0) * 1.5 + x.sum(axis=1, keepdims=True)))

    x = dg.tensor(x0, requires_grad=True)
    y = ((x @ dg.tensor(w0)).tanh() * 1.5 + x.sum(dim=1, keepdim=True)).sum()
    y.backward()
    numeric = np.zeros_like(x0)
    eps = 1e-6
    for index in np.ndindex(*x0.shape):
        up, down = x0.copy(), x0.copy()
        up[index] += eps
        down[index] -= eps
        numeric[index] = (f(up) - f(down)) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("engine", ["readable", "accelerated"])
def test_a_gradient_handed_to_two_inputs_is_never_added_into(engine):
    if engine == "accelerated" and _accelerated.speedups is None:
        pytest.skip("dyngraph._speedups is not built: only the readable engine exists here")
    (x_grad, y_grad), _ = _run_quietly(engine, _one_gradient_handed_to_two_inputs)
    np.testing.assert_array_equal(x_grad.numpy(), [6.0, 6.0])
    np.testing.assert_array_equal(y_grad.numpy(), [1.0, 1.0])


def test_add_into_sum_adds_in_place_only_into_the_pass_own_sum():
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


@needs_accelerated
@pytest.mark.parametrize("failing", [False, True], ids=["replays", "fails"])
def test_a_traced_replay_is_the_same_on_both(monkeypatch, failing):
    """trace.replay_steps (the loop of a fast replay) in C and in Python: the same outputs, and
    the same explained error naming the step that failed."""
    w = dg.randn(4, 3)

    def model(x):
        return ((x @ w).tanh() * 2.0).sum(dim=1)

    graph = dg.trace(model, dg.randn(2, 4))
    x = dg.randn(5, 4) if not failing else dg.randn(5, 7)  # 7 columns: the matmul fails
    outcomes = []
    for replay in (_accelerated.readable(_accelerated.trace_module, "replay_steps"),
                   _accelerated.speedups.replay_steps):
        monkeypatch.setattr(_accelerated.trace_module, "replay_steps", replay)
        with dg.no_grad():
            try:
                outcomes.append(("ok", graph(x).numpy().tolist()))
            except Exception as exc:
                outcomes.append((type(exc).__name__, str(exc)))
    assert outcomes[0] == outcomes[1]
    if failing:
        assert outcomes[0][0] != "ok" and "replaying step 0 (MatMul" in outcomes[0][1]
    else:
        np.testing.assert_allclose(outcomes[0][1], model(x).numpy(), rtol=1e-6)
