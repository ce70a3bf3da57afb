/* The views that need the whole profile in memory (report/profile.h): bottom-up and flat,
 * one thread or rank, statistics other than the sum. The profile of one selection is kept
 * (the last one asked for) with the views built from it. */
#include "view/model.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "report/profile.h"
#include "report/report.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct name_id {
	const char *name;
	uint32_t id;
};

struct cp_web_full {
	int64_t thread, rank; /* the selection */
	struct cp_profile p;
	struct cp_view views[3][5]; /* [enum cp_web_view][stat] */
	int built[3][5];
	int refs; /* the model's and the load jobs' (changed under the server's lock) */
	struct name_id *files, *procs; /* sorted by name, for ids of view nodes */
	/* /api/threads of bottom-up [0] and flat [1] rows: the view with its contributions */
	struct cp_view rows[2];
	struct cp_view_contribs rec[2];
	int rows_built[2];
};

static int name_cmp(const void *a, const void *b)
{
	const struct name_id *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->id > y->id) - (x->id < y->id);
}

static uint32_t name_find(const struct name_id *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;
	while (name && lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(v[mid].name, name);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return name && lo < n && !strcmp(v[lo].name, name) ? v[lo].id : CP_WEB_NONE;
}

void cp_web_full_free(struct cp_web_full *f)
{
	if (!f || --f->refs > 0)
		return;
	for (int k = 0; k < 3; k++)
		for (int s = 0; s < 5; s++)
			if (f->built[k][s])
				cp_view_release(&f->views[k][s]);
	for (int k = 0; k < 2; k++)
		if (f->rows_built[k]) {
			cp_view_release(&f->rows[k]);
			cp_view_contribs_release(&f->rec[k]);
		}
	cp_profile_release(&f->p);
	free(f->files);
	free(f->procs);
	free(f);
}

static int full_load(const char *path, const char *name, int64_t thread, int64_t rank,
		     struct cp_web_full **out)
{
	struct cp_db db;
	int rc = cp_db_read(&db, path);
	if (rc)
		return rc;
	int tidx = CP_PROFILE_ALL_THREADS, pid = 0;
	if (thread >= 0) {
		if ((size_t)thread >= db.nprofiles) {
			cp_db_release(&db);
			return cp_error(CP_ENOENT, "no thread (profile) %lld", (long long)thread);
		}
		tidx = (int)db.profiles[thread].tidx;
		pid = db.profiles[thread].pid;
	} else if (rank >= 0) {
		pid = CP_PROFILE_RANK((int)rank);
	}
	struct cp_web_full *f = xcalloc(1, sizeof *f);
	f->refs = 1;
	f->thread = thread;
	f->rank = rank;
	if ((rc = cp_profile_from_db(&f->p, &db, name, tidx, pid, NULL, 0))) {
		cp_db_release(&db);
		cp_web_full_free(f);
		return rc;
	}
	const struct cp_db *d = &f->p.db;
	f->files = xcalloc(d->nfiles + 1, sizeof *f->files);
	for (size_t i = 0; i < d->nfiles; i++)
		f->files[i] = (struct name_id){d->files[i].path, (uint32_t)i};
	qsort(f->files, d->nfiles, sizeof *f->files, name_cmp);
	f->procs = xcalloc(d->nprocs + 1, sizeof *f->procs);
	for (size_t i = 0; i < d->nprocs; i++)
		f->procs[i] = (struct name_id){d->procs[i].name, (uint32_t)i};
	qsort(f->procs, d->nprocs, sizeof *f->procs, name_cmp);
	*out = f;
	return 0;
}

static int full_has(const struct cp_web_full *f, int k, int s)
{
	return (k == CP_WEB_TD && s == CP_DB_STAT_SUM) || f->built[k][s];
}

/* Builds view k (enum cp_web_view) with statistic s of f into out. It interns names in f's
 * pool, which nothing else touches once f is loaded: one build at a time (one job, or the
 * server's lock without jobs); readers only follow the pooled strings, which never move. */
static void full_make(struct cp_web_full *f, int k, int s, struct cp_view *out)
{
	static const int kinds[] = {CP_VIEW_TOP_DOWN, CP_VIEW_BOTTOM_UP, CP_VIEW_FLAT};
	cp_profile_view(&f->p, kinds[k], s, NULL, out);
}

/* View k with statistic s of f, built on first use. */
static const struct cp_view *full_build(struct cp_web_full *f, int k, int s)
{
	if (k == CP_WEB_TD && s == CP_DB_STAT_SUM)
		return &f->p.td;
	if (!f->built[k][s]) {
		full_make(f, k, s, &f->views[k][s]);
		f->built[k][s] = 1;
	}
	return &f->views[k][s];
}

/* The bottom-up (k 0) or flat (1) view of f's profile with the contributions of its rows,
 * for /api/threads: into f->rows[k], f->rec[k] (interning as full_make does). */
static void rows_make(struct cp_web_full *f, int k)
{
	if (k)
		cp_view_flat_rec(&f->p.td, &f->rows[k], &f->rec[k]);
	else
		cp_view_bottom_up_rec(&f->p.td, &f->rows[k], NULL, &f->rec[k]);
}

/* ---- loading off the request thread (a server's model: m->async) -------------------- */

struct job {
	struct cp_web_model *m;
	struct cp_web_full *f; /* the loaded profile to build a view of (a reference), or NULL */
	char *path, *name;
	uint64_t generation;
	int64_t thread, rank;
	int view, stat;
	int rows; /* 1 + k: builds f's rows[k] for /api/threads (bottom-up 0, flat 1) */
};

void cp_web_async_init(struct cp_web_async *a)
{
	memset(a, 0, sizeof *a);
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->idle, NULL);
}

void cp_web_async_release(struct cp_web_async *a)
{
	pthread_mutex_lock(&a->lock);
	while (a->jobs)
		pthread_cond_wait(&a->idle, &a->lock);
	pthread_mutex_unlock(&a->lock);
	pthread_cond_destroy(&a->idle);
	pthread_mutex_destroy(&a->lock);
}

int cp_web_spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int e = pthread_create(&t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return e;
}

/* Tests (tests/e2e/view-api.sh): a load waits until the file CALLPATH_VIEW_TEST_GATE exists
 * (at most 30 s), so that requests made during a load are not a matter of timing. */
static void test_gate(void)
{
	const char *g = getenv("CALLPATH_VIEW_TEST_GATE");
	for (int i = 0; g && i < 600 && access(g, F_OK); i++)
		usleep(50000);
}

/* With the lock: the job's result into the model, unless the model was reopened meanwhile
 * (a live refresh: the result is for an older database and is dropped). *view: a view
 * built of the model's profile, taken when installed. */
static void job_install(struct job *j, int rc, struct cp_web_full **f, struct cp_view *view,
			int *have_view)
{
	struct cp_web_model *m = j->m;
	struct cp_web_async *a = m->async;
	if (j->generation != m->generation)
		return;
	if (rc) {
		a->failed = 1;
		a->failed_gen = j->generation;
		a->failed_rc = rc;
		a->failed_thread = j->thread;
		a->failed_rank = j->rank;
		snprintf(a->failed_msg, sizeof a->failed_msg, "%s", cp_error_message());
	} else if (!j->f) {
		cp_web_full_free(m->full);
		m->full = *f;
		*f = NULL;
	} else if (*have_view && m->full == *f && !(*f)->built[j->view][j->stat]) {
		(*f)->views[j->view][j->stat] = *view;
		(*f)->built[j->view][j->stat] = 1;
		*have_view = 0;
	}
	if (a->loading_gen == j->generation)
		a->loading = 0;
}

/* A job: loads the profile and builds the asked view (nobody else sees a new profile yet),
 * or builds a view of the model's profile; without the lock, then installs the result. */
static void *job_run(void *arg)
{
	struct job *j = arg;
	struct cp_web_async *a = j->m->async;
	struct cp_web_full *f = j->f;
	struct cp_view view;
	int rc = 0, have_view = 0;
	test_gate();
	if (j->rows)
		rows_make(f, j->rows - 1);
	else if (!f && !(rc = full_load(j->path, j->name, j->thread, j->rank, &f)))
		full_build(f, j->view, j->stat);
	else if (f && !rc) {
		full_make(f, j->view, j->stat, &view);
		have_view = 1;
	}
	pthread_mutex_lock(&a->lock);
	if (j->rows)
		f->rows_built[j->rows - 1] = 1;
	job_install(j, rc, &f, &view, &have_view);
	if (have_view)
		cp_view_release(&view);
	cp_web_full_free(f); /* the job's reference, or a dropped profile */
	if (--a->jobs == 0)
		pthread_cond_broadcast(&a->idle);
	pthread_mutex_unlock(&a->lock);
	cp_error_clear();
	free(j->path);
	free(j->name);
	free(j);
	return NULL;
}

/* Called with a->lock held: runs job j on a thread of its own; CP_WEB_LOADING. */
static int job_spawn(struct cp_web_async *a, struct job *j)
{
	int e = cp_web_spawn(job_run, j);
	if (e) {
		cp_web_full_free(j->f);
		free(j->path);
		free(j->name);
		free(j);
		return cp_error(CP_EIO, "view: cannot start a loading thread: %s", strerror(e));
	}
	a->jobs++;
	a->loading = 1;
	a->loading_gen = j->generation;
	return cp_error(CP_WEB_LOADING, "the whole profile is loading");
}

/* Called with a->lock held: starts a job for the request's selection unless one runs;
 * CP_WEB_LOADING, or the error of the last job. */
static int full_start(struct cp_web_ctx *c)
{
	struct cp_web_model *m = c->m;
	struct cp_web_async *a = m->async;
	const struct cp_web_req *r = c->req;
	if (a->failed && a->failed_gen == m->generation && a->failed_thread == r->thread &&
	    a->failed_rank == r->rank) {
		a->failed = 0;
		return cp_error(a->failed_rc, "%s", a->failed_msg);
	}
	if (a->loading && a->loading_gen == m->generation)
		return cp_error(CP_WEB_LOADING, "the whole profile is loading");
	if (r->thread >= 0 && (size_t)r->thread >= m->head.nprofiles)
		return cp_error(CP_ENOENT, "no thread (profile) %lld", (long long)r->thread);
	struct job *j = xcalloc(1, sizeof *j);
	*j = (struct job){m,	     NULL,    xstrdup(m->path), xstrdup(m->name), m->generation,
			  r->thread, r->rank, r->view,		r->stat,	  0};
	if (m->full && m->full->thread == r->thread && m->full->rank == r->rank) {
		j->f = m->full; /* loaded: only the view is missing */
		j->f->refs++;
	}
	return job_spawn(a, j);
}

/* The view of the request, built on first use. */
static int full_view(struct cp_web_ctx *c, const struct cp_view **out, struct cp_web_full **pf)
{
	struct cp_web_model *m = c->m;
	const struct cp_web_req *r = c->req;
	int rc, other = m->full && (m->full->thread != r->thread || m->full->rank != r->rank);
	if (!m->full || other || (m->async && !full_has(m->full, r->view, r->stat))) {
		if (m->async) /* the old selection's stays until the new one is loaded */
			return full_start(c);
		cp_web_full_free(m->full);
		m->full = NULL;
		if ((rc = full_load(m->path, m->name, r->thread, r->rank, &m->full)))
			return rc;
	}
	*out = full_build(m->full, r->view, r->stat);
	*pf = m->full;
	return 0;
}

/* View node index <-> API id. */
static struct cp_web_node node_id(const struct cp_web_full *f, int view, const struct cp_view *v,
				  uint32_t i)
{
	if (view != CP_WEB_TD || i < f->p.db.nscopes)
		return (struct cp_web_node){view, i, 0, 0, 0};
	return (struct cp_web_node){view, v->nodes[i].parent, 1, 0, 0};
}

static uint32_t node_index(const struct cp_web_full *f, const struct cp_view *v,
			   const struct cp_web_node *id)
{
	uint32_t i = id->index;
	if (id->level) /* an id of the bottom-up view read from the database */
		return UINT32_MAX;
	if (id->view == CP_WEB_TD && id->noline)
		i = i < f->p.db.nscopes ? f->p.own_leaf[i] : UINT32_MAX;
	else if (id->view == CP_WEB_TD && i >= f->p.db.nscopes)
		i = UINT32_MAX;
	return i < v->n ? i : UINT32_MAX;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void row_from_vnode(struct cp_web_ctx *c, const struct cp_web_full *f,
			   const struct cp_view *v, uint32_t i, struct cp_web_row *r)
{
	const struct cp_vnode *n = &v->nodes[i];
	int view = c->req->view;
	memset(r, 0, sizeof *r);
	r->id = node_id(f, view, v, i);
	r->has_parent = i != 0;
	if (r->has_parent)
		r->parent = node_id(f, view, v, n->parent);
	r->kind = cp_vkind_name(n->kind);
	r->name = dup_or_null(n->kind == CP_VK_ROOT ? "<total>" : n->name);
	r->module = dup_or_null(n->module);
	r->file = dup_or_null(n->file);
	r->file_id = name_find(f->files, f->p.db.nfiles, n->file);
	r->line = n->line;
	r->line_end = n->line_end;
	r->proc_id = CP_WEB_NONE;
	for (uint32_t a = i; a != UINT32_MAX && a != 0; a = v->nodes[a].parent) {
		uint32_t k = v->nodes[a].kind;
		if (k == CP_VK_PROCEDURE || k == CP_VK_INLINED || k == CP_VK_CALLER) {
			r->procedure = dup_or_null(v->nodes[a].name);
			r->proc_id = name_find(f->procs, f->p.db.nprocs, v->nodes[a].name);
			break;
		}
	}
	r->has_children = n->first_child != UINT32_MAX;
	for (size_t m = 0; m < c->ms.ndb && m < v->nmetrics; m++) {
		r->incl[m] = cp_view_incl(v, i)[m];
		r->excl[m] = cp_view_excl(v, i)[m];
	}
	cp_web_eval(c, r);
}

/* The request's view and the index of node id in it. */
static int locate(struct cp_web_ctx *c, const struct cp_web_node *id, const struct cp_view **v,
		  struct cp_web_full **f, uint32_t *i)
{
	int rc = full_view(c, v, f);
	if (rc)
		return rc;
	*i = node_index(*f, *v, id);
	return *i == UINT32_MAX ? cp_error(CP_ENOENT, "no such node") : 0;
}

int cp_web_full_node(struct cp_web_ctx *c, const struct cp_web_node *id, struct cp_web_row *out)
{
	const struct cp_view *v;
	struct cp_web_full *f;
	uint32_t i;
	int rc = locate(c, id, &v, &f, &i);
	if (!rc)
		row_from_vnode(c, f, v, i, out);
	return rc;
}

int cp_web_full_children(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn,
			 void *arg)
{
	const struct cp_view *v;
	struct cp_web_full *f;
	uint32_t i;
	int rc = locate(c, id, &v, &f, &i);
	if (rc)
		return rc;
	for (uint32_t k = v->nodes[i].first_child; k != UINT32_MAX && !rc;
	     k = v->nodes[k].next_sibling) {
		struct cp_web_row r;
		row_from_vnode(c, f, v, k, &r);
		rc = fn(arg, &r);
		cp_web_row_release(&r);
	}
	return rc;
}

const struct cp_profile *cp_web_full_profile(struct cp_web_ctx *c)
{
	const struct cp_view *v;
	struct cp_web_full *f;
	c->full_rc = full_view(c, &v, &f);
	return c->full_rc ? NULL : &f->p;
}

/* ---- per-thread values of a bottom-up or flat row ------------------------------------ */

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int vnode_is(const struct cp_vnode *n, const struct cp_web_row *r)
{
	return !strcmp(cp_vkind_name(n->kind), r->kind) && str_eq(n->name, r->name) &&
	       str_eq(n->module, r->module) && str_eq(n->file, r->file) && n->line == r->line;
}

/* The node of v (the view of all threads, built as full_make does) that the id of the
 * lazy view (read from the database) stands for: the rows from the root down to it, each
 * matched to a child of the previous one by kind, name, module, file and line. */
static int lazy_to_index(struct cp_web_ctx *c, const struct cp_web_node *id,
			 const struct cp_view *v, uint32_t *out)
{
	struct cp_web_row *path = NULL;
	size_t n = 0, alloc = 0;
	struct cp_web_node at = *id;
	int rc = 0;
	for (;;) {
		if (n == alloc)
			path = xrealloc(path, (alloc = alloc ? alloc * 2 : 16) * sizeof *path);
		if ((rc = cp_web_node_get(c, &at, &path[n])))
			break;
		n++;
		if (!path[n - 1].has_parent)
			break;
		at = path[n - 1].parent;
	}
	uint32_t i = 0; /* path[n - 1] is the root */
	for (size_t k = n - 1; !rc && k-- > 0;) {
		uint32_t x = v->nodes[i].first_child;
		while (x != UINT32_MAX && !vnode_is(&v->nodes[x], &path[k]))
			x = v->nodes[x].next_sibling;
		if (x == UINT32_MAX)
			rc = cp_error(CP_ENOENT, "no such node");
		i = x;
	}
	for (size_t k = 0; k < n; k++)
		cp_web_row_release(&path[k]);
	free(path);
	*out = i;
	return rc;
}

/* With the lock: a job building f->rows[k] unless a job runs; CP_WEB_LOADING. */
static int rows_start(struct cp_web_model *m, struct cp_web_full *f, int k)
{
	struct cp_web_async *a = m->async;
	if (a->loading && a->loading_gen == m->generation)
		return cp_error(CP_WEB_LOADING, "the whole profile is loading");
	struct job *j = xcalloc(1, sizeof *j);
	*j = (struct job){.m = m,
			  .f = f,
			  .path = xstrdup(m->path),
			  .name = xstrdup(m->name),
			  .generation = m->generation,
			  .thread = f->thread,
			  .rank = f->rank,
			  .rows = 1 + k};
	f->refs++;
	return job_spawn(a, j);
}

int cp_web_full_row_threads(struct cp_web_ctx *c, const struct cp_web_node *id, double *incl,
			    double *excl)
{
	struct cp_web_req td = *c->req; /* the profile alone: no view of it is cached for this */
	const struct cp_web_req *orig = c->req;
	td.view = CP_WEB_TD;
	c->req = &td;
	const struct cp_profile *p = cp_web_full_profile(c);
	c->req = orig;
	if (!p)
		return c->full_rc;
	struct cp_web_full *f = c->m->full;
	int k = id->view == CP_WEB_BU ? 0 : 1, kind = k ? CP_VIEW_FLAT : CP_VIEW_BOTTOM_UP;
	if (!f->rows_built[k] && c->m->async) /* built on a thread of its own */
		return rows_start(c->m, f, k);
	if (!f->rows_built[k]) {
		rows_make(f, k);
		f->rows_built[k] = 1;
	}
	const struct cp_view *v = &f->rows[k];
	uint32_t i = id->index;
	int rc = 0;
	if (id->level)
		rc = lazy_to_index(c, id, v, &i);
	else if (i >= v->n)
		rc = cp_error(CP_ENOENT, "no node %s%u", k ? "f" : "b", i);
	if (!rc)
		cp_profile_thread_values(p, kind, &f->rec[k], i, incl, excl);
	return rc;
}
