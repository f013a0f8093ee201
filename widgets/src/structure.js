// The structure of a recording: the boxes and edges Graphviz lays out, once per structure.
// Pure logic, no DOM (see ../PROTOCOL.md, "Layout once, restyle per step").
//
// NOTE [layout once] A playback step only changes which nodes are visible, which have a
// gradient, which are freed and which edge carries the newest gradient. None of that moves a
// box, so Graphviz lays out the *whole* recording once (every node of the timeline, with loops
// rolled up, a map of the modules past a threshold and the budget applied), and each position of
// the timeline is a restyle of that drawing (view/drawing.js `restyle`): classes and a few text lines
// on the g.node / g.edge elements, found by their Graphviz names (n7, n3->n7, l12, s0, hidden).
// The layout runs again only when the structure changes: new data while a cell runs, the
// "values & grads" toggle, a group expanded or rolled up.
//
// NOTE [roll-up] Repeated iterations of the same source lines become one stacked box, with the
// rule of dyngraph/dot.py `_repeated_iterations` (the same (op, file, line, scope) sequence
// back to back at least MIN_REPEATS times, a body of any length: dot.py NOTE [loops of any
// length]; the first and last iterations stay, and the loops inside them roll up too; the box
// takes the ones between, with the constants and leaves only they use; its label names the
// loop's `for` line: events.py NOTE [loop lines]). A box standing for one iteration
// ("×1 iterations") hides as much as it shows, so a loop rolls up only when at least two
// iterations go into the box: at least 4 back to back. Past `collapse_over` boxes, every top-level
// scope (an nn.Module, dg.scope) becomes one box too, as dot.py `_plan_hiding` does past its
// budget. The learner expands a group by clicking it, and rolls it up again from the notes.
//
// NOTE [a loop opens a few iterations at a time] Opening all 28 iterations of a 30-step RNN at
// once drew 250 nodes that no pane shows at a readable size, and cost Graphviz seconds: each
// iteration reads the cell's four parameters, and every one of those 120 edges runs from the
// top of the drawing down to its iteration (Graphviz routes an edge through every rank it
// crosses: thousands of virtual nodes; without them the same layout takes 30 ms). So a click
// opens the next few iterations (`opened`: how many of the box's iterations are drawn, from its
// first), as many as the pane shows readably (view/drawing.js `iterationsToOpen`), and the box keeps the rest
// ("×25 iterations"); each further click opens the next few, like turning pages.

import { nodeStatement, labelLines, escape, shapeKnown, shapeText, MAX_LABEL_CHARS } from "./vocabulary.js";
import { scopeKey } from "./timeline.js";
import { moduleMap, scopeTree, clusterTitles, displayPath, countNodes, MIN_ALIKE } from "./levels.js";

/** dot.py MIN_REPEATS, used when the vocabulary does not say (`min_repeats`): fewest
 * back-to-back repeats that make a loop. MAX_TRIES: dot.py's, the periods tried at an op
 * (NOTE [loops of any length] in dot.py). */
export const MIN_REPEATS = 4;
export const MAX_TRIES = 64;
/** dot.py COLLAPSE_OVER, used when the options do not say (a view sends `collapse_over`):
 * past this many boxes, the drawing is a map of the modules (levels.js NOTE [map]). */
export const COLLAPSE_OVER = 150;
/** dot.py FAN_OUT, used when the vocabulary does not say (`fan_out`): an edge from a box read by
 * this many boxes or more gets the vocabulary's `shared_edge` body (dot.py NOTE [reading order]). */
export const FAN_OUT = 3;
/** dot.py COMPACT_VALUES, used when the vocabulary does not say: compact labels show the values
 * of tensors of at most this many elements (the loss), only the shape of the others. */
export const COMPACT_VALUES = 1;

/**
 * @typedef {import("./timeline.js").NodeRecord} NodeRecord
 * @typedef {import("./vocabulary.js").Vocabulary} Vocabulary
 * @typedef {{
 *   name: string,           the Graphviz name: n<id>, l<id> (loop), s<k> (scope), hidden
 *   kind: "node"|"loop"|"scope"|"hidden",
 *   members: number[],      node ids it stands for
 *   scope: string[],        the cluster it is drawn in
 *   statement: string,
 *   order: number,          creation order of its first member
 *   lines: string[],        its label lines (plain text)
 *   gradLine: number,       index of the label line showing the gradient, or -1
 *   savedLine: number,      index of the "saved 32 B" line (it reads "freed" once freed), or -1
 *   title?: string,         a group's first line (for the notes)
 *   key?: string,           a group's key in `expanded` (l<id>, "scope:<path>", "roll:<path>")
 *   output?: number,        a module's box: the node whose value leaves it (levels.js)
 *   style?: string,         a group's attribute body
 * }} Box
 * @typedef {{name: string, src: string, dst: string, sources: number[], label?: string}} BoxEdge
 *   label: the shape flowing out of a module's box (NOTE [shapes on edges])
 * @typedef {{
 *   key: string, file: string|null, line: number|null, repeats: number, period: number,
 *   members: number[],
 *   iterations: number[][], the members of each iteration in the box, in order (its ops and
 *                           the leaves and constants only it uses)
 *   first: number[],        the ops of the loop's first iteration (drawn before the box)
 *   around: boolean,        its body runs in more than one top-level scope: a loop around the
 *                           model (NOTE [a loop around the model])
 * }} Loop
 * @typedef {{
 *   dot: string, boxes: Box[], edges: BoxEdge[], owner: Map<number, string>,
 *   clusters: Map<string, string[]>, hidden: number, loops: Loop[],
 *   groups: Group[],
 *   map: boolean,           drawn as a map of the modules (levels.js NOTE [map])
 *   statsHidden: number,    running statistics not drawn (dot.py NOTE [running statistics])
 *   mappable: boolean,      the view may draw it as a map when unreadable: some node is in a
 *                           scope, and no loop is rolled up
 * }} Structure
 * @typedef {{
 *   key: string, title: string,
 *   expanded: boolean,      drawn open, all of it
 *   loop: boolean,          a rolled-up loop (it opens a few iterations at a time)
 *   opened: number,         a loop's iterations drawn open so far (from its first)
 *   iterations: number,     how many iterations its box stands for
 * }} Group
 */

/**
 * The loops of a sequence of keys, one per op (port of dot.py `loop_spans`, NOTE [loops of any
 * length] there): {start, repeats, period} of each, in the order of their first op, a loop
 * before the loops inside its first and last iterations. The periods tried at op i are the
 * distances to the next MAX_TRIES ops with op i's key.
 * @param {number[]} codes
 * @param {number} [minRepeats]
 * @returns {Array<{start: number, repeats: number, period: number}>}
 */
export function loopSpans(codes, minRepeats = MIN_REPEATS) {
  /** @type {Map<number, number[]>} key -> where it occurs, in order */
  const positions = new Map();
  codes.forEach((code, position) => {
    let at = positions.get(code);
    if (!at) positions.set(code, (at = []));
    at.push(position);
  });
  /** @type {Array<{start: number, repeats: number, period: number}>} */
  const spans = [];
  const same = (/** @type {number} */ a, /** @type {number} */ b, /** @type {number} */ period) => {
    for (let k = 0; k < period; k++) if (codes[a + k] !== codes[b + k]) return false;
    return true;
  };
  // recursive only as deep as loops are nested (each level is minRepeats times shorter)
  const find = (/** @type {number} */ i, /** @type {number} */ end) => {
    while (i < end) {
      let best = null;
      let covered = 0;
      const first = codes[i];
      const at = /** @type {number[]} */ (positions.get(first));
      const next = firstAfter(at, i); // the next op with op i's key
      const longest = Math.floor((end - i) / minRepeats);
      for (let k = next; k < Math.min(next + MAX_TRIES, at.length); k++) {
        const period = at[k] - i;
        if (period > longest) break;
        if (Math.floor((end - i) / period) * period <= covered) continue; // cannot cover more
        let j = 2;
        while (j < minRepeats && codes[i + j * period] === first) j++;
        if (j < minRepeats) continue; // op i's key is not there minRepeats times
        let repeats = 1;
        while (i + (repeats + 1) * period <= end && same(i + repeats * period, i, period)) repeats++;
        if (repeats >= minRepeats && repeats * period > covered) {
          best = { repeats, period };
          covered = repeats * period;
        }
      }
      if (best === null) {
        i++;
        continue;
      }
      const { repeats, period } = best;
      spans.push({ start: i, repeats, period });
      find(i, i + period); // the first iteration
      const last = i + (repeats - 1) * period;
      find(last, last + period); // the last
      i += covered;
    }
  };
  find(0, codes.length);
  return spans;
}

/** The index of the first of the sorted `values` greater than `value`. @param {number[]} values @param {number} value */
function firstAfter(values, value) {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid] <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Runs of a loop body (port of dot.py `_repeated_iterations`): the same (op, file, line, scope)
 * sequence of ops repeated back to back at least `minRepeats` times, whatever its length. Each
 * run gives the ops of its iterations between the first and the last, plus the non-op nodes
 * consumed only by them.
 * @param {NodeRecord[]} nodes  in creation order
 * @param {Iterable<{src: number, dst: number}>} edges
 * @param {number} [minRepeats]
 * @param {any[]} [steps]  the timeline's: its backward passes name their loops (loopLine)
 * @returns {Loop[]}
 */
export function repeatedIterations(nodes, edges, minRepeats = MIN_REPEATS, steps = []) {
  const ops = nodes.filter((n) => n.kind === "op" && n.file != null);
  // the same lines in the same scope: the same module called again (an RNN cell), not the
  // next of several modules (a transformer's Blocks: the map's siblings, levels.js)
  /** @type {Map<string, number>} each key as a number: bodies compare as numbers */
  const codeOf = new Map();
  const codes = ops.map((n) => {
    const key = `${n.op}\u0000${n.file}\u0000${n.line}\u0000${scopeKey(n.scope)}`;
    let code = codeOf.get(key);
    if (code === undefined) codeOf.set(key, (code = codeOf.size));
    return code;
  });
  /** @type {Map<number, Set<number>>} */
  const consumers = new Map();
  for (const e of edges) {
    let set = consumers.get(e.src);
    if (!set) consumers.set(e.src, (set = new Set()));
    set.add(e.dst);
  }
  /** @type {Map<number, number>} the root of a backward pass -> the loop that called backward() */
  const backwardLoops = new Map();
  for (const step of steps) {
    if (step[0] === "backward_started" && step[2] && step[2].loop != null) backwardLoops.set(step[1], step[2].loop);
  }
  /** @type {Loop[]} */
  const found = [];
  for (const { start: i, repeats, period } of loopSpans(codes, minRepeats)) {
    /** @type {Map<number, number>} op id -> its iteration in the box (0 = the second of the loop) */
    const iterationOf = new Map();
    for (let k = period; k < (repeats - 1) * period; k++) iterationOf.set(ops[i + k].id, Math.floor(k / period) - 1);
    /** @type {number[][]} */
    const iterations = Array.from({ length: repeats - 2 }, () => []);
    for (const [id, k] of iterationOf) iterations[k].push(id);
    for (const n of nodes) {
      if (n.kind === "op") continue;
      const used = consumers.get(n.id);
      if (!used || ![...used].every((id) => iterationOf.has(id))) continue;
      // a leaf or constant only the box uses goes with the first iteration that reads it
      iterations[Math.min(...[...used].map((id) => /** @type {number} */ (iterationOf.get(id))))].push(n.id);
    }
    for (const ids of iterations) ids.sort((a, b) => a - b);
    const sorted = iterations.flat().sort((a, b) => a - b);
    found.push({
      key: `l${sorted[0]}`,
      file: ops[i].file ?? null,
      line: loopLine(ops.slice(i, i + period), backwardLoops),
      repeats,
      period,
      members: sorted,
      iterations,
      first: ops.slice(i, i + period).map((n) => n.id),
      around: new Set(ops.slice(i, i + period).map((n) => n.scope[0] ?? "")).size > 1,
    });
  }
  return found;
}

/**
 * The line a loop's label names (port of dot.py `_loop_line`; NOTE [loop lines] in
 * dyngraph/events.py): the loop that called backward() on one of the ops of its first
 * iteration, else the loop of the first of them that has one, else the first one's line.
 * @param {NodeRecord[]} first  @param {Map<number, number>} backwardLoops
 * @returns {number|null}
 */
export function loopLine(first, backwardLoops) {
  for (const node of first) if (backwardLoops.has(node.id)) return /** @type {number} */ (backwardLoops.get(node.id));
  for (const node of first) if (node.loop != null) return node.loop;
  return first[0].line ?? null;
}

export { countNodes };

/**
 * The label lines of a rolled-up loop, `opened` of its iterations drawn open (NOTE [a loop opens
 * a few iterations at a time]): the box stands for the rest.
 * @param {Loop} loop @param {number} [opened]
 */
export function loopLines(loop, opened = 0) {
  const where = loop.line != null ? `, line ${loop.line}` : "";
  const rest = loop.iterations ? loop.iterations.slice(opened) : [loop.members];
  const count = rest.reduce((sum, ids) => sum + ids.length, 0);
  const more = opened > 0 ? "click to open more" : "click to expand";
  return [`\u00D7${loop.repeats - 2 - opened} iterations${where}`, `${countNodes(count)} \u00B7 ${more}`];
}

/**
 * The structure of the whole recording as the learner has chosen to see it.
 * @param {{nodes: Map<number, NodeRecord>, edges: Map<string, {src: number, dst: number}>, clusters: Map<string, number>, steps: any[]}} timeline
 * @param {{
 *   lines?: string[], vocabulary?: Vocabulary, maxNodes?: number, collapseOver?: number,
 *   detail?: boolean, expanded?: Set<string>, opened?: Map<string, number>,
 *   finalGrads?: Map<number, any>, map?: boolean, rankdir?: "TB"|"LR", runningStats?: boolean,
 * }} opts
 *   detail: labels with every value and a gradient line ("values & grads"); else compact.
 *   expanded: group keys the learner opened (l<id> loops, "scope:<path>" and "roll:<path>"
 *     boxes of the map).
 *   opened: loop key -> how many of its box's iterations are drawn open, from the first (NOTE
 *     [a loop opens a few iterations at a time]); all of them: as if expanded.
 *   finalGrads: each node's latest gradient in the timeline (sizes the gradient lines).
 *   map: draw the modules one level at a time (levels.js NOTE [map]), as past collapseOver.
 *   rankdir: "LR" lays the ranks out left to right over the header's direction (view/drawing.js
 *     NOTE [turn]).
 *   runningStats: draw the running statistics a BatchNorm reads (dot.py NOTE [running
 *     statistics]); by default they are left out and counted (`statsHidden`).
 * @returns {Structure}
 */
export function buildStructure(timeline, opts) {
  const vocabulary = opts.vocabulary || {};
  const maxChars = vocabulary.max_label_chars ?? MAX_LABEL_CHARS;
  const expanded = opts.expanded || new Set();
  const detail = Boolean(opts.detail);
  const limit = detail ? null : vocabulary.compact_values ?? COMPACT_VALUES;
  const nodes = [...timeline.nodes.values()].sort((a, b) => a.order - b.order);
  const order = new Map(nodes.map((n) => [n.id, n.order]));
  /** @type {Box[]} */
  const groups = [];
  const taken = new Set();
  const statementOf = (/** @type {string} */ name, /** @type {string[]} */ lines, /** @type {string} */ style) => {
    const label = lines.map((l) => escape(l, maxChars)).join("\\n");
    return `${name} [label="${label}"${style ? `, ${style}` : ""}];`;
  };
  const groupBox = (/** @type {string} */ name, /** @type {"loop"|"scope"} */ kind, /** @type {string[]} */ lines, /** @type {number[]} */ members, /** @type {string} */ style) => {
    const first = Math.min(...members.map((id) => order.get(id) ?? Infinity));
    return {
      name, kind, members, scope: [], lines, gradLine: -1, savedLine: -1, title: lines[0], order: first, style,
      statement: statementOf(name, lines, style),
    };
  };

  /** @type {Group[]} */
  const groupList = [];
  const opened = opts.opened || new Map();
  const loops = repeatedIterations(nodes, timeline.edges.values(), vocabulary.min_repeats ?? MIN_REPEATS, timeline.steps);

  // NOTE [map] in levels.js: past collapse_over boxes (counted with the loops rolled up), or
  // when the view finds the drawing unreadable (opts.map), the modules one level at a time.
  // A loop the learner opened is an explicit choice: it is not folded away into a box.
  const collapseOver = Math.max(1, Math.floor(opts.collapseOver ?? COLLAPSE_OVER));
  const maxNodes = Math.max(1, Math.floor(opts.maxNodes ?? Infinity));
  // (an opened step of a loop around the model is a map of its own: NOTE [an opened step is a
  // map of its own]; it keeps the map, and counts as drawn)
  const loopOpened = loops.some((loop) => !loop.around && iterationsShown(loop, expanded, opened) > 0);
  const rolledUp = loops.reduce((sum, loop) => {
    const rolled = loop.iterations.slice(iterationsShown(loop, expanded, opened)).flat().length;
    return sum + Math.max(rolled - 1, 0); // a box stands for them
  }, 0);
  const scoped = nodes.some((n) => n.scope.length > 0);
  const map = scoped && (Boolean(opts.map) || (!loopOpened && nodes.length - rolledUp > Math.min(collapseOver, maxNodes)));
  // the view maps an unreadable drawing only without a loop inside a module in it: every
  // iteration of an RNN is in its cell's scope, and the cell's box would swallow the loop
  // (view/drawing.js NOTE [readable]); a loop around the model (below) stays rolled beside the map
  const mappable = scoped && loops.every((loop) => loop.around);
  // NOTE [a loop around the model] A loop whose body runs in more than one top-level scope -
  // a training step: the model's modules, then the loss and the optimizer outside them - is
  // the learner's loop around the model. No box of the map can hold it: mapped with the rest,
  // each module's box took every step's nodes, and the loss drawn outside the modules stood
  // there once per step, 18 times for 20 steps. So it is rolled up first, and the map drawn of
  // what it leaves (its first and last iterations, and the weights): one rolled step beside
  // the map. A loop inside one module (an RNN cell's) stays inside that module's box.
  // dot.py `_plan_hiding` does the same.
  const steps = openedSteps(loops, timeline.nodes, expanded, opened);
  const scopeOf = (/** @type {NodeRecord} */ n) => (map && steps.scopes.get(n.id)) || n.scope;
  const { boxes: mapBoxes, opened: mapOpened, tree } = map
    ? moduleMap(nodes.filter((n) => !steps.rolled.has(n.id)).map((n) => ({ ...n, scope: scopeOf(n) })),
      timeline.edges.values(), new Set([...expanded, ...steps.keys]), vocabulary.min_alike ?? MIN_ALIKE)
    : { boxes: [], opened: [], tree: scopeTree(nodes) };
  const indices = displayIndices(timeline.clusters);
  for (const [key, index] of steps.clusters) indices.set(key, index);
  for (const box of mapBoxes) for (const id of box.members) taken.add(id);

  for (const loop of loops) {
    const total = loop.iterations.length;
    const shown = iterationsShown(loop, expanded, opened);
    const members = loop.iterations.slice(shown).flat().sort((a, b) => a - b);
    if (members.some((id) => taken.has(id))) continue; // inside a closed box of the map
    const open = shown >= total;
    groupList.push({ key: loop.key, title: loopLines(loop)[0], expanded: open, loop: true, opened: shown, iterations: total });
    if (open) continue;
    groups.push(groupBox(loop.key, "loop", loopLines(loop, shown), members, vocabulary.loop || vocabulary.group || ""));
    for (const id of members) taken.add(id);
  }
  for (const box of mapBoxes) {
    const index = indices.get(scopeKey(box.path)) ?? `m${groups.length}`;
    const lines = box.call ? box.lines : [`${box.lines[0]} \u00B7 click to open`];
    const base = box.roll ? vocabulary.loop || vocabulary.group || "" : vocabulary.group || "";
    const style = [base, vocabulary.map_box].filter(Boolean).join(", ");
    groups.push({ ...groupBox(`${box.roll ? "r" : "s"}${index}`, "scope", lines, box.members, style), scope: box.scope, key: box.key, output: box.output, title: box.title });
  }
  // the boxes of the map the learner opened (each with its roll-up), then those still closed
  for (const group of mapOpened) {
    if (!steps.keys.has(group.key)) groupList.push({ ...group, expanded: true, loop: false, opened: 0, iterations: 0 });
  }
  for (const box of mapBoxes) groupList.push({ key: box.key, title: box.title, expanded: false, loop: false, opened: 0, iterations: 0 });
  let visible = nodes.filter((n) => !taken.has(n.id));
  // a box of the map or a loop holds its running statistics; drawn alone, they are left out
  const statsHidden = opts.runningStats ? 0 : visible.filter((n) => isRunningStat(n, vocabulary)).length;
  if (statsHidden) visible = visible.filter((n) => !isRunningStat(n, vocabulary)); // dot.py NOTE [running statistics]

  /** @type {Box[]} */
  let boxes = [...groups];
  for (const node of visible) {
    const grad = detail && opts.finalGrads ? opts.finalGrads.get(node.id) || null : null;
    const state = { grad, freed: false };
    const lines = labelLines(node, state, { limit });
    const saved = Number(node.saved) > 0;
    boxes.push({
      name: `n${node.id}`, kind: "node", members: [node.id], scope: displayPath(scopeOf(node)), order: node.order,
      statement: nodeStatement(node, state, vocabulary, { limit }),
      lines,
      gradLine: grad ? lines.findIndex((l) => l.startsWith("grad")) : -1,
      savedLine: saved ? lines.findIndex((l) => l.startsWith("saved ")) : -1,
    });
  }

  // The budget: the oldest boxes behind one honest note (it counts as one of max_nodes boxes).
  let hiddenCount = 0;
  if (boxes.length > maxNodes) {
    boxes.sort((a, b) => a.order - b.order);
    const cut = boxes.length - Math.max(maxNodes - 1, 1);
    const gone = boxes.slice(0, cut);
    boxes = boxes.slice(cut);
    const members = gone.flatMap((b) => b.members);
    hiddenCount = members.length;
    const statement = hiddenNote(hiddenCount, vocabulary.hidden);
    boxes.unshift({
      name: "hidden", kind: "hidden", members, scope: [], order: -1, statement,
      lines: [`${hiddenCount} nodes hidden`], gradLine: -1, savedLine: -1,
    });
  }

  /** @type {Map<number, string>} */
  const owner = new Map();
  for (const box of boxes) for (const id of box.members) owner.set(id, box.name);

  /** @type {Map<string, BoxEdge>} */
  const edgeMap = new Map();
  for (const e of timeline.edges.values()) {
    const src = owner.get(e.src);
    const dst = owner.get(e.dst);
    if (src === undefined || dst === undefined || src === dst) continue;
    const name = `${src}->${dst}`;
    const edge = edgeMap.get(name);
    if (edge) {
      if (!edge.sources.includes(e.src)) edge.sources.push(e.src);
    } else edgeMap.set(name, { name, src, dst, sources: [e.src] });
  }
  /** @type {Map<string, number>} box -> how many boxes read it (dot.py NOTE [reading order]) */
  const readers = new Map();
  for (const e of edgeMap.values()) readers.set(e.src, (readers.get(e.src) || 0) + 1);
  const fanOut = vocabulary.fan_out ?? FAN_OUT;
  // levels.js NOTE [map], shared weights: in a map, no edges from a box of weights read all over
  const weights = (/** @type {BoxEdge} */ e) => e.sources.every((id) => (timeline.nodes.get(id) || {}).kind === "parameter");
  const kindOf = new Map(boxes.map((b) => [b.name, b.kind]));
  const shared = (/** @type {BoxEdge} */ e) => map && kindOf.get(e.src) === "scope" && (readers.get(e.src) || 0) >= fanOut && weights(e);
  const edges = [...edgeMap.values()].filter((e) => !shared(e));
  for (const box of boxes) {
    const left = box.kind === "scope" ? [...edgeMap.values()].filter((e) => e.src === box.name && shared(e)).length : 0;
    if (!left) continue; // else it says who reads it, its edges left out
    const at = box.lines.length - 1;
    box.lines = box.lines.map((line, i) => (i === at ? line.replace(/( \u00B7 click to open)?$/, ` \u00B7 read by ${left} box${left === 1 ? "" : "es"}$1`) : line));
    box.statement = statementOf(box.name, box.lines, box.style || "");
  }
  // NOTE [shapes on edges] An edge leaving a module's box carries the shape of the tensor that
  // flows along it (a node's label shows its own shape already). The widget writes it beside
  // the edge once the drawing is laid out (view/drawing.js labelEdges), not as a Graphviz label: a
  // labelled edge takes a rank of its own, and ranks are then doubled across the whole
  // drawing (ResNet-18's map went from 604 to 811 pt tall, unreadable in a 600 px pane). A
  // static picture, which scrolls, has them as Graphviz labels (dot.py `_edges`).
  for (const e of edges) {
    if (kindOf.get(e.src) !== "scope") continue;
    const text = edgeShape(e.sources.map((id) => timeline.nodes.get(id)));
    if (text) e.label = text;
  }

  const lines = ["digraph dyngraph {", ...(opts.lines || []).map(String)];
  if (opts.rankdir === "LR") lines.push('  graph [rankdir="LR"];');
  if (map && vocabulary.map_graph) lines.push(`  graph [${vocabulary.map_graph}];`); // NOTE [shapes on edges]
  /** @type {Map<string, string[]>} cluster title -> the boxes inside it (at any depth) */
  const clusters = new Map();
  lines.push(...clusterStatements(boxes, indices, clusterTitles(tree), vocabulary, clusters));
  for (const e of edges) {
    const shared = (readers.get(e.src) || 0) >= fanOut ? vocabulary.shared_edge || "" : "";
    lines.push(`  ${e.src} -> ${e.dst} [${shared}];`);
  }
  lines.push("}");
  return {
    dot: lines.join("\n") + "\n",
    boxes,
    edges,
    owner,
    clusters,
    hidden: hiddenCount,
    loops,
    groups: groupList,
    map,
    mappable,
    statsHidden,
  };
}

/**
 * How many of a loop's rolled iterations are drawn open, from its first (NOTE [a loop opens a
 * few iterations at a time]); all of them when the learner expanded the whole loop.
 * @param {Loop} loop @param {Set<string>} expanded @param {Map<string, number>} opened
 */
function iterationsShown(loop, expanded, opened) {
  const total = loop.iterations.length;
  if (expanded.has(loop.key)) return total;
  return Math.min(Math.max(Math.floor(opened.get(loop.key) || 0), 0), total);
}

/**
 * NOTE [an opened step is a map of its own] The iterations of a loop around the model (NOTE [a
 * loop around the model]) still rolled stay out of the map (`rolled`). One the learner opened
 * is a training step: drawn flat, it was the whole step's nodes, a thousand for ResNet-18, the
 * step the learner wanted to see buried under its own ops. So each opened iteration is a scope
 * of its own in the map, "iteration 3 of 20", drawn open (`keys`: it was opened by a click
 * already), holding that step's own map: the model's box, the loss, the optimizer's ops. Its
 * nodes are given the scope `scopes` (the iteration's name, then their own) for the map only;
 * the timeline keeps theirs. Rolling the loop up again closes it. dot.py draws no opened loop
 * (a static picture has no clicks), so has no port of this.
 * @param {Loop[]} loops @param {Map<number, NodeRecord>} nodes
 * @param {Set<string>} expanded @param {Map<string, number>} opened
 * @returns {{rolled: Set<number>, scopes: Map<number, string[]>, keys: Set<string>, clusters: Map<string, string>}}
 *   clusters: each iteration's scope key -> its cluster's index ("i<loop key>_<k>")
 */
function openedSteps(loops, nodes, expanded, opened) {
  const rolled = new Set();
  /** @type {Map<number, string[]>} */
  const scopes = new Map();
  const keys = new Set();
  /** @type {Map<string, string>} */
  const clusters = new Map();
  for (const loop of loops) {
    if (!loop.around) continue;
    const shown = iterationsShown(loop, expanded, opened);
    loop.iterations.forEach((ids, k) => {
      if (k >= shown) {
        for (const id of ids) rolled.add(id);
        return;
      }
      const name = `iteration ${k + 2} of ${loop.repeats}`; // the box holds the second to the last but one
      keys.add(`scope:${name}`).add(`roll:${name}`); // open, nor rolled with its alike neighbours
      clusters.set(scopeKey([name]), `i${loop.key}_${k}`);
      for (const id of ids) scopes.set(id, [name, ...((nodes.get(id) || { scope: [] }).scope)]);
    });
  }
  return { rolled, scopes, keys, clusters };
}

/**
 * Is `node` a running statistic a normalisation module reads (dot.py `is_running_stat`, NOTE
 * [running statistics])? The names come in the vocabulary (`running_stats`).
 * @param {NodeRecord} node @param {Vocabulary} vocabulary
 */
export function isRunningStat(node, vocabulary) {
  const names = vocabulary.running_stats || [];
  return node.kind === "constant" && node.scope.length > 0 && names.includes(node.name ?? "");
}

/**
 * The text on an edge from the nodes it carries (NOTE [map]): the shape of the first whose
 * shape is known, "(2, 64, 8, 8)", and "+2" when it carries tensors of two other shapes.
 * @param {Array<NodeRecord|undefined>} sources
 */
export function edgeShape(sources) {
  const shapes = [];
  for (const node of sources) {
    if (!node || !Array.isArray(node.shape) || !shapeKnown(node)) continue;
    const text = shapeText(node.shape);
    if (!shapes.includes(text)) shapes.push(text);
  }
  if (!shapes.length) return "";
  return shapes.length === 1 ? shapes[0] : `${shapes[0]} +${shapes.length - 1}`;
}

/**
 * Scope path key -> cluster index, for the display paths of levels.js (a recursion's calls
 * flattened): each takes the index of the first real scope path drawn there.
 * @param {Map<string, number>} clusters  the timeline's: real scope path key -> index
 * @returns {Map<string, number>}
 */
function displayIndices(clusters) {
  /** @type {Map<string, number>} */
  const out = new Map();
  for (const [key, index] of clusters) {
    const shown = scopeKey(displayPath(key.split("\u0000")));
    if (!out.has(shown)) out.set(shown, index);
  }
  return out;
}

/**
 * Box statements nested in one cluster per scope path (ordered as dot.py orders them: by scope
 * path, stable in creation order); records which boxes each cluster holds.
 * @param {Box[]} boxes
 * @param {Map<string, number>} indices  scope path key -> cluster index
 * @param {Map<string, string>} titles  scope path key -> its title, where more than its name
 * @param {Vocabulary} vocabulary
 * @param {Map<string, string[]>} members  filled: "cluster_<i>" -> box names
 * @returns {string[]}
 */
function clusterStatements(boxes, indices, titles, vocabulary, members) {
  const maxChars = vocabulary.max_label_chars ?? MAX_LABEL_CHARS;
  const sorted = boxes.map((box, index) => ({ box, index }))
    .sort((a, b) => compareScopes(a.box.scope, b.box.scope) || a.index - b.index);
  const lines = [];
  /** @type {Array<{name: string, title: string|null}>} */
  const open = [];
  for (const { box } of sorted) {
    let common = 0;
    while (common < open.length && common < box.scope.length && open[common].name === box.scope[common]) common++;
    while (open.length > common) {
      const level = /** @type {{title: string|null}} */ (open.pop());
      if (level.title) lines.push("  ".repeat(open.length + 1) + "}");
    }
    while (open.length < box.scope.length) {
      const name = box.scope[open.length];
      const key = scopeKey(box.scope.slice(0, open.length + 1));
      const index = indices.get(key);
      const indent = "  ".repeat(open.length + 1);
      const title = index === undefined ? null : `cluster_${index}`;
      if (title) {
        lines.push(`${indent}subgraph ${title} {`);
        const label = `label="${escape(titles.get(key) ?? name, maxChars)}"`;
        const style = [label, vocabulary.cluster, vocabulary.compact_cluster].filter(Boolean).join(", ");
        lines.push(`${indent}  graph [${style}];`);
      }
      open.push({ name, title });
    }
    for (const level of open) if (level.title) {
      let list = members.get(level.title);
      if (!list) members.set(level.title, (list = []));
      list.push(box.name);
    }
    lines.push("  ".repeat(open.length + 1) + box.statement);
  }
  while (open.length) {
    const level = /** @type {{title: string|null}} */ (open.pop());
    if (level.title) lines.push("  ".repeat(open.length + 1) + "}");
  }
  return lines;
}

/**
 * What one attribute body of the vocabulary means for an SVG shape, for restyling a drawing
 * without a layout: `color` -> stroke, `fillcolor` -> fill, `penwidth` -> stroke width,
 * `fontcolor` -> text fill, a dashed `style` -> a dash.
 * @param {string|undefined} body  e.g. `style="dashed,filled", color="#999999"`
 * @returns {{stroke?: string, fill?: string, width?: number, text?: string, dashed?: boolean}}
 */
export function svgStyle(body) {
  /** @type {Record<string, string>} */
  const attrs = {};
  const re = /(\w+)="((?:[^"\\]|\\.)*)"/g;
  let m;
  while ((m = re.exec(String(body || ""))) !== null) attrs[m[1]] = m[2];
  /** @type {{stroke?: string, fill?: string, width?: number, text?: string, dashed?: boolean}} */
  const out = {};
  if (attrs.color) out.stroke = attrs.color;
  if (attrs.fillcolor) out.fill = attrs.fillcolor;
  if (attrs.penwidth && Number.isFinite(Number(attrs.penwidth))) out.width = Number(attrs.penwidth);
  if (attrs.fontcolor) out.text = attrs.fontcolor;
  if (attrs.style !== undefined) out.dashed = /dashed/.test(attrs.style);
  return out;
}

/**
 * The note standing for N hidden nodes. `vocabulary.hidden` is a bare body (joined to the
 * label's list); one given with its brackets is appended as a second attribute list.
 * @param {number} n
 * @param {string} [hiddenAttrs]
 */
export function hiddenNote(n, hiddenAttrs) {
  const label = `label="${Math.floor(n)} nodes hidden"`;
  const attrs = (hiddenAttrs || "").trim();
  if (!attrs) return `hidden [${label}];`;
  if (attrs.startsWith("[")) return `hidden [${label}] ${attrs};`;
  return `hidden [${label}, ${attrs}];`;
}

/**
 * Order of scope paths as Python compares tuples of str (strings by code point).
 * @param {string[]} a
 * @param {string[]} b
 */
export function compareScopes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return compareCodePoints(a[i], b[i]);
  }
  return a.length - b.length;
}

/**
 * Compare strings by code point, as Python does (JavaScript's `<` compares UTF-16 units, which
 * puts an astral character before U+E000..U+FFFF).
 * @param {string} a
 * @param {string} b
 */
export function compareCodePoints(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral characters) after everything else of the BMP.
    if (x >= 0xd800) x += x >= 0xe000 ? -0x800 : 0x2000;
    if (y >= 0xd800) y += y >= 0xe000 ? -0x800 : 0x2000;
    return x - y;
  }
  return a.length - b.length;
}
