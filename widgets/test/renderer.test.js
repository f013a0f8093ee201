// The real renderer's plain (tweens off) path under jsdom: Graphviz-WASM lays the DOT out and
// the SVG goes in as elements, labels as text. (The animated path needs a browser's SVG
// geometry; the dev harness checks it in Chromium.)

import { test } from "node:test";
import assert from "node:assert/strict";
import { createGraphvizRenderer } from "../src/renderer.js";
import { Timeline } from "../src/timeline.js";
import { buildStructure } from "../src/structure.js";
import { dom, sample } from "./helpers.js";

test("tweens off: the laid-out SVG is drawn, one g.node per node, names as text", async () => {
  const { document, host } = dom();
  const s = sample();
  const tl = new Timeline();
  tl.loadSnapshot(s.snapshot);
  const renderer = createGraphvizRenderer(host);
  const structure = buildStructure(tl, { lines: s.header.lines, vocabulary: s.header.vocabulary, maxNodes: s.options.max_nodes });
  await renderer.render(structure.dot, false);
  const titles = [...host.querySelectorAll("svg g.node title")].map((t) => t.textContent).sort();
  assert.deepEqual(titles, ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"]);
  assert.equal(host.querySelectorAll("svg g.edge").length, 8);
  assert.equal(host.querySelector("img"), null);
  const texts = [...host.querySelectorAll("svg text")].map((t) => t.textContent);
  assert.ok(texts.includes("<img src=x onerror=alert(1)>"));
  // a second render replaces the drawing
  await renderer.render("digraph { n1 -> n2; n3; }", false);
  assert.equal(host.querySelectorAll("svg").length, 1);
  assert.equal(host.querySelectorAll("svg g.node").length, 3);
  renderer.destroy();
});

test("a Graphviz error rejects the render (and the next one still works)", async () => {
  const { host } = dom();
  const renderer = createGraphvizRenderer(host);
  await assert.rejects(renderer.render("digraph { a -> ; }", false));
  await renderer.render("digraph { a -> b; }", false);
  assert.equal(host.querySelectorAll("svg g.node").length, 2);
});

test("the layout worker's side: a DOT in, its SVG out as transferred UTF-8 bytes, errors as text", async () => {
  const { serveLayouts } = await import("../src/renderer.js");
  const replies = [];
  const scope = { onmessage: null, postMessage: (message, transfer) => replies.push({ message, transfer }) };
  serveLayouts(scope);
  await scope.onmessage({ data: { id: 7, dot: "digraph { a -> b; }" } });
  const [{ message, transfer }] = replies;
  assert.equal(message.id, 7);
  assert.ok(message.svg instanceof ArrayBuffer);
  assert.deepEqual(transfer, [message.svg], "handed over, not copied");
  assert.match(new TextDecoder().decode(message.svg), /<svg[\s\S]*<title>a&#45;&gt;b<\/title>/);
  await scope.onmessage({ data: { id: 8, dot: "digraph { a -> ; }" } });
  assert.equal(replies[1].message.id, 8);
  assert.equal(typeof replies[1].message.error, "string");
});

test("a large drawing without the bundle's source is laid out on the page's thread", async () => {
  const { host } = dom();
  const many = Array.from({ length: 200 }, (_, i) => `  n${i} -> n${i + 1};`).join("\n");
  const renderer = createGraphvizRenderer(host, { source: () => null });
  await renderer.render(`digraph {\n${many}\n}`, false);
  assert.equal(host.querySelectorAll("svg g.node").length, 201);
});

test("NOTE [reading order]: inputs stand in argument order, top to bottom and left to right", async () => {
  // micrograd's `h = (x * w).relu(); y = h + x * x`: Graphviz alone put w before x
  const s = sample();
  const node = (id, kind, op, name = null) => ({ id, kind, op, name, order: id, scope: [], shape: [], dtype: "float" });
  const nodes = [node(1, "leaf", "leaf", "x"), node(2, "leaf", "leaf", "w"), node(3, "op", "*"), node(4, "op", "ReLU", "h"),
    node(5, "op", "*"), node(6, "op", "+", "y")];
  const edges = [[1, 3, 0], [2, 3, 1], [3, 4, 0], [1, 5, 0], [1, 5, 1], [4, 6, 0], [5, 6, 1]];
  const timeline = {
    nodes: new Map(nodes.map((n) => [n.id, n])),
    edges: new Map(edges.map(([src, dst, pos]) => [`${src},${dst},${pos}`, { src, dst, pos }])),
    clusters: new Map(), steps: [],
  };
  for (const rankdir of /** @type {const} */ (["TB", "LR"])) {
    const { host } = dom();
    const renderer = createGraphvizRenderer(host);
    await renderer.render(buildStructure(timeline, { lines: s.header.lines, vocabulary: s.header.vocabulary, rankdir }).dot, false);
    const at = (/** @type {string} */ name) => {
      const g = [...host.querySelectorAll("g.node")].find((n) => n.querySelector("title").textContent === name);
      const text = g.querySelector("text");
      return { x: Number(text.getAttribute("x")), y: Number(text.getAttribute("y")) };
    };
    if (rankdir === "TB") assert.ok(at("n1").x < at("n2").x, "x left of w");
    else assert.ok(at("n1").y < at("n2").y, "x above w");
    renderer.destroy();
  }
});
