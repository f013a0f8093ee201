// The visual vocabulary on the browser side: a node's, edge's and cluster's DOT statement from
// its compact data plus the vocabulary table Python sends in `header.vocabulary` (see
// ../PROTOCOL.md). Pure functions, no DOM.
//
// NOTE [one vocabulary] Python's dyngraph/dot.py stays the reference: these functions are a
// port of its label lines, escaping and number formatting, and test/vocabulary.test.js checks
// them character for character against statements Python made (test/fixtures/vocabulary.json).
// Styles are never chosen here: every attribute body comes from the vocabulary table.
//
// NOTE [numbers] Python formats with format(v, ".4g") / ".1f", which round the exact binary
// value half to even; JavaScript's toPrecision / toFixed round exact ties up (0.125 -> "0.13",
// Python "0.12"). So the digits here come from the double's exact decimal expansion (BigInt).

/**
 * A preview value as JSON carries it: a number, a boolean, or "NaN" / "Infinity" / "-Infinity".
 * @typedef {number|boolean|string} Value
 * @typedef {{
 *   id: number, kind: string, op?: string|null, name?: string|null, shape?: number[],
 *   dtype?: string, device?: string, preview?: Value[], scope?: string[],
 *   file?: string|null, line?: number|null, cell?: number|null, saved?: number,
 *   recomputed?: boolean, elapsed?: number|null, rule?: string|null
 * }} NodeData
 * @typedef {{preview: Value[], norm: number|string, summed: boolean}} GradData
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

const SCRATCH = new DataView(new ArrayBuffer(8));

/**
 * The exact value of a finite double x != 0, |x| = n * 10^exp10.
 * @param {number} x
 * @returns {{n: bigint, exp10: number}}
 */
function exactDecimal(x) {
  SCRATCH.setFloat64(0, Math.abs(x));
  const hi = SCRATCH.getUint32(0);
  const lo = SCRATCH.getUint32(4);
  const bits = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp2 = -1074;
  if (bits !== 0) {
    mantissa |= 1n << 52n;
    exp2 = bits - 1075;
  }
  while (exp2 < 0 && (mantissa & 1n) === 0n) {
    mantissa >>= 1n;
    exp2++;
  }
  if (exp2 >= 0) return { n: mantissa << BigInt(exp2), exp10: 0 };
  return { n: mantissa * 5n ** BigInt(-exp2), exp10: exp2 }; // m / 2^k = m * 5^k / 10^k
}

/**
 * n rounded to `drop` fewer decimal digits, half to even.
 * @param {bigint} n @param {number} drop
 * @returns {bigint}
 */
function roundHalfEven(n, drop) {
  if (drop <= 0) return n;
  const unit = 10n ** BigInt(drop);
  let q = n / unit;
  const r2 = (n % unit) * 2n;
  if (r2 > unit || (r2 === unit && (q & 1n) === 1n)) q += 1n;
  return q;
}

/**
 * Python's `format(value, f".{precision}g")`: `precision` significant digits, rounded half to
 * even on the exact value; exponent form ("1.235e+05", "1e-05") when the exponent is below -4
 * or at least the precision, trailing zeros dropped; "nan", "inf", "-inf"; "-0" for -0.
 * @param {number|string|boolean} value  a number, or "NaN" / "Infinity" / "-Infinity"
 * @param {number} [precision]
 * @returns {string}
 */
export function pyG(value, precision = 4) {
  const x = toNumber(value);
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  const p = Math.max(1, Math.floor(precision));
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  if (x === 0) return sign + "0";
  const { n, exp10 } = exactDecimal(x);
  const digits = n.toString();
  let exponent = digits.length - 1 + exp10; // of the leading digit
  let sig = roundHalfEven(n, digits.length - p).toString();
  if (sig.length > p) {
    // 9.9995 -> 10.00: one more digit before the point
    sig = sig.slice(0, p);
    exponent += 1;
  }
  sig = sig.padEnd(p, "0");
  if (exponent < -4 || exponent >= p) {
    const mantissa = stripZeros(sig[0] + "." + sig.slice(1));
    const e = Math.abs(exponent);
    return `${sign}${mantissa}e${exponent < 0 ? "-" : "+"}${e < 10 ? "0" : ""}${e}`;
  }
  if (exponent >= 0) return sign + stripZeros(sig.slice(0, exponent + 1) + "." + sig.slice(exponent + 1));
  return sign + stripZeros("0." + "0".repeat(-exponent - 1) + sig);
}

/** "1.500" -> "1.5", "2.000" -> "2", "10" -> "10". @param {string} s */
function stripZeros(s) {
  if (!s.includes(".")) return s;
  return s.replace(/0+$/, "").replace(/\.$/, "");
}

/**
 * Python's `format(value, f".{decimals}f")` (half to even on the exact value).
 * @param {number} value
 * @param {number} decimals
 * @returns {string}
 */
export function pyFixed(value, decimals) {
  const x = toNumber(value);
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  let units = 0n; // |x| * 10^decimals, rounded
  if (x !== 0) {
    const { n, exp10 } = exactDecimal(x);
    const shift = exp10 + decimals; // |x| * 10^decimals = n * 10^shift
    units = shift >= 0 ? n * 10n ** BigInt(shift) : roundHalfEven(n, -shift);
  }
  const text = units.toString().padStart(decimals + 1, "0");
  if (decimals === 0) return sign + text;
  return `${sign}${text.slice(0, -decimals)}.${text.slice(-decimals)}`;
}

/**
 * Whether values of this dtype are formatted as floats (Python floats), else as they are.
 * @param {unknown} dtype
 */
export function isFloatDtype(dtype) {
  return typeof dtype === "string" && dtype.startsWith("float");
}

/** @param {unknown} shape @returns {number} how many elements ( () has 1 ) */
export function numel(shape) {
  if (!Array.isArray(shape)) return 1;
  let n = 1;
  for (const d of shape) n *= Number(d);
  return n;
}

/**
 * One preview value as dot.py's format_values shows it: a Python float with four significant
 * digits, anything else as Python's str() writes it. JSON does not tell 2.0 from 2, so a
 * number is taken for a float when the dtype is a float dtype, or when it is not a whole
 * number (which no Python int is: e.g. the gradient preview of a bool tensor).
 * @param {Value} v
 * @param {boolean} float  the tensor's dtype is a float dtype
 */
export function formatValue(v, float) {
  if (v === "NaN") return "nan";
  if (v === "Infinity") return "inf";
  if (v === "-Infinity") return "-inf";
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") {
    if (float || !Number.isInteger(v)) return pyG(v, 4);
    return String(v);
  }
  return String(v);
}

/**
 * `[1.5, 2, ...]` (port of dot.py format_values): floats with four significant digits, other
 * values as they are, and ", ..." when the tensor has more elements than the preview.
 * @param {Value[]} values
 * @param {number[]} [shape]
 * @param {string} [dtype]
 * @param {number|null} [limit]  show at most this many values (compact labels)
 * @returns {string}
 */
export function formatValues(values, shape, dtype, limit = null) {
  let list = Array.isArray(values) ? values : [];
  if (limit != null && list.length > limit) list = list.slice(0, limit);
  const float = isFloatDtype(dtype);
  const shown = list.map((v) => formatValue(v, float)).join(", ");
  return `[${shown}${numel(shape) > list.length ? ", ..." : ""}]`;
}

/**
 * `16 B`, `1.5 KB`, `2.0 MB`, `3.1 GB` (port of dot.py format_bytes).
 * @param {number} n
 * @returns {string}
 */
export function formatBytes(n) {
  let x = Number(n);
  for (const unit of ["B", "KB", "MB", "GB"]) {
    if (x < 1024 || unit === "GB") return unit === "B" ? `${pyFixed(x, 0)} B` : `${pyFixed(x, 1)} ${unit}`;
    x /= 1024;
  }
  return `${x} B`; // not reached
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
  if (shape && (shape.length > 0 || kind !== "constant")) {
    const suffix = dtype === "float32" || dtype === "" || dtype === "float" || dtype === "int" ? "" : ` ${dtype}`;
    lines.push(shapeText(shape) + suffix);
  }
  // A compact label (limit) shows previews only of tensors small enough to show whole.
  const whole = limit == null || numel(shape || []) <= limit;
  if (Array.isArray(node.preview) && node.preview.length > 0 && whole) {
    lines.push(formatValues(node.preview, shape || [], dtype, limit));
  }
  const grad = state && state.grad;
  const freed = Boolean(state && state.freed);
  if (grad && Array.isArray(grad.preview) && whole) {
    lines.push(`grad${grad.summed ? " (summed)" : ""} ${formatValues(grad.preview, shape || [], dtype, limit)}`);
  }
  if (Number(node.saved) > 0 && !freed) lines.push(`saved ${formatBytes(Number(node.saved))}`);
  if (freed) lines.push("freed");
  if (node.recomputed) lines.push("recomputed");
  const anomaly = anomalyOf(node, state);
  if (anomaly) lines.push(anomaly === "nan" ? "NaN" : "Inf");
  if (node.device != null && node.device !== "cpu" && node.device !== "") lines.push(String(node.device));
  if (node.elapsed != null) lines.push(`${pyG(Number(node.elapsed) * 1000, 3)} ms`);
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

/**
 * `n3 -> n7 [];`, or with the gradient flowing back along it (the norm of the source's
 * gradient) the vocabulary's edge style of its magnitude level.
 * @param {number} src
 * @param {number} dst
 * @param {number|string|null} norm
 * @param {Vocabulary} vocabulary
 * @returns {string}
 */
export function edgeStatement(src, dst, norm, vocabulary) {
  if (norm == null) return `n${src} -> n${dst} [];`;
  const styles = (vocabulary && vocabulary.grad_edges) || [];
  return `n${src} -> n${dst} [${styles[magnitudeLevel(norm)] ?? ""}];`;
}

/**
 * The first two lines of the cluster drawn around a scope (dot.py cluster_header).
 * @param {number} index
 * @param {string} name  the scope's own name (the last of its path)
 * @param {Vocabulary} vocabulary
 * @returns {string[]}
 */
export function clusterLines(index, name, vocabulary) {
  const v = vocabulary || {};
  const label = `label="${escape(name, v.max_label_chars ?? MAX_LABEL_CHARS)}"`;
  return [`subgraph cluster_${index} {`, `  graph ${attributeList(label, v.cluster)};`];
}
