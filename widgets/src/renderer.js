// The real renderer: Graphviz compiled to WebAssembly (@hpcc-js/wasm-graphviz, whose WASM is
// inlined in its JavaScript, so nothing is fetched: it works in JupyterLab, offline, and from a
// file:// page), drawn with d3-graphviz's keyed transitions for small graphs.
//
// NOTE [two ways to draw] With tweens on (up to options.tween_max_nodes nodes) d3-graphviz
// draws and animates: elements are matched by their Graphviz name (n<id>, n3->n7), so a node
// keeps its identity and moves smoothly. With tweens off there is nothing to animate, and
// d3-graphviz's data join alone costs more than the layout (300 nodes: ~100 ms layout, ~120 ms
// join and redraw), so the laid-out SVG is put in directly (made inert first). Node positions
// are the same either way: they come from Graphviz's layout of the same DOT.

import { graphviz } from "d3-graphviz";
import { transition } from "d3-transition";
import { Graphviz } from "@hpcc-js/wasm-graphviz";
import { inertSvg, clear } from "./text.js";

/** Duration of the animated transition between two graphs (tweens on). */
export const TRANSITION_MS = 350;
/** Path sampling for shape and edge morphing: 5% of the length, i.e. about 20 points a path
 * (d3-graphviz's default of one point per pixel made a 50-node update take ~2 s). */
export const TWEEN_PRECISION = "5%";

/**
 * @param {HTMLElement} container
 * @returns {import("./view.js").Renderer}
 */
export function createGraphvizRenderer(container) {
  const doc = container.ownerDocument;
  /** @type {any} the d3-graphviz instance, while it owns the drawing */
  let gv = null;
  /** @type {{resolve: () => void, reject: (e: Error) => void}|null} */
  let current = null;

  const fail = (/** @type {Error} */ error) => {
    const job = current;
    current = null;
    if (job) job.reject(error);
  };

  function animated() {
    if (gv) return gv;
    clear(container); // a drawing put in directly: d3-graphviz starts from an empty element
    // NOTE useWorker: false - d3-graphviz would otherwise look for a worker <script> tag.
    gv = graphviz(container, { useWorker: false, keyMode: "title", zoom: false, fit: false })
      .tweenPrecision(TWEEN_PRECISION)
      .transition(() => transition("dyngraph").duration(TRANSITION_MS))
      .onerror((/** @type {unknown} */ message) => fail(new Error(String(message))));
    return gv;
  }

  function forgetAnimated() {
    if (!gv) return;
    gv.destroy();
    gv = null;
  }

  /** Fails the render if the WASM can never load (say a page whose policy forbids it), instead
   * of d3-graphviz waiting for it silently. */
  async function graphvizReady() {
    try {
      return await Graphviz.load();
    } catch (error) {
      throw new Error(`Graphviz (WebAssembly) did not load: ${error instanceof Error ? error.message : error}`);
    }
  }

  return {
    async render(dot, tween) {
      const layout = await graphvizReady();
      if (!tween) {
        const svg = inertSvg(doc, layout.layout(dot, "svg", "dot"));
        forgetAnimated();
        clear(container);
        container.appendChild(svg);
        return;
      }
      const g = animated();
      await new Promise((resolve, reject) => {
        const job = { resolve: () => resolve(undefined), reject };
        current = job;
        g.renderDot(dot, () => {
          if (current === job) current = null;
          job.resolve();
        });
      });
    },
    destroy() {
      current = null;
      forgetAnimated();
    },
  };
}
