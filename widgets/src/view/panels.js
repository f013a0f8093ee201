// What a view says around its drawing, at a position of the timeline: the toolbar's state,
// the error banner, the empty pane's words, the source panel, the inspector, the chain rule,
// the notes under the graph, the groups bar and the legend. Each panel is drawn from what it
// is given, as text only.

import { olderPassesNote, gradAt } from "../timeline.js";
import { chainRuleAt } from "../chainrule.js";
import { make, setText, clear, buildCodeLines, markCurrentLine, inspectorRows, moduleRows, renderRows, basename } from "../text.js";
import { svgStyle } from "../structure.js";

/** What an empty view says once its watch block ended: how to see a graph built before it. */
export const NOTHING_WATCHED = "Nothing was built while this view watched. A graph built "
  + "earlier shows here when its backward runs inside the watch (with dg.watch(): "
  + "loss.backward()); dg.draw(loss) draws it at once.";

/** The groups bar has an "expand" button for each closed box of the map up to this many boxes
 * (levels.js NOTE [map]); past it, the boxes open by a click (they say so). */
export const MAP_BUTTONS_UP_TO = 4;

/**
 * @typedef {import("../timeline.js").GraphState} GraphState
 * @typedef {import("../structure.js").Structure} Structure
 */

export class Panels {
  /**
   * @param {{
   *   doc: Document, els: import("./dom.js").Elements,
   *   timeline: import("../timeline.js").Timeline, state: import("./state.js").ViewState,
   *   header: () => any, options: () => any,
   * }} parts
   */
  constructor({ doc, els, timeline, state, header, options }) {
    this.doc = doc;
    this.els = els;
    this.timeline = timeline;
    this.state = state;
    this.header = header;
    this.options = options;
    /** @type {string|null} the file the source panel shows */
    this.codeFile = null;
    /** what the source panel was drawn from: its text and kept stretches (the newest of the
     * file received: a file's text grows as more of its lines make nodes), or why it has none */
    this.codeDrawn = /** @type {{source: string|undefined, kept: unknown, why: string}|null} */ (null);
    /** what the groups bar was drawn from */
    this.groupsShown = "";
  }

  /** Every panel of position g (the notes and groups bar are drawn on their own). @param {GraphState} g */
  update(g) {
    const opts = this.options();
    setText(this.els.title, opts.title || "");
    this.els.title.hidden = !opts.title;
    this.error(g);
    this.empty(g);
    this.code(g);
    this.inspector(g);
    this.chainRule(g);
  }

  /**
   * The toolbar at the position: slider, position, which buttons do something, play or pause.
   * @param {import("./playback.js").Playback} playback @param {boolean} detail  "values & grads" is on
   */
  controls(playback, detail) {
    const { detailBtn, scrub, skipBtn, root, position, backBtn, fwdBtn, endFwdBtn, startBwdBtn, playBtn, speedSelect } = this.els;
    const timeline = this.timeline;
    detailBtn.setAttribute("aria-pressed", String(detail));
    const n = timeline.length;
    const t = playback.t;
    scrub.max = String(n);
    scrub.value = String(t);
    scrub.setAttribute("aria-valuetext", `step ${t} of ${n}`);
    const replaying = playback.replaying();
    skipBtn.hidden = !replaying;
    root.classList.toggle("dg-replaying", replaying);
    const at = t > 0 ? `${t} / ${n} \u00B7 ${timeline.describeStep(t - 1)}` : `${t} / ${n}`;
    setText(position, replaying ? `replaying \u00B7 ${at}` : at);
    position.setAttribute("aria-live", playback.playing ? "off" : "polite"); // no chatter while playing
    setDisabled(backBtn, t <= 0);
    setDisabled(fwdBtn, t >= n);
    setDisabled(endFwdBtn, n === 0);
    setDisabled(startBwdBtn, timeline.startOfBackward(t) === null);
    setText(/** @type {Element} */ (playBtn.firstChild), playback.playing ? "\u275A\u275A" : "\u25B6\uFE0E");
    setText(/** @type {Element} */ (playBtn.lastChild), playback.playing ? "pause" : "play");
    playBtn.setAttribute("aria-pressed", String(playback.playing));
    if (speedSelect.value !== String(playback.speed)) speedSelect.value = String(playback.speed);
  }

  /** @param {GraphState} g */
  error(g) {
    this.els.errorBanner.hidden = g.error === null;
    setText(this.els.errorText, g.error || "");
  }

  /** @param {GraphState} g */
  empty(g) {
    // a watch block that ended with nothing drawn: say how to see a graph built before it
    const ended = this.options().watching === false;
    const text = this.timeline.length === 0
      ? ended ? NOTHING_WATCHED : "Waiting for the first node\u2026"
      : g.visible.length === 0 ? "Nothing drawn yet at this position: step forward or play." : "";
    setText(this.els.empty, text);
    this.els.empty.hidden = !text;
  }

  // NOTE [the source panel] The panel shows one line of the learner's code: the selected
  // node's; else, during a backward pass (from its backward_started step to its end), the line
  // that called backward(), which may be in a later cell than the forward pass (a watched
  // graph stays watched), and its title says "backward"; else the newest node's. It shows the
  // newest text received for that file: the text grows as more of the file's lines make nodes.
  /** @param {GraphState} g */
  code(g) {
    const { timeline, state, doc } = this;
    const { codeScroll, codeHead } = this.els;
    const selected = state.selected !== null ? timeline.nodes.get(state.selected) || null : null;
    const backward = selected === null && g.backward && g.backward.where ? g.backward.where : null;
    const node = selected ?? (g.newest === null ? null : timeline.nodes.get(g.newest) || null);
    const place = backward ?? node; // {file, line, cell}
    const file = place && place.file ? place.file : null;
    const source = file === null ? undefined : timeline.sources.get(file);
    const kept = file === null ? undefined : timeline.kept.get(file);
    const why = source !== undefined ? ""
      : file !== null ? (backward ? "The source of this backward() call was not recorded." : "The source of this node was not recorded.")
      : node !== null ? "No source line for this node (made before watching began, or inside a library)."
      : "No source yet.";
    const drawn = this.codeDrawn;
    if (!drawn || file !== this.codeFile || source !== drawn.source || kept !== drawn.kept || why !== drawn.why) {
      this.codeDrawn = { source, kept, why };
      this.codeFile = file;
      clear(codeScroll);
      if (source !== undefined) codeScroll.appendChild(buildCodeLines(doc, source, null, /** @type {any} */ (kept)));
      else codeScroll.appendChild(make(doc, "div", { className: "dg-muted", text: why }));
    }
    const placeName = place && place.cell != null ? `cell [${place.cell}]` : file ? basename(file) : "";
    setText(codeHead, ["source", placeName, backward ? "backward" : ""].filter(Boolean).join(" \u00B7 "));
    const list = codeScroll.querySelector("ol.dg-lines");
    if (!list) return;
    const row = markCurrentLine(/** @type {HTMLElement} */ (list), place && place.line != null ? place.line : null);
    if (row) keepVisible(codeScroll, row);
  }

  /** @param {GraphState} g */
  inspector(g) {
    const { timeline, state, doc } = this;
    const body = this.els.inspectorBody;
    const group = state.selectedGroup;
    if (group !== null) {
      const out = timeline.nodes.get(group.output);
      const { grad, later } = gradAt(timeline.steps, group.output, g.t);
      const members = group.members.map((m) => timeline.nodes.get(m)).filter((n) => n !== undefined);
      renderRows(doc, body, moduleRows(group.title, /** @type {any[]} */ (members), out, { grad, gradLater: later, freed: g.freed }));
      return;
    }
    const id = state.selected;
    const node = id === null ? null : timeline.nodes.get(id);
    if (!node || id === null) {
      clear(body);
      body.appendChild(make(doc, "div", {
        className: "dg-muted",
        text: "Click a node to see its op, shape, values, gradient, saved bytes, source line and local derivative rule; "
          + "a box, to open it and see its module's output and gradient.",
      }));
      return;
    }
    const { grad, later } = gradAt(timeline.steps, id, g.t);
    const at = { grad, gradLater: later, freed: g.freed.has(id) };
    renderRows(doc, body, inspectorRows(node, at, timeline.sources));
    if (!g.visible.includes(id)) {
      body.appendChild(make(doc, "div", { className: "dg-muted", text: "Not drawn at this position of the timeline." }));
    }
  }

  /** @param {GraphState} g */
  chainRule(g) {
    const timeline = this.timeline;
    const rule = chainRuleAt(timeline.steps, timeline.nodes, timeline.edges.values(), g.t);
    this.els.chainPanel.hidden = rule === null;
    if (rule === null) return;
    setText(this.els.chainHead, rule.title);
    renderRows(this.doc, this.els.chainBody, rule.rows);
  }

  /**
   * The notes under the graph: what is not recorded or not drawn, and what could not be drawn
   * or read.
   * @param {string|null} renderError  why Graphviz could not draw the graph
   * @param {Record<string, string>} unreadable  trait name -> why its last value could not be read
   */
  notes(renderError, unreadable) {
    const { doc, timeline } = this;
    const notes = this.els.notes;
    clear(notes);
    const note = (/** @type {string} */ className, /** @type {string} */ text) => notes.appendChild(make(doc, "div", { className, text }));
    const dropped = timeline.dropped;
    if (dropped.passes) note("dg-older-note", olderPassesNote(dropped));
    if (dropped.nodes || dropped.steps) note("", `Not recorded (over the recording budget): ${dropped.nodes} nodes, ${dropped.steps} steps.`);
    if (renderError) note("dg-render-error", `Graphviz could not draw this graph: ${renderError}`);
    for (const [name, why] of Object.entries(unreadable)) {
      note("dg-data-error", `This graph's ${name === "snapshot" ? "saved state" : "latest update"} could not be read: ${why}. `
        + "What could be read is shown; run the cell again to redraw it.");
    }
    const s = this.state.latestStructure();
    if (s && s.statsHidden > 0) { // dot.py NOTE [running statistics]
      note("dg-stats-note", `${s.statsHidden} running statistics (a BatchNorm's running_mean, running_var) are not drawn: `
        + "dg.watch(running_stats=True) draws them.");
    }
    if (s && s.hidden > 0) {
      const total = timeline.nodes.size;
      note("dg-hidden-note", `Showing the newest ${total - s.hidden} of ${total} nodes: the oldest ${s.hidden} are in one `
        + `"hidden" box (over the budget of ${this.options().max_nodes} boxes; dg.watch(max_visible=...) draws more).`);
    }
    notes.hidden = !notes.firstChild;
  }

  /**
   * The groups bar: what is rolled up (click its box, or "expand", to open it) and what the
   * learner opened ("roll up"), as the drawing on the page shows it. A loop opened part of the
   * way has both ("expand more" opens its next iterations), and a loop not open all the way
   * can be ("expand all": every iteration, a longer layout).
   * @param {Structure} s  the drawing on the page @param {boolean} busy  a layout is under way (NOTE [busy])
   */
  groups(s, busy) {
    const { doc } = this;
    const bar = this.els.groupsBar;
    const text = JSON.stringify([s.groups, busy]);
    if (text === this.groupsShown) return;
    this.groupsShown = text;
    clear(bar);
    const add = (/** @type {string} */ label, /** @type {string} */ key, /** @type {"open"|"all"|"roll up"} */ action, /** @type {boolean} */ expanded) => {
      const b = make(doc, "button", {
        className: "dg-btn dg-group-toggle",
        text: label,
        attrs: { type: "button", "data-group": key, "data-action": action, "aria-expanded": String(expanded) },
      });
      setDisabled(b, busy);
      bar.appendChild(b);
    };
    const map = s.groups.filter((group) => !group.loop && !group.expanded).length > MAP_BUTTONS_UP_TO;
    for (const group of s.groups) {
      const partly = group.loop && !group.expanded && group.opened > 0;
      // NOTE [map]: a map's closed boxes say "click to open"; past a few the bar lists only
      // what is open, to roll it up (a button per box of ResNet-18's map is a wall of them)
      if (!group.expanded && (group.loop || !map)) add(`${partly ? "expand more" : "expand"}: ${group.title}`, group.key, "open", partly);
      if (group.loop && !group.expanded) add(`expand all: ${group.title}`, group.key, "all", partly);
      if (group.expanded || partly) add(`roll up: ${group.title}`, group.key, "roll up", true);
    }
    bar.hidden = !bar.firstChild;
  }

  /** The legend: one swatch per mark of the vocabulary, styled from the vocabulary table. */
  legend() {
    const { doc } = this;
    const legend = this.els.legend;
    clear(legend);
    const v = this.header().vocabulary || {};
    const node = v.node || {};
    const freed = v.freed || {};
    // NOTE [one legend] (dyngraph/dot.py LEGEND): the names and help texts come with the
    // vocabulary; the swatch of each style is drawn here.
    const op = svgStyle(node.op);
    /** @type {Record<string, [string, ReturnType<typeof svgStyle>]>} */
    const swatches = {
      leaf: ["dg-sw-box", svgStyle(node.leaf)],
      parameter: ["dg-sw-box", svgStyle(node.parameter)],
      constant: ["dg-sw-box", svgStyle(node.constant)],
      op: ["dg-sw-ellipse", op],
      output: ["dg-sw-ellipse", { ...op, ...svgStyle(String(v.output || "").replace(/^\[|\]$/g, "")) }],
      saved: ["dg-sw-ellipse", { ...op, ...svgStyle(v.saved) }],
      freed: ["dg-sw-ellipse", { ...op, ...svgStyle(freed.op) }],
      grad: ["dg-sw-ellipse dg-sw-grad", op],
      summed: ["dg-sw-ellipse dg-sw-summed", op],
      group: ["dg-sw-stack", svgStyle(v.loop || v.group)],
    };
    /** @type {Array<[string, string, ReturnType<typeof svgStyle>, string]>} */
    const items = [];
    for (const [key, name, help] of /** @type {Array<[string, string, string]>} */ (v.legend || [])) {
      if (!(key in swatches)) continue; // a static picture's entry (gradient size, runs A/B)
      const [shape, look] = swatches[key];
      items.push([name, shape, look, key === "group" ? `${help}: click to open` : help]);
    }
    items.push(["newest gradient", "dg-sw-flow", {}, "the edge the gradient just flowed back along"]);
    for (const [name, shape, look, help] of items) {
      const item = make(doc, "span", { className: "dg-legend-item", attrs: { title: help } });
      const swatch = make(doc, "span", { className: `dg-swatch ${shape}`, attrs: { "aria-hidden": "true" } });
      if (look.fill) swatch.style.background = look.fill;
      if (look.stroke) swatch.style.borderColor = look.stroke;
      if (look.dashed) swatch.style.borderStyle = "dashed";
      if (look.width) swatch.style.borderWidth = `${Math.min(look.width, 2)}px`;
      item.append(swatch, make(doc, "span", { text: name }));
      legend.appendChild(item);
    }
  }
}

/** @param {HTMLElement} b @param {boolean} off */
function setDisabled(b, off) {
  // aria-disabled, not disabled: a disabled button drops the keyboard focus.
  b.setAttribute("aria-disabled", String(off));
}

/** Does button `b` do something now (setDisabled)? @param {HTMLElement} b */
export function enabled(b) {
  return b.getAttribute("aria-disabled") !== "true";
}

/**
 * Scroll `box` (only) so that `row` is visible; never scrolls the page.
 * @param {HTMLElement} box @param {HTMLElement} row
 */
function keepVisible(box, row) {
  const top = row.offsetTop;
  const bottom = top + row.offsetHeight;
  if (top < box.scrollTop || bottom > box.scrollTop + box.clientHeight) {
    box.scrollTop = Math.max(0, top - box.clientHeight / 3);
  }
}
