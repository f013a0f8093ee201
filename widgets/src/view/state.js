// What a view shows of its recording: the node or module the learner selected, and the
// choices the drawing's structure is made from, the learner's ("values & grads", the groups
// opened) and the view's own for readability (NOTE [readable] in drawing.js: the map, compact
// numbers, the direction). Each changes through a named method here; the structure made from
// them is cached until one of them, or the data, changes. Pure: no DOM.

import { buildStructure, COLLAPSE_OVER } from "../structure.js";
import { numel } from "../vocabulary.js";

/** Graphs of at most this many nodes show values and gradients by default (NOTE [numbers]). */
export const NUMBERS_UP_TO = 12;
/** ... and graphs of scalars (every value one number: micrograd's) of at most this many. */
export const SCALARS_UP_TO = 60;

/**
 * @typedef {import("../timeline.js").Timeline} Timeline
 * @typedef {import("../structure.js").Structure} Structure
 * @typedef {{key: string, title: string, members: number[], output: number}} SelectedModule
 */

export class ViewState {
  constructor() {
    /** @type {number|null} the node the learner clicked */
    this.selected = null;
    /** @type {SelectedModule|null} the box of the map the learner clicked: the inspector shows
     * its module (levels.js NOTE [map]) */
    this.selectedGroup = null;
    /** @type {boolean|null} labels with every value and a gradient line (the "values & grads"
     * toggle); null: the learner has not chosen, so a small graph shows them and a larger one
     * is compact (NOTE [numbers]) */
    this.detail = null;
    /** @type {Set<string>} groups the learner opened (loops l<id>, scopes "scope:<name>") */
    this.expanded = new Set();
    /** @type {Map<string, number>} loop key -> how many of its box's iterations are drawn open
     * (NOTE [a loop opens a few iterations at a time] in structure.js) */
    this.openIterations = new Map();
    /** drawn as a map of the modules, because the whole drawing would be unreadable at fit
     * (levels.js NOTE [map]; past collapse_over the structure is a map by itself) */
    this.map = false;
    /** a small graph's numbers (NOTE [numbers]) would make it unreadable at fit: compact */
    this.numbersTooBig = false;
    /** @type {"TB"|"LR"} the direction of the drawing's ranks: inputs on top, or at the left
     * (drawing.js NOTE [turn]) */
    this.rankdir = "TB";
    /** @type {number[]|null} the members of the group just opened: the next layout zooms toward them */
    this.opened = null;
    /** is every value one number (for a version of the timeline; NOTE [numbers]) */
    this._scalars = { version: -1, every: false };
    /** @type {{key: string, structure: Structure, vocabulary: unknown}|null} */
    this._structure = null;
  }

  /** The learner selects a node (null: nothing). @param {number|null} id */
  select(id) {
    this.selected = id;
    this.selectedGroup = null;
  }

  /** The learner selects a module's box of the map (NOTE [map]). @param {SelectedModule} group */
  selectModule(group) {
    this.selected = null;
    this.selectedGroup = group;
  }

  /** Is `box` what the learner selected? @param {{key?: string, members: number[]}} box */
  isSelected(box) {
    if (this.selectedGroup !== null) return box.key === this.selectedGroup.key;
    return this.selected !== null && box.members.includes(this.selected);
  }

  /**
   * NOTE [numbers] Are values and gradients in the labels? The learner's choice, else yes for a
   * graph of at most NUMBERS_UP_TO nodes (micrograd's draw_dot shows them all; a dozen boxes
   * have room for them), and for a graph of scalars of at most SCALARS_UP_TO nodes (each of its
   * numbers is one short line, and they are what a learner of micrograd watches: its README's
   * example has 39 nodes); no for a larger one, which stays compact.
   * @param {Timeline} timeline
   */
  detailShown(timeline) {
    if (this.detail !== null) return this.detail;
    const n = timeline.nodes.size;
    return n > 0 && (n <= NUMBERS_UP_TO || this.scalarGraph(timeline)) && !this.numbersTooBig;
  }

  /**
   * Is every value of the recording a single number (micrograd's), and the graph small enough
   * (NOTE [numbers])?
   * @param {Timeline} timeline
   */
  scalarGraph(timeline) {
    if (timeline.nodes.size > SCALARS_UP_TO) return false;
    if (this._scalars.version !== timeline.version) {
      let every = timeline.nodes.size > 0;
      for (const node of timeline.nodes.values()) if (numel(Array.isArray(node.shape) ? node.shape : []) > 1) every = false;
      this._scalars = { version: timeline.version, every };
    }
    return this._scalars.every;
  }

  /** The learner's "values & grads": the other of what is shown now. @param {Timeline} timeline */
  toggleDetail(timeline) {
    this.detail = !this.detailShown(timeline);
  }

  /** Is the drawing laid out left to right (drawing.js NOTE [turn])? */
  turned() {
    return this.rankdir === "LR";
  }

  /** Lay the ranks out the other way, or `rankdir` (drawing.js NOTE [turn]). @param {"TB"|"LR"} [rankdir] */
  turn(rankdir = this.turned() ? "TB" : "LR") {
    this.rankdir = rankdir;
  }

  /** Compact labels: the numbers nobody asked for are too big for the pane (NOTE [readable]). */
  compactNumbers() {
    this.numbersTooBig = true;
  }

  /** Draw the map of the modules (NOTE [readable]). */
  drawMap() {
    this.map = true;
  }

  /**
   * Open a scope's box; the next layout zooms toward its members.
   * @param {string} key @param {number[]|null} members
   */
  openScope(key, members) {
    this.expanded.add(key);
    this.opened = members;
  }

  /**
   * Open `more` of a rolled-up loop's iterations after the `from` drawn open (all of them:
   * the loop is expanded); the next layout zooms toward the ones just opened.
   * @param {import("../structure.js").Loop} loop @param {number} from @param {number} more
   */
  openLoop(loop, from, more) {
    const to = Math.min(from + more, loop.iterations.length);
    if (to >= loop.iterations.length) {
      this.expanded.add(loop.key);
      this.openIterations.delete(loop.key);
    } else this.openIterations.set(loop.key, to);
    this.opened = loop.iterations.slice(from, to).flat();
  }

  /** Roll a group up again, with the boxes opened inside it (NOTE [map]). @param {string} key */
  rollUp(key) {
    this.expanded.delete(key);
    this.openIterations.delete(key);
    const inside = `${key.slice(key.indexOf(":") + 1)} / `;
    for (const k of [...this.expanded]) if (k.slice(k.indexOf(":") + 1).startsWith(inside)) this.expanded.delete(k);
  }

  /** The members of the group just opened, once (the layout that zooms to them takes them). */
  takeOpened() {
    const opened = this.opened;
    this.opened = null;
    return opened;
  }

  /**
   * The structure of the whole recording as the learner chose to see it (cached).
   * @param {Timeline} timeline
   * @param {{lines?: string[], vocabulary?: any}} header
   * @param {{max_nodes?: number, collapse_over?: number, running_stats?: boolean}} options
   * @returns {Structure}
   */
  structure(timeline, header, options) {
    const detail = this.detailShown(timeline);
    const opened = [...this.openIterations].map(([k, n]) => `${k}:${n}`).sort().join(",");
    const key = [timeline.version, detail, this.map, this.rankdir, [...this.expanded].sort().join(","), opened, options.max_nodes,
      options.collapse_over, options.running_stats, header.vocabulary ? Object.keys(header.vocabulary).length : 0,
      (header.lines || []).join("\n")].join("|");
    if (this._structure && this._structure.key === key && this._structure.vocabulary === header.vocabulary) {
      return this._structure.structure;
    }
    const structure = buildStructure(timeline, {
      lines: header.lines || [], vocabulary: header.vocabulary || {}, maxNodes: options.max_nodes,
      collapseOver: options.collapse_over ?? COLLAPSE_OVER, detail, expanded: this.expanded, opened: this.openIterations,
      finalGrads: detail ? timeline.finalGrads() : undefined, map: this.map,
      rankdir: this.rankdir, runningStats: Boolean(options.running_stats),
    });
    this._structure = { key, structure, vocabulary: header.vocabulary };
    return structure;
  }

  /** The structure last made (its notes: what it leaves out), or null. */
  latestStructure() {
    return this._structure && this._structure.structure;
  }
}
