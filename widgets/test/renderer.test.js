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
