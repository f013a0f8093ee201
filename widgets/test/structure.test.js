// The structure laid out once (loop roll-up with dot.py's rule, scope collapse, budget) and the
// zoom arithmetic.

import { test } from "node:test";
import assert from "node:assert/strict";
import { repeatedIterations, buildStructure, svgStyle, loopLines, FAN_OUT } from "../src/structure.js";
import { fitView, zoomAt, panToShow, viewBox } from "../src/zoom.js";

/** A chain: leaf 1, then `n` iterations of (Mul, Tanh) on line 4, then a Sum on line 5. */
function loopTimeline(n, scope = []) {
  const nodes = new Map();
  const edges = new Map();
  const add = (id, kind, op, line, inputs) => {
    nodes.set(id, { id, kind, op, file: "c.py", line, scope, order: nodes.size, shape: [6], dtype: "float32",
      preview: [1, 2, 3, 4], previewText: ["1", "2", "3", "4"] });
    for (const src of inputs) edges.set(`${src},${id},0`, { src, dst: id, pos: 0 });
  };
  add(1, "leaf", "leaf", 1, []);
  let prev = 1;
  let id = 2;
  for (let i = 0; i < n; i++) {
    add(id, "op", "Mul", 4, [prev]);
    add(id + 1, "op", "Tanh", 4, [id]);
    prev = id + 1;
    id += 2;
  }
  add(id, "op", "Sum", 5, [prev]);
  return { nodes, edges, clusters: new Map(scope.length ? [[scope[0], 0]] : []), steps: [] };
}

test("repeated iterations: the ones between the first and the last, as dot.py finds them", () => {
  const tl = loopTimeline(30);
  const loops = repeatedIterations([...tl.nodes.values()], tl.edges.values());
  assert.equal(loops.length, 1);
  assert.equal(loops[0].repeats, 30);
  assert.equal(loops[0].period, 2);
  assert.equal(loops[0].members.length, 56);
  assert.equal(loops[0].members[0], 4); // iteration 2 starts at id 4
  assert.deepEqual(loopLines(loops[0]), ["\u00D728 iterations, line 4", "56 nodes \u00B7 click to expand"]);
  assert.equal(repeatedIterations([...loopTimeline(2).nodes.values()], loopTimeline(2).edges.values()).length, 0);
});

test("the structure rolls the loop up into one box, wired in between; opened, every node", () => {
  const tl = loopTimeline(30);
  const s = buildStructure(tl, { vocabulary: { loop: 'shape="box3d"' } });
  assert.equal(s.boxes.length, 1 + 2 + 1 + 2 + 1); // leaf, first iteration, loop, last, Sum
  assert.match(s.dot, /l4 \[label="\u00D728 iterations, line 4\\n56 nodes \u00B7 click to expand", shape="box3d"\];/);
  assert.ok(s.edges.some((e) => e.name === "n3->l4"));
  assert.ok(s.edges.some((e) => e.name === "l4->n60"));
  assert.doesNotMatch(s.dot, /\[1, 2/, "compact labels: no values of a 6-element tensor");
  const one = loopTimeline(30);
  Object.assign(one.nodes.get(62), { shape: [], preview: [2.5], previewText: ["2.5"] });
  assert.match(buildStructure(one, {}).dot, /n62 \[label="Sum\\n\(\)\\n\[2\.5\]"/, "a one-element tensor keeps its value");
  const open = buildStructure(tl, { expanded: new Set(["l4"]), detail: true });
  assert.equal(open.boxes.length, tl.nodes.size);
  assert.match(open.dot, /\[1, 2, 3, 4, \.\.\.\]/);
});

test("past collapse_over, a map of the modules; past max_nodes, an honest note", () => {
  const tl = loopTimeline(2, ["layer"]);
  // one scope: the map opens it (levels.js NOTE [map]), and it holds no other: every node
  const one = buildStructure(tl, { collapseOver: 3 });
  assert.ok(one.map && one.boxes.every((b) => b.kind === "node"));
  for (const k of [0, 1]) {
    for (const id of [2 + 2 * k, 3 + 2 * k]) tl.nodes.get(id).scope = ["layer", `${k} \u00B7 Block`];
    tl.clusters.set(`layer\u0000${k} \u00B7 Block`, 1 + k);
  }
  const s = buildStructure(tl, { collapseOver: 3 });
  assert.deepEqual(s.boxes.filter((b) => b.kind === "scope").map((b) => [b.name, b.members, b.scope, b.lines]), [
    ["s1", [2, 3], ["layer"], ["0 \u00B7 Block \u00B7 2 nodes \u00B7 click to open"]],
    ["s2", [4, 5], ["layer"], ["1 \u00B7 Block \u00B7 2 nodes \u00B7 click to open"]],
  ]);
  assert.deepEqual(s.edges.map((e) => [e.name, e.label]), [["n1->s1", undefined], ["s1->s2", "(6,)"], ["s2->n6", "(6,)"]],
    "an edge leaving a module's box carries the shape flowing out (NOTE [shapes on edges])");
  assert.equal(buildStructure(tl, { collapseOver: 30 }).map, false, "within collapse_over: every node");
  const b = buildStructure(loopTimeline(2), { maxNodes: 3 });
  assert.equal(b.boxes.length, 3);
  assert.equal(b.hidden, 4);
  assert.equal(b.boxes[0].name, "hidden");
});

test("svgStyle reads a vocabulary body", () => {
  assert.deepEqual(svgStyle('style="dashed,filled", color="#999999", fontcolor="#666666", fillcolor="#EEEEEE", penwidth="2"'),
    { stroke: "#999999", fill: "#EEEEEE", width: 2, text: "#666666", dashed: true });
});

test("zoom: fit centres and caps; zoomAt keeps the point; panToShow moves least", () => {
  const fit = fitView({ width: 1000, height: 500 }, { width: 500, height: 500 });
  assert.equal(fit.scale, 0.5);
  assert.equal(fit.y, -250);
  assert.equal(fitView({ width: 10, height: 10 }, { width: 500, height: 500 }).scale, 1.35);
  const z = zoomAt({ scale: 1, x: 0, y: 0 }, 2, 100, 50);
  assert.deepEqual(z, { scale: 2, x: 50, y: 25 });
  assert.equal(viewBox(z, { width: 200, height: 100 }), "50 25 100 50");
  const view = { scale: 1, x: 0, y: 0 };
  assert.equal(panToShow(view, { width: 100, height: 100 }, { x: 10, y: 10, width: 10, height: 10 }, 5), view);
  assert.deepEqual(panToShow(view, { width: 100, height: 100 }, { x: 200, y: 10, width: 10, height: 10 }, 5), { scale: 1, x: 115, y: 0 });
});

/** loopTimeline(30) with a parameter w (id 100) read by every Mul: the weights of a loop. */
function sharedWeightTimeline() {
  const tl = loopTimeline(30);
  tl.nodes.set(100, { id: 100, kind: "parameter", op: "parameter", name: "w", file: "c.py", line: 0, scope: [], order: -1, shape: [6], dtype: "float32" });
  for (const node of tl.nodes.values()) {
    if (node.op === "Mul") tl.edges.set(`100,${node.id},1`, { src: 100, dst: node.id, pos: 1 });
  }
  return tl;
}

test("a rolled loop knows its iterations: the first drawn before the box, the rest in it", () => {
  const tl = loopTimeline(30);
  const [loop] = repeatedIterations([...tl.nodes.values()], tl.edges.values());
  assert.deepEqual(loop.first, [2, 3], "the ops of the first iteration, drawn before the box");
  assert.equal(loop.iterations.length, 28);
  assert.deepEqual(loop.iterations[0], [4, 5]);
  assert.deepEqual(loop.iterations.flat().sort((a, b) => a - b), loop.members, "they partition the box");
  // a leaf only one iteration reads goes with that iteration
  const withLeaves = loopTimeline(30);
  for (let k = 0; k < 30; k++) {
    const mul = 2 + 2 * k;
    withLeaves.nodes.set(200 + k, { id: 200 + k, kind: "leaf", op: "leaf", file: "c.py", line: 4, scope: [], order: 1000 + k, shape: [6] });
    withLeaves.edges.set(`${200 + k},${mul},1`, { src: 200 + k, dst: mul, pos: 1 });
  }
  const [again] = repeatedIterations([...withLeaves.nodes.values()], withLeaves.edges.values());
  assert.deepEqual(again.iterations[0], [4, 5, 201]);
  assert.deepEqual(again.iterations[27], [58, 59, 228]);
});

test("a loop opens a few iterations at a time: the box keeps the rest; all opened, no box", () => {
  const tl = loopTimeline(30);
  const rolled = buildStructure(tl, {});
  const three = buildStructure(tl, { opened: new Map([["l4", 3]]) });
  assert.equal(three.boxes.length, rolled.boxes.length + 6, "three iterations of two ops drawn");
  const box = three.boxes.find((b) => b.kind === "loop");
  assert.equal(box.name, "l4", "the box keeps its name (and key) while it opens");
  assert.deepEqual(box.lines, ["\u00D725 iterations, line 4", "50 nodes \u00B7 click to open more"]);
  assert.deepEqual(box.members, rolled.boxes.find((b) => b.kind === "loop").members.slice(6));
  for (const id of [4, 5, 6, 7, 8, 9]) assert.ok(three.boxes.some((b) => b.name === `n${id}`), `n${id} drawn`);
  assert.ok(three.edges.some((e) => e.name === "n9->l4") && three.edges.some((e) => e.name === "l4->n60"));
  assert.deepEqual(three.groups, [{ key: "l4", title: "\u00D728 iterations, line 4", expanded: false, loop: true, opened: 3, iterations: 28 }]);
  const all = buildStructure(tl, { opened: new Map([["l4", 28]]) });
  assert.equal(all.boxes.length, tl.nodes.size);
  assert.equal(all.groups[0].expanded, true);
  assert.equal(all.dot, buildStructure(tl, { expanded: new Set(["l4"]) }).dot);
});

test("an input read by FAN_OUT boxes does not pull them (weight 0); LR when asked", () => {
  const vocabulary = { shared_edge: 'weight="0"', fan_out: FAN_OUT };
  const rolled = buildStructure(sharedWeightTimeline(), { vocabulary });
  // w is read by the first iteration, the box and the last iteration: three boxes
  assert.deepEqual(rolled.dot.split("\n").filter((l) => l.includes("n100 ->")),
    ["  n100 -> n2 [weight=\"0\"];", "  n100 -> l4 [weight=\"0\"];", "  n100 -> n60 [weight=\"0\"];"]);
  assert.match(rolled.dot, /n1 -> n2 \[\];/, "other edges keep their weight");
  const few = loopTimeline(2);
  assert.doesNotMatch(buildStructure(few, { vocabulary }).dot, /weight/);
  assert.doesNotMatch(rolled.dot, /rankdir="LR"/);
  const turned = buildStructure(sharedWeightTimeline(), { vocabulary, rankdir: "LR", lines: ['  graph [rankdir="TB"];'] });
  const lines = turned.dot.split("\n");
  assert.equal(lines[2], '  graph [rankdir="LR"];', "after the header's own direction, which it overrides");
});
