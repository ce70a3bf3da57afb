# Sourced by tests/e2e/report-*.sh (after lib.sh): records a workload for the report tests.

RUNTIME=${RUNTIME:-$CP_BUILD_DIR/libcallpath-rt.so}

# report_record OUTDIR PROGRAM [ARGS...]: callpath record -o OUTDIR -- PROGRAM ARGS...;
# fails when it fails or writes no thread file.
report_record() {
	local out=$1
	shift
	require_built "$CALLPATH" "$1"
	rm -rf "$out"
	"$CALLPATH" record -o "$out" -- "$@" >"$WORK/record.out" 2>"$WORK/record.err" || {
		cat "$WORK/record.out" "$WORK/record.err" >&2
		fail "callpath record $* failed"
	}
	ls "$out"/*.proc >/dev/null 2>&1 || fail "callpath record wrote no process file in $out"
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
