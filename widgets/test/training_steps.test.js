// Training, watched (issue 40, item 4): a loop body of any length rolls up (dot.py NOTE [loops
// of any length]), with the loops inside its drawn first and last iterations.

import { test } from "node:test";
import assert from "node:assert/strict";
import { loopSpans, repeatedIterations, buildStructure, loopLine, isRunningStat, MAX_TRIES } from "../src/structure.js";
import { Timeline, APPLIED, olderPassesNote } from "../src/timeline.js";

/** `steps` training steps of `body` distinct ops each (one op a line), in a chain. */
function trainingTimeline(steps, body) {
  const nodes = new Map();
  const edges = new Map();
  let prev = null;
  let id = 1;
  for (let s = 0; s < steps; s++) {
    for (let k = 0; k < body; k++) {
      nodes.set(id, { id, kind: "op", op: k % 2 ? "Tanh" : "Mul", file: "model.py", line: 10 + k, scope: [],
        order: nodes.size, shape: [4], dtype: "float32", preview: [] });
      if (prev !== null && k > 0) edges.set(`${prev},${id},0`, { src: prev, dst: id, pos: 0 });
      prev = id++;
    }
  }
  return { nodes, edges, clusters: new Map(), steps: [] };
}

test("a loop body longer than the periods once tried (199 ops, a transformer's step) rolls up", () => {
  assert.ok(199 > MAX_TRIES);
  const tl = trainingTimeline(20, 199);
  const loops = repeatedIterations([...tl.nodes.values()], tl.edges.values());
  assert.equal(loops.length, 1, "one loop: the steps, not a box per step");
  assert.equal(loops[0].period, 199);
  assert.equal(loops[0].repeats, 20);
  assert.equal(loops[0].iterations.length, 18);
  const s = buildStructure(tl, { collapseOver: 10_000 });
  assert.equal(s.boxes.length, 2 * 199 + 1, "the first and last steps drawn, one box for the 18 between");
});

test("loop spans: an outer loop, then the loops inside its first and last iterations", () => {
  const step = [0, ...Array(50).fill([1, 2, 3]).flat(), 4]; // a step: an RNN unrolled 50 times
  const codes = Array(20).fill(step).flat();
  assert.deepEqual(loopSpans(codes), [
    { start: 0, repeats: 20, period: 152 },
    { start: 1, repeats: 50, period: 3 },
    { start: 19 * 152 + 1, repeats: 50, period: 3 },
  ]);
  // what the search of periods up to 64 found is found the same
  assert.deepEqual(loopSpans([9, ...Array(30).fill([5, 6]).flat(), 7]), [{ start: 1, repeats: 30, period: 2 }]);
  assert.deepEqual(loopSpans(Array(1000).fill(3)), [{ start: 0, repeats: 1000, period: 1 }]);
  // Thue-Morse has no three repeats back to back: no loop, and found fast
  const thueMorse = Array.from({ length: 4096 }, (_, i) => i.toString(2).split("1").length % 2);
  assert.deepEqual(loopSpans(thueMorse), []);
});

test("a reset delta replaces what the page holds (jupyter/kept.py NOTE [the newest passes]), and the note says so", () => {
  const node = (id) => ({ id, kind: "op", op: "Mul", file: "c.py", line: 3, scope: [], shape: [1], dtype: "float32", preview: [] });
  const tl = new Timeline();
  tl.offer({ seq: 1, nodes: [node(1), node(2), node(3)], steps: [["node", 1], ["node", 2], ["node", 3], ["backward_finished", 3]] });
  assert.equal(tl.nodes.size, 3);
  const dropped = { nodes: 0, steps: 0, passes: 7, pass_nodes: 1050, max_nodes: 2000 };
  assert.equal(tl.offer({ seq: 2, reset: true, nodes: [node(3), node(4)], steps: [["node", 3], ["node", 4]], dropped }), APPLIED);
  assert.deepEqual([...tl.nodes.keys()], [3, 4], "the nodes of the dropped passes are gone");
  assert.equal(tl.length, 2);
  assert.equal(tl.seq, 2);
  assert.deepEqual(tl.dropped, { nodes: 0, steps: 0, passes: 7, passNodes: 1050, maxNodes: 2000 });
  assert.equal(olderPassesNote(tl.dropped), "Showing the newest passes: the oldest 7 backward passes (forward and "
    + "backward, 1050 nodes) were dropped to stay within the view's budget of 2000 nodes; dg.watch(max_nodes=...) keeps more.");
  // a delta without reset adds to what is held, as before
  tl.offer({ seq: 3, nodes: [node(5)], steps: [["node", 5]] });
  assert.deepEqual([...tl.nodes.keys()], [3, 4, 5]);
});

test("a loop is named by the line of its for: of the backward() in its first iteration, else of its ops", () => {
  const tl = trainingTimeline(20, 199); // ops in model.py, lines 10..208, no loop of their own
  const root = 199; // the last op of the first step: its loss
  tl.steps = [["backward_started", root, { file: "cell.py", line: 5, cell: 3, loop: 2 }]];
  const [loop] = repeatedIterations([...tl.nodes.values()], tl.edges.values(), 4, tl.steps);
  assert.equal(loop.line, 2, "the for that called backward()");
  assert.match(buildStructure(tl, { collapseOver: 10_000 }).dot, /\u00D718 iterations, line 2\\n/);
  const ops = [{ id: 1, line: 10, loop: null }, { id: 2, line: 11, loop: 7 }];
  assert.equal(loopLine(ops, new Map()), 7, "else the loop of the first op that has one");
  assert.equal(loopLine([{ id: 1, line: 10, loop: null }], new Map()), 10, "else the first op's line, as before");
});

test("a BatchNorm's running statistics are left out unless asked, and counted (dot.py NOTE [running statistics])", () => {
  const vocabulary = { running_stats: ["running_mean", "running_var", "num_batches_tracked"] };
  const nodes = new Map();
  const add = (id, kind, name, scope) => nodes.set(id, { id, kind, op: kind === "op" ? "BatchNorm" : kind, name, file: "m.py",
    line: 3, scope, order: nodes.size, shape: [4], dtype: "float32", preview: [] });
  add(1, "leaf", "x", []);
  add(2, "constant", "running_mean", ["Net", "bn"]);
  add(3, "constant", "running_var", ["Net", "bn"]);
  add(4, "constant", "mask", ["Net", "attn"]); // another buffer: data a learner reads
  add(5, "op", null, ["Net", "bn"]);
  const edges = new Map([1, 2, 3, 4].map((src, pos) => [`${src},5,${pos}`, { src, dst: 5, pos }]));
  const tl = { nodes, edges, clusters: new Map([["Net", 0], ["Net\u0000bn", 1], ["Net\u0000attn", 2]]), steps: [] };
  assert.ok(isRunningStat(nodes.get(2), vocabulary) && !isRunningStat(nodes.get(4), vocabulary));
  const hidden = buildStructure(tl, { vocabulary });
  assert.deepEqual(hidden.boxes.map((b) => b.name).sort(), ["n1", "n4", "n5"]);
  assert.equal(hidden.statsHidden, 2);
  assert.ok(hidden.edges.every((e) => e.src !== "n2" && e.src !== "n3"));
  const drawn = buildStructure(tl, { vocabulary, runningStats: true });
  assert.equal(drawn.boxes.length, 5);
  assert.equal(drawn.statsHidden, 0);
});

test("a loop around the model rolls up beside the map (NOTE [a loop around the model])", () => {
  // 20 steps: 30 ops in the model's module "Net" (two children), then a loss op outside it
  const nodes = new Map();
  const edges = new Map();
  let id = 1;
  for (let step = 0; step < 20; step++) {
    for (let k = 0; k <= 30; k++) {
      const scope = k < 30 ? ["Net", k < 15 ? "a" : "b"] : [];
      nodes.set(id, { id, kind: "op", op: k < 30 ? "Mul" : "Loss", file: "m.py", line: 10 + k, scope, order: nodes.size,
        shape: [4], dtype: "float32", preview: [] });
      if (k > 0) edges.set(`${id - 1},${id},0`, { src: id - 1, dst: id, pos: 0 });
      id++;
    }
  }
  const tl = { nodes, edges, clusters: new Map([["Net", 0], ["Net\u0000a", 1], ["Net\u0000b", 2]]), steps: [] };
  const [loop] = repeatedIterations([...nodes.values()], edges.values());
  assert.ok(loop.around);
  const s = buildStructure(tl, { collapseOver: 20 });
  assert.ok(s.map);
  assert.deepEqual(s.boxes.filter((b) => b.kind === "loop").map((b) => b.lines[0]), ["\u00D718 iterations, line 10"]);
  assert.equal(s.boxes.filter((b) => b.kind === "scope").length, 2, "a and b, each holding the first and last steps");
  assert.equal(s.boxes.filter((b) => b.kind === "node").length, 2, "the loss of the first step and of the last");
  // under collapse_over, a training loop drawn unreadably small may still become its map (view.js
  // NOTE [readable]): the loop around the model stays rolled beside it
  const under = buildStructure(tl, {});
  assert.ok(!under.map && under.mappable, "mappable with a loop around the model");
  const asked = buildStructure(tl, { map: true });
  assert.deepEqual(asked.boxes.filter((b) => b.kind === "loop").map((b) => b.lines[0]), ["\u00D718 iterations, line 10"]);
  // opening the rolled step draws that step as a map of its own (NOTE [an opened step is a map
  // of its own]): its cluster, its model's boxes, its loss; the rest stays rolled
  const opened = buildStructure(tl, { map: true, opened: new Map([[loop.key, 1]]) });
  assert.deepEqual(opened.boxes.filter((b) => b.kind === "loop").map((b) => b.lines[0]), ["\u00D717 iterations, line 10"]);
  const second = new Set(loop.iterations[0]);
  const inStep = opened.boxes.filter((b) => b.members.some((m) => second.has(m)));
  assert.deepEqual(inStep.map((b) => [b.kind, b.scope.join("/")]).sort(),
    [["node", "iteration 2 of 20"], ["scope", "iteration 2 of 20/Net"], ["scope", "iteration 2 of 20/Net"]],
    "the step's a and b as boxes inside its Net, its loss beside them, all in the step's cluster");
  assert.ok(inStep.every((b) => b.members.every((m) => second.has(m))), "a box of the step holds only that step");
  assert.match(opened.dot, /subgraph cluster_il\d+_0 \{\n\s*graph \[label="iteration 2 of 20"/);
  assert.ok(!opened.groups.some((g) => g.key === "scope:iteration 2 of 20"), "rolled up with its loop, not on its own");
  assert.ok(opened.groups.some((g) => g.key === "scope:iteration 2 of 20 / Net / a" && !g.expanded), "its boxes open as any");
  assert.equal(opened.boxes.filter((b) => b.kind === "node").length, 3, "the losses of the first, second and last steps");
  // opened past collapse_over with no map asked: still the map, the step in it
  const sized = buildStructure(tl, { collapseOver: 20, opened: new Map([[loop.key, 1]]) });
  assert.ok(sized.map && sized.boxes.some((b) => b.scope[0] === "iteration 2 of 20"));
  // the whole loop expanded: every step its own map
  const all = buildStructure(tl, { map: true, expanded: new Set([loop.key]) });
  assert.equal(all.boxes.filter((b) => b.kind === "loop").length, 0);
  assert.equal(all.boxes.filter((b) => b.kind === "scope").length, 1 + 18 * 2, "Net (of the first and last steps, no longer the root's only module), and a and b of each step");
  assert.ok(!all.boxes.some((b) => b.lines[0].startsWith("\u00D7")), "the steps are not rolled as alike siblings either");
  // drawn flat (no map), an opened iteration is its nodes, as before
  const flat = buildStructure(tl, { collapseOver: 10_000, opened: new Map([[loop.key, 1]]) });
  assert.ok(!flat.map);
  assert.ok(loop.iterations[0].every((m) => flat.boxes.some((b) => b.kind === "node" && b.members[0] === m)));
  // a loop inside a module (an RNN cell's steps) is not mappable: the cell's box would swallow it
  for (const node of nodes.values()) if (node.op === "Loss") node.scope = ["Net", "b"];
  assert.ok(!buildStructure(tl, {}).mappable);
});
