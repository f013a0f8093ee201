"""The chain rule one edge at a time: during backward each edge's contribution (upstream gradient
times local derivative, summed back to the input's shape) is an ``edge_grad`` event, emitted
after its node's gradient and before its input's, and the contributions into an input add up to
that input's gradient. Recordings keep them: saved, loaded, replayed and diffed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support import shared_timeline

import dyngraph as dg
from dyngraph import events
from dyngraph.recording_io import dumps, load_recording


def _graph_view():
    """GraphView, or a skip: the edge steps are the engine's, only playing them needs a widget."""
    view = pytest.importorskip("dyngraph.jupyter.view", reason="the jupyter extra is not installed")
    return view.GraphView


def _spine(program):
    seen = []
    with events.subscribe(seen.append):
        result = program()
    return seen, result


def _edges(seen):
    return [e for e in seen if e.kind == "edge_grad"]


def _fan_in():
    a = dg.tensor([2.0, 3.0], requires_grad=True, name="a", dtype=dg.float64)
    b = a * a
    loss = b.sum()
    loss.backward()
    return a, b, loss


def test_fan_in_sends_two_contributions_that_add_up_to_the_gradient():
    seen, (a, b, loss) = _spine(_fan_in)
    edges = _edges(seen)
    # Sum -> b: upstream 1 x dz/dx = 1 (broadcast back to b's shape); Mul -> a twice: 1 * a
    assert [(e.node, e.input, e.position) for e in edges] == [
        (loss.id, b.id, 0), (b.id, a.id, 0), (b.id, a.id, 1)]
    assert edges[0].preview == (1.0, 1.0)
    assert edges[1].preview == edges[2].preview == (2.0, 3.0)  # by hand: dz/dx = y = a
    assert all(e.reduced_from is None for e in edges)
    total = next(e for e in seen if e.kind == "grad_computed" and e.id == a.id)
    assert total.accumulated and total.preview == (4.0, 6.0)
    assert tuple(np.add(edges[1].preview, edges[2].preview)) == total.preview
    np.testing.assert_array_equal(a.grad.numpy(), [4.0, 6.0])


def test_each_edge_comes_after_its_node_gradient_and_before_its_input_gradient():
    seen, (a, b, loss) = _spine(_fan_in)
    order = [(e.kind, getattr(e, "id", getattr(e, "input", None))) for e in seen
             if e.kind in ("grad_computed", "edge_grad")]
    assert order == [("grad_computed", loss.id), ("edge_grad", b.id), ("grad_computed", b.id),
                     ("edge_grad", a.id), ("edge_grad", a.id), ("grad_computed", a.id)]


def _layer():
    rng = np.random.default_rng(0)
    x = dg.tensor(rng.standard_normal((2, 3)), name="x", requires_grad=True)
    W = dg.tensor(rng.standard_normal((3, 4)) * 0.5, name="W", requires_grad=True)
    bias = dg.tensor(rng.standard_normal(4), name="bias", requires_grad=True)
    z = x @ W
    pre = z + bias
    h = pre.tanh()
    loss = h.sum()
    loss.backward()
    return x, W, bias, z, pre, h, loss


def test_a_layer_with_a_broadcast_bias_matches_hand_computed_contributions():
    seen, (x, W, bias, z, pre, h, loss) = _spine(_layer)
    by_edge = {(e.node, e.input): e for e in _edges(seen)}
    xv, Wv, bv = x.detach().numpy(), W.detach().numpy(), bias.detach().numpy()
    hv = np.tanh(xv @ Wv + bv)
    g_pre = 1.0 - hv**2  # upstream 1 x tanh's local derivative 1 - z^2
    expected = {
        (loss.id, h.id): (np.ones((2, 4)), None),
        (h.id, pre.id): (g_pre, None),
        (pre.id, z.id): (g_pre, None),  # Add: dz/dx = 1
        (pre.id, bias.id): (g_pre.sum(axis=0), (2, 4)),  # un-broadcast: summed over the batch
        (z.id, x.id): (g_pre @ Wv.T, None),  # MatMul: gz @ W^T
        (z.id, W.id): (xv.T @ g_pre, None),  # x^T @ gz
    }
    assert set(by_edge) == set(expected)
    for key, (value, reduced_from) in expected.items():
        edge = by_edge[key]
        np.testing.assert_allclose(edge.preview, value.ravel()[:events.PREVIEW_SIZE], rtol=1e-12)
        assert edge.reduced_from == reduced_from
    assert by_edge[(pre.id, bias.id)].position == 1 and by_edge[(z.id, W.id)].position == 1
    # every input receives from one edge here: its contribution is its gradient
    grads = {e.id: e.preview for e in seen if e.kind == "grad_computed"}
    for (_node, input_id), edge in by_edge.items():
        np.testing.assert_allclose(edge.preview, grads[input_id], rtol=1e-12)
    np.testing.assert_allclose(bias.grad.numpy(), g_pre.sum(axis=0), rtol=1e-12)


def test_contributions_add_up_to_totals_in_an_mlp():
    rng = np.random.default_rng(1)
    x = dg.tensor(rng.standard_normal((4, 2)))
    W1 = dg.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    W2 = dg.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    with dg.record() as rec:
        h = (x @ W1).relu()
        loss = ((h @ W2) * h).sum()  # h is used twice: fan-in
        loss.backward()
    received: dict[int, np.ndarray] = {}
    for step in rec.timeline:
        if step[0] == "edge_grad":
            _, _node, input_id, _position, preview, _ = step
            received[input_id] = received.get(input_id, 0) + np.array(preview)
    for node_id, total in received.items():
        np.testing.assert_allclose(total, rec.nodes[node_id].grad_preview, rtol=1e-6)
    assert rec.nodes[h.id].accumulated


def test_nobody_listening_sends_nothing_and_constants_receive_nothing():
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).sum().backward()
    edges = [s for s in rec.timeline if s[0] == "edge_grad"]
    assert [s[2] for s in edges] == [edges[0][2], x.id]  # the constant 2 needs no gradient
    _fan_in()  # with no subscriber: nothing to check but that it runs
    assert not events.active


def _recorded():
    with dg.record() as rec:
        _fan_in()
        _layer()
    return rec


def test_recordings_save_load_and_replay_edge_steps(tmp_path):
    rec = _recorded()
    steps = [s for s in rec.timeline if s[0] == "edge_grad"]
    assert len(steps) == 3 + 6
    path = tmp_path / "rec.json"
    rec.save(path)
    loaded = load_recording(path)
    assert loaded.timeline == shared_timeline(rec)  # the backward() line's file as shared
    loaded.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    replayed = dg.Recording()
    for event in loaded.events():
        replayed(event)
    assert replayed.timeline == loaded.timeline
    view = _graph_view().from_recording(loaded)
    assert view.recording.timeline == loaded.timeline
    assert view.header["fields"]["edge_grad"] == [*events.EdgeGrad._fields, "preview_text"]


def test_nonfinite_contributions_round_trip(tmp_path):
    with dg.record() as rec, np.errstate(divide="ignore"):
        a = dg.tensor([0.0, 1.0], requires_grad=True)
        a.log().sum().backward()
    edge = next(s for s in rec.timeline if s[0] == "edge_grad" and s[2] == a.id)
    assert edge[4][0] == np.inf
    rec.save(tmp_path / "r.json")
    assert '"Infinity"' in (tmp_path / "r.json").read_text()
    assert load_recording(tmp_path / "r.json").timeline == shared_timeline(rec)


def test_an_old_recording_without_edge_steps_loads(tmp_path):
    rec = _recorded()
    document = json.loads(dumps(rec))
    document["schema_version"] = 1
    del document["sources"]  # schema 3's own source text (NOTE [own source text])
    del document["passes"]  # schema 5's loss and gradient norm of each pass
    document["timeline"] = [s[:2] if s[0] == "backward_started" else s  # no backward() line
                            for s in document["timeline"] if s[0] != "edge_grad"]
    (tmp_path / "old.json").write_text(json.dumps(document))
    old = load_recording(tmp_path / "old.json")
    assert old.nodes.keys() == rec.nodes.keys()
    assert not [s for s in old.timeline if s[0] == "edge_grad"]
    _graph_view().from_recording(old)  # and it plays


@pytest.mark.parametrize("bad, path", [
    (["edge_grad", 1, 2, 0, "x", None], r"\$\.timeline\[\d+\]\[4\]"),
    (["edge_grad", 1, 2, 0, [1.0], [-1]], r"\$\.timeline\[\d+\]\[5\]\[0\]"),
    (["edge_grad", 1, 2, 0, [1.0]], r"\$\.timeline\[\d+\]"),
])
def test_malformed_edge_steps_are_refused(tmp_path, bad, path):
    document = json.loads(dumps(_recorded()))
    document["timeline"].append(bad)
    (tmp_path / "bad.json").write_text(json.dumps(document))
    with pytest.raises(ValueError, match=path):
        load_recording(tmp_path / "bad.json")


def test_diff_of_two_runs_with_edge_steps():
    assert dg.diff(_recorded(), _recorded()).to_dot()
