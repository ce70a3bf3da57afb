#!/bin/bash
# PLT stubs are procedures `name@plt` with their exact ranges, as objdump -d labels them
# (the reference): lazy binding (.plt with its header, .plt.got), -z now, IBT (.plt.sec,
# endbr64 entries), lld's layout, a gfortran program and Debian binaries no one here wrote.
# No sample in a PLT may land on a `sub_<hex>` procedure made from the .plt FDE.
source "$(dirname "$0")/lib.sh"
require_tool objdump
require_tool gcc
export XDG_CACHE_HOME=$WORK/cache
cat >"$WORK/p.c" <<'EOF'
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	double s = 0;
	for (int i = 0; i < argc * 1000; i++)
		s += sin(i) + atof(argv[0]);
	printf("%f\n", s);
	free(malloc(10));
	return 0;
}
EOF
bins=()
build() { # name compiler flags...
	local name=$1
	shift
	"$@" -O2 -o "$WORK/$name" "$WORK/p.c" -lm 2>"$WORK/cc.err" || fail "cannot build $name: $(cat "$WORK/cc.err")"
	bins+=("$WORK/$name")
}
build lazy gcc
build now gcc -Wl,-z,now
build ibt gcc -fcf-protection=full -Wl,-z,ibtplt
build ibt-now gcc -fcf-protection=full -Wl,-z,ibtplt -Wl,-z,now
if command -v clang >/dev/null && command -v ld.lld >/dev/null; then
	build lld clang -fuse-ld=lld
	build lld-ibt clang -fuse-ld=lld -fcf-protection=full -Wl,-z,force-ibt
fi
if command -v gfortran >/dev/null; then
	printf 'program p\nreal(8) :: s\ns = sin(dble(command_argument_count()))\nprint *, s\nend program\n' >"$WORK/f.f90"
	gfortran -O2 -o "$WORK/fortran" "$WORK/f.f90" || fail "cannot build the Fortran program"
	bins+=("$WORK/fortran")
fi
bins+=("$CP_WORKLOADS/probe.O2" "$CP_WORKLOADS/probe-cxx.O2")
for b in /usr/bin/bash /usr/bin/perl /usr/bin/gzip /usr/bin/sqlite3 /usr/bin/make; do
	[ -f "$b" ] && bins+=("$(readlink -f "$b")")
done
cat >"$WORK/check.py" <<'PY'
import json, re, sys
labels, sec_end, section = [], {}, None
for line in open(sys.argv[1]):
    m = re.match(r"Disassembly of section (\S+):", line)
    if m:
        section = m.group(1)
        continue
    m = re.match(r"([0-9a-f]+) <(.+)>:$", line)
    if m:
        labels.append([section, int(m.group(1), 16), m.group(2), None])
        continue
    m = re.match(r"\s+([0-9a-f]+):\t((?:[0-9a-f]{2} )+)", line)
    if m and section:
        end = int(m.group(1), 16) + len(m.group(2).split())
        sec_end[section] = max(sec_end.get(section, 0), end)
for i, l in enumerate(labels):
    nxt = labels[i + 1] if i + 1 < len(labels) else None
    l[3] = nxt[1] if nxt and nxt[0] == l[0] else sec_end[l[0]]
procs = {}
for p in json.load(open(sys.argv[2]))["procedures"]:
    procs.setdefault(p["name"], []).append(p)
bad = []
lo_all = min((l[1] for l in labels), default=0)
hi_all = max((l[3] for l in labels), default=0)
for sec, lo, name, hi in labels:
    if name != sec and not name.endswith("@plt"):
        continue
    got = [p for p in procs.get(name, []) if p["addr"] == lo]
    if not got or not got[0]["plt"] or [lo, hi] not in got[0]["ranges"]:
        bad.append("%s [%#x-%#x): callpath has %s" % (name, lo, hi,
                   [(p["addr"], p["ranges"]) for p in procs.get(name, [])] or "nothing"))
for name, ps in procs.items():
    for p in ps:
        if not p["plt"] and any(r[0] < hi_all and lo_all < r[1] for r in p["ranges"]):
            bad.append("%s %s overlaps the PLT" % (name, p["ranges"]))
if bad:
    print("%s:\n  %s" % (sys.argv[3], "\n  ".join(bad[:20])), file=sys.stderr)
    sys.exit(1)
print(sum(1 for l in labels if l[2].endswith("@plt")))
PY
stubs=0
for bin in "${bins[@]}"; do
	objdump -d -j .plt -j .plt.got -j .plt.sec "$bin" >"$WORK/objdump" 2>/dev/null
	"$CALLPATH" struct --no-cache --dump --format json "$bin" >"$WORK/s.json" 2>"$WORK/s.err" ||
		{ cat "$WORK/s.err" >&2; fail "struct failed on $bin"; }
	n=$(python3 "$WORK/check.py" "$WORK/objdump" "$WORK/s.json" "$bin") ||
		fail "PLT of $bin disagrees with objdump"
	[ "$n" -gt 0 ] || fail "no PLT stub found in $bin by objdump"
	stubs=$((stubs + n))
done
# The report names a sample in a stub after it: --symbolize and --lookup agree.
addr=$(objdump -d -j .plt "$WORK/lazy" | awk '/<sin@plt>:/ { print "0x" $1; exit }')
[ -n "$addr" ] || fail "no sin@plt in the lazy binary"
"$CALLPATH" struct --lookup "$((addr + 6))" "$WORK/lazy" >"$WORK/lookup" || fail "lookup failed"
grep -q 'sin@plt' "$WORK/lookup" || fail "lookup in sin@plt: $(cat "$WORK/lookup")"
note "ok: $stubs stubs in ${#bins[@]} binaries agree with objdump"
