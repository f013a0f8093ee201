"""Recordings: what ``dg.record()`` folds out of the event spine (nodes, ordered edges, the
timeline), that it holds no arrays, is bounded, stops with its block and keeps no graph alive;
and ``dg.draw(tensor)``, the same model built by walking back from ``grad_fn``."""

from __future__ import annotations

import dataclasses
import inspect
import math
import sys
import types
import weakref

import numpy as np
import pytest
from support import cycle_collector_off

import dyngraph as dg
from dyngraph.drawing import from_tensor
from dyngraph.function import Function
from dyngraph.record import CONSTANT, LEAF, OP, PARAMETER, Edge, Node, Recording


class Weight(dg.Tensor):
    """A tensor subclass that announces itself as a parameter (as nn.Parameter does)."""

    __slots__ = ()
    is_parameter = True


def line() -> int:
    """The line number of the caller: where a node made on that line must point."""
    return inspect.currentframe().f_back.f_lineno



def by_op(rec: Recording, op: str) -> list[Node]:
    return sorted((n for n in rec.nodes.values() if n.op == op), key=lambda n: n.order)


# ----------------------------------------------------------------------------- nodes


def test_nodes_carry_label_name_shape_dtype_device_values_and_source():
    with dg.record() as rec:
        x = dg.tensor([[1.0, 2.0, 3.0]], requires_grad=True, name="x"); x_line = line()  # noqa: E702
        w = dg.tensor([[0.5, -1.0, 2.0]], dtype=dg.float64, requires_grad=True, name="w")
        with dg.scope("outer"), dg.scope("inner"):
            y = x * w; y_line = line()  # noqa: E702
        loss = y.sum(); loss_line = line()  # noqa: E702

    leaf = rec.nodes[x.id]
    assert (leaf.kind, leaf.op, leaf.name) == (LEAF, "leaf", "x")
    assert (leaf.shape, leaf.dtype, leaf.device) == ((1, 3), "float32", "cpu")
    assert leaf.requires_grad is True
    assert leaf.preview == (1.0, 2.0, 3.0)
    assert leaf.scope == ()
    assert leaf.where[:3] == (__file__, x_line, inspect.currentframe().f_code.co_name)
    assert rec.nodes[w.id].dtype == "float64"

    mul = rec.nodes[y.id]
    assert (mul.kind, mul.op, mul.name) == (OP, "Mul", "y")  # the variable it is assigned to
    assert mul.shape == (1, 3) and mul.dtype == "float64"  # float32 * float64 promotes
    assert mul.preview == pytest.approx((0.5, -2.0, 6.0))
    assert mul.scope == ("outer", "inner")
    assert mul.where[0] == __file__ and mul.where[1] == y_line

    total = rec.nodes[loss.id]
    assert (total.op, total.shape, total.scope) == ("Sum", (), ())
    assert total.preview == pytest.approx((4.5,))
    assert total.where[1] == loss_line

    # creation order: leaves first, then the ops in the order the lines ran
    assert [n.order for n in rec.nodes.values()] == list(range(len(rec.nodes)))
    assert leaf.order < rec.nodes[w.id].order < mul.order < total.order


def test_bytes_saved_for_backward_are_what_the_op_saved():
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = dg.tensor([4.0, 5.0, 6.0], requires_grad=True)
        y = x * w
        z = y.sum()
    expected = sum(getattr(a, "nbytes", 0) for a in y.grad_fn.saved_arrays)
    assert expected > 0
    assert rec.nodes[y.id].saved_bytes == expected
    assert rec.nodes[z.id].saved_bytes == sum(
        getattr(a, "nbytes", 0) for a in z.grad_fn.saved_arrays
    )
    assert rec.nodes[x.id].saved_bytes == 0  # a leaf saves nothing


def test_gradient_previews_and_norms_after_backward():
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True, name="x")
        y = x * x
        loss = y.sum()
        assert rec.nodes[x.id].grad_preview is None  # nothing before backward
        loss.backward()
    assert rec.nodes[x.id].grad_preview == (2.0, 4.0, 6.0)
    assert rec.nodes[x.id].grad_norm == pytest.approx(math.sqrt(4 + 16 + 36))
    assert rec.nodes[y.id].grad_preview == (1.0, 1.0, 1.0)
    assert rec.nodes[loss.id].grad_preview == (1.0,)
    assert rec.nodes[x.id].accumulated is True  # x * x: two contributions summed
    assert rec.nodes[y.id].accumulated is False


def test_parameter_subclass_and_constants_are_their_own_kinds():
    with dg.record() as rec:
        w = Weight(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
        p = dg.nn.Parameter(dg.tensor([3.0, 4.0]))
        x = dg.tensor([5.0, 6.0], requires_grad=True)
        y = (x * w + p) * 3.0
    assert (rec.nodes[w.id].kind, rec.nodes[w.id].op) == (PARAMETER, "parameter")
    assert rec.nodes[p.id].kind == PARAMETER
    assert rec.nodes[x.id].kind == LEAF
    constants = [n for n in rec.nodes.values() if n.kind == CONSTANT]
    assert len(constants) == 1
    assert constants[0].preview == (3.0,) and constants[0].requires_grad is False
    assert Edge(constants[0].id, y.id, 1) in rec.edges


# ----------------------------------------------------------------------------- edges


def test_edges_are_ordered_by_input_position():
    with dg.record() as rec:
        a = dg.tensor([1.0], requires_grad=True, name="a")
        b = dg.tensor([2.0], requires_grad=True, name="b")
        d1 = a - b
        d2 = b - a
        both = dg.stack([d2, d1, d2])
    assert [e for e in rec.edges if e.dst == d1.id] == [Edge(a.id, d1.id, 0), Edge(b.id, d1.id, 1)]
    assert [e for e in rec.edges if e.dst == d2.id] == [Edge(b.id, d2.id, 0), Edge(a.id, d2.id, 1)]
    into_stack = sorted((e.position, e.src) for e in rec.edges if e.dst == both.id)
    assert into_stack == [(0, d2.id), (1, d1.id), (2, d2.id)]


# ----------------------------------------------------------------------------- timeline


def test_timeline_of_forward_and_backward_steps_including_freed():
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
        y = (x * 2).sum()
        y.backward()
    y_line = rec.nodes[y.id].where[1]
    mul_id = y.grad_fn.parents[0].id
    const_id = next(n.id for n in rec.nodes.values() if n.kind == CONSTANT)
    backward_line = (__file__, y_line + 1, "test_timeline_of_forward_and_backward_steps_"
                     "including_freed", None, None, None)
    assert rec.timeline == [
        ("node", x.id),
        ("node", const_id),
        ("node", mul_id),
        ("node", y.id),
        ("backward_started", y.id, backward_line),  # with the line that called backward()
        ("grad", y.id),
        ("edge_grad", y.id, mul_id, 0, (1.0, 1.0), None),  # what the edge carried back
        ("grad", mul_id),
        ("edge_grad", mul_id, x.id, 0, (2.0, 2.0), None),  # none to the constant 2
        ("grad", x.id),
        ("freed", (mul_id,)),
        ("backward_finished", y.id),
    ]
    assert rec.nodes[mul_id].freed is True
    assert rec.nodes[y.id].freed is False  # Sum saved nothing, so nothing to free
    assert rec.summary().startswith("4 nodes, 3 edges, 1 backward pass")


def test_timeline_records_version_bumps_and_a_second_backward_pass():
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1.0
        modified = y.id  # the Mul's output, about to be changed in place
        y += 1.0
        loss = y.sum()
        loss.backward(retain_graph=True)
        loss.backward()
    assert ("version", modified, 1) in rec.timeline
    assert rec.nodes[modified].version == 1
    kinds = [step[0] for step in rec.timeline]
    assert kinds.count("backward_started") == kinds.count("backward_finished") == 2
    assert "2 backward passes" in rec.summary()


def test_failed_backward_is_on_the_timeline():
    class Broken(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ArithmeticError("broken backward")

    with dg.record() as rec:
        x = dg.tensor([1.0], requires_grad=True)
        y = Broken.apply(x).sum()
        with pytest.raises(ArithmeticError):
            y.backward()
    failed = [step for step in rec.timeline if step[0] == "backward_failed"]
    assert len(failed) == 1
    assert failed[0][1] == y.id and "broken backward" in failed[0][2]


def test_gradcheck_verdicts_are_marked_and_validated():
    with dg.record() as rec:
        x = dg.tensor([1.0], requires_grad=True)
        y = x.exp()
    rec.mark(y.id, "pass")
    assert rec.nodes[y.id].check == "pass"
    rec.mark(y.id, "fail")
    assert rec.nodes[y.id].check == "fail"
    with pytest.raises(ValueError, match="pass"):
        rec.mark(y.id, "ok")


# ----------------------------------------------------------------------------- plain data


_PLAIN = (int, float, str, bool, type(None))


def _walk(value, path, seen):
    """Every object reachable from ``value`` through attributes and containers, with its path;
    raises if a value is of a type a recording must never hold."""
    if isinstance(value, _PLAIN):
        return
    assert not isinstance(value, np.ndarray), f"{path} is a numpy array"
    assert not isinstance(value, np.generic), f"{path} is a numpy scalar"
    assert not isinstance(value, dg.Tensor), f"{path} is a Tensor"
    assert not isinstance(value, Function), f"{path} is a Function (graph node)"
    assert not isinstance(value, weakref.ReferenceType), f"{path} is a weakref"
    assert not isinstance(value, (types.FunctionType, types.MethodType)), f"{path} is code"
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, dict):
        for k, v in value.items():
            _walk(k, f"{path} key {k!r}", seen)
            _walk(v, f"{path}[{k!r}]", seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for i, v in enumerate(value):
            _walk(v, f"{path}[{i}]", seen)
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            _walk(getattr(value, f.name), f"{path}.{f.name}", seen)
        for name, v in vars(value).items() if hasattr(value, "__dict__") else ():
            _walk(v, f"{path}.{name}", seen)
    else:
        raise AssertionError(f"{path} holds an unexpected {type(value).__name__}: {value!r}")


def test_a_recording_holds_only_plain_data():
    with dg.record() as rec:
        w = Weight(np.ones((3, 2), dtype=np.float32), requires_grad=True)
        x = dg.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3), requires_grad=True,
                      name="x")
        with dg.scope("layer"):
            h = (x @ w).tanh()
        loss = (h * h).mean()
        loss.backward()
    assert len(rec.nodes) >= 6 and rec.timeline
    _walk(rec, "rec", set())
    # the model built by walking back from grad_fn is plain data too
    y = (x @ w).relu().sum()
    _walk(from_tensor(y), "from_tensor(y)", set())


# ----------------------------------------------------------------------------- bounds


def test_max_nodes_keeps_the_first_and_counts_the_rest():
    with dg.record(max_nodes=5) as rec:
        h = dg.tensor([0.5], requires_grad=True)
        for _ in range(19):
            h = h.sin()  # one node per op: 20 nodes in all
    assert len(rec.nodes) == 5
    assert rec.dropped_nodes == 15
    assert all(e.src in rec.nodes and e.dst in rec.nodes for e in rec.edges)
    assert "15 nodes not recorded (max_nodes=5)" in rec.summary()
    assert "15 nodes not recorded" in repr(rec)
    assert "15 nodes not recorded" in rec.to_dot()


def test_max_events_bounds_the_timeline_and_counts_the_rest():
    with dg.record(max_events=3) as rec:
        h = dg.tensor([0.5], requires_grad=True)
        for _ in range(19):
            h = h.sin()
    assert len(rec.nodes) == 20  # nodes are bounded separately
    assert len(rec.timeline) == 3
    assert rec.dropped_events == 17
    assert "17 timeline steps not recorded" in rec.summary()
    assert "17 timeline steps not recorded" in repr(rec)


@pytest.mark.parametrize("bad", [{"max_nodes": 0}, {"max_events": 0}, {"max_nodes": -3}])
def test_bounds_must_be_positive(bad):
    with pytest.raises(ValueError), dg.record(**bad):
        pass


def test_recording_stops_at_the_end_of_the_block():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.record() as rec:
        y = x * 2
    nodes, edges, timeline = dict(rec.nodes), list(rec.edges), list(rec.timeline)
    z = (y * 3).sum()
    z.backward()
    dg.tensor([3.0], requires_grad=True)
    assert rec.nodes == nodes and rec.edges == edges and rec.timeline == timeline
    assert rec.nodes[y.id].grad_preview is None  # the later backward is not folded in


def test_a_recording_never_keeps_a_graph_alive():
    with cycle_collector_off(), dg.record() as rec:
        x = dg.tensor(np.ones(1000, dtype=np.float32), requires_grad=True)
        h = x.exp()
        y = (h * h).sum()
        refs = [weakref.ref(h), weakref.ref(h.grad_fn), weakref.ref(y), weakref.ref(h.array)]
        del h, y
        assert [r() for r in refs] == [None] * 4
        assert len(rec.nodes) == 4  # the recording lives on, with its model of the graph


# ----------------------------------------------------------------------------- dg.draw


def _shape_of_model(rec: Recording):
    # An op's name is the variable its source line assigns it to (NOTE [variable names]): a
    # graph walked from a tensor has no source lines, so only the names of leaves compare.
    nodes = {(n.id, n.kind, n.op, n.name if n.kind != OP else None, n.shape)
             for n in rec.nodes.values()}
    edges = {(e.src, e.dst, e.position) for e in rec.edges}
    return nodes, edges


def _two_layer(x, w1, w2, b):
    h = (x @ w1 + b).tanh()
    out = h @ w2
    return (out * out + h.sum()).mean()


def test_draw_builds_the_same_model_as_a_live_recording():
    w1 = Weight(np.full((3, 4), 0.1, dtype=np.float32), requires_grad=True)
    w2 = Weight(np.full((4, 2), -0.2, dtype=np.float32), requires_grad=True)
    b = dg.tensor(np.zeros(4, dtype=np.float32), requires_grad=True, name="b")
    with dg.record() as rec:
        x = dg.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True, name="x")
        loss = _two_layer(x, w1, w2, b)
    # every input of this graph requires grad, so no constants: a walk sees all of it
    assert not [n for n in rec.nodes.values() if n.kind == CONSTANT]
    drawn = from_tensor(loss)
    assert _shape_of_model(drawn) == _shape_of_model(rec)
    diagram = dg.draw(loss)
    assert _shape_of_model(diagram.recording) == _shape_of_model(rec)
    dot = diagram.to_dot()
    for node_id in rec.nodes:
        assert f"n{node_id} [" in dot


def test_draw_sees_the_grad_requiring_part_of_a_graph_and_where_its_constants_go():
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    with dg.record() as rec:
        y = ((x * 2.0).exp() + dg.tensor([1.0, 1.0])).sum()
    drawn = from_tensor(y)
    drawn_nodes, drawn_edges = _shape_of_model(drawn)
    live_nodes, live_edges = _shape_of_model(rec)
    no_grad_ids = {n.id for n in rec.nodes.values() if not n.requires_grad}
    assert len(no_grad_ids) == 2  # the constant 2.0 and the tensor of ones
    unknown = {n.id for n in drawn.nodes.values() if n.kind == CONSTANT}
    assert drawn_nodes - {n for n in drawn_nodes if n[0] in unknown} == {
        n for n in live_nodes if n[0] not in no_grad_ids}
    # the graph keeps neither, and the drawing shows each as a constant of unknown value at its
    # argument's place (NOTE [inputs the graph does not keep]): the edges are the live ones
    assert all(drawn.nodes[i].preview == () for i in unknown) and len(unknown) == 2
    assert {(d, pos) for s, d, pos in drawn_edges if s in unknown} == {
        (d, pos) for s, d, pos in live_edges if s in no_grad_ids}
    assert {e for e in drawn_edges if e[0] not in unknown} == {
        e for e in live_edges if e[0] not in no_grad_ids}


def test_draw_shows_leaf_values_gradients_and_freed_nodes_after_backward():
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    y = (x * x).sum()
    y.backward()
    model = from_tensor(y)
    assert model.nodes[x.id].preview == (1.0, 2.0)
    assert model.nodes[x.id].grad_preview == (2.0, 4.0)
    mul = by_op(model, "Mul")[0]
    assert mul.freed is True
    assert model.nodes[y.id].preview == (5.0,)  # the root's value is known
    assert "x\\n(2,)\\n[1, 2]\\ngrad [2, 4]" in dg.draw(y).to_dot()


def test_draw_walks_a_20000_op_chain_iteratively():
    x = dg.tensor([0.5], requires_grad=True, name="x")
    h = x
    for _ in range(20_000):
        h = h.sin()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        diagram = dg.draw(h)
        dot = diagram.to_dot()
    finally:
        sys.setrecursionlimit(limit)
    model = diagram.recording
    assert len(model.nodes) == 20_001 and len(model.edges) == 20_000
    assert "nodes hidden" in dot
    assert f"n{h.id} [" in dot  # the output stays visible
    assert "20001 nodes" in repr(diagram)


def test_a_diagram_walked_back_from_a_tensor_says_what_its_gradients_are():
    """dg.draw walks back from a tensor: it knows no backward pass, so it names none (lesson 18
    printed "0 backward passes" above leaves drawn with their gradients); it says which nodes
    show the .grad their tensors hold."""
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    w = dg.tensor([3.0, 4.0], requires_grad=True, name="w")
    y = (x * w).sum()
    assert repr(dg.draw(y)) == "<diagram: 4 nodes, 3 edges, walked back from the tensor>"
    y.backward()
    drawn = dg.draw(y)
    assert "backward pass" not in repr(drawn)
    assert repr(drawn).endswith("; 2 leaves show their .grad>")
    assert drawn.recording.nodes[x.id].grad_preview == (3.0, 4.0)
