"""The widget's JavaScript composes DOT like dot.py: the shared fixture must be current.

widgets/test/vocabulary.test.js replays widgets/test/fixtures/vocabulary.json (statements written
by dot.py) through the browser's composition; this test fails when dot.py's vocabulary changed
and the fixture was not regenerated (``python tests/vocabulary_fixture.py``).
"""

from __future__ import annotations

import pytest

pytest.importorskip("anywidget", reason="the jupyter extra is missing (pip install -e .[jupyter])")

import vocabulary_fixture  # noqa: E402


def test_the_committed_fixture_is_what_dot_py_writes_now():
    committed = vocabulary_fixture.FIXTURE.read_text(encoding="utf-8")
    assert committed == vocabulary_fixture.render(), (
        "dot.py's vocabulary changed: run `python tests/vocabulary_fixture.py` and rebuild the "
        "widget (its JavaScript tests replay the fixture)"
    )


def test_the_widgets_sample_state_speaks_dot_pys_vocabulary_now():
    """widgets/dev/sample_state.json (the JavaScript tests' sample view, and the dev harness) has
    the header a view sends: its vocabulary (legend words included) is dot.py's of today."""
    import json

    from dyngraph import dot

    sample = vocabulary_fixture.FIXTURE.parents[2] / "dev" / "sample_state.json"
    vocabulary = json.loads(sample.read_text(encoding="utf-8"))["header"]["vocabulary"]
    assert vocabulary == json.loads(json.dumps(dot.vocabulary())), (
        "dot.py's vocabulary changed: run `python widgets/dev/make_sample_state.py`")


def test_the_fixture_covers_every_kind_state_and_a_hostile_name():
    data = vocabulary_fixture.build()
    kinds = {case["node"]["kind"] for case in data["nodes"]}
    assert kinds == {"leaf", "parameter", "constant", "op"}
    assert any(case["state"]["freed"] for case in data["nodes"])
    assert any(case["state"]["grad"] and case["state"]["grad"]["summed"] for case in data["nodes"])
    assert any("<script>" in (case["node"]["name"] or "") for case in data["nodes"])
