/* cp_analyze_dir and cp_profile_open (analyze.h): a measurement directory -> a finished
 * profile database, streaming one file at a time (docs/cmd-analyze.md). */
#include "db/analyze.h"

#include "analyze/elf/elf-image.h"
#include "analyze/structure/cache.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "db/correlate/analyze-impl.h"
#include "db/sources.h"
#include "db/sync-objects.h"
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

char *cp_analysis_command_line(const struct cp_mf_proc *p)
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

/* Process image i's header into the run metadata, notes and warnings. */
static void scan_image(struct cp_analysis *a, size_t i, const struct cp_mf_proc *p)
{
	struct cp_db *db = a->db;
	const struct cp_mf_process *h = &p->hdr;
	if (i == 0) {
		char *cmd = cp_analysis_command_line(p);
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
	for (size_t n = 0; n < p->nnotes; n++) {
		if (a->list.nimages > 1) {
			char buf[1200];
			snprintf(buf, sizeof buf, "process %d: %s", h->pid, p->notes[n]);
			cp_db_note_add(db, buf);
		} else {
			cp_db_note_add(db, p->notes[n]);
		}
	}
	uint32_t fl = h->h.flags;
	if (fl & CP_MF_CRASHED) {
		if (++a->ncrashed <= PROC_WARN_MAX)
			cp_analysis_warn(
			    db,
			    "process %d died from signal %d; its samples up to then are "
			    "included",
			    h->pid, h->exit_status > 128 ? h->exit_status - 128 : 0);
	} else if (!(fl & CP_MF_FINISHED)) {
		if (++a->nunfinished <= PROC_WARN_MAX)
			cp_analysis_warn(db,
					 "process %d did not finish normally (killed, or still "
					 "running); its samples up to then are included",
					 h->pid);
	}
	if ((fl & CP_MF_DISABLED) && ++a->ndisabled <= PROC_WARN_MAX)
		cp_analysis_warn(db, "the runtime disabled itself in process %d; see the notes",
				 h->pid);
}

/* Pass 1, process files only: metrics, modules, run metadata, and the threads to
 * correlate (the units). */
static int pass_scan(struct cp_analysis *a)
{
	struct cp_db *db = a->db;
	size_t aunits = 0;
	a->t_lo = UINT64_MAX;
	for (size_t i = 0; i < a->list.nimages; i++) {
		struct cp_mf_proc p;
		int rc = cp_mf_list_proc(&a->list, i, &p);
		if (rc)
			return rc;
		for (uint32_t m = 0; m < p.hdr.nmetrics; m++)
			if (cp_analysis_metric(db, &p.hdr.metrics[m]) == CP_DB_NONE) {
				cp_mf_proc_release(&p);
				return cp_error(
				    CP_EFORMAT,
				    "%s: more than %d distinct metrics over its processes", a->dir,
				    CP_DB_MAX_METRICS);
			}
		scan_image(a, i, &p);
		free(cp_analysis_modmap(a->corr, &p));
		for (size_t j = 0, nt = cp_mf_list_nthreads(&a->list, i, &p); j < nt; j++) {
			XGROW(a->units, a->nunits + 1, aunits);
			a->units[a->nunits++] =
			    (struct unit){i, j, j + 1, cp_mf_list_thread_bytes(&a->list, i, j, &p)};
		}
		cp_mf_proc_release(&p);
	}
	if (!db->nmetrics)
		return cp_error(CP_EFORMAT, "%s: the process files declare no metric", a->dir);
	if (a->ncrashed > PROC_WARN_MAX)
		cp_analysis_warn(db, "%zu processes died from a signal in all", a->ncrashed);
	if (a->nunfinished > PROC_WARN_MAX)
		cp_analysis_warn(db, "%zu processes did not finish normally in all",
				 a->nunfinished);
	if (a->ndisabled > PROC_WARN_MAX)
		cp_analysis_warn(db, "the runtime disabled itself in %zu processes in all",
				 a->ndisabled);
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

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An OpenMP program's time sampled in its OpenMP runtime's waits (barriers, idle threads),
 * omp-wait, and the rest of its time in regions and tasks, omp-work: parts of the first
 * CPU-time (else wall-clock) metric. */
static void omp_choose(struct cp_analysis *a)
{
	const struct cp_db *db = a->db;
	size_t nraw = cp_db_nraw(db), from = nraw;
	for (size_t m = 0; m < nraw && from == nraw; m++)
		if (db->metrics[m].source == CP_MF_SRC_CPUTIME)
			from = m;
	for (size_t m = 0; m < nraw && from == nraw; m++)
		if (db->metrics[m].source == CP_MF_SRC_REALTIME)
			from = m;
	if (from == nraw)
		return;
	const struct cp_db_metric *m = &db->metrics[from];
	memset(&a->omp_from, 0, sizeof a->omp_from);
	snprintf(a->omp_from.name, sizeof a->omp_from.name, "%s", m->name);
	snprintf(a->omp_from.unit, sizeof a->omp_from.unit, "%s", m->unit);
	a->omp_from.source = m->source;
	a->omp_from.mechanism = m->mechanism;
	a->omp_from.period = m->period;
}

void *cp_analysis_shared(struct cp_analysis *a, size_t *size)
{
	*size = sizeof a->omp_from;
	return &a->omp_from;
}

int cp_analysis_begin(struct cp_analysis **out, const char *dir, const struct cp_analyze_options *o,
		      struct cp_db *db)
{
	struct cp_analysis *a = xcalloc(1, sizeof *a);
	if (!o) {
		cp_analyze_options_init(&a->defaults);
		o = &a->defaults;
	}
	a->dir = dir;
	a->o = o;
	pthread_mutex_init(&a->struct_lock, NULL);
	*out = a;
	if (db)
		cp_db_init(db);
	int rc = cp_mf_list_open(&a->list, dir);
	if (rc || !db)
		return rc;
	a->db = db;
	cp_db_sources_record(db, &a->list);
	a->corr = cp_corr_new(db);
	double t0 = cpu_s();
	rc = pass_scan(a);
	a->t_scan = cpu_s() - t0;
	if (!rc && cp_corr_omp_used(a->corr)) {
		omp_choose(a);
		rc = cp_analysis_omp(a, db, a->corr);
	}
	return rc;
}

size_t cp_analysis_nimages(const struct cp_analysis *a)
{
	return a->list.nimages;
}

int cp_analysis_images(struct cp_analysis *a, size_t lo, size_t hi, struct cp_db *db)
{
	if (hi > a->list.nimages)
		hi = a->list.nimages;
	size_t n = hi > lo ? hi - lo : 0;
	struct unit *u = xcalloc(n + 1, sizeof *u);
	for (size_t i = 0; i < n; i++)
		u[i] = (struct unit){lo + i, 0, SIZE_MAX, 0};
	double t0 = cpu_s();
	int rc = cp_analysis_units(a, u, n, db, db == a->db ? a->corr : NULL);
	a->t_correlate += cpu_s() - t0;
	free(u);
	return rc;
}

static void print_stats(const struct cp_analysis *a, const struct cp_db *db)
{
	const struct cp_corr_stats *cs = &a->stats;
	fprintf(a->o->progress,
		"correlation: %zu nodes, %zu node keys, %zu address lookups, %zu frames, "
		"%zu scopes, tables %.1f MB, peak RSS so far %ld MB\n",
		cs->nodes, cs->node_keys, cs->lookups, cs->instances, db->nscopes,
		(double)cs->bytes / 1e6, peak_mb());
}

/* The run metadata that needs every profile, derived metrics, and cp_db_finish. */
int cp_analysis_end(struct cp_analysis *a)
{
	struct cp_db *db = a->db;
	uint64_t dropped = 0;
	for (size_t p = 0; p < db->nprofiles; p++)
		dropped += db->profiles[p].dropped;
	if (dropped)
		cp_analysis_warn(db, "%llu samples were dropped by the runtime",
				 (unsigned long long)dropped);
	char *absdir = abs_path(a->dir);
	db->run.measurement_dir = cp_db_intern(db, absdir);
	free(absdir);
	db->run.callpath_version = cp_db_intern(db, CALLPATH_VERSION);
	db->run.start_ns = a->t_lo == UINT64_MAX ? 0 : a->t_lo;
	db->run.duration_s =
	    a->t_hi > a->t_lo && a->t_lo != UINT64_MAX ? (double)(a->t_hi - a->t_lo) / 1e9 : 0;
	cp_db_presets_add(db, 0);
	int rc = add_all_derived(db, a->o);
	if (rc)
		return rc;
	int stats = getenv("CALLPATH_ANALYZE_STATS") && a->o->progress;
	if (stats) {
		print_stats(a, db);
		if (a->npieces)
			fprintf(
			    a->o->progress,
			    "CPU s: scan %.2f, correlate %.2f (wall %.2f; %u pieces, thread CPU "
			    "%.2f to %.2f, then merging %.2f)\n",
			    a->t_scan, a->t_correlate, a->w_correlate, a->npieces, a->piece_cpu_min,
			    a->piece_cpu_max, a->merge_cpu);
		else /* analyze --mpi: this rank's own piece */
			fprintf(a->o->progress, "CPU s: scan %.2f, correlate %.2f\n", a->t_scan,
				a->t_correlate);
	}
	cp_corr_free(a->corr); /* before finish, so that their peaks do not add up */
	a->corr = NULL;
	if (a->o->defer_finish)
		return 0;
	double t0 = cpu_s(), w0 = wall_s();
	rc = cp_db_finish(db);
	if (stats)
		fprintf(a->o->progress, "CPU s: finish %.2f (wall %.2f); peak RSS %ld MB\n",
			cpu_s() - t0, wall_s() - w0, peak_mb());
	return rc;
}

void cp_analysis_free(struct cp_analysis *a)
{
	if (!a)
		return;
	cp_corr_free(a->corr);
	cp_mf_list_release(&a->list);
	free(a->units);
	pthread_mutex_destroy(&a->struct_lock);
	free(a);
}

int cp_analyze_dir(const char *dir, const struct cp_analyze_options *o, struct cp_db *db)
{
	struct cp_analysis *a;
	int rc = cp_analysis_begin(&a, dir, o, db);
	if (!rc) {
		double t0 = cpu_s(), w0 = wall_s();
		rc = cp_analysis_parallel(a, cp_analysis_jobs(a->o));
		a->t_correlate = cpu_s() - t0;
		a->w_correlate = wall_s() - w0;
	}
	if (!rc)
		rc = cp_analysis_end(a);
	cp_analysis_free(a);
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
	int save = !o->no_write && !access(path, W_OK);
	ao.defer_finish = save; /* cp_db_write finishes it beside writing */
	rc = cp_analyze_dir(path, &ao, db);
	if (!rc && save &&
	    (cp_db_write(db, dbp.buf) || cp_db_save_sync_if_waits(db, path, dbp.buf))) {
		if (o->progress)
			fprintf(o->progress, "callpath: cannot save %s: %s\n", dbp.buf,
				cp_error_message());
		cp_error_clear();
	}
	if (!rc)
		rc = cp_db_finish(db); /* done by the write, unless it failed early */
	strbuf_release(&dbp);
	if (rc)
		return rc;
derived:
	rc = add_all_derived(db, o);
	if (rc)
		cp_db_release(db);
	return rc;
}
