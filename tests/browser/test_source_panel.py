"""The source panel tells the truth, in a real JupyterLab (conftest.py has the setup; issue 36
part 3, issue 40).

A learner's model lives in ``models.py`` beside the notebook. Its forward pass is watched in one
cell and ``loss.backward()`` is called, plainly, in the next. Walking the timeline step by step,
the panel shows, for every line it numbers, that line's text as it is in the file; each stretch
of lines it did not keep is one "…" row; during backward it highlights the ``backward()`` line
of the later cell and its title says so. Screenshots (1400 x 1000):
artifacts/source_panel_forward.png and artifacts/source_panel_backward.png.
"""

from __future__ import annotations

import time

from .labtools import (
    open_notebook,
    run_cell,
    screenshot,
    wait_for,
    wait_idle,
    walk_timeline,
    write_notebook,
)

MODELS = '''\
"""A small model for the lesson: two layers, and the loss it is trained with."""

import dyngraph as dg
import dyngraph.nn as nn


class TwoLayer(nn.Module):
    """x -> Linear -> tanh -> Linear."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        h = self.hidden(x).tanh()
        # The hidden layer squashes each feature into (-1, 1):
        # tanh keeps the sign and saturates for large inputs,
        # which is why the weights start small.
        #
        # (more notes the learner keeps beside the code)
        # (and more)
        return self.out(h)


def mse(pred, target):
    """The mean squared error."""
    return ((pred - target) ** 2).mean()
'''

SETUP_CELL = """\
import dyngraph as dg
from models import TwoLayer, mse
dg.manual_seed(0)
model = TwoLayer()
x = dg.randn(8, 3)
y = dg.randn(8, 1)
"""

FORWARD_CELL = """\
with dg.watch(title="a model from models.py"):
    loss = mse(model(x), y)
"""

BACKWARD_CELL = """\
# the next cell, as every tutorial writes it
loss.backward()
"""

READ = """(root) => {
    const panel = root.querySelector('[aria-label="source"]');
    const rows = Array.from(panel.querySelectorAll('li')).map(li => ({
        line: li.getAttribute('data-line'),
        gap: li.classList.contains('dg-gap'),
        text: li.classList.contains('dg-gap') ? li.textContent.trim()
            : li.querySelector('code').textContent,
        current: li.classList.contains('dg-current'),
    }));
    return {
        position: root.querySelector('.dg-position').textContent,
        title: panel.querySelector('.dg-panel-title').textContent,
        rows: rows,
    };
}"""


def _walk(page, root):
    """What the page shows at every position of the timeline, from the start."""
    return walk_timeline(page, root, READ, limit=400)


def _line(marker: str) -> int:
    return next(i for i, text in enumerate(MODELS.splitlines(), 1) if marker in text)


def test_the_panel_shows_models_py_truly_and_the_backward_line_during_backward(lab, page):
    (lab.root / "models.py").write_text(MODELS, encoding="utf-8")
    write_notebook(lab.root / "source_panel.ipynb", [SETUP_CELL, FORWARD_CELL, BACKWARD_CELL])
    open_notebook(page, lab, "source_panel.ipynb")
    for index in range(3):
        run_cell(page, index)
        wait_idle(page)
    root = page.locator(".dg-root").first
    root.wait_for(timeout=30_000)
    # the later cell's backward plays in the view of the forward: live, it follows the end
    wait_for(lambda: "backward finished" in root.evaluate(READ)["position"], timeout=60)

    seen = _walk(page, root)
    disk = MODELS.splitlines()
    model_lines = {_line("h = self.hidden(x)"), _line("return self.out(h)"),
                   _line("return ((pred - target)")}
    shown_model_lines: set[int] = set()
    for now in seen:
        if "models.py" not in now["title"]:
            continue
        numbered = [row for row in now["rows"] if not row["gap"]]
        for row in numbered:  # every line numbered shows its text, as it is in the file
            n = int(row["line"])
            assert row["text"].rstrip() == disk[n - 1].rstrip(), (n, row, now["position"])
            shown_model_lines.add(n)
        gaps = [row for row in now["rows"] if row["gap"]]
        assert gaps and all(row["text"] == "\u2026" for row in gaps), now
        # a gap row stands for a whole stretch: never two in a row
        assert all(not (a["gap"] and b["gap"]) for a, b in zip(now["rows"], now["rows"][1:]))
        current = [row for row in now["rows"] if row["current"]]
        assert len(current) == 1 and int(current[0]["line"]) in model_lines, now
    assert model_lines <= shown_model_lines
    # the comment lines between the two layers were not kept: one "…" row stands for them
    final = next(now for now in reversed(seen) if "models.py" in now["title"])
    numbers = [row["line"] or "\u2026" for row in final["rows"]]
    before, after = _line("tanh keeps the sign"), _line("(more notes")
    assert after - before > 2  # lines between them that were not kept
    at = numbers.index(str(before))
    assert numbers[0] == "\u2026" and numbers[at:at + 3] == [str(before), "\u2026", str(after)]

    during = [now for now in seen if now["title"].endswith("\u00B7 backward")]
    assert during, [now["title"] for now in seen]
    for now in during:  # the backward() line of the later cell, highlighted
        assert now["title"] == "source \u00B7 cell [3] \u00B7 backward", now["title"]
        current = [row for row in now["rows"] if row["current"]]
        assert len(current) == 1 and current[0]["text"] == "loss.backward()", now
        assert current[0]["line"] == "2"
    first = seen.index(during[0])
    assert "backward from" in seen[first]["position"]  # from its backward_started step
    last = seen.index(during[-1])
    assert "backward finished" in seen[last + 1]["position"]  # until the pass ends
    assert not seen[last + 1]["title"].endswith("backward")

    # the pictures a learner sees: the end of forward, and a step of backward
    page.evaluate("document.querySelector('.dg-root').scrollIntoView({block: 'start'})")
    root.focus()
    root.get_by_role("button", name="jump to the end of the forward pass").click()
    time.sleep(1.0)
    screenshot(page, "source_panel_forward.png")
    root.get_by_role("button", name="jump to the start of the backward pass").click()
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    time.sleep(1.0)
    assert root.evaluate(READ)["title"].endswith("backward")
    screenshot(page, "source_panel_backward.png")

