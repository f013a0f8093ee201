// What a view receives: the `snapshot` and `delta` traits, read (PROTOCOL.md) and merged into
// its timeline in order; a gap asks Python for a resync. What cannot be read is kept aside, to
// be named under the graph, and what is drawn stays.

import { GAP, APPLIED } from "../timeline.js";
import { decodeTrait, UnreadableState } from "../events.js";

/** A resync request not answered within this many ms may be sent again. */
const RESYNC_RETRY_MS = 2000;

export class Feed {
  /**
   * @param {{
   *   model: import("../view.js").Model, timeline: import("../timeline.js").Timeline,
   *   follows: () => boolean, arrived: (follow: boolean) => void, redraw: () => void,
   * }} parts  follows: the position is at the end, or on its way there (live); arrived: new data
   *   was merged (follow: it was followed before it came); redraw: show the view again (what
   *   could not be read is named)
   */
  constructor({ model, timeline, follows, arrived, redraw }) {
    this.model = model;
    this.timeline = timeline;
    this.follows = follows;
    this.arrived = arrived;
    this.redraw = redraw;
    /** @type {Record<string, {raw: unknown, value: any}>} each trait's value, decoded once */
    this.parsed = {};
    /** @type {Record<string, string>} trait name -> why its last value could not be read */
    this.unreadable = {};
    /** @type {number|null} when a resync was asked for and not yet answered */
    this.resyncPendingSince = null;
  }

  /** The data there is when the view is drawn: the snapshot, then the delta if it is the next. */
  load() {
    this.timeline.loadSnapshot(this.trait("snapshot"));
    this.applyDelta(false);
  }

  /**
   * A trait's value. `snapshot` and `delta` arrive as MessagePack bytes (see PROTOCOL.md):
   * each value is decoded once, with the texts of its numbers put back by the field names of
   * `header`. Plain objects (tests) are used as they are.
   * @param {string} name
   */
  trait(name) {
    const value = this.model.get(name);
    if (name !== "snapshot" && name !== "delta") return value;
    const cached = this.parsed[name];
    if (cached && cached.raw === value) return cached.value;
    let result = null;
    try {
      result = decodeTrait(value, (this.model.get("header") || {}).fields);
      delete this.unreadable[name];
    } catch (error) {
      if (!(error instanceof UnreadableState)) throw error;
      this.unreadable[name] = error.message; // shown under the graph (Panels.notes)
    }
    this.parsed[name] = { raw: value, value: result };
    return result;
  }

  requestResync() {
    const now = Date.now();
    if (this.resyncPendingSince !== null && now - this.resyncPendingSince < RESYNC_RETRY_MS) return;
    this.resyncPendingSince = now;
    this.model.send({ type: "resync" });
  }

  /** Apply the snapshot trait (on change, and as Python's answer to a resync). */
  onSnapshot() {
    const timeline = this.timeline;
    const snapshot = this.trait("snapshot");
    if (snapshot === null) { // unreadable: what is drawn stays, and the notice says why
      this.redraw();
      return;
    }
    const seq = snapshot && typeof snapshot.seq === "number" ? snapshot.seq : null;
    if (this.resyncPendingSince === null && seq !== null && timeline.seq !== null) {
      // The same state we already have (Python may refresh the snapshot along with each delta).
      if (seq === timeline.seq) return;
      // One step ahead, and that step is the delta trait: apply it rather than rebuild it all.
      const delta = this.trait("delta");
      if (seq === timeline.seq + 1 && delta && delta.seq === seq) {
        this.applyDelta(true);
        return;
      }
    }
    const follow = this.follows();
    timeline.loadSnapshot(snapshot);
    this.resyncPendingSince = null;
    this.applyDelta(false);
    this.arrived(follow);
  }

  /** Apply the delta trait if it is the next one. @param {boolean} redraw */
  applyDelta(redraw) {
    const timeline = this.timeline;
    const delta = this.trait("delta");
    if (delta === null) { // unreadable: nothing applied, the notice says why
      if (redraw) this.redraw();
      return;
    }
    const follow = this.follows();
    let result = timeline.offer(delta);
    if (result === GAP) {
      // The snapshot trait may already hold what we missed: use it before asking Python.
      const snapshot = this.trait("snapshot");
      if (snapshot && typeof snapshot.seq === "number" && (timeline.seq === null || snapshot.seq > timeline.seq)) {
        timeline.loadSnapshot(snapshot);
        result = timeline.offer(delta);
        if (result !== GAP) result = APPLIED;
      }
      if (result === GAP) this.requestResync();
    }
    if (redraw && result === APPLIED) this.arrived(follow);
  }
}
