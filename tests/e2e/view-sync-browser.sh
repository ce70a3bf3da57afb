#!/bin/bash
# The viewer's Sync objects pane in a real browser (Debian's chromium, headless, driven by
# playwright-core from tools/node): a run of tests/workloads/syncobj.c under -e wait; the
# pane lists report --view sync's objects in order (name, kind, waits, top call site), on
# the served page and in the self-contained --html file. Screenshots go to
# build/test-output/view-sync-browser/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/view-helpers/serve.sh"
. "$(dirname "$0")/view-helpers/browser.sh"
require_browser
OUT=$CP_BUILD_DIR/test-output/view-sync-browser
rm -rf "$OUT"
mkdir -p "$OUT"

run "$CALLPATH" record -q -e wait -o "$WORK/m" -- "$CP_WORKLOADS/syncobj.O2"
run "$CALLPATH" analyze -q "$WORK/m"
run "$CALLPATH" report "$WORK/m/callpath.db" --view sync --format json
cp "$WORK/run.out" "$WORK/rep.json"
run "$CALLPATH" view --html "$WORK/profile.html" "$WORK/m/callpath.db"
view_start "$WORK/m/callpath.db"
node "$CP_SOURCE_DIR/tests/e2e/view-sync-browser.js" "$VIEW_URL" "$WORK/profile.html" "$WORK/rep.json" "$OUT" ||
	fail "the Sync objects pane (screenshots in $OUT)"
note "ok"
