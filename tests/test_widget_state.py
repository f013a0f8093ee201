"""GraphView, the Python half of the live widget: the state it syncs (see widgets/PROTOCOL.md).

These tests need no browser: they check the traits a browser would receive.
"""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest
from support import shared_timeline

import dyngraph as dg
from dyngraph.record import shared_path
from dyngraph.spine import thread_state

pytest.importorskip("anywidget", reason="the jupyter extra is missing (pip install -e .[jupyter])")

from dyngraph.jupyter import GraphView  # noqa: E402
from dyngraph.jupyter.view import event_from_row, pack, unpack  # noqa: E402
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
    view.observe(lambda change: received.append(unpack(change["new"])), names="delta")
    return received


def snapshot_of(view):
    view.resync()
    return unpack(view.snapshot)


def fields(view, kind, row):
    """An event row [kind, fields] read by name, as the browser reads it (header.fields)."""
    assert row[0] == kind
    return dict(zip(view.header["fields"][kind], row[1], strict=True))


def of_kind(view, rows, kind):
    return [fields(view, kind, row) for row in rows if row[0] == kind]


def test_deltas_carry_the_events_in_order_and_the_final_state_arrives():
    view = GraphView(rate=1e9)  # flush on every event
    received = deltas_of(view)
    view.attach()
    small_program()
    view.detach()
    assert [d["seq"] for d in received] == list(range(1, len(received) + 1))
    rows = [row for d in received for row in d["events"]]
    nodes = of_kind(view, rows, "node_created")
    ops = [n["op"] for n in nodes]
    assert ops[:2] == ["leaf", "leaf"] and "Mul" in ops and "Tanh" in ops and ops[-1] == "Sum"
    kinds = [row[0] for row in rows]
    assert kinds.index("backward_started") > max(
        i for i, k in enumerate(kinds) if k == "node_created"
    )
    assert kinds[-1] == "backward_finished" and "graph_freed" in kinds
    assert of_kind(view, rows, "grad_computed")[0]["id"] == nodes[-1]["id"]  # the loss first
    assert sum(len(n["inputs"]) for n in nodes) == len(view.recording.edges)
    # A file is named as pages name it, and sent again only when a new line of it made a node
    # (pages keep those lines, NOTE [safe to share] in record.py), so the last text has them all.
    file = shared_path(__file__)
    assert list(received[0]["sources"]) == [file]
    sent = [d["sources"][file] for d in received if d["sources"]]
    lines = {row["where"][1] for row in [*nodes, *of_kind(view, rows, "backward_started")]
             if row["where"]}  # the lines that made nodes, and the one that called backward()
    assert len(sent) <= len(lines)
    assert 'h = (x * w).tanh()' in sent[-1] and "def small_program" in sent[-1]
    assert "def deltas_of" not in sent[-1]  # not the whole file


def test_the_header_says_how_to_read_events_and_carries_vocabulary_and_rules():
    view = GraphView(rate=1e9).attach()
    small_program()
    view.detach()
    header = view.header
    assert set(header["vocabulary"]["node"]) == {"leaf", "parameter", "constant", "op"}
    # an event's own fields, then the texts of its numbers (PROTOCOL.md, "Display texts")
    assert header["fields"]["node_created"] == [*dg.events.NodeCreated._fields, "preview_text",
                                                "saved_text", "elapsed_text"]
    assert header["fields"]["grad_computed"] == [*dg.events.GradComputed._fields,
                                                 "preview_text", "norm_text"]
    assert header["fields"]["backward_started"] == list(dg.events.BackwardStarted._fields)
    assert header["fields"]["where"] == ["file", "line", "function", "cell", "target", "loop"]
    assert header["rules"]["Mul"].startswith("z = x * y")
    # a node watched in PyTorch is named by its grad_fn: the same op's rule
    assert header["rules"]["MulBackward0"] == header["rules"]["Mul"]
    assert header["rules"]["MmBackward0"] == header["rules"]["MatMul"]
    rows = snapshot_of(view)["events"]
    mul = next(n for n in of_kind(view, rows, "node_created") if n["op"] == "Mul")
    assert (mul["shape"], mul["dtype"], mul["scope"]) == ([2], "float32", ["layer"])
    assert mul["saved_bytes"] > 0 and mul["preview"] == [0.5, -2.0]
    assert mul["where"][0] == shared_path(__file__)  # never an absolute path
    assert mul["preview_text"] == ["0.5", "-2"] and mul["elapsed_text"] is None
    assert mul["saved_text"] == dg.dot.format_bytes(mul["saved_bytes"])
    grads = {g["id"]: g for g in of_kind(view, rows, "grad_computed")}
    assert grads[mul["id"]]["preview"] == list(view.recording.nodes[mul["id"]].grad_preview)
    assert grads[mul["id"]]["norm_text"] == format(grads[mul["id"]]["norm"], ".4g")


def test_no_text_of_a_number_holds_a_newline_or_is_empty():
    """A batch carries its texts as one string joined by newlines, and "" stands for no text
    (NOTE [display texts] in wire.py): no text dot.py writes of a number holds a newline or is
    empty, whatever the number."""
    rng = np.random.default_rng(2)
    floats = [*rng.standard_normal(200).tolist(), *(10.0 ** rng.uniform(-320, 308, 200)).tolist(),
              *rng.integers(0, 2**64, 200, dtype=np.uint64).view(np.float64).tolist()]
    values = [*floats, 0.125, 9.9995, -0.0, 0.0, math.nan, math.inf, -math.inf, 5e-324,
              1.7976931348623157e308, 2**70, -(2**63), 0, True, False, np.float64(0.5),
              np.float32(0.1), np.int64(-3), np.bool_(True)]
    texts = [dg.dot.format_value(v) for v in values]
    texts += [dg.dot.format_bytes(n) for n in (1, 1023, 1024, 1536, 2**30 - 1, 5 * 2**40, 2**70)]
    texts += [dg.dot.format_elapsed(s) for s in (0.0, 1e-9, 0.000123456, 1.5, 1e6, math.inf,
                                                 math.nan, *floats[:50])]
    assert [t for t in texts if "\n" in t or not t] == []


def test_rows_carry_the_texts_dot_py_writes_and_events_come_back_without_them():
    """Python formats every number the page shows (NOTE [display texts] in wire.py): the texts
    of a row are dot.py's, the numbers stay numbers, and the event comes back exactly."""
    view = GraphView(rate=1e9).attach()
    with dg.record() as recorded, dg.events.timing():
        x = dg.tensor([0.125, 1.0005, -0.0, float("nan")], requires_grad=True)
        y = (x * 3.0).sum()
        y.backward()
    view.detach()
    rows = snapshot_of(view)["events"]
    leaf = next(n for n in of_kind(view, rows, "node_created") if n["op"] == "leaf")
    assert leaf["preview_text"] == ["0.125", "1", "-0", "nan"]
    assert math.isnan(leaf["preview"][3])  # the number itself, for the page's anomaly mark
    mul = next(n for n in of_kind(view, rows, "node_created") if n["op"] == "Mul")
    assert mul["elapsed_text"] == dg.dot.format_elapsed(mul["elapsed"])
    assert mul["elapsed_text"].endswith(" ms")
    edge = of_kind(view, rows, "edge_grad")[0]
    assert edge["preview_text"] == [dg.dot.format_value(v) for v in edge["preview"]]
    replayed = dg.Recording()
    for kind, fields in rows:
        replayed(event_from_row(kind, fields))
    assert replayed.timeline == shared_timeline(recorded)
    assert [n.elapsed for n in replayed.nodes.values()] == [
        n.elapsed for n in recorded.nodes.values()]


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
    rows = [row for d in received for row in d["events"]]
    assert sum(1 for row in rows if row[0] == "node_created") == 1 + 2 * 300


def test_the_clock_is_read_in_strides_while_events_come_fast_and_at_every_event_when_slow(
    monkeypatch,
):
    from dyngraph.jupyter.listener import CLOCK_STRIDE

    clock = [100.0]
    monkeypatch.setattr("dyngraph.jupyter.view.time.monotonic", lambda: clock[0])
    view = GraphView(rate=10)  # a delta at most every 0.1 s
    received = deltas_of(view)
    view.attach()
    h, c = dg.tensor([1.0], requires_grad=True), dg.tensor([1.0])
    h = h * c  # announces h and c; from here on one event per op
    for _ in range(200):  # fast: the clock stands still, so nothing is due after the first
        h = h * c
    assert len(received) == 1
    clock[0] += 1.0  # the learner's code slows down: the next read sees a delta is due
    waited = 0
    while len(received) == 1:
        h = h * c
        waited += 1
    assert waited <= CLOCK_STRIDE
    for _ in range(5):  # slow events: the clock is read, and a delta sent, at every one
        clock[0] += 0.2
        h = h * c
    assert len(received) == 2 + 5
    view.detach()
    rows = [row for d in received for row in d["events"]]
    assert sum(1 for row in rows if row[0] == "node_created") == 3 + 200 + waited + 5


def test_the_budget_bounds_what_is_kept_and_sent_and_counts_the_rest():
    view = GraphView(rate=1e9, max_nodes=10, max_events=15).attach()
    h = dg.tensor([1.0], requires_grad=True)
    for _ in range(20):
        h = h * 2.0
    h.sum().backward()
    view.detach()
    snapshot = snapshot_of(view)
    nodes = [row for row in snapshot["events"] if row[0] == "node_created"]
    assert len(nodes) == 10 and len(snapshot["events"]) == 15
    assert snapshot["dropped"]["nodes"] == 1 + 2 * 20 + 1 - 10  # leaf, 20 x (constant, Mul), Sum
    assert snapshot["dropped"]["steps"] > 0
    assert "not recorded" in view.recording.summary()


def test_a_node_announced_again_is_kept_once():
    x = dg.tensor([1.0], requires_grad=True)
    view = GraphView(rate=1e9).attach()
    y = x * 2
    with dg.record():  # a new subscriber: the engine announces x again
        z = x * 3
    view.detach()
    assert y is not None and z is not None
    ids = [fields(view, "node_created", row)["id"] for row in snapshot_of(view)["events"]
           if row[0] == "node_created"]
    assert len(ids) == len(set(ids))


def test_nan_and_inf_travel_as_floats():
    view = GraphView(rate=1e9).attach()
    x = dg.tensor([0.0, 1.0], requires_grad=True)
    with np.errstate(divide="ignore", invalid="ignore"):  # the NaN and the Inf are the point
        y = (x.log() * x).sum()  # log(0) = -inf, 0 * -inf = nan
        y.backward()
    view.detach()
    rows = snapshot_of(view)["events"]
    previews = [v for n in of_kind(view, rows, "node_created") for v in n["preview"]]
    assert any(math.isnan(v) for v in previews) and -math.inf in previews


def test_what_messagepack_cannot_hold_is_made_plain():
    data = unpack(pack({"big": 10**30, "numpy": np.float32(1.5), "odd": {1, 2}.__class__}))
    assert data == {"big": 1e30, "numpy": 1.5, "odd": "<class 'set'>"}


def test_hostile_names_reach_the_page_as_data_and_are_escaped_where_dot_is_made():
    name = '<img src=x onerror=alert(1)>" URL="javascript:alert(1)'
    view = GraphView(rate=1e9).attach()
    x = dg.tensor([1.0], requires_grad=True, name=name)
    (x * 2).sum().backward()
    view.detach()
    rows = snapshot_of(view)["events"]
    leaf = next(n for n in of_kind(view, rows, "node_created") if n["op"] == "leaf")
    assert leaf["name"] == name  # the page escapes it for DOT and sets it with textContent
    from dyngraph import dot

    statement = dot.node_statement(view.recording.nodes[leaf["id"]])  # what the page composes
    assert '\\" URL=\\"javascript' in statement  # the quotes inside the name are escaped
    assert "<img" in statement  # inside a quoted DOT string, plain text


def test_a_late_view_resyncs_from_the_snapshot():
    view = GraphView(rate=1e9).attach()
    small_program()
    view.detach()
    view._on_message(view, {"type": "resync"}, [])
    snapshot = unpack(view.snapshot)
    assert snapshot["seq"] == unpack(view.delta)["seq"]
    assert sum(1 for row in snapshot["events"] if row[0] == "node_created") == len(
        view.recording.nodes
    )


def test_close_unsubscribes():
    view = GraphView().attach()
    assert dg.events.active
    view.close()
    assert not dg.events.active and not thread_state.current().subscribers
    gc.collect()


def test_a_closed_view_is_freed_with_everything_it_kept():
    import weakref

    view = GraphView().attach()
    small_program()
    view.close()
    gone = weakref.ref(view)
    del view
    gc.collect()
    assert gone() is None  # nothing (anywidget's file watcher included) holds on to it


def test_a_view_keeps_sent_events_as_bytes_not_as_objects():
    view = GraphView(rate=1e9).attach()
    small_program()
    view.detach()
    assert not view._batch and view._kept.packed
    assert all(type(batch) is bytes for batch in view._kept.packed)
    assert len(view.recording.nodes) == 5  # and still folds them on demand


def test_a_long_run_is_packed_as_it_goes_and_sent_whole():
    from dyngraph.jupyter.listener import BATCH_EVENTS, CLOCK_STRIDE

    view = GraphView(rate=0.001)  # no flush by the clock: only the first and the final
    received = deltas_of(view)
    view.attach()
    h = dg.tensor([1.0], requires_grad=True)
    for _ in range(BATCH_EVENTS):
        h = h * 1.01
    assert len(view._batch) < BATCH_EVENTS + CLOCK_STRIDE  # never more held as objects
    view.detach()
    rows = [row for d in received for row in d["events"]]
    assert sum(1 for row in rows if row[0] == "node_created") == 1 + 2 * BATCH_EVENTS
    assert len(view._kept.packed) >= 2 and len(received) <= 2


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
    replayed = view.recording
    assert list(replayed.nodes) == list(rec.nodes)
    assert replayed.edges == rec.edges and replayed.timeline == shared_timeline(rec)
    assert [n.grad_preview for n in replayed.nodes.values()] == [
        n.grad_preview for n in rec.nodes.values()
    ]


def test_a_drawn_tensor_without_a_timeline_replays_its_nodes():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    diagram = dg.draw((x * 2).sum())
    view = GraphView.from_recording(diagram.recording)
    assert list(view.recording.nodes) == list(diagram.recording.nodes)


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
    assert repr(view) == "GraphView(nodes=5, edges=4, steps=17)"
    data, _ = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "image/svg+xml" in data or "digraph dyngraph" in data["text/plain"]


def test_magic_options():
    assert _parse_magic_line("--pace 0.5 --lr") == {"pace": 0.5, "rankdir": "LR"}
    with pytest.raises(ValueError, match="unknown option"):
        _parse_magic_line("--fast")
    with pytest.raises(ValueError, match="seconds"):
        _parse_magic_line("--pace soon")


def test_grad_norm_infinity_travels_as_a_float():
    view = GraphView(rate=1e9).attach()
    x = dg.tensor([0.0], requires_grad=True)
    with np.errstate(divide="ignore"):  # the infinite gradient is the point
        x.sqrt().sum().backward()  # d sqrt / dx at 0 = inf
    view.detach()
    norms = [g["norm"] for g in of_kind(view, snapshot_of(view)["events"], "grad_computed")]
    assert math.inf in norms


# ----------------------------------------------------------------------------- per event, per batch


def _collect_story(make) -> list:
    """What a collector appends and when it ticks, with strides that change, a stride below 1,
    and a tick that raises."""
    into, story = [], []
    strides = iter([1, 3, 2, 0, 5, "raise", 2, 4, 1])

    def tick():
        stride = next(strides)
        story.append(("tick", len(into), stride))
        if stride == "raise":
            raise RuntimeError("flush failed")
        return stride

    listen = make(into, tick)
    for i in range(20):
        try:
            listen(i)
        except RuntimeError as exc:
            story.append(("raised", i, str(exc)))
    story.append(("kept", list(into)))
    return story


def test_the_collector_appends_every_event_and_ticks_as_told():
    from dyngraph.jupyter.listener import collector

    story = _collect_story(collector)
    ticks = [n for what, n, *_ in story if what == "tick"]
    assert ticks == [1, 2, 5, 7, 8, 13, 14, 16, 20]  # after events 1, 1+1, 2+3, ...: as told
    assert ("raised", 12, "flush failed") in story
    assert story[-1] == ("kept", list(range(20)))  # every event appended, whatever tick did


def _a_watched_program() -> list:
    """The events of a small program with fan-in, a re-announced leaf, an in-place change and
    a backward: every kind the live view's filter sees."""
    seen = []
    x = dg.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
    with dg.events.subscribe(seen.append):
        w = dg.tensor([[0.5], [1.5], [-1.0]], requires_grad=True)
        h = (x @ w).tanh()
        y = h * h + x.sum()
        c = dg.zeros(3)
        c.add_(1.0)
        y.sum().backward()
    with dg.events.subscribe(seen.append):  # a new subscriber: x and w announced again
        (x * w.t()).sum().backward()
    return seen


@pytest.mark.parametrize("node_room, room", [(1000, 1000), (3, 1000), (1000, 7), (2, 9), (0, 5)])
def test_keep_rows_keeps_what_the_budget_allows_with_the_texts_of_the_kept_rows(node_room, room):
    """The view's filter (``keep_rows``): plain tuples that pack as they are, a node kept once,
    its file named as pages name it, kept + dropped within the room; and the texts travel
    beside the rows as one string (NOTE [display texts] in wire.py), those of the kept rows
    only, in row order, so that decoding puts each row's own texts back after its fields."""
    import ormsgpack

    from dyngraph.jupyter import wire
    from dyngraph.jupyter.kept import keep_rows

    received = _a_watched_program()
    assert {e.kind for e in received} >= {"node_created", "grad_computed", "edge_grad",
                                          "version_bumped", "backward_started"}
    shared = []

    def share(where):
        shared.append(where)
        return ("lesson.py", *where[1:])

    node_ids = {999}
    rows, texts, _, left, dropped_nodes, dropped_events = keep_rows(
        received, node_ids, {}, share, node_room, room)
    assert all(type(fields) is tuple for _, fields in rows)  # plain tuples: they pack as is
    made = [fields for kind, fields in rows if kind == "node_created"]
    assert len({fields[0] for fields in made}) == len(made)  # a node is kept once
    assert node_ids == {999, *(fields[0] for fields in made)}  # kept: sent (NOTE [the node budget])
    assert all(fields[wire.WHERE] is None or fields[wire.WHERE][0] == "lesson.py"
               for fields in made)
    assert len(shared) == len(set(shared))  # each line shared once, then from the dict
    assert len(rows) == min(room, len(rows) + dropped_events) and left == room - len(rows)
    if (node_room, room) != (1000, 1000):
        assert dropped_nodes + dropped_events > 0  # the budget left some out

    kept_events = [wire.EVENT_CLASSES[kind](*fields) for kind, fields in rows]
    assert texts == "\n".join(text for event in kept_events
                              for text in wire.display_texts(event))
    decoded = wire.rows_with_texts(*ormsgpack.unpackb(wire.pack((rows, texts))))
    assert len(decoded) == len(rows)
    for (kind, fields), event in zip(decoded, kept_events, strict=True):
        own = len(event)
        assert fields[:own] == ormsgpack.unpackb(wire.pack(event))  # the event's fields
        names = wire.TEXT_FIELDS.get(kind, ())
        shown = dict(zip(names, fields[own:], strict=True))
        if names:
            assert shown["preview_text"] == [dg.dot.format_value(v) for v in event.preview]
        if kind == "node_created":
            assert shown["saved_text"] == (dg.dot.format_bytes(event.saved_bytes)
                                           if event.saved_bytes else None)
        if kind == "grad_computed":
            assert shown["norm_text"] == dg.dot.format_value(event.norm)


def test_the_display_texts_of_values_easy_to_get_wrong():
    """Ties and near-ties of four significant digits, the switch to exponent form, signed zero,
    non-finite floats, ints beyond 64 bits, bools, float32 values widened to Python floats; and
    the saved bytes and forward times beside them, as the page reads them."""
    import ormsgpack

    from dyngraph import events
    from dyngraph.jupyter import wire
    from dyngraph.jupyter.kept import keep_rows

    values = [0.125, 1.0005, 9.9995, 99995.0, 1e-5, 0.0001, 123456.0, 1e16, 5e-324, -0.0, 0.0,
              math.nan, math.inf, -math.inf, 2**70, -(2**63), 7, True, False,
              float(np.float32(0.1)), float(np.float32(1 / 3)), float(np.float32(2.675)),
              1.7976931348623157e308, 0, -12345, 2**63 - 1, 2**64, 1e-300, 0.5, 2.5]
    previews = [tuple(values[i:i + 6]) for i in range(0, len(values), 6)]
    received = []
    for k, (preview, saved, elapsed) in enumerate(zip(
            previews, [0, 1023, 1536, 5 * 2**40, 2**70],
            [None, 0.000123456, 1.5, 2.0005e-3, 1e-9])):
        received.append(events.NodeCreated(k + 1, "Mul", (), (2, 3), "float32", "cpu", True,
                                           False, None, (), None, preview, saved, False, elapsed))
        norm = [0.5, math.nan, math.inf, 9.9995, -0.0][k]
        received.append(events.GradComputed(k + 1, preview, norm, k % 2 == 0))
    batch = keep_rows(received, set(), {}, None, 100, 100)[:2]
    rows = wire.rows_with_texts(*ormsgpack.unpackb(wire.pack(batch)))  # as the page reads them
    node = dict(zip(GraphView().header["fields"]["node_created"], rows[0][1], strict=True))
    assert node["preview_text"] == ["0.125", "1", "9.999", "1e+05", "1e-05", "0.0001"]
    assert (node["saved_text"], node["elapsed_text"]) == (None, None)  # none saved, not timed
    shown = [text for _, fields in rows[::2] for text in fields[-3]]
    assert shown == [format(v, ".4g") if type(v) is float else str(v) for v in values]
    assert [fields[-1] for _, fields in rows[1::2]] == ["0.5", "nan", "inf", "9.999", "-0"]
    assert [fields[-2:] for _, fields in rows[2:6:2]] == [["1023 B", "0.123 ms"],
                                                          ["1.5 KB", "1.5e+03 ms"]]
