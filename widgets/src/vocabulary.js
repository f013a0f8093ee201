// The visual vocabulary on the browser side: a node's DOT statement and label lines from its
// compact data plus the vocabulary table Python sends in `header.vocabulary`, and the
// magnitude level that picks a gradient edge's style (see ../PROTOCOL.md). Pure functions, no
// DOM. The edges and clusters around the statements are ./structure.js's.
//
// NOTE [one vocabulary] Python's dyngraph/dot.py stays the reference: these functions are a
// port of its label lines and escaping, and test/vocabulary.test.js checks them character for
// character against statements Python made (test/fixtures/vocabulary.json). Styles are never
// chosen here: every attribute body comes from the vocabulary table. Nor are numbers written
// here: Python sends the text of every number a label shows (a preview's values, a norm, the
// saved bytes, the forward time), made by dot.py's formatters (PROTOCOL.md, "Display texts"),
// and these functions only place those texts; the numbers themselves only decide things (a
// NaN marks an anomaly, a norm picks an edge's colour).

/**
 * A preview value as JSON carries it: a number, a boolean, or "NaN" / "Infinity" / "-Infinity".
 * Each comes with its text as Python wrote it (previewText, normText, savedText, elapsedText).
 * @typedef {number|boolean|string} Value
 * @typedef {{
 *   id: number, kind: string, op?: string|null, name?: string|null, shape?: number[],
 *   dtype?: string, device?: string, preview?: Value[], previewText?: string[],
 *   scope?: string[], file?: string|null, line?: number|null, cell?: number|null,
 *   loop?: number|null,     the line of the for/while repeating its line (events.py NOTE [loop lines])
 *   saved?: number, savedText?: string|null, recomputed?: boolean, elapsed?: number|null,
 *   elapsedText?: string|null, rule?: string|null
 * }} NodeData
 * @typedef {{preview: Value[], norm: number|string, summed: boolean, previewText?: string[],
 *   normText?: string|null}} GradData
 * @typedef {{grad: GradData|null, freed: boolean}} NodeState  the node at one timeline position
 * @typedef {{
 *   node?: Record<string, string>, saved?: string, freed?: Record<string, string>,
 *   anomaly?: string, output?: string, grad_edges?: string[], cluster?: string,
 *   hidden?: string, max_label_chars?: number
 * }} Vocabulary
 */

/** dot.py's MAX_LABEL_CHARS, used when the vocabulary does not say. */
export const MAX_LABEL_CHARS = 120;

const NEEDS_ESCAPING = /[\\"&\u0000-\u001f\u007f-\u009f\ud800-\udfff\ufffe\uffff]/;

/**
 * The inside of a DOT quoted string whose displayed text is `text` itself (port of dot.py
 * `escape`): cut to `maxChars` code points with "…", then `\` `"` `&` and newlines escaped,
 * control characters shown as `\x07`, lone surrogates and U+FFFE/U+FFFF as `\ud800`.
 * @param {unknown} text
 * @param {number} [maxChars]
 * @returns {string}
 */
export function escape(text, maxChars = MAX_LABEL_CHARS) {
  let s = String(text);
  // A string of at most maxChars UTF-16 units has at most maxChars code points.
  if (s.length > maxChars) {
    const chars = Array.from(s);
    if (chars.length > maxChars) s = chars.slice(0, Math.max(maxChars - 1, 0)).join("") + "\u2026";
  }
  if (!NEEDS_ESCAPING.test(s)) return s;
  let out = "";
  for (const ch of s) {
    const code = /** @type {number} */ (ch.codePointAt(0));
    if (ch === "\\") out += "\\\\";
    else if (ch === '"') out += '\\"';
    else if (ch === "&") out += "&amp;";
    else if (ch === "\n") out += "\\n";
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) out += "\\\\x" + hex(code, 2);
    else if ((code >= 0xd800 && code < 0xe000) || code === 0xfffe || code === 0xffff) out += "\\\\u" + hex(code, 4);
    else out += ch;
  }
  return out;
}

/** @param {number} code @param {number} width */
function hex(code, width) {
  return code.toString(16).padStart(width, "0");
}

// ------------------------------------------------------------------------------ numbers

/**
 * A JSON value as a number: "NaN", "Infinity", "-Infinity" as such; booleans as 1 / 0.
 * @param {unknown} value
 * @returns {number}
 */
export function toNumber(value) {
  if (typeof value === "number") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value === "NaN") return NaN;
  if (value === "Infinity" || value === "inf") return Infinity;
  if (value === "-Infinity" || value === "-inf") return -Infinity;
  return Number(value);
}

/** @param {unknown} shape @returns {number} how many elements ( () has 1 ) */
export function numel(shape) {
  if (!Array.isArray(shape)) return 1;
  let n = 1;
  for (const d of shape) n *= Number(d);
  return n;
}

/**
 * `[1.5, 2, ...]` (dot.py format_values): the values' texts as Python wrote them, joined, and
 * ", ..." when the tensor has more elements than the preview.
 * @param {string[]|undefined} texts  the preview's texts (previewText)
 * @param {number[]} [shape]
 * @param {number|null} [limit]  show at most this many values (compact labels)
 * @returns {string}
 */
export function formatValues(texts, shape, limit = null) {
  let list = Array.isArray(texts) ? texts : [];
  if (limit != null && list.length > limit) list = list.slice(0, limit);
  return `[${list.join(", ")}${numel(shape) > list.length ? ", ..." : ""}]`;
}

/** `()`, `(2,)`, `(2, 3)`: a shape as Python writes a tuple. @param {number[]} shape */
export function shapeText(shape) {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
}

// ------------------------------------------------------------------------------ statements

/**
 * "nan" or "inf" when the value preview, then the gradient preview, has a non-finite value
 * (the first one decides), else null.
 * @param {NodeData} node
 * @param {NodeState} state
 * @returns {"nan"|"inf"|null}
 */
export function anomalyOf(node, state) {
  const lists = [node.preview, state && state.grad ? state.grad.preview : null];
  for (const values of lists) {
    if (!Array.isArray(values)) continue;
    for (const v of values) {
      if (typeof v === "boolean") continue;
      const x = typeof v === "string" ? toNumber(v) : v;
      if (typeof x === "number" && !Number.isFinite(x)) return Number.isNaN(x) ? "nan" : "inf";
    }
  }
  return null;
}

/**
 * Is the node's shape known? (dot.py `shape_known`.) Not for an op whose output was never
 * seen, which has no dtype either (a node of PyTorch's found by walking back): no shape rather
 * than "()", which reads as a scalar.
 * @param {NodeData} node
 * @returns {boolean}
 */
export function shapeKnown(node) {
  const shape = Array.isArray(node.shape) ? node.shape : [];
  return !(node.kind === "op" && (node.dtype ?? "") === "" && shape.length === 0);
}

/**
 * The lines of a node's label, as plain text (port of dot.py `_label_lines` with values,
 * grads and shapes on; `limit` makes the label compact, as `limit=` does there: value and
 * gradient lines only for tensors of at most `limit` elements).
 * @param {NodeData} node
 * @param {NodeState} state
 * @param {{limit?: number|null}} [options]
 * @returns {string[]}
 */
export function labelLines(node, state, options = {}) {
  const limit = options.limit ?? null;
  const lines = [];
  const kind = node.kind;
  const name = node.name;
  if (kind === "op") {
    if (name == null) lines.push(String(node.op));
    else lines.push(String(name), String(node.op));
  } else if (kind === "constant") {
    lines.push(name == null ? "const" : String(name));
  } else {
    lines.push(name == null ? String(kind) : String(name));
  }
  const shape = Array.isArray(node.shape) ? node.shape : null;
  const dtype = node.dtype == null ? "" : String(node.dtype);
  if (shape && (shape.length > 0 || kind !== "constant") && shapeKnown(node)) {
    const suffix = dtype === "float32" || dtype === "" || dtype === "float" || dtype === "int" ? "" : ` ${dtype}`;
    lines.push(shapeText(shape) + suffix);
  }
  // A compact label (limit) shows previews only of tensors small enough to show whole.
  const whole = limit == null || numel(shape || []) <= limit;
  if (Array.isArray(node.previewText) && node.previewText.length > 0 && whole) {
    lines.push(formatValues(node.previewText, shape || [], limit));
  }
  const grad = state && state.grad;
  const freed = Boolean(state && state.freed);
  if (grad && Array.isArray(grad.previewText) && whole) {
    lines.push(`grad${grad.summed ? " (summed)" : ""} ${formatValues(grad.previewText, shape || [], limit)}`);
  }
  if (Number(node.saved) > 0 && !freed) lines.push(`saved ${node.savedText ?? ""}`);
  if (freed) lines.push("freed");
  if (node.recomputed) lines.push("recomputed");
  const anomaly = anomalyOf(node, state);
  if (anomaly) lines.push(anomaly === "nan" ? "NaN" : "Inf");
  if (node.device != null && node.device !== "cpu" && node.device !== "") lines.push(String(node.device));
  if (node.elapsedText != null) lines.push(String(node.elapsedText));
  return lines;
}

/** The attribute list `[a, b]` of the non-empty parts. @param {...(string|undefined)} parts */
function attributeList(...parts) {
  return `[${parts.filter(Boolean).join(", ")}]`;
}

/**
 * `n7 [label="...", <kind style>] [<saved>] [<freed>] [<anomaly>];`
 * @param {NodeData} node
 * @param {NodeState} state
 * @param {Vocabulary} vocabulary
 * @param {{limit?: number|null}} [options]  as labelLines
 * @returns {string}
 */
export function nodeStatement(node, state, vocabulary, options = {}) {
  const v = vocabulary || {};
  const maxChars = v.max_label_chars ?? MAX_LABEL_CHARS;
  const freed = Boolean(state && state.freed);
  const label = labelLines(node, state, options).map((line) => escape(line, maxChars)).join("\\n");
  const kind = String(node.kind);
  const styles = v.node || {};
  let statement = `n${node.id} ` + attributeList(`label="${label}"`, styles[kind] ?? styles.leaf);
  if (Number(node.saved) > 0 && !freed) statement += ` [${v.saved ?? ""}]`;
  if (freed) {
    const ghosts = v.freed || {};
    statement += ` [${ghosts[kind] ?? ghosts.leaf ?? ""}]`;
  }
  if (anomalyOf(node, state)) statement += ` [${v.anomaly ?? ""}]`;
  return statement + ";";
}

/**
 * 0..4: the size of a gradient on an absolute log scale, a decade a level (dot.py
 * magnitude_level): not finite -> 4, <= 0 -> 0, else floor(log10(norm)) + 3 within 0..4.
 * @param {number|string} norm  a number, or "NaN" / "Infinity" / "-Infinity"
 * @returns {number}
 */
export function magnitudeLevel(norm) {
  const x = toNumber(norm);
  if (!Number.isFinite(x)) return 4;
  if (x <= 0) return 0;
  return Math.min(Math.max(Math.floor(Math.log10(x)) + 3, 0), 4);
}
