# Sourced by tests/e2e/report-*.sh (after lib.sh): records a workload for the report tests.
# Uses `callpath record` when it is implemented, else preloads the runtime directly (the
# runtime is configured by CALLPATH_* variables); skips when neither produces files.

RUNTIME=${RUNTIME:-$CP_BUILD_DIR/libcallpath-rt.so}

# report_record OUTDIR PROGRAM [ARGS...]
report_record() {
	local out=$1
	shift
	[ -x "$CALLPATH" ] || skip "no callpath executable at $CALLPATH"
	[ -x "$1" ] || skip "workload $1 is not built"
	rm -rf "$out"
	if ! "$CALLPATH" record --help 2>&1 | grep -q "not implemented"; then
		"$CALLPATH" record -o "$out" -- "$@" >"$WORK/record.out" 2>"$WORK/record.err" || {
			cat "$WORK/record.out" "$WORK/record.err" >&2
			fail "callpath record $* failed"
		}
	else
		[ -f "$RUNTIME" ] || skip "runtime $RUNTIME not built"
		mkdir -p "$out"
		CALLPATH_OUTPUT=$out CALLPATH_EVENTS=cputime LD_PRELOAD=$RUNTIME "$@" \
			>"$WORK/record.out" 2>"$WORK/record.err" || fail "$* failed under the runtime"
	fi
	ls "$out"/*.proc >/dev/null 2>&1 || skip "the runtime wrote no measurement files in $out"
}

# report_json OUTFILE DIR [report options...]: runs callpath report --format json.
report_json() {
	local file=$1
	shift
	"$CALLPATH" report "$@" --format json -o "$file" 2>"$WORK/report.err" || {
		cat "$WORK/report.err" >&2
		fail "callpath report $* failed"
	}
}
