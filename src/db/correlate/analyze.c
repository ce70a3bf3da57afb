/* cp_analyze_dir and cp_profile_open (analyze.h): a measurement directory -> a finished
 * profile database, streaming one file at a time (docs/cmd-analyze.md). */
#include "db/analyze.h"

#include "analyze/elf/elf-image.h"
#include "analyze/structure/cache.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "db/correlate/correlate.h"
#include "db/sources.h"
#include "format/measure-read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Beyond this many processes with the same kind of trouble, one line sums them up. */
#define PROC_WARN_MAX 8

void cp_analyze_options_init(struct cp_analyze_options *o)
{
	memset(o, 0, sizeof *o);
	o->progress = stderr;
}

static void warn(struct cp_db *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct cp_db *db, const char *fmt, ...)
{
	char buf[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cp_db_warning_add(db, buf);
}

/* Appends arg as a shell would need it typed, on one line. */
static void shell_quote(struct strbuf *sb, const char *arg)
{
	int plain = *arg != 0, ctrl = 0;
	for (const char *c = arg; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			ctrl = 1;
		if (!strchr(
			"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%",
			*c))
			plain = 0;
	}
	if (plain) {
		strbuf_addstr(sb, arg);
		return;
	}
	strbuf_addstr(sb, ctrl ? "$'" : "'");
	for (const char *c = arg; *c; c++) {
		if (*c == '\'')
			strbuf_addstr(sb, ctrl ? "\\'" : "'\\''");
		else if (ctrl && *c == '\\')
			strbuf_addstr(sb, "\\\\");
		else if (ctrl && *c == '\n')
			strbuf_addstr(sb, "\\n");
		else if (ctrl && ((unsigned char)*c < 0x20 || *c == 0x7f))
			strbuf_addf(sb, "\\x%02x", (unsigned char)*c);
		else
			strbuf_addch(sb, *c);
	}
	strbuf_addch(sb, '\'');
}

static char *command_line(const struct cp_mf_proc *p)
{
	struct strbuf sb;
	strbuf_init(&sb);
	for (size_t i = 0; i < p->argc; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		shell_quote(&sb, p->argv[i]);
	}
	if (!p->argc)
		strbuf_addstr(&sb, p->exe ? p->exe : "?");
	return strbuf_detach(&sb);
}

struct analysis {
	const char *dir;
	const struct cp_analyze_options *o;
	struct cp_db *db;
	struct cp_corr *corr;
	struct cp_mf_list list;
	struct cp_mf_metric metrics[CP_DB_MAX_METRICS];
	size_t nmetrics;
	uint64_t msamples[CP_DB_MAX_METRICS];
	unsigned char *used; /* per correlator module: some node names it */
	size_t nused;
	size_t ncrashed, nunfinished, ndisabled, nthreads;
	uint64_t dropped;
	uint64_t t_lo, t_hi;
};

static uint32_t image_module(struct analysis *a, const struct cp_mf_proc *p, size_t i)
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
	uint32_t gm = cp_corr_module(a->corr, m->path, m->build_id, m->build_id_len, flags);
	if (gm >= a->nused) {
		size_t n = a->nused ? a->nused : 64;
		while (n <= gm)
			n *= 2;
		a->used = xrealloc(a->used, n);
		memset(a->used + a->nused, 0, n - a->nused);
		a->nused = n;
	}
	return gm;
}

static uint32_t *image_modmap(struct analysis *a, const struct cp_mf_proc *p)
{
	uint32_t *map = xmalloc((p->nmodules + 1) * sizeof(*map));
	for (size_t i = 0; i < p->nmodules; i++)
		map[i] = image_module(a, p, i);
	return map;
}

static int metric_index(struct analysis *a, const struct cp_mf_metric *m)
{
	for (size_t g = 0; g < a->nmetrics; g++)
		if (!strcmp(a->metrics[g].name, m->name))
			return (int)g;
	if (a->nmetrics == CP_DB_MAX_METRICS)
		return -1;
	a->metrics[a->nmetrics] = *m;
	return (int)a->nmetrics++;
}

/* Pass 1: metrics, run metadata, and which modules any sample names. */
static int pass_scan(struct analysis *a)
{
	struct cp_db *db = a->db;
	a->t_lo = UINT64_MAX;
	for (size_t i = 0; i < a->list.nimages; i++) {
		struct cp_mf_proc p;
		int rc = cp_mf_list_proc(&a->list, i, &p);
		if (rc)
			return rc;
		const struct cp_mf_process *h = &p.hdr;
		for (uint32_t m = 0; m < h->nmetrics; m++)
			if (metric_index(a, &h->metrics[m]) < 0) {
				cp_mf_proc_release(&p);
				return cp_error(
				    CP_EFORMAT,
				    "%s: more than %d distinct metrics over its processes", a->dir,
				    CP_DB_MAX_METRICS);
			}
		if (i == 0) {
			char *cmd = command_line(&p);
			db->run.command = cp_db_intern(db, cmd);
			free(cmd);
			db->run.host = cp_db_intern(db, h->hostname);
		}
		if (h->start_ns && h->start_ns < a->t_lo)
			a->t_lo = h->start_ns;
		if (h->end_ns > a->t_hi)
			a->t_hi = h->end_ns;
		db->run.nprocs++;
		if (h->h.flags & CP_MF_FORK_CHILD)
			db->run.nforked++;
		if (h->gen > 0)
			db->run.nexeced++;
		if (h->cpu_end_ns >= h->cpu_start_ns && h->cpu_end_ns) {
			db->run.process_cpu_ns += h->cpu_end_ns - h->cpu_start_ns + h->startup_ns;
			db->run.startup_ns += h->startup_ns;
			db->run.runtime_ns += h->runtime_ns;
		} else {
			db->run.images_cpu_unknown++;
		}
		for (size_t n = 0; n < p.nnotes; n++) {
			if (a->list.nimages > 1) {
				char buf[1200];
				snprintf(buf, sizeof buf, "process %d: %s", h->pid, p.notes[n]);
				cp_db_note_add(db, buf);
			} else {
				cp_db_note_add(db, p.notes[n]);
			}
		}
		uint32_t fl = h->h.flags;
		if (fl & CP_MF_CRASHED) {
			if (++a->ncrashed <= PROC_WARN_MAX)
				warn(db,
				     "process %d died from signal %d; its samples up to then are "
				     "included",
				     h->pid, h->exit_status > 128 ? h->exit_status - 128 : 0);
		} else if (!(fl & CP_MF_FINISHED)) {
			if (++a->nunfinished <= PROC_WARN_MAX)
				warn(db,
				     "process %d did not finish normally (killed, or still "
				     "running); its samples up to then are included",
				     h->pid);
		}
		if ((fl & CP_MF_DISABLED) && ++a->ndisabled <= PROC_WARN_MAX)
			warn(db, "the runtime disabled itself in process %d; see the notes",
			     h->pid);
		uint32_t *modmap = image_modmap(a, &p);
		for (size_t j = 0, nt = cp_mf_list_nthreads(&a->list, i, &p); j < nt; j++) {
			struct cp_mf_thr t;
			rc = cp_mf_list_thread(&a->list, i, j, &p, &t);
			if (rc)
				break;
			for (size_t k = 1; k < t.nnodes; k++) {
				const struct cp_mf_rnode *n = &t.nodes[k];
				if (n->kind == CP_MF_NODE_PARTIAL || n->module == CP_MF_MODULE_NONE)
					continue;
				long mi = cp_mf_proc_module(&p, n->module);
				if (mi < 0)
					continue;
				a->used[modmap[mi]] = 1;
			}
			cp_mf_thr_release(&t);
		}
		free(modmap);
		cp_mf_proc_release(&p);
		if (rc)
			return rc;
	}
	if (!a->nmetrics)
		return cp_error(CP_EFORMAT, "%s: the process files declare no metric", a->dir);
	if (a->ncrashed > PROC_WARN_MAX)
		warn(db, "%zu processes died from a signal in all", a->ncrashed);
	if (a->nunfinished > PROC_WARN_MAX)
		warn(db, "%zu processes did not finish normally in all", a->nunfinished);
	if (a->ndisabled > PROC_WARN_MAX)
		warn(db, "the runtime disabled itself in %zu processes in all", a->ndisabled);
	return 0;
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

/* The structure of every module a sample names. */
static void pass_structure(struct analysis *a, size_t nmods)
{
	struct cp_db *db = a->db;
	const struct cp_analyze_options *o = a->o;
	unsigned jobs = o->jobs > 0 ? (unsigned)o->jobs : (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	if (jobs > 64)
		jobs = 64;
	size_t nmiss = 0, k = 0;
	for (size_t gm = 0; gm < nmods && gm < a->nused; gm++) {
		if (!a->used[gm])
			continue;
		const struct cp_db_module *m =
		    &db->modules[cp_corr_module_db(a->corr, (uint32_t)gm)];
		if (m->path[0] == '/' && !struct_cached(m))
			nmiss++;
	}
	for (size_t gm = 0; gm < nmods && gm < a->nused; gm++) {
		if (!a->used[gm])
			continue;
		struct cp_db_module *m = &db->modules[cp_corr_module_db(a->corr, (uint32_t)gm)];
		if (m->path[0] != '/') {
			m->flags |= CP_DB_MOD_NO_STRUCT;
			if (strcmp(m->path, "[vdso]"))
				warn(db, "no structure for %s (not a file); its code shows as [%s]",
				     m->path, m->name);
			continue;
		}
		if (!struct_cached(m) && o->progress) {
			fprintf(o->progress, "struct: %s (%zu/%zu)\n", m->name, ++k, nmiss);
			fflush(o->progress);
		}
		struct cp_struct_options so;
		memset(&so, 0, sizeof so);
		so.jobs = jobs;
		so.progress = struct_progress;
		struct cp_structure st;
		struct cp_struct_result res;
		memset(&st, 0, sizeof st);
		int rc = cp_struct_get(m->path, 0, &so, &st, &res);
		if (rc) {
			m->flags |= CP_DB_MOD_NO_STRUCT;
			warn(db, "no structure for %s (%s); its code shows as [%s]", m->path,
			     cp_error_message(), m->name);
			cp_error_clear();
			cp_struct_result_release(&res);
			continue;
		}
		if (res.cache_warning && o->progress)
			fprintf(o->progress, "callpath analyze: %s\n", res.cache_warning);
		cp_struct_result_release(&res);
		const struct cp_st_header *h = st.hdr;
		if (m->build_id_len && h->build_id_len &&
		    (h->build_id_len != m->build_id_len ||
		     memcmp(h->build_id, m->build_id, m->build_id_len))) {
			m->flags |= CP_DB_MOD_NO_STRUCT;
			warn(db,
			     "%s changed since the run (its build-id differs); its code shows as "
			     "[%s]",
			     m->path, m->name);
			cp_structure_release(&st);
			continue;
		}
		cp_corr_module_structure(a->corr, (uint32_t)gm, &st);
	}
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

/* Pass 2: one profile per thread file, correlated. */
/* An OpenMP program's time sampled in its OpenMP runtime's waits (barriers, idle threads),
 * omp-wait, and the rest of its time in regions and tasks, omp-work: parts of the first
 * CPU-time (else wall-clock) metric. */
static int omp_wait_metric(struct analysis *a, const uint32_t *dbmetric)
{
	if (!cp_corr_omp_used(a->corr))
		return 0;
	size_t from = a->nmetrics;
	for (size_t m = 0; m < a->nmetrics && from == a->nmetrics; m++)
		if (a->metrics[m].source == CP_MF_SRC_CPUTIME)
			from = m;
	for (size_t m = 0; m < a->nmetrics && from == a->nmetrics; m++)
		if (a->metrics[m].source == CP_MF_SRC_REALTIME)
			from = m;
	if (from == a->nmetrics)
		return 0;
	struct cp_db_metric d;
	memset(&d, 0, sizeof d);
	d.name = "omp-wait";
	d.unit = "ns";
	d.kind = CP_DB_METRIC_RAW;
	d.description = "part of the time metric sampled in the OpenMP runtime's waits "
			"(barriers, idle threads)";
	d.source = a->metrics[from].source;
	d.mechanism = a->metrics[from].mechanism;
	d.period = a->metrics[from].period;
	uint32_t wait = cp_db_metric_add(a->db, &d);
	d.name = "omp-work";
	d.description = "part of the time metric sampled in OpenMP regions and tasks outside "
			"the runtime's waits";
	uint32_t work = wait == CP_DB_NONE ? CP_DB_NONE : cp_db_metric_add(a->db, &d);
	if (work == CP_DB_NONE)
		return cp_error(CP_EINTERNAL, "%s: the OpenMP metrics could not be added", a->dir);
	cp_corr_omp_wait(a->corr, dbmetric[from], wait, work);
	return 0;
}

static int pass_correlate(struct analysis *a, const uint32_t *dbmetric)
{
	struct cp_db *db = a->db;
	for (size_t i = 0; i < a->list.nimages; i++) {
		struct cp_mf_proc p;
		int rc = cp_mf_list_proc(&a->list, i, &p);
		if (rc)
			return rc;
		uint32_t metric_map[CP_MF_MAX_METRICS];
		for (uint32_t m = 0; m < p.hdr.nmetrics; m++)
			metric_map[m] = dbmetric[metric_index(a, &p.hdr.metrics[m])];
		uint32_t *modmap = image_modmap(a, &p);
		char *cmd = command_line(&p);
		uint32_t pflags = 0;
		if (p.hdr.h.flags & CP_MF_FORK_CHILD)
			pflags |= CP_DB_PROF_FORK_CHILD;
		if (p.hdr.gen > 0)
			pflags |= CP_DB_PROF_EXECED;
		if (p.hdr.h.flags & CP_MF_CRASHED)
			pflags |= CP_DB_PROF_CRASHED;
		else if (!(p.hdr.h.flags & CP_MF_FINISHED))
			pflags |= CP_DB_PROF_UNFINISHED;
		int rank = image_rank(&p);
		for (size_t j = 0, nt = cp_mf_list_nthreads(&a->list, i, &p); j < nt && !rc; j++) {
			struct cp_mf_thr t;
			rc = cp_mf_list_thread(&a->list, i, j, &p, &t);
			if (rc)
				break;
			const struct cp_mf_thread *th = &t.hdr;
			struct cp_db_profile pr;
			memset(&pr, 0, sizeof pr);
			pr.pid = th->pid;
			pr.ppid = p.hdr.ppid;
			pr.tid = th->tid;
			pr.gen = th->gen;
			pr.tidx = th->tidx;
			pr.rank = rank;
			pr.host = p.hdr.hostname;
			pr.thread_name = th->name;
			pr.command = cmd;
			pr.flags = pflags;
			pr.start_ns = th->start_ns;
			pr.end_ns = th->end_ns;
			pr.cpu_ns = th->cpu_ns;
			for (uint32_t m = 0; m < th->nmetrics; m++) {
				pr.samples[metric_map[m]] += th->samples[m];
				a->msamples[metric_map[m]] += th->samples[m];
			}
			pr.unwind_complete = th->unwind_complete;
			pr.unwind_partial = th->unwind_partial;
			pr.unwind_failed = th->unwind_failed;
			pr.dropped = th->dropped;
			pr.frames = th->frames;
			a->dropped += th->dropped;
			a->nthreads++;
			uint32_t prof = cp_db_profile_add(db, &pr);
			cp_corr_thread(a->corr, &p, modmap, &t, metric_map, prof);
			cp_mf_thr_release(&t);
		}
		free(cmd);
		free(modmap);
		cp_mf_proc_release(&p);
		if (rc)
			return rc;
	}
	return 0;
}

static int add_derived(struct cp_db *db, const char *spec)
{
	const char *eq = strchr(spec, '=');
	if (eq) { /* already there, from a database saved with it: nothing to do */
		char *name = xstrndup(spec, (size_t)(eq - spec));
		uint32_t id = cp_db_metric_find(db, name);
		free(name);
		if (id != CP_DB_NONE && db->metrics[id].formula &&
		    !strcmp(db->metrics[id].formula, eq + 1))
			return 0;
	}
	int rc = cp_db_derived_add_spec(db, spec);
	return rc < 0 ? rc : 0;
}

static int add_all_derived(struct cp_db *db, const struct cp_analyze_options *o)
{
	for (size_t i = 0; i < o->nderived; i++) {
		int rc = add_derived(db, o->derived[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

static char *abs_path(const char *p)
{
	char *r = realpath(p, NULL);
	return r ? r : xstrdup(p);
}

int cp_analyze_dir(const char *dir, const struct cp_analyze_options *o, struct cp_db *db)
{
	struct cp_analyze_options defaults;
	if (!o) {
		cp_analyze_options_init(&defaults);
		o = &defaults;
	}
	struct analysis a;
	memset(&a, 0, sizeof a);
	a.dir = dir;
	a.o = o;
	a.db = db;
	cp_db_init(db);
	int rc = cp_mf_list_open(&a.list, dir);
	if (rc)
		goto out;
	cp_db_sources_record(db, &a.list);
	a.corr = cp_corr_new(db);
	double t0 = cpu_s();
	rc = pass_scan(&a);
	if (rc)
		goto out;
	double t1 = cpu_s();
	pass_structure(&a, cp_corr_nmodules(a.corr));
	double t2 = cpu_s();
	uint32_t dbmetric[CP_DB_MAX_METRICS];
	for (size_t m = 0; m < a.nmetrics; m++) {
		const struct cp_mf_metric *mm = &a.metrics[m];
		struct cp_db_metric d;
		memset(&d, 0, sizeof d);
		d.name = mm->name;
		d.unit = mm->unit;
		d.kind = CP_DB_METRIC_RAW;
		d.source = mm->source;
		d.mechanism = mm->mechanism;
		d.period = mm->period;
		dbmetric[m] = cp_db_metric_add(db, &d);
		if (dbmetric[m] == CP_DB_NONE) {
			rc = cp_error(CP_EINTERNAL, "%s: metric %s could not be added", dir,
				      mm->name);
			goto out;
		}
	}
	rc = omp_wait_metric(&a, dbmetric);
	if (rc)
		goto out;
	rc = pass_correlate(&a, dbmetric);
	if (rc)
		goto out;
	double t3 = cpu_s();
	for (size_t m = 0; m < a.nmetrics; m++)
		db->metrics[dbmetric[m]].samples = a.msamples[dbmetric[m]];
	if (a.dropped)
		warn(db, "%llu samples were dropped by the runtime", (unsigned long long)a.dropped);
	char *absdir = abs_path(dir);
	db->run.measurement_dir = cp_db_intern(db, absdir);
	free(absdir);
	db->run.callpath_version = cp_db_intern(db, CALLPATH_VERSION);
	db->run.start_ns = a.t_lo == UINT64_MAX ? 0 : a.t_lo;
	db->run.duration_s =
	    a.t_hi > a.t_lo && a.t_lo != UINT64_MAX ? (double)(a.t_hi - a.t_lo) / 1e9 : 0;
	cp_db_presets_add(db, 0);
	rc = add_all_derived(db, o);
	if (rc)
		goto out;
	int stats = getenv("CALLPATH_ANALYZE_STATS") && o->progress;
	if (stats) {
		struct cp_corr_stats cs;
		cp_corr_stats(a.corr, &cs);
		fprintf(o->progress,
			"correlation: %zu nodes, %zu node keys, %zu address lookups, %zu frames, "
			"%zu scopes, tables %.1f MB, peak RSS so far %ld MB\n",
			cs.nodes, cs.node_keys, cs.lookups, cs.instances, db->nscopes,
			(double)cs.bytes / 1e6, peak_mb());
	}
	cp_corr_free(a.corr); /* before finish, so that their peaks do not add up */
	a.corr = NULL;
	rc = cp_db_finish(db);
	if (stats)
		fprintf(o->progress,
			"CPU s: scan %.2f, structure %.2f, correlate %.2f, finish %.2f; peak RSS "
			"%ld MB\n",
			t1 - t0, t2 - t1, t3 - t2, cpu_s() - t3, peak_mb());
out:
	cp_corr_free(a.corr);
	cp_mf_list_release(&a.list);
	free(a.used);
	if (rc)
		cp_db_release(db);
	return rc;
}

/* ---- cp_profile_open ---- */

int cp_profile_open(const char *path, const struct cp_analyze_options *o, struct cp_db *db)
{
	struct cp_analyze_options defaults;
	if (!o) {
		cp_analyze_options_init(&defaults);
		o = &defaults;
	}
	struct stat st;
	if (stat(path, &st))
		return cp_error(errno == ENOENT ? CP_ENOENT : CP_EIO, "cannot open %s: %s", path,
				strerror(errno));
	int rc;
	if (!S_ISDIR(st.st_mode)) {
		rc = cp_db_read(db, path);
		if (rc)
			return rc;
		goto derived;
	}
	struct strbuf dbp;
	strbuf_init(&dbp);
	strbuf_addf(&dbp, "%s/%s", path, CP_DB_DEFAULT_NAME);
	if (cp_db_sources_current(path, dbp.buf)) {
		rc = cp_db_read(db, dbp.buf);
		if (!rc) {
			strbuf_release(&dbp);
			goto derived;
		}
		if (o->progress)
			fprintf(o->progress, "callpath: %s; analyzing %s again\n",
				cp_error_message(), path);
		cp_error_clear();
	}
	struct cp_analyze_options ao = *o;
	ao.derived = NULL; /* the saved database holds the measured data only */
	ao.nderived = 0;
	rc = cp_analyze_dir(path, &ao, db);
	if (!rc && !o->no_write && !access(path, W_OK)) {
		if (cp_db_write(db, dbp.buf)) {
			if (o->progress)
				fprintf(o->progress, "callpath: cannot save %s: %s\n", dbp.buf,
					cp_error_message());
			cp_error_clear();
		}
	}
	strbuf_release(&dbp);
	if (rc)
		return rc;
derived:
	rc = add_all_derived(db, o);
	if (rc)
		cp_db_release(db);
	return rc;
}
