// The real renderer: Graphviz compiled to WebAssembly (@hpcc-js/wasm-graphviz, whose WASM is
// inlined in its JavaScript, so nothing is fetched: it works in JupyterLab, offline, and from a
// file:// page).
//
// NOTE [one way to draw] The view lays a structure out once and restyles it for every position
// of the timeline (NOTE [layout once] in structure.js), so there is no per-step transition to
// animate: the laid-out SVG is put in directly, made inert (only Graphviz's drawing elements,
// no on*/href attributes). Nodes fade in by CSS on small graphs. (Up to protocol v4 d3-graphviz
// animated every step; its data join cost more than the layout itself past ~100 nodes.)

import { Graphviz } from "@hpcc-js/wasm-graphviz";
import { inertSvg, clear } from "./text.js";

/**
 * @param {HTMLElement} container
 * @returns {import("./view.js").Renderer}
 */
export function createGraphvizRenderer(container) {
  const doc = container.ownerDocument;
  let destroyed = false;

  /** Fails the render if the WASM can never load (say a page whose policy forbids it), instead
   * of waiting for it silently. */
  async function graphvizReady() {
    try {
      return await Graphviz.load();
    } catch (error) {
      throw new Error(`Graphviz (WebAssembly) did not load: ${error instanceof Error ? error.message : error}`);
    }
  }

  return {
    async render(dot) {
      const layout = await graphvizReady();
      if (destroyed) return;
      const svg = inertSvg(doc, layout.layout(dot, "svg", "dot"));
      clear(container);
      container.appendChild(svg);
    },
    destroy() {
      destroyed = true;
    },
  };
}
