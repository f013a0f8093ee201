"""Safe to share, robust to any file (issue 30, the recording side): a recording from someone
else can neither read the viewer's files nor hang the kernel (NOTE [own source text] in
dyngraph/record.py, NOTE [symmetric limits] in dyngraph/recording_format.py).

A recording carries its own source text; rendering a loaded one (a page, the notebook display,
DOT) never opens a file it names. Reads are bounded and never block; limits are symmetric; the
malformed inputs of the issue get clear errors naming the field."""

from __future__ import annotations

import base64
import builtins
import copy
import io
import json
import linecache
import os
import re
import sys
import textwrap
import time
import tracemalloc

import numpy as np
import pytest
import test_sharing  # noqa: E402 - its load_script and run_script, with this file's scripts
from support import refused_recording, write_recording

import dyngraph as dg
import dyngraph.recording_io as recording_io
from dyngraph import safe_json
from dyngraph.record import MAX_SOURCE_CHARS
from dyngraph.recording_io import MAX_SCOPE_DEPTH, MAX_STRING, SCHEMA_VERSION, load_recording

SECRET = "SECRET-TOKEN-7d1f0c"

SCRIPT = textwrap.dedent("""\
    import dyngraph as dg

    PREAMBLE = "the line before is kept as context"


    def main():
        x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
        y = (x * 3.0).sum()
        y.backward()
        return y
    """)


def node(node_id, file, line=1, *, name="x", scope=(), op="leaf", kind="leaf"):
    """One node of a hand-written recording document (schema 3)."""
    return {
        "id": node_id, "kind": kind, "op": op, "name": name, "shape": [2], "dtype": "float32",
        "device": "cpu", "requires_grad": True, "preview": [1.0, 2.0], "scope": list(scope),
        "where": None if file is None else [file, line, "main", None, "x"], "order": node_id,
        "saved_bytes": 0, "grad_preview": None, "grad_norm": None, "accumulated": False,
        "freed": False, "recomputed": False, "elapsed": None, "version": 0, "check": None,
    }


def document(nodes, timeline=None, sources=None, version=SCHEMA_VERSION):
    doc = {
        "format": "dyngraph-recording", "schema_version": version, "max_nodes": 10_000,
        "max_events": 200_000, "dropped_nodes": 0, "dropped_events": 0, "nodes": nodes,
        "edges": [], "timeline": [["node", n["id"]] for n in nodes] if timeline is None
        else timeline,
    }
    if version >= 3:
        doc["sources"] = {} if sources is None else sources
    if version >= 5:
        doc["passes"] = []
    return doc


def page_texts(path) -> list[str]:
    """The page and its embedded snapshot, decoded (MessagePack keeps strings as UTF-8)."""
    page = path.read_text(encoding="utf-8")
    found = re.search(r'"snapshot": \{"base64": "([^"]*)"\}', page)
    assert found, "the page embeds its snapshot"
    return [page, base64.b64decode(found.group(1)).decode("utf-8", "replace")]


@pytest.fixture
def no_file_is_opened(monkeypatch):
    """Fail the test if anything opens or linecache-reads a file of the set it returns."""
    names: set[str] = set()
    real_open, real_os_open = builtins.open, os.open

    def guarded(opener):
        def open_(file, *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and os.fspath(file) in names:
                raise AssertionError(f"rendering opened {file}")
            return opener(file, *args, **kwargs)
        return open_

    def guarded_cache(reader):
        def read(file, *args, **kwargs):
            if file in names:
                raise AssertionError(f"rendering read {file} through linecache")
            return reader(file, *args, **kwargs)
        return read

    monkeypatch.setattr(builtins, "open", guarded(real_open))
    monkeypatch.setattr(io, "open", guarded(real_open))
    monkeypatch.setattr(os, "open", guarded(real_os_open))
    monkeypatch.setattr(linecache, "getlines", guarded_cache(linecache.getlines))
    monkeypatch.setattr(linecache, "getline", guarded_cache(linecache.getline))
    return names


# ----------------------------------------------------------------------------- the crafted file


@pytest.fixture
def hostile_files(tmp_path):
    """/etc/passwd, a secret file of the viewer's, /dev/zero and a FIFO nobody writes to."""
    secret = tmp_path / "viewer" / "notes.txt"
    secret.parent.mkdir()
    secret.write_text("".join(f"{SECRET} line {i}\n" for i in range(1, 41)), encoding="utf-8")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    return ["/etc/passwd", str(secret), "/dev/zero", str(fifo)]


@pytest.mark.parametrize("version", [2, SCHEMA_VERSION])
def test_a_recording_naming_special_and_secret_files_renders_fast_without_their_text(
    tmp_path, hostile_files, no_file_is_opened, version
):
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    nodes = [node(i, file, line=3) for i, file in enumerate(hostile_files)]
    path = write_recording(tmp_path, document(nodes, version=version))
    with open("/etc/passwd", encoding="utf-8") as f:
        passwd = f.readline().strip()  # root:x:0:0:...
    rec = load_recording(path)
    assert rec.sources == {}  # schema 2 has none; this schema 3 file carries none
    no_file_is_opened.update(hostile_files)

    started = time.perf_counter()
    rec.to_html(tmp_path / "page.html")
    dot = rec.to_dot()
    elapsed = time.perf_counter() - started
    assert elapsed < 10, f"rendering took {elapsed:.1f} s"

    from dyngraph.jupyter.player import picture

    display = picture(rec, repr(rec))["text/html"]  # the notebook display with no Graphviz
    page, snapshot = page_texts(tmp_path / "page.html")
    for text in (page, snapshot, dot, display):
        assert SECRET not in text and passwd not in text and "\x00" * 16 not in text
    assert (tmp_path / "page.html").stat().st_size < 20 * 1024 * 1024  # the bundle, no more
    print(f"crafted recording: rendered in {elapsed:.2f} s, page "
          f"{(tmp_path / 'page.html').stat().st_size} bytes, DOT {len(dot)} characters")


def test_the_text_a_recording_carries_is_what_its_page_shows_whatever_the_named_file_holds(
    tmp_path, hostile_files, no_file_is_opened
):
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    carried = "\n\nx = dg.tensor([1.0])  # the line the recording says made the node\n"
    nodes = [node(0, hostile_files[1], line=3)]
    rec = load_recording(write_recording(tmp_path, document(
        nodes, sources={hostile_files[1]: carried})))
    no_file_is_opened.update(hostile_files)
    rec.to_html(tmp_path / "page.html")
    _, snapshot = page_texts(tmp_path / "page.html")
    assert "the line the recording says made the node" in snapshot and SECRET not in snapshot


# ----------------------------------------------------------------------------- own source text


def run_script(directory):
    return test_sharing.run_script(directory, script=SCRIPT)


def test_a_recording_keeps_its_source_text_when_made_and_shows_it_after_the_file_is_gone(
    tmp_path, monkeypatch, no_file_is_opened
):
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    monkeypatch.chdir(tmp_path)
    rec, path = run_script(tmp_path / "course")
    assert "y = (x * 3.0).sum()" in rec.sources[str(path)]  # captured at the end of the block
    rec.save(tmp_path / "run.json")
    saved = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert saved["schema_version"] == SCHEMA_VERSION
    assert set(saved["sources"]) == {"course/lesson.py"}
    assert "import dyngraph" not in saved["sources"]["course/lesson.py"]  # not the whole file

    path.write_text("# the file changed since\n" * 20, encoding="utf-8")
    linecache.clearcache()
    no_file_is_opened.update({str(path), "course/lesson.py"})
    loaded = load_recording(tmp_path / "run.json")
    loaded.to_html(tmp_path / "run.html")
    _, snapshot = page_texts(tmp_path / "run.html")
    assert "y = (x * 3.0).sum()" in snapshot and "the file changed since" not in snapshot


def test_save_without_source_keeps_no_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rec, _ = run_script(tmp_path)
    rec.save(tmp_path / "bare.json", source=False)
    saved = json.loads((tmp_path / "bare.json").read_text(encoding="utf-8"))
    assert saved["sources"] == {} and "(x * 3.0)" not in json.dumps(saved)


@pytest.mark.parametrize(
    ("sources", "needles"),
    [
        ({"other.py": "x = 1\n"}, ("$.sources[\"other.py\"]",
                                    "no node or backward() call was made in")),
        ({"lesson.py": 3}, ("$.sources[\"lesson.py\"]", "expected the source text")),
        ({"lesson.py": "x\n" * MAX_SOURCE_CHARS}, ("longer than", str(MAX_SOURCE_CHARS))),
        (["lesson.py"], ("$.sources", "expected an object")),
    ],
)
def test_the_carried_source_text_is_checked_on_load(tmp_path, sources, needles):
    refused_recording(tmp_path, document([node(0, "lesson.py")], sources=sources), *needles)


def test_an_old_recording_loads_with_no_source_text_and_a_new_field_needs_schema_3(tmp_path):
    old_file = write_recording(tmp_path, document([node(0, "a.py")], version=2))
    assert load_recording(old_file).sources == {}
    old = document([node(0, "a.py")], version=2)
    old["sources"] = {}
    refused_recording(tmp_path, old, "$.sources", "unknown field")


# ----------------------------------------------------------------------------- bounded reads


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "/dev/stdin", "directory"])
def test_reading_refuses_what_is_not_a_regular_file_without_blocking(tmp_path, special):
    if special == "fifo":
        special = str(tmp_path / "pipe")
        os.mkfifo(special)
    elif special == "directory":
        special = str(tmp_path)
    elif not os.path.exists(special):
        pytest.skip(f"{special} does not exist on this system")
    started = time.perf_counter()
    with pytest.raises(ValueError, match="not a file: not a dyngraph recording"):
        load_recording(special)
    assert time.perf_counter() - started < 2


def test_a_small_file_is_read_with_memory_in_proportion_to_it(tmp_path):
    path = write_recording(tmp_path, document([node(0, "a.py")]))
    tracemalloc.start()
    try:
        safe_json.read_bytes(path, "dyngraph recording", recording_io.MAX_FILE_BYTES)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024, f"a {path.stat().st_size}-byte file took {peak} bytes to read"


# ----------------------------------------------------------------------------- linear sizes


def test_a_scope_deeper_than_the_limit_is_refused_naming_its_path(tmp_path):
    deep = [node(0, "a.py", scope=[f"s{i}" for i in range(MAX_SCOPE_DEPTH + 1)])]
    refused_recording(tmp_path, document(deep), "$.nodes[0].scope", str(MAX_SCOPE_DEPTH))
    at_limit = [node(0, "a.py", scope=[f"s{i}" for i in range(MAX_SCOPE_DEPTH)])]
    assert len(load_recording(write_recording(tmp_path, document(at_limit))).nodes[0].scope) == 64


@pytest.mark.parametrize("n", [10, 40])
def test_dot_grows_linearly_with_the_file_at_the_deepest_scopes_and_longest_names(tmp_path, n):
    nodes = [node(i, "a.py", name="n" * MAX_STRING,
                  scope=[f"{i}-{d}-" + "s" * 2000 for d in range(MAX_SCOPE_DEPTH)])
             for i in range(n)]
    path = write_recording(tmp_path, document(nodes))
    dot = load_recording(path).to_dot(max_nodes=10_000, collapse_over=10_000)
    assert len(dot) < 2 * path.stat().st_size  # bounded by the file, not its square


def test_a_live_deeper_scope_and_a_longer_name_save_as_what_load_reads(tmp_path):
    x = dg.tensor([1.0], requires_grad=True, name="x" * (2 * MAX_STRING))
    scopes = [dg.scope(f"s{i}") for i in range(MAX_SCOPE_DEPTH + 5)]
    with dg.record() as rec:
        for s in scopes:
            s.__enter__()
        (x * 2).sum()
        for s in reversed(scopes):
            s.__exit__(None, None, None)
    rec.save(tmp_path / "live.json")
    loaded = load_recording(tmp_path / "live.json")
    name = next(n.name for n in loaded.nodes.values() if n.name and n.name.startswith("xx"))
    assert len(name) == MAX_STRING and name.endswith("\u2026")
    assert max(len(n.scope) for n in loaded.nodes.values()) == MAX_SCOPE_DEPTH
    assert recording_io.dumps(loaded) == (tmp_path / "live.json").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- clear errors


def test_a_timeline_naming_a_missing_node_is_refused_naming_the_step(tmp_path):
    nodes = [node(0, "a.py")]
    refused_recording(tmp_path, document(nodes, timeline=[["node", 0], ["grad", 999]]),
                      "$.timeline[1][1]", "node 999")
    refused_recording(tmp_path, document(nodes, timeline=[["node", 999]]), "$.timeline[0][1]")
    refused_recording(tmp_path, document(nodes, timeline=[["freed", [0, 999]]]),
                      "$.timeline[0][1][1]")
    refused_recording(tmp_path, document(nodes, timeline=[["node", 0], ["node", 0]]),
                      "$.timeline[1][1]", "made twice")
    # a backward from a root the recorder dropped is what a live run records: it loads
    assert load_recording(write_recording(tmp_path, document(nodes, timeline=[
        ["node", 0], ["backward_started", 999, None], ["backward_finished", 999]])))


def test_a_lone_surrogate_in_a_name_renders_as_a_replacement_character(tmp_path):
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    raw = json.dumps(document([node(0, "a\ud800.py", name="bad\udc00name", scope=["s\ud83d"])],
                              sources={"a\ud800.py": "made = 1  # \udc00 here\n"}))
    path = tmp_path / "surrogate.json"
    path.write_text(raw, encoding="ascii")
    rec = load_recording(path)
    rec.to_html(tmp_path / "page.html")  # was: TypeError: string contains surrogates
    _, snapshot = page_texts(tmp_path / "page.html")
    assert "bad\ufffdname" in snapshot and "made = 1  # \ufffd here" in snapshot
    dot = rec.to_dot()
    assert "bad\\\\udc00name" in dot and dot.encode("utf-8")  # escaped in DOT: it encodes
    rec.save(tmp_path / "again.json")  # what load read, save writes back as it was
    assert load_recording(tmp_path / "again.json").nodes[0].name == "bad\udc00name"


def test_a_newer_schema_is_reported_as_such_even_with_fields_this_one_does_not_know(tmp_path):
    doc = document([node(0, "a.py")], version=SCHEMA_VERSION + 1)
    doc["a_field_from_the_future"] = 1
    message = refused_recording(tmp_path, doc, "$.schema_version")
    assert (f"written by a newer dyngraph (schema {SCHEMA_VERSION + 1}; this one reads up to "
            f"{SCHEMA_VERSION}): upgrade dyngraph") in message
    assert "unknown field" not in message
    bool_version = document([node(0, "a.py")])
    bool_version["schema_version"] = True
    refused_recording(tmp_path, bool_version, "$.schema_version", "boolean")


@pytest.mark.parametrize("name", ["__proto__", "constructor", "toString"])
def test_a_file_named_like_a_javascript_property_is_sent_under_a_name_the_browser_reads(
    tmp_path, name
):
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    from dyngraph.jupyter.view import GraphView, unpack

    text = f"\n\nvalue = 1  # line three of {name}\n"
    rec = load_recording(write_recording(tmp_path, document([node(0, name, line=3)],
                                                  sources={name: text})))
    view = GraphView.from_recording(rec)
    state = unpack(view.snapshot)
    shown = "./__proto__" if name == "__proto__" else name
    assert state["sources"] == {shown: text}  # a key the page's decoder accepts
    assert "__proto__" not in state["sources"]
    view.close()


# ----------------------------------------------------------------------------- no absolute path


ANOMALY_SCRIPT = textwrap.dedent("""\
    import dyngraph as dg


    def main():
        x = dg.tensor([0.0, 1.0], requires_grad=True, name="x")
        y = x.sqrt().sum()
        y.backward()
    """)


def test_an_anomaly_message_in_a_recording_names_its_file_as_the_recording_does(
    tmp_path, monkeypatch
):
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    main, path = test_sharing.load_script(tmp_path / "home" / "alice", "anomalous.py",
                                          ANOMALY_SCRIPT)
    with (dg.record() as rec, dg.detect_anomaly(), np.errstate(divide="ignore"),
          pytest.raises(RuntimeError) as info):
        main()
    assert "created at anomalous.py, line 6" in str(info.value)
    failed = [step for step in rec.timeline if step[0] == "backward_failed"]
    assert failed and "anomalous.py" in failed[0][2]
    rec.save(tmp_path / "run.json")
    saved = (tmp_path / "run.json").read_text(encoding="utf-8")
    assert str(path) not in saved and "alice" not in saved and str(tmp_path) not in saved


def test_an_error_text_naming_a_recorded_file_absolutely_is_saved_with_its_shared_name(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    rec, path = run_script(tmp_path / "elsewhere")
    rec(dg.events.BackwardFailed(0, f"ValueError: bad value made at {path}, line 8"))
    rec.save(tmp_path / "run.json")
    assert str(path) not in (tmp_path / "run.json").read_text(encoding="utf-8")
    assert "made at elsewhere/lesson.py, line 8" in rec.timeline[-1][2]


def test_documents_in_this_file_are_valid_recordings(tmp_path):
    """The hand-written documents above are real recordings: what a refusal test changes is
    what it refuses."""
    doc = document([node(0, "a.py"), node(1, "b.py")], sources={"a.py": "x = 1\n"})
    rec = load_recording(write_recording(tmp_path, copy.deepcopy(doc)))
    assert json.loads(recording_io.dumps(rec)) == doc


def test_site_pages_name_warnings_files_by_package_not_by_the_builders_install_path():
    nbformat = pytest.importorskip("nbformat", reason="building the site needs nbformat")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(root, "tools"))
    try:
        import build_site
    finally:
        sys.path.remove(os.path.join(root, "tools"))
    numpy_file = os.path.abspath(np.__file__)
    engine_file = os.path.join(root, "dyngraph", "ops", "elementwise.py")
    cell = nbformat.v4.new_code_cell("x.sqrt()")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stderr",
                               text=f"{numpy_file}:12: RuntimeWarning: invalid value\n"),
        nbformat.v4.new_output("error", ename="RuntimeError", evalue="",
                               traceback=[f"File {engine_file}:202, in backward"]),
    ]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    assert build_site.without_install_paths(notebook) == 2
    text = json.dumps(notebook)
    assert root not in text and os.path.dirname(os.path.dirname(numpy_file)) not in text
    assert "numpy/__init__.py:12: RuntimeWarning" in cell.outputs[0]["text"]
    assert "File dyngraph/ops/elementwise.py:202" in cell.outputs[1]["traceback"][0]


def test_numbers_beyond_the_loaders_digits_save_as_what_it_reads(tmp_path):
    """uint64's largest value is read back exactly; a Python int from another engine with more
    digits than the loader reads is saved as a float (NOTE [symmetric limits])."""
    rec = load_recording(write_recording(tmp_path, document([node(0, "a.py")])))
    rec.nodes[0].preview = (2**64 - 1, 10**30, -(10**400), 7)
    rec.save(tmp_path / "big.json")
    assert load_recording(tmp_path / "big.json").nodes[0].preview == (
        2**64 - 1, 1e30, -float("inf"), 7)


def test_a_live_views_recording_carries_the_text_the_view_showed(tmp_path, monkeypatch):
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    monkeypatch.chdir(tmp_path)
    main, _ = test_sharing.load_script(tmp_path, script=SCRIPT)
    with dg.watch(display=False) as view:
        main()
    rec = view.recording
    assert "y = (x * 3.0).sum()" in rec.sources["lesson.py"]
    rec.save(tmp_path / "view.json")
    assert load_recording(tmp_path / "view.json").sources == rec.sources


@pytest.mark.parametrize("string", ["n" * 1_000_000, '\\"' * 300_000, "\\\\" * 300_000])
def test_the_depth_check_takes_no_memory_per_character_of_a_long_string(string):
    text = f'["{string}", [1]]'
    tracemalloc.start()
    try:
        safe_json.check_depth(text, 2, "dyngraph recording")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(text) + 1024 * 1024, f"{peak} bytes for {len(text)} characters"


@pytest.mark.parametrize(
    ("text", "deeper_than_2"),
    [('["a\\\\", [["x"]]]', True), ('["\\"[[[[[[", 1]', False), ('["\\\\\\"[[[", [1]]', False)],
)
def test_the_depth_check_counts_brackets_outside_strings_only(text, deeper_than_2):
    json.loads(text)  # each is valid JSON
    if deeper_than_2:
        with pytest.raises(ValueError, match="nesting deeper than 2"):
            safe_json.check_depth(text, 2, "dyngraph recording")
    else:
        safe_json.check_depth(text, 2, "dyngraph recording")
