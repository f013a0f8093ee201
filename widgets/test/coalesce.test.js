import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { createScheduler, useTweens } from "../src/coalesce.js";
import { flush } from "./fixtures.js";

/** A render function whose runs end when the test says so; tracks overlap. */
function controllable() {
  const started = [];
  const finishers = [];
  let active = 0;
  let maxActive = 0;
  const run = (job) => {
    started.push(job);
    active++;
    maxActive = Math.max(maxActive, active);
    return new Promise((resolve, reject) => {
      finishers.push({
        ok: () => { active--; resolve(); },
        fail: (e) => { active--; reject(e); },
      });
    });
  };
  return { run, started, finishers, get maxActive() { return maxActive; } };
}

describe("render coalescing", () => {
  test("an idle scheduler starts a request at once", () => {
    const r = controllable();
    const s = createScheduler(r.run);
    s.request("a");
    assert.deepEqual(r.started, ["a"]);
    assert.equal(s.running, true);
  });

  test("while one render runs, only the newest request is kept and runs next", async () => {
    const r = controllable();
    const s = createScheduler(r.run);
    s.request("a");
    s.request("b");
    s.request("c");
    s.request("d");
    assert.deepEqual(r.started, ["a"], "nothing starts while a runs");
    r.finishers[0].ok();
    await flush();
    assert.deepEqual(r.started, ["a", "d"], "b and c were replaced by d");
    assert.equal(s.stats.replaced, 2);
    r.finishers[1].ok();
    await s.idle();
    assert.deepEqual(r.started, ["a", "d"]);
    assert.equal(r.maxActive, 1, "never two renders at once");
  });

  test("never two at once under a burst of requests", async () => {
    const r = controllable();
    const s = createScheduler(r.run);
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 5; i++) s.request(`${round}.${i}`);
      r.finishers[r.finishers.length - 1].ok();
      await flush();
    }
    r.finishers[r.finishers.length - 1].ok();
    await s.idle();
    assert.equal(r.maxActive, 1);
    assert.equal(r.started.at(-1), "19.4", "the last request is always rendered");
  });

  test("a failed render is reported and the next one still runs", async () => {
    const r = controllable();
    const errors = [];
    const s = createScheduler(r.run, { onError: (e) => errors.push(e) });
    s.request("a");
    s.request("b");
    r.finishers[0].fail(new Error("layout failed"));
    await flush();
    assert.equal(errors.length, 1);
    assert.deepEqual(r.started, ["a", "b"]);
    r.finishers[1].ok();
    await s.idle();
  });

  test("a synchronous run (or throw) is fine", async () => {
    const seen = [];
    const s = createScheduler((job) => {
      seen.push(job);
      if (job === "boom") throw new Error("boom");
    });
    s.request("boom");
    s.request("x");
    await s.idle();
    assert.deepEqual(seen, ["boom", "x"]);
    assert.equal(s.stats.failed, 1);
  });

  test("dispose drops the pending request", async () => {
    const r = controllable();
    const s = createScheduler(r.run);
    s.request("a");
    s.request("b");
    s.dispose();
    r.finishers[0].ok();
    await flush();
    assert.deepEqual(r.started, ["a"]);
    s.request("c");
    assert.deepEqual(r.started, ["a"], "nothing after dispose");
  });
});

describe("tweens", () => {
  test("on up to tween_max_nodes, off above", () => {
    assert.equal(useTweens(60, 60), true);
    assert.equal(useTweens(61, 60), false);
    assert.equal(useTweens(0, 0), true);
    assert.equal(useTweens(1, 0), false);
  });

  test("default threshold 60; off when the user prefers reduced motion", () => {
    assert.equal(useTweens(60, undefined), true);
    assert.equal(useTweens(61, null), false);
    assert.equal(useTweens(3, 60, true), false);
  });
});
