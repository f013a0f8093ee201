"""The live widget in a real JupyterLab, in headless Chromium (see conftest.py for the setup).

What a learner does: run a multi-line cell under ``dg.watch(pace=...)`` and watch the graph grow
while the cell is still running; run backward and step through the gradients in engine order;
scrub; click a node whose name is hostile HTML and read it as text. Screenshots land in
tests/browser/artifacts/.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from .labtools import (
    ARTIFACTS,
    cells_running,
    open_notebook,
    run_cell,
    run_cells,
    wait_for,
    wait_idle,
    write_notebook,
)

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = '<img src=x onerror="window.__pwned=1">'

LIVE_CELL = f"""\
with dg.watch(pace=0.8, title="live") as view:
    x = dg.tensor([1.0, 2.0], requires_grad=True, name={HOSTILE!r})
    w = dg.tensor([0.5, -1.0], requires_grad=True, name="w")
    h = x * w
    t = h.tanh()
    loss = t.sum()
    loss.backward()
"""

BIG_CELL = """\
with dg.watch(tween_max_nodes=20, max_visible=400) as big:
    h = dg.tensor([0.5], requires_grad=True, name="start")
    for i in range(299):
        h = h * 1.001 if i % 2 else h + 0.001
"""


def graph_nodes(page, widget: int = 0) -> int:
    """Boxes drawn at the position shown. The widget lays out the whole recording once and
    restyles it per step (widgets/PROTOCOL.md): boxes not there yet carry `dg-future`."""
    return page.evaluate(
        "(i) => { const r = document.querySelectorAll('.dg-root')[i];"
        " return r ? r.querySelectorAll('.dg-graph svg g.node:not(.dg-future)').length : -1; }",
        widget,
    )


def svg_texts(page, widget: int = 0) -> list[str]:
    return page.evaluate(
        "(i) => Array.from(document.querySelectorAll('.dg-root')[i]"
        ".querySelectorAll('.dg-graph svg text')).map(t => t.textContent)",
        widget,
    )


SHOWN = (  # the slider's position, the position drawn, and whether the view still replays
    "(i) => { const r = document.querySelectorAll('.dg-root')[i];"
    " return [r.querySelector('.dg-scrub').value,"
    " r.querySelector('.dg-graph').dataset.shownStep, r.classList.contains('dg-replaying')]; }"
)


def settle(page, widget: int = 0) -> None:
    """Until the drawing shows the slider's position (renders are asynchronous) and the view
    has replayed what it missed (view/playback.js NOTE [replay])."""
    wait_for(lambda: (lambda shown: shown[0] == shown[1] and not shown[2])(
        page.evaluate(SHOWN, widget)), timeout=15)


def test_graph_grows_per_line_then_gradients_flow_in_order(lab, page):
    write_notebook(lab.root / "live.ipynb", ["import dyngraph as dg", LIVE_CELL, BIG_CELL])
    open_notebook(page, lab, "live.ipynb")
    run_cell(page, 0)
    wait_idle(page)

    # --- nodes appear while the cell is still running
    run_cell(page, 1)
    seen = []  # (node count drawn, was the cell still running?) each time the count changes
    started = time.monotonic()
    while time.monotonic() - started < 60:
        count = graph_nodes(page)
        if count > 0 and (not seen or count != seen[-1][0]):
            running = cells_running(page)
            seen.append((count, running))
        if count >= 5:
            break
        time.sleep(0.05)
    wait_idle(page)
    counts = [count for count, _ in seen]
    assert counts == sorted(counts) and counts[-1] == 5, seen  # x, w, Mul, Tanh, Sum
    grown_while_running = [count for count, running in seen if running]
    assert len(grown_while_running) >= 2, f"node counts drawn while the cell ran: {seen}"

    # --- the hostile name is text: in the SVG, and nowhere an element
    assert HOSTILE in svg_texts(page)
    assert page.evaluate("document.querySelectorAll('.dg-root img').length") == 0
    assert page.evaluate("window.__pwned === undefined")

    # --- playback: back to the start of backward, then step through the gradients in order
    root = page.locator(".dg-root").first
    position = root.locator(".dg-position")
    wait_for(lambda: "backward finished" in position.inner_text(), timeout=20)
    root.locator("button.dg-start-backward").click()
    wait_for(lambda: "backward from loss (Sum)" in position.inner_text(), timeout=10)
    settle(page)
    def with_gradient() -> set[tuple[str, ...]]:
        """The label lines of every node drawn as holding its gradient at the position: the
        restyle marks it with the class `dg-grad` (`dg-summed` when paths met), not a label line
        (compact labels have none; see widgets/src/view/drawing.js `restyle`)."""
        labels = page.evaluate(
            "Array.from(document.querySelectorAll('.dg-root')[0]"
            ".querySelectorAll('.dg-graph svg g.node.dg-grad, .dg-graph svg g.node.dg-summed'))"
            ".map(g => Array.from(g.querySelectorAll('text')).map(t => t.textContent))"
        )
        return {tuple(lines) for lines in labels}

    shown = with_gradient()  # at the start of backward: at most the loss's own gradient
    arrived = sorted(shown)  # node labels, in the order their gradients appeared
    for _ in range(12):
        if root.locator("button.dg-forward").get_attribute("aria-disabled") == "true":
            break  # the end of the timeline
        before = position.inner_text()
        root.locator("button.dg-forward").click()
        wait_for(lambda before=before: position.inner_text() != before, timeout=10)
        settle(page)
        now = with_gradient()
        arrived.extend(sorted(now - shown))
        shown = now
    # engine order, newest node first: loss = t.sum(), t = h.tanh(), h = x * w (an op's label
    # is its variable's name over the op), then the two leaves
    ops = [lines[:2] for lines in arrived[:3]]
    assert ops == [("loss", "Sum"), ("t", "Tanh"), ("h", "Mul")], arrived
    assert {lines[0] for lines in arrived[3:]} == {"w", HOSTILE}, arrived

    # --- scrub to the start: nothing drawn; keyboard steps forward one node
    page.evaluate(
        "() => { const s = document.querySelector('.dg-root .dg-scrub'); s.value = '0';"
        " s.dispatchEvent(new Event('input', {bubbles: true})); }"
    )
    settle(page)
    assert graph_nodes(page) <= 0
    root.focus()
    page.keyboard.press("ArrowRight")
    settle(page)
    assert graph_nodes(page) == 1

    # --- the inspector shows a clicked node's fields as text
    page.keyboard.press("End")
    settle(page)
    assert graph_nodes(page) == 5
    page.locator(".dg-root").first.locator(".dg-graph svg g.node").first.click()
    inspector = root.locator(".dg-inspector").inner_text()
    assert HOSTILE in inspector or "w" in inspector
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "widget.png"), full_page=True)

    # --- a 300-node update drawn with tweens off: how long it takes. The loop is rolled up into
    # one box; "expand all" lays out every iteration (the budget keeps max_visible boxes).
    run_cell(page, 2)
    wait_idle(page)
    page.locator(".dg-root").nth(1).get_by_role("button", name="expand all", exact=False).click()
    wait_for(lambda: graph_nodes(page, 1) >= 300, timeout=60)
    time.sleep(1.0)
    render_ms = page.evaluate(
        "Number(document.querySelectorAll('.dg-root')[1].querySelector('.dg-graph')"
        ".dataset.renderMs)"
    )
    (ARTIFACTS / "timings.json").write_text(json.dumps({"render_300_nodes_ms": render_ms}))
    print(f"300-node update drawn in {render_ms} ms (tweens off)")
    assert 0 < render_ms < 5_000  # a safety bound; the figure itself is reported


def test_the_tour_runs_every_cell_without_error_and_the_widget_draws(lab, page):
    shutil.copy(ROOT / "notebooks" / "00_tour.ipynb", lab.root / "00_tour.ipynb")
    open_notebook(page, lab, "00_tour.ipynb")
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    time.sleep(1.0)
    wait_idle(page, timeout=180)
    errors = page.evaluate(
        """() => {
            const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
            const found = [];
            for (let i = 0; i < cells.length; i++) {
                const cell = cells.get(i);
                if (cell.type !== 'code') continue;
                const outputs = cell.outputs;
                for (let j = 0; j < outputs.length; j++) {
                    const out = outputs.get(j).toJSON();
                    if (out.output_type === 'error') found.push(out.ename + ': ' + out.evalue);
                }
            }
            return found;
        }"""
    )
    assert errors == []
    drawn = wait_for(
        lambda: page.evaluate("document.querySelectorAll('.dg-root .dg-graph svg g.node').length"),
        timeout=60,
    )
    assert drawn > 0
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "tour.png"), full_page=False)


FLOOD_CELL = """\
with dg.watch() as flood:
    h = dg.tensor([0.5], requires_grad=True, name="start")
    for i in range(50_000):
        h = h * 1.0 if i % 2 else h + 0.0
    h.sum().backward()
print("flood done", flood.recording.dropped_nodes > 0)
"""


def test_a_flood_of_events_keeps_the_page_responsive_and_within_iopub_limits(lab, page):
    """100 000 events (50 000 ops forward, their gradients backward): the recording is bounded,
    updates are coalesced, so no IOPub rate-limit message and the page keeps answering."""
    write_notebook(lab.root / "flood.ipynb", ["import dyngraph as dg", FLOOD_CELL])
    open_notebook(page, lab, "flood.ipynb")
    run_cell(page, 0)
    wait_idle(page)
    started = time.monotonic()
    run_cell(page, 1)
    wait_idle(page, timeout=300)
    print(f"flood cell ran in {time.monotonic() - started:.1f} s")
    outputs = page.locator(".jp-OutputArea").all_inner_texts()
    text = "\n".join(outputs)
    assert "flood done True" in text
    assert "IOPub" not in text and "rate exceeded" not in text
    settle(page)
    assert graph_nodes(page) > 0
    notes = page.locator(".dg-root .dg-notes").inner_text()
    assert "not recorded" in notes.lower()  # what was dropped is said


TWO_VIEWS = [
    "import dyngraph as dg\nfrom dyngraph.jupyter import GraphView\nview = GraphView()\nview",
    "view",
    "view.attach()\nx = dg.tensor([1.0], requires_grad=True)\ny = (x * 3).exp()\nview.detach()",
]


def test_one_widget_displayed_in_two_cells_updates_both(lab, page):
    write_notebook(lab.root / "two.ipynb", TWO_VIEWS)
    open_notebook(page, lab, "two.ipynb")
    run_cells(page, 3)
    wait_for(lambda: page.locator(".dg-root").count() == 2, timeout=30)
    settle(page, 0)
    settle(page, 1)
    # each view replays what it missed at reading pace (view/playback.js NOTE [replay]): both end
    # showing the four nodes (x, the constant 3, Mul, Exp)
    wait_for(lambda: graph_nodes(page, 0) == graph_nodes(page, 1) == 4, timeout=15)


def test_the_widget_draws_in_jupyter_notebook_7(lab, page):
    """The same server also serves Notebook 7 (/notebooks/...): the widget works there too."""
    import importlib.util

    if importlib.util.find_spec("notebook") is None:
        import pytest

        pytest.skip("Jupyter Notebook 7 is not installed (pip install notebook)")
    write_notebook(lab.root / "nb7.ipynb", [
        "import dyngraph as dg",
        "with dg.watch():\n    x = dg.tensor([1.0, 2.0], requires_grad=True)\n"
        "    (x * x).sum().backward()",
    ])
    page.goto(f"{lab.base}/notebooks/nb7.ipynb?token={lab.token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    lab.wait_for_kernel("nb7.ipynb")
    page.locator(".jp-Cell .jp-InputArea-editor").first.click()
    page.keyboard.press("Shift+Enter")
    wait_idle(page)
    page.keyboard.press("Shift+Enter")
    wait_idle(page)
    drawn = wait_for(lambda: graph_nodes(page) == 3 and 3, timeout=60)  # x, Mul, Sum
    assert drawn == 3
    settle(page)
    visible = page.evaluate(
        "() => { const svg = document.querySelector('.dg-root .dg-graph svg');"
        " const r = svg.getBoundingClientRect(); return r.width > 50 && r.height > 50; }"
    )
    assert visible
    time.sleep(0.5)  # the animated transition settles before the picture is taken
    page.screenshot(path=str(ARTIFACTS / "notebook7.png"))
