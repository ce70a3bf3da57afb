# Sourced by tests/e2e/attach-*.sh (after lib.sh): a steady target to attach to, and the
# share of three() in a measurement (steady.c: three() 75%, one() 25% of the CPU time).

# The environment lets us sample our own processes with perf_event (paranoid 3 or more,
# Debian's "no perf for users" setting, forbids it without CAP_PERFMON).
require_own_sampling() {
	local p
	p=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
	[ "$(id -u)" -eq 0 ] || [ "$p" -le 2 ] ||
		skip "perf_event_paranoid is $p: perf_event sampling is not allowed for users"
}

# start_steady SECONDS THREADS [STATUS]: steady.O2 in the background; sets STEADY_PID and
# waits until it runs. Its output goes to $WORK/steady.out.
start_steady() {
	require_built "$CALLPATH" "$CP_WORKLOADS/steady.O2"
	rm -f "$WORK/steady.ready"
	"$CP_WORKLOADS/steady.O2" "$1" "$2" "$WORK/steady.ready" "${3:-0}" >"$WORK/steady.out" 2>&1 &
	STEADY_PID=$!
	for _ in $(seq 100); do
		[ -e "$WORK/steady.ready" ] && return 0
		sleep 0.1
	done
	fail "steady did not start"
}

# share_three DIR: prints "SHARE SAMPLES": 100 * three / (three + one) in inclusive
# cputime, and the samples (1 ms each) under them; fails if the profile has neither.
share_three() {
	"$CALLPATH" report "$1" --view flat --format json -o "$WORK/flat.json" 2>"$WORK/report.err" ||
		{ cat "$WORK/report.err" >&2; fail "callpath report $1 failed"; }
	python3 - "$WORK/flat.json" <<'PY' || fail "no three/one in $1"
import json, sys
d = json.load(open(sys.argv[1]))
by = {}
for n in d["nodes"]:
    if n["kind"] == "procedure":
        by[n["name"]] = by.get(n["name"], 0) + n["inclusive"][0]
t, o = by.get("three", 0), by.get("one", 0)
assert t + o > 0
print(f"{100.0 * t / (t + o):.1f} {(t + o) / 1e6:.0f}")
PY
}

# shares_close A NA B NB: are two shares (each from N samples) within 4 standard errors of
# their difference (binomial sampling noise), and at least 5 points allowed?
shares_close() {
	python3 -c "
import math, sys
a, na, b, nb = $1, $2, $3, $4
p = (a + b) / 200
se = 100 * math.sqrt(p * (1 - p) * (1 / max(na, 1) + 1 / max(nb, 1)))
sys.exit(not abs(a - b) <= max(5, 4 * se))"
}

# end_steady STATUS: ends the steady target (SIGTERM) and fails unless it exits with STATUS
# and its usual output (being attached to must not change either).
end_steady() {
	kill -TERM "$STEADY_PID"
	wait "$STEADY_PID"
	local status=$?
	[ "$status" -eq "$1" ] || fail "the program's exit status became $status ($1 expected)"
	[ "$(cat "$WORK/steady.out")" = "steady done" ] ||
		fail "the program's output changed: $(cat "$WORK/steady.out")"
}

# compare_with_record WHAT N: three()'s share in $WORK/a1..aN within sampling noise of
# `callpath record` on the same workload.
compare_with_record() {
	local i got ngot ref nref
	run "$CALLPATH" record -q -o "$WORK/r" -- "$CP_WORKLOADS/steady.O2" 2 2
	read -r ref nref <<<"$(share_three "$WORK/r")"
	for i in $(seq "$2"); do
		read -r got ngot <<<"$(share_three "$WORK/a$i")"
		note "three(): $1 $i ${got}% of $ngot samples, record ${ref}% of $nref"
		[ "$ngot" -gt 100 ] || fail "$1 $i: only $ngot samples"
		shares_close "$got" "$ngot" "$ref" "$nref" ||
			fail "$1 $i: three() has ${got}%, record ${ref}%: further apart than sampling noise"
	done
}
