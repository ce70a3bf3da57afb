#!/bin/bash
# OpenMP (GCC, libgomp): the samples of every thread in a parallel region or task hang under
# the calling context that started it, never under a thread root (docs/internals/omp.md).
# omp-regions (tests/workloads/omp-regions.c), 3 threads, checked in the database by
# omp-check.py:
#  - imbalance: region_work's region, run from caller_a and from caller_b (two contexts),
#    all 3 threads under each, the planted 3:1:1 imbalance (max/mean about 1.8) held by
#    the master;
#  - nested: the inner region under the outer one (main > nested > nested._omp_fn.0 >
#    inner_work > inner_work._omp_fn.0), on the 4 threads of the two inner teams;
#  - tasks: task_body under the loop that created the tasks (tasks._omp_fn.0), whichever
#    thread ran them, also when run from the region's final barrier;
#  - dynamic: a schedule(dynamic) parallel loop, all 3 threads under dynamic.
# Built at -O2 and -O0.
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

for wl in "$CP_WORKLOADS/omp-regions.O2" "$CP_WORKLOADS/omp-regions.O0"; do
	require_built "$wl"
	rm -rf "$WORK"/imbalance "$WORK"/nested "$WORK"/tasks "$WORK"/dynamic
	measure "$wl" imbalance 200
	check imbalance region_work._omp_fn.0 'caller_a>region_work|caller_b>region_work' 3 1.4:2.4
	measure "$wl" nested 200
	check nested inner_work._omp_fn.0 'nested>nested._omp_fn.0>inner_work' 4
	measure "$wl" tasks 400
	check tasks task_body 'tasks>tasks._omp_fn.0,tasks>tasks._omp_fn.0>tasks._omp_fn.1' 3
	measure "$wl" dynamic 100
	check dynamic dynamic._omp_fn.0 'dynamic' 3
	note "ok: $(basename "$wl")"
done
