import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { setText, make, buildCodeLines, markCurrentLine, infoRows, renderRows, formatValue } from "../src/text.js";
import { dom } from "./helpers.js";

const HOSTILE = "<img src=x onerror=alert(1)>";

describe("text insertion", () => {
  test("setText puts markup in as text: no element is created", () => {
    const { document, host } = dom();
    setText(host, HOSTILE);
    assert.equal(host.textContent, HOSTILE);
    assert.equal(host.querySelector("img"), null);
    assert.equal(host.children.length, 0);
    setText(host, null);
    assert.equal(host.textContent, "");
    void document;
  });

  test("the inspector shows a hostile name as text", () => {
    const { document, host } = dom();
    const rows = infoRows({ title: "parameter", name: HOSTILE, shape: [2, 3], value: "[1, 2]", where: `line 2: w = dg.Parameter(name="${HOSTILE}")` });
    renderRows(document, host, rows);
    assert.equal(host.querySelector("img"), null);
    const values = [...host.querySelectorAll("dd")].map((dd) => dd.textContent);
    assert.ok(values.includes(HOSTILE));
    assert.ok(values.includes("(2, 3)"));
    assert.equal(host.querySelectorAll("dd *").length, 0, "no element inside any value");
  });

  test("the code panel shows a hostile source line as text", () => {
    const { document, host } = dom();
    const source = `x = 1\nw = Parameter(name="${HOSTILE}")\n</ol><script>alert(2)</script>\n`;
    const list = buildCodeLines(document, source, 2);
    host.appendChild(list);
    assert.equal(host.querySelector("img"), null);
    assert.equal(host.querySelector("script"), null);
    const rows = host.querySelectorAll("li.dg-line");
    assert.equal(rows.length, 3);
    assert.equal(rows[1].querySelector("code").textContent, `w = Parameter(name="${HOSTILE}")`);
    assert.ok(rows[1].classList.contains("dg-current"));
    assert.equal(rows[1].getAttribute("aria-current"), "true");
  });

  test("line numbers are buttons carrying their number; the highlight moves", () => {
    const { document } = dom();
    const list = buildCodeLines(document, "a\nb\nc", 1);
    const buttons = list.querySelectorAll("button.dg-lineno");
    assert.deepEqual([...buttons].map((b) => b.getAttribute("data-line")), ["1", "2", "3"]);
    const row = markCurrentLine(list, 3);
    assert.equal(row.getAttribute("data-line"), "3");
    assert.equal(list.querySelectorAll(".dg-current").length, 1);
    markCurrentLine(list, null);
    assert.equal(list.querySelectorAll(".dg-current").length, 0);
  });

  test("make sets only the given fixed attributes, text as text", () => {
    const { document } = dom();
    const el = make(document, "span", { className: "x", text: HOSTILE, attrs: { title: HOSTILE } });
    assert.equal(el.textContent, HOSTILE);
    assert.equal(el.children.length, 0);
    assert.equal(el.getAttribute("title"), HOSTILE);
  });
});

describe("inspector rows", () => {
  test("known fields in reading order, then the rest, every value as text", () => {
    const rows = infoRows({ extra: { a: 1 }, rule: "z = x * y", title: "Mul", grad: null, shape: [] });
    assert.deepEqual(rows, [["op", "Mul"], ["shape", "()"], ["gradient", "\u2014"], ["local derivative", "z = x * y"], ["extra", '{"a":1}']]);
  });

  test("a gradient later in the timeline is not shown yet", () => {
    const rows = infoRows({ grad: "[1, 2]" }, { gradPending: true });
    assert.deepEqual(rows, [["gradient", "not yet (later in the timeline)"]]);
  });

  test("formatValue", () => {
    assert.equal(formatValue("shape", [3]), "(3,)");
    assert.equal(formatValue("value", null), "\u2014");
    assert.equal(formatValue("value", 1.5), "1.5");
  });
});

describe("drawings", () => {
  test("inertSvg keeps Graphviz's drawing and drops scripts, links and handlers", async () => {
    const { inertSvg } = await import("../src/text.js");
    const { document, host } = dom();
    const svg = inertSvg(document, `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="alert(1)">
      <g id="n1" class="node"><title>n1</title><ellipse cx="1" cy="1" rx="1" ry="1"/><text onclick="alert(2)">&lt;img src=x onerror=alert(1)&gt;</text></g>
      <script>alert(3)</script><a xlink:href="javascript:alert(4)"><text>link</text></a><foreignObject><div/></foreignObject>
      <image href="x"/></svg>`);
    host.appendChild(svg);
    assert.equal(host.querySelectorAll("script, a, foreignObject, image, img, div").length, 0);
    assert.equal(svg.getAttribute("onload"), null);
    assert.equal(svg.querySelector("text").getAttribute("onclick"), null);
    assert.equal(svg.querySelector("text").textContent, HOSTILE);
    assert.equal(svg.querySelector("g.node title").textContent, "n1");
  });

  test("a non-SVG answer is an error", async () => {
    const { inertSvg } = await import("../src/text.js");
    const { document } = dom();
    assert.throws(() => inertSvg(document, "not svg <"), /did not return an SVG/);
  });
});
