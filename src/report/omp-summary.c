/* The summary's OpenMP table: per parallel region (a procedure scope named "parallel
 * region in F" by the correlation, docs/internals/omp.md), the threads that ran it, their
 * work (omp-work: its time outside the runtime's waits) with its imbalance, max/mean and
 * the thread with the max, and the region's waits (omp-wait). */
#include "report/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REGION_PREFIX "parallel region"

struct omp_row {
	uint32_t scope;
	double work;
};

static int by_work(const void *a, const void *b)
{
	double x = ((const struct omp_row *)a)->work, y = ((const struct omp_row *)b)->work;
	return (x < y) - (x > y);
}

/* The procedure of the frame that called the one holding scope s (CP_DB_NONE if none). */
static uint32_t caller_of(const struct cp_db *db, uint32_t s)
{
	int frames = 0;
	for (uint32_t x = db->scopes[s].parent; x != CP_DB_NONE && x < db->nscopes;
	     x = db->scopes[x].parent)
		if (db->scopes[x].kind == CP_DBK_PROC && ++frames == 2)
			return db->scopes[x].proc;
	return CP_DB_NONE;
}

static void print_row(const struct cp_db *db, uint32_t s, uint32_t work, uint32_t wait, FILE *out)
{
	const struct cp_db_scope *sc = &db->scopes[s];
	const struct cp_db_stat *w = cp_db_stat_get(db, s, work, 1);
	const struct cp_db_stat *x = cp_db_stat_get(db, s, wait, 1);
	const char *file = sc->file != CP_DB_NONE ? db->files[sc->file].path : NULL;
	const char *base = file && strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	uint32_t caller = caller_of(db, s);
	char where[400];
	snprintf(where, sizeof where, "%s%s%s:%u%s%s", db->procs[sc->proc].name, base ? " at " : "",
		 base ? base : "", sc->line, caller != CP_DB_NONE ? ", called from " : "",
		 caller != CP_DB_NONE ? db->procs[caller].name : "");
	char who[32] = "-";
	if (w->argmax < db->nprofiles)
		snprintf(who, sizeof who, "%d:%u", db->profiles[w->argmax].pid,
			 db->profiles[w->argmax].tidx);
	double total = w->sum + x->sum;
	fprintf(out, "%8.3fs %7u %8.2f  %-10s %8.3fs %5.1f%%  %s\n", w->sum / 1e9, w->count,
		w->mean > 0 ? w->max / w->mean : 0.0, who, x->sum / 1e9,
		total > 0 ? 100.0 * x->sum / total : 0.0, where);
}

void cp_report_print_omp(const struct cp_profile *p, FILE *out, size_t n)
{
	const struct cp_db *db = &p->db;
	uint32_t work = cp_db_metric_find(db, "omp-work");
	uint32_t wait = cp_db_metric_find(db, "omp-wait");
	if (work == CP_DB_NONE || wait == CP_DB_NONE || !db->stats)
		return;
	struct omp_row *rows = malloc(db->nscopes * sizeof(*rows));
	size_t nrows = 0;
	for (uint32_t s = 0; rows && s < db->nscopes; s++) {
		const struct cp_db_scope *sc = &db->scopes[s];
		if (sc->kind != CP_DBK_PROC || sc->proc == CP_DB_NONE ||
		    strncmp(db->procs[sc->proc].name, REGION_PREFIX, strlen(REGION_PREFIX)))
			continue;
		const struct cp_db_stat *w = cp_db_stat_get(db, s, work, 1);
		const struct cp_db_stat *x = cp_db_stat_get(db, s, wait, 1);
		if (w->sum > 0 || x->sum > 0)
			rows[nrows++] = (struct omp_row){s, w->sum};
	}
	if (nrows) {
		qsort(rows, nrows, sizeof(*rows), by_work);
		fprintf(out,
			"\nOpenMP regions (work: omp-work, the threads' time in the region outside "
			"the runtime's waits):\n%9s %7s %8s  %-10s %9s %6s  %s\n",
			"work", "threads", "max/mean", "max in", "omp-wait", "wait%", "region");
		for (size_t i = 0; i < nrows && i < n; i++)
			print_row(db, rows[i].scope, work, wait, out);
	}
	free(rows);
}
