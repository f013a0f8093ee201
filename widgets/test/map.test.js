// A map of the modules in the view (levels.js NOTE [map]): a box opens in place with the busy
// sign, the inspector shows its module, it rolls up again from the groups bar, and a box shows
// the gradient that flowed out of its module once backward reached it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createView } from "../src/view.js";
import { MAP_BUTTONS_UP_TO } from "../src/view/panels.js";
import { dom, fakeModel, sample, stubRenderer } from "./helpers.js";

/**
 * The sample recording (y = x * w + b; exp; sum; * const; backward) with its ops in a model:
 * Mul and Add in M / layer1, Exp in M / act. Past collapse_over 3 it is a map: M opens by
 * itself, layer1 and act are boxes.
 */
function setup() {
  const { host, window } = dom();
  const s = sample();
  for (const node of s.snapshot.nodes) {
    if (node.id === 4 || node.id === 5) node.scope = ["M", "layer1"];
    if (node.id === 6) node.scope = ["M", "act"];
  }
  const options = { ...s.options, replay: false, collapse_over: 3 };
  const model = fakeModel({ header: s.header, snapshot: s.snapshot, delta: {}, options });
  const renderer = stubRenderer();
  const cleanup = createView({ model, el: host, createRenderer: renderer.factory });
  const root = /** @type {HTMLElement} */ (host.querySelector(".dg-root"));
  const click = (/** @type {Element} */ el) => el.dispatchEvent(new window.MouseEvent("click", { bubbles: true }));
  const node = (/** @type {string} */ name) => [...root.querySelectorAll(".dg-graph g.node")].find((g) => g.querySelector("title")?.textContent === name);
  const inspector = () => Object.fromEntries([...root.querySelectorAll(".dg-inspector dt")].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]));
  return { root, view: cleanup.view, renderer, cleanup, click, node, inspector };
}

test("a box of the map opens in place with the busy sign, shows its module, and rolls up again", async () => {
  const { root, view, renderer, cleanup, click, node, inspector } = setup();
  await view.scheduler.idle();
  const s = view.drawing.drawn;
  assert.ok(s && s.map, "past collapse_over: a map");
  const layer = /** @type {any} */ (s.boxes.find((b) => b.key === "scope:M / layer1"));
  assert.deepEqual([layer.members, layer.output, layer.lines], [[4, 5], 5, ["layer1 \u00B7 2 nodes \u00B7 click to open"]]);
  assert.ok(s.edges.some((e) => e.src === layer.name && e.label === "(2,)"), "the shape flowing out, on its edge");
  // backward reached its output (Add): the box shows the gradient that flowed out of it
  assert.ok(node(layer.name)?.classList.contains("dg-grad"));
  view.setPosition(9); // the end of the forward pass: no gradient yet
  assert.ok(!node(layer.name)?.classList.contains("dg-grad"));
  view.setPosition(view.timeline.length);

  const layouts = renderer.calls.length;
  click(/** @type {Element} */ (node(layer.name)));
  const busy = /** @type {HTMLElement} */ (root.querySelector(".dg-busy"));
  assert.equal(busy.hidden, false, "the busy sign while the box is laid out open");
  assert.equal(busy.textContent, "laying out\u2026");
  const rows = inspector();
  assert.equal(rows.module, "layer1");
  assert.equal(rows.nodes, "2");
  assert.equal(rows.output, "Add");
  assert.equal(rows.shape, "(2,)");
  assert.equal(rows["gradient out"], "[3.644, 0.2992]");
  assert.equal(rows["saved for backward"], "freed", "the Mul's 16 bytes were freed by backward");
  await view.scheduler.idle();
  assert.equal(renderer.calls.length, layouts + 1);
  assert.equal(busy.hidden, true);
  const open = /** @type {any} */ (view.drawing.drawn);
  assert.ok(!open.boxes.some((b) => b.key === "scope:M / layer1"), "opened: its nodes are drawn");
  assert.ok(open.boxes.some((b) => b.name === "n4") && open.boxes.some((b) => b.key === "scope:M / act"), "the rest stays a box");
  assert.match(open.dot, /label="layer1"/, "in its own cluster");
  view.setPosition(4); // before its Add exists: the inspector says so, as of a node
  assert.equal(inspector()["gradient out"], "not yet (later in the timeline)");

  const rollUp = /** @type {HTMLElement} */ ([...root.querySelectorAll(".dg-groups button")].find((b) => b.textContent === "roll up: layer1"));
  assert.ok(rollUp, "the groups bar rolls up what is open");
  rollUp.click();
  await view.scheduler.idle();
  assert.ok(/** @type {any} */ (view.drawing.drawn).boxes.some((b) => b.key === "scope:M / layer1"));
  cleanup();
});

test("a map of a few boxes has a button for each in the groups bar; of many, only roll-ups", async () => {
  const { root, view, cleanup } = setup();
  await view.scheduler.idle();
  const s = /** @type {any} */ (view.drawing.drawn);
  assert.deepEqual(s.groups.map((/** @type {any} */ g) => g.title), ["layer1", "act"]);
  assert.equal(view.state.map, false, "the structure drew a map by itself, past collapse_over");
  const buttons = () => [...root.querySelectorAll(".dg-groups button")].map((b) => b.textContent);
  assert.deepEqual(buttons(), ["expand: layer1", "expand: act"], `at most ${MAP_BUTTONS_UP_TO}: a button each`);
  // many boxes (ResNet-18's map has ten): they say "click to open", the bar stays short
  const many = { ...s, groups: Array.from({ length: MAP_BUTTONS_UP_TO + 1 }, (_, k) => ({ key: `scope:M / m${k}`, title: `m${k}`, expanded: false, loop: false, opened: 0, iterations: 0 })) };
  view.drawing.drawn = many;
  view.step(0);
  assert.deepEqual(buttons(), []);
  cleanup();
});
