"""``dg.watch()`` and the ``%%dyngraph`` cell magic: a live view of the code that runs inside."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dyngraph

from ..spine.reporter import watching_sources
from .view import GraphView


@contextmanager
def watch(view: GraphView | None = None, display: bool | None = None,
          html: str | os.PathLike | None = None, **options: Any) -> Iterator[GraphView]:
    """Display a live GraphView and record everything built inside the block by this thread
    (listening is per thread: another thread's ops are not shown).

    >>> with dg.watch(pace=0.3) as view:
    ...     h = (x @ W).tanh()
    ...     loss = h.sum()
    ...     loss.backward()

    ``pace`` (seconds per new source line) slows a fast cell down to human speed; the other
    options are GraphView's.

    Backward in a cell of its own: ``with dg.watch(): loss.backward()`` shows the whole graph
    behind ``loss`` and the gradients flowing, even when the loss was built in an earlier cell
    (the engine announces the graph it holds; values of intermediates are not known then, nor
    data and constants that need no gradient). To follow one learner across cells in ONE view,
    pass the view on: it continues the same timeline and draws no node twice::

        with dg.watch() as view:        # cell 1: displayed here, the forward pass
            loss = model(x).sum()
        with dg.watch(view):            # cell 2: the same view, now the backward pass
            loss.backward()

    ``display``: show the view in this cell's output. By default a new view is shown and a view
    passed in is not (it is on screen already); ``display=True`` shows it here too.

    ``html="graph.html"``: when the block ends, also write the view as a self-contained page
    (``GraphView.save_html``) and print its path.
    """
    if display is None:
        display = view is None
    if view is None:
        view = GraphView(**options)
    elif options:
        raise TypeError(
            f"dg.watch(view, ...) continues an existing view, whose options are set: got "
            f"{', '.join(sorted(options))}"
        )
    if display:
        from IPython.display import display as show

        show(view)
    view.attach()
    try:
        with watching_sources():  # PyTorch (dyngraph.torch) and other engines' code too
            yield view
    finally:
        view.detach()
        if html is not None:
            view.save_html(html)
            print(f"dg.watch: wrote the graph's page to {os.fspath(html)} (open it in a browser)")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext dyngraph``: adds the ``%%dyngraph`` cell magic."""
    from IPython.core.magic import register_cell_magic

    @register_cell_magic("dyngraph")
    def dyngraph_magic(line: str, cell: str) -> None:
        """%%dyngraph [--pace SECONDS] [--lr]: run the cell and watch its graph live."""
        options = _parse_magic_line(line)
        with dyngraph.watch(**options):  # the widget in a kernel, an outline in a terminal
            ipython.run_cell(cell, store_history=False)  # IPython shows any error itself


def _parse_magic_line(line: str) -> dict[str, Any]:
    words = line.split()
    options: dict[str, Any] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--pace" and i + 1 < len(words):
            try:
                options["pace"] = float(words[i + 1])
            except ValueError:
                message = f"%%dyngraph: --pace needs seconds, got {words[i + 1]!r}"
                raise ValueError(message) from None
            i += 2
        elif word == "--lr":
            options["rankdir"] = "LR"
            i += 1
        elif word.startswith("--title="):
            options["title"] = word.split("=", 1)[1]
            i += 1
        else:
            raise ValueError(
                f"%%dyngraph: unknown option {word!r}; use --pace SECONDS, --lr, --title=TEXT"
            )
    return options
