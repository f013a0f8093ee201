"""Escaping: tensor and scope names are untrusted text. Whatever they hold, the DOT parses, only
allow-listed attributes reach Graphviz, the SVG is inert (no script, no event handler, no link)
and the text displayed is the name itself. Property tests (hypothesis) over arbitrary names plus
the classic hostile cases."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import dyngraph as dg
from dyngraph.dot import ALLOWED_ATTRIBUTES, MAX_LABEL_CHARS, attributes, quote
from dyngraph.graphviz_render import check_inert_svg

NO_DOT = "Graphviz's dot program is not installed (apt-get install graphviz)"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason=NO_DOT)
FORBIDDEN = {"url", "href", "target", "image", "shapefile", "fontpath", "imagepath", "tooltip"}
SVG = "{http://www.w3.org/2000/svg}"

HOSTILE = [
    "<script>alert(1)</script>",
    '" URL="javascript:alert(1)',
    '"]; n1 [URL="javascript:alert(1)"]; x [label="',
    "<<table><tr><td>x</td></tr></table>>",
    "<b>bold</b>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">click</a>',
    "trailing backslash\\",
    "\\",
    "\\N",
    "\\G",
    "\\E",
    "\\T\\H\\L",
    "\\l",
    "\\r",
    "\\n",
    "\\\\N",
    "&amp;",
    "&#60;",
    "&lt;script&gt;",
    "&",
    "a\nb",
    "line one\nline two\nline three",
    "{ } [ ] ; = -> --",
    "subgraph cluster_x { }",
    "tab\there",
    "bell\x07 and nul\x00",
    "\x1b[31mred\x1b[0m",
    "del\x7f c1\x85",
    "é€😀 \u202eevil",
    "x" * 119,
    "x" * 120,
    "y" * 121,
    "z" * 100_000,
]

# names whose every character prints (no control characters): displayed exactly
printable_names = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\ufffe\uffff")
    | st.just("\n"),
    max_size=160,
)
any_names = st.text(max_size=160) | st.sampled_from(HOSTILE)


# ----------------------------------------------------------------------------- helpers


def _record(name: str, scope: str = "scope"):
    """A recording with a leaf named ``name`` and an op inside a scope named ``scope``."""
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0], requires_grad=True, name=name)
        with dg.scope(scope):
            y = x * 2.0
        y.sum()
    return rec, x


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|->|[{}\[\];=,]|[^\s{}\[\];=,"]+', re.S)


def attribute_keys(dot: str) -> list[str]:
    """Every ``key`` of a ``key=value`` in the DOT (quoted strings are skipped as wholes)."""
    tokens = _TOKEN.findall(dot)
    return [tokens[i - 1] for i, tok in enumerate(tokens) if tok == "="]


def node_label(dot: str, node_id: int) -> str:
    """The raw (DOT-escaped) label of node n<id>."""
    tokens = _TOKEN.findall(dot)
    start = tokens.index(f"n{node_id}")
    assert tokens[start + 1] == "[" and tokens[start + 2] == "label"
    assert tokens[start + 3] == "="
    return tokens[start + 4][1:-1]


def displayed(raw: str) -> str:
    """What Graphviz shows for a quoted DOT label: escString (\\n \\l \\r line breaks, \\\\ a
    backslash, \\" a quote, and \\N \\G ... substituted: refused here), then HTML entities."""
    out = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            assert nxt not in "NGETHL", f"Graphviz would substitute \\{nxt} in {raw!r}"
            out.append("\n" if nxt in "nlr" else nxt)
            i += 2
        else:
            assert ch != "\\", f"a lone backslash ends {raw!r}"
            out.append(ch)
            i += 1
    return html.unescape("".join(out))


def expected(name: str) -> str:
    """The documented display rule: cut past MAX_LABEL_CHARS with an ellipsis; control
    characters shown as \\x07; everything else literally."""
    if len(name) > MAX_LABEL_CHARS:
        name = name[: MAX_LABEL_CHARS - 1] + "\u2026"
    return "".join(
        f"\\x{ord(c):02x}"
        if c != "\n" and (ord(c) < 32 or ord(c) == 127 or 0x80 <= ord(c) < 0xA0) else c
        for c in name
    )


def run_dot(dot: str) -> str:
    done = subprocess.run(["dot", "-Tsvg"], input=dot.encode("utf-8"), capture_output=True,
                          timeout=30, check=False)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    return done.stdout.decode("utf-8")


def svg_texts(root: ET.Element, title: str) -> list[str]:
    """The text lines drawn inside the node or cluster whose <title> is ``title``."""
    for group in root.iter(SVG + "g"):
        heading = group.find(SVG + "title")
        if heading is not None and heading.text == title:
            return [(t.text or "").replace("\xa0", " ") for t in group.iter(SVG + "text")]
    raise AssertionError(f"no <g> titled {title!r} in the SVG")


def visible_lines(text: str) -> list[str]:
    """Graphviz draws no <text> for an empty line; it keeps runs of spaces as no-break spaces."""
    return [line.replace("\xa0", " ") for line in text.split("\n") if line]


def assert_inert(svg: str) -> ET.Element:
    """Parse the SVG and check it has no script, no event handler, no link, no foreign HTML."""
    assert "<script" not in svg.lower()
    root = ET.fromstring(svg)
    for element in root.iter():
        tag = element.tag.rsplit("}", 1)[-1].lower()
        assert tag not in ("script", "a", "foreignobject", "iframe", "use", "image"), tag
        for key in element.attrib:
            local = key.rsplit("}", 1)[-1].lower()
            assert not local.startswith("on"), f"event handler {key}"
            assert local != "href", f"link {key}"
    return root


# ----------------------------------------------------------------------------- quote, allow-list


@pytest.mark.parametrize("key", sorted(FORBIDDEN | {"URL", "xlink:href", "onclick"}))
def test_attributes_outside_the_allow_list_are_refused(key):
    assert key not in ALLOWED_ATTRIBUTES
    with pytest.raises(ValueError, match="not allowed"):
        attributes(**{key: "javascript:alert(1)"})


def test_quote_escapes_what_graphviz_would_interpret():
    assert quote('say "hi"') == '"say \\"hi\\""'
    assert quote("a\\N") == '"a\\\\N"'
    assert quote("end\\") == '"end\\\\"'
    assert quote("a&b") == '"a&amp;b"'
    assert quote("two\nlines") == '"two\\nlines"'
    assert quote("bell\x07") == '"bell\\\\x07"'
    assert quote("plain") == '"plain"'


@settings(max_examples=300, deadline=None)
@given(any_names)
@example("\\")
@example('"')
def test_quote_always_makes_one_well_formed_dot_string(name):
    quoted = quote(name)
    assert re.fullmatch(r'"(?:[^"\\]|\\.)*"', quoted, re.S), quoted
    assert displayed(quoted[1:-1]) == expected(name)


# ----------------------------------------------------------------------------- the DOT level


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=any_names, scope=any_names)
def test_any_name_gives_allow_listed_attributes_and_the_name_as_label(name, scope):
    rec, x = _record(name, scope)
    for options in ({}, {"collapse": True}):
        dot = rec.to_dot(**options)
        keys = attribute_keys(dot)
        assert set(keys) <= ALLOWED_ATTRIBUTES, set(keys) - ALLOWED_ATTRIBUTES
        assert not {k.lower() for k in keys} & FORBIDDEN
        # node names are ours, never user text
        names = re.findall(r"^\s*([^\s\[]+) \[", dot, re.M)
        assert all(re.fullmatch(r"n\d+|s\d+|l\d+|hidden|dropped|graph|node|edge", n)
                   for n in names), names
    label = displayed(node_label(rec.to_dot(), x.id))
    assert label.split("\n")[: len(expected(name).split("\n"))] == expected(name).split("\n")
    bare = rec.to_dot(values=False, grads=False, shapes=False)
    assert displayed(node_label(bare, x.id)) == expected(name)


# ----------------------------------------------------------------------------- through Graphviz


@pytest.mark.slow
@needs_dot
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=any_names, scope=any_names)
def test_graphviz_parses_the_dot_of_any_name(name, scope):
    rec, _ = _record(name, scope)
    run_dot(rec.to_dot())
    run_dot(rec.to_dot(collapse=True))


@pytest.mark.slow
@needs_dot
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=printable_names, scope=printable_names)
@example(name="trailing\\", scope="\\N \\G \\l")
@example(name='say "hi" &amp; &#60;', scope="<<b>x</b>>\nsecond line")
def test_the_svg_shows_the_name_literally_and_is_inert(name, scope):
    rec, x = _record(name, scope)
    svg = rec.to_svg(values=False, grads=False, shapes=False)
    root = assert_inert(svg)
    assert svg_texts(root, f"n{x.id}") == visible_lines(expected(name))
    assert svg_texts(root, "cluster_0") == visible_lines(expected(scope))


@needs_dot
@pytest.mark.parametrize("name", HOSTILE, ids=[repr(n)[:40] for n in HOSTILE])
def test_hostile_names_are_drawn_literally_and_safely(name):
    rec, x = _record(name, scope=name)
    dot = rec.to_dot()
    run_dot(dot)  # Graphviz parses it
    assert set(attribute_keys(dot)) <= ALLOWED_ATTRIBUTES
    svg = rec.to_svg(values=False, grads=False, shapes=False)  # ours: checked and inert
    root = assert_inert(svg)
    assert svg_texts(root, f"n{x.id}") == visible_lines(expected(name))
    assert svg_texts(root, "cluster_0") == visible_lines(expected(name))
    collapsed = rec.to_svg(collapse=True)
    assert_inert(collapsed)


@needs_dot
@pytest.mark.parametrize("name", ["href", "javascript:void(0)", "count one=1", "xlink:href=x"])
def test_harmless_names_that_merely_mention_links_are_still_drawn(name):
    rec, x = _record(name)
    root = assert_inert(rec.to_svg(values=False, grads=False, shapes=False))
    assert svg_texts(root, f"n{x.id}") == [name]


@needs_dot
@pytest.mark.parametrize("name", ["\ufffe", "a\uffffb"])
def test_noncharacters_still_give_well_formed_svg(name):
    rec, x = _record(name)
    root = assert_inert(rec.to_svg(values=False, grads=False, shapes=False))
    assert svg_texts(root, f"n{x.id}")


def test_display_never_raises_for_a_lone_surrogate():
    rec, _ = _record("bad \udcff bytes")
    bundle = rec._repr_mimebundle_()
    assert bundle.get("text/plain")


# ----------------------------------------------------------------------------- long names


def test_long_names_are_cut_with_an_ellipsis_and_other_lines_survive():
    exact = "a" * MAX_LABEL_CHARS
    longer = "b" * (MAX_LABEL_CHARS + 1)
    for name, shown in ((exact, exact), (longer, "b" * (MAX_LABEL_CHARS - 1) + "\u2026")):
        rec, x = _record(name)
        lines = displayed(node_label(rec.to_dot(), x.id)).split("\n")
        assert lines[0] == shown
        assert lines[1:3] == ["(2,)", "[1, 2]"]  # the shape and values are not cut away


def test_a_megabyte_name_does_not_reach_graphviz():
    rec, x = _record("m" * 1_000_000, scope="s" * 1_000_000)
    dot = rec.to_dot()
    assert len(dot) < 10_000
    assert displayed(node_label(dot, x.id)).split("\n")[0] == "m" * (MAX_LABEL_CHARS - 1) + "\u2026"


def test_a_collapsed_scope_with_a_long_name_still_says_how_many_nodes_it_holds():
    rec, _ = _record("x", scope="s" * 300)
    dot = rec.to_dot(collapse=True)
    # the box's last line counts its nodes ("4 nodes", as the widget's scope box says)
    assert re.search(r'\\n\d+ nodes?"', dot), "the node count of the collapsed scope was cut away"


# ----------------------------------------------------------------------------- the SVG check


@pytest.mark.parametrize(
    "svg",
    [
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><g onload="alert(1)"/></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><a href="https://x">x</a></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><div/></foreignObject></svg>',
    ],
)
def test_check_inert_svg_refuses_active_content(svg):
    with pytest.raises(RuntimeError):
        check_inert_svg(svg)


def test_check_inert_svg_accepts_a_plain_diagram():
    check_inert_svg('<svg xmlns="http://www.w3.org/2000/svg"><g id="n1" class="node">'
                    "<title>n1</title><text>x &amp; y</text></g></svg>")
