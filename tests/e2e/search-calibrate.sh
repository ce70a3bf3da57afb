#!/bin/bash
# callpath search calibrates the probes' costs on this machine while the program starts
# (docs/cmd-search.md, "Cost limit"): callpath-calibrate runs under the runtime with and
# without an entry probe and loop probes. The JSON cost object says "calibrated": true
# with plausible values (generous bounds: a probed call costs tens to hundreds of ns, a
# loop snippet about as much; no timing beyond that), the notes say so, and the
# calibration's temporary directory is gone afterwards; --no-calibrate keeps the built-in
# constants (80 ns per call, 33 ns per loop snippet execution) and "calibrated": false;
# without callpath-calibrate (CALLPATH_RT names runtimes in a directory that lacks it) the
# search falls back to them and says why in a note.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2" "$CP_BUILD_DIR/callpath-calibrate"
mkdir -p "$WORK/tmp"
TMPDIR=$WORK/tmp run "$CALLPATH" search -q --after 0.5 --for 4 --kill --format json \
	-o "$WORK/m" -- "$CP_WORKLOADS/search-loops.O2" 10
cp "$WORK/run.out" "$WORK/r.json"
json_assert "$WORK/r.json" "(d['cost']['calibrated'] is True
    and 5 < d['cost']['per_edge_ns'] < 5000 and 5 < d['cost']['per_call_ns'] < 20000)" \
	"not calibrated, or implausible costs: $(grep -o '"cost": {[^}]*}' "$WORK/r.json")"
json_assert "$WORK/r.json" "(any('calibrated on this machine' in n for n in d['notes']))" \
	"no note of the calibration"
[ -z "$(ls -A "$WORK/tmp")" ] || fail "left behind in TMPDIR: $(ls -A "$WORK/tmp")"
note "calibrated: $(grep -o '"cost": {[^}]*}' "$WORK/r.json")"

run "$CALLPATH" search -q --no-calibrate --after 0.3 --for 1 --kill --format json \
	-o "$WORK/m2" -- "$CP_WORKLOADS/search-loops.O2" 10
cp "$WORK/run.out" "$WORK/r2.json"
json_assert "$WORK/r2.json" "(d['cost']['calibrated'] is False
    and d['cost']['per_call_ns'] == 80 and d['cost']['per_edge_ns'] == 33
    and not any('calibrat' in n for n in d['notes']))" \
	"--no-calibrate: $(grep -o '"cost": {[^}]*}' "$WORK/r2.json")"
"$CALLPATH" search --help | grep -q -- --no-calibrate || fail "--no-calibrate not in --help"

mkdir -p "$WORK/rt"
ln -s "$CP_BUILD_DIR"/libcallpath-*.so "$WORK/rt/"
CALLPATH_RT=$WORK/rt/libcallpath-rt.so run "$CALLPATH" search -q --after 0.3 --for 1 --kill \
	--format json -o "$WORK/m3" -- "$CP_WORKLOADS/search-loops.O2" 10
cp "$WORK/run.out" "$WORK/r3.json"
json_assert "$WORK/r3.json" "(d['cost']['calibrated'] is False
    and d['cost']['per_call_ns'] == 80 and d['cost']['per_edge_ns'] == 33
    and any('not calibrated (' in n and 'callpath-calibrate' in n
            for n in d['notes']))" \
	"no fallback without callpath-calibrate: $(grep -A3 '"notes"' "$WORK/r3.json")"
note "ok"
