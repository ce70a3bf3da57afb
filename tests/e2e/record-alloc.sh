#!/bin/bash
# -e alloc attributes allocated bytes, allocation calls and bytes still live at exit to
# the full calling context, exactly. The alloc workload allocates known amounts through
# one helper (alloc_block) from several callers, in two threads and a fork child (whose
# inherited blocks must not count as its leaks); a cputime metric runs alongside.
source "$(dirname "$0")/lib.sh"
require_tool cc
for v in O2 O0 O2fp; do
	run "$CALLPATH" record -q -e alloc -e cputime@200us -o "$WORK/m$v" -- "$CP_WORKLOADS/alloc.$v"
	"$CALLPATH" report "$WORK/m$v" --format json --threshold 0 >"$WORK/r$v.json" \
		2>"$WORK/err" || fail "$v: report failed: $(cat "$WORK/err")"
	python3 - "$WORK/r$v.json" "$v" <<'PY' || fail "$v: wrong allocation metrics"
import json, sys
d = json.load(open(sys.argv[1]))
names = [m["name"] for m in d["metrics"]]
for want in ["alloc-bytes", "alloc-calls", "leak-bytes", "cputime"]:
    assert want in names, (want, names)
ab, ac, lb = (names.index(x) for x in ["alloc-bytes", "alloc-calls", "leak-bytes"])
units = {m["name"]: m["unit"] for m in d["metrics"]}
assert units["alloc-bytes"] == "bytes" and units["alloc-calls"] == "calls", units

def incl(fn, m):
    return sum(n["inclusive"][m] for n in d["nodes"] if n["name"] == fn and n["kind"] == "procedure")

MiB = 1 << 20
want = {  # function: (bytes, calls, leaked bytes)
    "path_a": (10 * MiB, 10240, 0),
    "path_b": (30 * MiB, 30720, 0),
    "path_c": (1 * MiB, 256, 1 * MiB),
    "path_d": (557056, 16, 0),
    "path_e": (2 * MiB, 512, 64 * 1024),
    "path_f": (100 * 1000, 1000, 0),
    "path_h": (300 * 1000, 1000, 0),
}
bad = []
for fn, (b, c, l) in want.items():
    got = (incl(fn, ab), incl(fn, ac), incl(fn, lb))
    if got != (b, c, l):
        bad.append(f"{fn}: got {got}, want {(b, c, l)}")
# Every path goes through alloc_block's calling context except realloc's (path_d).
if incl("alloc_block", ab) != 43 * MiB + 400000:
    bad.append(f"alloc_block: {incl('alloc_block', ab)} bytes, want {43 * MiB + 400000}")
# The worker thread's bytes hang under its start routine, not under main.
if incl("worker", ab) != 30 * MiB or incl("main", ab) < 13 * MiB:
    bad.append(f"worker {incl('worker', ab)} main {incl('main', ab)}")
if bad:
    print(sys.argv[2] + ": " + "; ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
done
# Stress: four threads churning every allocation function while cputime samples land
# inside them, dlopen (the loader allocates), a fork child churning too. The runtime must
# not recurse or deadlock, must count every call, and must find no leak in balanced churn.
cat >"$WORK/churn.c" <<'C'
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void *volatile sink;
static void *churn(void *arg)
{
	(void)arg;
	for (long i = 0; i < 50000; i++) {
		void *p = malloc((size_t)(i % 512) + 1), *q = calloc(2, 64), *r = NULL;
		p = realloc(p, (size_t)(i % 1024) + 1);
		if (posix_memalign(&r, 64, 128))
			abort();
		void *a = aligned_alloc(64, 256), *m = memalign(32, 96);
		sink = p, sink = q, sink = r, sink = a, sink = m;
		free(p), free(q), free(r), free(a), free(m);
	}
	return NULL;
}
int main(void)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, churn, NULL);
	void *h = dlopen("libm.so.6", RTLD_NOW);
	churn(NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	if (h)
		dlclose(h);
	pid_t pid = fork();
	if (pid == 0) {
		churn(NULL);
		exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	return st != 0;
}
C
cc -O1 -o "$WORK/churn" "$WORK/churn.c" -lpthread -ldl || fail "cannot build the churn workload"
run "$CALLPATH" record -q -e alloc -e cputime@200us -o "$WORK/churn.m" -- "$WORK/churn"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/churn.m" >"$WORK/churn.json" || fail "invalid files"
# 6 allocations per iteration (realloc counts as one), 50000 iterations, 4 threads in the
# parent and 1 in the child: counted per process file.
json_assert "$WORK/churn.json" 'sorted(sum(t["totals"][1] for t in d["threads"] if t["pid"] == p["pid"]) // 1000 for p in d["procs"]) == [300, 1200]' \
	"allocation calls not all counted"
json_assert "$WORK/churn.json" 'all(sum(t["totals"][2] for t in d["threads"] if t["pid"] == p["pid"]) < (1 << 20) for p in d["procs"])' \
	"balanced churn shows leaks"
# Blocks leaked by a thread that ended before the process: its file is finished, so they
# cannot go into its leak-bytes; a NOTE gives their total instead.
cat >"$WORK/orphan.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
static void *volatile keep[8];
static void *leaker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 8; i++)
		keep[i] = malloc(10000);
	return NULL;
}
int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, leaker, NULL);
	pthread_join(t, NULL);
	return 0;
}
C
cc -O1 -o "$WORK/orphan" "$WORK/orphan.c" -lpthread || fail "cannot build the orphan workload"
run "$CALLPATH" record -q -e alloc -o "$WORK/orphan.m" -- "$WORK/orphan"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/orphan.m" >"$WORK/orphan.json" || fail "invalid files"
json_assert "$WORK/orphan.json" 'any("80000 byte(s) in 8 block(s) live at exit were allocated by threads that had already ended" in n for n in d["procs"][0]["notes"])' \
	"no NOTE for the leaks of an ended thread"
# Every process file has the metrics (registered at init), the fork child's own leaks only.
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/mO2" >"$WORK/c.json" || fail "invalid files"
json_assert "$WORK/c.json" 'len(d["procs"]) == 2 and all([m["name"] for m in p["metrics"]][:3] == ["alloc-bytes", "alloc-calls", "leak-bytes"] and all(m["source"] == 4 and m["mechanism"] == 5 for m in p["metrics"][:3]) for p in d["procs"])' \
	"process files lack the alloc metrics (source SYNC, mechanism INTERPOSE)"
# With the family off, nothing is recorded and the program still runs (bootstrap path).
run "$CALLPATH" record -q -e cputime -o "$WORK/off" -- "$CP_WORKLOADS/alloc.O2"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/off" >"$WORK/off.json" || fail "invalid files"
json_assert "$WORK/off.json" 'all(len(p["metrics"]) == 1 for p in d["procs"])' "alloc metrics without -e alloc"
# A period makes no sense for a trigger family: the runtime refuses it.
CALLPATH_OUTPUT=$WORK/per CALLPATH_EVENTS=alloc@10 LD_PRELOAD=$CP_BUILD_DIR/libcallpath-rt.so \
	"$CP_WORKLOADS/alloc.O2" 2>"$WORK/per.err" || fail "the program failed with a bad spec"
grep -q "bad event 'alloc@10'" "$WORK/per.err" || fail "alloc@10 accepted: $(cat "$WORK/per.err")"
note "ok"
