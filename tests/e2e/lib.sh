# Shared helpers for the end-to-end tests. Each test script sources this file, runs
# callpath on workloads, and asserts on the shape of the result.
# Exit codes: 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE).
set -u

CP_SOURCE_DIR=${CP_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CP_BUILD_DIR=${CP_BUILD_DIR:-$CP_SOURCE_DIR/build}
CP_WORKLOADS=${CP_WORKLOADS:-$CP_BUILD_DIR/tests/workloads}
CALLPATH=${CALLPATH:-$CP_BUILD_DIR/callpath}
TEST_NAME=$(basename "$0" .sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cp-e2e-$TEST_NAME.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

fail() {
	echo "FAIL [$TEST_NAME]: $*" >&2
	exit 1
}

skip() {
	echo "SKIP [$TEST_NAME]: $*" >&2
	exit 77
}

note() {
	echo "[$TEST_NAME] $*"
}

# Runs a command, failing the test (with its output) if it exits non-zero.
run() {
	"$@" >"$WORK/run.out" 2>"$WORK/run.err" || {
		cat "$WORK/run.out" "$WORK/run.err" >&2
		fail "command failed ($?): $*"
	}
}

# Asserts a python3 expression over JSON read from a file: json_assert FILE 'expr' 'message'
# In the expression, `d` is the parsed document.
json_assert() {
	python3 - "$1" "$2" "$3" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2])
if not ok:
    print("FAIL: " + sys.argv[3], file=sys.stderr)
    sys.exit(1)
PY
}

require_tool() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"
}

# Kills, with SIGKILL, the program that `callpath record` (running as pid $1 in the
# background) runs, and waits for callpath: its exit status is the function's.
kill_recorded_program() {
	local child
	child=$(pgrep -P "$1" | head -1)
	[ -n "$child" ] || fail "could not find the program to kill"
	kill -KILL "$child"
	wait "$1"
}

# Waits up to 10 s for a line matching PATTERN in FILE (a background program's output).
wait_for_output() {
	for _ in $(seq 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# Waits (10 s at most) until a workload started in the background wrote its pid into FILE.
wait_for_pid() {
	for _ in $(seq 200); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# Fails (does not skip) when a file the build makes is missing: a missing build artifact
# (the callpath executable, the runtime, a workload, a fixture) is a broken build, not an
# environment without some feature. Exit 77 is only for the environment.
require_built() {
	local f
	for f in "$@"; do
		[ -e "$f" ] || fail "$f is not built (scripts/build.sh builds it)"
	done
}

# mpirun as the tests run it: as root in containers, more ranks than cores. Skips when
# Open MPI or callpath's MPI library is missing.
require_mpi() {
	require_tool mpirun
	[ -e "$CP_BUILD_DIR/libcallpath-mpi.so" ] || skip "callpath was built without MPI"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export OMPI_MCA_rmaps_base_oversubscribe=1
}

# Runs a job, output in $WORK/NAME.out and .err, failing with them: mpi_run NAME CMD...
mpi_run() {
	local name=$1
	shift
	"$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || {
		cat "$WORK/$name.out" "$WORK/$name.err" >&2
		fail "failed: $*"
	}
}

# One rank's report as JSON: mpi_report DIR RANK OUT [report options]
mpi_report() {
	local dir=$1 rank=$2 out=$3
	shift 3
	"$CALLPATH" report "$dir" --rank "$rank" --format json --threshold 0 "$@" >"$out" \
		2>"$WORK/report.err" || fail "report --rank $rank: $(cat "$WORK/report.err")"
}

# synthetic_measurement DIR MODE ARGS...: a measurement written by bench/analyze/gen.c
# (modes threads, procs, ranks; see its header) whose frames are addresses of libc's .text,
# so that correlation does real structure lookups: thousands of contexts in a second.
synthetic_measurement() {
	require_tool cc
	[ -x "$WORK/gen" ] ||
		cc -O2 -D_GNU_SOURCE -I"$CP_SOURCE_DIR/src" "$CP_SOURCE_DIR/bench/analyze/gen.c" \
			-o "$WORK/gen" -lm || fail "cannot build bench/analyze/gen.c"
	local libc bid lo size hi
	libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
	bid=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
	read -r lo size < <(readelf -SW "$libc" | awk '$2 == ".text" {print "0x"$4, "0x"$6}')
	hi=$(printf '0x%x' $((lo + size)))
	local dir=$1
	shift
	run "$WORK/gen" "$dir" "$libc" "$bid" "$lo" "$hi" "$@"
}
