// The event spine, as the browser receives it (see ../PROTOCOL.md, protocol v5): Python sends the
// engine's events themselves, packed with MessagePack, and they are folded here into the node
// data, edges and timeline steps the rest of the widget draws from - the same fold as
// dyngraph/record.py's Recording, which stays the reference.
//
// An event arrives as [kind, fields]: `fields` is the event's NamedTuple as an array, followed
// by the texts Python made of its numbers, in the order `header.fields[kind]` names (so the
// field order is never hard-coded here). The texts are kept beside the numbers they show.

import { decode } from "@msgpack/msgpack";

/**
 * @typedef {import("./vocabulary.js").NodeData} NodeData
 * @typedef {Record<string, string[]>} Fields  event kind (and "where") -> field names
 * @typedef {{nodes: NodeData[], edges: Array<[number, number, number]>, steps: Array<any[]>}} Folded
 */

const NON_OP_KINDS = new Set(["leaf", "parameter", "constant"]);

/**
 * A value as the rest of the widget takes it: non-finite numbers as "NaN", "Infinity" or
 * "-Infinity" (MessagePack carries them as floats; JSON, in which the vocabulary fixture is
 * written, cannot).
 * @param {unknown} v
 */
export function jsonValue(v) {
  if (typeof v !== "number" || Number.isFinite(v)) return v;
  if (Number.isNaN(v)) return "NaN";
  return v > 0 ? "Infinity" : "-Infinity";
}

/** @param {unknown} values */
function jsonValues(values) {
  return Array.isArray(values) ? values.map(jsonValue) : [];
}

/**
 * The texts of a preview as Python wrote them (`preview_text`); a state saved before protocol
 * v5 has none, and shows the values as JavaScript writes them rather than fail.
 * @param {unknown} texts @param {unknown} values
 * @returns {string[]}
 */
function previewTexts(texts, values) {
  if (Array.isArray(texts)) return texts.map(String);
  return jsonValues(values).map(String);
}

/**
 * A text Python made (`saved_text`, `elapsed_text`, `norm_text`), or for a state saved before
 * protocol v5 the number as JavaScript writes it followed by `unit`; null for no number.
 * @param {unknown} text @param {unknown} value @param {string} unit
 * @returns {string|null}
 */
function numberText(text, value, unit) {
  if (typeof text === "string") return text;
  return value == null || text === null ? null : `${String(jsonValue(value))}${unit}`;
}

/**
 * `table[key]` when the table itself holds it and it passes `is`, else `fallback`. A state is
 * untrusted input (a notebook file): a row of kind "constructor" or an op named "toString"
 * must not read Object's prototype (issue 39).
 * @template T
 * @param {unknown} table @param {unknown} key @param {(v: unknown) => boolean} is @param {T} fallback
 * @returns {any}
 */
export function own(table, key, is, fallback) {
  if (table === null || typeof table !== "object" || typeof key !== "string" || !Object.hasOwn(table, key)) {
    return fallback;
  }
  const value = /** @type {any} */ (table)[key];
  return is(value) ? value : fallback;
}

/** The field names of events of `kind` (none for a kind the header does not name). @param {unknown} fields @param {unknown} kind @returns {string[]} */
function fieldNames(fields, kind) {
  return own(fields, kind, Array.isArray, []);
}

/**
 * Read fields by name from an event's array.
 * @param {Fields} fields @param {string} kind @param {unknown[]} row
 * @returns {Record<string, any>}
 */
function named(fields, kind, row) {
  /** @type {Record<string, any>} */
  const out = Object.create(null);
  const names = fieldNames(fields, kind);
  for (let i = 0; i < names.length; i++) out[String(names[i])] = row[i];
  return out;
}

/**
 * Fold events into new nodes, edges and steps. `isKnown(id)` says whether a node was received
 * before; nodes announced again are left out, and gradients, versions and freed ids of nodes
 * never received are left out, as Recording leaves them out.
 * @param {unknown[]} events  [kind, fields] pairs
 * @param {{fields?: Fields, rules?: Record<string, string>}} header
 * @param {(id: number) => boolean} isKnown
 * @returns {Folded}
 */
export function foldEvents(events, header, isKnown) {
  const fields = header.fields || {};
  const rules = header.rules || {};
  /** @type {Set<number>} */
  const added = new Set();
  const known = (/** @type {unknown} */ id) => typeof id === "number" && (added.has(id) || isKnown(id));
  /** @type {Folded} */
  const folded = { nodes: [], edges: [], steps: [] };
  for (const item of events) {
    if (!Array.isArray(item) || typeof item[0] !== "string" || !Array.isArray(item[1])) continue;
    const [kind, row] = item;
    const e = named(fields, kind, row);
    switch (kind) {
      case "node_created": {
        if (typeof e.id !== "number" || known(e.id)) break;
        added.add(e.id);
        const op = String(e.op);
        const nodeKind = NON_OP_KINDS.has(op) ? op : "op";
        const where = Array.isArray(e.where) ? named(fields, "where", e.where) : null;
        folded.nodes.push({
          id: e.id, kind: nodeKind, op, name: e.name ?? null,
          shape: Array.isArray(e.shape) ? e.shape : [], dtype: String(e.dtype ?? ""),
          device: String(e.device ?? ""), preview: jsonValues(e.preview),
          previewText: previewTexts(e.preview_text, e.preview),
          scope: Array.isArray(e.scope) ? e.scope.map(String) : [],
          file: where ? where.file ?? null : null, line: where ? where.line ?? null : null,
          cell: where ? where.cell ?? null : null, loop: where ? where.loop ?? null : null,
          saved: e.saved_bytes || 0,
          savedText: numberText(e.saved_text, e.saved_bytes || null, " B"),
          recomputed: Boolean(e.recomputed), elapsed: e.elapsed ?? null,
          elapsedText: numberText(e.elapsed_text, e.elapsed, " s"),
          rule: nodeKind === "op" ? own(rules, op, (v) => typeof v === "string", "") : null,
        });
        const inputs = Array.isArray(e.inputs) ? e.inputs : [];
        inputs.forEach((src, pos) => {
          if (known(src)) folded.edges.push([src, e.id, pos]);
        });
        folded.steps.push(["node", e.id]);
        break;
      }
      case "grad_computed":
        if (known(e.id)) {
          folded.steps.push(["grad", e.id, jsonValues(e.preview), jsonValue(e.norm), Boolean(e.accumulated),
            previewTexts(e.preview_text, e.preview), numberText(e.norm_text, e.norm, "")]);
        }
        break;
      case "edge_grad":
        // what one edge carried back: [kind, node, input, position, preview, shape before the
        // un-broadcast sum or null, the preview's texts] (PROTOCOL.md, "The fold")
        if (known(e.node) && known(e.input)) {
          folded.steps.push(["edge_grad", e.node, e.input, e.position, jsonValues(e.preview),
            Array.isArray(e.reduced_from) ? e.reduced_from : null, previewTexts(e.preview_text, e.preview)]);
        }
        break;
      case "graph_freed":
        folded.steps.push(["freed", (Array.isArray(e.ids) ? e.ids : []).filter(known)]);
        break;
      case "version_bumped":
        if (known(e.id)) folded.steps.push(["version", e.id, e.version]);
        break;
      case "backward_started": {
        // with the line that called backward() (null when unknown): the source panel's line
        const where = Array.isArray(e.where) ? named(fields, "where", e.where) : null;
        folded.steps.push([kind, e.root, where
          ? { file: where.file ?? null, line: where.line ?? null, cell: where.cell ?? null, loop: where.loop ?? null }
          : null]);
        break;
      }
      case "backward_finished":
        folded.steps.push([kind, e.root]);
        break;
      case "backward_failed":
        folded.steps.push([kind, e.root, String(e.error ?? "")]);
        break;
      default:
        break; // an event kind this widget does not draw
    }
  }
  return folded;
}

/** A state the player cannot read: its message says what is wrong with it. */
export class UnreadableState extends Error {}

/**
 * A snapshot or delta trait as an object: MessagePack bytes (a DataView, ArrayBuffer or typed
 * array, as ipywidgets delivers a Bytes trait), `{base64: ...}` (the standalone page), or a
 * plain object (tests) used as it is. Empty bytes are the empty state `{}`. Its `events` arrive
 * as batches, each packed on its own: they are unpacked here into one list of rows, in order,
 * each row followed by the texts of its numbers (`withTexts`; `fields` is `header.fields`).
 * Throws UnreadableState, saying why, for bytes that are not MessagePack or a state whose
 * `seq` or `events` are not what the protocol says (the view shows that as a notice).
 * @param {unknown} value
 * @param {Fields} [fields]
 * @returns {any}
 */
export function decodeTrait(value, fields) {
  let bytes = null;
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
    bytes = value instanceof ArrayBuffer
      ? new Uint8Array(value)
      : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  } else if (value && typeof value === "object" && typeof (/** @type {any} */ (value).base64) === "string") {
    let text;
    try {
      text = atob(/** @type {any} */ (value).base64);
    } catch {
      throw new UnreadableState("its base64 text is broken");
    }
    bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  }
  if (bytes === null) return checkedState(value ?? {});
  if (!bytes.length) return {};
  let state;
  try {
    state = unpackBatches(checkedState(decode(bytes)), fields);
  } catch (err) {
    if (err instanceof UnreadableState) throw err;
    throw new UnreadableState(`its MessagePack is broken (${err instanceof Error ? err.message : String(err)})`);
  }
  return state;
}

/**
 * `state` if it is a state object whose `seq` (when present) is a count and whose `events`
 * (when present) a list; else UnreadableState.
 * @param {unknown} state
 */
function checkedState(state) {
  if (state === null || typeof state !== "object" || Array.isArray(state)) {
    throw new UnreadableState("it is not a state object");
  }
  const seq = own(state, "seq", () => true, undefined);
  if (seq !== undefined && !(Number.isInteger(seq) && seq >= 0)) {
    throw new UnreadableState(`its seq is ${JSON.stringify(seq)}, not a count`);
  }
  if (own(state, "events", () => true, undefined) !== undefined && !Array.isArray(/** @type {any} */ (state).events)) {
    throw new UnreadableState("its events are not a list");
  }
  return state;
}

/** @param {any} state @param {Fields | undefined} fields */
function unpackBatches(state, fields) {
  if (state && Array.isArray(state.events)) {
    state.events = state.events.flatMap((batch) =>
      batch instanceof Uint8Array ? withTexts(decode(batch), fields || {}) : [batch]);
  }
  return state;
}

/**
 * The rows of one unpacked batch. A batch is `[rows, texts]` (PROTOCOL.md, "Display texts"):
 * `texts` is one string, the texts of the rows' numbers in row order joined by "\n". Each row
 * of a kind whose fields name `preview_text` gets back after its own fields the list of its
 * preview's texts (one per value), then one text for each name after `preview_text` (null for
 * ""). A batch saved before protocol v5 is the array of rows itself, without texts.
 * @param {unknown} batch @param {Fields} fields
 * @returns {unknown[]}
 */
function withTexts(batch, fields) {
  if (!Array.isArray(batch)) return [];
  const [rows, texts] = batch;
  if (batch.length !== 2 || !Array.isArray(rows) || typeof texts !== "string") return batch;
  const stream = texts.split("\n");
  let next = 0;
  for (const row of rows) {
    if (!Array.isArray(row) || !Array.isArray(row[1])) continue;
    const names = fieldNames(fields, row[0]);
    const at = names.indexOf("preview_text");
    if (at < 0) continue;
    const values = row[1];
    const preview = values[names.indexOf("preview")];
    const count = Array.isArray(preview) ? preview.length : 0;
    values.length = at; // the texts go under their names, after the event's own fields
    values.push(stream.slice(next, next + count));
    next += count;
    for (let k = at + 1; k < names.length; k++) values.push(stream[next++] || null);
  }
  return rows;
}
