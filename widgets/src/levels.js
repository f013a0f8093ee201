// The map of a model: its module hierarchy one level at a time. Pure logic, no DOM; used by
// ./structure.js. dyngraph/dot.py `_module_map` is its port for the static pictures, and
// tests/test_static_pictures.py holds the two to one drawing.
//
// NOTE [map] A drawing too large to read (past `collapse_over` boxes, or with labels under
// READABLE_PX when fitted: view/drawing.js rollUpToRead) is drawn as a map of the modules:
// - Levels. The root is open, and an open scope shows each of its child scopes as one box and
//   its own nodes as nodes. The only child scope of an open scope opens too: a model is one
//   scope, so the map starts inside it, at its children (ResNet's stem, four stages, pooling
//   and classifier). Every child scope is a box, even of one node (a ReLU): a map reads as
//   one kind of box a module, and a box is shorter than a node's label in a cluster, which
//   is what lets ResNet-18's top level (fifteen boxes in a chain) fit a pane at readable
//   size. The learner opens a box in place (`expanded`): its children become boxes inside its
//   cluster, and everything else stays as it was.
// - Repeated siblings. MIN_ALIKE or more consecutive child scopes of one class that run the
//   same ops on the same lines (a GPT-2's twelve Blocks) are one stacked box, "×12 Block",
//   which opens into its boxes. Fewer stay boxes: a chain of four short boxes reads at a
//   glance, and each of them may tell something (the first block of a ResNet stage
//   downsamples: its ops differ, so it is never rolled with the second).
// - Recursion. A module called inside its own forward is scoped by the call ("call 2 ·
//   TreeNet", dyngraph/nn/module.py NOTE [scopes]). The map draws each call as one box of
//   its own nodes, beside the calls it made, all in the cluster of the first call, whose
//   title says how far the recursion went ("TreeNet · recursion: 19 calls, 4 deep"): the
//   edges between the boxes are the tree of calls. A call is named by its path of calls
//   ("TreeNet call 1.2": the second call made by the first) and says its depth. Calls are
//   never rolled up as siblings: their tree is the point. (`displayPath` gives every node its
//   place in this flattened tree, in the map and in the full drawing alike.)
// - What a box says, on one line: its name, what it holds ("2 BasicBlocks", "5 modules") and
//   how many nodes, and that a click opens it; the edges leaving a box carry the shape of the
//   tensor that flows out (structure.js NOTE [shapes on edges]). One line: ResNet-18's top
//   level is 15 boxes in a chain, which fits a 600 px pane at 9 px labels only so. A call's
//   box is narrow instead, two short lines ("call 1.2", "depth 2 · 6 nodes"): a tree of calls
//   is wide, ten words are ten boxes side by side.
// - Shared weights. The weights a recursion's calls all read (its `embed` layer's) are in the
//   box of their module; the edges from a box holding only parameters to FAN_OUT boxes or more
//   are left out of the map (structure.js), or the tree would be lost under them, and the box
//   says instead how many read it: "embed · 1 node · read by 6 boxes".
// - A rolled-up loop (structure.js NOTE [roll-up]) stays only in the open part of the map: a
//   loop inside a closed box is in that box.

import { scopeKey } from "./timeline.js";

/** dot.py MIN_ALIKE, used when the vocabulary does not say (`min_alike`): fewest consecutive
 * alike sibling scopes rolled into one stacked box (NOTE [map]). */
export const MIN_ALIKE = 5;

const CALL = /^call (\d+) \u00B7 (.+)$/;

/**
 * @typedef {import("./timeline.js").NodeRecord} NodeRecord
 * @typedef {{
 *   key: string,            "scope:<display path joined by ' / '>", or "roll:<its first box's>"
 *   path: string[],         the display path of the scope (a roll: of its first scope)
 *   scope: string[],        the cluster the box is drawn in (its parent's display path)
 *   members: number[],      node ids, ascending
 *   lines: string[],        its label, one line (a chain of boxes must fit a pane's height):
 *                           title, what it holds, its node count
 *   title: string,
 *   roll: number,           how many sibling scopes a roll stands for (0: one scope)
 *   call: boolean,          a call of a recursion (two short lines: "call 1.2", "depth 2 · 6 nodes")
 *   output: number,         the member whose value leaves the box (its gradient styles it)
 * }} MapBox
 * @typedef {{
 *   path: string[], key: string, members: NodeRecord[], direct: NodeRecord[],
 *   children: Map<string, Entry>, first: number, depth: number, calls: number, deepest: number,
 * }} Entry  a scope of the flattened tree: `depth` > 0 for a call (its place in the recursion);
 *   `calls`, `deepest`: for a recursion's first call, how many calls it holds and how deep
 */

/**
 * Where a node of scope `path` is drawn: the path with each chain of recursive calls ("call 1
 * · TreeNet", "call 2 · TreeNet") flattened into one name, "TreeNet call 1.2" (NOTE [map]).
 * @param {string[]} path
 * @returns {string[]}
 */
export function displayPath(path) {
  return displaySteps(path).map((step) => step.name);
}

/**
 * displayPath, with the depth in its recursion of each name (0: not a call).
 * @param {string[]} path
 * @returns {Array<{name: string, depth: number}>}
 */
function displaySteps(path) {
  /** @type {Array<{name: string, depth: number}>} */
  const out = [];
  /** @type {string[]} */
  let chain = [];
  for (const name of path) {
    const call = CALL.exec(name);
    if (!call) {
      chain = [];
      out.push({ name, depth: 0 });
      continue;
    }
    if (chain.length) out.pop();
    chain.push(call[1]);
    out.push({ name: `${call[2]} call ${chain.join(".")}`, depth: chain.length });
  }
  return out;
}

/** The class of a scope named with one ("0 · Linear", "h.3 · Block"), else null. @param {string} name */
export function scopeClass(name) {
  const at = name.lastIndexOf(" \u00B7 ");
  return at < 0 ? null : name.slice(at + 3);
}

/** A scope's name without its class: "h.3 · Block" -> "h.3". @param {string} name */
function bareName(name) {
  const at = name.lastIndexOf(" \u00B7 ");
  return at < 0 ? name : name.slice(0, at);
}

/** `1 node`, `5 nodes`. @param {number} n */
export function countNodes(n) {
  return n === 1 ? "1 node" : `${n} nodes`;
}

/**
 * The scopes of `nodes` as a tree of display paths (the root: path []), each entry with every
 * node under it, its own nodes, and its children in the order of their first node.
 * @param {NodeRecord[]} nodes  in creation order
 * @returns {Entry}
 */
export function scopeTree(nodes) {
  /** @param {string[]} path @param {number} depth @returns {Entry} */
  const entry = (path, depth) => ({
    path, key: path.join(" / "), members: [], direct: [], children: new Map(), first: Infinity, depth, calls: 0, deepest: 0,
  });
  const root = entry([], 0);
  for (const node of nodes) {
    const steps = displaySteps(node.scope);
    let at = root;
    at.members.push(node);
    at.first = Math.min(at.first, node.order);
    for (let i = 0; i < steps.length; i++) {
      let child = at.children.get(steps[i].name);
      if (!child) {
        child = entry([...at.path, steps[i].name], steps[i].depth);
        at.children.set(steps[i].name, child);
      }
      at = child;
      at.members.push(node);
      at.first = Math.min(at.first, node.order);
    }
    at.direct.push(node);
  }
  // each recursion's first call: how many calls, how deep (its children that are calls)
  const stack = [root];
  while (stack.length) {
    const at = /** @type {Entry} */ (stack.pop());
    for (const child of at.children.values()) {
      if (child.depth > 0) {
        at.calls += 1;
        at.deepest = Math.max(at.deepest, child.depth);
      }
      stack.push(child);
    }
  }
  return root;
}

/**
 * The cluster titles that say more than a scope's name: a recursion's first call, "TreeNet ·
 * recursion: 19 calls, 4 deep" (NOTE [map]). Keyed by scopeKey of the display path.
 * @param {Entry} root
 * @returns {Map<string, string>}
 */
export function clusterTitles(root) {
  /** @type {Map<string, string>} */
  const titles = new Map();
  const stack = [root];
  while (stack.length) {
    const at = /** @type {Entry} */ (stack.pop());
    if (at.calls > 0 && at.path.length) titles.set(scopeKey(at.path), `${at.path[at.path.length - 1]} \u00B7 ${recursionText(at)}`);
    stack.push(...at.children.values());
  }
  return titles;
}

/** @param {Entry} at */
function recursionText(at) {
  return `recursion: ${at.calls} call${at.calls === 1 ? "" : "s"}, ${at.deepest} deep`;
}

/**
 * The boxes of the map (NOTE [map]): every closed scope (or roll of alike scopes) under an
 * open one, with the nodes it stands for.
 * @param {NodeRecord[]} nodes  in creation order
 * @param {Iterable<{src: number, dst: number}>} edges
 * @param {Set<string>} expanded  keys of the boxes the learner opened
 * @param {number} [minAlike]
 * @returns {{boxes: MapBox[], opened: Array<{key: string, title: string}>, tree: Entry}}
 *   opened: the boxes of `expanded` drawn open, in the order met
 */
export function moduleMap(nodes, edges, expanded, minAlike = MIN_ALIKE) {
  const tree = scopeTree(nodes);
  const order = new Map(nodes.map((n) => [n.id, n.order]));
  /** @type {Map<number, number[]>} */
  const consumers = new Map();
  for (const e of edges) {
    let list = consumers.get(e.src);
    if (!list) consumers.set(e.src, (list = []));
    list.push(e.dst);
  }
  /** @type {MapBox[]} */
  const boxes = [];
  /** @type {Array<{key: string, title: string}>} */
  const opened = [];
  const stack = [tree];
  while (stack.length) {
    const open = /** @type {Entry} */ (stack.pop());
    const children = [...open.children.values()].sort((a, b) => a.first - b.first);
    // the only child scope of an open scope opens too
    if (children.length === 1) {
      stack.push(children[0]);
      continue;
    }
    for (const run of alikeRuns(open, children, minAlike)) {
      const key = `roll:${run[0].key}`;
      if (run.length > 1) {
        const roll = rollBox(key, open, run, consumers);
        if (!expanded.has(key)) {
          boxes.push(roll);
          continue;
        }
        opened.push({ key, title: roll.title });
      }
      for (const child of run) {
        const box = scopeBox(open, child, consumers);
        if (!expanded.has(box.key)) boxes.push(box);
        else {
          opened.push({ key: box.key, title: box.title });
          stack.push(child);
        }
      }
    }
  }
  const first = (/** @type {MapBox} */ box) => Math.min(...box.members.map((id) => order.get(id) ?? Infinity));
  return { boxes: boxes.sort((a, b) => first(a) - first(b)), opened, tree };
}

/**
 * The children of `open` in runs: MIN_ALIKE or more consecutive alike scopes (the same class,
 * the same ops on the same lines; no node of `open` itself between them) make one run, any
 * other child is a run of its own.
 * @param {Entry} open @param {Entry[]} children  in order @param {number} minAlike
 * @returns {Entry[][]}
 */
function alikeRuns(open, children, minAlike) {
  const ownOps = open.direct.filter((n) => n.kind === "op").map((n) => n.order);
  /** @type {Entry[][]} */
  const runs = [];
  let run = /** @type {Entry[]} */ ([]);
  let signature = "";
  const flush = () => {
    if (run.length >= minAlike) runs.push(run);
    else for (const child of run) runs.push([child]);
    run = [];
    signature = "";
  };
  for (const child of children) {
    const mine = alike(child);
    const last = run[run.length - 1];
    const between = last !== undefined && ownOps.some((order) => order > last.first && order < child.first);
    if (mine === null || mine !== signature || between) flush();
    if (mine === null) runs.push([child]);
    else {
      run.push(child);
      signature = mine;
    }
  }
  flush();
  return runs;
}

/**
 * What makes two sibling scopes alike: the class in their name and the ops they run, on which
 * lines; null for a scope that is never rolled (no class in its name, or a recursive call).
 * @param {Entry} child
 */
function alike(child) {
  const name = child.path[child.path.length - 1];
  const cls = scopeClass(name);
  if (cls === null || child.depth > 0) return null;
  const ops = child.members.map((n) => (n.kind === "op" ? `${n.op}\u0000${n.file}\u0000${n.line}` : n.kind));
  return `${cls}\u0001${ops.join("\u0001")}`;
}

/**
 * The box of one closed scope.
 * @param {Entry} open @param {Entry} child @param {Map<number, number[]>} consumers
 * @returns {MapBox}
 */
function scopeBox(open, child, consumers) {
  const name = child.path[child.path.length - 1];
  // a call is named by its calls alone, "call 1.2" (its cluster, once open, by its class too)
  const title = child.depth > 0 ? name.slice(name.lastIndexOf(" call ") + 1) : name;
  let holds = "";
  if (child.calls > 0) holds = recursionText(child);
  else if (child.depth > 0) holds = `depth ${child.depth}`;
  else if (child.children.size > 0) {
    const classes = [...child.children.values()].map((c) => scopeClass(c.path[c.path.length - 1]));
    const n = classes.length;
    const one = classes[0];
    holds = one !== null && classes.every((c) => c === one) ? `${n} ${one}${n === 1 ? "" : "s"}` : `${n} module${n === 1 ? "" : "s"}`;
  }
  const members = child.members.map((m) => m.id).sort((a, b) => a - b);
  // a call's box is narrow, two short lines: a tree of calls is wide (ten words, ten boxes)
  const lines = child.depth > 0 && !child.calls
    ? [title, `${holds} \u00B7 ${countNodes(members.length)}`]
    : [[title, holds, countNodes(members.length)].filter(Boolean).join(" \u00B7 ")];
  return {
    key: `scope:${child.key}`, path: child.path, scope: open.path, members, title, roll: 0, call: child.depth > 0,
    lines,
    output: outputOf(child.members, consumers),
  };
}

/**
 * The stacked box of a run of alike scopes: "×12 Block", "h.0 – h.11 · 432 nodes".
 * @param {string} key @param {Entry} open @param {Entry[]} run @param {Map<number, number[]>} consumers
 * @returns {MapBox}
 */
function rollBox(key, open, run, consumers) {
  const first = run[0].path[run[0].path.length - 1];
  const last = run[run.length - 1].path[run[run.length - 1].path.length - 1];
  const nodes = run.flatMap((c) => c.members);
  const members = nodes.map((m) => m.id).sort((a, b) => a - b);
  const title = `\u00D7${run.length} ${scopeClass(first)}`;
  return {
    key, path: run[0].path, scope: open.path, members, title, roll: run.length, call: false,
    lines: [`${title} \u00B7 ${bareName(first)} \u2013 ${bareName(last)} \u00B7 ${countNodes(members.length)}`],
    output: outputOf(nodes, consumers),
  };
}

/**
 * The node of a box whose value leaves it: the newest member read outside the box, else its
 * newest op (its result: what the box computes), else its newest member.
 * @param {NodeRecord[]} members @param {Map<number, number[]>} consumers
 */
export function outputOf(members, consumers) {
  const inside = new Set(members.map((n) => n.id));
  const byOrder = [...members].sort((a, b) => b.order - a.order);
  const leaving = byOrder.find((n) => (consumers.get(n.id) || []).some((dst) => !inside.has(dst)));
  const op = byOrder.find((n) => n.kind === "op");
  return (leaving || op || byOrder[0]).id;
}
