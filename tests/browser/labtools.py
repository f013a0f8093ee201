"""Helpers for the JupyterLab browser tests: notebooks, running cells, waiting."""

from __future__ import annotations

import os
import time
from pathlib import Path

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
DOCS = Path(__file__).resolve().parents[2] / "docs"


def screenshot(page, name: str, docs: bool = False) -> Path:
    """Save a screenshot in tests/browser/artifacts/. The pictures the README shows (``docs``)
    are copied into docs/ only with DYNGRAPH_UPDATE_DOCS=1, so a test run leaves the tree clean."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path))
    if docs and os.environ.get("DYNGRAPH_UPDATE_DOCS"):
        DOCS.mkdir(exist_ok=True)
        (DOCS / name).write_bytes(path.read_bytes())
    return path


def write_notebook(path: Path, cells: list[str]) -> None:
    """A notebook of code cells, no outputs."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    nbformat.write(notebook, str(path))


def run_cell(page, index: int) -> None:
    """Run cell ``index`` through JupyterLab's command API, without waiting for it to finish
    (awaiting would hide the live updates a test wants to watch)."""
    page.evaluate(
        """(i) => {
            const panel = window.jupyterapp.shell.currentWidget;
            panel.content.activeCellIndex = i;
            window.jupyterapp.commands.execute('notebook:run-cell');
        }""",
        index,
    )


def run_cells(page, count: int, timeout: float = 120) -> None:
    """Run the open notebook's first ``count`` cells in order, each to its end (as a learner
    pressing Shift+Enter and waiting)."""
    for index in range(count):
        run_cell(page, index)
        wait_idle(page, timeout=timeout)


RUNNING = (
    "Array.from(document.querySelectorAll('.jp-InputPrompt'))"
    ".some(p => p.textContent.includes('*'))"
)


def cells_running(page) -> bool:
    """Is a cell of the open notebook running (its prompt shows [*])? (The server's REST view
    of the kernel's state was seen reporting "idle" while a cell still ran.)"""
    return page.evaluate(RUNNING)


def wait_idle(page, timeout: float = 120) -> None:
    """Until no cell of the open notebook is running."""
    deadline = time.monotonic() + timeout
    time.sleep(0.3)
    while time.monotonic() < deadline:
        if not cells_running(page):
            return
        time.sleep(0.1)
    raise TimeoutError("a cell is still running")


def open_notebook(page, lab, name: str) -> None:
    page.goto(lab.url(name))
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
    lab.wait_for_kernel(name)


def wait_for(predicate, timeout: float = 60, interval: float = 0.1):
    """Poll ``predicate()`` until it returns something true, and return that; fail after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"condition not reached in {timeout} s")


def walk_timeline(page, root, read: str, limit: int = 400) -> list:
    """What ``read`` (a function of the widget's root, evaluated in the page) returns at every
    position of the timeline, from the start to the end, stepping with the arrow key. ``read``
    must return an object with the position text under "position"."""
    root.focus()
    page.keyboard.press("Home")
    seen = []
    for _ in range(limit):
        now = root.evaluate(read)
        seen.append(now)
        total = now["position"].split("/")[1].split()[0]
        if now["position"].startswith(f"{total} /"):
            return seen
        page.keyboard.press("ArrowRight")
        before = now["position"]
        wait_for(lambda before=before: root.evaluate(read)["position"] != before, timeout=10)
    raise AssertionError("the timeline did not end")


# The state of the page's first widget, for tests to wait on and read: the texts of its drawing's
# boxes (the first line of each group box), the notes under it, how many nodes are drawn, how
# many layouts it made and how long the last took, whether it is settled at the end of its
# timeline, the groups bar's buttons, whether a cell is running, and the page's clock.
WIDGET_STATE = """() => {
    const root = document.querySelector('.dg-root');
    const pane = root && root.querySelector('.dg-graph');
    const svg = pane && pane.querySelector('svg');
    const scrub = root && root.querySelector('.dg-scrub');
    const texts = svg ? Array.from(svg.querySelectorAll('g.node text, g.cluster text'))
        .map((t) => t.textContent) : [];
    const notes = root ? Array.from(root.querySelectorAll('.dg-notes > div'))
        .map((d) => d.textContent) : [];
    return {now: performance.now(), texts, notes,
            nodes: svg ? svg.querySelectorAll('g.node').length : 0,
            renders: Number(pane ? pane.dataset.renders || 0 : 0),
            renderMs: Number(pane ? pane.dataset.renderMs || 0 : 0),
            atEnd: !!scrub && scrub.value === scrub.max && Number(scrub.max) > 0
                && pane.dataset.shownStep === scrub.value,
            buttons: root ? Array.from(root.querySelectorAll('.dg-groups button'))
                .map((b) => b.textContent) : [],
            running: Array.from(document.querySelectorAll('.jp-InputPrompt'))
                .some((p) => p.textContent.includes('*'))};
}"""
