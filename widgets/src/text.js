// DOM helpers that put model data on the page as text, never as markup.
//
// NOTE [safety] Names, values and source lines come from the learner's code and are untrusted.
// They reach the DOM only through `textContent`; elements and attributes are created by this
// code with fixed tag and attribute names. No `innerHTML` anywhere in the widget.

import { formatValues, shapeKnown, shapeText } from "./vocabulary.js";
import { nodeTitle } from "./timeline.js";

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
 * 1-based number) and the code as text; the current line marked. With `kept` (the stretches
 * of lines the text kept, `[first, last]` 1-based and inclusive: PROTOCOL.md, "kept_lines"),
 * each stretch of lines between them - lines a shared source leaves empty, NOTE [safe to
 * share] in dyngraph/record.py - is one "…" row instead, so every number shown is a line with
 * its text. Without it (a state saved before), every line has its row.
 * @param {Document} doc
 * @param {string} source
 * @param {number|null} current  1-based line to highlight
 * @param {unknown} [kept]  Array<[number, number]>, or nothing
 * @returns {HTMLElement}  an <ol class="dg-lines">
 */
export function buildCodeLines(doc, source, current, kept) {
  const list = make(doc, "ol", { className: "dg-lines" });
  const lines = String(source).replace(/\r\n?/g, "\n").replace(/\n$/, "").split("\n");
  let next = 1; // the first line not placed yet
  for (const [first, last] of stretches(kept, lines.length)) {
    if (first < next) continue;
    if (first > next) list.appendChild(gapRow(doc, next, first - 1));
    for (let n = first; n <= last; n++) list.appendChild(lineRow(doc, n, lines[n - 1]));
    next = last + 1;
  }
  if (next <= lines.length) list.appendChild(gapRow(doc, next, lines.length));
  markCurrentLine(list, current);
  return list;
}

/**
 * The stretches to show of a text of `count` lines: `kept`'s well-formed pairs, in order and
 * within the text; all of it when `kept` is not a list (nothing was said of what was kept).
 * @param {unknown} kept @param {number} count
 * @returns {Array<[number, number]>}
 */
function stretches(kept, count) {
  if (!Array.isArray(kept)) return [[1, count]];
  /** @type {Array<[number, number]>} */
  const out = [];
  for (const pair of kept) {
    if (!Array.isArray(pair) || !Number.isInteger(pair[0]) || !Number.isInteger(pair[1])) continue;
    const first = Math.max(pair[0], 1);
    const last = Math.min(pair[1], count);
    if (first <= last) out.push([first, last]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/** One numbered row. @param {Document} doc @param {number} n @param {string} text */
function lineRow(doc, n, text) {
  const row = make(doc, "li", { className: "dg-line", attrs: { "data-line": String(n) } });
  const button = make(doc, "button", {
    className: "dg-lineno",
    text: n,
    attrs: { type: "button", "data-line": String(n), title: `select the newest node made on line ${n}` },
  });
  const code = make(doc, "code", { className: "dg-code", text: text.length ? text : " " });
  row.append(button, code);
  return row;
}

/**
 * The one row standing for lines `first`..`last`, not kept: "…" where their numbers would be.
 * @param {Document} doc @param {number} first @param {number} last
 */
function gapRow(doc, first, last) {
  const lines = first === last ? `line ${first}` : `lines ${first}\u2013${last}`;
  const row = make(doc, "li", {
    className: "dg-line dg-gap",
    attrs: { title: `${lines} not shown: only the lines that made nodes, and a few around each, are kept` },
  });
  row.append(make(doc, "span", { className: "dg-lineno", text: "\u2026", attrs: { "aria-label": `${lines} not shown` } }),
    make(doc, "code", { className: "dg-code", text: " " }));
  return row;
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

/** The placeholder of a field with nothing to show. */
export const NONE = "\u2014";

/**
 * The inspector's rows [label, text] for one node at one timeline position, built from the
 * node's data (all of it shown as text by renderRows).
 * @param {import("./vocabulary.js").NodeData} node
 * @param {{grad: import("./vocabulary.js").GradData|null, gradLater?: boolean, freed: boolean}} at
 *   the node's gradient at the position (null: none yet; gradLater: one comes later in the
 *   timeline) and whether its buffers are freed there
 * @param {Map<string, string>} [sources]  file -> source text
 * @returns {Array<[string, string]>}
 */
export function inspectorRows(node, at, sources) {
  const shape = Array.isArray(node.shape) ? node.shape : [];
  const grad = at.grad;
  const gradText = grad
    ? formatValues(grad.previewText, shape)
    : at.gradLater ? "not yet (later in the timeline)" : "not yet";
  const values = Array.isArray(node.previewText) ? node.previewText : [];
  return [
    ["op", nodeTitle(node)],
    ["name", text(node.name)],
    ["shape", Array.isArray(node.shape) && shapeKnown(node) ? shapeText(node.shape) : NONE],
    ["dtype", text(node.dtype)],
    ["device", text(node.device)],
    ["value", values.length ? formatValues(values, shape) : NONE],
    ["gradient", gradText],
    ["grad norm", text(grad && grad.normText)],
    ["saved for backward", Number(node.saved) > 0 ? text(node.savedText) : NONE],
    ["freed", at.freed ? "yes" : "no"],
    ["source", sourceText(node, sources)],
    ["local derivative", text(node.rule)],
  ];
}

/**
 * The inspector's rows for a module's box of the map (levels.js NOTE [map]): the module, its
 * output (the node whose value leaves it) with the gradient that flowed out of it, and the
 * bytes its nodes keep for backward, summed (a whole number of bytes: the browser writes no
 * number of Python's, and units would need dot.py's format_bytes).
 * @param {string} title
 * @param {import("./vocabulary.js").NodeData[]} members
 * @param {import("./vocabulary.js").NodeData|undefined} output
 * @param {{grad: import("./vocabulary.js").GradData|null, gradLater?: boolean, freed: Set<number>}} at
 * @returns {Array<[string, string]>}
 */
export function moduleRows(title, members, output, at) {
  const shape = output && Array.isArray(output.shape) ? output.shape : [];
  const grad = at.grad;
  const saving = members.filter((n) => Number(n.saved) > 0);
  const kept = saving.filter((n) => !at.freed.has(n.id));
  const bytes = kept.reduce((sum, n) => sum + Number(n.saved), 0);
  const savedText = kept.length
    ? `${bytes} B in ${kept.length} node${kept.length === 1 ? "" : "s"}`
    : saving.length ? "freed" : NONE;
  return [
    ["module", title],
    ["nodes", String(members.length)],
    ["output", output ? nodeTitle(output) : NONE],
    ["shape", output && Array.isArray(output.shape) && shapeKnown(output) ? shapeText(shape) : NONE],
    ["gradient out", grad ? formatValues(grad.previewText, shape) : at.gradLater ? "not yet (later in the timeline)" : "not yet"],
    ["grad norm", text(grad && grad.normText)],
    ["saved for backward", savedText],
  ];
}

/** @param {unknown} value */
function text(value) {
  return value == null || value === "" ? NONE : String(value);
}

/**
 * "cell [5], line 4: y = x * w" (the line as recorded in `sources`, trimmed); the file's name
 * in place of the cell for code outside a notebook.
 * @param {{file?: string|null, line?: number|null, cell?: number|null}} node
 * @param {Map<string, string>} [sources]
 */
export function sourceText(node, sources) {
  if (node.file == null) return NONE;
  const place = node.cell != null ? `cell [${node.cell}]` : basename(node.file);
  if (node.line == null) return place;
  const source = sources ? sources.get(node.file) : undefined;
  const code = source === undefined ? "" : (source.replace(/\r\n?/g, "\n").split("\n")[node.line - 1] || "").trim();
  return code ? `${place}, line ${node.line}: ${code}` : `${place}, line ${node.line}`;
}

/** The last part of a path ("/a/b.py" -> "b.py"). @param {string} path */
export function basename(path) {
  const parts = String(path).split(/[\\/]/);
  return parts[parts.length - 1] || String(path);
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
 * writes are kept, and no event-handler or link attribute (defence in depth: the DOT's attributes
 * come from dyngraph/dot.py's vocabulary, which allows only harmless ones).
 * @param {Document} doc
 * @param {string} text
 * @returns {SVGSVGElement}
 */
export function inertSvg(doc, text) {
  const svg = parseSvg(doc, text);
  makeInert([svg, ...Array.from(svg.querySelectorAll("*"))]);
  return /** @type {SVGSVGElement} */ (doc.adoptNode(svg));
}

/**
 * inertSvg in steps, `await`ing `pause()` between them (parse; each `chunk` elements made
 * inert; adopt), so that a large drawing never holds the page for long.
 * @param {Document} doc @param {string} text @param {() => Promise<unknown>} pause
 * @param {number} [chunk]
 * @returns {Promise<SVGSVGElement>}
 */
export async function inertSvgInSteps(doc, text, pause, chunk = 3000) {
  const svg = parseSvg(doc, text);
  const elements = [svg, ...Array.from(svg.querySelectorAll("*"))];
  for (let start = 0; start < elements.length; start += chunk) {
    await pause();
    makeInert(elements.slice(start, start + chunk));
  }
  return /** @type {SVGSVGElement} */ (doc.adoptNode(svg));
}

/** @param {Document} doc @param {string} text */
function parseSvg(doc, text) {
  const Parser = (doc.defaultView && doc.defaultView.DOMParser) || globalThis.DOMParser;
  const parsed = new Parser().parseFromString(text, "image/svg+xml");
  const svg = parsed.documentElement;
  if (!svg || svg.localName !== "svg" || parsed.getElementsByTagName("parsererror").length) {
    throw new Error("Graphviz did not return an SVG drawing");
  }
  return svg;
}

/** Drop what Graphviz does not write, and every on* / href / src attribute. @param {Element[]} elements */
function makeInert(elements) {
  for (const el of elements) {
    if (!SVG_TAGS.has(el.localName)) {
      el.remove();
      continue;
    }
    for (const attr of Array.from(el.attributes)) {
      const name = attr.localName.toLowerCase();
      if (name.startsWith("on") || name === "href" || name === "src") el.removeAttributeNode(attr);
    }
  }
}
