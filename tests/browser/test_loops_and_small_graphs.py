"""Loops and small graphs in a real JupyterLab (issue 36, parts 4 and 5).

- A 30-step RNN's rolled-up loop opens quickly: a click opens the next few iterations (structure.js
  NOTE [a loop opens a few iterations at a time]), a busy sign shows while they are laid out,
  the group buttons change when the drawing does (a second click does not undo the first), and
  the view lands on the opened iterations with readable labels, all of them in view.
- micrograd's README example (39 Values) opens with readable labels across the pane's width
  (not a third of it), with its gradients, a and b in the order the code wrote them; the
  pane shows as much of it as fits at 9 px, and the learner pans for the rest.
- The keys badge covers no control; at 800 px the step text is whole.

Screenshots (1400 x 1000 and 800 px wide) go to tests/browser/artifacts/loops_*.png. The time
bound is generous (a loaded CI machine); the figures are printed.
"""

from __future__ import annotations

import importlib.util
import time

import pytest

from .labtools import open_notebook, run_cells, screenshot, wait_for, write_notebook
from .measure import FIT, RNN_CELL, SETUP, wait_drawn

MICROGRAD_CELL = """\
import dyngraph.micrograd
from micrograd.engine import Value

with dg.watch():
    a = Value(-4.0)
    b = Value(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    g.backward()
"""

# Click widget i's rolled-up loop box and time it in the page: until the drawing first changes,
# and until it is settled (the new drawing shows the slider's position and nothing has changed
# for 300 ms). Also: when the busy sign showed, and what the group buttons said then.
OPEN_LOOP = """async (i) => {
    const root = document.querySelectorAll('.dg-root')[i];
    const pane = root.querySelector('.dg-graph');
    const names = () => Array.from(pane.querySelectorAll('g.node > title'))
        .map((t) => t.textContent);
    const before = pane.querySelector('svg');
    const drawnBefore = new Set(names());
    const buttons = () => Array.from(root.querySelectorAll('.dg-groups button'))
        .map((b) => b.textContent);
    const buttonsBefore = buttons();
    let busy = -1, busyText = '', buttonsWhileBusy = null, changed = -1, last = 0;
    const t0 = performance.now();
    const mo = new MutationObserver(() => {
        const now = performance.now() - t0;
        last = now;
        const sign = root.querySelector('[role=status].dg-busy');
        if (busy < 0 && sign && !sign.hidden) {
            busy = now; busyText = sign.textContent; buttonsWhileBusy = buttons();
        }
        if (changed < 0 && pane.querySelector('svg') !== before) changed = now;
    });
    mo.observe(root, {subtree: true, childList: true, attributes: true, characterData: true});
    const box = Array.from(pane.querySelectorAll('g.node'))
        .find((g) => g.textContent.includes('iterations'));
    box.dispatchEvent(new MouseEvent('click', {bubbles: true}));
    box.dispatchEvent(new MouseEvent('click', {bubbles: true}));  // at once again: ignored
    const scrub = root.querySelector('.dg-scrub');
    while (performance.now() - t0 < 20000) {
        await new Promise((r) => setTimeout(r, 25));
        const now = performance.now() - t0;
        if (changed >= 0 && pane.dataset.shownStep === scrub.value && now - last >= 300) break;
    }
    mo.disconnect();
    const opened = names().filter((n) => /^n\\d+$/.test(n) && !drawnBefore.has(n));
    return {changed, settled: last, busy, busyText, buttonsBefore, buttonsWhileBusy,
            buttonsAfter: buttons(), opened, loopLabel: Array.from(pane.querySelectorAll('g.node'))
                .map((g) => g.textContent).find((t) => t.includes('iterations')) || ''};
}"""

# Are these nodes of widget i inside its pane, on screen? (The pane's box clipped as FIT does.)
INSIDE = """([i, names]) => {
    const pane = document.querySelectorAll('.dg-root')[i].querySelector('.dg-graph');
    const box = pane.getBoundingClientRect();
    const out = [];
    for (const g of pane.querySelectorAll('g.node')) {
        const name = g.querySelector('title').textContent;
        if (!names.includes(name)) continue;
        const r = g.getBoundingClientRect();
        if (r.left < box.left - 1 || r.top < box.top - 1 || r.right > box.right + 1
            || r.bottom > box.bottom + 1 || r.bottom > innerHeight) out.push(name);
    }
    return out;
}"""

# Where widget i's leaves a and b are, and how wide its drawing is on screen, against its pane.
SMALL = """(i) => {
    const pane = document.querySelectorAll('.dg-root')[i].querySelector('.dg-graph');
    const at = (name) => {
        const g = Array.from(pane.querySelectorAll('g.node'))
            .find((n) => n.querySelector('text') && n.querySelector('text').textContent === name);
        const r = g.getBoundingClientRect();
        return {x: r.left + r.width / 2, y: r.top + r.height / 2};
    };
    const drawing = pane.querySelector('svg g.graph').getBoundingClientRect();
    const texts = Array.from(pane.querySelectorAll('svg text')).map((t) => t.textContent);
    return {a: at('a'), b: at('b'), drawingWidth: Math.min(drawing.width, pane.clientWidth),
            paneWidth: pane.clientWidth, grads: texts.filter((t) => t.startsWith('grad')).length};
}"""

# Rectangles of widget i's keys badge and of every control in its toolbar; the step text.
CHROME = """(i) => {
    const root = document.querySelectorAll('.dg-root')[i];
    const rect = (e) => { const r = e.getBoundingClientRect();
        return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
    const badge = root.querySelector('.dg-keys');
    const controls = Array.from(root.querySelectorAll(
        '.dg-toolbar button, .dg-toolbar select, .dg-toolbar input'));
    const position = root.querySelector('.dg-position');
    // rows: the controls' tops, a new row where one starts below the previous row's middle
    const tops = controls.filter((c) => c.offsetParent)
        .map((c) => c.getBoundingClientRect()).sort((p, q) => p.top - q.top);
    let rows = 0, middle = -Infinity;
    for (const r of tops) if (r.top > middle) { rows++; middle = (r.top + r.bottom) / 2; }
    return {badge: rect(badge), badgeShown: getComputedStyle(badge).visibility === 'visible',
            controls: controls.map((c) => ({name: c.getAttribute('aria-label'), ...rect(c)})),
            position: position.textContent, cut: position.scrollWidth > position.clientWidth + 1
                || position.scrollHeight > position.clientHeight + 1,
            rows};
}"""


def show(page, i: int) -> None:
    page.evaluate(
        "(i) => document.querySelectorAll('.dg-root')[i].scrollIntoView({block: 'start'})", i)
    time.sleep(0.4)


def overlaps(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] \
        and b["top"] < a["bottom"]


@pytest.mark.skipif(importlib.util.find_spec("micrograd") is None,
                    reason="micrograd is not installed (pip install micrograd)")
def test_a_loop_opens_quickly_and_readably_and_micrograd_fits_with_its_gradients(lab, page):
    write_notebook(lab.root / "loops.ipynb", [SETUP, RNN_CELL, MICROGRAD_CELL])
    open_notebook(page, lab, "loops.ipynb")
    run_cells(page, 3, timeout=180)
    wait_drawn(page, 0)
    wait_drawn(page, 1)
    time.sleep(1.0)

    # --- the RNN: its loop rolled up, then opened by a click
    show(page, 0)
    screenshot(page, "loops_rnn_rolled.png")
    rolled = page.evaluate(FIT, 0)
    opened = page.evaluate(OPEN_LOOP, 0)
    print("RNN opened", {k: v for k, v in opened.items() if k != "opened"},
          "opened nodes:", len(opened["opened"]))
    assert opened["busy"] >= 0 and opened["busyText"] == "laying out\u2026", opened
    # the buttons did not flip before the drawing: while busy they still offered "expand"
    title = "\u00d728 iterations, line 6"  # the for (events.py NOTE [loop lines])
    assert opened["buttonsBefore"] == [f"expand: {title}", f"expand all: {title}"], opened
    assert opened["buttonsWhileBusy"] == opened["buttonsBefore"], opened
    assert opened["buttonsAfter"] == [f"expand more: {title}", f"expand all: {title}",
                                      f"roll up: {title}"], opened
    # the second click was ignored: the box took the first iterations only once
    assert 9 <= len(opened["opened"]) <= 8 * 9 and "\u00d7" in opened["loopLabel"], opened
    left = 28 - len(opened["opened"]) // 9
    assert f"\u00d7{left} iterations" in opened["loopLabel"], opened
    assert 0 <= opened["changed"] <= opened["settled"] <= 3000, opened  # issue 36: <= 1 s here
    after = page.evaluate(FIT, 0)
    print("RNN fit rolled", rolled, "opened", after)
    assert round(after["smallest"], 2) >= 9, after
    assert page.evaluate(INSIDE, [0, opened["opened"]]) == [], "the opened iterations in view"
    screenshot(page, "loops_rnn_opened.png")
    page.locator(".dg-root").nth(0).get_by_role("button", name="roll up", exact=False).click()
    wait_for(lambda: page.evaluate(FIT, 0)["nodes"] == rolled["nodes"], timeout=10)

    # --- micrograd's README example: readable, across the pane, with its gradients, a then b
    show(page, 1)
    small = page.evaluate(SMALL, 1)
    fitted = page.evaluate(FIT, 1)
    print("micrograd", small, fitted)
    assert round(fitted["smallest"], 2) >= 9, fitted
    # across the pane (it was a third of it): as wide as the pane, or laid out the way that
    # shows more of it (view/drawing.js NOTE [turn]: top to bottom here, 510 of 646 px)
    assert small["drawingWidth"] >= 0.75 * small["paneWidth"], small
    assert small["grads"] >= 30, small  # every Value's gradient (39 nodes; a few out of view)
    # laid out left to right: a above b (top to bottom: a left of b)
    assert small["a"]["y"] < small["b"]["y"] or small["a"]["x"] < small["b"]["x"], small
    screenshot(page, "loops_micrograd.png")

    # --- the keys badge, shown while the widget holds the keys, covers no control
    page.locator(".dg-root").nth(1).locator(".dg-graph").click(position={"x": 5, "y": 5})
    chrome = page.evaluate(CHROME, 1)
    assert chrome["badgeShown"], chrome
    covered = [c["name"] for c in chrome["controls"] if overlaps(chrome["badge"], c)]
    assert covered == [], covered
    screenshot(page, "loops_micrograd_focused.png")

    # --- 800 px wide: the step text whole, the toolbar in two rows
    page.set_viewport_size({"width": 800, "height": 1000})
    time.sleep(1.0)
    for i, name in ((0, "loops_rnn_800.png"), (1, "loops_micrograd_800.png")):
        show(page, i)
        screenshot(page, name)
        chrome = page.evaluate(CHROME, i)
        print("800 px", i, chrome["position"], "cut:", chrome["cut"], "rows:", chrome["rows"])
        assert not chrome["cut"], chrome["position"]
        assert chrome["rows"] <= 2, chrome
    fitted = page.evaluate(FIT, 1)
    print("micrograd at 800 px", fitted)
    assert round(fitted["smallest"], 2) >= 9, fitted
