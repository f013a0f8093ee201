"""dg.trace: a dynamic run recorded as a StaticGraph, replayed without Python control flow.

Replays equal eager execution, the TracerWarning names the line whose data-dependent decision
the trace cannot record, and a replay silently follows the traced branch (the pitfall the
lessons show). Backward through a replay gives eager's gradients.
"""

from __future__ import annotations

import gc
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import function
from dyngraph.trace import Step

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import w5_trace  # noqa: E402


def make_mlp(seed: int = 0):
    """A 4-8-3 tanh MLP from plain tensors (weights captured by the closure)."""
    rng = np.random.default_rng(seed)
    w1 = dg.tensor(rng.standard_normal((4, 8)), dtype=dg.float32, requires_grad=True, name="W1")
    b1 = dg.tensor(rng.standard_normal(8), dtype=dg.float32, requires_grad=True, name="b1")
    w2 = dg.tensor(rng.standard_normal((8, 3)), dtype=dg.float32, requires_grad=True, name="W2")

    def mlp(x):
        return (x @ w1 + b1).tanh() @ w2

    return [w1, b1, w2], mlp


def randn(*shape, seed=1, requires_grad=False):
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return dg.tensor(data, requires_grad=requires_grad)


def branchy(x):
    if x.sum() > 0:  # control flow decided by data
        return x * 2
    return x - 100


# ----------------------------------------------------------------------------- replay equality


def test_replay_equals_eager_on_new_inputs():
    _, mlp = make_mlp()
    graph = dg.trace(mlp, randn(5, 4, seed=1))
    for seed in range(2, 5):
        x = randn(5, 4, seed=seed)
        np.testing.assert_allclose(graph(x).detach().numpy(), mlp(x).detach().numpy(), rtol=1e-6)
    assert graph.run(x).shape == (5, 3)


def test_replay_without_grad_builds_no_graph_and_emits_nothing():
    _, mlp = make_mlp()
    x = randn(5, 4)
    graph = dg.trace(mlp, x)
    seen = []
    with dg.no_grad(), dg.events.subscribe(seen.append):
        y = graph(x)
    assert y.grad_fn is None and not y.requires_grad
    assert seen == []


def test_fast_replay_keeps_nothing_saved_between_calls():
    gc.collect()  # saved_bytes() counts every live node: not those earlier tests left in cycles
    _, mlp = make_mlp()
    x = randn(5, 4)
    graph = dg.trace(mlp, x)
    with dg.no_grad():
        graph(x)
    assert dg.memory.saved_bytes() == 0


def test_replay_accepts_numpy_arrays_and_lists():
    _, mlp = make_mlp()
    x = randn(2, 4)
    graph = dg.trace(mlp, x)
    with dg.no_grad():
        np.testing.assert_allclose(graph(x.numpy()).numpy(), mlp(x).numpy(), rtol=1e-6)
        from_lists = graph(x.numpy().tolist())  # Python floats become float32, as in dg.tensor
    assert from_lists.dtype == np.float32
    np.testing.assert_allclose(from_lists.detach().numpy(), mlp(x).detach().numpy(), rtol=1e-6)


def test_several_inputs_and_outputs_rnn_step():
    rng = np.random.default_rng(0)
    wx = dg.tensor(rng.standard_normal((3, 5)), dtype=dg.float32)
    wh = dg.tensor(rng.standard_normal((5, 5)), dtype=dg.float32)

    def step(x, h):
        h = (x @ wx + h @ wh).tanh()
        return h, h.sum(axis=1)

    graph = dg.trace(step, randn(2, 3), randn(2, 5, seed=2))
    x, h = randn(2, 3, seed=3), randn(2, 5, seed=4)
    got = graph(x, h)
    want = step(x, h)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


def test_options_constants_and_shape_ops_replay():
    def fn(x):
        y = x.reshape(3, 4).T[1:, ::2] * 0.5
        z = dg.cat([y, y.exp()], axis=0).softmax(axis=-1)
        return z.sum(axis=(0,), keepdims=True).clamp(min=0.1) + 2.0

    graph = dg.trace(fn, randn(12))
    x = randn(12, seed=7)
    np.testing.assert_allclose(graph(x).numpy(), fn(x).numpy(), rtol=1e-6)


def test_captured_weights_are_read_at_each_replay():
    params, mlp = make_mlp()
    x = randn(2, 4)
    graph = dg.trace(mlp, x)
    with dg.no_grad():
        params[2] *= 2.0  # an optimizer step: in place
    np.testing.assert_allclose(graph(x).detach().numpy(), mlp(x).detach().numpy(), rtol=1e-6)


def test_unused_steps_are_dropped():
    def fn(x):
        x.sum().item()  # computed, read, never used in the output (and warned about)
        return x.exp()

    with pytest.warns(dg.TracerWarning):
        graph = dg.trace(fn, randn(3))
    assert [s.op for s in graph.steps] == ["Exp"]


def test_replay_checks_the_number_of_inputs():
    graph = dg.trace(lambda x: x * 2, randn(3))
    with pytest.raises(TypeError, match="traced with 1 input"):
        graph(randn(3), randn(3))


def test_a_failing_replay_names_the_step():
    _, mlp = make_mlp()
    graph = dg.trace(mlp, randn(2, 4))
    with dg.no_grad(), pytest.raises(ValueError, match=r"replaying step 0 \(MatMul"):
        graph(randn(2, 7))
    with pytest.raises(RuntimeError, match="not aligned"):  # with grad: apply's own message
        graph(randn(2, 7))


def test_trace_needs_tensor_inputs_and_tensor_outputs():
    with pytest.raises(TypeError, match="example inputs"):
        dg.trace(lambda x: x, np.ones(3))
    with pytest.raises(TypeError, match="must return a Tensor"):
        dg.trace(lambda x: 3.0, randn(3))


def test_the_recorder_is_uninstalled_even_when_fn_raises():
    def broken(x):
        x.exp()
        raise KeyError("boom")

    with pytest.raises(KeyError):
        dg.trace(broken, randn(3))
    assert function.installed_hooks() == ()
    dg.trace(lambda x: x * 2, randn(3))
    assert function.installed_hooks() == ()


# ----------------------------------------------------------------------------- the warning


def test_data_dependent_branch_warns_and_names_the_line():
    with pytest.warns(dg.TracerWarning) as caught:
        dg.trace(branchy, randn(4, seed=1))
    message = str(caught[0].message)
    assert "might not generalize" in message
    assert "control flow" in message and "decided by data" in message
    assert "bool(t)" in message
    line = branchy.__code__.co_firstlineno + 1
    assert f"{__file__}, line {line}" in message
    assert "if x.sum() > 0:" in message
    assert caught[0].filename == __file__ and caught[0].lineno == line


def test_item_warns_too():
    def scaled(x):
        return x / x.abs().max().item()

    with pytest.warns(dg.TracerWarning, match=r"item\(\)"):
        graph = dg.trace(scaled, randn(4))
    assert graph.data_reads and graph.data_reads[0][1] == "item()"


def test_tracer_warning_is_a_user_warning():
    assert issubclass(dg.TracerWarning, UserWarning)


def test_no_warning_when_nothing_depends_on_data():
    _, mlp = make_mlp()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        graph = dg.trace(mlp, randn(2, 4))
    assert graph.data_reads == []


def test_replay_silently_follows_the_traced_branch():
    """The pitfall: traced with a positive sum, replayed with a negative one."""
    positive = dg.tensor([1.0, 2.0, 3.0])
    negative = dg.tensor([-1.0, -2.0, -3.0])
    with pytest.warns(dg.TracerWarning):
        graph = dg.trace(branchy, positive)
    eager = branchy(negative)  # takes the other branch: x - 100
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the replay itself says nothing
        replayed = graph(negative)
    np.testing.assert_allclose(eager.numpy(), [-101.0, -102.0, -103.0])
    np.testing.assert_allclose(replayed.numpy(), [-2.0, -4.0, -6.0])  # x * 2, as traced


def test_tensor_made_inside_the_function_is_a_constant_and_warned_about():
    def fn(x):
        return x + dg.tensor(x.shape[0], dtype=dg.float32)

    with pytest.warns(dg.TracerWarning, match="recorded as a constant"):
        dg.trace(fn, randn(3))


def test_comparison_mask_is_a_constant_and_warned_about():
    with pytest.warns(dg.TracerWarning, match="boolean mask"):
        graph = dg.trace(lambda x: dg.where(x > 0, x, 0.0), dg.tensor([1.0, -1.0]))
    # the mask of the traced run is replayed: [True, False]
    np.testing.assert_allclose(graph(dg.tensor([-5.0, 5.0])).numpy(), [-5.0, 0.0])


# ----------------------------------------------------------------------------- backward


def test_backward_through_replay_equals_eager():
    params, mlp = make_mlp()
    graph = dg.trace(mlp, randn(5, 4))
    x_eager = randn(5, 4, seed=9, requires_grad=True)
    (mlp(x_eager) ** 2).sum().backward()
    eager = [p.grad.numpy().copy() for p in [x_eager, *params]]
    for p in params:
        p.grad = None

    x_traced = randn(5, 4, seed=9, requires_grad=True)
    out = graph(x_traced)
    assert out.grad_fn is not None  # replayed through Function.apply: a graph
    (out**2).sum().backward()
    traced = [p.grad.numpy() for p in [x_traced, *params]]
    for g, w in zip(traced, eager):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_captured_weight_requiring_grad_gets_gradient():
    w = dg.tensor([1.0, 2.0], requires_grad=True)
    graph = dg.trace(lambda x: (x * w).sum(), dg.tensor([3.0, 4.0]))
    graph(dg.tensor([3.0, 4.0])).backward()
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 4.0])


def test_raw_array_arguments_stay_raw_in_grad_replay():
    def fn(x):
        return dg.where(x.relu(), x, 0.0)  # dg.where gives the op relu's array, not the Tensor

    x = dg.tensor([1.0, -2.0], requires_grad=True)
    graph = dg.trace(fn, x)
    assert graph.steps[1].inputs[0] == "step:0"
    graph(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.0])


# ----------------------------------------------------------------------------- what readers see


def test_repr_is_deterministic():
    _, mlp = make_mlp()
    graph = dg.trace(mlp, randn(5, 4))
    assert repr(graph) == "StaticGraph(4 ops, inputs=[(5, 4) float32], outputs=[(5, 3) float32])"
    assert repr(dg.trace(mlp, randn(5, 4))) == repr(graph)
    assert len(graph) == 4


def test_steps_for_a_diagram():
    _, mlp = make_mlp()
    graph = dg.trace(mlp, randn(5, 4))
    assert graph.steps == [
        Step("MatMul", ("input:0", "captured:0"), (5, 8)),
        Step("Add", ("step:0", "captured:1"), (5, 8)),
        Step("Tanh", ("step:1",), (5, 8)),
        Step("MatMul", ("step:2", "captured:2"), (5, 3)),
    ]
    assert [t.name for t in graph.captured] == ["W1", "b1", "W2"]
    assert graph.input_shapes == [(5, 4)] and graph.output_shapes == [(5, 3)]
    assert dg.trace(lambda x: x * 2, randn(2)).steps[0].inputs == ("input:0", "constant:2")


def test_nested_traces_both_record_and_both_warn():
    inner_graphs = []

    def outer(x):
        inner_graphs.append(dg.trace(branchy, x))
        return inner_graphs[0](x).exp()

    with pytest.warns(dg.TracerWarning) as caught:
        graph = dg.trace(outer, dg.tensor([1.0, 2.0]))
    assert len(caught) == 2  # the inner trace's warning, passed on to the outer one
    assert [s.op for s in inner_graphs[0].steps] == ["Mul"]
    assert [s.op for s in graph.steps] == ["Mul", "Exp"]  # the inner replay, then exp
    assert function.installed_hooks() == ()


def test_draws_as_a_diagram():
    _, mlp = make_mlp()
    graph = dg.trace(mlp, randn(5, 4))
    dot = graph.draw().to_dot()
    for op in ("MatMul", "Add", "Tanh"):
        assert op in dot
    bundle = graph._repr_mimebundle_()
    assert bundle["text/plain"] == repr(graph)
    assert function.installed_hooks() == ()


def test_checkpoint_inside_a_trace_is_traced_as_its_ops():
    params, mlp = make_mlp()
    graph = dg.trace(lambda x: dg.checkpoint(mlp, x), randn(5, 4))
    assert [s.op for s in graph.steps] == ["MatMul", "Add", "Tanh", "MatMul"]


# ----------------------------------------------------------------------------- the benchmark


def test_w5_benchmark_models_replay_like_eager():
    _, mlp = w5_trace.make_mlp()
    x = w5_trace.mlp_inputs()
    with dg.no_grad():
        np.testing.assert_allclose(dg.trace(mlp, x)(x).numpy(), mlp(x).numpy(), rtol=1e-6)
    _, step = w5_trace.make_rnn_step()
    xs, h = w5_trace.rnn_inputs()
    with dg.no_grad():
        traced = dg.trace(step, xs, h)(xs, h)
    np.testing.assert_allclose(traced.detach().numpy(), step(xs, h).detach().numpy(), rtol=1e-6)
    results = w5_trace.run(quick=True)
    assert [r.name.split(" ")[0] for r in results] == ["W5"] * 3
