"""Build the lessons as a static course site whose graphs play offline (``make site``).

    python tools/build_site.py [--out site] [notebooks/01_what_is_a_graph.ipynb ...]

Each lesson is executed (nbclient, with widget state kept), and every live graph widget in it
becomes the self-contained player that ``Recording.to_html()`` writes, built from the state the
widget saved (its ``snapshot`` holds the whole graph once a watch block ends: NOTE [state at
rest] in dyngraph/jupyter/view.py). The page is nbconvert's HTML (the ``lab`` template), with
the player's bundle once per page as a data: URL, so a page works from disk, with no kernel, no
server and no network. ``index.html`` lists the lessons.

NOTE [why nbconvert] nbconvert is already here (JupyterLab and nbval bring it), executes with
the same kernel as the tests, and writes one plain HTML file per notebook. Its widget support
loads @jupyter-widgets/html-manager and each widget's module (anywidget) from a CDN at view
time, which a course page opened offline cannot do; and Jupyter Book / MyST would add a Node or
Sphinx tool chain to do the same. The player needs neither: it is the widget's own front end.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import os
import re
import site
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def execute(notebook: Any, directory: Path, timeout: int = 600) -> None:
    """Run every cell in ``directory``, keeping the widgets' state in the notebook."""
    from nbclient import NotebookClient

    NotebookClient(notebook, timeout=timeout, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(directory)}}).execute()


def graph_states(notebook: Any) -> dict[str, dict[str, Any]]:
    """model id -> ``{header, snapshot, options}`` of every GraphView in the saved state."""
    saved = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    found = {}
    for model_id, model in saved.items():
        state = model.get("state", {})
        if not {"header", "options"} <= set(state):
            continue  # not a GraphView (a layout model, another widget)
        buffers = {tuple(b["path"]): b["data"] for b in model.get("buffers", [])}
        snapshot = base64.b64decode(buffers.get(("snapshot",), ""))
        found[model_id] = {"header": state["header"], "snapshot": snapshot,
                           "options": state["options"]}
    return found


PLACEHOLDER = "dyngraph: the graph's player (it runs in the browser, with JavaScript on)"


def to_players(notebook: Any) -> tuple[int, int]:
    """Replace each GraphView output by a player element; drop the widget state they used.
    Returns (players, players with an empty snapshot: a view left attached, drawn empty)."""
    from dyngraph.jupyter.html import player_element

    states = graph_states(notebook)
    widgets = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    # the picture output after each view (NOTE [a picture beside the widget] in
    # dyngraph/jupyter/view.py): the player is the picture here
    pictures = {f'data-dyngraph-picture="{widgets[i]["state"].get("picture_id")}"'
                for i in states}
    players = empty = 0
    for cell in notebook.cells:
        kept = []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            view = data.get(WIDGET_VIEW)
            if any(mark in data.get("text/html", "") for mark in pictures):
                continue
            kept.append(output)
            if not view or view.get("model_id") not in states:
                continue
            state = states[view["model_id"]]
            players += 1
            empty += not state["snapshot"]
            output["data"] = {"text/html": player_element(state, PLACEHOLDER),
                              "text/plain": PLACEHOLDER}
        if "outputs" in cell:
            cell["outputs"] = kept
    front_ends = {widgets.get(view, {}).get("state", {}).get("front_end") for view in states}
    for model_id in {*states, *front_ends}:  # the views, and the bundle they shared (FrontEnd)
        widgets.pop(model_id, None)
    if not any(m.get("model_name") not in ("LayoutModel",) for m in widgets.values()):
        notebook.metadata.pop("widgets", None)  # no widget left: no widget manager to load
    return players, empty


def install_prefixes() -> list[str]:
    """The directories of this build's installation, each ending in a separator, longest first:
    the site-packages folders, the Python prefixes, this checkout, the home directory."""
    folders = {sysconfig.get_path(name) for name in ("purelib", "platlib", "stdlib")}
    folders.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    folders.update({sys.prefix, sys.base_prefix, sys.exec_prefix, str(ROOT),
                    os.path.expanduser("~")})
    found = {os.path.join(os.path.realpath(f), "") for f in folders if f and os.path.isabs(f)}
    found |= {os.path.join(f, "") for f in folders if f and os.path.isabs(f)}
    return sorted(found - {os.sep}, key=len, reverse=True)


def without_install_paths(notebook: Any, prefixes: list[str] | None = None) -> int:
    """Name files in the outputs relative to their package or the checkout (``numpy/_core/
    fromnumeric.py``, ``dyngraph/ops/elementwise.py``), not by the builder's install path: a
    warning printed by a lesson names its file absolutely (NOTE [safe to share] in
    dyngraph/record.py). Returns how many output texts changed."""
    prefixes = install_prefixes() if prefixes is None else prefixes

    def relative(text: str) -> str:
        for prefix in prefixes:
            text = text.replace(prefix, "")
        return text

    changed = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if "text" in output:
                texts = [("text", output)]
            else:
                texts = [(key, output.get("data", {})) for key in ("text/plain",)
                         if key in output.get("data", {})]
            for key, holder in texts:
                before = holder[key]
                after = ([relative(t) for t in before] if isinstance(before, list)
                         else relative(before))
                if after != before:
                    holder[key], changed = after, changed + 1
            if "traceback" in output:
                traceback = [relative(line) for line in output["traceback"]]
                changed += traceback != output["traceback"]
                output["traceback"] = traceback
    return changed


def title_of(notebook: Any, fallback: str) -> str:
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


# NOTE [no CDN] nbconvert's lab template loads require.js, MathJax and mermaid from a CDN: a
# page opened offline would wait for them, and its formulas would read as raw $$...$$. This
# template is the lab template without those scripts (require.js served only widget managers,
# and every graph is a player here); formulas are MathML, made at build time (``math_to_mathml``),
# which browsers draw natively.
OFFLINE_TEMPLATE = "dyngraph_offline.html.j2"
OFFLINE_TEMPLATE_TEXT = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block extra_css %}<style>math[display="block"] { margin: 0.8em 0; font-size: 1.15em; }
code.dg-tex { display: block; margin: 0.8em 0; }</style>{% endblock extra_css %}
"""

CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)
# $$display$$ first, then $inline$ (a "$" followed by a space, or a lone "$", is not math)
DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$(?=\S)([^$\n]+?)(?<=\S)\$(?!\$)")


def math_to_mathml(markdown: str) -> str:
    """The markdown with each ``$$...$$`` and ``$...$`` formula as MathML (latex2mathml), which
    browsers draw with no script; without latex2mathml, the TeX itself in a code element, to be
    read as written (never a CDN's script)."""
    try:
        from latex2mathml.converter import convert
    except ImportError:
        convert = None

    def formula(tex: str, display: str) -> str:
        tex = tex.strip()
        if convert is None:
            return f'<code class="dg-tex">{html.escape(tex)}</code>'
        try:
            return convert(tex, display=display)
        except Exception:  # noqa: BLE001 - a formula it cannot read stays TeX, readable
            return f'<code class="dg-tex">{html.escape(tex)}</code>'

    def convert_prose(text: str) -> str:
        text = DISPLAY_MATH.sub(lambda m: "\n" + formula(m[1], "block") + "\n", text)
        return INLINE_MATH.sub(lambda m: formula(m[1], "inline"), text)

    # code (fenced blocks, `spans`) is left as written: a "$" there is code, not math
    pieces = CODE.split(markdown)
    return "".join(piece if k % 2 else convert_prose(piece) for k, piece in enumerate(pieces))


def page(notebook: Any, title: str, nav: str) -> str:
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    from dyngraph.jupyter.html import PLAYER_CLASS, page_loader

    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = math_to_mathml(cell.source)
    exporter = HTMLExporter(template_name="lab", template_file=OFFLINE_TEMPLATE,
                            extra_loaders=[DictLoader({OFFLINE_TEMPLATE: OFFLINE_TEMPLATE_TEXT})])
    body, _ = exporter.from_notebook_node(notebook, resources={"metadata": {"name": title}})
    at = body.index(">", body.index("<body")) + 1
    body = body[:at] + nav + body[at:]
    if PLAYER_CLASS in body:
        end = body.rindex("</body>")
        body = body[:end] + page_loader() + body[end:]
    return body


def nav_bar(entries: list[tuple[str, str]], k: int) -> str:
    links = ['<a href="index.html">all lessons</a>']
    if k > 0:
        links.append(f'<a href="{entries[k - 1][0]}">&larr; {html.escape(entries[k - 1][1])}</a>')
    if k + 1 < len(entries):
        links.append(f'<a href="{entries[k + 1][0]}">{html.escape(entries[k + 1][1])} &rarr;</a>')
    return ('<nav class="dg-site-nav" style="padding:8px 16px;font:14px sans-serif;'
            'border-bottom:1px solid #ccc;display:flex;gap:24px">' + "".join(links) + "</nav>")


def index_page(entries: list[tuple[str, str]]) -> str:
    items = "\n".join(f'<li><a href="{href}">{html.escape(title)}</a></li>'
                      for href, title in entries)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dyngraph: the lessons</title></head>
<body style="font:16px/1.5 sans-serif;max-width:46em;margin:2em auto">
<h1>dyngraph: watching define-by-run autograd</h1>
<p>The lessons, executed. Every graph is a player: press play, step, scrub, click a node.
The pages need no kernel, no server and no network.</p>
<ol>
{items}
</ol>
</body></html>
"""


def build(notebooks: list[Path], out: Path, log: Any = print) -> dict[str, Any]:
    """Execute and convert ``notebooks`` into ``out``; returns what was built."""
    import nbformat

    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    executed = []
    failed = []
    for path in notebooks:
        t = time.monotonic()
        notebook = nbformat.read(str(path), as_version=4)
        try:
            execute(notebook, path.parent)
        except Exception as error:  # noqa: BLE001 - report and go on with the other lessons
            failed.append((path.name, str(error).splitlines()[-1][:200] if str(error) else ""))
            log(f"FAILED {path.name}: {failed[-1][1]}")
            continue
        without_install_paths(notebook)
        players, empty = to_players(notebook)
        executed.append((path, notebook, title_of(notebook, path.stem), players, empty))
        log(f"{path.name}: executed in {time.monotonic() - t:.1f} s, {players} graphs"
            + (f" ({empty} empty)" if empty else ""))
    entries = [(f"{p.stem}.html", title) for p, _, title, _, _ in executed]
    for k, (path, notebook, title, _, _) in enumerate(executed):
        (out / f"{path.stem}.html").write_text(page(notebook, title, nav_bar(entries, k)),
                                                encoding="utf-8")
    (out / "index.html").write_text(index_page(entries), encoding="utf-8")
    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    summary = {"pages": [e[0] for e in entries], "failed": failed,
               "graphs": sum(e[3] for e in executed), "empty_graphs": sum(e[4] for e in executed),
               "seconds": round(time.monotonic() - started, 1), "bytes": size}
    log(f"site: {len(entries)} lessons + index.html in {out}, {summary['graphs']} graphs, "
        f"{size / 1e6:.1f} MB, {summary['seconds']} s" + (f"; FAILED: {failed}" if failed else ""))
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="lessons to build (default: notebooks/*.ipynb)")
    parser.add_argument("--out", type=Path, default=ROOT / "site")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    summary = build([p.resolve() for p in notebooks], args.out)
    (args.out / "build.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return 1 if summary["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
