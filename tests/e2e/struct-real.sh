#!/bin/bash
# callpath struct on real Debian binaries no one here wrote (libc, libstdc++, python3,
# sqlite3, xz): it finishes without errors, and its procedures agree with the symbol
# table read by binutils' readelf (.symtab when present, else .dynsym): every FUNC/IFUNC
# symbol in code is a procedure entry (aliases share it) or, for `name.cold`, lies inside
# its parent's ranges; every procedure taken from a symbol starts at a symbol. C++ names
# are demangled.
source "$(dirname "$0")/lib.sh"
require_tool readelf
export XDG_CACHE_HOME=$WORK/cache
LIBC=$(ldd /bin/true | awk '/libc.so/ { print $3 }')
LIBSTDCXX=$(/sbin/ldconfig -p 2>/dev/null | awk '/libstdc\+\+.so.6 .*x86-64/ { print $NF; exit }')
PY=$(readlink -f /usr/bin/python3 2>/dev/null)
checked=0
for bin in "$LIBC" "$LIBSTDCXX" "$PY" /usr/bin/sqlite3 /usr/bin/xz; do
	[ -n "$bin" ] && [ -f "$bin" ] || continue
	"$CALLPATH" struct --no-cache --dump --format json "$bin" >"$WORK/s.json" 2>"$WORK/s.err" ||
		{ cat "$WORK/s.err" >&2; fail "struct failed on $bin"; }
	readelf -SW "$bin" >"$WORK/sections"
	readelf -sW "$bin" >"$WORK/symbols"
	python3 - "$WORK/s.json" "$WORK/sections" "$WORK/symbols" "$bin" <<'PY' || fail "procedures of $bin disagree with its symbol table"
import json, re, sys
doc = json.load(open(sys.argv[1]))
exec_secs = {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S*X\S*)\s", line)
    if m:
        exec_secs[int(m.group(1))] = (int(m.group(3), 16), int(m.group(4), 16))
tables, cur = {}, None
for line in open(sys.argv[3]):
    m = re.match(r"Symbol table '(\S+)'", line)
    if m:
        cur = tables.setdefault(m.group(1), []); continue
    f = line.split()
    if cur is None or len(f) < 8 or not f[0].endswith(":"):
        continue
    if f[3] not in ("FUNC", "IFUNC") or not f[6].isdigit() or int(f[6]) not in exec_secs:
        continue
    cur.append((int(f[1], 16), f[7].split("@")[0]))
table = ".symtab" if tables.get(".symtab") else ".dynsym"
syms = tables.get(table, [])
procs = doc["procedures"]
entries = {p["addr"] for p in procs}
ranges = sorted((lo, hi) for p in procs for lo, hi in p["ranges"])
def covered(a):
    import bisect
    i = bisect.bisect_right(ranges, (a, float("inf"))) - 1
    return i >= 0 and ranges[i][0] <= a < ranges[i][1]
missing = [(hex(a), n) for a, n in syms if a not in entries and not (".cold" in n and covered(a))]
symaddrs = {a for a, _ in syms}
extra = [(hex(p["addr"]), p["name"]) for p in procs if p["origin"] == "symbol" and p["addr"] not in symaddrs]
mangled = [p["name"] for p in procs if p["name"].startswith("_Z")]
demangled = [p["name"] for p in procs if "::" in p["name"]]
print("%s: %d procedures (%s), %d %s FUNC symbols, %d loops; missing %d, extra %d, left mangled %d" %
      (sys.argv[4], len(procs), ", ".join("%s %d" % (o, sum(p["origin"] == o for p in procs))
                                          for o in ("symbol", "plt", "dwarf", "fde")),
       len(syms), table, doc["nloops"], len(missing), len(extra), len(mangled)))
bad = False
if missing:
    print("  symbols without a procedure: %s" % missing[:10], file=sys.stderr); bad = True
if extra:
    print("  procedures without a symbol: %s" % extra[:10], file=sys.stderr); bad = True
if len(mangled) > 0.01 * max(1, len(procs)):
    print("  names left mangled: %s" % mangled[:10], file=sys.stderr); bad = True
if "libstdc++" in sys.argv[4] and not demangled:
    print("  no demangled C++ names in libstdc++", file=sys.stderr); bad = True
if not syms and not any(p["origin"] == "fde" for p in procs):
    print("  no symbols and no procedures from .eh_frame", file=sys.stderr); bad = True
sys.exit(1 if bad else 0)
PY
	checked=$((checked + 1))
done
[ "$checked" -ge 3 ] || skip "fewer than 3 of the real binaries are installed"
note "$checked real binaries agree with their symbol tables"
