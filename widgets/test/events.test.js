// The browser folds the event spine as Python's Recording does: fixtures/vocabulary.json's
// `fold` case (written by tests/vocabulary_fixture.py) holds a snapshot as GraphView packs it
// and the nodes, edges and steps Recording makes of the same events.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { encode } from "@msgpack/msgpack";
import { foldEvents, decodeTrait, jsonValue } from "../src/events.js";
import { Timeline } from "../src/timeline.js";

const FIXTURE = JSON.parse(readFileSync(new URL("./fixtures/vocabulary.json", import.meta.url), "utf8"));
const FOLD = FIXTURE.fold;

describe("folding events", () => {
  test("the snapshot folds into exactly what Recording makes of the same events", () => {
    const snapshot = decodeTrait(FOLD.snapshot, FOLD.header.fields);
    assert.equal(snapshot.seq, 1);
    const folded = foldEvents(snapshot.events, FOLD.header, () => false);
    assert.deepEqual(folded.nodes, FOLD.nodes);
    assert.deepEqual(folded.edges, FOLD.edges);
    assert.deepEqual(folded.steps, FOLD.steps);
  });

  test("a timeline given the same bytes holds the same graph", () => {
    const timeline = new Timeline();
    timeline.header = FOLD.header;
    timeline.loadSnapshot(decodeTrait(FOLD.snapshot, FOLD.header.fields));
    assert.deepEqual([...timeline.nodes.keys()], FOLD.nodes.map((n) => n.id));
    assert.equal(timeline.length, FOLD.steps.length);
    assert.equal(timeline.nodes.get(1).name, "<b>x</b>");
  });

  test("nodes received in an earlier delta are known to later ones", () => {
    const timeline = new Timeline();
    timeline.header = FOLD.header;
    const events = decodeTrait(FOLD.snapshot, FOLD.header.fields).events;
    const cut = 3;
    assert.equal(timeline.offer({ seq: 1, events: events.slice(0, cut) }), "applied");
    assert.equal(timeline.offer({ seq: 2, events: events.slice(cut) }), "applied");
    assert.equal(timeline.length, FOLD.steps.length);
    assert.deepEqual([...timeline.edges.values()].map((e) => [e.src, e.dst, e.pos]), FOLD.edges);
  });

  test("the texts Python made of the numbers travel with them into nodes and steps", () => {
    const folded = foldEvents(decodeTrait(FOLD.snapshot, FOLD.header.fields).events, FOLD.header, () => false);
    const log = folded.nodes.find((n) => n.op === "Log");
    assert.deepEqual([log.preview, log.previewText, log.savedText], [["-Infinity", 0], ["-inf", "0"], "8 B"]);
    const grad = folded.steps.find((s) => s[0] === "grad" && s[1] === 5);
    assert.deepEqual(grad.slice(5), [["1", "1"], "1.414"]);
  });

  test("a state saved before protocol v5 (no texts) shows the numbers as JavaScript writes them", () => {
    const fields = {
      node_created: FOLD.header.fields.node_created.filter((f) => !f.endsWith("_text")),
      grad_computed: FOLD.header.fields.grad_computed.filter((f) => !f.endsWith("_text")),
      edge_grad: FOLD.header.fields.edge_grad.filter((f) => !f.endsWith("_text")),
    };
    const node = [1, "Exp", [], [2], "float32", "cpu", true, false, null, [], null, [0.125, NaN], 24, false, 0.0012];
    const folded = foldEvents([["node_created", node], ["grad_computed", [1, [0.5, 1e-7], 0.5, false]],
      ["edge_grad", [1, 1, 0, [0.25], null]]], { fields }, () => false);
    const n = folded.nodes[0];
    assert.deepEqual([n.previewText, n.savedText, n.elapsedText], [["0.125", "NaN"], "24 B", "0.0012 s"]);
    assert.deepEqual(folded.steps[1].slice(5), [["0.5", "1e-7"], "0.5"]);
    assert.deepEqual(folded.steps[2].slice(6), [["0.25"]]);
  });

  test("unknown kinds and malformed rows are skipped", () => {
    const folded = foldEvents([["something_new", [1]], "junk", [3], ["backward_started", [9, false, false]]],
      FOLD.header, () => false);
    // a backward_started without its line (a state saved before it had one): the line is null
    assert.deepEqual(folded, { nodes: [], edges: [], steps: [["backward_started", 9, null]] });
  });

  test("backward_started keeps the line that called backward(), as a node keeps its line", () => {
    const where = ["8.py", 3, "<module>", 8, null, 2]; // called in the loop of line 2
    const folded = foldEvents([["backward_started", [9, false, false, where]],
      ["backward_started", [9, false, false, null]], ["backward_started", [9, false, false, "junk"]]],
    FOLD.header, () => false);
    assert.deepEqual(folded.steps, [["backward_started", 9, { file: "8.py", line: 3, cell: 8, loop: 2 }],
      ["backward_started", 9, null], ["backward_started", 9, null]]);
  });
});

describe("decoding traits", () => {
  test("MessagePack bytes as a DataView, an ArrayBuffer or base64; empty bytes are {}", () => {
    const data = encode({ seq: 3, events: [] });
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    assert.deepEqual(decodeTrait(view), { seq: 3, events: [] });
    assert.deepEqual(decodeTrait(data.slice().buffer), { seq: 3, events: [] });
    assert.deepEqual(decodeTrait({ base64: Buffer.from(data).toString("base64") }), { seq: 3, events: [] });
    assert.deepEqual(decodeTrait(new DataView(new ArrayBuffer(0))), {});
    assert.deepEqual(decodeTrait({ seq: 1 }), { seq: 1 });
  });

  test("a batch's texts go back after the fields of their rows, in row order", () => {
    const fields = FOLD.header.fields;
    const node = [4, "Mul", [], [3], "float32", "cpu", true, false, null, [], null, [0.125, NaN, 2], 24, false, null];
    const empty = [5, "Sum", [4], [0], "float32", "cpu", true, false, null, [], null, [], 0, false, 0.0012];
    const rows = [["node_created", node], ["backward_started", [5, false, false, null]], ["node_created", empty],
      ["grad_computed", [4, [0.5], 0.5, false]], ["edge_grad", [5, 4, 0, [1, -0], null]]];
    const texts = ["0.125", "nan", "2", "24 B", "", "", "1.2 ms", "0.5", "0.5", "1", "-0"].join("\n");
    const batch = encode([rows, texts]);
    const { events } = decodeTrait(encode({ seq: 1, events: [batch] }), fields);
    const named = (/** @type {any[]} */ [kind, row]) =>
      Object.fromEntries(fields[kind].map((name, i) => [name, row[i]]));
    const [made, started, summed, grad, edge] = events.map(named);
    assert.deepEqual([made.preview_text, made.saved_text, made.elapsed_text], [["0.125", "nan", "2"], "24 B", null]);
    assert.deepEqual(started, { root: 5, retain_graph: false, create_graph: false, where: null });
    assert.deepEqual([summed.preview_text, summed.saved_text, summed.elapsed_text], [[], null, "1.2 ms"]);
    assert.deepEqual([grad.preview_text, grad.norm_text], [["0.5"], "0.5"]);
    assert.deepEqual(edge.preview_text, ["1", "-0"]);
    assert.equal(events[3][1].length, fields.grad_computed.length);
  });

  test("a batch saved before protocol v5 (rows, no texts) decodes as its rows", () => {
    const rows = [["backward_started", [5, false, false]], ["version_bumped", [3, 1]]];
    const { events } = decodeTrait(encode({ seq: 1, events: [encode(rows)] }), FOLD.header.fields);
    assert.deepEqual(events, rows);
  });

  test("non-finite numbers become the VALUE strings", () => {
    assert.deepEqual([NaN, Infinity, -Infinity, 1.5, true].map(jsonValue), ["NaN", "Infinity", "-Infinity", 1.5, true]);
  });
});
