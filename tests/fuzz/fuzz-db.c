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

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64], path2[64];
static uint8_t *seed;
static size_t nseed;

static uint32_t scope(struct cp_db *db, uint32_t parent, int kind, uint32_t proc, uint32_t file,
		      uint32_t line)
{
	struct cp_db_scope s;
	memset(&s, 0, sizeof s);
	s.kind = (uint8_t)kind;
	s.proc = proc;
	s.module = 0;
	s.file = file;
	s.line = line;
	s.line_lo = line;
	s.line_hi = line + 5;
	s.addr = line * 16u;
	return cp_db_scope_child(db, parent, &s);
}

static void write_seed(const char *to)
{
	struct cp_db db;
	cp_db_init(&db);
	uint8_t bid[2] = {1, 2};
	cp_db_module(&db, "/bin/app", bid, 2, CP_DB_MOD_EXE);
	uint32_t f = cp_db_file(&db, "/src/a.c");
	struct cp_db_proc p = {.name = "main", .module = 0, .file = f, .line = 1, .entry = 16};
	uint32_t pm = cp_db_proc(&db, &p);
	p.name = "work";
	p.entry = 64;
	uint32_t pw = cp_db_proc(&db, &p);
	struct cp_db_metric m = {.name = "cputime", .unit = "ns", .period = 1000};
	cp_db_metric_add(&db, &m);
	m.name = "cycles";
	cp_db_metric_add(&db, &m);
	struct cp_db_profile pr = {.rank = -1, .host = "h", .thread_name = "t"};
	cp_db_profile_add(&db, &pr);
	cp_db_profile_add(&db, &pr);
	uint32_t s1 = scope(&db, 0, CP_DBK_PROC, pm, CP_DB_NONE, 0);
	uint32_t l = scope(&db, s1, CP_DBK_LOOP, pm, f, 5);
	uint32_t s2 = scope(&db, l, CP_DBK_PROC, pw, f, 6);
	uint32_t st = scope(&db, s2, CP_DBK_STMT, pw, f, 20);
	uint32_t st2 = scope(&db, l, CP_DBK_STMT, pm, f, 7);
	cp_db_add(&db, 0, st, 0, 3000);
	cp_db_add(&db, 1, st, 0, 1000);
	cp_db_add(&db, 1, st, 1, 2.5);
	cp_db_add(&db, 0, st2, 0, 7);
	cp_db_note_add(&db, "note");
	cp_db_derived_add(&db, "ratio", "cycles / cputime", "", NULL);
	if (cp_db_write(&db, to))
		fprintf(stderr, "%s\n", cp_error_message());
	cp_db_release(&db);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seed_path = getenv("CP_FUZZ_DB_SEED");
	if (seed_path) {
		write_seed(seed_path);
		exit(0);
	}
	/* tmpfs when there is one: every database written is fsync'ed */
	const char *tmp = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
	snprintf(path, sizeof path, "%s/cp-fuzz-db-%d.db", tmp, (int)getpid());
	snprintf(path2, sizeof path2, "%s/cp-fuzz-db-%d-2.db", tmp, (int)getpid());
	write_seed(path); /* kept in memory for the SQL inputs (writing one fsyncs) */
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
