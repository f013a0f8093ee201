// Rooms to live in (issue 39): no function of the widget's source is longer than MAX_LINES, so
// each can be read whole. The scanner (function_lengths.js) is checked on made-up sources too.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { functionLengths } from "./function_lengths.js";

/** The longest a function of src/ may be, in lines. */
const MAX_LINES = 200;
const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** Every .js file under `dir`, at any depth. @param {string} dir @returns {string[]} */
function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".js") ? [path] : [];
  });
}

/** The functions of `source` longer than `max` lines, as "file:line name (n lines)". */
function tooLong(source, file, max = MAX_LINES) {
  return functionLengths(source).filter((f) => f.lines > max).map((f) => `${file}:${f.start} ${f.name} (${f.lines} lines)`);
}

test(`no function in widgets/src is longer than ${MAX_LINES} lines`, () => {
  const files = sources(SRC);
  assert.ok(files.length >= 10, "the sources are found");
  const found = files.flatMap((path) => tooLong(readFileSync(path, "utf8"), relative(SRC, path)));
  assert.deepEqual(found, []);
});

describe("the scanner", () => {
  const body = (n) => Array.from({ length: n }, (_, k) => `  x += ${k};`).join("\n");

  test("finds a long declaration, expression, arrow and method, and names each", () => {
    const source = [
      `function long() {\n${body(250)}\n}`,
      `const expr = function () {\n${body(250)}\n};`,
      `const arrow = async (a, b) => {\n${body(250)}\n};`,
      `class A {\n  method(x) {\n${body(250)}\n  }\n}`,
      `const short = () => 1;`,
    ].join("\n");
    const found = tooLong(source, "made-up.js");
    assert.deepEqual(found.map((f) => f.split(" ")[1]), ["long", "expr", "arrow", "method"]);
    assert.match(found[0], /^made-up\.js:1 long \(252 lines\)$/);
  });

  test("braces in strings, templates, regular expressions and comments are not code", () => {
    const source = [
      "function f() {",
      "  const a = '}}';",
      '  const b = "{";',
      "  const c = `}${a + `${'}'}`}{`;",
      "  const d = /[}{]\\/}/g.test(b) ? 1 / 2 : 3;",
      "  // }",
      "  /* } */",
      "  if (a) { return c; }",
      "}",
      "const g = (x) => x.map((y) => ({ y }));",
    ].join("\n");
    const fns = functionLengths(source);
    assert.deepEqual(fns.map((f) => [f.name, f.start, f.end]), [["f", 1, 9], ["g", 10, 10], ["(anonymous)", 10, 10]]);
  });

  test("an arrow with an expression body ends with its expression", () => {
    const source = "const h = (x) =>\n  call(x,\n    2)\n    .then((y) => y);\nconst after = 1;";
    const [h] = functionLengths(source);
    assert.deepEqual([h.name, h.start, h.end], ["h", 1, 4]);
  });

  test("control statements are not functions", () => {
    const source = "for (const x of y) {\n}\nwhile (a) {\n}\nswitch (b) {\n}\ntry {\n} catch (e) {\n}\nif (c) {\n}";
    assert.deepEqual(functionLengths(source), []);
  });
});
