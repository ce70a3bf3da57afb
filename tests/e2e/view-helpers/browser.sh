# Sourced by the browser tests (after lib.sh): skips unless Debian's chromium, node and
# playwright-core (tools/node, scripts/install-node-tools.sh) are there; exports CHROMIUM.
require_browser() {
	local tools=$CP_SOURCE_DIR/tools/node/node_modules
	CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
	[ -n "$CHROMIUM" ] || skip "chromium is not installed (scripts/install-deps.sh --test installs it)"
	require_tool node
	[ -f "$tools/playwright-core/package.json" ] ||
		skip "playwright-core is not installed (scripts/install-node-tools.sh installs it)"
	export CHROMIUM
}
