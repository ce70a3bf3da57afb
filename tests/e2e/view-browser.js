// Drives `callpath view` in headless Chromium (playwright-core, the system's chromium) and
// checks what the page shows against `callpath report --format json` of the same profile.
// Run by view-browser.sh: node view-browser.js URL FILE OUTDIR JSONDIR checks the served page
// (every view and pane), then the --html FILE with no network.
// JSONDIR holds td.json, bu.json, flat.json, flat-fl1.json, hot.json and thread.json
// (report's output; thread.json is for the thread named in thread.txt as PID:TIDX).
"use strict";
const path = require("path");
const fs = require("fs");
const { withBrowser } = require(path.join(__dirname, "view-helpers/browser.js"));

const [url, htmlFile, outDir, jsonDir] = process.argv.slice(2);
let mode = "server";
const report = (name) => JSON.parse(fs.readFileSync(path.join(jsonDir, name + ".json"), "utf8"));
let page;
let shot = 0;

function fail(msg) {
  throw new Error(msg);
}

function check(cond, msg) {
  if (!cond) fail(msg);
}

async function screenshot(name) {
  shot++;
  const file = (mode === "static" ? "static-" : "") + String(shot).padStart(2, "0") + "-" + name + ".png";
  await page.screenshot({ path: path.join(outDir, file) });
}

// The rows of the tree table in the DOM: name, kind, depth and every value cell.
async function domRows() {
  return page.$$eval(".tt-row[data-kind]", (rows) =>
    rows
      .map((r) => ({
        id: r.dataset.id,
        top: parseFloat(r.style.top),
        kind: r.dataset.kind,
        depth: Number(r.getAttribute("aria-level")) - 1,
        name: r.querySelector(".name").textContent,
        hot: r.classList.contains("hot"),
        selected: r.classList.contains("selected"),
        cells: Array.from(r.querySelectorAll(".tt-num")).map((c) => ({
          metric: c.dataset.metric,
          which: c.dataset.which,
          value: c.dataset.value === "" ? null : Number(c.dataset.value),
        })),
      }))
      .sort((a, b) => a.top - b.top)
  );
}

// report's nodes by their path of names from the root: "name/name/...".
function byPath(rep) {
  const ids = new Map();
  const out = new Map();
  rep.nodes.forEach((n) => {
    const p = n.parent === null ? "" : ids.get(n.parent) + "\u0001" + n.name;
    ids.set(n.id, p);
    out.set(p, n);
  });
  return out;
}

function close(a, b) {
  if (a === null || b === null) return a === b;
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

// Every row shown equals report's row of the same path (rows shown from the root, unzoomed).
function compareRows(rows, rep, what) {
  const paths = byPath(rep);
  const mIndex = new Map(rep.metrics.map((m, i) => [m.name, i]));
  const stack = [];
  let compared = 0;
  rows.forEach((r) => {
    stack.length = r.depth;
    const p = r.depth === 0 ? "" : stack[r.depth - 1] + "\u0001" + r.name;
    stack.push(p);
    const n = paths.get(p);
    check(n, what + ": row '" + p.replace(/\u0001/g, " > ") + "' is not in report's view");
    check(n.kind === r.kind, what + ": " + r.name + " is " + r.kind + ", report says " + n.kind);
    r.cells.forEach((c) => {
      const i = mIndex.get(c.metric);
      const want = c.which === "incl" ? n.inclusive[i] : n.exclusive[i];
      check(close(c.value, want), what + ": " + r.name + " " + c.metric + " " + c.which + " = " + c.value + ", report: " + want);
      compared++;
    });
  });
  check(compared > 0, what + ": no values compared");
  return compared;
}

async function ready() {
  await page.waitForSelector("body[data-ready]", { timeout: 15000 });
  const state = await page.getAttribute("body", "data-ready");
  check(state === "1", "the page did not start: " + (await page.textContent("#status")));
}

async function rowByName(name) {
  const rows = await domRows();
  const r = rows.find((x) => x.name === name);
  check(r, "no row named " + name + " among " + rows.map((x) => x.name).join(", "));
  return r;
}

async function clickRow(name) {
  const r = await rowByName(name);
  await page.click('.tt-row[data-id="' + r.id + '"] .name');
  await page.waitForSelector('.tt-row.selected[data-id="' + r.id + '"]');
  return r;
}

async function idle() {
  await page.waitForFunction(() => !document.querySelector("#status").textContent.startsWith("loading"));
  await page.waitForTimeout(50);
}

// Adds the derived metric half = METRIC0/2 in the columns dialog; its columns equal
// report --metric half=METRIC0/2.
async function derivedMetric(td) {
  await page.click('#tabs button[data-view="top-down"]');
  await idle();
  await page.click("#columns-btn");
  await page.fill("#derived-name", "half");
  await page.fill("#derived-formula", td.metrics[0].name + "/2");
  await page.click("#derived-add");
  await page.waitForSelector('.tt-row .tt-num[data-metric="half"]');
  await page.click('#columns-dlg button[value="close"]');
  const n = compareRows(await domRows(), report("derived"), "derived metric half");
  await screenshot("derived");
  return n;
}

// The tree table: first view, expand, hot path, sort, zoom.
async function treeSteps(td) {
  let n = 0;
  let rows;
  // 1. First view: the root and its children equal report's.
  rows = await domRows();
  check(rows.length >= 2 && rows[0].kind === "root", "top-down view has no root row");
  n += compareRows(rows, td, "top-down, first view");
  await screenshot("top-down");
  // 2. Expand the first child by its twisty.
  const before = rows.length;
  await page.click('.tt-row[data-id="' + rows[1].id + '"] .twisty');
  await page.waitForFunction((k) => document.querySelectorAll(".tt-row").length > k, before);
  n += compareRows(await domRows(), td, "top-down, expanded");
  // 3. Hot path from the root equals report --hot-path.
  await page.click('.tt-row[data-id="' + rows[0].id + '"] .name');
  await page.click("#hot");
  await page.waitForSelector(".tt-row.hot");
  await idle();
  rows = await domRows();
  n += compareRows(rows, td, "top-down, hot path");
  const hotNames = rows.filter((r) => r.hot).map((r) => r.name);
  const repHot = report("hot").nodes.filter((x) => x.hot).map((x) => x.name);
  check(JSON.stringify(hotNames) === JSON.stringify(repHot),
    "hot path " + hotNames.join(" > ") + " differs from report's " + repHot.join(" > "));
  await screenshot("hot-path");
  // 4. Sort by the exclusive column: siblings in decreasing exclusive order.
  await page.click('.tt-head .tt-num[data-col="1"]');
  await page.waitForSelector('.tt-head .tt-num[data-col="1"].sorted');
  rows = await domRows();
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1], b = rows[i];
    if (a.depth === b.depth && a.cells[1].value !== null && b.cells[1].value !== null)
      check(a.cells[1].value >= b.cells[1].value, "not sorted by exclusive: " + a.name + " before " + b.name);
  }
  await page.click('.tt-head .tt-num[data-col="0"]');
  // 5. Zoom into the hottest procedure below the root, then back.
  const deepProc = rows.filter((r) => r.kind === "procedure" && r.hot).pop();
  check(deepProc, "no procedure on the hot path");
  await clickRow(deepProc.name);
  await page.keyboard.press("z");
  await page.waitForFunction((id) => document.querySelector(".tt-row")?.dataset.id === id, deepProc.id);
  const zoomed = await domRows();
  check(zoomed[0].name === deepProc.name && zoomed[0].depth === 0, "zoom did not make " + deepProc.name + " the root");
  await screenshot("zoom");
  await page.click("#unzoom");
  await page.waitForFunction(() => document.querySelector(".tt-row")?.dataset.kind === "root");
  return n;
}

// Source pane, URL state, keyboard, filter and find.
async function sourceAndState(td) {
  let rows;
  // 6. Source pane: a statement row opens its file with its line's cost; the cost equals
  // the sum of the flat view's rows of that file and line (all contexts).
  rows = await domRows();
  const stmt = rows.find((r) => r.kind === "line" && /:\d+$/.test(r.name));
  check(stmt, "no statement row after the hot path");
  await clickRow(stmt.name);
  const line = Number(stmt.name.split(":").pop());
  await page.waitForSelector('.src-line.target[data-line="' + line + '"]');
  const cost = Number(await page.getAttribute('.src-line[data-line="' + line + '"]', "data-cost"));
  const flat = report("flat");
  const base = stmt.name.split(":")[0];
  const want = flat.nodes
    .filter((x) => x.kind === "line" && x.line === line && x.file && path.basename(x.file) === base)
    .reduce((s, x) => s + x.exclusive[0], 0);
  check(close(cost, want), "source line " + stmt.name + " costs " + cost + ", report's flat view " + want);
  const loopMarked = await page.$$eval(".src-line.in-loop", (l) => l.length);
  check(loopMarked > 0, "no line of the source pane is marked as in a loop");
  await screenshot("source");
  // 7. Hash state: a reload comes back to the same view and selection.
  const sel = (await domRows()).find((r) => r.selected);
  await page.reload();
  await ready();
  await page.waitForSelector('.tt-row.selected[data-id="' + sel.id + '"]');
  // 8. Keyboard: Home selects the root, ArrowDown the next row, ArrowLeft collapses it,
  // ArrowRight expands it again.
  await page.focus(".tt-body");
  await page.keyboard.press("Home");
  await page.waitForSelector('.tt-row.selected[data-kind="root"]');
  await page.keyboard.press("ArrowDown");
  rows = await domRows();
  const second = rows[1];
  await page.waitForSelector('.tt-row.selected[data-id="' + second.id + '"]');
  await page.keyboard.press("ArrowLeft");
  await page.waitForFunction((k) => document.querySelectorAll(".tt-row").length < k, rows.length);
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction((k) => document.querySelectorAll(".tt-row").length === k, rows.length);
  // 9. Filter by regex: every row shown matches or leads to a match; Enter jumps to one.
  await page.keyboard.press("/");
  check(await page.evaluate(() => document.activeElement.id === "filter"), "/ does not focus the filter");
  await page.keyboard.type("crunch");
  await page.waitForFunction(() => location.hash.includes("f=crunch"));
  rows = await domRows();
  for (let i = 1; i < rows.length; i++) {
    const leaf = i + 1 >= rows.length || rows[i + 1].depth <= rows[i].depth;
    if (leaf) check(/crunch/i.test(rows[i].name), "filter 'crunch' shows " + rows[i].name);
  }
  check(rows.some((r) => r.name === "crunch"), "filter 'crunch' hides crunch");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => /crunch/i.test(document.querySelector(".tt-row.selected .name")?.textContent || ""));
  await page.fill("#filter", "");
  await page.dispatchEvent("#filter", "input");
  await idle();
  return 0;
}

// Bottom-up and flat views, flatten.
async function otherViews(td) {
  let n = 0;
  let rows;
  // 11. Bottom-up and flat views, flatten.
  for (const [tab, name] of [["bottom-up", "bu"], ["flat", "flat"]]) {
    await page.click('#tabs button[data-view="' + tab + '"]');
    await page.waitForFunction((v) => document.body.dataset.view === v, tab);
    await idle();
    n += compareRows(await domRows(), report(name), tab);
    await screenshot(tab);
  }
  // 11b. Threads pane of a bottom-up row: its values per thread add up to report's row.
  await page.click('#tabs button[data-view="bottom-up"]');
  await page.waitForFunction(() => document.body.dataset.view === "bottom-up");
  await idle();
  const buProc = report("bu").nodes.filter((x) => x.kind === "procedure" && x.name !== "main")
    .reduce((a, b) => (b.inclusive[0] > a.inclusive[0] ? b : a));
  await page.click('#right-tabs button[data-pane="threads"]');
  const buRow = await clickRow(buProc.name);
  await page.waitForSelector('#threads .thr[data-node="' + buRow.id + '"] .barrow');
  const buBars = await page.$$eval("#threads .barrow", (b) => b.map((x) => Number(x.dataset.value)));
  check(buBars.filter((v) => v > 0).length >= 2, "bottom-up " + buProc.name + ": " + buBars.length + " thread bars");
  const buSum = buBars.reduce((a, b) => a + b, 0);
  check(close(buSum, buProc.inclusive[0]), "bottom-up " + buProc.name + " per thread sums to " + buSum + ", report " + buProc.inclusive[0]);
  await screenshot("threads-bu");
  await page.click('#right-tabs button[data-pane="source"]');
  await page.click('#tabs button[data-view="flat"]');
  await page.waitForFunction(() => document.body.dataset.view === "flat");
  await idle();
  await page.click("#flatten");
  await idle();
  rows = await domRows();
  const fl = report("flat-fl1");
  const flTop = fl.nodes.filter((x) => x.parent === 0).map((x) => x.name).sort();
  const domTop = rows.filter((r) => r.depth === 1).map((r) => r.name).sort();
  check(JSON.stringify(flTop) === JSON.stringify(domTop), "flatten: " + domTop + " vs report " + flTop);
  await page.click("#unflatten");
  return n;
}

// Flame graph, call graph and sandwich.
async function pictures(td) {
  // 12. Flame graph: the root frame holds the total; a click zooms.
  await page.click('#tabs button[data-view="flame"]');
  await page.waitForSelector("#flame-svg g.fl");
  const frames = await page.$$eval("#flame-svg g.fl", (g) => g.map((x) => ({ id: x.dataset.id, name: x.dataset.name, v: Number(x.dataset.v) })));
  check(close(frames[0].v, td.nodes[0].inclusive[0]), "flame root " + frames[0].v + " != total " + td.nodes[0].inclusive[0]);
  check(frames.length >= 5, "flame graph has " + frames.length + " frames");
  await page.hover('#flame-svg g.fl[data-id="' + frames[1].id + '"]');
  check(!(await page.isHidden("#tooltip")), "no tooltip over a frame");
  await screenshot("flame");
  await page.click('#flame-svg g.fl[data-id="' + frames[1].id + '"]');
  await page.waitForFunction((id) => document.querySelector("#flame-svg g.fl")?.dataset.id === id, frames[1].id);
  // 13. Call graph: Graphviz boxes; a click selects the procedure (sandwich pane).
  await page.click('#tabs button[data-view="graph"]');
  await page.waitForSelector("#graph-view g.node", { timeout: 15000 });
  const boxes = await page.$$eval("#graph-view g.node", (g) => g.length);
  check(boxes >= 3, "call graph has " + boxes + " boxes");
  await page.$eval("#graph-view g.node", (g) => g.dispatchEvent(new MouseEvent("click", { bubbles: true })));
  await page.waitForSelector("#sandwich .sw-callers svg");
  await screenshot("callgraph");
  // A caller or callee in the sandwich opens that procedure's sandwich.
  const other = await page.$$eval("#sandwich g.fl", (g) => g
    .filter((x) => x.dataset.depth !== "0" && ["procedure", "caller"].includes(x.dataset.kind))
    .map((x) => x.dataset.name));
  check(other.length > 0, "the sandwich shows no caller or callee procedure");
  await page.$eval('#sandwich g.fl[data-depth]:not([data-depth="0"])[data-name="' + other[0] + '"]',
    (g) => g.dispatchEvent(new MouseEvent("click", { bubbles: true })));
  await page.waitForFunction((name) => document.querySelector("#sandwich .sw-name")?.textContent === name, other[0]);
  return 0;
}

// Threads pane and one thread's view.
async function threadSteps(td) {
  let n = 0;
  // 14. Threads: a worker's values per thread; picking one thread shows its view.
  await page.click('#tabs button[data-view="top-down"]');
  await idle();
  await page.click('#right-tabs button[data-pane="threads"]');
  await page.click('.tt-row[data-kind="root"] .name');
  await page.click("#hot");
  await page.waitForSelector(".tt-row.hot");
  await idle();
  const hotProc = (await domRows()).filter((r) => r.kind === "procedure" && r.hot).pop();
  await clickRow(hotProc.name);
  await page.waitForSelector("#threads .barrow");
  const bars = await page.$$eval("#threads .barrow", (b) => b.map((x) => Number(x.dataset.value)));
  check(bars.length >= 2, "threads pane shows " + bars.length + " threads");
  for (let i = 1; i < bars.length; i++) check(bars[i - 1] >= bars[i], "thread bars not sorted");
  await screenshot("threads");
  const th = fs.readFileSync(path.join(jsonDir, "thread.txt"), "utf8").trim();
  const profiles = await page.evaluate(() => window.cpApp.profiles);
  const [pid, tidx] = th.split(":").map(Number);
  const prof = profiles.find((p) => p.pid === pid && p.tidx === tidx);
  check(prof, "no profile for thread " + th);
  await page.selectOption("#threadsel", "t" + prof.id);
  await page.waitForFunction(() => location.hash.includes("th=t"));
  await idle();
  const tRows = await domRows();
  n += compareRows(tRows.filter((r) => r.depth <= 1), report("thread"), "thread " + th);
  await screenshot("thread");
  // A statistic over the threads for the whole view: --stat max.
  await page.selectOption("#threadsel", "max");
  await page.waitForFunction(() => location.hash.includes("th=max"));
  await idle();
  n += compareRows((await domRows()).filter((r) => r.depth <= 1), report("max"), "stat max");
  return n;
}

async function serverChecks() {
  const td = report("td");
  let n = await treeSteps(td);
  n += await sourceAndState(td);
  n += await derivedMetric(td);
  n += await otherViews(td);
  n += await pictures(td);
  n += await threadSteps(td);
  return n;
}

async function staticChecks() {
  const td = report("td");
  let rows = await domRows();
  let n = compareRows(rows, td, "static file, first view");
  await page.click("#hot");
  await page.waitForSelector(".tt-row.hot");
  await idle();
  rows = await domRows();
  n += compareRows(rows, td, "static file, hot path");
  // The source and the per-thread values are in the file too.
  const stmt = rows.find((r) => r.kind === "line" && /:\d+$/.test(r.name));
  await clickRow(stmt.name);
  await page.waitForSelector('.src-line.target[data-line="' + stmt.name.split(":").pop() + '"]');
  await screenshot("hot-path");
  await page.click('#right-tabs button[data-pane="threads"]');
  await clickRow(rows.filter((r) => r.kind === "procedure" && r.hot).pop().name);
  await page.waitForSelector("#threads .barrow");
  const bars = await page.$$eval("#threads .barrow", (b) => b.length);
  check(bars >= 2, "static file: threads pane shows " + bars + " threads");
  await page.click('#tabs button[data-view="flame"]');
  await page.waitForSelector("#flame-svg g.fl");
  await page.click('#tabs button[data-view="bottom-up"]');
  await idle();
  n += compareRows(await domRows(), report("bu"), "static file, bottom-up");
  n += await derivedMetric(td);
  // The URL keeps the derived metric: a reload shows it again.
  await page.reload();
  await ready();
  await page.waitForSelector('.tt-row .tt-num[data-metric="half"]');
  n += compareRows(await domRows(), report("derived"), "static file, derived metric after reload");
  return n;
}

// Opens target in a new context of the browser and runs the checks of the current mode.
async function runMode(browser, target) {
  const errors = [];
  const requests = [];
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 820 } });
  page = await ctx.newPage();
  page.setDefaultTimeout(10000);
  shot = 0;
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("request", (r) => requests.push(r.url()));
  if (mode === "static") await ctx.route(/^https?:/, (r) => r.abort());
  try {
    await page.goto(mode === "static" ? "file://" + path.resolve(target) : target);
    await ready();
    const n = mode === "static" ? await staticChecks() : await serverChecks();
    check(errors.length === 0, "errors in the page: " + errors.join("; "));
    const net = requests.filter((u) => !u.startsWith("file:") && !u.startsWith("data:"));
    check(mode !== "static" || net.length === 0, "the static file made requests: " + net.join(", "));
    console.log(mode + ": ok, " + n + " values equal to report's, " + shot + " screenshots");
  } catch (e) {
    await screenshot("failure").catch(() => {});
    throw new Error(mode + ": " + e.message + (errors.length ? "\npage errors: " + errors.join("; ") : ""));
  } finally {
    await ctx.close();
  }
}

fs.mkdirSync(outDir, { recursive: true });
withBrowser(async (browser) => {
  mode = "server";
  await runMode(browser, url);
  mode = "static";
  await runMode(browser, htmlFile);
});
