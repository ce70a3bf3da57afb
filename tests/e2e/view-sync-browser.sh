#!/bin/bash
# The viewer's Sync objects pane in a real browser (Debian's chromium, headless, driven by
# playwright-core from tools/node): a run of tests/workloads/syncobj.c under -e wait; the
# pane lists report --view sync's objects in order (name, kind, waits, top call site), on
# the served page and in the self-contained --html file. Screenshots go to
# build/test-output/view-sync-browser/.
. "$(dirname "$0")/lib.sh"

NODE_TOOLS=$CP_SOURCE_DIR/tools/node/node_modules
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -n "$CHROMIUM" ] || skip "chromium is not installed (scripts/install-deps.sh --test installs it)"
require_tool node
[ -f "$NODE_TOOLS/playwright-core/package.json" ] ||
	skip "playwright-core is not installed (scripts/install-node-tools.sh installs it)"
export CHROMIUM
OUT=$CP_BUILD_DIR/test-output/view-sync-browser
rm -rf "$OUT"
mkdir -p "$OUT"

run "$CALLPATH" record -q -e wait -o "$WORK/m" -- "$CP_WORKLOADS/syncobj.O2"
run "$CALLPATH" analyze -q "$WORK/m"
run "$CALLPATH" report "$WORK/m/callpath.db" --view sync --format json
cp "$WORK/run.out" "$WORK/rep.json"
run "$CALLPATH" view --html "$WORK/profile.html" "$WORK/m/callpath.db"
"$CALLPATH" view --no-open --port 0 "$WORK/m/callpath.db" >"$WORK/server.out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$WORK"' EXIT
wait_for_output "$WORK/server.out" 'token=' || {
	cat "$WORK/server.out" >&2
	fail "callpath view printed no URL"
}
url=$(grep -o 'http://[^ ]*token=[0-9a-fA-F]*' "$WORK/server.out" | head -1)
[ -n "$url" ] || fail "no URL with a token in: $(cat "$WORK/server.out")"
node "$CP_SOURCE_DIR/tests/e2e/view-sync-browser.js" "$url" "$WORK/profile.html" "$WORK/rep.json" "$OUT" ||
	fail "the Sync objects pane (screenshots in $OUT)"
note "ok"
