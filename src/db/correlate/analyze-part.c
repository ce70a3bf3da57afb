/* The correlation half of an analysis (analyze-impl.h): threads of process images
 * correlated into a database, by one thread or by several, each into a database of its own
 * merged in order into the first (cp_db_merge gives the database one thread would have
 * made, id for id). */
#include "db/correlate/analyze-impl.h"

#include "analyze/structure/cache.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

unsigned cp_analysis_jobs(const struct cp_analyze_options *o)
{
	long n = o->jobs > 0 ? o->jobs : sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

uint32_t cp_analysis_metric(struct cp_db *db, const struct cp_mf_metric *mm)
{
	struct cp_db_metric d;
	memset(&d, 0, sizeof d);
	d.name = mm->name;
	d.unit = mm->unit;
	d.kind = CP_DB_METRIC_RAW;
	d.source = mm->source;
	d.mechanism = mm->mechanism;
	d.period = mm->period;
	return cp_db_metric_add(db, &d);
}

int cp_analysis_omp(struct cp_analysis *a, struct cp_db *db, struct cp_corr *corr)
{
	if (!a->omp_from.name[0])
		return 0;
	uint32_t from = cp_analysis_metric(db, &a->omp_from);
	struct cp_db_metric d;
	memset(&d, 0, sizeof d);
	d.name = "omp-wait";
	d.unit = "ns";
	d.kind = CP_DB_METRIC_RAW;
	d.description = "part of the time metric sampled in the OpenMP runtime's waits "
			"(barriers, idle threads)";
	d.source = a->omp_from.source;
	d.mechanism = a->omp_from.mechanism;
	d.period = a->omp_from.period;
	uint32_t wait = from == CP_DB_NONE ? CP_DB_NONE : cp_db_metric_add(db, &d);
	d.name = "omp-work";
	d.description = "part of the time metric sampled in OpenMP regions and tasks outside "
			"the runtime's waits";
	uint32_t work = wait == CP_DB_NONE ? CP_DB_NONE : cp_db_metric_add(db, &d);
	d.name = "omp-idle";
	d.description = "part of the time metric sampled in idle OpenMP workers between "
			"regions, charged to the master thread's serial context at that time";
	uint32_t idle = work == CP_DB_NONE ? CP_DB_NONE : cp_db_metric_add(db, &d);
	if (idle == CP_DB_NONE)
		return cp_error(CP_EINTERNAL, "%s: the OpenMP metrics could not be added", a->dir);
	cp_corr_omp_wait(corr, from, wait, work);
	cp_corr_omp_idle(corr, idle);
	return 0;
}

/* One piece being correlated: the structure hook's context. */
struct piece {
	struct cp_analysis *a;
	struct cp_db *db;
	struct cp_corr *corr;
};

void cp_analysis_warn(struct cp_db *db, const char *fmt, ...)
{
	char buf[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cp_db_warning_add(db, buf);
}

/* Whether cp_struct_get will recover (not read the cache): for the progress lines. */
static int struct_cached(const struct cp_db_module *m)
{
	if (!m->build_id_len)
		return 0;
	struct strbuf sb;
	strbuf_init(&sb);
	cp_struct_cache_dir(&sb);
	if (!sb.len) {
		strbuf_release(&sb);
		return 0;
	}
	char hex[80];
	cp_build_id_hex(m->build_id, m->build_id_len, hex);
	strbuf_addf(&sb, "/%s.v%d.cpst", hex, CP_ST_VERSION_MAJOR);
	struct stat st;
	int ok = !stat(sb.buf, &st);
	strbuf_release(&sb);
	return ok;
}

static void struct_progress(void *ctx, size_t done, size_t total)
{
	(void)ctx;
	(void)done;
	(void)total;
}

/* The structure of module m, from the cache or recovered (one at a time: a module missing
 * from the cache is recovered once, the other pieces then read it from the cache). */
static int struct_get(struct cp_analysis *a, const struct cp_db_module *m, struct cp_structure *st)
{
	const struct cp_analyze_options *o = a->o;
	struct cp_struct_options so;
	memset(&so, 0, sizeof so);
	so.jobs = cp_analysis_jobs(o);
	so.progress = struct_progress;
	struct cp_struct_result res;
	pthread_mutex_lock(&a->struct_lock);
	if (!struct_cached(m) && o->progress) {
		fprintf(o->progress, "struct: %s\n", m->name);
		fflush(o->progress);
	}
	int rc = cp_struct_get(m->path, 0, &so, st, &res);
	if (!rc && res.cache_warning && o->progress)
		fprintf(o->progress, "callpath analyze: %s\n", res.cache_warning);
	pthread_mutex_unlock(&a->struct_lock);
	cp_struct_result_release(&res);
	return rc;
}

/* First use of module gm in a piece (cp_corr_first_use_fn): its structure. */
static void first_use(void *ctx, struct cp_corr *c, uint32_t gm)
{
	struct piece *pc = ctx;
	struct cp_db *db = pc->db;
	struct cp_db_module *m = &db->modules[cp_corr_module_db(c, gm)];
	if (m->flags & CP_DB_MOD_NO_STRUCT) /* "[unknown]" */
		return;
	if (m->path[0] != '/') {
		m->flags |= CP_DB_MOD_NO_STRUCT;
		if (strcmp(m->path, "[vdso]"))
			cp_analysis_warn(db,
					 "no structure for %s (not a file); its code shows as [%s]",
					 m->path, m->name);
		return;
	}
	struct cp_structure st;
	memset(&st, 0, sizeof st);
	if (struct_get(pc->a, m, &st)) {
		m->flags |= CP_DB_MOD_NO_STRUCT;
		cp_analysis_warn(db, "no structure for %s (%s); its code shows as [%s]", m->path,
				 cp_error_message(), m->name);
		cp_error_clear();
		return;
	}
	const struct cp_st_header *h = st.hdr;
	if (m->build_id_len && h->build_id_len &&
	    (h->build_id_len != m->build_id_len ||
	     memcmp(h->build_id, m->build_id, m->build_id_len))) {
		m->flags |= CP_DB_MOD_NO_STRUCT;
		cp_analysis_warn(
		    db, "%s changed since the run (its build-id differs); its code shows as [%s]",
		    m->path, m->name);
		cp_structure_release(&st);
		return;
	}
	cp_corr_module_structure(c, gm, &st);
}

static uint32_t image_module(struct cp_corr *corr, const struct cp_mf_proc *p, size_t i)
{
	const struct cp_mf_module_info *m = &p->modules[i];
	uint32_t flags = 0;
	if (p->exe && !strcmp(p->exe, m->path))
		flags |= CP_DB_MOD_EXE;
	const char *slash = strrchr(m->path, '/'), *base = slash ? slash + 1 : m->path;
	size_t len = strlen(base);
	/* libcallpath-rt.so and its builds with trigger wrappers, libcallpath-rt-wait.so... */
	if (!strncmp(base, "libcallpath-rt", 14) && len >= 17 && !strcmp(base + len - 3, ".so"))
		flags |= CP_DB_MOD_RUNTIME;
	return cp_corr_module(corr, m->path, m->build_id, m->build_id_len, flags);
}

uint32_t *cp_analysis_modmap(struct cp_corr *corr, const struct cp_mf_proc *p)
{
	uint32_t *map = xmalloc((p->nmodules + 1) * sizeof(*map));
	for (size_t i = 0; i < p->nmodules; i++)
		map[i] = image_module(corr, p, i);
	return map;
}

/* The MPI rank of a process image: its header's (minor 1), else CALLPATH_RANK in its ENV
 * record (older files), else -1. */
static int image_rank(const struct cp_mf_proc *p)
{
	if (p->hdr.h.rank >= 0)
		return p->hdr.h.rank;
	for (size_t i = 0; i < p->nenv; i++)
		if (!strncmp(p->env[i], "CALLPATH_RANK=", 14)) {
			char *end;
			long r = strtol(p->env[i] + 14, &end, 10);
			return *end || end == p->env[i] + 14 || r < 0 || r > 1 << 30 ? -1 : (int)r;
		}
	return -1;
}

/* What every profile of a process image shares. */
struct image_ctx {
	struct cp_mf_proc p;
	uint32_t metric_map[CP_MF_MAX_METRICS];
	uint32_t *modmap;
	char *cmd;
	uint32_t pflags;
	int rank;
};

static int image_open(struct cp_analysis *a, size_t i, struct cp_db *db, struct cp_corr *corr,
		      struct image_ctx *im)
{
	int rc = cp_mf_list_proc(&a->list, i, &im->p);
	if (rc)
		return rc;
	const struct cp_mf_process *h = &im->p.hdr;
	for (uint32_t m = 0; m < h->nmetrics; m++) {
		im->metric_map[m] = cp_analysis_metric(db, &h->metrics[m]);
		if (im->metric_map[m] == CP_DB_NONE) {
			cp_mf_proc_release(&im->p);
			return cp_error(CP_EFORMAT,
					"%s: more than %d distinct metrics over its processes",
					a->dir, CP_DB_MAX_METRICS);
		}
	}
	im->modmap = cp_analysis_modmap(corr, &im->p);
	im->cmd = cp_analysis_command_line(&im->p);
	im->pflags = 0;
	if (h->h.flags & CP_MF_FORK_CHILD)
		im->pflags |= CP_DB_PROF_FORK_CHILD;
	if (h->gen > 0)
		im->pflags |= CP_DB_PROF_EXECED;
	if (h->h.flags & CP_MF_CRASHED)
		im->pflags |= CP_DB_PROF_CRASHED;
	else if (!(h->h.flags & CP_MF_FINISHED))
		im->pflags |= CP_DB_PROF_UNFINISHED;
	im->rank = image_rank(&im->p);
	return 0;
}

static void image_close(struct image_ctx *im)
{
	free(im->cmd);
	free(im->modmap);
	cp_mf_proc_release(&im->p);
	memset(im, 0, sizeof *im);
}

static uint32_t thread_profile(struct cp_db *db, const struct image_ctx *im,
			       const struct cp_mf_thr *t)
{
	const struct cp_mf_thread *th = &t->hdr;
	struct cp_db_profile pr;
	memset(&pr, 0, sizeof pr);
	pr.pid = th->pid;
	pr.ppid = im->p.hdr.ppid;
	pr.tid = th->tid;
	pr.gen = th->gen;
	pr.tidx = th->tidx;
	pr.rank = im->rank;
	pr.host = im->p.hdr.hostname;
	pr.thread_name = th->name;
	pr.command = im->cmd;
	pr.flags = im->pflags;
	pr.start_ns = th->start_ns;
	pr.end_ns = th->end_ns;
	pr.cpu_ns = th->cpu_ns;
	for (uint32_t m = 0; m < th->nmetrics; m++)
		pr.samples[im->metric_map[m]] += th->samples[m];
	pr.unwind_complete = th->unwind_complete;
	pr.unwind_partial = th->unwind_partial;
	pr.unwind_failed = th->unwind_failed;
	pr.dropped = th->dropped;
	pr.frames = th->frames;
	return cp_db_profile_add(db, &pr);
}

static int units_correlate(struct cp_analysis *a, const struct unit *units, size_t n,
			   struct cp_db *db, struct cp_corr *corr)
{
	struct image_ctx im;
	size_t cur = SIZE_MAX;
	int rc = 0;
	memset(&im, 0, sizeof im);
	for (size_t u = 0; u < n && !rc; u++) {
		if (units[u].image != cur) {
			if (cur != SIZE_MAX)
				image_close(&im);
			cur = SIZE_MAX;
			rc = image_open(a, units[u].image, db, corr, &im);
			if (rc)
				break;
			cur = units[u].image;
		}
		size_t hi = units[u].hi, nt = cp_mf_list_nthreads(&a->list, cur, &im.p);
		for (size_t j = units[u].lo; j < hi && j < nt && !rc; j++) {
			struct cp_mf_thr t;
			rc = cp_mf_list_thread(&a->list, cur, j, &im.p, &t);
			if (rc)
				break;
			uint32_t prof = thread_profile(db, &im, &t);
			cp_corr_thread(corr, &im.p, im.modmap, &t, im.metric_map, prof);
			cp_mf_thr_release(&t);
		}
	}
	if (cur != SIZE_MAX)
		image_close(&im);
	return rc;
}

static void stats_add(struct cp_corr_stats *sum, const struct cp_corr *c)
{
	struct cp_corr_stats s;
	cp_corr_stats(c, &s);
	sum->lookups += s.lookups;
	sum->instances += s.instances;
	sum->nodes += s.nodes;
	sum->node_keys += s.node_keys;
	sum->bytes += s.bytes;
}

int cp_analysis_units(struct cp_analysis *a, const struct unit *units, size_t n, struct cp_db *db,
		      struct cp_corr *corr)
{
	struct cp_corr *own = corr ? NULL : cp_corr_new(db);
	struct piece pc = {a, db, corr ? corr : own};
	cp_corr_on_first_use(pc.corr, first_use, &pc);
	int rc = own ? cp_analysis_omp(a, db, own) : 0; /* the scanned one has it */
	if (!rc)
		rc = units_correlate(a, units, n, db, pc.corr);
	cp_corr_on_first_use(pc.corr, NULL, NULL);
	pthread_mutex_lock(&a->struct_lock);
	stats_add(&a->stats, pc.corr);
	pthread_mutex_unlock(&a->struct_lock);
	cp_corr_free(own);
	return rc;
}

/* ---- several threads ---- */

struct worker {
	struct cp_analysis *a;
	const struct unit *units;
	size_t n;
	struct cp_db db;
	int rc;
	char *error; /* cp_error's message is per thread */
	double cpu;  /* thread CPU time of the piece */
	pthread_t tid;
};

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	double t0 = thread_cpu_s();
	w->rc = cp_analysis_units(w->a, w->units, w->n, &w->db, NULL);
	w->cpu = thread_cpu_s() - t0;
	if (w->rc)
		w->error = xstrdup(cp_error_message());
	return NULL;
}

/* Splits the units into at most `jobs` consecutive pieces of about equal weight: piece k
 * starts at first[k]. Returns the number of pieces. */
static unsigned split_units(const struct unit *u, size_t n, unsigned jobs, size_t *first)
{
	uint64_t total = 0, acc = 0;
	for (size_t i = 0; i < n; i++)
		total += u[i].weight + 1;
	unsigned k = 0;
	first[k++] = 0;
	for (size_t i = 0; i < n && k < jobs; i++) {
		acc += u[i].weight + 1;
		if (acc * jobs >= total * k && i + 1 < n)
			first[k++] = i + 1;
	}
	return k;
}

static int merge_worker(struct cp_analysis *a, struct worker *w, int rc)
{
	pthread_join(w->tid, NULL);
	if (!rc && w->rc)
		rc = cp_error(w->rc, "%s", w->error ? w->error : "?");
	if (!rc)
		rc = cp_db_merge(a->db, &w->db);
	free(w->error);
	cp_db_release(&w->db);
	return rc;
}

/* Below this many bytes of thread data per piece, another piece costs more (a thread, its
 * own structure lookups, a merge) than it saves: the default number of pieces (the CPUs)
 * is cut to fit; an explicit -j N is taken as asked. */
#define PIECE_MIN_BYTES (4u << 20)

int cp_analysis_parallel(struct cp_analysis *a, unsigned jobs)
{
	uint64_t bytes = 0;
	for (size_t i = 0; i < a->nunits; i++)
		bytes += a->units[i].weight;
	if (a->o->jobs <= 0 && jobs > bytes / PIECE_MIN_BYTES + 1)
		jobs = (unsigned)(bytes / PIECE_MIN_BYTES + 1);
	if (jobs > a->nunits)
		jobs = a->nunits ? (unsigned)a->nunits : 1;
	size_t first[64 + 1];
	unsigned np = split_units(a->units, a->nunits, jobs, first);
	first[np] = a->nunits;
	struct worker *ws = xcalloc(np, sizeof *ws);
	unsigned started = 1;
	for (unsigned k = 1; k < np; k++, started++) {
		struct worker *w = &ws[k];
		w->a = a;
		w->units = a->units + first[k];
		w->n = first[k + 1] - first[k];
		cp_db_init(&w->db);
		if (pthread_create(&w->tid, NULL, worker_main, w)) {
			cp_db_release(&w->db);
			break;
		}
	}
	/* The first piece on this thread, into the scanned database; units the workers could
	 * not take (no thread) too. */
	double t0 = thread_cpu_s();
	int rc = cp_analysis_units(a, a->units, first[1], a->db, a->corr);
	double t1 = thread_cpu_s();
	a->piece_cpu_max = a->piece_cpu_min = t1 - t0;
	for (unsigned k = 1; k < started; k++) {
		rc = merge_worker(a, &ws[k], rc);
		if (ws[k].cpu > a->piece_cpu_max)
			a->piece_cpu_max = ws[k].cpu;
		if (ws[k].cpu < a->piece_cpu_min)
			a->piece_cpu_min = ws[k].cpu;
	}
	a->merge_cpu = thread_cpu_s() - t1;
	a->npieces = started;
	if (!rc && started < np)
		rc = cp_analysis_units(a, a->units + first[started], a->nunits - first[started],
				       a->db, a->corr);
	free(ws);
	return rc;
}
