/* Waits by synchronization object, from a measurement directory (sync-objects.h). */
#include "db/sync-objects.h"

#include "analyze/elf/datasym.h"
#include "analyze/symbolize.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "db/db.h"
#include "format/measure-read.h"

#include <stdlib.h>
#include <string.h>

/* ELF images opened once per path, for the data symbols. */
struct images {
	char **paths;
	struct cp_elf_image *im;
	int *ok;
	size_t n;
};

static const struct cp_elf_image *image_get(struct images *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->paths[i], path))
			return c->ok[i] ? &c->im[i] : NULL;
	c->paths = xrealloc(c->paths, (c->n + 1) * sizeof *c->paths);
	c->im = xrealloc(c->im, (c->n + 1) * sizeof *c->im);
	c->ok = xrealloc(c->ok, (c->n + 1) * sizeof *c->ok);
	c->paths[c->n] = xstrdup(path);
	c->ok[c->n] = path[0] == '/' && !cp_elf_image_open(&c->im[c->n], path);
	if (!c->ok[c->n])
		cp_error_clear();
	return c->ok[c->n++] ? &c->im[c->n - 1] : NULL;
}

static void images_release(struct images *c)
{
	for (size_t i = 0; i < c->n; i++) {
		if (c->ok[i])
			cp_elf_image_release(&c->im[i]);
		free(c->paths[i]);
	}
	free(c->paths);
	free(c->im);
	free(c->ok);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Names the global holding object, if a module's writable sections hold it. */
static void name_object(struct images *c, const struct cp_mf_proc *p, struct cp_sync_row *r)
{
	for (size_t i = 0; i < p->nmodules; i++) {
		const struct cp_mf_module_info *m = &p->modules[i];
		const struct cp_elf_image *im = image_get(c, m->path);
		uint64_t vaddr = r->object - m->bias, off = 0;
		const char *name = NULL;
		if (!im || r->object < m->bias || !cp_elf_in_writable(im, vaddr))
			continue;
		r->module = xstrdup(base_name(m->path));
		if (!cp_elf_data_symbol(im, vaddr, &name, &off))
			return;
		struct strbuf sb;
		strbuf_init(&sb);
		strbuf_addstr(&sb, name);
		if (off)
			strbuf_addf(&sb, "+0x%llx", (unsigned long long)off);
		r->symbol = strbuf_detach(&sb);
		return;
	}
}

/* "proc (file.c:LINE)" for the call site at node, and its parts into r. */
static char *name_site(struct cp_symbolizer *sym, const struct cp_mf_proc *p,
		       const struct cp_mf_rnode *n, struct cp_sync_row *r)
{
	struct strbuf sb;
	strbuf_init(&sb);
	long mi = n->module == CP_MF_MODULE_NONE ? -1 : cp_mf_proc_module(p, n->module);
	struct cp_sym_info info = {0};
	const struct cp_mf_module_info *m = mi >= 0 ? &p->modules[mi] : NULL;
	if (m &&
	    !cp_symbolizer_lookup(sym, m->path, m->build_id, m->build_id_len, n->offset,
				  n->kind == CP_MF_NODE_CALL, &info) &&
	    info.found) {
		strbuf_addstr(&sb, info.procedure);
		r->site_proc = xstrdup(info.procedure);
		if (info.file) {
			strbuf_addf(&sb, " (%s:%d)", base_name(info.file), info.line);
			r->site_file = xstrdup(info.file);
			r->site_line = info.line;
		}
	} else {
		cp_error_clear();
		strbuf_addf(&sb, "[%s+0x%llx]", m ? base_name(m->path) : "?",
			    (unsigned long long)n->offset);
	}
	return strbuf_detach(&sb);
}

/* An MPI wait's communicator: the name the program gave it, else the standard one. */
static void name_comm(const struct cp_mf_proc *p, const struct cp_mf_sync_obj *e,
		      struct cp_sync_row *r)
{
	r->peer = CP_MF_MPI_AUX_PEER(e->aux);
	r->tag = CP_MF_MPI_AUX_TAG(e->aux);
	for (size_t i = p->ncomms; i-- > 0;)
		if (p->comms[i].comm == e->object && p->comms[i].name[0]) {
			r->symbol = xstrdup(p->comms[i].name);
			return;
		}
	struct strbuf sb;
	strbuf_init(&sb);
	if (e->object == CP_MF_MPI_COMM_WORLD)
		strbuf_addstr(&sb, "MPI_COMM_WORLD");
	else if (e->object == CP_MF_MPI_COMM_SELF)
		strbuf_addstr(&sb, "MPI_COMM_SELF");
	else if (e->object != CP_MF_MPI_COMM_UNKNOWN)
		strbuf_addf(&sb, "comm#%llu",
			    (unsigned long long)(e->object - CP_MF_MPI_COMM_SELF));
	r->symbol = sb.len ? strbuf_detach(&sb) : NULL;
	strbuf_release(&sb);
}

static struct cp_sync_row *row_add(struct cp_sync_rows *out, const struct cp_mf_thr *t)
{
	out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
	struct cp_sync_row *r = &out->v[out->n++];
	memset(r, 0, sizeof *r);
	r->pid = t->hdr.pid;
	r->rank = t->hdr.h.rank;
	r->tidx = t->hdr.tidx;
	r->peer = r->tag = CP_MF_MPI_NONE;
	return r;
}

static void thread_rows(struct images *c, struct cp_symbolizer *sym, const struct cp_mf_proc *p,
			const struct cp_mf_thr *t, struct cp_sync_rows *out)
{
	for (size_t i = 0; i < t->nsync; i++) {
		const struct cp_mf_sync_obj *e = &t->sync[i];
		struct cp_sync_row *r = row_add(out, t);
		r->object = e->object;
		r->kind = cp_sync_kind_name(e->kind);
		r->wait_ns = e->wait_ns;
		r->waits = e->waits;
		if (cp_sync_kind_is_mpi(r->kind))
			name_comm(p, e, r);
		else if (e->kind != CP_MF_SYNC_JOIN)
			name_object(c, p, r);
		r->site = name_site(sym, p, &t->nodes[e->node], r);
	}
	if (t->hdr.sync_lost_waits) {
		struct cp_sync_row *r = row_add(out, t);
		r->kind = "lost";
		r->wait_ns = t->hdr.sync_lost_ns;
		r->waits = t->hdr.sync_lost_waits;
	}
}

/* The rows of image i of listing l (streamed: one thread in memory at a time). */
static int image_rows(struct images *c, struct cp_symbolizer *sym, const struct cp_mf_list *l,
		      size_t i, struct cp_sync_rows *out)
{
	struct cp_mf_proc p;
	int rc = cp_mf_list_proc(l, i, &p);
	size_t n = rc ? 0 : cp_mf_list_nthreads(l, i, &p);
	for (size_t j = 0; j < n && !rc; j++) {
		struct cp_mf_thr t;
		rc = cp_mf_list_thread(l, i, j, &p, &t);
		if (!rc)
			thread_rows(c, sym, &p, &t, out);
		cp_mf_thr_release(&t);
	}
	cp_mf_proc_release(&p);
	return rc;
}

int cp_sync_rows_from_dir(const char *dir, struct cp_sync_rows *out)
{
	memset(out, 0, sizeof *out);
	struct cp_mf_list l;
	int rc = cp_mf_list_open(&l, dir);
	if (rc)
		return rc;
	struct images c = {0};
	struct cp_symbolizer *sym = cp_symbolizer_new();
	for (size_t i = 0; i < l.nimages && !rc; i++)
		rc = image_rows(&c, sym, &l, i, out);
	out->present = 1;
	cp_symbolizer_free(sym);
	images_release(&c);
	cp_mf_list_release(&l);
	if (rc)
		cp_sync_rows_release(out);
	return rc;
}

int cp_db_save_sync(const char *dir, const char *dbpath)
{
	struct cp_sync_rows rows;
	int rc = cp_sync_rows_from_dir(dir, &rows);
	if (!rc && rows.n)
		rc = cp_db_put_sync(dbpath, &rows);
	cp_sync_rows_release(&rows);
	return rc;
}

int cp_db_save_sync_if_waits(const struct cp_db *db, const char *dir, const char *dbpath)
{
	if (cp_db_metric_find(db, "wait-time") == CP_DB_NONE &&
	    cp_db_metric_find(db, "mpi-time") == CP_DB_NONE)
		return 0;
	return cp_db_save_sync(dir, dbpath);
}
