#!/bin/bash
# Bad inputs give a clear error and a non-zero exit below 128 (no crash): a missing file,
# a text file, a directory, ELF files cut at several points, an ELF for another machine
# (e_machine patched), a 32-bit ELF, corrupt .debug_info bytes; and a corrupt cached
# structure file is recomputed, not trusted.
source "$(dirname "$0")/lib.sh"
FX=$CP_BUILD_DIR/tests/fixtures/src
BIN=$FX/loops.gcc.O2
require_built "$BIN"
export XDG_CACHE_HOME=$WORK/cache

expect_error() { # expect_error FILE PATTERN
	local rc=0
	"$CALLPATH" struct --no-cache "$1" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" -ne 0 ] || fail "$1: exit 0, expected an error"
	[ "$rc" -lt 128 ] || { cat "$WORK/err" >&2; fail "$1: crashed (exit $rc)"; }
	grep -Eq "$2" "$WORK/err" || { cat "$WORK/err" >&2; fail "$1: message does not match /$2/"; }
	note "$(basename "$1"): exit $rc: $(head -c 200 "$WORK/err")"
}

expect_error "$WORK/does-not-exist" "cannot open .*No such file"
echo "just text" >"$WORK/text"
expect_error "$WORK/text" "not an ELF file"
mkdir "$WORK/dir"
expect_error "$WORK/dir" "not a regular file"
size=$(stat -c %s "$BIN")
for cut in 0 1 16 63 64 200 4096 $((size / 2)) $((size - 200)) $((size - 1)); do
	head -c "$cut" "$BIN" >"$WORK/cut$cut"
	expect_error "$WORK/cut$cut" "truncated|not an ELF|cannot read|corrupt"
done
# Another machine: e_machine (offset 18) = 183 (AArch64).
cp "$BIN" "$WORK/arm"
printf '\xb7\x00' | dd of="$WORK/arm" bs=1 seek=18 conv=notrunc status=none
expect_error "$WORK/arm" "machine 183.*x86-64"
# 32-bit class byte.
cp "$BIN" "$WORK/elf32"
printf '\x01' | dd of="$WORK/elf32" bs=1 seek=4 conv=notrunc status=none
expect_error "$WORK/elf32" "64-bit|corrupt|truncated"
# Corrupt DWARF: overwrite the first unit's header and DIEs in .debug_info.
read -r off < <(readelf -SW "$BIN" | python3 -c '
import re, sys
for l in sys.stdin:
    m = re.search(r"\] \.debug_info\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)", l)
    if m: print(int(m.group(1), 16))')
cp "$BIN" "$WORK/baddwarf"
head -c 64 /dev/zero | tr '\0' '\377' | dd of="$WORK/baddwarf" bs=1 seek="$off" conv=notrunc status=none
expect_error "$WORK/baddwarf" "corrupt DWARF"
# The report's symbolizer degrades to symbols on the same file instead of failing.
"$CALLPATH" struct "$WORK/baddwarf" --symbolize 0x1260 >"$WORK/out" 2>"$WORK/err" ||
	fail "--symbolize failed on corrupt DWARF"
grep -q "procedure:nest" "$WORK/out" || fail "symbolizer lost the symbol of nest"
grep -q "DWARF not used" "$WORK/err" || fail "no warning about the corrupt DWARF"

# A corrupt cache entry is recomputed.
run "$CALLPATH" struct "$BIN"
entry=$(ls "$XDG_CACHE_HOME"/callpath/struct/*.cpst)
printf 'garbage' | dd of="$entry" bs=1 seek=200 conv=notrunc status=none
run "$CALLPATH" struct "$BIN"
grep -q "cached:" "$WORK/run.out" && fail "a corrupt cache entry was used"
run "$CALLPATH" struct "$BIN"
grep -q "cached:" "$WORK/run.out" || fail "the recomputed entry was not cached"
note "all bad inputs rejected cleanly"
