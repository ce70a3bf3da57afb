#!/usr/bin/env bash
# Installs the npm packages the export tests read our files with (speedscope: its
# file-format schema), pinned by tools/node/package-lock.json, into tools/node/node_modules
# (git-ignored). Idempotent; does nothing when npm is missing (the tests then skip).
set -euo pipefail
here=$(cd "$(dirname "$0")/../tools/node" && pwd)
if ! command -v npm >/dev/null 2>&1; then
  echo "install-node-tools: npm not found; the speedscope export check will be skipped"
  exit 0
fi
if [ -f "$here/node_modules/speedscope/package.json" ]; then
  echo "install-node-tools: speedscope present"
  exit 0
fi
echo "install-node-tools: npm ci (speedscope)"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
