/* GET /api/sync: waits by synchronization object (docs/cmd-view.md), from the database's
 * sync_object table (db/sync-objects.h): the objects summed over threads, heaviest first,
 * each with its top waiting call site, as `callpath report --view sync` shows them. */
#include "base/error.h"
#include "base/strbuf.h"
#include "db/sync-objects.h"
#include "format/measure.h"
#include "view/api-impl.h"
#include "view/json.h"

#define SYNC_DEFAULT_LIMIT 100
#define SYNC_MAX_LIMIT 1000

/* An MPI rank or tag: null for none (and for the other kinds). */
static void kv_mpi(struct strbuf *b, const char *key, const struct cp_sync_object *o, int v)
{
	if (cp_sync_kind_is_mpi(o->kind) && v != CP_MF_MPI_NONE)
		json_kv_num(b, key, v);
	else {
		json_key(b, key, 0);
		strbuf_addstr(b, "null");
	}
}

static void object_json(struct strbuf *b, const struct cp_sync_summary *s,
			const struct cp_sync_object *o, struct strbuf *name)
{
	strbuf_clear(name);
	cp_sync_object_name(o, name);
	strbuf_addch(b, '{');
	json_key(b, "pid", 1);
	json_num(b, o->pid);
	json_key(b, "rank", 0);
	if (o->rank >= 0)
		json_num(b, o->rank);
	else
		strbuf_addstr(b, "null");
	json_kv_str(b, "kind", o->kind);
	json_kv_str(b, "name", name->buf);
	kv_mpi(b, "peer", o, o->peer);
	kv_mpi(b, "tag", o, o->tag);
	json_kv_num(b, "wait_ns", (double)o->wait_ns);
	json_kv_num(b, "waits", (double)o->waits);
	json_kv_num(b, "share", s->wait_ns ? (double)o->wait_ns / (double)s->wait_ns : 0);
	json_kv_str(b, "site", o->nsites ? o->sites[0].site : NULL);
	json_kv_num(b, "site_wait_ns", o->nsites ? (double)o->sites[0].wait_ns : 0);
	json_kv_num(b, "sites", (double)o->nsites);
	strbuf_addch(b, '}');
}

void cp_web_api_sync(struct cp_web_ctx *c, struct cp_web_resp *out)
{
	struct cp_sync_rows rows;
	int rc = cp_db_get_sync(c->m->path, &rows);
	if (rc) {
		cp_web_api_fail(out, rc);
		return;
	}
	struct cp_sync_summary s;
	cp_sync_summarize(&rows, &s);
	size_t limit = c->req->limit ? c->req->limit : SYNC_DEFAULT_LIMIT;
	if (limit > SYNC_MAX_LIMIT)
		limit = SYNC_MAX_LIMIT;
	struct strbuf *b = &out->body, name;
	strbuf_init(&name);
	strbuf_addstr(b, "{\"present\":");
	strbuf_addstr(b, rows.present ? "true" : "false");
	json_kv_num(b, "wait_ns", (double)s.wait_ns);
	json_kv_num(b, "waits", (double)s.waits);
	json_kv_num(b, "total", (double)s.n);
	json_key(b, "objects", 0);
	strbuf_addch(b, '[');
	for (size_t i = 0; i < s.n && i < limit; i++) {
		if (i)
			strbuf_addch(b, ',');
		object_json(b, &s, &s.v[i], &name);
	}
	strbuf_addstr(b, "]}\n");
	strbuf_release(&name);
	cp_sync_summary_release(&s);
	cp_sync_rows_release(&rows);
}
