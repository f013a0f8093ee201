// Test fixtures without a DOM (importing jsdom costs a second; the pure tests skip it).

import { readFileSync } from "node:fs";

export const SAMPLE = JSON.parse(readFileSync(new URL("../dev/sample_state.json", import.meta.url), "utf8"));

/** A deep copy of the sample state (dev/sample_state.json). */
export function sample() {
  return structuredClone(SAMPLE);
}

/** Let pending promise callbacks run. */
export function flush() {
  return new Promise((resolve) => setImmediate(resolve));
}
