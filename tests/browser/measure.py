"""What a learner sees, measured in the page (shared/BROWSER_TESTING.md, "Measuring what a
learner sees"): fit (share of nodes inside the visible pane, smallest label on screen) and
responsiveness (time until the drawing first changes after a step or a slider move, and the
longest main-thread block). Used by the browser tests and by benchmarks/browser_widget.py."""

from __future__ import annotations

import statistics
import time

# The learner's programs, at the sizes that matter.
SETUP = "import dyngraph as dg\nfrom dyngraph import nn\nimport dyngraph.nn.functional as F"

MLP_CELL = """\
dg.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 2))
x, target = dg.randn(32, 8), dg.randn(32, 2)
with dg.watch(title="3-layer MLP") as mlp:
    out = model(x)
    loss = F.mse_loss(out, target)
    loss.backward()
"""

RNN_CELL = """\
dg.manual_seed(0)
cell = nn.RNNCell(4, 8)
xs = dg.randn(30, 3, 4)
with dg.watch(title="RNN cell, 30 steps") as rnn:
    h = dg.zeros(3, 8)
    for step in range(30):
        h = cell(xs[step], h)
    loss = (h * h).mean()
    loss.backward()
"""

LOOP_CELL = """\
with dg.watch(title="10 000 ops") as big:
    h = dg.tensor([0.5], requires_grad=True, name="start")
    for i in range(10_000):
        h = h * 1.0001
    h.sum().backward()
print("loop done")
"""

INSTALL_OBSERVERS = """() => {
    if (window.__dgLong) return;
    window.__dgLong = [];
    new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.__dgLong.push([e.startTime, e.duration]);
    }).observe({type: "longtask", buffered: true});
}"""

FIT = """(i) => {
    const root = document.querySelectorAll('.dg-root')[i];
    const pane = root.querySelector('.dg-graph');
    let box = pane.getBoundingClientRect();
    // clip to every scrolling / clipping ancestor and to the viewport
    let el = pane.parentElement;
    let top = box.top, left = box.left, bottom = box.bottom, right = box.right;
    while (el && el !== document.body && el !== document.documentElement) {
        const s = getComputedStyle(el);
        if (/(auto|scroll|hidden)/.test(s.overflow + s.overflowX + s.overflowY)) {
            const r = el.getBoundingClientRect();
            top = Math.max(top, r.top); left = Math.max(left, r.left);
            bottom = Math.min(bottom, r.bottom); right = Math.min(right, r.right);
        }
        el = el.parentElement;
    }
    top = Math.max(top, 0); left = Math.max(left, 0);
    bottom = Math.min(bottom, innerHeight); right = Math.min(right, innerWidth);
    const nodes = Array.from(pane.querySelectorAll('svg g.node:not(.dg-future)'));
    let inside = 0, smallest = Infinity;
    for (const n of nodes) {
        const r = n.getBoundingClientRect();
        if (r.top >= top - 1 && r.left >= left - 1
            && r.bottom <= bottom + 1 && r.right <= right + 1) inside++;
        for (const t of n.querySelectorAll('text')) {
            const m = t.getScreenCTM();
            const size = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
            smallest = Math.min(smallest, size);
        }
    }
    return {nodes: nodes.length, inside, share: nodes.length ? inside / nodes.length : 0,
            smallest: Number.isFinite(smallest) ? smallest : 0,
            scale: Number(pane.dataset.scale || 0), pane: [right - left, bottom - top]};
}"""

# One interaction, timed in the page: the time from the input to the first change of the
# drawing (a MutationObserver on the svg), then a short wait for the render to end.
INTERACT = """async ([i, kind, value]) => {
    const root = document.querySelectorAll('.dg-root')[i];
    const pane = root.querySelector('.dg-graph');
    const target = pane.querySelector('svg') || pane;
    const result = await new Promise((resolve) => {
        let t0 = 0;
        const mo = new MutationObserver(() => {
            mo.disconnect(); resolve(performance.now() - t0); });
        mo.observe(target, {subtree: true, childList: true, attributes: true, characterData: true});
        setTimeout(() => { mo.disconnect(); resolve(-1); }, 10000);
        t0 = performance.now();
        if (kind === 'step') root.querySelector('button.dg-forward').click();
        else if (kind === 'back') root.querySelector('button.dg-back').click();
        else {
            const s = root.querySelector('.dg-scrub');
            s.value = String(value);
            s.dispatchEvent(new Event('input', {bubbles: true}));
        }
    });
    return result;
}"""


def widget_count(page) -> int:
    return page.evaluate("document.querySelectorAll('.dg-root').length")


def wait_drawn(page, i: int, timeout: float = 60) -> None:
    """Until widget i has a drawing showing its slider's position, done replaying
    (widgets/src/view/playback.js NOTE [replay])."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = page.evaluate(
            """(i) => { const r = document.querySelectorAll('.dg-root')[i]; if (!r) return false;
            const g = r.querySelector('.dg-graph');
            return !!g.querySelector('svg g.node') && !r.classList.contains('dg-replaying')
                && g.dataset.shownStep === r.querySelector('.dg-scrub').value; }""",
            i,
        )
        if done:
            return
        time.sleep(0.1)
    raise TimeoutError(f"widget {i} did not draw")


def fit(page, i: int) -> dict:
    return page.evaluate(FIT, i)


def long_tasks_since(page, since: float) -> list[float]:
    return page.evaluate(
        "(since) => (window.__dgLong || []).filter(([s]) => s >= since).map(([, d]) => d)", since
    )


def now(page) -> float:
    return page.evaluate("performance.now()")


def responsiveness(page, i: int, steps: int = 20, moves: int = 20) -> dict:
    """Steps through the backward pass and moves the slider; the response times and the
    longest main-thread block while doing so."""
    page.evaluate(INSTALL_OBSERVERS)
    length = int(page.evaluate("(i) => document.querySelectorAll('.dg-root')[i]"
                               ".querySelector('.dg-scrub').max", i))
    page.evaluate("(i) => document.querySelectorAll('.dg-root')[i]"
                  ".querySelector('button.dg-start-backward').click()", i)
    wait_drawn(page, i)
    time.sleep(0.3)
    since = now(page)
    step_times = []
    for _ in range(steps):
        step_times.append(page.evaluate(INTERACT, [i, "step", 0]))
        time.sleep(0.05)
    move_times = []
    for k in range(moves):
        position = (k * 7919) % (length + 1)  # spread over the whole timeline
        move_times.append(page.evaluate(INTERACT, [i, "move", position]))
        time.sleep(0.05)
    time.sleep(0.3)
    blocks = long_tasks_since(page, since)
    valid_steps = [t for t in step_times if t >= 0]
    valid_moves = [t for t in move_times if t >= 0]
    return {
        "step_median": statistics.median(valid_steps) if valid_steps else -1,
        "step_max": max(valid_steps) if valid_steps else -1,
        "move_median": statistics.median(valid_moves) if valid_moves else -1,
        "move_max": max(valid_moves) if valid_moves else -1,
        "no_change": len(step_times) - len(valid_steps) + len(move_times) - len(valid_moves),
        "longest_block": max(blocks) if blocks else 0.0,
    }
