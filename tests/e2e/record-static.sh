#!/bin/bash
# callpath record on a static executable (gcc -static: no PT_INTERP, nothing to preload)
# samples it from outside with the kernel-copy driver: every thread, complete call paths
# through the static libc's _start, symbols, lines, loops and inlined frames as usual, the
# same shares as the preloaded runtime on the dynamic build; the program's exit status
# passes through. Probes, which need the runtime inside, are refused clearly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach-helpers/attach.sh"
require_own_sampling

S=$CP_WORKLOADS/steady.static
require_built "$CALLPATH" "$S" "$CP_WORKLOADS/steady.O2"
readelf -lW "$S" | grep -q INTERP && fail "$S is not static"

"$CALLPATH" record -o "$WORK/s" -- "$S" 2 2 "$WORK/ready" 3 >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 3 ] || { cat "$WORK/err" >&2; fail "record exited $status, not the program's 3"; }
grep -q "static executable: sampling it from outside" "$WORK/err" || fail "no word of the driver"
grep -q "steady done" "$WORK/out" || fail "the program's output is missing"
[ "$(ls "$WORK/s"/*.thr | wc -l)" -eq 2 ] || fail "not one thread file per thread"
"$CALLPATH" report "$WORK/s" --format json -o "$WORK/td.json" 2>"$WORK/report.err" ||
	fail "report failed"
json_assert "$WORK/td.json" \
	'd["summary"]["unwind"]["complete_pct"] >= 95' \
	"fewer than 95% complete unwinds through the static libc"
"$CALLPATH" report "$WORK/s" --threshold 1 >"$WORK/td.txt" 2>&1 || fail "text report failed"
for want in "_start" "main" "worker" "three" "spin \[inlined\]" "loop at steady.c" "steady.c:"; do
	grep -q "$want" "$WORK/td.txt" || { cat "$WORK/td.txt" >&2; fail "no '$want' in the report"; }
done

run "$CALLPATH" record -q -o "$WORK/d" -- "$CP_WORKLOADS/steady.O2" 2 2
read -r got ngot <<<"$(share_three "$WORK/s")"
read -r ref nref <<<"$(share_three "$WORK/d")"
note "three(): static ${got}% of $ngot samples, dynamic (preloaded) ${ref}% of $nref"
shares_close "$got" "$ngot" "$ref" "$nref" || fail "three()'s shares differ beyond noise"

"$CALLPATH" probe -f three -o "$WORK/p" -- "$S" 1 1 >"$WORK/out" 2>"$WORK/err" &&
	fail "probes on a static executable were not refused"
grep -q "libcallpath-rt.a" "$WORK/err" || { cat "$WORK/err" >&2; fail "the refusal gives no way out"; }
note "ok"
