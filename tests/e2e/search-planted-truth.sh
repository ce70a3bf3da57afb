#!/usr/bin/env bash
# The ground truth of the planted-bottleneck benchmark (bench/search/planted.json) holds:
# for six of its programs, a `callpath record` profile puts the planted share of the
# metric in the planted function (and loop, and call site), and the manifest's line ranges
# agree with the markers in the sources. Checked by bench/search/run.py itself, after
# its own scoring (--self-test).
source "$(dirname "$0")/lib.sh"

# The scoring the search will be judged by, on made-up search outputs.
python3 "$CP_SOURCE_DIR/bench/search/run.py" --self-test || fail "run.py scores made-up searches wrongly"

[ -x "$CP_BUILD_DIR/bench/search/loop3of5" ] || fail "planted programs not built in $CP_BUILD_DIR/bench/search"
python3 "$CP_SOURCE_DIR/bench/search/run.py" --build "$CP_BUILD_DIR" --seconds 1 \
	--base-runs 0 --no-search --only loop3of5,callsites,lockcontention,blockio,pagefault,omp-imbalance \
	--out "$WORK/results.json" || fail "a planted program's profile disagrees with planted.json"
json_assert "$WORK/results.json" 'len(d["results"]) == 6 and all(r["truth"].get("ok") or
	(r["prog"]["name"] == "omp-imbalance" and "not built" in r["truth"].get("error", "")) for r in d["results"])' \
	"six programs checked (omp-imbalance: unless the compiler has no OpenMP)"
note "ground truth holds"
