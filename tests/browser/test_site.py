"""The course site (``make site``, tools/build_site.py) in a real browser, with the network off.

Two lessons are built (each executed, about 5 s) into a temporary folder; each page is opened
from disk (file://) in a context with no network, and its graph is played from the start: the
player the page mounts needs no kernel, no server and no CDN. A page of a run that the recorder
kept only in part says so under its graph.
"""

from __future__ import annotations

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
    assert all("dyngraph" not in url for url in page.remote)  # nothing of ours from afar
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
