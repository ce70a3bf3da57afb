/* callpath top's model: the profile re-read from a measurement directory, the rows of the
 * chosen view (chosen by the report's row selection), which rows are expanded and where the
 * cursor is, both kept by key (the names on a row's path) across re-reads. */
#include "top/top.h"

#include "base/error.h"
#include "base/hash.h"
#include "base/xalloc.h"
#include "format/measure-read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Rows holding at least this share of the total are expanded when a view is first shown. */
#define OPEN_SHARE 30.0

void cp_top_options_init(struct cp_top_options *o)
{
	o->interval = 1.0;
	o->threshold = 0.5;
	o->view = CP_VIEW_TOP_DOWN;
}

void cp_top_init(struct cp_top *t, const char *path, const struct cp_top_options *o)
{
	memset(t, 0, sizeof *t);
	t->path = path;
	t->opt = *o;
	t->thread = -1;
	cp_report_options_init(&t->ro);
	t->ro.view = o->view;
	t->ro.threshold = o->threshold;
}

static void rows_release(struct cp_top *t)
{
	cp_render_release(&t->r);
	if (t->r.view)
		cp_view_release(&t->view);
	t->r.view = NULL;
	free(t->keys);
	t->keys = NULL;
	t->nshown = 0;
}

void cp_top_release(struct cp_top *t)
{
	rows_release(t);
	if (t->p)
		cp_profile_release(t->p);
	free(t->p);
	free(t->threads);
	free(t->open);
	free(t->shown);
	memset(t, 0, sizeof *t);
}

/* ---- the set of expanded rows ---- */

static size_t open_find(const struct cp_top *t, uint64_t key)
{
	size_t lo = 0, hi = t->nopen;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->open[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int key_open(const struct cp_top *t, uint64_t key)
{
	size_t i = open_find(t, key);
	return i < t->nopen && t->open[i] == key;
}

static void key_set(struct cp_top *t, uint64_t key, int open)
{
	size_t i = open_find(t, key);
	int there = i < t->nopen && t->open[i] == key;
	if (open && !there) {
		XGROW(t->open, t->nopen + 1, t->aopen);
		memmove(t->open + i + 1, t->open + i, (t->nopen - i) * sizeof(*t->open));
		t->open[i] = key;
		t->nopen++;
	} else if (!open && there) {
		memmove(t->open + i, t->open + i + 1, (t->nopen - i - 1) * sizeof(*t->open));
		t->nopen--;
	}
}

static uint64_t row_key(const struct cp_top *t, uint32_t row)
{
	return t->keys[t->r.rows.rows[row].node];
}

int cp_top_has_children(const struct cp_top *t, uint32_t row)
{
	return row + 1 < t->r.rows.n && t->r.rows.rows[row + 1].depth > t->r.rows.rows[row].depth;
}

int cp_top_is_open(const struct cp_top *t, uint32_t row)
{
	return row == 0 || key_open(t, row_key(t, row));
}

/* ---- rows ---- */

/* Each view node's key: its parent's mixed with its kind, name, file and line. */
static void node_keys(struct cp_top *t)
{
	const struct cp_view *v = &t->view;
	t->keys = xmalloc((v->n + 1) * sizeof(*t->keys));
	t->keys[0] = cp_hash_u64((uint64_t)t->ro.view + 1);
	for (uint32_t i = 1; i < v->n; i++) {
		const struct cp_vnode *n = &v->nodes[i];
		uint64_t h = cp_hash_mix(t->keys[n->parent], n->kind);
		h = cp_hash_mix(h, cp_hash_str(n->name));
		h = cp_hash_mix(h, n->file ? cp_hash_str(n->file) : 0);
		t->keys[i] = cp_hash_mix(h, (uint64_t)n->line);
	}
}

/* The visible rows: those whose shown ancestors are all expanded. */
static void rows_shown(struct cp_top *t)
{
	free(t->shown);
	t->shown = xmalloc((t->r.rows.n + 1) * sizeof(*t->shown));
	t->nshown = 0;
	int skip_below = -1;
	for (uint32_t i = 0; i < t->r.rows.n; i++) {
		int depth = t->r.rows.rows[i].depth;
		if (skip_below >= 0 && depth > skip_below)
			continue;
		skip_below = -1;
		t->shown[t->nshown++] = i;
		if (cp_top_has_children(t, i) && !cp_top_is_open(t, i))
			skip_below = depth;
	}
	size_t c = 0;
	while (c < t->nshown && row_key(t, t->shown[c]) != t->cursor_key)
		c++;
	if (c == t->nshown)
		c = t->cursor < t->nshown ? t->cursor : t->nshown ? t->nshown - 1 : 0;
	t->cursor = c;
	if (t->nshown)
		t->cursor_key = row_key(t, t->shown[c]);
}

void cp_top_rebuild(struct cp_top *t)
{
	rows_release(t);
	if (!t->p)
		return;
	const struct cp_summary *s = &t->p->sum;
	if (t->metric >= s->nmetrics)
		t->metric = 0;
	size_t threshold_metric = t->metric < s->nraw ? t->metric : 0;
	double total = cp_view_incl(&t->p->td, 0)[threshold_metric];
	struct cp_view_limits lim = {threshold_metric, cp_render_min_incl(total, t->opt.threshold),
				     0};
	cp_profile_view(t->p, t->ro.view, CP_DB_STAT_SUM, &lim, &t->view);
	t->r.view = &t->view;
	t->r.sum = s;
	t->r.opt = &t->ro;
	t->r.metric = threshold_metric;
	t->r.sort_metric = t->metric;
	t->r.cols[0] = t->metric;
	t->r.ncols = 1;
	t->r.threshold = t->opt.threshold;
	if (!s->nmetrics || cp_render_select(&t->r))
		cp_render_release(&t->r);
	node_keys(t);
	if (!t->opened) {
		for (uint32_t i = 1; i < t->r.rows.n; i++)
			if (cp_render_pct(&t->r, t->r.rows.rows[i].node, threshold_metric, 1) >=
			    OPEN_SHARE)
				key_set(t, row_key(t, i), 1);
		t->opened = 1;
	}
	rows_shown(t);
}

static void threads_list(struct cp_top *t)
{
	const struct cp_db *db = &t->p->db;
	free(t->threads);
	t->threads = xcalloc(db->nprofiles + 1, sizeof(*t->threads));
	t->nthreads = db->nprofiles;
	for (size_t i = 0; i < db->nprofiles; i++) {
		t->threads[i].pid = db->profiles[i].pid;
		t->threads[i].tidx = (int)db->profiles[i].tidx;
	}
	if (t->thread >= (int)t->nthreads)
		t->thread = -1;
}

void cp_top_reload(struct cp_top *t)
{
	struct stat st;
	int dir = !stat(t->path, &st) && S_ISDIR(st.st_mode);
	t->done = dir ? cp_mf_dir_done(t->path) > 0 : 1;
	int tidx = CP_PROFILE_ALL_THREADS, pid = 0;
	if (t->thread >= 0 && (size_t)t->thread < t->nthreads) {
		tidx = t->threads[t->thread].tidx;
		pid = t->threads[t->thread].pid;
	}
	struct cp_profile *np = xcalloc(1, sizeof(*np));
	int rc = cp_profile_load(np, t->path, tidx, pid, NULL, 0, NULL, 1);
	t->refreshes++;
	if (rc) {
		snprintf(t->message, sizeof t->message, "%s", cp_error_message());
		cp_profile_release(np);
		free(np);
		return;
	}
	t->message[0] = 0;
	rows_release(t);
	if (t->p)
		cp_profile_release(t->p);
	free(t->p);
	t->p = np;
	threads_list(t);
	cp_top_rebuild(t);
}

/* ---- actions ---- */

static void move_to(struct cp_top *t, size_t c)
{
	if (!t->nshown)
		return;
	t->cursor = c < t->nshown ? c : t->nshown - 1;
	t->cursor_key = row_key(t, t->shown[t->cursor]);
}

/* Expand (open = 1), collapse (0) or toggle (-1) the cursor's row, or move: into it when it
 * is open already, to its parent when it is closed already. */
static void expand(struct cp_top *t, int open)
{
	if (!t->nshown)
		return;
	uint32_t row = t->shown[t->cursor];
	int has = cp_top_has_children(t, row), is = cp_top_is_open(t, row);
	if (open < 0)
		open = !is;
	if (open && has && is) {
		move_to(t, t->cursor + 1);
	} else if (!open && (!has || !is || row == 0)) {
		int depth = t->r.rows.rows[row].depth;
		size_t c = t->cursor;
		while (c > 0 && t->r.rows.rows[t->shown[c]].depth >= depth)
			c--;
		move_to(t, c);
	} else if (has && row) {
		key_set(t, row_key(t, row), open);
	}
	rows_shown(t);
}

static void expand_all(struct cp_top *t, int open)
{
	if (!open)
		t->nopen = 0;
	for (uint32_t i = 1; open && i < t->r.rows.n; i++)
		if (cp_top_has_children(t, i))
			key_set(t, row_key(t, i), 1);
	rows_shown(t);
}

void cp_top_act(struct cp_top *t, enum cp_top_action a, size_t page)
{
	page = page ? page : 1;
	switch (a) {
	case CP_TOP_UP:
		move_to(t, t->cursor ? t->cursor - 1 : 0);
		break;
	case CP_TOP_DOWN:
		move_to(t, t->cursor + 1);
		break;
	case CP_TOP_PAGE_UP:
		move_to(t, t->cursor > page ? t->cursor - page : 0);
		break;
	case CP_TOP_PAGE_DOWN:
		move_to(t, t->cursor + page);
		break;
	case CP_TOP_HOME:
		move_to(t, 0);
		break;
	case CP_TOP_END:
		move_to(t, t->nshown ? t->nshown - 1 : 0);
		break;
	case CP_TOP_EXPAND:
	case CP_TOP_COLLAPSE:
	case CP_TOP_TOGGLE:
		expand(t, a == CP_TOP_EXPAND ? 1 : a == CP_TOP_COLLAPSE ? 0 : -1);
		break;
	case CP_TOP_EXPAND_ALL:
	case CP_TOP_COLLAPSE_ALL:
		expand_all(t, a == CP_TOP_EXPAND_ALL);
		break;
	case CP_TOP_NEXT_VIEW:
		t->ro.view = (t->ro.view + 1) % 3;
		t->opened = 0;
		t->cursor = 0;
		cp_top_rebuild(t);
		break;
	case CP_TOP_NEXT_METRIC:
		t->metric =
		    t->p ? (t->metric + 1) % (t->p->sum.nmetrics ? t->p->sum.nmetrics : 1) : 0;
		cp_top_rebuild(t);
		break;
	case CP_TOP_NEXT_SORT:
		t->ro.sort = (t->ro.sort + 1) % 3;
		cp_top_rebuild(t);
		break;
	case CP_TOP_NEXT_THREAD:
		t->thread = t->thread + 1 < (int)t->nthreads ? t->thread + 1 : -1;
		cp_top_reload(t);
		break;
	}
}
