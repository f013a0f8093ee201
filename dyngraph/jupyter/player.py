"""The player for the engine: a recording as a page, or as a notebook output drawn in the
browser. The engine reaches these two through ``dyngraph.player`` (NOTE [the player] there),
never by importing this layer."""

from __future__ import annotations

from typing import Any

from .html import html_fragment
from .view import GraphView


def write_page(recording: Any, path: Any, title: str = "dyngraph", source: bool = True) -> None:
    """One self-contained HTML file playing ``recording`` (``Recording.to_html``)."""
    GraphView.from_recording(recording, title=title, source=source).save_html(path)


def picture(recording: Any, text: str) -> dict[str, str]:
    """A notebook output that draws ``recording`` with the player (for a machine with no
    Graphviz); ``text`` is its plain-text form, also shown where the output's script does not
    run."""
    view = GraphView.from_recording(recording)
    try:
        state = view.state()
    finally:
        view.close()
    return {"text/html": html_fragment(state, text), "text/plain": text}
