"""Pictures on a machine with no system Graphviz (NOTE [which Graphviz] in graphviz_render.py):
the pygraphviz wheel draws them; without it a display falls back to the widget's player (its
Graphviz-WASM draws in the browser), then to the DOT source after one line saying what to
install. CI installs Graphviz, so these tests hide ``dot`` themselves."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_escaping import HOSTILE, assert_inert, expected, svg_texts, visible_lines

import dyngraph as dg
import dyngraph.graphviz_render as graphviz_render
from dyngraph.graphviz_render import GraphvizMissing

ROOT = Path(__file__).resolve().parent.parent
NO_WHEEL = "the pygraphviz wheel is not installed (pip install pygraphviz)"
needs_wheel = pytest.mark.skipif(not graphviz_render._wheel_available(), reason=NO_WHEEL)

_which = shutil.which


@pytest.fixture
def no_dot(monkeypatch):
    """This machine as a learner's without Graphviz: ``dot`` is not found on the PATH."""
    monkeypatch.setattr(graphviz_render.shutil, "which",
                        lambda name, *a, **k: None if name == "dot" else _which(name, *a, **k))


@pytest.fixture
def no_graphviz(no_dot, monkeypatch):
    """Neither ``dot`` nor the pygraphviz wheel."""
    monkeypatch.setattr(graphviz_render, "_wheel_available", lambda: False)


def _run(name_a: str = "x", sign: float = 1.0):
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0], requires_grad=True, name=name_a)
        y = (x * sign).tanh() if sign > 0 else (x * sign).sin()
        loss = y.sum()
        loss.backward()
    return rec, loss


def _one_hint(text: str) -> None:
    hints = [line for line in text.splitlines() if "Graphviz" in line]
    assert hints == [graphviz_render.HINT], text[:500]
    assert "pip install pygraphviz" in hints[0] and "live widget" in hints[0]
    assert "Traceback" not in text


# ----------------------------------------------------------------------------- the wheel


@needs_wheel
def test_without_dot_every_picture_is_svg_from_the_wheel(no_dot):
    assert graphviz_render.graphviz_command()[0] == sys.executable
    rec, loss = _run()
    svg = rec.to_svg()
    assert svg.lstrip().startswith("<?xml") and svg.rstrip().endswith("</svg>")
    assert_inert(svg)
    bundles = {
        "recording": rec._repr_mimebundle_(),
        "draw": dg.draw(loss)._repr_mimebundle_(),
        "diff": dg.diff(rec, _run(sign=-1.0)[0])._repr_mimebundle_(),
    }
    for what, bundle in bundles.items():
        assert "<svg" in bundle["image/svg+xml"], what
        assert "Graphviz" not in bundle["text/plain"], what  # no hint when there is a picture
    assert "<svg" in dg.draw(loss).to_svg() and "<svg" in dg.diff(rec, rec).to_svg()


@needs_wheel
def test_hostile_names_drawn_by_the_wheel_are_literal_and_inert(no_dot):
    names = [name for name in HOSTILE if name != "\\"]  # one lone backslash is enough
    with dg.record() as rec:
        leaves = [dg.tensor([1.0], requires_grad=True, name=name) for name in names]
        total = leaves[0]
        for leaf in leaves[1:]:
            total = total + leaf
    root = assert_inert(rec.to_svg(values=False, grads=False, shapes=False,
                                   summarize_loops=False))
    for name, leaf in zip(names, leaves):
        assert svg_texts(root, f"n{leaf.id}") == visible_lines(expected(name)), repr(name)


@needs_wheel
def test_a_graphviz_error_in_the_wheel_is_one_clear_line(no_dot):
    with pytest.raises(RuntimeError, match="Graphviz failed") as failure:
        graphviz_render.render_svg("digraph { a -> ")
    assert "Traceback" not in str(failure.value)


def test_a_wheel_that_does_not_import_counts_as_no_graphviz(no_dot, no_jupyter_extra, monkeypatch):
    monkeypatch.setattr(graphviz_render, "_wheel_available", lambda: True)
    monkeypatch.setattr(graphviz_render, "_CHILD", graphviz_render._CHILD.replace(
        "import pygraphviz", "import pygraphviz_not_there_at_all as pygraphviz"))
    rec, _ = _run()
    with pytest.raises(GraphvizMissing, match="does not import.*pip install pygraphviz"):
        rec.to_svg()
    _one_hint(rec._repr_mimebundle_()["text/plain"])


def test_rendering_never_imports_pygraphviz_into_the_kernel():
    code = ("import sys, dyngraph as dg\n"
            "assert 'pygraphviz' not in sys.modules\n"
            "with dg.record() as rec:\n"
            "    dg.tensor([1.0], requires_grad=True).exp().sum().backward()\n"
            "rec._repr_mimebundle_()\n"
            "assert 'pygraphviz' not in sys.modules, 'imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr


# ----------------------------------------------------------------------------- no Graphviz at all


def test_without_any_graphviz_to_svg_says_what_to_pip_install(no_graphviz):
    rec, _ = _run()
    with pytest.raises(GraphvizMissing, match="pip install pygraphviz"):
        rec.to_svg()


def test_without_any_graphviz_display_is_the_players_picture_in_the_browser(no_graphviz):
    pytest.importorskip("anywidget", reason="the jupyter extra is not installed")
    pytest.importorskip("ormsgpack", reason="the jupyter extra is not installed")
    rec, loss = _run(name_a="</script><script>alert(1)</script>")
    for bundle in (rec._repr_mimebundle_(), dg.draw(loss)._repr_mimebundle_()):
        page = bundle["text/html"]
        assert "mountStandalone" in page and '<script type="module">' in page
        assert page.count("<script") == 1 and "alert(1)</script>" not in page
        assert "image/svg+xml" not in bundle
        _one_hint(bundle["text/plain"])
        assert "digraph" not in bundle["text/plain"]
    diff = dg.diff(rec, _run(sign=-1.0)[0])._repr_mimebundle_()  # the player has no diff marks
    assert "text/html" not in diff and "digraph" in diff["text/plain"]
    _one_hint(diff["text/plain"])


def test_without_any_graphviz_or_jupyter_display_is_the_dot_after_one_line(
        no_graphviz, no_jupyter_extra):
    rec, loss = _run()
    for bundle in (rec._repr_mimebundle_(), dg.draw(loss)._repr_mimebundle_(),
                   dg.diff(rec, rec)._repr_mimebundle_()):
        assert set(bundle) == {"text/plain"}
        text = bundle["text/plain"]
        _one_hint(text)
        first, hint, blank, *dot = text.splitlines()
        assert first.startswith("<") and hint == graphviz_render.HINT and blank == ""
        assert dot[0].startswith("digraph")


def test_a_views_static_fallback_is_the_wheels_svg_and_never_a_second_player(no_dot, monkeypatch):
    view_module = pytest.importorskip("dyngraph.jupyter.view", reason="no jupyter extra")
    rec, _ = _run()
    view = view_module.GraphView.from_recording(rec)
    if graphviz_render._wheel_available():
        data, _ = view._repr_mimebundle_()
        assert "<svg" in data["image/svg+xml"]
    monkeypatch.setattr(graphviz_render, "_wheel_available", lambda: False)
    data, _ = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "text/html" not in data and "image/svg+xml" not in data  # the widget is the picture
    _one_hint(data["text/plain"])
    view.close()


# ----------------------------------------------------------------------------- the lessons


def _path_without_dot() -> tuple[str, tempfile.TemporaryDirectory | None]:
    """PATH with every directory that holds ``dot`` replaced by a copy of it (links) without."""
    keep = tempfile.TemporaryDirectory()
    parts = []
    for i, folder in enumerate(os.environ.get("PATH", "").split(os.pathsep)):
        if folder and (Path(folder) / "dot").exists():
            mirror = Path(keep.name) / str(i)
            mirror.mkdir()
            for entry in Path(folder).iterdir():
                if entry.name != "dot":
                    (mirror / entry.name).symlink_to(entry)
            folder = str(mirror)
        parts.append(folder)
    return os.pathsep.join(parts), keep


@pytest.mark.slow
@needs_wheel
@pytest.mark.skipif(_which("dot") is None,
                    reason="no dot here: the lesson run of the test suite already runs without it")
def test_lessons_that_draw_run_without_dot():
    path, keep = _path_without_dot()
    env = {**os.environ, "PATH": path}
    with keep:
        assert shutil.which("dot", path=path) is None
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
             "notebooks/07_recursive_models.ipynb", "notebooks/16_train_end_to_end.ipynb",
             "notebooks/19_views_and_inplace.ipynb"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
        )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
