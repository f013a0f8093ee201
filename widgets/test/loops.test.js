// Opening a rolled-up loop in the view (issue 36): a few iterations at a time, a busy sign
// while it is laid out, and group buttons that change with the drawing, not before it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createView } from "../src/view.js";
import { dom, fakeModel, sample, stubRenderer } from "./helpers.js";

/** A parameter w, a leaf, then 30 iterations of (Mul(h, w), Tanh) on line 4, a Sum on line 5. */
function loopSnapshot() {
  const node = (id, kind, op, line, name = null) => ({
    id, kind, op, name, shape: [3], dtype: "float32", device: "cpu", preview: [1, 2, 3], previewText: ["1", "2", "3"], scope: [],
    file: "c.py", line, cell: null, saved: 0, savedText: null, recomputed: false, elapsed: null, elapsedText: null, rule: null,
  });
  const nodes = [node(1, "parameter", "parameter", 1, "w"), node(2, "leaf", "leaf", 2, "h")];
  const edges = [];
  let prev = 2;
  for (let k = 0; k < 30; k++) {
    const mul = nodes.length + 1;
    nodes.push(node(mul, "op", "Mul", 4), node(mul + 1, "op", "Tanh", 4));
    edges.push([prev, mul, 0], [1, mul, 1], [mul, mul + 1, 0]);
    prev = mul + 1;
  }
  nodes.push(node(nodes.length + 1, "op", "Sum", 5));
  edges.push([prev, nodes.length, 0]);
  return { seq: 1, nodes, edges, sources: {}, steps: nodes.map((n) => ["node", n.id]), dropped: { nodes: 0, steps: 0 } };
}

/** The stub renderer, each drawing held until the test releases it (a layout under way). */
function heldRenderer() {
  const stub = stubRenderer();
  /** @type {Array<() => void>} */
  const held = [];
  const factory = (/** @type {HTMLElement} */ container) => {
    const inner = stub.factory(container);
    return {
      render: (/** @type {string} */ dot, /** @type {boolean} */ tween) => new Promise((resolve) => held.push(() => resolve(inner.render(dot, tween)))),
      destroy() {},
    };
  };
  return { calls: stub.calls, held, factory, release: () => held.splice(0).forEach((go) => go()) };
}

function setup() {
  const { host } = dom();
  const s = sample();
  const model = fakeModel({ header: s.header, snapshot: loopSnapshot(), delta: {}, options: s.options });
  const renderer = heldRenderer();
  const cleanup = createView({ model, el: host, createRenderer: renderer.factory });
  const root = /** @type {HTMLElement} */ (host.querySelector(".dg-root"));
  const view = cleanup.view;
  const drawn = async () => {
    renderer.release();
    await view.scheduler.idle();
  };
  const buttons = () => [...root.querySelectorAll(".dg-groups button")].map((b) => `${b.textContent}|${b.getAttribute("aria-disabled")}`);
  const busy = /** @type {HTMLElement} */ (root.querySelector("[role=status].dg-busy"));
  return { root, view, renderer, drawn, buttons, busy, cleanup };
}

test("a click on the loop's box opens its next iterations, with a busy sign; buttons follow the drawing", async () => {
  const { root, view, renderer, drawn, buttons, busy, cleanup } = setup();
  await drawn();
  assert.deepEqual(buttons(), ["expand: \u00D728 iterations, line 4|false", "expand all: \u00D728 iterations, line 4|false"]);
  assert.equal(busy.hidden, true);
  const box = [...root.querySelectorAll(".dg-graph g.node")].find((g) => g.querySelector("title").textContent === "l5");
  assert.ok(box, "the rolled-up loop is drawn as one box");

  box.dispatchEvent(new (root.ownerDocument.defaultView.MouseEvent)("click", { bubbles: true }));
  assert.equal(busy.hidden, false, "the busy sign shows at once");
  assert.equal(busy.textContent, "laying out\u2026");
  assert.equal(root.querySelector(".dg-graph").getAttribute("aria-busy"), "true");
  assert.deepEqual(buttons(), ["expand: \u00D728 iterations, line 4|true", "expand all: \u00D728 iterations, line 4|true"], "unchanged until drawn, and disabled");
  const requests = renderer.calls.length;
  box.dispatchEvent(new (root.ownerDocument.defaultView.MouseEvent)("click", { bubbles: true }));
  /** @type {HTMLElement} */ (root.querySelector(".dg-groups button")).click();
  assert.equal(renderer.calls.length, requests, "clicks while it lays out change nothing");
  assert.deepEqual([...view.state.openIterations], [["l5", 1]], "one iteration (no pane to measure in jsdom)");

  await drawn();
  assert.equal(busy.hidden, true);
  assert.equal(root.querySelector(".dg-graph").getAttribute("aria-busy"), "false");
  assert.match(renderer.calls.at(-1).dot, /l5 \[label="\u00D727 iterations, line 4\\n54 nodes \u00B7 click to open more"/);
  assert.deepEqual(buttons(), ["expand more: \u00D728 iterations, line 4|false", "expand all: \u00D728 iterations, line 4|false",
    "roll up: \u00D728 iterations, line 4|false"]);

  /** @type {HTMLElement} */ (root.querySelectorAll(".dg-groups button")[1]).click(); // expand all
  await drawn();
  assert.doesNotMatch(renderer.calls.at(-1).dot, /iterations/, "every iteration drawn");
  assert.deepEqual(buttons(), ["roll up: \u00D728 iterations, line 4|false"]);

  /** @type {HTMLElement} */ (root.querySelectorAll(".dg-groups button")[0]).click(); // roll up
  assert.equal(busy.hidden, false);
  await drawn();
  assert.match(renderer.calls.at(-1).dot, /\u00D728 iterations/);
  assert.deepEqual(buttons(), ["expand: \u00D728 iterations, line 4|false", "expand all: \u00D728 iterations, line 4|false"]);
  cleanup();
});

test("'values & grads' shows the busy sign while its drawing is laid out", async () => {
  const { root, drawn, busy, cleanup } = setup();
  await drawn();
  /** @type {HTMLElement} */ (root.querySelector(".dg-detail")).click();
  assert.equal(busy.hidden, false);
  await drawn();
  assert.equal(busy.hidden, true);
  cleanup();
});

test("opening a loop while the view replays ends the replay at the end (the learner took over)", async () => {
  const { root, view, drawn, cleanup } = setup();
  await drawn();
  assert.equal(view.playback.playing, true, "drawn after the steps came: it replays (view.js NOTE [replay])");
  assert.ok(view.playback.t < view.timeline.length);
  /** @type {HTMLElement} */ (root.querySelector(".dg-groups button")).click();
  assert.equal(view.playback.playing, false);
  assert.equal(view.playback.t, view.timeline.length, "what was opened is not hidden as still to come");
  await drawn();
  cleanup();
});
