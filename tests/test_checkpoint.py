"""dg.checkpoint: forward keeps only the segment's inputs, backward recomputes the rest.

Gradients equal the plain ones (an MLP block; an RNN unrolled over steps in checkpointed
segments), recomputed nodes are marked in events, and the bytes held for backward drop.
"""

from __future__ import annotations

import numpy as np
import pytest

import dyngraph as dg
import dyngraph.nn.functional as F
from dyngraph import events, function
from dyngraph.checkpoint import Checkpoint
from dyngraph.spine import thread_state


def param(*shape, seed=0, scale=0.5):
    data = scale * np.random.default_rng(seed).standard_normal(shape)
    return dg.tensor(data, dtype=dg.float64, requires_grad=True)


def data(*shape, seed=1, requires_grad=False):
    values = np.random.default_rng(seed).standard_normal(shape)
    return dg.tensor(values, dtype=dg.float64, requires_grad=requires_grad)


class MLPBlock:
    """Three tanh layers from plain tensors: the weights live in the closure."""

    def __init__(self, width=16, seed=0):
        self.weights = [param(width, width, seed=seed + i) for i in range(3)]
        self.bias = param(width, seed=seed + 9)

    def __call__(self, h):
        for w in self.weights:
            h = (h @ w + self.bias).tanh()
        return h

    def parameters(self):
        return [*self.weights, self.bias]


def grads_of(tensors):
    grads = [None if t.grad is None else t.grad.numpy().copy() for t in tensors]
    for t in tensors:
        t.grad = None
    return grads


def assert_same_grads(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g is not None and w is not None
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- gradients


def test_mlp_block_gradients_equal_plain_ones():
    block = MLPBlock()
    x = data(8, 16, requires_grad=True)
    (block(block(x)) ** 2).sum().backward()
    plain = grads_of([x, *block.parameters()])

    h = dg.checkpoint(block, x)
    (dg.checkpoint(block, h) ** 2).sum().backward()
    assert_same_grads(grads_of([x, *block.parameters()]), plain)


def test_the_result_is_one_checkpoint_node_saving_only_inputs():
    block = MLPBlock()
    x = data(8, 16, requires_grad=True)
    y = dg.checkpoint(block, x)
    assert isinstance(y.grad_fn, Checkpoint)
    saved = y.grad_fn.saved_arrays
    assert saved[0] is x.array  # the segment's input ...
    assert all(any(a is p.array for p in block.parameters()) for a in saved[1:])  # ... its weights
    np.testing.assert_allclose(y.detach().numpy(), block(x).detach().numpy())


def rnn_params(n_in=3, n_hidden=5):
    return param(n_in, n_hidden, seed=1), param(n_hidden, n_hidden, seed=2), param(n_hidden, seed=3)


def run_rnn(params, xs, h, segment_length=None):
    wx, wh, b = params

    def segment(h, *chunk):
        for x in chunk:
            h = (x @ wx + h @ wh + b).tanh()
        return h

    if segment_length is None:
        return segment(h, *xs)
    for start in range(0, len(xs), segment_length):
        h = dg.checkpoint(segment, h, *xs[start : start + segment_length])
    return h


def test_rnn_with_checkpointed_segments_gradients_equal_plain_ones():
    params = rnn_params()
    xs = [data(2, 3, seed=10 + t) for t in range(12)]
    h0 = dg.zeros(2, 5, dtype=dg.float64)  # requires no grad: the weights must still get theirs
    (run_rnn(params, xs, h0) ** 2).sum().backward()
    plain = grads_of(params)
    (run_rnn(params, xs, h0, segment_length=4) ** 2).sum().backward()
    assert_same_grads(grads_of(params), plain)


def test_inputs_that_require_grad_get_their_gradient():
    params = rnn_params()
    xs = [data(2, 3, seed=t, requires_grad=True) for t in range(6)]
    h0 = data(2, 5, seed=99, requires_grad=True)
    run_rnn(params, xs, h0).sum().backward()
    plain = grads_of([h0, *xs, *params])
    run_rnn(params, xs, h0, segment_length=3).sum().backward()
    assert_same_grads(grads_of([h0, *xs, *params]), plain)


def test_autograd_grad_through_a_checkpoint_does_not_touch_dot_grad():
    block = MLPBlock()
    x = data(4, 16, requires_grad=True)
    (want,) = dg.autograd.grad(block(x).sum(), [x])
    (got,) = dg.autograd.grad(dg.checkpoint(block, x).sum(), [x])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)
    assert all(p.grad is None for p in block.parameters())


def test_dropout_draws_the_same_mask_when_recomputed():
    w = param(6, 6)

    def noisy(h):
        return F.dropout(h @ w, p=0.5).tanh()

    x = data(4, 6, requires_grad=True)
    dg.manual_seed(3)
    noisy(x).sum().backward()
    plain = grads_of([x, w])
    dg.manual_seed(3)
    dg.checkpoint(noisy, x).sum().backward()
    assert_same_grads(grads_of([x, w]), plain)


def test_non_tensor_arguments_are_passed_through():
    w = param(3, 3)
    x = data(2, 3, requires_grad=True)
    (x @ w * 2.5).sum().backward()
    plain = grads_of([x, w])
    dg.checkpoint(lambda h, scale: h @ w * scale, x, 2.5).sum().backward()
    assert_same_grads(grads_of([x, w]), plain)


# ----------------------------------------------------------------------------- events


def test_events_mark_the_recomputed_nodes():
    block = MLPBlock()
    x = data(8, 16, requires_grad=True)
    seen = []
    with events.subscribe(seen.append):
        y = dg.checkpoint(block, x).sum()
        forward = [e for e in seen if e.kind == "node_created" and e.op != "leaf"]
        seen.clear()
        y.backward()
    assert [e.op for e in forward] == ["Checkpoint", "Sum"]
    assert not any(e.recomputed for e in forward)
    recomputed = [e for e in seen if e.kind == "node_created" and e.recomputed]
    assert [e.op for e in recomputed] == ["MatMul", "Add", "Tanh"] * 3
    assert not thread_state.current().recomputing  # restored after backward


def test_recomputing_flag_is_restored_when_the_segment_fails():
    calls = []

    def flaky(h):
        calls.append(1)
        if len(calls) > 1:
            raise KeyError("only once")
        return h * 2

    y = dg.checkpoint(flaky, data(3, requires_grad=True))
    with pytest.raises(KeyError):
        y.sum().backward()
    assert not thread_state.current().recomputing
    assert function.installed_hooks() == ()


# ----------------------------------------------------------------------------- memory


def test_bytes_held_for_backward_drop():
    block = MLPBlock(width=32)
    x = data(64, 32, requires_grad=True)
    plain = dg.memory.saved_bytes(block(block(x)).sum())
    checkpointed = dg.memory.saved_bytes(dg.checkpoint(block, dg.checkpoint(block, x)).sum())
    # plain: every layer keeps its input, its weights and its tanh output;
    # checkpointed: the two segments' inputs and the weights
    assert checkpointed < 0.6 * plain


def test_rnn_peak_memory_drops_with_segments():
    params = rnn_params(n_in=8, n_hidden=32)
    xs = [data(16, 8, seed=t) for t in range(24)]
    h0 = dg.zeros(16, 32, dtype=dg.float64)

    def peak(segment_length):
        timeline = dg.memory.memory_timeline(
            lambda: run_rnn(params, xs, h0, segment_length).sum()
        )
        return max(s.bytes for s in timeline)

    assert peak(4) < 0.6 * peak(None)


# ----------------------------------------------------------------------------- edge cases


def test_under_no_grad_it_just_runs_the_function():
    block = MLPBlock()
    x = data(2, 16, requires_grad=True)
    with dg.no_grad():
        y = dg.checkpoint(block, x)
    assert y.grad_fn is None
    np.testing.assert_allclose(y.numpy(), block(x).detach().numpy())


def test_nothing_requiring_grad_gives_no_node():
    y = dg.checkpoint(lambda h: h.exp(), dg.tensor([1.0, 2.0]))
    assert y.grad_fn is None and not y.requires_grad


def test_function_must_return_one_tensor():
    with pytest.raises(TypeError, match="must return one Tensor"):
        dg.checkpoint(lambda h: (h, h), data(2, requires_grad=True))
    assert function.installed_hooks() == ()


def test_a_captured_tensor_with_a_graph_must_be_passed_as_an_argument():
    x = data(3, requires_grad=True)
    hidden = x * 2  # computed outside the segment, requires grad
    with pytest.raises(ValueError, match="pass it as an argument"):
        dg.checkpoint(lambda h: h + hidden, data(3, requires_grad=True))


def test_second_backward_needs_retain_graph():
    block = MLPBlock()
    x = data(2, 16, requires_grad=True)
    y = dg.checkpoint(block, x).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_in_place_change_of_an_input_before_backward_is_caught():
    w = param(3, 3)
    h = data(2, 3, requires_grad=True) * 1.0  # a non-leaf, so it may be changed in place
    y = dg.checkpoint(lambda a: a @ w, h).sum()
    h += 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_create_graph_is_refused_clearly():
    x = data(3, requires_grad=True)
    y = dg.checkpoint(lambda h: (h * h).sum(), x)
    with pytest.raises(RuntimeError, match="create_graph"):
        y.backward(create_graph=True)
