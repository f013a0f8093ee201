"""The chain rule at each backward step, read from the page in a real JupyterLab (conftest.py
has the setup): stepping through the backward of ``b = a * a`` shows, on the active node,
"upstream × local derivative = contribution" for each edge and, at ``a``, the two contributions
added up ("fan-in"); a layer's broadcast bias names the un-broadcast sum; the same recording
saved with ``to_html`` plays the same arithmetic from a file. The screenshot of the fan-in step
is docs/fanin_step.png (1400 x 1000).

PyTorch too (issue 36): a graph watched in one cell and ``loss.backward()`` run plainly in the
next plays in the same view, with each edge's product, the fan-in sum at ``a``, and "where
backward starts" only at the root (tests/browser/artifacts/chain_rule_torch.png).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .labtools import (
    open_notebook,
    run_cell,
    run_cells,
    screenshot,
    wait_for,
    wait_idle,
    walk_timeline,
    write_notebook,
)

ROOT = Path(__file__).resolve().parents[2]

FAN_IN_CELL = """\
import numpy as np
import dyngraph as dg
a = dg.tensor([2.0, 3.0], requires_grad=True, name="a")
with dg.watch(title="b = a * a: two paths into a") as view:
    b = a * a
    loss = b.sum()
    loss.backward()
view.recording.to_html("fanin.html")
"""

LAYER_CELL = """\
rng = np.random.default_rng(0)
x = dg.tensor(rng.standard_normal((4, 3)), dtype=dg.float32)
W = dg.tensor(rng.standard_normal((3, 2)), dtype=dg.float32, requires_grad=True, name="W")
bias = dg.zeros(2, requires_grad=True, name="bias")
with dg.watch(title="a layer with a broadcast bias"):
    h = (x @ W + bias).tanh()
    h.sum().backward()
"""

READ = """(root) => {
    const panel = root.querySelector('[aria-label="chain rule"]');
    const rows = panel && !panel.hidden
        ? Array.from(panel.querySelectorAll('dt'))
            .map(dt => [dt.textContent, dt.nextElementSibling.textContent])
        : null;
    return {
        position: root.querySelector('.dg-position').textContent,
        title: panel && !panel.hidden ? panel.querySelector('.dg-panel-title').textContent : null,
        rows: rows,
        flow: Array.from(root.querySelectorAll('g.edge.dg-flow title')).map(t => t.textContent),
    };
}"""


def _walk(page, root):
    """What the page shows at every position of the timeline, from the start."""
    return walk_timeline(page, root, READ, limit=200)


def _total(root) -> int:
    """How many steps the view's timeline has."""
    return int(root.evaluate(READ)["position"].split("/")[1].split()[0])


def _fan_in_steps(seen):
    at_mul = next(s for s in seen if s["title"] == "chain rule at b (Mul)" and len(s["rows"]) == 3)
    at_a = next(s for s in seen if s["title"] == "chain rule at a (leaf)")
    return at_mul, at_a


def _check_fan_in(seen):
    assert seen[0]["rows"] is None  # no arithmetic before backward
    at_mul, at_a = _fan_in_steps(seen)
    assert at_mul["rows"] == [
        ["upstream gradient", "[1, 1] (2,)"],
        ["\u2192 a (leaf) (input 0)", "[1, 1] (2,) \u00D7 [2, 3] (2,) (dz/dx = y) = [2, 3] (2,)"],
        ["\u2192 a (leaf) (input 1)", "[1, 1] (2,) \u00D7 [2, 3] (2,) (dz/dy = x) = [2, 3] (2,)"],
    ], at_mul
    assert at_a["rows"][0] == ["fan-in", "[2, 3] (2,) + [2, 3] (2,) = [4, 6] (2,)"], at_a
    assert at_a["rows"][2] == ["upstream gradient", "[4, 6] (2,)"], at_a
    edge_steps = [s for s in seen if "sends to" in s["position"]]
    assert len(edge_steps) == 3  # Sum -> b, and Mul -> a twice
    assert all(s["flow"] for s in edge_steps), edge_steps  # the edge carrying it is highlighted
    assert seen[-1]["rows"] is None  # backward finished: nothing left to show


def test_stepping_through_backward_shows_the_chain_rule_arithmetic(lab, page):
    write_notebook(lab.root / "chain_rule.ipynb", [FAN_IN_CELL, LAYER_CELL])
    open_notebook(page, lab, "chain_rule.ipynb")
    run_cell(page, 0)
    wait_idle(page)
    run_cell(page, 1)
    wait_idle(page)
    wait_for(lambda: page.locator(".dg-root").count() == 2, timeout=60)
    fan_in, layer = page.locator(".dg-root").nth(0), page.locator(".dg-root").nth(1)

    seen = _walk(page, fan_in)
    _check_fan_in(seen)

    layer_seen = _walk(page, layer)
    at_add = next(s for s in layer_seen if s["title"] and s["title"].startswith("chain rule at Add")
                  and len(s["rows"]) == 3)
    label, text = at_add["rows"][2]
    assert label == "\u2192 bias (leaf) (input 1)", at_add
    assert text.endswith("(summed over the broadcast: (4, 2) \u2192 (2,))"), text
    assert "\u00D7 1 (dz/dy = 1) = " in text, text

    # the fan-in step, for the picture
    fan_in.focus()
    page.keyboard.press("Home")
    target = next(i for i, s in enumerate(seen) if s["title"] == "chain rule at a (leaf)")
    for _ in range(target):
        page.keyboard.press("ArrowRight")
    wait_for(lambda: (fan_in.evaluate(READ)["title"] == "chain rule at a (leaf)"), timeout=10)
    page.evaluate("document.querySelector('.dg-root').scrollIntoView({block: 'start'})")
    fan_in.get_by_role("button", name="fit").click()
    time.sleep(1.0)  # let the last transition end before the picture
    screenshot(page, "fanin_step.png", docs=True)

    # the same recording as a standalone page, opened from a file
    html = lab.root / "fanin.html"
    assert html.exists()
    page.goto(html.as_uri())
    standalone = page.locator(".dg-root").first
    standalone.wait_for(timeout=30_000)
    _check_fan_in(_walk(page, standalone))


TORCH_FORWARD_CELL = """\
import torch
import dyngraph as dg
import dyngraph.torch as dgt
a = dgt.name(torch.tensor([2.0, 3.0], requires_grad=True), "a")
b = dgt.name(torch.tensor([4.0, 5.0], requires_grad=True), "b")
with dg.watch(title="PyTorch: c = a * b, d = c + a") as view:
    c = a * b
    d = c + a
    loss = d.sum()
"""

TORCH_BACKWARD_CELL = """\
loss.backward()  # a later cell, outside the watch block
print(a.grad.tolist(), b.grad.tolist())
"""


def test_pytorch_backward_in_a_later_cell_shows_each_edge_and_the_fan_in(lab, page):
    pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")
    write_notebook(lab.root / "chain_rule_torch.ipynb", [TORCH_FORWARD_CELL, TORCH_BACKWARD_CELL])
    open_notebook(page, lab, "chain_rule_torch.ipynb")
    run_cell(page, 0)
    wait_idle(page)
    run_cell(page, 1)
    wait_idle(page)
    view = page.locator(".dg-root").first
    # 5 nodes; then started, 5 gradients, 5 edges, freed, finished: the backward reached the view
    wait_for(lambda: _total(view) == 18, timeout=60)

    seen = _walk(page, view)
    titles = [s["title"] for s in seen if s["title"]]
    assert "chain rule at loss (SumBackward0)" in titles, titles
    at_mul = next(s for s in seen if s["title"] == "chain rule at c (MulBackward0)"
                  and len(s["rows"]) == 3)
    assert at_mul["rows"] == [
        ["upstream gradient", "[1, 1] (2,)"],
        ["\u2192 a (leaf) (input 0)", "[1, 1] (2,) \u00D7 [4, 5] (2,) (dz/dx = y) = [4, 5] (2,)"],
        ["\u2192 b (leaf) (input 1)", "[1, 1] (2,) \u00D7 [2, 3] (2,) (dz/dy = x) = [2, 3] (2,)"],
    ], at_mul
    at_a = next(s for s in seen if s["title"] == "chain rule at a (leaf)")
    assert at_a["rows"][0] == ["fan-in", "[1, 1] (2,) + [4, 5] (2,) = [5, 6] (2,)"], at_a
    assert at_a["rows"][1] == ["from", "d (AddBackward0) + c (MulBackward0)"], at_a
    starts = {s["title"] for s in seen
              if s["rows"] and any("where backward starts" in text for _, text in s["rows"])}
    assert starts == {"chain rule at loss (SumBackward0)"}, starts  # the root alone
    assert not any(s["rows"] and any(label == "per edge" for label, _ in s["rows"]) for s in seen)

    # the fan-in step, for the picture
    view.focus()
    page.keyboard.press("Home")
    target = next(i for i, s in enumerate(seen) if s["title"] == "chain rule at a (leaf)")
    for _ in range(target):
        page.keyboard.press("ArrowRight")
    wait_for(lambda: view.evaluate(READ)["title"] == "chain rule at a (leaf)", timeout=10)
    page.evaluate("document.querySelector('.dg-root').scrollIntoView({block: 'start'})")
    view.get_by_role("button", name="fit").click()
    time.sleep(1.0)  # let the last transition end before the picture
    screenshot(page, "chain_rule_torch.png")


SPLIT_FORWARD_CELL = """\
import dyngraph as dg
x = dg.tensor([1.0, 2.0])  # data: no gradient, so the graph does not keep it
w = dg.tensor([3.0, 4.0], requires_grad=True, name="w")
loss = (x * w).sum()
"""

SPLIT_BACKWARD_CELL = """\
with dg.watch(title="x * w, backward in a cell of its own"):
    loss.backward()
"""


def test_a_backward_watched_after_an_unwatched_forward_keeps_each_input_in_its_place(lab, page):
    """Issue 39 (NOTE [inputs the graph does not keep] in dyngraph/function.py): the view that
    starts at backward() draws the data x as a constant of unknown value, Mul's input 0, so w's
    row is input 1 with dz/dy = x; it had shown w as input 0 with w's own numbers for x."""
    write_notebook(lab.root / "chain_rule_split.ipynb", [SPLIT_FORWARD_CELL, SPLIT_BACKWARD_CELL])
    open_notebook(page, lab, "chain_rule_split.ipynb")
    run_cells(page, 2)
    view = page.locator(".dg-root").first
    view.wait_for(timeout=30_000)
    seen = _walk(page, view)
    at_mul = next(s for s in seen if s["title"] == "chain rule at Mul" and len(s["rows"]) == 2)
    assert at_mul["rows"] == [
        ["upstream gradient", "[1, 1] (2,)"],
        ["\u2192 w (leaf) (input 1)", "[1, 1] (2,) \u00D7 (dz/dy = x) = [1, 2] (2,)"],
    ], at_mul
