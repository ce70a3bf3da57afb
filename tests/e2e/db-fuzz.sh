#!/bin/bash
# Runs the profile-database reader fuzzer (tests/fuzz/fuzz-db.c) for a bounded time
# (CP_FUZZ_SECONDS, default 10) from a small valid database as seed. Builds it with clang
# -fsanitize=fuzzer,address,undefined from the sources; skips when clang or libFuzzer is
# missing. Any crash, leak or sanitizer report fails the test (the reproducer is kept).
source "$(dirname "$0")/lib.sh"
require_tool clang
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$WORK/probe.c"
clang -fsanitize=fuzzer "$WORK/probe.c" -o "$WORK/probe" 2>/dev/null || skip "clang has no libFuzzer"
S=$CP_SOURCE_DIR/src
SRCS=("$S"/db/db.c "$S"/db/db-sqlite.c "$S"/db/db-sqlite-read.c "$S"/db/db-sqlite-write.c "$S"/db/derived.c "$S"/db/expr.c "$S"/db/names.c
	"$S"/base/error.c "$S"/base/strbuf.c "$S"/base/xalloc.c "$S"/base/hash.c "$S"/base/atomic-file.c)
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-D_GNU_SOURCE -DCALLPATH_VERSION='"fuzz"' -I"$S" "${SRCS[@]}" "$CP_SOURCE_DIR/tests/fuzz/fuzz-db.c" \
	-o "$WORK/fuzz-db" -lsqlite3 -lzstd -lm 2>"$WORK/build.err" ||
	{ cat "$WORK/build.err" >&2; fail "the fuzzer does not build"; }
mkdir "$WORK/corpus"
CP_FUZZ_DB_SEED=$WORK/corpus/seed.db "$WORK/fuzz-db" || fail "cannot write the seed database"
[ -s "$WORK/corpus/seed.db" ] || fail "no seed database"
# row-level edits (see fuzz-db.c)
i=0
while read -r sql; do
	printf 'SQL\n%s\n' "$sql" >"$WORK/corpus/sql-$((i++))"
done <<'END'
UPDATE scope SET parent = 3 WHERE id = 2
UPDATE scope SET kind = 9 WHERE id = 4
UPDATE scope SET file = 7, proc = 1 WHERE id = 5
UPDATE value SET incl_argmax = 9, incl_count = -3
UPDATE profile_values SET data = substr(data, 1, 12), size = 40
UPDATE profile_values SET nvalues = nvalues + 1
UPDATE metric SET formula = 'cputime / (cycles' WHERE kind = 'derived'
UPDATE metric SET kind = 'raw' WHERE kind = 'derived'
DELETE FROM module; UPDATE procedure SET file = NULL
INSERT INTO meta VALUES ('note', 'x'); UPDATE meta SET value = NULL
UPDATE profile_samples SET metric = 5
UPDATE procedure SET name = NULL WHERE id = 1
END
cd "$WORK" || exit 1
secs=${CP_FUZZ_SECONDS:-10}
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
ASAN_OPTIONS=detect_leaks=1 ./fuzz-db -max_total_time="$secs" -rss_limit_mb=2048 -timeout=20 \
	-max_len=262144 -print_final_stats=1 corpus >"$WORK/fuzz.log" 2>&1
rc=$?
grep -E -A12 "runtime error|ERROR: (Address|Leak)Sanitizer|deadly signal" "$WORK/fuzz.log" | head -40
tail -6 "$WORK/fuzz.log"
if [ $rc -ne 0 ]; then
	mkdir -p "$CP_BUILD_DIR/fuzz-artifacts"
	cp "$WORK"/crash-* "$WORK"/leak-* "$WORK"/timeout-* "$CP_BUILD_DIR/fuzz-artifacts/" 2>/dev/null
	fail "the fuzzer found a problem (reproducers in $CP_BUILD_DIR/fuzz-artifacts)"
fi
note "no findings in ${secs}s"
