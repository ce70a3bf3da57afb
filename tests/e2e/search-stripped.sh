#!/bin/bash
# callpath search on a stripped program (docs/cmd-search.md): compute() of search-loops is
# sub_HEX there, its loops are probed through that name (docs/cmd-probe.md, "Functions
# without a symbol"), so the search reaches loop precision as on the unstripped file: the
# hot loop (the 3rd of compute's five; its header address from `callpath struct` of the
# unstripped file, at the source line that says so) is in the top 3, the four others are
# false, and no focus is left "not probed". The stripped entry point (_start) is no root.
# The cost prediction of loop probes (docs/cmd-search.md, "Cost limit"): compute's loops
# iterate every nanosecond or so, so their probes are predicted over the limit and not
# inserted (the hot loop is decided from samples), while the loop of rounds(), which calls
# compute once per iteration, is not refused (a sample in a function called from a loop is
# no cost of that loop's probes; rounds() runs once, so its running call stays in the old
# copy and counts no iterations). The probes' cost stays in the limit.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
require_tool strip
wl=$CP_WORKLOADS/search-loops.O2
strip --strip-all -o "$WORK/search-loops" "$wl" || fail "strip"
src=$CP_SOURCE_DIR/tests/workloads/search-loops.c
hot=$(grep -n "loop 3: the hot one" "$src" | cut -d: -f1)
header=$("$CALLPATH" struct --dump "$wl" | sed -n "s/.*search-loops.c:$hot .* header \(0x[0-9a-f]*\) .*/\1/p")
compute=$(nm "$wl" | awk '$3 == "compute" { sub(/^0+/, "", $1); print "sub_" $1 }')
start=$(nm "$wl" | awk '$3 == "_start" { sub(/^0+/, "", $1); print "sub_" $1 }')
[ -n "$header" ] && [ -n "$compute" ] || fail "no hot loop header ($header) or compute ($compute)"
run "$CALLPATH" search -q --after 0.3 --for 12 --kill --format json -o "$WORK/m" -- \
	"$WORK/search-loops" 20
cp "$WORK/run.out" "$WORK/r.json"
json_assert "$WORK/r.json" "(any(b['kind'] == 'loop' and b['function'] == '$compute'
    and b['address'] == '$header' and b['iterations'] == 0 and
    'predicted to cost' in (b['note'] or '') for b in d['bottlenecks'][:3]))" \
	"the hot loop ($compute, header $header) is not in the top 3 with its probes' cost predicted over the limit: $(head -c 3000 "$WORK/r.json")"
json_assert "$WORK/r.json" "(any(n['kind'] == 'loop' and n['function'] != '$compute' and
    n['state'] == 'true' and 'predicted' not in (n['note'] or '') for n in d['nodes']))" \
	"the loop calling compute was refused probes: $(grep -o '"note": "[^"]*"' "$WORK/r.json" | sort | uniq -c)"
json_assert "$WORK/r.json" "d['cost']['max'] <= d['cost_limit']" \
	"the probes cost more than the limit: $(grep -o '"cost": {[^}]*}' "$WORK/r.json")"
json_assert "$WORK/r.json" "(sum(1 for n in d['nodes'] if n['kind'] == 'loop' and
    n['function'] == '$compute' and n['state'] == 'false') == 4)" "the 4 cold loops are not false"
json_assert "$WORK/r.json" "(not any('not probed' in (n['note'] or '') for n in d['nodes']))" \
	"a focus was left unprobed: $(grep -o '"note": "[^"]*"' "$WORK/r.json" | sort | uniq -c)"
json_assert "$WORK/r.json" "(not any(n['function'] == '$start' for n in d['nodes']))" \
	"the stripped entry point ($start) is a focus"
note "ok"
