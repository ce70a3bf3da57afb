#!/usr/bin/env bash
# Installs the npm packages the tests use (speedscope: its file-format schema, read by the
# export tests; playwright-core: drives the system's chromium in view-browser), pinned by tools/node/package-lock.json, into tools/node/node_modules
# (git-ignored). Idempotent; does nothing when npm is missing (those checks then say they did not run).
set -euo pipefail
here=$(cd "$(dirname "$0")/../tools/node" && pwd)
if ! command -v npm >/dev/null 2>&1; then
  echo "install-node-tools: npm not found; the speedscope export check will be skipped"
  exit 0
fi
if [ -f "$here/node_modules/speedscope/package.json" ] &&
  [ -f "$here/node_modules/playwright-core/package.json" ]; then
  echo "install-node-tools: speedscope and playwright-core present"
  exit 0
fi
echo "install-node-tools: npm ci (speedscope, playwright-core)"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
