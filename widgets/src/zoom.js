// Zoom and pan of the drawing: pure arithmetic on a view {scale, x, y} (screen px per graph
// unit, and the graph point at the pane's top-left corner), shown as the SVG's viewBox. No DOM.
//
// NOTE [fit] A drawing opens fitted to its pane: the whole graph in view, centred, never
// enlarged past FIT_MAX (a 3-node graph stays at lesson size). A large graph fits as an
// overview; the learner zooms in (wheel, + / -, keys) and drags to pan. Once the learner has
// zoomed or panned, new layouts keep that place and zoom; "fit" hands the view back.

/** Each + / - (and a wheel notch) zooms by this factor. */
export const ZOOM_STEP = 1.25;
export const MIN_SCALE = 0.02;
export const MAX_SCALE = 6;
/** A fitted drawing is never drawn larger than this (graph units are Graphviz points). */
export const FIT_MAX = 1.35;

/**
 * @typedef {{scale: number, x: number, y: number}} Zoom
 * @typedef {{width: number, height: number}} Size
 */

/** @param {number} s */
function clampScale(s) {
  return Math.min(Math.max(s, MIN_SCALE), MAX_SCALE);
}

/**
 * The view showing all of a drawing of `size` (graph units) in a pane of `pane` (px), centred.
 * @param {Size} size @param {Size} pane @param {number} [maxScale]
 * @returns {Zoom}
 */
export function fitView(size, pane, maxScale = FIT_MAX) {
  const w = Math.max(size.width, 1);
  const h = Math.max(size.height, 1);
  const scale = clampScale(Math.min(pane.width / w, pane.height / h, maxScale));
  return { scale, x: w / 2 - pane.width / (2 * scale), y: h / 2 - pane.height / (2 * scale) };
}

/**
 * Zoom by `factor` keeping the graph point under the pane point (px, py) where it is.
 * @param {Zoom} zoom @param {number} factor @param {number} px @param {number} py
 * @returns {Zoom}
 */
export function zoomAt(zoom, factor, px, py) {
  const scale = clampScale(zoom.scale * factor);
  const gx = zoom.x + px / zoom.scale;
  const gy = zoom.y + py / zoom.scale;
  return { scale, x: gx - px / scale, y: gy - py / scale };
}

/**
 * The SVG viewBox of a view in a pane.
 * @param {Zoom} zoom @param {Size} pane
 */
export function viewBox(zoom, pane) {
  const r = (/** @type {number} */ v) => Math.round(v * 100) / 100;
  return `${r(zoom.x)} ${r(zoom.y)} ${r(pane.width / zoom.scale)} ${r(pane.height / zoom.scale)}`;
}

/**
 * The least pan (scale kept) that brings a rectangle of the graph (graph units) into the pane
 * with a margin (px); the same view when it is already in. A rectangle larger than the pane
 * gets its top-left corner shown.
 * @param {Zoom} zoom @param {Size} pane
 * @param {{x: number, y: number, width: number, height: number}} rect
 * @param {number} [margin]
 * @returns {Zoom}
 */
export function panToShow(zoom, pane, rect, margin = 24) {
  const m = margin / zoom.scale;
  const viewW = pane.width / zoom.scale;
  const viewH = pane.height / zoom.scale;
  const axis = (/** @type {number} */ start, /** @type {number} */ view, /** @type {number} */ lo, /** @type {number} */ size) => {
    if (size + 2 * m > view) return lo < start + m || lo > start + view - m ? lo - m : start;
    if (lo < start + m) return lo - m;
    if (lo + size > start + view - m) return lo + size + m - view;
    return start;
  };
  const x = axis(zoom.x, viewW, rect.x, rect.width);
  const y = axis(zoom.y, viewH, rect.y, rect.height);
  if (x === zoom.x && y === zoom.y) return zoom;
  return { ...zoom, x, y };
}
