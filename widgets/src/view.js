// One view of a GraphView model: the toolbar, graph, code panel and inspector, and playback.
// The renderer (d3-graphviz in the bundle, a stub in tests) is passed in, so this module has
// no d3 and runs under jsdom.

import { Timeline, GAP, APPLIED, clamp, gradAt } from "./timeline.js";
import { decodeTrait } from "./events.js";
import { createScheduler, useTweens } from "./coalesce.js";
import { make, setText, clear, buildCodeLines, markCurrentLine, inspectorRows, renderRows, basename } from "./text.js";

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
/** A resync request not answered within this many ms may be sent again. */
const RESYNC_RETRY_MS = 2000;

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
  const disposers = [];
  const state = {
    t: 0,
    playing: false,
    speed: 1,
    /** @type {number|null} */
    selected: null,
    /** @type {import("./timeline.js").GraphState|null} */
    graph: null,
    resyncPendingSince: /** @type {number|null} */ (null),
    /** @type {string|null} */
    codeFile: null,
    codeHasSource: false,
    /** @type {string|null} */
    renderedDot: null,
    /** @type {string|null} */
    renderError: null,
    /** the position the graph was last scrolled to show (see decorate) */
    revealedAt: -1,
    /** @type {ReturnType<typeof setTimeout>|null} */
    timer: null,
    disposed: false,
  };

  /**
   * @param {EventTarget} target @param {string} type @param {(e: any) => void} fn
   */
  const listen = (target, type, fn) => {
    target.addEventListener(type, fn);
    disposers.push(() => target.removeEventListener(type, fn));
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
      "aria-keyshortcuts": "ArrowLeft ArrowRight Space Home End",
      // Keep JupyterLab's notebook shortcuts (command mode) off keys pressed inside the widget.
      "data-lm-suppress-shortcuts": "true",
    },
  });
  const title = make(doc, "div", { className: "dg-title" });
  const toolbar = make(doc, "div", { className: "dg-toolbar", attrs: { role: "toolbar", "aria-label": "playback" } });
  const button = (/** @type {string} */ text, /** @type {string} */ label, /** @type {string} */ name) =>
    make(doc, "button", { className: `dg-btn dg-${name}`, text, attrs: { type: "button", "aria-label": label, title: label } });
  const backBtn = button("\u2190 step", "step back (Left arrow)", "back");
  const playBtn = button("\u25B6\uFE0E play", "play / pause (Space)", "play");
  playBtn.setAttribute("aria-pressed", "false");
  const fwdBtn = button("step \u2192", "step forward (Right arrow)", "forward");
  const endFwdBtn = button("end of forward", "jump to the end of the forward pass", "end-forward");
  const startBwdBtn = button("start of backward", "jump to the start of the backward pass", "start-backward");
  const speedLabel = make(doc, "label", { className: "dg-speed" });
  const speedText = make(doc, "span", { text: "speed" });
  const speedSelect = /** @type {HTMLSelectElement} */ (make(doc, "select", { attrs: { "aria-label": "playback speed" } }));
  speedLabel.append(speedText, speedSelect);
  const scrub = /** @type {HTMLInputElement} */ (make(doc, "input", {
    className: "dg-scrub",
    attrs: { type: "range", min: "0", max: "0", step: "1", value: "0", "aria-label": "position in the timeline" },
  }));
  const position = make(doc, "span", { className: "dg-position", attrs: { role: "status" } });
  toolbar.append(backBtn, playBtn, fwdBtn, endFwdBtn, startBwdBtn, speedLabel, scrub, position);

  const main = make(doc, "div", { className: "dg-main" });
  const graphWrap = make(doc, "div", { className: "dg-graph-wrap" });
  const graphEl = make(doc, "div", { className: "dg-graph", attrs: { "aria-label": "computation graph" } });
  const errorBanner = make(doc, "div", { className: "dg-error", attrs: { role: "alert" } });
  errorBanner.hidden = true;
  const errorTitle = make(doc, "strong", { text: "backward failed" });
  const errorText = make(doc, "pre", { className: "dg-error-text" });
  errorBanner.append(errorTitle, errorText);
  const empty = make(doc, "div", { className: "dg-empty" });
  graphWrap.append(errorBanner, graphEl, empty);

  const side = make(doc, "div", { className: "dg-side" });
  const codePanel = make(doc, "section", { className: "dg-panel dg-code-panel", attrs: { "aria-label": "source" } });
  const codeHead = make(doc, "div", { className: "dg-panel-title", text: "source" });
  const codeScroll = make(doc, "div", { className: "dg-code-scroll" });
  codePanel.append(codeHead, codeScroll);
  const inspector = make(doc, "section", { className: "dg-panel dg-inspector", attrs: { "aria-label": "inspector" } });
  const inspectorHead = make(doc, "div", { className: "dg-panel-title", text: "inspector" });
  const inspectorBody = make(doc, "div", { className: "dg-inspector-body" });
  inspector.append(inspectorHead, inspectorBody);
  side.append(codePanel, inspector);
  main.append(graphWrap, side);

  const notes = make(doc, "div", { className: "dg-notes" });
  root.append(title, toolbar, main, notes);
  el.appendChild(root);

  for (const speed of SPEEDS) {
    speedSelect.appendChild(make(doc, "option", { text: `${speed}\u00D7`, attrs: { value: String(speed) } }));
  }

  // ------------------------------------------------------------------------------ rendering
  const renderer = createRenderer(graphEl);
  const scheduler = createScheduler(
    async (/** @type {{dot: string, tween: boolean, t: number}} */ job) => {
      if (job.dot !== state.renderedDot) {
        try {
          const started = performance.now();
          await renderer.render(job.dot, job.tween);
          // How long the last drawing took, and how many there were: numbers a test (or a
          // curious learner in the devtools) can read.
          graphEl.dataset.renderMs = String(Math.round(performance.now() - started));
          graphEl.dataset.renders = String(Number(graphEl.dataset.renders || 0) + 1);
          state.renderedDot = job.dot;
          if (state.renderError !== null) {
            state.renderError = null;
            updateNotes();
          }
        } catch (error) {
          state.renderError = error instanceof Error ? error.message : String(error);
          updateNotes();
        }
      }
      if (!state.disposed) decorate();
      // The timeline position the drawing now shows (a test waits for it to match the slider).
      graphEl.dataset.shownStep = String(job.t);
    },
  );

  /** Mark the edges carrying the newest gradient and the selected node on the drawn SVG. */
  function decorate() {
    const g = state.graph;
    const svg = graphEl.querySelector("svg");
    if (!g || !svg) return;
    const flowing = new Set(g.highlight.map(([src, dst]) => `n${src}->n${dst}`));
    for (const edge of Array.from(svg.querySelectorAll("g.edge"))) {
      edge.classList.toggle("dg-flow", flowing.has(titleOf(edge)));
    }
    const selected = state.selected === null ? null : `n${state.selected}`;
    const newest = g.newest === null ? null : `n${g.newest}`;
    /** @type {Element[]} */
    const focus = [];
    for (const node of Array.from(svg.querySelectorAll("g.node"))) {
      const name = titleOf(node);
      node.classList.toggle("dg-selected", name === selected);
      if (name === newest) focus.push(node);
    }
    // After a move in the timeline, scroll the graph (only the graph) to what just happened:
    // the edges carrying the newest gradient, else the newest node.
    if (g.t !== state.revealedAt && state.renderedDot === g.dot) {
      state.revealedAt = g.t;
      const flow = Array.from(svg.querySelectorAll("g.edge.dg-flow"));
      reveal(graphEl, flow.length ? flow : focus);
    }
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
   * each value is decoded once. Plain objects (tests) are used as they are.
   * @param {string} name
   */
  function trait(name) {
    const value = model.get(name);
    if (name !== "snapshot" && name !== "delta") return value;
    const cached = parsed[name];
    if (cached && cached.raw === value) return cached.value;
    const result = decodeTrait(value);
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
    const follow = state.t >= timeline.length;
    timeline.loadSnapshot(snapshot);
    state.resyncPendingSince = null;
    applyDelta(false);
    afterData(follow);
  }

  /** Apply the delta trait if it is the next one. @param {boolean} redraw */
  function applyDelta(redraw) {
    const delta = trait("delta");
    const follow = state.t >= timeline.length;
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

  /** @param {boolean} follow  the position was at the end: keep it there (live) */
  function afterData(follow) {
    if (follow) state.t = timeline.length;
    update();
  }

  // ------------------------------------------------------------------------------ playback
  /** @param {number} t */
  function setPosition(t) {
    state.t = clamp(t, 0, timeline.length);
    update();
  }

  /** @param {number} by */
  function step(by) {
    pause();
    setPosition(state.t + by);
  }

  function play() {
    if (state.playing) return;
    if (state.t >= timeline.length) state.t = 0;
    state.playing = true;
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
    if (state.playing) pause();
    else play();
  }

  function scheduleTick() {
    if (state.timer !== null) clearTimeout(state.timer);
    state.timer = setTimeout(() => {
      state.timer = null;
      if (!state.playing || state.disposed) return;
      if (state.t >= timeline.length) {
        pause();
        return;
      }
      setPosition(state.t + 1);
      if (state.t >= timeline.length) pause();
      else scheduleTick();
    }, STEP_MS / state.speed);
  }

  /** @param {number|null} id */
  function select(id) {
    state.selected = id;
    update();
  }

  // ------------------------------------------------------------------------------ updates
  function update() {
    if (state.disposed) return;
    const opts = options();
    state.t = clamp(state.t, 0, timeline.length);
    const g = timeline.graphAt(state.t, header(), opts);
    state.graph = g;
    setText(title, opts.title || "");
    title.hidden = !opts.title;
    updateControls();
    updateError(g);
    updateEmpty(g);
    updateCode(g);
    updateInspector(g);
    updateNotes();
    const drawn = g.shown.length + (g.hidden > 0 ? 1 : 0);
    scheduler.request({ dot: g.dot, tween: useTweens(drawn, opts.tween_max_nodes, reducedMotion), t: state.t });
  }

  function updateControls() {
    const n = timeline.length;
    const t = state.t;
    scrub.max = String(n);
    scrub.value = String(t);
    scrub.setAttribute("aria-valuetext", `step ${t} of ${n}`);
    setText(position, t > 0 ? `${t} / ${n} \u00B7 ${timeline.describeStep(t - 1)}` : `${t} / ${n}`);
    position.setAttribute("aria-live", state.playing ? "off" : "polite"); // no chatter while playing
    setDisabled(backBtn, t <= 0);
    setDisabled(fwdBtn, t >= n);
    setDisabled(endFwdBtn, n === 0);
    setDisabled(startBwdBtn, timeline.startOfBackward(t) === null);
    setText(playBtn, state.playing ? "\u275A\u275A pause" : "\u25B6\uFE0E play");
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
    const text = timeline.length === 0
      ? "Waiting for the first node\u2026"
      : g.shown.length === 0 ? "Nothing drawn yet at this position: step forward or play." : "";
    setText(empty, text);
    empty.hidden = !text;
  }

  /** @param {import("./timeline.js").GraphState} g */
  function updateCode(g) {
    const focus = state.selected !== null && timeline.nodes.has(state.selected) ? state.selected : g.newest;
    const node = focus === null ? null : timeline.nodes.get(focus) || null;
    const file = node && node.file ? node.file : null;
    const source = file === null ? undefined : timeline.sources.get(file);
    if (file !== state.codeFile || state.codeHasSource !== (source !== undefined)) {
      state.codeFile = file;
      state.codeHasSource = source !== undefined;
      clear(codeScroll);
      if (source !== undefined) codeScroll.appendChild(buildCodeLines(doc, source, null));
      else codeScroll.appendChild(make(doc, "div", { className: "dg-muted", text: file === null ? "No source yet." : "The source of this node was not recorded." }));
    }
    setText(codeHead, node && node.cell != null ? `source \u00B7 cell [${node.cell}]` : file ? `source \u00B7 ${basename(file)}` : "source");
    const list = codeScroll.querySelector("ol.dg-lines");
    if (!list) return;
    const row = markCurrentLine(list, node && node.line != null ? node.line : null);
    if (row) keepVisible(codeScroll, row);
  }

  /** @param {import("./timeline.js").GraphState} g */
  function updateInspector(g) {
    const id = state.selected;
    const node = id === null ? null : timeline.nodes.get(id);
    if (!node || id === null) {
      clear(inspectorBody);
      inspectorBody.appendChild(make(doc, "div", {
        className: "dg-muted",
        text: "Click a node to see its op, shape, values, gradient, saved bytes, source line and local derivative rule.",
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

  function updateNotes() {
    clear(notes);
    const dropped = timeline.dropped;
    if (dropped.nodes || dropped.steps) {
      notes.appendChild(make(doc, "div", {
        text: `Not recorded (over the recording budget): ${dropped.nodes} nodes, ${dropped.steps} steps.`,
      }));
    }
    if (state.renderError) {
      notes.appendChild(make(doc, "div", { className: "dg-render-error", text: `Graphviz could not draw this graph: ${state.renderError}` }));
    }
    notes.hidden = !notes.firstChild;
  }

  // ------------------------------------------------------------------------------ input
  listen(backBtn, "click", () => enabled(backBtn) && step(-1));
  listen(fwdBtn, "click", () => enabled(fwdBtn) && step(1));
  listen(playBtn, "click", togglePlay);
  listen(endFwdBtn, "click", () => {
    if (!enabled(endFwdBtn)) return;
    pause();
    setPosition(timeline.endOfForward(state.t));
  });
  listen(startBwdBtn, "click", () => {
    const p = timeline.startOfBackward(state.t);
    if (p === null) return;
    pause();
    setPosition(p);
  });
  listen(speedSelect, "change", () => {
    const speed = Number(speedSelect.value);
    if (speed > 0) state.speed = speed;
    if (state.playing) scheduleTick();
  });
  listen(scrub, "input", () => {
    pause();
    setPosition(Number(scrub.value));
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
        pause();
        setPosition(0);
        break;
      case "End":
        if (field) return;
        pause();
        setPosition(timeline.length);
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
    const target = /** @type {Element|null} */ (e.target);
    const nodeEl = target && target.closest ? target.closest("g.node") : null;
    const match = nodeEl ? /^n(\d+)$/.exec(titleOf(nodeEl)) : null;
    select(match ? Number(match[1]) : null);
  });
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
  timeline.loadSnapshot(trait("snapshot"));
  applyDelta(false);
  state.t = timeline.length;
  update();

  return {
    root,
    timeline,
    state,
    scheduler,
    /** @param {number} t */
    setPosition,
    step,
    play,
    pause,
    select,
    dispose() {
      if (state.disposed) return;
      state.disposed = true;
      pause();
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

/** The Graphviz name of a drawn node or edge: the text of its <title> ("n7", "n3->n7"). */
export function titleOf(/** @type {Element} */ g) {
  const t = g.querySelector("title");
  return t ? (t.textContent || "").trim() : "";
}

/**
 * Scroll `box` (only) so that the union of `targets` is in view, if it is not already.
 * @param {HTMLElement} box @param {Element[]} targets
 */
function reveal(box, targets) {
  if (!targets.length || !box.getBoundingClientRect) return;
  const view = box.getBoundingClientRect();
  const rects = targets.map((t) => t.getBoundingClientRect());
  const top = Math.min(...rects.map((r) => r.top));
  const bottom = Math.max(...rects.map((r) => r.bottom));
  const left = Math.min(...rects.map((r) => r.left));
  const right = Math.max(...rects.map((r) => r.right));
  if (bottom - top === 0 && right - left === 0) return; // not laid out (jsdom, hidden)
  const margin = 16;
  if (top < view.top) box.scrollTop -= view.top - top + margin;
  else if (bottom > view.bottom) box.scrollTop += Math.min(bottom - view.bottom + margin, top - view.top - margin);
  if (left < view.left) box.scrollLeft -= view.left - left + margin;
  else if (right > view.right) box.scrollLeft += Math.min(right - view.right + margin, left - view.left - margin);
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
