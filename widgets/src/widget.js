// The anywidget module of dyngraph's live graph view (see ../PROTOCOL.md).
//
//   export default { render({ model, el }) { ...; return cleanup } }
//   export function mountStandalone(el, state)   // the self-contained HTML export

import { createView } from "./view.js";
import { createGraphvizRenderer } from "./renderer.js";

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
function render({ model, el }) {
  const win = el.ownerDocument.defaultView || undefined;
  return createView({ model, el, createRenderer: createGraphvizRenderer, reducedMotion: prefersReducedMotion(win) });
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
 * @returns {() => void}
 */
export function mountStandalone(el, state) {
  return render({ model: staticModel(state || {}), el });
}

export default { render };
