#!/bin/bash
# Every build of the runtime (libcallpath-rt[-alloc][-io][-wait].so) exports exactly the
# allowlist (tests/e2e/record-exports.txt): the symbols of all builds, plus the wrappers
# of its trigger families and of no other family (a family not asked for is not
# interposed at all, so it costs the program nothing).
source "$(dirname "$0")/lib.sh"
require_tool nm
allow=$CP_SOURCE_DIR/tests/e2e/record-exports.txt
n=0
for mask in 0 1 2 3 4 5 6 7; do
	name=libcallpath-rt families=""
	i=0
	for f in alloc io wait; do
		if [ $((mask >> i & 1)) = 1 ]; then
			name=$name-$f families="$families $f"
		fi
		i=$((i + 1))
	done
	lib=$CP_BUILD_DIR/$name.so
	require_built "$lib"
	nm -D --defined-only "$lib" | awk '{print $3}' | sort >"$WORK/have"
	grep -v '^#' "$allow" | awk -v fams="$families" '
		BEGIN { n = split(fams, f, " "); for (i = 1; i <= n; i++) on[f[i]] = 1 }
		NF == 1 || on[$2] { print $1 }' | sort >"$WORK/want"
	diff "$WORK/want" "$WORK/have" >"$WORK/diff" || fail "$name.so: exported symbols differ from the allowlist:
$(cat "$WORK/diff")"
	n=$((n + 1))
done
# The base build interposes no family: none of the lock, I/O or allocation functions.
nm -D --defined-only "$CP_BUILD_DIR/libcallpath-rt.so" | grep -wE 'pthread_mutex_lock|malloc|read' &&
	fail "libcallpath-rt.so interposes a trigger family's function"
note "ok ($n builds)"
