/* Private to src/db/correlate (and its unit tests): correlation of one thread's calling
 * context tree (measure-read.h) with the structure of its load modules (structure.h) into
 * the scope tree and values of a profile database (db.h).
 *
 * A node's frame is placed as follows (the paper's Figure 4):
 *   CALL at return address r in module m: the scope chain of r - 1 (the call instruction),
 *     PROC -> nested INLINE/LOOP scopes -> STMT (the call site), is instantiated under the
 *     scope its parent's call leads to: the PROC frame carries the parent's call site
 *     (file, line) and the callee frames of its children hang under the innermost
 *     LOOP/INLINE/PROC of the chain, carrying the call site of this STMT;
 *   PC (the sampled instruction) and SIGNAL (an exact interrupted PC): the chain of the
 *     address itself; exclusive costs go to its STMT scope.
 * Code without structure (no file, no symbols, address outside every procedure) becomes
 * one unknown procedure per module, "[libx.so]", costs on the frame itself; consecutive
 * frames of it collapse into one. Procedures found only from .eh_frame FDEs keep their
 * structure name, or "[libx.so+0xENTRY]" when they have none.
 * CALL frames of callpath's own runtime (its interposed wrappers) are skipped.
 *
 * Every distinct (module, address) is looked up once, and every distinct (parent scope,
 * call site, address) instantiated once, whatever the number of threads and processes. */
#ifndef CP_DB_CORRELATE_H
#define CP_DB_CORRELATE_H

#include "db/db.h"
#include "format/measure-read.h"
#include "format/structure.h"

struct cp_corr;

struct cp_corr *cp_corr_new(struct cp_db *db);
void cp_corr_free(struct cp_corr *c);

/* A load module (by path and build-id, across processes and dlopen epochs): returns its
 * index for cp_corr_thread's modmap. Creates the database module. */
uint32_t cp_corr_module(struct cp_corr *c, const char *path, const uint8_t *build_id,
			size_t build_id_len, uint32_t flags);
/* Database module of gm; number of modules so far. */
uint32_t cp_corr_module_db(const struct cp_corr *c, uint32_t gm);
size_t cp_corr_nmodules(const struct cp_corr *c);
/* Gives module gm its structure (st is moved: the correlator releases it). Without a call,
 * or with st NULL, the module's code is unknown. */
void cp_corr_module_structure(struct cp_corr *c, uint32_t gm, struct cp_structure *st);

/* Called once per module, the first time a node of cp_corr_thread names it, before its
 * first frame is placed: gives it its structure (cp_corr_module_structure), so that only
 * the modules samples name are analyzed. */
typedef void (*cp_corr_first_use_fn)(void *ctx, struct cp_corr *c, uint32_t gm);
void cp_corr_on_first_use(struct cp_corr *c, cp_corr_first_use_fn fn, void *ctx);

/* Correlates thread t of process image proc. modmap[i]: module index (cp_corr_module) of
 * proc->modules[i]; metric_map[k]: database metric of the thread's metric k. Adds the
 * thread's exclusive values to `profile`. */
void cp_corr_thread(struct cp_corr *c, const struct cp_mf_proc *proc, const uint32_t *modmap,
		    const struct cp_mf_thr *t, const uint32_t *metric_map, uint32_t profile);

/* OpenMP: whether a module of the OpenMP runtime (libgomp, libomp) was registered; after
 * cp_corr_omp_wait, the values of database metric `from` in samples whose leaf is in that
 * runtime (or in libc, called from it: a futex, sched_yield) are also added to `wait`,
 * and those of the other samples inside a region or task to `work`. */
int cp_corr_omp_used(const struct cp_corr *c);
void cp_corr_omp_wait(struct cp_corr *c, uint32_t from, uint32_t wait, uint32_t work);
/* omp-idle: the values of `from` in IDLE nodes (an idle worker's samples, under the
 * master's serial context; they stay in `from` as well) are also added to `idle`. */
void cp_corr_omp_idle(struct cp_corr *c, uint32_t idle);

/* Statistics, for tests and the bench. */
struct cp_corr_stats {
	size_t lookups;	  /* distinct (module, address) looked up in a structure */
	size_t instances; /* distinct (parent scope, call site, address) instantiated */
	size_t nodes;	  /* thread nodes correlated */
	size_t node_keys; /* distinct (parent frame, module, address) of nodes */
	size_t bytes;	  /* memory held by the correlator's tables */
};
void cp_corr_stats(const struct cp_corr *c, struct cp_corr_stats *out);

#endif
