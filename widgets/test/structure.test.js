// The structure laid out once (loop roll-up with dot.py's rule, scope collapse, budget) and the
// zoom arithmetic.

import { test } from "node:test";
import assert from "node:assert/strict";
import { repeatedIterations, buildStructure, svgStyle, loopLines } from "../src/structure.js";
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

test("past collapse_over, scopes collapse; past max_nodes, an honest note", () => {
  const tl = loopTimeline(2, ["layer"]);
  const s = buildStructure(tl, { collapseOver: 3 });
  assert.ok(s.boxes.some((b) => b.kind === "scope" && b.members.length === 6));
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
