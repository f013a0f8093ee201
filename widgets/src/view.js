// One view of a GraphView model: the toolbar, graph, code panel and inspector, and playback.
// The renderer (d3-graphviz in the bundle, a stub in tests) is passed in, so this module has
// no d3 and runs under jsdom.

import { Timeline, GAP, APPLIED, clamp, gradAt, olderPassesNote } from "./timeline.js";
import { chainRuleAt } from "./chainrule.js";
import { TrainingPanel, passAt } from "./training.js";
import { decodeTrait, UnreadableState } from "./events.js";
import { createScheduler, useTweens, nextTask } from "./coalesce.js";
import { make, setText, clear, buildCodeLines, markCurrentLine, inspectorRows, moduleRows, renderRows, basename } from "./text.js";
import { buildStructure, svgStyle, COLLAPSE_OVER } from "./structure.js";
import { formatValues, magnitudeLevel, anomalyOf, numel } from "./vocabulary.js";
import { fitView, zoomAt, viewBox, panToShow, ZOOM_STEP, FIT_MAX } from "./zoom.js";

/**
 * The part of anywidget's model a view uses.
 * @typedef {{
 *   get: (name: string) => any,
 *   on: (event: string, callback: (...args: any[]) => void) => void,
 *   off: (event: string, callback: (...args: any[]) => void) => void,
 *   send: (message: any) => void,
 * }} Model
 * @typedef {{render: (dot: string, tween: boolean) => (Promise<unknown>|unknown), destroy?: () => void}} Renderer
 * @typedef {(container: HTMLElement) => Renderer} RendererFactory
 */

export const SPEEDS = [0.25, 0.5, 1, 2, 4, 8];
/** Milliseconds per step at speed 1. */
export const STEP_MS = 400;

// NOTE [replay] Live means seen, at a person's pace. Python sends what the code did as fast as
// it runs: a five-line cell is over in a tenth of a second, a backward pass in less, and on a
// first run the page's front end is often still loading when the cell ends. A view that jumped
// to the end would show the finished graph at once, and a learner would never see it grow.
// So the view *follows* the end of the timeline at reading pace: when it is first drawn, or
// when new steps arrive, it plays from where it stands to the end, one beat (timeline.js NOTE
// [beats]) at a time: a source line's nodes per BEAT_MS.line, a node's gradient (with the
// edges it sends along) per BEAT_MS.grad: the backward of lesson 03's neuron, 6 gradients and
// 14 steps, takes about 3 s. A long cell is not replayed for minutes:
// the catch-up is given REPLAY_MS from when it starts (or new steps extend it) and beats are
// shown faster, or several at once, to end by then. A cell slower than the pace simply shows
// each step as it comes. The learner can skip to the end (the "skip" button, End), pause, or
// step: any of these hands control to the learner, and the view follows the end again once
// the learner is back at it. With reduced motion asked for, or `replay: false` in the
// options, the view jumps to the end as before.
/** How long a beat is shown at speed 1 (ms), by kind (NOTE [replay]). */
export const BEAT_MS = { line: 350, grad: 400, other: 250 };
/** The longest a catch-up takes at speed 1 (ms). */
export const REPLAY_MS = 4000;
/** The shortest a beat is shown while catching up (ms). */
const MIN_BEAT_MS = 40;
/** How often a replay waiting for a layout looks again (ms). */
const WAIT_MS = 50;
/** A resync request not answered within this many ms may be sent again. */
const RESYNC_RETRY_MS = 2000;
/** A drawing of (or replacing one of) more boxes than this is taken in over several tasks. */
const YIELD_OVER = 150;

/** A promise that resolves after the page's next frame (its style and layout done on its own). */
function nextFrame() {
  return new Promise((resolve) => {
    const raf = globalThis.requestAnimationFrame;
    if (typeof raf === "function") raf(() => setTimeout(resolve, 0));
    else setTimeout(resolve, 0);
  });
}

/** What an empty view says once its watch block ended: how to see a graph built before it. */
export const NOTHING_WATCHED = "Nothing was built while this view watched. A graph built "
  + "earlier shows here when its backward runs inside the watch (with dg.watch(): "
  + "loss.backward()); dg.draw(loss) draws it at once.";

/** Labels are readable from this size on screen (px); "values & grads" never goes below it. */
export const READABLE_PX = 9;
/** Graphs of at most this many nodes show values and gradients by default (NOTE [numbers]). */
export const NUMBERS_UP_TO = 12;
/** ... and graphs of scalars (every value one number: micrograd's) of at most this many. */
export const SCALARS_UP_TO = 60;
/** Drawings of at most this many boxes may be turned to use the pane's width (NOTE [turn]). */
export const TURN_UP_TO = 120;
/** The line a turned structure adds to the header's (structure.js, opts.rankdir). */
const TURNED_LINE = '  graph [rankdir="LR"];\n';
/** The groups bar has an "expand" button for each closed box of the map up to this many boxes
 * (levels.js NOTE [map]); past it, the boxes open by a click (they say so). */
export const MAP_BUTTONS_UP_TO = 4;
/** A click on a rolled-up loop opens at most this many iterations (NOTE [a loop opens a few
 * iterations at a time] in structure.js). */
export const MAX_OPEN = 8;
/** How long the "Ctrl + wheel to zoom" hint stays (NOTE [wheel]). */
const HINT_MS = 1800;

/** The zoom modifier as the learner's keyboard names it: Cmd on a Mac, else Ctrl. @param {Document} doc */
export function zoomModifier(doc) {
  const nav = doc.defaultView && doc.defaultView.navigator;
  return nav && /Mac|iPhone|iPad/.test(nav.platform || nav.userAgent || "") ? "\u2318" : "Ctrl";
}

// NOTE [a picture beside the widget] (dyngraph/jupyter/view.py) In a notebook a view's output
// is followed by one holding a picture of its graph, for where the view cannot come back (a
// notebook saved without widget state). A live view hides that output with a rule keyed by its
// `picture_id`, so it shows whenever the picture comes, and shows again once no view is left.
/** live views by picture id, each with its <style> and how many views share it */
const hiddenPictures = new Map();

/**
 * Hide the picture output marked with `id` while this view lives; returns the undo.
 * @param {Document} doc @param {unknown} id the model's picture_id (checked: it goes into CSS)
 * @returns {() => void}
 */
export function hidePicture(doc, id) {
  if (typeof id !== "string" || !/^[0-9a-f]{1,64}$/.test(id) || !doc.head) return () => {};
  let entry = hiddenPictures.get(id);
  if (!entry || !entry.style.isConnected) {
    const style = doc.createElement("style");
    const marked = `[data-dyngraph-picture="${id}"]`;
    style.textContent = `${marked}, .jp-OutputArea-child:has(${marked}) { display: none; }`;
    doc.head.appendChild(style);
    entry = { style, views: 0 };
    hiddenPictures.set(id, entry);
  }
  const held = entry;
  held.views += 1;
  return () => {
    held.views -= 1;
    if (held.views === 0) {
      held.style.remove();
      if (hiddenPictures.get(id) === held) hiddenPictures.delete(id);
    }
  };
}

/**
 * Render a view of `model` into `el`.
 * @param {{model: Model, el: HTMLElement, createRenderer: RendererFactory, reducedMotion?: boolean}} args
 * @returns {(() => void) & {view: ReturnType<typeof controller>}} cleanup, removing every
 *   listener, timer and element this view added (the controller is attached for tests)
 */
export function createView({ model, el, createRenderer, reducedMotion }) {
  const c = controller({ model, el, createRenderer, reducedMotion });
  const cleanup = () => c.dispose();
  cleanup.view = c;
  return cleanup;
}

/**
 * @param {{model: Model, el: HTMLElement, createRenderer: RendererFactory, reducedMotion?: boolean}} args
 */
function controller({ model, el, createRenderer, reducedMotion }) {
  const doc = el.ownerDocument;
  const timeline = new Timeline();
  timeline.header = model.get("header") || {};
  /** @type {Array<() => void>} */
  const disposers = [hidePicture(doc, model.get("picture_id"))];
  const state = {
    t: 0,
    playing: false,
    /** the view follows the end of the timeline (NOTE [replay]); false once the learner moved */
    following: true,
    /** when the current catch-up should end (performance.now() ms) */
    replayEnds: 0,
    /** when playback last found a layout in progress and waited (null: not waiting) */
    waitedAt: /** @type {number|null} */ (null),
    speed: 1,
    /** @type {number|null} */
    selected: null,
    /** @type {import("./timeline.js").GraphState|null} */
    graph: null,
    resyncPendingSince: /** @type {number|null} */ (null),
    /** the file the source panel shows */
    codeFile: /** @type {string|null} */ (null),
    /** what the source panel was drawn from: its text and kept stretches (the newest of the
     * file received: a file's text grows as more of its lines make nodes), or why it has none */
    codeDrawn: /** @type {{source: string|undefined, kept: unknown, why: string}|null} */ (null),
    /** @type {string|null} */
    renderedDot: null,
    /** @type {string|null} */
    renderError: null,
    /** @type {Record<string, string>} trait name -> why its last value could not be read */
    unreadable: {},
    /** the position the graph was last scrolled to show (see decorate) */
    revealedAt: -1,
    /** @type {ReturnType<typeof setTimeout>|null} */
    timer: null,
    disposed: false,
    /** labels with every value and a gradient line (the "values & grads" toggle); null: the
     * learner has not chosen, so a small graph shows them and a larger one is compact
     * (NOTE [numbers]) */
    detail: /** @type {boolean|null} */ (null),
    /** @type {Set<string>} groups the learner opened (loops l<id>, scopes "scope:<name>") */
    expanded: new Set(),
    /** @type {Map<string, number>} loop key -> how many of its box's iterations are drawn open
     * (NOTE [a loop opens a few iterations at a time] in structure.js) */
    openIterations: new Map(),
    /** a layout the learner asked for (a group opened or rolled up, "values & grads") is under
     * way: the busy sign shows, and the group buttons wait for it (NOTE [busy]) */
    busy: false,
    /** @type {{key: string, structure: import("./structure.js").Structure}|null} */
    structure: null,
    /** @type {import("./structure.js").Structure|null} the structure of the drawing on the page */
    drawn: null,
    /** name -> its drawn element, its shapes and texts, and the state last applied to it */
    elements: /** @type {Map<string, {el: Element, shapes: Element[], texts: Element[], applied: string}>} */ (new Map()),
    /** the zoom: px per graph unit and the graph point at the pane's top left; user: the learner moved it */
    zoom: { scale: 1, x: 0, y: 0, user: false },
    /** the drawing's size in graph units */
    size: { width: 0, height: 0 },
    /** when the last layout ended and how long it took (live growth is rate-bounded by it) */
    layoutEnded: 0,
    layoutMs: 0,
    /** a drag just panned: the click that ends it selects nothing */
    dragged: false,
    /** the smallest font size of the drawing's labels, in graph units */
    labelUnits: 10,
    /** the box of what just happened (the newest node, the node the gradient reached) */
    activeName: /** @type {string|null} */ (null),
    /** a small graph's numbers (NOTE [numbers]) would make it unreadable at fit: compact */
    numbersTooBig: false,
    /** the next layout is the view's own answer to an unreadable drawing: no NOTE [rate] wait */
    hurry: false,
    /** drawn as a map of the modules, because the whole drawing would be unreadable at fit
     * (levels.js NOTE [map]; past collapse_over the structure is a map by itself) */
    map: false,
    /** the box of the map the learner clicked: the inspector shows its module (NOTE [map]) */
    selectedGroup: /** @type {{key: string, title: string, members: number[], output: number}|null} */ (null),
    /** the direction of the drawing's ranks: "TB" (inputs on top) or "LR" (NOTE [turn]) */
    rankdir: /** @type {"TB"|"LR"} */ ("TB"),
    /** the structures (their DOT, unturned) laid out both ways already; while the other way is
     * being laid out, the fitted scale and direction of the drawing before it, else null */
    turnTried: /** @type {string[]} */ ([]),
    turnFrom: /** @type {{scale: number, rankdir: "TB"|"LR"}|null} */ (null),
    /** is every value one number (cached for a version of the timeline; NOTE [numbers]) */
    scalars: { version: -1, every: false },
    /** the members of the group just opened: the next layout zooms toward them */
    opened: /** @type {number[]|null} */ (null),
    /** the wheel hint's timer (NOTE [wheel]) */
    hintTimer: /** @type {ReturnType<typeof setTimeout>|null} */ (null),
  };

  /**
   * @param {EventTarget} target @param {string} type @param {(e: any) => void} fn
   * @param {AddEventListenerOptions} [opts]
   */
  const listen = (target, type, fn, opts = undefined) => {
    target.addEventListener(type, fn, opts);
    disposers.push(() => target.removeEventListener(type, fn, opts));
  };
  /** @param {string} name @param {(...args: any[]) => void} fn */
  const onModel = (name, fn) => {
    model.on(name, fn);
    disposers.push(() => model.off(name, fn));
  };

  // ------------------------------------------------------------------------------ the DOM
  const root = make(doc, "div", {
    className: "dg-root",
    attrs: {
      tabindex: "0",
      role: "group",
      "aria-label": "dyngraph: computation graph player",
      "aria-keyshortcuts": "ArrowLeft ArrowRight Space Home End + - 0",
      // NOTE [keys] No data-lm-suppress-shortcuts here: Lumino stops looking for a shortcut at
      // an element carrying it, which would take Ctrl+S, Shift+Enter and Esc from JupyterLab.
      // The keydown listener below stops only the keys the widget uses (JupyterLab listens
      // on the document, in the bubbling phase).
    },
  });
  const title = make(doc, "div", { className: "dg-title" });
  const toolbar = make(doc, "div", { className: "dg-toolbar", attrs: { role: "toolbar", "aria-label": "playback" } });
  // A button shows an icon and a word; a narrow widget shows the icon only (graphview.css), so
  // the toolbar keeps to two rows. Its accessible name is the label, at any width.
  const button = (/** @type {string} */ icon, /** @type {string} */ word, /** @type {string} */ label, /** @type {string} */ name) => {
    const b = make(doc, "button", { className: `dg-btn dg-${name}`, attrs: { type: "button", "aria-label": label, title: label } });
    if (icon) b.appendChild(make(doc, "span", { className: "dg-icon", text: icon }));
    if (word) b.appendChild(make(doc, "span", { className: icon ? "dg-word" : "", text: word }));
    return b;
  };
  const backBtn = button("\u2190", "step", "step back (Left arrow)", "back");
  const playBtn = button("\u25B6\uFE0E", "play", "play / pause (Space)", "play");
  playBtn.setAttribute("aria-pressed", "false");
  // shown only while the view replays what it missed (NOTE [replay])
  const skipBtn = button("\u00BB", "skip", "skip the replay: show the end (End)", "skip");
  skipBtn.hidden = true;
  const fwdBtn = button("\u2192", "step", "step forward (Right arrow)", "forward");
  const endFwdBtn = button("\u21E5", "end of forward", "jump to the end of the forward pass", "end-forward");
  const startBwdBtn = button("\u21E4", "start of backward", "jump to the start of the backward pass", "start-backward");
  const speedLabel = make(doc, "label", { className: "dg-speed" });
  const speedText = make(doc, "span", { text: "speed" });
  const speedSelect = /** @type {HTMLSelectElement} */ (make(doc, "select", { attrs: { "aria-label": "playback speed" } }));
  speedLabel.append(speedText, speedSelect);
  const scrub = /** @type {HTMLInputElement} */ (make(doc, "input", {
    className: "dg-scrub",
    attrs: { type: "range", min: "0", max: "0", step: "1", value: "0", "aria-label": "position in the timeline" },
  }));
  const position = make(doc, "span", { className: "dg-position", attrs: { role: "status" } });
  const zoomGroup = make(doc, "span", { className: "dg-zoom", attrs: { role: "group", "aria-label": "zoom" } });
  const zoomOutBtn = button("", "\u2212", "zoom out (-)", "zoom-out");
  const zoomInBtn = button("", "+", "zoom in (+)", "zoom-in");
  const fitBtn = button("", "fit", "fit the whole graph in view (0)", "fit");
  zoomGroup.append(zoomOutBtn, zoomInBtn, fitBtn);
  const detailBtn = button("", "values & grads", "show every value and gradient in the node labels", "detail");
  detailBtn.setAttribute("aria-pressed", "false");
  // where a narrow toolbar breaks: buttons above; "values & grads", the slider and the position below
  const toolbarBreak = make(doc, "span", { className: "dg-break", attrs: { "aria-hidden": "true" } });
  toolbar.append(backBtn, playBtn, skipBtn, fwdBtn, endFwdBtn, startBwdBtn, speedLabel, zoomGroup, toolbarBreak, detailBtn, scrub, position);

  const main = make(doc, "div", { className: "dg-main" });
  const graphWrap = make(doc, "div", { className: "dg-graph-wrap" });
  const graphEl = make(doc, "div", { className: "dg-graph", attrs: { "aria-label": "computation graph" } });
  const errorBanner = make(doc, "div", { className: "dg-error", attrs: { role: "alert" } });
  errorBanner.hidden = true;
  const errorTitle = make(doc, "strong", { text: "backward failed" });
  const errorText = make(doc, "pre", { className: "dg-error-text" });
  errorBanner.append(errorTitle, errorText);
  const empty = make(doc, "div", { className: "dg-empty" });
  const legend = make(doc, "div", { className: "dg-legend", attrs: { "aria-label": "legend" } });
  // NOTE [wheel] A plain wheel scrolls the notebook; Ctrl/Cmd + wheel (and a pinch, which
  // Chromium sends as a ctrlKey wheel) zooms, as in embedded maps. The first plain wheel over
  // the graph says so, briefly.
  const wheelHint = make(doc, "div", { className: "dg-hint", text: `${zoomModifier(doc)} + wheel to zoom \u00B7 drag to pan`, attrs: { "aria-hidden": "true" } });
  wheelHint.hidden = true;
  // NOTE [busy] A layout the learner asked for can take a moment (Graphviz, in the layout
  // worker): a sign says so, over the drawing it will replace, and is read out (role=status).
  const busySign = make(doc, "div", { className: "dg-busy", attrs: { role: "status", "aria-live": "polite" } });
  busySign.hidden = true;
  // Shown while the widget holds the keys (CSS :focus-within), with the ring around it. It keeps
  // its place at the end of the legend's row even when hidden, so it covers no control (at the
  // top right of an untitled widget it hid "values & grads") and nothing moves when it shows.
  const keysBadge = make(doc, "div", { className: "dg-keys", text: "keys: \u2190 \u2192 step \u00B7 space play \u00B7 + \u2212 0 zoom", attrs: { "aria-hidden": "true" } });
  const graphFoot = make(doc, "div", { className: "dg-graph-foot" });
  graphFoot.append(legend, keysBadge);
  graphWrap.append(errorBanner, graphEl, empty, wheelHint, busySign, graphFoot);

  const side = make(doc, "div", { className: "dg-side" });
  const codePanel = make(doc, "section", { className: "dg-panel dg-code-panel", attrs: { "aria-label": "source" } });
  const codeHead = make(doc, "div", { className: "dg-panel-title", text: "source" });
  const codeScroll = make(doc, "div", { className: "dg-code-scroll" });
  codePanel.append(codeHead, codeScroll);
  const inspector = make(doc, "section", { className: "dg-panel dg-inspector", attrs: { "aria-label": "inspector" } });
  const inspectorHead = make(doc, "div", { className: "dg-panel-title", text: "inspector" });
  const inspectorBody = make(doc, "div", { className: "dg-inspector-body" });
  inspector.append(inspectorHead, inspectorBody);
  // the chain rule at the active node of a backward step (src/chainrule.js), as text
  const chainPanel = make(doc, "section", { className: "dg-panel dg-chain", attrs: { "aria-label": "chain rule" } });
  const chainHead = make(doc, "div", { className: "dg-panel-title", text: "chain rule" });
  const chainBody = make(doc, "div", { className: "dg-inspector-body dg-chain-body" });
  chainPanel.append(chainHead, chainBody);
  chainPanel.hidden = true;
  // the loss and gradient norm over the backward passes of a training loop (src/training.js)
  const training = new TrainingPanel(doc);
  disposers.push(() => training.dispose());
  side.append(training.el, codePanel, chainPanel, inspector);
  main.append(graphWrap, side);

  const notes = make(doc, "div", { className: "dg-notes" });
  const groupsBar = make(doc, "div", { className: "dg-groups", attrs: { role: "group", "aria-label": "groups" } });
  groupsBar.hidden = true;
  root.append(title, toolbar, main, groupsBar, notes);
  el.appendChild(root);

  for (const speed of SPEEDS) {
    speedSelect.appendChild(make(doc, "option", { text: `${speed}\u00D7`, attrs: { value: String(speed) } }));
  }

  // ------------------------------------------------------------------------------ rendering
  const renderer = createRenderer(graphEl);
  const scheduler = createScheduler(
    async (/** @type {{dot: string, tween: boolean, t: number, structure: import("./structure.js").Structure}} */ job) => {
      if (job.dot !== state.renderedDot) {
        // NOTE [rate] A layout blocks the page while Graphviz runs; while data streams in, leave
        // the page at least twice that long between two layouts.
        // A layout the learner asked for (NOTE [busy]) does not wait: the learner is waiting.
        const wait = state.layoutEnded + 2 * state.layoutMs - performance.now();
        if (wait > 0 && state.renderedDot !== null && !state.busy && !state.hurry) await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 1000)));
        state.hurry = false;
        if (state.disposed) return;
        try {
          const started = performance.now();
          await renderer.render(job.dot, job.tween);
          state.layoutMs = performance.now() - started;
          state.layoutEnded = performance.now();
          // NOTE [layout worker] in renderer.js: the page's share of a large drawing comes in
          // several tasks (parse, make inert, put in: the renderer; then the browser lays the
          // new SVG out on its own; then index and fit; then restyle), none long.
          const large = state.elements.size > YIELD_OVER || job.structure.boxes.length > YIELD_OVER;
          if (large) await nextFrame();
          if (state.disposed) return;
          state.drawn = job.structure;
          // on the page now: a layout asked for while placing it (NOTE [turn]: back to the
          // other direction) compares with this drawing, not the one before it
          state.renderedDot = job.dot;
          indexDrawing();
          labelEdges(job.structure);
          placeDrawing();
          if (!scheduler.pending) setBusy(false);
          updateGroups(job.structure); // the buttons change with the drawing, not before it
          // How long the last drawing took, and how many there were: numbers a test (or a
          // curious learner in the devtools) can read.
          graphEl.dataset.renderMs = String(Math.round(performance.now() - started));
          graphEl.dataset.renders = String(Number(graphEl.dataset.renders || 0) + 1);
          if (state.renderError !== null) {
            state.renderError = null;
            updateNotes();
          }
          if (large) await nextTask();
        } catch (error) {
          state.renderError = error instanceof Error ? error.message : String(error);
          setBusy(false);
          updateNotes();
        }
      }
      if (!state.disposed) restyle();
    },
  );

  /** The name of every drawn node, edge and cluster -> its element, shapes and label lines. */
  function indexDrawing() {
    state.elements.clear();
    const svg = graphEl.querySelector("svg");
    if (!svg) return;
    for (const el of Array.from(svg.querySelectorAll("g.node, g.edge, g.cluster"))) {
      const shapes = Array.from(el.children).filter((c) => c.localName !== "title" && c.localName !== "text");
      const texts = Array.from(el.querySelectorAll("text"));
      state.elements.set(titleOf(el), { el, shapes, texts, applied: "" });
    }
  }

  /**
   * structure.js NOTE [shapes on edges]: the shape flowing out of a module's box, written
   * beside the middle of its edge (right of it, or above it when the drawing is turned), in
   * the labels' font; as text, like every label.
   * @param {import("./structure.js").Structure} s
   */
  function labelEdges(s) {
    const size = smallestFont(graphEl.querySelector("svg") || graphEl);
    for (const edge of s.edges) {
      const item = edge.label ? state.elements.get(edge.name) : undefined;
      const path = item ? /** @type {SVGPathElement|null} */ (item.el.querySelector("path")) : null;
      if (!item || !path || typeof path.getTotalLength !== "function") continue;
      const mid = path.getPointAtLength(path.getTotalLength() / 2);
      const text = doc.createElementNS("http://www.w3.org/2000/svg", "text");
      text.setAttribute("class", "dg-edge-shape");
      text.setAttribute("font-size", String(size));
      text.setAttribute("text-anchor", turned() ? "middle" : "start");
      // beside the edge: right of it, vertically centred; turned, above the boxes it joins
      text.setAttribute("x", String(turned() ? mid.x : mid.x + 5));
      text.setAttribute("y", String(turned() ? mid.y - size : mid.y + size * 0.35));
      setText(text, edge.label);
      item.el.appendChild(text);
    }
  }

  /** The pane's size in px (0 x 0 when not laid out: jsdom, a hidden tab). */
  function paneSize() {
    return { width: graphEl.clientWidth, height: graphEl.clientHeight };
  }

  /** After a layout: size the pane to the drawing, then fit it, or keep the learner's view. */
  function placeDrawing() {
    const svg = graphEl.querySelector("svg");
    if (!svg) return;
    const box = (svg.getAttribute("viewBox") || "").trim().split(/[\s,]+/).map(Number);
    const [width, height] = box.length === 4 && box.every(Number.isFinite) ? [box[2], box[3]] : [0, 0];
    state.size = { width, height };
    svg.setAttribute("width", "100%");
    svg.setAttribute("height", "100%");
    svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
    state.labelUnits = smallestFont(svg);
    sizePane();
    const opened = state.opened;
    state.opened = null;
    if (opened !== null && showGroup(opened)) return;
    if (state.zoom.user) applyZoom();
    else {
      fit(detailShown());
      rollUpToRead();
    }
  }

  /**
   * After a loop or scope was opened: zoom toward its nodes (NOTE [fit]), as large as fits but
   * never below readable labels. False when none of them is drawn.
   * @param {number[]} members
   */
  function showGroup(members) {
    let pane = paneSize();
    const targets = members.map((id) => state.elements.get(`n${id}`)).filter(Boolean).map((item) => /** @type {{el: Element}} */ (item).el);
    if (!targets.length || !pane.width || !pane.height || !graphEl.getBoundingClientRect) return false;
    fit();
    const rect = graphRect(targets);
    if (!rect) return false;
    const floor = readableScale();
    // as large as fits across the ranks, then the pane as tall as the drawing at that scale
    const tallest = tallestPane(doc);
    const across = turned() ? pane.width / (rect.width + 16) : Math.min(pane.width / (rect.width + 16), tallest / (rect.height + 16));
    let scale = Math.max(Math.min(across, FIT_MAX), Math.min(floor, FIT_MAX));
    sizePane(scale);
    pane = paneSize();
    scale = Math.max(Math.min(pane.width / (rect.width + 16), pane.height / (rect.height + 16), FIT_MAX), Math.min(floor, FIT_MAX));
    const view = { width: pane.width / scale, height: pane.height / scale };
    // centred on the group where it fits; else its start (top-left) in view
    const x = rect.width <= view.width ? rect.x + rect.width / 2 - view.width / 2 : rect.x - 8 / scale;
    const y = rect.height <= view.height ? rect.y + rect.height / 2 - view.height / 2 : rect.y - 8 / scale;
    state.zoom = { scale, x, y, user: true };
    applyZoom();
    return true;
  }

  /**
   * The union of the screen boxes of `targets`, in graph units of the current zoom.
   * @param {Element[]} targets
   */
  function graphRect(targets) {
    const view = graphEl.getBoundingClientRect();
    const rects = targets.map((t) => t.getBoundingClientRect());
    const left = Math.min(...rects.map((r) => r.left));
    const top = Math.min(...rects.map((r) => r.top));
    const right = Math.max(...rects.map((r) => r.right));
    const bottom = Math.max(...rects.map((r) => r.bottom));
    if (right - left === 0 && bottom - top === 0) return null;
    const k = state.zoom.scale;
    return {
      x: state.zoom.x + (left - view.left) / k, y: state.zoom.y + (top - view.top) / k,
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
  function rollUpToRead() {
    const pane = paneSize();
    const s = state.drawn;
    if (!s || !pane.width || !pane.height) return false;
    // the room the drawing may have: the pane's width, and as tall as the pane may grow
    const room = { width: pane.width - 8, height: tallestPane(doc) - 8 };
    const whole = fitView(state.size, room);
    if (state.turnFrom !== null) {
      // this drawing is the turned one: keep it if it fits larger than the one before it
      const before = state.turnFrom;
      state.turnFrom = null;
      if (whole.scale < before.scale) {
        state.rankdir = before.rankdir; // back to a layout the renderer has kept
        state.hurry = true;
        update();
        return true;
      }
    }
    if (state.map || s.map || whole.scale >= readableScale()) return false;
    const numbers = state.detail === null && detailShown() && !scalarGraph();
    if (s.mappable) {
      // a drawing of modules: its map, one layout (the numbers of a small one go first)
      if (numbers) state.numbersTooBig = true;
      else state.map = true;
      state.hurry = true;
      update();
      return true;
    }
    const tall = state.size.height * room.width > state.size.width * room.height;
    const structure = s.dot.replace(TURNED_LINE, "");
    if (tall !== turned() && !state.turnTried.includes(structure) && s.boxes.length <= TURN_UP_TO) {
      state.turnTried = [...state.turnTried.slice(-7), structure];
      state.turnFrom = { scale: whole.scale, rankdir: state.rankdir };
      state.rankdir = turned() ? "TB" : "LR";
      state.hurry = true;
      update();
      return true;
    }
    if (numbers) {
      // numbers the learner did not ask for, too big for the pane: compact labels first
      state.numbersTooBig = true;
      state.hurry = true;
      update();
      return true;
    }
    return false;
  }

  /** Is the drawing laid out left to right (NOTE [turn])? */
  function turned() {
    return state.rankdir === "LR";
  }

  /** The least scale at which the drawing's smallest label is READABLE_PX on screen. */
  function readableScale() {
    return READABLE_PX / Math.max(state.labelUnits, 1);
  }

  /**
   * The pane as tall as the drawing is at the scale its width allows (no empty bands), or at
   * the scale it is shown at when larger (readable numbers, a group opened, the learner's
   * zoom), within limits: after each layout, and again whenever the pane's width or the
   * window's height changes (a narrow window, a resized sidebar), so the height never stays
   * the one computed for another width.
   * @param {number} [least]  the scale the drawing is about to be shown at
   */
  function sizePane(least = 0) {
    const { width, height } = state.size;
    if (!width || !height) return;
    const tallest = tallestPane(doc);
    let across = graphEl.clientWidth > 0 ? Math.min(FIT_MAX, (graphEl.clientWidth - 8) / width) : FIT_MAX;
    if (detailShown()) across = Math.max(across, Math.min(readableScale(), FIT_MAX)); // fit(true)
    if (state.zoom.user) across = Math.max(across, state.zoom.scale); // the learner's zoom
    across = Math.max(across, least);
    const px = `${Math.min(tallest, Math.max(180, Math.ceil(height * across) + 16))}px`;
    if (graphEl.style.height !== px) {
      graphEl.style.height = px;
      root.style.setProperty("--dg-pane-height", px); // the side panels beside it are no taller
    }
  }

  /**
   * Fit the whole drawing in the pane. With `readable` (labels with numbers, NOTE [numbers]),
   * never below readable labels: a drawing too large for that shows its start (the inputs: its
   * top, or its left when turned), centred across, and the learner pans (or presses fit) for
   * the rest; playback pans to what happens.
   * @param {boolean} [readable]
   */
  function fit(readable = false) {
    const pane = paneSize();
    if (!pane.width || !pane.height || !state.size.width) return;
    const inner = { width: pane.width - 8, height: pane.height - 8 };
    state.zoom = { ...fitView(state.size, inner), user: false };
    const floor = Math.min(readableScale(), FIT_MAX);
    if (readable && state.zoom.scale < floor) {
      const scale = floor;
      const view = { width: inner.width / scale, height: inner.height / scale };
      const { width, height } = state.size;
      // centred along an axis the drawing fits, else at its start along the ranks
      const x = width <= view.width || !turned() ? (width - view.width) / 2 : 0;
      const y = height <= view.height || turned() ? (height - view.height) / 2 : 0;
      state.zoom = { scale, x, y, user: false };
    }
    state.zoom.x -= 4 / state.zoom.scale;
    state.zoom.y -= 4 / state.zoom.scale;
    applyZoom();
  }

  function applyZoom() {
    const svg = graphEl.querySelector("svg");
    const pane = paneSize();
    if (!svg || !pane.width || !pane.height) return;
    svg.setAttribute("viewBox", viewBox(state.zoom, pane));
    graphEl.dataset.scale = String(Math.round(state.zoom.scale * 1000) / 1000);
  }

  /**
   * Zoom by `factor` about a pane point: the one given (the wheel's), else the selected or the
   * current node where it is in view (the buttons and keys zoom toward what is being looked
   * at), else the pane's centre.
   * @param {number} factor @param {number} [px] @param {number} [py]
   */
  function zoomBy(factor, px, py) {
    const pane = paneSize();
    const about = px !== undefined && py !== undefined ? { x: px, y: py } : focusPoint(pane);
    state.zoom = { ...zoomAt(state.zoom, factor, about.x, about.y), user: true };
    applyZoom();
  }

  /** The pane point of the selected (else the current) box when in view, else the centre. @param {{width: number, height: number}} pane */
  function focusPoint(pane) {
    const centre = { x: pane.width / 2, y: pane.height / 2 };
    const s = state.drawn;
    const name = state.selected !== null && s ? s.owner.get(state.selected) : state.activeName;
    const item = name ? state.elements.get(name) : undefined;
    if (!item || !graphEl.getBoundingClientRect) return centre;
    const view = graphEl.getBoundingClientRect();
    const r = item.el.getBoundingClientRect();
    const x = (r.left + r.right) / 2 - view.left;
    const y = (r.top + r.bottom) / 2 - view.top;
    return x >= 0 && y >= 0 && x <= pane.width && y <= pane.height && r.width > 0 ? { x, y } : centre;
  }

  /**
   * Restyle the drawing for the position: no layout (NOTE [layout once] in structure.js).
   * Each box and edge gets the classes and the few label lines of its state at t; only what
   * changed since the last restyle is touched.
   */
  function restyle() {
    const g = state.graph;
    const s = state.drawn;
    if (!g || !s || !state.elements.size) return;
    const vocabulary = header().vocabulary || {};
    const consumed = new Set();
    for (const e of timeline.edges.values()) if (g.seen.has(e.src) && g.seen.has(e.dst)) consumed.add(e.src);
    /** @type {Map<string, boolean>} */
    const shownBox = new Map();
    /** @type {string|null} */
    let active = null;
    for (const box of s.boxes) {
      const visible = box.members.some((id) => g.seen.has(id));
      shownBox.set(box.name, visible);
      const item = state.elements.get(box.name);
      if (!item) continue;
      const id = box.members[0];
      const node = box.kind === "node" ? timeline.nodes.get(id) : null;
      // a module's box: the gradient that flowed out of the module, at its output (NOTE [map])
      const grad = node ? g.grads.get(id) : box.output !== undefined ? g.grads.get(box.output) : undefined;
      const freed = node ? g.freed.has(id) : false;
      const output = Boolean(node) && visible && !consumed.has(id);
      const anomaly = node ? anomalyOf(node, { grad: grad || null, freed }) !== null : false;
      const selected = state.selectedGroup !== null ? box.key === state.selectedGroup.key
        : state.selected !== null && box.members.includes(state.selected);
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
      if (node && detailShown() && box.gradLine >= 0 && item.texts[box.gradLine]) {
        const shape = Array.isArray(node.shape) ? node.shape : [];
        const text = grad
          ? `grad${grad.summed ? " (summed)" : ""} ${formatValues(grad.previewText, shape)}`
          : "grad \u2014";
        setText(item.texts[box.gradLine], cut(text));
      }
      if (node && box.savedLine >= 0 && item.texts[box.savedLine]) {
        setText(item.texts[box.savedLine], freed ? "freed" : box.lines[box.savedLine]);
      }
    }
    const lastEdge = g.lastEdge;
    const edgeInto = lastEdge ? (s.boxes.find((b) => b.members.includes(lastEdge[1])) || { name: null }).name : null;
    for (const edge of s.edges) {
      const item = state.elements.get(edge.name);
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
      const flow = g.lastEdge
        ? edge.sources.includes(g.lastEdge[0]) && edgeInto === edge.dst // the contribution's edge
        : g.lastGrad !== null && edge.sources.includes(g.lastGrad);
      const key = `${visible}|${norm}|${flow}`;
      if (item.applied === key) continue;
      item.applied = key;
      item.el.classList.toggle("dg-future", !visible);
      item.el.classList.toggle("dg-flow", flow);
      const look = norm === null ? {} : svgStyle((vocabulary.grad_edges || [])[magnitudeLevel(norm)]);
      paint(item.shapes, [], { ...look, fill: look.stroke && undefined }, true);
    }
    for (const [title, names] of s.clusters) {
      const item = state.elements.get(title);
      if (!item) continue;
      const visible = names.some((n) => shownBox.get(n));
      if (item.applied !== String(visible)) {
        item.applied = String(visible);
        item.el.classList.toggle("dg-future", !visible);
      }
    }
    state.activeName = active;
    // The timeline position the drawing now shows (a test waits for it to match the slider).
    graphEl.dataset.shownStep = String(g.t);
    // After a move in the timeline, pan (only pan) so that what just happened is in view.
    if (g.t !== state.revealedAt) {
      state.revealedAt = g.t;
      const flow = Array.from(graphEl.querySelectorAll("g.edge.dg-flow"));
      const target = flow.length ? flow : active ? [state.elements.get(active)?.el].filter(Boolean) : [];
      follow(/** @type {Element[]} */ (target));
    }
  }

  /** Label text as escape() would cut it. @param {string} text */
  function cut(text) {
    const max = (header().vocabulary || {}).max_label_chars ?? 120;
    const chars = Array.from(text);
    return chars.length > max ? chars.slice(0, max - 1).join("") + "\u2026" : text;
  }

  /** Pan so that the union of `targets` is in the pane (the zoom stays). @param {Element[]} targets */
  function follow(targets) {
    const pane = paneSize();
    if (!targets.length || !pane.width || !graphEl.getBoundingClientRect) return;
    // the whole drawing is in view (fitted): nothing to bring in, and no pan to cut its edge
    const z = state.zoom;
    const slack = 1 / z.scale;
    if (z.x <= slack && z.y <= slack && z.x + pane.width / z.scale >= state.size.width - slack
      && z.y + pane.height / z.scale >= state.size.height - slack) return;
    const rect = graphRect(targets);
    if (!rect) return;
    const next = panToShow(state.zoom, pane, rect);
    if (next !== state.zoom) {
      state.zoom = { ...next, user: state.zoom.user };
      applyZoom();
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
   * NOTE [numbers] Are values and gradients in the labels? The learner's choice, else yes for a
   * graph of at most NUMBERS_UP_TO nodes (micrograd's draw_dot shows them all; a dozen boxes
   * have room for them), and for a graph of scalars of at most SCALARS_UP_TO nodes (each of its
   * numbers is one short line, and they are what a learner of micrograd watches: its README's
   * example has 39 nodes); no for a larger one, which stays compact.
   */
  function detailShown() {
    if (state.detail !== null) return state.detail;
    const n = timeline.nodes.size;
    return n > 0 && (n <= NUMBERS_UP_TO || scalarGraph()) && !state.numbersTooBig;
  }

  /** Is every value of the recording a single number (micrograd's), and the graph small enough (NOTE [numbers])? */
  function scalarGraph() {
    if (timeline.nodes.size > SCALARS_UP_TO) return false;
    if (state.scalars.version !== timeline.version) {
      let every = timeline.nodes.size > 0;
      for (const node of timeline.nodes.values()) if (numel(Array.isArray(node.shape) ? node.shape : []) > 1) every = false;
      state.scalars = { version: timeline.version, every };
    }
    return state.scalars.every;
  }

  /** The structure of the whole recording as the learner chose to see it (cached). */
  function currentStructure() {
    const opts = options();
    const h = header();
    const detail = detailShown();
    const opened = [...state.openIterations].map(([k, n]) => `${k}:${n}`).sort().join(",");
    const key = [timeline.version, detail, state.map, state.rankdir, [...state.expanded].sort().join(","), opened, opts.max_nodes,
      opts.collapse_over, opts.running_stats, h.vocabulary ? Object.keys(h.vocabulary).length : 0, (h.lines || []).join("\n")].join("|");
    if (state.structure && state.structure.key === key && state.structure.vocabulary === h.vocabulary) {
      return state.structure.structure;
    }
    const structure = buildStructure(timeline, {
      lines: h.lines || [], vocabulary: h.vocabulary || {}, maxNodes: opts.max_nodes,
      collapseOver: opts.collapse_over ?? COLLAPSE_OVER, detail, expanded: state.expanded, opened: state.openIterations,
      finalGrads: detail ? timeline.finalGrads() : undefined, map: state.map,
      rankdir: state.rankdir, runningStats: Boolean(opts.running_stats),
    });
    state.structure = { key, structure, vocabulary: h.vocabulary };
    return structure;
  }

  // ------------------------------------------------------------------------------ data
  function header() {
    return model.get("header") || {};
  }
  function options() {
    return model.get("options") || {};
  }

  /** @type {Record<string, {raw: unknown, value: any}>} */
  const parsed = {};

  /**
   * A trait's value. `snapshot` and `delta` arrive as MessagePack bytes (see PROTOCOL.md):
   * each value is decoded once, with the texts of its numbers put back by the field names of
   * `header`. Plain objects (tests) are used as they are.
   * @param {string} name
   */
  function trait(name) {
    const value = model.get(name);
    if (name !== "snapshot" && name !== "delta") return value;
    const cached = parsed[name];
    if (cached && cached.raw === value) return cached.value;
    let result = null;
    try {
      result = decodeTrait(value, (model.get("header") || {}).fields);
      delete state.unreadable[name];
    } catch (error) {
      if (!(error instanceof UnreadableState)) throw error;
      state.unreadable[name] = error.message; // shown under the graph (updateNotes)
    }
    parsed[name] = { raw: value, value: result };
    return result;
  }

  function requestResync() {
    const now = Date.now();
    if (state.resyncPendingSince !== null && now - state.resyncPendingSince < RESYNC_RETRY_MS) return;
    state.resyncPendingSince = now;
    model.send({ type: "resync" });
  }

  /** Apply the snapshot trait (on render, on change, and as Python's answer to a resync). */
  function onSnapshot() {
    const snapshot = trait("snapshot");
    if (snapshot === null) { // unreadable: what is drawn stays, and the notice says why
      update();
      return;
    }
    const seq = snapshot && typeof snapshot.seq === "number" ? snapshot.seq : null;
    if (state.resyncPendingSince === null && seq !== null && timeline.seq !== null) {
      // The same state we already have (Python may refresh the snapshot along with each delta).
      if (seq === timeline.seq) return;
      // One step ahead, and that step is the delta trait: apply it rather than rebuild it all.
      const delta = trait("delta");
      if (seq === timeline.seq + 1 && delta && delta.seq === seq) {
        applyDelta(true);
        return;
      }
    }
    const follow = state.following || state.t >= timeline.length;
    timeline.loadSnapshot(snapshot);
    state.resyncPendingSince = null;
    applyDelta(false);
    afterData(follow);
  }

  /** Apply the delta trait if it is the next one. @param {boolean} redraw */
  function applyDelta(redraw) {
    const delta = trait("delta");
    if (delta === null) { // unreadable: nothing applied, the notice says why
      if (redraw) update();
      return;
    }
    const follow = state.following || state.t >= timeline.length;
    let result = timeline.offer(delta);
    if (result === GAP) {
      // The snapshot trait may already hold what we missed: use it before asking Python.
      const snapshot = trait("snapshot");
      if (snapshot && typeof snapshot.seq === "number" && (timeline.seq === null || snapshot.seq > timeline.seq)) {
        timeline.loadSnapshot(snapshot);
        result = timeline.offer(delta);
        if (result !== GAP) result = APPLIED;
      }
      if (result === GAP) requestResync();
    }
    if (redraw && result === APPLIED) afterData(follow);
  }

  /** @param {boolean} follow  the position was at the end, or on its way there: follow it (live) */
  function afterData(follow) {
    if (follow) catchUp();
    update();
  }

  /** Does the view replay what it missed (NOTE [replay]), or jump to the end? */
  function replays() {
    return !reducedMotion && options().replay !== false;
  }

  /**
   * Follow the end of the timeline: play on to it at reading pace (NOTE [replay]), within
   * REPLAY_MS of now; or jump there, when the view does not replay.
   */
  function catchUp() {
    state.following = true;
    if (state.t >= timeline.length) return;
    if (!replays()) {
      state.t = timeline.length;
      return;
    }
    // the time the rest would take at its own pace, at most REPLAY_MS (both at this speed)
    const ends = timeline.beatEnds();
    let ms = 0;
    for (let i = firstBeatAfter(ends, state.t), from = state.t; i < ends.length && ms < REPLAY_MS; from = ends[i++]) {
      ms += BEAT_MS[timeline.beatKind(from) || "other"];
    }
    const end = performance.now() + Math.min(ms, REPLAY_MS) / state.speed;
    state.replayEnds = state.playing ? Math.max(state.replayEnds, end) : end;
    if (!state.playing) {
      state.playing = true;
      scheduleTick(0);
    }
  }

  // ------------------------------------------------------------------------------ playback
  /** @param {number} t */
  function setPosition(t) {
    state.t = clamp(t, 0, timeline.length);
    update();
  }

  /**
   * The learner moves to t: playing (and replaying) stops, and the view follows the end again
   * only from the end.
   * @param {number} t
   */
  function moveTo(t) {
    pause();
    setPosition(t);
    state.following = state.t >= timeline.length;
  }

  /** @param {number} by */
  function step(by) {
    moveTo(state.t + by);
  }

  function play() {
    if (state.playing) return;
    if (state.t >= timeline.length) state.t = 0;
    state.playing = true;
    state.following = false; // the learner's play: each beat at its own pace
    update();
    scheduleTick();
  }

  function pause() {
    if (state.timer !== null) clearTimeout(state.timer);
    state.timer = null;
    if (state.playing) {
      state.playing = false;
      updateControls();
    }
  }

  function togglePlay() {
    if (state.playing) {
      pause();
      state.following = state.t >= timeline.length;
    } else play();
  }

  /** Skip a replay: the end, followed from there. */
  function skipToEnd() {
    moveTo(timeline.length);
  }

  /**
   * The next tick of playback, after `ms` (by default the time the beat now shown stays: its
   * kind's BEAT_MS at this speed).
   * @param {number} [ms]
   */
  function scheduleTick(ms) {
    if (state.timer !== null) clearTimeout(state.timer);
    const wait = ms ?? BEAT_MS[beatShownKind()] / state.speed;
    state.timer = setTimeout(tick, wait);
  }

  /** The kind of the beat that ends at the position shown (what is on screen now). */
  function beatShownKind() {
    const ends = timeline.beatEnds();
    const i = firstBeatAfter(ends, state.t - 1); // the beat that holds step t - 1
    return timeline.beatKind(i > 0 ? ends[i - 1] : 0) || "other";
  }

  /** One beat forward (NOTE [replay]); a replay waits while a drawing is being laid out. */
  function tick() {
    state.timer = null;
    if (!state.playing || state.disposed) return;
    if (state.t >= timeline.length) {
      pause();
      return;
    }
    const drawing = scheduler.running || scheduler.pending;
    const now = performance.now();
    if (drawing || (state.renderedDot === null && state.renderError === null)) {
      // the new nodes are not on the page yet: showing them now would show nothing. The time
      // spent waiting for the layout is not taken from the catch-up's reading time.
      if (state.waitedAt !== null) state.replayEnds += now - state.waitedAt;
      state.waitedAt = now;
      state.timer = setTimeout(tick, WAIT_MS);
      return;
    }
    if (state.waitedAt !== null) state.replayEnds += now - state.waitedAt;
    state.waitedAt = null;
    const ends = timeline.beatEnds();
    const i = firstBeatAfter(ends, state.t);
    let next = ends[i];
    let ms = BEAT_MS[timeline.beatKind(state.t) || "other"] / state.speed;
    if (state.following) {
      // catching up: end by replayEnds, beats shown faster or several at once
      const left = Math.max(state.replayEnds - now, MIN_BEAT_MS);
      const beats = ends.length - i;
      ms = Math.min(ms, Math.max(MIN_BEAT_MS, left / beats));
      const per = Math.max(1, Math.round((beats * ms) / left));
      next = ends[Math.min(i + per - 1, ends.length - 1)];
    }
    setPosition(next);
    if (state.t >= timeline.length) pause();
    else scheduleTick(ms);
  }

  /** @param {number|null} id */
  function select(id) {
    state.selected = id;
    state.selectedGroup = null;
    update();
  }

  // ------------------------------------------------------------------------------ updates
  function update() {
    if (state.disposed) return;
    const opts = options();
    state.t = clamp(state.t, 0, timeline.length);
    const walk = timeline.stateAt(state.t);
    const g = { ...walk, shown: walk.visible };
    state.graph = g;
    setText(title, opts.title || "");
    title.hidden = !opts.title;
    updateControls();
    updateError(g);
    updateEmpty(g);
    updateCode(g);
    updateInspector(g);
    updateChainRule(g);
    training.update(timeline.passes, passAt(timeline.steps, timeline.passes, g.t));
    const structure = currentStructure();
    updateNotes(); // after the structure: its hidden count is this update's
    if (structure.dot !== state.renderedDot) {
      // A new structure (live growth, a toggle, a group opened): lay it out (coalesced).
      const tween = useTweens(structure.boxes.length, opts.tween_max_nodes, reducedMotion);
      root.classList.toggle("dg-animate", tween);
      scheduler.request({ dot: structure.dot, tween, t: state.t, structure });
    } else if (!scheduler.running) {
      restyle(); // a playback step: the drawing is restyled, not laid out again
    }
    if (state.drawn) updateGroups(state.drawn);
  }

  function updateControls() {
    detailBtn.setAttribute("aria-pressed", String(detailShown()));
    const n = timeline.length;
    const t = state.t;
    scrub.max = String(n);
    scrub.value = String(t);
    scrub.setAttribute("aria-valuetext", `step ${t} of ${n}`);
    const replaying = state.playing && state.following && t < n;
    skipBtn.hidden = !replaying;
    root.classList.toggle("dg-replaying", replaying);
    const at = t > 0 ? `${t} / ${n} \u00B7 ${timeline.describeStep(t - 1)}` : `${t} / ${n}`;
    setText(position, replaying ? `replaying \u00B7 ${at}` : at);
    position.setAttribute("aria-live", state.playing ? "off" : "polite"); // no chatter while playing
    setDisabled(backBtn, t <= 0);
    setDisabled(fwdBtn, t >= n);
    setDisabled(endFwdBtn, n === 0);
    setDisabled(startBwdBtn, timeline.startOfBackward(t) === null);
    setText(/** @type {Element} */ (playBtn.firstChild), state.playing ? "\u275A\u275A" : "\u25B6\uFE0E");
    setText(/** @type {Element} */ (playBtn.lastChild), state.playing ? "pause" : "play");
    playBtn.setAttribute("aria-pressed", String(state.playing));
    if (speedSelect.value !== String(state.speed)) speedSelect.value = String(state.speed);
  }

  /** @param {import("./timeline.js").GraphState} g */
  function updateError(g) {
    errorBanner.hidden = g.error === null;
    setText(errorText, g.error || "");
  }

  /** @param {import("./timeline.js").GraphState} g */
  function updateEmpty(g) {
    // a watch block that ended with nothing drawn: say how to see a graph built before it
    const ended = options().watching === false;
    const text = timeline.length === 0
      ? ended ? NOTHING_WATCHED : "Waiting for the first node\u2026"
      : g.shown.length === 0 ? "Nothing drawn yet at this position: step forward or play." : "";
    setText(empty, text);
    empty.hidden = !text;
  }

  // NOTE [the source panel] The panel shows one line of the learner's code: the selected
  // node's; else, during a backward pass (from its backward_started step to its end), the line
  // that called backward(), which may be in a later cell than the forward pass (a watched
  // graph stays watched), and its title says "backward"; else the newest node's. It shows the
  // newest text received for that file: the text grows as more of the file's lines make nodes.
  /** @param {import("./timeline.js").GraphState} g */
  function updateCode(g) {
    const selected = state.selected !== null ? timeline.nodes.get(state.selected) || null : null;
    const backward = selected === null && g.backward && g.backward.where ? g.backward.where : null;
    const node = selected ?? (g.newest === null ? null : timeline.nodes.get(g.newest) || null);
    const place = backward ?? node; // {file, line, cell}
    const file = place && place.file ? place.file : null;
    const source = file === null ? undefined : timeline.sources.get(file);
    const kept = file === null ? undefined : timeline.kept.get(file);
    const why = source !== undefined ? ""
      : file !== null ? (backward ? "The source of this backward() call was not recorded." : "The source of this node was not recorded.")
      : node !== null ? "No source line for this node (made before watching began, or inside a library)."
      : "No source yet.";
    const drawn = state.codeDrawn;
    if (!drawn || file !== state.codeFile || source !== drawn.source || kept !== drawn.kept || why !== drawn.why) {
      state.codeDrawn = { source, kept, why };
      state.codeFile = file;
      clear(codeScroll);
      if (source !== undefined) codeScroll.appendChild(buildCodeLines(doc, source, null, kept));
      else codeScroll.appendChild(make(doc, "div", { className: "dg-muted", text: why }));
    }
    const placeName = place && place.cell != null ? `cell [${place.cell}]` : file ? basename(file) : "";
    setText(codeHead, ["source", placeName, backward ? "backward" : ""].filter(Boolean).join(" \u00B7 "));
    const list = codeScroll.querySelector("ol.dg-lines");
    if (!list) return;
    const row = markCurrentLine(list, place && place.line != null ? place.line : null);
    if (row) keepVisible(codeScroll, row);
  }

  /** @param {import("./timeline.js").GraphState} g */
  function updateInspector(g) {
    const group = state.selectedGroup;
    if (group !== null) {
      const out = timeline.nodes.get(group.output);
      const { grad, later } = gradAt(timeline.steps, group.output, g.t);
      const members = group.members.map((m) => timeline.nodes.get(m)).filter((n) => n !== undefined);
      renderRows(doc, inspectorBody, moduleRows(group.title, /** @type {any[]} */ (members), out, { grad, gradLater: later, freed: g.freed }));
      return;
    }
    const id = state.selected;
    const node = id === null ? null : timeline.nodes.get(id);
    if (!node || id === null) {
      clear(inspectorBody);
      inspectorBody.appendChild(make(doc, "div", {
        className: "dg-muted",
        text: "Click a node to see its op, shape, values, gradient, saved bytes, source line and local derivative rule; "
          + "a box, to open it and see its module's output and gradient.",
      }));
      return;
    }
    const { grad, later } = gradAt(timeline.steps, id, g.t);
    const at = { grad, gradLater: later, freed: g.freed.has(id) };
    renderRows(doc, inspectorBody, inspectorRows(node, at, timeline.sources));
    if (!g.shown.includes(id)) {
      inspectorBody.appendChild(make(doc, "div", { className: "dg-muted", text: "Not drawn at this position of the timeline." }));
    }
  }

  /** @param {import("./timeline.js").GraphState} g */
  function updateChainRule(g) {
    const rule = chainRuleAt(timeline.steps, timeline.nodes, timeline.edges.values(), g.t);
    chainPanel.hidden = rule === null;
    if (rule === null) return;
    setText(chainHead, rule.title);
    renderRows(doc, chainBody, rule.rows);
  }

  function updateNotes() {
    clear(notes);
    const dropped = timeline.dropped;
    if (dropped.passes) {
      notes.appendChild(make(doc, "div", { className: "dg-older-note", text: olderPassesNote(dropped) }));
    }
    if (dropped.nodes || dropped.steps) {
      notes.appendChild(make(doc, "div", {
        text: `Not recorded (over the recording budget): ${dropped.nodes} nodes, ${dropped.steps} steps.`,
      }));
    }
    if (state.renderError) {
      notes.appendChild(make(doc, "div", { className: "dg-render-error", text: `Graphviz could not draw this graph: ${state.renderError}` }));
    }
    for (const [name, why] of Object.entries(state.unreadable)) {
      notes.appendChild(make(doc, "div", {
        className: "dg-data-error",
        text: `This graph's ${name === "snapshot" ? "saved state" : "latest update"} could not be read: ${why}. `
          + "What could be read is shown; run the cell again to redraw it.",
      }));
    }
    const s = state.structure && state.structure.structure;
    if (s && s.statsHidden > 0) { // dot.py NOTE [running statistics]
      notes.appendChild(make(doc, "div", {
        className: "dg-stats-note",
        text: `${s.statsHidden} running statistics (a BatchNorm's running_mean, running_var) are not drawn: `
          + "dg.watch(running_stats=True) draws them.",
      }));
    }
    if (s && s.hidden > 0) {
      const total = timeline.nodes.size;
      notes.appendChild(make(doc, "div", {
        className: "dg-hidden-note",
        text: `Showing the newest ${total - s.hidden} of ${total} nodes: the oldest ${s.hidden} are in one `
          + `"hidden" box (over the budget of ${options().max_nodes} boxes; dg.watch(max_visible=...) draws more).`,
      }));
    }
    notes.hidden = !notes.firstChild;
  }

  /**
   * The groups bar: what is rolled up (click its box, or "expand", to open it) and what the
   * learner opened ("roll up"), as the drawing on the page shows it. A loop opened part of the
   * way has both ("expand more" opens its next iterations), and a loop not open all the way
   * can be ("expand all": every iteration, a longer layout).
   */
  let groupsShown = "";
  /** @param {import("./structure.js").Structure} s */
  function updateGroups(s) {
    const text = JSON.stringify([s.groups, state.busy]);
    if (text === groupsShown) return;
    groupsShown = text;
    clear(groupsBar);
    const add = (/** @type {string} */ label, /** @type {string} */ key, /** @type {"open"|"all"|"roll up"} */ action, /** @type {boolean} */ expanded) => {
      const b = make(doc, "button", {
        className: "dg-btn dg-group-toggle",
        text: label,
        attrs: { type: "button", "data-group": key, "data-action": action, "aria-expanded": String(expanded) },
      });
      setDisabled(b, state.busy);
      groupsBar.appendChild(b);
    };
    const map = s.groups.filter((group) => !group.loop && !group.expanded).length > MAP_BUTTONS_UP_TO;
    for (const group of s.groups) {
      const partly = group.loop && !group.expanded && group.opened > 0;
      // NOTE [map]: a map's closed boxes say "click to open"; past a few the bar lists only
      // what is open, to roll it up (a button per box of ResNet-18's map is a wall of them)
      if (!group.expanded && (group.loop || !map)) add(`${partly ? "expand more" : "expand"}: ${group.title}`, group.key, "open", partly);
      if (group.loop && !group.expanded) add(`expand all: ${group.title}`, group.key, "all", partly);
      if (group.expanded || partly) add(`roll up: ${group.title}`, group.key, "roll up", true);
    }
    groupsBar.hidden = !groupsBar.firstChild;
  }

  /**
   * NOTE [busy] On while a layout the learner asked for is under way: the sign shows, the group
   * buttons are disabled (a second click does not undo the first before anything was drawn),
   * and the layout skips NOTE [rate]'s wait. Off when that drawing is on the page.
   * @param {boolean} on
   */
  function setBusy(on) {
    if (state.busy === on) return;
    state.busy = on;
    setText(busySign, on ? "laying out\u2026" : "");
    busySign.hidden = !on;
    graphEl.setAttribute("aria-busy", String(on));
    if (state.drawn) updateGroups(state.drawn);
  }

  /**
   * A change of the structure the learner asked for: made, then laid out with the busy sign.
   * @param {() => void} change
   */
  function relayout(change) {
    setBusy(true);
    change();
    update();
    if (!scheduler.running && !scheduler.pending) setBusy(false); // the same drawing: nothing to lay out
  }

  /**
   * Open a group (a loop: its next few iterations, NOTE [a loop opens a few iterations at a
   * time], or with "all" every one of them) or roll it up, from the drawing on the page.
   * Ignored while the last one is being laid out (NOTE [busy]).
   * @param {string} key @param {"open"|"all"|"roll up"} action
   */
  function toggleGroup(key, action) {
    const s = state.drawn;
    const group = s ? s.groups.find((g) => g.key === key) : undefined;
    if (state.busy || !s || !group) return;
    // the learner takes over: a replay ends here (NOTE [replay]), so that it does not pan the
    // view away from what was opened, nor hide it as still to come
    if (state.playing && state.following) moveTo(timeline.length);
    relayout(() => {
      if (action === "roll up") {
        state.expanded.delete(key);
        state.openIterations.delete(key);
        // the boxes opened inside it close with it (NOTE [map])
        const inside = `${key.slice(key.indexOf(":") + 1)} / `;
        for (const k of [...state.expanded]) if (k.slice(k.indexOf(":") + 1).startsWith(inside)) state.expanded.delete(k);
        state.zoom = { ...state.zoom, user: false }; // rolled up again: back to the whole drawing
        return;
      }
      const loop = s.loops.find((l) => l.key === key);
      if (!loop) {
        state.expanded.add(key);
        const box = s.boxes.find((b) => b.kind === "scope" && b.key === key);
        state.opened = box ? box.members : null;
        return;
      }
      const from = group.opened;
      const more = action === "all" ? loop.iterations.length : iterationsToOpen(loop, from);
      const to = Math.min(from + more, loop.iterations.length);
      if (to >= loop.iterations.length) {
        state.expanded.add(key);
        state.openIterations.delete(key);
      } else state.openIterations.set(key, to);
      state.opened = loop.iterations.slice(from, to).flat(); // the next layout zooms to them
    });
  }

  /**
   * How many more iterations of `loop` to open: as many as the pane shows with readable labels,
   * judged by the size of an iteration already drawn (the one before the box, or the last one
   * opened), along the drawing's ranks; at least one, at most MAX_OPEN.
   * @param {import("./structure.js").Loop} loop @param {number} opened
   */
  function iterationsToOpen(loop, opened) {
    const pane = paneSize();
    const drawnIteration = opened > 0 ? loop.iterations[opened - 1] : loop.first;
    const targets = drawnIteration.map((id) => state.elements.get(`n${id}`)).filter(Boolean).map((item) => /** @type {{el: Element}} */ (item).el);
    const rect = targets.length && pane.width && graphEl.getBoundingClientRect ? graphRect(targets) : null;
    if (!rect) return 1;
    const across = turned() ? rect.width : rect.height;
    const room = (turned() ? pane.width : pane.height) / Math.min(readableScale(), FIT_MAX) - 24;
    return Math.min(Math.max(Math.floor(room / Math.max(across, 1)), 1), MAX_OPEN);
  }

  /** Show the wheel hint for a moment (NOTE [wheel]). */
  function showWheelHint() {
    wheelHint.hidden = false;
    if (state.hintTimer !== null) clearTimeout(state.hintTimer);
    state.hintTimer = setTimeout(() => {
      state.hintTimer = null;
      wheelHint.hidden = true;
    }, HINT_MS);
  }

  /** The legend: one swatch per mark of the vocabulary, styled from the vocabulary table. */
  function buildLegend() {
    clear(legend);
    const v = header().vocabulary || {};
    const node = v.node || {};
    const freed = v.freed || {};
    // NOTE [one legend] (dyngraph/dot.py LEGEND): the names and help texts come with the
    // vocabulary; the swatch of each style is drawn here.
    const op = svgStyle(node.op);
    /** @type {Record<string, [string, ReturnType<typeof svgStyle>]>} */
    const swatches = {
      leaf: ["dg-sw-box", svgStyle(node.leaf)],
      parameter: ["dg-sw-box", svgStyle(node.parameter)],
      constant: ["dg-sw-box", svgStyle(node.constant)],
      op: ["dg-sw-ellipse", op],
      output: ["dg-sw-ellipse", { ...op, ...svgStyle(String(v.output || "").replace(/^\[|\]$/g, "")) }],
      saved: ["dg-sw-ellipse", { ...op, ...svgStyle(v.saved) }],
      freed: ["dg-sw-ellipse", { ...op, ...svgStyle(freed.op) }],
      grad: ["dg-sw-ellipse dg-sw-grad", op],
      summed: ["dg-sw-ellipse dg-sw-summed", op],
      group: ["dg-sw-stack", svgStyle(v.loop || v.group)],
    };
    /** @type {Array<[string, string, ReturnType<typeof svgStyle>, string]>} */
    const items = [];
    for (const [key, name, help] of /** @type {Array<[string, string, string]>} */ (v.legend || [])) {
      if (!(key in swatches)) continue; // a static picture's entry (gradient size, runs A/B)
      const [shape, look] = swatches[key];
      items.push([name, shape, look, key === "group" ? `${help}: click to open` : help]);
    }
    items.push(["newest gradient", "dg-sw-flow", {}, "the edge the gradient just flowed back along"]);
    for (const [name, shape, look, help] of items) {
      const item = make(doc, "span", { className: "dg-legend-item", attrs: { title: help } });
      const swatch = make(doc, "span", { className: `dg-swatch ${shape}`, attrs: { "aria-hidden": "true" } });
      if (look.fill) swatch.style.background = look.fill;
      if (look.stroke) swatch.style.borderColor = look.stroke;
      if (look.dashed) swatch.style.borderStyle = "dashed";
      if (look.width) swatch.style.borderWidth = `${Math.min(look.width, 2)}px`;
      item.append(swatch, make(doc, "span", { text: name }));
      legend.appendChild(item);
    }
  }

  // ------------------------------------------------------------------------------ input
  listen(backBtn, "click", () => enabled(backBtn) && step(-1));
  listen(fwdBtn, "click", () => enabled(fwdBtn) && step(1));
  listen(playBtn, "click", togglePlay);
  listen(skipBtn, "click", skipToEnd);
  listen(endFwdBtn, "click", () => {
    if (!enabled(endFwdBtn)) return;
    moveTo(timeline.endOfForward(state.t));
  });
  listen(startBwdBtn, "click", () => {
    const p = timeline.startOfBackward(state.t);
    if (p === null) return;
    moveTo(p);
  });
  listen(speedSelect, "change", () => {
    const speed = Number(speedSelect.value);
    if (speed > 0) state.speed = speed;
    if (state.playing) scheduleTick();
  });
  listen(scrub, "input", () => {
    moveTo(Number(scrub.value));
  });
  listen(root, "keydown", (/** @type {KeyboardEvent} */ e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) return;
    const target = /** @type {Element} */ (e.target);
    const field = target !== root && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName);
    switch (e.key) {
      case "ArrowLeft":
        if (field) return;
        step(-1);
        break;
      case "ArrowRight":
        if (field) return;
        step(1);
        break;
      case " ":
      case "Spacebar":
        if (target !== root) return; // a focused button or field handles its own Space
        togglePlay();
        break;
      case "Home":
        if (field) return;
        moveTo(0);
        break;
      case "End":
        if (field) return;
        moveTo(timeline.length);
        break;
      case "+":
      case "=":
        if (field) return;
        zoomBy(ZOOM_STEP);
        break;
      case "-":
        if (field) return;
        zoomBy(1 / ZOOM_STEP);
        break;
      case "0":
        if (field) return;
        fit();
        break;
      default:
        return;
    }
    e.preventDefault();
    e.stopPropagation();
  });
  // Clicking the graph gives the keyboard to the widget (the graph itself is not focusable).
  listen(graphWrap, "pointerdown", () => {
    if (doc.activeElement !== root && !root.contains(doc.activeElement)) root.focus({ preventScroll: true });
  });
  listen(graphEl, "click", (/** @type {MouseEvent} */ e) => {
    if (state.dragged) {
      state.dragged = false;
      return;
    }
    const target = /** @type {Element|null} */ (e.target);
    const nodeEl = target && target.closest ? target.closest("g.node") : null;
    const name = nodeEl ? titleOf(nodeEl) : "";
    const match = /^n(\d+)$/.exec(name);
    if (!match && name && state.drawn) {
      // A group box: open it (a rolled-up loop, a collapsed scope).
      const box = state.drawn.boxes.find((b) => b.name === name);
      if (box && box.kind === "scope" && box.output !== undefined && !state.busy) {
        // a module's box: the inspector shows the module, and it opens (NOTE [map])
        state.selected = null;
        state.selectedGroup = { key: String(box.key), title: String(box.title), members: box.members, output: box.output };
      }
      if (box && (box.kind === "loop" || box.kind === "scope")) {
        toggleGroup(box.key || box.name, "open");
        return;
      }
    }
    select(match ? Number(match[1]) : null);
  });
  listen(groupsBar, "click", (/** @type {MouseEvent} */ e) => {
    const target = /** @type {Element|null} */ (e.target);
    const b = target && target.closest ? target.closest("button[data-group]") : null;
    const action = b ? b.getAttribute("data-action") : null;
    if (b) toggleGroup(String(b.getAttribute("data-group")), action === "roll up" || action === "all" ? action : "open");
  });
  listen(zoomInBtn, "click", () => zoomBy(ZOOM_STEP));
  listen(zoomOutBtn, "click", () => zoomBy(1 / ZOOM_STEP));
  listen(fitBtn, "click", () => fit());
  listen(detailBtn, "click", () => relayout(() => {
    state.detail = !detailShown();
  }));
  listen(graphEl, "wheel", (/** @type {WheelEvent} */ e) => {
    if (!e.ctrlKey && !e.metaKey) {
      showWheelHint(); // NOTE [wheel]: not prevented, so the notebook scrolls
      return;
    }
    if (e.deltaY === 0) return;
    e.preventDefault();
    const r = graphEl.getBoundingClientRect();
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    zoomBy(Math.exp(-e.deltaY * unit * 0.0015), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  /** @type {{x: number, y: number, zoom: {scale: number, x: number, y: number}, id: number, moved: boolean}|null} */
  let drag = null;
  listen(graphEl, "pointerdown", (/** @type {PointerEvent} */ e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, zoom: { ...state.zoom }, id: e.pointerId, moved: false };
    state.dragged = false;
  });
  listen(graphEl, "pointermove", (/** @type {PointerEvent} */ e) => {
    if (!drag || e.pointerId !== drag.id) return;
    const dx = e.clientX - drag.x;
    const dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    if (!drag.moved) {
      drag.moved = true;
      if (graphEl.setPointerCapture) graphEl.setPointerCapture(e.pointerId);
      graphEl.classList.add("dg-dragging");
    }
    state.zoom = { scale: drag.zoom.scale, x: drag.zoom.x - dx / drag.zoom.scale, y: drag.zoom.y - dy / drag.zoom.scale, user: true };
    applyZoom();
  });
  const endDrag = (/** @type {PointerEvent} */ e) => {
    if (!drag || e.pointerId !== drag.id) return;
    state.dragged = drag.moved;
    drag = null;
    graphEl.classList.remove("dg-dragging");
  };
  listen(graphEl, "pointerup", endDrag);
  listen(graphEl, "pointercancel", endDrag);
  const win = doc.defaultView;
  if (win && "ResizeObserver" in win) {
    let last = "";
    let lastWidth = -1;
    const observer = new win.ResizeObserver(() => {
      const pane = paneSize();
      if (pane.width !== lastWidth) {
        lastWidth = pane.width;
        sizePane(); // a new width: a new height (which calls this observer again, to refit)
      }
      const now = `${pane.width}x${pane.height}`;
      if (now === last) return;
      last = now;
      if (state.zoom.user) applyZoom();
      else fit(detailShown());
    });
    observer.observe(graphEl);
    disposers.push(() => observer.disconnect());
    listen(win, "resize", () => sizePane()); // the window's height bounds the pane's
  }
  listen(codeScroll, "click", (/** @type {MouseEvent} */ e) => {
    const target = /** @type {Element|null} */ (e.target);
    const lineBtn = target && target.closest ? target.closest("button.dg-lineno") : null;
    if (!lineBtn || state.codeFile === null || !state.graph) return;
    const id = timeline.nodeOnLine(state.codeFile, Number(lineBtn.getAttribute("data-line")), state.graph.shown);
    if (id !== null) select(id);
  });

  onModel("change:snapshot", onSnapshot);
  onModel("change:delta", () => applyDelta(true));
  onModel("change:header", () => {
    timeline.header = header();
    buildLegend();
    update();
  });
  onModel("change:options", () => {
    applySpeedOption();
    update();
  });

  function applySpeedOption() {
    const speed = Number(options().speed);
    if (!(speed > 0)) return;
    if (!SPEEDS.includes(speed) && !Array.from(speedSelect.options).some((o) => o.value === String(speed))) {
      speedSelect.appendChild(make(doc, "option", { text: `${speed}\u00D7`, attrs: { value: String(speed) } }));
    }
    state.speed = speed;
  }

  // ------------------------------------------------------------------------------ start
  applySpeedOption();
  buildLegend();
  timeline.loadSnapshot(trait("snapshot"));
  applyDelta(false);
  // NOTE [replay]: what arrived before this view was drawn is played from the start
  state.t = replays() ? 0 : timeline.length;
  catchUp();
  update();

  return {
    root,
    timeline,
    state,
    scheduler,
    /** the learner moves to t (playing stops; the view follows the end again only from it) */
    setPosition: moveTo,
    step,
    play,
    pause,
    select,
    dispose() {
      if (state.disposed) return;
      state.disposed = true;
      pause();
      if (state.hintTimer !== null) clearTimeout(state.hintTimer);
      scheduler.dispose();
      for (const off of disposers.splice(0)) off();
      if (renderer.destroy) renderer.destroy();
      root.remove();
    },
  };

  // ------------------------------------------------------------------------------ helpers
  /** @param {HTMLElement} b @param {boolean} off */
  function setDisabled(b, off) {
    // aria-disabled, not disabled: a disabled button drops the keyboard focus.
    b.setAttribute("aria-disabled", String(off));
  }
  /** @param {HTMLElement} b */
  function enabled(b) {
    return b.getAttribute("aria-disabled") !== "true";
  }
}

/**
 * The index of the first beat ending after position t (timeline.js NOTE [beats]).
 * @param {number[]} ends ascending
 * @param {number} t
 */
export function firstBeatAfter(ends, t) {
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid] > t) hi = mid;
    else lo = mid + 1;
  }
  return lo;
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

/**
 * Scroll `box` (only) so that `row` is visible; never scrolls the page.
 * @param {HTMLElement} box @param {HTMLElement} row
 */
function keepVisible(box, row) {
  const top = row.offsetTop;
  const bottom = top + row.offsetHeight;
  if (top < box.scrollTop || bottom > box.scrollTop + box.clientHeight) {
    box.scrollTop = Math.max(0, top - box.clientHeight / 3);
  }
}
