#!/bin/bash
# callpath search on a program nobody here wrote that ends in the middle of an experiment:
# Debian's perl, a CPU-bound loop of about a second, searched with 6-s experiments. The
# experiment in which the program ends is measured up to its end (its header's end time),
# not over the whole interval: `main`, decided then, holds about the program's CPU
# utilization (CPU time over wall time, from `report`). Before, the time after the end
# diluted it (Debian's python3: Py_RunMain, under which all the time is, decided at 27 %).
# perl is stripped: the text names main's place by module and address, not "?" (a threshold
# of 1 % makes main a bottleneck whatever the load).
. "$(dirname "$0")/lib.sh"
require_tool perl
require_built "$CALLPATH"
"$CALLPATH" search -q --no-deep-start --hypotheses CPUBound --threshold 1 --after 0.3 --interval 6 \
	-o "$WORK/m" -- \
	perl -e 'my $s = 0; for my $i (1..25000000) { $s += ($i * $i) % 7 } print "$s\n"' \
	>"$WORK/out" 2>"$WORK/err" || fail "search failed: $(tail -5 "$WORK/err")"
"$CALLPATH" report "$WORK/m" --format json -o "$WORK/report.json" 2>/dev/null ||
	fail "report of the search's measurement failed"
python3 - "$WORK/m/search.json" "$WORK/report.json" <<'PY' || fail "main's value is diluted"
import json, sys
d = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))["summary"]
assert d["program_exited"], "perl did not end during the search"
util = s["cpu_s"] / s["duration_s"]
main = [n for n in d["nodes"] if n["function"] == "main" and n["parent"] == -1]
assert main and main[0]["state"] in ("true", "false"), main
v = main[0]["value"]
print("main %.1f%%, perl's CPU utilization %.1f%% (%.2f s CPU in %.2f s)" %
      (100 * v, 100 * util, s["cpu_s"], s["duration_s"]))
# 6-s interval, a run of 1-3 s: diluted, main held a sixth to a half of the utilization
assert v >= 0.7 * util, (v, util)
PY
grep -Eq '/Code/perl/main  \(perl\+0x[0-9a-f]+\) found at' "$WORK/out" ||
	fail "the text does not place main: $(grep -A3 Bottlenecks "$WORK/out")"
