"""Live means seen, at a person's pace, in a real JupyterLab (conftest.py has the setup).

In a fresh page (the widget's front end not loaded yet), the first run of a five-line watched
cell is over before anything is drawn; the view then replays it, line by line (NOTE [replay]
in widgets/src/view/playback.js). A plain ``loss.backward()`` in the next cell, outside any watch
block, plays in the same view, one gradient at a time (NOTE [a watched graph stays watched] in
dyngraph/spine/events.py). What is measured is what a learner sees: the number of boxes drawn (not
marked as future) and of boxes holding a gradient, sampled every 20 ms in the page.
Screenshots: tests/browser/artifacts/live_first_run.png, live_backward_next_cell.png.
"""

from __future__ import annotations

from .labtools import open_notebook, run_cell, screenshot, wait_for, wait_idle, write_notebook

FORWARD_CELL = """\
import dyngraph as dg
x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
w = dg.tensor([0.5, -1.0], requires_grad=True, name="w")
with dg.watch(title="five lines, watched") as view:
    a = x * w
    b = a.tanh()
    c = b + x
    d = c.sum()
    loss = d * 2
"""

BACKWARD_CELL = "loss.backward()\n"

# Every 20 ms: [ms since sampling began, boxes drawn, boxes with a gradient, position text].
SAMPLE = """() => {
    window.__dgSamples = [];
    const t0 = performance.now();
    window.__dgSampler = setInterval(() => {
        const root = document.querySelector('.dg-root');
        const drawn = root ? root.querySelectorAll('.dg-graph g.node:not(.dg-future)').length : 0;
        const grads = root ? root.querySelectorAll('.dg-graph g.node.dg-grad').length : 0;
        const position = root ? root.querySelector('.dg-position').textContent : '';
        window.__dgSamples.push([performance.now() - t0, drawn, grads, position]);
    }, 20);
}"""
STOP = "() => { clearInterval(window.__dgSampler); return window.__dgSamples; }"


def _states(samples, column):
    """The distinct values of ``column`` in the order they were first seen, each with the time
    it was first seen."""
    states = []
    for sample in samples:
        if not states or sample[column] != states[-1][1]:
            states.append((sample[0], sample[column]))
    return states


def _at_the_end(position: str) -> bool:
    """"7 / 7 · new Mul": the position is the last step (and no longer replaying)."""
    t, _slash, rest = position.partition(" / ")
    return t.isdigit() and rest.split(" ")[0] == t


def test_first_run_grows_line_by_line_and_backward_in_the_next_cell_plays(lab, page):
    write_notebook(lab.root / "live_pace.ipynb", [FORWARD_CELL, BACKWARD_CELL])
    open_notebook(page, lab, "live_pace.ipynb")
    assert page.evaluate("document.querySelectorAll('.dg-root').length") == 0  # a fresh page

    page.evaluate(SAMPLE)
    run_cell(page, 0)
    wait_idle(page)
    root = page.locator(".dg-root").first
    root.wait_for(timeout=60_000)
    wait_for(lambda: _at_the_end(root.locator(".dg-position").inner_text()), timeout=30)
    screenshot(page, "live_first_run.png")
    samples = page.evaluate(STOP)

    drawn = [(t, n) for t, n in _states(samples, 1) if n > 0]
    counts = [n for _t, n in drawn]
    assert counts == sorted(counts), f"the graph only grows: {drawn}"
    assert len(counts) >= 3, f"at least three drawn states on the first run: {drawn}"
    assert drawn[-1][0] - drawn[0][0] >= 500, f"over at least half a second: {drawn}"
    assert any(text.startswith("replaying") for *_rest, text in samples), "it says it replays"

    # the next cell: a plain backward, as a tutorial writes it; no watch block
    page.evaluate(SAMPLE)
    run_cell(page, 1)
    wait_idle(page)
    wait_for(lambda: "backward finished" in root.locator(".dg-position").inner_text(), timeout=30)
    screenshot(page, "live_backward_next_cell.png")
    samples = page.evaluate(STOP)
    grads = [(t, n) for t, n in _states(samples, 2) if n > 0]
    assert len(grads) >= 3, f"the gradients arrive one by one: {grads}"
    assert grads[-1][0] - grads[0][0] >= 600, f"over at least 0.6 s: {grads}"
    assert page.locator(".dg-root").count() == 1, "in the same view, not a new one"
