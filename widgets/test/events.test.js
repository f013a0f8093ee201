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
    const snapshot = decodeTrait(FOLD.snapshot);
    assert.equal(snapshot.seq, 1);
    const folded = foldEvents(snapshot.events, FOLD.header, () => false);
    assert.deepEqual(folded.nodes, FOLD.nodes);
    assert.deepEqual(folded.edges, FOLD.edges);
    assert.deepEqual(folded.steps, FOLD.steps);
  });

  test("a timeline given the same bytes holds the same graph", () => {
    const timeline = new Timeline();
    timeline.header = FOLD.header;
    timeline.loadSnapshot(decodeTrait(FOLD.snapshot));
    assert.deepEqual([...timeline.nodes.keys()], FOLD.nodes.map((n) => n.id));
    assert.equal(timeline.length, FOLD.steps.length);
    assert.equal(timeline.nodes.get(1).name, "<b>x</b>");
  });

  test("nodes received in an earlier delta are known to later ones", () => {
    const timeline = new Timeline();
    timeline.header = FOLD.header;
    const events = decodeTrait(FOLD.snapshot).events;
    const cut = 3;
    assert.equal(timeline.offer({ seq: 1, events: events.slice(0, cut) }), "applied");
    assert.equal(timeline.offer({ seq: 2, events: events.slice(cut) }), "applied");
    assert.equal(timeline.length, FOLD.steps.length);
    assert.deepEqual([...timeline.edges.values()].map((e) => [e.src, e.dst, e.pos]), FOLD.edges);
  });

  test("unknown kinds and malformed rows are skipped", () => {
    const folded = foldEvents([["something_new", [1]], "junk", [3], ["backward_started", [9, false, false]]],
      FOLD.header, () => false);
    assert.deepEqual(folded, { nodes: [], edges: [], steps: [["backward_started", 9]] });
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

  test("non-finite numbers become the VALUE strings", () => {
    assert.deepEqual([NaN, Infinity, -Infinity, 1.5, true].map(jsonValue), ["NaN", "Infinity", "-Infinity", 1.5, true]);
  });
});
