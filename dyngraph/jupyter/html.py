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

from .front_end import STATIC, style_sheet


def _script_json(value: Any) -> str:
    """JSON that is safe inside <script>: no "</" can close the element early."""
    text = json.dumps(value, ensure_ascii=True, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _parts(state: dict[str, Any]) -> tuple[dict[str, Any], str, str]:
    """The state as JSON can carry it, the bundle as a data: URL, and the style sheet."""
    return (_json_state(state), *_bundle_parts())


def _json_state(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "snapshot": {"base64": base64.b64encode(state["snapshot"]).decode("ascii")}}


def _bundle_parts() -> tuple[str, str]:
    bundle = (STATIC / "graphview.js").read_text(encoding="utf-8")
    css = style_sheet()
    bundle_url = "data:text/javascript;charset=utf-8," + _percent_encode(bundle)
    css = css.replace("</", "<\\/")  # nothing in the style sheet can close the element
    return bundle_url, css


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


PLAYER_CLASS = "dyngraph-player"


def player_element(state: dict[str, Any], placeholder: str) -> str:
    """A player's place in a page of many (the course site, tools/build_site.py): its state as
    JSON data, mounted by the page's one ``page_loader()``; ``placeholder`` shows until then
    (or where scripts do not run)."""
    return (f'<div class="{PLAYER_CLASS}"><script type="application/json">'
            f"{_script_json(_json_state(state))}</script>"
            f"<pre>{html.escape(placeholder)}</pre></div>")


def page_loader() -> str:
    """The bundle and its style sheet, once per page, mounting every ``player_element`` of the
    page. The bundle travels as a data: URL (base64: a quarter smaller than percent-encoding):
    a page opened from disk (file://) may not import a module from a file next to it."""
    _, css = _bundle_parts()
    bundle = (STATIC / "graphview.js").read_bytes()
    bundle_url = "data:text/javascript;base64," + base64.b64encode(bundle).decode("ascii")
    return f"""<style>{css}</style>
<script type="module">
import {{ mountStandalone }} from "{bundle_url}";
for (const el of document.querySelectorAll("div.{PLAYER_CLASS}:not([data-mounted])")) {{
  el.setAttribute("data-mounted", "");
  const state = JSON.parse(el.querySelector('script[type="application/json"]').textContent);
  el.replaceChildren();
  mountStandalone(el, state);
}}
</script>
"""


def _percent_encode(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")
