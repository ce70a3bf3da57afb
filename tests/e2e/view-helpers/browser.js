// Shared by the browser tests: runs fn(browser) on headless Chromium (the system's, through
// playwright-core from tools/node), printing "FAIL: message" and setting the exit status
// when it throws.
"use strict";
const path = require("path");
const { chromium } = require(path.join(__dirname, "../../../tools/node/node_modules/playwright-core"));

exports.withBrowser = async function (fn) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu"],
  });
  try {
    await fn(browser);
  } catch (e) {
    console.error("FAIL: " + e.message);
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
};
