// Write dev/harness.html: the built bundle, its CSS and dev/sample_state.json in one
// self-contained page, put together the way Recording.to_html(path) should do it (README.md,
// "The standalone HTML page"). Open it from disk, or screenshot it headless:
//
//   npm run build && npm run harness
//   chromium --headless ... --screenshot=/tmp/harness.png file://$PWD/dev/harness.html
//
// The page is generated (about the size of the bundle) and not committed.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WIDGETS_DIR } from "../hash_sources.mjs";

const STATIC = join(WIDGETS_DIR, "..", "dyngraph", "jupyter", "static");
const stateFile = process.argv[2] || join(WIDGETS_DIR, "dev", "sample_state.json");
const out = process.argv[3] || join(WIDGETS_DIR, "dev", "harness.html");

/** JSON that is safe inside a <script> element: no "<" (so no "</script>"), no U+2028/9. */
export function scriptSafeJson(value) {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

const bundle = readFileSync(join(STATIC, "graphview.js"), "utf8");
const css = readFileSync(join(STATIC, "graphview.css"), "utf8");
const state = JSON.parse(readFileSync(stateFile, "utf8"));

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>dyngraph recording</title>
<style>
body { font-family: system-ui, sans-serif; margin: 16px; }
/* #dark: JupyterLab's dark theme variables, to check the widget follows them */
body.dark { background: #111111; --jp-layout-color0: #111111; --jp-layout-color1: #212121;
  --jp-layout-color2: #424242; --jp-ui-font-color1: rgba(255, 255, 255, 0.87);
  --jp-ui-font-color2: rgba(255, 255, 255, 0.54); --jp-border-color1: #616161;
  --jp-brand-color1: #42a5f5; }
${css.replace(/<\//g, "<\\/")}
</style>
</head>
<body>
<div id="dyngraph"></div>
<script type="application/json" id="dyngraph-state">${scriptSafeJson(state)}</script>
<script type="module">
const source = ${scriptSafeJson(bundle)};
const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
const { mountStandalone } = await import(url);
URL.revokeObjectURL(url);
const state = JSON.parse(document.getElementById("dyngraph-state").textContent);
const cleanup = mountStandalone(document.getElementById("dyngraph"), state);
// Dev only (not part of the to_html recipe): #t=12&select=2&dark for screenshots and tests.
const params = new URLSearchParams(location.hash.slice(1));
if (params.has("dark")) document.body.classList.add("dark");
if (params.has("select")) cleanup.view.select(Number(params.get("select")));
if (params.has("t")) cleanup.view.setPosition(Number(params.get("t")));
window.dyngraphDev = { cleanup, view: cleanup.view };
</script>
</body>
</html>
`;
writeFileSync(out, page);
console.log(`wrote ${out} (${(page.length / 1024).toFixed(0)} KiB)`);
