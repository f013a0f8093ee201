import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Timeline, APPLIED, STALE, GAP, EMPTY, gradAt } from "../src/timeline.js";
import { buildStructure, hiddenNote, compareScopes } from "../src/structure.js";
import { anomalyOf, magnitudeLevel } from "../src/vocabulary.js";
import { sample } from "./fixtures.js";

// The timeline holds what Python sent and says what every node is at a position t (stateAt);
// the drawing is the structure of the whole recording (structure.js), restyled per position.

/** A small vocabulary of recognisable bodies (the real one is dot.py's; see vocabulary.test.js). */
const VOCABULARY = {
  node: { op: "shape=op", leaf: "shape=leaf", parameter: "shape=param", constant: "shape=const" },
  saved: "color=saved",
  freed: { op: "style=freed", leaf: "style=freed", parameter: "style=freed", constant: "style=freed" },
  anomaly: "fillcolor=anomaly",
  output: "[peripheries=\"2\"]",
  grad_edges: ["level=0", "level=1", "level=2", "level=3", "level=4"],
  cluster: "style=cluster",
  hidden: "shape=\"note\"",
  max_label_chars: 120,
};
const HEADER = { lines: ["  graph [rankdir=\"TB\"];"], vocabulary: VOCABULARY };

/** A node as the fold makes it: an op named f<id>, no preview; texts as Python writes them. */
function node(id, { scope = [], line = id, saved = 0, preview = [] } = {}) {
  return {
    id, kind: "op", op: `f${id}`, name: null, shape: [], dtype: "float32", device: "cpu", preview,
    previewText: preview.map(String), scope, file: "cell.py", line, cell: 1, saved,
    savedText: saved ? `${saved} B` : null, recomputed: false, elapsed: null, elapsedText: null, rule: null,
  };
}
const edge = (src, dst, pos = 0) => [src, dst, pos];
/** A grad step with a gradient of one value g (its norm |g|), and their texts. */
const grad = (id, g = 1, summed = false) => ["grad", id, [g], Math.abs(g), summed, [String(g)], String(Math.abs(g))];

/** a -> c <- b, c -> d; d's backward; then c, d freed. */
function chain() {
  const tl = new Timeline();
  tl.offer({
    seq: 1,
    nodes: [node(1), node(2), node(3, { saved: 16 }), node(4, { saved: 8 })],
    edges: [edge(1, 3), edge(2, 3, 1), edge(3, 4)],
    steps: [["node", 1], ["node", 2], ["node", 3], ["node", 4], ["backward_started", 4],
      grad(4, 1), grad(3, 0.5), grad(1, 0.001), grad(2, 20, true), ["freed", [3, 4]], ["backward_finished", 4]],
  });
  return tl;
}

/** The structure the view lays out for the whole of `tl`. */
const structure = (tl, opts = {}) => buildStructure(tl, { lines: HEADER.lines, vocabulary: VOCABULARY, ...opts });

describe("visibility", () => {
  test("a node is visible from its node step; t=0 is the empty graph", () => {
    const tl = chain();
    assert.deepEqual(tl.stateAt(0).visible, []);
    assert.deepEqual(tl.stateAt(1).visible, [1]);
    assert.deepEqual(tl.stateAt(3).visible, [1, 2, 3]);
    assert.deepEqual([...tl.stateAt(3).seen], [1, 2, 3]);
    assert.equal(tl.stateAt(3).newest, 3);
  });

  test("t is clamped to 0..steps.length", () => {
    const tl = chain();
    assert.equal(tl.stateAt(-5).t, 0);
    assert.equal(tl.stateAt(999).t, tl.length);
  });
});

describe("states", () => {
  test("as created, then with its gradient after the grad step, then freed after the freed step", () => {
    const tl = chain();
    assert.equal(tl.stateAt(5).grads.has(4), false);
    assert.equal(tl.stateAt(6).grads.get(4).norm, 1);
    assert.equal(tl.stateAt(6).grads.has(3), false);
    const end = tl.stateAt(10);
    assert.deepEqual([end.grads.get(3).previewText, end.freed.has(3)], [["0.5"], true]);
    assert.deepEqual([end.grads.get(1).previewText, end.freed.has(1)], [["0.001"], false], "not freed");
    assert.equal(end.grads.get(2).summed, true);
  });

  test("freed before its grad step never shows a gradient from the future", () => {
    const tl = new Timeline();
    tl.offer({ seq: 1, nodes: [node(1)], steps: [["node", 1], ["freed", [1]], grad(1, 2)] });
    assert.deepEqual([tl.stateAt(2).freed.has(1), tl.stateAt(2).grads.has(1)], [true, false]);
    assert.deepEqual([tl.stateAt(3).freed.has(1), tl.stateAt(3).grads.get(1).norm], [true, 2]);
  });

  test("a later grad step of the same node (the next backward) replaces the earlier one", () => {
    const tl = new Timeline();
    tl.offer({ seq: 1, nodes: [node(1), node(2)], edges: [edge(1, 2)], steps: [["node", 1], ["node", 2], grad(1, 0.5), grad(1, 50, true)] });
    assert.deepEqual(tl.stateAt(3).grads.get(1), { preview: [0.5], norm: 0.5, summed: false, previewText: ["0.5"], normText: "0.5", step: 2 });
    assert.deepEqual([tl.stateAt(4).grads.get(1).norm, tl.stateAt(4).grads.get(1).summed], [50, true]);
    assert.deepEqual([magnitudeLevel(tl.stateAt(3).grads.get(1).norm), magnitudeLevel(tl.stateAt(4).grads.get(1).norm)], [2, 4],
      "the edge it sends along takes the style of each in turn");
    assert.deepEqual(gradAt(tl.steps, 1, 3), {
      grad: { preview: [0.5], norm: 0.5, summed: false, previewText: ["0.5"], normText: "0.5", step: 2 }, later: true });
    assert.equal(gradAt(tl.steps, 1, 4).later, false);
    assert.deepEqual(gradAt(tl.steps, 2, 4), { grad: null, later: false });
  });

  test("a non-finite value or gradient is an anomaly at the position it shows", () => {
    const tl = new Timeline();
    const nan = { ...node(1, { preview: ["NaN"] }), previewText: ["nan"] };
    tl.offer({ seq: 1, nodes: [nan, node(2)], steps: [["node", 1], ["node", 2], ["grad", 2, ["-Infinity"], "Infinity", false, ["-inf"], "inf"]] });
    const at = (t, id) => anomalyOf(tl.nodes.get(id), { grad: tl.stateAt(t).grads.get(id) || null, freed: false });
    assert.equal(at(3, 1), "nan");
    assert.equal(at(2, 2), null, "before its gradient");
    assert.equal(at(3, 2), "inf");
  });

  test("edges may also come as objects; a repeated edge is kept once", () => {
    const tl = new Timeline();
    tl.offer({ seq: 1, nodes: [node(1), node(2)], edges: [{ src: 1, dst: 2, pos: 0 }, [1, 2, 0]], steps: [["node", 1], ["node", 2]] });
    assert.equal(tl.edges.size, 1);
    assert.equal((structure(tl).dot.match(/n1 -> n2/g) || []).length, 1);
  });
});

describe("clusters", () => {
  function scoped() {
    const tl = new Timeline();
    tl.offer({
      seq: 1,
      nodes: [node(1), node(2, { scope: ["a"] }), node(3, { scope: ["a", "b"] }), node(4, { scope: ["c"] }), node(5, { scope: ["a"] }), node(6)],
      steps: [1, 2, 3, 4, 5, 6].map((i) => ["node", i]),
    });
    return tl;
  }
  const box = (id) => `n${id} [label="f${id}\\n()", shape=op];`;
  const head = (index, name) => [`subgraph cluster_${index} {`, `graph [label="${name}", style=cluster];`];

  test("nodes grouped by scope path, nested clusters, braces balanced", () => {
    const dot = structure(scoped()).dot;
    const lines = dot.split("\n").map((l) => l.trim()).filter(Boolean);
    const body = lines.slice(2, -1);
    assert.deepEqual(body, [
      box(1),
      box(6),
      ...head(0, "a"),
      box(2),
      box(5),
      ...head(1, "b"),
      box(3),
      "}",
      "}",
      ...head(2, "c"),
      box(4),
      "}",
    ]);
    assert.equal((dot.match(/{/g) || []).length, (dot.match(/}/g) || []).length);
    assert.ok(dot.includes("\n    subgraph cluster_1 {\n      graph [label=\"b\""), "nested one level deeper");
  });

  test("numbered in order of first arrival, parents before children, across deltas", () => {
    const tl = new Timeline();
    tl.offer({ seq: 1, nodes: [node(1, { scope: ["m", "n"] }), node(2, { scope: ["z"] })], steps: [["node", 2], ["node", 1]] });
    tl.offer({ seq: 2, nodes: [node(3, { scope: ["m", "k"] }), node(4, { scope: ["z"] })], steps: [["node", 3], ["node", 4]] });
    const numbered = [...tl.clusters].map(([key, index]) => [key.split("\u0000").join("/"), index]);
    assert.deepEqual(numbered, [["m", 0], ["m/n", 1], ["z", 2], ["m/k", 3]]);
    const dot = structure(tl).dot;
    assert.ok(dot.indexOf("cluster_3") < dot.indexOf("cluster_1"), "drawn in scope order: m/k before m/n");
    const again = new Timeline();
    again.loadSnapshot({ seq: 2, nodes: [...tl.nodes.values()], steps: tl.steps });
    assert.deepEqual([...again.clusters], [...tl.clusters], "a snapshot numbers them the same");
  });

  test("a scope named \"a/b\" is not the path a, b", () => {
    const tl = new Timeline();
    tl.offer({ seq: 1, nodes: [node(1, { scope: ["a/b"] }), node(2, { scope: ["a", "b"] })], steps: [["node", 1], ["node", 2]] });
    assert.equal(tl.clusters.size, 3);
    const dot = structure(tl).dot;
    assert.ok(dot.includes('graph [label="a/b", style=cluster];'));
    assert.ok(dot.includes("subgraph cluster_2 {"));
  });

  test("a hostile scope name is escaped in its label", () => {
    const tl = new Timeline();
    tl.offer({ seq: 1, nodes: [node(1, { scope: ['"a\\b<i>'] })], steps: [["node", 1]] });
    assert.ok(structure(tl).dot.includes('graph [label="\\"a\\\\b<i>", style=cluster];'));
  });
});

describe("budget", () => {
  function many(n) {
    const tl = new Timeline();
    const nodes = [];
    const edges = [];
    for (let i = 1; i <= n; i++) {
      nodes.push(node(i));
      if (i > 1) edges.push(edge(i - 1, i));
    }
    tl.offer({ seq: 1, nodes, edges, steps: nodes.map((x) => ["node", x.id]) });
    return tl;
  }

  test("past max_nodes the oldest are replaced by one 'N nodes hidden' note", () => {
    const s = structure(many(10), { maxNodes: 4 });
    assert.equal(s.hidden, 7);
    assert.deepEqual(s.boxes.map((b) => b.name), ["hidden", "n8", "n9", "n10"], "max_nodes boxes in all");
    assert.ok(s.dot.includes('hidden [label="7 nodes hidden", shape="note"];'));
    assert.ok(!s.dot.includes("n7 -> n8"), "edges from hidden nodes come from the note");
    assert.ok(s.dot.includes("n8 -> n9"));
  });

  test("within the budget, no note", () => {
    const s = structure(many(4), { maxNodes: 4 });
    assert.equal(s.hidden, 0);
    assert.ok(!s.dot.includes("hidden"));
  });

  test("the note's attributes with or without brackets", () => {
    assert.equal(hiddenNote(3, '[shape="note"]'), 'hidden [label="3 nodes hidden"] [shape="note"];');
    assert.equal(hiddenNote(3, 'shape="note"'), 'hidden [label="3 nodes hidden", shape="note"];');
    assert.equal(hiddenNote(3, ""), 'hidden [label="3 nodes hidden"];');
  });
});

describe("seq and resync", () => {
  test("deltas apply in order; old ones are stale; a gap is reported, not applied", () => {
    const tl = new Timeline();
    assert.equal(tl.offer({}), EMPTY);
    assert.equal(tl.offer({ seq: 1, nodes: [node(1)], steps: [["node", 1]] }), APPLIED);
    assert.equal(tl.offer({ seq: 1, nodes: [node(9)], steps: [["node", 9]] }), STALE);
    assert.equal(tl.offer({ seq: 3, nodes: [node(3)], steps: [["node", 3]] }), GAP);
    assert.equal(tl.length, 1);
    assert.equal(tl.seq, 1);
    assert.equal(tl.offer({ seq: 2, nodes: [node(2)], steps: [["node", 2]] }), APPLIED);
    assert.equal(tl.length, 2);
  });

  test("before any delta the first may be seq 0 or 1; later ones are a gap", () => {
    assert.equal(new Timeline().offer({ seq: 0, steps: [] }), APPLIED);
    assert.equal(new Timeline().offer({ seq: 1, steps: [] }), APPLIED);
    assert.equal(new Timeline().offer({ seq: 2, steps: [] }), GAP);
  });

  test("a snapshot replaces everything; its seq is where deltas continue", () => {
    const tl = chain();
    tl.loadSnapshot({ seq: 7, nodes: [node(5)], steps: [["node", 5]], sources: { "cell.py": "a\nb\n" } });
    assert.equal(tl.seq, 7);
    assert.deepEqual([...tl.nodes.keys()], [5]);
    assert.equal(tl.sources.get("cell.py"), "a\nb\n");
    assert.equal(tl.offer({ seq: 8, steps: [] }), APPLIED);
    tl.loadSnapshot({});
    assert.equal(tl.seq, null);
    assert.equal(tl.length, 0);
  });
});

describe("backward", () => {
  test("the node of the newest grad step (whose edges the view highlights), until backward ends", () => {
    const tl = chain();
    assert.deepEqual(tl.stateAt(5).lastGrad, null, "backward started: no gradient yet");
    assert.deepEqual(tl.stateAt(6).lastGrad, 4, "the root: no edge leaves it");
    assert.deepEqual(tl.stateAt(7).lastGrad, 3);
    assert.deepEqual(tl.stateAt(8).lastGrad, 1);
    assert.deepEqual(tl.stateAt(11).lastGrad, null);
  });

  test("end of forward and start of backward", () => {
    const tl = chain();
    assert.equal(tl.endOfForward(0), 4);
    assert.equal(tl.startOfBackward(0), 5);
    assert.equal(tl.startOfBackward(9), 5, "wraps to the first backward");
    const none = new Timeline();
    none.offer({ seq: 1, nodes: [node(1)], steps: [["node", 1]] });
    assert.equal(none.endOfForward(0), 1);
    assert.equal(none.startOfBackward(0), null);
  });

  test("a backward_failed step shows its error until the next backward starts", () => {
    const s = sample();
    const tl = new Timeline();
    tl.loadSnapshot(s.snapshot);
    const n = tl.length;
    assert.match(tl.stateAt(n).error, /second time/);
    assert.equal(tl.stateAt(n - 1).error, null);
  });
});

describe("the sample recording", () => {
  test("its structure is DOT that Graphviz lays out; at the end every node is made, some freed", async () => {
    const { Graphviz } = await import("@hpcc-js/wasm-graphviz");
    const graphviz = await Graphviz.load();
    const s = sample();
    const tl = new Timeline();
    tl.loadSnapshot(s.snapshot);
    const { dot } = buildStructure(tl, { lines: s.header.lines, vocabulary: s.header.vocabulary, maxNodes: s.options.max_nodes });
    assert.match(graphviz.layout(dot, "svg", "dot"), /<svg/);
    assert.ok(dot.includes("subgraph cluster_0 {") && dot.includes("subgraph cluster_1 {"));
    const last = tl.stateAt(tl.length);
    assert.equal(last.visible.length, 9);
    assert.ok(last.freed.size > 0);
    assert.equal(magnitudeLevel(last.grads.get(7).norm), 3, "Sum's gradient, norm 2");
  });

  test("describeStep names steps in words", () => {
    const s = sample();
    const tl = new Timeline();
    tl.loadSnapshot(s.snapshot);
    assert.equal(tl.describeStep(0), "new x (leaf)");
    assert.equal(tl.describeStep(9), "backward from Mul");
    assert.equal(tl.describeStep(10), "gradient of Mul");
  });
});

describe("scope order", () => {
  test("scope paths sort as Python sorts tuples of str (by code point)", () => {
    const sorted = [["b"], ["a", "z"], ["\u{1F600}"], ["\uff01"], ["a"], []].sort(compareScopes);
    assert.deepEqual(sorted, [[], ["a"], ["a", "z"], ["b"], ["\uff01"], ["\u{1F600}"]]);
  });
});

describe("beats (NOTE [beats])", () => {
  test("a source line's nodes, a gradient with its edges, the freeing with the end of the pass", () => {
    const tl = new Timeline();
    tl.loadSnapshot(sample().snapshot);
    // x; w; b; line 5 made two nodes; exp; sum; line 9 made a constant and a Mul; the backward
    // starts with the root's gradient; one beat per gradient; freed + finished; the second try
    assert.deepEqual(tl.beatEnds(), [1, 2, 3, 5, 6, 7, 9, 11, 12, 13, 14, 15, 16, 17, 18, 20, 21, 22]);
    assert.equal(tl.beatKind(0), "line");
    assert.equal(tl.beatKind(9), "grad");
    assert.equal(tl.beatKind(18), "other");
    assert.equal(tl.beatKind(22), null);
  });

  test("edge steps ride with the gradient before them, version steps with the beat before", () => {
    const tl = new Timeline();
    tl.loadSnapshot({
      seq: 1,
      nodes: [{ id: 1, kind: "leaf", file: "f", line: 1 }, { id: 2, kind: "op", op: "Mul", file: "f", line: 2 }],
      edges: [[1, 2, 0]],
      steps: [["node", 1], ["version", 1, 1], ["node", 2], ["backward_started", 2], ["grad", 2, [1], 1, false],
        ["edge_grad", 2, 1, 0, [2], null], ["grad", 1, [2], 2, false], ["backward_finished", 2]],
    });
    assert.deepEqual(tl.beatEnds(), [2, 3, 6, 7, 8]);
  });
});
