"""Loading recordings: versioned JSON, validated strictly, never pickle. The format, its limits
and the writer are recording_format.py's (NOTE [symmetric limits] there); saving and loading are
imported from here alike.

A saved recording is untrusted input (a file from a course page, a student's upload), so
``load_recording`` checks, in this order: the file size (before reading), that it is not a pickle
or npz (refused outright), the nesting depth (before parsing, so a deep file cannot cause a
RecursionError), then while parsing NaN/Infinity tokens, duplicate keys and huge numbers, and
finally the schema: unknown fields, wrong types, edges to missing nodes, cycles, absurd shapes.
Every error is a ValueError naming the JSON path, e.g. ``$.nodes[3].shape[1]``.

A recording carries its own source text, ``sources`` (schema 3; NOTE [own source text] in
record.py): the loader checks it names only files its nodes or its backward passes name, within
the limits above. A ``backward_started`` step names the line that called ``backward()``
(schema 4: ``["backward_started", root, where or null]``; before, ``[..., root]`` alone).
Each finished backward pass's loss and gradient norm are ``passes`` (schema 5: ``[[loss or
null, grad_norm or null, leaves, root], ...]``, NOTE [loss and gradient norm per pass] in
record.py; a file written before carries none).
"""

from __future__ import annotations

import json
import math
from typing import Any

from . import safe_json
from .graph import CONSTANT, LEAF, OP, PARAMETER, Edge, Node
from .record import BackwardPass, Recording
from .recording_format import (  # noqa: F401 - re-exported: saving and loading, one import
    FORMAT,
    KNOWN_SCHEMA_VERSIONS,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_NDIM,
    MAX_NUMEL,
    MAX_SCOPE_DEPTH,
    MAX_SOURCE_CHARS,
    MAX_STRING,
    SCHEMA_VERSION,
    dumps,
    json_number,
    json_values,
    save_recording,
    to_document,
    within_limit,
)

_NODE_FIELDS = {
    "id", "kind", "op", "name", "shape", "dtype", "device", "requires_grad", "preview", "scope",
    "where", "order", "saved_bytes", "grad_preview", "grad_norm", "accumulated", "freed",
    "recomputed", "elapsed", "version", "check",
}
_TOP_FIELDS = {
    "format", "schema_version", "max_nodes", "max_events", "dropped_nodes", "dropped_events",
    "nodes", "edges", "timeline", "sources", "passes",
}
_TOP_FIELDS_BEFORE_5 = _TOP_FIELDS - {"passes"}  # schema 3 and 4: no passes
_TOP_FIELDS_BEFORE_3 = _TOP_FIELDS_BEFORE_5 - {"sources"}  # schema 1 and 2 carry no source text
_KINDS = {LEAF, PARAMETER, CONSTANT, OP}
_STEP_ARITY = {  # timeline step kind -> the types of its fields after the kind ("node": an id
    # of one of the recording's nodes; a backward's root may be a node the recorder dropped)
    "node": ("node",), "grad": ("node",), "freed": (list,), "version": ("node", int),
    "backward_started": (int, "where or null"), "backward_finished": (int,),
    "backward_failed": (int, str),
    "edge_grad": ("node", "node", int, "values", "shape or null"),  # node, input, position,
}  # preview, and the shape before the un-broadcast sum
_STEP_ARITY_BEFORE_4 = {**_STEP_ARITY, "backward_started": (int,)}  # no backward() line
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}

# ----------------------------------------------------------------------------- loading


def load_recording(path: Any, max_bytes: int = MAX_FILE_BYTES) -> Recording:
    """Read a recording saved by ``Recording.save``; raises ValueError for anything else.

    >>> rec = dg.load_recording("lesson3.json")
    """
    return _from_document(safe_json.read(path, "dyngraph recording", max_bytes, MAX_DEPTH))


def loads(raw: bytes | str, source: str = "<string>") -> Recording:
    """Parse and validate a recording from its JSON text."""
    return _from_document(safe_json.parse(raw, "dyngraph recording", MAX_DEPTH, source))


# ----------------------------------------------------------------------------- the schema


def _fail(path: str, message: str) -> None:
    raise ValueError(f"{path}: {message}")


def _expect(value: Any, types: Any, path: str, what: str) -> Any:
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        _fail(path, f"expected {what}, got a boolean")
    if not isinstance(value, types):
        _fail(path, f"expected {what}, got {type(value).__name__}")
    if isinstance(value, str) and len(value) > MAX_STRING:
        _fail(path, f"string longer than {MAX_STRING} characters")
    return value


def _count(value: Any, path: str) -> int:
    _expect(value, int, path, "a non-negative integer")
    if value < 0:
        _fail(path, "expected a non-negative integer")
    return value


def _optional_str(value: Any, path: str) -> str | None:
    return None if value is None else _expect(value, str, path, "a string or null")


def _number_in(value: Any, path: str) -> Any:
    if isinstance(value, str):
        if value not in _NONFINITE:
            _fail(path, "expected a number (or 'NaN', 'Infinity', '-Infinity')")
        return _NONFINITE[value]
    return _expect(value, (int, float, bool), path, "a number")


def _values_in(value: Any, path: str) -> tuple | None:
    if value is None:
        return None
    _expect(value, list, path, "a list of numbers")
    if len(value) > 64:
        _fail(path, "preview longer than 64 values")
    return tuple(_number_in(v, f"{path}[{i}]") for i, v in enumerate(value))


def _shape_in(value: Any, path: str) -> tuple[int, ...]:
    _expect(value, list, path, "a shape (a list of sizes)")
    if len(value) > MAX_NDIM:
        _fail(path, f"absurd shape: more than {MAX_NDIM} dimensions")
    shape = tuple(_count(n, f"{path}[{i}]") for i, n in enumerate(value))
    if math.prod(shape) > MAX_NUMEL:
        _fail(path, f"absurd shape {shape}: more than {MAX_NUMEL} elements")
    return shape


def _where_in(value: Any, path: str) -> tuple | None:
    if value is None:
        return None
    _expect(value, list, path, "[file, line, function, cell, target, loop] or null")
    if len(value) not in (4, 5, 6):  # recordings made before SourceLine.target have four,
        _fail(path, "expected [file, line, function, cell, target, loop]")  # before .loop five
    file = _expect(value[0], str, f"{path}[0]", "a file name")
    line = _count(value[1], f"{path}[1]")
    function = _expect(value[2], str, f"{path}[2]", "a function name")
    cell = None if value[3] is None else _count(value[3], f"{path}[3]")
    target = value[4] if len(value) >= 5 else None
    if target is not None:
        _expect(target, str, f"{path}[4]", "a variable name")
    if len(value) < 6:
        return (file, line, function, cell, target)
    loop = None if value[5] is None else _count(value[5], f"{path}[5]")
    return (file, line, function, cell, target, loop)


def _node_in(value: Any, path: str) -> Node:
    _expect(value, dict, path, "a node object")
    unknown = set(value) - _NODE_FIELDS
    if unknown:
        _fail(f"{path}.{sorted(unknown)[0]}", "unknown field")
    missing = _NODE_FIELDS - set(value)
    if missing:
        _fail(path, f"missing field {sorted(missing)[0]!r}")
    kind = _expect(value["kind"], str, f"{path}.kind", "a node kind")
    if kind not in _KINDS:
        _fail(f"{path}.kind", f"unknown node kind {kind!r}")
    check = _optional_str(value["check"], f"{path}.check")
    if check not in (None, "pass", "fail"):
        _fail(f"{path}.check", "expected 'pass', 'fail' or null")
    elapsed = value["elapsed"]
    if elapsed is not None:
        elapsed = _expect(elapsed, (int, float), f"{path}.elapsed", "seconds")
    grad_norm = None if value["grad_norm"] is None else _number_in(
        value["grad_norm"], f"{path}.grad_norm")
    scope = _expect(value["scope"], list, f"{path}.scope", "a list of names")
    if len(scope) > MAX_SCOPE_DEPTH:
        _fail(f"{path}.scope", f"a scope more than {MAX_SCOPE_DEPTH} names deep")
    return Node(
        id=_count(value["id"], f"{path}.id"),
        kind=kind,
        op=_expect(value["op"], str, f"{path}.op", "an op name"),
        name=_optional_str(value["name"], f"{path}.name"),
        shape=_shape_in(value["shape"], f"{path}.shape"),
        dtype=_expect(value["dtype"], str, f"{path}.dtype", "a dtype name"),
        device=_expect(value["device"], str, f"{path}.device", "a device name"),
        requires_grad=_expect(value["requires_grad"], bool, f"{path}.requires_grad", "a bool"),
        preview=_values_in(value["preview"], f"{path}.preview") or (),
        scope=tuple(_expect(s, str, f"{path}.scope[{i}]", "a name") for i, s in enumerate(scope)),
        where=_where_in(value["where"], f"{path}.where"),
        order=_count(value["order"], f"{path}.order"),
        saved_bytes=_count(value["saved_bytes"], f"{path}.saved_bytes"),
        grad_preview=_values_in(value["grad_preview"], f"{path}.grad_preview"),
        grad_norm=grad_norm,
        accumulated=_expect(value["accumulated"], bool, f"{path}.accumulated", "a bool"),
        freed=_expect(value["freed"], bool, f"{path}.freed", "a bool"),
        recomputed=_expect(value["recomputed"], bool, f"{path}.recomputed", "a bool"),
        elapsed=elapsed,
        version=_count(value["version"], f"{path}.version"),
        check=check,
    )


def _from_document(document: Any) -> Recording:
    _expect(document, dict, "$", "a JSON object")
    if document.get("format") != FORMAT:
        _fail("$.format", f"not a dyngraph recording (expected format {FORMAT!r})")
    version = _count(document.get("schema_version"), "$.schema_version")
    if version > SCHEMA_VERSION:
        _fail(
            "$.schema_version",
            f"this recording was written by a newer dyngraph (schema {version}; this one reads "
            f"up to {SCHEMA_VERSION}): upgrade dyngraph to load it",
        )
    if version not in KNOWN_SCHEMA_VERSIONS:  # 0 too: no dyngraph ever wrote it
        _fail(
            "$.schema_version",
            f"this recording has schema_version {version}, which no dyngraph writes (this one "
            f"reads {', '.join(map(str, KNOWN_SCHEMA_VERSIONS))}): the file is damaged or was "
            "not written by dyngraph",
        )
    fields = (_TOP_FIELDS if version >= 5 else _TOP_FIELDS_BEFORE_5 if version >= 3
              else _TOP_FIELDS_BEFORE_3)
    unknown = set(document) - fields
    if unknown:
        _fail(f"$.{sorted(unknown)[0]}", "unknown field")
    missing = fields - set(document)
    if missing:
        _fail("$", f"missing field {sorted(missing)[0]!r}")
    recording = Recording(
        max_nodes=max(_count(document["max_nodes"], "$.max_nodes"), 1),
        max_events=max(_count(document["max_events"], "$.max_events"), 1),
    )
    recording.dropped_nodes = _count(document["dropped_nodes"], "$.dropped_nodes")
    recording.dropped_events = _count(document["dropped_events"], "$.dropped_events")

    for i, value in enumerate(_expect(document["nodes"], list, "$.nodes", "a list of nodes")):
        node = _node_in(value, f"$.nodes[{i}]")
        if node.id in recording.nodes:
            _fail(f"$.nodes[{i}].id", f"duplicate node id {node.id}")
        recording.nodes[node.id] = node

    for i, value in enumerate(_expect(document["edges"], list, "$.edges", "a list of edges")):
        path = f"$.edges[{i}]"
        _expect(value, list, path, "[src, dst, position]")
        if len(value) != 3:
            _fail(path, "expected [src, dst, position]")
        src, dst, position = (_count(v, f"{path}[{j}]") for j, v in enumerate(value))
        for j, end in ((0, src), (1, dst)):
            if end not in recording.nodes:
                _fail(f"{path}[{j}]", f"edge to a missing node {end}")
        recording.edges.append(Edge(src, dst, position))
    _check_acyclic(recording)

    steps = _expect(document["timeline"], list, "$.timeline", "a list of steps")
    announced: set[int] = set()
    arity = _STEP_ARITY if version >= 4 else _STEP_ARITY_BEFORE_4
    for i, value in enumerate(steps):
        step = _step_in(value, f"$.timeline[{i}]", recording, arity)
        if step[0] == "backward_started" and len(step) == 2:
            step = (*step, None)  # schema 1 to 3: the line that called backward() is unknown
        if step[0] == "node":
            if step[1] in announced:
                _fail(f"$.timeline[{i}][1]", f"node {step[1]} is made twice")
            announced.add(step[1])
        recording.timeline.append(step)
    if version >= 3:
        recording.sources = _sources_in(document["sources"], recording)
    if version >= 5:
        recording._passes.passes = _passes_in(document["passes"])
    return recording


def _passes_in(value: Any) -> list[BackwardPass]:
    """Each backward pass's ``[loss or null, grad_norm or null, leaves, root]``."""
    _expect(value, list, "$.passes", "a list of passes")
    passes = []
    for i, item in enumerate(value):
        path = f"$.passes[{i}]"
        _expect(item, list, path, "[loss, grad_norm, leaves, root]")
        if len(item) != 4:
            _fail(path, "expected [loss, grad_norm, leaves, root]")
        loss, grad_norm = (None if v is None else float(_number_in(v, f"{path}[{j}]"))
                           for j, v in enumerate(item[:2]))
        passes.append(BackwardPass(i + 1, loss, grad_norm, _count(item[2], f"{path}[2]"),
                                   _count(item[3], f"{path}[3]")))
    return passes


def _sources_in(value: Any, recording: Recording) -> dict[str, str]:
    """The recording's own source text: for files its nodes or backward passes name, each
    within the limit."""
    _expect(value, dict, "$.sources", "an object: file name -> source text")
    files = {where[0] for where in recording.source_lines()}
    for file, text in value.items():
        path = f"$.sources[{json.dumps(file[:80])}]"
        if file not in files:
            _fail(path, "source text of a file no node or backward() call was made in")
        _expect(text, str, path, "the source text (a string)")
        if len(text) > MAX_SOURCE_CHARS:
            _fail(path, f"source text longer than {MAX_SOURCE_CHARS} characters")
    return {file: text for file, text in value.items() if text}  # "" is no text, as saved


def _step_in(value: Any, path: str, recording: Recording,
             arity: dict[str, tuple] = _STEP_ARITY) -> tuple:
    _expect(value, list, path, "a timeline step [kind, ...]")
    if not value or not isinstance(value[0], str) or value[0] not in arity:
        _fail(f"{path}[0]", "unknown timeline step kind")
    kind, fields = value[0], value[1:]
    types = arity[kind]
    if len(fields) != len(types):
        _fail(path, f"a {kind!r} step has {len(types)} field(s)")
    out: list[Any] = [kind]
    named: list[tuple[str, int]] = []  # (path, id) of each node the step names
    for j, (field_value, expected) in enumerate(zip(fields, types), start=1):
        if expected == "node":
            out.append(_count(field_value, f"{path}[{j}]"))
            named.append((f"{path}[{j}]", out[-1]))
        elif expected is int:
            out.append(_count(field_value, f"{path}[{j}]"))
        elif expected is str:
            out.append(_expect(field_value, str, f"{path}[{j}]", "a string"))
        elif expected == "values":
            out.append(_values_in(_expect(field_value, list, f"{path}[{j}]", "a list of numbers"),
                                  f"{path}[{j}]"))
        elif expected == "shape or null":
            out.append(None if field_value is None else _shape_in(field_value, f"{path}[{j}]"))
        elif expected == "where or null":
            out.append(_where_in(field_value, f"{path}[{j}]"))
        else:
            _expect(field_value, list, f"{path}[{j}]", "a list of node ids")
            out.append(tuple(_count(v, f"{path}[{j}][{k}]") for k, v in enumerate(field_value)))
            named.extend((f"{path}[{j}][{k}]", v) for k, v in enumerate(out[-1]))
    for where, node_id in named:  # a step about a node names one of the recording's nodes
        if node_id not in recording.nodes:
            _fail(where, f"a step about node {node_id}, which the recording does not have")
    return tuple(out)


def _check_acyclic(recording: Recording) -> None:
    """A computation graph has no cycles (Kahn's algorithm; iterative)."""
    incoming = {node_id: 0 for node_id in recording.nodes}
    outgoing: dict[int, list[int]] = {node_id: [] for node_id in recording.nodes}
    for edge in recording.edges:
        incoming[edge.dst] += 1
        outgoing[edge.src].append(edge.dst)
    ready = [node_id for node_id, n in incoming.items() if n == 0]
    seen = 0
    while ready:
        node_id = ready.pop()
        seen += 1
        for dst in outgoing[node_id]:
            incoming[dst] -= 1
            if incoming[dst] == 0:
                ready.append(dst)
    if seen != len(recording.nodes):
        _fail("$.edges", "the edges form a cycle: not a computation graph")
