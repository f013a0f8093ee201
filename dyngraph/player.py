"""The browser player, as the engine reaches it without importing it.

NOTE [the player] The widget's player draws a recording in the browser: Graphviz compiled to
WebAssembly lays the graph out, and its timeline plays the run step by step. It belongs to the
Jupyter layer (``dyngraph/jupyter/player.py``), which the engine never imports, not even inside
a function (the one-way floors that tests/test_layering.py enforces). Two engine features need
it all the same:

- ``Recording.to_html`` writes a self-contained page that is the player;
- a picture on a machine with no Graphviz at all falls back to the player
  (``graphviz_render.picture``, NOTE [which Graphviz]), rather than a wall of DOT text.

So the engine asks this module, and the package's front door, ``dyngraph/__init__.py`` (where
the layers meet, as ``dg.watch`` does), connects the loader that imports the Jupyter layer the
first time someone asks. ``import dyngraph`` stays numpy-only; the engine names no widget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_loader: Callable[[], Any] | None = None


def connect(loader: Callable[[], Any]) -> None:
    """Make ``loader()`` the way to the player: it returns a module with ``write_page`` and
    ``picture`` (dyngraph/jupyter/player.py), importing it on first use."""
    global _loader
    _loader = loader


def load() -> Any:
    """The player's module. Raises ImportError saying what to install where the jupyter extra
    is missing (dyngraph.extras.needs)."""
    if _loader is None:
        raise ImportError("dyngraph's browser player is not connected: import dyngraph itself "
                          "(its __init__ connects the player) rather than one of its modules")
    return _loader()
