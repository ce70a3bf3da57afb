// The Sync objects pane of `callpath view` in headless Chromium (playwright-core): its rows
// (object, kind, waits, top call site) are report --view sync --format json's objects, in
// order, on the served page and in the --html file (no network).
// Run by view-sync-browser.sh: node view-sync-browser.js URL FILE REPORT.json OUTDIR
"use strict";
const path = require("path");
const fs = require("fs");
const { withBrowser } = require(path.join(__dirname, "view-helpers/browser.js"));

const [url, htmlFile, reportFile, outDir] = process.argv.slice(2);
const rep = JSON.parse(fs.readFileSync(reportFile, "utf8"));

async function paneRows(page) {
  await page.waitForSelector("body[data-ready]", { timeout: 15000 });
  await page.click('#right-tabs button[data-pane="sync"]');
  await page.waitForSelector("#sync table.sync-objects tbody tr", { timeout: 10000 });
  return page.$$eval("#sync table.sync-objects tbody tr", (rows) =>
    rows.map((r) => Array.from(r.children).map((td) => td.textContent)));
}

async function check(browser, target, mode) {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 820 } });
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  if (mode === "static") await ctx.route(/^https?:/, (r) => r.abort());
  try {
    await page.goto(mode === "static" ? "file://" + path.resolve(target) : target);
    const rows = await paneRows(page);
    await page.screenshot({ path: path.join(outDir, mode + "-sync.png") });
    const want = rep.objects.slice(0, 100);
    if (rows.length !== want.length)
      throw new Error(rows.length + " rows, report has " + want.length + " objects");
    want.forEach((o, i) => {
      const [name, kind, , , waits, site] = rows[i];
      if (name !== o.name || kind !== o.kind || waits !== String(o.waits) || site !== o.sites[0].site)
        throw new Error("row " + i + ": " + rows[i].join(" | ") + "; report: " + JSON.stringify(o));
    });
    if (errors.length) throw new Error("page errors: " + errors.join("; "));
    console.log(mode + ": ok, " + rows.length + " objects");
  } finally {
    await ctx.close();
  }
}

fs.mkdirSync(outDir, { recursive: true });
withBrowser(async (browser) => {
  await check(browser, url, "server");
  await check(browser, htmlFile, "static");
});
