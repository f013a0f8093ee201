"""Training, watched, in a real JupyterLab (issue 40, item 4): 20 training steps of a small
nanoGPT (tests/real_models.py, two blocks) under ``dg.watch()``, as a learner writes them.

The view keeps the newest backward passes within its budget (jupyter/kept.py NOTE [the newest
passes]) and says how many it dropped; the steps it kept roll up into one loop labelled with
the line of the ``for`` (dot.py NOTE [loops of any length], events.py NOTE [loop lines]).

Screenshots at 1400 x 1000 go to tests/browser/artifacts/training_*.png.
"""

from __future__ import annotations

import re
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

TRAINING = """\
model, inputs, loss_fn = real_models.gpt_case(n_layer=2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
with dg.watch(title="nanoGPT, 20 training steps"):
    for step in range(20):
        loss = loss_fn(model(*inputs))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
FOR_LINE = 4  # the line of `for step in range(20):` in that cell

STATE = WIDGET_STATE  # (labtools: the first widget's drawing, notes and timeline)


def test_twenty_watched_training_steps_show_the_newest_steps_as_one_rolled_step(lab, page):
    write_notebook(lab.root / "training.ipynb", [SETUP, TRAINING])
    open_notebook(page, lab, "training.ipynb")
    run_cell(page, 0)
    wait_idle(page, timeout=120)
    started = time.monotonic()
    run_cell(page, 1)
    wait_idle(page, timeout=300)
    print(f"20 watched steps ran in {time.monotonic() - started:.1f} s")
    wait_for(lambda: page.evaluate(STATE)["atEnd"], timeout=120)
    time.sleep(0.5)
    page.evaluate("document.querySelector('.dg-root').scrollIntoView({block: 'start'})")
    time.sleep(0.4)
    state = page.evaluate(STATE)
    screenshot(page, "training_steps.png")
    fitted = page.evaluate(FIT, 0)
    print("notes:", state["notes"], "buttons:", state["buttons"], "fit:", fitted)

    # the newest steps: the oldest passes dropped, said once under the drawing
    [older] = [note for note in state["notes"] if note.startswith("Showing the newest passes")]
    assert "dg.watch(max_nodes=...) keeps more" in older, older
    # one rolled step, named by the line of the for, beside the map of the model's modules
    shown = " | ".join(state["texts"])
    loops = [text for text in state["texts"] if " iterations, line " in text]
    assert len(loops) == 1 and loops[0].endswith(f"iterations, line {FOR_LINE}"), loops
    assert "h.0 \u00b7 Block" in shown and "h.1 \u00b7 Block" in shown, shown
    losses = [text for text in state["texts"] if text == "NllLossBackward0"]
    assert len(losses) == 2, losses  # the first step kept and the last, not one per step
    assert round(fitted["smallest"], 2) >= 9 and fitted["share"] >= 0.95, fitted

    # the rolled step opens a few steps at a time
    page.get_by_role("button", name=f"expand: {loops[0]}").click()
    wait_for(lambda: len(page.evaluate(STATE)["texts"]) > len(state["texts"]), timeout=30)
    time.sleep(1.0)
    opened = page.evaluate(STATE)
    screenshot(page, "training_step_opened.png")
    print("opened:", opened["buttons"], len(state["texts"]), "->", len(opened["texts"]), "texts")
    # the opened step is a map of its own (structure.js NOTE [an opened step is a map of its
    # own]): a cluster named for it, its model as a box, not its 200 ops drawn flat
    steps = [text for text in opened["texts"] if re.fullmatch(r"iteration \d+ of \d+", text)]
    assert steps, opened["texts"]
    assert len(opened["texts"]) < len(state["texts"]) + 40, opened["texts"]
    assert any(button.startswith("roll up: ") for button in opened["buttons"]), opened["buttons"]
