/* `callpath report --view sync`: wait time by synchronization object (the mutex,
 * condition variable, barrier... each wait of -e wait blocked on), with the call sites
 * that waited on it. Read from the database's sync_object table, or from the measurement
 * directory itself (db/sync-objects.h). */
#include "report/report.h"
#include "report/profile.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "db/sync-objects.h"
#include "format/measure.h"
#include "report/render.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SYNC_TOP_SITES 3

static int load_rows(const char *path, struct cp_sync_rows *rows)
{
	struct stat st;
	if (stat(path, &st))
		return cp_error(CP_ENOENT, "cannot open %s", path);
	return S_ISDIR(st.st_mode) ? cp_sync_rows_from_dir(path, rows) : cp_db_get_sync(path, rows);
}

/* Keeps the rows of the threads --thread/--pid/--rank select. */
static void select_rows(struct cp_sync_rows *rows, const struct cp_report_options *o)
{
	size_t k = 0;
	for (size_t i = 0; i < rows->n; i++) {
		struct cp_sync_row *r = &rows->v[i];
		int keep = (!o->thread_pid || r->pid == o->thread_pid) &&
			   (o->rank < 0 || r->rank == o->rank) &&
			   (o->thread == CP_REPORT_ALL_THREADS || (int)r->tidx == o->thread);
		struct cp_sync_row tmp = rows->v[k];
		rows->v[k] = *r;
		*r = tmp;
		k += keep;
	}
	for (size_t i = k; i < rows->n; i++) { /* the dropped rows' strings */
		free(rows->v[i].symbol);
		free(rows->v[i].module);
		free(rows->v[i].site);
		free(rows->v[i].site_proc);
		free(rows->v[i].site_file);
	}
	rows->n = k;
}

typedef void (*object_fn)(const struct cp_sync_summary *s, const struct cp_sync_object *o,
			  const char *name, FILE *out);

/* fn on every object with at least min_ns of wait time, with its name. */
static void each_object(const struct cp_sync_summary *s, double min_ns, object_fn fn, FILE *out)
{
	struct strbuf name;
	strbuf_init(&name);
	for (size_t i = 0; i < s->n; i++) {
		if ((double)s->v[i].wait_ns < min_ns)
			continue;
		strbuf_clear(&name);
		cp_sync_object_name(&s->v[i], &name);
		fn(s, &s->v[i], name.buf, out);
	}
	strbuf_release(&name);
}

static void text_object(const struct cp_sync_summary *s, const struct cp_sync_object *o,
			const char *name, FILE *out)
{
	char where[48];
	if (o->rank >= 0)
		snprintf(where, sizeof where, "rank %d, pid %d", o->rank, o->pid);
	else
		snprintf(where, sizeof where, "pid %d", o->pid);
	fprintf(out, "%10.6f s %5.1f%% %9llu  %-12s %s  [%s]\n", (double)o->wait_ns * 1e-9,
		100.0 * (double)o->wait_ns / (double)s->wait_ns, (unsigned long long)o->waits,
		o->kind, name, where);
	for (size_t j = 0; j < o->nsites && j < SYNC_TOP_SITES; j++)
		fprintf(out, "%10.6f s %6s %9llu  %-12s   at %s\n",
			(double)o->sites[j].wait_ns * 1e-9, "",
			(unsigned long long)o->sites[j].waits, "",
			o->sites[j].site ? o->sites[j].site : "?");
}

static void csv_object(const struct cp_sync_summary *s, const struct cp_sync_object *o,
		       const char *name, FILE *out)
{
	(void)s;
	for (size_t j = 0; j < o->nsites; j++)
		fprintf(out, "%d,0x%llx,%s,\"%s\",%s,%s,%llu,%llu,\"%s\",%llu,%llu\n", o->pid,
			(unsigned long long)o->object, o->kind, name, o->symbol ? o->symbol : "",
			o->module ? o->module : "", (unsigned long long)o->wait_ns,
			(unsigned long long)o->waits, o->sites[j].site ? o->sites[j].site : "",
			(unsigned long long)o->sites[j].wait_ns,
			(unsigned long long)o->sites[j].waits);
}

/* An MPI rank or tag: null for none (and for the other kinds). */
static void json_mpi(const struct cp_sync_object *o, int v, FILE *out)
{
	if (cp_sync_kind_is_mpi(o->kind) && v != CP_MF_MPI_NONE)
		fprintf(out, "%d", v);
	else
		fputs("null", out);
}

/* The objects shown are a prefix of s->v (heaviest first, cut at the threshold): the
 * first one has no comma before it. */
static void json_object(const struct cp_sync_summary *s, const struct cp_sync_object *o,
			const char *name, FILE *out)
{
	fprintf(out, "%s\n  {\"pid\": %d, \"rank\": ", o == s->v ? "" : ",", o->pid);
	if (o->rank >= 0)
		fprintf(out, "%d", o->rank);
	else
		fputs("null", out);
	fprintf(out, ", \"object\": \"0x%llx\", \"kind\": ", (unsigned long long)o->object);
	cp_render_json_str(out, o->kind);
	fputs(", \"name\": ", out);
	cp_render_json_str(out, name);
	fputs(", \"symbol\": ", out);
	cp_render_json_str(out, o->symbol);
	fputs(", \"module\": ", out);
	cp_render_json_str(out, o->module);
	fputs(", \"peer\": ", out);
	json_mpi(o, o->peer, out);
	fputs(", \"tag\": ", out);
	json_mpi(o, o->tag, out);
	fprintf(out, ", \"wait_ns\": %llu, \"waits\": %llu, \"share\": %.6f, \"sites\": [",
		(unsigned long long)o->wait_ns, (unsigned long long)o->waits,
		s->wait_ns ? (double)o->wait_ns / (double)s->wait_ns : 0.0);
	for (size_t j = 0; j < o->nsites; j++) {
		const struct cp_sync_site *x = &o->sites[j];
		fputs(j ? ",\n    {\"site\": " : "\n    {\"site\": ", out);
		cp_render_json_str(out, x->site);
		fputs(", \"procedure\": ", out);
		cp_render_json_str(out, x->row->site_proc);
		fputs(", \"file\": ", out);
		cp_render_json_str(out, x->row->site_file);
		fprintf(out, ", \"line\": %d, \"wait_ns\": %llu, \"waits\": %llu}",
			x->row->site_line, (unsigned long long)x->wait_ns,
			(unsigned long long)x->waits);
	}
	fputs("]}", out);
}

static void print_json(const char *path, const struct cp_sync_summary *s, double threshold,
		       double min_ns, FILE *out)
{
	size_t shown = 0;
	for (size_t i = 0; i < s->n; i++)
		shown += (double)s->v[i].wait_ns >= min_ns;
	fputs("{\"version\": 2, \"view\": \"sync\", \"path\": ", out);
	cp_render_json_str(out, path);
	fprintf(out,
		", \"threshold\": %g, \"wait_ns\": %llu, \"waits\": %llu, \"objects_total\": "
		"%zu, \"objects_shown\": %zu, \"objects\": [",
		threshold, (unsigned long long)s->wait_ns, (unsigned long long)s->waits, s->n,
		shown);
	each_object(s, min_ns, json_object, out);
	fputs("]}\n", out);
}

static void print_text(const struct cp_sync_summary *s, double min_ns, FILE *out)
{
	fprintf(
	    out, "Waits by synchronization object: %zu object%s, %.6f s blocked in %llu waits\n",
	    s->n, s->n == 1 ? "" : "s", (double)s->wait_ns * 1e-9, (unsigned long long)s->waits);
	fprintf(out, "%12s %6s %9s  %-12s %s\n", "wait-time", "%", "waits", "kind", "object");
	each_object(s, min_ns, text_object, out);
}

static void print_csv(const struct cp_sync_summary *s, double min_ns, FILE *out)
{
	fputs("pid,object,kind,name,symbol,module,wait_ns,waits,site,site_wait_ns,site_waits\n",
	      out);
	each_object(s, min_ns, csv_object, out);
}

int cp_report_sync(const char *path, const struct cp_report_options *o, FILE *out)
{
	struct cp_sync_rows rows;
	int rc = load_rows(path, &rows);
	if (rc)
		return rc;
	select_rows(&rows, o);
	if (!rows.n && o->format == CP_FORMAT_JSON) {
		print_json(path, &(struct cp_sync_summary){0}, 0, 0, out);
		cp_sync_rows_release(&rows);
		return 0;
	}
	if (!rows.n) {
		fprintf(out,
			"no waits by synchronization object in %s (record with -e wait; a "
			"database made by callpath before they were recorded has none)\n",
			path);
		cp_sync_rows_release(&rows);
		return 0;
	}
	struct cp_sync_summary s;
	cp_sync_summarize(&rows, &s);
	double threshold = o->threshold >= 0 ? o->threshold : o->format == CP_FORMAT_TEXT ? 1 : 0;
	double min_ns = threshold / 100.0 * (double)s.wait_ns;
	if (o->format == CP_FORMAT_CSV)
		print_csv(&s, min_ns, out);
	else if (o->format == CP_FORMAT_JSON)
		print_json(path, &s, threshold, min_ns, out);
	else
		print_text(&s, min_ns, out);
	cp_sync_summary_release(&s);
	cp_sync_rows_release(&rows);
	return 0;
}

/* The record summary's few lines: the heaviest objects, when the run measured waits. */
void cp_report_print_sync_top(const char *dir, FILE *out, size_t n)
{
	struct cp_sync_rows rows;
	if (cp_sync_rows_from_dir(dir, &rows)) {
		cp_error_clear();
		return;
	}
	struct cp_sync_summary s;
	cp_sync_summarize(&rows, &s);
	struct strbuf name;
	strbuf_init(&name);
	if (s.n && s.wait_ns)
		fprintf(out, "\nwaits by synchronization object (%zu of %zu; --view sync):\n",
			s.n < n ? s.n : n, s.n);
	for (size_t i = 0; i < s.n && i < n && s.wait_ns; i++) {
		const struct cp_sync_object *o = &s.v[i];
		strbuf_clear(&name);
		cp_sync_object_name(o, &name);
		fprintf(out, "%10.6f s %5.1f%% %9llu  %-8s %s%s%s\n", (double)o->wait_ns * 1e-9,
			100.0 * (double)o->wait_ns / (double)s.wait_ns,
			(unsigned long long)o->waits, o->kind, name.buf, o->nsites ? "  at " : "",
			o->nsites && o->sites[0].site ? o->sites[0].site : "");
	}
	strbuf_release(&name);
	cp_sync_summary_release(&s);
	cp_sync_rows_release(&rows);
}
