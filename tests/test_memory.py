"""Memory: graphs are freed by reference counting alone (checked with weakrefs while the cycle
collector is off), backward releases saved buffers, and training loops do not grow."""

from __future__ import annotations

import collections
import gc
import tracemalloc
import weakref

import numpy as np
import pytest
from support import cycle_collector_off

import dyngraph as dg


def _graph_refs(tensors, leaves):
    """Weakrefs to the tensors, their nodes, and every array the nodes saved (except the leaves'
    own data, which the leaves keep alive by design)."""
    leaf_arrays = {id(leaf.array) for leaf in leaves}
    tensor_refs = [weakref.ref(t) for t in tensors]
    node_refs = [weakref.ref(t.grad_fn) for t in tensors]
    saved_refs = []
    for t in tensors:
        for array in t.grad_fn.saved_arrays:
            if isinstance(array, np.ndarray) and id(array) not in leaf_arrays:
                saved_refs.append(weakref.ref(array))
    return tensor_refs, node_refs, saved_refs


def _alive(refs):
    return [r() for r in refs if r() is not None]


def test_graph_is_freed_after_backward_by_reference_counting():
    with cycle_collector_off():
        x = dg.randn(4, 3, requires_grad=True, name="x")
        w = dg.randn(3, 2, requires_grad=True, name="W")
        h = x @ w
        a = h.tanh()
        sq = a * a
        loss = sq.mean()
        tensor_refs, node_refs, saved_refs = _graph_refs([h, a, sq, loss], [x, w])
        assert len(saved_refs) >= 2  # Tanh saved its output, Mul saved it too
        loss.backward()
        del h, a, sq, loss
        assert _alive(tensor_refs) == []
        assert _alive(node_refs) == []
        assert _alive(saved_refs) == []
        assert x.grad is not None and w.grad is not None


def _nodes_of(tensor):
    """Every node of the graph behind ``tensor`` (iteratively)."""
    nodes, stack = [], [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if isinstance(node, dg.Function) and all(node is not n for n in nodes):
            nodes.append(node)
            stack.extend(node.parents)
    return nodes


def test_everything_is_freed_once_every_name_is_deleted():
    with cycle_collector_off():
        x = dg.randn(5, requires_grad=True)
        y = (x.exp() * x.sin()).sum()
        nodes = _nodes_of(y)
        assert [n.name for n in nodes] == ["Sum", "Mul", "Sin", "Exp"]
        node_refs = [weakref.ref(n) for n in nodes]
        saved_refs = [
            weakref.ref(a) for n in nodes for a in n.saved_arrays if isinstance(a, np.ndarray)
        ]
        assert len(saved_refs) >= 3
        del nodes
        leaf_refs = [weakref.ref(x), weakref.ref(x.array)]
        y.backward()
        grad_ref = weakref.ref(x.grad)
        del x, y
        assert _alive(node_refs) == []
        assert _alive(saved_refs) == []
        assert _alive(leaf_refs) == []
        assert grad_ref() is None


def test_graph_dropped_without_backward_is_freed():
    with cycle_collector_off():
        x = dg.randn(4, 3, requires_grad=True)
        h = x * 2
        a = h.sigmoid()
        loss = (a * h).sum()
        tensor_refs, node_refs, saved_refs = _graph_refs([h, a, loss], [x])
        assert saved_refs
        del h, a, loss
        assert _alive(tensor_refs) == []
        assert _alive(node_refs) == []
        assert _alive(saved_refs) == []


def test_graph_kept_with_retain_graph_is_freed_when_dropped():
    with cycle_collector_off():
        x = dg.randn(3, requires_grad=True)
        h = x.tanh()
        loss = (h * h).sum()
        tensor_refs, node_refs, saved_refs = _graph_refs([h, loss], [x])
        loss.backward(retain_graph=True)
        assert h.grad_fn.saved_arrays  # still there for a second backward
        del h, loss
        assert _alive(tensor_refs + node_refs + saved_refs) == []


def test_retain_grad_and_hooks_do_not_keep_the_graph_alive():
    with cycle_collector_off():
        x = dg.randn(3, requires_grad=True)
        h = x * 3
        h.retain_grad()
        h.register_hook(lambda g: g * 1)
        loss = h.exp().sum()
        tensor_refs, node_refs, saved_refs = _graph_refs([h, loss], [x])
        loss.backward()
        assert h.grad is not None
        del h, loss
        assert _alive(tensor_refs + node_refs + saved_refs) == []


def test_a_subscriber_that_keeps_every_event_keeps_no_graph_alive():
    log = []
    with cycle_collector_off(), dg.events.subscribe(log.append):
        x = dg.randn(3, requires_grad=True)
        h = x.exp()
        loss = (h * h).sum()
        tensor_refs, node_refs, saved_refs = _graph_refs([h, loss], [x])
        loss.backward()
        del h, loss
        assert _alive(tensor_refs + node_refs + saved_refs) == []
    assert len(log) > 5


def test_backward_releases_saved_arrays():
    x = dg.randn(3, 2, requires_grad=True)
    w = dg.randn(2, 2, requires_grad=True)
    h = (x @ w).tanh()
    loss = (h * h).sum()
    nodes = [h.grad_fn, loss.grad_fn.parents[0], h.grad_fn.parents[0]]
    assert [n.name for n in nodes] == ["Tanh", "Mul", "MatMul"]
    assert all(n.saved_arrays for n in nodes)
    loss.backward()
    assert [n.saved_arrays for n in nodes] == [None, None, None]


def test_retain_graph_keeps_saved_arrays():
    x = dg.randn(3, requires_grad=True)
    h = x.tanh()
    h.sum().backward(retain_graph=True)
    assert h.grad_fn.saved_arrays is not None and len(h.grad_fn.saved_arrays) > 0


def _tracked_per_node(step, n_nodes=2000):
    """Objects the cycle collector tracks per node of a chain ``h = step(h)``, while the chain
    is alive: as the nodes are made, and after a collection (which stops tracking the tuples
    that hold only numbers or arrays). NOTE [what the collector walks] in function.py."""
    x = dg.randn(1, 8, requires_grad=True)
    with cycle_collector_off():
        before = len(gc.get_objects())
        h = x
        for _ in range(n_nodes):
            h = step(h)
        made = len(gc.get_objects()) - before
        gc.collect()
        kept = len(gc.get_objects()) - before
        del h
    return made / n_nodes, kept / n_nodes


W = dg.full((1, 8), 0.5)
B = dg.full((1, 8), 0.1)


@pytest.mark.parametrize("step, made, kept", [
    # the node and its parents; Mul also its _saved_from (it saved W's array), and its
    # saved_arrays, which the collector stops tracking; the shape and versions are shared
    (lambda h: h * W, 4, 3),
    (lambda h: h + B, 2, 2),  # nothing saved
    (lambda h: h.tanh(), 3, 2),  # saved its output: saved_arrays, and the shared _saved_from
], ids=["mul", "add", "tanh"])
def test_each_node_adds_few_objects_for_the_cycle_collector(step, made, kept):
    """A structural count, not a timing: every tracked object a graph keeps costs its share of
    each full collection, so a bigger count would make building big graphs slower per node."""
    assert _tracked_per_node(step) == pytest.approx((made, kept), abs=0.01)


@pytest.mark.parametrize("retain_graph", [False, True])
def test_graph_freed_is_emitted_once_per_backward_unless_retained(retain_graph):
    log = []
    x = dg.randn(3, requires_grad=True)
    with dg.events.subscribe(log.append):
        for _ in range(3):
            ((x.tanh() * x).sum() * 2).backward(retain_graph=retain_graph)
    freed = [e for e in log if e.kind == "graph_freed"]
    assert len(freed) == (0 if retain_graph else 3)
    for event in freed:
        assert len(event.ids) == len(set(event.ids)) == 3  # Tanh and both Muls; Sum saved nothing
    assert [e.kind for e in log].count("backward_finished") == 3


# ----------------------------------------------------------------------------- no growth


def _train(steps, checkpoints):
    """A tiny linear regression, run with the cycle collector off. At each checkpoint: the
    traced memory after a full collection (which also empties CPython's free lists, whose
    slow filling is not a leak), and how many unreachable objects that collection found."""
    dg.manual_seed(0)
    x = dg.randn(8, 3)
    y = dg.randn(8, 2)
    w = dg.randn(3, 2, requires_grad=True)
    b = dg.zeros(2, requires_grad=True)
    sizes, unreachable = {}, {}
    with cycle_collector_off():
        for step in range(1, steps + 1):
            loss = ((x @ w + b - y) ** 2).mean()
            loss.backward()
            with dg.no_grad():
                w -= 0.01 * w.grad
                b -= 0.01 * b.grad
            w.grad = None
            b.grad = None
            del loss
            if step in checkpoints:
                unreachable[step] = gc.collect()
                sizes[step] = tracemalloc.get_traced_memory()[0]
    return sizes, unreachable


@pytest.mark.slow
@pytest.mark.parametrize("with_subscriber", [False, True], ids=["plain", "counting_subscriber"])
def test_no_memory_growth_over_2000_training_steps(with_subscriber):
    counts = collections.Counter()
    handle = dg.events.subscribe(lambda e: counts.update((e.kind,))) if with_subscriber else None
    tracemalloc.start()
    try:
        sizes, unreachable = _train(2000, {200, 2000})
    finally:
        tracemalloc.stop()
        if handle is not None:
            handle.remove()
    growth = sizes[2000] - sizes[200]
    assert growth < 64 * 1024, f"grew by {growth} bytes between step 200 and step 2000"
    assert unreachable[2000] == 0  # 1800 steps made no reference cycles
    if with_subscriber:
        assert counts["backward_finished"] == 2000
        assert counts["graph_freed"] == 2000


@pytest.mark.slow
def test_the_growth_measurement_does_detect_a_leak():
    """A control: a subscriber that keeps every event must show up as growth."""
    kept = []
    handle = dg.events.subscribe(kept.append)
    tracemalloc.start()
    try:
        sizes, _ = _train(2000, {200, 2000})
    finally:
        tracemalloc.stop()
        handle.remove()
    assert sizes[2000] - sizes[200] > 64 * 1024
