#!/bin/bash
# The structure cache: the first run recovers and writes $XDG_CACHE_HOME/callpath/struct/
# <build-id>.v1.cpst, the second reads it (same dump), --no-cache recomputes, so does an
# entry written by an analyzer of another minor version, a module
# without build-id is keyed by path+size+mtime (touching it invalidates), -o writes a file
# the reader accepts, and the text dump has the scope tree of the paper's Figure 3.
source "$(dirname "$0")/lib.sh"
FX=$CP_BUILD_DIR/tests/fixtures/src
BIN=$FX/loops.gcc.O2
require_built "$BIN"
export XDG_CACHE_HOME=$WORK/cache
bid=$(readelf -n "$BIN" | awk '/Build ID/ { print $3 }')

run "$CALLPATH" struct "$BIN"
grep -q "cached:" "$WORK/run.out" && fail "first run claims a cache hit"
[ -f "$XDG_CACHE_HOME/callpath/struct/$bid.v1.cpst" ] || fail "no cache entry named by build-id $bid"
run "$CALLPATH" struct --dump "$BIN"
cp "$WORK/run.out" "$WORK/dump1"
run "$CALLPATH" struct "$BIN"
grep -q "cached:" "$WORK/run.out" || fail "second run did not use the cache"
run "$CALLPATH" struct --dump "$BIN"
cmp -s "$WORK/dump1" "$WORK/run.out" || fail "cached structure dumps differently"
run "$CALLPATH" struct --no-cache "$BIN"
grep -q "cached:" "$WORK/run.out" && fail "--no-cache used the cache"
# An entry of another minor version (another analyzer revision) is recomputed.
entry=$XDG_CACHE_HOME/callpath/struct/$bid.v1.cpst
printf '\x00\x00' | dd of="$entry" bs=1 seek=10 conv=notrunc status=none
run "$CALLPATH" struct "$BIN"
grep -q "cached:" "$WORK/run.out" && fail "an entry of an older minor version was used"
run "$CALLPATH" struct "$BIN"
grep -q "cached:" "$WORK/run.out" || fail "the recomputed entry was not cached"

# Figure 3's shape: load module > file > procedure > loop > inlined > loop > statement.
python3 - "$WORK/dump1" <<'PY' || fail "text dump lacks the scope tree"
import re, sys
text = open(sys.argv[1]).read()
need = [r"^load module .*loops\.gcc\.O2 \(build-id [0-9a-f]+\)",
        r"^  file .*loops\.c$",
        r"^    procedure nest \(line \d+\) \[lines \d+-\d+\] entry 0x[0-9a-f]+ \{\[0x",
        r"^      loop at .*loops\.c:\d+ \[lines \d+-\d+\] header 0x",
        r"^        inlined dot called at .*loops\.c:\d+",
        r"^          loop at .*loops\.c:\d+",
        r"^\s+statement .*loops\.c:\d+ \{\[0x[0-9a-f]+-0x[0-9a-f]+\)"]
for pat in need:
    if not re.search(pat, text, re.M):
        sys.exit("missing: " + pat)
PY

# No build-id: keyed by path, size and mtime.
objcopy --remove-section .note.gnu.build-id "$BIN" "$WORK/nobid"
run "$CALLPATH" struct "$WORK/nobid"
ls "$XDG_CACHE_HOME"/callpath/struct/nobid-*.v1.cpst >/dev/null || fail "no path-keyed entry"
run "$CALLPATH" struct "$WORK/nobid"
grep -q "cached:" "$WORK/run.out" || fail "path-keyed entry not reused"
touch -d "2001-01-01" "$WORK/nobid"
run "$CALLPATH" struct "$WORK/nobid"
grep -q "cached:" "$WORK/run.out" && fail "stale path-keyed entry used after the file changed"

# -o FILE, and an unwritable cache is a warning, not an error.
run "$CALLPATH" struct "$BIN" -o "$WORK/out.cpst"
[ -s "$WORK/out.cpst" ] || fail "-o wrote nothing"
head -c 8 "$WORK/out.cpst" | grep -q CPSTRUCT || fail "-o file lacks the magic"
XDG_CACHE_HOME=/proc/no-such-dir run "$CALLPATH" struct "$BIN"
grep -q "not cached" "$WORK/run.err" || fail "no warning for an unusable cache directory"
note "cache behaves"

# A separate debug file installed after a first analysis (a -dbg package, here under
# CALLPATH_DEBUG_ROOT) is used: the entry made without it is not reused.
objcopy --only-keep-debug "$BIN" "$WORK/loops.debug" || fail "objcopy --only-keep-debug"
strip -o "$WORK/loops.stripped" "$BIN" || fail "strip"
export CALLPATH_DEBUG_ROOT=$WORK/debugroot XDG_CACHE_HOME=$WORK/cache2 # (a new cache: the
# unstripped binary's entry, with the same build-id, would give the copy its lines)
mkdir -p "$CALLPATH_DEBUG_ROOT/.build-id/${bid:0:2}"
run "$CALLPATH" struct --dump "$WORK/loops.stripped"
grep -q 'loops\.c' "$WORK/run.out" && fail "the stripped copy has source files without its debug file"
cp "$WORK/loops.debug" "$CALLPATH_DEBUG_ROOT/.build-id/${bid:0:2}/${bid:2}.debug"
run "$CALLPATH" struct --dump "$WORK/loops.stripped"
grep -q 'loops\.c' "$WORK/run.out" ||
	fail "the debug file installed after the first analysis was not used (stale cache entry)"
[ -f "$XDG_CACHE_HOME/callpath/struct/$bid.dbg.v1.cpst" ] || fail "no cache entry for the build-id with its debug file"
