"""The course site (``make site``, tools/build_site.py) in a real browser, with the network off.

Two lessons are built (each executed, about 5 s) into a temporary folder; each page is opened
from disk (file://) in a context with no network, and its graph is played from the start: the
player the page mounts needs no kernel, no server and no CDN. A page of a run that the recorder
kept only in part says so under its graph.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import dyngraph as dg

from .conftest import _chromium_missing
from .labtools import wait_for

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ["00_tour.ipynb", "01_what_is_a_graph.ipynb"]

DRAWN = ("(root) => root.querySelectorAll("
         "'.dg-graph svg g.node:not(.dg-future)').length")


@pytest.fixture
def offline_page(chromium):
    """A page with the network off: only file: and data: URLs load; everything else asked for
    is listed in ``page.remote`` (the lab template's CDN scripts: MathJax, require.js)."""
    context = chromium.new_context(offline=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.remote = []

    def route(r):
        url = r.request.url
        if url.startswith(("file:", "data:")):
            r.continue_()
        else:
            page.remote.append(url)
            r.abort()

    page.route("**/*", route)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    context.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if _chromium_missing():
        pytest.skip(_chromium_missing())
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_site.py"), "--out", str(out),
         *(str(ROOT / "notebooks" / name) for name in LESSONS)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def play_from_the_start(page, root) -> tuple[int, int]:
    """Scrub to the start, press play; returns (boxes drawn at the start, at the end)."""
    wait_for(lambda: root.evaluate(DRAWN) > 0, timeout=30)  # drawn at the end first
    total = root.evaluate(DRAWN)
    root.get_by_role("slider", name="position in the timeline").fill("0")
    wait_for(lambda: root.evaluate(DRAWN) < total, timeout=10)
    start = root.evaluate(DRAWN)
    root.get_by_role("button", name="play / pause (Space)").click()
    wait_for(lambda: root.evaluate(DRAWN) == total, timeout=30)
    return start, total


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_page_of_the_site_plays_its_graph_from_disk_with_the_network_off(
    site, offline_page, lesson
):
    page = offline_page
    html = site / lesson.replace(".ipynb", ".html")
    page.goto(html.as_uri())
    player = page.locator(".dyngraph-player").first
    player.wait_for(timeout=30_000)
    start, total = play_from_the_start(page, player)
    assert start < total and total >= 3
    position = player.locator(".dg-position").inner_text()
    assert position  # the step it stopped at is named
    assert not page.errors, page.errors
    assert not page.remote, f"the page asked the network for {page.remote}"  # NOTE [no CDN]
    assert 'href="index.html"' in html.read_text(encoding="utf-8")
    page.goto((site / "index.html").as_uri())
    assert page.get_by_role("link").count() == len(LESSONS)


def test_a_page_of_a_run_recorded_in_part_says_so_under_its_graph(offline_page, tmp_path):
    x = dg.tensor([1.0], requires_grad=True, name="x")
    with dg.record(max_nodes=40) as rec:
        y = x
        for _ in range(100):
            y = y * 1.0
    assert rec.dropped_nodes == 201 - 40
    rec.to_html(tmp_path / "part.html")
    offline_page.goto((tmp_path / "part.html").as_uri())
    notes = offline_page.locator(".dg-notes")
    wait_for(lambda: "not recorded" in notes.inner_text().lower(), timeout=30)
    assert "161" in notes.inner_text()


SCRIPT = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.I | re.S)
RUNS = re.compile(r"""type\s*=\s*["']?(?!text/javascript|module|application/javascript)""", re.I)
REMOTE_URL = re.compile(r"https?://", re.I)
REMOTE_STYLE = re.compile(r"""<link[^>]*\shref\s*=\s*["']?https?:|@import[^;]*https?:""", re.I)


def remote_references(page: str) -> list[str]:
    """What a page would fetch from the network: a script that runs (no ``type``, or a
    JavaScript one) whose ``src`` or text names an http(s) URL, or a remote style sheet."""
    found = [m.group(0)[:120] for m in SCRIPT.finditer(page)
             if not RUNS.search(m["attrs"]) and REMOTE_URL.search(m["attrs"] + m["body"])]
    return found + [m.group(0) for m in REMOTE_STYLE.finditer(page)]


def _build_site_module():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import build_site
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return build_site


def test_remote_references_finds_what_nbconvert_loads_from_a_cdn():
    from nbconvert import HTMLExporter

    nbformat = pytest.importorskip("nbformat", reason="building a page needs nbformat")
    notebook = nbformat.read(str(ROOT / "notebooks" / "03_backward.ipynb"), as_version=4)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    assert remote_references(body)  # require.js and MathJax: the check sees them


def test_a_page_of_the_site_references_no_remote_script_and_shows_math_as_mathml(tmp_path):
    """NOTE [no CDN] in tools/build_site.py: no require.js, MathJax, mermaid or widget manager
    from a CDN (the graphs are players, and the widget state they came from is dropped, the
    shared front end included), and a formula is MathML, not raw $$...$$ waiting for MathJax."""
    nbformat = pytest.importorskip("nbformat", reason="building a page needs nbformat")
    pytest.importorskip("nbclient", reason="executing a lesson needs nbclient")
    build_site = _build_site_module()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("The chain rule: $$\\frac{dL}{dx} = \\frac{dL}{dz}"
                                      "\\cdot\\frac{dz}{dx}$$"),
        nbformat.v4.new_code_cell("import dyngraph as dg\n"
                                  "x = dg.tensor([1.0], requires_grad=True)\n"
                                  "with dg.watch():\n    (x * 2).sum().backward()"),
    ]
    build_site.execute(notebook, tmp_path)
    assert len(notebook.cells[1].outputs) == 2  # the widget's view, then its picture
    assert build_site.to_players(notebook) == (1, 0)
    (player,) = notebook.cells[1].outputs  # the player is the picture: no second one
    assert "dyngraph-player" in player["data"]["text/html"]
    page = build_site.page(notebook, "a lesson", "<nav></nav>")
    assert not remote_references(page), remote_references(page)
    assert "$$" not in page and "<mfrac>" in page
    assert "dyngraph-player" in page


def test_a_formula_becomes_mathml_and_prices_stay_text():
    build_site = _build_site_module()
    pytest.importorskip("latex2mathml", reason="MathML needs latex2mathml (the dev extra)")
    out = build_site.math_to_mathml(r"so $e = a \cdot b$ costs $5 and $ 3, and $$\frac{a}{b}$$"
                                    "\nbut `echo $HOME$` and\n```\nprint('$x$')\n```\n")
    assert out.count("<math") == 2 and 'display="block"' in out and "costs $5 and $ 3" in out
    assert "`echo $HOME$`" in out and "print('$x$')" in out  # code stays code


SITE_FIGURES = re.compile(r"\((\d+) pages and an index, (\d+) graphs, ([\d.]+) MB; "
                          r"`make site` took (\d+) s")


def test_the_readmes_site_figures_are_what_make_site_measured():
    """The README states what `make site` built (site/build.json, written by the last build):
    one page per lesson, its graphs, its size and its time (these two within 25%: they vary a
    little from build to build and machine to machine)."""
    import json

    text = (ROOT / "README.md").read_text(encoding="utf-8").replace("\n", " ")
    stated = SITE_FIGURES.search(text)
    assert stated, "the README states the site's pages, graphs, size and build time"
    pages, graphs, megabytes, seconds = int(stated[1]), int(stated[2]), float(stated[3]), int(
        stated[4])
    assert pages == len(list((ROOT / "notebooks").glob("*.ipynb"))), "one page per lesson"
    built = ROOT / "site" / "build.json"
    if not built.exists():
        pytest.skip("no site/build.json: run `make site` to compare the README with a build")
    measured = json.loads(built.read_text(encoding="utf-8"))
    if len(measured["pages"]) != pages:
        pytest.skip("site/ was built from a subset of the lessons")
    assert graphs == measured["graphs"]
    assert abs(megabytes - measured["bytes"] / 1e6) <= 0.25 * megabytes
    assert abs(seconds - measured["seconds"]) <= 0.25 * seconds
