#!/bin/bash
# -e wait attributes the time threads spend blocked to the waiting calling context: a
# mutex held for 300 ms by another thread, a condition variable signalled after >= 350 ms,
# a semaphore posted after 150 ms, a read lock behind a 150 ms write lock, a condition
# clock-wait timing out after 100 ms; uncontended locks record nothing (trylock first).
# Bounds are loose fractions of the known sleeps (a loaded machine only lengthens waits).
source "$(dirname "$0")/lib.sh"
for v in O2 O0; do
	run "$CALLPATH" record -q -e wait -e cputime -o "$WORK/m$v" -- "$CP_WORKLOADS/locks.$v"
	"$CALLPATH" report "$WORK/m$v" --format json --threshold 0 >"$WORK/r$v.json" \
		2>"$WORK/err" || fail "$v: report failed: $(cat "$WORK/err")"
	python3 - "$WORK/r$v.json" "$v" <<'PY' || fail "$v: wrong wait metrics"
import json, sys
d = json.load(open(sys.argv[1]))
names = [m["name"] for m in d["metrics"]]
assert "wait-time" in names and "wait-calls" in names, names
wt, wc = names.index("wait-time"), names.index("wait-calls")
assert d["metrics"][wt]["unit"] == "ns"

def incl(fn, m):
    return sum(n["inclusive"][m] for n in d["nodes"] if n["name"] == fn and n["kind"] == "procedure")

ms = 1e6
bad = []
checks = [
    ("wait_for_lock", 0.5 * 280 * ms, 1),   # blocked in pthread_mutex_lock ~280 ms
    ("wait_for_signal", 0.5 * 350 * ms, None),  # pthread_cond_wait
    ("wait_for_sem", 0.5 * 150 * ms, 1),     # sem_wait
    ("join_all", 0, 7),                      # pthread_join, timed whole
    ("wait_for_rdlock", 0.5 * 130 * ms, 1),  # pthread_rwlock_rdlock
    ("wait_with_timeout", 0.5 * 100 * ms, None),  # pthread_cond_clockwait (times out)
]
for fn, least, calls in checks:
    t, c = incl(fn, wt), incl(fn, wc)
    if t < least or t > 20000 * ms:
        bad.append(f"{fn}: wait-time {t / ms:.1f} ms, want >= {least / ms:.1f} ms")
    if calls is not None and c != calls:
        bad.append(f"{fn}: {c} wait-calls, want {calls}")
# 100000 uncontended lock/unlock pairs: never blocked, so nothing recorded.
if incl("uncontended", wc) != 0:
    bad.append(f"uncontended: {incl('uncontended', wc)} wait-calls")
# The holder sleeps while holding the lock: its sleep is not a wait.
if incl("holder", wt) > incl("wait_for_lock", wt):
    bad.append("holder shows more wait than the waiter")
if bad:
    print(sys.argv[2] + ": " + "; ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
done
note "ok"
