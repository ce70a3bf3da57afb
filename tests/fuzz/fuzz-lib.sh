# Runs the libFuzzer targets (tests/fuzz/fuzz-*.c); sourced by the e2e fuzz tests (after
# tests/e2e/lib.sh) and by tests/fuzz/run.sh. The fuzzers are built at build time, by clang
# (-fsanitize=fuzzer,address,undefined) whatever compiler builds the project, into
# CP_BUILD_DIR/tests/fuzz/ (tests/fuzz/CMakeLists.txt, which writes in fuzzers.state whether
# it could build them).

# fuzz_require NAME: the built fuzzer NAME; skips (exit 77) when clang cannot build libFuzzer
# targets here or in a sanitized build (whose test pass leaves the fuzz tests out), fails
# when it should have been built.
fuzz_require() {
	local dir=$CP_BUILD_DIR/tests/fuzz state
	state=$(cat "$dir/fuzzers.state" 2>/dev/null)
	case $state in
	no-clang) skip "clang cannot build libFuzzer targets here (clang or libclang-rt-14-dev missing?)" ;;
	sanitized) skip "the fuzzers are built by the unsanitized build only (they carry their own sanitizers)" ;;
	esac
	require_built "$dir/$1"
}

# fuzz_run NAME SECONDS MAX_LEN CORPUS_DIR: runs the fuzzer NAME (in $WORK) on the corpus; any
# crash, leak, timeout or sanitizer report fails the test (reproducers kept in
# CP_BUILD_DIR/fuzz-artifacts); otherwise notes how many runs were done.
fuzz_run() {
	local name=$1 secs=$2 maxlen=$3 corpus=$4 rc
	(
		cd "$WORK" &&
			UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" ASAN_OPTIONS=detect_leaks=1 \
				"$CP_BUILD_DIR/tests/fuzz/$name" -max_total_time="$secs" -rss_limit_mb=2048 \
				-timeout=20 -max_len="$maxlen" -print_final_stats=1 "$corpus"
	) >"$WORK/fuzz.log" 2>&1
	rc=$?
	grep -E -A12 "runtime error|ERROR: (Address|Leak)Sanitizer|deadly signal" "$WORK/fuzz.log" | head -40
	tail -6 "$WORK/fuzz.log"
	if [ $rc -ne 0 ]; then
		mkdir -p "$CP_BUILD_DIR/fuzz-artifacts"
		cp "$WORK"/crash-* "$WORK"/leak-* "$WORK"/timeout-* "$CP_BUILD_DIR/fuzz-artifacts/" 2>/dev/null
		fail "$name found a problem (reproducers in $CP_BUILD_DIR/fuzz-artifacts)"
	fi
	grep -qE "^Done [0-9]+ runs" "$WORK/fuzz.log" || fail "$name did not complete its run"
	note "$name: $(grep -E '^Done [0-9]+ runs' "$WORK/fuzz.log"), no findings"
}
