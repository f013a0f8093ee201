// The browser composes DOT exactly as Python's dyngraph/dot.py does: every case of
// fixtures/vocabulary.json (written by tests/vocabulary_fixture.py from dot.py; never edit it
// by hand) must come out character for character.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  escape, pyG, pyFixed, formatValues, formatBytes, labelLines, nodeStatement, edgeStatement,
  clusterLines, magnitudeLevel,
} from "../src/vocabulary.js";

const FIXTURE = JSON.parse(readFileSync(new URL("./fixtures/vocabulary.json", import.meta.url), "utf8"));
const V = FIXTURE.vocabulary;

describe("the Python fixture", () => {
  test("has cases of every kind", () => {
    assert.ok(FIXTURE.nodes.length > 0 && FIXTURE.edges.length > 0);
    assert.ok(FIXTURE.clusters.length > 0 && FIXTURE.numbers.length > 0);
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

  test("every edge statement", () => {
    const failures = [];
    FIXTURE.edges.forEach((c, i) => {
      const got = edgeStatement(c.src, c.dst, c.norm, V);
      if (got !== c.statement) failures.push({ case: i, norm: c.norm, expected: c.statement, got });
    });
    assert.deepEqual(failures, []);
  });

  test("every cluster header", () => {
    const failures = [];
    FIXTURE.clusters.forEach((c, i) => {
      const got = clusterLines(c.index, c.name, V);
      if (JSON.stringify(got) !== JSON.stringify(c.lines)) failures.push({ case: i, name: c.name, expected: c.lines, got });
    });
    assert.deepEqual(failures, []);
  });

  test("every number: pyG, and formatValues of one float", () => {
    const failures = [];
    FIXTURE.numbers.forEach((c, i) => {
      const got = pyG(c.value, c.precision);
      if (got !== c.text) failures.push({ case: i, value: c.value, precision: c.precision, expected: c.text, got });
      if (c.precision === 4) {
        const list = formatValues([c.value], [1], "float32");
        if (list !== `[${c.text}]`) failures.push({ case: i, value: c.value, formatValues: list, expected: `[${c.text}]` });
      }
    });
    assert.deepEqual(failures, []);
  });
});

describe("numbers", () => {
  test("pyG rounds the exact value half to even, like Python's format", () => {
    assert.equal(pyG(0.125, 2), "0.12");
    assert.equal(pyG(1.0625, 4), "1.062");
    assert.equal(pyG(12345, 4), "1.234e+04");
    assert.equal(pyG(2.5, 1), "2");
    assert.equal(pyG(9.9995, 4), "9.999"); // 9.99949999... in binary
    assert.equal(pyG(99995, 4), "1e+05");
    assert.equal(pyG(1e-5, 4), "1e-05");
    assert.equal(pyG(0.0001, 4), "0.0001");
    assert.equal(pyG(1e16, 4), "1e+16");
    assert.equal(pyG(1.5e300, 4), "1.5e+300");
    assert.equal(pyG(5e-324, 4), "4.941e-324");
    assert.equal(pyG(-0, 4), "-0");
    assert.equal(pyG(0, 4), "0");
    assert.equal(pyG("NaN", 4), "nan");
    assert.equal(pyG("Infinity", 4), "inf");
    assert.equal(pyG("-Infinity", 4), "-inf");
  });

  test("pyFixed and formatBytes", () => {
    assert.equal(pyFixed(1.25, 1), "1.2");
    assert.equal(pyFixed(1.75, 1), "1.8");
    assert.equal(pyFixed(0.04, 1), "0.0");
    assert.equal(formatBytes(0), "0 B");
    assert.equal(formatBytes(1023), "1023 B");
    assert.equal(formatBytes(1024), "1.0 KB");
    assert.equal(formatBytes(1280), "1.2 KB");
    assert.equal(formatBytes(1536), "1.5 KB");
    assert.equal(formatBytes(3 * 1024 * 1024), "3.0 MB");
    assert.equal(formatBytes(5 * 1024 ** 4), "5120.0 GB");
  });

  test("formatValues: floats by dtype, ints and booleans as Python writes them, the ellipsis", () => {
    assert.equal(formatValues([1, 2.5, "NaN", "Infinity", "-Infinity"], [5], "float32"), "[1, 2.5, nan, inf, -inf]");
    assert.equal(formatValues([1, 123456], [4], "int64"), "[1, 123456, ...]");
    assert.equal(formatValues([true, false], [2], "bool"), "[True, False]");
    assert.equal(formatValues([3], [], "float64"), "[3]");
    assert.equal(formatValues([0.1, 0.2], [2, 2], "float"), "[0.1, 0.2, ...]");
    // not a whole number: a Python float whatever the dtype (the gradient of a bool tensor)
    assert.equal(formatValues([1e-7, 2], [3], "bool"), "[1e-07, 2, ...]");
  });

  test("magnitude levels, a decade a level", () => {
    assert.deepEqual([0, -1, 1e-9, 1e-3, 0.01, 0.05, 0.1, 1, 9.99, 10, 1e9].map(magnitudeLevel), [0, 0, 0, 0, 1, 1, 2, 3, 3, 4, 4]);
    assert.deepEqual(["NaN", "Infinity", "-Infinity", NaN].map(magnitudeLevel), [4, 4, 4, 4]);
  });
});

describe("labels", () => {
  const base = {
    id: 7, kind: "op", op: "Mul", name: null, shape: [2], dtype: "float32", device: "cpu",
    preview: [1, 2], scope: [], file: null, line: null, cell: null, saved: 0, recomputed: false,
    elapsed: null, rule: null,
  };

  test("the lines in order", () => {
    const node = { ...base, name: "y", saved: 1536, recomputed: true, device: "cuda:0", elapsed: 0.000123456 };
    const grad = { preview: [0.5, "Infinity"], norm: "Infinity", summed: true };
    assert.deepEqual(labelLines(node, { grad, freed: false }), [
      "y", "Mul", "(2,)", "[1, 2]", "grad (summed) [0.5, inf]", "saved 1.5 KB", "recomputed", "Inf", "cuda:0", "0.123 ms",
    ]);
    assert.deepEqual(labelLines(node, { grad: null, freed: true }).slice(4, 6), ["freed", "recomputed"]);
  });

  test("titles and the shape line of each kind", () => {
    assert.deepEqual(labelLines({ ...base, kind: "constant", op: "constant", shape: [], preview: [2] }, { grad: null, freed: false }), ["const", "[2]"]);
    assert.deepEqual(labelLines({ ...base, kind: "leaf", op: "leaf", shape: [], preview: [] }, { grad: null, freed: false }), ["leaf", "()"]);
    assert.deepEqual(labelLines({ ...base, kind: "parameter", name: "w", shape: [2, 3], dtype: "int64", preview: [] }, { grad: null, freed: false }), ["w", "(2, 3) int64"]);
  });

  test("a statement adds the saved, freed and anomaly lists", () => {
    const node = { ...base, saved: 16, preview: ["NaN", 1] };
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
