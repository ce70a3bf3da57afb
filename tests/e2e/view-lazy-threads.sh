#!/bin/bash
# The flat and bottom-up views of one thread and of a statistic over threads read lazily
# from the database's per-thread tables (src/view/model-flat.c, model-bu.c,
# model-threads.c), never the whole profile in memory: on threads.O2 (several threads),
# every node of the flat and bottom-up views of each thread (`thread=`) and of each
# statistic (`stat=mean|min|max|stddev`) equals `callpath report --format json`'s for the
# same selection (`--thread PID:TIDX`, `--stat`), with the whole profile's load held back
# (a request that needed it would be answered 202 for ever).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"
. "$(dirname "$0")/view-helpers/serve.sh"
. "$(dirname "$0")/view-helpers/compare.sh"

report_record "$WORK/m" "$CP_WORKLOADS/threads.O2" 3
export CALLPATH_VIEW_TEST_GATE=$WORK/gate # never created: the whole profile never loads
view_start "$WORK/m"
vjson "$WORK/threads.json" "/api/threads"
python3 -c '
import json,sys; p=json.load(open(sys.argv[1]))["profiles"]
assert len(p) >= 3, p
for x in p: print(x["id"], x["pid"], x["tidx"])' "$WORK/threads.json" >"$WORK/profiles" ||
	fail "fewer than 3 threads"
for v in flat:flat bu:bottom-up; do
	api=${v%%:*} rep=${v##*:}
	while read -r prof pid tidx; do
		view_fetch "$WORK/a.json" "$api" "&thread=$prof" 1
		report_json "$WORK/r.json" "$WORK/m" --view "$rep" --threshold 0 --thread "$pid:$tidx"
		view_compare "$WORK/a.json" "$WORK/r.json" "$rep --thread $pid:$tidx"
	done <"$WORK/profiles"
	for st in mean min max stddev; do
		view_fetch "$WORK/a.json" "$api" "&stat=$st" 1
		report_json "$WORK/r.json" "$WORK/m" --view "$rep" --threshold 0 --stat "$st"
		view_compare "$WORK/a.json" "$WORK/r.json" "$rep --stat $st"
	done
	expect_status 404 "/api/children?view=$api&thread=999"
	expect_status 404 "/api/children?view=$api&rank=7" # no MPI rank here
done
note "flat and bottom-up of one thread and of statistics served from the database equal report's"
