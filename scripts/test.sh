#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every unit and end-to-end test;
# then rebuilds the offline tools with ASan/UBSan (the preloaded runtime is never sanitized)
# and runs the suite again on them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

scripts/build.sh build
(cd build && ctest --output-on-failure -j"$jobs" --timeout 600)

if [ "${CALLPATH_SKIP_SANITIZE:-0}" != 1 ]; then
	echo "== again with ASan/UBSan on the offline tools =="
	scripts/build.sh build-asan -DCALLPATH_SANITIZE=ON
	# record-nomalloc preloads a malloc-counting shim into callpath itself, which ASan's
	# allocator cannot sit under; it tests the runtime, which the first pass covered.
	# The fuzzers already run under ASan in the first pass.
	(cd build-asan && ASAN_OPTIONS=verify_asan_link_order=0:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j"$jobs" --timeout 600 -E 'record-nomalloc|fuzz')
fi
