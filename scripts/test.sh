#!/usr/bin/env bash
# The whole test suite: installs the build and test dependencies, builds, runs every unit and
# end-to-end test; then rebuilds the offline tools with ASan/UBSan (the preloaded runtime is
# never sanitized) and runs the suite again on them; first it checks the sources' format. Both passes always run; the last line
# gives the passed, failed and skipped counts of each, and the exit status is 0 only when
# neither pass failed. CALLPATH_SKIP_SANITIZE=1 runs the first pass only.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test || exit 1
jobs=$(nproc)
summary=()
status=0

# pass NAME BUILD_DIR CTEST_ARGS...: builds BUILD_DIR, runs ctest there, appends the counts.
pass() {
	local name=$1 dir=$2 junit
	shift 2
	if ! scripts/build.sh "$dir" "${CMAKE_ARGS[@]}"; then
		summary+=("$name: build failed")
		status=1
		return
	fi
	junit=$PWD/$dir/ctest-junit.xml
	rm -f "$junit"
	(cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 600 --output-junit "$junit" "$@") ||
		status=1
	summary+=("$name: $(counts "$junit")")
}

# The counts from ctest's JUnit file (its <testsuite> attributes).
counts() {
	local total failed skipped disabled
	[ -f "$1" ] || {
		echo "no results"
		status=1
		return
	}
	attr() { sed -n "s/^[[:space:]]*$1=\"\([0-9]*\)\".*/\1/p" "$2" | head -n1; }
	total=$(attr tests "$1") failed=$(attr failures "$1")
	skipped=$(attr skipped "$1") disabled=$(attr disabled "$1")
	echo "$((total - failed - skipped - disabled)) passed, $failed failed, $((skipped + disabled)) skipped"
	[ "$failed" = 0 ] && [ "$total" -gt 0 ] || status=1
}

# The sources follow .clang-format (a check, not a rewrite).
if scripts/check-format.sh; then
	summary+=("format: ok")
else
	summary+=("format: FAILED")
	status=1
fi

CMAKE_ARGS=(-DCALLPATH_SANITIZE=OFF) # build/ may have been configured otherwise by hand
pass plain build

if [ "${CALLPATH_SKIP_SANITIZE:-0}" != 1 ]; then
	echo "== again with ASan/UBSan on the offline tools =="
	# record-nomalloc preloads a malloc-counting shim into callpath itself, which ASan's
	# allocator cannot sit under; it tests the runtime, which the first pass covered.
	# The fuzzers already run under ASan in the first pass. report-conserve (the cost
	# conservation property over every workload, the suite's longest test) checks numbers the
	# first pass already checked; the report code it runs is covered here by the other
	# report-* tests.
	CMAKE_ARGS=(-DCALLPATH_SANITIZE=ON)
	ASAN_OPTIONS=verify_asan_link_order=0:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		pass asan build-asan -E 'record-nomalloc|fuzz|report-conserve'
fi

result=PASS
[ $status = 0 ] || result=FAIL
line=$(printf '%s; ' "${summary[@]}")
echo "test.sh: ${line%; } -> $result"
exit $status
