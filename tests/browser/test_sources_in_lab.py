"""Other engines watched in a real JupyterLab (issue 32): the README's 30-line engine and a
micrograd program, each drawn live by dg.watch() with the learner's variable names, backward
included. Screenshots: tests/browser/artifacts/engine_tiny.png, micrograd.png."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

from .labtools import open_notebook, run_cells, screenshot, write_notebook
from .measure import wait_drawn

ROOT = Path(__file__).resolve().parents[2]

TINY_ENGINE = (ROOT / "tests" / "engine_tiny.py").read_text(encoding="utf-8")

TINY_CELL = """\
with dg.watch(title="a 30-line engine, watched"):
    a = Value(2.0)
    b = Value(-3.0)
    c = (a * b + a).tanh()
    c.backward()
"""

MICROGRAD_CELL = """\
import dyngraph.micrograd
from micrograd.engine import Value as MValue

with dg.watch(title="micrograd, watched"):
    x = MValue(2.0)
    w = MValue(-3.0)
    h = (x * w).relu()
    y = h + x * x
    y.backward()
"""


def labels(page, i: int) -> str:
    return page.evaluate("(i) => document.querySelectorAll('.dg-root')[i]"
                         ".querySelector('.dg-graph svg').textContent", i)


def end_of_run(page, i: int) -> None:
    page.evaluate("(i) => { const s = document.querySelectorAll('.dg-root')[i]"
                  ".querySelector('.dg-scrub'); s.value = s.max;"
                  " s.dispatchEvent(new Event('input', {bubbles: true})); }", i)
    wait_drawn(page, i)


@pytest.mark.skipif(importlib.util.find_spec("micrograd") is None,
                    reason="micrograd is not installed (pip install micrograd)")
def test_a_tiny_engine_and_micrograd_are_drawn_live(lab, page):
    write_notebook(lab.root / "engines.ipynb", [TINY_ENGINE, TINY_CELL, MICROGRAD_CELL])
    open_notebook(page, lab, "engines.ipynb")
    run_cells(page, 3)
    wait_drawn(page, 0)
    wait_drawn(page, 1)
    time.sleep(0.5)

    end_of_run(page, 0)
    tiny = labels(page, 0)
    for text in ("Mul", "Add", "Tanh", "grad"):
        assert text in tiny, tiny
    page.evaluate("document.querySelectorAll('.dg-root')[0].scrollIntoView({block: 'start'})")
    screenshot(page, "engine_tiny.png")

    end_of_run(page, 1)
    micro = labels(page, 1)
    for text in ("ReLU", "*", "+", "h", "y", "grad"):
        assert text in micro, micro
    page.evaluate("document.querySelectorAll('.dg-root')[1].scrollIntoView({block: 'start'})")
    screenshot(page, "micrograd.png")
