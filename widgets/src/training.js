// The "training" panel: the loss and the gradient norm of each backward pass, over the steps of
// a training loop, beside the graph of one step (PROTOCOL.md, "The training chart").
//
// NOTE [the training chart] Python folds each backward pass into its loss (the root's value,
// when it is one number) and the global norm of the gradients it gave the leaves (NOTE [loss
// and gradient norm per pass] in dyngraph/record.py), from every event, before any budget, and
// sends them with their texts beside the events (`delta.passes`). This module draws them: two
// small line charts (SVG made with DOM calls), the latest values, and a readout naming the
// step under the pointer (or clicked, or the one the graph shows at this position of the
// timeline). It computes no gradient and writes no number of Python's: every value shown is
// a text Python wrote. A lesson's one backward pass makes no chart (a single point says
// nothing of a trend): the panel appears from MIN_PASSES passes on.

import { make, setText } from "./text.js";

const SVG = "http://www.w3.org/2000/svg";

/** The panel shows from this many passes on. */
export const MIN_PASSES = 2;
/** The charts' drawing units (the SVG is stretched to the panel's width). */
export const CHART_W = 300;
export const CHART_H = 40;
/** Room above and below each line, in drawing units. */
const PAD = 4;

/**
 * One backward pass as the chart reads it.
 * @typedef {{step: number, loss: number|null, lossText: string|null, norm: number|null,
 *   normText: string|null, leaves: number, root: number|null}} Pass
 */

/**
 * A pass row as Python sends it (`[step, loss, loss text, grad norm, grad norm text, leaves,
 * root]`, view.py `pass_row`), or null for anything else.
 * @param {unknown} row
 * @returns {Pass|null}
 */
export function passOf(row) {
  if (!Array.isArray(row) || !Number.isInteger(row[0])) return null;
  const number = (/** @type {unknown} */ v) => (typeof v === "number" ? v : null);
  const text = (/** @type {unknown} */ v) => (typeof v === "string" ? v : null);
  return {
    step: row[0],
    loss: number(row[1]), lossText: text(row[2]),
    norm: number(row[3]), normText: text(row[4]),
    leaves: Number.isInteger(row[5]) ? row[5] : 0,
    root: Number.isInteger(row[6]) ? row[6] : null,
  };
}

/**
 * The pass the timeline shows at position t: the one of the newest `backward_started` step
 * before t, found by its root (the n-th pass from the same root, for a graph run backward
 * more than once); null before any, or when the pass is not among `passes`.
 * @param {Array<any[]>} steps
 * @param {Pass[]} passes
 * @param {number} t
 * @returns {number|null}  an index into `passes`
 */
export function passAt(steps, passes, t) {
  let start = -1;
  for (let i = Math.min(t, steps.length) - 1; i >= 0; i--) {
    if (steps[i][0] === "backward_started") { start = i; break; }
  }
  if (start < 0) return null;
  const root = steps[start][1];
  let nth = 0;
  for (let i = 0; i < start; i++) if (steps[i][0] === "backward_started" && steps[i][1] === root) nth++;
  for (let i = 0; i < passes.length; i++) {
    if (passes[i].root === root && nth-- === 0) return i;
  }
  return null;
}

/**
 * The path of a line through `values` (one per pass, evenly spaced over CHART_W, scaled to
 * CHART_H between their least and greatest finite value); a value that is not a finite
 * number (unknown, NaN, Inf) breaks the line. "" when nothing can be drawn.
 * @param {Array<number|null>} values
 * @returns {string}
 */
export function linePath(values) {
  const finite = values.filter((v) => typeof v === "number" && Number.isFinite(v));
  if (!finite.length) return "";
  const lo = Math.min(...finite);
  const hi = Math.max(...finite);
  const span = hi - lo;
  const n = values.length;
  const parts = [];
  let pen = false;
  values.forEach((v, i) => {
    if (typeof v !== "number" || !Number.isFinite(v)) {
      pen = false;
      return;
    }
    const x = n > 1 ? (i / (n - 1)) * CHART_W : CHART_W / 2;
    const y = span > 0 ? PAD + (1 - (v - lo) / span) * (CHART_H - 2 * PAD) : CHART_H / 2;
    parts.push(`${pen ? "L" : "M"}${round(x)},${round(y)}`);
    pen = true;
  });
  return parts.join(" ");
}

/**
 * The x of pass `index` of `n` in drawing units.
 * @param {number} index @param {number} n
 */
export function passX(index, n) {
  return n > 1 ? (index / (n - 1)) * CHART_W : CHART_W / 2;
}

/**
 * The pass nearest to a pointer at `fraction` (0: the chart's left edge, 1: its right) of a
 * chart of `n` passes.
 * @param {number} fraction @param {number} n
 * @returns {number}
 */
export function passNear(fraction, n) {
  if (n <= 1 || !Number.isFinite(fraction)) return 0;
  return Math.min(n - 1, Math.max(0, Math.round(fraction * (n - 1))));
}

/**
 * The readout of one pass: "step 7 · loss 0.2345 · grad norm 1.234 (4 leaves)".
 * @param {Pass} p
 * @returns {string}
 */
export function describePass(p) {
  const parts = [`step ${p.step}`];
  parts.push(`loss ${p.lossText ?? "\u2014"}`);
  const over = p.leaves ? ` (${p.leaves} lea${p.leaves === 1 ? "f" : "ves"})` : "";
  parts.push(`grad norm ${p.normText ?? "\u2014"}${over}`);
  return parts.join(" \u00B7 ");
}

/** @param {number} v */
function round(v) {
  return Math.round(v * 100) / 100;
}

/** The two series the panel draws: what each is called, and how a pass holds it. */
const SERIES = [
  {
    key: "loss", label: "loss",
    value: (/** @type {Pass} */ p) => p.loss, text: (/** @type {Pass} */ p) => p.lossText,
    about: "the value of each backward pass's root (the loss), when it is one number",
  },
  {
    key: "norm", label: "grad norm",
    value: (/** @type {Pass} */ p) => p.norm, text: (/** @type {Pass} */ p) => p.normText,
    about: "the global norm of the gradients each backward pass gave the leaves (parameters): "
      + "the square root of the sum of their squared norms",
  },
];

/**
 * The training panel of one view: call `update` with the passes and the pass the graph shows;
 * `dispose` removes its listeners.
 */
export class TrainingPanel {
  /** @param {Document} doc */
  constructor(doc) {
    this.doc = doc;
    /** @type {Pass[]} */
    this.passes = [];
    /** @type {number|null} the pass the graph shows at the playback position */
    this.current = null;
    /** @type {number|null} the pass under the pointer */
    this.hovered = null;
    /** @type {number|null} the pass the learner clicked (shown until clicked again) */
    this.pinned = null;
    /** what the charts were last drawn from */
    this.drawn = "";
    /** @type {Array<() => void>} */
    this.disposers = [];

    this.el = make(doc, "section", { className: "dg-panel dg-training", attrs: { "aria-label": "training" } });
    this.head = make(doc, "div", { className: "dg-panel-title", text: "training" });
    const body = make(doc, "div", { className: "dg-training-body" });
    /** @type {Array<{series: typeof SERIES[number], latest: HTMLElement, svg: SVGSVGElement,
     *   line: SVGPathElement, now: SVGLineElement, mark: SVGLineElement}>} */
    this.charts = SERIES.map((series) => {
      const row = make(doc, "div", { className: `dg-train-row dg-train-${series.key}` });
      const label = make(doc, "div", { className: "dg-train-label", attrs: { title: series.about } });
      const name = make(doc, "span", { className: "dg-train-name", text: series.label });
      const latest = make(doc, "span", { className: "dg-train-latest" });
      label.append(name, latest);
      const svg = /** @type {SVGSVGElement} */ (doc.createElementNS(SVG, "svg"));
      svg.setAttribute("class", "dg-train-chart");
      svg.setAttribute("viewBox", `0 0 ${CHART_W} ${CHART_H}`);
      svg.setAttribute("preserveAspectRatio", "none");
      svg.setAttribute("role", "img");
      const line = /** @type {SVGPathElement} */ (svgChild(doc, svg, "path", "dg-train-line"));
      const now = /** @type {SVGLineElement} */ (svgChild(doc, svg, "line", "dg-train-now"));
      const mark = /** @type {SVGLineElement} */ (svgChild(doc, svg, "line", "dg-train-mark"));
      for (const l of [now, mark]) {
        l.setAttribute("y1", "0");
        l.setAttribute("y2", String(CHART_H));
      }
      row.append(label, svg);
      body.appendChild(row);
      this.listen(svg, "pointermove", (/** @type {PointerEvent} */ e) => this.hover(this.passUnder(svg, e.clientX)));
      this.listen(svg, "pointerleave", () => this.hover(null));
      this.listen(svg, "click", (/** @type {MouseEvent} */ e) => this.pin(this.passUnder(svg, e.clientX)));
      return { series, latest, svg, line, now, mark };
    });
    this.readout = make(doc, "div", { className: "dg-train-readout" });
    body.appendChild(this.readout);
    this.el.append(this.head, body);
    this.el.hidden = true;
  }

  /** @param {EventTarget} target @param {string} type @param {(e: any) => void} fn */
  listen(target, type, fn) {
    target.addEventListener(type, fn);
    this.disposers.push(() => target.removeEventListener(type, fn));
  }

  dispose() {
    for (const undo of this.disposers.splice(0)) undo();
  }

  /**
   * Show `passes`, marking `current` (the pass the graph shows, or null).
   * @param {Pass[]} passes @param {number|null} current
   */
  update(passes, current) {
    this.passes = passes;
    this.current = current;
    this.el.hidden = passes.length < MIN_PASSES;
    if (this.el.hidden) return;
    if (this.pinned !== null && this.pinned >= passes.length) this.pinned = null;
    const n = passes.length;
    const last = passes[n - 1];
    const key = `${n}|${last.step}|${last.lossText}|${last.normText}`;
    if (key !== this.drawn) {
      this.drawn = key;
      setText(this.head, `training \u00B7 ${n} steps`);
      for (const chart of this.charts) {
        const values = passes.map(chart.series.value);
        chart.line.setAttribute("d", linePath(values));
        setText(chart.latest, chart.series.text(last) ?? "\u2014");
        chart.latest.setAttribute("title", `step ${last.step}, the latest`);
        chart.svg.setAttribute("aria-label", summary(chart.series.label, passes, chart.series.text));
      }
    }
    this.showMarks();
  }

  /**
   * The pass under a pointer at `clientX` over `svg`.
   * @param {SVGSVGElement} svg @param {number} clientX
   */
  passUnder(svg, clientX) {
    const box = svg.getBoundingClientRect();
    return passNear(box.width > 0 ? (clientX - box.left) / box.width : 1, this.passes.length);
  }

  /** @param {number|null} index */
  hover(index) {
    this.hovered = index;
    this.showMarks();
  }

  /** Click: pin that pass (its readout stays), or unpin it. @param {number} index */
  pin(index) {
    this.pinned = this.pinned === index ? null : index;
    this.showMarks();
  }

  /** The readout and the marks: the pass hovered, else pinned, else the one the graph shows, else the latest. */
  showMarks() {
    const n = this.passes.length;
    if (n < MIN_PASSES) return;
    const shown = this.hovered ?? this.pinned ?? this.current ?? n - 1;
    const p = this.passes[shown];
    let note = "";
    if (shown === this.current && this.hovered === null && this.pinned === null) note = " \u2014 the graph shows this step";
    else if (shown === n - 1 && this.hovered === null && this.pinned === null) note = " \u2014 the latest";
    setText(this.readout, p ? describePass(p) + note : "");
    this.readout.classList.toggle("dg-pinned", this.pinned !== null && this.hovered === null);
    for (const chart of this.charts) {
      placeLine(chart.mark, shown === this.current ? null : shown, n);
      placeLine(chart.now, this.current, n);
    }
  }
}

/**
 * Put a vertical line at pass `index` of `n` (hidden for null).
 * @param {SVGLineElement} line @param {number|null} index @param {number} n
 */
function placeLine(line, index, n) {
  if (index === null) {
    line.setAttribute("visibility", "hidden");
    return;
  }
  const x = String(round(passX(index, n)));
  line.setAttribute("x1", x);
  line.setAttribute("x2", x);
  line.removeAttribute("visibility");
}

/**
 * The chart as words, for its accessible name: "loss over 20 steps: 2.21 at step 1, 0.9679 at step 20".
 * @param {string} label @param {Pass[]} passes @param {(p: Pass) => string|null} text
 */
function summary(label, passes, text) {
  const first = passes[0];
  const last = passes[passes.length - 1];
  return `${label} over ${passes.length} steps: ${text(first) ?? "\u2014"} at step ${first.step}, `
    + `${text(last) ?? "\u2014"} at step ${last.step}`;
}

/**
 * An SVG child of `parent` with a class.
 * @param {Document} doc @param {Element} parent @param {string} tag @param {string} className
 */
function svgChild(doc, parent, tag, className) {
  const el = doc.createElementNS(SVG, tag);
  el.setAttribute("class", className);
  parent.appendChild(el);
  return el;
}

