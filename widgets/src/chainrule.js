// Pure: the chain rule's arithmetic at a position of the timeline, as rows of text for the
// "chain rule" panel (PROTOCOL.md, "Chain rule panel"). During backward the active node is the
// one of the newest `grad` or `edge_grad` step: its gradient (the upstream gradient), and for
// each edge its backward has sent so far, "upstream × local derivative = contribution"; at a
// node that several edges sent to, "a + b = total". Numbers come from the steps themselves
// (edge_grad carries each contribution) and are shown as the texts Python wrote with them;
// nothing here computes a gradient or writes a number.
//
// The panel claims only what the steps show. "Where backward starts" is said of the root the
// pass's backward_started step names, and of no other node. An engine may report no edge_grad
// at all (an EventSource that reports only each node's gradient): a pass with none says so at
// its nodes instead of showing a node as a start; a pass with edges, at a node no recorded edge
// reached (its sender was past the recording's budget), says that.

import { formatValues, shapeText } from "./vocabulary.js";
import { nodeTitle } from "./timeline.js";

/**
 * @typedef {import("./vocabulary.js").NodeData} NodeData
 * @typedef {{node: number, input: number, position: number, texts: string[], reducedFrom: number[]|null}} EdgeStep
 * @typedef {{title: string, rows: Array<[string, string]>}} ChainRule
 */

/**
 * The chain-rule rows at position t (steps[0:t]), or null outside a backward pass.
 * @param {Array<any[]>} steps
 * @param {Map<number, NodeData>} nodes
 * @param {Iterable<{src: number, dst: number, pos: number}>} graphEdges  the recording's edges
 * @param {number} t
 * @returns {ChainRule|null}
 */
export function chainRuleAt(steps, nodes, graphEdges, t) {
  let start = -1;
  for (let i = Math.min(t, steps.length) - 1; i >= 0; i--) {
    const kind = steps[i][0];
    if (kind === "backward_finished" || kind === "backward_failed") return null;
    if (kind === "backward_started") { start = i; break; }
  }
  if (start < 0) return null;
  const root = steps[start][1];
  /** @type {Map<number, {texts: string[], summed: boolean}>} */
  const grads = new Map();
  /** @type {EdgeStep[]} */
  const edges = [];
  let active = null;
  for (let i = start + 1; i < t && i < steps.length; i++) {
    const step = steps[i];
    if (step[0] === "grad") {
      grads.set(step[1], { texts: asList(step[5]), summed: Boolean(step[4]) });
      active = step[1];
    } else if (step[0] === "edge_grad") {
      edges.push({ node: step[1], input: step[2], position: Number(step[3]) || 0,
        texts: asList(step[6]), reducedFrom: Array.isArray(step[5]) ? step[5] : null });
      active = step[1];
    }
  }
  if (active === null) return null;
  const node = nodes.get(active);
  const grad = grads.get(active);
  /** @type {Array<[string, string]>} */
  const rows = [];
  const into = edges.filter((e) => e.input === active);
  if (grad && into.length > 1) {
    const terms = into.map((e) => values(e.texts, node));
    rows.push(["fan-in", `${terms.join(" + ")} = ${values(grad.texts, node)}`]);
    rows.push(["from", into.map((e) => label(nodes.get(e.node), e.node)).join(" + ")]);
  }
  const upstream = grad ? values(grad.texts, node) : "not yet";
  if (into.length === 0 && grad) {
    const reports = passReportsEdges(steps, start);
    if (active === root) {
      rows.push(["upstream gradient", `${upstream} (where backward starts)`]);
    } else if (reports) {
      rows.push(["upstream gradient", `${upstream} (no edge into it was recorded)`]);
    } else {
      rows.push(["upstream gradient", upstream]);
    }
    if (!reports && (active !== root || passEnded(steps, start))) {
      rows.push(["per edge", NO_EDGES]);
    }
  } else {
    rows.push(["upstream gradient", upstream]);
  }
  /** @type {number[]} */
  const inputs = [];
  for (const e of graphEdges) if (e.dst === active) inputs[e.pos] = e.src;
  let inputCount = inputs.length;
  for (const e of edges) if (e.node === active) inputCount = Math.max(inputCount, e.position + 1);
  for (const e of edges) {
    if (e.node !== active) continue;
    const input = nodes.get(e.input);
    const local = localDerivative(node, e.position, inputCount, inputs.map((id) => nodes.get(id)));
    let text = `${upstream} \u00D7 ${local} = ${values(e.texts, input)}`;
    if (e.reducedFrom) {
      text += ` (summed over the broadcast: ${shapeText(e.reducedFrom)} \u2192 ${shapeText(shapeOf(input))})`;
    }
    rows.push([`\u2192 ${label(input, e.input)} (input ${e.position})`, text]);
  }
  return { title: `chain rule at ${label(node, active)}`, rows };
}

/** What the panel says at the nodes of a pass that carries no edge_grad step. */
export const NO_EDGES = "this engine does not report per-edge gradients: shown is each node's total";

/**
 * Does the backward pass begun at steps[start] carry any edge_grad step (as far as it is
 * known)? An engine that reports edges sends one into every node but the root before that
 * node's gradient (NOTE [edge gradients] in dyngraph/events.py).
 * @param {Array<any[]>} steps @param {number} start
 */
function passReportsEdges(steps, start) {
  for (let i = start + 1; i < steps.length; i++) {
    const kind = steps[i][0];
    if (kind === "edge_grad") return true;
    if (kind === "backward_started" || kind === "backward_finished" || kind === "backward_failed") return false;
  }
  return false;
}

/** Has the pass begun at steps[start] ended (finished or failed)? @param {Array<any[]>} steps @param {number} start */
function passEnded(steps, start) {
  for (let i = start + 1; i < steps.length; i++) {
    const kind = steps[i][0];
    if (kind === "backward_finished" || kind === "backward_failed") return true;
    if (kind === "backward_started") return false;
  }
  return false;
}

/**
 * The local derivative of `node` with respect to its input `position`, as text: the part of the
 * op's rule (`dz/dy = x`), with the input's numbers where the rule names one variable of the
 * forward formula (`z = x * y`: x is input 0, y input 1, z the node itself). The rule's parts
 * are separated by "," or ";" before the next `d.../d...` (`dz/dbase = ...;  dz/dsrc = ...`);
 * one part per input is matched by position, else the whole section is shown.
 * @param {NodeData|undefined} node
 * @param {number} position
 * @param {number} inputCount
 * @param {Array<NodeData|undefined>} inputs  the node's inputs, by position
 * @returns {string}
 */
export function localDerivative(node, position, inputCount, inputs) {
  const rule = node && typeof node.rule === "string" ? node.rule : "";
  const semi = rule.indexOf(";");
  if (semi < 0) return "(local derivative)";
  const section = rule.slice(semi + 1).trim();
  const parts = section.split(/[,;]\s+(?=d\w*\/d)/).map((p) => p.trim().replace(/[,;]$/, ""));
  const part = parts.length === inputCount ? parts[position] : inputCount === 1 ? parts[0] : section;
  const sides = part.split("=").map((s) => s.trim());
  const last = sides[sides.length - 1];
  if (sides.length >= 2 && rule.startsWith("z = ")) {
    /** @type {NodeData|undefined} */
    let source;
    if (last === "x" || last === "y") source = inputs[last === "x" ? 0 : 1];
    else if (last === "z") source = node;
    if (source && Array.isArray(source.previewText) && source.previewText.length) {
      return `${values(source.previewText, source)} (${part})`;
    }
    if (/^-?\d+$/.test(last)) return `${last} (${part})`;
  }
  return `(${part})`;
}

/** @param {unknown} v @returns {any[]} */
function asList(v) {
  return Array.isArray(v) ? v : [];
}

/** @param {NodeData|undefined} node @returns {number[]} */
function shapeOf(node) {
  return node && Array.isArray(node.shape) ? node.shape : [];
}

/** "[2, 3] (2,)": a preview's texts with the node's shape (no shape for a scalar). */
function values(/** @type {string[]} */ texts, /** @type {NodeData|undefined} */ node) {
  const shape = shapeOf(node);
  const text = formatValues(texts, shape);
  return shape.length ? `${text} ${shapeText(shape)}` : text;
}

/** What the panel calls a node: "a (leaf)", "b (Mul)", "Sum". */
function label(/** @type {NodeData|undefined} */ node, /** @type {number} */ id) {
  if (!node) return `#${id}`;
  const title = nodeTitle(node);
  return node.name != null && node.name !== "" ? `${node.name} (${title})` : title;
}
