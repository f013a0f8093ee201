// The map of a model (levels.js NOTE [map]): levels, repeated siblings, recursion; and what
// buildStructure draws of it (loops inside boxes, shapes on edges, shared weights).

import { test } from "node:test";
import assert from "node:assert/strict";
import { displayPath, moduleMap, scopeTree, clusterTitles, outputOf, scopeClass, MIN_ALIKE } from "../src/levels.js";
import { buildStructure, FAN_OUT } from "../src/structure.js";

const DOT = "\u00B7";

/**
 * A timeline from a list of [scope, kind, op, line, inputs] (ids from 1, in order): what the
 * view folds from Python's events, as much as the structure reads.
 * @param {Array<[string[], string, string, number, number[]]>} spec
 */
function timeline(spec) {
  const nodes = new Map();
  const edges = new Map();
  const clusters = new Map();
  spec.forEach(([scope, kind, op, line, inputs], i) => {
    const id = i + 1;
    nodes.set(id, { id, kind, op, file: "m.py", line, scope, order: i, shape: [2, 3], dtype: "float32", preview: [], previewText: [] });
    for (const src of inputs) edges.set(`${src},${id},0`, { src, dst: id, pos: 0 });
    for (let d = 1; d <= scope.length; d++) {
      const key = scope.slice(0, d).join("\u0000");
      if (!clusters.has(key)) clusters.set(key, clusters.size);
    }
  });
  return { nodes, edges, clusters, steps: [] };
}

/** `n` blocks of (param, op on line 10, op on line 11) in `parent`, chained from node `from`. */
function blocks(parent, n, from, name = (k) => `h.${k} ${DOT} Block`) {
  /** @type {Array<[string[], string, string, number, number[]]>} */
  const spec = [];
  let prev = from;
  let id = from;
  for (let k = 0; k < n; k++) {
    const scope = [...parent, name(k)];
    spec.push([scope, "parameter", "parameter", 0, []], [scope, "op", "Linear", 10, [prev, id + 1]], [scope, "op", "Tanh", 11, [id + 2]]);
    id += 3;
    prev = id;
  }
  return spec;
}

const nodesOf = (/** @type {ReturnType<typeof timeline>} */ tl) => [...tl.nodes.values()];
const edgesOf = (/** @type {ReturnType<typeof timeline>} */ tl) => [...tl.edges.values()];

test("a recursion's calls are flattened into one name each, by their path of calls", () => {
  assert.deepEqual(displayPath(["T", `call 1 ${DOT} T`, `call 2 ${DOT} T`, "embed"]), ["T", "T call 1.2", "embed"]);
  assert.deepEqual(displayPath(["ResNet", "layer1", `0 ${DOT} BasicBlock`]), ["ResNet", "layer1", `0 ${DOT} BasicBlock`]);
  // a chain ends at a scope that is not a call; the next chain starts afresh
  assert.deepEqual(displayPath(["P", `call 2 ${DOT} P`, "sub", `call 1 ${DOT} Q`]), ["P", "P call 2", "sub", "Q call 1"]);
  assert.equal(scopeClass(`h.3 ${DOT} Block`), "Block");
  assert.equal(scopeClass("layer1"), null);
});

test("the map starts inside the one scope of a model: its children are boxes saying what they hold", () => {
  const stem = ["ResNet", "conv1"];
  const tl = timeline([
    [[], "leaf", "leaf", 1, []],
    [stem, "parameter", "parameter", 0, []], [stem, "op", "Conv", 5, [1, 2]],
    ...blocks(["ResNet", "layer1"], 2, 3, (k) => `${k} ${DOT} BasicBlock`),
    [["ResNet", "fc"], "op", "Addmm", 9, [9]],
    [[], "op", "Sum", 2, [10]],
  ]);
  const { boxes, opened } = moduleMap(nodesOf(tl), edgesOf(tl), new Set());
  assert.deepEqual(boxes.map((b) => [b.key, b.scope, b.lines, b.members]), [
    ["scope:ResNet / conv1", ["ResNet"], [`conv1 ${DOT} 2 nodes`], [2, 3]],
    ["scope:ResNet / layer1", ["ResNet"], [`layer1 ${DOT} 2 BasicBlocks ${DOT} 6 nodes`], [4, 5, 6, 7, 8, 9]],
    ["scope:ResNet / fc", ["ResNet"], [`fc ${DOT} 1 node`], [10]],
  ]);
  assert.deepEqual(opened, []);
  // the output of a box: its node read outside it
  assert.equal(boxes[1].output, 9);
  // opened in place: its children are boxes in its cluster, the rest stays as it was
  const open = moduleMap(nodesOf(tl), edgesOf(tl), new Set(["scope:ResNet / layer1"]));
  assert.deepEqual(open.boxes.map((b) => [b.key, b.scope]), [
    ["scope:ResNet / conv1", ["ResNet"]],
    [`scope:ResNet / layer1 / 0 ${DOT} BasicBlock`, ["ResNet", "layer1"]],
    [`scope:ResNet / layer1 / 1 ${DOT} BasicBlock`, ["ResNet", "layer1"]],
    ["scope:ResNet / fc", ["ResNet"]],
  ]);
  assert.deepEqual(open.opened, [{ key: "scope:ResNet / layer1", title: "layer1" }]);
});

test(`${MIN_ALIKE} alike siblings or more are one stacked box; fewer, or unlike ones, stay boxes`, () => {
  assert.equal(MIN_ALIKE, 5);
  const gpt = (/** @type {number} */ n) => timeline([[[], "leaf", "leaf", 1, []], ...blocks(["GPT"], n, 1), [["GPT", "ln_f"], "op", "Norm", 20, [3 * n + 1]]]);
  const six = gpt(6);
  const rolled = moduleMap(nodesOf(six), edgesOf(six), new Set()).boxes;
  assert.deepEqual(rolled.map((b) => [b.key, b.roll, b.lines]), [
    [`roll:GPT / h.0 ${DOT} Block`, 6, [`\u00D76 Block ${DOT} h.0 \u2013 h.5 ${DOT} 18 nodes`]],
    ["scope:GPT / ln_f", 0, [`ln_f ${DOT} 1 node`]],
  ]);
  const four = gpt(4);
  assert.equal(moduleMap(nodesOf(four), edgesOf(four), new Set()).boxes.filter((b) => b.roll).length, 0, "four Blocks: four boxes");
  // the roll opened: its Blocks, each a box (one of them opened too)
  const open = moduleMap(nodesOf(six), edgesOf(six), new Set([`roll:GPT / h.0 ${DOT} Block`, `scope:GPT / h.2 ${DOT} Block`]));
  assert.deepEqual(open.boxes.filter((b) => b.key.startsWith("scope:GPT / h")).map((b) => b.title), [0, 1, 3, 4, 5].map((k) => `h.${k} ${DOT} Block`));
  assert.deepEqual(open.opened.map((g) => g.title), ["\u00D76 Block", `h.2 ${DOT} Block`]);
  // a Block whose ops are on other lines (it downsamples) is not alike: the run is broken
  const odd = gpt(6);
  odd.nodes.get(3).line = 99;
  assert.equal(moduleMap(nodesOf(odd), edgesOf(odd), new Set()).boxes.filter((b) => b.roll === 5).length, 1, "the other five roll");
  // an op of the parent between two Blocks breaks the run too
  const between = gpt(6);
  const seventh = { ...between.nodes.get(4), id: 100, scope: ["GPT"], kind: "op", order: 6.5 };
  between.nodes.set(100, seventh);
  assert.equal(moduleMap([...between.nodes.values()].sort((a, b) => a.order - b.order), edgesOf(between), new Set()).boxes.some((b) => b.roll), false);
});

test("a recursion is drawn as its tree of calls: a box per call, with its depth, never rolled", () => {
  const T = "TreeNet";
  const call = (/** @type {number[]} */ path) => [T, ...path.map((k) => `call ${k} ${DOT} ${T}`)];
  /** @type {Array<[string[], string, string, number, number[]]>} */
  const spec = [[[T, "embed"], "parameter", "parameter", 0, []]];
  // six leaves (an embedding each) under calls 1.k and 2.k, combined by calls 1 and 2, then the root
  for (const top of [1, 2]) {
    const first = spec.length + 1;
    for (const k of [1, 2, 3]) spec.push([[...call([top, k]), "embed"], "op", "Embedding", 30, [1]]);
    spec.push([call([top]), "op", "Cat", 31, [first, first + 1, first + 2]]);
  }
  spec.push([[T], "op", "Cat", 31, [5, 9]]);
  const tl = timeline(spec);
  const tree = scopeTree(nodesOf(tl));
  assert.deepEqual(clusterTitles(tree), new Map([[T, `${T} ${DOT} recursion: 8 calls, 2 deep`]]));
  const { boxes } = moduleMap(nodesOf(tl), edgesOf(tl), new Set());
  assert.deepEqual(boxes.map((b) => [b.title, b.scope, b.lines, b.call]), [
    ["embed", [T], [`embed ${DOT} 1 node`], false], // the weight every call reads: its module's
    ...[1, 2, 3].map((k) => [`call 1.${k}`, [T], [`call 1.${k}`, `depth 2 ${DOT} 1 node`], true]),
    ["call 1", [T], ["call 1", `depth 1 ${DOT} 1 node`], true],
    ...[1, 2, 3].map((k) => [`call 2.${k}`, [T], [`call 2.${k}`, `depth 2 ${DOT} 1 node`], true]),
    ["call 2", [T], ["call 2", `depth 1 ${DOT} 1 node`], true],
  ]);
  assert.ok(!boxes.some((b) => b.roll), "six alike leaf calls: a tree, not a roll");
  // buildStructure: the calls' boxes wired as the tree, no edges from the shared weight
  const s = buildStructure(tl, { map: true });
  const name = (/** @type {string} */ title) => /** @type {any} */ (s.boxes.find((b) => b.title === title)).name;
  assert.equal(name("call 1.2"), s.boxes.find((b) => b.lines[0] === "call 1.2")?.name);
  assert.ok(s.edges.some((e) => e.src === name("call 1.2") && e.dst === name("call 1")));
  assert.ok(s.edges.some((e) => e.src === name("call 1") && e.dst === "n10"));
  const embed = /** @type {any} */ (s.boxes.find((b) => b.key === `scope:${T} / embed`));
  assert.ok(!s.edges.some((e) => e.src === embed.name), "the shared weight's edges are left out of the map");
  assert.deepEqual(embed.lines, [`embed ${DOT} 1 node ${DOT} read by 6 boxes ${DOT} click to open`], "and it says so");
  assert.match(s.dot, new RegExp(`label="${T} ${DOT} recursion: 8 calls, 2 deep"`));
  // in the full drawing the calls are clusters side by side in the first call's
  const full = buildStructure(tl, {});
  assert.deepEqual(full.boxes.find((b) => b.name === "n2")?.scope, [T, `${T} call 1.1`, "embed"]);
  assert.ok(full.edges.some((e) => e.src === "n1"), "every edge, outside a map");
  assert.ok(FAN_OUT <= 6);
});

test("the output of a box: the newest member read outside it, else its newest op", () => {
  const members = [
    { id: 1, kind: "parameter", order: 0 }, { id: 2, kind: "op", order: 1 }, { id: 3, kind: "op", order: 2 },
  ];
  assert.equal(outputOf(/** @type {any} */ (members), new Map([[2, [9]], [3, [2]]])), 2);
  assert.equal(outputOf(/** @type {any} */ (members), new Map()), 3);
});

test("a map keeps a loop only where it is drawn open; a loop over several modules is their siblings", () => {
  // an RNN cell called 8 times: one scope, its nodes a loop; with a head module beside it
  const cell = ["Model", "cell"];
  /** @type {Array<[string[], string, string, number, number[]]>} */
  const spec = [[[], "leaf", "leaf", 1, []]];
  for (let t = 0; t < 8; t++) spec.push([cell, "op", "Mul", 4, [spec.length]], [cell, "op", "Tanh", 5, [spec.length + 1]]);
  spec.push([["Model", "head"], "op", "Sum", 6, [spec.length]]);
  const tl = timeline(spec);
  const free = buildStructure(tl, {});
  assert.equal(free.loops.length, 1);
  assert.equal(free.mappable, false, "unreadable, it is not mapped by the view: the cell's box would swallow the loop");
  assert.ok(free.boxes.some((b) => b.kind === "loop"));
  const mapped = buildStructure(tl, { map: true });
  assert.deepEqual(mapped.boxes.filter((b) => b.kind !== "node").map((b) => [b.kind, b.lines]),
    [["scope", [`cell ${DOT} 16 nodes ${DOT} click to open`]], ["scope", [`head ${DOT} 1 node ${DOT} click to open`]]]);
  assert.ok(!mapped.groups.some((g) => g.loop), "the loop is inside the closed box");
  const inside = buildStructure(tl, { map: true, expanded: new Set(["scope:Model / cell"]) });
  assert.ok(inside.boxes.some((b) => b.kind === "loop"), "opened, the box shows its loop rolled up");
  // the same lines in four different Blocks are four Blocks, not a loop of four iterations
  const gpt = timeline([[[], "leaf", "leaf", 1, []], ...blocks(["GPT"], 4, 1)]);
  assert.equal(buildStructure(gpt, {}).loops.length, 0);
});
