import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Timeline, APPLIED, STALE, GAP, EMPTY, hiddenNote, withExtraAttributes } from "../src/timeline.js";
import { sample } from "./fixtures.js";

const HEADER = { lines: ["  graph [rankdir=\"TB\"];"], output_attrs: "[peripheries=\"2\"]", hidden_attrs: "[shape=\"note\"]" };

/** A node record as Python sends it. */
function node(id, { scope = [], grad = true, freed = false, line = id } = {}) {
  return {
    id,
    kind: "op",
    op: "Op",
    scope,
    file: "cell.py",
    line,
    cell: 1,
    dot: { forward: `n${id} [label="f${id}"];`, grad: grad ? `n${id} [label="g${id}"];` : null, freed: freed ? `n${id} [label="x${id}"];` : null },
    info: { title: "Op", name: null },
  };
}
function edge(src, dst, pos = 0) {
  return { src, dst, pos, dot: { plain: `n${src} -> n${dst} [];`, grad: `n${src} -> n${dst} [color="blue"];` } };
}

/** a -> c <- b, c -> d; d's backward; then c, d freed. */
function chain() {
  const tl = new Timeline();
  tl.offer({
    seq: 1,
    nodes: [node(1), node(2), node(3, { freed: true }), node(4, { freed: true })],
    edges: [edge(1, 3), edge(2, 3, 1), edge(3, 4)],
    steps: [["node", 1], ["node", 2], ["node", 3], ["node", 4], ["backward_started", 4],
      ["grad", 4], ["grad", 3], ["grad", 1], ["grad", 2], ["freed", [3, 4]], ["backward_finished", 4]],
  });
  return tl;
}

/** Node and edge statements of a DOT text, in order. */
function statements(dot) {
  return dot.split("\n").map((l) => l.trim()).filter((l) => /^(n\d+|hidden)\b/.test(l));
}

describe("visibility", () => {
  test("a node is visible from its node step; t=0 is the empty graph", () => {
    const tl = chain();
    assert.deepEqual(tl.graphAt(0, HEADER).shown, []);
    assert.deepEqual(tl.graphAt(1, HEADER).shown, [1]);
    assert.deepEqual(tl.graphAt(3, HEADER).shown, [1, 2, 3]);
    const dot = tl.graphAt(0, HEADER).dot;
    assert.equal(dot, "digraph dyngraph {\n  graph [rankdir=\"TB\"];\n}\n");
  });

  test("an edge is visible when both ends are", () => {
    const tl = chain();
    assert.ok(!tl.graphAt(2, HEADER).dot.includes("->"));
    const dot = tl.graphAt(3, HEADER).dot;
    assert.ok(dot.includes("n1 -> n3 [];"));
    assert.ok(dot.includes("n2 -> n3 [];"));
    assert.ok(!dot.includes("n3 -> n4"));
  });

  test("t is clamped to 0..steps.length", () => {
    const tl = chain();
    assert.equal(tl.graphAt(-5, HEADER).t, 0);
    assert.equal(tl.graphAt(999, HEADER).t, tl.length);
  });
});

describe("variants", () => {
  test("forward, then grad after the grad step, then freed after the freed step", () => {
    const tl = chain();
    assert.ok(tl.graphAt(5, HEADER).dot.includes('n4 [label="f4"]'));
    assert.ok(tl.graphAt(6, HEADER).dot.includes('n4 [label="g4"]'));
    assert.ok(tl.graphAt(6, HEADER).dot.includes('n3 [label="f3"]'));
    assert.ok(tl.graphAt(10, HEADER).dot.includes('n3 [label="x3"]'));
    assert.ok(tl.graphAt(10, HEADER).dot.includes('n1 [label="g1"]'), "not freed: keeps its grad variant");
  });

  test("a null variant falls back to the previous one", () => {
    const tl = new Timeline();
    tl.offer({
      seq: 1,
      nodes: [node(1, { grad: false, freed: false }), node(2, { grad: true, freed: false })],
      steps: [["node", 1], ["node", 2], ["grad", 1], ["grad", 2], ["freed", [1, 2]]],
    });
    const dot = tl.graphAt(5, HEADER).dot;
    assert.ok(dot.includes('n1 [label="f1"]'), "grad and freed null: forward");
    assert.ok(dot.includes('n2 [label="g2"]'), "freed null: grad");
  });

  test("freed before its grad step never shows a gradient from the future", () => {
    const tl = new Timeline();
    const n = node(1, { grad: true, freed: false });
    tl.offer({ seq: 1, nodes: [n], steps: [["node", 1], ["freed", [1]], ["grad", 1]] });
    assert.ok(tl.graphAt(2, HEADER).dot.includes('n1 [label="f1"]'));
    assert.ok(tl.graphAt(3, HEADER).dot.includes('n1 [label="g1"]'));
  });

  test("an edge shows its grad statement after the grad step of its source", () => {
    const tl = chain();
    assert.ok(tl.graphAt(6, HEADER).dot.includes("n3 -> n4 [];"));
    assert.ok(tl.graphAt(7, HEADER).dot.includes('n3 -> n4 [color="blue"];'));
    assert.ok(tl.graphAt(7, HEADER).dot.includes("n1 -> n3 [];"));
  });

  test("updates merge into earlier nodes and edges", () => {
    const tl = new Timeline();
    tl.offer({ seq: 1, nodes: [{ ...node(1), dot: { forward: "n1 [label=\"a\"];" } }, node(2)], edges: [{ src: 1, dst: 2, pos: 0, dot: { plain: "n1 -> n2;" } }], steps: [["node", 1], ["node", 2]] });
    tl.offer({
      seq: 2,
      updates: [
        { id: 1, dot: { grad: "n1 [label=\"a grad\"];" }, info: { grad: "[1]" } },
        { edge: [1, 2, 0], dot: { grad: "n1 -> n2 [color=\"red\"];" } },
      ],
      steps: [["grad", 2], ["grad", 1]],
    });
    const g = tl.graphAt(4, HEADER);
    assert.ok(g.dot.includes('n1 [label="a grad"]'));
    assert.ok(g.dot.includes('n1 -> n2 [color="red"];'));
    assert.equal(tl.nodes.get(1).info.grad, "[1]");
    assert.equal(tl.nodes.get(1).info.title, "Op", "merged, not replaced");
  });
});

describe("outputs", () => {
  test("a visible node that no visible edge leaves gets output_attrs as a second list", () => {
    const tl = chain();
    assert.ok(tl.graphAt(1, HEADER).dot.includes('n1 [label="f1"] [peripheries="2"];'));
    const at3 = tl.graphAt(3, HEADER);
    assert.deepEqual([...at3.outputs], [3]);
    assert.ok(at3.dot.includes('n1 [label="f1"];'), "consumed now: no output mark");
    assert.ok(at3.dot.includes('n3 [label="f3"] [peripheries="2"];'));
    assert.deepEqual([...tl.graphAt(4, HEADER).outputs], [4]);
  });

  test("withExtraAttributes keeps one statement", () => {
    assert.equal(withExtraAttributes("n1 [a=1];  ", "[b=2]"), "n1 [a=1] [b=2];");
    assert.equal(withExtraAttributes("n1 [a=1]", "[b=2]"), "n1 [a=1] [b=2];");
  });
});

describe("clusters", () => {
  function scoped() {
    const tl = new Timeline();
    tl.offer({
      seq: 1,
      nodes: [node(1), node(2, { scope: ["a"] }), node(3, { scope: ["a", "b"] }), node(4, { scope: ["c"] }), node(5, { scope: ["a"] }), node(6)],
      clusters: {
        a: ["subgraph cluster_0 {", "  graph [label=\"a\"];"],
        "a/b": ["subgraph cluster_1 {", "  graph [label=\"b\"];"],
      },
      steps: [1, 2, 3, 4, 5, 6].map((i) => ["node", i]),
    });
    return tl;
  }

  test("nodes grouped by scope path, nested clusters, braces balanced", () => {
    const dot = scoped().graphAt(6, HEADER).dot;
    const lines = dot.split("\n").map((l) => l.trim()).filter(Boolean);
    const body = lines.slice(2, -1);
    assert.deepEqual(body, [
      'n1 [label="f1"] [peripheries="2"];',
      'n6 [label="f6"] [peripheries="2"];',
      "subgraph cluster_0 {",
      'graph [label="a"];',
      'n2 [label="f2"] [peripheries="2"];',
      'n5 [label="f5"] [peripheries="2"];',
      "subgraph cluster_1 {",
      'graph [label="b"];',
      'n3 [label="f3"] [peripheries="2"];',
      "}",
      "}",
      'n4 [label="f4"] [peripheries="2"];',
    ]);
    assert.equal((dot.match(/{/g) || []).length, (dot.match(/}/g) || []).length);
  });

  test("a cluster appears with its first visible node", () => {
    const tl = scoped();
    assert.ok(!tl.graphAt(1, HEADER).dot.includes("cluster_0"));
    assert.ok(tl.graphAt(2, HEADER).dot.includes("cluster_0"));
    assert.ok(!tl.graphAt(2, HEADER).dot.includes("cluster_1"));
  });

  test("a scope without cluster lines (c) puts its nodes in the parent", () => {
    const dot = scoped().graphAt(6, HEADER).dot;
    assert.ok(!/cluster_2/.test(dot));
    assert.ok(dot.includes('n4 [label="f4"]'));
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
    const g = many(10).graphAt(10, HEADER, { max_nodes: 4 });
    assert.equal(g.visible, 10);
    assert.equal(g.hidden, 7);
    assert.deepEqual(g.shown, [8, 9, 10]);
    assert.ok(g.dot.includes('hidden [label="7 nodes hidden"] [shape="note"];'));
    assert.equal(statements(g.dot).filter((s) => !s.includes("->")).length, 4, "max_nodes boxes in all");
    assert.ok(!g.dot.includes("n7 -> n8"), "edges to hidden nodes are left out");
    assert.ok(g.dot.includes("n8 -> n9"));
  });

  test("within the budget, no note", () => {
    const g = many(4).graphAt(4, HEADER, { max_nodes: 4 });
    assert.equal(g.hidden, 0);
    assert.ok(!g.dot.includes("hidden"));
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
  test("the edges carrying the newest grad step are highlighted, until backward ends", () => {
    const tl = chain();
    assert.deepEqual(tl.graphAt(6, HEADER).highlight, [], "the root: no edge leaves it");
    assert.deepEqual(tl.graphAt(7, HEADER).highlight, [[3, 4]]);
    assert.deepEqual(tl.graphAt(8, HEADER).highlight, [[1, 3]]);
    assert.deepEqual(tl.graphAt(11, HEADER).highlight, []);
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
    assert.match(tl.graphAt(n, s.header).error, /second time/);
    assert.equal(tl.graphAt(n - 1, s.header).error, null);
  });
});

describe("the sample recording", () => {
  test("every position gives DOT that Graphviz lays out", async () => {
    const { Graphviz } = await import("@hpcc-js/wasm-graphviz");
    const graphviz = await Graphviz.load();
    const s = sample();
    const tl = new Timeline();
    tl.loadSnapshot(s.snapshot);
    for (let t = 0; t <= tl.length; t++) {
      const { dot } = tl.graphAt(t, s.header, s.options);
      const svg = graphviz.layout(dot, "svg", "dot");
      assert.match(svg, /<svg/, `t=${t}`);
    }
    const last = tl.graphAt(tl.length, s.header, s.options);
    assert.equal(last.shown.length, 9);
    // the freed nodes are drawn ghosted, and loss is the one output
    assert.deepEqual([...last.outputs], [9]);
    assert.ok(last.dot.includes("freed"));
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
