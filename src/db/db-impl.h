/* Private to src/db: the interning tables behind struct cp_db (db->impl) and the pieces
 * the derived metrics (derived.c) and the SQLite file (db-sqlite*.c) share with db.c. */
#ifndef CP_DB_DB_IMPL_H
#define CP_DB_DB_IMPL_H

#include "base/hash.h"
#include "db/db.h"
#include "db/expr.h"

#include <stddef.h>
#include <stdint.h>

struct cp_db_impl {
	struct cp_hashtab strtab, modtab, filetab, proctab, scopetab;
	const char **strs; /* interned strings, by string index */
	size_t nstrs, astrs;
	size_t amodules, afiles, aprocs, ascopes, ametrics, aprofiles, anotes, awarnings, asources;
	uint32_t *last_child; /* [nscopes]: to append children in creation order */
	size_t nraw;
	struct cp_expr **exprs; /* [nmetrics]: compiled formula of a derived metric, else NULL */
};

static inline struct cp_db_impl *cp_db_impl(const struct cp_db *db)
{
	return (struct cp_db_impl *)db->impl;
}

/* derived.c: computes the stats of derived metric `metric` from the raw ones (db->stats
 * already laid out for db->nmetrics). */
void cp_db_derived_compute(struct cp_db *db, uint32_t metric);

/* db.c: appends a derived metric entry (no stats); the expression is owned by the db. */
uint32_t cp_db_metric_add_derived(struct cp_db *db, const struct cp_db_metric *m,
				  struct cp_expr *expr);

/* db-finish.c: the walks cp_db_finish makes over a profile's values, for the statistics
 * and for the per-thread tables (db-sqlite-threads.c): emit gets each nonzero value of
 * profile p, exclusive (incl 0: the scope's own code, as the statistics define it) or
 * inclusive, for every scope and raw metric, scopes in decreasing id order, metrics in
 * increasing order within a scope. A walk holds scratch space for the whole tree: one per
 * thread. */
typedef void (*cp_db_emit_fn)(void *ctx, uint32_t scope, uint32_t metric, double value,
			      uint32_t profile);
struct cp_db_walk;
struct cp_db_walk *cp_db_walk_new(const struct cp_db *db);
void cp_db_walk_profile(struct cp_db_walk *w, uint32_t p, int incl, cp_db_emit_fn emit, void *ctx);
void cp_db_walk_free(struct cp_db_walk *w);

#endif
