"""A self-contained HTML page with a recording and the player: for slides and course pages.

The page embeds the widget bundle and the state as JSON (the snapshot as base64 MessagePack, as
the widget receives it), and calls the bundle's ``mountStandalone``; it needs no kernel, no
server and no network.
"""

from __future__ import annotations

import base64
import html
import json
import os
import uuid
from pathlib import Path
from typing import Any

from .view import STATIC


def _script_json(value: Any) -> str:
    """JSON that is safe inside <script>: no "</" can close the element early."""
    text = json.dumps(value, ensure_ascii=True, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _parts(state: dict[str, Any]) -> tuple[dict[str, Any], str, str]:
    """The state as JSON can carry it, the bundle as a data: URL, and the style sheet."""
    state = {**state, "snapshot": {"base64": base64.b64encode(state["snapshot"]).decode("ascii")}}
    bundle = (STATIC / "graphview.js").read_text(encoding="utf-8")
    css_path = STATIC / "graphview.css"
    css = css_path.read_text(encoding="utf-8") if css_path.exists() else ""
    bundle_url = "data:text/javascript;charset=utf-8," + _percent_encode(bundle)
    css = css.replace("</", "<\\/")  # nothing in the style sheet can close the element
    return state, bundle_url, css


def write_html(state: dict[str, Any], path: Any, title: str = "dyngraph") -> None:
    state, bundle_url, css = _parts(state)
    page = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>{css}</style>
</head>
<body>
<div id="dyngraph"></div>
<script type="module">
import {{ mountStandalone }} from "{bundle_url}";
const STATE = {_script_json(state)};
mountStandalone(document.getElementById("dyngraph"), STATE);
</script>
</body>
</html>
"""
    Path(os.fspath(path)).write_text(page, encoding="utf-8")


def html_fragment(state: dict[str, Any], placeholder: str) -> str:
    """The player as a notebook output (``text/html``): the bundle's Graphviz-WASM draws the
    graph in the browser, for a machine with no Graphviz of its own. ``placeholder`` is what
    shows where the output's script does not run (an untrusted notebook)."""
    state, bundle_url, css = _parts(state)
    element = f"dyngraph-{uuid.uuid4().hex}"
    return f"""<div id="{element}"><pre>{html.escape(placeholder)}</pre></div>
<style>{css}</style>
<script type="module">
import {{ mountStandalone }} from "{bundle_url}";
const el = document.getElementById("{element}");
el.replaceChildren();
mountStandalone(el, {_script_json(state)});
</script>
"""


def _percent_encode(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")
