"""Optional packages: which extra of dyngraph brings each one, and the error that says so.

``pip install dyngraph`` brings numpy alone. Everything else comes with an extra:

    pip install "dyngraph[jupyter]"   the live widget, dg.watch() in a notebook, HTML pages,
                                      plots (anywidget, ipywidgets, IPython, matplotlib, ...)
    pip install "dyngraph[gpu]"       CuPy, for device="cuda"
    pip install "dyngraph[torch]"     PyTorch, for dyngraph.torch (PyTorch code as an event source)
    pip install "dyngraph[micrograd]" micrograd, for dyngraph.micrograd (the third event source)

(dyngraph is not on PyPI yet: imported from its checkout, the commands name the checkout,
``pip install -e "/path/to/dyngraph[jupyter]"``; see ``install_command``.)

Every place that needs one of them imports it through ``require()`` (or a ``with needs(...):``
block around its imports), so a missing package is reported in one way everywhere: what needed it
and the command that installs it, instead of a bare ``No module named 'anywidget'``.

This module imports nothing optional itself: the engine may import it (``import dyngraph`` stays
numpy-only).
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

# the extras of pyproject.toml that bring optional packages
EXTRAS = ("jupyter", "gpu", "torch", "micrograd")


def install_command(extra: str) -> str:
    """The command that installs an extra: ``pip install "dyngraph[jupyter]"``; for a dyngraph
    installed from its checkout (it is not on PyPI yet), the checkout's own:
    ``pip install -e "/path/to/dyngraph[jupyter]"``, which works from any directory."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}: dyngraph's extras are {', '.join(EXTRAS)}")
    checkout = _checkout()
    if checkout is not None:
        return f'pip install -e "{checkout}[{extra}]"'
    return f'pip install "dyngraph[{extra}]"'


@functools.cache
def _checkout() -> str | None:
    """The folder of the checkout this dyngraph is imported from, or None (a wheel's install)."""
    root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    try:
        with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as f:
            is_ours = 'name = "dyngraph"' in f.read()
    except OSError:
        return None
    return root if is_ours else None


class MissingExtra(ModuleNotFoundError):
    """An optional package is not installed. The message says what needed it and which extra
    installs it; ``.name`` is the missing module and ``.extra`` the extra.

    A ``ModuleNotFoundError`` (so an ``ImportError``): code that falls back when a package is
    missing catches it as it caught the bare error before."""

    def __init__(self, module: str, extra: str, needed_for: str) -> None:
        super().__init__(
            f"{needed_for} needs the Python package '{module}', which is not installed: "
            f"{install_command(extra)}",
            name=module,
        )
        self.extra = extra


@contextmanager
def needs(extra: str, needed_for: str) -> Iterator[None]:
    """Imports inside the block that fail for a missing package raise ``MissingExtra`` naming
    ``extra``. For a module's own imports, where ``require()`` would not read as an import:

    >>> with needs("torch", "dyngraph.torch"):
    ...     import torch
    ...     from torch.overrides import TorchFunctionMode
    """
    try:
        yield
    except MissingExtra:
        raise  # already says which extra (a require() inside the block)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        # NOTE: a module of dyngraph itself that is not found is a bug of ours, not a missing
        # extra: that error goes on as it is.
        if not missing or missing.split(".")[0] == "dyngraph":
            raise
        raise MissingExtra(missing.split(".")[0], extra, needed_for) from exc


def require(module: str, extra: str, needed_for: str) -> ModuleType:
    """Import ``module`` and return it; when it (or a package it needs) is not installed, raise
    ``MissingExtra`` saying that ``needed_for`` needs it and how to install ``extra``.

    >>> Figure = require("matplotlib.figure", "jupyter", "dyngraph.plot").Figure
    """
    with needs(extra, needed_for):
        return importlib.import_module(module)
