// Render coalescing and the tween decision. Pure: no DOM, no d3.
//
// NOTE [why coalesce] A Graphviz layout plus d3-graphviz's transition takes from a few ms to
// seconds (500 nodes with tweens: ~3 s). Deltas arrive at ~10 per second and playback can step
// faster than that, so renders must never overlap and never queue up: while one runs, only the
// newest request is kept, and it runs when the current one ends.

/**
 * @template T
 * @typedef {{
 *   request: (job: T) => void,
 *   idle: () => Promise<void>,
 *   dispose: () => void,
 *   readonly running: boolean,
 *   readonly pending: boolean,
 *   readonly stats: {started: number, replaced: number, failed: number},
 * }} Scheduler
 */

/**
 * A scheduler running `run(job)` at most once at a time; a request made while one runs replaces
 * any earlier pending request. `run` may return a promise (the render ends when it settles) or
 * a plain value (it ends at once). A failing run is reported to `onError` and the next one
 * still runs.
 * @template T
 * @param {(job: T) => (Promise<unknown>|unknown)} run
 * @param {{onError?: (error: unknown) => void}} [hooks]
 * @returns {Scheduler<T>}
 */
export function createScheduler(run, hooks = {}) {
  let running = false;
  let disposed = false;
  let hasPending = false;
  /** @type {T|undefined} */
  let pending;
  /** @type {Array<() => void>} */
  let waiters = [];
  const stats = { started: 0, replaced: 0, failed: 0 };

  const settleWaiters = () => {
    if (running || hasPending) return;
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
  };

  const fail = (/** @type {unknown} */ error) => {
    stats.failed++;
    if (hooks.onError) hooks.onError(error);
  };

  /** @param {T} job */
  const start = (job) => {
    running = true;
    stats.started++;
    let result;
    try {
      result = run(job);
    } catch (error) {
      fail(error);
      result = undefined;
    }
    Promise.resolve(result)
      .catch(fail)
      .then(() => {
        running = false;
        if (hasPending && !disposed) {
          const next = /** @type {T} */ (pending);
          hasPending = false;
          pending = undefined;
          start(next);
        } else {
          settleWaiters();
        }
      });
  };

  return {
    request(job) {
      if (disposed) return;
      if (running) {
        if (hasPending) stats.replaced++;
        pending = job;
        hasPending = true;
        return;
      }
      start(job);
    },
    /** Resolves once nothing runs and nothing is pending. */
    idle() {
      if (!running && !hasPending) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    dispose() {
      disposed = true;
      hasPending = false;
      pending = undefined;
      settleWaiters();
    },
    get running() {
      return running;
    },
    get pending() {
      return hasPending;
    },
    get stats() {
      return stats;
    },
  };
}

/**
 * Tweens (animated shape and path morphing) only for small graphs: their preparation cost grows
 * fast with the node count, and above the threshold a plain redraw is what stays responsive.
 * @param {number} visibleNodes  nodes drawn
 * @param {number|undefined|null} tweenMaxNodes  options.tween_max_nodes
 * @param {boolean} [reducedMotion]  the user asked the system for less motion
 */
export function useTweens(visibleNodes, tweenMaxNodes, reducedMotion = false) {
  if (reducedMotion) return false;
  const limit = tweenMaxNodes == null ? 60 : Number(tweenMaxNodes);
  return Number.isFinite(limit) ? visibleNodes <= limit : true;
}

/** A promise that resolves in a later task (the page may paint and take input in between). */
export function nextTask() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
