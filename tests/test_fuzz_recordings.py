"""A fuzz suite for ``dg.load_recording`` (issue 30): generated malformed and hostile recording
files, each either loaded (and then drawn) or refused with a clear ValueError / TypeError, each
within a time bound; and pages made from hostile names opened in Chromium, where no script of
theirs may run.

The files are derived, with a fixed seed, from one real recording (a scope, a backward pass, an
in-place change, gradients along edges, freed buffers, its own source text): truncations, every
field swapped for a value of every other JSON type, huge numbers, deep nesting, hostile strings
in every string field, random byte flips. The counts are printed (``pytest -s``)."""

from __future__ import annotations

import json
import random
import re
import time
import tracemalloc
from collections import Counter
from typing import Any

import pytest

import dyngraph as dg
import dyngraph.recording_io as recording_io
from dyngraph.recording_io import load_recording

SEED = 30
MAX_SECONDS_PER_FILE = 2.0
MB = 1024 * 1024


def memory_bound(file_bytes: int) -> int:
    """The most memory loading (and drawing) a file may take: in proportion to its size."""
    return 8 * file_bytes + 8 * MB

PWNED = "window.__pwned = 1"
HOSTILE_STRINGS = [
    f"<script>{PWNED}</script>",
    f'<img src=x onerror="{PWNED}">',
    "</script><script>window.__pwned = 1</script>",
    '"]; x [label="owned" URL="javascript:alert(1)"]; y [label="',
    "\\N \\G \\l {} <> | ",
    "lone \ud800 surrogate \udfff",
    "nul \x00 inside",
    "right-to-left \u202e override \u2066",
    "__proto__",
    "constructor",
    "toString",
    "line one\nline two\r\n",
    "n" * MB,  # a 1 MB name
]
ODD_VALUES = [None, True, False, 0, -1, 1.5, 2**62, "", "text", [], [1, "a", None], {},
              {"k": "v"}]
HUGE_NUMBERS = ["1" + "0" * 30, "-" + "9" * 400, "1e400", "-1e400", "123456789012345678901",
                "1e-400", "-0", "0.1e999999"]


def base_recording() -> Any:
    """A small real recording that has a bit of everything the schema holds."""
    x = dg.tensor([1.0, -2.0, 3.0], requires_grad=True, name="x")
    w = dg.tensor([[0.5], [0.25], [-1.0]], requires_grad=True, name="w")
    with dg.record() as rec:
        with dg.scope("layer"):
            h = (x.reshape(1, 3) @ w).tanh()
        y = h * 2.0
        y += 1.0  # an in-place change: a "version" step
        loss = y.sum()
        loss.backward()
    assert {step[0] for step in rec.timeline} >= {"node", "grad", "edge_grad", "freed",
                                                   "version", "backward_started"}
    assert rec.sources, "a live recording carries its source text"
    return rec


@pytest.fixture(scope="module")
def base_document() -> dict[str, Any]:
    return recording_io.to_document(base_recording())


def paths_of(value: Any, path: tuple = ()) -> list[tuple]:
    """Every path (a tuple of keys and indices) into a JSON value, its root included."""
    found = [path]
    stack = [(path, value)]
    while stack:
        at, item = stack.pop()
        children = item.items() if isinstance(item, dict) else (
            enumerate(item) if isinstance(item, list) else ())
        for key, child in children:
            found.append((*at, key))
            stack.append(((*at, key), child))
    return found


def replaced(document: Any, path: tuple, value: Any) -> Any:
    """A deep copy of ``document`` with the value at ``path`` replaced."""
    if not path:
        return value
    copy = json.loads(json.dumps(document))
    holder = copy
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return copy


def value_at(document: Any, path: tuple) -> Any:
    for key in path:
        document = document[key]
    return document


def as_text(document: Any) -> str:
    return json.dumps(document, ensure_ascii=True)


def generated_files(document: dict[str, Any]) -> list[tuple[str, bytes]]:
    """(what was done, the file's bytes) for every generated file, the same on every run."""
    rng = random.Random(SEED)
    text = as_text(document)
    files: list[tuple[str, bytes]] = []
    paths = paths_of(document)

    for cut in sorted(rng.sample(range(1, len(text)), 40)) + [0, len(text) - 1]:
        files.append((f"truncated at {cut}", text[:cut].encode()))

    for path in paths:  # every field, swapped for two values of other types
        current = value_at(document, path)
        choices = [v for v in ODD_VALUES if type(v) is not type(current) or v != current]
        for value in rng.sample(choices, 2):
            files.append((f"{path} = {value!r:.40}", as_text(replaced(document, path, value))
                          .encode()))

    numeric = [p for p in paths if isinstance(value_at(document, p), (int, float))
               and not isinstance(value_at(document, p), bool)]
    marker = '"__HUGE__"'
    for number in HUGE_NUMBERS:
        for path in rng.sample(numeric, 4):
            raw = as_text(replaced(document, path, "__HUGE__")).replace(marker, number, 1)
            files.append((f"{path} = {number[:20]}", raw.encode()))

    containers = [p for p in paths if isinstance(value_at(document, p), (list, dict))]
    for depth in (13, 100, 10_000):
        for path in rng.sample(containers, 3):
            raw = as_text(replaced(document, path, "__DEEP__"))
            raw = raw.replace('"__DEEP__"', "[" * depth + "]" * depth, 1)
            files.append((f"{path} nested {depth} deep", raw.encode()))
    files.append(("a bare 100,000-deep list", ("[" * 100_000 + "]" * 100_000).encode()))

    strings = [p for p in paths if isinstance(value_at(document, p), str)
               or p[-1:] == ("name",) or (len(p) > 2 and p[-2] == "scope")]
    for hostile in HOSTILE_STRINGS:
        for path in rng.sample(strings, 6):
            files.append((f"{path} = {hostile[:30]!r}",
                          as_text(replaced(document, path, hostile)).encode()))

    for k in range(60):  # random byte flips
        raw = bytearray(text.encode())
        for _ in range(rng.randint(1, 8)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        files.append((f"byte flips #{k}", bytes(raw)))

    files.append(("a pickle", b"\x80\x04\x95" + b"\x00" * 20))
    files.append(("an npz file", b"PK\x03\x04" + b"\x00" * 20))
    files.append(("latin-1 text", "{\"format\": \"caf\xe9\"}".encode("latin-1")))
    files.append(("a duplicate key", text.replace('"format"', '"format":"x","format"', 1)
                  .encode()))
    files.append(("a NaN token", text.replace('"dropped_nodes":0', '"dropped_nodes":NaN', 1)
                  .encode()))
    return files


def test_every_generated_file_is_loaded_or_refused_clearly_and_quickly(base_document,
                                                                       tmp_path):
    files = generated_files(base_document)
    assert len(files) > 300
    counts: Counter[str] = Counter()
    slowest = (0.0, "")
    largest = (0, "")
    tracemalloc.start()
    for k, (what, raw) in enumerate(files):
        path = tmp_path / f"fuzz{k}.json"
        path.write_bytes(raw)
        tracemalloc.reset_peak()
        baseline = tracemalloc.get_traced_memory()[0]
        started = time.perf_counter()
        try:
            rec = load_recording(path)
        except (ValueError, TypeError) as error:
            counts["refused"] += 1
            message = str(error)
            assert message and "Traceback" not in message, what
            assert len(message) < 2_000, f"{what}: a {len(message)}-character message"
        else:
            counts["loaded"] += 1
            dot = rec.to_dot()
            assert len(dot) < 4 * len(raw) + 20_000, f"{what}: DOT out of proportion"
            assert recording_io.loads(recording_io.dumps(rec)) == rec, what  # save reads back
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1] - baseline
        slowest, largest = max(slowest, (elapsed, what)), max(largest, (peak, what))
        assert elapsed < MAX_SECONDS_PER_FILE, f"{what}: {elapsed:.2f} s"
        assert peak < memory_bound(len(raw)), f"{what}: {peak} bytes for {len(raw)}"
        path.unlink()
    tracemalloc.stop()
    counts["tried"] = len(files)
    print(f"\nfuzz recordings: {counts['tried']} files tried, {counts['refused']} refused, "
          f"{counts['loaded']} loaded; slowest {slowest[0]:.3f} s ({slowest[1]}); most memory "
          f"{largest[0] / MB:.1f} MB ({largest[1]})")
    assert counts["refused"] > 100 and counts["loaded"] > 20  # both sides were exercised


def hostile_recording(hostile: str) -> Any:
    """A recording whose every free-text field holds ``hostile``: names, scopes, op, source
    file and its text, an error message."""
    document = recording_io.to_document(base_recording())
    for node in document["nodes"]:
        node["name"] = hostile[:100_000]
        node["scope"] = [hostile]
        if node["kind"] == "op":
            node["op"] = hostile
        if node["where"] is not None:
            node["where"][0] = hostile
            node["where"][2] = hostile
    document["sources"] = {hostile: f"{hostile}\n{hostile}\n"}
    document["timeline"].append(["backward_failed", 0, hostile])
    return recording_io.loads(json.dumps(document))


@pytest.mark.parametrize("hostile", HOSTILE_STRINGS[:12])
def test_a_page_of_hostile_names_carries_them_only_as_escaped_data(tmp_path, hostile):
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    hostile_recording(hostile).to_html(tmp_path / "page.html")
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "__pwned" not in page  # the payload is in the (base64) snapshot, nowhere as text
    assert len(re.findall(r"<script\b", page)) == 1  # the page's own module script, no other
