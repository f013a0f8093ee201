// The drawing of one view: the structure laid out (coalesced, NOTE [rate]), indexed, placed in
// its pane (fit, zoom, pan), made readable (NOTE [readable]), and restyled for each position of
// the timeline (structure.js NOTE [layout once]). The renderer is passed in (d3-free under
// jsdom); this module owns what it drew and the view onto it.

import { createScheduler, useTweens, nextTask } from "../coalesce.js";
import { setText } from "../text.js";
import { svgStyle } from "../structure.js";
import { formatValues, magnitudeLevel, anomalyOf } from "../vocabulary.js";
import { fitView, zoomAt, viewBox, panToShow, FIT_MAX } from "../zoom.js";

/** Labels are readable from this size on screen (px); "values & grads" never goes below it. */
export const READABLE_PX = 9;
/** Drawings of at most this many boxes may be turned to use the pane's width (NOTE [turn]). */
export const TURN_UP_TO = 120;
/** The line a turned structure adds to the header's (structure.js, opts.rankdir). */
const TURNED_LINE = '  graph [rankdir="LR"];\n';
/** A drawing of (or replacing one of) more boxes than this is taken in over several tasks. */
const YIELD_OVER = 150;
/** A click on a rolled-up loop opens at most this many iterations (NOTE [a loop opens a few
 * iterations at a time] in structure.js). */
export const MAX_OPEN = 8;

/**
 * @typedef {import("../structure.js").Structure} Structure
 * @typedef {import("../timeline.js").GraphState} GraphState
 * @typedef {{render: (dot: string, tween: boolean) => (Promise<unknown>|unknown), destroy?: () => void}} Renderer
 * @typedef {{dot: string, tween: boolean, structure: Structure}} Job
 */

/** A promise that resolves after the page's next frame (its style and layout done on its own). */
function nextFrame() {
  return new Promise((resolve) => {
    const raf = globalThis.requestAnimationFrame;
    if (typeof raf === "function") raf(() => setTimeout(resolve, 0));
    else setTimeout(resolve, 0);
  });
}

export class Drawing {
  /**
   * @param {{
   *   doc: Document, root: HTMLElement, graphEl: HTMLElement, busySign: HTMLElement,
   *   renderer: Renderer, reducedMotion?: boolean,
   *   timeline: import("../timeline.js").Timeline, state: import("./state.js").ViewState,
   *   header: () => any,
   *   on: {relayout: () => void, groups: () => void, notes: () => void},
   * }} parts  on.relayout: lay the structure out again (the view changed a choice to read the
   *   drawing, NOTE [readable]); on.groups: the groups bar may change; on.notes: the render
   *   error changed
   */
  constructor({ doc, root, graphEl, busySign, renderer, reducedMotion, timeline, state, header, on }) {
    this.doc = doc;
    this.root = root;
    this.graphEl = graphEl;
    this.busySign = busySign;
    this.renderer = renderer;
    this.reducedMotion = reducedMotion;
    this.timeline = timeline;
    this.state = state;
    this.header = header;
    this.on = on;
    /** @type {GraphState|null} the position the drawing shows (or is about to) */
    this.graph = null;
    /** @type {string|null} the DOT on the page */
    this.renderedDot = null;
    /** @type {string|null} why Graphviz could not draw the last structure */
    this.renderError = null;
    /** @type {Structure|null} the structure of the drawing on the page */
    this.drawn = null;
    /** name -> its drawn element, its shapes and texts, and the state last applied to it */
    this.elements = /** @type {Map<string, {el: Element, shapes: Element[], texts: Element[], applied: string}>} */ (new Map());
    /** the zoom: px per graph unit and the graph point at the pane's top left; user: the learner moved it */
    this.zoom = { scale: 1, x: 0, y: 0, user: false };
    /** the drawing's size in graph units */
    this.size = { width: 0, height: 0 };
    /** the smallest font size of the drawing's labels, in graph units */
    this.labelUnits = 10;
    /** when the last layout ended and how long it took (live growth is rate-bounded by it) */
    this.layoutEnded = 0;
    this.layoutMs = 0;
    /** the next layout is the view's own answer to an unreadable drawing: no NOTE [rate] wait */
    this.hurry = false;
    /** a layout the learner asked for (a group opened or rolled up, "values & grads") is under
     * way: the busy sign shows, and the group buttons wait for it (NOTE [busy]) */
    this.busy = false;
    /** the box of what just happened (the newest node, the node the gradient reached) */
    this.activeName = /** @type {string|null} */ (null);
    /** the position the graph was last scrolled to show (see restyle) */
    this.revealedAt = -1;
    /** the structures (their DOT, unturned) laid out both ways already; while the other way is
     * being laid out, the fitted scale and direction of the drawing before it, else null */
    this.turnTried = /** @type {string[]} */ ([]);
    this.turnFrom = /** @type {{scale: number, rankdir: "TB"|"LR"}|null} */ (null);
    this.disposed = false;
    this.scheduler = createScheduler((/** @type {Job} */ job) => this.draw(job));
  }

  /**
   * Show position `g` of `structure`: a new structure (live growth, a toggle, a group opened)
   * is laid out (coalesced); the same one is restyled, not laid out again.
   * @param {GraphState} g @param {Structure} structure @param {number|undefined} tweenMax  options.tween_max_nodes
   */
  show(g, structure, tweenMax) {
    this.graph = g;
    if (structure.dot !== this.renderedDot) {
      const tween = useTweens(structure.boxes.length, tweenMax, this.reducedMotion);
      this.root.classList.toggle("dg-animate", tween);
      this.scheduler.request({ dot: structure.dot, tween, structure });
    } else if (!this.scheduler.running) {
      this.restyle();
    }
  }

  /** Is a layout under way or waiting, or none on the page yet (playback waits for it)? */
  laying() {
    return this.scheduler.running || this.scheduler.pending || (this.renderedDot === null && this.renderError === null);
  }

  /** Lay out and put in one structure (the scheduler's job), then place and restyle it. @param {Job} job */
  async draw(job) {
    if (job.dot !== this.renderedDot) {
      // NOTE [rate] A layout blocks the page while Graphviz runs; while data streams in, leave
      // the page at least twice that long between two layouts.
      // A layout the learner asked for (NOTE [busy]) does not wait: the learner is waiting.
      const wait = this.layoutEnded + 2 * this.layoutMs - performance.now();
      if (wait > 0 && this.renderedDot !== null && !this.busy && !this.hurry) await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 1000)));
      this.hurry = false;
      if (this.disposed) return;
      try {
        const started = performance.now();
        await this.renderer.render(job.dot, job.tween);
        this.layoutMs = performance.now() - started;
        this.layoutEnded = performance.now();
        // NOTE [layout worker] in renderer.js: the page's share of a large drawing comes in
        // several tasks (parse, make inert, put in: the renderer; then the browser lays the
        // new SVG out on its own; then index and fit; then restyle), none long.
        const large = this.elements.size > YIELD_OVER || job.structure.boxes.length > YIELD_OVER;
        if (large) await nextFrame();
        if (this.disposed) return;
        this.drawn = job.structure;
        // on the page now: a layout asked for while placing it (NOTE [turn]: back to the
        // other direction) compares with this drawing, not the one before it
        this.renderedDot = job.dot;
        this.indexDrawing();
        this.labelEdges(job.structure);
        this.placeDrawing();
        if (!this.scheduler.pending) this.setBusy(false);
        this.on.groups(); // the buttons change with the drawing, not before it
        // How long the last drawing took, and how many there were: numbers a test (or a
        // curious learner in the devtools) can read.
        this.graphEl.dataset.renderMs = String(Math.round(performance.now() - started));
        this.graphEl.dataset.renders = String(Number(this.graphEl.dataset.renders || 0) + 1);
        if (this.renderError !== null) {
          this.renderError = null;
          this.on.notes();
        }
        if (large) await nextTask();
      } catch (error) {
        this.renderError = error instanceof Error ? error.message : String(error);
        this.setBusy(false);
        this.on.notes();
      }
    }
    if (!this.disposed) this.restyle();
  }

  /**
   * NOTE [busy] On while a layout the learner asked for is under way: the sign shows, the group
   * buttons are disabled (a second click does not undo the first before anything was drawn),
   * and the layout skips NOTE [rate]'s wait. Off when that drawing is on the page.
   * @param {boolean} on
   */
  setBusy(on) {
    if (this.busy === on) return;
    this.busy = on;
    setText(this.busySign, on ? "laying out\u2026" : "");
    this.busySign.hidden = !on;
    this.graphEl.setAttribute("aria-busy", String(on));
    this.on.groups();
  }

  /** The name of every drawn node, edge and cluster -> its element, shapes and label lines. */
  indexDrawing() {
    this.elements.clear();
    const svg = this.graphEl.querySelector("svg");
    if (!svg) return;
    for (const el of Array.from(svg.querySelectorAll("g.node, g.edge, g.cluster"))) {
      const shapes = Array.from(el.children).filter((c) => c.localName !== "title" && c.localName !== "text");
      const texts = Array.from(el.querySelectorAll("text"));
      this.elements.set(titleOf(el), { el, shapes, texts, applied: "" });
    }
  }

  /**
   * structure.js NOTE [shapes on edges]: the shape flowing out of a module's box, written
   * beside the middle of its edge (right of it, or above it when the drawing is turned), in
   * the labels' font; as text, like every label.
   * @param {Structure} s
   */
  labelEdges(s) {
    const size = smallestFont(this.graphEl.querySelector("svg") || this.graphEl);
    const turned = this.state.turned();
    for (const edge of s.edges) {
      const item = edge.label ? this.elements.get(edge.name) : undefined;
      const path = item ? /** @type {SVGPathElement|null} */ (item.el.querySelector("path")) : null;
      if (!item || !path || typeof path.getTotalLength !== "function") continue;
      const mid = path.getPointAtLength(path.getTotalLength() / 2);
      const text = this.doc.createElementNS("http://www.w3.org/2000/svg", "text");
      text.setAttribute("class", "dg-edge-shape");
      text.setAttribute("font-size", String(size));
      text.setAttribute("text-anchor", turned ? "middle" : "start");
      // beside the edge: right of it, vertically centred; turned, above the boxes it joins
      text.setAttribute("x", String(turned ? mid.x : mid.x + 5));
      text.setAttribute("y", String(turned ? mid.y - size : mid.y + size * 0.35));
      setText(text, /** @type {string} */ (edge.label));
      item.el.appendChild(text);
    }
  }

  /** The pane's size in px (0 x 0 when not laid out: jsdom, a hidden tab). */
  paneSize() {
    return { width: this.graphEl.clientWidth, height: this.graphEl.clientHeight };
  }

  /** Are labels with numbers shown (NOTE [numbers] in state.js)? */
  detailShown() {
    return this.state.detailShown(this.timeline);
  }

  /** After a layout: size the pane to the drawing, then fit it, or keep the learner's view. */
  placeDrawing() {
    const svg = this.graphEl.querySelector("svg");
    if (!svg) return;
    const box = (svg.getAttribute("viewBox") || "").trim().split(/[\s,]+/).map(Number);
    const [width, height] = box.length === 4 && box.every(Number.isFinite) ? [box[2], box[3]] : [0, 0];
    this.size = { width, height };
    svg.setAttribute("width", "100%");
    svg.setAttribute("height", "100%");
    svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
    this.labelUnits = smallestFont(svg);
    this.sizePane();
    const opened = this.state.takeOpened();
    if (opened !== null && this.showGroup(opened)) return;
    if (this.zoom.user) this.applyZoom();
    else {
      this.fit(this.detailShown());
      this.rollUpToRead();
    }
  }

  /**
   * After a loop or scope was opened: zoom toward its nodes (NOTE [fit]), as large as fits but
   * never below readable labels. False when none of them is drawn.
   * @param {number[]} members
   */
  showGroup(members) {
    let pane = this.paneSize();
    const targets = this.elementsOf(members);
    if (!targets.length || !pane.width || !pane.height || !this.graphEl.getBoundingClientRect) return false;
    this.fit();
    const rect = this.graphRect(targets);
    if (!rect) return false;
    const floor = this.readableScale();
    // as large as fits across the ranks, then the pane as tall as the drawing at that scale
    const tallest = tallestPane(this.doc);
    const across = this.state.turned() ? pane.width / (rect.width + 16) : Math.min(pane.width / (rect.width + 16), tallest / (rect.height + 16));
    let scale = Math.max(Math.min(across, FIT_MAX), Math.min(floor, FIT_MAX));
    this.sizePane(scale);
    pane = this.paneSize();
    scale = Math.max(Math.min(pane.width / (rect.width + 16), pane.height / (rect.height + 16), FIT_MAX), Math.min(floor, FIT_MAX));
    const view = { width: pane.width / scale, height: pane.height / scale };
    // centred on the group where it fits; else its start (top-left) in view
    const x = rect.width <= view.width ? rect.x + rect.width / 2 - view.width / 2 : rect.x - 8 / scale;
    const y = rect.height <= view.height ? rect.y + rect.height / 2 - view.height / 2 : rect.y - 8 / scale;
    this.zoom = { scale, x, y, user: true };
    this.applyZoom();
    return true;
  }

  /** The drawn elements of the nodes `ids` (those drawn). @param {number[]} ids */
  elementsOf(ids) {
    return ids.map((id) => this.elements.get(`n${id}`)).filter(Boolean).map((item) => /** @type {{el: Element}} */ (item).el);
  }

  /**
   * The union of the screen boxes of `targets`, in graph units of the current zoom.
   * @param {Element[]} targets
   */
  graphRect(targets) {
    const view = this.graphEl.getBoundingClientRect();
    const rects = targets.map((t) => t.getBoundingClientRect());
    const left = Math.min(...rects.map((r) => r.left));
    const top = Math.min(...rects.map((r) => r.top));
    const right = Math.max(...rects.map((r) => r.right));
    const bottom = Math.max(...rects.map((r) => r.bottom));
    if (right - left === 0 && bottom - top === 0) return null;
    const k = this.zoom.scale;
    return {
      x: this.zoom.x + (left - view.left) / k, y: this.zoom.y + (top - view.top) / k,
      width: (right - left) / k, height: (bottom - top) / k,
    };
  }

  /**
   * NOTE [readable] When the whole drawing fitted into the pane would have labels under
   * READABLE_PX: a drawing of modules becomes their map (levels.js NOTE [map]; once: the
   * learner opens its boxes by a click), after dropping the numbers a small graph shows unasked
   * (NOTE [numbers]; not a graph of scalars, whose numbers are the point); any other is first
   * turned (NOTE [turn]), then loses those numbers. Each is one more layout, laid out at once
   * (`hurry`: no NOTE [rate] wait, the learner is looking at an unreadable drawing); a map
   * stays as it is. True when it asked for a layout.
   *
   * NOTE [turn] A drawing that would be unreadable fitted into the pane, limited along its
   * ranks (laid out top to bottom, its height the limit: a long chain such as micrograd's
   * README example), is laid out the other way too, once per structure, and drawn the way
   * that fits larger. A new structure (the graph grew, a group opened) starts in the
   * direction of the last one, so a growing graph changes direction only when the other one
   * is better for it.
   */
  rollUpToRead() {
    const pane = this.paneSize();
    const s = this.drawn;
    const state = this.state;
    if (!s || !pane.width || !pane.height) return false;
    // the room the drawing may have: the pane's width, and as tall as the pane may grow
    const room = { width: pane.width - 8, height: tallestPane(this.doc) - 8 };
    const whole = fitView(this.size, room);
    if (this.turnFrom !== null) {
      // this drawing is the turned one: keep it if it fits larger than the one before it
      const before = this.turnFrom;
      this.turnFrom = null;
      if (whole.scale < before.scale) {
        state.turn(before.rankdir); // back to a layout the renderer has kept
        return this.relayoutNow();
      }
    }
    if (state.map || s.map || whole.scale >= this.readableScale()) return false;
    const numbers = state.detail === null && this.detailShown() && !state.scalarGraph(this.timeline);
    if (s.mappable) {
      // a drawing of modules: its map, one layout (the numbers of a small one go first)
      if (numbers) state.compactNumbers();
      else state.drawMap();
      return this.relayoutNow();
    }
    const tall = this.size.height * room.width > this.size.width * room.height;
    const structure = s.dot.replace(TURNED_LINE, "");
    if (tall !== state.turned() && !this.turnTried.includes(structure) && s.boxes.length <= TURN_UP_TO) {
      this.turnTried = [...this.turnTried.slice(-7), structure];
      this.turnFrom = { scale: whole.scale, rankdir: state.rankdir };
      state.turn();
      return this.relayoutNow();
    }
    if (numbers) {
      // numbers the learner did not ask for, too big for the pane: compact labels first
      state.compactNumbers();
      return this.relayoutNow();
    }
    return false;
  }

  /** Lay the structure out again at once (NOTE [readable]: no NOTE [rate] wait). */
  relayoutNow() {
    this.hurry = true;
    this.on.relayout();
    return true;
  }

  /** The least scale at which the drawing's smallest label is READABLE_PX on screen. */
  readableScale() {
    return READABLE_PX / Math.max(this.labelUnits, 1);
  }

  /**
   * The pane as tall as the drawing is at the scale its width allows (no empty bands), or at
   * the scale it is shown at when larger (readable numbers, a group opened, the learner's
   * zoom), within limits: after each layout, and again whenever the pane's width or the
   * window's height changes (a narrow window, a resized sidebar), so the height never stays
   * the one computed for another width.
   * @param {number} [least]  the scale the drawing is about to be shown at
   */
  sizePane(least = 0) {
    const { width, height } = this.size;
    if (!width || !height) return;
    const graphEl = this.graphEl;
    const tallest = tallestPane(this.doc);
    let across = graphEl.clientWidth > 0 ? Math.min(FIT_MAX, (graphEl.clientWidth - 8) / width) : FIT_MAX;
    if (this.detailShown()) across = Math.max(across, Math.min(this.readableScale(), FIT_MAX)); // fit(true)
    if (this.zoom.user) across = Math.max(across, this.zoom.scale); // the learner's zoom
    across = Math.max(across, least);
    const px = `${Math.min(tallest, Math.max(180, Math.ceil(height * across) + 16))}px`;
    if (graphEl.style.height !== px) {
      graphEl.style.height = px;
      this.root.style.setProperty("--dg-pane-height", px); // the side panels beside it are no taller
    }
  }

  /**
   * Fit the whole drawing in the pane. With `readable` (labels with numbers, NOTE [numbers]),
   * never below readable labels: a drawing too large for that shows its start (the inputs: its
   * top, or its left when turned), centred across, and the learner pans (or presses fit) for
   * the rest; playback pans to what happens.
   * @param {boolean} [readable]
   */
  fit(readable = false) {
    const pane = this.paneSize();
    if (!pane.width || !pane.height || !this.size.width) return;
    const inner = { width: pane.width - 8, height: pane.height - 8 };
    this.zoom = { ...fitView(this.size, inner), user: false };
    const floor = Math.min(this.readableScale(), FIT_MAX);
    if (readable && this.zoom.scale < floor) {
      const scale = floor;
      const view = { width: inner.width / scale, height: inner.height / scale };
      const { width, height } = this.size;
      const turned = this.state.turned();
      // centred along an axis the drawing fits, else at its start along the ranks
      const x = width <= view.width || !turned ? (width - view.width) / 2 : 0;
      const y = height <= view.height || turned ? (height - view.height) / 2 : 0;
      this.zoom = { scale, x, y, user: false };
    }
    this.zoom.x -= 4 / this.zoom.scale;
    this.zoom.y -= 4 / this.zoom.scale;
    this.applyZoom();
  }

  /** A new width or height of the pane: the learner's zoom kept, else fitted again. */
  refit() {
    if (this.zoom.user) this.applyZoom();
    else this.fit(this.detailShown());
  }

  /** Back to the whole drawing at the next layout (a group rolled up again). */
  unzoom() {
    this.zoom = { ...this.zoom, user: false };
  }

  applyZoom() {
    const svg = this.graphEl.querySelector("svg");
    const pane = this.paneSize();
    if (!svg || !pane.width || !pane.height) return;
    svg.setAttribute("viewBox", viewBox(this.zoom, pane));
    this.graphEl.dataset.scale = String(Math.round(this.zoom.scale * 1000) / 1000);
  }

  /**
   * Zoom by `factor` about a pane point: the one given (the wheel's), else the selected or the
   * current node where it is in view (the buttons and keys zoom toward what is being looked
   * at), else the pane's centre.
   * @param {number} factor @param {number} [px] @param {number} [py]
   */
  zoomBy(factor, px, py) {
    const pane = this.paneSize();
    const about = px !== undefined && py !== undefined ? { x: px, y: py } : this.focusPoint(pane);
    this.zoom = { ...zoomAt(this.zoom, factor, about.x, about.y), user: true };
    this.applyZoom();
  }

  /**
   * Pan by a drag of (dx, dy) px from the zoom `from` it started at.
   * @param {{scale: number, x: number, y: number}} from @param {number} dx @param {number} dy
   */
  panFrom(from, dx, dy) {
    this.zoom = { scale: from.scale, x: from.x - dx / from.scale, y: from.y - dy / from.scale, user: true };
    this.applyZoom();
  }

  /** The pane point of the selected (else the current) box when in view, else the centre. @param {{width: number, height: number}} pane */
  focusPoint(pane) {
    const centre = { x: pane.width / 2, y: pane.height / 2 };
    const s = this.drawn;
    const selected = this.state.selected;
    const name = selected !== null && s ? s.owner.get(selected) : this.activeName;
    const item = name ? this.elements.get(name) : undefined;
    if (!item || !this.graphEl.getBoundingClientRect) return centre;
    const view = this.graphEl.getBoundingClientRect();
    const r = item.el.getBoundingClientRect();
    const x = (r.left + r.right) / 2 - view.left;
    const y = (r.top + r.bottom) / 2 - view.top;
    return x >= 0 && y >= 0 && x <= pane.width && y <= pane.height && r.width > 0 ? { x, y } : centre;
  }

  /**
   * How many more iterations of `loop` to open: as many as the pane shows with readable labels,
   * judged by the size of an iteration already drawn (the one before the box, or the last one
   * opened), along the drawing's ranks; at least one, at most MAX_OPEN.
   * @param {import("../structure.js").Loop} loop @param {number} opened
   */
  iterationsToOpen(loop, opened) {
    const pane = this.paneSize();
    const targets = this.elementsOf(opened > 0 ? loop.iterations[opened - 1] : loop.first);
    const rect = targets.length && pane.width && this.graphEl.getBoundingClientRect ? this.graphRect(targets) : null;
    if (!rect) return 1;
    const turned = this.state.turned();
    const across = turned ? rect.width : rect.height;
    const room = (turned ? pane.width : pane.height) / Math.min(this.readableScale(), FIT_MAX) - 24;
    return Math.min(Math.max(Math.floor(room / Math.max(across, 1)), 1), MAX_OPEN);
  }

  /**
   * Restyle the drawing for the position: no layout (NOTE [layout once] in structure.js).
   * Each box and edge gets the classes and the few label lines of its state at t; only what
   * changed since the last restyle is touched.
   */
  restyle() {
    const g = this.graph;
    const s = this.drawn;
    if (!g || !s || !this.elements.size) return;
    const shownBox = this.restyleBoxes(g, s);
    this.restyleEdges(g, s, shownBox);
    for (const [title, names] of s.clusters) {
      const item = this.elements.get(title);
      if (!item) continue;
      const visible = names.some((n) => shownBox.get(n));
      if (item.applied !== String(visible)) {
        item.applied = String(visible);
        item.el.classList.toggle("dg-future", !visible);
      }
    }
    // The timeline position the drawing now shows (a test waits for it to match the slider).
    this.graphEl.dataset.shownStep = String(g.t);
    // After a move in the timeline, pan (only pan) so that what just happened is in view.
    if (g.t !== this.revealedAt) {
      this.revealedAt = g.t;
      const active = this.activeName;
      const flow = Array.from(this.graphEl.querySelectorAll("g.edge.dg-flow"));
      const target = flow.length ? flow : active ? [this.elements.get(active)?.el].filter(Boolean) : [];
      this.follow(/** @type {Element[]} */ (target));
    }
  }

  /**
   * The boxes at position g: visible or still to come, gradient, freed, output, anomaly,
   * selected; the box of what just happened becomes `activeName`. Returns which boxes show.
   * @param {GraphState} g @param {Structure} s
   * @returns {Map<string, boolean>}
   */
  restyleBoxes(g, s) {
    const timeline = this.timeline;
    const vocabulary = this.header().vocabulary || {};
    const detail = this.detailShown();
    const consumed = new Set();
    for (const e of timeline.edges.values()) if (g.seen.has(e.src) && g.seen.has(e.dst)) consumed.add(e.src);
    /** @type {Map<string, boolean>} */
    const shownBox = new Map();
    /** @type {string|null} */
    let active = null;
    for (const box of s.boxes) {
      const visible = box.members.some((id) => g.seen.has(id));
      shownBox.set(box.name, visible);
      const item = this.elements.get(box.name);
      if (!item) continue;
      const id = box.members[0];
      const node = box.kind === "node" ? timeline.nodes.get(id) : null;
      // a module's box: the gradient that flowed out of the module, at its output (NOTE [map])
      const grad = node ? g.grads.get(id) : box.output !== undefined ? g.grads.get(box.output) : undefined;
      const freed = node ? g.freed.has(id) : false;
      const output = Boolean(node) && visible && !consumed.has(id);
      const anomaly = node ? anomalyOf(node, { grad: grad || null, freed }) !== null : false;
      const selected = this.state.isSelected(box);
      if (g.lastGrad !== null && box.members.includes(g.lastGrad)) active = box.name;
      else if (active === null && g.lastGrad === null && g.newest !== null && box.members.includes(g.newest)) active = box.name;
      const key = `${visible}|${grad ? grad.step : -1}|${freed}|${output}|${anomaly}|${selected}`;
      if (item.applied === key) continue;
      item.applied = key;
      const el = item.el;
      el.classList.toggle("dg-future", !visible);
      el.classList.toggle("dg-freed", freed);
      el.classList.toggle("dg-output", output && !freed);
      el.classList.toggle("dg-grad", Boolean(grad) && !freed);
      el.classList.toggle("dg-summed", Boolean(grad && grad.summed) && !freed);
      el.classList.toggle("dg-anomaly", anomaly);
      el.classList.toggle("dg-selected", selected);
      /** @type {ReturnType<typeof svgStyle>} */
      let look = {};
      if (freed && node) look = svgStyle((vocabulary.freed || {})[node.kind] || "");
      else if (output) look = { ...svgStyle(String(vocabulary.output || "").replace(/^\[|\]$/g, "")) };
      if (anomaly) look = { ...look, fill: svgStyle(vocabulary.anomaly).fill };
      paint(item.shapes, item.texts, look);
      if (node && detail && box.gradLine >= 0 && item.texts[box.gradLine]) {
        const shape = Array.isArray(node.shape) ? node.shape : [];
        const text = grad
          ? `grad${grad.summed ? " (summed)" : ""} ${formatValues(grad.previewText, shape)}`
          : "grad \u2014";
        setText(item.texts[box.gradLine], this.cut(text));
      }
      if (node && box.savedLine >= 0 && item.texts[box.savedLine]) {
        setText(item.texts[box.savedLine], freed ? "freed" : box.lines[box.savedLine]);
      }
    }
    this.activeName = active;
    return shownBox;
  }

  /**
   * The edges at position g: visible once both boxes are, coloured by their source's gradient,
   * and the one the gradient just flowed along (`dg-flow`).
   * @param {GraphState} g @param {Structure} s @param {Map<string, boolean>} shownBox
   */
  restyleEdges(g, s, shownBox) {
    const vocabulary = this.header().vocabulary || {};
    const lastEdge = g.lastEdge;
    const edgeInto = lastEdge ? (s.boxes.find((b) => b.members.includes(lastEdge[1])) || { name: null }).name : null;
    for (const edge of s.edges) {
      const item = this.elements.get(edge.name);
      if (!item) continue;
      const visible = Boolean(shownBox.get(edge.src) && shownBox.get(edge.dst));
      let norm = null;
      for (const src of edge.sources) {
        const grad = g.grads.get(src);
        if (grad) {
          norm = grad.norm ?? 0;
          break;
        }
      }
      const flow = lastEdge
        ? edge.sources.includes(lastEdge[0]) && edgeInto === edge.dst // the contribution's edge
        : g.lastGrad !== null && edge.sources.includes(g.lastGrad);
      const key = `${visible}|${norm}|${flow}`;
      if (item.applied === key) continue;
      item.applied = key;
      item.el.classList.toggle("dg-future", !visible);
      item.el.classList.toggle("dg-flow", flow);
      const look = norm === null ? {} : svgStyle((vocabulary.grad_edges || [])[magnitudeLevel(norm)]);
      paint(item.shapes, [], { ...look, fill: look.stroke && undefined }, true);
    }
  }

  /** Label text as escape() would cut it. @param {string} text */
  cut(text) {
    const max = (this.header().vocabulary || {}).max_label_chars ?? 120;
    const chars = Array.from(text);
    return chars.length > max ? chars.slice(0, max - 1).join("") + "\u2026" : text;
  }

  /** Pan so that the union of `targets` is in the pane (the zoom stays). @param {Element[]} targets */
  follow(targets) {
    const pane = this.paneSize();
    if (!targets.length || !pane.width || !this.graphEl.getBoundingClientRect) return;
    // the whole drawing is in view (fitted): nothing to bring in, and no pan to cut its edge
    const z = this.zoom;
    const slack = 1 / z.scale;
    if (z.x <= slack && z.y <= slack && z.x + pane.width / z.scale >= this.size.width - slack
      && z.y + pane.height / z.scale >= this.size.height - slack) return;
    const rect = this.graphRect(targets);
    if (!rect) return;
    const next = panToShow(this.zoom, pane, rect);
    if (next !== this.zoom) {
      this.zoom = { ...next, user: this.zoom.user };
      this.applyZoom();
    }
  }

  dispose() {
    this.disposed = true;
    this.scheduler.dispose();
  }
}

/**
 * Paint shapes and texts over what Graphviz wrote (inline style wins over the attributes; an
 * empty look gives the drawing back its own).
 * @param {Element[]} shapes @param {Element[]} texts
 * @param {ReturnType<typeof svgStyle>} look @param {boolean} [edge]
 */
function paint(shapes, texts, look, edge = false) {
  for (const shape of shapes) {
    const st = /** @type {SVGElement} */ (shape).style;
    if (!st) continue;
    setStyle(st, "stroke", look.stroke);
    setStyle(st, "stroke-width", look.width !== undefined ? `${edge ? look.width : Math.max(look.width, 1) * 1.5}` : undefined);
    setStyle(st, "stroke-dasharray", look.dashed === true ? "5,2" : look.dashed === false ? "none" : undefined);
    if (edge) setStyle(st, "fill", shape.localName === "polygon" ? look.stroke : undefined);
    else setStyle(st, "fill", look.fill);
  }
  for (const text of texts) {
    const st = /** @type {SVGElement} */ (text).style;
    if (st) setStyle(st, "fill", look.text);
  }
}

/** @param {CSSStyleDeclaration} st @param {string} name @param {string|undefined} value */
function setStyle(st, name, value) {
  if (value === undefined) st.removeProperty(name);
  else st.setProperty(name, value);
}

/**
 * The tallest the graph pane grows: 60 % of the window, so that the toolbar, the legend and
 * the panels beside it fit in one screen of notebook (at 1000 px: 600 px).
 * @param {Document} doc
 */
export function tallestPane(doc) {
  const win = doc.defaultView;
  const height = win && win.innerHeight ? win.innerHeight : 900;
  return Math.max(220, Math.min(760, Math.round(height * 0.6)));
}

/** The smallest font size (graph units) of the labels of a Graphviz SVG. @param {Element} svg */
function smallestFont(svg) {
  let smallest = Infinity;
  for (const text of Array.from(svg.querySelectorAll("g.node text"))) {
    const size = Number(text.getAttribute("font-size"));
    if (size > 0 && size < smallest) smallest = size;
  }
  return Number.isFinite(smallest) ? smallest : 10;
}

/** The Graphviz name of a drawn node or edge: the text of its <title> ("n7", "n3->n7"). */
export function titleOf(/** @type {Element} */ g) {
  const t = g.querySelector("title");
  return t ? (t.textContent || "").trim() : "";
}
