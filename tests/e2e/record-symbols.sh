#!/bin/bash
# The runtime exports exactly the allowlist (tests/e2e/record-exports.txt), and the
# trampolines the sample handler hides from call paths fit its size bound.
source "$(dirname "$0")/lib.sh"
require_tool nm
lib=$CP_BUILD_DIR/libcallpath-rt.so
[ -f "$lib" ] || skip "runtime not built"
nm -D --defined-only "$lib" | awk '{print $3}' | sort >"$WORK/have"
grep -v '^#' "$CP_SOURCE_DIR/tests/e2e/record-exports.txt" | sort >"$WORK/want"
diff "$WORK/want" "$WORK/have" >"$WORK/diff" || fail "exported symbols differ from the allowlist:
$(cat "$WORK/diff")"
# CP_TRAMPOLINE_MAX in src/runtime/core/runtime.h
max=$(sed -n 's/^#define CP_TRAMPOLINE_MAX \([0-9]*\).*/\1/p' "$CP_SOURCE_DIR/src/runtime/core/runtime.h")
for fn in main_wrapper thread_trampoline; do
	hex=$(nm -S "$lib" | awk -v f=$fn '$4 == f {print $2}')
	[ -n "$hex" ] || fail "$fn not found in the symbol table"
	size=$((16#$hex))
	[ -n "$size" ] || fail "$fn not found in the symbol table"
	[ "$size" -lt "$max" ] || fail "$fn is $size bytes, over CP_TRAMPOLINE_MAX $max"
done
exit 0
