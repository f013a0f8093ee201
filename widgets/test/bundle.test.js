// The shipped bundle matches the sources: its first line carries the hash of widgets/src,
// build.mjs and the package files (the rule in hash_sources.mjs and README.md).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync, writeFileSync, mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { createHash } from "node:crypto";
import { hashSources, sourceFiles, WIDGETS_DIR } from "../hash_sources.mjs";

const STATIC = join(WIDGETS_DIR, "..", "dyngraph", "jupyter", "static");

test("the built bundle and CSS carry the hash of the current sources (else: npm run build)", () => {
  const hash = hashSources();
  const js = join(STATIC, "graphview.js");
  assert.ok(existsSync(js), "no bundle: run `npm run build`");
  const firstLine = readFileSync(js, "utf8").split("\n", 1)[0];
  assert.equal(firstLine, `// dyngraph-widget-sources: ${hash}`, "stale bundle: run `npm run build`");
  const css = readFileSync(join(STATIC, "graphview.css"), "utf8").split("\n", 1)[0];
  assert.equal(css, `/* dyngraph-widget-sources: ${hash} */`);
  assert.ok(existsSync(join(STATIC, "THIRD_PARTY_LICENSES.txt")));
});

test("the hashing rule, on a tiny tree: sha256 of path\\n content\\n per file in path order", () => {
  const dir = mkdtempSync(join(tmpdir(), "dg-hash-"));
  try {
    mkdirSync(join(dir, "src", "sub"), { recursive: true });
    const files = {
      "build.mjs": "b",
      "package.json": "{}",
      "package-lock.json": "{}\n",
      "src/widget.js": "w\r\n",
      "src/sub/a.css": "",
      "src/Z.js": "z",
    };
    for (const [rel, text] of Object.entries(files)) writeFileSync(join(dir, rel), text);
    const order = ["build.mjs", "package-lock.json", "package.json", "src/Z.js", "src/sub/a.css", "src/widget.js"];
    assert.deepEqual(sourceFiles(dir), order);
    const expected = createHash("sha256");
    for (const rel of order) expected.update(`${rel}\n${files[rel]}\n`);
    assert.equal(hashSources(dir), expected.digest("hex"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
