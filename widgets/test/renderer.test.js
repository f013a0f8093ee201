// The real renderer's plain (tweens off) path under jsdom: Graphviz-WASM lays the DOT out and
// the SVG goes in as elements, labels as text. (The animated path needs a browser's SVG
// geometry; the dev harness checks it in Chromium.)

import { test } from "node:test";
import assert from "node:assert/strict";
import { createGraphvizRenderer } from "../src/renderer.js";
import { Timeline } from "../src/timeline.js";
import { dom, sample } from "./helpers.js";

test("tweens off: the laid-out SVG is drawn, one g.node per node, names as text", async () => {
  const { document, host } = dom();
  const s = sample();
  const tl = new Timeline();
  tl.loadSnapshot(s.snapshot);
  const renderer = createGraphvizRenderer(host);
  await renderer.render(tl.graphAt(tl.length, s.header, s.options).dot, false);
  const titles = [...host.querySelectorAll("svg g.node title")].map((t) => t.textContent).sort();
  assert.deepEqual(titles, ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"]);
  assert.equal(host.querySelectorAll("svg g.edge").length, 8);
  assert.equal(host.querySelector("img"), null);
  const texts = [...host.querySelectorAll("svg text")].map((t) => t.textContent);
  assert.ok(texts.includes("<img src=x onerror=alert(1)>"));
  // a second render replaces the drawing
  await renderer.render(tl.graphAt(3, s.header, s.options).dot, false);
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
