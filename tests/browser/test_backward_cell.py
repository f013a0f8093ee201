"""Backward in a cell of its own, in a real JupyterLab (see conftest.py for the setup).

What a learner does most often: build the loss in one cell, call ``loss.backward()`` in the next
under ``dg.watch()``. The view starts only then, yet shows the whole graph behind the loss and
the gradients flowing along its edges. The screenshot is docs/backward_cell.png.
"""

from __future__ import annotations

import time
from pathlib import Path

from dyngraph.dot import GRAD_SCALE

from .labtools import open_notebook, run_cell, screenshot, wait_for, wait_idle, write_notebook

ROOT = Path(__file__).resolve().parents[2]

FORWARD_CELL = """\
import numpy as np
import dyngraph as dg
rng = np.random.default_rng(0)
x = dg.tensor(rng.standard_normal((32, 3)), dtype=dg.float32)   # a batch of 32
y = dg.tensor(rng.standard_normal((32, 1)), dtype=dg.float32)
W1 = dg.tensor(0.5 * rng.standard_normal((3, 8)), dtype=dg.float32, requires_grad=True, name="W1")
b1 = dg.zeros(8, requires_grad=True, name="b1")
W2 = dg.tensor(0.5 * rng.standard_normal((8, 1)), dtype=dg.float32, requires_grad=True, name="W2")
b2 = dg.zeros(1, requires_grad=True, name="b2")
h = (x @ W1 + b1).tanh()
loss = ((h @ W2 + b2 - y) ** 2).mean()
"""

BACKWARD_CELL = """\
with dg.watch(title="backward in a cell of its own"):
    loss.backward()
"""

# W1 b1 W2 b2, MatMul Add Tanh MatMul Add Sub Pow Mean; and x, y and the exponent 2, which the
# graph does not keep: constants of unknown value, each at its argument's place (NOTE [inputs
# the graph does not keep] in dyngraph/function.py)
NODES = 15
EDGES = 14
GRAD_EDGES = 11  # every edge but those from the three constants carries a gradient

DRAWN = """() => {
    const root = document.querySelector('.dg-root');
    if (!root) return null;
    const svg = root.querySelector('.dg-graph svg');
    if (!svg) return null;
    const texts = (g) => Array.from(g.querySelectorAll('text')).map(t => t.textContent);
    const strokes = Array.from(svg.querySelectorAll('g.edge path'))
        .map(p => getComputedStyle(p).stroke);
    return {
        nodes: Array.from(svg.querySelectorAll('g.node')).map(texts),
        with_grad: svg.querySelectorAll('g.node.dg-grad').length,
        strokes: strokes,
    };
}"""


def test_backward_in_its_own_cell_draws_the_graph_and_the_gradients(lab, page):
    write_notebook(lab.root / "backward_cell.ipynb", [FORWARD_CELL, BACKWARD_CELL])
    open_notebook(page, lab, "backward_cell.ipynb")
    run_cell(page, 0)
    wait_idle(page)
    assert page.evaluate("document.querySelectorAll('.dg-root').length") == 0  # nobody watched

    run_cell(page, 1)
    wait_idle(page)
    root = page.locator(".dg-root").first
    root.wait_for(timeout=30_000)
    root.focus()
    page.keyboard.press("End")  # the end of the timeline: every gradient has flowed
    grad_colours = {  # the widget styles an edge that carried a gradient: rgb(...) as computed
        "rgb({}, {}, {})".format(*(int(c[i:i + 2], 16) for i in (1, 3, 5))) for c in GRAD_SCALE
    }

    def finished():
        drawn = page.evaluate(DRAWN)
        if not drawn or len(drawn["nodes"]) < NODES:
            return None
        coloured = [s for s in drawn["strokes"] if s in grad_colours]
        return drawn if len(coloured) == GRAD_EDGES else None

    drawn = wait_for(finished)
    assert drawn, page.evaluate(DRAWN)
    assert len(drawn["nodes"]) == NODES
    labels = [lines[0] for lines in drawn["nodes"] if lines]
    for name in ("W1", "b1", "W2", "b2", "MatMul", "Tanh", "Pow", "Mean"):
        assert name in labels, labels
    assert labels.count("const") == 3, labels
    # every edge carried a gradient (coloured above); the nodes still holding theirs are marked
    # (the freed ones are drawn as freed): at least the four parameters
    assert drawn["with_grad"] >= 4, drawn["with_grad"]
    assert len(drawn["strokes"]) == EDGES

    page.evaluate("document.querySelector('.dg-root').scrollIntoView({block: 'start'})")
    root.get_by_role("button", name="fit").click()  # the whole graph in the picture
    time.sleep(1.0)  # let the last transition end before the picture
    screenshot(page, "backward_cell.png", docs=True)
