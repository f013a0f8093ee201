"""A training loop watched in a real JupyterLab: the training panel (widgets/src/training.js NOTE
[the training chart]) shows the loss and gradient norm of each of ten PyTorch training steps of a
small MLP, the newest as the number the learner's own print shows, and names a step under the
pointer. Screenshots (tests/browser/artifacts/): training.png (1400 x 1000), training_dark.png
(JupyterLab Dark), training_narrow.png (an 800 px wide page).
"""

from __future__ import annotations

import re
import time

import pytest

from .labtools import open_notebook, run_cell, screenshot, wait_for, wait_idle, write_notebook

pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")

SETUP_CELL = """\
import torch
import dyngraph as dg
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.2)
x = torch.randn(64, 3)
y = x[:, :1] * 2 - x[:, 1:2]
losses = []
"""

TRAIN_CELL = """\
with dg.watch(title="training an MLP"):
    for step in range(10):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
"""

PRINT_CELL = """\
print(f"final loss {losses[-1]:.4g}, first {losses[0]:.4g}")
"""

PANEL = """(root) => {
    const panel = root.querySelector('section[aria-label="training"]');
    if (!panel || panel.hidden) return null;
    const box = panel.getBoundingClientRect();
    return {
        title: panel.querySelector('.dg-panel-title').textContent,
        latest: Array.from(panel.querySelectorAll('.dg-train-latest')).map(e => e.textContent),
        readout: panel.querySelector('.dg-train-readout').textContent,
        lines: Array.from(panel.querySelectorAll('path.dg-train-line'))
            .map(p => (p.getAttribute('d') || '').split(/[ML]/).filter(Boolean).length),
        width: box.width, height: box.height,
        overflow: root.scrollWidth - root.clientWidth,
    };
}"""


def test_ten_torch_steps_in_the_training_panel(lab, page):
    write_notebook(lab.root / "training.ipynb", [SETUP_CELL, TRAIN_CELL, PRINT_CELL])
    open_notebook(page, lab, "training.ipynb")
    for index in range(3):
        run_cell(page, index)
        wait_idle(page)
    printed = wait_for(lambda: page.evaluate(
        "() => Array.from(document.querySelectorAll('.jp-OutputArea-output'))"
        ".map(o => o.textContent).find(t => t.includes('final loss'))"), timeout=30)
    final_loss, first_loss = re.search(r"final loss (\S+), first (\S+)", printed).groups()

    root = page.locator(".dg-root").first
    root.wait_for(timeout=30_000)
    root.focus()
    page.keyboard.press("End")  # the replay skipped: the graph at the end of the run
    panel = wait_for(lambda: root.evaluate(PANEL), timeout=30)
    print("training panel", panel)
    assert panel["title"] == "training \u00b7 10 steps", panel
    assert panel["latest"][0] == final_loss, (panel, printed)  # the number torch printed
    assert panel["lines"] == [10, 10], panel  # a point per step, in each chart
    assert panel["readout"].startswith("step 10 \u00b7 loss " + final_loss), panel
    assert panel["overflow"] <= 1, panel
    screenshot(page, "training.png")

    # the pointer at the chart's left edge names step 1, with the loss torch printed first
    chart = root.locator("svg.dg-train-chart").first
    box = chart.bounding_box()
    page.mouse.move(box["x"] + 1, box["y"] + box["height"] / 2)
    readout = root.locator(".dg-train-readout")
    wait_for(lambda: readout.text_content().startswith("step 1 "), timeout=5)
    assert readout.text_content().startswith(f"step 1 \u00b7 loss {first_loss} \u00b7 grad norm ")
    page.mouse.move(box["x"] + box["width"] * 4 / 9, box["y"] + 5)
    wait_for(lambda: readout.text_content().startswith("step 5 "), timeout=5)
    page.mouse.move(0, 0)

    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme',"
                  " {theme: 'JupyterLab Dark'})")
    time.sleep(1.5)
    colours = root.evaluate("""(root) => {
        const line = root.querySelector('path.dg-train-line');
        const latest = root.querySelector('.dg-train-latest');
        return {line: getComputedStyle(line).stroke, text: getComputedStyle(latest).color};
    }""")
    print("dark", colours)
    # the loss line and the numbers follow the theme's light text on the dark page
    for colour in colours.values():
        r, g, b = (int(v) for v in re.findall(r"\d+", colour)[:3])
        assert r + g + b > 3 * 128, colours
    screenshot(page, "training_dark.png")
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme',"
                  " {theme: 'JupyterLab Light'})")

    page.set_viewport_size({"width": 800, "height": 1000})
    time.sleep(1.0)
    narrow = root.evaluate(PANEL)
    print("narrow", narrow)
    assert narrow["overflow"] <= 1 and narrow["width"] >= 200, narrow
    screenshot(page, "training_narrow.png")
