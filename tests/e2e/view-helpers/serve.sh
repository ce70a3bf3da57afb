# Sourced by tests/e2e/view-*.sh (after lib.sh): starts `callpath view` in the background on a
# free port and talks to it with curl. The server is killed when the test exits.

# view_start PATH [options...]: sets VIEW_PID, VIEW_URL (with the token), VIEW_BASE
# (http://127.0.0.1:PORT), VIEW_PORT, VIEW_TOKEN.
view_start() {
	require_tool curl
	"$CALLPATH" view --no-open "$@" >"$WORK/view.url" 2>"$WORK/view.err" &
	VIEW_PID=$!
	trap 'kill $VIEW_PID 2>/dev/null; wait $VIEW_PID 2>/dev/null; rm -rf "$WORK"' EXIT
	wait_for_output "$WORK/view.url" '^http://' || {
		cat "$WORK/view.err" >&2
		fail "callpath view printed no URL"
	}
	VIEW_URL=$(head -1 "$WORK/view.url")
	VIEW_BASE=${VIEW_URL%%/\?token=*}
	VIEW_TOKEN=${VIEW_URL##*token=}
	VIEW_PORT=${VIEW_BASE##*:}
}

# vget PATH [curl options...]: GET $VIEW_BASE$PATH with the token header; the body goes to
# $WORK/body, the headers to $WORK/headers; prints the status.
vget() {
	local path=$1
	shift
	curl -s --path-as-is -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' \
		-H "X-Callpath-Token: $VIEW_TOKEN" "$@" "$VIEW_BASE$path"
}

# vget_ready PATH [curl options...]: as vget, asked again while the answer is 202 (the whole
# profile loading; at most 60 s).
vget_ready() {
	local got i
	for i in $(seq 600); do
		got=$(vget "$@")
		[ "$got" = 202 ] || break
		sleep 0.1
	done
	echo "$got"
}

# vraw PATH [curl options...]: as vget without the token.
vraw() {
	local path=$1
	shift
	curl -s --path-as-is -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' "$@" \
		"$VIEW_BASE$path"
}

# expect_status STATUS PATH [curl options...]: vget must answer STATUS.
expect_status() {
	local want=$1 got
	shift
	got=$(vget_ready "$@")
	[ "$got" = "$want" ] || fail "GET $1 answered $got, expected $want: $(head -c 300 "$WORK/body")"
}

# vjson FILE PATH: vget_ready PATH (must be 200) into FILE.
vjson() {
	local file=$1 got
	got=$(vget_ready "$2")
	[ "$got" = 200 ] || fail "GET $2 answered $got: $(head -c 300 "$WORK/body")"
	cp "$WORK/body" "$file"
}
