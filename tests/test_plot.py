"""dyngraph.plot: every function returns a matplotlib Figure (Agg backend, no display needed);
LiveLoss updates one display in place; progress() falls back to plain iteration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import dyngraph as dg

matplotlib = pytest.importorskip(
    "matplotlib", reason="matplotlib is not installed (pip install dyngraph[jupyter])"
)
matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

import dyngraph.plot as dgp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def drawn(fig):
    """Render the figure (catches errors that only show when drawing) and return it."""
    fig.canvas.draw()
    return fig


def test_importing_dyngraph_plot_does_not_import_matplotlib():
    code = (
        "import json, sys; import dyngraph.plot; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('matplotlib', 'IPython', 'tqdm'))))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


# ----------------------------------------------------------------------------- LiveLoss


def test_live_loss_outside_ipython_keeps_the_numbers():
    live = dgp.LiveLoss()
    for loss in (3.0, 2.0, dg.tensor(1.5)):
        live.update(loss)
    assert live.losses == [3.0, 2.0, 1.5] and live.steps == [0, 1, 2]
    assert isinstance(drawn(live.figure()), Figure)
    assert isinstance(drawn(dgp.LiveLoss(log_scale=True).figure()), Figure)  # empty is fine


def test_live_loss_updates_one_display_in_place(monkeypatch):
    """With IPython running: displayed once with a display id, then updated through the handle."""
    shown = []

    class Handle:
        def update(self, obj):
            shown.append(("update", obj))

    def display(obj, display_id=False):
        assert display_id is True
        shown.append(("display", obj))
        return Handle()

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: object()
    ipython_display = types.ModuleType("IPython.display")
    ipython_display.display = display
    ipython.display = ipython_display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", ipython_display)

    live = dgp.LiveLoss(every=2)
    for step in range(6):
        live.update(1.0 / (step + 1))
    assert [kind for kind, _ in shown] == ["display", "update", "update"]
    assert all(isinstance(fig, Figure) for _, fig in shown)


def test_live_loss_checks_every():
    with pytest.raises(ValueError, match="every"):
        dgp.LiveLoss(every=0)


# ----------------------------------------------------------------------------- figures


def test_gradient_flow():
    layers = [dg.tensor(np.ones((3, 3)), requires_grad=True) for _ in range(3)]
    (layers[0] * 2 + layers[1] * 1e-6).sum().backward()  # layer 2 gets no gradient
    named = [(f"layer{i}.weight", p) for i, p in enumerate(layers)]
    fig = drawn(dgp.gradient_flow(named))
    assert isinstance(fig, Figure)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["layer0.weight", "layer1.weight", "layer2.weight"]


def test_timing_comparison():
    assert isinstance(drawn(dgp.timing_comparison(15e-6, 9e-6)), Figure)
    fig = drawn(dgp.timing_comparison([15e-6, 9e-6], [9e-6, 6e-6], ["MLP", "RNN"]))
    assert "1.7x" in [t.get_text() for t in fig.axes[0].texts]
    with pytest.raises(ValueError):
        dgp.timing_comparison([1.0], [1.0, 2.0])


def test_memory_timeline():
    w = dg.randn(8, 8, requires_grad=True)
    x = dg.randn(4, 8, requires_grad=True)

    def block(h):
        return (h @ w).tanh() @ w

    plain = dg.memory.memory_timeline(lambda: block(x).sum())
    saved = dg.memory.memory_timeline(lambda: dg.checkpoint(block, x).sum())
    fig = drawn(dgp.memory_timeline({"plain": plain, "checkpointed": saved}))
    assert isinstance(fig, Figure)
    assert isinstance(drawn(dgp.memory_timeline(plain)), Figure)


def test_graph_size_by_length():
    assert isinstance(drawn(dgp.graph_size_by_length([1, 5, 10], [4, 16, 31])), Figure)
    with pytest.raises(ValueError):
        dgp.graph_size_by_length([1, 2], [3])


# ----------------------------------------------------------------------------- progress


def test_progress_wraps_tqdm_when_installed():
    pytest.importorskip("tqdm", reason="tqdm is not installed")
    bar = dgp.progress(range(5), total=5, disable=True)
    assert list(bar) == [0, 1, 2, 3, 4]


def test_progress_without_tqdm_is_plain_iteration(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # makes `from tqdm.auto import` fail
    assert list(dgp.progress(iter("abc"))) == ["a", "b", "c"]
