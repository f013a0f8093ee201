// DOM helpers that put model data on the page as text, never as markup.
//
// NOTE [safety] Names, values and source lines come from the learner's code and are untrusted.
// They reach the DOM only through `textContent`; elements and attributes are created by this
// code with fixed tag and attribute names. No `innerHTML` anywhere in the widget.

/**
 * Set the text of an element (null and undefined show as nothing).
 * @param {Element} el
 * @param {unknown} text
 */
export function setText(el, text) {
  el.textContent = text == null ? "" : String(text);
}

/**
 * Create an element with a class and text.
 * @param {Document} doc
 * @param {string} tag  a fixed tag name (never model data)
 * @param {{className?: string, text?: unknown, attrs?: Record<string, string>}} [props]
 * @returns {HTMLElement}
 */
export function make(doc, tag, props = {}) {
  const el = doc.createElement(tag);
  if (props.className) el.className = props.className;
  if (props.text != null) setText(el, props.text);
  for (const [name, value] of Object.entries(props.attrs || {})) el.setAttribute(name, value);
  return el;
}

/** Remove every child of `el`. @param {Element} el */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/**
 * The code panel's lines: one row per source line, a line-number button (data-line = the
 * 1-based number) and the code as text; the current line marked.
 * @param {Document} doc
 * @param {string} source
 * @param {number|null} current  1-based line to highlight
 * @returns {HTMLElement}  an <ol class="dg-lines">
 */
export function buildCodeLines(doc, source, current) {
  const list = make(doc, "ol", { className: "dg-lines" });
  const lines = String(source).replace(/\r\n?/g, "\n").replace(/\n$/, "").split("\n");
  lines.forEach((text, i) => {
    const n = i + 1;
    const row = make(doc, "li", { className: "dg-line", attrs: { "data-line": String(n) } });
    const button = make(doc, "button", {
      className: "dg-lineno",
      text: n,
      attrs: { type: "button", "data-line": String(n), title: `select the newest node made on line ${n}` },
    });
    const code = make(doc, "code", { className: "dg-code", text: text.length ? text : " " });
    row.append(button, code);
    list.appendChild(row);
  });
  markCurrentLine(list, current);
  return list;
}

/**
 * Move the highlight to line `current` (1-based; null: none). Returns the highlighted row.
 * @param {Element} list  from buildCodeLines
 * @param {number|null} current
 * @returns {HTMLElement|null}
 */
export function markCurrentLine(list, current) {
  let found = null;
  for (const row of Array.from(list.children)) {
    const isCurrent = current != null && row.getAttribute("data-line") === String(current);
    row.classList.toggle("dg-current", isCurrent);
    if (isCurrent) {
      row.setAttribute("aria-current", "true");
      found = /** @type {HTMLElement} */ (row);
    } else {
      row.removeAttribute("aria-current");
    }
  }
  return found;
}

/** Inspector fields in reading order, with the words a learner reads. */
export const INFO_LABELS = /** @type {const} */ ([
  ["title", "op"],
  ["name", "name"],
  ["shape", "shape"],
  ["dtype", "dtype"],
  ["device", "device"],
  ["value", "value"],
  ["grad", "gradient"],
  ["saved", "saved for backward"],
  ["where", "source"],
  ["rule", "local derivative"],
]);

/**
 * One field as text: null -> "—", a shape array -> "(2, 3)", objects as JSON.
 * @param {string} key
 * @param {unknown} value
 */
export function formatValue(key, value) {
  if (value == null) return "\u2014";
  if (Array.isArray(value) && key === "shape") {
    return value.length === 1 ? `(${value[0]},)` : `(${value.join(", ")})`;
  }
  if (typeof value === "object") {
    try {
      return JSON.stringify(value);
    } catch {
      return String(value);
    }
  }
  return String(value);
}

/**
 * Rows [label, text] for every field of `info`: the known ones first in INFO_LABELS order,
 * then any others under their own key.
 * @param {Record<string, unknown>} info
 * @param {{gradPending?: boolean}} [opts]  gradPending: the gradient exists in the recording
 *   but the playback position is before its step
 * @returns {Array<[string, string]>}
 */
export function infoRows(info, opts = {}) {
  /** @type {Array<[string, string]>} */
  const rows = [];
  const known = new Set();
  for (const [key, label] of INFO_LABELS) {
    known.add(key);
    if (!(key in info)) continue;
    if (key === "grad" && opts.gradPending && info[key] != null) {
      rows.push([label, "not yet (later in the timeline)"]);
      continue;
    }
    rows.push([label, formatValue(key, info[key])]);
  }
  for (const key of Object.keys(info)) {
    if (!known.has(key)) rows.push([key, formatValue(key, info[key])]);
  }
  return rows;
}

/**
 * Fill `container` with a definition list of the rows (as text).
 * @param {Document} doc
 * @param {Element} container
 * @param {Array<[string, string]>} rows
 */
export function renderRows(doc, container, rows) {
  clear(container);
  const list = make(doc, "dl", { className: "dg-fields" });
  for (const [label, text] of rows) {
    list.append(make(doc, "dt", { text: label }), make(doc, "dd", { text }));
  }
  container.appendChild(list);
}

/** The SVG elements Graphviz writes; anything else is dropped from a drawing. */
const SVG_TAGS = new Set([
  "svg", "g", "title", "text", "tspan", "path", "polygon", "polyline", "ellipse", "circle",
  "rect", "line", "defs", "linearGradient", "radialGradient", "stop",
]);

/**
 * Graphviz's SVG text as an element of `doc`, made inert: only the drawing elements Graphviz
 * writes are kept, and no event-handler or link attribute (defence in depth: the DOT comes from
 * dyngraph/dot.py, which already allows only harmless attributes).
 * @param {Document} doc
 * @param {string} text
 * @returns {SVGSVGElement}
 */
export function inertSvg(doc, text) {
  const Parser = (doc.defaultView && doc.defaultView.DOMParser) || globalThis.DOMParser;
  const parsed = new Parser().parseFromString(text, "image/svg+xml");
  const svg = parsed.documentElement;
  if (!svg || svg.localName !== "svg" || parsed.getElementsByTagName("parsererror").length) {
    throw new Error("Graphviz did not return an SVG drawing");
  }
  for (const el of [svg, ...Array.from(svg.querySelectorAll("*"))]) {
    if (!SVG_TAGS.has(el.localName)) {
      el.remove();
      continue;
    }
    for (const attr of Array.from(el.attributes)) {
      const name = attr.localName.toLowerCase();
      if (name.startsWith("on") || name === "href" || name === "src") el.removeAttributeNode(attr);
    }
  }
  return /** @type {SVGSVGElement} */ (doc.adoptNode(svg));
}
