"""PyTorch code watched in a real JupyterLab (dyngraph.torch; see conftest.py for the setup).

A learner puts ``with dg.watch():`` around their own PyTorch cell: the view draws PyTorch's
autograd graph (``AddmmBackward0``, ``TanhBackward0``, ... with the modules as clusters and the
parameters named) and plays ``loss.backward()`` in PyTorch's order. The test stops the playback
in the middle of backward - some gradients arrived, others not yet - and the screenshot of that
moment is docs/torch_backward.png.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .labtools import open_notebook, run_cell, screenshot, wait_for, wait_idle, write_notebook

pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")

ROOT = Path(__file__).resolve().parents[2]

MODEL_CELL = """\
import torch
import dyngraph as dg
torch.manual_seed(0)

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(3, 8)
        self.fc2 = torch.nn.Linear(8, 1)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        return self.fc2(h)

model = MLP()
x, y = torch.randn(32, 3), torch.randn(32, 1)
"""

WATCH_CELL = """\
with dg.watch(title="PyTorch: an MLP, forward and backward"):
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
"""

# fc1.weight fc1.bias T x Addmm Tanh fc2.weight fc2.bias T Addmm y MseLoss
NODES = 12
GRADS = 10  # every node that requires grad (x and y do not)

DRAWN = """() => {
    const root = document.querySelector('.dg-root');
    if (!root) return null;
    const svg = root.querySelector('.dg-graph svg');
    if (!svg) return null;
    const texts = (g) => Array.from(g.querySelectorAll('text')).map(t => t.textContent);
    return {
        nodes: Array.from(svg.querySelectorAll('g.node')).map(texts),
        with_grad: svg.querySelectorAll('g.node.dg-grad').length,
        clusters: Array.from(svg.querySelectorAll('g.cluster > text')).map(t => t.textContent),
    };
}"""


def test_torch_graph_drawn_mid_backward(lab, page):
    write_notebook(lab.root / "torch_watch.ipynb", [MODEL_CELL, WATCH_CELL])
    open_notebook(page, lab, "torch_watch.ipynb")
    run_cell(page, 0)
    wait_idle(page)
    run_cell(page, 1)
    wait_idle(page)
    root = page.locator(".dg-root").first
    root.wait_for(timeout=30_000)
    root.focus()
    page.keyboard.press("End")  # every gradient has arrived

    def complete():
        drawn = page.evaluate(DRAWN)
        if not drawn or len(drawn["nodes"]) < NODES or drawn["with_grad"] < 4:
            return None
        return drawn

    drawn = wait_for(complete)
    assert drawn, page.evaluate(DRAWN)
    labels = [" ".join(lines) for lines in drawn["nodes"]]
    titles = [lines[0] for lines in drawn["nodes"] if lines]
    for op in ("AddmmBackward0", "TanhBackward0", "MseLossBackward0", "TBackward0"):
        assert op in " ".join(labels), labels
    assert titles.count("weight") == 2 and titles.count("bias") == 2, titles
    assert {"fc1", "fc2"} <= set(drawn["clusters"]), drawn["clusters"]

    # Step back into the middle of backward: some gradients shown, not all of them. Backward
    # has a step per gradient and one per edge (what each node sent each input).
    for _ in range(GRADS + 2):  # back over finished, freed and the last gradients and edges
        page.keyboard.press("ArrowLeft")

    def midway():
        now = page.evaluate(DRAWN)
        return now if now and 0 < now["with_grad"] < drawn["with_grad"] else None

    mid = wait_for(midway, timeout=30)
    assert mid, page.evaluate(DRAWN)
    assert len(mid["nodes"]) == len(drawn["nodes"])  # the whole graph, half its gradients

    page.evaluate("document.querySelector('.dg-root').scrollIntoView({block: 'start'})")
    root.get_by_role("button", name="fit").click()
    time.sleep(1.0)  # let the last transition end before the picture
    screenshot(page, "torch_backward.png", docs=True)
