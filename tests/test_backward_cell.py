"""Backward in a cell of its own: a recording or a view that starts while ``backward()`` runs on
a graph built before it (in an earlier cell, or outside any watch) shows the graph behind the
root and the gradients flowing (NOTE [graphs built before anyone listened] in function.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import autograd


def all_grad_program():
    """A small graph whose every input requires grad (so a late view can know all of it)."""
    x = dg.tensor([[1.0, -2.0]], requires_grad=True, name="x")
    W = dg.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], requires_grad=True, name="W")
    v = dg.tensor([1.0, 2.0, 3.0], requires_grad=True, name="v")
    h = (x @ W).tanh()
    return (h * v + h).sum()


def mlp_loss():
    """An MLP loss the usual way: data and targets need no gradient; a constant exponent."""
    rng = np.random.default_rng(0)
    x = dg.tensor(rng.standard_normal((4, 3)), dtype=dg.float32)
    y = dg.tensor(rng.standard_normal((4, 1)), dtype=dg.float32)
    W1 = dg.tensor(rng.standard_normal((3, 5)), dtype=dg.float32, requires_grad=True, name="W1")
    b1 = dg.zeros(5, requires_grad=True, name="b1")
    W2 = dg.tensor(rng.standard_normal((5, 1)), dtype=dg.float32, requires_grad=True, name="W2")
    h = (x @ W1 + b1).relu()
    return ((h @ W2 - y) ** 2).mean()


def shape_of(rec, only=None):
    """A recording with ids replaced by creation rank: nodes, edges and timeline steps."""
    ids = sorted(i for i in rec.nodes if only is None or i in only)
    rank = {node_id: r for r, node_id in enumerate(ids)}
    # ops announced at backward have no source line, so no variable name: compare leaves' names
    nodes = [(rec.nodes[i].op, rec.nodes[i].name if rec.nodes[i].kind != "op" else None,
              rec.nodes[i].shape) for i in ids]
    edges = sorted((rank[e.src], rank[e.dst]) for e in rec.edges if e.src in rank and e.dst in rank)
    steps = []
    for kind, *rest in rec.timeline:
        if kind == "grad":
            steps.append((kind, rank[rest[0]]))
        elif kind == "freed":
            steps.append((kind, tuple(rank[i] for i in rest[0])))
        elif kind != "node":
            steps.append((kind, rank[rest[0]]))
    grads = [(rank[i], None if rec.nodes[i].grad_norm is None else round(rec.nodes[i].grad_norm, 5))
             for i in ids]
    return nodes, edges, steps, grads


def one_block(program):
    with dg.record() as rec:
        program().backward()
    return rec


def split_cells(program):
    loss = program()  # "cell 1", nobody listening
    with dg.record() as rec:  # "cell 2"
        loss.backward()
    return rec


# ----------------------------------------------------------------------------- dg.record()


def test_split_backward_records_the_same_graph_and_gradients_as_one_block():
    whole, split = one_block(all_grad_program), split_cells(all_grad_program)
    assert shape_of(split) == shape_of(whole)
    assert len(split.nodes) == 8 and len(split.edges) == 8
    assert split.summary() == whole.summary()
    steps = [step[0] for step in split.timeline]
    assert steps[:8] == ["node"] * 8 and steps[8] == "backward_started"  # the graph comes first
    assert steps.count("grad") == 8


def test_split_backward_of_an_mlp_shows_what_gradients_flow_through():
    whole, split = one_block(mlp_loss), split_cells(mlp_loss)
    # Data, targets and constants need no gradient: the graph does not keep them, so a view that
    # starts at backward() shows every node gradients flow through, and all of those, and each
    # input the graph did not keep as a constant of unknown value, at its argument's place
    # (NOTE [inputs the graph does not keep] in function.py).
    flowing = {i for i, node in whole.nodes.items() if node.grad_norm is not None}
    kept = {i for i, node in split.nodes.items() if node.op != "constant"}
    assert len(kept) == len(flowing) == 10 and len(split.nodes) == len(whole.nodes) == 13
    assert shape_of(split, only=kept) == shape_of(whole, only=flowing)

    def not_kept(rec, ids):  # (the op, the argument) of each input outside ``ids``
        return sorted((rec.nodes[e.dst].op, e.position) for e in rec.edges if e.src not in ids)

    assert not_kept(split, kept) == not_kept(whole, flowing) == [
        ("MatMul", 0), ("Pow", 1), ("Sub", 1)]  # x @ W1, (...) ** 2, h @ W2 - y
    unknown = [node for i, node in split.nodes.items() if i not in kept]
    assert all(n.kind == "constant" and n.preview == () for n in unknown)
    by_name = {node.name: node for node in split.nodes.values() if node.name}
    assert set(by_name) == {"W1", "b1", "W2"}
    root = max((split.nodes[i] for i in kept), key=lambda n: n.id)
    assert root.op == "Mean" and root.dtype == "float32" and len(root.preview) == 1  # its value
    matmul = min((n for n in split.nodes.values() if n.op == "MatMul"), key=lambda n: n.id)
    assert matmul.where is None and matmul.preview == () and matmul.saved_bytes > 0
    assert matmul.freed  # and backward freed what it saved, as in one block


def test_split_backward_nodes_come_in_creation_order_before_backward_started():
    loss = all_grad_program()
    log = []
    with dg.events.subscribe(log.append):
        loss.backward()
    created = [e.id for e in log if e.kind == "node_created"]
    assert created == sorted(created)
    first_other = next(i for i, e in enumerate(log) if e.kind != "node_created")
    assert log[first_other].kind == "backward_started" and first_other == len(created)
    assert all(e.where is None for e in log if e.kind == "node_created")


def test_a_recording_that_saw_the_forward_gets_no_node_twice():
    log = []
    with dg.events.subscribe(log.append):
        loss = all_grad_program()
        created = sum(e.kind == "node_created" for e in log)
        loss.backward()
    assert sum(e.kind == "node_created" for e in log) == created  # nothing announced again


def test_a_forward_half_seen_is_completed_behind_the_unseen_part():
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    h = (x * x).tanh()  # unwatched
    with dg.record() as rec:
        loss = (h * 3).sum()
        loss.backward()
    ops = sorted((n.id, n.op) for n in rec.nodes.values())
    assert [op for _, op in ops] == ["leaf", "Mul", "Tanh", "Mul", "constant", "Sum"]
    assert len(rec.edges) == 6  # x -> Mul (twice) -> Tanh -> Mul <- 3, Mul -> Sum
    assert all(n.grad_norm is not None for n in rec.nodes.values() if n.op != "constant")


def test_a_long_chain_built_unwatched_is_announced_without_recursion():
    x = dg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0001
    loss = y.sum()
    with dg.record(max_events=20_000) as rec:
        loss.backward()
    # each Mul's 1.0001, which the graph does not keep, is a constant of unknown value
    assert len(rec.nodes) == 3002 + 3000 and len(rec.edges) == 3001 + 3000


def test_autograd_grad_with_two_outputs_announces_each_graph_once():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    a, b = (x * x).sum(), x.exp().sum()
    log = []
    with dg.events.subscribe(log.append):
        dg.autograd.grad([a, b], [x])
    created = [e.id for e in log if e.kind == "node_created"]
    assert len(created) == len(set(created)) == 5


def test_a_split_recording_saves_and_loads(tmp_path):
    rec = split_cells(mlp_loss)
    rec.save(tmp_path / "run.json")
    loaded = dg.load_recording(tmp_path / "run.json")
    assert shape_of(loaded) == shape_of(rec)


# ----------------------------------------------------------------------------- nobody listening


def test_nobody_listening_costs_no_walk(monkeypatch):
    def walked(roots):
        raise AssertionError("announce_graph ran with nobody listening")

    monkeypatch.setattr(autograd, "announce_graph", walked)
    loss = all_grad_program()
    loss.backward()  # no subscriber: the engine does not look at the graph for anyone
    assert loss._announced == 0


def test_a_view_that_saw_the_forward_walks_nothing(monkeypatch):
    from dyngraph import function

    visited = []  # announce_graph sorts what its walk found: a spy on sorted() sees a walk
    monkeypatch.setattr(function, "sorted", lambda found: visited.append(found) or [],
                        raising=False)
    with dg.events.subscribe(lambda e: None):
        loss = all_grad_program()
        loss.backward()
    assert visited == []  # the root was announced in this epoch: one comparison, no walk


# ----------------------------------------------------------------------------- GraphView


anywidget = pytest.importorskip("anywidget", reason="the jupyter extra is missing")
from dyngraph.jupyter import GraphView  # noqa: E402
from dyngraph.jupyter.view import unpack  # noqa: E402


def node_ids_sent(view):
    view.resync()
    rows = unpack(view.snapshot)["events"]
    return [row[1][0] for row in rows if row[0] == "node_created"]


def test_a_view_started_at_backward_shows_the_graph_and_the_gradients():
    whole = GraphView()
    whole.attach()
    all_grad_program().backward()
    whole.detach()
    loss = all_grad_program()
    late = GraphView()
    late.attach()
    loss.backward()
    late.detach()
    assert repr(late) == repr(whole) == "GraphView(nodes=8, edges=8, steps=27)"
    assert shape_of(late.recording) == shape_of(whole.recording)


def test_one_view_across_two_cells_continues_its_timeline_without_duplicates(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    # a notebook's kernel, where dg.watch() is the widget (outside one it prints an outline)
    monkeypatch.setattr(IPython, "get_ipython", lambda: SimpleNamespace(kernel=object()))
    with dg.watch() as view:  # cell 1: the forward pass
        loss = all_grad_program()
    assert repr(view) == "GraphView(nodes=8, edges=8, steps=8)"
    with dg.watch(view) as same:  # cell 2: the backward pass, in the same view
        loss.backward()
    assert same is view and shown == [view]  # displayed once, in the first cell
    ids = node_ids_sent(view)
    assert len(ids) == len(set(ids)) == 8  # the engine announced them again; the view kept one
    assert shape_of(view.recording) == shape_of(one_block(all_grad_program))


def test_watch_can_show_a_view_again_and_refuses_new_options_for_it(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    view = GraphView()
    with dg.watch(view, display=True):
        pass
    assert shown == [view]
    with pytest.raises(TypeError, match="pace"), dg.watch(view, pace=0.5):
        pass
