#!/bin/bash
# callpath probe on a recursive function: one context per recursion depth (as iPath keeps
# them), 10 calls at each of the 5 depths. rec(1) tail-calls work at -O2, so work is
# counted in the context of the 5th call (beside it), like every tail-called function.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe.O2
run "$CALLPATH" probe -q -o "$WORK/m" -f rec -f work -- "$wl" recurse
grep -qx "probe recurse 80" "$WORK/run.out" || fail "output changed"
python3 "$TREE" "$WORK/m" 'main > rec=10' 'main > rec > rec=10' 'main > rec > rec > rec=10' \
	'main > rec > rec > rec > rec=10' 'main > rec > rec > rec > rec > rec=10' \
	'main > rec > rec > rec > rec > work=10' || fail "counts per depth"
# Inclusive times nest: depth d's subtree holds at least depth d+1's.
python3 - "$TREE" "$WORK/m" <<'PY' || fail "inclusive times do not nest"
import subprocess, sys
out = subprocess.run(["python3", sys.argv[1], sys.argv[2]], capture_output=True, text=True).stdout
rows = [l.split("\t") for l in out.splitlines()]
def incl(prefix):
    return sum(int(r[3]) for r in rows if r[1].endswith(prefix) or (prefix + " > ") in r[1])
for d in range(1, 5):
    a = incl("main > " + " > ".join(["rec"] * d))
    b = incl("main > " + " > ".join(["rec"] * (d + 1)))
    assert a >= b > 0, (d, a, b)
PY
note "ok"
