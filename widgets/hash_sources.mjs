// The source hash written on the first line of the built bundle:
//
//   // dyngraph-widget-sources: <sha256 hex>
//
// Rule (also in README.md, so a Python test can recompute it without node):
//   files  = build.mjs, package.json, package-lock.json, and every regular file under src/
//            (recursively), each named by its POSIX path relative to widgets/
//   order  = sorted by that path (byte order of its UTF-8 encoding)
//   digest = sha256 over, for each file in order, the bytes  path + "\n" + content + "\n"
//            (content = the file's raw bytes, unchanged)
//
// `node hash_sources.mjs` prints the hash.

import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const WIDGETS_DIR = dirname(fileURLToPath(import.meta.url));
export const TOP_LEVEL_FILES = ["build.mjs", "package.json", "package-lock.json"];

/**
 * @param {string} dir  absolute
 * @returns {string[]}  absolute paths of the regular files under dir
 */
function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) out.push(...walk(path));
    else if (stat.isFile()) out.push(path);
  }
  return out;
}

/**
 * The files the hash covers, as POSIX paths relative to `widgetsDir`, in hashing order.
 * @param {string} [widgetsDir]
 * @returns {string[]}
 */
export function sourceFiles(widgetsDir = WIDGETS_DIR) {
  const src = walk(join(widgetsDir, "src")).map((p) => relative(widgetsDir, p).split(sep).join("/"));
  return [...TOP_LEVEL_FILES, ...src].sort((a, b) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8")));
}

/**
 * sha256 (hex) of the widget's sources, by the rule above.
 * @param {string} [widgetsDir]
 * @returns {string}
 */
export function hashSources(widgetsDir = WIDGETS_DIR) {
  const hash = createHash("sha256");
  for (const rel of sourceFiles(widgetsDir)) {
    hash.update(Buffer.from(rel + "\n", "utf8"));
    hash.update(readFileSync(join(widgetsDir, rel)));
    hash.update(Buffer.from("\n", "utf8"));
  }
  return hash.digest("hex");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(hashSources());
}
