"""Helpers shared by several test files: reading DOT back, running with the cycle collector
off (so that only reference counting can free anything), and loading hand-made recordings."""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from benchmarks.harness import collect_all


@contextmanager
def cycle_collector_off() -> Iterator[None]:
    """Only reference counting may free anything inside the block."""
    was_enabled = gc.isenabled()
    collect_all()  # what earlier tests left is gone first (NOTE [settled before measuring])
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# ----------------------------------------------------------------------------- recordings


def write_recording(tmp_path: Path, document: object, name: str = "rec.json") -> Path:
    """A recording file holding ``document`` (JSON-encoded; a string is written as it is)."""
    path = tmp_path / name
    text = document if isinstance(document, str) else json.dumps(document)
    path.write_text(text, encoding="utf-8")
    return path


def refused_recording(tmp_path: Path, document: object, *needles: str) -> str:
    """load_recording refuses ``document`` with a ValueError naming each of ``needles``;
    returns the message."""
    from dyngraph.recording_io import load_recording

    with pytest.raises(ValueError) as info:
        load_recording(write_recording(tmp_path, document))
    message = str(info.value)
    for needle in needles:
        assert needle in message, message
    return message


def shared_timeline(recording: object) -> list[tuple]:
    """``recording.timeline`` with each backward() line's file named as saved files, pages and
    views name it (``shared_path``, NOTE [safe to share] in record.py): what a live recording's
    timeline becomes once saved and loaded, or replayed by a view."""
    from dyngraph.record import shared_path

    return [(*step[:2], (shared_path(step[2][0]), *step[2][1:]))
            if step[0] == "backward_started" and step[2] is not None else step
            for step in recording.timeline]  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- reading DOT

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|->|[{}\[\];=,]|[^\s{}\[\];=,"]+', re.S)


def _unquote(token: str) -> str:
    """The value of a DOT token: a quoted string loses its quotes and its escaped quotes."""
    if not token.startswith('"'):
        return token
    return re.sub(r'\\(["\\])', lambda m: '"' if m.group(1) == '"' else "\\\\", token[1:-1])


def statements(dot: str) -> list[tuple[list[str], dict[str, str]]]:
    """Each DOT statement as (the names before its attributes, its attributes): several
    attribute lists are merged, the later winning, as Graphviz does."""
    out = []
    tokens: list[str] = []
    for token in [*_TOKEN.findall(dot), ";"]:
        if token not in (";", "{", "}"):
            tokens.append(token)
            continue
        if tokens:
            names, attrs = [], {}
            for i, tok in enumerate(tokens):
                if tok == "=":
                    attrs[tokens[i - 1]] = _unquote(tokens[i + 1])
            for i, tok in enumerate(tokens):
                if tok in ("[", "=") or (i + 1 < len(tokens) and tokens[i + 1] == "="):
                    break
                if tok != "->":
                    names.append(tok)
            out.append((names, attrs))
        tokens = []
    return out


def nodes_of(dot: str) -> dict[str, dict[str, str]]:
    """Node statements by name (not graph/node/edge defaults, not edges or subgraphs)."""
    return {
        names[0]: attrs
        for names, attrs in statements(dot)
        if len(names) == 1 and names[0] not in ("graph", "node", "edge") and "label" in attrs
        and not names[0].startswith("cluster")
    }


def edges_of(dot: str) -> dict[tuple[str, str], dict[str, str]]:
    return {(names[0], names[1]): attrs for names, attrs in statements(dot) if len(names) == 2
            and names[0] not in ("subgraph", "digraph")}


def label_lines(attrs: dict[str, str]) -> list[str]:
    """The lines a label shows (DOT's \\n breaks; our labels never hold other escapes)."""
    return attrs["label"].split("\\n")


def renumber(dot: str) -> str:
    """Node names n<id> renumbered n1, n2, ... in order of first appearance."""
    names: dict[str, str] = {}
    return re.sub(r"(?<![\\\w])n\d+\b",
                  lambda m: names.setdefault(m.group(0), f"n{len(names) + 1}"), dot)


def node_of(dot: str, node_id: int) -> dict[str, str]:
    return nodes_of(dot)[f"n{node_id}"]


# ----------------------------------------------------------------------------- golden
