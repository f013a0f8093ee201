import { test, describe, afterEach } from "node:test";
import assert from "node:assert/strict";
import { createView } from "../src/view.js";
import { BEAT_MS, REPLAY_MS } from "../src/view/playback.js";
import { readFileSync } from "node:fs";
import { encode } from "@msgpack/msgpack";
import { dom, fakeModel, sample, stubRenderer, flush, fakeClock, mountView } from "./helpers.js";

/** How to read events (the header's `fields`, as Python sends it; see fixtures/vocabulary.json). */
const FIELDS = JSON.parse(readFileSync(new URL("./fixtures/vocabulary.json", import.meta.url), "utf8")).fold.header.fields;

const HOSTILE = "<img src=x onerror=alert(1)>";

function setup(overrides = {}) {
  const { window, document, host, model, renderer, cleanup, view, root, s } = mountView(overrides);
  const key = (k, target = root) => {
    const e = new window.KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true });
    target.dispatchEvent(e);
    return e;
  };
  const lastDot = async () => {
    await view.scheduler.idle();
    return renderer.calls.at(-1).dot;
  };
  return { window, document, host, model, renderer, cleanup, view, root, key, lastDot, s };
}

/** @type {ReturnType<typeof fakeClock> | null} the test's hand-moved clock, when it uses one */
let clock = null;
afterEach(() => {
  clock?.restore();
  clock = null;
});

describe("the view", () => {
  test("renders the whole recording at the end, built from elements, focusable root", async () => {
    const { root, view, lastDot, model } = setup();
    assert.equal(root.getAttribute("tabindex"), "0");
    // NOTE [keys]: the attribute would make Lumino ignore Ctrl+S, Shift+Enter, Esc in the widget
    assert.equal(root.getAttribute("data-lm-suppress-shortcuts"), null);
    assert.equal(view.playback.t, 22);
    const dot = await lastDot();
    assert.match(dot, /^digraph dyngraph \{/);
    assert.equal((dot.match(/^\s*n\d+ \[/gm) || []).length, 9);
    assert.match(root.querySelector(".dg-position").textContent, /^22 \/ 22/);
    assert.equal(root.querySelector(".dg-scrub").max, "22");
    assert.ok(model.listenerCount() >= 4);
  });

  test("the newest grad step's edges get the flow class; the failed backward shows its error", async () => {
    const { root, view, renderer } = setup();
    view.setPosition(12); // ... ["grad", 9], ["grad", 7]
    await view.scheduler.idle();
    const flowing = [...root.querySelectorAll("g.edge.dg-flow")].map((g) => g.querySelector("title").textContent);
    assert.deepEqual(flowing, ["n7->n9"]);
    assert.equal(root.querySelector(".dg-error").hidden, true);
    view.setPosition(22);
    await view.scheduler.idle();
    assert.equal(root.querySelector(".dg-error").hidden, false);
    assert.match(root.querySelector(".dg-error-text").textContent, /^RuntimeError: Trying to backward/);
    assert.equal(renderer.calls.length, 1, "playback restyles the drawing: one layout");
  });

  test("each position restyles the drawing from the timeline's state: edges once both ends are made, outputs", async () => {
    const { root, view } = setup();
    await view.scheduler.idle();
    const id = (name) => Number(name.slice(1));
    for (const t of [0, 3, 5, 9, 12, 22]) {
      view.setPosition(t);
      const { seen, freed } = view.timeline.stateAt(t);
      for (const g of root.querySelectorAll("g.edge")) {
        const [a, b] = g.querySelector("title").textContent.split("->").map(id);
        assert.equal(g.classList.contains("dg-future"), !(seen.has(a) && seen.has(b)), `t=${t}: n${a}->n${b}`);
      }
      for (const g of root.querySelectorAll("g.node")) {
        const n = id(g.querySelector("title").textContent);
        // an output: made, read by no node made yet, not freed
        const read = [...view.timeline.edges.values()].some((e) => e.src === n && seen.has(e.dst));
        assert.equal(g.classList.contains("dg-output"), seen.has(n) && !read && !freed.has(n), `t=${t}: n${n}`);
      }
    }
  });

  test("tweens follow options.tween_max_nodes", async () => {
    const a = setup();
    await a.view.scheduler.idle();
    assert.equal(a.renderer.calls.at(-1).tween, true);
    const b = setup({ options: { ...sample().options, tween_max_nodes: 3 } });
    await b.view.scheduler.idle();
    assert.equal(b.renderer.calls.at(-1).tween, false);
  });
});

describe("keyboard", () => {
  test("Home, ArrowRight, ArrowLeft, End move the position", async () => {
    const { key, view, lastDot, root } = setup();
    assert.equal(key("Home").defaultPrevented, true);
    assert.equal(view.playback.t, 0);
    key("ArrowRight");
    assert.equal(view.playback.t, 1);
    await lastDot();
    const future = (name) => [...root.querySelectorAll("g.node")]
      .find((n) => n.querySelector("title").textContent === name).classList.contains("dg-future");
    assert.equal(future("n1"), false);
    assert.equal(future("n2"), true, "a node not yet made is hidden, not left out of the layout");
    assert.equal(root.querySelector(".dg-position").textContent, "1 / 22 \u00B7 new x (leaf)");
    key("ArrowRight");
    key("ArrowLeft");
    assert.equal(view.playback.t, 1);
    key("End");
    assert.equal(view.playback.t, 22);
  });

  test("Space toggles play; playing advances one beat per BEAT_MS / speed", async () => {
    clock = fakeClock();
    const { key, view, root } = setup();
    await flush(); // the drawing is on the page: playback does not wait for it
    key("Home");
    key(" ");
    assert.equal(view.playback.playing, true);
    assert.equal(root.querySelector(".dg-play").getAttribute("aria-pressed"), "true");
    clock.tick(BEAT_MS.line); // the first line's node (x)
    assert.equal(view.playback.t, 1);
    clock.tick(BEAT_MS.line);
    clock.tick(BEAT_MS.line);
    clock.tick(BEAT_MS.line); // line 5 made two nodes: one beat
    assert.equal(view.playback.t, 5);
    key(" ");
    assert.equal(view.playback.playing, false);
    for (let i = 0; i < 5; i++) clock.tick(BEAT_MS.line);
    assert.equal(view.playback.t, 5);
    assert.equal(root.querySelector(".dg-skip").hidden, true, "the learner's play is no replay");
  });

  test("play from the end starts over, and stops at the end", async () => {
    clock = fakeClock();
    const { key, view } = setup();
    await flush();
    key(" ");
    assert.equal(view.playback.t, 0);
    for (let i = 0; i < 40; i++) clock.tick(BEAT_MS.line);
    assert.equal(view.playback.t, 22);
    assert.equal(view.playback.playing, false);
  });

  test("keys meant for a focused control are left to it", () => {
    const { key, view, root } = setup();
    const play = root.querySelector(".dg-play");
    assert.equal(key(" ", play).defaultPrevented, false, "Space on a button clicks the button");
    assert.equal(view.playback.playing, false);
    const scrub = root.querySelector(".dg-scrub");
    key("ArrowLeft", scrub);
    assert.equal(view.playback.t, 22, "the slider handles its own arrows");
    key("ArrowLeft", play);
    assert.equal(view.playback.t, 21, "arrows on a button still step");
  });

  test("toolbar buttons: step, jump to end of forward and start of backward", () => {
    const { view, root } = setup();
    root.querySelector(".dg-end-forward").click();
    assert.equal(view.playback.t, 9);
    root.querySelector(".dg-start-backward").click();
    assert.equal(view.playback.t, 10);
    root.querySelector(".dg-start-backward").click();
    assert.equal(view.playback.t, 21, "the second backward");
    root.querySelector(".dg-back").click();
    assert.equal(view.playback.t, 20);
    const scrub = root.querySelector(".dg-scrub");
    scrub.value = "3";
    scrub.dispatchEvent(new root.ownerDocument.defaultView.Event("input", { bubbles: true }));
    assert.equal(view.playback.t, 3);
  });
});

describe("selection, inspector, code panel", () => {
  test("clicking a node shows its info as text (a hostile name creates no element)", async () => {
    const { root, view, window } = setup();
    await view.scheduler.idle();
    const g = [...root.querySelectorAll("g.node")].find((n) => n.querySelector("title").textContent === "n2");
    g.querySelector("ellipse").dispatchEvent(new window.MouseEvent("click", { bubbles: true }));
    assert.equal(view.state.selected, 2);
    await view.scheduler.idle();
    assert.ok(g.classList.contains("dg-selected"));
    const values = [...root.querySelectorAll(".dg-inspector dd")].map((dd) => dd.textContent);
    assert.ok(values.includes(HOSTILE));
    assert.equal(root.querySelector("img"), null);
    assert.equal(root.querySelectorAll(".dg-inspector dd *").length, 0);
    // the code panel shows the node's line; the source line with the name is text too
    const current = root.querySelector(".dg-line.dg-current");
    assert.equal(current.getAttribute("data-line"), "2");
    assert.ok(current.querySelector("code").textContent.includes(HOSTILE));
  });

  test("the code panel follows the newest node; a line number selects that line's node", () => {
    const { root, view } = setup();
    view.setPosition(5); // x, w, b, Mul, Add (line 5)
    assert.equal(root.querySelector(".dg-line.dg-current").getAttribute("data-line"), "5");
    root.querySelector('button.dg-lineno[data-line="1"]').click();
    assert.equal(view.state.selected, 1);
    assert.equal(root.querySelector(".dg-line.dg-current").getAttribute("data-line"), "1");
    assert.equal(root.querySelector(".dg-inspector dd").textContent, "leaf");
  });

  test("before its grad step, the inspector does not show the gradient yet", () => {
    const { root, view } = setup();
    view.select(1);
    view.setPosition(9);
    const rows = [...root.querySelectorAll(".dg-inspector dt")].map((dt) => [dt.textContent, dt.nextElementSibling.textContent]);
    assert.deepEqual(rows.find(([k]) => k === "gradient"), ["gradient", "not yet (later in the timeline)"]);
    view.setPosition(22);
    const after = [...root.querySelectorAll(".dg-inspector dt")].map((dt) => [dt.textContent, dt.nextElementSibling.textContent]);
    assert.deepEqual(after.find(([k]) => k === "gradient"), ["gradient", "[1.822, -0.2992]"]);
    assert.deepEqual(after.find(([k]) => k === "grad norm"), ["grad norm", "1.85"]);
  });

  test("the inspector's freed and saved rows follow the position", () => {
    const { root, view } = setup();
    const row = (label) => [...root.querySelectorAll(".dg-inspector dt")].find((dt) => dt.textContent === label).nextElementSibling.textContent;
    view.select(4); // Mul in layer1: saved 16 B, freed at step 19
    view.setPosition(18);
    assert.equal(row("saved for backward"), "16 B");
    assert.equal(row("freed"), "no");
    assert.equal(row("source"), "cell [5], line 5: y = x * w + b");
    view.setPosition(19);
    assert.equal(row("freed"), "yes");
  });
});

describe("the source panel", () => {
  const title = (root) => root.querySelector(".dg-code-panel .dg-panel-title").textContent;
  const current = (root) => {
    const row = root.querySelector(".dg-code-panel .dg-line.dg-current");
    return row && [row.getAttribute("data-line"), row.querySelector("code").textContent];
  };

  test("during a backward pass it shows the line that called backward(), a later cell's too", () => {
    const { root, view } = setup();
    view.setPosition(9); // the forward pass: the newest node's line
    assert.deepEqual(current(root), ["9", "loss = s * 2.0"]);
    assert.equal(title(root), "source \u00B7 cell [5]");
    view.setPosition(10); // just after backward_started
    assert.deepEqual(current(root), ["10", "loss.backward()"]);
    assert.equal(title(root), "source \u00B7 cell [5] \u00B7 backward");
    view.setPosition(19); // the graph freed: still the same pass
    assert.deepEqual(current(root), ["10", "loss.backward()"]);
    view.setPosition(20); // backward_finished: back to the newest node
    assert.deepEqual(current(root), ["9", "loss = s * 2.0"]);
    assert.equal(title(root), "source \u00B7 cell [5]");
    view.setPosition(21); // the second backward, called in the next cell
    assert.deepEqual(current(root), ["2", "loss.backward()  # a second time: the buffers are gone"]);
    assert.equal(title(root), "source \u00B7 cell [6] \u00B7 backward");
    view.setPosition(22); // it failed: the pass is over
    assert.equal(title(root), "source \u00B7 cell [5]");
  });

  test("a node the learner selects is shown during backward too", () => {
    const { root, view } = setup();
    view.setPosition(12);
    view.select(4);
    assert.deepEqual(current(root), ["5", "    y = x * w + b"]);
    assert.equal(title(root), "source \u00B7 cell [5]");
    view.select(null);
    assert.deepEqual(current(root), ["10", "loss.backward()"]);
  });

  test("a backward_started without its line (an older state) leaves the newest node's line", () => {
    const s = sample();
    s.snapshot.steps = s.snapshot.steps.map((step) => step[0] === "backward_started" ? step.slice(0, 2) : step);
    const { root, view } = setup({ snapshot: s.snapshot });
    view.setPosition(10);
    assert.deepEqual(current(root), ["9", "loss = s * 2.0"]);
    assert.equal(title(root), "source \u00B7 cell [5]");
  });

  test("a file's text grows with its lines: the panel shows the newest text (issue 40)", () => {
    // a model in models.py: its first node is made on line 26, the next on line 14; Python
    // sends the file again, with both lines kept, when line 14 first makes a node
    const s = sample();
    const file = "models.py";
    const text = (kept) => Array.from({ length: 28 }, (_, i) => kept.includes(i + 1) ? `code of line ${i + 1}` : "").join("\n") + "\n";
    const node = (id, line) => ({ ...s.snapshot.nodes[6], id, file, line, cell: null, scope: [] });
    const first = { seq: 1, nodes: [node(1, 26)], edges: [], steps: [["node", 1]],
      sources: { [file]: text([24, 25, 26, 27, 28]) }, kept_lines: { [file]: [[24, 28]] }, dropped: { nodes: 0, steps: 0 } };
    const { root, model } = setup({ snapshot: first });
    assert.deepEqual(current(root), ["26", "code of line 26"]);
    assert.equal(title(root), "source \u00B7 models.py");
    model.set("delta", { seq: 2, nodes: [node(2, 14)], edges: [], steps: [["node", 2]],
      sources: { [file]: text([12, 13, 14, 15, 16, 24, 25, 26, 27, 28]) }, kept_lines: { [file]: [[12, 16], [24, 28]] } });
    assert.deepEqual(current(root), ["14", "code of line 14"]);
    const rows = [...root.querySelectorAll(".dg-code-panel li")].map((row) => row.getAttribute("data-line") ?? "\u2026");
    assert.deepEqual(rows, ["\u2026", "12", "13", "14", "15", "16", "\u2026", "24", "25", "26", "27", "28"]);
    for (const row of root.querySelectorAll(".dg-code-panel li[data-line]")) {
      assert.equal(row.querySelector("code").textContent, `code of line ${row.getAttribute("data-line")}`);
    }
  });
});

describe("live deltas", () => {
  function emptySetup() {
    const s = sample();
    const snap = s.snapshot;
    const first = { ...snap, seq: 1, nodes: snap.nodes.slice(0, 2), edges: [], steps: snap.steps.slice(0, 2) };
    const ctx = setup({ snapshot: {}, delta: first });
    return { ...ctx, snap };
  }
  const more = (snap, seq, ids) => ({
    seq,
    nodes: snap.nodes.filter((n) => ids.includes(n.id)),
    edges: snap.edges.filter(([, dst]) => ids.includes(dst)),
    steps: ids.map((id) => ["node", id]),
  });

  test("an empty snapshot and a first delta; at the end the view follows new deltas", () => {
    const { model, view, snap } = emptySetup();
    assert.equal(view.playback.t, 2);
    model.set("delta", more(snap, 2, [3, 4]));
    assert.equal(view.playback.t, 4, "live: follows the end");
    view.setPosition(1);
    model.set("delta", more(snap, 3, [5]));
    assert.equal(view.timeline.length, 5);
    assert.equal(view.playback.t, 1, "scrubbed back: stays put");
  });

  test("a gap asks Python for a resync once; the new snapshot rebuilds the view", () => {
    const { model, view, snap } = emptySetup();
    model.set("delta", more(snap, 4, [5]));
    assert.deepEqual(model.sent, [{ type: "resync" }]);
    assert.equal(view.timeline.length, 2, "the gap delta is not applied");
    model.set("delta", more(snap, 5, [6]));
    assert.equal(model.sent.length, 1, "not asked again while waiting");
    model.set("snapshot", { ...snap, seq: 5, steps: snap.steps.slice(0, 6), nodes: snap.nodes.slice(0, 6) });
    assert.equal(view.timeline.seq, 5);
    assert.equal(view.timeline.length, 6);
    assert.equal(view.playback.t, 6);
    model.set("delta", more(snap, 6, [7]));
    assert.equal(view.timeline.length, 7);
  });

  test("a snapshot already ahead is used on a gap without asking", () => {
    const { model, view, snap } = emptySetup();
    // Python refreshed the snapshot (seq 3) but this view missed delta 2 and 3
    const full = { ...snap, seq: 3, steps: snap.steps.slice(0, 4), nodes: snap.nodes.slice(0, 4) };
    model.set("snapshot", full);
    model.set("delta", more(snap, 4, [5]));
    assert.deepEqual(model.sent, []);
    assert.equal(view.timeline.length, 5);
  });
});

describe("trait encodings", () => {
  test("snapshot and delta as MessagePack bytes (a DataView, for a Bytes trait) of events", () => {
    const bytes = (value) => {
      const data = encode(value);
      return new DataView(data.buffer, data.byteOffset, data.byteLength);
    };
    const where = ["/tmp/ipykernel_1/5.py", 1, "<module>", 5];
    const node = (id, op, inputs, name) =>
      ["node_created", [id, op, inputs, [2], "float32", "cpu", true, op === "leaf", name, [], where, [1, NaN], 0, false, null]];
    const a = setup({
      snapshot: bytes({ seq: 1, events: [node(1, "leaf", [], "x"), node(2, "leaf", [], HOSTILE)], sources: {}, dropped: { nodes: 0, steps: 0 } }),
      delta: new DataView(new ArrayBuffer(0)),
      header: { ...sample().header, fields: FIELDS, rules: { Mul: "z = x * y" } },
    });
    assert.equal(a.view.timeline.length, 2);
    assert.equal(a.view.timeline.nodes.get(2).name, HOSTILE);
    assert.deepEqual(a.view.timeline.nodes.get(1).preview, [1, "NaN"]);
    a.model.set("delta", bytes({ seq: 2, events: [node(3, "Mul", [1, 2], null)] }));
    assert.equal(a.view.timeline.length, 3);
    assert.equal(a.view.timeline.nodes.get(3).rule, "z = x * y");
    assert.equal(a.view.timeline.edges.size, 2);
  });
});

describe("cleanup", () => {
  test("removes model listeners, DOM, timers, and the renderer", async () => {
    clock = fakeClock();
    const { model, cleanup, host, key, view, renderer, root } = setup();
    key(" ");
    assert.equal(view.playback.playing, true);
    await flush();
    cleanup();
    assert.equal(model.listenerCount(), 0);
    assert.equal(host.querySelector(".dg-root"), null);
    assert.equal(renderer.calls.destroyed, true);
    const t = view.playback.t;
    for (let i = 0; i < 10; i++) clock.tick(BEAT_MS.line);
    assert.equal(view.playback.t, t, "no timer left");
    key("ArrowRight", root);
    assert.equal(view.playback.t, t, "no key listener left");
    cleanup(); // twice is harmless
  });

  test("two views of one model are independent and both update", () => {
    const { window, document } = dom();
    void window;
    const s = sample();
    const model = fakeModel({ header: s.header, snapshot: {}, delta: {}, options: { ...s.options, replay: false } });
    const a = document.createElement("div");
    const b = document.createElement("div");
    document.body.append(a, b);
    const ca = createView({ model, el: a, createRenderer: stubRenderer().factory });
    const cb = createView({ model, el: b, createRenderer: stubRenderer().factory });
    model.set("delta", { ...s.snapshot, seq: 1 });
    assert.equal(ca.view.playback.t, 22);
    assert.equal(cb.view.playback.t, 22);
    ca();
    assert.ok(model.listenerCount() > 0, "the other view still listens");
    cb();
    assert.equal(model.listenerCount(), 0);
  });
});

describe("snapshot refreshed along with each delta", () => {
  test("a snapshot one ahead that equals the delta is applied as the delta, not rebuilt", () => {
    const s = sample();
    const snap = s.snapshot;
    const first = { ...snap, seq: 1, nodes: snap.nodes.slice(0, 2), edges: [], steps: snap.steps.slice(0, 2) };
    const { model, view } = (() => {
      const { host } = dom();
      const m = fakeModel({ header: s.header, snapshot: first, delta: first, options: { ...s.options, replay: false } });
      const c = createView({ model: m, el: host, createRenderer: stubRenderer().factory });
      return { model: m, view: c.view };
    })();
    const next = { seq: 2, nodes: snap.nodes.slice(2, 3), edges: [], steps: [["node", 3]] };
    const full2 = { ...snap, seq: 2, nodes: snap.nodes.slice(0, 3), edges: [], steps: snap.steps.slice(0, 3) };
    const tl = view.timeline;
    const original = tl.loadSnapshot.bind(tl);
    let reloads = 0;
    tl.loadSnapshot = (x) => { reloads++; original(x); };
    // Python set both traits in one message; the snapshot's change event comes first
    model.put("delta", next);
    model.put("snapshot", full2);
    model.fire("snapshot");
    model.fire("delta");
    assert.equal(reloads, 0);
    assert.equal(tl.seq, 2);
    assert.equal(view.playback.t, 3);
  });
});

describe("replay: a view that missed the live steps plays them at reading pace (NOTE [replay])", () => {
  /** A view with replay on (the default for a learner), drawn after every step arrived. */
  function replaySetup(overrides = {}) {
    const s = sample();
    return setup({ options: { ...s.options }, ...overrides });
  }
  /** The position after each tick of `ms`, until the end or `limit` ticks. */
  function positions(view, ms, limit = 400) {
    const seen = [view.playback.t];
    for (let i = 0; i < limit && view.playback.t < view.timeline.length; i++) {
      clock.tick(ms);
      if (view.playback.t !== seen.at(-1)) seen.push(view.playback.t);
    }
    return seen;
  }

  test("drawn after the cell ended: starts at 0, grows line by line, says so, ends at the end", async () => {
    clock = fakeClock();
    const { view, root } = replaySetup();
    assert.equal(view.playback.t, 0);
    assert.equal(view.playback.playing, true);
    assert.match(root.querySelector(".dg-position").textContent, /^replaying/);
    assert.equal(root.querySelector(".dg-skip").hidden, false);
    clock.tick(100);
    assert.equal(view.playback.t, 0, "nothing moves before the first drawing is on the page");
    await flush();
    const seen = positions(view, 10);
    // the forward by source lines (x; w; b; the two nodes of line 5; ...), then the backward
    assert.deepEqual(seen.slice(0, 8), [0, 1, 2, 3, 5, 6, 7, 9]);
    assert.ok(seen.includes(11) && seen.includes(12), "each gradient is a beat of its own");
    assert.equal(view.playback.t, 22);
    assert.equal(view.playback.playing, false);
    assert.equal(root.querySelector(".dg-skip").hidden, true);
    assert.doesNotMatch(root.querySelector(".dg-position").textContent, /replaying/);
  });

  test("a long catch-up ends within REPLAY_MS (beats shown faster), a short one keeps its pace", async () => {
    clock = fakeClock();
    const { view } = replaySetup({ options: { ...sample().options, speed: 0.25 } });
    await flush();
    let elapsed = 0;
    while (view.playback.t < 22 && elapsed < 60000) {
      clock.tick(10);
      elapsed += 10;
    }
    // at 0.25x the 18 beats would take about 20 s; the catch-up is held to REPLAY_MS / speed
    assert.ok(elapsed <= REPLAY_MS / 0.25 + 500, `took ${elapsed} ms`);
    assert.ok(elapsed >= 2000, `not a jump: ${elapsed} ms`);
  });

  test("skip shows the end; a learner's step stops the replay and new steps leave them there", async () => {
    clock = fakeClock();
    const { view, root, key, model, s } = replaySetup();
    await flush();
    root.querySelector(".dg-skip").dispatchEvent(new root.ownerDocument.defaultView.MouseEvent("click", { bubbles: true }));
    assert.equal(view.playback.t, 22);
    assert.equal(view.playback.playing, false);
    key("Home");
    key("ArrowRight");
    assert.equal(view.playback.t, 1);
    model.set("delta", { seq: s.snapshot.seq + 1, steps: [["version", 1, 1]] });
    clock.tick(5000);
    assert.equal(view.playback.t, 1, "the learner has the controls");
  });

  test("live: steps arriving at the end are played, a backward one gradient at a time", async () => {
    clock = fakeClock();
    const s = sample();
    const snap = s.snapshot;
    const forward = { ...snap, seq: 1, steps: snap.steps.slice(0, 9) };
    const { view, model } = replaySetup({ snapshot: forward, delta: {} });
    await flush();
    positions(view, 10);
    assert.equal(view.playback.t, 9);
    model.set("delta", { seq: 2, steps: snap.steps.slice(9, 20) });
    await flush();
    assert.equal(view.playback.t, 9, "not a jump to the end");
    assert.deepEqual(positions(view, 10), [9, 11, 12, 13, 14, 15, 16, 17, 18, 20]);
  });

  test("with reduced motion, or replay: false, the view opens at the end", () => {
    const a = setup({ options: { ...sample().options, replay: false } });
    assert.equal(a.view.playback.t, 22);
    const { host } = dom();
    const s = sample();
    const model = fakeModel({ header: s.header, snapshot: s.snapshot, delta: {}, options: s.options });
    const c = createView({ model, el: host, createRenderer: stubRenderer().factory, reducedMotion: true });
    assert.equal(c.view.playback.t, 22);
    assert.equal(c.view.playback.playing, false);
    c();
  });
});

describe("an empty view", () => {
  test("waits while its block runs; once the block ended with nothing drawn, says how to see a graph built before it", () => {
    const s = sample();
    const { view, root, model } = setup({ snapshot: {}, options: { ...s.options, watching: true } });
    const empty = /** @type {HTMLElement} */ (root.querySelector(".dg-empty"));
    assert.equal(empty.textContent, "Waiting for the first node\u2026");
    model.set("options", { ...s.options, watching: false });
    assert.equal(empty.hidden, false);
    assert.match(empty.textContent, /^Nothing was built while this view watched\..*with dg\.watch\(\): loss\.backward\(\)/);
    assert.equal(view.timeline.length, 0);
  });
});
