import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { setText, make, buildCodeLines, markCurrentLine, inspectorRows, renderRows, sourceText } from "../src/text.js";
import { dom } from "./helpers.js";

const HOSTILE = "<img src=x onerror=alert(1)>";

/** A node as the browser holds it once folded (PROTOCOL.md), with the texts Python made. */
const NODE = {
  id: 4, kind: "op", op: "Mul", name: null, shape: [2], dtype: "float32", device: "cpu",
  preview: [0.5, -2], previewText: ["0.5", "-2"], scope: ["layer1"], file: "cell.py", line: 2,
  cell: 5, saved: 16, savedText: "16 B", recomputed: false, elapsed: null, elapsedText: null,
  rule: "z = x * y;  dz/dx = y,  dz/dy = x",
};

describe("text insertion", () => {
  test("setText puts markup in as text: no element is created", () => {
    const { document, host } = dom();
    setText(host, HOSTILE);
    assert.equal(host.textContent, HOSTILE);
    assert.equal(host.querySelector("img"), null);
    assert.equal(host.children.length, 0);
    setText(host, null);
    assert.equal(host.textContent, "");
    void document;
  });

  test("the inspector shows a hostile name as text", () => {
    const { document, host } = dom();
    const node = { ...NODE, kind: "parameter", op: "parameter", name: HOSTILE, shape: [2, 3], rule: HOSTILE };
    const sources = new Map([["cell.py", `x = 1\nw = dg.Parameter(name="${HOSTILE}")\n`]]);
    renderRows(document, host, inspectorRows(node, { grad: null, freed: false }, sources));
    assert.equal(host.querySelector("img"), null);
    const values = [...host.querySelectorAll("dd")].map((dd) => dd.textContent);
    assert.ok(values.includes(HOSTILE));
    assert.ok(values.includes("(2, 3)"));
    assert.equal(host.querySelectorAll("dd *").length, 0, "no element inside any value");
  });

  test("the code panel shows a hostile source line as text", () => {
    const { document, host } = dom();
    const source = `x = 1\nw = Parameter(name="${HOSTILE}")\n</ol><script>alert(2)</script>\n`;
    const list = buildCodeLines(document, source, 2);
    host.appendChild(list);
    assert.equal(host.querySelector("img"), null);
    assert.equal(host.querySelector("script"), null);
    const rows = host.querySelectorAll("li.dg-line");
    assert.equal(rows.length, 3);
    assert.equal(rows[1].querySelector("code").textContent, `w = Parameter(name="${HOSTILE}")`);
    assert.ok(rows[1].classList.contains("dg-current"));
    assert.equal(rows[1].getAttribute("aria-current"), "true");
  });

  test("each stretch of lines not kept is one \u2026 row; every number shown has its line's text", () => {
    const { document } = dom();
    // what a shared source keeps of a file whose lines 6 and 14 made nodes (two around each)
    const lines = Array.from({ length: 16 }, (_, i) => (i >= 3 && i <= 7) || i >= 11 ? `line ${i + 1}` : "");
    lines[12] = ""; // a blank line of the learner's, inside a kept stretch: a row of its own
    const list = buildCodeLines(document, lines.join("\n") + "\n", 14, [[4, 8], [12, 16]]);
    const rows = [...list.children].map((row) => [row.querySelector(".dg-lineno").textContent, row.querySelector("code").textContent]);
    assert.deepEqual(rows, [
      ["\u2026", " "], ["4", "line 4"], ["5", "line 5"], ["6", "line 6"], ["7", "line 7"], ["8", "line 8"],
      ["\u2026", " "], ["12", "line 12"], ["13", " "], ["14", "line 14"], ["15", "line 15"], ["16", "line 16"],
    ]);
    const gaps = list.querySelectorAll("li.dg-gap");
    assert.equal(gaps.length, 2);
    assert.match(gaps[0].getAttribute("title"), /^lines 1\u20133 not shown/);
    assert.match(gaps[1].getAttribute("title"), /^lines 9\u201311 not shown/);
    assert.equal(gaps[0].querySelector("button"), null, "a gap selects nothing");
    assert.equal(gaps[0].getAttribute("data-line"), null);
    assert.equal(gaps[0].querySelector(".dg-lineno").getAttribute("aria-label"), "lines 1\u20133 not shown");
    assert.equal(list.querySelector(".dg-current").getAttribute("data-line"), "14");
    assert.equal(markCurrentLine(list, 2), null, "a line not kept has no row to mark");
  });

  test("kept stretches from an untrusted state: malformed pairs are skipped, lines clipped", () => {
    const { document } = dom();
    const numbers = (kept) => [...buildCodeLines(document, "a\nb\nc\nd\ne", null, kept).children]
      .map((row) => row.getAttribute("data-line") ?? "\u2026");
    assert.deepEqual(numbers(undefined), ["1", "2", "3", "4", "5"], "nothing said: every line");
    assert.deepEqual(numbers([[4, 9], "x", [2, "3"], [0, 1], null]), ["1", "\u2026", "4", "5"]);
    assert.deepEqual(numbers([[2, 2]]), ["\u2026", "2", "\u2026"], "lines after the last stretch too");
    assert.deepEqual(numbers([]), ["\u2026"]);
  });

  test("line numbers are buttons carrying their number; the highlight moves", () => {
    const { document } = dom();
    const list = buildCodeLines(document, "a\nb\nc", 1);
    const buttons = list.querySelectorAll("button.dg-lineno");
    assert.deepEqual([...buttons].map((b) => b.getAttribute("data-line")), ["1", "2", "3"]);
    const row = markCurrentLine(list, 3);
    assert.equal(row.getAttribute("data-line"), "3");
    assert.equal(list.querySelectorAll(".dg-current").length, 1);
    markCurrentLine(list, null);
    assert.equal(list.querySelectorAll(".dg-current").length, 0);
  });

  test("make sets only the given fixed attributes, text as text", () => {
    const { document } = dom();
    const el = make(document, "span", { className: "x", text: HOSTILE, attrs: { title: HOSTILE } });
    assert.equal(el.textContent, HOSTILE);
    assert.equal(el.children.length, 0);
    assert.equal(el.getAttribute("title"), HOSTILE);
  });
});

describe("inspector rows", () => {
  test("every field from the node's data, in reading order", () => {
    const sources = new Map([["cell.py", "x = 1\n    y = x * w   \n"]]);
    const grad = { preview: [1, "NaN"], norm: "NaN", summed: true, previewText: ["1", "nan"], normText: "nan" };
    const rows = inspectorRows(NODE, { grad, freed: true }, sources);
    assert.deepEqual(rows, [
      ["op", "Mul"],
      ["name", "\u2014"],
      ["shape", "(2,)"],
      ["dtype", "float32"],
      ["device", "cpu"],
      ["value", "[0.5, -2]"],
      ["gradient", "[1, nan]"],
      ["grad norm", "nan"],
      ["saved for backward", "16 B"],
      ["freed", "yes"],
      ["source", "cell [5], line 2: y = x * w"],
      ["local derivative", "z = x * y;  dz/dx = y,  dz/dy = x"],
    ]);
  });

  test("an op whose output was never seen shows no shape, not the scalar's ()", () => {
    const unseen = { ...NODE, op: "TBackward0", shape: [], dtype: "", preview: [], previewText: [] };
    const rows = new Map(inspectorRows(unseen, { grad: null, freed: false }, new Map()));
    assert.equal(rows.get("shape"), "\u2014");
    const scalar = { ...unseen, dtype: "float32" };
    assert.equal(new Map(inspectorRows(scalar, { grad: null, freed: false }, new Map())).get("shape"), "()");
  });

  test("no gradient yet, nothing saved, a leaf", () => {
    const leaf = { ...NODE, kind: "leaf", op: "leaf", name: "x", shape: [], preview: [3], previewText: ["3"], saved: 0,
      savedText: null, rule: null };
    const rows = Object.fromEntries(inspectorRows(leaf, { grad: null, gradLater: true, freed: false }));
    assert.equal(rows.op, "leaf");
    assert.equal(rows.name, "x");
    assert.equal(rows.shape, "()");
    assert.equal(rows.value, "[3]");
    assert.equal(rows.gradient, "not yet (later in the timeline)");
    assert.equal(rows["grad norm"], "\u2014");
    assert.equal(rows["saved for backward"], "\u2014");
    assert.equal(rows.freed, "no");
    assert.equal(rows["local derivative"], "\u2014");
    assert.equal(Object.fromEntries(inspectorRows(leaf, { grad: null, freed: false })).gradient, "not yet");
    // the texts are shown as Python wrote them, never written again from the numbers
    const grad = { preview: [0.123456], norm: 12345.678, summed: false, previewText: ["0.1235"], normText: "1.235e+04" };
    const big = Object.fromEntries(inspectorRows(NODE, { grad, freed: false }));
    assert.equal(big.gradient, "[0.1235, ...]");
    assert.equal(big["grad norm"], "1.235e+04");
  });

  test("the source line: cell and line, or the file's name outside a notebook", () => {
    const sources = new Map([["/home/me/train.py", "a = 1\n  b = a * 2\n"]]);
    assert.equal(sourceText({ file: "/home/me/train.py", line: 2, cell: null }, sources), "train.py, line 2: b = a * 2");
    assert.equal(sourceText({ file: "/home/me/train.py", line: 2, cell: 3 }, sources), "cell [3], line 2: b = a * 2");
    assert.equal(sourceText({ file: "/home/me/other.py", line: 9, cell: null }, sources), "other.py, line 9");
    assert.equal(sourceText({ file: null, line: null, cell: null }, sources), "\u2014");
  });
});

describe("drawings", () => {
  for (const [name, steps] of [["inertSvg", false], ["inertSvgInSteps (a large drawing, over several tasks)", true]]) test(`${name} keeps Graphviz's drawing and drops scripts, links and handlers`, async () => {
    const { inertSvg, inertSvgInSteps } = await import("../src/text.js");
    const { document, host } = dom();
    let pauses = 0;
    const inert = steps
      ? (/** @type {Document} */ d, /** @type {string} */ t) => inertSvgInSteps(d, t, async () => { pauses++; }, 3)
      : inertSvg;
    const svg = await inert(document, `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="alert(1)">
      <g id="n1" class="node"><title>n1</title><ellipse cx="1" cy="1" rx="1" ry="1"/><text onclick="alert(2)">&lt;img src=x onerror=alert(1)&gt;</text></g>
      <script>alert(3)</script><a xlink:href="javascript:alert(4)"><text>link</text></a><foreignObject><div/></foreignObject>
      <image href="x"/></svg>`);
    host.appendChild(svg);
    assert.equal(host.querySelectorAll("script, a, foreignObject, image, img, div").length, 0);
    assert.equal(svg.getAttribute("onload"), null);
    assert.equal(svg.querySelector("text").getAttribute("onclick"), null);
    assert.equal(svg.querySelector("text").textContent, HOSTILE);
    assert.equal(svg.querySelector("g.node title").textContent, "n1");
    if (steps) assert.ok(pauses >= 3, "made inert 3 elements at a time, pausing between");
  });

  test("a non-SVG answer is an error", async () => {
    const { inertSvg } = await import("../src/text.js");
    const { document } = dom();
    assert.throws(() => inertSvg(document, "not svg <"), /did not return an SVG/);
  });
});
