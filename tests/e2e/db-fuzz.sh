#!/bin/bash
# Runs the profile-database reader fuzzer (tests/fuzz/fuzz-db.c) for a bounded time
# (CP_FUZZ_SECONDS, default 10) from a small valid database as seed (built by clang at build
# time, tests/fuzz/CMakeLists.txt; skipped when clang or libFuzzer is missing). Any crash,
# leak or sanitizer report fails the test (the reproducer is kept).
source "$(dirname "$0")/lib.sh"
source "$CP_SOURCE_DIR/tests/fuzz/fuzz-lib.sh"
fuzz_require fuzz-db
mkdir "$WORK/corpus"
CP_FUZZ_DB_SEED=$WORK/corpus/seed.db "$CP_BUILD_DIR/tests/fuzz/fuzz-db" || fail "cannot write the seed database"
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
UPDATE source SET name = NULL
DELETE FROM source; INSERT INTO source VALUES ('x.thr', -1, -1, -1)
END
fuzz_run fuzz-db "${CP_FUZZ_SECONDS:-10}" 262144 corpus
