// Shared test helpers with a DOM: jsdom, a fake anywidget model, a stub renderer.

import { JSDOM } from "jsdom";
import { createView } from "../src/view.js";
import { sample } from "./fixtures.js";

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
        const node = /^\s*(n\d+|hidden|l\d+|s\w+|r\d+) \[/.exec(line);
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

/**
 * A clock the test moves by hand: the global setTimeout / clearTimeout queue their callbacks
 * until tick() reaches them, performance.now() reads it, and restore() puts the real ones back. (node:test's mock.timers
 * does the same, but it is experimental in Node 20 and 22 and prints a warning on every run.)
 */
export function fakeClock() {
  const real = { setTimeout: globalThis.setTimeout, clearTimeout: globalThis.clearTimeout, now: performance.now };
  /** @type {Map<number, { at: number, run: () => void }>} timers by id, in the order set */
  const pending = new Map();
  let now = 0;
  let nextId = 1;
  globalThis.setTimeout = /** @type {any} */ ((fn, ms = 0, ...args) => {
    const id = nextId++;
    pending.set(id, { at: now + Math.max(0, ms), run: () => fn(...args) });
    return id;
  });
  globalThis.clearTimeout = /** @type {any} */ ((id) => pending.delete(id));
  // performance.now() reads the same clock (the replay's deadline is measured with it)
  const start = real.now.call(performance);
  performance.now = () => start + now;
  return {
    /** Move the clock on by `ms`, running each timer that falls due, earliest first. @param {number} ms */
    tick(ms) {
      const end = now + ms;
      for (;;) {
        /** @type {[number, { at: number, run: () => void }] | null} */
        let due = null;
        for (const entry of pending) if (entry[1].at <= end && (due === null || entry[1].at < due[1].at)) due = entry;
        if (due === null) break;
        pending.delete(due[0]);
        now = due[1].at;
        due[1].run(); // it may set further timers, due within this tick too
      }
      now = end;
    },
    restore() {
      globalThis.setTimeout = real.setTimeout;
      globalThis.clearTimeout = real.clearTimeout;
      performance.now = real.now;
    },
  };
}

/**
 * A view of the sample recording mounted in a fresh document, with a stub renderer;
 * `overrides`: model traits to change. It opens at the end of the recording, as a view with
 * `replay: false` does; tests of the replay (view.js NOTE [replay]) pass options with it on.
 * @param {Record<string, any>} [overrides]
 */
export function mountView(overrides = {}) {
  const { window, document, host } = dom();
  const s = sample();
  const options = { ...s.options, replay: false };
  const model = fakeModel({ header: s.header, snapshot: s.snapshot, delta: {}, options, ...overrides });
  const renderer = stubRenderer();
  const cleanup = createView({ model, el: host, createRenderer: renderer.factory });
  const root = /** @type {HTMLElement} */ (host.querySelector(".dg-root"));
  return { window, document, host, model, renderer, cleanup, view: cleanup.view, root, s };
}
