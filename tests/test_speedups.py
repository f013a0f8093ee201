"""The C speedups (dyngraph/_speedups.c) give the same answers as their Python definitions in
dyngraph/events.py and dyngraph/jupyter/view.py (NOTE [speedups] in dyngraph/_accelerated.py),
and the fallback to Python works. (The engine's common path: tests/test_accelerated_engine.py.)"""

from __future__ import annotations

import math
import os
import re
import shutil
import sysconfig
import warnings
from pathlib import Path

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import _accelerated, dot, events

C = _accelerated.speedups  # the compiled module, or None
BUILT = C is not None


def py(name: str):
    """The Python definition in events.py of what ``C.name`` computes."""
    return _accelerated.readable(events, name)


needs_speedups = pytest.mark.skipif(
    not BUILT, reason="dyngraph._speedups is not built (no C compiler at install time, or "
    "DYNGRAPH_PURE_PYTHON is set): the Python definitions are in use"
)


def test_speedups_are_built_where_a_compiler_is():
    """An install on a machine with a C compiler and Python's headers builds them (setup.py)."""
    if os.environ.get("DYNGRAPH_PURE_PYTHON"):
        pytest.skip("DYNGRAPH_PURE_PYTHON is set: the Python definitions are in use by request")
    headers = Path(sysconfig.get_paths()["include"], "Python.h").exists()
    if shutil.which("cc") is None or not headers:
        pytest.skip("no C compiler or no Python headers here: nothing to build the speedups")
    assert BUILT, "make venv (pip install -e .) should have built dyngraph/_speedups.c"
    assert events.preview is C.preview
    assert events.preview_and_norm is C.preview_and_norm
    assert events.where_from_stack is C.where_from_stack
    assert events.emit is C.emit
    assert events.emit_edge_grad is C.emit_edge_grad
    assert events.emit_grad_computed is C.emit_grad_computed
    assert events.emit_op_created is C.emit_op_created


def _arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    with_nan = rng.standard_normal((3, 4)).astype(np.float32)
    with_nan[1, 2] = np.nan
    with_inf = rng.standard_normal(50)
    with_inf[7] = -np.inf
    with_both = np.array([1.0, np.inf, np.nan], dtype=np.float32)
    long_with_both = np.ones(100)
    long_with_both[[3, 60]] = [np.inf, np.nan]
    return {
        "row float32": rng.standard_normal((1, 8)).astype(np.float32),
        "matrix float64": rng.standard_normal((5, 7)),
        "large float32": rng.standard_normal((64, 32)).astype(np.float32),
        "zero-d": np.array(2.5, dtype=np.float32),
        "one number": np.array([-3.0]),
        "empty": np.zeros((0, 3), dtype=np.float32),
        "zeros": np.zeros(40),
        "nan": with_nan,
        "inf": with_inf,
        "nan and inf": with_both,
        "long, nan and inf": long_with_both,
        "transposed": rng.standard_normal((6, 9)).T,
        "strided": rng.standard_normal((10, 10))[::2, ::3].astype(np.float32),
        "big-endian": rng.standard_normal(9).astype(">f8"),
        "float16": rng.standard_normal(10).astype(np.float16),
        "int64": np.arange(12).reshape(3, 4),
        "bool": np.array([True, False, True]),
    }


ARRAYS = _arrays()


def _same_values(a: tuple, b: tuple) -> bool:
    """The same numbers of the same Python types (nan equal to nan)."""
    return (
        len(a) == len(b)
        and all(type(v) is type(w) for v, w in zip(a, b))
        and all(v == w or (v != v and w != w) for v, w in zip(a, b))
    )


def _same_number(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == pytest.approx(b, rel=1e-6, abs=0.0)


@needs_speedups
@pytest.mark.parametrize("name", list(ARRAYS))
def test_preview_and_norm_match_the_python_definitions(name):
    array = ARRAYS[name]
    assert _same_values(C.preview(array), py("preview")(array))
    preview, norm = C.preview_and_norm(array)
    py_preview, py_norm = py("preview_and_norm")(array)
    assert _same_values(preview, py_preview)
    assert type(norm) is float
    assert _same_number(norm, py_norm), (norm, py_norm)


@pytest.mark.parametrize("name", [name for name, a in ARRAYS.items() if a.dtype.kind == "f"])
def test_norm_is_the_l2_norm_nan_first_then_inf(name):
    """What the implementation in use gives, against numpy in float64 (gradients are floating
    point, so only those)."""
    array = ARRAYS[name]
    values = array.astype(np.float64).ravel()
    expected = math.nan if np.isnan(values).any() else float(np.sqrt((values**2).sum()))
    assert _same_number(events.preview_and_norm(array)[1], expected)


@needs_speedups
@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_norm_neither_overflows_nor_underflows(scale):
    array = np.array([3.0, 4.0]) * scale
    assert C.preview_and_norm(array)[1] == pytest.approx(5.0 * scale, rel=1e-12)
    assert C.preview_and_norm(array.reshape(1, 2).repeat(30, 0))[1] == (
        pytest.approx(5.0 * scale * math.sqrt(30), rel=1e-12)
    )


@needs_speedups
def test_previews_of_anything_else_go_to_python():
    """Arrays of other dtypes and layouts, numpy scalars, anything array-like: the Python
    definition answers (and for CuPy arrays the same happens; see the GPU tests)."""
    scalar = np.float32(1.5)
    assert C.preview(scalar) == py("preview")(scalar) == (1.5,)
    with pytest.raises(AttributeError):  # the same error as the Python definition gives
        C.preview([1.0, 2.0])


def _where_here(function, depth):
    return function(depth)


@needs_speedups
@pytest.mark.parametrize("depth", [1, 2])
def test_where_from_stack_matches_the_python_definition(depth):
    found = []
    for function in (C.where_from_stack, py("where_from_stack")):
        found.append(_where_here(function, depth))  # both from this one line
    fast, slow = found
    assert fast == slow
    assert fast.file == __file__
    this_test = test_where_from_stack_matches_the_python_definition.__name__
    assert fast.function == ("_where_here" if depth == 1 else this_test)


@needs_speedups
def test_where_from_stack_skips_dyngraph_frames_and_is_cached():
    log = []
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.events.subscribe(log.append):
        for _ in range(3):
            y = x * 2  # the same instruction three times: one SourceLine, from the cache
    wheres = [e.where for e in log if e.kind == "node_created" and e.op == "Mul"]
    assert len(wheres) == 3 and wheres[0] is wheres[1] is wheres[2]
    assert wheres[0].file == __file__ and wheres[0].function.startswith("test_where_from_stack")
    assert y.shape == (2,)


@needs_speedups
def test_where_from_stack_outside_any_file_and_at_the_top():
    namespace = {"where": C.where_from_stack}
    exec(compile("result = where()", "<learner>", "exec"), namespace)
    assert namespace["result"] == events.SourceLine("<learner>", 1, "<module>", None, "result")
    with pytest.raises(ValueError):  # too deep: sys._getframe's error, as in Python
        C.where_from_stack(10_000)
    with pytest.raises(TypeError):
        C.where_from_stack(1, True, 3)


def _dispatch_story(emit) -> list:
    """Everything emit promises, told with ``emit`` standing in for events.emit: delivery in
    order, no re-entry, a raising subscriber warned about (at the emitting line) and dropped,
    a collected bound method dropped silently, the flags after, and a KeyboardInterrupt that
    propagates with them restored."""
    story = []
    saved = events.emit
    events.emit = emit  # what the engine and subscribers below call
    try:
        def first(event):
            story.append(("first", event))
            events.emit("nested")  # a subscriber's own event is not delivered (no re-entry)

        def raising(event):
            raise ValueError(f"broken by {event}")

        class Listener:
            def __call__(self, event):  # a plain callable: held strongly
                story.append(("listener", event))

            def method(self, event):  # a bound method: held weakly
                story.append(("method", event))

        listener = Listener()
        gone = Listener()
        with events.subscribe(first), events.subscribe(raising), events.subscribe(listener), \
                events.subscribe(gone.method):
            del gone  # collected: its subscription ends without a warning
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                emit("a")
                emit("b")
            story.append(("warned", [(re.sub(" at 0x[0-9a-f]+", "", str(w.message)),
                                      Path(w.filename).name, w.lineno) for w in caught]))
            story.append(("flags", events.active, events._dispatching))

            def interrupting(event):
                raise KeyboardInterrupt

            with events.subscribe(interrupting), pytest.raises(KeyboardInterrupt):
                emit("c")
            story.append(("flags", events.active, events._dispatching))
        story.append(("flags", events.active, events._dispatching))
        emit("nobody listens")
    finally:
        events.emit = saved
    return story


@needs_speedups
def test_emit_matches_the_python_definition():
    import gc

    gc.disable()  # the weakly held subscriber is collected by reference counting alone
    try:
        fast = _dispatch_story(C.emit)
        slow = _dispatch_story(py("emit"))
    finally:
        gc.enable()
    assert fast == slow
    assert ("first", "a") in fast and ("listener", "b") in fast and ("first", "nested") not in fast
    assert not any(who == "method" for who, *_ in fast)
    warned = next(rest for who, *rest in fast if who == "warned")[0]
    assert len(warned) == 1 and "ValueError: broken by a" in warned[0][0]
    assert warned[0][1] == Path(__file__).name  # the line that emitted, not dyngraph's
    assert [rest for who, *rest in fast if who == "flags"] == [[True, False]] * 2 + [[False, False]]


def _collect_story(make) -> list:
    """What a collector (view.collector or _speedups.Collector) appends and when it ticks, with
    strides that change, a stride below 1, and a tick that raises."""
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


@needs_speedups
def test_collector_matches_the_python_definition():
    pytest.importorskip("anywidget", reason="the jupyter extra is not installed")
    from dyngraph.jupyter import view

    collector = _accelerated.readable(view, "collector")
    fast = _collect_story(C.Collector)
    assert fast == _collect_story(collector)
    ticks = [n for what, n, *_ in fast if what == "tick"]
    assert ticks == [1, 2, 5, 7, 8, 13, 14, 16, 20]  # after events 1, 1+1, 2+3, ...: as told
    assert ("raised", 12, "flush failed") in fast
    assert fast[-1] == ("kept", list(range(20)))  # every event appended, whatever tick did


@pytest.mark.parametrize("batches", [0, 1, 15, 16, 300, 70_000])
def test_pack_delta_is_pack(batches):
    """The live view's deltas and snapshots, joined by hand (NOTE [big deltas] in
    dyngraph/jupyter/view.py), are the bytes ormsgpack makes of the same dict."""
    pytest.importorskip("anywidget", reason="the jupyter extra is not installed")
    pytest.importorskip("ormsgpack", reason="the jupyter extra is not installed")
    from dyngraph.jupyter.view import pack, pack_delta

    rng = np.random.default_rng(batches)
    lengths = [0, 1, 255, 256, 65_535, 65_536, 100_000]  # each side of each length header
    sizes = [lengths[i % 7] for i in range(batches)] if batches <= 16 else [3] * batches
    packed = [bytes(rng.integers(0, 256, size, dtype=np.uint8)) for size in sizes]
    delta = {"seq": 7, "events": packed, "sources": {"lesson.py": "x = 1\n"},
             "dropped": {"nodes": 0, "steps": 2}}
    assert pack_delta(delta) == pack(delta)


@needs_speedups
@pytest.mark.parametrize("name", list(ARRAYS))
def test_emit_edge_grad_matches_the_python_definition(name):
    array = ARRAYS[name]
    delivered = []
    with events.subscribe(delivered.append):
        C.emit_edge_grad(7, 3, 1, array, (4, 3))
        py("emit_edge_grad")(7, 3, 1, array, (4, 3))
        C.emit_edge_grad(8, 2, 0, array, None)
        py("emit_edge_grad")(8, 2, 0, array, None)
    C.emit_edge_grad(9, 1, 0, array, None)  # nobody listens: nothing
    assert len(delivered) == 4 and all(type(e) is events.EdgeGrad for e in delivered)
    for fast, slow in (delivered[:2], delivered[2:]):
        assert fast[:3] == slow[:3] and fast.reduced_from == slow.reduced_from
        assert _same_values(fast.preview, slow.preview)
    assert delivered[0].node == 7 and delivered[0].input == 3 and delivered[0].position == 1
    assert delivered[0].reduced_from == (4, 3) and delivered[2].reduced_from is None


@needs_speedups
@pytest.mark.parametrize("name", list(ARRAYS))
def test_emit_grad_computed_matches_the_python_definition(name):
    array = ARRAYS[name]
    delivered = []
    with events.subscribe(delivered.append):
        C.emit_grad_computed(7, array, True)
        py("emit_grad_computed")(7, array, True)
    C.emit_grad_computed(9, array, False)  # nobody listens: nothing
    fast, slow = delivered
    assert type(fast) is type(slow) is events.GradComputed
    assert fast.id == slow.id == 7 and fast.accumulated is slow.accumulated is True
    assert _same_values(fast.preview, slow.preview) and _same_number(fast.norm, slow.norm)


class _OnAnotherDevice:
    """An array the C fast path does not know: emit_op_created asks backend.device_of and the
    Python preview about it, as the definition does."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array
        self.shape, self.dtype = array.shape, array.dtype

    def ravel(self) -> np.ndarray:
        return self._array.ravel()


@needs_speedups
@pytest.mark.parametrize("name", list(ARRAYS))
def test_emit_op_created_matches_the_python_definition(name, monkeypatch):
    array = ARRAYS[name]
    where = events.SourceLine("lesson.py", 3, "<module>", None, "h")
    delivered = []
    with events.subscribe(delivered.append):
        for recomputing in (False, True):
            monkeypatch.setattr(events, "recomputing", recomputing)
            for emit in (C.emit_op_created, py("emit_op_created")):
                emit(7, "Mul", (3, 4), array, "h", ("MLP", "fc1"), where, 96, 1.5e-6)
            for emit in (C.emit_op_created, py("emit_op_created")):
                emit(8, "Tanh", (7,), _OnAnotherDevice(array), None, (), None, 0, None)
    C.emit_op_created(9, "Mul", (), array, None, (), None, 0, None)  # nobody
    assert len(delivered) == 8 and all(type(e) is events.NodeCreated for e in delivered)
    for fast, slow in zip(delivered[::2], delivered[1::2]):
        assert fast._replace(preview=()) == slow._replace(preview=())
        assert _same_values(fast.preview, slow.preview)
    assert delivered[0].dtype == str(array.dtype) and delivered[0].device == "cpu"
    assert delivered[0].shape == array.shape and delivered[0].where is where
    assert [e.recomputed for e in delivered] == [False] * 4 + [True] * 4


def _a_watched_program() -> list:
    """The events of a small program with fan-in, a re-announced leaf, an in-place change and
    a backward: every kind the live view's filter sees."""
    seen = []
    x = dg.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
    with events.subscribe(seen.append):
        w = dg.tensor([[0.5], [1.5], [-1.0]], requires_grad=True)
        h = (x @ w).tanh()
        y = h * h + x.sum()
        c = dg.zeros(3)
        c.add_(1.0)
        y.sum().backward()
    with events.subscribe(seen.append):  # a new subscriber: x and w announced again
        (x * w.t()).sum().backward()
    return seen


@needs_speedups
@pytest.mark.parametrize("node_room, room", [(1000, 1000), (3, 1000), (1000, 7), (0, 5)])
def test_keep_rows_matches_the_python_definition(node_room, room):
    pytest.importorskip("anywidget", reason="the jupyter extra is not installed")
    from dyngraph.jupyter import view

    received = _a_watched_program()
    assert {e.kind for e in received} >= {"node_created", "grad_computed", "edge_grad",
                                          "version_bumped", "backward_started"}
    results = []
    for keep_rows in (C.keep_rows, _accelerated.readable(view, "keep_rows")):
        node_ids, wheres, shared = {999}, {}, []

        def share(where, shared=shared):
            shared.append(where)
            return ("lesson.py", *where[1:])

        rows, texts, *counts = keep_rows(received, node_ids, wheres, share, node_room, room,
                                         view._WHERE)
        results.append((rows, texts, counts, node_ids, wheres, shared))
    fast, slow = results
    assert fast == slow
    rows = fast[0]
    assert all(type(fields) is tuple for _, fields in rows)  # plain tuples: they pack as is
    made = [fields for kind, fields in rows if kind == "node_created"]
    assert len({fields[0] for fields in made}) == len(made)  # a node is kept once
    assert all(fields[view._WHERE] is None or fields[view._WHERE][0] == "lesson.py"
               for fields in made)
    assert len(rows) == min(room, len(rows) + fast[2][3])  # kept + dropped, within the room


@needs_speedups
@pytest.mark.parametrize("node_room, room", [(1000, 1000), (3, 1000), (1000, 7), (2, 9)])
def test_a_batch_s_texts_are_those_of_its_kept_rows_in_order(node_room, room):
    """The texts travel beside the rows, as one string (NOTE [display texts] in view.py): with
    events left out by the budget, the string holds the texts of the kept rows only, in row
    order, and decoding puts each row's own texts back after its fields."""
    pytest.importorskip("anywidget", reason="the jupyter extra is not installed")
    import ormsgpack

    from dyngraph.jupyter import view

    received = _a_watched_program()
    for keep_rows in (C.keep_rows, _accelerated.readable(view, "keep_rows")):
        rows, texts, _, _, dropped_nodes, dropped_events = keep_rows(
            received, set(), {}, lambda where: where, node_room, room, view._WHERE)
        if (node_room, room) != (1000, 1000):
            assert dropped_nodes + dropped_events > 0  # the budget left some out
        kept_events = [view.EVENT_CLASSES[kind](*fields) for kind, fields in rows]
        assert texts == "\n".join(text for event in kept_events
                                   for text in view.display_texts(event))
        decoded = view.rows_with_texts(*ormsgpack.unpackb(view.pack((rows, texts))))
        assert len(decoded) == len(rows)
        for (kind, fields), event in zip(decoded, kept_events, strict=True):
            own = len(event)
            assert fields[:own] == ormsgpack.unpackb(view.pack(event))  # the event's fields
            names = view.TEXT_FIELDS.get(kind, ())
            shown = dict(zip(names, fields[own:], strict=True))
            if names:
                assert shown["preview_text"] == [dot.format_value(v) for v in event.preview]
            if kind == "node_created":
                assert shown["saved_text"] == (dot.format_bytes(event.saved_bytes)
                                               if event.saved_bytes else None)
            if kind == "grad_computed":
                assert shown["norm_text"] == dot.format_value(event.norm)


# Values whose text is easy to get wrong: ties and near-ties of four significant digits, the
# switch to exponent form, signed zero, non-finite floats, a float subclass (str, not .4g),
# ints beyond 64 bits, bools, and float32 values widened to Python floats.
TRICKY_VALUES = [0.125, 1.0005, 9.9995, 99995.0, 1e-5, 0.0001, 123456.0, 1e16, 5e-324, -0.0,
                 0.0, math.nan, math.inf, -math.inf, 2**70, -(2**63), 7, True, False,
                 np.float64(0.5), float(np.float32(0.1)), float(np.float32(1 / 3)),
                 float(np.float32(2.675)), 1.7976931348623157e308,
                 0, -12345, 2**63 - 1, 2**64, np.int64(5), 1e-300]


@needs_speedups
def test_keep_rows_writes_the_same_display_texts_as_the_python_definition():
    pytest.importorskip("anywidget", reason="the jupyter extra is not installed")
    import ormsgpack

    from dyngraph.jupyter import view

    previews = [tuple(TRICKY_VALUES[i:i + 6]) for i in range(0, len(TRICKY_VALUES), 6)]
    received, ids = [], []
    for k, (preview, saved, elapsed) in enumerate(zip(
            previews, [0, 1023, 1536, 5 * 2**40, 2**70],
            [None, 0.000123456, 1.5, 2.0005e-3, 1e-9])):
        ids.append(k + 1)
        received.append(events.NodeCreated(k + 1, "Mul", (), (2, 3), "float32", "cpu", True,
                                           False, None, (), None, preview, saved, False, elapsed))
    for k, preview in enumerate(previews):
        norm = [0.5, math.nan, math.inf, 9.9995, -0.0][k]
        received.append(events.GradComputed(ids[k], preview, norm, k % 2 == 0))
        received.append(events.EdgeGrad(ids[k], ids[k - 1], 1, preview, None))
    received.append(events.VersionBumped(ids[0], 2))
    batches = []
    for keep_rows in (C.keep_rows, _accelerated.readable(view, "keep_rows")):
        batches.append(keep_rows(received, set(), {}, None, 100, 100, view._WHERE)[:2])
    fast, slow = batches
    assert fast == slow
    rows = view.rows_with_texts(*ormsgpack.unpackb(view.pack(fast)))  # as the page reads them
    kinds = [kind for kind, _ in rows]
    assert kinds.count("node_created") == 5 and kinds.count("edge_grad") == 5
    grads = [fields for kind, fields in rows if kind == "grad_computed"]
    assert [fields[-1] for fields in grads] == ["0.5", "nan", "inf", "9.999", "-0"]  # the norms
    node = dict(zip(view.GraphView().header["fields"]["node_created"], rows[0][1], strict=True))
    assert node["preview_text"] == [format(v, ".4g") if type(v) is float else str(v)
                                    for v in previews[0]]
    assert (node["saved_text"], node["elapsed_text"]) == (None, None)  # none saved, not timed
    assert rows[1][1][-2:] == ["1023 B", "0.123 ms"]


def _many_floats() -> list[float]:
    """Floats of every kind the C formatter of four significant digits could get wrong: random
    bits (every exponent), log-uniform magnitudes, float32 values, short decimals, exact ties
    (n + 1/2 at the fourth digit, in binary), and the neighbours of powers of ten and of
    9999.5-like carries."""
    rng = np.random.default_rng(14)
    bits = rng.integers(0, 2**64, 20_000, dtype=np.uint64).view(np.float64)
    magnitudes = 10.0 ** rng.uniform(-26, 28, 40_000) * rng.choice([-1.0, 1.0], 40_000)
    singles = magnitudes[:20_000].astype(np.float32).astype(np.float64)
    decimals = [round(v, int(d)) for v, d in zip(rng.uniform(-1e4, 1e4, 10_000),
                                                 rng.integers(0, 6, 10_000))]
    ties = (np.arange(1000, 10000) + 0.5) * 2.0 ** rng.integers(-30, 30, 9000)
    edges = []
    for k in range(-24, 26):
        for base in (1.0, 9.9995, 9.99949999, 9.9995000001, 1.00005, 0.5):
            value = base * 10.0**k
            edges += [value, np.nextafter(value, 0.0), np.nextafter(value, np.inf)]
    return [float(v) for v in (*bits, *magnitudes, *singles, *decimals, *ties, *edges)]


@needs_speedups
def test_keep_rows_writes_floats_as_format_4g_does_for_a_hundred_thousand_numbers():
    pytest.importorskip("anywidget", reason="the jupyter extra is not installed")
    from dyngraph.jupyter import view

    values = _many_floats()
    values += values[:120] * 4  # again: their texts now come from the C layer's recent ones
    received = [events.EdgeGrad(1, 1, 0, tuple(values[k:k + 6]), None)
                for k in range(0, len(values), 6)]
    _, texts, *_ = C.keep_rows(received, {1}, {}, None, 0, len(received), view._WHERE)
    shown = texts.split("\n")
    expected = [format(v, ".4g") for v in values]
    wrong = [(v, got, want) for v, got, want in zip(values, shown, expected) if got != want]
    assert len(shown) == len(values) and wrong == []
