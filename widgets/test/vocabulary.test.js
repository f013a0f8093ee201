// The browser composes DOT exactly as Python's dyngraph/dot.py does: every case of
// fixtures/vocabulary.json (written by tests/vocabulary_fixture.py from dot.py; never edit it
// by hand) must come out character for character. Its numbers come as the texts Python made
// of them, and the statements show those texts. A node's statement is vocabulary.js's; an
// edge's style is the one the view paints on it (magnitudeLevel picks it), and a cluster's
// header is structure.js's.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { escape, formatValues, labelLines, nodeStatement, magnitudeLevel } from "../src/vocabulary.js";
import { buildStructure } from "../src/structure.js";

const FIXTURE = JSON.parse(readFileSync(new URL("./fixtures/vocabulary.json", import.meta.url), "utf8"));
const V = FIXTURE.vocabulary;

describe("the Python fixture", () => {
  test("has cases of every kind", () => {
    assert.ok(FIXTURE.nodes.length > 0 && FIXTURE.edges.length > 0);
    assert.ok(FIXTURE.clusters.length > 0);
    assert.deepEqual(new Set(FIXTURE.nodes.map((c) => c.node.kind)), new Set(["leaf", "parameter", "constant", "op"]));
  });

  test("every node statement", () => {
    const failures = [];
    FIXTURE.nodes.forEach((c, i) => {
      const got = nodeStatement(c.node, c.state, V, { limit: c.limit ?? null });
      if (got !== c.statement) failures.push({ case: i, node: c.node, state: c.state, expected: c.statement, got });
    });
    assert.deepEqual(failures, [], `${failures.length} of ${FIXTURE.nodes.length} node cases differ`);
  });

  test("every edge's style: the gradient's magnitude level picks it, as dot.py does", () => {
    const failures = [];
    FIXTURE.edges.forEach((c, i) => {
      // the view paints an edge with grad_edges[magnitudeLevel(norm)] (view/drawing.js restyle)
      const body = c.norm == null ? "" : V.grad_edges[magnitudeLevel(c.norm)];
      const got = `n${c.src} -> n${c.dst} [${body}];`;
      if (got !== c.statement) failures.push({ case: i, norm: c.norm, expected: c.statement, got });
    });
    assert.deepEqual(failures, []);
  });

  test("every cluster header, as the structure writes it", () => {
    const failures = [];
    const vocabulary = { ...V, compact_cluster: undefined }; // the live view's addition, not dot.py's
    FIXTURE.clusters.forEach((c, i) => {
      const node = { id: 1, kind: "leaf", op: "leaf", name: null, scope: [c.name], order: 0, shape: [], dtype: "float32" };
      const timeline = { nodes: new Map([[1, node]]), edges: new Map(), clusters: new Map([[c.name, c.index]]), steps: [] };
      const lines = buildStructure(timeline, { vocabulary }).dot.split("\n").map((line) => line.trim());
      const at = lines.indexOf(c.lines[0]);
      const got = at < 0 ? [] : lines.slice(at, at + 2);
      if (JSON.stringify(got) !== JSON.stringify(c.lines.map((line) => line.trim()))) failures.push({ case: i, name: c.name, expected: c.lines, got });
    });
    assert.deepEqual(failures, []);
  });

  test("the values a label shows are the texts Python made, not what JavaScript would write", () => {
    // 1.0625 is "1.062" in Python (half to even on the exact value), "1.063" in toPrecision(4)
    const tricky = FIXTURE.nodes.find((c) => c.node.preview.includes(1.0625) && c.limit == null);
    assert.ok(tricky, "the fixture has the case of ties");
    assert.ok(tricky.node.previewText.includes("1.062") && (1.0625).toPrecision(4) === "1.063");
    const lines = labelLines(tricky.node, tricky.state);
    assert.ok(lines.includes(`[${tricky.node.previewText.join(", ")}, ...]`) ||
      lines.includes(`[${tricky.node.previewText.join(", ")}]`), lines.join(" | "));
    assert.ok(tricky.statement.includes("1.062"));
  });
});

describe("numbers", () => {
  test("formatValues joins the texts, cuts them to the limit and marks what the preview leaves out", () => {
    assert.equal(formatValues(["1", "2.5", "nan", "inf", "-inf"], [5]), "[1, 2.5, nan, inf, -inf]");
    assert.equal(formatValues(["1", "123456"], [4]), "[1, 123456, ...]");
    assert.equal(formatValues(["True", "False"], [2]), "[True, False]");
    assert.equal(formatValues(["3"], []), "[3]");
    assert.equal(formatValues(["0.1", "0.2"], [2, 2]), "[0.1, 0.2, ...]");
    assert.equal(formatValues(["0.1", "0.2"], [2], 1), "[0.1, ...]");
  });

  test("magnitude levels, a decade a level", () => {
    assert.deepEqual([0, -1, 1e-9, 1e-3, 0.01, 0.05, 0.1, 1, 9.99, 10, 1e9].map(magnitudeLevel), [0, 0, 0, 0, 1, 1, 2, 3, 3, 4, 4]);
    assert.deepEqual(["NaN", "Infinity", "-Infinity", NaN].map(magnitudeLevel), [4, 4, 4, 4]);
  });
});

describe("labels", () => {
  const base = {
    id: 7, kind: "op", op: "Mul", name: null, shape: [2], dtype: "float32", device: "cpu",
    preview: [1, 2], previewText: ["1", "2"], scope: [], file: null, line: null, cell: null,
    saved: 0, savedText: null, recomputed: false, elapsed: null, elapsedText: null, rule: null,
  };

  test("the lines in order", () => {
    const node = { ...base, name: "y", saved: 1536, savedText: "1.5 KB", recomputed: true, device: "cuda:0",
      elapsed: 0.000123456, elapsedText: "0.123 ms" };
    const grad = { preview: [0.5, "Infinity"], norm: "Infinity", summed: true, previewText: ["0.5", "inf"], normText: "inf" };
    assert.deepEqual(labelLines(node, { grad, freed: false }), [
      "y", "Mul", "(2,)", "[1, 2]", "grad (summed) [0.5, inf]", "saved 1.5 KB", "recomputed", "Inf", "cuda:0", "0.123 ms",
    ]);
    assert.deepEqual(labelLines(node, { grad: null, freed: true }).slice(4, 6), ["freed", "recomputed"]);
  });

  test("titles and the shape line of each kind", () => {
    assert.deepEqual(labelLines({ ...base, kind: "constant", op: "constant", shape: [], preview: [2], previewText: ["2"] }, { grad: null, freed: false }), ["const", "[2]"]);
    assert.deepEqual(labelLines({ ...base, kind: "leaf", op: "leaf", shape: [], preview: [], previewText: [] }, { grad: null, freed: false }), ["leaf", "()"]);
    assert.deepEqual(labelLines({ ...base, kind: "parameter", name: "w", shape: [2, 3], dtype: "int64", preview: [], previewText: [] }, { grad: null, freed: false }), ["w", "(2, 3) int64"]);
    // an op whose output was never seen (no dtype: PyTorch's TBackward0 inside F.linear) shows no shape
    assert.deepEqual(labelLines({ ...base, op: "TBackward0", shape: [], dtype: "", preview: [], previewText: [] }, { grad: null, freed: false }), ["TBackward0"]);
    assert.deepEqual(labelLines({ ...base, op: "Sum", shape: [], preview: [], previewText: [] }, { grad: null, freed: false }), ["Sum", "()"]);
  });

  test("a statement adds the saved, freed and anomaly lists", () => {
    const node = { ...base, saved: 16, savedText: "16 B", preview: ["NaN", 1], previewText: ["nan", "1"] };
    const s = nodeStatement(node, { grad: null, freed: false }, V);
    assert.ok(s.startsWith('n7 [label="Mul\\n(2,)\\n[nan, 1]\\nsaved 16 B\\nNaN", '));
    assert.ok(s.endsWith(` [${V.saved}] [${V.anomaly}];`));
    const freed = nodeStatement(node, { grad: null, freed: true }, V);
    assert.ok(freed.endsWith(` [${V.freed.op}] [${V.anomaly}];`));
    assert.ok(!freed.includes(V.saved));
  });
});

describe("escape", () => {
  test("what DOT and Graphviz would read is escaped; the rest stays", () => {
    assert.equal(escape('a\\b"c&d\ne'), 'a\\\\b\\"c&amp;d\\ne');
    assert.equal(escape("\x07\x7f\x85"), "\\\\x07\\\\x7f\\\\x85");
    assert.equal(escape("\ud800x\uffff"), "\\\\ud800x\\\\uffff");
    assert.equal(escape("\u{1F600}é<script>"), "\u{1F600}é<script>");
  });

  test("cut to max code points with an ellipsis", () => {
    assert.equal(escape("x".repeat(120)), "x".repeat(120));
    assert.equal(escape("x".repeat(121)), "x".repeat(119) + "\u2026");
    assert.equal(escape("\u{1F600}".repeat(121)), "\u{1F600}".repeat(119) + "\u2026");
    assert.equal(escape("abcdef", 4), "abc\u2026");
  });
});
