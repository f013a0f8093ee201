"""Saved recordings: versioned JSON that round-trips byte for byte and displays like the live
recording, and a loader that treats every file as untrusted: each malformed input is a
ValueError naming the JSON path, never a RecursionError, and never an unpickling."""

from __future__ import annotations

import copy
import json
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import refused_recording, shared_timeline, write_recording

import dyngraph as dg
import dyngraph.recording_io as recording_io
from dyngraph.recording_io import SCHEMA_VERSION, load_recording


class Weight(dg.Tensor):
    __slots__ = ()
    is_parameter = True


def _live() -> dg.Recording:
    """A recording that uses every field: scopes, a parameter, constants, timing, backward
    (gradients, freed), an in-place op, a gradcheck mark and dropped timeline steps."""
    w = Weight(np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32), requires_grad=True)
    with dg.record(max_events=30) as rec:
        x = dg.tensor([[1.0, 2.0]], requires_grad=True, name="x \"quoted\" \\ é")
        with dg.scope("layer"), dg.events.timing():
            h = (x @ w).tanh()
        h2 = h * 1.0
        h2 += 0.5
        loss = (h2 * h2).sum()
        loss.backward()
        for _ in range(10):
            loss = loss * 1.0  # enough steps to overflow max_events
    rec.mark(h.id, "pass")
    assert rec.dropped_events > 0
    return rec


def _non_finite() -> dg.Recording:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with dg.record() as rec:
            x = dg.tensor([math.nan, math.inf, -math.inf, 1.0], requires_grad=True)
            y = (x * x).sum()
            y.backward()
    return rec


def _document(rec: dg.Recording | None = None) -> dict:
    return json.loads(recording_io.dumps(rec or _live()))


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("build", [_live, _non_finite])
def test_save_load_save_is_byte_identical(tmp_path, build):
    rec = build()
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    rec.save(first)
    loaded = dg.load_recording(first)
    loaded.save(second)
    assert first.read_bytes() == second.read_bytes()
    document = json.loads(first.read_text(encoding="utf-8"))
    assert document["schema_version"] == SCHEMA_VERSION
    assert loaded.summary() == rec.summary()


def test_non_finite_values_and_gradients_are_stored_as_strings(tmp_path):
    rec = _non_finite()
    path = tmp_path / "nan.json"
    rec.save(path)
    text = path.read_text(encoding="utf-8")
    json.loads(text, parse_constant=lambda token: pytest.fail(f"bare {token} in the file"))
    document = json.loads(text)
    leaf = document["nodes"][0]
    assert leaf["preview"] == ["NaN", "Infinity", "-Infinity", 1.0]
    assert leaf["grad_preview"] == ["NaN", "Infinity", "-Infinity", 2.0]
    assert leaf["grad_norm"] in ("NaN", "Infinity")
    loaded = dg.load_recording(path)
    values = loaded.nodes[next(iter(rec.nodes))].preview  # the leaf x
    assert math.isnan(values[0]) and values[1] == math.inf and values[2] == -math.inf


@pytest.mark.parametrize("build", [_live, _non_finite])
def test_a_loaded_recording_displays_exactly_like_the_live_one(tmp_path, build):
    rec = build()
    rec.save(tmp_path / "r.json")
    loaded = dg.load_recording(tmp_path / "r.json")
    for options in ({}, {"collapse": True}, {"values": False, "rankdir": "LR"},
                    {"max_nodes": 3}):
        assert loaded.to_dot(**options) == rec.to_dot(**options)
    # as text: a NaN in a preview != itself; the backward() line's file as files name it
    assert repr(loaded.timeline) == repr(shared_timeline(rec))
    assert loaded.nodes.keys() == rec.nodes.keys() and loaded.edges == rec.edges


# ----------------------------------------------------------------------------- refusals


def test_the_size_limit_is_checked_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    _live().save(path)
    size = path.stat().st_size

    def no_reading(*args, **kwargs):
        raise AssertionError("the file was opened although it is over the limit")

    monkeypatch.setattr(recording_io, "open", no_reading, raising=False)
    with pytest.raises(ValueError, match=f"{size} bytes"):
        load_recording(path, max_bytes=size - 1)
    monkeypatch.undo()
    assert load_recording(path, max_bytes=size).nodes


def test_deep_nesting_is_a_value_error_never_a_recursion_error(tmp_path):
    for text in ("[" * 100_000 + "]" * 100_000, "[" * 100_000, '{"a":' * 100_000):
        with pytest.raises(ValueError, match="nesting"):
            load_recording(write_recording(tmp_path, text))


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_tokens_are_refused_naming_the_path(tmp_path, token):
    text = recording_io.dumps(_live()).replace('"max_nodes":10000', f'"max_nodes":{token}')
    assert token in text
    refused_recording(tmp_path, text, token, "$.max_nodes")


def test_a_non_finite_token_inside_a_node_names_its_path(tmp_path):
    text = recording_io.dumps(_live())
    first_norm = text.index('"grad_norm":')
    end = text.index(",", first_norm)
    text = text[:first_norm] + '"grad_norm":NaN' + text[end:]
    refused_recording(tmp_path, text, "NaN", "$.nodes[0].grad_norm")


def test_duplicate_keys_are_refused_naming_the_path(tmp_path):
    text = recording_io.dumps(_live())
    top = text.replace('"max_nodes":10000', '"max_nodes":10000,"max_nodes":5', 1)
    refused_recording(tmp_path, top, "duplicate", "max_nodes")
    inner = text.replace('"order":0,', '"order":0,"order":0,', 1)
    refused_recording(tmp_path, inner, "duplicate", "$.nodes[0]")


def test_unknown_fields_are_refused_naming_the_path(tmp_path):
    document = _document()
    document["extra"] = 1
    refused_recording(tmp_path, document, "$.extra", "unknown")
    document = _document()
    document["nodes"][2]["url"] = "javascript:alert(1)"
    refused_recording(tmp_path, document, "$.nodes[2].url", "unknown")


def test_edges_to_missing_nodes_are_refused_naming_the_path(tmp_path):
    document = _document()
    document["edges"].append([document["nodes"][0]["id"], 999_999, 0])
    refused_recording(tmp_path, document, f"$.edges[{len(document['edges']) - 1}][1]", "999999")


def test_cycles_are_refused(tmp_path):
    base = _document()
    src, dst, _ = base["edges"][0]
    document = copy.deepcopy(base)
    document["edges"].append([dst, src, 0])
    refused_recording(tmp_path, document, "$.edges", "cycle")
    document = copy.deepcopy(base)
    document["edges"].append([src, src, 1])
    refused_recording(tmp_path, document, "$.edges", "cycle")


def _in_first_preview(text: str, number: str) -> str:
    position = text.index('"preview":[') + len('"preview":[')
    return text[:position] + number + "," + text[position:]


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda t: t.replace('"max_nodes":10000', '"max_nodes":' + "1" * 30), "$.max_nodes"),
        (lambda t: t.replace('"max_nodes":10000', '"max_nodes":1e400'), "$.max_nodes"),
        (lambda t: _in_first_preview(t, "-" + "9" * 30), "$.nodes[0].preview[0]"),
        (lambda t: _in_first_preview(t, "1e400"), "$.nodes[0].preview[0]"),
    ],
    ids=["30-digit int", "1e400", "30-digit int in a preview", "1e400 in a preview"],
)
def test_huge_numbers_are_refused_naming_the_path(tmp_path, edit, path):
    text = recording_io.dumps(_live())
    edited = edit(text)
    assert edited != text
    refused_recording(tmp_path, edited, "too large", path)


@pytest.mark.parametrize(
    ("shape", "path"),
    [
        ([2, -1], "$.nodes[0].shape[1]"),
        ([1] * (recording_io.MAX_NDIM + 1), "$.nodes[0].shape"),
        ([2**30, 2**30], "$.nodes[0].shape"),
        ([2, "3"], "$.nodes[0].shape[1]"),
        ([2, 1.5], "$.nodes[0].shape[1]"),
        ([2, True], "$.nodes[0].shape[1]"),
        ("2x3", "$.nodes[0].shape"),
    ],
)
def test_absurd_shapes_are_refused_naming_the_path(tmp_path, shape, path):
    document = _document()
    document["nodes"][0]["shape"] = shape
    refused_recording(tmp_path, document, path)


@pytest.mark.parametrize(
    ("where", "value", "path"),
    [
        (("nodes", 0, "id"), "1", "$.nodes[0].id"),
        (("nodes", 1, "kind"), "widget", "$.nodes[1].kind"),
        (("nodes", 1, "requires_grad"), 1, "$.nodes[1].requires_grad"),
        (("nodes", 1, "preview"), [1, [2]], "$.nodes[1].preview[1]"),
        (("nodes", 1, "where"), ["f.py", "12", "fn", None], "$.nodes[1].where[1]"),
        (("nodes", 1, "check"), "maybe", "$.nodes[1].check"),
        (("nodes", 1, "name"), 7, "$.nodes[1].name"),
        (("nodes", 1, "scope"), ["a", None], "$.nodes[1].scope[1]"),
        (("edges", 0), [1, 2], "$.edges[0]"),
        (("timeline", 0), ["teleport", 1], "$.timeline[0][0]"),
        (("timeline", 0, 1), "one", "$.timeline[0][1]"),
        (("dropped_nodes",), -1, "$.dropped_nodes"),
        (("nodes",), {"0": {}}, "$.nodes"),
        (("format",), "something-else", "$.format"),
    ],
)
def test_wrong_types_are_refused_naming_the_path(tmp_path, where, value, path):
    document = _document()
    target = document
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    refused_recording(tmp_path, document, path)


def test_a_missing_field_is_refused(tmp_path):
    document = _document()
    del document["nodes"][1]["dtype"]
    refused_recording(tmp_path, document, "$.nodes[1]", "dtype")
    document = _document()
    del document["timeline"]
    refused_recording(tmp_path, document, "timeline")


def test_a_newer_schema_version_is_refused_naming_both_versions(tmp_path):
    document = _document()
    document["schema_version"] = SCHEMA_VERSION + 1
    message = refused_recording(tmp_path, document, "$.schema_version")
    assert str(SCHEMA_VERSION + 1) in message and str(SCHEMA_VERSION) in message
    assert "upgrade" in message


@pytest.mark.parametrize("version", [0, -1, SCHEMA_VERSION + 1, "1", 1.0, None, True])
def test_every_unknown_schema_version_is_refused(tmp_path, version):
    document = _document()
    document["schema_version"] = version
    message = refused_recording(tmp_path, document, "$.schema_version")
    if version == 0:
        assert "schema_version 0" in message and "reads 1" in message


def test_the_current_schema_version_loads(tmp_path):
    document = _document()
    loaded = load_recording(write_recording(tmp_path, document))
    assert document["nodes"] and json.loads(recording_io.dumps(loaded)) == document


def test_not_json_at_all(tmp_path):
    refused_recording(tmp_path, "this is not json", "not a dyngraph recording")
    path = tmp_path / "latin1.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match="not a dyngraph recording"):
        load_recording(path)
    refused_recording(tmp_path, "[1, 2, 3]", "$")


# ----------------------------------------------------------------------------- never pickle


@pytest.fixture
def no_unpickling(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("load_recording must never unpickle")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    monkeypatch.setattr(np, "load", refuse)


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_a_pickle_is_refused_without_being_unpickled(tmp_path, no_unpickling, protocol):
    path = tmp_path / "rec.json"
    path.write_bytes(pickle.dumps({"format": "dyngraph-recording", "nodes": []}, protocol))
    with pytest.raises(ValueError, match="not a dyngraph recording"):
        load_recording(path)


def test_an_npz_with_an_object_array_is_refused_without_being_unpickled(tmp_path):
    path = tmp_path / "rec.npz"
    np.savez(path, payload=np.array([{"format": "dyngraph-recording"}], dtype=object))
    with pytest.MonkeyPatch.context() as patch:
        for module, name in ((pickle, "loads"), (pickle, "load"), (np, "load")):
            patch.setattr(module, name, lambda *a, **k: pytest.fail("unpickling attempted"))
        with pytest.raises(ValueError, match="not a dyngraph recording"):
            load_recording(path)
    npy = tmp_path / "rec.npy"
    np.save(npy, np.array([object()], dtype=object))
    with pytest.raises(ValueError, match="not a dyngraph recording"):
        load_recording(npy)


@settings(max_examples=50, deadline=None)
@given(name=st.text(max_size=80), scope=st.text(max_size=40),
       value=st.floats(allow_nan=True, allow_infinity=True, width=32))
def test_round_trip_of_arbitrary_names_and_values(name, scope, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with dg.record() as rec:
            x = dg.tensor([value, 1.0], requires_grad=True, name=name)
            with dg.scope(scope):
                (x * x).sum().backward()
    first = recording_io.dumps(rec)
    loaded = recording_io.loads(first.encode("utf-8"))
    assert recording_io.dumps(loaded) == first
    assert loaded.to_dot() == rec.to_dot()
    assert loaded.nodes[x.id].name == name
