// The widget as a guest in the notebook (issue 29): the wheel, the keys, numbers on small
// graphs, loops that ran once, module instances rolled up to stay readable.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { hidePicture } from "../src/view.js";
import { NUMBERS_UP_TO } from "../src/view/state.js";
import { tallestPane } from "../src/view/drawing.js";
import { zoomModifier } from "../src/view/dom.js";
import { repeatedIterations, buildStructure, MIN_REPEATS } from "../src/structure.js";
import { dom, mountView, sample } from "./helpers.js";

function setup(overrides = {}) {
  const { window, document, root, renderer, cleanup, view } = mountView(overrides);
  return { window, document, root, renderer, cleanup, view };
}

/** A keydown on `target` and whether it went past the widget (to JupyterLab on the document). */
function press(window, document, target, init) {
  let reached = false;
  const listener = () => { reached = true; };
  document.addEventListener("keydown", listener);
  const e = new window.KeyboardEvent("keydown", { bubbles: true, cancelable: true, ...init });
  target.dispatchEvent(e);
  document.removeEventListener("keydown", listener);
  return { reached, prevented: e.defaultPrevented };
}

test("a plain wheel is left to the page (the notebook scrolls) and shows the zoom hint", async () => {
  const { window, root, view, cleanup } = setup();
  await view.scheduler.idle();
  const graph = root.querySelector(".dg-graph");
  const hint = root.querySelector(".dg-hint");
  assert.equal(hint.hidden, true);
  const plain = new window.WheelEvent("wheel", { deltaY: 100, bubbles: true, cancelable: true });
  graph.dispatchEvent(plain);
  assert.equal(plain.defaultPrevented, false, "the notebook must scroll");
  assert.equal(hint.hidden, false);
  assert.match(hint.textContent, /^(Ctrl|\u2318) \+ wheel to zoom/);
  const zoom = view.drawing.zoom.scale;
  const ctrl = new window.WheelEvent("wheel", { deltaY: -100, ctrlKey: true, bubbles: true, cancelable: true });
  graph.dispatchEvent(ctrl);
  assert.equal(ctrl.defaultPrevented, true, "Ctrl + wheel (and a pinch) zooms the graph");
  assert.ok(view.drawing.zoom.scale > zoom);
  cleanup();
});

test("the widget stops only its own keys; Ctrl+S, Shift+Enter, Esc reach JupyterLab", async () => {
  const { window, document, root, view, cleanup } = setup();
  await view.scheduler.idle();
  assert.equal(root.hasAttribute("data-lm-suppress-shortcuts"), false);
  for (const key of ["ArrowLeft", "ArrowRight", " ", "Home", "End", "+", "-", "0"]) {
    const r = press(window, document, root, { key });
    assert.deepEqual(r, { reached: false, prevented: true }, key);
  }
  for (const init of [{ key: "s", ctrlKey: true }, { key: "s", metaKey: true }, { key: "Enter", shiftKey: true },
    { key: "Escape" }, { key: "a" }, { key: "ArrowDown" }]) {
    const r = press(window, document, root, init);
    assert.deepEqual(r, { reached: true, prevented: false }, JSON.stringify(init));
  }
  assert.ok(root.querySelector(".dg-keys"), "a badge says the widget holds the keys (CSS :focus-within)");
  cleanup();
});

test("a graph of a dozen nodes shows values and gradients; the learner's choice wins", async () => {
  const { root, view, renderer, cleanup } = setup();
  await view.scheduler.idle();
  assert.ok(view.timeline.nodes.size <= NUMBERS_UP_TO);
  const detail = root.querySelector(".dg-detail");
  assert.equal(detail.getAttribute("aria-pressed"), "true");
  assert.match(renderer.calls.at(-1).dot, /grad/, "gradient lines in the labels");
  detail.click();
  await view.scheduler.idle();
  assert.equal(detail.getAttribute("aria-pressed"), "false");
  assert.doesNotMatch(renderer.calls.at(-1).dot, /\\ngrad/);
  cleanup();
});

test("the pane is at most 60 % of the window high", () => {
  const { document, window } = dom();
  Object.defineProperty(window, "innerHeight", { value: 1000 });
  assert.equal(tallestPane(document), 600);
  assert.equal(zoomModifier(document), "Ctrl"); // jsdom's platform is not a Mac
});

/** leaf 1, then `n` iterations of (Mul, Tanh) on line 4, then a Sum on line 5 */
function loopNodes(n) {
  const nodes = [{ id: 1, kind: "leaf", op: "leaf", file: "c.py", line: 1, scope: [], order: 0 }];
  const edges = [];
  let prev = 1;
  for (let i = 0; i < n; i++) {
    const a = nodes.length + 1;
    nodes.push({ id: a, kind: "op", op: "Mul", file: "c.py", line: 4, scope: [], order: a - 1 });
    nodes.push({ id: a + 1, kind: "op", op: "Tanh", file: "c.py", line: 4, scope: [], order: a });
    edges.push({ src: prev, dst: a }, { src: a, dst: a + 1 });
    prev = a + 1;
  }
  return { nodes, edges };
}

test("a loop rolls up only when two iterations or more go into its box (no \u00D71 box)", () => {
  assert.equal(MIN_REPEATS, 4);
  const three = loopNodes(3);
  assert.deepEqual(repeatedIterations(three.nodes, three.edges), [], "three graphs are drawn as three");
  const four = loopNodes(4);
  const [loop] = repeatedIterations(four.nodes, four.edges);
  assert.equal(loop.repeats - 2, 2);
});

test("a map draws module instances as boxes in their parent's cluster, each opens alone", () => {
  const node = (id, scope, kind = "op") => ({ id, kind, op: kind === "op" ? "MatMul" : kind, scope, order: id, shape: [2], preview: [], previewText: [] });
  const nodes = [
    node(1, [], "leaf"),
    node(2, ["Sequential", "0 \u00B7 Linear"], "parameter"), node(3, ["Sequential", "0 \u00B7 Linear"]),
    node(4, ["Sequential", "1 \u00B7 Tanh"]),
    node(5, ["Sequential", "2 \u00B7 Linear"], "parameter"), node(6, ["Sequential", "2 \u00B7 Linear"]),
  ];
  const timeline = {
    nodes: new Map(nodes.map((n) => [n.id, n])),
    edges: new Map([[1, { src: 1, dst: 3 }], [2, { src: 2, dst: 3 }], [3, { src: 3, dst: 4 }], [4, { src: 4, dst: 6 }], [5, { src: 5, dst: 6 }]]),
    clusters: new Map([["Sequential", 0], ["Sequential\u00000 \u00B7 Linear", 1], ["Sequential\u00001 \u00B7 Tanh", 2], ["Sequential\u00002 \u00B7 Linear", 3]]),
    steps: [],
  };
  const open = buildStructure(timeline, {});
  assert.ok(open.mappable && !open.map);
  assert.equal(open.boxes.length, 6);
  const rolled = buildStructure(timeline, { map: true });
  // the model is one scope: the map starts inside it; a one-node module is a box too
  assert.deepEqual(rolled.boxes.filter((b) => b.kind === "scope").map((b) => [b.name, b.key, b.scope, b.members]), [
    ["s1", "scope:Sequential / 0 \u00B7 Linear", ["Sequential"], [2, 3]],
    ["s2", "scope:Sequential / 1 \u00B7 Tanh", ["Sequential"], [4]],
    ["s3", "scope:Sequential / 2 \u00B7 Linear", ["Sequential"], [5, 6]],
  ]);
  assert.ok(rolled.edges.some((e) => e.name === "s1->s2") && rolled.edges.some((e) => e.name === "s2->s3"));
  assert.match(rolled.dot, /subgraph cluster_0 \{[^}]*s1 \[label="0 \u00B7 Linear \u00B7 2 nodes \u00B7 click to open"/);
  const one = buildStructure(timeline, { map: true, expanded: new Set(["scope:Sequential / 0 \u00B7 Linear"]) });
  assert.deepEqual(one.boxes.filter((b) => b.kind === "scope").map((b) => b.name), ["s2", "s3"]);
  assert.deepEqual(one.groups.filter((g) => g.expanded).map((g) => g.title), ["0 \u00B7 Linear"]);
});

test("over the box budget the notes say how many of how many nodes are drawn, and how to see more", async () => {
  const s = sample();
  const { root, view, cleanup } = setup({ options: { ...s.options, max_nodes: 4 } });
  await view.scheduler.idle();
  const total = view.timeline.nodes.size;
  const note = root.querySelector(".dg-hidden-note").textContent;
  assert.match(note, new RegExp(`^Showing the newest 3 of ${total} nodes: the oldest ${total - 3} are in one "hidden" box`));
  assert.match(note, /dg\.watch\(max_visible=\.\.\.\) draws more/);
  cleanup();
});

test("a live view hides its picture output while it lives, and only that one", () => {
  const id = "0123456789abcdef0123456789abcdef";
  const { document, cleanup } = setup({ picture_id: id });
  document.body.insertAdjacentHTML("beforeend",
    `<div class="jp-OutputArea-child" id="mine"><div data-dyngraph-picture="${id}">picture</div></div>` +
    `<div class="jp-OutputArea-child" id="other"><div data-dyngraph-picture="fedcba">picture</div></div>`);
  const rules = () => [...document.querySelectorAll("head style")].map((s) => s.textContent).join("\n");
  assert.ok(rules().includes(`[data-dyngraph-picture="${id}"]`));
  assert.ok(rules().includes(`.jp-OutputArea-child:has([data-dyngraph-picture="${id}"])`));
  assert.ok(!rules().includes("fedcba"), "another view's picture stays");
  // a second view of the same model (the output shown twice) shares the rule
  const undoA = hidePicture(document, id);
  cleanup();
  assert.ok(rules().includes(id), "one view of it is still live");
  undoA();
  assert.equal(rules(), "", "no view left: the picture shows again");
});

test("a picture id that is not plain hex goes nowhere near the page's CSS", () => {
  const { document } = dom();
  for (const id of ['x"] * { display: none } [a="', "", 42, null, "ABC", "a".repeat(65)]) {
    hidePicture(document, id)();
    assert.equal(document.querySelectorAll("style").length, 0, String(id));
    hidePicture(document, id);
    assert.equal(document.querySelectorAll("style").length, 0, String(id));
  }
});

test("the legend speaks dot.py's words: names and help texts come with the vocabulary", () => {
  const fixture = JSON.parse(readFileSync(new URL("./fixtures/vocabulary.json", import.meta.url), "utf8"));
  const vocabulary = fixture.vocabulary;
  const s = sample();
  const { root, cleanup } = setup({ header: { ...s.header, vocabulary } });
  const items = [...root.querySelectorAll(".dg-legend-item")];
  const shown = items.map((i) => [i.textContent, i.getAttribute("title")]);
  const python = new Map(vocabulary.legend.map(([key, name, help]) => [key, [name, help]]));
  assert.deepEqual(shown[0], python.get("leaf"));
  assert.deepEqual(shown.find(([name]) => name === python.get("summed")[0]), python.get("summed"));
  assert.deepEqual(shown.find(([name]) => name === python.get("group")[0]),
    [python.get("group")[0], `${python.get("group")[1]}: click to open`]);
  assert.ok(!shown.some(([name]) => name === python.get("only in A")[0]), "a static picture's entry");
  assert.equal(shown.at(-1)[0], "newest gradient", "the widget's own entry");
  cleanup();
});

test("the source panel says why it has no source, for nodes made before watching began", async () => {
  const s = sample();
  for (const node of s.snapshot.nodes) Object.assign(node, { file: null, line: null, cell: null });
  const { root, view, cleanup } = setup({ snapshot: s.snapshot });
  await view.scheduler.idle();
  const panel = root.querySelector(".dg-code-scroll");
  assert.match(panel.textContent, /^No source line for this node \(made before watching began/);
  assert.equal(root.querySelector(".dg-code-panel .dg-panel-title").textContent, "source");
  cleanup();
});

test("an empty view's source panel says there is no source yet", async () => {
  const s = sample();
  const { root, view, cleanup } = setup({ snapshot: { ...s.snapshot, nodes: [], edges: [], steps: [] } });
  await view.scheduler.idle();
  assert.equal(root.querySelector(".dg-code-scroll").textContent, "No source yet.");
  cleanup();
});
