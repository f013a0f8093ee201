// What the learner does to a view: the toolbar's buttons, the keys, clicks on the drawing and
// the panels, the wheel and drags over the graph, and a new size of the pane. Each listener
// calls the part it is about (playback, drawing, the view's state) or one of the view's
// actions; every one is removed with the view.

import { ZOOM_STEP } from "../zoom.js";
import { titleOf } from "./drawing.js";
import { enabled } from "./panels.js";

/** How long the "Ctrl + wheel to zoom" hint stays (dom.js NOTE [wheel]). */
const HINT_MS = 1800;

/**
 * @typedef {{
 *   doc: Document, els: import("./dom.js").Elements,
 *   timeline: import("../timeline.js").Timeline, playback: import("./playback.js").Playback,
 *   drawing: import("./drawing.js").Drawing, state: import("./state.js").ViewState,
 *   panels: import("./panels.js").Panels,
 *   listen: (target: EventTarget, type: string, fn: (e: any) => void, opts?: AddEventListenerOptions) => void,
 *   onDispose: (fn: () => void) => void,
 *   actions: {
 *     select: (id: number|null) => void,
 *     toggleGroup: (key: string, action: "open"|"all"|"roll up") => void,
 *     relayout: (change: () => void) => void,
 *   },
 * }} Input
 */

/** Listen to everything the learner does to the view. @param {Input} input */
export function listenToInput(input) {
  /** a drag just panned: the click that ends it selects nothing */
  const pointer = { dragged: false };
  listenToToolbar(input);
  listenToKeys(input);
  listenToGraph(input, pointer);
  listenToDrags(input, pointer);
  listenToResize(input);
  listenToPanels(input);
}

/** The toolbar's buttons, speed and slider. @param {Input} input */
function listenToToolbar({ els, timeline, playback, drawing, state, listen, actions }) {
  const { backBtn, fwdBtn, playBtn, skipBtn, endFwdBtn, startBwdBtn, speedSelect, scrub, zoomInBtn, zoomOutBtn, fitBtn, detailBtn } = els;
  listen(backBtn, "click", () => enabled(backBtn) && playback.step(-1));
  listen(fwdBtn, "click", () => enabled(fwdBtn) && playback.step(1));
  listen(playBtn, "click", () => playback.togglePlay());
  listen(skipBtn, "click", () => playback.skipToEnd());
  listen(endFwdBtn, "click", () => {
    if (!enabled(endFwdBtn)) return;
    playback.moveTo(timeline.endOfForward(playback.t));
  });
  listen(startBwdBtn, "click", () => {
    const p = timeline.startOfBackward(playback.t);
    if (p === null) return;
    playback.moveTo(p);
  });
  listen(speedSelect, "change", () => playback.setSpeed(Number(speedSelect.value)));
  listen(scrub, "input", () => {
    playback.moveTo(Number(scrub.value));
  });
  listen(zoomInBtn, "click", () => drawing.zoomBy(ZOOM_STEP));
  listen(zoomOutBtn, "click", () => drawing.zoomBy(1 / ZOOM_STEP));
  listen(fitBtn, "click", () => drawing.fit());
  listen(detailBtn, "click", () => actions.relayout(() => state.toggleDetail(timeline)));
}

/** The keys the widget uses (NOTE [keys] in dom.js): only those are stopped. @param {Input} input */
function listenToKeys({ els, timeline, playback, drawing, listen }) {
  const root = els.root;
  listen(root, "keydown", (/** @type {KeyboardEvent} */ e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) return;
    const target = /** @type {Element} */ (e.target);
    const field = target !== root && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName);
    switch (e.key) {
      case "ArrowLeft":
        if (field) return;
        playback.step(-1);
        break;
      case "ArrowRight":
        if (field) return;
        playback.step(1);
        break;
      case " ":
      case "Spacebar":
        if (target !== root) return; // a focused button or field handles its own Space
        playback.togglePlay();
        break;
      case "Home":
        if (field) return;
        playback.moveTo(0);
        break;
      case "End":
        if (field) return;
        playback.moveTo(timeline.length);
        break;
      case "+":
      case "=":
        if (field) return;
        drawing.zoomBy(ZOOM_STEP);
        break;
      case "-":
        if (field) return;
        drawing.zoomBy(1 / ZOOM_STEP);
        break;
      case "0":
        if (field) return;
        drawing.fit();
        break;
      default:
        return;
    }
    e.preventDefault();
    e.stopPropagation();
  });
}

/**
 * Clicks on the drawing (select a node, open a group) and the wheel over it.
 * @param {Input} input @param {{dragged: boolean}} pointer
 */
function listenToGraph({ doc, els, drawing, state, listen, onDispose, actions }, pointer) {
  const { root, graphWrap, graphEl, wheelHint } = els;
  // Clicking the graph gives the keyboard to the widget (the graph itself is not focusable).
  listen(graphWrap, "pointerdown", () => {
    if (doc.activeElement !== root && !root.contains(doc.activeElement)) root.focus({ preventScroll: true });
  });
  listen(graphEl, "click", (/** @type {MouseEvent} */ e) => {
    if (pointer.dragged) {
      pointer.dragged = false;
      return;
    }
    const target = /** @type {Element|null} */ (e.target);
    const nodeEl = target && target.closest ? target.closest("g.node") : null;
    const name = nodeEl ? titleOf(nodeEl) : "";
    const match = /^n(\d+)$/.exec(name);
    if (!match && name && drawing.drawn) {
      // A group box: open it (a rolled-up loop, a collapsed scope).
      const box = drawing.drawn.boxes.find((b) => b.name === name);
      if (box && box.kind === "scope" && box.output !== undefined && !drawing.busy) {
        // a module's box: the inspector shows the module, and it opens (NOTE [map])
        state.selectModule({ key: String(box.key), title: String(box.title), members: box.members, output: box.output });
      }
      if (box && (box.kind === "loop" || box.kind === "scope")) {
        actions.toggleGroup(box.key || box.name, "open");
        return;
      }
    }
    actions.select(match ? Number(match[1]) : null);
  });
  /** @type {ReturnType<typeof setTimeout>|null} the wheel hint's timer (NOTE [wheel]) */
  let hintTimer = null;
  onDispose(() => {
    if (hintTimer !== null) clearTimeout(hintTimer);
  });
  listen(graphEl, "wheel", (/** @type {WheelEvent} */ e) => {
    if (!e.ctrlKey && !e.metaKey) {
      // NOTE [wheel]: the hint shows for a moment; not prevented, so the notebook scrolls
      wheelHint.hidden = false;
      if (hintTimer !== null) clearTimeout(hintTimer);
      hintTimer = setTimeout(() => {
        hintTimer = null;
        wheelHint.hidden = true;
      }, HINT_MS);
      return;
    }
    if (e.deltaY === 0) return;
    e.preventDefault();
    const r = graphEl.getBoundingClientRect();
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    drawing.zoomBy(Math.exp(-e.deltaY * unit * 0.0015), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
}

/**
 * A drag over the graph pans it; the click that ends a drag selects nothing (`pointer.dragged`).
 * @param {Input} input @param {{dragged: boolean}} pointer
 */
function listenToDrags({ els, drawing, listen }, pointer) {
  const graphEl = els.graphEl;
  /** @type {{x: number, y: number, zoom: {scale: number, x: number, y: number}, id: number, moved: boolean}|null} */
  let drag = null;
  listen(graphEl, "pointerdown", (/** @type {PointerEvent} */ e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, zoom: { ...drawing.zoom }, id: e.pointerId, moved: false };
    pointer.dragged = false;
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
    drawing.panFrom(drag.zoom, dx, dy);
  });
  const endDrag = (/** @type {PointerEvent} */ e) => {
    if (!drag || e.pointerId !== drag.id) return;
    pointer.dragged = drag.moved;
    drag = null;
    graphEl.classList.remove("dg-dragging");
  };
  listen(graphEl, "pointerup", endDrag);
  listen(graphEl, "pointercancel", endDrag);
}

/** A new size of the pane or the window: the pane's height, then the fit. @param {Input} input */
function listenToResize({ doc, els, drawing, listen, onDispose }) {
  const win = doc.defaultView;
  if (!win || !("ResizeObserver" in win)) return;
  let last = "";
  let lastWidth = -1;
  const observer = new win.ResizeObserver(() => {
    const pane = drawing.paneSize();
    if (pane.width !== lastWidth) {
      lastWidth = pane.width;
      drawing.sizePane(); // a new width: a new height (which calls this observer again, to refit)
    }
    const now = `${pane.width}x${pane.height}`;
    if (now === last) return;
    last = now;
    drawing.refit();
  });
  observer.observe(els.graphEl);
  onDispose(() => observer.disconnect());
  listen(win, "resize", () => drawing.sizePane()); // the window's height bounds the pane's
}

/** The groups bar's buttons and the source panel's line numbers. @param {Input} input */
function listenToPanels({ els, timeline, drawing, panels, listen, actions }) {
  listen(els.groupsBar, "click", (/** @type {MouseEvent} */ e) => {
    const target = /** @type {Element|null} */ (e.target);
    const b = target && target.closest ? target.closest("button[data-group]") : null;
    const action = b ? b.getAttribute("data-action") : null;
    if (b) actions.toggleGroup(String(b.getAttribute("data-group")), action === "roll up" || action === "all" ? action : "open");
  });
  listen(els.codeScroll, "click", (/** @type {MouseEvent} */ e) => {
    const target = /** @type {Element|null} */ (e.target);
    const lineBtn = target && target.closest ? target.closest("button.dg-lineno") : null;
    if (!lineBtn || panels.codeFile === null || !drawing.graph) return;
    const id = timeline.nodeOnLine(panels.codeFile, Number(lineBtn.getAttribute("data-line")), drawing.graph.visible);
    if (id !== null) actions.select(id);
  });
}
