"""``dg.watch()`` outside a notebook kernel (a script, a terminal REPL): a live text outline of the
graph on stdout, no Jupyter package needed; ``html=`` writes the page and prints its path
(dyngraph/outline.py). In a kernel it stays the widget (tests/test_backward_cell.py and others)."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import dyngraph as dg
from dyngraph import outline

ROOT = Path(__file__).resolve().parents[1]

# A 3-layer MLP on a batch, as a learner would write it in a script. The recording made beside
# the outline says how many nodes and gradients there were (printed on stderr, as JSON).
MLP = """\
import json, sys
import dyngraph as dg
import dyngraph.nn as nn
import dyngraph.nn.functional as F

dg.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))
x = dg.randn(32, 4, name="x")
y = dg.tensor([i % 3 for i in range(32)])
with dg.watch(), dg.record() as rec:
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
grads = sum(1 for step in rec.timeline if step[0] == "grad")
print(json.dumps({"nodes": len(rec.nodes), "grads": grads,
                  "loaded": sorted(m for m in sys.modules
                                   if m.split(".")[0] in ("IPython", "ipywidgets", "anywidget",
                                                          "matplotlib", "ormsgpack"))}),
      file=sys.stderr)
"""

# Makes every import of these packages fail, as on a machine without the jupyter extra.
WITHOUT_JUPYTER = """\
import sys
class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("IPython", "ipywidgets", "anywidget", "matplotlib"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, NotInstalled())
"""


def page_text(path: Path) -> str:
    """A page's text with its snapshot (base64 MessagePack) decoded, so its strings show."""
    page = path.read_text(encoding="utf-8")
    found = re.search(r'"snapshot": \{"base64": "([^"]*)"\}', page)
    return page + base64.b64decode(found.group(1)).decode("utf-8", "replace")


def run_script(tmp_path: Path, code: str, name: str = "mlp.py") -> subprocess.CompletedProcess:
    script = tmp_path / name
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_a_script_prints_the_outline_of_an_mlp(tmp_path):
    done = run_script(tmp_path, MLP)
    lines = done.stdout.splitlines()
    facts = json.loads(done.stderr.strip().splitlines()[-1])
    assert lines[0].startswith("dg.watch: no notebook here, so a text outline")
    # the source lines, each once, as headers, in order
    headers = [line for line in lines if re.match(r"mlp\.py:\d+  ", line)]
    assert headers == ["mlp.py:11  logits = model(x)",
                       "mlp.py:12  loss = F.cross_entropy(logits, y)"]
    nodes = [line for line in lines if re.match(r"  #\d+ ", line)]
    assert len(nodes) == facts["nodes"]
    assert any(re.fullmatch(r"  #\d+ x: leaf \(32, 4\)( {2}\(top level\))?", n) for n in nodes)
    assert any(re.fullmatch(r"  #\d+ weight: parameter \(16, 4\)  \(in Sequential/0 · Linear\)",
                            n) for n in nodes)
    assert any(re.match(r"  #\d+ MatMul\(x#\d+, #\d+\) -> \(32, 16\)", n) for n in nodes)
    assert any(re.match(r"  #\d+ leaf \(32,\) int64", n) for n in nodes)  # y
    assert re.match(r"  #\d+ CrossEntropy\(#\d+, #\d+\) -> scalar  \[\d\.\d+\]", nodes[-1])
    # backward: where it starts, each gradient in engine order, the leaves' ending in .grad
    root = re.search(r"#\d+", nodes[-1]).group()
    assert f"backward from {root}" in lines
    grads = [line for line in lines if line.startswith("  grad ")]
    assert len(grads) == facts["grads"] == 18
    assert grads[0] == f"  grad {root}  norm 1  [1]"
    leaves = [g for g in grads if g.endswith("(leaf: now in .grad)")]
    assert len(leaves) == 6  # three weights and three biases
    assert all(re.fullmatch(r"  grad (weight|bias)#\d+  norm \S+  \(leaf: now in \.grad\)", g)
               for g in leaves)
    assert re.fullmatch(r"freed the saved tensors of 6 nodes: (#\d+, ){5}#\d+", lines[-2])
    assert lines[-1] == (f"dg.watch: {facts['nodes']} nodes, 18 gradients, 1 backward pass, "
                         "6 freed nodes")
    assert len(lines) < 60  # an outline, not a wall
    assert facts["loaded"] == []  # no Jupyter package was even imported


def test_the_outline_needs_no_jupyter_package(tmp_path):
    done = run_script(tmp_path, WITHOUT_JUPYTER + MLP)
    assert "backward from" in done.stdout and "6 freed nodes" in done.stdout


def test_html_writes_the_page_and_prints_its_path(tmp_path):
    pytest.importorskip("anywidget", reason="the page needs the jupyter extra: "
                                            'pip install "dyngraph[jupyter]"')
    script = MLP.replace("with dg.watch(),", 'with dg.watch(html="graph.html", title="MLP"),')
    done = run_script(tmp_path, script)
    page = page_text(tmp_path / "graph.html")
    assert page.startswith("<!doctype html>") and "mountStandalone" in page
    assert "<title>MLP</title>" in page
    assert "mlp.py" in page and "cross_entropy(logits, y)" in page  # the lines that made nodes
    assert done.stdout.splitlines()[-1] == (
        "dg.watch: wrote the graph's page to graph.html (open it in a browser)")


def test_html_with_source_false_keeps_no_source_text(tmp_path, capsys):
    pytest.importorskip("anywidget", reason="the page needs the jupyter extra: "
                                            'pip install "dyngraph[jupyter]"')
    page = tmp_path / "page.html"
    with outline.watch(html=page, source=False):
        y = dg.tensor([1.0], requires_grad=True) * 2  # sk-not-to-share
    assert "sk-not-to-share" not in page_text(page)
    assert y.shape == (1,)
    with outline.watch(html=page):
        y = dg.tensor([1.0], requires_grad=True) * 2  # sk-kept-by-default
    assert "sk-kept-by-default" in page_text(page)


def test_html_without_the_jupyter_extra_says_so_before_the_block_runs(tmp_path):
    code = WITHOUT_JUPYTER + textwrap.dedent("""\
        import dyngraph as dg
        try:
            with dg.watch(html="graph.html"):
                print("the block ran")
        except ModuleNotFoundError as exc:
            print(type(exc).__name__, exc)
        """)
    done = run_script(tmp_path, code, "page.py")
    assert "the block ran" not in done.stdout
    assert done.stdout.strip() == (
        "MissingExtra The HTML page of dg.watch(html=...) needs the Python package 'anywidget', "
        f'which is not installed: pip install -e "{ROOT}[jupyter]"')  # the checkout's command
    assert not (tmp_path / "graph.html").exists()


# ----------------------------------------------------------------------------- in-process


def watched(**options):
    """Run a small program under the outline; its text."""
    stream = io.StringIO()
    with outline.watch(stream=stream, **options):
        w = dg.tensor([1.0, 2.0], requires_grad=True, name="w")
        a = w * 3
        b = (a * a).sum()
        b.backward()
    return stream.getvalue().splitlines()


def test_pace_waits_once_per_new_source_line(monkeypatch):
    slept = []
    monkeypatch.setattr(outline.time, "sleep", slept.append)
    lines = watched(pace=0.25)
    headers = [line for line in lines if re.match(r"\S*test_watch_terminal\.py:\d+  ", line)]
    assert len(headers) == 3  # w, a and b are made on three lines
    assert slept == [0.25, 0.25, 0.25]
    slept.clear()
    watched()
    assert slept == []


def test_a_loop_stops_printing_after_max_lines_and_counts_everything():
    stream = io.StringIO()
    with outline.watch(stream=stream, max_lines=10):
        w = dg.tensor([1.0], requires_grad=True)
        for _ in range(50):
            (w * 2).sum().backward()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 + 10 + 1 + 1  # what it is, 10 lines, where it stops, the totals
    assert lines[11].startswith("... the outline stops after 10 lines")
    assert lines[12] == ("dg.watch: 151 nodes, 150 gradients, 50 backward passes, "
                         "50 freed nodes")


def test_in_place_changes_and_failed_backward_have_their_lines():
    stream = io.StringIO()
    with outline.watch(stream=stream):
        w = dg.tensor([1.0, 2.0], requires_grad=True, name="w")
        a = w * 2
        a += 1
        b = a.sum()
        b.backward()
        with pytest.raises(RuntimeError):
            b.backward()
    text = stream.getvalue()
    assert re.search(r"^  a#\d+ changed in place \(version 1\)$", text, re.M)
    assert re.search(r"^backward failed: RuntimeError: Trying to backward through the graph a "
                     r"second time", text, re.M)


def test_hostile_names_stay_on_their_line_and_cannot_restyle_the_terminal():
    """NOTE [terminal text]: a name with a newline, an escape code, a bidi override and 300 more
    characters is shown escaped and cut, so each event is still one line of plain text."""
    name = "evil\nname\x1b[31mRED\u202e" + "y" * 300
    stream = io.StringIO()
    with outline.watch(stream=stream):
        x = dg.tensor([1.0, 2.0], requires_grad=True, name=name)
        with dg.scope("layer\x1b[2J"):
            y = (x * 2).sum()
        y.backward()
    lines = stream.getvalue().splitlines()
    assert not [line for line in lines if re.search("[\x00-\x1f\x7f-\x9f\u202a-\u202e]", line)]
    assert outline.MAX_NAME_CHARS == 18 + 21 + 1  # the name's first 39 characters and "…"
    shown = "evil\\nname\\x1b[31mRED\\u202e" + "y" * 21 + "\u2026"
    leaf = next(line for line in lines if re.match(r"  #\d+ evil", line))
    assert leaf.startswith(f"  #{x.id} {shown}: leaf (2,)")
    assert f"Mul({shown}#{x.id}" in stream.getvalue()
    assert "(in layer\\x1b[2J)" in stream.getvalue()
    assert lines[-1] == "dg.watch: 4 nodes, 3 gradients, 1 backward pass, 1 freed node"


def test_an_op_whose_output_was_never_seen_has_no_shape_in_the_outline():
    """dot.shape_known: PyTorch's TBackward0 inside F.linear, found by walking back, has no
    dtype and shape (); the outline says nothing of its shape rather than "scalar"."""
    from dyngraph.spine.events import NodeCreated

    stream = io.StringIO()
    shown = outline.Outline(stream=stream)
    common = dict(requires_grad=True, is_leaf=False, name=None, scope=(), where=None)
    shown(NodeCreated(1, "leaf", (), (3, 2), "float32", "cpu", True, True, "w", (), None, ()))
    shown(NodeCreated(2, "TBackward0", (1,), (), "", "cpu", **common, preview=()))
    shown(NodeCreated(3, "SumBackward0", (2,), (), "float32", "cpu", **common, preview=(2.0,)))
    assert stream.getvalue().splitlines() == ["  #1 w: leaf (3, 2)", "  #2 TBackward0(w#1)",
                                              "  #3 SumBackward0(#2) -> scalar  [2]"]


def test_options_are_checked():
    with pytest.raises(ValueError, match="pace"), outline.watch(pace=-1):
        pass
    with pytest.raises(ValueError, match="max_lines"), outline.watch(max_lines=0):
        pass


# ----------------------------------------------------------------------------- which front end


@pytest.mark.parametrize(
    "shell, expected",
    [(None, False),  # IPython imported, no shell: a plain script
     (types.SimpleNamespace(), False),  # terminal IPython: a shell without a kernel
     (types.SimpleNamespace(kernel=object()), True)],  # a Jupyter kernel
    ids=["script", "terminal-ipython", "kernel"],
)
def test_in_notebook_asks_the_running_ipython_for_a_kernel(monkeypatch, shell, expected):
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert outline.in_notebook() is expected


def test_in_notebook_does_not_import_ipython(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert outline.in_notebook() is False
    assert "IPython" not in sys.modules


def test_dg_watch_in_a_script_is_the_outline(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    with dg.watch() as watching:
        (dg.tensor([1.0], requires_grad=True) * 2).sum().backward()
    assert isinstance(watching, outline.Outline)
    assert capsys.readouterr().out.splitlines()[-1] == (
        "dg.watch: 4 nodes, 3 gradients, 1 backward pass, 1 freed node")  # 4: the constant 2


def test_dg_watch_in_a_kernel_is_the_widget_and_html_writes_its_page(monkeypatch, capsys,
                                                                     tmp_path):
    pytest.importorskip("anywidget", reason='the widget needs pip install "dyngraph[jupyter]"')
    import IPython
    import IPython.display

    from dyngraph.jupyter import GraphView

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(kernel=object()))
    page = tmp_path / "cell.html"
    with dg.watch(html=page) as view:
        (dg.tensor([1.0], requires_grad=True) * 2).sum().backward()
    assert isinstance(view, GraphView) and shown == [view]
    assert page.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert capsys.readouterr().out == (
        f"dg.watch: wrote the graph's page to {page} (open it in a browser)\n")


def test_terminal_ipython_gets_the_outline_from_dg_watch_and_the_cell_magic(tmp_path):
    pytest.importorskip("IPython", reason="needs IPython (the jupyter extra)")
    pytest.importorskip("anywidget", reason="%load_ext dyngraph needs the jupyter extra")
    code = textwrap.dedent("""\
        import dyngraph as dg
        ip = get_ipython()
        with dg.watch():
            a = dg.tensor([3.0], requires_grad=True, name="a")
            c = a + 1
        ip.run_line_magic("load_ext", "dyngraph")
        ip.run_cell_magic("dyngraph", "", "b = (a * 2).sum()\\nb.backward()\\n")
        """)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "IPython", "--no-banner", "--colors=NoColor",
                           "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines.count("dg.watch: no notebook here, so a text outline: nodes as they are made, "
                       "gradients as backward computes them") == 2
    assert any(re.fullmatch(r"  #\d+ a: leaf \(1,\)  \[3\]", line) for line in lines)
    assert any(re.fullmatch(r"  #\d+ c = Add\(a#\d+, #\d+\) -> \(1,\)  \[4\]", line)
               for line in lines)
    assert any(re.fullmatch(r"In \[\d+\]:1  b = \(a \* 2\)\.sum\(\)", line) for line in lines)
    assert re.search(r"^  grad a#\d+  norm 2  \[2\]  \(leaf: now in \.grad\)$", done.stdout, re.M)
    assert "GraphView(" not in done.stdout


def test_the_same_cell_runs_in_a_kernel_and_in_a_terminal(monkeypatch, capsys):
    """Options of one front end are ignored by the other: a lesson's cell may carry both."""
    pytest.importorskip("anywidget", reason='the widget needs pip install "dyngraph[jupyter]"')
    import IPython
    import IPython.display

    from dyngraph.jupyter import GraphView

    monkeypatch.setattr(IPython.display, "display", lambda view: None)
    for kernel in (object(), None):
        shell = types.SimpleNamespace(kernel=kernel)
        monkeypatch.setattr(IPython, "get_ipython", lambda shell=shell: shell)
        with dg.watch(max_lines=50, rankdir="LR") as watcher:
            (dg.tensor([1.0], requires_grad=True) * 2).sum().backward()
        assert isinstance(watcher, GraphView) == (kernel is not None)
    assert "dg.watch:" in capsys.readouterr().out  # the terminal's outline and its totals
