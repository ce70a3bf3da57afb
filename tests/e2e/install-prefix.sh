#!/bin/bash
# `cmake --install build --prefix P` gives a working callpath: the layout (bin/, lib/callpath/,
# man pages generated from docs/, share/doc/callpath/), no RPATH into the build tree, and
# record, report, probe and export run from the installed tree with the build tree out of
# reach (the tree moved elsewhere after installing, reached through a symlink in PATH, no
# CALLPATH_RT): the command finds its runtime relative to its own real path.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
[ -x "$CALLPATH" ] || fail "callpath is not built ($CALLPATH)"
[ -x "$CP_WORKLOADS/chain.O2" ] || fail "workloads are not built ($CP_WORKLOADS)"

run cmake --install "$CP_BUILD_DIR" --prefix "$WORK/prefix"
p=$WORK/prefix
for f in bin/callpath lib/callpath/libcallpath-rt.so lib/callpath/libcallpath-rt-io-wait.so \
	lib/callpath/libcallpath-rt-alloc-io-wait.so share/man/man1/callpath.1.gz \
	share/doc/callpath/README.md share/doc/callpath/callpath.md; do
	[ -f "$p/$f" ] || fail "not installed: $f"
done
[ ! -e "$p/bin/libcallpath-rt.so" ] || fail "runtime installed beside the command, want lib/callpath"
for md in "$CP_SOURCE_DIR"/docs/cmd-*.md; do
	page=callpath-$(basename "$md" .md | sed 's/^cmd-//').1.gz
	[ -f "$p/share/man/man1/$page" ] || fail "no man page $page for $(basename "$md")"
done
for bin in "$p/bin/callpath" "$p/lib/callpath/libcallpath-rt.so"; do
	if readelf -d "$bin" | grep -E 'R(UN)?PATH' | grep -qF "$CP_BUILD_DIR"; then
		fail "$bin has an RPATH/RUNPATH into the build tree: $(readelf -d "$bin" | grep PATH)"
	fi
done

# The man page renders, with the command's summary from `callpath --help` as its NAME line.
if command -v man >/dev/null; then
	MANWIDTH=100 man -l "$p/share/man/man1/callpath-record.1.gz" >"$WORK/man.txt" 2>&1 ||
		fail "man -l callpath-record.1.gz failed: $(cat "$WORK/man.txt")"
	summary=$("$CALLPATH" --help | awk '$1 == "record" { $1 = ""; print substr($0, 2) }')
	grep -qF -- "callpath-record - $summary" "$WORK/man.txt" || fail "NAME line: $(head -5 "$WORK/man.txt")"
	grep -q '^OPTIONS' "$WORK/man.txt" || fail "no OPTIONS section in callpath-record(1)"
	grep -q 'callpath-probe(1)' "$WORK/man.txt" || fail "no SEE ALSO to the other pages"
else
	note "man is not installed: pages not rendered"
fi

# Move the installed tree and reach it only through a symlink in PATH.
mv "$p" "$WORK/moved"
p=$(cd "$WORK/moved" && pwd -P) # /proc/self/exe resolves symlinks
mkdir "$WORK/path" "$WORK/run"
ln -s "$p/bin/callpath" "$WORK/path/callpath"
cp "$CP_WORKLOADS/chain.O2" "$WORK/run/chain"
cd "$WORK/run" || fail "no work directory"
# The installed command alone: a clean environment, CALLPATH_RT only when $rt is set.
rt=
# (The sanitizer options of the ASan pass are kept.)
san=$(env | grep -E '^(ASAN|UBSAN)_OPTIONS=')
installed() { env -i HOME="$WORK" PATH="$WORK/path:/usr/bin:/bin" $san ${rt:+"CALLPATH_RT=$rt"} callpath "$@"; }

installed record -q -o rec -- ./chain 300 >/dev/null 2>"$WORK/err" || fail "record: $(cat "$WORK/err")"
$CHECK rec >"$WORK/m.json" || fail "measurement invalid"
json_assert "$WORK/m.json" \
	"any(m['path'] == '$p/lib/callpath/libcallpath-rt.so' for m in d['procs'][0]['modules'])" \
	"the installed runtime (lib/callpath, found from the moved tree) is the one preloaded"
installed record -q -e wait -o wait -- ./chain 50 >/dev/null 2>"$WORK/err" || fail "record -e wait: $(cat "$WORK/err")"
$CHECK wait >"$WORK/w.json" || fail "measurement with -e wait invalid"
json_assert "$WORK/w.json" \
	"any(m['path'] == '$p/lib/callpath/libcallpath-rt-wait.so' for m in d['procs'][0]['modules']) and 'wait-time' in [x['name'] for x in d['procs'][0]['metrics']]" \
	"-e wait: the installed build with the wait wrappers is the one preloaded"
installed report rec >"$WORK/report.txt" 2>&1 || fail "report: $(cat "$WORK/report.txt")"
grep -q 'heavy3' "$WORK/report.txt" || fail "report has no heavy3: $(cat "$WORK/report.txt")"

installed probe -q -f heavy3 -o prb -- ./chain 7 >/dev/null 2>"$WORK/err" || fail "probe: $(cat "$WORK/err")"
installed report --format csv prb >"$WORK/probe.csv" 2>&1 || fail "report of probes: $(cat "$WORK/probe.csv")"
calls=$(awk -F, '$4 == "procedure" && $5 == "heavy3" { print $13 }' "$WORK/probe.csv")
[ "$calls" = 7 ] || fail "probe counted '$calls' calls of heavy3, want 7: $(cat "$WORK/probe.csv")"

installed export rec --format folded -o "$WORK/rec.folded" 2>"$WORK/err" || fail "export: $(cat "$WORK/err")"
grep -q ';heavy3' "$WORK/rec.folded" || fail "folded export has no path to heavy3"

# The runtime gone: a clear error naming where it looked, before the program starts (exit 2);
# CALLPATH_RT names a runtime elsewhere.
mkdir "$WORK/elsewhere"
mv "$p/lib/callpath/libcallpath-rt.so" "$WORK/elsewhere/rt.so"
installed record -q -o gone -- ./chain >"$WORK/out" 2>"$WORK/err"
[ $? = 2 ] || fail "record without a runtime: exit status not 2"
grep -qF "$p/lib/callpath/" "$WORK/err" || fail "error does not name lib/callpath: $(cat "$WORK/err")"
[ ! -s "$WORK/out" ] || fail "the program ran without its runtime"
rt=../elsewhere/rt.so # relative: made absolute for LD_PRELOAD
installed record -q -o over -- ./chain 50 >/dev/null 2>"$WORK/err" ||
	fail "record with CALLPATH_RT: $(cat "$WORK/err")"
$CHECK over >"$WORK/o.json" || fail "measurement with CALLPATH_RT invalid"
json_assert "$WORK/o.json" \
	"any(m['path'] == '$(cd "$WORK/elsewhere" && pwd -P)/rt.so' for m in d['procs'][0]['modules'])" \
	"CALLPATH_RT's runtime is the one preloaded"
rt=$WORK/nowhere.so
installed record -q -o bad -- ./chain 50 >"$WORK/out" 2>"$WORK/err"
[ $? = 2 ] || fail "record with a missing CALLPATH_RT: exit status not 2"
grep -qF "CALLPATH_RT=$WORK/nowhere.so" "$WORK/err" || fail "error does not name CALLPATH_RT: $(cat "$WORK/err")"
exit 0
