"""GraphView, the Python half of the live widget: the state it syncs (see widgets/PROTOCOL.md).

These tests need no browser: they check the traits a browser would receive.
"""

from __future__ import annotations

import gc
import json
import math

import pytest

import dyngraph as dg

pytest.importorskip("anywidget", reason="the jupyter extra is missing (pip install -e .[jupyter])")

from dyngraph.jupyter import GraphView  # noqa: E402
from dyngraph.jupyter.watch import _parse_magic_line  # noqa: E402


def small_program():
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    w = dg.tensor([0.5, -1.0], requires_grad=True, name="w")
    with dg.scope("layer"):
        h = (x * w).tanh()
    loss = h.sum()
    loss.backward()
    return x, w, loss


def deltas_of(view):
    received = []
    view.observe(lambda change: received.append(json.loads(change["new"])), names="delta")
    return received


def test_deltas_carry_nodes_edges_steps_in_order_and_the_final_state_arrives():
    view = GraphView(rate=1e9)  # flush on every event
    received = deltas_of(view)
    view.attach()
    small_program()
    view.detach()
    assert [d["seq"] for d in received] == list(range(1, len(received) + 1))
    nodes = [n for d in received for n in d["nodes"]]
    ops = [n["op"] for n in nodes]
    assert ops[:2] == ["leaf", "leaf"] and "Mul" in ops and "Tanh" in ops and ops[-1] == "Sum"
    steps = [s for d in received for s in d["steps"]]
    kinds = [s[0] for s in steps]
    assert kinds.index("backward_started") > max(i for i, k in enumerate(kinds) if k == "node")
    assert kinds[-1] == "backward_finished" and "freed" in kinds
    assert [s[1] for s in steps if s[0] == "grad"][0] == nodes[-1]["id"]  # the loss first
    edges = [(src, dst) for d in received for src, dst, _ in d["edges"]]
    assert len(edges) == len(view.recording.edges)


def test_nodes_are_sent_as_data_with_the_vocabulary_and_gradients_ride_on_their_steps():
    view = GraphView(rate=1e9).attach()
    x, w, loss = small_program()
    view.detach()
    vocabulary = view.header["vocabulary"]
    assert set(vocabulary["node"]) == {"leaf", "parameter", "constant", "op"}
    state = view.state()["snapshot"]
    mul = next(n for n in state["nodes"] if n["op"] == "Mul")
    assert (mul["kind"], mul["shape"], mul["dtype"], mul["scope"]) == ("op", [2], "float32",
                                                                      ["layer"])
    assert mul["saved"] > 0 and mul["rule"].startswith("z = x * y")
    assert mul["preview"] == [0.5, -2.0]
    grads = {step[1]: step for step in state["steps"] if step[0] == "grad"}
    assert grads[mul["id"]][2] == list(view.recording.nodes[mul["id"]].grad_preview)
    assert grads[x.id][4] is False  # summed: x reached the loss by one path
    freed = [ids for kind, *rest in state["steps"] if kind == "freed" for ids in rest]
    assert mul["id"] in freed[0]


def test_updates_are_coalesced_to_a_bounded_rate():
    view = GraphView(rate=0.001)  # at most one flush per 1000 s: only the first and the final
    received = deltas_of(view)
    view.attach()
    h = dg.tensor([1.0], requires_grad=True)
    for _ in range(300):
        h = h * 1.01
    view.detach()
    assert len(received) <= 2
    # nothing lost: the leaf, and per step the constant 1.01 and the Mul
    assert sum(len(d["nodes"]) for d in received) == 1 + 2 * 300


def test_state_is_json_safe_with_nan_and_inf():
    view = GraphView(rate=1e9).attach()
    x = dg.tensor([0.0, 1.0], requires_grad=True)
    y = (x.log() * x).sum()  # log(0) = -inf, 0 * -inf = nan
    y.backward()
    view.detach()
    text = json.dumps(view.state(), allow_nan=False)  # raises on a bare NaN
    assert "nan" in text.lower() or "inf" in text.lower()


def test_hostile_names_reach_the_page_as_data_and_are_escaped_where_dot_is_made():
    name = '<img src=x onerror=alert(1)>" URL="javascript:alert(1)'
    view = GraphView(rate=1e9).attach()
    x = dg.tensor([1.0], requires_grad=True, name=name)
    (x * 2).sum().backward()
    view.detach()
    node = next(n for n in view.state()["snapshot"]["nodes"] if n["kind"] == "leaf")
    assert node["name"] == name  # the page escapes it for DOT and sets it with textContent
    from dyngraph import dot

    statement = dot.node_statement(view.recording.nodes[node["id"]])  # what the page composes
    assert '\\" URL=\\"javascript' in statement  # the quotes inside the name are escaped
    assert "<img" in statement  # inside a quoted DOT string, plain text


def test_a_late_view_resyncs_from_the_snapshot():
    view = GraphView(rate=1e9).attach()
    small_program()
    view.detach()
    view._on_message(view, {"type": "resync"}, [])
    snapshot = json.loads(view.snapshot)
    assert snapshot["seq"] == json.loads(view.delta)["seq"]
    assert len(snapshot["nodes"]) == len(view.recording.nodes)


def test_close_unsubscribes():
    view = GraphView().attach()
    assert dg.events.active
    view.close()
    assert not dg.events.active and not dg.events._subscribers
    gc.collect()


def test_pace_waits_once_per_new_source_line(monkeypatch):
    slept = []
    monkeypatch.setattr("dyngraph.jupyter.view.time.sleep", slept.append)
    view = GraphView(pace=0.25).attach()
    x = dg.tensor([1.0], requires_grad=True)
    y = x * 2
    z = y * 3 + 1  # two nodes, one line
    view.detach()
    assert z is not None
    assert slept == [0.25] * 3  # the lines of x, y and z


def test_from_recording_shows_the_same_graph_as_live():
    with dg.record() as rec:
        small_program()
    view = GraphView.from_recording(rec)
    state = json.loads(view.snapshot)
    assert [n["id"] for n in state["nodes"]] == [n.id for n in rec.nodes.values()]
    assert len(state["steps"]) == len(rec.timeline)
    assert len(state["edges"]) == len(rec.edges)


def test_save_html_is_self_contained_and_cannot_break_out_of_its_script(tmp_path):
    with dg.record() as rec:
        x = dg.tensor([1.0], requires_grad=True, name="</script><script>alert(1)</script>")
        (x * 2).sum().backward()
    path = tmp_path / "lesson.html"
    rec.to_html(path)
    page = path.read_text()
    assert page.count("</script>") == 1  # only the page's own closing tag
    assert "mountStandalone" in page and "http://" not in page.split("<script")[0]


def test_repr_is_deterministic_and_the_mimebundle_has_a_static_fallback():
    view = GraphView(rate=1e9).attach()
    small_program()
    view.detach()
    assert repr(view) == "GraphView(nodes=5, edges=4, steps=13)"
    data, _ = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "image/svg+xml" in data or "digraph dyngraph" in data["text/plain"]


def test_magic_options():
    assert _parse_magic_line("--pace 0.5 --lr") == {"pace": 0.5, "rankdir": "LR"}
    with pytest.raises(ValueError, match="unknown option"):
        _parse_magic_line("--fast")
    with pytest.raises(ValueError, match="seconds"):
        _parse_magic_line("--pace soon")


def test_grad_norm_infinity_is_text():
    view = GraphView(rate=1e9).attach()
    x = dg.tensor([0.0], requires_grad=True)
    x.sqrt().sum().backward()  # d sqrt / dx at 0 = inf
    view.detach()
    norms = [step[3] for step in view.state()["snapshot"]["steps"] if step[0] == "grad"]
    assert "Infinity" in norms and not any(isinstance(n, float) and math.isinf(n) for n in norms)
