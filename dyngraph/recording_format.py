"""The file format of a saved recording: versioned JSON, its limits, and the writer.

``dyngraph/recording_io.py`` is the strict reader; this module is what both sides share, and
what ``Recording.save`` needs, below the Recording (it reads a recording's attributes and
imports nothing of record.py, so saving and loading are no circle of imports).

NOTE [symmetric limits] What ``save_recording`` writes, ``load_recording`` of the same version
reads. The loader's limits bound what a file can make a renderer do (a page, a DOT text and an
SVG grow at most linearly in the file's size): a string is at most MAX_STRING characters, a
scope at most MAX_SCOPE_DEPTH names deep, a file's source text at most MAX_SOURCE_CHARS
characters. Saving applies the same limits to what a live run can exceed, by cutting: a longer
string is cut to MAX_STRING characters ending in "…", a deeper scope keeps its outermost
MAX_SCOPE_DEPTH names. Nothing else a live run records can exceed a limit (previews have at most
64 values; numpy arrays at most 64 dimensions).

Non-finite numbers in previews (a NaN is exactly what a learner wants to see) are written as
the strings "NaN", "Infinity" and "-Infinity". save -> load -> save is byte-identical.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from . import safe_json
from .spine.events import shared_path

FORMAT = "dyngraph-recording"
SCHEMA_VERSION = 5  # 2: "edge_grad" timeline steps (what each edge carried back); 3: "sources";
# 4: the backward() line in "backward_started" steps; 5: "passes"
KNOWN_SCHEMA_VERSIONS = (1, 2, 3, 4, 5)  # every schema version the loader reads; others are refused
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_DEPTH = 12  # the deepest a valid file goes is 5 ($ / nodes / [i] / where / [j])
MAX_STRING = 100_000  # characters in a name, a file name, an error message
MAX_SCOPE_DEPTH = 64  # names in a node's scope (dg.scope / nn.Module nesting)
MAX_NDIM = 64  # numpy's own limit
MAX_NUMEL = 2**48
MAX_SOURCE_CHARS = 20_000  # source text kept per file (notebook cells and lessons are short)
_CUT = "\u2026"  # ends a string cut to MAX_STRING characters (NOTE [symmetric limits])


# ----------------------------------------------------------------------------- saving


_PLAIN = 1e18  # a number of smaller magnitude is written as it is (fast path of json_values)
_LARGEST_INT = 10**safe_json.MAX_INT_DIGITS  # an integer this large is written as a float


def json_number(v: Any) -> Any:
    """A number as JSON data: NaN and the infinities as "NaN", "Infinity", "-Infinity"; an
    integer with more digits than the loader reads (a Python int from another engine) as a
    float (NOTE [symmetric limits])."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= _LARGEST_INT:
        v = float(v) if v.bit_length() < 1024 else (math.inf if v > 0 else -math.inf)
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    return v


def json_values(values: tuple | None) -> list | None:
    """A preview as JSON data (see json_number); finite numbers pass through untouched."""
    if values is None:
        return None
    return [v if -_PLAIN < v < _PLAIN else json_number(v) for v in values]  # NaN fails too


def within_limit(text: str | None) -> str | None:
    """``text`` cut to MAX_STRING characters, ending in "…" when cut (NOTE [symmetric
    limits])."""
    if text is None or len(text) <= MAX_STRING:
        return text
    return text[: MAX_STRING - len(_CUT)] + _CUT


def _where_out(where: tuple | None) -> list | None:
    if where is None:
        return None
    file, line, function, *rest = where
    return [within_limit(shared_path(file)), line, within_limit(function),
            *(within_limit(v) if isinstance(v, str) else v for v in rest)]


def _sources_out(recording: Any) -> dict[str, str]:
    """The recording's source text by the file names the saved nodes and backward passes use,
    for the files they name (the first text of two files that share a name)."""
    named = {where[0] for where in recording.source_lines()}
    sources: dict[str, str] = {}
    for file, text in recording.sources.items():
        if file in named and text:
            sources.setdefault(within_limit(shared_path(file)), text[:MAX_SOURCE_CHARS])
    return sources


def to_document(recording: Any, source: bool = True) -> dict[str, Any]:
    """The recording (a Recording, read by its attributes) as plain JSON data (the schema the
    loader checks); ``source=False``: without its source text."""
    nodes = []
    for node in sorted(recording.nodes.values(), key=lambda n: n.order):
        nodes.append(
            {
                "id": node.id, "kind": node.kind, "op": within_limit(node.op),
                "name": within_limit(node.name), "shape": list(node.shape),
                "dtype": within_limit(node.dtype), "device": within_limit(node.device),
                "requires_grad": node.requires_grad, "preview": json_values(node.preview),
                "scope": [within_limit(s) for s in node.scope[:MAX_SCOPE_DEPTH]],
                "where": _where_out(node.where),
                "order": node.order, "saved_bytes": node.saved_bytes,
                "grad_preview": json_values(node.grad_preview),
                "grad_norm": json_number(node.grad_norm), "accumulated": node.accumulated,
                "freed": node.freed, "recomputed": node.recomputed,
                "elapsed": node.elapsed, "version": node.version, "check": node.check,
            }
        )
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "max_nodes": recording.max_nodes,
        "max_events": recording.max_events,
        "dropped_nodes": recording.dropped_nodes,
        "dropped_events": recording.dropped_events,
        "nodes": nodes,
        "edges": [[e.src, e.dst, e.position] for e in recording.edges],
        "timeline": [_step_out(step) for step in recording.timeline],
        "sources": _sources_out(recording) if source else {},
        "passes": [[json_number(p.loss), json_number(p.grad_norm), p.leaves, p.root]
                   for p in recording.passes()],
    }


def _step_out(step: tuple) -> list:
    kind = step[0]
    if kind == "edge_grad":
        _, node, input_id, position, preview, reduced_from = step
        return [kind, node, input_id, position, json_values(preview),
                None if reduced_from is None else list(reduced_from)]
    if kind == "backward_started":  # the backward() line, named as nodes' lines are
        return [kind, step[1], _where_out(step[2])]
    return [kind, *(list(x) if isinstance(x, tuple) else within_limit(x)
                    if isinstance(x, str) else x for x in step[1:])]


def dumps(recording: Any, source: bool = True) -> str:
    # ASCII-only: a name may hold any character, even a lone surrogate, and still round-trip.
    return json.dumps(to_document(recording, source), ensure_ascii=True, separators=(",", ":"),
                      allow_nan=False) + "\n"


def save_recording(recording: Any, path: Any, source: bool = True) -> None:
    """Write ``recording`` as versioned JSON (``source=False``: without its source text)."""
    with open(os.fspath(path), "w", encoding="utf-8", newline="\n") as f:
        f.write(dumps(recording, source))
