// The functions of a JavaScript source and how many lines each spans, for the test that keeps
// every function of src/ short enough to read (issue 39: "no function longer than ~200 lines").
//
// NOTE [a scanner, not a parser] No JavaScript parser is among the widget's dependencies
// (esbuild gives no syntax tree), and one more dependency for a test is not worth it. The
// source is read as tokens, skipping what may hold a brace that is no code: comments, string
// and template literals (with `${...}` inside them scanned as code), and regular expression
// literals (a `/` where an operand may start). A function is then any body that opens after
// `function name(...)`, after a method's `name(...)` (in a class or an object literal), or
// after `=>`; an arrow with an expression body ends where its expression does. Control
// statements (`if (...) {`, `for`, `while`, `switch`, `catch`) are told apart by their keyword.

/** @typedef {{type: "punct"|"word"|"string"|"template"|"regex"|"number", value: string, line: number}} Token */

const CONTROL = new Set(["if", "for", "while", "switch", "catch", "with"]);
/** After these words an expression starts: a `/` there begins a regular expression. */
const BEFORE_EXPRESSION = new Set(["return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await"]);

/**
 * The tokens of `source`, comments left out.
 * @param {string} source
 * @returns {Token[]}
 */
export function tokenize(source) {
  /** @type {Token[]} */
  const tokens = [];
  let line = 1;
  let i = 0;
  /** one entry per template literal being read: the brace depth its `${` opened at */
  const templates = [];
  let depth = 0;
  const n = source.length;
  const countLines = (/** @type {number} */ from, /** @type {number} */ to) => {
    for (let k = from; k < to; k++) if (source[k] === "\n") line++;
  };
  /** Read a template's text from its ` or } at i to its end or its next `${`. */
  const readTemplate = () => {
    const start = i++;
    const startLine = line;
    while (i < n) {
      const c = source[i];
      if (c === "\\") { i += 2; continue; }
      if (c === "`") { i++; countLines(start, i); tokens.push({ type: "template", value: source.slice(start, i), line: startLine }); return; }
      if (c === "$" && source[i + 1] === "{") {
        i += 2;
        countLines(start, i);
        tokens.push({ type: "template", value: source.slice(start, i), line: startLine });
        templates.push(depth);
        depth++;
        return;
      }
      i++;
    }
    throw new SyntaxError(`unterminated template literal from line ${startLine}`);
  };
  const regexAllowed = () => {
    const last = tokens[tokens.length - 1];
    if (!last) return true;
    if (last.type === "word") return BEFORE_EXPRESSION.has(last.value);
    if (last.type === "punct") return !/^[)\]}]$/.test(last.value);
    return false; // after a number, string, template or regex: a division
  };
  while (i < n) {
    const c = source[i];
    if (c === "\n") { line++; i++; continue; }
    if (/\s/.test(c)) { i++; continue; }
    if (c === "/" && source[i + 1] === "/") { while (i < n && source[i] !== "\n") i++; continue; }
    if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      if (end < 0) throw new SyntaxError(`unterminated comment on line ${line}`);
      countLines(i, end + 2);
      i = end + 2;
      continue;
    }
    if (c === '"' || c === "'") {
      const start = i++;
      while (i < n && source[i] !== c) {
        if (source[i] === "\n") throw new SyntaxError(`unterminated string on line ${line}`);
        i += source[i] === "\\" ? 2 : 1;
      }
      i++;
      tokens.push({ type: "string", value: source.slice(start, i), line });
      continue;
    }
    if (c === "`") { readTemplate(); continue; }
    if (c === "}" && templates.length && templates[templates.length - 1] === depth - 1) {
      templates.pop();
      depth--;
      readTemplate();
      continue;
    }
    if (c === "/" && regexAllowed()) {
      const start = i++;
      let inClass = false;
      while (i < n) {
        const d = source[i];
        if (d === "\n") throw new SyntaxError(`unterminated regular expression on line ${line}`);
        if (d === "\\") { i += 2; continue; }
        if (d === "[") inClass = true;
        else if (d === "]") inClass = false;
        else if (d === "/" && !inClass) break;
        i++;
      }
      i++;
      while (i < n && /[a-z]/.test(source[i])) i++; // flags
      tokens.push({ type: "regex", value: source.slice(start, i), line });
      continue;
    }
    const word = /^[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*/.exec(source.slice(i, i + 200));
    if (word) { tokens.push({ type: "word", value: word[0], line }); i += word[0].length; continue; }
    const number = /^(?:0[xXbBoO][\da-fA-F_]+n?|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?n?)/.exec(source.slice(i, i + 100));
    if (number) { tokens.push({ type: "number", value: number[0], line }); i += number[0].length; continue; }
    const punct = /^(?:=>|\.\.\.|\?\?=?|\?\.|[=!]==?|[<>]=?|&&=?|\|\|=?|\*\*=?|<<=?|>>>?=?|[-+*%&|^]=|\+\+|--|[{}()[\];,.<>+\-*/%&|^!~?:=@#])/.exec(source.slice(i, i + 4));
    if (!punct) throw new SyntaxError(`unexpected character ${JSON.stringify(c)} on line ${line}`);
    if (punct[0] === "{") depth++;
    else if (punct[0] === "}") depth--;
    tokens.push({ type: "punct", value: punct[0], line });
    i += punct[0].length;
  }
  if (templates.length) throw new SyntaxError("unterminated template literal");
  return tokens;
}

/**
 * Every function of `source`: its name (as best the text says it), first and last line, and
 * how many lines it spans.
 * @param {string} source
 * @returns {Array<{name: string, start: number, end: number, lines: number}>}
 */
export function functionLengths(source) {
  const tokens = tokenize(source);
  /** index of each bracket token -> index of its partner */
  const partner = new Map();
  const open = [];
  tokens.forEach((t, k) => {
    if (t.type === "template") {
      // `${` opens, and the template piece after it closes, a brace pair of its own
      if (t.value.startsWith("}")) partner.set(/** @type {number} */ (open.pop()), k);
      if (t.value.endsWith("${")) open.push(k);
      return;
    }
    if (t.type !== "punct") return;
    if (t.value === "{" || t.value === "(" || t.value === "[") open.push(k);
    else if (t.value === "}" || t.value === ")" || t.value === "]") {
      const from = open.pop();
      if (from === undefined) throw new SyntaxError(`unbalanced ${t.value} on line ${t.line}`);
      partner.set(from, k);
      partner.set(k, from);
    }
  });
  if (open.length) throw new SyntaxError(`unclosed bracket from line ${tokens[open[open.length - 1]].line}`);
  const is = (/** @type {number} */ k, /** @type {string} */ value) => tokens[k] !== undefined && tokens[k].type === "punct" && tokens[k].value === value;
  /** The name a function expression or arrow starting at token k is given: `name = `, `name: `. */
  const assignedName = (/** @type {number} */ k) => {
    if ((is(k - 1, "=") || is(k - 1, ":")) && tokens[k - 2] && tokens[k - 2].type === "word") return tokens[k - 2].value;
    return "(anonymous)";
  };
  const found = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.type === "punct" && t.value === "=>") {
      // its parameters: one word, or a parenthesised list
      const start = is(k - 1, ")") ? partner.get(k - 1) : k - 1;
      const first = tokens[start - 1] && tokens[start - 1].value === "async" ? start - 1 : start;
      const end = is(k + 1, "{") ? partner.get(k + 1) : expressionEnd(tokens, partner, k + 1);
      found.push({ name: assignedName(first), start: tokens[first].line, end: tokens[end].line });
      continue;
    }
    if (!(t.type === "punct" && t.value === "{" && is(k - 1, ")"))) continue;
    const paren = partner.get(k - 1);
    const before = tokens[paren - 1];
    if (!before || before.type !== "word" || CONTROL.has(before.value)) continue;
    const end = partner.get(k);
    if (before.value === "function") {
      found.push({ name: assignedName(paren - 1), start: before.line, end: tokens[end].line });
    } else if (tokens[paren - 2] && tokens[paren - 2].value === "function") {
      found.push({ name: before.value, start: tokens[paren - 2].line, end: tokens[end].line });
    } else if (is(paren - 2, "*") && tokens[paren - 3] && tokens[paren - 3].value === "function") {
      found.push({ name: before.value, start: tokens[paren - 3].line, end: tokens[end].line });
    } else {
      found.push({ name: before.value, start: before.line, end: tokens[end].line }); // a method
    }
  }
  return found.map((f) => ({ ...f, lines: f.end - f.start + 1 }));
}

/**
 * The last token of the expression starting at token k: before the first `,`, `;` or closing
 * bracket outside brackets opened within it.
 * @param {Token[]} tokens @param {Map<number, number>} partner @param {number} k
 */
function expressionEnd(tokens, partner, k) {
  let j = k;
  while (j < tokens.length) {
    const t = tokens[j];
    if (t.type === "punct" && (t.value === "," || t.value === ";" || t.value === ")" || t.value === "]" || t.value === "}")) break;
    const close = partner.get(j);
    if (close !== undefined && close > j) j = close;
    j++;
  }
  return Math.max(k, j - 1);
}
