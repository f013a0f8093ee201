"""Safe to share (NOTE [safe to share] in dyngraph/record.py): a saved recording, a page and a
view's synced state name source files relative to the working directory, never absolutely, and
keep only the lines that made nodes (with a few lines around them), never the whole script."""

from __future__ import annotations

import base64
import json
import re
import runpy
import textwrap

import pytest

import dyngraph as dg
from dyngraph.record import shared_path, shared_source

SECRET = 'API_KEY = "sk-do-not-share-0123456789"'

SCRIPT = textwrap.dedent(f"""\
    import dyngraph as dg

    {SECRET}
    unrelated = [n * n for n in range(3)]
    more = sum(unrelated)
    still_more = more + 1
    the_end_of_the_preamble = still_more


    def main():
        x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
        y = (x * 3.0).sum()
        y.backward()
        return y


    def helper_never_called():
        return "THIS LINE MAKES NO NODE EITHER"
    """)


def load_script(directory, name="lesson.py", script=SCRIPT):
    """Write ``script`` to a file in ``directory`` and load it: its main(), and the file."""
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(script, encoding="utf-8")
    return runpy.run_path(str(path))["main"], path


def run_script(directory, name="lesson.py", script=SCRIPT):
    """Run ``script``'s main() from a file in ``directory`` inside dg.record()."""
    main, path = load_script(directory, name, script)
    with dg.record() as rec:
        main()
    return rec, path


def page_texts(page: str) -> list[str]:
    """The page as text, and its embedded snapshot decoded (MessagePack keeps strings as UTF-8,
    so a grep of the decoded bytes finds any file name or source line it holds)."""
    found = re.search(r'"snapshot": \{"base64": "([^"]*)"\}', page)
    assert found, "the page embeds its snapshot"
    return [page, base64.b64decode(found.group(1)).decode("utf-8", "replace")]


def test_shared_path_is_relative_under_the_working_directory_else_a_bare_name(tmp_path,
                                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert shared_path(str(tmp_path / "course" / "run.py")) == "course/run.py"
    assert shared_path("/somewhere/else/home/alice/run.py") == "run.py"
    assert shared_path("../../alice/run.py") == "run.py"
    assert shared_path("<stdin>") == "<stdin>"
    assert shared_path(shared_path("/x/y/run.py")) == "run.py"  # saving twice changes nothing


def test_shared_source_keeps_the_lines_that_made_nodes_with_context_and_line_numbers():
    lines = [f"line {i}\n" for i in range(1, 21)]
    text = shared_source(lines, {10}, context=2)
    kept = text.splitlines()
    assert len(kept) == 12  # nothing after the last line kept
    assert kept[7:12] == ["line 8", "line 9", "line 10", "line 11", "line 12"]
    assert all(line == "" for line in kept[:7])


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_a_saved_recording_holds_no_absolute_path_and_no_line_that_made_no_node(
    tmp_path, monkeypatch, where
):
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    script_dir = tmp_path / "home" / "alice" if where == "outside" else workdir / "course"
    rec, path = run_script(script_dir)
    assert any(n.where and n.where[0] == str(path) for n in rec.nodes.values())  # live: real
    rec.save(tmp_path / "run.json")
    saved = (tmp_path / "run.json").read_text(encoding="utf-8")
    assert str(path) not in saved and str(tmp_path) not in saved and "alice" not in saved
    assert "sk-do-not-share" not in saved and "MAKES NO NODE" not in saved
    expected = "lesson.py" if where == "outside" else "course/lesson.py"
    files = {n.where[0] for n in dg.load_recording(tmp_path / "run.json").nodes.values()
             if n.where}
    assert files == {expected}


def test_a_page_keeps_only_the_lines_that_made_nodes_and_no_absolute_path(tmp_path,
                                                                         monkeypatch):
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    rec, path = run_script(tmp_path / "home" / "alice")
    rec.to_html(tmp_path / "run.html")
    page, snapshot = page_texts((tmp_path / "run.html").read_text(encoding="utf-8"))
    for text in (page, snapshot):
        assert str(path) not in text and "alice" not in text
        assert "sk-do-not-share" not in text and "MAKES NO NODE" not in text
    assert 'y = (x * 3.0).sum()' in snapshot  # the lines that made nodes are there
    assert "lesson.py" in snapshot

    rec.to_html(tmp_path / "bare.html", source=False)
    _, snapshot = page_texts((tmp_path / "bare.html").read_text(encoding="utf-8"))
    assert "(x * 3.0)" not in snapshot and "lesson.py" in snapshot


def test_a_live_view_sends_shared_names_and_lines(tmp_path, monkeypatch):
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    from dyngraph.jupyter.view import GraphView, unpack

    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    main, path = load_script(tmp_path / "home" / "alice")
    with dg.watch(display=False) as view:
        main()
    assert isinstance(view, GraphView)
    state = unpack(view.snapshot)
    text = json.dumps(state, default=repr)
    assert str(path) not in text and "sk-do-not-share" not in text
    assert set(state["sources"]) == {"lesson.py"}


def test_a_page_saved_from_a_loaded_recording_shows_the_source_it_carries(tmp_path,
                                                                          monkeypatch):
    """GraphView.from_recording(...).save_html: the page shows the recording's own source text,
    where the script it names is nowhere to be read (another machine, another folder)."""
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    from dyngraph.jupyter.view import GraphView

    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    rec, path = run_script(tmp_path / "home" / "alice")
    rec.save(tmp_path / "run.json")
    path.unlink()  # the script is gone: only the recording has its lines now
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    GraphView.from_recording(dg.load_recording(tmp_path / "run.json")).save_html(
        tmp_path / "replayed.html")
    _, snapshot = page_texts((tmp_path / "replayed.html").read_text(encoding="utf-8"))
    assert 'y = (x * 3.0).sum()' in snapshot and "lesson.py" in snapshot
