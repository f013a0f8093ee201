// The timeline of one recording, as the browser holds it: the deltas Python sends, merged, and
// the state of every node at any playback position t. Pure logic, no DOM (see ../PROTOCOL.md).
// The drawing is made once per structure by ./structure.js (NOTE [layout once] there); a
// position of the timeline only restyles it, from what `stateAt` says.

import { foldEvents } from "./events.js";
import { passOf } from "./training.js";

/**
 * @typedef {import("./vocabulary.js").NodeData} NodeData
 * @typedef {import("./vocabulary.js").GradData} GradData
 * @typedef {NodeData & {scope: string[], order: number}} NodeRecord
 * @typedef {{src: number, dst: number, pos: number}} EdgeRecord
 * @typedef {Array<any>} Step  e.g. ["node", 7],
 *   ["grad", 7, [0.5, "NaN"], 1.2, false, ["0.5", "nan"], "1.2"] (its texts last),
 *   ["freed", [7, 8]], ["backward_started", 9, {file, line, cell} | null], ["backward_finished", 9],
 *   ["backward_failed", 9, "message"], ["version", 3, 1]
 * @typedef {{file: string|null, line: number|null, cell: number|null}} Where  a line of code
 * @typedef {{
 *   seq?: number, events?: any[], nodes?: any[], edges?: any[], sources?: Record<string, string>,
 *   kept_lines?: Record<string, Array<[number, number]>>, passes?: unknown[],
 *   steps?: Step[], reset?: boolean,
 *   dropped?: {nodes?: number, steps?: number, passes?: number, pass_nodes?: number, max_nodes?: number}
 * }} Delta  reset: forget what is held, this delta is everything (jupyter/kept.py NOTE [the newest passes])
 */

/**
 * What the graph is at one position of the timeline: what a playback step changes.
 * @typedef {{
 *   t: number,
 *   seen: Set<number>,        the nodes made before t
 *   visible: number[],        the same, oldest first
 *   grads: Map<number, GradData & {step: number}>,  the latest grad step of each node at t
 *   freed: Set<number>,
 *   lastGrad: number|null,    the node of the newest grad step of the pass t is in
 *   lastEdge: [number, number]|null,  [input, node] of an edge_grad step just before t
 *   error: string|null,       message of a backward_failed step (until the next backward)
 *   newest: number|null,      the newest visible node
 *   backward: {root: number, where: Where|null}|null,  the pass t is in (after its
 *                             backward_started, up to its end), with the line that called backward()
 * }} GraphState
 */

/** Outcome of offering a delta: applied, already had it, or a gap (ask for a resync). */
export const APPLIED = "applied";
export const STALE = "stale";
export const GAP = "gap";
export const EMPTY = "empty";

export class Timeline {
  constructor() {
    /** @type {{fields?: Record<string, string[]>, rules?: Record<string, string>}} the view's header: how to read events */
    this.header = {};
    this.clear();
  }

  /** Forget everything (a fresh, empty recording). */
  clear() {
    /** @type {number|null} the seq of the last delta applied; null: nothing yet */
    this.seq = null;
    /** @type {Map<number, NodeRecord>} */
    this.nodes = new Map();
    /** @type {Map<string, EdgeRecord>} key "src,dst,pos", in creation order */
    this.edges = new Map();
    /**
     * Scope path (its names joined by U+0000, which no two paths share) -> its cluster's index:
     * the order in which paths first appeared, a parent before its children (as Python numbered
     * them in protocol v1).
     * @type {Map<string, number>}
     */
    this.clusters = new Map();
    /** @type {Map<string, string>} file -> source text */
    this.sources = new Map();
    /** @type {Map<string, unknown>} file -> the stretches of its text kept (`kept_lines`) */
    this.kept = new Map();
    /** @type {Step[]} */
    this.steps = [];
    /** not kept (over Python's budget), and the oldest backward passes let go for the newest
     * (jupyter/kept.py NOTE [the newest passes]) with their nodes, under a budget of maxNodes */
    this.dropped = { nodes: 0, steps: 0, passes: 0, passNodes: 0, maxNodes: 0 };
    /** @type {import("./training.js").Pass[]} each finished backward pass's loss and gradient
     * norm, as Python folded them (training.js NOTE [the training chart]) */
    this.passes = [];
    /** @type {{version: number, ends: number[]}|null} where each beat ends (NOTE [beats]) */
    this._beats = null;
    /** bumped by every change of the data (a structure made from it is then stale) */
    this.version = (this.version || 0) + 1;
  }

  /**
   * Rebuild from a snapshot (the whole state as one delta). A snapshot without `seq` is the
   * empty state before the first delta.
   * @param {Delta|null|undefined} snapshot
   */
  loadSnapshot(snapshot) {
    this.clear();
    if (snapshot && typeof snapshot.seq === "number") {
      this._merge(snapshot);
      this.seq = snapshot.seq;
    }
  }

  /**
   * Apply `delta` if it is the next one. Before any delta (seq null) the first may be 0 or 1.
   * @param {Delta|null|undefined} delta
   * @returns {"applied"|"stale"|"gap"|"empty"}
   */
  offer(delta) {
    if (!delta || typeof delta.seq !== "number") return EMPTY;
    const expected = this.seq === null ? null : this.seq + 1;
    if (expected === null ? delta.seq > 1 : delta.seq > expected) return GAP;
    if (expected !== null && delta.seq < expected) return STALE;
    // Python dropped its oldest passes (jupyter/kept.py NOTE [the newest passes]): this delta holds
    // everything it keeps, and what we hold is forgotten first.
    if (delta.reset) this.clear();
    this._merge(delta);
    this.seq = delta.seq;
    return APPLIED;
  }

  /** @param {Delta} delta */
  _merge(delta) {
    this.version++;
    if (Array.isArray(delta.events)) {
      // The engine's events (protocol v3 on), folded here into nodes, edges and steps.
      delta = { ...delta, ...foldEvents(delta.events, this.header, (id) => this.nodes.has(id)) };
    }
    for (const n of delta.nodes || []) {
      if (!n || typeof n.id !== "number") continue;
      const old = this.nodes.get(n.id);
      const scope = Array.isArray(n.scope) ? n.scope.map(String) : [];
      this.nodes.set(n.id, { ...n, scope, order: old ? old.order : this.nodes.size });
      for (let depth = 1; depth <= scope.length; depth++) {
        const path = scopeKey(scope.slice(0, depth));
        if (!this.clusters.has(path)) this.clusters.set(path, this.clusters.size);
      }
    }
    for (const e of delta.edges || []) {
      const [src, dst, pos] = Array.isArray(e) ? e : [e && e.src, e && e.dst, e && e.pos];
      if (typeof src !== "number" || typeof dst !== "number") continue;
      const key = edgeKey(src, dst, pos ?? 0);
      if (!this.edges.has(key)) this.edges.set(key, { src, dst, pos: pos ?? 0 });
    }
    for (const [file, text] of Object.entries(delta.sources || {})) {
      this.sources.set(file, String(text));
      this.kept.delete(file); // a text comes with its stretches, or with none (an older state)
    }
    for (const [file, stretches] of Object.entries(delta.kept_lines || {})) {
      if (this.sources.has(file)) this.kept.set(file, stretches);
    }
    for (const step of delta.steps || []) {
      if (Array.isArray(step) && step.length > 0) this.steps.push(step);
    }
    for (const row of Array.isArray(delta.passes) ? delta.passes : []) {
      const p = passOf(row); // a delta carries the passes finished since the one before
      const last = this.passes[this.passes.length - 1];
      if (p && (!last || p.step > last.step)) this.passes.push(p);
    }
    if (delta.dropped) {
      const d = delta.dropped;
      this.dropped = {
        nodes: d.nodes || 0, steps: d.steps || 0,
        passes: d.passes || 0, passNodes: d.pass_nodes || 0, maxNodes: d.max_nodes || 0,
      };
    }
  }

  get length() {
    return this.steps.length;
  }

  /**
   * The state of every node at position t (how many steps are shown).
   * @param {number} t
   * @returns {GraphState}
   */
  stateAt(t) {
    t = clamp(t, 0, this.steps.length);
    const visible = [];
    const seen = new Set();
    /** @type {Map<number, GradData & {step: number}>} */
    const grads = new Map();
    const freed = new Set();
    let lastGrad = null;
    /** @type {[number, number]|null} */
    let lastEdge = null;
    let error = null;
    let newest = null;
    /** @type {{root: number, where: Where|null}|null} */
    let backward = null;
    for (let i = 0; i < t; i++) {
      const step = this.steps[i];
      if (step[0] !== "edge_grad") lastEdge = null;
      switch (step[0]) {
        case "node":
          if (this.nodes.has(step[1]) && !seen.has(step[1])) {
            seen.add(step[1]);
            visible.push(step[1]);
          }
          if (this.nodes.has(step[1])) newest = step[1];
          break;
        case "grad":
          grads.set(step[1], gradOfStep(step, i));
          lastGrad = step[1];
          break;
        case "edge_grad": // the contribution travels along input -> node, into the input
          lastEdge = [step[2], step[1]];
          break;
        case "freed":
          for (const id of Array.isArray(step[1]) ? step[1] : [step[1]]) freed.add(id);
          break;
        case "backward_started":
          lastGrad = null;
          error = null;
          backward = { root: step[1], where: whereOf(step[2]) };
          break;
        case "backward_finished":
          lastGrad = null;
          backward = null;
          break;
        case "backward_failed":
          lastGrad = null;
          error = step[2] == null ? "backward failed" : String(step[2]);
          backward = null;
          break;
        default:
          break; // "version" and kinds added later do not change the drawing
      }
    }
    return { t, seen, visible, grads, freed, lastGrad, lastEdge, error, newest, backward };
  }

  /** The latest gradient of every node over the whole timeline. */
  finalGrads() {
    return this.stateAt(this.steps.length).grads;
  }

  // NOTE [beats] Playback moves by beats, not by raw steps: what a person can take in at
  // once. A beat is the nodes one source line made (consecutive node steps with the same file,
  // line and cell; a graph announced at the start of a backward, with no line, is one beat), a
  // node's gradient together with the edges its backward sent along, or the freeing with the
  // end of the pass. In-place version steps ride along with the beat before them. Stepping
  // with the arrow keys still moves one raw step; playing and replaying move a beat at a time
  // (view/playback.js NOTE [replay]).

  /**
   * The position at which each beat ends, ascending; the last is the timeline's length.
   * Computed once per change of the data.
   * @returns {number[]}
   */
  beatEnds() {
    if (this._beats && this._beats.version === this.version) return this._beats.ends;
    const ends = [];
    for (let i = 0; i < this.steps.length; ) {
      i = this._beatEnd(i);
      ends.push(i);
    }
    this._beats = { version: this.version, ends };
    return ends;
  }

  /**
   * The end of the beat that starts at step i (NOTE [beats]).
   * @param {number} i
   * @returns {number}
   */
  _beatEnd(i) {
    const steps = this.steps;
    const n = steps.length;
    const kind = steps[i][0];
    let j = i + 1;
    if (kind === "node") {
      const line = this._lineOf(steps[i][1]);
      while (j < n && steps[j][0] === "node" && this._lineOf(steps[j][1]) === line) j++;
    } else if (kind === "backward_started" || kind === "grad" || kind === "edge_grad") {
      // backward_started with the root's gradient; a gradient with the edges it sends along
      if (kind === "backward_started" && j < n && steps[j][0] === "grad") j++;
      while (j < n && steps[j][0] === "edge_grad") j++;
    } else if (kind === "freed") {
      if (j < n && steps[j][0] === "backward_finished") j++;
    }
    while (j < n && steps[j][0] === "version") j++;
    return j;
  }

  /** The source line a node was made on, as one key ("" for none). @param {number} id */
  _lineOf(id) {
    const node = this.nodes.get(id);
    if (!node || node.line == null) return "";
    return `${node.file}\u0000${node.line}\u0000${node.cell}`;
  }

  /**
   * What kind of beat starts at position t: "line" (nodes of a source line), "grad" (backward)
   * or "other" (the freeing, the end of a pass); null at the end.
   * @param {number} t
   * @returns {"line"|"grad"|"other"|null}
   */
  beatKind(t) {
    const step = this.steps[t];
    if (!step) return null;
    if (step[0] === "node") return "line";
    if (step[0] === "grad" || step[0] === "edge_grad" || step[0] === "backward_started") return "grad";
    return "other";
  }

  /**
   * Where "end of forward" is: the position just before the next `backward_started` after t
   * (wrapping to the first); the whole timeline when there is no backward pass.
   * @param {number} t
   * @returns {number}
   */
  endOfForward(t) {
    const starts = this.backwardStarts();
    if (!starts.length) return this.steps.length;
    return starts.find((i) => i > t) ?? starts[0];
  }

  /**
   * Where "start of backward" is: the position just after the next `backward_started` after t
   * (wrapping to the first); null when there is no backward pass.
   * @param {number} t
   * @returns {number|null}
   */
  startOfBackward(t) {
    const starts = this.backwardStarts().map((i) => i + 1);
    if (!starts.length) return null;
    return starts.find((p) => p > t) ?? starts[0];
  }

  /** @returns {number[]} indices of the backward_started steps */
  backwardStarts() {
    const out = [];
    for (let i = 0; i < this.steps.length; i++) if (this.steps[i][0] === "backward_started") out.push(i);
    return out;
  }

  /**
   * The newest shown node made on `file`:`line`, or null.
   * @param {string} file
   * @param {number} line
   * @param {number[]} shown
   */
  nodeOnLine(file, line, shown) {
    for (let i = shown.length - 1; i >= 0; i--) {
      const node = this.nodes.get(shown[i]);
      if (node && node.file === file && node.line === line) return node.id;
    }
    return null;
  }

  /**
   * A short description of step i, for the position label (text only).
   * @param {number} i
   * @returns {string}
   */
  describeStep(i) {
    const step = this.steps[i];
    if (!step) return "start";
    const name = (/** @type {number} */ id) => {
      const node = this.nodes.get(id);
      if (!node) return `#${id}`;
      const title = nodeTitle(node);
      return node.name != null && node.name !== "" ? `${node.name} (${title})` : title;
    };
    switch (step[0]) {
      case "node":
        return `new ${name(step[1])}`;
      case "grad":
        return `gradient of ${name(step[1])}`;
      case "edge_grad":
        return `${name(step[1])} sends to ${name(step[2])}`;
      case "freed": {
        const ids = Array.isArray(step[1]) ? step[1] : [step[1]];
        return `freed ${ids.length} buffer${ids.length === 1 ? "" : "s"}`;
      }
      case "backward_started":
        return `backward from ${name(step[1])}`;
      case "backward_finished":
        return "backward finished";
      case "backward_failed":
        return "backward failed";
      case "version":
        return `in-place change of ${name(step[1])}`;
      default:
        return String(step[0]);
    }
  }
}

/**
 * The line of a backward_started step (`{file, line, cell}`), or null when it names none.
 * @param {unknown} where
 * @returns {Where|null}
 */
function whereOf(where) {
  if (!where || typeof where !== "object") return null;
  const { file, line, cell } = /** @type {any} */ (where);
  if (typeof file !== "string" || !file) return null;
  return { file, line: Number.isInteger(line) ? line : null, cell: Number.isInteger(cell) ? cell : null };
}

/**
 * What the inspector and the position label call a node: its op for ops, else its kind.
 * @param {{kind?: string, op?: string|null}} node
 * @returns {string}
 */
export function nodeTitle(node) {
  const title = node.kind === "op" ? node.op ?? node.kind : node.kind ?? node.op;
  return title == null ? "node" : String(title);
}

/**
 * The latest grad step of node `id` at position t (before step index t), and whether one comes
 * later in the timeline.
 * @param {Step[]} steps
 * @param {number} id
 * @param {number} t
 * @returns {{grad: (GradData & {step: number})|null, later: boolean}}
 */
export function gradAt(steps, id, t) {
  /** @type {(GradData & {step: number})|null} */
  let grad = null;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i];
    if (step[0] !== "grad" || step[1] !== id) continue;
    if (i >= t) return { grad, later: true };
    grad = gradOfStep(step, i);
  }
  return { grad, later: false };
}

/**
 * A node's gradient as a `grad` step carries it: ["grad", id, preview, norm, summed,
 * preview's texts, norm's text] (PROTOCOL.md, "The fold"), found at index i.
 * @param {Step} step
 * @param {number} i
 * @returns {GradData & {step: number}}
 */
export function gradOfStep(step, i) {
  return {
    preview: step[2], norm: step[3] ?? null, summed: Boolean(step[4]),
    previewText: Array.isArray(step[5]) ? step[5] : [], normText: step[6] ?? null, step: i,
  };
}

/**
 * The note under a view whose oldest backward passes Python let go for the newest (view.py
 * NOTE [the newest passes]): how many, and how to keep more.
 * @param {{passes: number, passNodes: number, maxNodes: number}} dropped
 */
export function olderPassesNote(dropped) {
  const passes = dropped.passes === 1 ? "backward pass" : `${dropped.passes} backward passes`;
  const budget = dropped.maxNodes ? ` of ${dropped.maxNodes} nodes` : "";
  return `Showing the newest passes: the oldest ${passes} (forward and backward, ${dropped.passNodes} nodes) `
    + `were dropped to stay within the view's budget${budget}; dg.watch(max_nodes=...) keeps more.`;
}

/** The key of a scope path in `Timeline.clusters`. @param {string[]} path */
export function scopeKey(path) {
  return path.join("\u0000");
}

/** @param {number} src @param {number} dst @param {number} pos */
export function edgeKey(src, dst, pos) {
  return `${src},${dst},${pos}`;
}

/** @param {number} x @param {number} lo @param {number} hi */
export function clamp(x, lo, hi) {
  x = Number.isFinite(x) ? Math.floor(x) : lo;
  return Math.min(Math.max(x, lo), hi);
}
