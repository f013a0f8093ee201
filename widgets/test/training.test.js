// The training panel (src/training.js NOTE [the training chart]): the passes Python sends, as
// the timeline keeps them, the chart's geometry, and the panel's DOM in a view (text only).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { passOf, passAt, linePath, passNear, describePass, MIN_PASSES, CHART_W, CHART_H } from "../src/training.js";
import { Timeline } from "../src/timeline.js";
import { mountView, sample } from "./helpers.js";

// Rows as dyngraph/jupyter/view.py pass_row writes them: [step, loss, its text, grad norm, its
// text, leaves, root]; the texts are dot.format_value's.
const row = (step, loss, norm, root, leaves = 4) =>
  [step, loss, loss === null ? null : String(loss), norm, norm === null ? null : String(norm), leaves, root];

describe("the passes Python sends", () => {
  test("a row becomes a pass; anything else is left out", () => {
    assert.deepEqual(passOf(row(3, 0.25, 1.5, 40)), {
      step: 3, loss: 0.25, lossText: "0.25", norm: 1.5, normText: "1.5", leaves: 4, root: 40,
    });
    assert.deepEqual(passOf([2, null, null, 1.5, "1.5", 1, 9]).loss, null);
    assert.equal(passOf(null), null);
    assert.equal(passOf(["1", 0.2]), null);
    assert.equal(passOf({ step: 1 }), null);
  });

  test("the timeline keeps each pass once, in order, from deltas and snapshots", () => {
    const t = new Timeline();
    t.offer({ seq: 1, steps: [], passes: [row(1, 2.0, 3.0, 10)] });
    t.offer({ seq: 2, steps: [], passes: [row(2, 1.5, 2.0, 20), row(3, 1.2, 1.0, 30)] });
    assert.deepEqual(t.passes.map((p) => p.step), [1, 2, 3]);
    t.loadSnapshot({ seq: 2, steps: [], passes: [row(1, 2.0, 3.0, 10), row(2, 1.5, 2.0, 20), row(3, 1.2, 1.0, 30)] });
    assert.deepEqual(t.passes.map((p) => p.lossText), ["2", "1.5", "1.2"]);
    t.offer({ seq: 3, steps: [], passes: [row(3, 1.2, 1.0, 30), "junk", row(4, 1.1, 0.9, 40)] });
    assert.deepEqual(t.passes.map((p) => p.step), [1, 2, 3, 4]);
    t.loadSnapshot({ seq: 5, steps: [] }); // a state saved before passes were sent
    assert.deepEqual(t.passes, []);
  });
});

describe("the chart", () => {
  test("a line through every pass, the least value at the bottom, the greatest at the top", () => {
    assert.equal(linePath([4, 2, 0]), `M0,4 L${CHART_W / 2},${CHART_H / 2} L${CHART_W},${CHART_H - 4}`);
  });

  test("an unknown or non-finite value breaks the line; none at all draws nothing", () => {
    assert.equal(linePath([1, null, 1, NaN, 3]).match(/M/g)?.length, 3);
    assert.equal(linePath([1, Infinity, 2]).split(" ").length, 2);
    assert.equal(linePath([null, NaN]), "");
    assert.equal(linePath([5, 5]), `M0,${CHART_H / 2} L${CHART_W},${CHART_H / 2}`); // flat: in the middle
  });

  test("the pass nearest the pointer", () => {
    assert.equal(passNear(0, 10), 0);
    assert.equal(passNear(1, 10), 9);
    assert.equal(passNear(0.5, 3), 1);
    assert.equal(passNear(-3, 3), 0);
    assert.equal(passNear(NaN, 3), 0);
  });

  test("a readout names the step, its loss and its grad norm, as Python wrote them", () => {
    assert.equal(describePass(passOf(row(7, 0.2345, 1.234, 5))), "step 7 \u00B7 loss 0.2345 \u00B7 grad norm 1.234 (4 leaves)");
    assert.equal(describePass(passOf([1, null, null, 2, "2", 1, 5])), "step 1 \u00B7 loss \u2014 \u00B7 grad norm 2 (1 leaf)");
  });

  test("the pass at a position is the one of the newest backward_started, by its root", () => {
    const steps = [["node", 1], ["backward_started", 1], ["backward_finished", 1],
      ["node", 2], ["backward_started", 2], ["backward_finished", 2],
      ["backward_started", 2], ["backward_finished", 2]]; // a retained graph, run backward twice
    const passes = [row(1, 3, 1, 1), row(2, 2, 1, 2), row(3, 2, 1, 2)].map(passOf);
    assert.equal(passAt(steps, passes, 1), null); // before any backward
    assert.equal(passAt(steps, passes, 2), 0);
    assert.equal(passAt(steps, passes, 4), 0); // the forward of the next step: still the last pass
    assert.equal(passAt(steps, passes, 5), 1);
    assert.equal(passAt(steps, passes, 8), 2); // the second pass from root 2
    assert.equal(passAt(steps, passes.slice(1), 2), null); // a pass Python did not send
  });
});

/** The sample view with `passes` added to its snapshot (its one finished pass has root 9). */
function mountWithPasses(passes) {
  const m = mountView({ snapshot: { ...sample().snapshot, passes } });
  const panel = /** @type {HTMLElement} */ (m.root.querySelector("section.dg-training"));
  return { ...m, panel };
}

describe("the panel in a view", () => {
  test(`one backward pass shows no chart; from ${MIN_PASSES} on it shows`, () => {
    const { panel, model, s, cleanup } = mountWithPasses([row(1, 7.3, 2.5, 9)]);
    assert.equal(panel.getAttribute("aria-label"), "training");
    assert.equal(panel.hidden, true);
    model.set("delta", { seq: s.snapshot.seq + 1, steps: [], passes: [row(2, 5.5, 1.5, 99)] });
    assert.equal(panel.hidden, false); // it grows live: the next delta brings the second pass
    assert.match(panel.querySelector(".dg-panel-title").textContent, /training · 2 steps/);
    cleanup();
  });

  test("the latest values and the readout are Python's texts, put in as text", () => {
    const hostile = "<img src=x onerror=alert(1)>";
    const { panel, cleanup } = mountWithPasses([row(1, 7.3, 2.5, 9), [2, 5.5, hostile, 1.5, "1.5", 4, 99]]);
    const latest = Array.from(panel.querySelectorAll(".dg-train-latest")).map((e) => e.textContent);
    assert.deepEqual(latest, [hostile, "1.5"]);
    assert.equal(panel.querySelector("img"), null);
    for (const el of panel.querySelectorAll(".dg-train-latest, .dg-train-readout")) {
      assert.ok(Array.from(el.childNodes).every((c) => c.nodeType === 3), "text nodes only");
    }
    const charts = panel.querySelectorAll("svg.dg-train-chart");
    assert.equal(charts.length, 2);
    assert.match(charts[0].getAttribute("aria-label"), /^loss over 2 steps: 7.3 at step 1, /);
    assert.ok(charts[1].querySelector("path.dg-train-line").getAttribute("d").startsWith("M0,"));
    cleanup();
  });

  test("hover names a step, a click keeps it, a second click lets it go", () => {
    const passes = [row(1, 3, 2, 500), row(2, 2, 1.5, 501), row(3, 1, 1, 502), row(4, 0.5, 0.7, 503)];
    const { panel, window, cleanup } = mountWithPasses(passes);
    const readout = /** @type {HTMLElement} */ (panel.querySelector(".dg-train-readout"));
    const chart = /** @type {SVGSVGElement} */ (panel.querySelector("svg.dg-train-chart"));
    chart.getBoundingClientRect = () => /** @type {DOMRect} */ ({ left: 100, width: 300, top: 0, height: 36 });
    const at = (type, x) => chart.dispatchEvent(new window.MouseEvent(type, { clientX: x, bubbles: true }));
    assert.equal(readout.textContent, "step 4 \u00B7 loss 0.5 \u00B7 grad norm 0.7 (4 leaves) \u2014 the latest");
    at("pointermove", 200); // a third of the way: step 2
    assert.equal(readout.textContent, "step 2 \u00B7 loss 2 \u00B7 grad norm 1.5 (4 leaves)");
    const mark = panel.querySelector("line.dg-train-mark");
    assert.equal(mark.getAttribute("x1"), String(CHART_W / 3));
    at("click", 100);
    at("pointerleave", 0);
    assert.match(readout.textContent, /^step 1 /);
    assert.ok(readout.classList.contains("dg-pinned"));
    at("click", 100);
    at("pointerleave", 0);
    assert.match(readout.textContent, /^step 4 .*the latest$/);
    cleanup();
  });

  test("the step the graph shows is marked as playback moves", () => {
    // the sample's one finished pass (root 9) is pass 2 here; its failed second backward is none
    const { panel, view, root, cleanup } = mountWithPasses([row(1, 9, 3, 4), row(2, 7.3, 2.5, 9), row(3, 5, 2, 77)]);
    const readout = /** @type {HTMLElement} */ (panel.querySelector(".dg-train-readout"));
    const now = panel.querySelector("line.dg-train-now");
    assert.equal(now.getAttribute("visibility"), "hidden"); // at the end: inside the failed pass
    root.dispatchEvent(new root.ownerDocument.defaultView.KeyboardEvent("keydown", { key: "Home", bubbles: true }));
    for (let i = 0; i < 12; i++) {
      root.dispatchEvent(new root.ownerDocument.defaultView.KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
    }
    assert.equal(view.playback.t, 12); // inside the first backward
    assert.equal(readout.textContent, "step 2 \u00B7 loss 7.3 \u00B7 grad norm 2.5 (4 leaves) \u2014 the graph shows this step");
    assert.equal(now.getAttribute("x1"), String(CHART_W / 2));
    assert.equal(now.hasAttribute("visibility"), false);
    cleanup();
  });

  test("the panel's listeners go with the view", () => {
    const { panel, window, cleanup } = mountWithPasses([row(1, 3, 2, 500), row(2, 2, 1.5, 501)]);
    const chart = /** @type {SVGSVGElement} */ (panel.querySelector("svg.dg-train-chart"));
    const readout = /** @type {HTMLElement} */ (panel.querySelector(".dg-train-readout"));
    const before = readout.textContent;
    cleanup();
    chart.getBoundingClientRect = () => /** @type {DOMRect} */ ({ left: 0, width: 300, top: 0, height: 36 });
    chart.dispatchEvent(new window.MouseEvent("pointermove", { clientX: 0, bubbles: true }));
    assert.equal(readout.textContent, before);
  });
});
