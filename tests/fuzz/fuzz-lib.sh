# Builds and runs the libFuzzer targets (tests/fuzz/fuzz-*.c); sourced by the e2e fuzz
# tests (after tests/e2e/lib.sh) and by tests/fuzz/run.sh. The fuzzers are compiled by clang
# (-fsanitize=fuzzer,address,undefined), whatever compiler builds the project, from the
# source lists of the modules' CMake targets (CP_BUILD_DIR/tests/fuzz/<target>.sources,
# written by tests/fuzz/CMakeLists.txt): each module becomes an archive, so a fuzzer links
# only the objects it uses.

FUZZ_CFLAGS=(-g -O1 -std=gnu11 -fsanitize=fuzzer-no-link,address,undefined
	-fno-sanitize-recover=undefined -D_GNU_SOURCE -DCALLPATH_VERSION='"fuzz"'
	-I"$CP_SOURCE_DIR/src")

# fuzz_require_clang: skips (exit 77) when clang or its libFuzzer runtime is missing.
fuzz_require_clang() {
	require_tool clang
	printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' \
		>"$WORK/fuzz-probe.c"
	clang -fsanitize=fuzzer "$WORK/fuzz-probe.c" -o "$WORK/fuzz-probe" 2>/dev/null ||
		skip "clang cannot build libFuzzer targets here (libclang-rt-14-dev missing?)"
}

# fuzz_build NAME TARGETS... -- LIBS...: $WORK/NAME from tests/fuzz/NAME.c, linked with the
# archives of the CMake targets (in link order: users first) and the system LIBS.
fuzz_build() {
	local name=$1 t src obj list archives=() libs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		list=$CP_BUILD_DIR/tests/fuzz/$1.sources
		require_built "$list"
		mkdir -p "$WORK/fuzz-obj/$1"
		t=$WORK/fuzz-obj/lib$1.a
		if [ ! -f "$t" ]; then
			while read -r src; do
				case $src in *.c) ;; *) continue ;; esac
				obj=$WORK/fuzz-obj/$1/$(basename "$src" .c).$(echo "$src" | cksum | cut -d' ' -f1).o
				clang "${FUZZ_CFLAGS[@]}" -c "$src" -o "$obj" 2>>"$WORK/fuzz-build.err" ||
					{ cat "$WORK/fuzz-build.err" >&2; fail "$name: cannot compile $src"; }
			done <"$list"
			ar rcs "$t" "$WORK/fuzz-obj/$1"/*.o
		fi
		archives+=("$t")
		shift
	done
	[ "${1:-}" = -- ] && shift
	libs=("$@")
	clang "${FUZZ_CFLAGS[@]}" -fsanitize=fuzzer "$CP_SOURCE_DIR/tests/fuzz/$name.c" \
		"${archives[@]}" "${libs[@]}" -o "$WORK/$name" 2>>"$WORK/fuzz-build.err" ||
		{ cat "$WORK/fuzz-build.err" >&2; fail "the fuzzer $name does not build"; }
}

# fuzz_run NAME SECONDS MAX_LEN CORPUS_DIR: runs $WORK/NAME on the corpus; any crash,
# leak, timeout or sanitizer report fails the test (reproducers kept in
# CP_BUILD_DIR/fuzz-artifacts); otherwise notes how many runs were done.
fuzz_run() {
	local name=$1 secs=$2 maxlen=$3 corpus=$4 rc
	(
		cd "$WORK" &&
			UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" ASAN_OPTIONS=detect_leaks=1 \
				"./$name" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=20 \
				-max_len="$maxlen" -print_final_stats=1 "$corpus"
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
