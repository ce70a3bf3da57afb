#!/bin/bash
# OpenMP (GCC, libgomp): the samples of every thread in a parallel region or task hang under
# the calling context that started it, never under a thread root (docs/internals/omp.md).
# omp-regions (tests/workloads/omp-regions.c), 3 threads, checked in the database by
# omp-check.py:
#  - imbalance: region_work's region ("parallel region in region_work", the outlined
#    function region_work._omp_fn.0 renamed, its symbol kept as linkage name), run from
#    caller_a and from caller_b (two contexts), all 3 threads under each, the planted
#    3:1:1 imbalance (max/mean about 1.8) held by the master;
#  - nested: the inner region under the outer one (main > nested > parallel region in
#    nested > inner_work > parallel region in inner_work), on the 4 threads of the two
#    inner teams;
#  - tasks: task_body under the region's loop that created the tasks ("task in tasks" at
#    -O0, where the task function is not a tail call), whichever thread ran them, also
#    when run from the region's final barrier;
#  - dynamic: a schedule(dynamic) parallel loop, all 3 threads under dynamic;
#  - waits: 2 threads spinning while they wait, the 3:1 imbalance: the record summary's
#    "OpenMP regions" table lists the region once per caller; omp-work's max/mean about
#    1.5 held by the master, the worker's end-barrier wait inside the region as omp-wait
#    and 97 % of the time after start-up under main (omp-wait.py; with libomp the last
#    one only: a worker's end-barrier wait is under the region's call site but not in the
#    region's scope, OMPT does not name the outlined function).
# Built by GCC (libgomp) at -O2 and -O0; `omp-regions.sh clang` checks the clang build
# (LLVM libomp, through OMPT: omp-libomp.sh).
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH"
python3 -c "import sqlite3" 2>/dev/null || skip "python3 has no sqlite3 module"
CHECK=$CP_SOURCE_DIR/tests/e2e/omp-check.py

measure() { # workload mode units -> $WORK/<mode>/callpath.db
	OMP_NUM_THREADS=3 run "$CALLPATH" record -o "$WORK/$2" -- "$1" "$2" "$3"
	run "$CALLPATH" analyze -q "$WORK/$2"
}

check() { # mode function chains threads [imbalance]
	local mode=$1
	shift
	python3 "$CHECK" "$WORK/$mode/callpath.db" "$@" ||
		fail "$(basename "$wl") $mode: $1 is not in its calling context"
}

linkage() { # mode name symbol: the renamed procedure keeps its symbol as linkage name
	local got
	got=$(python3 -c 'import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("select linkage from procedure where name = ?", (sys.argv[2],)).fetchall()
print(",".join(sorted(set(x[0] or "" for x in r))))' "$WORK/$1/callpath.db" "$2")
	[ "$got" = "$3" ] || fail "$(basename "$wl") $1: '$2' has linkage name '$got', expected $3"
}

builds=${*:-O2 O0}
for b in $builds; do
	wl=$CP_WORKLOADS/omp-regions.$b
	if [ "$b" = clang ] && [ ! -x "$wl" ]; then
		command -v clang >/dev/null || skip "clang is not installed"
		skip "clang cannot build OpenMP programs here (libomp-dev is not installed?)"
	fi
	require_built "$wl"
	rm -rf "$WORK"/imbalance "$WORK"/nested "$WORK"/tasks "$WORK"/dynamic
	measure "$wl" imbalance 120
	check imbalance 'parallel region in region_work' 'caller_a>region_work|caller_b>region_work' \
		3 1.4:2.4
	symbol=region_work._omp_fn.0 # GCC's outlined function; clang's are all .omp_outlined.
	[ "$b" = clang ] && symbol=.omp_outlined.
	linkage imbalance 'parallel region in region_work' "$symbol"
	measure "$wl" nested 120
	check nested 'parallel region in inner_work' 'nested>parallel region in nested>inner_work' 4
	measure "$wl" tasks 240
	check tasks task_body 'tasks>parallel region in tasks,tasks>parallel region in tasks>task in tasks' 3
	measure "$wl" dynamic 60
	check dynamic 'parallel region in dynamic' 'dynamic' 3
	# 2 threads spinning when they wait (OMP_WAIT_POLICY=active): the worker waits in the
	# region's end barrier while the master does its 3x share (omp-wait, omp-work)
	rm -rf "$WORK/wait"
	OMP_WAIT_POLICY=active OMP_NUM_THREADS=2 run "$CALLPATH" record -o "$WORK/wait" -- "$wl" \
		imbalance 150
	cat "$WORK/run.out" "$WORK/run.err" >"$WORK/wait.out"
	grep -q "^OpenMP regions" "$WORK/wait.out" || fail "$(basename "$wl"): no OpenMP regions table"
	[ "$(grep -c 'parallel region in region_work at omp-regions.c:[0-9]*, called from' \
		"$WORK/wait.out")" = 2 ] || fail "$(basename "$wl"): the regions table lacks a caller"
	python3 "$CP_SOURCE_DIR/tests/e2e/omp-wait.py" "$WORK/wait/callpath.db" \
		"$([ "$b" = clang ] && echo main || echo strict)" || fail "$(basename "$wl"): omp-wait/omp-work are wrong"
	note "ok: $(basename "$wl")"
done
