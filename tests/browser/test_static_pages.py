"""Pages and pictures without JupyterLab, in the session's one Chromium (Playwright's sync API
runs one at a time, so these share the ``chromium`` fixture with the Lab tests): pages made from
hostile names run no script of theirs (issue 30), and lesson-size static pictures fit a 968 px
notebook output with readable labels (issue 29)."""

from __future__ import annotations

import pytest
import test_fuzz_recordings as fuzz
import test_static_pictures as pictures

from dyngraph.graphviz_render import MIN_LABEL_PX, label_size


def test_pages_of_hostile_names_run_no_script_of_theirs_in_chromium(chromium, tmp_path):
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    pages = []
    for k, hostile in enumerate(fuzz.HOSTILE_STRINGS[:12]):
        path = tmp_path / f"hostile{k}.html"
        fuzz.hostile_recording(hostile).to_html(path)
        pages.append((hostile, path))
    opened = 0
    for hostile, path in pages:
        context = chromium.new_context(offline=True)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
        page.on("console", lambda m, errors=errors: errors.append(m.text)
                if m.type == "error" else None)
        page.on("dialog", lambda d, errors=errors: errors.append(f"dialog {d.message}"))
        page.goto(path.as_uri())
        page.wait_for_function("document.querySelectorAll('.dg-graph svg g.node').length > 0",
                               timeout=30_000)
        opened += 1
        assert page.evaluate("window.__pwned") is None, hostile[:40]
        assert errors == [], f"{hostile[:40]!r}: {errors}"
        context.close()
    print(f"\nhostile pages: {opened} opened in Chromium, no script of theirs ran")
    assert opened == len(pages)


@pictures.needs_graphviz
def test_lesson_size_pictures_fit_a_968_px_output_in_a_browser(chromium):
    recordings = {"five": pictures.five_node_backward(), "mlp": pictures.mlp(),
                  "rnn": pictures.rnn(), "wide": pictures.wide()}
    bundles = {name: rec._repr_mimebundle_() for name, rec in recordings.items()}
    outputs = "".join(f'<div class="out" id="{name}" style="width:968px" '
                      f'data-label-pt="{label_size(bundle["image/svg+xml"])}">'
                      f'{bundle["text/html"]}</div>' for name, bundle in bundles.items())
    context = chromium.new_context(viewport={"width": 1000, "height": 800})
    try:
        page = context.new_page()
        page.set_content(f"<html><body>{outputs}</body></html>")
        page.wait_for_function("[...document.images].every(i => i.complete)")
        sizes = page.evaluate("""() => [...document.querySelectorAll('.out')].map(out => {
            const image = out.querySelector('img');
            const frame = image.parentElement;  // the box that scrolls
            const box = image.getBoundingClientRect();
            const scale = box.width / image.naturalWidth;  // naturalWidth: the SVG's pt, in px
            return {name: out.id, width: box.width, height: box.height,
                    output: frame.getBoundingClientRect().width, natural: image.naturalWidth,
                    label: Number(out.dataset.labelPt) * 4 / 3 * scale,
                    legend: out.querySelector('.dyngraph-legend').getBoundingClientRect().right
                        - out.getBoundingClientRect().left,
                    scrolls: frame.scrollWidth > frame.clientWidth};
        })""")
    finally:
        context.close()
    by_name = {size["name"]: size for size in sizes}
    for size in sizes:
        assert size["output"] <= 968.5, size  # the picture's box: never wider than the output
        assert size["width"] <= 968.5 or size["name"] == "wide", size
        assert size["height"] > 0 and size["width"] / size["height"] > 0.05, size  # not squashed
    five = by_name["five"]
    assert five["width"] == pytest.approx(five["natural"], abs=1)  # a small one is not blown up
    for name in ("mlp", "rnn"):  # lesson-size graphs fit whole, labels readable
        assert not by_name[name]["scrolls"] and by_name[name]["label"] >= MIN_LABEL_PX, \
            by_name[name]
    # far wider than the output: shrunk only down to readable labels, then its box scrolls
    # (the legend under it, outside that box, stays in view)
    assert by_name["wide"]["scrolls"] and by_name["wide"]["legend"] <= 968.5, by_name["wide"]
    assert by_name["wide"]["label"] == pytest.approx(MIN_LABEL_PX, abs=0.2), by_name["wide"]
