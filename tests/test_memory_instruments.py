"""dg.memory: bytes held for backward, graph size, per-op timing, and a memory timeline."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import function
from dyngraph.spine import thread_state


def f32(*shape, requires_grad=False, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return dg.tensor(values, requires_grad=requires_grad)


# ----------------------------------------------------------------------------- saved_bytes


def test_saved_bytes_counts_what_each_op_saved():
    x = f32(4, 3, requires_grad=True)
    w = f32(3, 2, requires_grad=True)
    h = x @ w  # MatMul saves x (48 bytes) and W (24 bytes)
    y = h.tanh()  # Tanh saves its output (32 bytes)
    assert dg.memory.saved_bytes(h) == 48 + 24
    assert dg.memory.saved_bytes(y) == 48 + 24 + 32
    y.sum().backward()
    assert dg.memory.saved_bytes(y) == 0  # released by backward


def test_an_array_saved_by_several_nodes_counts_once():
    x = f32(10, requires_grad=True)
    y = (x * x) * x  # both Muls save x
    assert dg.memory.saved_bytes(y) == 40 + 40  # x, and the product x * x


def test_a_view_counts_as_the_array_it_keeps_alive():
    x = f32(100, requires_grad=True)
    base = x.exp()  # a fresh 400-byte array, saved by Exp (its output)
    y = base[:10] * base[10:20]  # Mul saves two 40-byte views of `base`: nothing more is held
    assert dg.memory.saved_bytes(y) == 400


def test_several_tensors_share_their_graph():
    x = f32(5, requires_grad=True)
    a = x.exp()  # saves its output: 20 bytes
    b = a.tanh()  # 20 bytes
    c = a.sin()  # saves a: already counted
    assert dg.memory.saved_bytes(b, c) == 40
    assert dg.memory.saved_bytes(dg.tensor([1.0])) == 0


def test_saved_bytes_without_arguments_sees_every_live_graph():
    gc.collect()
    before = dg.memory.saved_bytes()
    x = f32(256, requires_grad=True)
    y = x.exp()  # 1024 bytes saved
    assert dg.memory.saved_bytes() - before == 1024
    del y
    assert dg.memory.saved_bytes() == before


def test_a_deep_graph_is_walked_without_recursion():
    x = f32(2, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y.tanh()
    assert dg.memory.saved_bytes(y) == 5000 * 8
    assert dg.memory.graph_size(y) == 5001


# ----------------------------------------------------------------------------- graph size


def test_graph_size_counts_ops_and_leaves():
    x = f32(2, 3, requires_grad=True)
    w = f32(3, 4, requires_grad=True)
    assert dg.memory.graph_size((x @ w).tanh()) == 4  # x, W, MatMul, Tanh
    assert dg.memory.graph_size(x) == 1
    assert dg.memory.graph_size(dg.tensor([1.0])) == 0
    constant = f32(2, 3)
    assert dg.memory.graph_size(x * constant) == 2  # constants are not nodes


def test_graph_size_grows_with_sequence_length():
    w = f32(3, 3, requires_grad=True)

    def rnn(n):
        h = dg.zeros(1, 3)
        for _ in range(n):
            h = (h @ w + 1.0).tanh()
        return h

    sizes = [dg.memory.graph_size(rnn(n)) for n in (1, 5, 10)]
    assert sizes == [4, 16, 31]  # W, then MatMul, Add, Tanh per step


def test_saved_bytes_rejects_non_tensors():
    with pytest.raises(TypeError, match="expected Tensors"):
        dg.memory.saved_bytes(np.ones(3))


# ----------------------------------------------------------------------------- timing


def test_profile_ops_times_each_recorded_op_in_order():
    w = f32(3, 4, requires_grad=True)
    times = dg.memory.profile_ops(lambda x: (x @ w).tanh().sum(), f32(2, 3))
    assert [op for op, _ in times] == ["MatMul", "Tanh", "Sum"]
    assert all(isinstance(s, float) and s > 0 for _, s in times)  # each op was timed
    assert not dg.events.active and not thread_state.current().timing  # nothing left behind


# ----------------------------------------------------------------------------- timeline


def test_memory_timeline_rises_in_forward_and_falls_to_zero_in_backward():
    w = f32(8, 8, requires_grad=True)
    x = f32(4, 8)
    timeline = dg.memory.memory_timeline(lambda: (x @ w).tanh().sum())
    assert [(s.phase, s.op) for s in timeline] == [
        ("forward", "MatMul"), ("forward", "Tanh"), ("forward", "Sum"),
        ("backward", "Sum"), ("backward", "Tanh"), ("backward", "MatMul"), ("backward", "end"),
    ]
    held = [s.bytes for s in timeline]
    assert held[:3] == [128 + 256, 128 + 256 + 128, 128 + 256 + 128]
    assert held[-1] == 0
    assert function.installed_hooks() == () and not dg.events.active


def test_memory_timeline_shows_the_recomputation():
    w = f32(8, 8, requires_grad=True)
    x = f32(4, 8, requires_grad=True)
    timeline = dg.memory.memory_timeline(
        lambda: dg.checkpoint(lambda h: (h @ w).tanh(), x).sum()
    )
    phases = [s.phase for s in timeline]
    assert phases.count("recompute") == 2
    assert phases.index("recompute") > phases.index("backward")
