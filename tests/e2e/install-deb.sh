#!/bin/bash
# `cpack -G DEB` builds a .deb that installs a working callpath: its contents (the layout
# under /usr, a man page per docs/cmd-*.md), its Depends computed by dpkg-shlibdeps (every
# library the binaries need, named by the package that ships it here), no RPATH, and the
# command extracted from the package (dpkg-deb -x, not installed system-wide) records and
# reports with the runtime it ships.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
command -v dpkg-deb >/dev/null || skip "not a Debian system (no dpkg-deb)"
[ -x "$CALLPATH" ] || fail "callpath is not built ($CALLPATH)"
[ -f "$CP_BUILD_DIR/CPackConfig.cmake" ] || fail "no CPackConfig.cmake in $CP_BUILD_DIR"
[ -x "$CP_WORKLOADS/chain.O2" ] || fail "workloads are not built ($CP_WORKLOADS)"

(cd "$WORK" && cpack --config "$CP_BUILD_DIR/CPackConfig.cmake" -G DEB -B "$WORK/pkg") \
	>"$WORK/cpack.out" 2>&1 || fail "cpack -G DEB failed: $(cat "$WORK/cpack.out")"
deb=$(ls "$WORK"/pkg/callpath_*_amd64.deb 2>/dev/null)
[ -f "$deb" ] || fail "no callpath_VERSION_amd64.deb: $(ls "$WORK/pkg")"
note "$(basename "$deb"): $(stat -c %s "$deb") bytes"

dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$WORK/files"
for f in /usr/bin/callpath /usr/lib/callpath/libcallpath-rt.so /usr/share/man/man1/callpath.1.gz \
	/usr/share/doc/callpath/README.md; do
	grep -qxF "$f" "$WORK/files" || fail "$f not in the package: $(cat "$WORK/files")"
done
for md in "$CP_SOURCE_DIR"/docs/cmd-*.md; do
	page=/usr/share/man/man1/callpath-$(basename "$md" .md | sed 's/^cmd-//').1.gz
	grep -qxF "$page" "$WORK/files" || fail "no man page $page in the package"
done
if grep -v '^/usr/' "$WORK/files" | grep -qv '^/$'; then
	fail "files outside /usr: $(grep -v '^/usr/' "$WORK/files")"
fi

depends=$(dpkg-deb -f "$deb" Depends)
note "Depends: $depends"
tr ',|' '\n\n' <<<"$depends" | awk '{ print $1 }' >"$WORK/depends" # package names
for p in libc6 libdw1 libelf1 libsqlite3-0 'libzydis[0-9.]*'; do
	grep -qx "$p" "$WORK/depends" || fail "Depends lacks $p: $depends"
done

mkdir "$WORK/root"
dpkg-deb -x "$deb" "$WORK/root" || fail "dpkg-deb -x failed"
r=$(cd "$WORK/root/usr" && pwd -P) # /proc/self/exe resolves symlinks
# Every library the binaries link directly (NEEDED) comes from a package in Depends.
for bin in "$r/bin/callpath" "$r/lib/callpath/libcallpath-rt.so"; do
	if readelf -d "$bin" | grep -qE 'R(UN)?PATH'; then
		fail "$bin has an RPATH/RUNPATH: $(readelf -d "$bin" | grep PATH)"
	fi
	ldd "$bin" >"$WORK/ldd" || fail "ldd $bin failed"
	grep -q 'not found' "$WORK/ldd" && fail "$bin: libraries not found: $(cat "$WORK/ldd")"
	for lib in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(awk -v l="$lib" '$1 == l { print $3 } $1 ~ "/" l "$" { print $1 }' "$WORK/ldd")
		[ -n "$path" ] || fail "$bin: $lib not resolved by ldd"
		pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1)
		[ -n "$pkg" ] || pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
		[ -n "$pkg" ] || fail "no package owns $path ($lib)"
		grep -qxF "$pkg" "$WORK/depends" ||
			fail "$(basename "$bin") needs $lib from $pkg, which Depends lacks: $depends"
	done
done

# The packaged command runs with the runtime it ships (in a clean environment, but for the
# sanitizer options of the ASan pass).
san=$(env | grep -E '^(ASAN|UBSAN)_OPTIONS=')
mkdir "$WORK/run"
cp "$CP_WORKLOADS/chain.O2" "$WORK/run/chain"
cd "$WORK/run" || fail "no work directory"
env -i HOME="$WORK" PATH="$r/bin:/usr/bin:/bin" $san callpath record -q -o rec -- ./chain 300 \
	>/dev/null 2>"$WORK/err" || fail "record with the packaged callpath: $(cat "$WORK/err")"
$CHECK rec >"$WORK/m.json" || fail "measurement invalid"
json_assert "$WORK/m.json" \
	"any(m['path'] == '$r/lib/callpath/libcallpath-rt.so' for m in d['procs'][0]['modules'])" \
	"the packaged runtime is the one preloaded"
env -i HOME="$WORK" PATH="$r/bin:/usr/bin:/bin" $san callpath report rec >"$WORK/report.txt" 2>&1 ||
	fail "report: $(cat "$WORK/report.txt")"
grep -q 'heavy3' "$WORK/report.txt" || fail "report has no heavy3: $(cat "$WORK/report.txt")"
exit 0
