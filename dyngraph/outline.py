"""``dg.watch()`` outside a notebook: a live text outline of the graph, printed as the code runs.

In a script or a terminal REPL there is no widget to draw in, so the watched block prints what
the widget would show, one line per thing that happens, grouped under the source line that made
it::

    with dg.watch():
        h = (x @ W1 + b1).relu()
        loss = (h @ W2).square().mean()
        loss.backward()

prints, live::

    dg.watch: no notebook here, so a text outline: nodes as they are made, gradients as ...
    mlp.py:10  h = (x @ W1 + b1).relu()
      #1 x: leaf (32, 4)
      #2 W1: leaf (4, 16)
      #5 MatMul(x#1, W1#2) -> (32, 16)  saved 768 B
      #3 b1: leaf (16,)
      #6 Add(#5, b1#3) -> (32, 16)
      #7 h = Relu(#6) -> (32, 16)  saved 2.0 KB
    mlp.py:11  loss = (h @ W2).square().mean()
      #4 W2: leaf (16, 1)
      #8 MatMul(h#7, W2#4) -> (32, 1)  saved 2.1 KB
      #9 Square(#8) -> (32, 1)  saved 128 B
      #10 loss = Mean(#9) -> scalar  [25.09]
    backward from loss#10
      grad loss#10  norm 1  [1]
      grad #9  norm 0.1768
      ...
      grad W1#2  norm 17.39  (leaf: now in .grad)
    freed the saved tensors of 4 nodes: #9, #8, #7, #5
    dg.watch: 10 nodes, 9 gradients, 1 backward pass, 4 freed nodes

It is one more subscriber of the event spine (``dg.events``) and needs no Jupyter package.
Numbers are formatted as the diagrams format them (``dot.format_values``) and files are named as
shared pages name them (``record.shared_path``).
"""

from __future__ import annotations

import linecache
import math
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from .dot import COMPACT_VALUES, format_bytes, format_values, shape_known
from .extras import require
from .record import Recording, shared_path
from .spine import events
from .spine.reporter import watching_sources

MAX_LINES = 200  # lines printed before the outline stops (a training loop would be a wall)
MAX_FREED_IDS = 8  # ids listed in a "freed" line
_MAX_KNOWN = 100_000  # nodes remembered for their labels (a long loop makes many)
_KINDS = {"leaf", "parameter", "constant"}  # node_created ops that are not ops
MAX_NAME_CHARS = 40  # a longer name is cut with "…": it is repeated on every line using its node

# NOTE [terminal text] Names and scopes are the learner's text (or anyone's, in a shared
# script), printed into a terminal: a newline in a name would start a line that looks like the
# outline's own, and an escape code would restyle the terminal for the rest of the run. So every
# line passes through _one_line, which writes control characters (C0, DEL, C1) and the bidi
# controls that reorder what is shown as visible escapes, and names are cut to MAX_NAME_CHARS.
_CONTROLS = {code: f"\\x{code:02x}" for code in [*range(0x20), *range(0x7F, 0xA0)]}
_CONTROLS.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})
_CONTROLS.update({code: f"\\u{code:04x}"
                  for code in [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                               *range(0x2066, 0x206A)]})


def in_notebook() -> bool:
    """Is this code running in a Jupyter kernel (a notebook, JupyterLab, VS Code, Colab), where a
    widget can be displayed? False in a script, a terminal REPL and a terminal IPython. IPython is
    not imported here: a kernel has always imported it already."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # an IPython too old or half imported: no kernel we can use
        return False
    return getattr(shell, "kernel", None) is not None


class Outline:
    """The subscriber that prints the outline: one line per node made, per gradient computed, per
    backward begun or failed, per in-place change and per release of saved tensors; a header
    line whenever the source line changes. After ``max_lines`` lines it only counts, and
    ``close()`` prints the totals."""

    def __init__(self, stream: TextIO | None = None, pace: float = 0.0,
                 max_lines: int | None = MAX_LINES) -> None:
        if pace < 0:
            raise ValueError(f"pace must be >= 0 seconds, got {pace}")
        if max_lines is not None and max_lines < 1:
            raise ValueError(f"max_lines must be positive (or None: no limit), got {max_lines}")
        self.stream = stream  # None: sys.stdout as it is when a line is printed
        self.pace = float(pace)
        self.max_lines = max_lines
        self.lines = 0  # lines printed
        self.counts = {"node": 0, "gradient": 0, "backward pass": 0, "freed node": 0}
        self._known: dict[int, tuple[str, int, bool]] = {}  # id -> (label, numel, is leaf)
        self._source_line: tuple | None = None  # (file, line) of the last header printed
        self._scope: tuple[str, ...] = ()  # the scope of the last node printed
        self._paced_line: tuple | None = None  # (file, line) of the last pause

    # ------------------------------------------------------------------ printing

    def say(self, text: str) -> None:
        """Print one line of the outline (or, past ``max_lines``, say once that it stops)."""
        if self.max_lines is not None and self.lines >= self.max_lines:
            if self.lines == self.max_lines:
                self.lines += 1
                self._print(f"... the outline stops after {self.max_lines} lines "
                            "(dg.watch(max_lines=None) prints them all); totals at the end")
            return
        self.lines += 1
        self._print(_one_line(text))

    def _print(self, text: str) -> None:
        # flush: the outline is live, also when stdout is a pipe or a file
        print(text, file=self.stream or sys.stdout, flush=True)

    def close(self) -> None:
        counts = ", ".join(_count(n, what) for what, n in self.counts.items() if n)
        self._print(f"dg.watch: {counts or 'no graph was built'}")

    # ------------------------------------------------------------------ events

    def __call__(self, event: Any) -> None:
        kind = event.kind
        if kind == "node_created":
            self._node(event)
        elif kind == "grad_computed":
            self._grad(event)
        elif kind == "backward_started":
            self.counts["backward pass"] += 1
            self._source_line = None  # the next forward line gets its header again
            retain = " (retain_graph=True)" if event.retain_graph else ""
            self.say(f"backward from {self._label(event.root)}{retain}")
        elif kind == "backward_failed":
            self.say(f"backward failed: {event.error}")
        elif kind == "graph_freed":
            self.counts["freed node"] += len(event.ids)
            shown = ", ".join(f"#{i}" for i in event.ids[:MAX_FREED_IDS])
            more = ", ..." if len(event.ids) > MAX_FREED_IDS else ""
            self.say(f"freed the saved tensors of {_count(len(event.ids), 'node')}: {shown}{more}")
        elif kind == "version_bumped" and event.id in self._known:  # (as Recording: a tensor
            # never shown, such as a .grad that backward adds into in place, is not news)
            self.say(f"  {self._label(event.id)} changed in place (version {event.version})")
        # edge_grad and backward_finished: the widget's detail; a line each would be a wall

    def _node(self, event: events.NodeCreated) -> None:
        self.counts["node"] += 1
        numel = math.prod(event.shape)
        label = f"{_short(event.name)}#{event.id}" if event.name else f"#{event.id}"
        if len(self._known) >= _MAX_KNOWN:
            self._known.clear()
        self._known[event.id] = (label, numel, event.is_leaf)
        where = event.where
        if where is not None:
            self._header(where)
        if self.pace and where is not None and (where.file, where.line) != self._paced_line:
            self._paced_line = (where.file, where.line)
            time.sleep(self.pace)
        self.say("  " + self._node_text(event, numel))

    def _node_text(self, event: events.NodeCreated, numel: int) -> str:
        """``#5 h = Add(#3, b#4) -> (32, 16)``, or ``W#2: parameter (4, 16)`` for a leaf."""
        name = f" {_short(event.name)} =" if event.name else ""
        shape = "scalar" if event.shape == () else str(tuple(event.shape))
        if event.dtype not in ("float32", ""):
            shape += f" {event.dtype}"
        if event.op in _KINDS:
            named = f" {_short(event.name)}:" if event.name else ""
            text = f"#{event.id}{named} {event.op} {shape}"
        else:
            inputs = ", ".join(self._label(i) for i in event.inputs)
            text = f"#{event.id}{name} {event.op}({inputs})"
            if shape_known(True, event.dtype, event.shape):  # (not an output never seen)
                text += f" -> {shape}"
        if event.preview and numel <= COMPACT_VALUES:
            text += f"  {format_values(event.preview, numel)}"
        if event.saved_bytes:
            text += f"  saved {format_bytes(event.saved_bytes)}"
        if event.scope != self._scope:  # said when it changes: a layer's nodes share theirs
            self._scope = event.scope
            scope = "/".join(_short(part) for part in event.scope)
            text += f"  (in {scope})" if event.scope else "  (top level)"
        return text

    def _header(self, where: events.SourceLine) -> None:
        """``mlp.py:14  h = (x @ W1 + b1).relu()`` when the source line changes."""
        line = (where.file, where.line)
        if line == self._source_line:
            return
        self._source_line = line
        code = linecache.getline(where.file, where.line).strip()
        place = f"In [{where.cell}]" if where.cell is not None else shared_path(where.file)
        self.say(f"{place}:{where.line}  {code}".rstrip())

    def _grad(self, event: events.GradComputed) -> None:
        self.counts["gradient"] += 1
        label, numel, is_leaf = self._known.get(event.id, (f"#{event.id}", 0, False))
        text = f"  grad {label}  norm {event.norm:.4g}"
        if event.preview and 0 < numel <= COMPACT_VALUES:
            text += f"  {format_values(event.preview, numel)}"
        if event.accumulated:
            text += "  (summed)"
        if is_leaf:
            text += "  (leaf: now in .grad)"
        self.say(text)

    def _label(self, node_id: int) -> str:
        known = self._known.get(node_id)
        return known[0] if known is not None else f"#{node_id}"


def _one_line(text: str) -> str:
    """``text`` with its control characters written as escapes (NOTE [terminal text])."""
    return text.translate(_CONTROLS)


def _short(name: str) -> str:
    """A name as the outline shows it: at most MAX_NAME_CHARS characters."""
    return name if len(name) <= MAX_NAME_CHARS else name[: MAX_NAME_CHARS - 1] + "\u2026"


def _count(n: int, what: str) -> str:
    """``1 node``, ``2 nodes``, ``1 backward pass``, ``2 backward passes``."""
    if n == 1:
        return f"1 {what}"
    return f"{n} {what}es" if what.endswith("s") else f"{n} {what}s"


@contextmanager
def watch(stream: TextIO | None = None, pace: float = 0.0, max_lines: int | None = MAX_LINES,
          html: str | os.PathLike | None = None, title: str = "dyngraph", source: bool = True,
          **widget_options: Any) -> Iterator[Outline]:
    """Print a live text outline of every graph built inside the block (what ``dg.watch()``
    does outside a notebook).

    >>> with dg.watch(pace=0.2):          # a script or a terminal: the outline on stdout
    ...     loss = (x @ W).tanh().sum()
    ...     loss.backward()

    ``stream``: where to print (stdout by default). ``pace``: seconds to wait at each new
    source line, so a fast script can be followed. ``max_lines``: the outline stops after
    this many lines (None: no limit) and the totals close it. ``html="graph.html"``: also write
    the self-contained page of the graph (``Recording.to_html``; the jupyter extra; ``title``,
    and ``source=False`` to keep no source text in it) and print its path. The widget's other
    options (``rankdir``, ``rate``, ...) are accepted, so the same code runs in a notebook, and
    have no effect here.
    """
    del widget_options  # the notebook view's options: nothing to draw here
    outline = Outline(stream, pace, max_lines)
    recording = None
    if html is not None:
        # Say now, not after the block has run, when the page cannot be written here.
        for module in ("anywidget", "ormsgpack"):
            require(module, "jupyter", "The HTML page of dg.watch(html=...)")
        recording = Recording()
    outline._print("dg.watch: no notebook here, so a text outline: nodes as they are made, "
                   "gradients as backward computes them")
    handles = [events.subscribe(outline)]
    if recording is not None:
        handles.append(events.subscribe(recording))
    try:
        with watching_sources():  # PyTorch (dyngraph.torch) and other engines' code too
            yield outline
    finally:
        for handle in handles:
            handle.remove()
        outline.close()
        if recording is not None:
            recording._capture_sources()  # made in this process (NOTE [own source text])
            recording.to_html(html, title=title, source=source)
            outline._print(f"dg.watch: wrote the graph's page to {os.fspath(html)} "
                           "(open it in a browser)")
