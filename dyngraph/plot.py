"""Plots for the lessons: loss curves, gradient flow, timing, memory, graph size (matplotlib).

``import dyngraph`` never imports this module, nor matplotlib: ``import dyngraph.plot`` does,
and matplotlib itself is imported inside each function, the first time one draws. IPython is
imported only to display a live figure, and only when it is already running.

Every function returns a ``matplotlib.figure.Figure``. They are made with ``Figure()`` rather
than ``pyplot``, so no global figure list grows and a notebook does not show a figure twice;
Jupyter displays a returned Figure as an image.

>>> import dyngraph.plot as dgp
>>> live = dgp.LiveLoss()
>>> for step in dgp.progress(range(200)):
...     loss = train_step()
...     live.update(loss)                  # the curve redraws in place while the cell runs
>>> dgp.gradient_flow(model.named_parameters())
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .extras import require
from .memory import Sample
from .tensor import Tensor

if TYPE_CHECKING:  # for annotations only: matplotlib is imported when a function draws
    from matplotlib.figure import Figure

T = TypeVar("T")

# One palette for every plot (colour-blind friendly: Okabe & Ito).
BLUE, ORANGE, GREEN, RED, GREY = "#0072B2", "#E69F00", "#009E73", "#D55E00", "#999999"


def _figure(width: float = 6.0, height: float = 3.5) -> Figure:
    figure = require("matplotlib.figure", "jupyter", "dyngraph.plot (the lessons' figures)")
    return figure.Figure(figsize=(width, height), layout="constrained")


def _number(value: Any) -> float:
    """A plain float from a Python number, a numpy scalar or a one-element Tensor."""
    if isinstance(value, Tensor):
        return float(value.detach().numpy().reshape(()))
    return float(value)


# ---------------------------------------------------------------------------- live loss


class LiveLoss:
    """A loss curve that redraws while the training loop runs.

    In Jupyter the figure is displayed once (``display(fig, display_id=True)``) and then
    updated in place through its display handle, every ``every`` steps, so the cell shows one
    growing curve instead of hundreds of images. Outside IPython it only keeps the numbers;
    ``.figure()`` draws them.

    >>> live = LiveLoss(every=10)
    >>> for step in range(100):
    ...     live.update(train_step())
    """

    def __init__(self, title: str = "training loss", every: int = 1, log_scale: bool = False):
        if every < 1:
            raise ValueError(f"every must be at least 1, got {every}")
        self.title = title
        self.every = every
        self.log_scale = log_scale
        self.steps: list[int] = []
        self.losses: list[float] = []
        self._handle: Any = None  # IPython's DisplayHandle, once displayed

    def update(self, loss: Any, step: int | None = None) -> None:
        """Add one loss value (a number or a one-element Tensor) and redraw when it is time."""
        self.steps.append(len(self.steps) if step is None else int(step))
        self.losses.append(_number(loss))
        if len(self.losses) % self.every == 0:
            self._show()

    def figure(self) -> Figure:
        """The curve so far."""
        fig = _figure()
        ax = fig.add_subplot()
        ax.plot(self.steps, self.losses, color=BLUE, linewidth=1.5)
        if self.losses:
            ax.set_title(f"{self.title} (last: {self.losses[-1]:.4g})")
        else:
            ax.set_title(self.title)
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        if self.log_scale and self.losses and min(self.losses) > 0:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
        return fig

    def _show(self) -> None:
        ipython = sys.modules.get("IPython")
        if ipython is None or ipython.get_ipython() is None:
            return  # not in IPython: nothing to display, the numbers are kept
        from IPython.display import display

        fig = self.figure()
        if self._handle is None:
            self._handle = display(fig, display_id=True)
        else:
            self._handle.update(fig)


# ---------------------------------------------------------------------------- gradients


def gradient_flow(named_parameters: Iterable[tuple[str, Tensor]]) -> Figure:
    """Mean |grad| per parameter, in layer order, on a log scale: vanishing gradients show as
    bars falling towards the input layers, exploding ones as bars shooting up. Parameters
    without a gradient are marked "no grad".

    >>> loss.backward()
    >>> gradient_flow(model.named_parameters())
    """
    names, means, missing = [], [], []
    for name, parameter in named_parameters:
        names.append(name)
        grad = parameter.grad
        if grad is None:
            means.append(0.0)
            missing.append(len(names) - 1)
        else:
            means.append(float(abs(grad.numpy()).mean()))
    fig = _figure(max(4.0, 0.6 * len(names) + 2), 3.5)
    ax = fig.add_subplot()
    positions = range(len(names))
    shown = [m if m > 0 else math.nan for m in means]
    ax.bar(positions, shown, color=BLUE)
    ax.set_xticks(list(positions), names, rotation=45, ha="right")
    if any(m > 0 for m in means):
        ax.set_yscale("log")
    for i in missing:
        ax.annotate("no grad", (i, 0), xycoords=("data", "axes fraction"), ha="center",
                    va="bottom", color=RED, rotation=90)
    ax.set_ylabel("mean |grad|")
    ax.set_title("gradient flow per layer")
    ax.grid(axis="y", alpha=0.3)
    return fig


# ---------------------------------------------------------------------------- timing


def timing_comparison(
    eager_seconds: float | Sequence[float],
    traced_seconds: float | Sequence[float],
    labels: Sequence[str] | None = None,
) -> Figure:
    """Eager vs traced time per call (microseconds), with the speed-up written on each pair.

    >>> timing_comparison([mlp_eager, rnn_eager], [mlp_traced, rnn_traced], ["MLP", "RNN"])
    """
    eager = [eager_seconds] if isinstance(eager_seconds, (int, float)) else list(eager_seconds)
    traced = [traced_seconds] if isinstance(traced_seconds, (int, float)) else list(traced_seconds)
    if len(eager) != len(traced):
        raise ValueError(f"got {len(eager)} eager and {len(traced)} traced timings")
    labels = list(labels) if labels is not None else [f"model {i}" for i in range(len(eager))]
    fig = _figure(max(4.0, 1.6 * len(eager) + 2), 3.5)
    ax = fig.add_subplot()
    width = 0.38
    for i, (e, t) in enumerate(zip(eager, traced)):
        ax.bar(i - width / 2, e * 1e6, width, color=ORANGE, label="eager" if i == 0 else None)
        ax.bar(i + width / 2, t * 1e6, width, color=BLUE, label="traced" if i == 0 else None)
        if t > 0:
            ax.annotate(f"{e / t:.1f}x", (i, max(e, t) * 1e6), ha="center", va="bottom")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("microseconds per call")
    ax.set_title("eager vs traced replay")
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    return fig


# ---------------------------------------------------------------------------- memory


def memory_timeline(
    timelines: Mapping[str, Sequence[Sample]] | Sequence[Sample],
) -> Figure:
    """Bytes held for backward over a training step, from ``dg.memory.memory_timeline``: one
    line per run (say, with and without checkpointing); recomputation shaded.

    >>> memory_timeline({
    ...     "plain": dg.memory.memory_timeline(lambda: net(x).sum()),
    ...     "checkpointed": dg.memory.memory_timeline(lambda: dg.checkpoint(net, x).sum()),
    ... })
    """
    if not isinstance(timelines, Mapping):
        timelines = {"bytes held": timelines}
    fig = _figure(7.0, 3.5)
    ax = fig.add_subplot()
    colors = [BLUE, ORANGE, GREEN, RED]
    for i, (label, samples) in enumerate(timelines.items()):
        color = colors[i % len(colors)]
        kib = [s.bytes / 1024 for s in samples]
        ax.plot(range(len(kib)), kib, color=color, label=label, drawstyle="steps-post")
        forward_end = sum(1 for s in samples if s.phase == "forward")
        ax.axvline(forward_end - 0.5, color=color, linestyle=":", alpha=0.6)
        recomputed = [j for j, s in enumerate(samples) if s.phase == "recompute"]
        if recomputed:
            ax.scatter(recomputed, [kib[j] for j in recomputed], color=color, marker="x", s=18,
                       label=f"{label}: recomputed ops")
    ax.set_xlabel("op (forward), then backward step  -  dotted: end of forward")
    ax.set_ylabel("KiB held for backward")
    ax.set_title("memory held during forward and backward")
    ax.legend()
    ax.grid(alpha=0.3)
    return fig


# ---------------------------------------------------------------------------- graph size


def graph_size_by_length(lengths: Sequence[int], sizes: Sequence[int]) -> Figure:
    """Graph size (nodes) against input length: a dynamic graph grows with its input.

    >>> lengths = [5, 10, 20, 40]
    >>> sizes = [dg.memory.graph_size(rnn(sequence(n))) for n in lengths]
    >>> graph_size_by_length(lengths, sizes)
    """
    if len(lengths) != len(sizes):
        raise ValueError(f"got {len(lengths)} lengths and {len(sizes)} sizes")
    fig = _figure()
    ax = fig.add_subplot()
    ax.plot(lengths, sizes, color=BLUE, marker="o")
    ax.set_xlabel("input length")
    ax.set_ylabel("nodes in the graph")
    ax.set_title("graph size per input length")
    ax.grid(alpha=0.3)
    return fig


# ---------------------------------------------------------------------------- progress


def progress(iterable: Iterable[T], total: int | None = None, **options: Any) -> Iterator[T]:
    """``iterable`` with a progress bar (``tqdm.auto``: a widget in Jupyter, text in a
    terminal) when tqdm is installed; plain iteration otherwise.

    >>> for epoch in progress(range(20), desc="epochs"):
    ...     train_epoch()
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iter(iterable)
    return iter(tqdm(iterable, total=total, **options))
