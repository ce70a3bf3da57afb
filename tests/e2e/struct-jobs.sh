#!/bin/bash
# callpath struct -j N: the structure file is byte-identical for any number of threads
# (CFGs and loop nests are found in parallel, DWARF and scope assembly stay in order), on
# the fixtures and on libc (with its debug file when installed). Bad -j values are refused.
source "$(dirname "$0")/lib.sh"
FX=$CP_BUILD_DIR/tests/fixtures/src
require_built "$FX/loops.gcc.O2"
export XDG_CACHE_HOME=$WORK/cache
bins=(/lib/x86_64-linux-gnu/libc.so.6)
for f in loops.gcc.O2 loops.clang.O2 libloops.gcc.O2.so loops.gcc.O2.stripped; do
	[ -e "$FX/$f" ] && bins+=("$FX/$f")
done
n=0
for bin in "${bins[@]}"; do
	[ -r "$bin" ] || continue
	for j in 1 2 7; do
		"$CALLPATH" struct --no-cache -j $j "$bin" -o "$WORK/s.$j" >/dev/null ||
			fail "struct -j $j failed on $bin"
	done
	# without -j (one thread)
	"$CALLPATH" struct --no-cache "$bin" -o "$WORK/s.default" >/dev/null || fail "struct failed on $bin"
	for j in 2 7 default; do
		cmp -s "$WORK/s.1" "$WORK/s.$j" || fail "struct -j $j differs from -j 1 on $bin"
	done
	n=$((n + 1))
done
[ $n -ge 2 ] || fail "only $n binaries analysed (libc and the fixtures expected)"
for bad in 0 -1 x 65 2x; do
	if "$CALLPATH" struct -j "$bad" "${bins[0]}" >/dev/null 2>"$WORK/err"; then
		fail "-j $bad accepted"
	fi
	grep -q -- "-j takes a number" "$WORK/err" || fail "-j $bad: unclear error: $(cat "$WORK/err")"
done
note "-j 1/2/7/default byte-identical on $n binaries"
