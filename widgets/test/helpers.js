// Shared test helpers with a DOM: jsdom, a fake anywidget model, a stub renderer.

import { JSDOM } from "jsdom";

export { SAMPLE, sample, flush } from "./fixtures.js";

/** A fresh jsdom document with a host element. */
export function dom() {
  const jsdom = new JSDOM("<!doctype html><html><body><div id='host'></div></body></html>");
  const { document } = jsdom.window;
  return { window: jsdom.window, document, host: /** @type {HTMLElement} */ (document.getElementById("host")) };
}

/**
 * A fake anywidget model: traits in a Map, change events, sent messages recorded.
 * @param {Record<string, any>} traits
 */
export function fakeModel(traits) {
  const values = new Map(Object.entries(traits));
  /** @type {Map<string, Set<Function>>} */
  const handlers = new Map();
  const sent = [];
  return {
    sent,
    handlers,
    get: (name) => values.get(name),
    on(event, fn) {
      if (!handlers.has(event)) handlers.set(event, new Set());
      handlers.get(event).add(fn);
    },
    off(event, fn) {
      handlers.get(event)?.delete(fn);
    },
    send: (msg) => sent.push(msg),
    save_changes() {},
    /** Set a trait as Python would, firing change:<name>. */
    set(name, value) {
      values.set(name, value);
      this.fire(name);
    },
    /** Set a trait without its event yet (several traits changed in one message). */
    put(name, value) {
      values.set(name, value);
    },
    fire(name) {
      for (const fn of [...(handlers.get(`change:${name}`) || [])]) fn();
    },
    listenerCount() {
      let n = 0;
      for (const set of handlers.values()) n += set.size;
      return n;
    },
  };
}

/**
 * A renderer that draws nothing real: it records each DOT and puts a minimal SVG with one
 * <g class="node"><title>nX</title></g> per node statement (and g.edge per edge), like
 * Graphviz's, so clicks and decorations can be tested.
 */
export function stubRenderer() {
  const calls = [];
  const factory = (container) => ({
    render(dot, tween) {
      calls.push({ dot, tween });
      const doc = container.ownerDocument;
      const NS = "http://www.w3.org/2000/svg";
      while (container.firstChild) container.removeChild(container.firstChild);
      const svg = doc.createElementNS(NS, "svg");
      const add = (cls, name) => {
        const g = doc.createElementNS(NS, "g");
        g.setAttribute("class", cls);
        const title = doc.createElementNS(NS, "title");
        title.textContent = name;
        const shape = doc.createElementNS(NS, "ellipse");
        g.append(title, shape);
        svg.appendChild(g);
      };
      for (const line of dot.split("\n")) {
        const edge = /^\s*(\w+) -> (\w+)/.exec(line);
        const node = /^\s*(n\d+|hidden|l\d+|s\d+) \[/.exec(line);
        if (edge) add("edge", `${edge[1]}->${edge[2]}`);
        else if (node) add("node", node[1]);
      }
      container.appendChild(svg);
      return Promise.resolve();
    },
    destroy() {
      calls.destroyed = true;
    },
  });
  return { calls, factory };
}
