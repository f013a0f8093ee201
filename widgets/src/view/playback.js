// Where a view is in its timeline, and how it moves: the learner's steps and play, and the
// view's own replay of what it missed (NOTE [replay]). No DOM: what a move shows is the view's
// (the `show` it is given).

import { clamp } from "../timeline.js";

export const SPEEDS = [0.25, 0.5, 1, 2, 4, 8];

// NOTE [replay] Live means seen, at a person's pace. Python sends what the code did as fast as
// it runs: a five-line cell is over in a tenth of a second, a backward pass in less, and on a
// first run the page's front end is often still loading when the cell ends. A view that jumped
// to the end would show the finished graph at once, and a learner would never see it grow.
// So the view *follows* the end of the timeline at reading pace: when it is first drawn, or
// when new steps arrive, it plays from where it stands to the end, one beat (timeline.js NOTE
// [beats]) at a time: a source line's nodes per BEAT_MS.line, a node's gradient (with the
// edges it sends along) per BEAT_MS.grad: the backward of lesson 03's neuron, 6 gradients and
// 14 steps, takes about 3 s. A long cell is not replayed for minutes:
// the catch-up is given REPLAY_MS from when it starts (or new steps extend it) and beats are
// shown faster, or several at once, to end by then. A cell slower than the pace simply shows
// each step as it comes. The learner can skip to the end (the "skip" button, End), pause, or
// step: any of these hands control to the learner, and the view follows the end again once
// the learner is back at it. With reduced motion asked for, or `replay: false` in the
// options, the view jumps to the end as before.
/** How long a beat is shown at speed 1 (ms), by kind (NOTE [replay]). */
export const BEAT_MS = { line: 350, grad: 400, other: 250 };
/** The longest a catch-up takes at speed 1 (ms). */
export const REPLAY_MS = 4000;
/** The shortest a beat is shown while catching up (ms). */
const MIN_BEAT_MS = 40;
/** How often a replay waiting for a layout looks again (ms). */
const WAIT_MS = 50;

export class Playback {
  /**
   * @param {{
   *   timeline: import("../timeline.js").Timeline,
   *   replays: () => boolean,
   *   laying: () => boolean,
   *   show: () => void,
   *   showControls: () => void,
   * }} parts  replays: does the view replay (NOTE [replay]), or jump to the end; laying: is a
   *   drawing being laid out (a replay waits for it); show: show the position (the whole view);
   *   showControls: show whether it plays (the toolbar only)
   */
  constructor({ timeline, replays, laying, show, showControls }) {
    this.timeline = timeline;
    this.replays = replays;
    this.laying = laying;
    this.show = show;
    this.showControls = showControls;
    /** the position: how many steps are shown */
    this.t = 0;
    this.playing = false;
    /** the view follows the end of the timeline (NOTE [replay]); false once the learner moved */
    this.following = true;
    /** when the current catch-up should end (performance.now() ms) */
    this.replayEnds = 0;
    /** when playback last found a layout in progress and waited (null: not waiting) */
    this.waitedAt = /** @type {number|null} */ (null);
    this.speed = 1;
    /** @type {ReturnType<typeof setTimeout>|null} */
    this.timer = null;
    this.disposed = false;
  }

  /** Keep the position within the timeline (it may have been replaced by a shorter one). */
  clamp() {
    this.t = clamp(this.t, 0, this.timeline.length);
  }

  /** Is the position at the end, or on its way there (live: new steps are followed)? */
  follows() {
    return this.following || this.t >= this.timeline.length;
  }

  /** Is the view replaying what it missed (NOTE [replay]), not yet at the end? */
  replaying() {
    return this.playing && this.following && this.t < this.timeline.length;
  }

  /** The position the view opens at: the start when it replays (NOTE [replay]), else the end. */
  start() {
    this.t = this.replays() ? 0 : this.timeline.length;
  }

  /** @param {number} t */
  setPosition(t) {
    this.t = clamp(t, 0, this.timeline.length);
    this.show();
  }

  /**
   * The learner moves to t: playing (and replaying) stops, and the view follows the end again
   * only from the end.
   * @param {number} t
   */
  moveTo(t) {
    this.pause();
    this.setPosition(t);
    this.following = this.t >= this.timeline.length;
  }

  /** @param {number} by */
  step(by) {
    this.moveTo(this.t + by);
  }

  play() {
    if (this.playing) return;
    if (this.t >= this.timeline.length) this.t = 0;
    this.playing = true;
    this.following = false; // the learner's play: each beat at its own pace
    this.show();
    this.scheduleTick();
  }

  pause() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.playing) {
      this.playing = false;
      this.showControls();
    }
  }

  togglePlay() {
    if (this.playing) {
      this.pause();
      this.following = this.t >= this.timeline.length;
    } else this.play();
  }

  /** Skip a replay: the end, followed from there. */
  skipToEnd() {
    this.moveTo(this.timeline.length);
  }

  /** @param {number} speed */
  setSpeed(speed) {
    if (speed > 0) this.speed = speed;
    if (this.playing) this.scheduleTick();
  }

  /**
   * Follow the end of the timeline: play on to it at reading pace (NOTE [replay]), within
   * REPLAY_MS of now; or jump there, when the view does not replay.
   */
  catchUp() {
    const timeline = this.timeline;
    this.following = true;
    if (this.t >= timeline.length) return;
    if (!this.replays()) {
      this.t = timeline.length;
      return;
    }
    // the time the rest would take at its own pace, at most REPLAY_MS (both at this speed)
    const ends = timeline.beatEnds();
    let ms = 0;
    for (let i = firstBeatAfter(ends, this.t), from = this.t; i < ends.length && ms < REPLAY_MS; from = ends[i++]) {
      ms += BEAT_MS[timeline.beatKind(from) || "other"];
    }
    const end = performance.now() + Math.min(ms, REPLAY_MS) / this.speed;
    this.replayEnds = this.playing ? Math.max(this.replayEnds, end) : end;
    if (!this.playing) {
      this.playing = true;
      this.scheduleTick(0);
    }
  }

  /**
   * The next tick of playback, after `ms` (by default the time the beat now shown stays: its
   * kind's BEAT_MS at this speed).
   * @param {number} [ms]
   */
  scheduleTick(ms) {
    if (this.timer !== null) clearTimeout(this.timer);
    const wait = ms ?? BEAT_MS[this.beatShownKind()] / this.speed;
    this.timer = setTimeout(() => this.tick(), wait);
  }

  /** The kind of the beat that ends at the position shown (what is on screen now). */
  beatShownKind() {
    const ends = this.timeline.beatEnds();
    const i = firstBeatAfter(ends, this.t - 1); // the beat that holds step t - 1
    return this.timeline.beatKind(i > 0 ? ends[i - 1] : 0) || "other";
  }

  /** One beat forward (NOTE [replay]); a replay waits while a drawing is being laid out. */
  tick() {
    const timeline = this.timeline;
    this.timer = null;
    if (!this.playing || this.disposed) return;
    if (this.t >= timeline.length) {
      this.pause();
      return;
    }
    const now = performance.now();
    if (this.laying()) {
      // the new nodes are not on the page yet: showing them now would show nothing. The time
      // spent waiting for the layout is not taken from the catch-up's reading time.
      if (this.waitedAt !== null) this.replayEnds += now - this.waitedAt;
      this.waitedAt = now;
      this.timer = setTimeout(() => this.tick(), WAIT_MS);
      return;
    }
    if (this.waitedAt !== null) this.replayEnds += now - this.waitedAt;
    this.waitedAt = null;
    const ends = timeline.beatEnds();
    const i = firstBeatAfter(ends, this.t);
    let next = ends[i];
    let ms = BEAT_MS[timeline.beatKind(this.t) || "other"] / this.speed;
    if (this.following) {
      // catching up: end by replayEnds, beats shown faster or several at once
      const left = Math.max(this.replayEnds - now, MIN_BEAT_MS);
      const beats = ends.length - i;
      ms = Math.min(ms, Math.max(MIN_BEAT_MS, left / beats));
      const per = Math.max(1, Math.round((beats * ms) / left));
      next = ends[Math.min(i + per - 1, ends.length - 1)];
    }
    this.setPosition(next);
    if (this.t >= timeline.length) this.pause();
    else this.scheduleTick(ms);
  }

  dispose() {
    this.disposed = true;
    this.pause();
  }
}

/**
 * The index of the first beat ending after position t (timeline.js NOTE [beats]).
 * @param {number[]} ends ascending
 * @param {number} t
 */
export function firstBeatAfter(ends, t) {
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid] > t) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
