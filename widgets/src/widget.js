// The anywidget module of dyngraph's live graph view (see ../PROTOCOL.md).
//
//   export default { render({ model, el }) { ...; return cleanup } }
//   export function mountStandalone(el, state)   // the self-contained HTML export

import { createView } from "./view.js";
import { createGraphvizRenderer, serveLayouts } from "./renderer.js";

// Started as the layout worker (NOTE [layout worker] in renderer.js): serve layouts, draw nothing.
const WorkerScope = /** @type {any} */ (globalThis).WorkerGlobalScope;
if (typeof WorkerScope === "function" && globalThis instanceof WorkerScope) serveLayouts(/** @type {any} */ (globalThis));

/** @param {Window|undefined} win */
function prefersReducedMotion(win) {
  try {
    return Boolean(win && win.matchMedia && win.matchMedia("(prefers-reduced-motion: reduce)").matches);
  } catch {
    return false;
  }
}

/**
 * anywidget's render: draw a view of `model` into `el`; the returned cleanup removes every
 * listener, timer and element it added.
 * @param {{model: import("./view.js").Model, el: HTMLElement}} args
 * @returns {() => void}
 */
function render({ model, el }, bundleSource = undefined) {
  const win = el.ownerDocument.defaultView || undefined;
  // anywidget keeps the bundle's text in the `_esm` trait: the layout worker starts from it
  // (NOTE [layout worker] in renderer.js); a standalone page may pass the text itself.
  const source = () => {
    const esm = bundleSource ?? model.get("_esm");
    return typeof esm === "string" ? esm : null;
  };
  const createRenderer = (/** @type {HTMLElement} */ container) => createGraphvizRenderer(container, { source });
  return createView({ model, el, createRenderer, reducedMotion: prefersReducedMotion(win) });
}

/**
 * A model that never changes, for a recording saved as a standalone HTML page.
 * @param {{header?: object, snapshot?: object, options?: object}} state
 * @returns {import("./view.js").Model & {save_changes: () => void}}
 */
export function staticModel(state) {
  /** @type {Record<string, any>} */
  const traits = {
    header: state.header || { lines: [], vocabulary: {} },
    snapshot: state.snapshot || {},
    delta: {},
    options: state.options || {},
  };
  return {
    get: (name) => traits[name],
    on: () => {},
    off: () => {},
    send: () => {},
    save_changes: () => {},
  };
}

/**
 * Render the player from a plain state object (`{header, snapshot, options}`), as
 * `Recording.to_html(path)` writes it. Returns the cleanup.
 * @param {HTMLElement} el
 * @param {{header?: object, snapshot?: object, options?: object}} state
 * @param {{source?: string}} [options]  source: this bundle's text, for the layout worker
 *   (without it, large drawings are laid out on the page's thread)
 * @returns {() => void}
 */
export function mountStandalone(el, state, options = {}) {
  return render({ model: staticModel(state || {}), el }, options.source);
}

export default { render };
