// The chain-rule panel's arithmetic (src/chainrule.js), from timeline steps as the fold makes
// them: b = a * a (fan-in) and a bias broadcast over a batch.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { chainRuleAt, localDerivative, NO_EDGES } from "../src/chainrule.js";
import { Timeline } from "../src/timeline.js";
import { foldEvents } from "../src/events.js";
import { createView } from "../src/view.js";
import { dom, fakeModel, sample, stubRenderer } from "./helpers.js";

const MUL = "z = x * y;  dz/dx = y,  dz/dy = x";
const SUM = "z = sum of x over axis;  dz/dx = 1 (gz is broadcast back over the summed axes)";
const ADD = "z = x + y;  dz/dx = 1,  dz/dy = 1";

// Nodes and steps as the fold makes them; the texts are what Python sends for these numbers
// (small whole numbers and short decimals, which String writes the same way).
const texts = (values) => values.map(String);
const node = (id, op, shape, preview, name = null, rule = null) => ({
  id, kind: op === "leaf" ? "leaf" : "op", op, name, shape, dtype: "float32", device: "cpu",
  preview, previewText: texts(preview), scope: [], file: null, line: null, cell: null, saved: 0,
  savedText: null, recomputed: false, elapsed: null, elapsedText: null, rule,
});
const grad = (id, preview, norm, summed) => ["grad", id, preview, norm, summed, texts(preview), String(norm)];
const edgeGrad = (from, to, position, preview, reducedFrom) =>
  ["edge_grad", from, to, position, preview, reducedFrom, texts(preview)];

// a = [2, 3]; b = a * a; loss = b.sum(); loss.backward()
const FAN_IN = {
  nodes: [node(1, "leaf", [2], [2, 3], "a"), node(2, "Mul", [2], [4, 9], "b", MUL),
    node(3, "Sum", [], [13], "loss", SUM)],
  edges: [[1, 2, 0], [1, 2, 1], [2, 3, 0]],
  steps: [["node", 1], ["node", 2], ["node", 3], ["backward_started", 3],
    grad(3, [1], 1, false),
    edgeGrad(3, 2, 0, [1, 1], null),
    grad(2, [1, 1], 1.414, false),
    edgeGrad(2, 1, 0, [2, 3], null),
    edgeGrad(2, 1, 1, [2, 3], null),
    grad(1, [4, 6], 7.2, true),
    ["backward_finished", 3]],
};

function timelineOf(state) {
  const tl = new Timeline();
  tl.offer({ seq: 1, ...state });
  return tl;
}

const at = (tl, t) => chainRuleAt(tl.steps, tl.nodes, tl.edges.values(), t);

describe("chain rule panel", () => {
  test("nothing before backward, nor after it finishes", () => {
    const tl = timelineOf(FAN_IN);
    assert.equal(at(tl, 3), null);
    assert.equal(at(tl, 4), null); // started, no gradient yet
    assert.equal(at(tl, tl.steps.length), null);
  });

  test("the root's gradient is where backward starts", () => {
    const tl = timelineOf(FAN_IN);
    const rule = at(tl, 5);
    assert.equal(rule.title, "chain rule at loss (Sum)");
    assert.deepEqual(rule.rows, [["upstream gradient", "[1] (where backward starts)"]]);
  });

  test("each edge: upstream × local derivative = contribution, with the input's numbers", () => {
    const tl = timelineOf(FAN_IN);
    const rule = at(tl, 9); // both edges of the Mul sent
    assert.equal(rule.title, "chain rule at b (Mul)");
    assert.deepEqual(rule.rows, [
      ["upstream gradient", "[1, 1] (2,)"],
      ["\u2192 a (leaf) (input 0)", "[1, 1] (2,) \u00D7 [2, 3] (2,) (dz/dx = y) = [2, 3] (2,)"],
      ["\u2192 a (leaf) (input 1)", "[1, 1] (2,) \u00D7 [2, 3] (2,) (dz/dy = x) = [2, 3] (2,)"],
    ]);
    assert.equal(at(tl, 8).rows.length, 2, "one edge at a time");
  });

  test("fan-in: a + b = total at the node that received both", () => {
    const tl = timelineOf(FAN_IN);
    const rule = at(tl, 10);
    assert.equal(rule.title, "chain rule at a (leaf)");
    assert.deepEqual(rule.rows[0], ["fan-in", "[2, 3] (2,) + [2, 3] (2,) = [4, 6] (2,)"]);
    assert.deepEqual(rule.rows[1], ["from", "b (Mul) + b (Mul)"]);
    assert.deepEqual(rule.rows[2], ["upstream gradient", "[4, 6] (2,)"]);
  });

  test("a broadcast bias names the un-broadcast sum", () => {
    const tl = timelineOf({
      nodes: [node(1, "leaf", [2, 4], [], "z"), node(2, "leaf", [4], [0.1, 0.2, 0.3, 0.4], "bias"),
        node(3, "Add", [2, 4], [], "pre", ADD)],
      edges: [[1, 3, 0], [2, 3, 1]],
      steps: [["node", 1], ["node", 2], ["node", 3], ["backward_started", 3],
        grad(3, [1, 1, 1, 1, 1, 1], 2.83, false),
        edgeGrad(3, 1, 0, [1, 1, 1, 1, 1, 1], null),
        edgeGrad(3, 2, 1, [2, 2, 2, 2], [2, 4])],
    });
    const rows = at(tl, 7).rows;
    assert.equal(rows[1][1], "[1, 1, 1, 1, 1, 1, ...] (2, 4) \u00D7 1 (dz/dx = 1) = [1, 1, 1, 1, 1, 1, ...] (2, 4)");
    assert.equal(rows[2][0], "\u2192 bias (leaf) (input 1)");
    assert.equal(rows[2][1], "[1, 1, 1, 1, 1, 1, ...] (2, 4) \u00D7 1 (dz/dy = 1) = [2, 2, 2, 2] (4,) "
      + "(summed over the broadcast: (2, 4) \u2192 (4,))");
  });

  test("a rule that is not one variable is shown as the formula", () => {
    const tanh = node(5, "Tanh", [2], [0.5, 0.1], null, "z = tanh(x);  dz/dx = 1 - tanh(x)^2 = 1 - z^2");
    assert.equal(localDerivative(tanh, 0, 1, []), "(dz/dx = 1 - tanh(x)^2 = 1 - z^2)");
    const exp = node(6, "Exp", [2], [1, 2.718], null, "z = exp(x);  dz/dx = exp(x) = z");
    assert.equal(localDerivative(exp, 0, 1, []), "[1, 2.718] (2,) (dz/dx = exp(x) = z)");
    assert.equal(localDerivative(node(7, "Custom", [], []), 0, 1, []), "(local derivative)");
  });

  test("the fold keeps edge_grad events of known nodes, and the step highlights its edge", () => {
    const fields = { edge_grad: ["node", "input", "position", "preview", "reduced_from", "preview_text"] };
    const folded = foldEvents([["edge_grad", [2, 1, 0, [2, NaN], [3], ["2", "nan"]]],
      ["edge_grad", [2, 9, 1, [1], null, ["1"]]]], { fields }, (id) => id === 1 || id === 2);
    assert.deepEqual(folded.steps, [["edge_grad", 2, 1, 0, [2, "NaN"], [3], ["2", "nan"]]]);
    const tl = timelineOf(FAN_IN);
    assert.deepEqual(tl.stateAt(8).lastEdge, [1, 2]);
    assert.equal(tl.stateAt(10).lastEdge, null);
    assert.equal(tl.describeStep(7), "b (Mul) sends to a (leaf)");
  });
});

// base = x * 1; base[1:] = v * 2 (an in-place write through a view: CopySlices), summed. The
// rule is the one derivative_rules() sends for CopySlices (its docstring's first paragraph).
const COPY_SLICES = "base[region] = src, in base's memory (an in-place op through a view);  "
  + "dz/dbase = 1 outside the region, 0 inside (PyTorch's CopySlices of an op such as "
  + "y[0].mul_(w): that op's derivative inside);  dz/dsrc = 1 inside the region: gz[region] "
  + "(PyTorch's: that op's derivative for its input w)";
const COPY = {
  nodes: [node(1, "leaf", [3], [1, 2, 3], "base"), node(2, "leaf", [2], [10, 20], "src"),
    node(3, "CopySlices", [3], [1, 10, 20], "base", COPY_SLICES), node(4, "Sum", [], [31], "loss", SUM)],
  edges: [[1, 3, 0], [2, 3, 1], [3, 4, 0]],
  steps: [["node", 1], ["node", 2], ["node", 3], ["node", 4], ["backward_started", 4],
    grad(4, [1], 1, false), edgeGrad(4, 3, 0, [1, 1, 1], null),
    grad(3, [1, 1, 1], 1.732, false), edgeGrad(3, 1, 0, [1, 0, 0], null), edgeGrad(3, 2, 1, [1, 1], null),
    grad(1, [1, 0, 0], 1, false), grad(2, [1, 1], 1.414, false), ["backward_finished", 4]],
};

describe("the chain rule panel tells only what the steps show", () => {
  test("only the root of the pass is where backward starts", () => {
    // a pass entering at Mul b (a torch graph whose loss was made unwatched): b is its root
    const tl = timelineOf({ ...FAN_IN, steps: [["node", 1], ["node", 2], ["backward_started", 2],
      grad(2, [1, 1], 1.414, false), edgeGrad(2, 1, 0, [2, 3], null), edgeGrad(2, 1, 1, [2, 3], null),
      grad(1, [4, 6], 7.2, true), ["backward_finished", 2]] });
    assert.deepEqual(at(tl, 4).rows, [["upstream gradient", "[1, 1] (2,) (where backward starts)"]]);
    // the same nodes, but the pass names Sum as its root and its edge into b is not recorded
    const cut = timelineOf({ ...FAN_IN, steps: FAN_IN.steps.filter((s, i) => i !== 5) });
    const atB = at(cut, 6);
    assert.equal(atB.title, "chain rule at b (Mul)");
    assert.deepEqual(atB.rows[0], ["upstream gradient", "[1, 1] (2,) (no edge into it was recorded)"]);
    for (let t = 5; t < cut.steps.length; t++) {
      const rule = at(cut, t);
      if (rule && rule.title !== "chain rule at loss (Sum)") {
        assert.ok(!rule.rows.some(([, text]) => text.includes("where backward starts")), `step ${t}`);
      }
    }
  });

  test("a pass with no edge_grad at all says that the engine does not report them", () => {
    const tl = timelineOf({ ...FAN_IN, steps: FAN_IN.steps.filter((s) => s[0] !== "edge_grad") });
    // steps: nodes 0-2, started 3, grad loss 4, grad b 5, grad a 6, finished 7
    assert.deepEqual(at(tl, 5).rows, [["upstream gradient", "[1] (where backward starts)"],
      ["per edge", NO_EDGES]]);
    assert.deepEqual(at(tl, 6).rows, [["upstream gradient", "[1, 1] (2,)"], ["per edge", NO_EDGES]]);
    assert.deepEqual(at(tl, 7).rows, [["upstream gradient", "[4, 6] (2,)"], ["per edge", NO_EDGES]]);
    // while such a pass is still arriving, its root claims nothing more than where it starts
    const arriving = timelineOf({ ...FAN_IN, steps: FAN_IN.steps.slice(0, 5) });
    assert.deepEqual(at(arriving, 5).rows, [["upstream gradient", "[1] (where backward starts)"]]);
  });

  test("CopySlices: one rule per input, each matching its numbers", () => {
    const tl = timelineOf(COPY);
    const rows = at(tl, 10).rows; // both edges of CopySlices sent
    assert.deepEqual(rows[1], ["\u2192 base (leaf) (input 0)", "[1, 1, 1] (3,) \u00D7 (dz/dbase = 1 "
      + "outside the region, 0 inside (PyTorch's CopySlices of an op such as y[0].mul_(w): that op's "
      + "derivative inside)) = [1, 0, 0] (3,)"]);
    assert.deepEqual(rows[2], ["\u2192 src (leaf) (input 1)", "[1, 1, 1] (3,) \u00D7 (dz/dsrc = 1 inside "
      + "the region: gz[region] (PyTorch's: that op's derivative for its input w)) = [1, 1] (2,)"]);
    const copy = COPY.nodes[2];
    assert.notEqual(localDerivative(copy, 0, 2, []), localDerivative(copy, 1, 2, []));
    // SetItem's rule is split at ";" too
    const setItem = node(9, "SetItem", [3], [], null, "z = x with z[key] = value;  dz/dx = 1 outside key, 0 inside;  dz/dvalue = gz[key]");
    assert.equal(localDerivative(setItem, 1, 2, []), "(dz/dvalue = gz[key])");
  });
});

describe("the chain rule panel in a view", () => {
  test("shows the arithmetic as text at each backward step, and highlights the edge", async () => {
    const { host } = dom();
    const s = sample();
    const hostile = structuredClone(FAN_IN);
    hostile.nodes[0].name = "<img src=x onerror=alert(1)>";
    const model = fakeModel({ header: s.header, snapshot: { seq: 1, ...hostile }, delta: {}, options: s.options });
    const cleanup = createView({ model, el: host, createRenderer: stubRenderer().factory });
    const view = cleanup.view;
    const panel = host.querySelector('[aria-label="chain rule"]');
    view.setPosition(3);
    assert.equal(panel.hidden, true);
    view.setPosition(8);
    await view.scheduler.idle();
    assert.equal(panel.hidden, false);
    assert.match(panel.textContent, /chain rule at b \(Mul\)/);
    assert.match(panel.textContent, /\[1, 1\] \(2,\) \u00D7 \[2, 3\] \(2,\) \(dz\/dx = y\) = \[2, 3\] \(2,\)/);
    const flowing = [...host.querySelectorAll("g.edge.dg-flow")].map((g) => g.querySelector("title").textContent);
    assert.deepEqual(flowing, ["n1->n2"]);
    view.setPosition(10);
    assert.match(panel.textContent, /fan-in\[2, 3\] \(2,\) \+ \[2, 3\] \(2,\) = \[4, 6\] \(2,\)/);
    assert.equal(panel.querySelector("img"), null, "names are text, never HTML");
    view.setPosition(11);
    assert.equal(panel.hidden, true, "hidden once backward finished");
    cleanup();
  });
});
