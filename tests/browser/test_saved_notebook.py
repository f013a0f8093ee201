"""A saved notebook shows its graphs with no kernel behind it: with widget state, playable; with
JupyterLab's default settings (no widget state), as pictures of their final state.

JupyterLab saves widget state when the widget manager's ``saveState`` setting is on (set here
through the settings REST API, as Settings -> "Save Widget State Automatically" would). Once a
watch block ends, a view's ``snapshot`` trait holds the whole graph (NOTE [state at rest] in
dyngraph/jupyter/view.py), so the saved file carries it. The kernel is then shut down and the
page reloaded: the notebook's new kernel has never heard of the widget (a resync request would
go unanswered), so what is drawn and played comes from the saved file alone.
"""

from __future__ import annotations

import json
import time
import urllib.request

from .labtools import (
    open_notebook,
    run_cells,
    screenshot,
    wait_for,
    write_notebook,
)

CELL = """\
x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
w = dg.tensor([0.5, -1.0], requires_grad=True, name="w")
with dg.watch():
    h = x * w
    y = h.tanh()
    loss = y.sum()
    loss.backward()
"""

DRAWN = ("() => { const r = document.querySelector('.dg-root');"
         " return r ? r.querySelectorAll('.dg-graph svg g.node:not(.dg-future)').length : -1; }")


def _request(lab, method: str, path: str, body: object = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{lab.base}{path}?token={lab.token}", data=data,
                                     method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read()
    return json.loads(text) if text else None


def _saved_snapshot(path) -> int:
    """Bytes of the GraphView snapshot saved in the notebook file (0 when none)."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    state = notebook.get("metadata", {}).get("widgets", {}).get(
        "application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for model in state.values():
        for buffer in model.get("buffers", []):
            if buffer.get("path") == ["snapshot"]:
                return len(buffer.get("data", ""))
    return 0


def _saved_models(path) -> dict:
    """The widget models saved in the notebook file, by model id."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return notebook["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]


VISIBLE_OUTPUTS = """() => Array.from(document.querySelectorAll('.jp-Cell')[1]
    .querySelectorAll('.jp-OutputArea-child'))
    .filter(o => o.getBoundingClientRect().height > 0)
    .map(o => o.querySelector('.dg-root') ? 'view'
         : o.querySelector('[data-dyngraph-picture] img') ? 'picture' : o.innerText.trim())"""


def _run_with_widget_state_saving(lab, page, name: str, save_state: bool) -> None:
    """Set JupyterLab's "Save Widget State Automatically" (through the settings REST API, as
    the Settings menu would), then open a notebook of CELL and run it until its 5 nodes show."""
    _request(lab, "PUT", "/lab/api/settings/@jupyter-widgets/jupyterlab-manager:plugin",
             {"raw": json.dumps({"saveState": save_state})})
    write_notebook(lab.root / name, ["import dyngraph as dg", CELL])
    open_notebook(page, lab, name)
    run_cells(page, 2)
    wait_for(lambda: page.evaluate(DRAWN) == 5, timeout=30)  # x, w, Mul, Tanh, Sum


def _reopen_with_a_new_kernel(lab, page, name: str) -> None:
    """Shut every kernel down and open the notebook in a fresh page: its new kernel has never
    heard of the widgets the file names."""
    for kernel in _request(lab, "GET", "/api/kernels"):
        _request(lab, "DELETE", f"/api/kernels/{kernel['id']}")
    page.goto(lab.url(name))
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)


def test_a_saved_notebook_shows_and_plays_its_graph_without_the_kernel_that_made_it(lab, page):
    name = "saved.ipynb"
    _run_with_widget_state_saving(lab, page, name, save_state=True)

    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    wait_for(lambda: _saved_snapshot(lab.root / name) > 0, timeout=30)
    # the front end is saved once per notebook, each graph's own state is small (NOTE [the
    # front end once per notebook] in dyngraph/jupyter/front_end.py)
    models = _saved_models(lab.root / name)
    views = {i: m for i, m in models.items() if "front_end" in m["state"]}
    front_ends = {i: m for i, m in models.items() if "code" in m["state"]}
    assert len(views) == 1 and len(front_ends) == 1
    for model in views.values():
        assert model["state"]["front_end"] in front_ends
        print(f"saved state of one graph: {len(json.dumps(model))} bytes; the front end, once: "
              f"{len(json.dumps(next(iter(front_ends.values()))))} bytes")
        assert len(json.dumps(model)) < 60_000
    _reopen_with_a_new_kernel(lab, page, name)
    wait_for(lambda: page.evaluate(DRAWN) == 5, timeout=60)
    root = page.locator(".dg-root").first
    assert "Sum" in root.locator(".dg-graph svg").evaluate("s => s.textContent")
    assert page.evaluate(VISIBLE_OUTPUTS) == ["view"]  # the restored view hides its picture

    # play it from the start: the timeline came with the saved state too
    root.get_by_role("slider", name="position in the timeline").fill("0")
    wait_for(lambda: page.evaluate(DRAWN) < 5, timeout=10)
    root.get_by_role("button", name="play / pause (Space)").click()
    wait_for(lambda: "backward finished" in root.locator(".dg-position").inner_text(),
             timeout=30)
    assert page.evaluate(DRAWN) == 5


def test_a_notebook_saved_with_default_settings_reopens_with_pictures_not_errors(lab, page):
    """NOTE [a picture beside the widget] in dyngraph/jupyter/view.py. Live, the cell shows the
    widget alone (its picture output is hidden); saved with JupyterLab's default settings, the
    file has no widget state, and reopened by its author (trusted) after the kernel is gone it
    shows the picture of the graph's final state, and not "Error displaying widget: model not
    found"."""
    name = "saved_default.ipynb"
    _run_with_widget_state_saving(lab, page, name, save_state=False)  # JupyterLab's default
    wait_for(lambda: page.evaluate(VISIBLE_OUTPUTS) == ["view"], timeout=10)

    page.keyboard.press("Control+s")  # as the learner saves
    def saved_picture():
        try:
            notebook = json.loads((lab.root / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        outputs = notebook["cells"][1].get("outputs", [])
        return len(outputs) == 2 and "data-dyngraph-picture" in "".join(
            outputs[1].get("data", {}).get("text/html", ""))
    wait_for(saved_picture, timeout=30)
    notebook = json.loads((lab.root / name).read_text(encoding="utf-8"))
    assert "application/vnd.jupyter.widget-state+json" not in notebook["metadata"].get(
        "widgets", {})
    _reopen_with_a_new_kernel(lab, page, name)  # and no widget state in the file
    picture = page.locator(".jp-Cell").nth(1).locator("[data-dyngraph-picture] img").first
    picture.wait_for(timeout=60_000)
    wait_for(lambda: picture.evaluate("i => i.complete && i.naturalWidth") > 100, timeout=30)
    time.sleep(2)  # the widget manager has restored, and found no model
    assert page.evaluate(VISIBLE_OUTPUTS) == ["picture"]
    assert "model not found" not in page.locator(".jp-Cell").nth(1).inner_text()
    assert picture.evaluate("i => i.getBoundingClientRect().width") > 100
    screenshot(page, "reopened_with_default_settings.png")


def _executed_without_widget_state(path) -> None:
    """The notebook as nbconvert --execute or a colleague's JupyterLab with default settings
    writes it: each graph's output carries the widget's view id and its pictures, no widget
    state. Not signed on this machine: JupyterLab opens it untrusted, as a shared notebook."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("import dyngraph as dg"),
                      nbformat.v4.new_code_cell(CELL)]
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   store_widget_state=False).execute()
    nbformat.write(notebook, str(path))


def test_a_notebook_shared_without_widget_state_shows_each_graphs_picture(lab, page):
    """The output of a graph carries its final state as a picture (text/html with the SVG, and
    image/svg+xml) beside the widget's view. JupyterLab renders an untrusted notebook's outputs
    with safe renderers only, so a shared notebook shows that picture, not an error."""
    name = "shared.ipynb"
    _executed_without_widget_state(lab.root / name)
    outputs = json.loads((lab.root / name).read_text())["cells"][1]["outputs"]
    assert "application/vnd.jupyter.widget-view+json" in outputs[0]["data"]
    assert {"text/html", "image/svg+xml"} <= set(outputs[1]["data"])
    open_notebook(page, lab, name)
    output = page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-output").nth(1)
    output.wait_for(timeout=60_000)
    picture = output.locator("img").first  # the sanitizer keeps an <img>, drops inline <svg>
    picture.wait_for(timeout=30_000)
    wait_for(lambda: picture.evaluate("i => i.complete && i.naturalWidth") > 100, timeout=30)
    assert output.evaluate("e => e.getBoundingClientRect().height") > 100
    assert "model not found" not in output.inner_text()
    screenshot(page, "saved_without_widget_state.png")


def test_nbconvert_html_of_a_notebook_without_widget_state_shows_the_picture_alone(
        chromium, tmp_path):
    """nbviewer-style static rendering: nbconvert's HTML (lab template) skips a widget view
    without state and shows its text; the picture's <style> hides that line, so the page shows
    the graph's picture alone."""
    from nbconvert import HTMLExporter

    notebook_path = tmp_path / "shared.ipynb"
    _executed_without_widget_state(notebook_path)
    body, _ = HTMLExporter(template_name="lab").from_filename(str(notebook_path))
    page_path = tmp_path / "shared.html"
    page_path.write_text(body, encoding="utf-8")
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.route("http*://**", lambda route: route.abort())  # what a CDN would serve: nothing
        page.goto(page_path.as_uri())
        picture = page.locator("[data-dyngraph-picture] img").first
        picture.wait_for(timeout=30_000)
        assert picture.evaluate("i => i.complete && i.naturalWidth") > 100
        shown = page.evaluate("""() => Array.from(document.querySelectorAll('.jp-OutputArea-child'))
            .filter(o => o.getBoundingClientRect().height > 0)
            .map(o => o.querySelector('[data-dyngraph-picture]') ? 'picture' : o.innerText)""")
        assert shown == ["picture"], shown
        assert "the widget is not shown here" not in page.locator("body").inner_text()
        screenshot(page, "nbconvert_without_widget_state.png")
    finally:
        context.close()
