"""The source panel tells the truth (issue 36, issue 40): every line it numbers has its text,
whatever file the line is in (a model in ``models.py`` beside the notebook too); each stretch of
lines not kept is one row; and during backward it shows the line that called ``backward()``,
which every event source reports in ``BackwardStarted.where``.

The browser's half (the rows, the highlight, the title) is tested in widgets/test/text.test.js
and view.test.js; tests/browser/test_source_panel.py watches it in JupyterLab."""

from __future__ import annotations

import json
import runpy
import sys
import textwrap
from pathlib import Path

import pytest
from support import write_recording

import dyngraph as dg
from dyngraph import events
from dyngraph.record import kept_stretches, shared_source, source_text
from dyngraph.recording_io import load_recording
from dyngraph.spine.thread_state import this_thread

HERE = Path(__file__).read_text(encoding="utf-8").splitlines()


def line_of(marker: str) -> int:
    """The number of the line of this file that holds ``marker`` (in a comment)."""
    return next(i for i, text in enumerate(HERE, 1) if marker in text and "line_of" not in text)


def started(seen: list) -> list:
    return [e for e in seen if e.kind == "backward_started"]


@pytest.fixture(autouse=True)
def no_followers_left():
    this_thread.state.followers.clear()
    yield
    this_thread.state.followers.clear()


# ----------------------------------------------------------------------------- the event


def test_backward_started_is_a_named_tuple_with_its_line_last_and_optional():
    assert events.BackwardStarted._fields == ("root", "retain_graph", "create_graph", "where")
    old = events.BackwardStarted(root=3, retain_graph=False, create_graph=False)
    assert old.where is None and old.kind == "backward_started"


def test_dyngraphs_engine_reports_the_learners_backward_line():
    seen = []
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with events.subscribe(seen.append):
        loss = (x * x).sum()
        loss.backward(retain_graph=True)  # marker: backward
        (gx,) = dg.autograd.grad(loss, [x])  # marker: grad
    first, second = started(seen)
    assert first.where.file == __file__ and first.where.line == line_of("marker: backward")
    assert first.where.function == "test_dyngraphs_engine_reports_the_learners_backward_line"
    assert second.where.line == line_of("marker: grad")


def test_nobody_listening_walks_no_frame_for_the_backward_line(monkeypatch):
    calls = []
    real = events.where_from_stack
    monkeypatch.setattr(events, "where_from_stack",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert calls == []


def test_an_engine_written_against_the_public_api_reports_the_learners_line():
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        import engine_tiny
    finally:
        sys.path.pop(0)
    seen = []
    with events.subscribe(seen.append):
        a = engine_tiny.Value(2.0)
        b = (a * a).tanh()
        b.backward()  # marker: tiny
    (event,) = started(seen)
    assert event.where.file == __file__ and event.where.line == line_of("marker: tiny")


def test_micrograd_reports_the_learners_backward_line():
    pytest.importorskip("micrograd", reason="micrograd is not installed (pip install micrograd)")
    from micrograd.engine import Value

    import dyngraph.micrograd  # noqa: F401 - registers micrograd as a source

    with dg.record() as rec:
        a = Value(2.0)
        e = a * a + a
        e.backward()  # marker: micrograd
    (step,) = [s for s in rec.timeline if s[0] == "backward_started"]
    assert step[2][:2] == (__file__, line_of("marker: micrograd"))


def test_pytorch_reports_the_learners_backward_line():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    import dyngraph.torch as dgt

    seen = []
    with events.subscribe(seen.append), dgt.watching():
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        loss = (w * w).sum()
        loss.backward()  # marker: torch
    (event,) = started(seen)
    assert event.where.file == __file__ and event.where.line == line_of("marker: torch")


# ----------------------------------------------------------------------------- recordings


def _two_files(tmp_path: Path):
    """A model in models.py and a lesson script that calls it and then backward()."""
    (tmp_path / "models.py").write_text(textwrap.dedent("""\
        import dyngraph as dg


        def layer(x, w):
            z = x * w
            # a comment of the learner's
            # another one
            # and another
            # and one more
            # and the last
            # really the last
            return z.tanh()
        """), encoding="utf-8")
    (tmp_path / "lesson.py").write_text(textwrap.dedent("""\
        import dyngraph as dg
        from models import layer

        SECRET = "not to be shared"


        def forward(x, w):
            return layer(x, w).sum()


        def backward(loss):
            loss.backward()
        """), encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        lesson = runpy.run_path(str(tmp_path / "lesson.py"))
    finally:
        sys.path.pop(0)
        sys.modules.pop("models", None)
    return lesson["forward"], lesson["backward"]


def test_a_recording_keeps_the_backward_line_and_its_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    forward, backward = _two_files(tmp_path)
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    w = dg.tensor([0.5, -1.0], requires_grad=True, name="w")
    with dg.record() as rec:
        loss = forward(x, w)
        backward(loss)
    (step,) = [s for s in rec.timeline if s[0] == "backward_started"]
    assert step[2][:3] == (str(tmp_path / "lesson.py"), 12, "backward")
    lesson = rec.sources[str(tmp_path / "lesson.py")].splitlines()
    assert lesson[11] == "    loss.backward()" and "SECRET" not in "".join(lesson)
    assert "z = x * w" in rec.sources[str(tmp_path / "models.py")]

    rec.save(tmp_path / "run.json")
    saved = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert saved["schema_version"] == 5
    (saved_step,) = [s for s in saved["timeline"] if s[0] == "backward_started"]
    assert saved_step == ["backward_started", loss.id, ["lesson.py", 12, "backward", None, None,
                                                         None]]
    assert set(saved["sources"]) == {"lesson.py", "models.py"}
    loaded = load_recording(tmp_path / "run.json")
    assert [s for s in loaded.timeline if s[0] == "backward_started"] == [
        ("backward_started", loss.id, ("lesson.py", 12, "backward", None, None, None))]
    assert loaded.sources == saved["sources"]
    (event,) = [e for e in loaded.events() if e.kind == "backward_started"]
    assert event.where == events.SourceLine("lesson.py", 12, "backward", None, None)


def _document(timeline, sources, version=4):
    node = {"id": 0, "kind": "leaf", "op": "leaf", "name": "x", "shape": [1],
            "dtype": "float32", "device": "cpu", "requires_grad": True, "preview": [1.0],
            "scope": [], "where": ["a.py", 1, "<module>", None, None], "order": 0,
            "saved_bytes": 0, "grad_preview": None, "grad_norm": None, "accumulated": False,
            "freed": False, "recomputed": False, "elapsed": None, "version": 0, "check": None}
    doc = {"format": "dyngraph-recording", "schema_version": version, "max_nodes": 10,
           "max_events": 10, "dropped_nodes": 0, "dropped_events": 0, "nodes": [node],
           "edges": [], "timeline": [["node", 0], *timeline]}
    if version >= 3:
        doc["sources"] = sources
    return doc


def test_an_older_recording_loads_with_no_backward_line(tmp_path):
    for version in (1, 2, 3):
        rec = load_recording(write_recording(tmp_path, _document(
            [["backward_started", 0], ["backward_finished", 0]], {}, version)))
        assert rec.timeline[1] == ("backward_started", 0, None)
        assert next(e for e in rec.events() if e.kind == "backward_started").where is None


def test_the_backward_line_is_checked_on_load_and_may_carry_its_own_text(tmp_path):
    ok = _document([["backward_started", 0, ["b.py", 2, "<module>", 4, None]]],
                   {"a.py": "x = 1\n", "b.py": "\nloss.backward()\n"})
    assert load_recording(write_recording(tmp_path, ok)).sources["b.py"] == "\nloss.backward()\n"
    for where, needle in ((["b.py", -2, "f", None], r"\$\.timeline\[1\]\[2\]\[1\]"),
                          ("b.py", r"\$\.timeline\[1\]\[2\]"),
                          ([1, 2, "f", None], r"\$\.timeline\[1\]\[2\]\[0\]")):
        bad = _document([["backward_started", 0, where]], {})
        with pytest.raises(ValueError, match=needle):
            load_recording(write_recording(tmp_path, bad))
    with pytest.raises(ValueError, match=r"a 'backward_started' step has 2 field"):
        load_recording(write_recording(tmp_path, _document([["backward_started", 0]], {})))


# ----------------------------------------------------------------------------- kept lines


def test_kept_stretches_are_the_lines_a_shared_source_keeps():
    assert kept_stretches({10}, 20) == [(8, 12)]
    assert kept_stretches({1, 19}, 20) == [(1, 3), (17, 20)]
    assert kept_stretches({5, 9}, 20) == [(3, 11)]  # touching stretches are one
    assert kept_stretches({5, 11}, 20) == [(3, 7), (9, 13)]  # line 8 alone is skipped
    assert kept_stretches({30}, 20) == [] and kept_stretches((), 5) == []
    lines = [f"line {i}\n" for i in range(1, 21)]
    text = shared_source(lines, {5, 11})
    kept = {n for first, last in kept_stretches({5, 11}, 20) for n in range(first, last + 1)}
    for n, line in enumerate(text.splitlines(), 1):
        assert (line == f"line {n}") == (n in kept)


def test_source_text_reads_a_file_again_once_it_changed(tmp_path):
    path = tmp_path / "models.py"
    path.write_text("a = 1\nb = 2\n", encoding="utf-8")
    assert source_text(str(path), {2}) == "a = 1\nb = 2\n"
    path.write_text("a = 1\nb = 2  # written again, and reloaded\nc = 3\n", encoding="utf-8")
    assert "written again" in source_text(str(path), {2})


# ----------------------------------------------------------------------------- the live view


def _view():
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    from dyngraph.jupyter.view import GraphView, unpack

    return GraphView(rate=1e9), unpack  # rate: a delta per event


def test_a_view_sends_each_file_with_the_lines_it_kept_and_every_line_a_node_names(
        tmp_path, monkeypatch):
    """A model in models.py: every line a node points at is sent with its text, in the last
    text sent for the file, and inside the stretches sent with it (issue 40)."""
    monkeypatch.chdir(tmp_path)
    forward, backward = _two_files(tmp_path)
    view, unpack = _view()
    deltas = []
    view.observe(lambda change: deltas.append(unpack(change["new"])), names="delta")
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    w = dg.tensor([0.5, -1.0], requires_grad=True, name="w")
    view.attach()
    loss = forward(x, w)
    backward(loss)
    view.detach()
    state = unpack(view.snapshot)
    assert set(state["sources"]) == set(state["kept_lines"]) == {"models.py", "lesson.py"}
    for delta in deltas:  # a text always comes with its stretches
        assert set(delta.get("kept_lines", {})) == set(delta.get("sources", {}))
    where_index = view.header["fields"]["node_created"].index("where")
    lines = {(fields[where_index][0], fields[where_index][1]) for kind, fields in state["events"]
             if kind == "node_created" and fields[where_index] is not None}
    backward_where = next(fields[3] for kind, fields in state["events"]
                          if kind == "backward_started")
    assert backward_where[:3] == ["lesson.py", 12, "backward"]
    lines.add(("lesson.py", 12))
    assert ("models.py", 5) in lines and ("models.py", 12) in lines
    for file, line in lines:
        on_disk = (tmp_path / file).read_text(encoding="utf-8").splitlines()[line - 1]
        assert state["sources"][file].splitlines()[line - 1] == on_disk
        assert any(first <= line <= last for first, last in state["kept_lines"][file])
    # two of the comments between the two lines of models.py are not kept: one stretch skipped
    assert state["kept_lines"]["models.py"] == [[3, 7], [10, 12]]
    assert "SECRET" not in state["sources"]["lesson.py"]


def test_a_backward_in_a_later_cell_sends_that_cell_as_its_source(tmp_path, monkeypatch):
    """NOTE [a watched graph stays watched]: the forward watched in one cell (here: one file),
    a plain backward() in the next; the view hears that later line and gets its text."""
    monkeypatch.chdir(tmp_path)
    forward, backward = _two_files(tmp_path)
    view, unpack = _view()
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    w = dg.tensor([0.5, -1.0], requires_grad=True, name="w")
    with dg.watch(view, display=False):
        loss = forward(x, w)
    loss.backward()  # marker: later cell
    state = unpack(view.snapshot)
    where = next(fields[3] for kind, fields in state["events"] if kind == "backward_started")
    here = Path(__file__)
    assert where[1] == line_of("marker: later cell")
    shared = where[0]
    assert shared.endswith(here.name)
    assert state["sources"][shared].splitlines()[where[1] - 1].strip() == (
        "loss.backward()  # marker: later cell")
    kept = state["kept_lines"][shared]
    assert any(first <= where[1] <= last for first, last in kept)
    # the view's own recording keeps it too, as dg.record() does
    (step,) = [s for s in view.recording.timeline if s[0] == "backward_started"]
    assert step[2][:2] == (shared, where[1])


def test_a_small_block_watched_between_two_flushes_is_followed_too():
    """A view displayed in a notebook flushes as it is shown; a small forward pass then comes
    within one interval, so no batch was packed when the block ended: the view must still
    follow that graph, or a backward in the next cell would never play in it."""
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    from dyngraph.jupyter.view import GraphView, unpack

    view = GraphView(rate=0.001)  # one flush per 1000 s: none inside the block
    view.flush()  # as displaying it does
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    with dg.watch(view, display=False):
        loss = (x * x).sum()
    loss.backward()  # marker: small block
    kinds = [kind for kind, _fields in unpack(view.snapshot)["events"]]
    assert kinds.count("node_created") == 3 and kinds[-1] == "backward_finished"


def test_a_replayed_recording_shows_its_own_text_with_its_stretches(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    forward, backward = _two_files(tmp_path)
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    w = dg.tensor([0.5, -1.0], requires_grad=True, name="w")
    with dg.record() as rec:
        backward(forward(x, w))
    rec.save(tmp_path / "run.json")
    for name in ("models.py", "lesson.py"):
        (tmp_path / name).write_text("# gone\n" * 30, encoding="utf-8")  # never read again
    view, unpack = _view()
    replayed = type(view).from_recording(load_recording(tmp_path / "run.json"))
    state = unpack(replayed.snapshot)
    assert state["sources"]["lesson.py"].splitlines()[11] == "    loss.backward()"
    assert "# gone" not in json.dumps(state["sources"])
    assert any(first <= 12 <= last for first, last in state["kept_lines"]["lesson.py"])

