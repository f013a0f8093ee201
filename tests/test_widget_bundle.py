"""The widget bundle shipped inside the package matches its sources (no node needed).

The built ``dyngraph/jupyter/static/graphview.js`` starts with the SHA-256 of the sources it was
built from (the rule is in widgets/README.md and widgets/hash_sources.mjs); a source change
without a rebuild fails here.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDGETS = ROOT / "widgets"
STATIC = ROOT / "dyngraph" / "jupyter" / "static"


def widget_sources_hash(widgets: Path) -> str:
    files = ["build.mjs", "package.json", "package-lock.json"]
    sources = (widgets / "src").rglob("*")
    files += [p.relative_to(widgets).as_posix() for p in sources if p.is_file()]
    digest = hashlib.sha256()
    for rel in sorted(files, key=lambda r: r.encode()):
        digest.update(rel.encode() + b"\n" + (widgets / rel).read_bytes() + b"\n")
    return digest.hexdigest()


def test_the_shipped_bundle_was_built_from_these_sources():
    expected = widget_sources_hash(WIDGETS)
    js_first = (STATIC / "graphview.js").read_text(encoding="utf-8").splitlines()[0]
    css_first = (STATIC / "graphview.css").read_text(encoding="utf-8").splitlines()[0]
    assert js_first == f"// dyngraph-widget-sources: {expected}", (
        "the widget bundle is stale: run `cd widgets && npm ci && npm run build`"
    )
    assert css_first == f"/* dyngraph-widget-sources: {expected} */"


def test_the_bundle_is_self_contained_and_carries_its_licences():
    bundle = (STATIC / "graphview.js").read_text(encoding="utf-8")
    assert "mountStandalone" in bundle
    # nothing to fetch: no static import statements left for the page to resolve
    assert re.search(r'(^|[;\n])\s*import\s*[\w{*]', bundle) is None
    licences = (STATIC / "THIRD_PARTY_LICENSES.txt").read_text(encoding="utf-8")
    for name in ("Graphviz", "Eclipse Public License", "@hpcc-js/wasm-graphviz", "ISC"):
        assert name in licences, name


def test_the_package_ships_the_static_files():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"dyngraph.jupyter" = ["static/*"]' in pyproject
