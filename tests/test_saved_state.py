"""A notebook saved with widget state stores the widget's front end once, not once per graph
(NOTE [the front end once per notebook] in dyngraph/jupyter/front_end.py).

What JupyterLab writes for each model is its synced state, with binary traits as base64
buffers: ``ipywidgets.Widget.get_manager_state()`` is the kernel's side of the same thing, and
its JSON is what these tests weigh. The browser side (a reopened notebook playing its graphs)
is tests/browser/test_saved_notebook.py.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("anywidget", reason="the widget needs the jupyter extra")

import dyngraph as dg  # noqa: E402
from dyngraph.jupyter import GraphView  # noqa: E402
from dyngraph.jupyter.front_end import STATIC, FrontEnd  # noqa: E402

BUNDLE = (STATIC / "graphview.js").read_text(encoding="utf-8")
MARK = BUNDLE.splitlines()[0]  # "// dyngraph-widget-sources: <hash>": once per copy of it


def watched_graph() -> GraphView:
    view = GraphView().attach()
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    w = dg.tensor([0.5, -1.0], requires_grad=True, name="w")
    ((x * w).tanh().sum()).backward()
    view.detach()
    return view


def saved_bytes(model_state: dict) -> int:
    """Bytes a model takes in a saved notebook's widget state (JSON, buffers in base64)."""
    return len(json.dumps(model_state))


def test_each_graph_saves_a_small_state_and_the_front_end_is_saved_once():
    views = [watched_graph() for _ in range(3)]
    try:
        saved = json.loads(json.dumps(GraphView.get_manager_state(drop_defaults=True)))["state"]
        shared = {view.front_end for view in views}
        assert len(shared) == 1, "every view names the same FrontEnd"
        (front_end_id,) = shared
        assert saved[front_end_id]["state"]["code"] == BUNDLE
        notebook_text = json.dumps(saved)
        assert notebook_text.count(MARK) == 1, "the bundle is in the saved state once"
        for view in views:
            state = saved[view.model_id]
            assert MARK not in json.dumps(state)
            assert state["state"]["front_end"] == front_end_id
            assert saved_bytes(state) < 60_000, saved_bytes(state)  # was 880 KB and more
    finally:
        for view in views:
            view.close()


def test_a_closed_front_end_is_made_again_for_the_next_view():
    first = GraphView()
    FrontEnd.shared().close()
    second = GraphView()
    try:
        assert second.front_end != first.front_end
        assert FrontEnd.shared().comm is not None and second.front_end == FrontEnd.shared().model_id
    finally:
        first.close()
        second.close()


class FakeHandle:
    """What IPython.display.display(..., display_id=True) returns, recording the updates."""

    def __init__(self, data: dict) -> None:
        self.shown = [data]

    def update(self, data: dict, metadata: dict | None = None, raw: bool = False) -> None:
        assert raw
        self.shown.append(data)


def test_a_displayed_view_is_followed_by_a_picture_of_its_final_state(monkeypatch):
    """NOTE [a picture beside the widget]: display(view) makes two outputs, the widget's view
    and a picture marked with the view's picture_id; where the widget's model is missing (a
    notebook saved without widget state), the picture shows the graph as the block left it, not
    as it began, and its <style> hides the output before it, which holds the view."""
    import base64
    import re

    import IPython.display

    pytest.importorskip("IPython", reason="displaying needs IPython")
    outputs: list[FakeHandle | dict] = []

    def display(data, metadata=None, raw=False, display_id=False):
        assert raw
        outputs.append(FakeHandle(data) if display_id is True else data)
        return outputs[-1] if display_id is True else None

    monkeypatch.setattr(IPython.display, "display", display)
    view = GraphView()
    try:
        view._ipython_display_()  # what IPython calls for display(view) and a cell's last line
        view.attach()
        x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
        ((x * 2.0).tanh().sum()).backward()
        view.detach()
        view.detach()  # nothing new: no second update
        widget_output, picture_output = outputs
        widget = "application/vnd.jupyter.widget-view+json"
        assert widget_output[widget]["model_id"] == view.model_id
        assert set(widget_output) == {widget, "text/plain"}  # no second picture in it
        assert widget_output["text/plain"] == GraphView.NO_WIDGET_HERE
        assert isinstance(picture_output, FakeHandle) and len(picture_output.shown) == 2
        final = picture_output.shown[-1]
        assert widget not in final
        assert view.picture_id == view.model_id
        marked = f'<div class="dg-picture" data-dyngraph-picture="{view.picture_id}">'
        assert final["text/html"].startswith(marked)
        assert (".jp-OutputArea-child:not(:has(.dg-root))"
                ":has(+ .jp-OutputArea-child [data-dyngraph-picture])") in final["text/html"]
        if "image/svg+xml" not in final:
            assert "digraph dyngraph" in final["text/html"]  # no Graphviz: the DOT text, escaped
            assert "digraph dyngraph" in final["text/plain"]
            return
        assert final["image/svg+xml"].count('class="node"') == 5  # x, 2.0, Mul, Tanh, Sum
        image = re.search(r'<img src="data:image/svg\+xml;base64,([^"]+)"', final["text/html"])
        assert image and base64.b64decode(image[1]).decode() == final["image/svg+xml"]
        assert "<svg" not in final["text/html"]  # a sanitizer that drops <svg> keeps the <img>
    finally:
        view.close()


def test_a_picture_id_set_from_the_page_is_escaped_into_the_picture():
    """picture_id is synced, so the page may set it: it reaches the picture's HTML as an
    attribute's text, never as markup (issue 39: everything written into HTML is escaped)."""
    view = GraphView()
    try:
        view.picture_id = '"><img src=x onerror=alert(1)>'
        html = view._picture()["text/html"]
        assert "<img src=x" not in html
        assert 'data-dyngraph-picture="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"' in html
    finally:
        view.close()
