// The elements of one view: the toolbar, the graph's pane, the panels beside it and the bars
// under it, made once, empty; the other modules of view/ fill them. Every text is set as text.

import { make } from "../text.js";
import { SPEEDS } from "./playback.js";

/** The zoom modifier as the learner's keyboard names it: Cmd on a Mac, else Ctrl. @param {Document} doc */
export function zoomModifier(doc) {
  const nav = doc.defaultView && doc.defaultView.navigator;
  return nav && /Mac|iPhone|iPad/.test(nav.platform || nav.userAgent || "") ? "\u2318" : "Ctrl";
}

/**
 * The toolbar's controls and its element.
 * @param {Document} doc
 */
function buildToolbar(doc) {
  // A button shows an icon and a word; a narrow widget shows the icon only (graphview.css), so
  // the toolbar keeps to two rows. Its accessible name is the label, at any width.
  const button = (/** @type {string} */ icon, /** @type {string} */ word, /** @type {string} */ label, /** @type {string} */ name) => {
    const b = make(doc, "button", { className: `dg-btn dg-${name}`, attrs: { type: "button", "aria-label": label, title: label } });
    if (icon) b.appendChild(make(doc, "span", { className: "dg-icon", text: icon }));
    if (word) b.appendChild(make(doc, "span", { className: icon ? "dg-word" : "", text: word }));
    return b;
  };
  const toolbar = make(doc, "div", { className: "dg-toolbar", attrs: { role: "toolbar", "aria-label": "playback" } });
  const backBtn = button("\u2190", "step", "step back (Left arrow)", "back");
  const playBtn = button("\u25B6\uFE0E", "play", "play / pause (Space)", "play");
  playBtn.setAttribute("aria-pressed", "false");
  // shown only while the view replays what it missed (playback.js NOTE [replay])
  const skipBtn = button("\u00BB", "skip", "skip the replay: show the end (End)", "skip");
  skipBtn.hidden = true;
  const fwdBtn = button("\u2192", "step", "step forward (Right arrow)", "forward");
  const endFwdBtn = button("\u21E5", "end of forward", "jump to the end of the forward pass", "end-forward");
  const startBwdBtn = button("\u21E4", "start of backward", "jump to the start of the backward pass", "start-backward");
  const speedLabel = make(doc, "label", { className: "dg-speed" });
  const speedText = make(doc, "span", { text: "speed" });
  const speedSelect = /** @type {HTMLSelectElement} */ (make(doc, "select", { attrs: { "aria-label": "playback speed" } }));
  speedLabel.append(speedText, speedSelect);
  for (const speed of SPEEDS) {
    speedSelect.appendChild(make(doc, "option", { text: `${speed}\u00D7`, attrs: { value: String(speed) } }));
  }
  const scrub = /** @type {HTMLInputElement} */ (make(doc, "input", {
    className: "dg-scrub",
    attrs: { type: "range", min: "0", max: "0", step: "1", value: "0", "aria-label": "position in the timeline" },
  }));
  const position = make(doc, "span", { className: "dg-position", attrs: { role: "status" } });
  const zoomGroup = make(doc, "span", { className: "dg-zoom", attrs: { role: "group", "aria-label": "zoom" } });
  const zoomOutBtn = button("", "\u2212", "zoom out (-)", "zoom-out");
  const zoomInBtn = button("", "+", "zoom in (+)", "zoom-in");
  const fitBtn = button("", "fit", "fit the whole graph in view (0)", "fit");
  zoomGroup.append(zoomOutBtn, zoomInBtn, fitBtn);
  const detailBtn = button("", "values & grads", "show every value and gradient in the node labels", "detail");
  detailBtn.setAttribute("aria-pressed", "false");
  // where a narrow toolbar breaks: buttons above; "values & grads", the slider and the position below
  const toolbarBreak = make(doc, "span", { className: "dg-break", attrs: { "aria-hidden": "true" } });
  toolbar.append(backBtn, playBtn, skipBtn, fwdBtn, endFwdBtn, startBwdBtn, speedLabel, zoomGroup, toolbarBreak, detailBtn, scrub, position);
  return { toolbar, backBtn, playBtn, skipBtn, fwdBtn, endFwdBtn, startBwdBtn, speedSelect, scrub, position, zoomOutBtn, zoomInBtn, fitBtn, detailBtn };
}

/**
 * The graph's pane with what shows over and under the drawing.
 * @param {Document} doc
 */
function buildGraphPane(doc) {
  const graphWrap = make(doc, "div", { className: "dg-graph-wrap" });
  const graphEl = make(doc, "div", { className: "dg-graph", attrs: { "aria-label": "computation graph" } });
  const errorBanner = make(doc, "div", { className: "dg-error", attrs: { role: "alert" } });
  errorBanner.hidden = true;
  const errorTitle = make(doc, "strong", { text: "backward failed" });
  const errorText = make(doc, "pre", { className: "dg-error-text" });
  errorBanner.append(errorTitle, errorText);
  const empty = make(doc, "div", { className: "dg-empty" });
  const legend = make(doc, "div", { className: "dg-legend", attrs: { "aria-label": "legend" } });
  // NOTE [wheel] A plain wheel scrolls the notebook; Ctrl/Cmd + wheel (and a pinch, which
  // Chromium sends as a ctrlKey wheel) zooms, as in embedded maps. The first plain wheel over
  // the graph says so, briefly (input.js).
  const wheelHint = make(doc, "div", { className: "dg-hint", text: `${zoomModifier(doc)} + wheel to zoom \u00B7 drag to pan`, attrs: { "aria-hidden": "true" } });
  wheelHint.hidden = true;
  // NOTE [busy] A layout the learner asked for can take a moment (Graphviz, in the layout
  // worker): a sign says so, over the drawing it will replace, and is read out (role=status).
  const busySign = make(doc, "div", { className: "dg-busy", attrs: { role: "status", "aria-live": "polite" } });
  busySign.hidden = true;
  // Shown while the widget holds the keys (CSS :focus-within), with the ring around it. It keeps
  // its place at the end of the legend's row even when hidden, so it covers no control (at the
  // top right of an untitled widget it hid "values & grads") and nothing moves when it shows.
  const keysBadge = make(doc, "div", { className: "dg-keys", text: "keys: \u2190 \u2192 step \u00B7 space play \u00B7 + \u2212 0 zoom", attrs: { "aria-hidden": "true" } });
  const graphFoot = make(doc, "div", { className: "dg-graph-foot" });
  graphFoot.append(legend, keysBadge);
  graphWrap.append(errorBanner, graphEl, empty, wheelHint, busySign, graphFoot);
  return { graphWrap, graphEl, errorBanner, errorText, empty, legend, wheelHint, busySign };
}

/**
 * The panels beside the graph (the training chart goes first, made by its own module).
 * @param {Document} doc
 */
function buildSide(doc) {
  const side = make(doc, "div", { className: "dg-side" });
  const codePanel = make(doc, "section", { className: "dg-panel dg-code-panel", attrs: { "aria-label": "source" } });
  const codeHead = make(doc, "div", { className: "dg-panel-title", text: "source" });
  const codeScroll = make(doc, "div", { className: "dg-code-scroll" });
  codePanel.append(codeHead, codeScroll);
  const inspector = make(doc, "section", { className: "dg-panel dg-inspector", attrs: { "aria-label": "inspector" } });
  const inspectorHead = make(doc, "div", { className: "dg-panel-title", text: "inspector" });
  const inspectorBody = make(doc, "div", { className: "dg-inspector-body" });
  inspector.append(inspectorHead, inspectorBody);
  // the chain rule at the active node of a backward step (src/chainrule.js), as text
  const chainPanel = make(doc, "section", { className: "dg-panel dg-chain", attrs: { "aria-label": "chain rule" } });
  const chainHead = make(doc, "div", { className: "dg-panel-title", text: "chain rule" });
  const chainBody = make(doc, "div", { className: "dg-inspector-body dg-chain-body" });
  chainPanel.append(chainHead, chainBody);
  chainPanel.hidden = true;
  return { side, codePanel, codeHead, codeScroll, inspector, inspectorBody, chainPanel, chainHead, chainBody };
}

/**
 * Every element of a view, put into `el`; `trainingEl`, the training panel's, goes first beside
 * the graph.
 * @param {Document} doc @param {HTMLElement} el @param {HTMLElement} trainingEl
 */
export function buildDom(doc, el, trainingEl) {
  const root = make(doc, "div", {
    className: "dg-root",
    attrs: {
      tabindex: "0",
      role: "group",
      "aria-label": "dyngraph: computation graph player",
      "aria-keyshortcuts": "ArrowLeft ArrowRight Space Home End + - 0",
      // NOTE [keys] No data-lm-suppress-shortcuts here: Lumino stops looking for a shortcut at
      // an element carrying it, which would take Ctrl+S, Shift+Enter and Esc from JupyterLab.
      // The keydown listener (input.js) stops only the keys the widget uses (JupyterLab
      // listens on the document, in the bubbling phase).
    },
  });
  const title = make(doc, "div", { className: "dg-title" });
  const toolbar = buildToolbar(doc);
  const pane = buildGraphPane(doc);
  const side = buildSide(doc);
  side.side.append(trainingEl, side.codePanel, side.chainPanel, side.inspector);
  const main = make(doc, "div", { className: "dg-main" });
  main.append(pane.graphWrap, side.side);
  const notes = make(doc, "div", { className: "dg-notes" });
  const groupsBar = make(doc, "div", { className: "dg-groups", attrs: { role: "group", "aria-label": "groups" } });
  groupsBar.hidden = true;
  root.append(title, toolbar.toolbar, main, groupsBar, notes);
  el.appendChild(root);
  return { root, title, notes, groupsBar, ...toolbar, ...pane, ...side };
}

/** @typedef {ReturnType<typeof buildDom>} Elements */
