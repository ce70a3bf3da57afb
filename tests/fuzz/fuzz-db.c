/* libFuzzer target for the profile database reader (src/db/db-sqlite-read.c).
 *
 * Input: a database file. It is written to a temporary file and read with cp_db_read, which
 * must return 0 or CP_EFORMAT/CP_EIO and never crash or leak; a database that reads is
 * exercised (statistics, per-profile dense values, self sums, a derived metric) and written
 * and read again.
 *
 * An input starting with "SQL\n" is instead SQL run on a fresh small valid database before
 * it is read (SQLite rejects most byte-level mutations of its own file before our checks
 * see them; row-level edits reach them).
 *
 * Seeds: run the binary with CP_FUZZ_DB_SEED=PATH to write a small valid database to PATH
 * and exit. Build and run: tests/e2e/db-fuzz.sh (clang -fsanitize=fuzzer,address). */
#include "base/error.h"
#include "db/db.h"
#include "fuzz-seed-db.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64], path2[64];
static uint8_t *seed;
static size_t nseed;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seed_path = getenv("CP_FUZZ_DB_SEED");
	if (seed_path) {
		fuzz_seed_db_write(seed_path);
		exit(0);
	}
	/* tmpfs when there is one: every database written is fsync'ed */
	const char *tmp = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
	snprintf(path, sizeof path, "%s/cp-fuzz-db-%d.db", tmp, (int)getpid());
	snprintf(path2, sizeof path2, "%s/cp-fuzz-db-%d-2.db", tmp, (int)getpid());
	fuzz_seed_db_write(path); /* kept in memory for the SQL inputs (writing one fsyncs) */
	FILE *f = fopen(path, "rb");
	if (f) {
		seed = malloc(1 << 20);
		nseed = fread(seed, 1, 1 << 20, f);
		fclose(f);
	}
	unlink(path);
	return 0;
}

static void exercise(struct cp_db *db)
{
	size_t nraw = cp_db_nraw(db);
	double sink = 0;
	for (size_t s = 0; s < db->nscopes; s++) {
		for (size_t m = 0; m < db->nmetrics; m++)
			sink += cp_db_stat_get(db, (uint32_t)s, (uint32_t)m, 1)->max;
		const struct cp_db_scope *sc = &db->scopes[s];
		if (sc->proc != CP_DB_NONE)
			sink += (double)strlen(db->procs[sc->proc].name);
		if (sc->file != CP_DB_NONE)
			sink += (double)strlen(db->files[sc->file].path);
		if (sc->module != CP_DB_NONE)
			sink += (double)strlen(db->modules[sc->module].name);
	}
	if (db->nscopes < 100000 && nraw) {
		double *ex = calloc(db->nscopes * nraw, sizeof *ex);
		double *in = calloc(db->nscopes * nraw, sizeof *in);
		for (uint32_t p = 0; p < db->nprofiles && p < 8; p++)
			cp_db_profile_dense(db, p, ex, in);
		free(ex);
		free(in);
	}
	if (nraw)
		cp_db_derived_add(db, "fuzz_twice", db->metrics[0].name, "", NULL);
	(void)sink;
}

static int apply_sql(const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f || !seed)
		abort();
	fwrite(seed, 1, nseed, f);
	fclose(f);
	char *sql = strndup((const char *)data + 4, size - 4);
	sqlite3 *db = NULL;
	int ok = sqlite3_open(path, &db) == SQLITE_OK;
	if (ok)
		sqlite3_exec(db, sql, NULL, NULL, NULL); /* partly applied is fine */
	sqlite3_close(db);
	free(sql);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 4 && !memcmp(data, "SQL\n", 4)) {
		if (!apply_sql(data, size)) {
			unlink(path);
			return 0;
		}
	} else {
		FILE *f = fopen(path, "wb");
		if (!f)
			return 0;
		fwrite(data, 1, size, f);
		fclose(f);
	}
	struct cp_db db;
	int rc = cp_db_read(&db, path);
	if (rc == 0) {
		exercise(&db);
		if (cp_db_write(&db, path2) == 0) {
			struct cp_db again;
			if (cp_db_read(&again, path2))
				abort(); /* what we write we must read */
			cp_db_release(&again);
		}
		unlink(path2);
	} else if (rc != CP_EFORMAT && rc != CP_EIO) {
		abort();
	}
	cp_db_release(&db);
	unlink(path);
	return 0;
}
