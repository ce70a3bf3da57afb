/* The profile database: the contract between the correlation (`callpath analyze`,
 * src/db/correlate/, the producer) and everything that reads a profile (the views of
 * `callpath report`, src/report/; the exporters, src/export/).
 *
 * In memory a database is a `struct cp_db`: load modules, files, procedures, the tree of
 * scopes (the calling context tree with procedure frames, inlined frames, loops and
 * statements), metric descriptions, profiles (one per measured thread), per-profile
 * exclusive values (sparse) and, after cp_db_finish(), per-scope summary statistics of
 * inclusive and exclusive values over the profiles. On disk it is an SQLite file
 * (db-sqlite*.c are the only code that talks to SQLite); its schema is documented and
 * versioned in docs/format.md ("Profile database") and CP_DB_SCHEMA_VERSION below.
 *
 * Values are doubles: raw metrics hold integers (ns, events, bytes, calls) exactly up to
 * 2^53; multiplexed counters are scaled and derived metrics are fractional.
 *
 * Ids are indices into the arrays below, stable for the life of the database and the
 * same in the SQLite file (row ids there are these indices). */
#ifndef CP_DB_DB_H
#define CP_DB_DB_H

#include <stddef.h>
#include <stdint.h>

#define CP_DB_SCHEMA_VERSION 2
#define CP_DB_NONE UINT32_MAX
#define CP_DB_MAX_METRICS 64
/* Default database file inside a measurement directory. */
#define CP_DB_DEFAULT_NAME "callpath.db"

/* ---- static structure ------------------------------------------------------------- */

struct cp_db_module {
	const char *path; /* full path as the process mapped it ("[vdso]" for the vDSO) */
	const char *name; /* base name */
	uint8_t build_id[32];
	uint32_t build_id_len;
	uint32_t flags; /* enum cp_db_module_flags */
};

enum cp_db_module_flags {
	CP_DB_MOD_EXE = 1u << 0,       /* a main executable of some process */
	CP_DB_MOD_NO_STRUCT = 1u << 1, /* no structure could be recovered (see notes) */
	CP_DB_MOD_RUNTIME = 1u << 2,   /* libcallpath-rt.so itself */
};

struct cp_db_file {
	const char *path; /* as recorded in DWARF (absolute when the compiler wrote it so) */
};

struct cp_db_proc {
	const char *name;    /* demangled */
	const char *linkage; /* mangled/linkage name, or NULL */
	uint32_t module;     /* module id */
	uint32_t file;	     /* file id of its declaration, or CP_DB_NONE */
	uint32_t line;	     /* declaration line, 0 if unknown */
	uint32_t flags;	     /* enum cp_db_proc_flags */
	uint64_t entry;	     /* entry address (module-relative); 0 for inlined-only code */
};

enum cp_db_proc_flags {
	CP_DB_PROC_UNKNOWN = 1u << 0,	   /* no symbol: named "[module+0xOFFSET]" */
	CP_DB_PROC_INLINED_ONLY = 1u << 1, /* known only as inlined code (no out-of-line copy) */
	CP_DB_PROC_PLT = 1u << 2,
};

/* ---- the scope tree (calling context tree with static structure) ------------------ */

enum cp_db_kind {
	CP_DBK_ROOT = 0,    /* scope 0: the whole program */
	CP_DBK_PROC = 1,    /* a procedure frame; file/line: its call site in the caller */
	CP_DBK_INLINE = 2,  /* an inlined frame; file/line: its call site in the enclosing scope */
	CP_DBK_LOOP = 3,    /* a loop; file/line: header; line_lo..line_hi: its extent */
	CP_DBK_STMT = 4,    /* a statement (leaf); file/line: the statement */
	CP_DBK_PARTIAL = 5, /* child of the root: samples whose unwind stopped early */
};

/* Name of a kind as stored in the database ("procedure", "inlined", "loop", ...). */
const char *cp_db_kind_name(enum cp_db_kind k);

struct cp_db_scope {
	uint32_t parent;		    /* CP_DB_NONE for the root (scope 0) */
	uint32_t first_child, next_sibling; /* CP_DB_NONE terminated; children in creation order */
	uint8_t kind;			    /* enum cp_db_kind */
	uint8_t pad[3];
	uint32_t depth;	 /* root = 0 */
	uint32_t proc;	 /* PROC/INLINE: procedure id; else the enclosing frame's procedure */
	uint32_t module; /* module of the code (CP_DB_NONE for the root/partial) */
	uint32_t file;	 /* see enum cp_db_kind; CP_DB_NONE if unknown */
	uint32_t line;	 /* 0 if unknown */
	uint32_t line_lo, line_hi; /* LOOP: extent of its lines in `file`; else 0 */
	uint64_t addr;		   /* PROC: entry; INLINE: lowest address; LOOP: header; STMT: first
				    * address sampled; module-relative */
};

/* ---- metrics ---------------------------------------------------------------------- */

enum cp_db_metric_kind {
	CP_DB_METRIC_RAW = 0,	  /* measured: values per profile and scope */
	CP_DB_METRIC_DERIVED = 1, /* computed from other metrics by `formula` */
};

struct cp_db_metric {
	const char *name;	 /* "cputime", "cycles", "alloc-bytes", "ipc" ... */
	const char *unit;	 /* "ns", "events", "bytes", "calls", "" for ratios */
	const char *description; /* one line for humans, or NULL */
	const char *formula;	 /* DERIVED: the formula as given (expr.h); RAW: NULL */
	uint32_t kind;		 /* enum cp_db_metric_kind */
	uint32_t source;	 /* enum cp_mf_source (format/measure.h); 0 for derived */
	uint32_t mechanism;	 /* enum cp_mf_mechanism */
	uint64_t period;	 /* sampling period in `unit`, 0 for synchronous/derived */
	uint64_t samples;	 /* samples/events taken, summed over profiles */
};

/* ---- profiles (one per measured thread) --------------------------------------------- */

struct cp_db_profile {
	int32_t pid, ppid, tid;
	uint32_t gen;  /* process image generation (<pid>.<gen>.proc) */
	uint32_t tidx; /* thread index in its process image */
	int32_t rank;  /* MPI rank, -1 if none */
	const char *host;
	const char *thread_name;
	const char *command;		     /* its process image's command line (shell-quoted) */
	uint32_t flags;			     /* enum cp_db_profile_flags */
	uint64_t start_ns, end_ns;	     /* CLOCK_REALTIME */
	uint64_t cpu_ns;		     /* thread CPU time at exit, 0 if unknown */
	uint64_t samples[CP_DB_MAX_METRICS]; /* per raw metric id */
	uint64_t unwind_complete, unwind_partial, unwind_failed, dropped, frames;
};

enum cp_db_profile_flags {
	CP_DB_PROF_FORK_CHILD = 1u << 0,
	CP_DB_PROF_EXECED = 1u << 1, /* an image started by a followed exec */
	CP_DB_PROF_CRASHED = 1u << 2,
	CP_DB_PROF_UNFINISHED = 1u << 3, /* killed or still running when analyzed */
};

/* ---- values -------------------------------------------------------------------------- */

/* Exclusive = the cost of the scope's own code (statements, nested loops and inlined code
 * in the same procedure frame; calls excluded), inclusive = everything below it.
 * Summary of one (scope, metric, inclusive|exclusive) over the profiles in which the
 * value is nonzero (`count` of them): a context no thread reached has count 0 and all
 * fields 0. mean/min/max/stddev (population) are over those `count` profiles, so that a
 * worker doing 3x the work of another shows max/min = 3 even when the main thread never
 * ran that code; the mean over all profiles is sum / db->nprofiles. */
struct cp_db_stat {
	double sum, mean, min, max, stddev;
	uint32_t argmax; /* profile id holding the max (CP_DB_NONE when count == 0) */
	uint32_t count;
};

enum cp_db_statkind {
	CP_DB_STAT_SUM = 0,
	CP_DB_STAT_MEAN,
	CP_DB_STAT_MIN,
	CP_DB_STAT_MAX,
	CP_DB_STAT_STDDEV,
};
const char *cp_db_stat_name(enum cp_db_statkind s);
/* Parses "sum", "mean", "min", "max", "stddev"; -1 if unknown. */
int cp_db_stat_parse(const char *s);
static inline double cp_db_stat_value(const struct cp_db_stat *st, enum cp_db_statkind k)
{
	switch (k) {
	case CP_DB_STAT_MEAN:
		return st->mean;
	case CP_DB_STAT_MIN:
		return st->min;
	case CP_DB_STAT_MAX:
		return st->max;
	case CP_DB_STAT_STDDEV:
		return st->stddev;
	default:
		return st->sum;
	}
}

/* One exclusive value of a profile. A profile's values are sorted by (scope, metric). */
struct cp_db_value {
	uint32_t scope;
	uint32_t metric;
	double value;
};

struct cp_db_pvalues {
	struct cp_db_value *v;
	size_t n, alloc;
	int sorted;
};

/* ---- run metadata ---------------------------------------------------------------------- */

struct cp_db_run {
	const char *measurement_dir;
	const char *command; /* first process image's command line */
	const char *host;
	const char *callpath_version; /* of the runtime that measured (and of analyze) */
	uint64_t start_ns;	      /* CLOCK_REALTIME of the first process start */
	double duration_s;
	size_t nprocs; /* process images */
	size_t nforked, nexeced;
	/* Process CPU time (user + system) of the images that ended normally, from the
	 * runtime's process CPU clock readings; of it, start-up before the runtime's constructor
	 * (charged to the dynamic loader's entry). images_cpu_unknown: images without a reading
	 * (killed, crashed, measured by an older runtime). */
	uint64_t process_cpu_ns, startup_ns, runtime_ns;
	uint64_t images_cpu_unknown;
	const char **notes; /* the runtime's NOTE records, de-duplicated */
	size_t nnotes;
	const char **warnings; /* problems found by analyze (missing module, no structure...) */
	size_t nwarnings;
	struct cp_db_source *sources; /* the measurement files it was made from (sources.c) */
	size_t nsources;
};

/* One measurement file a database was made from, as it was when analyze read it: a
 * database is current while every file of its directory still has the same stamp. */
struct cp_db_source {
	const char *name;   /* file name inside the measurement directory */
	uint64_t size;	    /* bytes */
	int64_t mtime_ns;   /* modification time, ns since the epoch */
	uint64_t head_hash; /* FNV-1a 64 of the first CP_DB_SOURCE_HEAD bytes (the header) */
};
#define CP_DB_SOURCE_HEAD 4096

/* Append a NOTE / warning to db->run (interned, duplicates dropped). The arrays
 * run.notes and run.warnings are owned by the database (cp_db_release frees them): fill
 * them only through these. */
struct cp_db;
void cp_db_note_add(struct cp_db *db, const char *note);
void cp_db_warning_add(struct cp_db *db, const char *warning);
/* Appends a source stamp (name interned); the array is owned like run.notes. */
void cp_db_source_add(struct cp_db *db, const struct cp_db_source *s);

/* ---- the database ---------------------------------------------------------------------- */

struct cp_db_strpool;

struct cp_db {
	struct cp_db_strpool *strings; /* every const char * above points into it */
	struct cp_db_run run;
	struct cp_db_module *modules;
	size_t nmodules;
	struct cp_db_file *files;
	size_t nfiles;
	struct cp_db_proc *procs;
	size_t nprocs;
	struct cp_db_scope *scopes;
	size_t nscopes;
	struct cp_db_metric *metrics; /* raw metrics first, then derived */
	size_t nmetrics;
	struct cp_db_profile *profiles;
	size_t nprofiles;
	struct cp_db_pvalues *pvalues; /* [nprofiles]: exclusive values of raw metrics */
	/* After cp_db_finish() (or cp_db_read()): stats[(scope * nmetrics + metric) * 2 + incl],
	 * incl = 1 for inclusive, for every metric including derived ones. */
	struct cp_db_stat *stats;
	int finished;
	void *impl; /* private: hash tables for interning */
};

static inline const struct cp_db_stat *cp_db_stat_get(const struct cp_db *db, uint32_t scope,
						      uint32_t metric, int inclusive)
{
	return &db->stats[((size_t)scope * db->nmetrics + metric) * 2 + (inclusive ? 1 : 0)];
}

/* Creates an empty database holding only the root scope. */
void cp_db_init(struct cp_db *db);
void cp_db_release(struct cp_db *db);

/* A copy of s in the database's string pool (NULL stays NULL). */
const char *cp_db_intern(struct cp_db *db, const char *s);

/* Interning: the id of an existing equal entry, or a new one. Modules are equal by path
 * and build-id; files by path; procedures by (module, entry, name). */
uint32_t cp_db_module(struct cp_db *db, const char *path, const uint8_t *build_id,
		      size_t build_id_len, uint32_t flags);
uint32_t cp_db_file(struct cp_db *db, const char *path);
uint32_t cp_db_proc(struct cp_db *db, const struct cp_db_proc *p);

/* The child of parent with this identity, created if missing. Returns CP_DB_NONE for a
 * bad parent or kind (ROOT). A child always has a larger id than its parent (ids are given
 * in creation order), so a pass over the scopes in decreasing id order sees every child
 * before its parent; cp_db_read keeps this. Creating a scope un-finishes the database. Identity by
 * kind: PROC, INLINE: (proc, file, line)   -- the same procedure called from another call site is
 * another frame LOOP:         (module, addr) STMT:         (file, line)         -- s->addr of the
 * first one created is kept PARTIAL:      (kind) s->parent/first_child/next_sibling/depth are
 * ignored and set here. */
uint32_t cp_db_scope_child(struct cp_db *db, uint32_t parent, const struct cp_db_scope *s);

/* Raw metrics must all be added before any derived metric and before values. Returns the
 * id of the raw metric of that name if there is one already; CP_DB_NONE after a derived
 * metric, for a name taken by a derived metric, or beyond CP_DB_MAX_METRICS raw metrics.
 * m->kind and m->formula are ignored (raw); m->samples is kept unless the profiles'
 * samples[] sum to more than 0 at cp_db_finish(). */
uint32_t cp_db_metric_add(struct cp_db *db, const struct cp_db_metric *m);
/* Adds a derived metric NAME=FORMULA (expr.h syntax) over the metrics already present.
 * Returns its id, or a negative CP_E* code with cp_error() set naming the problem
 * (syntax error with its column, unknown metric name, duplicate name). Before or after
 * cp_db_finish(); after, its stats are computed at once. */
int cp_db_derived_add(struct cp_db *db, const char *name, const char *formula, const char *unit,
		      const char *description);
/* Adds the derived-metric presets whose inputs are present (issue "metric sources"):
 * ipc = instructions/cycles, cache-miss-ratio, branch-miss-ratio, mflops (FP operations
 * per microsecond of CPU time), waste = F*cycles - fp_ops (F = waste_factor, the paper's 2
 * when <= 0). Returns the number added. */
int cp_db_presets_add(struct cp_db *db, double waste_factor);
/* cp_db_derived_add from "NAME=FORMULA" (spaces around NAME allowed; unit ""). */
int cp_db_derived_add_spec(struct cp_db *db, const char *spec);
/* Id of the metric with this name, or CP_DB_NONE. */
uint32_t cp_db_metric_find(const struct cp_db *db, const char *name);

uint32_t cp_db_profile_add(struct cp_db *db, const struct cp_db_profile *p);
/* Adds value to the exclusive value of (profile, scope, metric); metric must be raw (calls
 * with an out-of-range profile/scope/metric, a derived metric or a 0 value are ignored).
 * Consecutive adds to the same (scope, metric) are merged at once. */
void cp_db_add(struct cp_db *db, uint32_t profile, uint32_t scope, uint32_t metric, double value);

/* Sorts and merges each profile's values, then computes inclusive values (sums over
 * subtrees of the scope tree) and the summary statistics of every metric (derived ones
 * from the raw stats of the same kind: sum from sums, max from maxes, ...; see expr.h for
 * division by zero). Idempotent. */
int cp_db_finish(struct cp_db *db);

/* Appends the partial database src (not finished: raw metrics, profiles and their values)
 * to dst, as if src's producer had gone on producing into dst: modules, files, procedures
 * and scopes are matched by identity and src's new ones created in src's order; raw
 * metrics by name; src's profiles come after dst's, their values in src's order; notes and
 * warnings are appended (without duplicates). So merging the databases of consecutive
 * pieces of a producer's input, in order, gives the database of the whole input, id for id
 * (analyze's workers, callpath-analyze-mpi). Run metadata other than notes and warnings is
 * not merged. 0 or a negative CP_E* code. */
int cp_db_merge(struct cp_db *dst, const struct cp_db *src);

/* A database that is not finished (what cp_db_merge takes) as bytes appended to sb, and
 * back: cp_db_unpack initializes db and gives the same database, id for id (for sending
 * partial databases between the ranks of callpath-analyze-mpi: same build, same byte
 * order). Unpacking checks every bound: 0, or CP_EFORMAT with db released. */
struct strbuf;
void cp_db_pack(const struct cp_db *db, struct strbuf *sb);
int cp_db_unpack(struct cp_db *db, const void *buf, size_t size);

/* Per-profile values of one profile, for views of one thread (--thread) or statistics of
 * derived views: fills excl[nscopes * nraw] and, if incl is non-NULL, incl likewise
 * (nraw = number of raw metrics), both zeroed first. */
void cp_db_profile_dense(const struct cp_db *db, uint32_t profile, double *excl, double *incl);

/* After cp_db_finish(): self[scope * nmetrics + metric] = the exclusive sum of the scope
 * (cp_db_stat_get(db, scope, metric, 0)->sum). Exclusive values in the statistics are
 * HPCToolkit's: the cost of the scope's own code, its statements and those of its nested
 * loops and inlined code, calls to other procedure frames excluded (profile values are
 * stored at statements only; see profile_stats in db.c). */
void cp_db_self_sums(const struct cp_db *db, double *self);

/* Number of raw metrics (they are metrics[0 .. nraw)). */
size_t cp_db_nraw(const struct cp_db *db);

/* 1 if raw metric m is a loop probe's (loop-iterations, loop-entries, loop-time): counted
 * at its loop's header, it describes that loop alone, so its exclusive value stops at the
 * nearest enclosing loop (an outer loop does not add its nested loops' counts and time). */
int cp_db_metric_loop_own(const struct cp_db *db, uint32_t m);

/* SQLite (db-sqlite-write.c, db-sqlite-read.c). cp_db_write replaces path atomically (temporary +
 * rename) after cp_db_finish(); cp_db_read loads a whole database (finished). Both return 0 or a
 * negative CP_E* code with cp_error() set ("DB: not a callpath database", "DB: schema
 * version N, this callpath reads 1", "DB: truncated or corrupt (sqlite: ...)"). */
int cp_db_write(struct cp_db *db, const char *path);
/* cp_db_read initializes *db itself (do not cp_db_init it first); on failure *db is left
 * empty and released (cp_db_release on it is harmless). */
int cp_db_read(struct cp_db *db, const char *path);
/* 1 if path looks like a callpath database (SQLite header + our application_id). */
int cp_db_is_database(const char *path);
/* Reads a database without its scope tree and values (run, modules, files, procedures,
 * metrics, profiles): what a lazy reader (query.h) keeps in memory; *db as for cp_db_read,
 * holding only the root scope and no stats. */
int cp_db_read_head(struct cp_db *db, const char *path);
/* Reads only run.sources of a database (cheap: for deciding whether it is current); *db
 * as for cp_db_read. */
int cp_db_read_sources(struct cp_db *db, const char *path);

#endif
