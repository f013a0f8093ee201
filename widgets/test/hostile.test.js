// Hostile or broken widget state (issue 39, item 4): a state saved in a notebook, or sent by a
// kernel, is untrusted input. The player never throws out of its handlers and never blanks:
// what it cannot read is named in its notice under the graph, and what it can read is drawn.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { encode } from "@msgpack/msgpack";
import { readFileSync } from "node:fs";
import { decodeTrait, foldEvents } from "../src/events.js";
import { mountView } from "./helpers.js";

const FIELDS = JSON.parse(readFileSync(new URL("./fixtures/vocabulary.json", import.meta.url), "utf8")).fold.header.fields;

/** A snapshot of protocol v5: batches packed on their own, each [rows, texts]. */
function packed(rows, seq = 1) {
  return encode({ seq, events: [encode([rows, ""])], sources: {}, kept_lines: {}, dropped: { nodes: 0, steps: 0 } });
}

const LEAF = ["node_created", [1, "leaf", [], [2], "float32", "cpu", true, true, "x", [], null, [], 0, false, null]];

describe("hostile rows", () => {
  for (const kind of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
    test(`a row of kind ${kind} is left out, the rest is folded`, () => {
      const state = decodeTrait(packed([[kind, [1, 2, 3]], LEAF]), FIELDS);
      const folded = foldEvents(state.events, { fields: FIELDS, rules: {} }, () => false);
      assert.deepEqual(folded.nodes.map((n) => n.id), [1]);
    });
  }

  test("an op named like an Object property gets no rule from the prototype", () => {
    const row = ["node_created", [2, "constructor", [1], [2], "float32", "cpu", true, false, null, [], null, [], 0, false, null]];
    const folded = foldEvents([LEAF, row], { fields: FIELDS, rules: {} }, () => false);
    assert.equal(folded.nodes[1].rule, "");
  });
});

describe("a state the player cannot read", () => {
  const cases = {
    "truncated MessagePack": packed([LEAF]).slice(0, 20),
    "garbage bytes": new Uint8Array([0xc1, 0xff, 0x00, 0x13]),
    "a string seq": encode({ seq: "7", events: [] }),
    "events that are not a list": encode({ seq: 1, events: "none" }),
  };
  for (const [what, bytes] of Object.entries(cases)) {
    test(`${what}: a notice says so, nothing throws, the player is still there`, () => {
      const { host, root } = mountView({ snapshot: bytes });
      assert.ok(root, "the player is drawn");
      const notice = host.querySelector(".dg-data-error");
      assert.ok(notice, "a notice under the graph");
      assert.match(notice.textContent, /could not be read/);
    });
  }

  test("a broken delta after a good snapshot keeps the graph and says so", () => {
    const { host, model, view } = mountView();
    const nodes = view.timeline.nodes.size;
    assert.doesNotThrow(() => model.set("delta", new Uint8Array([0x92, 0xc1])));
    assert.equal(view.timeline.nodes.size, nodes);
    assert.match(host.querySelector(".dg-data-error").textContent, /could not be read/);
  });
});
