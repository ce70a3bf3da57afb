/* Waits by synchronization object, summed by object (sync-objects.h); the kinds' names and
 * the rows' release, which readers of the table need without the directory reader. */
#include "db/sync-objects.h"

#include "base/strbuf.h"
#include "base/xalloc.h"
#include "format/measure.h"

#include <stdlib.h>
#include <string.h>

const char *cp_sync_kind_name(unsigned kind)
{
	static const char *const names[] = {
	    [CP_MF_SYNC_MUTEX] = "mutex",
	    [CP_MF_SYNC_RDLOCK] = "rwlock-read",
	    [CP_MF_SYNC_WRLOCK] = "rwlock-write",
	    [CP_MF_SYNC_COND] = "cond",
	    [CP_MF_SYNC_BARRIER] = "barrier",
	    [CP_MF_SYNC_JOIN] = "thread",
	    [CP_MF_SYNC_SEM] = "sem",
	    [CP_MF_SYNC_MPI_RECV] = "mpi-recv",
	    [CP_MF_SYNC_MPI_SEND] = "mpi-send",
	    [CP_MF_SYNC_MPI_COLL] = "mpi-coll",
	};
	return kind && kind <= CP_MF_SYNC_KIND_MAX ? names[kind] : NULL;
}

int cp_sync_kind_is_mpi(const char *kind)
{
	return kind && !strncmp(kind, "mpi-", 4);
}

void cp_sync_rows_release(struct cp_sync_rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].symbol);
		free(r->v[i].module);
		free(r->v[i].site);
		free(r->v[i].site_proc);
		free(r->v[i].site_file);
	}
	free(r->v);
	memset(r, 0, sizeof *r);
}

static int str_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static const struct cp_sync_row *sort_rows;

/* By object, then call site. */
static int row_cmp(const void *pa, const void *pb)
{
	const struct cp_sync_row *a = &sort_rows[*(const size_t *)pa];
	const struct cp_sync_row *b = &sort_rows[*(const size_t *)pb];
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->object != b->object)
		return a->object < b->object ? -1 : 1;
	int c = strcmp(a->kind, b->kind);
	if (!c && a->peer != b->peer)
		return a->peer < b->peer ? -1 : 1;
	if (!c && a->tag != b->tag)
		return a->tag < b->tag ? -1 : 1;
	return c ? c : str_cmp(a->site, b->site);
}

static int same_object(const struct cp_sync_row *a, const struct cp_sync_row *b)
{
	return a->pid == b->pid && a->object == b->object && !strcmp(a->kind, b->kind) &&
	       a->peer == b->peer && a->tag == b->tag;
}

static int site_cmp(const void *pa, const void *pb)
{
	const struct cp_sync_site *a = pa, *b = pb;
	return a->wait_ns != b->wait_ns ? (a->wait_ns < b->wait_ns ? 1 : -1)
					: str_cmp(a->site, b->site);
}

static int object_cmp(const void *pa, const void *pb)
{
	const struct cp_sync_object *a = pa, *b = pb;
	if (a->wait_ns != b->wait_ns)
		return a->wait_ns < b->wait_ns ? 1 : -1;
	return a->object != b->object ? (a->object < b->object ? -1 : 1) : a->pid - b->pid;
}

static void add_row(struct cp_sync_object *o, const struct cp_sync_row *r)
{
	o->wait_ns += r->wait_ns;
	o->waits += r->waits;
	struct cp_sync_site *last = o->nsites ? &o->sites[o->nsites - 1] : NULL;
	if (!last || str_cmp(last->site, r->site)) {
		o->sites = xrealloc(o->sites, (o->nsites + 1) * sizeof *o->sites);
		last = &o->sites[o->nsites++];
		memset(last, 0, sizeof *last);
		last->site = r->site;
		last->row = r;
	}
	last->wait_ns += r->wait_ns;
	last->waits += r->waits;
}

void cp_sync_summarize(const struct cp_sync_rows *rows, struct cp_sync_summary *out)
{
	memset(out, 0, sizeof *out);
	size_t *idx = xmalloc((rows->n ? rows->n : 1) * sizeof *idx);
	for (size_t i = 0; i < rows->n; i++)
		idx[i] = i;
	sort_rows = rows->v;
	qsort(idx, rows->n, sizeof *idx, row_cmp);
	out->v = xcalloc(rows->n ? rows->n : 1, sizeof *out->v);
	for (size_t i = 0; i < rows->n; i++) {
		const struct cp_sync_row *r = &rows->v[idx[i]];
		if (!out->n || !same_object(r, &rows->v[idx[i - 1]])) {
			struct cp_sync_object *o = &out->v[out->n++];
			o->pid = r->pid;
			o->rank = r->rank;
			o->object = r->object;
			o->kind = r->kind;
			o->symbol = r->symbol;
			o->module = r->module;
			o->peer = r->peer;
			o->tag = r->tag;
		}
		add_row(&out->v[out->n - 1], r);
		out->wait_ns += r->wait_ns;
		out->waits += r->waits;
	}
	free(idx);
	for (size_t i = 0; i < out->n; i++)
		qsort(out->v[i].sites, out->v[i].nsites, sizeof *out->v[i].sites, site_cmp);
	qsort(out->v, out->n, sizeof *out->v, object_cmp);
}

void cp_sync_summary_release(struct cp_sync_summary *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].sites);
	free(s->v);
	memset(s, 0, sizeof *s);
}

/* "MPI_COMM_WORLD tag 7 from rank 0" (MPI_ANY_SOURCE and MPI_ANY_TAG, negative, as
 * "any"). */
static void mpi_name(const struct cp_sync_object *o, struct strbuf *sb)
{
	strbuf_addstr(sb, o->symbol ? o->symbol : "(communicator unknown)");
	if (o->tag != CP_MF_MPI_NONE && o->tag >= 0)
		strbuf_addf(sb, " tag %d", o->tag);
	else if (o->tag != CP_MF_MPI_NONE)
		strbuf_addstr(sb, " tag any");
	if (o->peer == CP_MF_MPI_NONE)
		return;
	const char *rel = !strcmp(o->kind, "mpi-recv")	 ? "from"
			  : !strcmp(o->kind, "mpi-send") ? "to"
							 : "root";
	if (o->peer >= 0)
		strbuf_addf(sb, " %s%s %d", rel, strcmp(rel, "root") ? " rank" : "", o->peer);
	else
		strbuf_addf(sb, " %s any%s", rel, strcmp(rel, "root") ? " rank" : "");
}

void cp_sync_object_name(const struct cp_sync_object *o, struct strbuf *sb)
{
	if (cp_sync_kind_is_mpi(o->kind))
		mpi_name(o, sb);
	else if (!strcmp(o->kind, "lost"))
		strbuf_addstr(sb, "(table full)");
	else if (o->symbol)
		strbuf_addf(sb, "%s (%s global)", o->symbol, o->module ? o->module : "?");
	else if (o->module)
		strbuf_addf(sb, "0x%llx (%s data)", (unsigned long long)o->object, o->module);
	else
		strbuf_addf(sb, "%s 0x%llx", !strcmp(o->kind, "thread") ? "thread" : "heap",
			    (unsigned long long)o->object);
}
