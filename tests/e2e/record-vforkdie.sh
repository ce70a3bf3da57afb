#!/usr/bin/env bash
# A vfork child dying of a signal before exec shares the parent's memory: the parent's
# profile must go on (its work sampled, not marked crashed, exit status 0).
source "$(dirname "$0")/lib.sh"

run "$CALLPATH" record -q -o "$WORK/m" -- "$CP_WORKLOADS/vforkdie.O2"
grep -q "child signalled=1" "$WORK/run.out" || fail "workload output changed: $(cat "$WORK/run.out")"
run "$CALLPATH" report --format json --threshold 0 -o "$WORK/r.json" "$WORK/m"
json_assert "$WORK/r.json" 'd["metrics"][0]["samples"] > 200' "parent's samples lost after the vfork child died"
json_assert "$WORK/r.json" 'any(n.get("name") == "parent_work" and n["inclusive"][0] > 0 for n in d["nodes"])' \
	"parent_work not sampled"
json_assert "$WORK/r.json" 'not any("signal" in w for w in d["summary"]["warnings"])' \
	"parent reported as killed by a signal: {}"
note "ok"
