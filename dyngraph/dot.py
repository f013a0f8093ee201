"""From a graph model to DOT: the one visual vocabulary of every diagram dyngraph draws.

NOTE [visual vocabulary] Documented once, here, and used by the static renderer and the live
widget alike. Colours are the Okabe-Ito palette (safe for the common colour-vision
deficiencies); every fill is light enough for dark text, so diagrams read on light and dark
backgrounds alike, and no meaning is carried by colour alone (each mark also has a word).

============================  =====================================================================
what                          how it is drawn
============================  =====================================================================
leaf (input needing a grad)   rounded box, sky blue fill
parameter                     rounded box, bold blue border, pale blue fill
constant                      small box, dashed grey border, "const"
op                            ellipse, white fill: op name, shape
output (nothing consumes it)  op drawn with a double border in bluish green
saved for backward            orange border and a "saved 32 B" line
gradient                      a "grad [...]" line ("grad (summed)" where several paths met); the
                              edge into a node carries the colour and
                              width of the gradient flowing back along it, light to dark blue by
                              magnitude (absolute, a decade a step: 1e-3 ... 10)
freed                         dashed grey border, greyed text, "freed": backward released its
                              buffers
anomaly (NaN / Inf)           vermillion fill and a "NaN" or "Inf" line
gradcheck                     a "gradcheck ok" or "gradcheck FAILED" line
device                        a "cuda" line when not on the CPU
time                          a "0.12 ms" line when per-op time was recorded
scope / module                a labelled cluster around its nodes, or one box when collapsed
hidden nodes                  a grey note: "N nodes hidden" (the oldest, past the picture's
                              budget) and "N nodes not recorded" (they ran, past the recording's
                              max_nodes) - never a silent cut
loop                          a stacked box: "×28 iterations, line 4", "252 nodes"
============================  =====================================================================

A picture shown in a notebook has a legend under it naming the styles it uses (LEGEND, in the
widget's words), fits the output's width (graphviz_render NOTE [pictures that fit]), and shows
values and gradients where the graph is small enough for them (NOTE [numbers where they fit]).

NOTE [safety] Names are untrusted text. Every label goes through ``quote``, which escapes what
DOT or Graphviz would interpret (quotes, backslashes and escString sequences such as ``\\N``,
HTML entities, control characters), so the displayed text is the name itself; and only the
attributes in ``ALLOWED_ATTRIBUTES`` are ever written, so URL, href, target, image, shapefile or
fontpath can never reach Graphviz. Node names are ``n<id>``, never user text.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Any

from .graph import CONSTANT, LEAF, OP, PARAMETER, Graph, Node
from .graphviz_render import picture

# ----------------------------------------------------------------------------- the palette

SKY_BLUE = "#56B4E9"
BLUE = "#0072B2"
PALE_BLUE = "#D6EAF8"
ORANGE = "#E69F00"
GREEN = "#009E73"
VERMILLION = "#D55E00"
GREY = "#999999"
LIGHT_GREY = "#EEEEEE"
WHITE = "#FFFFFF"
TEXT = "#000000"
# Gradient magnitude, smallest to largest (a sequential blue scale, readable when printed grey).
GRAD_SCALE = ("#C6DBEF", "#9ECAE1", "#6BAED6", "#3182BD", "#08519C")

ALLOWED_ATTRIBUTES = frozenset(
    {
        "label", "shape", "style", "fillcolor", "color", "fontcolor", "penwidth",
        "peripheries", "fontname", "fontsize", "margin", "rankdir", "bgcolor", "nodesep",
        "ranksep", "arrowsize", "labelloc", "labeljust", "width", "height", "id",
        "newrank", "ordering", "weight",
    }
)
MAX_LABEL_CHARS = 120  # longer names are cut with an ellipsis (a 1 MB name must not hang dot)
# A compact label (the widget's) shows the values of tensors of at most this many elements: the
# loss keeps its number, a (32, 16) activation shows only its shape (the inspector has the rest).
COMPACT_VALUES = 1
# NOTE [numbers where they fit] A graph of at most this many nodes is drawn with every value and
# gradient in its labels, as micrograd's draw_dot does: a learner watching a five-node backward
# sees the numbers without asking. A larger one gets the compact labels above (op, name, shape;
# the loss keeps its number), so it stays readable at the width of a notebook. ``detail=`` forces
# either way.
DETAIL_MAX_NODES = 12
# ... and, unless detail=True asks for the whole preview, at most this many numbers a line: six
# four-digit numbers made a lesson's 12-node MLP 2,191 px wide, three keep it within a notebook.
DETAIL_VALUES = 3
DEFAULT_MAX_NODES = 200  # the node budget of one diagram
# Past this many boxes the drawing is a map of the modules, one level at a time (NOTE [map]):
# the live view's default too (GraphView(collapse_over=...), sent in its options).
COLLAPSE_OVER = 150

# NOTE [running statistics] A BatchNorm (an InstanceNorm) reads its running statistics, the
# module buffers running_mean and running_var (and keeps num_batches_tracked), so watching it
# made a constant box of each: 40 of ResNet-18's 176 boxes, two beside every BatchNorm. They
# are not drawn unless asked (``running_stats=True`` in dg.watch, to_dot, dg.draw), and the
# drawing says how many it left out (a note in the picture, the notes under the widget). A
# learner loses nothing by it while training, which is what a watched graph mostly is: the
# batch's own statistics normalise and get the gradients; the running ones take no part in
# the values or gradients drawn (PyTorch only updates them, in place, for evaluation). In
# evaluation they are the statistics used - constants, with no gradient, beside the one op
# that reads them - and the note says how to draw them. The names are PyTorch's (_NormBase);
# other buffers (an attention's mask, a positional table) are data a learner reads, and stay.
RUNNING_STATS = ("running_mean", "running_var", "num_batches_tracked")

# ----------------------------------------------------------------------------- escaping


_ESCAPES = {ord("\\"): "\\\\", ord('"'): '\\"', ord("&"): "&amp;", ord("\n"): "\\n"}
for _code in [*range(32), 127, *range(0x80, 0xA0)]:  # control characters: shown as \x07
    _ESCAPES.setdefault(_code, f"\\\\x{_code:02x}")
for _code in [*range(0xD800, 0xE000), 0xFFFE, 0xFFFF]:  # not allowed in XML (SVG): \ufffe
    _ESCAPES[_code] = f"\\\\u{_code:04x}"
_NEEDS_ESCAPING = re.compile("[" + re.escape("".join(map(chr, _ESCAPES))) + "]")


def escape(text: str) -> str:
    """The inside of a DOT quoted string whose *displayed* text is ``text`` itself.

    Escapes the backslash (so ``\\N``, ``\\G``, ``\\l`` ... stay literal), the quote, the
    ``&`` that Graphviz would read as an HTML entity, control characters (shown as ``\\x07``),
    and turns newlines into DOT line breaks. Text longer than MAX_LABEL_CHARS is cut with "…".
    """
    text = str(text)
    if len(text) > MAX_LABEL_CHARS:
        text = text[: MAX_LABEL_CHARS - 1] + "\u2026"
    if _NEEDS_ESCAPING.search(text):
        text = text.translate(_ESCAPES)
    return text


def quote(text: str) -> str:
    """``text`` as a DOT quoted string (see escape)."""
    return '"' + escape(text) + '"'


@functools.lru_cache(maxsize=1024)
def _attribute_list(items: tuple[tuple[str, Any], ...]) -> str:
    parts = []
    for key, value in items:
        if key not in ALLOWED_ATTRIBUTES:
            raise ValueError(f"attribute {key!r} is not allowed in dyngraph diagrams")
        if value is not None:
            parts.append(f"{key}={quote(value)}")
    return ", ".join(parts)


def attributes(**attrs: Any) -> str:
    """``[key="value", ...]`` from the allow-list only; every value is quoted."""
    return "[" + _attribute_list(tuple(attrs.items())) + "]"


# NOTE [reading order] A diagram reads in the order the code ran:
# - each op's inputs left to right in argument order (``ordering="in"``), so the leaves of
#   ``c = a + b`` stand a, b (x - y: x on the left) in every drawing, static and live, rather
#   than in whatever order Graphviz's crossing minimisation happened to leave them;
# - ranks are counted across clusters (``newrank``): without it Graphviz ranks each cluster on
#   its own and a rolled-up loop's box, outside the cell's cluster, landed beside the first
#   iteration with an edge running up into the last;
# - an edge from a box read by FAN_OUT boxes or more (the weights a loop reads at every
#   iteration, an input used all over) does not pull its readers toward it (weight 0): the ops
#   of each iteration stay together, one iteration under the other, instead of climbing to the
#   weights at the top; and Graphviz lays out an opened 30-step RNN in a third of the time.
# The live widget draws with the same header lines, and gets FAN_OUT and the edge body in the
# vocabulary (tests/test_static_pictures.py holds the two to one structure).
FAN_OUT = 3
SHARED_EDGE_BODY = 'weight="0"'

# An op that nothing consumes (yet) is an output: a second attribute list drawn on top of its
# own (DOT allows several), so the widget can add or drop it as the graph grows.
OUTPUT_STYLE = {"peripheries": "2", "color": GREEN, "penwidth": "1.5"}
OUTPUT_ATTRIBUTES = attributes(**OUTPUT_STYLE)

# ----------------------------------------------------------------------------- formatting


# NOTE [one place for numbers] These are the only functions that turn numbers into text: the
# static diagrams use them, and the live view sends the texts they make along with the numbers
# (jupyter/kept.py keep_rows), so the browser shows a label's "0.125" exactly as Python wrote it
# and never formats a number itself.


def format_value(value: Any) -> str:
    """One value of a preview: a Python float with four significant digits (``0.1235``,
    ``1e-05``, ``nan``, ``inf``), anything else (ints, bools) as Python's ``str`` writes it."""
    return f"{value:.4g}" if type(value) is float else str(value)


def format_each(values: Any) -> list[str]:
    """Each value as ``format_value`` writes it. (Its rule written out in one comprehension: a
    call per value took twice as long, and the live view formats every preview it sends.)"""
    return [f"{value:.4g}" if type(value) is float else str(value) for value in values]


def format_values(values: tuple, total: int, limit: int | None = None) -> str:
    """``[1.5, 2, ...]``: each value as ``format_value`` writes it, and an ellipsis when the
    tensor has more than the preview (or than ``limit`` values, which cuts the preview short:
    compact labels show at most 3)."""
    if limit is not None:
        values = values[:limit]
    shown = ", ".join(format_each(values))
    return f"[{shown}{', ...' if total > len(values) else ''}]"


def format_bytes(n: int) -> str:
    """``16 B``, ``1.5 KB``, ``2.0 MB``: bytes in the largest unit below 1024 (up to GB)."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def format_elapsed(seconds: float) -> str:
    """An op's forward time in milliseconds, three significant digits: ``0.123 ms``."""
    return f"{seconds * 1e3:.3g} ms"


def _numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape) if shape else 1


# ----------------------------------------------------------------------------- the diagram


@dataclass
class _Box:
    """A visible node of the diagram: a model node, or a group standing for several."""

    name: str  # the DOT node name: n<id>, s<k> (collapsed scope), hidden, l<k> (loop)
    label: list[str]  # lines of plain text
    attrs: dict[str, str]
    scope: tuple[str, ...] = ()
    members: list[int] = field(default_factory=list)
    statement: str = ""  # the DOT statement, when already made
    kind: str = "node"  # "node", "loop", "scope" or "hidden" (widgets/src/structure.js Box.kind)
    mark: dict[str, str] = field(default_factory=dict)  # dg.diff: drawn on top (_mark_groups)

    def dot(self) -> str:
        if self.statement:
            return self.statement
        label = "\\n".join([escape(line) for line in self.label])
        body = _attribute_list(tuple(self.attrs.items()))
        mark = f" [{_attribute_list(tuple(self.mark.items()))}]" if self.mark else ""
        return f'{self.name} [label="{label}", {body}]{mark};'


def graph_header(rankdir: str = "TB", title: str | None = None, *, compact: bool = False
                 ) -> list[str]:
    """The graph, node and edge defaults every diagram starts with.

    ``compact``: the live widget's geometry. Its labels are short (op, name, shape) and its
    drawing must fit a notebook pane with labels of at least 8 px, so nodes, ranks and label
    margins are tighter and the font a little larger than a static picture's, which keeps
    more air (it is read at its own size, not fitted into a pane).
    """
    # fontname: a title and the scopes' labels in the nodes' font, not Graphviz's Times;
    # newrank and ordering: NOTE [reading order]
    graph_attrs = {"rankdir": rankdir, "bgcolor": "transparent", "nodesep": "0.25",
                   "ranksep": "0.35", "fontname": "Helvetica", "newrank": "true",
                   "ordering": "in"}
    node_attrs = {"fontname": "Helvetica", "fontsize": "10", "margin": "0.08,0.04"}
    if compact:
        graph_attrs.update(nodesep="0.12", ranksep="0.18")
        node_attrs.update(fontsize="11", margin="0.04,0.02", height="0.3", width="0.4")
    if title:
        graph_attrs.update(label=title, labelloc="t")
    return [
        f"  graph {attributes(**graph_attrs)};",
        f"  node {attributes(**node_attrs)};",
        f"  edge {attributes(color=GREY, arrowsize='0.6')};",
    ]


def node_statement(
    node: Node,
    *,
    values: bool = True,
    grads: bool = True,
    shapes: bool = True,
    mark: str | None = None,
    limit: int | None = None,
    cut: int | None = None,
) -> str:
    """``n<id> [label=..., <kind's style>] [<saved>] [<freed>] [<anomaly>];`` for one node.

    The base style of its kind comes first; each state that applies adds a second attribute list
    on top (DOT lets a later list override an earlier one). The widget composes exactly the same
    statement from ``vocabulary()``, so every diagram speaks one vocabulary. ``limit`` makes the
    label compact (the widget's, COMPACT_VALUES): value and gradient lines only for tensors of at
    most that many elements. ``cut`` shows at most that many numbers a line (a static picture's
    automatic detail, DETAIL_VALUES).
    """
    anomaly = node.anomaly
    lines = _label_lines(node, values, grads, shapes, anomaly, limit, cut)
    label = "\\n".join([escape(line) for line in lines])
    parts = [f'n{node.id} [label="{label}", {_NODE_BODIES[node.kind]}]']
    if node.saved_bytes and not node.freed:
        parts.append(f"[{_SAVED_BODY}]")
    if node.freed:
        parts.append(f"[{_FREED_BODIES[node.kind]}]")
    if anomaly:
        parts.append(f"[{_ANOMALY_BODY}]")
    if mark is not None:
        parts.append(f"[{_mark_body(node, mark)}]")
    return " ".join(parts) + ";"


def edge_statement(src: str, dst: str, grad_norm: float | None = None, shared: bool = False,
                   label: str = "") -> str:
    """``src -> dst [...]``; with the gradient flowing back along it, its colour and width;
    ``shared``: from an input read by many ops (NOTE [reading order]); ``label``: the shape
    flowing out of a module's box (NOTE [map])."""
    body = ", ".join(part for part in (
        SHARED_EDGE_BODY if shared else "",
        "" if grad_norm is None else _GRAD_EDGE_BODIES[magnitude_level(grad_norm)],
        f'label="{escape(label)}", {_EDGE_LABEL_BODY}' if label else "") if part)
    return f"{src} -> {dst} [{body}];"


def cluster_header(index: int, name: str, compact: bool = False) -> list[str]:
    """The first two lines of the cluster drawn around a scope (``compact``: with the widget's
    tighter padding and label font, COMPACT_CLUSTER_STYLE)."""
    body = f"{_CLUSTER_BODY}, {_body(COMPACT_CLUSTER_STYLE)}" if compact else _CLUSTER_BODY
    return [f"subgraph cluster_{index} {{", f'  graph [label="{escape(name)}", {body}];']


def to_dot(model: Graph, **options: Any) -> str:
    """DOT source for a graph model (a Recording, a loaded one, or one built by dg.draw): the
    text of ``drawing(model, **options)``. The options:

    values / grads / shapes   which lines node labels show
    detail                    True: every value and gradient in the labels; False: compact labels
                              (op, name, shape; values and gradients only of one-element
                              tensors), the live widget's; None (default): True for a graph of
                              at most DETAIL_MAX_NODES nodes (NOTE [numbers where they fit])
    rankdir                   "TB" (inputs on top) or "LR" (inputs on the left)
    collapse                  True: every top-level scope (dg.scope, nn.Module) becomes one box;
                              a name or tuple of names: just those scopes
    max_nodes                 the budget: past it, the drawing is a map of the modules, then the
                              oldest boxes are hidden behind one "N nodes hidden" note
    collapse_over             past this many boxes, the drawing is a map of the modules, one
                              level at a time (NOTE [map])
    expanded                  keys of the map's boxes drawn open, as the live view names them:
                              "scope:ResNet / layer1", "roll:GPT / h.0 · Block"
    running_stats             True: draw the running statistics a BatchNorm reads (NOTE
                              [running statistics]); by default a note says how many are not
    summarize_loops           repeated iterations of the same lines are drawn once, first and last,
                              with a note for the ones between
    marks, edge_marks         node id (or (src, dst)) -> "only in A" / "only in B" (dg.diff)
    """
    return drawing(model, **options).dot


@dataclass
class Drawing:
    """What ``to_dot`` draws: the DOT text, the boxes (a model node each, or a group standing for
    several), the edges between boxes, and the styles of the vocabulary the drawing uses (the
    keys of LEGEND that its legend shows)."""

    dot: str
    boxes: list[_Box]
    edges: list[tuple[str, str]]
    styles: tuple[str, ...]
    detail: bool
    labels: dict[tuple[str, str], str] = field(default_factory=dict)  # edge -> shape on it


def drawing(
    model: Graph,
    *,
    values: bool = True,
    grads: bool = True,
    shapes: bool = True,
    rankdir: str = "TB",
    collapse: bool | str | tuple[str, ...] = False,
    max_nodes: int = DEFAULT_MAX_NODES,
    summarize_loops: bool = True,
    marks: dict[int, str] | None = None,
    edge_marks: dict[tuple[int, int], str] | None = None,
    title: str | None = None,
    detail: bool | None = None,
    collapse_over: int = COLLAPSE_OVER,
    expanded: tuple[str, ...] | list[str] | frozenset[str] = (),
    running_stats: bool = False,
) -> Drawing:
    """The diagram of ``to_dot`` (the options are listed there) with what it is made of (see
    Drawing)."""
    if detail is not None and not isinstance(detail, bool):
        raise ValueError(f"detail must be True, False or None (automatic), got {detail!r}")
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"rankdir must be 'TB' or 'LR' (or 'BT', 'RL'), got {rankdir!r}")
    if max_nodes < 1 or collapse_over < 1:
        raise ValueError("max_nodes and collapse_over must be at least 1")
    cut = None  # how many numbers a value or gradient line shows (None: the whole preview)
    if detail is None:
        detail, cut = len(model.nodes) <= DETAIL_MAX_NODES, DETAIL_VALUES
    limit = None if detail else COMPACT_VALUES
    nodes = sorted(model.nodes.values(), key=lambda n: n.order)
    owner: dict[int, str] = {}  # model node id -> the DOT name of the box that shows it
    boxes: list[_Box] = []

    hidden_groups, mapped = _plan_hiding(nodes, model, collapse, max_nodes, summarize_loops,
                                         collapse_over, frozenset(expanded))
    for group in hidden_groups:
        boxes.append(group)
        for member in group.members:
            owner[member] = group.name

    consumed = {edge.src for edge in model.edges}
    # drawn alone, not inside a box of the map: left out (NOTE [running statistics])
    stats = set() if running_stats else {
        n.id for n in nodes if n.id not in owner and is_running_stat(n)}
    for node in nodes:
        if node.id in owner or node.id in stats:
            continue
        owner[node.id] = f"n{node.id}"
        statement = node_statement(node, values=values, grads=grads, shapes=shapes,
                                   mark=(marks or {}).get(node.id), limit=limit, cut=cut)
        if node.id not in consumed:
            statement = statement[:-1] + " " + OUTPUT_ATTRIBUTES + ";"
        text = _label_lines(node, values, grads, shapes, node.anomaly, limit, cut)
        boxes.append(_Box(f"n{node.id}", text, {}, display_path(node.scope), [node.id],
                          statement))
    if marks:
        _mark_groups(boxes, marks)

    edges = _edges(model, nodes, owner, grads, edge_marks or {}, boxes, mapped)
    lines = ["digraph dyngraph {", *graph_header(rankdir, title, compact=not detail)]
    lines.extend(_clusters(boxes, _cluster_titles(_scope_tree(nodes)), compact=not detail))
    lines.extend(line for line, _, _ in edges)
    if model.dropped_nodes:  # NOTE: in a learner's words, what ran and is in no picture
        kept = _count_nodes(len(model.nodes))
        label = (f"{_count_nodes(model.dropped_nodes)} not recorded\n(they ran, but the recording"
                 f"\nkept only the first {kept}:\nsee dg.record(max_nodes=...))")
        note = attributes(label=label, shape="note", style="filled", fillcolor=LIGHT_GREY,
                          fontcolor=TEXT)
        lines.append(f"  dropped {note};")
    if stats:  # NOTE [running statistics]
        label = (f"{len(stats)} running statistics not drawn\n(a BatchNorm's running_mean,"
                 f"\nrunning_var: running_stats=True draws them)")
        note = attributes(label=label, shape="note", style="filled", fillcolor=LIGHT_GREY,
                          fontcolor=TEXT)
        lines.append(f"  running_stats {note};")
    if model.dropped_passes:  # a live view's oldest passes (jupyter/kept.py NOTE [the newest
        passes = model.dropped_passes  # passes])
        label = (f"the first {passes} backward pass{'es' if passes != 1 else ''} "
                 f"({_count_nodes(model.dropped_pass_nodes)}) not shown\n(the view keeps the "
                 f"newest:\ndg.watch(max_nodes=...) keeps more)")
        note = attributes(label=label, shape="note", style="filled", fillcolor=LIGHT_GREY,
                          fontcolor=TEXT)
        lines.append(f"  older {note};")
    lines.append("}")
    styles = _styles_drawn(model, boxes, owner, grads, limit,
                           {**(marks or {}), **(edge_marks or {})})
    return Drawing("\n".join(lines) + "\n", boxes, [pair for _, pair, _ in edges], styles, detail,
                   {pair: label for _, pair, label in edges if label})


def is_running_stat(node: Node) -> bool:
    """Is ``node`` a running statistic a normalisation module reads (NOTE [running
    statistics]): a constant named by its module as one of RUNNING_STATS?"""
    return node.kind == CONSTANT and bool(node.scope) and node.name in RUNNING_STATS


def shape_known(is_op: bool, dtype: str, shape: tuple | None) -> bool:
    """Is a node's shape known? Not for an op whose output was never seen, which has no dtype
    either: a node of PyTorch's found by walking back, made inside a composite op
    (``F.linear``'s ``TBackward0``). It is shown with no shape rather than "()" or "scalar",
    which read as a scalar."""
    return not (is_op and dtype == "" and tuple(shape or ()) == ())


def _label_lines(
    node: Node, values: bool, grads: bool, shapes: bool, anomaly: str | None,
    limit: int | None = None, cut: int | None = None,
) -> list[str]:
    """The lines of a node's label, as plain text (escaped by the caller). ``limit``: values
    and gradients only of tensors of at most that many elements (and at most that many numbers);
    ``cut``: at most that many numbers a line."""
    lines = []
    if node.kind == OP:
        lines.extend([node.op] if node.name is None else [node.name, node.op])
    elif node.kind == CONSTANT:
        lines.append("const" if node.name is None else node.name)
    else:
        lines.append(node.name if node.name is not None else node.kind)
    if shapes and node.shape is not None and (node.shape or node.kind != CONSTANT) and \
            shape_known(node.kind == OP, node.dtype, node.shape):
        dtype = "" if node.dtype in ("float32", "", "float", "int") else f" {node.dtype}"
        if node.shape_in_b is not None:  # dg.diff: one node, two runs, two shapes
            lines.append(f"A {tuple(node.shape)} \u2192 B {tuple(node.shape_in_b)}{dtype}")
        else:
            lines.append(f"{tuple(node.shape)}{dtype}")
    # A compact label (limit) shows previews only of tensors small enough to show whole.
    whole = limit is None or _numel(node.shape) <= limit
    shown = limit if limit is not None else cut
    if values and node.preview and whole:
        lines.append(format_values(node.preview, _numel(node.shape), shown))
    if grads and node.grad_preview is not None and whole:
        summed = " (summed)" if node.accumulated else ""  # fan-in: several paths added up
        lines.append(f"grad{summed} " + format_values(node.grad_preview, _numel(node.shape), shown))
    if node.saved_bytes and not node.freed:
        lines.append(f"saved {format_bytes(node.saved_bytes)}")
    if node.freed:
        lines.append("freed")
    if node.recomputed:
        lines.append("recomputed")
    if anomaly:
        lines.append("NaN" if anomaly == "nan" else "Inf")
    if node.check:
        lines.append("gradcheck ok" if node.check == "pass" else "gradcheck FAILED")
    if node.device not in ("cpu", ""):
        lines.append(node.device)
    if node.elapsed is not None:
        lines.append(format_elapsed(node.elapsed))
    return lines


# The styles of the vocabulary as tables: a base per kind, then one list per state on top.
NODE_STYLES = {
    OP: {"shape": "ellipse", "style": "filled", "fillcolor": WHITE, "color": TEXT},
    PARAMETER: {"shape": "box", "style": "rounded,filled,bold", "fillcolor": PALE_BLUE,
                "color": BLUE, "penwidth": "1.5"},
    # (a constant's label is the size of every other: data such as a model's input is read too)
    CONSTANT: {"shape": "box", "style": "dashed,filled", "fillcolor": LIGHT_GREY, "color": GREY},
    LEAF: {"shape": "box", "style": "rounded,filled", "fillcolor": SKY_BLUE, "color": TEXT},
}
SAVED_STYLE = {"color": ORANGE, "penwidth": "2"}
FREED_STYLES = {
    kind: {"style": style["style"].replace("filled", "dashed,filled"), "color": GREY,
           "fontcolor": "#666666", "fillcolor": LIGHT_GREY}
    for kind, style in NODE_STYLES.items()
}
ANOMALY_STYLE = {"fillcolor": VERMILLION}
CLUSTER_STYLE = {"style": "rounded,dashed", "color": GREY, "fontcolor": "#666666",
                 "labeljust": "l"}
# Added to a cluster in the widget's compact drawing: less padding around its nodes (the default
# is 8 pt) and a label in the nodes' font rather than Graphviz's 14 pt Times.
COMPACT_CLUSTER_STYLE = {"margin": "4", "fontname": "Helvetica", "fontsize": "11"}
HIDDEN_STYLE = {"shape": "note", "style": "filled", "fillcolor": LIGHT_GREY, "color": GREY}
# A box standing for several nodes: a collapsed scope, and a rolled-up loop (drawn as a stack).
GROUP_STYLE = {"shape": "box", "style": "rounded,filled,dashed", "fillcolor": LIGHT_GREY,
               "color": GREY}
LOOP_STYLE = {"shape": "box3d", "style": "filled", "fillcolor": LIGHT_GREY, "color": GREY}
# A box of the map (NOTE [map]) has one line: no taller than it needs (the compact node height
# is 0.3 in), so a chain of them fits a pane; and the live map's ranks leave room for the
# shape the widget writes beside each edge (widgets/src/structure.js NOTE [shapes on edges]).
MAP_BOX_STYLE = {"height": "0.22"}
MAP_GRAPH_STYLE = {"ranksep": "0.25"}
# The shape written on an edge leaving a module's box, in the labels' font (NOTE [map]).
EDGE_LABEL_STYLE = {"fontname": "Helvetica", "fontsize": "10", "fontcolor": "#555555"}


def _body(style: dict[str, str]) -> str:
    return _attribute_list(tuple(style.items()))


_NODE_BODIES = {kind: _body(style) for kind, style in NODE_STYLES.items()}
_SAVED_BODY = _body(SAVED_STYLE)
_FREED_BODIES = {kind: _body(style) for kind, style in FREED_STYLES.items()}
_ANOMALY_BODY = _body(ANOMALY_STYLE)
_CLUSTER_BODY = _body(CLUSTER_STYLE)
_EDGE_LABEL_BODY = _body(EDGE_LABEL_STYLE)
_GRAD_EDGE_BODIES = [
    _body({"color": colour, "penwidth": str(1 + level * 0.75)})
    for level, colour in enumerate(GRAD_SCALE)
]


def vocabulary() -> dict[str, Any]:
    """The vocabulary as data, for the widget (see widgets/PROTOCOL.md): attribute-list bodies
    already escaped and allow-listed, so the browser only assembles them."""
    return {
        "node": dict(_NODE_BODIES),
        "saved": _SAVED_BODY,
        "freed": dict(_FREED_BODIES),
        "anomaly": _ANOMALY_BODY,
        "output": OUTPUT_ATTRIBUTES,
        "grad_edges": list(_GRAD_EDGE_BODIES),
        "cluster": _CLUSTER_BODY,
        "compact_cluster": _body(COMPACT_CLUSTER_STYLE),
        "hidden": _body(HIDDEN_STYLE),
        "group": _body(GROUP_STYLE),
        "loop": _body(LOOP_STYLE),
        "map_box": _body(MAP_BOX_STYLE),  # NOTE [map]
        "map_graph": _body(MAP_GRAPH_STYLE),
        "edge_label": _EDGE_LABEL_BODY,
        "min_alike": MIN_ALIKE,
        "compact_values": COMPACT_VALUES,
        "max_label_chars": MAX_LABEL_CHARS,
        "min_repeats": MIN_REPEATS,  # NOTE [roll-up]
        "running_stats": list(RUNNING_STATS),  # NOTE [running statistics]
        "fan_out": FAN_OUT,  # NOTE [reading order]
        "shared_edge": SHARED_EDGE_BODY,
        "legend": [list(entry) for entry in LEGEND],  # NOTE [one legend]
    }


# ----------------------------------------------------------------------------- the legend

# NOTE [one legend] What each style means: (key, name, what it means). A static picture's
# legend shows the entries its drawing uses (Drawing.styles), in this order; the live widget
# gets these words in its vocabulary and draws its own swatches for them (widgets/src/view/panels.js
# Panels.legend).
LEGEND = (
    ("leaf", "leaf", "a tensor you made with requires_grad"),
    ("parameter", "parameter", "a module's weight or bias"),
    ("constant", "constant", "a number or tensor needing no grad"),
    ("op", "op", "an operation: its result"),
    ("output", "output", "nothing uses it (yet)"),
    ("saved", "saved", "keeps tensors for backward"),
    ("freed", "freed", "backward released its buffers"),
    ("grad", "grad", "has its gradient"),
    ("summed", "grad (summed) = fan-in", "gradients of several paths added up"),
    ("group", "group / loop", "many nodes in one box"),
    ("anomaly", "NaN / Inf", "a value or gradient that is not finite"),
    ("grad_edge", "gradient size", "the edge's colour: the gradient flowing back, light 1e-3 to "
     "dark 10"),
    ("only in A", "only in A", "a node or edge of run A only"),
    ("only in B", "only in B", "a node or edge of run B only"),
    ("differs", "differs inside", "a box holding nodes of run A only and of run B only"),
)


def legend(styles: tuple[str, ...]) -> list[dict[str, Any]]:
    """The legend of a drawing that uses ``styles`` (keys of LEGEND): for each entry its name,
    help text and swatch - a shape ("box", "round", "ellipse", "stack" or "edge") and the colours
    of the vocabulary (fill, stroke, dashed, width, double), or "text": a label line as the
    label writes it. Plain data: the page around the picture draws it
    (graphviz_render.fitted_html)."""
    op = NODE_STYLES[OP]

    def look(shape: str, *styles_on_top: dict[str, str]) -> dict[str, Any]:
        attrs: dict[str, str] = {}
        for style in styles_on_top:
            attrs.update(style)
        return {"shape": shape, "fill": attrs.get("fillcolor", WHITE),
                "stroke": attrs.get("color", TEXT), "dashed": "dashed" in attrs.get("style", ""),
                "width": float(attrs.get("penwidth", "1")), "double": "peripheries" in attrs}

    swatches = {
        "leaf": look("round", NODE_STYLES[LEAF]),
        "parameter": look("round", NODE_STYLES[PARAMETER]),
        "constant": look("box", NODE_STYLES[CONSTANT]),
        "op": look("ellipse", op),
        "output": look("ellipse", op, OUTPUT_STYLE),
        "saved": look("ellipse", op, SAVED_STYLE),
        "freed": look("ellipse", op, FREED_STYLES[OP]),
        "grad": {"shape": "text", "text": "grad [...]"},
        "summed": {"shape": "text", "text": "grad (summed)"},
        "group": look("stack", LOOP_STYLE),
        "anomaly": look("ellipse", op, ANOMALY_STYLE),
        "grad_edge": {**look("edge", {"color": GRAD_SCALE[-1], "penwidth": "2.5"}),
                      "scale": list(GRAD_SCALE)},
        "only in A": look("ellipse", op, MARK_STYLES["only in A"]),
        "only in B": look("ellipse", op, MARK_STYLES["only in B"]),
        "differs": look("box", GROUP_STYLE, MARK_STYLES["differs"]),
    }
    return [{"key": key, "name": name, "help": help_text, **swatches[key]}
            for key, name, help_text in LEGEND if key in styles]


def _styles_drawn(
    model: Graph, boxes: list[_Box], owner: dict[int, str], grads: bool, limit: int | None,
    marks: dict,
) -> tuple[str, ...]:
    """The keys of LEGEND for the styles a drawing uses (``marks``: dg.diff's, of nodes and of
    edges)."""
    used: set[str] = set(marks.values())
    consumed = {edge.src for edge in model.edges}
    for box in boxes:
        if box.kind in ("loop", "scope"):
            used.add("group")
        if box.mark.get("color") == MARK_STYLES["differs"]["color"]:
            used.add("differs")
        elif box.mark:
            used.add("only in A" if box.mark.get("color") == VERMILLION else "only in B")
        if box.kind != "node":
            continue
        node = model.nodes[box.members[0]]
        used.add(node.kind)
        if node.kind == OP and node.id not in consumed:
            used.add("output")
        if node.saved_bytes and not node.freed:
            used.add("saved")
        if node.freed:
            used.add("freed")
        if node.anomaly:
            used.add("anomaly")
        whole = limit is None or _numel(node.shape) <= limit
        if grads and node.grad_preview is not None and whole:
            used.add("summed" if node.accumulated else "grad")
    if grads and any(
        model.nodes[e.src].grad_norm is not None
        for e in model.edges
        if e.src in model.nodes and owner.get(e.src) not in (None, owner.get(e.dst))
    ):
        used.add("grad_edge")
    return tuple(key for key, _, _ in LEGEND if key in used)


# dg.diff: a node in one run only (dashed vermillion for A, bold blue for B), on top of its style.
MARK_STYLES = {
    "only in A": {"color": VERMILLION, "penwidth": "2.5", "style": "dashed"},
    "only in B": {"color": BLUE, "penwidth": "2.5", "style": "bold"},
    # a box holding nodes of both (dg.diff at every level): reddish purple, dashed
    "differs": {"color": "#CC79A7", "penwidth": "2.5", "style": "dashed"},
}


def _mark_body(node: Node, mark: str) -> str:
    """A node of dg.diff in one run only: MARK_STYLES added to the style of its kind."""
    base = (FREED_STYLES if node.freed else NODE_STYLES)[node.kind]["style"]
    style = MARK_STYLES["only in A" if mark == "only in A" else "only in B"]
    return _body({**style, "style": f"{base},{style['style']}"})


def _clusters(boxes: list[_Box], titles: dict[tuple[str, ...], str], compact: bool = False
              ) -> list[str]:
    """Node statements, nested in one cluster per (non-collapsed) scope path (``titles``: the
    cluster titles that say more than the scope's name, NOTE [map])."""
    lines: list[str] = []
    open_path: tuple[str, ...] = ()
    clusters = 0
    for box in sorted(boxes, key=lambda b: b.scope):  # stable: keeps creation order per scope
        common = 0
        limit = min(len(open_path), len(box.scope))
        while common < limit and open_path[common] == box.scope[common]:
            common += 1
        while len(open_path) > common:  # close the clusters this box is not in
            lines.append("  " * len(open_path) + "}")
            open_path = open_path[:-1]
        while len(open_path) < len(box.scope):  # open the ones it is in
            name = box.scope[len(open_path)]
            open_path = (*open_path, name)
            indent = "  " * len(open_path)
            lines.extend(indent + line for line in cluster_header(
                clusters, titles.get(open_path, name), compact))
            clusters += 1
        lines.append("  " * (len(open_path) + 1) + box.dot())
    while open_path:
        lines.append("  " * len(open_path) + "}")
        open_path = open_path[:-1]
    return lines


def _edges(
    model: Graph, nodes: list[Node], owner: dict[int, str], grads: bool, marks: dict,
    boxes: list[_Box] = (), mapped: bool = False,
) -> list[tuple[str, tuple[str, str], str]]:
    """Each edge between two boxes once: (its DOT statement, (source box, destination box),
    the shape on it), in the order the ops were made and each op's inputs in argument order
    (NOTE [reading order]). An edge inside one group box, or from an input that was not
    recorded, is not drawn. An edge leaving a module's box is labelled with the shape flowing
    along it (widgets/src/structure.js NOTE [shapes on edges]; a static picture scrolls, so
    here they are Graphviz labels)."""
    by_id = {n.id: n for n in nodes}
    pairs: list[tuple[str, str, Any]] = []  # (source box, destination box, the model's edge)
    sources: dict[tuple[str, str], list[int]] = {}
    for edge in model.edges:
        src, dst = owner.get(edge.src), owner.get(edge.dst)
        if src is None or dst is None or src == dst:
            continue  # an input that was not recorded, or an edge inside one group
        carried = sources.get((src, dst))
        if carried is None:
            sources[(src, dst)] = [edge.src]
            pairs.append((src, dst, edge))
        elif edge.src not in carried:
            carried.append(edge.src)
    readers: dict[str, int] = {}
    for src, _, _ in pairs:
        readers[src] = readers.get(src, 0) + 1
    modules = {box.name: box for box in boxes if box.kind == "scope"}
    lines = []
    left_out: dict[str, int] = {}
    for src, dst, edge in pairs:
        if mapped and readers[src] >= FAN_OUT and src in modules and all(
                by_id[i].kind == PARAMETER for i in sources[(src, dst)] if i in by_id):
            left_out[src] = left_out.get(src, 0) + 1  # NOTE [map], shared weights
            continue
        node = by_id.get(edge.src)
        norm = node.grad_norm if grads and node is not None else None
        label = edge_shape([by_id.get(i) for i in sources[(src, dst)]]) if src in modules else ""
        statement = edge_statement(src, dst, norm, shared=readers[src] >= FAN_OUT, label=label)
        mark = marks.get((edge.src, edge.dst))
        if mark is not None:  # a second attribute list on top: this edge is in one run only
            style = (attributes(color=VERMILLION, style="dashed", penwidth="2")
                     if mark == "only in A" else attributes(color=BLUE, penwidth="2.5"))
            statement = statement[:-1] + " " + style + ";"
        lines.append(("  " + statement, (src, dst), label))
    for name, count in left_out.items():  # the box says who reads it, its edges left out
        box = modules[name]
        boxes_ = "1 box" if count == 1 else f"{count} boxes"
        box.label = [*box.label[:-1], f"{box.label[-1]} \u00b7 read by {boxes_}"]
    return lines


def edge_shape(sources: list[Node | None]) -> str:
    """The text on an edge from the nodes it carries (widgets/src/structure.js ``edgeShape``):
    the shape of the first whose shape is known, "(2, 64, 8, 8)", and "+2" when it carries
    tensors of two other shapes."""
    shapes: list[str] = []
    for node in sources:
        if node is None or node.shape is None or not shape_known(node.kind == OP, node.dtype,
                                                                  node.shape):
            continue
        text = str(tuple(node.shape))
        if text not in shapes:
            shapes.append(text)
    if not shapes:
        return ""
    return shapes[0] if len(shapes) == 1 else f"{shapes[0]} +{len(shapes) - 1}"


def magnitude_level(norm: float) -> int:
    """0..4: the size of a gradient on an absolute log scale, a decade a level: below 1e-3 is 0
    (vanishing), 1e-2, 1e-1, 1 and 10 or more (exploding, or not finite) is 4. Absolute, so
    the same gradient looks the same in every diagram and at every step of a replay."""
    if not math.isfinite(norm):
        return len(GRAD_SCALE) - 1
    if norm <= 0:
        return 0
    return min(max(math.floor(math.log10(norm)) + 3, 0), len(GRAD_SCALE) - 1)


# ----------------------------------------------------------------------------- budgets


def _plan_hiding(
    nodes: list[Node],
    model: Graph,
    collapse: bool | str | tuple[str, ...],
    max_nodes: int,
    summarize_loops: bool,
    collapse_over: int = COLLAPSE_OVER,
    expanded: frozenset[str] = frozenset(),
) -> tuple[list[_Box], bool]:
    """Group boxes that stand for several nodes: loop summaries, the boxes of the map of the
    modules (or the scopes ``collapse`` names), and the honest "N nodes hidden" note that keeps
    a diagram within its budget of ``max_nodes`` (widgets/src/structure.js buildStructure draws
    the same); and whether the drawing is a map."""
    groups: list[_Box] = []
    taken: set[int] = set()
    grey = GROUP_STYLE
    loops = _repeated_iterations(nodes, model) if summarize_loops else []

    # NOTE [map] (widgets/src/levels.js): past collapse_over boxes, counted with the loops
    # rolled up, the modules one level at a time; a loop inside a closed box is in the box.
    names = _collapsed_scopes(collapse) if collapse is not True else ()
    rolled_up = sum(len(members) - 1 for _, members, _ in loops)
    mapped = (collapse is False or collapse is None) and any(n.scope for n in nodes) and \
        len(nodes) - rolled_up > min(collapse_over, max_nodes)
    if mapped:  # of what a loop around the model leaves (structure.js NOTE [a loop around ...])
        around = {m for _, members, outside in loops if outside for m in members}
        for box in _module_map([n for n in nodes if n.id not in around], model, expanded):
            groups.append(box)
            taken.update(box.members)
    for k, (lines, members, _) in enumerate(loops):
        if taken.isdisjoint(members):
            groups.append(_Box(f"l{k}", lines, LOOP_STYLE, (), members, kind="loop"))
            taken.update(members)

    visible = [n for n in nodes if n.id not in taken]
    if collapse is True:
        names = tuple(dict.fromkeys(n.scope[0] for n in visible if n.scope))
    for k, scope_name in enumerate(names):
        members = [n.id for n in visible if n.scope and n.scope[0] == scope_name]
        if members:
            groups.append(_Box(f"s{k}", [scope_name, _count_nodes(len(members))], grey, (),
                               members, kind="scope"))
            taken.update(members)

    # Everything still visible, each group standing in for its members, in creation order.
    order = {n.id: n.order for n in nodes}
    items: list[tuple[int, _Box | Node]] = [
        (min(order[m] for m in g.members), g) for g in groups]
    items += [(n.order, n) for n in nodes if n.id not in taken]
    if len(items) <= max_nodes:
        return groups, mapped
    items.sort(key=lambda item: item[0])
    hidden_items = items[: len(items) - (max_nodes - 1)]  # keep the newest: nearest the loss
    hidden: list[int] = []
    for _, item in hidden_items:
        hidden.extend(item.members if isinstance(item, _Box) else [item.id])
    kept_groups = [g for g in groups if all(g is not item for _, item in hidden_items)]
    note = _Box("hidden", [f"{_count_nodes(len(hidden))} hidden",
                           f"(the oldest: this picture draws at most {max_nodes} boxes)"],
                {"shape": "note", "style": "filled", "fillcolor": LIGHT_GREY, "color": GREY},
                (), hidden, kind="hidden")
    return [*kept_groups, note], mapped


# ----------------------------------------------------------------------------- the map

# NOTE [map] A drawing too large to read is a map of the modules, one level at a time: each
# child scope of an open scope a box, MIN_ALIKE or more alike siblings one stacked box ("×12
# Block"), a recursion drawn as its tree of calls. The rule is written out, with its reasons,
# in widgets/src/levels.js NOTE [map]; this is its port for the static pictures, and
# tests/test_static_pictures.py holds the two to one drawing.
MIN_ALIKE = 5
_CALL = re.compile("^call (\\d+) \u00b7 (.+)$")


@dataclass
class _Scope:
    """A scope of the flattened tree (levels.js Entry): every node under it, its own nodes,
    its children (in the order met), its depth in a recursion (0: not a call), and for a
    recursion's first call how many calls it holds and how deep they go."""

    path: tuple[str, ...]
    depth: int = 0
    members: list[Node] = field(default_factory=list)
    direct: list[Node] = field(default_factory=list)
    children: dict[str, _Scope] = field(default_factory=dict)
    first: float = math.inf
    calls: int = 0
    deepest: int = 0


def _display_steps(path: tuple[str, ...]) -> list[tuple[str, int]]:
    """display_path with the depth in its recursion of each name (0: not a call)."""
    out: list[tuple[str, int]] = []
    chain: list[str] = []
    for name in path:
        call = _CALL.match(name)
        if call is None:
            chain = []
            out.append((name, 0))
            continue
        if chain:
            out.pop()
        chain.append(call[1])
        out.append((f"{call[2]} call {'.'.join(chain)}", len(chain)))
    return out


def display_path(path: tuple[str, ...]) -> tuple[str, ...]:
    """Where a node of scope ``path`` is drawn: each chain of recursive calls ("call 1 ·
    TreeNet", "call 2 · TreeNet") flattened into one name, "TreeNet call 1.2" (NOTE [map])."""
    return tuple(name for name, _ in _display_steps(tuple(path)))


def scope_class(name: str) -> str | None:
    """The class of a scope named with one ("0 · Linear", "h.3 · Block"), else None."""
    head, sep, cls = name.rpartition(" \u00b7 ")
    return cls if sep else None


def _scope_tree(nodes: list[Node]) -> _Scope:
    """The scopes of ``nodes`` (in creation order) as a tree of display paths."""
    root = _Scope(())
    for node in nodes:
        at = root
        at.members.append(node)
        at.first = min(at.first, node.order)
        for name, depth in _display_steps(tuple(node.scope)):
            child = at.children.get(name)
            if child is None:
                child = at.children[name] = _Scope((*at.path, name), depth)
            at = child
            at.members.append(node)
            at.first = min(at.first, node.order)
        at.direct.append(node)
    stack = [root]
    while stack:
        at = stack.pop()
        for child in at.children.values():
            if child.depth > 0:
                at.calls += 1
                at.deepest = max(at.deepest, child.depth)
            stack.append(child)
    return root


def _recursion_text(at: _Scope) -> str:
    return f"recursion: {at.calls} call{'' if at.calls == 1 else 's'}, {at.deepest} deep"


def _cluster_titles(root: _Scope) -> dict[tuple[str, ...], str]:
    """The cluster titles that say more than a scope's name: a recursion's first call,
    "TreeNet · recursion: 19 calls, 4 deep"."""
    titles = {}
    stack = [root]
    while stack:
        at = stack.pop()
        if at.calls and at.path:
            titles[at.path] = f"{at.path[-1]} \u00b7 {_recursion_text(at)}"
        stack.extend(at.children.values())
    return titles


def _module_map(nodes: list[Node], model: Graph, expanded: frozenset[str] = frozenset()
                ) -> list[_Box]:
    """The boxes of the map (levels.js ``moduleMap``): every closed scope, or roll of alike
    scopes, under an open one; ``expanded``: the keys of boxes drawn open."""
    tree = _scope_tree(nodes)
    boxes: list[tuple[float, _Box]] = []
    stack = [tree]
    while stack:
        open_scope = stack.pop()
        children = sorted(open_scope.children.values(), key=lambda c: c.first)
        if len(children) == 1:  # the only child scope of an open scope opens too
            stack.append(children[0])
            continue
        for run in _alike_runs(open_scope, children):
            key = f"roll:{' / '.join(run[0].path)}"
            if len(run) > 1 and key not in expanded:
                boxes.append((run[0].first, _roll_box(open_scope, run, len(boxes))))
                continue
            for child in run:
                if f"scope:{' / '.join(child.path)}" in expanded:
                    stack.append(child)
                else:
                    boxes.append((child.first, _scope_box(open_scope, child, len(boxes))))
    return [box for _, box in sorted(boxes, key=lambda item: item[0])]


def _alike_runs(open_scope: _Scope, children: list[_Scope]) -> list[list[_Scope]]:
    """The children of ``open_scope`` in runs: MIN_ALIKE or more consecutive alike scopes (the
    same class, the same ops on the same lines, no op of ``open_scope`` itself between them)
    make one run; any other child is a run of its own."""
    own_ops = [n.order for n in open_scope.direct if n.kind == OP]
    runs: list[list[_Scope]] = []
    run: list[_Scope] = []
    signature = None

    def flush() -> None:
        nonlocal run, signature
        runs.extend([run] if len(run) >= MIN_ALIKE else [[child] for child in run])
        run, signature = [], None

    for child in children:
        mine = _alike(child)
        between = bool(run) and any(run[-1].first < order < child.first for order in own_ops)
        if mine is None or mine != signature or between:
            flush()
        if mine is None:
            runs.append([child])
        else:
            run.append(child)
            signature = mine
    flush()
    return runs


def _alike(child: _Scope) -> tuple | None:
    """What makes two sibling scopes alike: their class and the ops they run, on which lines;
    None for one never rolled (no class in its name, or a recursive call)."""
    cls = scope_class(child.path[-1])
    if cls is None or child.depth > 0:
        return None
    return (cls, *[(n.op, *(n.where or ("", None))[:2]) if n.kind == OP else n.kind
                   for n in child.members])


def _scope_box(open_scope: _Scope, child: _Scope, k: int) -> _Box:
    """The box of one closed scope: "layer1 · 2 BasicBlocks · 34 nodes"."""
    holds = ""
    if child.calls:
        holds = _recursion_text(child)
    elif child.depth:
        holds = f"depth {child.depth}"
    elif child.children:
        classes = [scope_class(c.path[-1]) for c in child.children.values()]
        n = len(classes)
        one = classes[0]
        holds = (f"{n} {one}{'' if n == 1 else 's'}" if one is not None and
                 all(c == one for c in classes) else f"{n} module{'' if n == 1 else 's'}")
    members = sorted(n.id for n in child.members)
    name = child.path[-1]
    title = name[name.rfind(" call ") + 1:] if child.depth else name  # "call 1.2"
    if child.depth and not child.calls:  # a call: two short lines, a tree of calls is wide
        lines = [title, f"{holds} \u00b7 {_count_nodes(len(members))}"]
    else:
        lines = [" \u00b7 ".join(part for part in (title, holds, _count_nodes(len(members)))
                                if part)]
    return _Box(f"s{k}", lines, {**GROUP_STYLE, **MAP_BOX_STYLE}, open_scope.path, members,
                kind="scope")


def _roll_box(open_scope: _Scope, run: list[_Scope], k: int) -> _Box:
    """The stacked box of a run of alike scopes: "×12 Block · h.0 – h.11 · 432 nodes"."""
    first, last = run[0].path[-1], run[-1].path[-1]
    members = sorted(n.id for child in run for n in child.members)
    bare = [name.rpartition(" \u00b7 ")[0] or name for name in (first, last)]
    label = (f"\u00d7{len(run)} {scope_class(first)} \u00b7 {bare[0]} \u2013 {bare[1]} \u00b7 "
             f"{_count_nodes(len(members))}")
    return _Box(f"r{k}", [label], {**LOOP_STYLE, **MAP_BOX_STYLE}, open_scope.path, members,
                kind="scope")


def _mark_groups(boxes: list[_Box], marks: dict[int, str]) -> None:
    """dg.diff at every level: a box standing for nodes of one run only says how many, and is
    drawn in that run's mark ("differs inside" when it holds nodes of both)."""
    for box in boxes:
        if box.kind == "node":
            continue
        inside = [marks[m] for m in box.members if m in marks]
        if not inside:
            continue
        a, b = inside.count("only in A"), inside.count("only in B")
        box.label = [*box.label, " \u00b7 ".join(
            part for part in (f"{a} only in A" if a else "", f"{b} only in B" if b else "")
            if part)]
        key = "only in A" if not b else "only in B" if not a else "differs"
        style = MARK_STYLES[key]
        box.mark = {**style, "style": f"{box.attrs.get('style', 'filled')},{style['style']}"}


def loop_lines(repeats: int, line: int | None, members: int) -> list[str]:
    """The label of a rolled-up loop: ``×8 iterations, line 4`` and ``26 nodes`` (the widget's
    words, widgets/src/structure.js ``loopLines``, which adds "click to expand"). The box holds
    the iterations between the first and the last, which stay drawn: ``repeats - 2`` of them."""
    where = f", line {line}" if line is not None else ""
    return [f"\u00d7{repeats - 2} iterations{where}", _count_nodes(members)]


def _count_nodes(n: int) -> str:
    return f"{n} node" if n == 1 else f"{n} nodes"


def _collapsed_scopes(collapse: bool | str | tuple[str, ...]) -> tuple[str, ...]:
    if collapse is True or collapse is False or collapse is None:
        return ()
    if isinstance(collapse, str):
        return (collapse,)
    if isinstance(collapse, (tuple, list, set, frozenset)) and all(
        isinstance(name, str) for name in collapse
    ):
        return tuple(collapse)
    raise ValueError(
        f"collapse must be True, False, a scope name or a tuple of names, got {collapse!r}"
    )


# A loop body repeated fewer times is drawn as its nodes: with the first and last iterations
# drawn, a box needs at least two between them to stand for (the widget gets it in the
# vocabulary; tests/test_static_pictures.py holds the two to the same drawing).
MIN_REPEATS = 4


# NOTE [loops of any length] A loop is the same (op, file, line, scope) sequence repeated back
# to back. A body can be long: a training step of a 4-block transformer is 199 ops, and the
# search that tried every period up to 64 never saw it (it rolled up each step's inner loop on
# its own instead). A period that repeats from op i has op i's key again at i + period, so the
# periods worth trying at i are the distances to the later ops with that key: the search tries
# those, nearest first (at most MAX_TRIES of them, up to a quarter of the ops left for
# MIN_REPEATS iterations), checks in a few reads that the key is there MIN_REPEATS times, and
# compares whole bodies only then. That costs what trying 64 periods cost (a long sequence with
# no loop in it, Thue-Morse's, is no slower), finds every loop the old search found, and finds a
# long body from any op of it whose key comes back at most MAX_TRIES times an iteration (a
# step that starts with 100 iterations of an RNN cell is found from its next op, with its
# iterations starting there). The longest stretch covered wins (the smallest period on a tie:
# "×80" of a one-op body rather than "×40" of two). A loop's first and last iterations stay
# drawn, so the search goes on inside each of them: a training step's own inner loop rolls up
# inside the step that is drawn. widgets/src/structure.js `repeatedIterations` is the same
# search (tests/test_static_pictures.py holds them to one drawing).
MAX_TRIES = 64


def loop_spans(codes: list, min_repeats: int = MIN_REPEATS) -> list[tuple[int, int, int]]:
    """The loops of a sequence of keys (one per op, in order; any hashable values): (start,
    repeats, period) of each, in the order of their first op, a loop before the loops inside
    its first and last iterations (NOTE [loops of any length])."""
    positions: dict[Any, list[int]] = {}  # key -> where it occurs, in order
    for position, code in enumerate(codes):
        positions.setdefault(code, []).append(position)
    spans: list[tuple[int, int, int]] = []
    _find_loops(codes, positions, 0, len(codes), min_repeats, spans)
    return spans


def _find_loops(codes: list, positions: dict[Any, list[int]], i: int, end: int,
                min_repeats: int, spans: list[tuple[int, int, int]]) -> None:
    """loop_spans within codes[i:end]. Recursive, but only as deep as loops are nested (each
    level is at least min_repeats times shorter)."""
    while i < end:
        best, covered = None, 0
        first = codes[i]
        at = positions[first]
        nearest = bisect.bisect_right(at, i)  # the next op with op i's key
        longest = (end - i) // min_repeats
        for later in at[nearest:nearest + MAX_TRIES]:
            period = later - i
            if period > longest:
                break
            if (end - i) // period * period <= covered:
                continue  # it cannot cover more than the best so far
            j = 2
            while j < min_repeats and codes[i + j * period] == first:
                j += 1
            if j < min_repeats:
                continue  # op i's key is not there min_repeats times
            body = codes[i:i + period]
            repeats = 1
            while (i + (repeats + 1) * period <= end
                   and codes[i + repeats * period:i + (repeats + 1) * period] == body):
                repeats += 1
            if repeats >= min_repeats and repeats * period > covered:
                best, covered = (repeats, period), repeats * period
        if best is None:
            i += 1
            continue
        repeats, period = best
        spans.append((i, repeats, period))
        _find_loops(codes, positions, i, i + period, min_repeats, spans)  # the first iteration
        last = i + (repeats - 1) * period
        _find_loops(codes, positions, last, last + period, min_repeats, spans)  # the last
        i += covered


def _repeated_iterations(
    nodes: list[Node], model: Graph, min_repeats: int = MIN_REPEATS
) -> list[tuple[list[str], list[int], bool]]:
    """Find runs of a loop body: the same (op, source line, scope) sequence repeated back to
    back at least ``min_repeats`` times, whatever its length (NOTE [loops of any length]). The
    first and last iterations stay visible; the ones between become one summary box (with the
    constants that only they used), and whether the loop is around the modules
    (widgets/src/structure.js NOTE [a loop around the model])."""
    ops = [n for n in nodes if n.kind == OP and n.where is not None]
    # the same lines in the same scope: the same module called again (an RNN cell), not the
    # next of several modules (a transformer's Blocks: siblings of the map, NOTE [map])
    keys = [(n.op, n.where[0], n.where[1], n.scope) for n in ops]
    code_of: dict[tuple, int] = {}  # each key as a number: bodies compare as lists of ints
    consumers: dict[int, set[int]] = {}
    for edge in model.edges:
        consumers.setdefault(edge.src, set()).add(edge.dst)
    backward_loops = {  # the root of a backward pass -> the loop that called backward()
        step[1]: _where_loop(step[2]) for step in getattr(model, "timeline", ())
        if step[0] == "backward_started" and _where_loop(step[2]) is not None}
    found = []
    for i, repeats, period in loop_spans([code_of.setdefault(key, len(code_of)) for key in keys],
                                         min_repeats):
        members = {n.id for n in ops[i + period : i + (repeats - 1) * period]}
        members |= {  # constants and leaves used only inside the summarised iterations
            n.id for n in nodes
            if n.kind != OP and n.id in consumers and consumers[n.id] <= members
        }
        first = ops[i:i + period]
        found.append((loop_lines(repeats, _loop_line(first, backward_loops), len(members)),
                      sorted(members, key=lambda node_id: node_id),
                      len({n.scope[:1] for n in first}) > 1))  # around the model
    return found


def _where_loop(where: tuple | None) -> int | None:
    """The line of the loop repeating a ``where`` (events.SourceLine.loop), or None."""
    return where[5] if where is not None and len(where) > 5 else None


def _loop_line(first: list[Node], backward_loops: dict[int, int]) -> int | None:
    """The line a loop's label names, from the ops of its first iteration (NOTE [loop lines]
    in spine/events.py): the loop that called backward() on one of them, else the loop of the first
    op that has one, else the first op's line."""
    for node in first:
        if node.id in backward_loops:
            return backward_loops[node.id]
    for node in first:
        loop = _where_loop(node.where)
        if loop is not None:
            return loop
    return first[0].where[1]


# ----------------------------------------------------------------------------- rendering

# DOT -> SVG lives in graphviz_render.py (which Graphviz: dot, the pygraphviz wheel, the browser).


def mimebundle(model: Graph, text: str, browser: bool = True, **options: Any) -> dict[str, str]:
    """What Jupyter displays: the picture fitted to the output's width with its legend, where a
    Graphviz exists; else the widget's player drawing it in the browser (``browser=True``: a
    view's own fallback passes False); else the DOT source after a one-line hint (see
    graphviz_render.picture)."""
    drawn = drawing(model, **options)
    return picture(drawn.dot, text, model if browser else None, legend=legend(drawn.styles))


# ----------------------------------------------------------------------------- dg.dot(a, b)

# NOTE [dg.dot is also torch.dot] ``torch.dot(a, b)`` is the inner product of two vectors, and
# learners' code calls it (d2l, fast.ai: docs/pytorch_inventory.md). Here ``dg.dot`` is this
# module: importing a submodule binds its name on the package, over anything else of that name.
# So the module itself is callable: ``dg.dot(a, b)`` is ``a.dot(b)``, while ``dg.dot.drawing``
# and ``from dyngraph import dot`` still reach the diagrams. (A module's ``__class__`` set to a
# subclass of ModuleType is Python's documented way to give a module behaviour: the language
# reference, "Customizing module attribute access".)


class _DotModule(types.ModuleType):
    def __call__(self, input: Any, other: Any) -> Any:
        """torch.dot: the dot product of two 1-D tensors of the same length."""
        from .tensor import Tensor

        for name, value in (("input", input), ("tensor", other)):
            if not isinstance(value, Tensor):
                raise TypeError(f"dot(): argument '{name}' must be Tensor, not "
                                f"{type(value).__name__}")
        return input.dot(other)


sys.modules[__name__].__class__ = _DotModule
