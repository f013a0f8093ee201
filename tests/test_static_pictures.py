"""Static pictures (a Recording, dg.draw, dg.diff shown in a notebook) speak the live widget's
vocabulary and fit the notebook's output.

- they fit the output's width: the SVG is as wide as the output, never wider than its own size,
  and never so small that a label drops below MIN_LABEL_PX (past that its box scrolls);
- compact labels on big graphs, every value and gradient on small ones (``detail=`` forces
  either way);
- a legend naming the styles the picture uses, in the widget's words;
- the same structure as the widget's (widgets/src/structure.js): for the same recording, the
  same boxes (nodes, rolled-up loops, collapsed scopes, the hidden note), labels and edges,
  each box's inputs in the same order and the same edges of shared inputs (dot.py NOTE
  [reading order]).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import dyngraph as dg
from dyngraph import dot
from dyngraph.graphviz_render import MIN_LABEL_PX, fitted_html, graphviz_command
from dyngraph.record import Recording

ROOT = Path(__file__).resolve().parents[1]
needs_graphviz = pytest.mark.skipif(graphviz_command() is None,
                                    reason="no Graphviz here (dot or pygraphviz) to draw with")


# ----------------------------------------------------------------------------- recordings


def five_node_backward() -> Recording:
    """micrograd's picture: two leaves, three ops, backward watched."""
    with dg.record() as rec:
        a = dg.tensor([2.0], requires_grad=True, name="a")
        b = dg.tensor([-3.0], requires_grad=True, name="b")
        loss = (a * b).tanh().sum()
        loss.backward()
    return rec


def mlp(steps: int = 1, backward: bool = True) -> Recording:
    """A 3-layer MLP on a batch of 32 (about 50 nodes a step)."""
    dg.manual_seed(0)
    model = dg.nn.Sequential(dg.nn.Linear(8, 16), dg.nn.ReLU(), dg.nn.Linear(16, 16),
                             dg.nn.ReLU(), dg.nn.Linear(16, 3))
    X, y = dg.randn(32, 8), dg.tensor([0, 1, 2, 1] * 8)
    with dg.record() as rec:
        for _ in range(steps):
            loss = dg.nn.functional.cross_entropy(model(X), y)
            if backward:
                loss.backward()
    return rec


def rnn(steps: int = 30) -> Recording:
    """An RNN cell over ``steps`` time steps, forward only."""
    dg.manual_seed(0)
    cell = dg.nn.RNNCell(4, 8)
    xs = dg.randn(steps, 1, 4)
    with dg.record() as rec:
        h = dg.zeros(1, 8)
        for t in range(steps):
            h = cell(xs[t], h)
        h.sum()
    return rec


def micrograd_readme(backward: bool = True) -> Recording:
    """The first example of micrograd's README, watched (39 Values: a and b read all over)."""
    pytest.importorskip("micrograd", reason="micrograd is not installed (pip install micrograd)")
    from micrograd.engine import Value

    import dyngraph.micrograd  # noqa: F401  (watches micrograd inside dg.record())

    with dg.record() as rec:
        a = Value(-4.0)
        b = Value(2.0)
        c = a + b
        d = a * b + b**3
        c += c + 1
        c += 1 + c + (-a)
        d += d * 2 + (b + a).relu()
        d += 3 * d + (b - a).relu()
        e = c - d
        f = e**2
        g = f / 2.0
        g += 10.0 / f
        if backward:
            g.backward()
    return rec


def chain(n: int) -> Recording:
    """A chain of ``n`` nodes with no loop to roll up: sin and cos in the Thue-Morse order,
    which never repeats a block three times back to back."""
    with dg.record() as rec:
        h = dg.tensor([0.5, 0.25], requires_grad=True, name="h")
        for i in range(n - 1):
            h = h.sin() if bin(i).count("1") % 2 else h.cos()
    return rec


def wide(n: int = 60) -> Recording:
    """``n`` leaves side by side feeding one op: a picture far wider than a notebook."""
    with dg.record() as rec:
        dg.stack([dg.tensor([float(i)], requires_grad=True, name=f"x{i}")
                  for i in range(n)]).sum()
    return rec


def labels(drawing: dot.Drawing) -> dict[str, list[str]]:
    """Box name -> its label lines."""
    return {box.name: box.label for box in drawing.boxes}


# ------------------------------------------------------------------------ numbers where they fit


def test_a_five_node_backward_shows_every_value_and_gradient_by_default():
    rec = five_node_backward()
    assert len(rec.nodes) <= dot.DETAIL_MAX_NODES
    drawn = dot.drawing(rec)
    assert drawn.detail
    for node_id, lines in ((i, labels(drawn)[f"n{i}"]) for i in rec.nodes):
        node = rec.nodes[node_id]
        assert any(line.startswith("[") for line in lines), (node.op, lines)
        assert any(line.startswith("grad") for line in lines), (node.op, lines)
    a = next(n for n in rec.nodes.values() if n.name == "a")
    # d tanh(ab) / da = b (1 - tanh(ab)^2) = -3 (1 - tanh(6)^2)
    assert labels(drawn)[f"n{a.id}"] == ["a", "(1,)", "[2]", "grad [-7.367e-05]"]


def test_automatic_detail_shows_three_numbers_a_line_and_detail_true_the_whole_preview():
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True, name="x")
        x.sum().backward()
    assert labels(dot.drawing(rec))[f"n{x.id}"][2:] == ["[1, 2, 3, ...]", "grad [1, 1, 1, ...]"]
    assert labels(dot.drawing(rec, detail=True))[f"n{x.id}"][2:] == [
        "[1, 2, 3, 4, 5, 6]", "grad [1, 1, 1, 1, 1, 1]"]


def test_a_fifty_node_graph_stays_compact_by_default():
    rec = mlp()
    assert len(rec.nodes) > dot.DETAIL_MAX_NODES
    drawn = dot.drawing(rec)
    assert not drawn.detail
    shown = labels(drawn)
    for node in rec.nodes.values():
        lines = shown.get(f"n{node.id}")
        if lines is None:
            continue
        if dot._numel(node.shape) > dot.COMPACT_VALUES:  # only op, name, shape (and states)
            assert not any(line.startswith(("[", "grad")) for line in lines), lines
    loss = next(n for n in rec.nodes.values() if n.op == "CrossEntropy")
    assert shown[f"n{loss.id}"][2].startswith("["), "the loss keeps its number"
    assert shown[f"n{loss.id}"][3] == "grad [1]"
    # the widget's geometry: tighter ranks, the label font it fits into a pane
    assert 'ranksep="0.18"' in drawn.dot and 'fontsize="11"' in drawn.dot


def test_detail_forces_either_way_and_says_what_it_takes():
    with dg.record() as small:  # four nodes of two elements each
        x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
        (x * x).exp().sum().backward()
    assert labels(dot.drawing(small))[f"n{x.id}"] == ["x", "(2,)", "[1, 2]",
                                                   "grad (summed) [5.437, 218.4]"]
    assert labels(dot.drawing(small, detail=False))[f"n{x.id}"] == ["x", "(2,)"]
    big = mlp()
    first = f"n{min(big.nodes)}"  # the input batch, (32, 8)
    assert labels(dot.drawing(big, detail=True))[first][2].startswith("[")
    assert len(labels(dot.drawing(big, detail=False))[first]) == 2
    with pytest.raises(ValueError, match="detail must be True, False or None"):
        small.to_dot(detail="yes")
    # dg.draw takes it too (and passes it to its picture)
    drawn = dg.draw((x * x).exp().sum(), detail=False).to_dot()
    assert "grad" not in drawn and "x\\n(2,)\"" in drawn


# ----------------------------------------------------------------------------- the legend


def test_the_legend_names_the_styles_the_picture_uses():
    drawn = dot.drawing(five_node_backward())
    assert drawn.styles == ("leaf", "op", "output", "freed", "grad", "grad_edge")
    names = [entry["name"] for entry in dot.legend(drawn.styles)]
    assert names == ["leaf", "op", "output", "freed", "grad", "gradient size"]
    big = dot.drawing(mlp(), collapse=True)
    assert "parameter" not in big.styles or "group" in big.styles
    assert "group" in big.styles and "group / loop" in [e["name"] for e in
                                                        dot.legend(big.styles)]
    assert "group" in dot.drawing(rnn()).styles  # the rolled-up loop


def test_the_widget_gets_the_legends_words_in_its_vocabulary():
    """NOTE [one legend]: dot.LEGEND is the one place of the legend's words; the widget gets them
    in the vocabulary (widgets/test/citizen.test.js shows it displays them) and draws a swatch
    for each key it knows, every one of them a key of LEGEND."""
    assert dot.vocabulary()["legend"] == [list(entry) for entry in dot.LEGEND]
    view_js = (ROOT / "widgets" / "src" / "view" / "panels.js").read_text(encoding="utf-8")
    block = re.search(r"const swatches = \{(.*?)\n    \};", view_js, re.S)
    assert block, "widgets/src/view/panels.js legend changed shape: update this test"
    keys = re.findall(r"^\s+(\w+): \[", block[1], re.M)
    assert len(keys) == 10 and set(keys) <= {key for key, _, _ in dot.LEGEND}, keys


@needs_graphviz
def test_a_notebook_shows_the_picture_with_its_legend():
    bundle = five_node_backward()._repr_mimebundle_()
    page = bundle["text/html"]
    assert page.startswith('<div class="dyngraph-picture"')
    legend = re.search(r'<div class="dyngraph-legend".*?</div>', page).group(0)
    assert [re.sub(r"<[^>]+>", "", item) for item in
            re.findall(r'<span title="[^"]*".*?</span>[^<]*</span>', legend)] == [
        "leaf", "op", "output", "freed", "grad [...]grad", "gradient size"]
    assert "<svg" in bundle["image/svg+xml"]  # the picture at its own size, for other viewers
    diff = dg.diff(mlp(backward=False), mlp(steps=2, backward=False))._repr_mimebundle_()
    legend = diff["text/html"].split('class="dyngraph-legend"')[1]
    assert "only in B" in legend and "only in A" not in legend


# ----------------------------------------------------------------------------- fitting the width

SVG = ('<?xml version="1.0"?>\n<!-- Generated by graphviz -->\n'
       '<svg width="1500pt" height="300pt"\n viewBox="0.00 0.00 1500.00 300.00" '
       'xmlns="http://www.w3.org/2000/svg"><g><text font-size="11.00">x</text>'
       '<text font-size="11.00">y</text><text font-size="8.00">z</text></g></svg>\n')


def test_the_picture_is_as_wide_as_the_output_never_wider_than_itself_and_stays_readable():
    page = fitted_html(SVG, alt="<Recording: 3 nodes>")
    image = re.search(r"<img\b[^>]*>", page).group(0)
    style = re.search(r'style="([^"]*)"', image).group(1)
    assert "width:100%" in style and "height:auto" in style  # as wide as the output
    assert "max-width:2000px" in style  # 1500 pt: never blown up past its own size
    # never below MIN_LABEL_PX for its usual label size (11 pt = 14.7 px at full size)
    min_width = float(re.search(r"min-width:([\d.]+)px", style).group(1))
    assert min_width / 2000 * 11 * 4 / 3 == pytest.approx(MIN_LABEL_PX, abs=0.01)
    assert "overflow-x:auto" in page.split("<img")[0]  # past that, its box scrolls
    # the SVG itself, as an image: no inline <svg> (a sanitizer would drop it, keeping its texts)
    data = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', image).group(1)
    assert base64.b64decode(data).decode("utf-8") == SVG and "<svg" not in page
    assert 'alt="&lt;Recording: 3 nodes&gt;"' in image  # escaped text for screen readers
    with pytest.raises(RuntimeError, match="without an <svg> element"):
        fitted_html("<html></html>")


# ------------------------------------------------------------------------ the widget's structure

_HARNESS = """
import { buildStructure } from %s;
let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const data = JSON.parse(input);
  data.options.expanded = new Set(data.options.expanded || []);
  const timeline = {
    nodes: new Map(data.nodes.map((n) => [n.id, n])),
    edges: new Map(data.edges.map(([src, dst, pos]) => [`${src},${dst},${pos}`, {src, dst, pos}])),
    clusters: new Map(data.clusters),
    steps: data.steps,
  };
  const s = buildStructure(timeline, data.options);
  process.stdout.write(JSON.stringify({
    boxes: s.boxes.map((b) => ({name: b.name, kind: b.kind, members: b.members, lines: b.lines,
                                scope: b.scope})),
    edges: s.edges.map((e) => [e.src, e.dst]),
    labels: s.edges.filter((e) => e.label).map((e) => [e.src, e.dst, e.label]),
    dot: s.dot,
  }));
});
"""


def _widget_structure(rec: Recording, collapse_over: int, max_nodes: int,
                      expanded: tuple[str, ...] = ()) -> dict:
    """What widgets/src/structure.js buildStructure makes of ``rec`` (compact labels, as the
    live view lays it out), run by Node."""
    vocabulary_fixture = pytest.importorskip(
        "vocabulary_fixture", reason="the jupyter extra is missing (pip install -e .[jupyter]): "
        "the widget's node data is made by dyngraph.jupyter")
    clusters: dict[str, int] = {}
    nodes = []
    for node in sorted(rec.nodes.values(), key=lambda n: n.order):
        for depth in range(1, len(node.scope) + 1):
            clusters.setdefault("\u0000".join(node.scope[:depth]), len(clusters))
        nodes.append({**vocabulary_fixture.node_data(node), "order": node.order})
    data = {
        "nodes": nodes,
        "edges": [[e.src, e.dst, e.position] for e in rec.edges if e.src in rec.nodes],
        # the backward passes, with the loop that called backward() (their loops' lines)
        "steps": [["backward_started", step[1],
                   step[2] and {"file": step[2][0], "line": step[2][1], "cell": step[2][3],
                                "loop": step[2][5] if len(step[2]) > 5 else None}]
                  for step in rec.timeline if step[0] == "backward_started"],
        "clusters": list(clusters.items()),
        "options": {"vocabulary": dot.vocabulary(), "detail": False,
                    "collapseOver": collapse_over, "maxNodes": max_nodes,
                    "expanded": list(expanded)},
    }
    module = json.dumps((ROOT / "widgets" / "src" / "structure.js").as_uri())
    done = subprocess.run(["node", "--input-type=module", "-e", _HARNESS % module],
                          input=json.dumps(data), capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _canonical(boxes: list[dict], edges: list[tuple[str, str]], dot_text: str,
               labels: list[tuple[str, str, str]] = ()) -> tuple[set, set, dict, set, set]:
    """Boxes as (kind, members, label lines, scope), edges between member sets, each box's
    inputs in the order the DOT text states them (what ``ordering="in"`` draws), the edges
    with the shared-input body, and the shapes on edges: the names of group boxes differ (l<k>
    here, l<first id> there) and the widget adds "click to expand" ("click to open")."""
    key = {}
    shown = set()
    for box in boxes:
        members = tuple(sorted(box["members"]))
        key[box["name"]] = members
        lines = [line.replace(" \u00b7 click to expand", "").replace(" \u00b7 click to open", "")
                 for line in box["lines"]]
        if box["kind"] == "hidden":
            lines = lines[:1]  # "N nodes hidden"; the picture adds a line saying why
        shown.add((box["kind"], members, tuple(lines), tuple(box["scope"])))
    inputs: dict[tuple, list[tuple]] = {}
    shared = set()
    for src, dst, attrs in re.findall(r"^\s*(\w+) -> (\w+) (\[[^\]]*\])", dot_text, re.M):
        inputs.setdefault(key[dst], []).append(key[src])
        if dot.SHARED_EDGE_BODY in attrs:
            shared.add((key[src], key[dst]))
    return (shown, {(key[src], key[dst]) for src, dst in edges}, inputs, shared,
            {(key[src], key[dst], text) for src, dst, text in labels})


needs_node = [
    pytest.mark.skipif(shutil.which("node") is None,
                       reason="Node.js is not installed: the widget's structure.js runs in it"),
    pytest.mark.skipif(not (ROOT / "widgets" / "node_modules" / "@msgpack").is_dir(),
                       reason="the widget's npm packages are not installed: run `npm ci` in "
                       "widgets/ (make test does, before pytest)"),
]


def _same_structure(case: str, rec: Recording, collapse_over: int, max_nodes: int,
                    expanded: tuple[str, ...] = ()) -> dot.Drawing:
    """Assert that dot.py and structure.js draw ``rec`` alike; the static drawing."""
    drawn = dot.drawing(rec, detail=False, collapse_over=collapse_over, max_nodes=max_nodes,
                        expanded=expanded)
    python = _canonical(
        [{"name": b.name, "kind": b.kind, "members": b.members, "lines": b.label,
          "scope": b.scope} for b in drawn.boxes], drawn.edges, drawn.dot,
        [(src, dst, text) for (src, dst), text in drawn.labels.items()])
    widget = _widget_structure(rec, collapse_over, max_nodes, expanded)
    live = _canonical(widget["boxes"], widget["edges"], widget["dot"], widget["labels"])
    assert python[0] == live[0], (case, sorted(python[0] ^ live[0])[:6])
    assert python[1] == live[1], (case, sorted(python[1] ^ live[1])[:6])
    assert python[2] == live[2], case  # each box's inputs in the same order
    assert python[3] == live[3], (case, sorted(python[3] ^ live[3])[:6])  # shared inputs
    assert python[4] == live[4], (case, sorted(python[4] ^ live[4])[:6])  # shapes on edges
    return drawn


@pytest.mark.parametrize("case, build, collapse_over, max_nodes", [
    ("an MLP, every module a cluster", lambda: mlp(backward=False), 150, 200),
    ("an MLP, past collapse_over", lambda: mlp(backward=False), 10, 200),
    ("an RNN over 30 steps, rolled up", rnn, 150, 200),
    ("a chain past the budget", lambda: chain(60), 500, 12),
    ("micrograd's README example", lambda: micrograd_readme(backward=False), 150, 200),
])
@needs_node[0]
@needs_node[1]
def test_static_and_live_pictures_have_the_same_structure(case, build, collapse_over, max_nodes):
    rec = build()
    drawn = _same_structure(case, rec, collapse_over, max_nodes)
    python = _canonical(
        [{"name": b.name, "kind": b.kind, "members": b.members, "lines": b.label,
          "scope": b.scope} for b in drawn.boxes], drawn.edges, drawn.dot)
    if case == "an RNN over 30 steps, rolled up":  # its weights are read by three boxes
        assert len(python[3]) >= 4, python[3]
    kinds = {box.kind for box in drawn.boxes}
    expected = {"an MLP, past collapse_over": "scope", "an RNN over 30 steps, rolled up": "loop",
                "a chain past the budget": "hidden"}.get(case, "node")
    assert expected in kinds, (case, kinds)  # the case shows what it is about


# ------------------------------------------------------------------------ a map at every size


def real_model(name: str, backward: bool = False, **kwargs) -> Recording:
    """One of tests/real_models.py recorded: forward (with its loss), and backward if asked."""
    pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")
    import real_models

    import dyngraph.torch  # noqa: F401  (dg.record() watches torch once it is imported)

    model, inputs, loss_fn = real_models.CASES[name](**kwargs)
    with dg.record() as rec:
        loss = loss_fn(model(*inputs))
        if backward:
            loss.backward()
    return rec


def map_boxes(drawn: dot.Drawing) -> list[tuple[tuple[str, ...], str]]:
    """The boxes of the map: (where drawn, label), in the drawing's order."""
    return [(box.scope, box.label[0]) for box in drawn.boxes if box.kind == "scope"]


@pytest.mark.parametrize("case, name, kwargs, collapse_over, expanded", [
    ("ResNet-18: stem, four stages, pooling, classifier", "resnet18", {}, 150, ()),
    ("ResNet-18, a stage and its first block opened", "resnet18", {}, 150,
     ("scope:ResNet / layer2", "scope:ResNet / layer2 / 0 \u00b7 BasicBlock")),
    ("a GPT of four Blocks: four boxes", "gpt", {}, 150, ()),
    ("a GPT of six Blocks: one roll", "gpt", {"n_layer": 6}, 150, ()),
    ("a GPT of six Blocks, the roll and a Block opened", "gpt", {"n_layer": 6}, 150,
     ("roll:GPT / h.0 \u00b7 Block", "scope:GPT / h.2 \u00b7 Block")),
    ("a TreeNet: its tree of calls", "treenet", {}, 20, ()),
    ("a TreeNet, a call opened", "treenet", {}, 20,
     ("scope:TreeNet / TreeNet call 2.2",)),
])
@needs_node[0]
@needs_node[1]
def test_the_map_of_a_real_model_is_the_same_static_and_live(case, name, kwargs, collapse_over,
                                                             expanded):
    """NOTE [map]: dot.py draws the hierarchy as widgets/src/levels.js does, for the three real
    models of tests/real_models.py, closed and opened."""
    rec = real_model(name, **kwargs)
    drawn = _same_structure(case, rec, collapse_over, 200, expanded)
    assert any(box.kind == "scope" for box in drawn.boxes), case


def test_resnet18_is_drawn_as_its_stem_four_stages_pooling_and_classifier():
    """Past collapse_over, the map: the whole model is one scope, so the picture starts inside
    it, each child a box saying what it holds, the shape flowing out of each on its edge."""
    rec = real_model("resnet18", backward=True)
    assert len(rec.nodes) > dot.COLLAPSE_OVER
    drawn = dot.drawing(rec)
    assert map_boxes(drawn) == [(("ResNet",), label) for label in [
        "conv1 \u00b7 2 nodes", "bn1 \u00b7 5 nodes", "relu \u00b7 1 node", "maxpool \u00b7 1 node",
        "layer1 \u00b7 2 BasicBlocks \u00b7 34 nodes",
        *[f"layer{k} \u00b7 2 BasicBlocks \u00b7 41 nodes" for k in (2, 3, 4)],
        "avgpool \u00b7 1 node", "fc \u00b7 4 nodes"]]
    shapes = {drawn.boxes[[b.name for b in drawn.boxes].index(src)].label[0].split(" ")[0]: text
              for (src, _), text in drawn.labels.items()}
    assert shapes["layer1"] == "(2, 64, 8, 8)" and shapes["layer4"] == "(2, 512, 1, 1)"
    assert shapes["fc"] == "(2, 10)"
    assert 'label="(2, 128, 4, 4)", fontname="Helvetica"' in drawn.dot  # a Graphviz label here
    assert 'graph [label="ResNet"' in drawn.dot  # its cluster
    # a stage opened: its blocks, each a box; a block opened: its modules
    opened = dot.drawing(rec, expanded=("scope:ResNet / layer2",
                                        "scope:ResNet / layer2 / 0 \u00b7 BasicBlock"))
    inside = [label for where, label in map_boxes(opened) if where[:2] == ("ResNet", "layer2")]
    assert inside == ["conv1 \u00b7 2 nodes", "bn1 \u00b7 5 nodes", "relu \u00b7 2 nodes",
                      "conv2 \u00b7 2 nodes", "bn2 \u00b7 5 nodes",
                      "downsample \u00b7 2 modules \u00b7 7 nodes",
                      "1 \u00b7 BasicBlock \u00b7 5 modules \u00b7 17 nodes"]


def test_a_transformer_shows_its_blocks_and_rolls_many_alike_into_one_box():
    four = dot.drawing(real_model("gpt"))
    assert [label for _, label in map_boxes(four)] == [
        "wte \u00b7 2 nodes", "wpe \u00b7 2 nodes",
        *[f"h.{k} \u00b7 Block \u00b7 4 modules \u00b7 60 nodes" for k in range(4)],
        "ln_f \u00b7 3 nodes", "lm_head \u00b7 5 nodes"]
    six = dot.drawing(real_model("gpt", n_layer=6))
    assert "\u00d76 Block \u00b7 h.0 \u2013 h.5 \u00b7 360 nodes" in [label for _, label
                                                                     in map_boxes(six)]
    assert any(box.attrs.get("shape") == "box3d" for box in six.boxes), "drawn as a stack"


def test_a_recursion_is_drawn_as_its_tree_of_calls():
    """TreeNet over six words: in the map each call is a box with its depth, in the first
    call's cluster, which says how far the recursion went; drawn whole, the calls are clusters
    side by side, not nested ten deep."""
    rec = real_model("treenet", backward=True)
    drawn = dot.drawing(rec, collapse_over=20)
    calls = [box.label for box in drawn.boxes if box.label[0].startswith("call ")]
    assert len(calls) == 10 and ["call 2.2.2", "depth 3 \u00b7 4 nodes"] in calls
    assert max(int(lines[1].split()[1]) for lines in calls) == 4
    assert 'label="TreeNet \u00b7 recursion: 10 calls, 4 deep"' in drawn.dot
    # the weights every word's call reads: their edges left out of the map, the box says so
    assert ["embed \u00b7 1 node \u00b7 read by 6 boxes"] in [box.label for box in drawn.boxes]
    whole = dot.drawing(rec)
    titles = re.findall(r'graph \[label="([^"]*)"', whole.dot)
    assert "TreeNet call 2.2.2" in titles and "embed" in titles
    assert all(box.scope[:1] in ((), ("TreeNet",)) and len(box.scope) <= 3
               for box in whole.boxes), "calls flattened into one level"
