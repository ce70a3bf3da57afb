#!/bin/bash
# omp-idle blame shifting (docs/internals/omp.md, "Idle workers"): omp-regions idle runs
# serial_init on the master between balanced regions, half of the time; its worker spins
# meanwhile (OMP_WAIT_POLICY=active). Their samples must land on serial_init's context
# as omp-idle, about the master's time there, not under its thread root
# (omp-idle.py). GCC's libgomp (-O2) and, when built, clang's libomp (OMPT; spinning
# forever with KMP_BLOCKTIME=infinite, but its workers yield the CPU, so the amount is
# not checked, only where it lands and that the workers' time is under main). 2 threads:
# with more threads than CPUs (2 here) libgomp throttles its spinning and idle workers
# sleep, which costs no CPU time and so leaves no samples to blame.
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH"
python3 -c "import sqlite3" 2>/dev/null || skip "python3 has no sqlite3 module"
for b in O2 clang; do
	wl=$CP_WORKLOADS/omp-regions.$b
	if [ "$b" = clang ] && [ ! -x "$wl" ]; then
		note "no clang build of omp-regions: libomp not checked"
		continue
	fi
	require_built "$wl"
	rm -rf "$WORK/idle"
	KMP_BLOCKTIME=infinite OMP_WAIT_POLICY=active OMP_NUM_THREADS=2 run "$CALLPATH" record -o "$WORK/idle" -- \
		"$wl" idle 1000
	run "$CALLPATH" analyze -q "$WORK/idle"
	python3 "$CP_SOURCE_DIR/tests/e2e/omp-idle.py" "$WORK/idle/callpath.db" 2 \
		"$([ "$b" = clang ] && echo loose)" ||
		fail "$(basename "$wl"): the idle workers' time is not on serial_init as omp-idle"
	note "ok: $(basename "$wl")"
done
