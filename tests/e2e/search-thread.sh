#!/bin/bash
# The Machine hierarchy: compute's hot loop runs in a second thread while main waits in
# pthread_join. The search starts from that thread's start routine too (a function entered
# from outside the executable), and refines the true foci to the thread holding them: the
# top 3 has compute's hot loop in the worker thread (not the main thread, tid = pid).
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
src=$CP_SOURCE_DIR/tests/workloads/search-loops.c
hot=$(grep -n "loop 3: the hot one" "$src" | cut -d: -f1)
run "$CALLPATH" search -q --hypotheses CPUBound --after 0.3 --for 12 --kill --format json \
	-o "$WORK/m" -- "$CP_WORKLOADS/search-loops.O2" 20 thread
cp "$WORK/run.out" "$WORK/r.json"
json_assert "$WORK/r.json" "(any(b['kind'] == 'loop' and b['function'] == 'compute'
    and b['line'] in ($hot, $hot + 1) and b['thread'] not in (None, d['pid'])
    for b in d['bottlenecks'][:3]))" "no hot loop in the worker thread in the top 3: $(head -c 3000 "$WORK/r.json")"
json_assert "$WORK/r.json" "(not any(n['thread'] == d['pid'] and n['state'] == 'true' and
    n['function'] == 'compute' for n in d['nodes']))" "compute true in the main thread"
json_assert "$WORK/r.json" "(any(n['function'] == 'rounds' and n['parent'] == -1 for n in d['nodes']))" \
	"the thread's start routine is not a root"
note "ok"
