#!/usr/bin/env bash
# A fork child that execs another program: three process images (parent, fork child, exec'd
# image) merge into one report; the summary counts the fork child and the exec'd image, and
# the costs of all three images appear under their own procedures.
source "$(dirname "$0")/lib.sh"

run "$CALLPATH" record -q -o "$WORK/m" -- "$CP_WORKLOADS/forkexec.O2" "$CP_WORKLOADS/chain.O2" 300
run "$CALLPATH" report --format json --threshold 0 -o "$WORK/r.json" "$WORK/m"
json_assert "$WORK/r.json" 'd["summary"]["processes"] == 3' "expected 3 process images"
json_assert "$WORK/r.json" 'd["summary"]["fork_children"] == 1' "expected 1 fork child"
json_assert "$WORK/r.json" 'd["summary"]["exec_images"] == 1' "expected 1 exec'd image"
for proc in parent_work child_work heavy3 light1; do
	json_assert "$WORK/r.json" "any(n.get('name') == '$proc' and n['inclusive'][0] > 0 for n in d['nodes'])" \
		"no cost under $proc"
done
run "$CALLPATH" report --no-summary "$WORK/m"
"$CALLPATH" report "$WORK/m" 2>&1 | grep -q "processes:   3 (1 fork children, 1 exec'd images)" ||
	fail "text summary does not count the fork child and exec'd image"
note "ok"
