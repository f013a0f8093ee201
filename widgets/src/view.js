// One view of a GraphView model: the toolbar, graph, code panel and inspector, and playback.
// The renderer (d3-graphviz in the bundle, a stub in tests) is passed in, so the view has no
// d3 and runs under jsdom. Its parts live in view/, one job each: state.js (what is shown,
// as chosen), dom.js (the elements), data.js (the traits read into the timeline), playback.js
// (where in the timeline, and moving), drawing.js (the layout, the view onto it, restyling),
// panels.js (what is said around the drawing) and input.js (what the learner does). This
// module makes them and wires them to one another: each part gets what it needs, by name.

import { Timeline } from "./timeline.js";
import { TrainingPanel, passAt } from "./training.js";
import { make } from "./text.js";
import { ViewState } from "./view/state.js";
import { buildDom } from "./view/dom.js";
import { Feed } from "./view/data.js";
import { Playback } from "./view/playback.js";
import { Drawing } from "./view/drawing.js";
import { Panels } from "./view/panels.js";
import { listenToInput } from "./view/input.js";

/**
 * The part of anywidget's model a view uses.
 * @typedef {{
 *   get: (name: string) => any,
 *   on: (event: string, callback: (...args: any[]) => void) => void,
 *   off: (event: string, callback: (...args: any[]) => void) => void,
 *   send: (message: any) => void,
 * }} Model
 * @typedef {import("./view/drawing.js").Renderer} Renderer
 * @typedef {(container: HTMLElement) => Renderer} RendererFactory
 */

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
 * The parts of one view, made and wired.
 * @param {{model: Model, el: HTMLElement, createRenderer: RendererFactory, reducedMotion?: boolean}} args
 */
function controller({ model, el, createRenderer, reducedMotion }) {
  const doc = el.ownerDocument;
  const header = () => model.get("header") || {};
  const options = () => model.get("options") || {};
  const timeline = new Timeline();
  timeline.header = header();
  /** @type {Array<() => void>} */
  const disposers = [hidePicture(doc, model.get("picture_id"))];
  let disposed = false;
  // the loss and gradient norm over the backward passes of a training loop (src/training.js)
  const training = new TrainingPanel(doc);
  disposers.push(() => training.dispose());
  const els = buildDom(doc, el, training.el);
  const state = new ViewState();
  const panels = new Panels({ doc, els, timeline, state, header, options });
  const playback = new Playback({
    timeline,
    replays: () => !reducedMotion && options().replay !== false,
    laying: () => drawing.laying(),
    show: update,
    showControls: () => panels.controls(playback, state.detailShown(timeline)),
  });
  const renderer = createRenderer(els.graphEl);
  const drawing = new Drawing({
    doc, root: els.root, graphEl: els.graphEl, busySign: els.busySign, renderer, reducedMotion, timeline, state, header,
    on: { relayout: update, groups: showGroups, notes: showNotes },
  });
  const feed = new Feed({
    model, timeline,
    follows: () => playback.follows(),
    arrived: (follow) => {
      if (follow) playback.catchUp();
      update();
    },
    redraw: update,
  });

  /** Show the position: every panel, then the drawing (laid out anew, or restyled). */
  function update() {
    if (disposed) return;
    playback.clamp();
    const g = timeline.stateAt(playback.t);
    panels.update(g);
    panels.controls(playback, state.detailShown(timeline));
    training.update(timeline.passes, passAt(timeline.steps, timeline.passes, g.t));
    const structure = state.structure(timeline, header(), options());
    showNotes(); // after the structure: its hidden count is this update's
    drawing.show(g, structure, options().tween_max_nodes);
    showGroups();
  }
  function showNotes() {
    panels.notes(drawing.renderError, feed.unreadable);
  }
  function showGroups() {
    if (drawing.drawn) panels.groups(drawing.drawn, drawing.busy);
  }

  /** @param {number|null} id */
  function select(id) {
    state.select(id);
    update();
  }

  /**
   * A change of the structure the learner asked for: made, then laid out with the busy sign.
   * @param {() => void} change
   */
  function relayout(change) {
    drawing.setBusy(true);
    change();
    update();
    const scheduler = drawing.scheduler;
    if (!scheduler.running && !scheduler.pending) drawing.setBusy(false); // the same drawing: nothing to lay out
  }

  /**
   * Open a group (a loop: its next few iterations, NOTE [a loop opens a few iterations at a
   * time] in structure.js, or with "all" every one of them) or roll it up, from the drawing on
   * the page. Ignored while the last one is being laid out (drawing.js NOTE [busy]).
   * @param {string} key @param {"open"|"all"|"roll up"} action
   */
  function toggleGroup(key, action) {
    const s = drawing.drawn;
    const group = s ? s.groups.find((g) => g.key === key) : undefined;
    if (drawing.busy || !s || !group) return;
    // the learner takes over: a replay ends here (playback.js NOTE [replay]), so that it does not pan the
    // view away from what was opened, nor hide it as still to come
    if (playback.playing && playback.following) playback.moveTo(timeline.length);
    relayout(() => {
      if (action === "roll up") {
        state.rollUp(key);
        drawing.unzoom(); // rolled up again: back to the whole drawing
        return;
      }
      const loop = s.loops.find((l) => l.key === key);
      if (!loop) {
        const box = s.boxes.find((b) => b.kind === "scope" && b.key === key);
        state.openScope(key, box ? box.members : null);
        return;
      }
      const more = action === "all" ? loop.iterations.length : drawing.iterationsToOpen(loop, group.opened);
      state.openLoop(loop, group.opened, more); // the next layout zooms to them
    });
  }

  function applySpeedOption() {
    const speed = Number(options().speed);
    if (!(speed > 0)) return;
    if (!Array.from(els.speedSelect.options).some((o) => o.value === String(speed))) {
      els.speedSelect.appendChild(make(doc, "option", { text: `${speed}\u00D7`, attrs: { value: String(speed) } }));
    }
    playback.speed = speed; // the toolbar shows it at the next update
  }

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
  listenToInput({
    doc, els, timeline, playback, drawing, state, panels, listen,
    onDispose: (fn) => disposers.push(fn),
    actions: { select, toggleGroup, relayout },
  });
  onModel("change:snapshot", () => feed.onSnapshot());
  onModel("change:delta", () => feed.applyDelta(true));
  onModel("change:header", () => {
    timeline.header = header();
    panels.legend();
    update();
  });
  onModel("change:options", () => {
    applySpeedOption();
    update();
  });

  // ------------------------------------------------------------------------------ start
  applySpeedOption();
  panels.legend();
  feed.load();
  playback.start(); // playback.js NOTE [replay]: what arrived before this view was drawn is played from the start
  playback.catchUp();
  update();

  return {
    root: els.root,
    timeline,
    state,
    playback,
    drawing,
    scheduler: drawing.scheduler,
    /** the learner moves to t (playing stops; the view follows the end again only from it) */
    setPosition: (/** @type {number} */ t) => playback.moveTo(t),
    step: (/** @type {number} */ by) => playback.step(by),
    play: () => playback.play(),
    pause: () => playback.pause(),
    select,
    dispose() {
      if (disposed) return;
      disposed = true;
      playback.dispose();
      drawing.dispose();
      for (const off of disposers.splice(0)) off();
      if (renderer.destroy) renderer.destroy();
      els.root.remove();
    },
  };
}
