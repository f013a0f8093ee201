// The timeline of one recording, as the browser holds it: the deltas Python sends, merged, and
// the graph at any playback position t. Pure logic, no DOM (see ../PROTOCOL.md).
//
// NOTE [no text of our own] Python (dyngraph/dot.py) writes every DOT statement; this module
// only chooses which statements make up the graph at position t and joins them. The one text
// it writes itself is the number N of `hidden [label="N nodes hidden", ...]`.

/**
 * @typedef {{forward?: string|null, grad?: string|null, freed?: string|null}} NodeDot
 * @typedef {{plain?: string|null, grad?: string|null}} EdgeDot
 * @typedef {{
 *   id: number, kind?: string, op?: string|null, scope: string[],
 *   file?: string|null, line?: number|null, cell?: number|null,
 *   dot: NodeDot, info: Record<string, unknown>, order: number
 * }} NodeRecord
 * @typedef {{src: number, dst: number, pos: number, dot: EdgeDot}} EdgeRecord
 * @typedef {Array<any>} Step  e.g. ["node", 7], ["grad", 7], ["freed", [7, 8]],
 *   ["backward_started", 9], ["backward_finished", 9], ["backward_failed", 9, "message"],
 *   ["version", 3, 1]
 * @typedef {{lines?: string[], output_attrs?: string, hidden_attrs?: string}} Header
 * @typedef {{
 *   seq?: number, nodes?: any[], edges?: any[], updates?: any[],
 *   clusters?: Record<string, string[]>, sources?: Record<string, string>,
 *   steps?: Step[], dropped?: {nodes?: number, steps?: number}
 * }} Delta
 */

/**
 * What the graph is at one position of the timeline.
 * @typedef {{
 *   t: number,
 *   dot: string,
 *   shown: number[],          node ids drawn, oldest first
 *   hidden: number,           how many older visible nodes the note stands for
 *   visible: number,          visible nodes before the budget (shown.length + hidden)
 *   outputs: Set<number>,
 *   grads: Set<number>,       nodes whose ["grad", id] step has been shown
 *   freed: Set<number>,
 *   highlight: Array<[number, number]>,   edges carrying the newest grad step: [src, dst]
 *   error: string|null,       message of a backward_failed step (until the next backward)
 *   newest: number|null,      the newest visible node
 * }} GraphState
 */

/** Outcome of offering a delta: applied, already had it, or a gap (ask for a resync). */
export const APPLIED = "applied";
export const STALE = "stale";
export const GAP = "gap";
export const EMPTY = "empty";

export class Timeline {
  constructor() {
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
    /** @type {Map<string, string[]>} scope path ("a/b") -> opening lines of its cluster */
    this.clusters = new Map();
    /** @type {Map<string, string>} file -> source text */
    this.sources = new Map();
    /** @type {Step[]} */
    this.steps = [];
    this.dropped = { nodes: 0, steps: 0 };
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
    this._merge(delta);
    this.seq = delta.seq;
    return APPLIED;
  }

  /** @param {Delta} delta */
  _merge(delta) {
    for (const n of delta.nodes || []) {
      const old = this.nodes.get(n.id);
      if (old) {
        Object.assign(old.dot, n.dot || {});
        Object.assign(old.info, n.info || {});
        continue;
      }
      this.nodes.set(n.id, {
        id: n.id,
        kind: n.kind,
        op: n.op ?? null,
        scope: Array.isArray(n.scope) ? n.scope.map(String) : [],
        file: n.file ?? null,
        line: n.line ?? null,
        cell: n.cell ?? null,
        dot: { ...(n.dot || {}) },
        info: { ...(n.info || {}) },
        order: this.nodes.size,
      });
    }
    for (const e of delta.edges || []) {
      const key = edgeKey(e.src, e.dst, e.pos ?? 0);
      const old = this.edges.get(key);
      if (old) Object.assign(old.dot, e.dot || {});
      else this.edges.set(key, { src: e.src, dst: e.dst, pos: e.pos ?? 0, dot: { ...(e.dot || {}) } });
    }
    for (const u of delta.updates || []) {
      if (Array.isArray(u.edge)) {
        const edge = this.edges.get(edgeKey(u.edge[0], u.edge[1], u.edge[2] ?? 0));
        if (edge) Object.assign(edge.dot, u.dot || {});
      } else {
        const node = this.nodes.get(u.id);
        if (node) {
          Object.assign(node.dot, u.dot || {});
          Object.assign(node.info, u.info || {});
        }
      }
    }
    for (const [path, lines] of Object.entries(delta.clusters || {})) {
      this.clusters.set(path, Array.isArray(lines) ? lines.map(String) : []);
    }
    for (const [file, text] of Object.entries(delta.sources || {})) {
      this.sources.set(file, String(text));
    }
    for (const step of delta.steps || []) {
      if (Array.isArray(step) && step.length > 0) this.steps.push(step);
    }
    if (delta.dropped) {
      this.dropped = { nodes: delta.dropped.nodes || 0, steps: delta.dropped.steps || 0 };
    }
  }

  get length() {
    return this.steps.length;
  }

  /**
   * The graph at position t (how many steps are shown).
   * @param {number} t
   * @param {Header} header
   * @param {{max_nodes?: number}} [options]
   * @returns {GraphState}
   */
  graphAt(t, header, options = {}) {
    t = clamp(t, 0, this.steps.length);
    const visible = [];
    const seen = new Set();
    const grads = new Set();
    const freed = new Set();
    let lastGrad = null;
    let error = null;
    let newest = null;
    for (let i = 0; i < t; i++) {
      const step = this.steps[i];
      switch (step[0]) {
        case "node":
          if (this.nodes.has(step[1]) && !seen.has(step[1])) {
            seen.add(step[1]);
            visible.push(step[1]);
          }
          if (this.nodes.has(step[1])) newest = step[1];
          break;
        case "grad":
          grads.add(step[1]);
          lastGrad = step[1];
          break;
        case "freed":
          for (const id of Array.isArray(step[1]) ? step[1] : [step[1]]) freed.add(id);
          break;
        case "backward_started":
          lastGrad = null;
          error = null;
          break;
        case "backward_finished":
          lastGrad = null;
          break;
        case "backward_failed":
          lastGrad = null;
          error = step[2] == null ? "backward failed" : String(step[2]);
          break;
        default:
          break; // "version" and kinds added later do not change the drawing
      }
    }

    // Outputs: visible nodes that no visible edge leaves (decided before the budget).
    const consumed = new Set();
    for (const e of this.edges.values()) {
      if (seen.has(e.src) && seen.has(e.dst)) consumed.add(e.src);
    }
    const outputs = new Set(visible.filter((id) => !consumed.has(id)));

    // The budget: past max_nodes, the oldest are replaced by one note (as dyngraph/dot.py does,
    // the note counts as one of the max_nodes boxes).
    const maxNodes = Math.max(1, Math.floor(options.max_nodes ?? Infinity));
    let shown = visible;
    let hidden = 0;
    if (visible.length > maxNodes) {
      const keep = Math.max(maxNodes - 1, 1);
      hidden = visible.length - keep;
      shown = visible.slice(hidden);
    }
    const shownSet = new Set(shown);

    const lines = ["digraph dyngraph {", ...((header && header.lines) || []).map(String)];
    if (hidden > 0) lines.push("  " + hiddenNote(hidden, header && header.hidden_attrs));
    const outputAttrs = (header && header.output_attrs) || "";
    const boxes = shown.map((id) => {
      const node = /** @type {NodeRecord} */ (this.nodes.get(id));
      let statement = nodeVariant(node, grads.has(id), freed.has(id));
      if (outputs.has(id) && outputAttrs) statement = withExtraAttributes(statement, outputAttrs);
      return { scope: node.scope, statement };
    });
    lines.push(...this._clusterLines(boxes));

    /** @type {Array<[number, number]>} */
    const highlight = [];
    for (const e of this.edges.values()) {
      if (!shownSet.has(e.src) || !shownSet.has(e.dst)) continue;
      const statement = grads.has(e.src) ? e.dot.grad ?? e.dot.plain : e.dot.plain;
      if (statement) lines.push("  " + statement);
      if (lastGrad !== null && e.src === lastGrad) highlight.push([e.src, e.dst]);
    }
    lines.push("}");

    return {
      t,
      dot: lines.join("\n") + "\n",
      shown,
      hidden,
      visible: visible.length,
      outputs,
      grads,
      freed,
      highlight,
      error,
      newest,
    };
  }

  /**
   * Node statements nested in one cluster per scope path (a nested scope's cluster inside its
   * parent's), ordered like dyngraph/dot.py: by scope path, stable in creation order.
   * A scope path without cluster lines gets no cluster (its nodes sit in the parent).
   * @param {Array<{scope: string[], statement: string}>} boxes
   * @returns {string[]}
   */
  _clusterLines(boxes) {
    const sorted = boxes
      .map((box, index) => ({ ...box, index }))
      .sort((a, b) => compareScopes(a.scope, b.scope) || a.index - b.index);
    const lines = [];
    /** @type {Array<{name: string, opened: boolean}>} */
    const open = [];
    for (const box of sorted) {
      let common = 0;
      while (common < open.length && common < box.scope.length && open[common].name === box.scope[common]) {
        common++;
      }
      while (open.length > common) {
        const level = /** @type {{opened: boolean}} */ (open.pop());
        if (level.opened) lines.push("  ".repeat(open.length + 1) + "}");
      }
      while (open.length < box.scope.length) {
        const name = box.scope[open.length];
        const path = box.scope.slice(0, open.length + 1).join("/");
        const head = this.clusters.get(path);
        const indent = "  ".repeat(open.length + 1);
        if (head) for (const line of head) lines.push(indent + line);
        open.push({ name, opened: Boolean(head) });
      }
      lines.push("  ".repeat(open.length + 1) + box.statement);
    }
    while (open.length) {
      const level = /** @type {{opened: boolean}} */ (open.pop());
      if (level.opened) lines.push("  ".repeat(open.length + 1) + "}");
    }
    return lines;
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
      const title = node.info.title ?? node.op ?? node.kind ?? "node";
      return node.info.name ? `${node.info.name} (${title})` : String(title);
    };
    switch (step[0]) {
      case "node":
        return `new ${name(step[1])}`;
      case "grad":
        return `gradient of ${name(step[1])}`;
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
 * The statement a node shows: `freed` after a freed step, `grad` after its grad step, else
 * `forward`; a null variant falls back to the previous one (never to a gradient not yet shown).
 * @param {NodeRecord} node
 * @param {boolean} hasGrad
 * @param {boolean} isFreed
 */
export function nodeVariant(node, hasGrad, isFreed) {
  const dot = node.dot;
  const grad = hasGrad ? dot.grad : null;
  const statement = (isFreed ? dot.freed : null) ?? grad ?? dot.forward;
  return statement ?? `n${node.id};`;
}

/**
 * `n7 [label=...];` + `[peripheries=2]` -> `n7 [label=...] [peripheries=2];` (DOT allows a
 * second attribute list).
 * @param {string} statement
 * @param {string} attrs
 */
export function withExtraAttributes(statement, attrs) {
  const body = statement.trimEnd().replace(/;$/, "");
  return `${body} ${attrs};`;
}

/**
 * The note standing for N hidden nodes. `hidden_attrs` may come with its brackets (a second
 * attribute list, like output_attrs) or without (joined to the label's list).
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

/** @param {number} src @param {number} dst @param {number} pos */
export function edgeKey(src, dst, pos) {
  return `${src},${dst},${pos}`;
}

/**
 * Order of scope paths as Python compares tuples of str.
 * @param {string[]} a
 * @param {string[]} b
 */
export function compareScopes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
}

/** @param {number} x @param {number} lo @param {number} hi */
export function clamp(x, lo, hi) {
  x = Number.isFinite(x) ? Math.floor(x) : lo;
  return Math.min(Math.max(x, lo), hi);
}
