#!/bin/bash
# `callpath view` in a real browser (Debian's chromium, headless, driven by playwright-core
# from tools/node): the tree table's rows and values equal `report --format json` in the
# top-down, bottom-up and flat views, after expanding, the hot path, sorting, zoom and
# flatten; the source pane's line cost equals the flat view's statements; the flame graph,
# the call graph and the threads pane draw; one thread's view equals `report --thread`,
# the max over threads `report --stat max`.
# Then the self-contained `--html` file opens with no network and shows the same rows.
# Screenshots go to build/test-output/view-browser/ (CP_VIEW_SCREENSHOT=FILE also copies
# the one of the source pane there, e.g. docs/img/view.png).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"
. "$(dirname "$0")/view-helpers/browser.sh"
require_browser

OUT=$CP_BUILD_DIR/test-output/view-browser
rm -rf "$OUT"
mkdir -p "$OUT" "$WORK/j"

report_record "$WORK/m" "$CP_WORKLOADS/threads.O2" 4
pid=$(basename "$(ls "$WORK"/m/*.proc | head -1)" | cut -d. -f1)
report_json "$WORK/j/td.json" "$WORK/m"
# The page adds the derived metric half before it shows the bottom-up and flat views.
m0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metrics"][0]["name"])' "$WORK/j/td.json")
report_json "$WORK/j/derived.json" "$WORK/m" --metric "half=$m0/2"
report_json "$WORK/j/bu.json" "$WORK/m" --view bottom-up --metric "half=$m0/2"
report_json "$WORK/j/flat.json" "$WORK/m" --view flat --metric "half=$m0/2"
report_json "$WORK/j/flat-fl1.json" "$WORK/m" --view flat --flatten 1
report_json "$WORK/j/hot.json" "$WORK/m" --hot-path
report_json "$WORK/j/thread.json" "$WORK/m" --thread "$pid:1" --metric "half=$m0/2"
report_json "$WORK/j/max.json" "$WORK/m" --stat max --metric "half=$m0/2"
echo "$pid:1" >"$WORK/j/thread.txt"

"$CALLPATH" view --no-open --port 0 "$WORK/m" >"$WORK/server.out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$WORK"' EXIT
wait_for_output "$WORK/server.out" 'token=' || {
	cat "$WORK/server.out" >&2
	fail "callpath view printed no URL"
}
url=$(grep -o 'http://[^ ]*token=[0-9a-fA-F]*' "$WORK/server.out" | head -1)
[ -n "$url" ] || fail "no URL with a token in: $(cat "$WORK/server.out")"

run "$CALLPATH" view --html "$WORK/profile.html" "$WORK/m"
node "$CP_SOURCE_DIR/tests/e2e/view-browser.js" "$url" "$WORK/profile.html" "$OUT" "$WORK/j" ||
	fail "the page (screenshots in $OUT)"
if [ -n "${CP_VIEW_SCREENSHOT:-}" ]; then
	cp "$OUT"/[0-9]*-source.png "$CP_VIEW_SCREENSHOT"
fi
kill "$server" 2>/dev/null
note "ok (screenshots in $OUT)"
