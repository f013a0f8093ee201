"""The event spine: a golden sequence, plain frozen data, `where` pointing at the learner's
line, subscriber handles, weak bound methods, raising and re-entrant subscribers, scopes."""

from __future__ import annotations

import dataclasses
import gc
import inspect
import math
import warnings

import numpy as np
import pytest

import dyngraph as dg


def _summary(log):
    """The event log as (kind, ids...) tuples."""
    rows = []
    for e in log:
        if e.kind == "node_created":
            rows.append((e.kind, e.id, e.op, e.inputs))
        elif e.kind in ("backward_started", "backward_finished"):
            rows.append((e.kind, e.root))
        elif e.kind == "grad_computed":
            rows.append((e.kind, e.id))
        elif e.kind == "graph_freed":
            rows.append((e.kind, e.ids))
        elif e.kind == "edge_grad":
            rows.append((e.kind, e.node, e.input, e.position))
        elif e.kind == "version_bumped":
            rows.append((e.kind, e.id, e.version))
        else:
            rows.append((e.kind,))
    return rows


# ----------------------------------------------------------------------------- golden sequence


def test_golden_event_sequence_of_a_small_program():
    log = []
    with dg.events.subscribe(log.append):
        x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
        y = (x * 2).sum()
        y.backward()
    mul_id = y.grad_fn.parents[0].id
    const_id = log[1].id
    assert len({x.id, const_id, mul_id, y.id}) == 4
    assert _summary(log) == [
        ("node_created", x.id, "leaf", ()),
        ("node_created", const_id, "constant", ()),
        ("node_created", mul_id, "Mul", (x.id, const_id)),
        ("node_created", y.id, "Sum", (mul_id,)),
        ("backward_started", y.id),
        ("grad_computed", y.id),
        ("edge_grad", y.id, mul_id, 0),  # what each edge carried back, before its input's grad
        ("grad_computed", mul_id),
        ("edge_grad", mul_id, x.id, 0),  # the constant 2 receives nothing
        ("grad_computed", x.id),
        ("graph_freed", (mul_id,)),  # only Mul saved something; Sum saved nothing
        ("backward_finished", y.id),
    ]


def test_golden_sequence_carries_names_values_and_gradients():
    log = []
    with dg.events.subscribe(log.append):
        x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
        y = (x * 2).sum()
        y.backward()
    leaf, const, mul, total = log[:4]
    assert (leaf.name, leaf.is_leaf, leaf.requires_grad) == ("x", True, True)
    assert (leaf.shape, leaf.dtype, leaf.device) == ((2,), "float32", "cpu")
    assert leaf.preview == (1.0, 2.0)
    assert const.preview == (2,) and not const.requires_grad
    assert mul.preview == (2.0, 4.0) and not mul.is_leaf and mul.requires_grad
    assert mul.saved_bytes == 0  # x * 2 keeps only the number 2 (dz/dx = 2), no array
    assert total.preview == (6.0,) and total.shape == ()
    started = log[4]
    assert started.retain_graph is False and started.create_graph is False
    grads = [e for e in log if e.kind == "grad_computed"]
    assert [g.preview for g in grads] == [(1.0,), (1.0, 1.0), (2.0, 2.0)]
    assert math.isclose(grads[2].norm, math.sqrt(8.0))
    assert not any(g.accumulated for g in grads)


def test_leaf_made_before_subscribing_is_announced_at_first_use():
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    log = []
    with dg.events.subscribe(log.append):
        y = x * 2
    rows = _summary(log)
    const_id = log[1].id
    assert rows == [
        ("node_created", x.id, "leaf", ()),
        ("node_created", const_id, "constant", ()),
        ("node_created", y.id, "Mul", (x.id, const_id)),
    ]
    assert log[0].name == "x"


def test_op_output_made_before_subscribing_is_announced_with_its_real_op():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x.tanh()
    log = []
    with dg.events.subscribe(log.append):
        z = h.sum()
        z2 = h * h
    rows = _summary(log)
    assert rows[0] == ("node_created", x.id, "leaf", ())  # with the graph behind it
    assert rows[1] == ("node_created", h.id, "Tanh", (x.id,))
    assert log[1].is_leaf is False and log[1].where is None  # its line ran unwatched
    assert rows[2] == ("node_created", z.id, "Sum", (h.id,))
    assert rows[3] == ("node_created", z2.id, "Mul", (h.id, h.id))  # h announced only once
    assert len(rows) == 4


def test_a_new_subscription_announces_existing_tensors_again():
    x = dg.tensor([1.0], requires_grad=True)
    with dg.events.subscribe(lambda e: None):
        x * 2
    log = []
    with dg.events.subscribe(log.append):
        x * 3
    assert _summary(log)[0] == ("node_created", x.id, "leaf", ())


def test_accumulated_flag_on_fan_in_and_on_existing_grad():
    log = []
    with dg.events.subscribe(log.append):
        x = dg.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        (x + 0).sum().backward()
    leaf_grads = [e for e in log if e.kind == "grad_computed" and e.id == x.id]
    assert [g.accumulated for g in leaf_grads] == [True, True]  # fan-in, then onto .grad
    h_log = []
    with dg.events.subscribe(h_log.append):
        w = dg.tensor([1.0], requires_grad=True)
        (w * 3).sum().backward()
    assert [e.accumulated for e in h_log if e.kind == "grad_computed"] == [False, False, False]


def test_graph_freed_is_not_emitted_with_retain_graph():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    log = []
    with dg.events.subscribe(log.append):
        y = (x * x).sum()
        y.backward(retain_graph=True)
    kinds = [e.kind for e in log]
    assert "graph_freed" not in kinds
    assert kinds[-1] == "backward_finished"
    assert log[kinds.index("backward_started")].retain_graph is True


# ----------------------------------------------------------------------------- plain data


def _all_events():
    log = []
    with dg.events.subscribe(log.append):
        x = dg.tensor(np.arange(20, dtype=np.float32).reshape(4, 5), requires_grad=True)
        y = x.tanh() * 2
        y += 1
        loss = y.sum()
        loss.backward()
        z = (x * 3).sum()
        z.register_hook(lambda g: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            z.backward()
    return log


def test_every_kind_of_event_is_produced_by_the_fixture_program():
    kinds = {e.kind for e in _all_events()}
    assert kinds == {
        "node_created",
        "backward_started",
        "grad_computed",
        "edge_grad",
        "backward_finished",
        "backward_failed",
        "graph_freed",
        "version_bumped",
    }


def test_events_are_immutable():
    for event in _all_events():
        name = type(event).__name__
        first_field = _field_names(event)[0]
        with pytest.raises(AttributeError):  # FrozenInstanceError is an AttributeError
            setattr(event, first_field, 0)
        with pytest.raises((AttributeError, TypeError)):
            event.kind = "something else"
        assert isinstance(event.kind, str), name


def test_events_are_immutable_named_records():
    """Events are immutable records with named fields and a ``kind`` string. DESIGN.md says
    frozen dataclasses; they are NamedTuples instead, for speed (see the NOTE in events.py)."""
    for event in _all_events():
        assert isinstance(event, tuple) and event._fields, type(event).__name__
        assert isinstance(event.kind, str) and event.kind not in event._fields
        assert event._asdict() == dict(zip(event._fields, event, strict=True))


def _field_names(event):
    if dataclasses.is_dataclass(event):
        return [f.name for f in dataclasses.fields(event)]
    return list(event._fields)  # a NamedTuple


def _walk(value, path):
    """Yield (path, leaf value) for every plain value inside an event, recursively."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _walk(getattr(value, f.name), f"{path}.{f.name}")
    elif isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple record
        for name in value._fields:
            yield from _walk(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for k, item in value.items():
            yield from _walk(item, f"{path}[{k!r}]")
    else:
        yield path, value


def test_events_hold_plain_data_and_never_arrays():
    for event in _all_events():
        for path, value in _walk(event, event.kind):
            assert not isinstance(value, np.ndarray), path
            assert not isinstance(value, np.generic), path
            assert not isinstance(value, dg.Tensor), path
            assert value is None or isinstance(value, (bool, int, float, str)), (path, value)


def test_previews_are_short_tuples_of_floats():
    events = _all_events()
    previews = [e.preview for e in events if hasattr(e, "preview")]
    assert previews
    for e in events:
        if e.kind == "grad_computed" or (e.kind == "node_created" and e.op != "constant"):
            assert isinstance(e.preview, tuple)
            assert 1 <= len(e.preview) <= 6
            assert all(type(v) is float for v in e.preview), e
    leaf = next(e for e in events if e.kind == "node_created" and e.op == "leaf")
    assert leaf.preview == (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)  # the first six, row-major
    assert leaf.shape == (4, 5)


@pytest.mark.parametrize(
    "layout", ["small", "row", "long row", "contiguous", "transposed", "strided", "empty"]
)
def test_preview_and_norm_read_any_layout_row_major(layout):
    rng = np.random.default_rng(0)
    small, norm_small = dg.events.SMALL_PREVIEW, dg.events.SMALL_NORM
    array = {
        "small": rng.standard_normal((2, 3)),
        "row": rng.standard_normal((1, (small + norm_small) // 2)).astype(np.float32),  # between
        "long row": rng.standard_normal((1, norm_small + 1)).astype(np.float32),
        "contiguous": rng.standard_normal((32, 64)).astype(np.float32),
        "transposed": rng.standard_normal((64, 32)).T,
        "strided": rng.standard_normal((40, 30))[::3, ::2],
        "empty": np.zeros((0, 3), dtype=np.float32),
    }[layout]
    preview, norm = dg.events.preview_and_norm(array)
    assert preview == tuple(float(v) for v in array.reshape(-1)[:6])
    assert preview == dg.events.preview(array)
    assert norm == pytest.approx(float(np.sqrt((array.astype(np.float64) ** 2).sum())), rel=1e-5)


def _odd_arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    with_nan = rng.standard_normal((3, 4)).astype(np.float32)
    with_nan[1, 2] = np.nan
    with_inf = rng.standard_normal(50)
    with_inf[7] = -np.inf
    long_with_both = np.ones(100)
    long_with_both[[3, 60]] = [np.inf, np.nan]
    return {
        "zero-d": np.array(2.5, dtype=np.float32),
        "one number": np.array([-3.0]),
        "zeros": np.zeros(40),
        "nan": with_nan,
        "inf": with_inf,
        "nan and inf": np.array([1.0, np.inf, np.nan], dtype=np.float32),
        "long, nan and inf": long_with_both,
        "reversed": rng.standard_normal(40)[::-1],  # a negative stride
        "reversed rows": rng.standard_normal((6, 7)).astype(np.float32)[::-1, ::-2],
        "big-endian": rng.standard_normal(9).astype(">f8"),
        "float16": rng.standard_normal(10).astype(np.float16),
        "int64": np.arange(12).reshape(3, 4),
        "bool": np.array([True, False, True]),
    }


ODD_ARRAYS = _odd_arrays()


@pytest.mark.parametrize("name", list(ODD_ARRAYS))
def test_previews_of_odd_arrays_are_their_first_numbers_as_python_numbers(name):
    """Any dtype, byte order and stride: the first numbers in row-major order, as the Python
    numbers tolist() makes (ints stay ints, bools bools), and the same from both functions."""
    array = ODD_ARRAYS[name]
    expected = tuple(array.reshape(-1)[: dg.events.PREVIEW_SIZE].tolist())
    preview = dg.events.preview(array)
    assert [type(v) for v in preview] == [type(v) for v in expected]
    assert np.array_equal(preview, expected, equal_nan=True)
    if array.dtype.kind == "f":  # gradients are floating point
        values, norm = dg.events.preview_and_norm(array)
        assert np.array_equal(values, expected, equal_nan=True)
        wide = array.astype(np.float64).ravel()
        want = math.nan if np.isnan(wide).any() else float(np.sqrt((wide**2).sum()))
        assert type(norm) is float
        assert norm == pytest.approx(want, rel=1e-6, nan_ok=True)  # nan first, then inf


def test_preview_of_a_numpy_scalar():
    assert dg.events.preview(np.float32(1.5)) == (1.5,)


@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e200), (np.float64, 1e-200),
                                          (np.float32, 1e20), (np.float32, 1e-30),
                                          (np.float16, 300.0)])
@pytest.mark.parametrize("count", [2, 60])  # summed by math.hypot, then by a dot product
@pytest.mark.filterwarnings("ignore:overflow encountered in dot:RuntimeWarning")  # numpy's
def test_a_norm_neither_overflows_nor_underflows(dtype, scale, count):
    """The squares of big (or tiny) numbers leave the dtype's range: the norm does not."""
    array = (np.array([3.0, 4.0] * (count // 2)) * scale).astype(dtype)
    exact = 5.0 * float(dtype(scale)) * math.sqrt(count // 2)
    assert dg.events.preview_and_norm(array)[1] == pytest.approx(exact, rel=1e-3)
    assert dg.events.preview_and_norm(array[::-1])[1] == pytest.approx(exact, rel=1e-3)


# ----------------------------------------------------------------------------- where


def test_where_points_at_the_test_line():
    log = []
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.events.subscribe(log.append):
        line = inspect.currentframe().f_lineno + 1
        y = x * 2
        other_line = inspect.currentframe().f_lineno + 1
        z = dg.sum(y)
    created = {e.id: e for e in log if e.kind == "node_created"}
    for node_id, expected_line in ((x.id, line), (y.id, line), (z.id, other_line)):
        where = created[node_id].where
        assert where.file == __file__
        assert where.line == expected_line
        assert where.function == "test_where_points_at_the_test_line"


def _helper_that_builds(x):
    return x.exp()


def test_where_points_at_the_learner_helper_not_at_dyngraph():
    log = []
    x = dg.tensor([1.0], requires_grad=True)
    with dg.events.subscribe(log.append):
        y = _helper_that_builds(x)
    event = next(e for e in log if e.id == y.id)
    assert event.where.file == __file__
    assert event.where.function == "_helper_that_builds"


def test_where_of_a_line_run_again_is_the_same_cached_source_line():
    log = []
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.events.subscribe(log.append):
        for _ in range(3):
            y = x * 2  # noqa: F841 - the same instruction three times: one SourceLine, cached
    wheres = [e.where for e in log if e.kind == "node_created" and e.op == "Mul"]
    assert len(wheres) == 3 and wheres[0] is wheres[1] is wheres[2]
    assert wheres[0].file == __file__ and wheres[0].target == "y"


def test_where_of_code_outside_any_file_at_the_top_level():
    namespace = {"where": dg.events.where_from_stack}
    exec(compile("result = where()", "<learner>", "exec"), namespace)
    assert namespace["result"] == dg.events.SourceLine("<learner>", 1, "<module>", None, "result")


# ----------------------------------------------------------------------------- subscribe


def test_no_subscriber_means_inactive():
    assert dg.events.active is False
    handle = dg.events.subscribe(lambda e: None)
    try:
        assert dg.events.active is True
    finally:
        handle.remove()
    assert dg.events.active is False


def test_subscribe_returns_a_removable_handle():
    log = []
    handle = dg.events.subscribe(log.append)
    x = dg.tensor([1.0], requires_grad=True)
    x * 2
    seen = len(log)
    assert seen > 0
    handle.remove()
    x * 3
    assert len(log) == seen
    handle.remove()  # harmless twice


def test_subscribe_handle_is_a_context_manager():
    log = []
    with dg.events.subscribe(log.append) as handle:
        assert hasattr(handle, "remove")
        dg.tensor([1.0], requires_grad=True) * 2
    seen = len(log)
    dg.tensor([1.0], requires_grad=True) * 2
    assert len(log) == seen > 0
    assert dg.events.active is False


def test_subscribers_run_in_subscription_order():
    order = []
    with (
        dg.events.subscribe(lambda e: order.append("first")),
        dg.events.subscribe(lambda e: order.append("second")),
    ):
        dg.tensor([1.0], requires_grad=True) * 2
    assert order == ["first", "second"] * (len(order) // 2)
    assert len(order) == 6  # leaf, constant, Mul


def test_subscribe_refuses_a_non_callable():
    with pytest.raises(TypeError):
        dg.events.subscribe(42)


class _Listener:
    def __init__(self, log):
        self.log = log

    def on_event(self, event):
        self.log.append(event.kind)


def test_bound_method_subscribers_are_held_weakly():
    log = []
    listener = _Listener(log)
    handle = dg.events.subscribe(listener.on_event)
    x = dg.tensor([1.0], requires_grad=True)
    x * 2
    seen = len(log)
    assert seen > 0
    del listener
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = x * 3
        y.sum().backward()
    assert len(log) == seen
    assert dg.events.active is False  # the dead subscriber is gone
    handle.remove()


def test_a_raising_subscriber_is_warned_about_once_and_dropped():
    def broken(event):
        raise ValueError("subscriber bug")

    good = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with dg.events.subscribe(broken), dg.events.subscribe(good.append):
            x = dg.tensor([1.0, 2.0], requires_grad=True)
            loss = (x.tanh() * x).sum()
            loss.backward()
    runtime = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(runtime) == 1
    assert "subscriber bug" in str(runtime[0].message)
    kinds = [e.kind for e in good]
    assert kinds.count("node_created") == 4  # leaf, Tanh, Mul, Sum: nothing is lost
    assert kinds[-1] == "backward_finished"

    plain = dg.tensor([1.0, 2.0], requires_grad=True)
    (plain.tanh() * plain).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), plain.grad.numpy())


def test_a_subscriber_that_creates_tensors_does_not_re_enter():
    made_inside = []
    seen = []

    def creator(event):
        seen.append(event)
        t = dg.tensor([1.0], requires_grad=True) * 2
        made_inside.append(t.id)

    with dg.events.subscribe(creator):
        x = dg.tensor([1.0], requires_grad=True)
        y = (x * 3).sum()
        y.backward()
    ids = {getattr(e, "id", None) for e in seen} | {getattr(e, "root", None) for e in seen}
    assert made_inside  # the callback did run
    assert not ids & set(made_inside)
    for e in seen:
        if e.kind == "node_created":
            assert not set(e.inputs) & set(made_inside)
    assert [e.kind for e in seen].count("node_created") == 4  # leaf, constant, Mul, Sum
    np.testing.assert_allclose(x.grad.numpy(), [3.0])


def test_emit_delivers_in_order_warns_at_the_emitting_line_and_restores_its_flags():
    """What emit promises, told on plain strings: delivery in order, no re-entry, a raising
    subscriber warned about at the line that emitted (not dyngraph's) and dropped, a collected
    bound method dropped silently, and a KeyboardInterrupt that propagates with the flags
    restored."""
    emit, story = dg.events.emit, []

    def first(event):
        story.append(("first", event))
        emit("nested")  # a subscriber's own event is not delivered (no re-entry)

    def raising(event):
        raise ValueError(f"broken by {event}")

    class Listener:
        def __call__(self, event):  # a plain callable: held strongly
            story.append(("listener", event))

        def method(self, event):  # a bound method: held weakly
            story.append(("method", event))

    def interrupting(event):
        raise KeyboardInterrupt

    gone = Listener()
    gc.disable()  # the weakly held subscriber is collected by reference counting alone
    try:
        with dg.events.subscribe(first), dg.events.subscribe(raising), \
                dg.events.subscribe(Listener()), dg.events.subscribe(gone.method):
            del gone
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                line = inspect.currentframe().f_lineno + 1
                emit("a")
                emit("b")
            with dg.events.subscribe(interrupting), pytest.raises(KeyboardInterrupt):
                emit("c")
            assert dg.events.active is True
        assert dg.events.active is False
        emit("nobody listens")
    finally:
        gc.enable()
    assert story == [("first", "a"), ("listener", "a"), ("first", "b"), ("listener", "b"),
                     ("first", "c"), ("listener", "c")]
    assert [(str(w.message).split(":")[0].endswith("raised ValueError"), w.filename, w.lineno)
            for w in caught] == [(True, __file__, line)]
    assert "broken by a" in str(caught[0].message)


# ----------------------------------------------------------------------------- failures, in place


def test_backward_failed_carries_the_error_text_of_a_raising_hook():
    log = []
    x = dg.tensor([1.0], requires_grad=True)
    y = (x * 2).sum()

    def hook(g):
        raise KeyError("hook exploded")

    y.register_hook(hook)
    with dg.events.subscribe(log.append), pytest.raises(KeyError):
        y.backward()
    kinds = [e.kind for e in log]
    assert kinds[-1] == "backward_failed"
    assert "backward_finished" not in kinds
    failed = log[-1]
    assert failed.root == y.id
    assert "hook exploded" in failed.error
    assert "KeyError" in failed.error


def test_backward_failed_on_a_second_backward():
    x = dg.tensor([1.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    log = []
    with dg.events.subscribe(log.append), pytest.raises(RuntimeError):
        y.backward()
    assert log[-1].kind == "backward_failed"
    assert "second time" in log[-1].error


def test_version_bumped_on_inplace_ops():
    log = []
    t = dg.tensor([1.0, 2.0])
    w = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.events.subscribe(log.append):
        t += 1
        t[0] = 3.0
        t.zero_()
        with dg.no_grad():
            w -= 0.5
    bumps = [(e.id, e.version) for e in log if e.kind == "version_bumped"]
    assert bumps == [(t.id, 1), (t.id, 2), (t.id, 3), (w.id, 1)]


def test_recorded_inplace_emits_version_bumped_and_the_new_node():
    x = dg.tensor([1.0], requires_grad=True)
    log = []
    with dg.events.subscribe(log.append):
        h = x * 2
        old_id = h.id
        h += 1
    bumped = [e for e in log if e.kind == "version_bumped"]
    assert [(e.id, e.version) for e in bumped] == [(old_id, 1)]
    # The op runs on the old values, then its result is written: node, then bump.
    add, bump = log[-2:]
    assert add.kind == "node_created" and add.op == "Add" and add.id == h.id
    assert add.inputs[0] == old_id
    assert bump.kind == "version_bumped"


def test_inplace_through_a_view_emits_a_copy_slices_node_on_the_base():
    a = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    log = []
    with dg.events.subscribe(log.append):
        x = a * 1
        x[0].mul_(10)
    ops = [e.op for e in log if e.kind == "node_created"]
    assert ops[-1] == "CopySlices" and "Mul" in ops
    copy = [e for e in log if e.kind == "node_created"][-1]
    assert copy.id == x.id and x.grad_fn.name == "CopySlices"
    assert x.tolist() == [10.0, 2.0, 3.0]


# ----------------------------------------------------------------------------- scopes


def test_scope_is_recorded_on_nodes():
    log = []
    x = dg.tensor([1.0], requires_grad=True)
    with dg.events.subscribe(log.append):
        with dg.scope("layer"):
            y = x * 2
        z = y + 1
    created = {e.id: e for e in log if e.kind == "node_created"}
    assert created[y.id].scope == ("layer",)
    assert created[z.id].scope == ()


def test_scopes_nest_and_are_restored_after_an_exception():
    log = []
    x = dg.tensor([1.0], requires_grad=True)
    with dg.events.subscribe(log.append):
        with dg.scope("a"):
            with dg.scope("b"):
                inner = x * 2
            outer = x * 3
        with pytest.raises(RuntimeError), dg.scope("c"):
            raise RuntimeError("leave the scope")
        after = x * 4
    created = {e.id: e for e in log if e.kind == "node_created"}
    assert created[inner.id].scope == ("a", "b")
    assert created[outer.id].scope == ("a",)
    assert created[after.id].scope == ()
