// The real renderer: Graphviz compiled to WebAssembly (@hpcc-js/wasm-graphviz, whose WASM is
// inlined in its JavaScript, so nothing is fetched: it works in JupyterLab, offline, and from a
// file:// page).
//
// NOTE [one way to draw] The view lays a structure out once and restyles it for every position
// of the timeline (NOTE [layout once] in structure.js), so there is no per-step transition to
// animate: the laid-out SVG is put in directly, made inert (only Graphviz's drawing elements,
// no on*/href attributes). Nodes fade in by CSS on small graphs. (Up to protocol v4 d3-graphviz
// animated every step; its data join cost more than the layout itself past ~100 nodes.)
//
// NOTE [layout worker] Graphviz's layout of a few hundred boxes takes seconds (an opened
// 30-step RNN: 3 s), and on the page's thread that is seconds of a frozen notebook. A large
// drawing is therefore laid out in a Worker: this same bundle, started from a Blob URL of its
// own source text (anywidget's `_esm`, which the view is given), answers layout requests
// (`serveLayouts`, started by widget.js when the bundle finds itself in a worker). Only the
// SVG text comes back; the page parses it, which is quick. Without the source (a page that
// did not pass it) or where a Worker cannot start, layouts run on the page's thread as before.

import { Graphviz } from "@hpcc-js/wasm-graphviz";
import { inertSvg, inertSvgInSteps, clear } from "./text.js";
import { nextTask } from "./coalesce.js";

/** An SVG text longer than this is parsed, made inert and put in over several tasks. */
const YIELD_OVER_CHARS = 100_000;


/** Drawings of more DOT lines than this are laid out in the worker (NOTE [layout worker]). */
export const WORKER_OVER_LINES = 120;

// NOTE [layout cache] A renderer keeps the SVG text of its last few layouts, by DOT text:
// rolling a group up again, or toggling "values & grads" back, draws what Graphviz already
// laid out, at once. Bounded by count and by size (a 30-step RNN opened whole: 325 kB).
export const CACHE_LAYOUTS = 6;
const CACHE_CHARS = 4_000_000;

/** Fails the render if the WASM can never load (say a page whose policy forbids it), instead
 * of waiting for it silently. */
async function graphvizReady() {
  try {
    return await Graphviz.load();
  } catch (error) {
    throw new Error(`Graphviz (WebAssembly) did not load: ${error instanceof Error ? error.message : error}`);
  }
}

/**
 * @param {HTMLElement} container
 * @param {{source?: () => (string|null|undefined)}} [options]
 *   source: the bundle's own source text, to start the layout worker from
 * @returns {import("./view.js").Renderer}
 */
export function createGraphvizRenderer(container, options = {}) {
  const doc = container.ownerDocument;
  let destroyed = false;
  /** @type {Map<string, string>} DOT -> SVG text, oldest first (NOTE [layout cache]) */
  const cache = new Map();

  /** @param {string} dot */
  async function layout(dot) {
    const known = cache.get(dot);
    if (known !== undefined) {
      cache.delete(dot); // the newest again
      cache.set(dot, known);
      return known;
    }
    const svg = await graphvizLayout(dot);
    cache.set(dot, svg);
    let chars = 0;
    for (const text of cache.values()) chars += text.length;
    for (const [key, text] of cache) {
      if (cache.size <= CACHE_LAYOUTS && chars <= CACHE_CHARS) break;
      cache.delete(key);
      chars -= text.length;
    }
    return svg;
  }

  /** @param {string} dot */
  async function graphvizLayout(dot) {
    const lines = dot.split("\n").length;
    const worker = lines > WORKER_OVER_LINES ? layoutWorker(doc, options.source) : null;
    if (worker) {
      try {
        return await worker.layout(dot);
      } catch (error) {
        if (!(error instanceof WorkerUnavailable)) throw error;
      }
    }
    return (await graphvizReady()).layout(dot, "svg", "dot");
  }

  return {
    async render(dot) {
      const text = await layout(dot);
      if (destroyed) return;
      // a large drawing: parsed, made inert and put in over several tasks
      const large = text.length > YIELD_OVER_CHARS;
      const svg = large ? await inertSvgInSteps(doc, text, nextTask) : inertSvg(doc, text);
      if (large) await nextTask();
      if (destroyed) return;
      clear(container);
      container.appendChild(svg);
    },
    destroy() {
      destroyed = true;
      cache.clear();
    },
  };
}

/** The worker could not start or died: lay out on the page's thread instead. */
class WorkerUnavailable extends Error {}

/** @type {{layout: (dot: string) => Promise<string>}|null|undefined} one worker per page; null: none can start */
let sharedWorker;

/**
 * The page's layout worker, started on first use from the bundle's source text.
 * @param {Document} doc @param {(() => (string|null|undefined))|undefined} source
 */
function layoutWorker(doc, source) {
  if (sharedWorker !== undefined) return sharedWorker;
  const win = doc.defaultView;
  const text = source ? source() : null;
  if (!win || typeof win.Worker !== "function" || typeof text !== "string" || !text.includes("dyngraph-widget-sources")) {
    return null; // not cached: a later view may have the source
  }
  /** @type {Map<number, {resolve: (svg: string) => void, reject: (e: Error) => void}>} */
  const pending = new Map();
  let next = 0;
  let worker;
  const url = win.URL.createObjectURL(new win.Blob([text], { type: "text/javascript" }));
  try {
    worker = new win.Worker(url, { type: "module", name: "dyngraph layout" });
  } catch {
    win.URL.revokeObjectURL(url);
    sharedWorker = null;
    return null;
  }
  const fail = (/** @type {string} */ why) => {
    sharedWorker = null;
    worker.terminate();
    for (const p of pending.values()) p.reject(new WorkerUnavailable(why));
    pending.clear();
  };
  worker.addEventListener("error", (e) => {
    e.preventDefault();
    fail(e.message || "the layout worker failed");
  });
  worker.addEventListener("message", (e) => {
    win.URL.revokeObjectURL(url); // it has loaded
    const { id, svg, error } = e.data || {};
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (svg instanceof ArrayBuffer) p.resolve(new TextDecoder().decode(svg));
    else p.reject(new Error(String(error)));
  });
  sharedWorker = {
    layout(dot) {
      return new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, dot });
      });
    },
  };
  return sharedWorker;
}

/**
 * Inside the layout worker: answer each `{id, dot}` with `{id, svg}` (the SVG text as UTF-8
 * bytes, transferred) or `{id, error}` (NOTE [layout worker]).
 * @param {{onmessage: any, postMessage: (message: any, transfer?: any[]) => void}} scope  the worker's global scope
 */
export function serveLayouts(scope) {
  scope.onmessage = async (/** @type {MessageEvent} */ e) => {
    const { id, dot } = e.data || {};
    try {
      const graphviz = await graphvizReady();
      // as bytes, handed over rather than copied: a large string took the page 150 ms to receive
      const svg = new TextEncoder().encode(graphviz.layout(String(dot), "svg", "dot")).buffer;
      scope.postMessage({ id, svg }, [svg]);
    } catch (error) {
      scope.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
    }
  };
}
