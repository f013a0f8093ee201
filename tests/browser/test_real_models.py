"""Real models in a real JupyterLab (issue 40): a ResNet-18, a 4-block nanoGPT and a recursive
TreeNet (tests/real_models.py), each watched forward and backward in PyTorch.

For each, the first view is a map of the model (widgets/src/levels.js NOTE [map]), readable at
fit (labels, and the shapes on the edges, at 9 px or more): ResNet-18's stem, four stages,
pooling and classifier as boxes; the GPT's four Blocks; the TreeNet's tree of calls with
their depths. A box opens in place with the busy sign, within a bound generous for a loaded
CI machine (3 s; the figures are printed: under 1 s on a quiet one), and backward shows on the
boxes: a box whose module's output got its gradient is styled with it.

Screenshots at 1400 x 1000 go to tests/browser/artifacts/real_<model>_*.png.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .labtools import (
    WIDGET_STATE,
    open_notebook,
    run_cell,
    screenshot,
    wait_for,
    wait_idle,
    write_notebook,
)
from .measure import FIT

pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")

TESTS = Path(__file__).resolve().parents[1]

SETUP = f"""\
import sys
sys.path.insert(0, {str(TESTS)!r})
import torch
import dyngraph as dg
import real_models
"""

# name -> (title, the box to open, texts the first view must show)
MODELS = {
    "resnet18": ("ResNet-18", "layer1",
                 ["conv1", "bn1", "layer1", "layer2", "layer3", "layer4", "avgpool", "fc"]),
    "gpt": ("nanoGPT, 4 blocks", "h.1 \u00b7 Block",
            ["wte", "wpe", "h.0 \u00b7 Block", "h.1 \u00b7 Block", "h.2 \u00b7 Block",
             "h.3 \u00b7 Block", "ln_f", "lm_head"]),
    "treenet": ("TreeNet over a parse tree", "call 2",
                ["call 1", "call 2", "call 2.2.2", "depth 3", "recursion: 10 calls, 4 deep"]),
}


def model_cell(name: str, title: str) -> str:
    return f"""\
model, inputs, loss_fn = real_models.CASES[{name!r}]()
with dg.watch(title={title!r}):
    loss = loss_fn(model(*inputs))
    loss.backward()
"""


STATE = WIDGET_STATE  # (labtools: the first widget's drawing, notes and timeline)

# The smallest shape written on an edge, on screen (px), and how many there are.
EDGE_SHAPES = """() => {
    const texts = Array.from(document.querySelectorAll('.dg-root .dg-graph text.dg-edge-shape'));
    let smallest = Infinity;
    for (const t of texts) {
        const m = t.getScreenCTM();
        smallest = Math.min(smallest, parseFloat(getComputedStyle(t).fontSize)
            * Math.hypot(m.a, m.b));
    }
    return {count: texts.length, smallest: Number.isFinite(smallest) ? smallest : 0,
            texts: texts.slice(0, 6).map((t) => t.textContent)};
}"""

# Click the box whose first line starts with `title` and time it in the page: until the drawing
# first changes and until it is settled (the slider's position drawn, quiet for 300 ms); when
# the busy sign showed; what the inspector said; the new drawing's cluster titles.
OPEN_BOX = """async (title) => {
    const root = document.querySelector('.dg-root');
    const pane = root.querySelector('.dg-graph');
    const before = pane.querySelector('svg');
    let busy = -1, busyText = '', changed = -1, last = 0;
    const t0 = performance.now();
    const mo = new MutationObserver(() => {
        const now = performance.now() - t0;
        last = now;
        const sign = root.querySelector('[role=status].dg-busy');
        if (busy < 0 && sign && !sign.hidden) { busy = now; busyText = sign.textContent; }
        if (changed < 0 && pane.querySelector('svg') !== before) changed = now;
    });
    mo.observe(root, {subtree: true, childList: true, attributes: true, characterData: true});
    const box = Array.from(pane.querySelectorAll('g.node')).find((g) => {
        const t = g.querySelector('text');
        return t && (t.textContent === title || t.textContent.startsWith(title + ' \\u00b7 '));
    });
    if (!box) return {missing: title};
    box.dispatchEvent(new MouseEvent('click', {bubbles: true}));
    const scrub = root.querySelector('.dg-scrub');
    while (performance.now() - t0 < 20000) {
        await new Promise((r) => setTimeout(r, 25));
        const now = performance.now() - t0;
        if (changed >= 0 && pane.dataset.shownStep === scrub.value && now - last >= 300) break;
    }
    mo.disconnect();
    const rows = {};
    for (const dt of root.querySelectorAll('.dg-inspector dt')) {
        rows[dt.textContent] = dt.nextElementSibling.textContent;
    }
    const clusters = Array.from(pane.querySelectorAll('g.cluster > text'))
        .map((t) => t.textContent);
    return {changed, settled: last, busy, busyText, rows, clusters,
            renderMs: Number(pane.dataset.renderMs || 0),
            buttons: Array.from(root.querySelectorAll('.dg-groups button'))
                .map((b) => b.textContent)};
}"""

# The group boxes styled with a gradient, by their first line.
GRAD_BOXES = """() => Array.from(document.querySelectorAll('.dg-root .dg-graph g.node.dg-grad'))
    .map((g) => g.querySelector('title').textContent.match(/^[sr]/)
        ? g.querySelector('text').textContent : null).filter(Boolean)"""


def settled_fit(page):
    """What FIT reads once the picture has stopped moving (two readings 0.2 s apart agree), or
    None while a layout's transition is still running: a loaded machine can end the replay
    with one more layout, whose zoom to fit is then still on its way (a loaded make test once
    read scale 0.12 there, mid-transition)."""
    first = page.evaluate(FIT, 0)
    time.sleep(0.2)
    second = page.evaluate(FIT, 0)
    return second if second == first else None


@pytest.mark.parametrize("name", list(MODELS))
def test_a_real_model_opens_as_a_readable_map_whose_boxes_open_in_place(lab, page, name):
    title, box, expected = MODELS[name]
    write_notebook(lab.root / f"real_{name}.ipynb", [SETUP, model_cell(name, title)])
    open_notebook(page, lab, f"real_{name}.ipynb")
    run_cell(page, 0)
    wait_idle(page, timeout=120)

    # --- the first picture: from the cell's end to the map drawn (polled every 50 ms)
    run_cell(page, 1)
    ended = drawn = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        state = page.evaluate(STATE)
        if ended is None and not state["running"]:
            ended = state["now"]
        shown = " | ".join(state["texts"])
        if ended is not None and all(text in shown for text in expected):
            drawn = state
            break
        time.sleep(0.05)
    assert drawn is not None, f"the map of {name} was not drawn: {state['texts'][:20]}"
    first = max(drawn["now"] - ended, 0)
    print(f"{name}: map drawn {first:.0f} ms after the cell ended "
          f"({drawn['renders']} layouts, the last {drawn['renderMs']} ms)")
    assert first <= 6000, first  # issue 40: ~2 s on a quiet machine; CI is loaded

    # --- readable at fit, backward seen on the boxes (at the end of the replay)
    wait_for(lambda: page.evaluate(STATE)["atEnd"], timeout=60)
    time.sleep(0.5)
    page.evaluate("document.querySelector('.dg-root').scrollIntoView({block: 'start'})")
    fitted = wait_for(lambda: settled_fit(page), timeout=15)
    shapes = page.evaluate(EDGE_SHAPES)
    print(f"{name}: fit {fitted}, edge shapes {shapes}")
    assert round(fitted["smallest"], 2) >= 9, fitted
    assert fitted["share"] >= 0.95, fitted  # the whole map in view
    assert shapes["count"] >= 3 and round(shapes["smallest"], 2) >= 9, shapes
    graded = page.evaluate(GRAD_BOXES)
    print(f"{name}: boxes with their gradient: {graded}")
    assert len(graded) >= 2, graded
    screenshot(page, f"real_{name}_map.png")

    # --- a box opens in place, with the busy sign; the inspector shows its module
    opened = page.evaluate(OPEN_BOX, box)
    print(f"{name}: opened {box!r}: {opened}")
    assert "missing" not in opened, opened
    assert opened["busy"] >= 0 and opened["busyText"] == "laying out\u2026", opened
    assert 0 <= opened["changed"] <= opened["settled"] <= 3000, opened  # issue 40: <= 1 s
    assert opened["rows"].get("module") == box, opened["rows"]
    assert opened["rows"].get("gradient out", "").startswith("["), opened["rows"]
    assert any(text.startswith(box.split(" \u00b7 ")[0]) or box in text
               for text in opened["clusters"]), opened["clusters"]
    assert f"roll up: {box}" in opened["buttons"], opened["buttons"]
    fitted = wait_for(lambda: settled_fit(page), timeout=15)
    print(f"{name}: opened, fit {fitted}")
    assert round(fitted["smallest"], 2) >= 9, fitted
    screenshot(page, f"real_{name}_opened.png")
