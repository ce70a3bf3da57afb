/* Measurement directory -> merged top-down calling context tree. Each distinct frame
 * (module file, offset, return address or not) is symbolized once. */
#include "report/profile.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct modfile {
	const char *path, *shortname; /* pooled */
	uint8_t build_id[32];
	uint32_t build_id_len;
	int failed;  /* the symbolizer could not read it (reported once) */
	int runtime; /* callpath's own runtime: its interposed wrappers are not the program's */
};

struct inl {
	const char *name, *file;
	int line;
};

struct frame {
	const struct modfile *mf;
	uint64_t offset;
	int is_return;
	const char *proc, *file;
	int line;
	uint32_t ninline, inl_first;
};

struct builder {
	struct cp_profile *p;
	const struct cp_symops *ops;
	struct modfile **mods;
	size_t nmods, mods_alloc;
	struct frame *frames;
	size_t nframes, frames_alloc;
	struct inl *inls;
	size_t ninls, inls_alloc;
	struct cp_itab frame_tab;
	size_t warn_alloc;
};

static void summary_warn(struct builder *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void summary_warn(struct builder *b, const char *fmt, ...)
{
	struct cp_summary *s = &b->p->sum;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	XGROW(s->warnings, s->nwarnings + 1, b->warn_alloc);
	s->warnings[s->nwarnings++] = xstrdup(buf);
}

static struct modfile *modfile_get(struct builder *b, const struct cp_mf_module_info *m)
{
	const char *path = cp_strpool_get(&b->p->pool, m->path);
	for (size_t i = 0; i < b->nmods; i++) {
		struct modfile *f = b->mods[i];
		if (f->path == path && f->build_id_len == m->build_id_len &&
		    !memcmp(f->build_id, m->build_id, m->build_id_len))
			return f;
	}
	struct modfile *f = xcalloc(1, sizeof(*f));
	f->path = path;
	const char *slash = strrchr(m->path, '/');
	f->shortname = cp_strpool_get(&b->p->pool, slash ? slash + 1 : m->path);
	f->runtime = !strcmp(f->shortname, "libcallpath-rt.so");
	f->build_id_len = m->build_id_len;
	memcpy(f->build_id, m->build_id, sizeof f->build_id);
	XGROW(b->mods, b->nmods + 1, b->mods_alloc);
	b->mods[b->nmods++] = f;
	return f;
}

struct frame_key {
	const struct modfile *mf;
	uint64_t offset;
	int is_return;
};

static int frame_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct frame *f = &((const struct builder *)ctx)->frames[idx];
	const struct frame_key *k = key;
	return f->mf == k->mf && f->offset == k->offset && f->is_return == k->is_return;
}

static void frame_unknown(struct builder *b, struct frame *f)
{
	char buf[600];
	if (f->mf)
		snprintf(buf, sizeof buf, "[%s+0x%" PRIx64 "]", f->mf->shortname, f->offset);
	else
		snprintf(buf, sizeof buf, "[0x%" PRIx64 "]", f->offset);
	f->proc = cp_strpool_get(&b->p->pool, buf);
}

static void frame_symbolize(struct builder *b, struct frame *f, struct modfile *mf)
{
	struct cp_sym_info info;
	memset(&info, 0, sizeof info);
	if (!mf || mf->failed) {
		frame_unknown(b, f);
		return;
	}
	int rc = b->ops->lookup(b->ops->ctx, mf->path, mf->build_id, mf->build_id_len, f->offset,
				f->is_return, &info);
	if (rc < 0) {
		mf->failed = 1;
		summary_warn(b, "cannot symbolize %s (%s); its frames show as module+offset",
			     mf->path, cp_error_message());
	}
	if (rc < 0 || !info.found) {
		frame_unknown(b, f);
		return;
	}
	struct cp_strpool *pool = &b->p->pool;
	f->proc = cp_strpool_get(pool, info.procedure);
	f->file = cp_strpool_get(pool, info.file);
	f->line = info.line;
	int ni = info.ninline < 0 ? 0 : info.ninline > CP_SYM_MAX_INLINE ? CP_SYM_MAX_INLINE
									  : info.ninline;
	f->inl_first = (uint32_t)b->ninls;
	f->ninline = (uint32_t)ni;
	XGROW(b->inls, b->ninls + ni, b->inls_alloc);
	for (int j = 0; j < ni; j++) {
		struct inl *x = &b->inls[b->ninls++];
		x->name = cp_strpool_get(pool, info.inline_frames[j].name);
		x->file = cp_strpool_get(pool, info.inline_frames[j].file);
		x->line = info.inline_frames[j].line;
	}
}

static uint32_t frame_get(struct builder *b, struct modfile *mf, uint64_t offset, int is_return)
{
	struct frame_key k = {mf, offset, is_return};
	uint64_t h = cp_hash_mix(cp_hash_mix((uintptr_t)mf, offset), (uint64_t)is_return);
	uint32_t i = cp_itab_find(&b->frame_tab, h, frame_eq, b, &k);
	if (i != UINT32_MAX)
		return i;
	XGROW(b->frames, b->nframes + 1, b->frames_alloc);
	i = (uint32_t)b->nframes++;
	struct frame *f = &b->frames[i];
	memset(f, 0, sizeof *f);
	f->mf = mf;
	f->offset = offset;
	f->is_return = is_return;
	frame_symbolize(b, f, mf);
	cp_itab_insert(&b->frame_tab, h, i);
	return i;
}

/* Where a thread node sits in the view, and the location inside its frame (the call site
 * of its children). */
struct node_state {
	uint32_t vnode;
	const char *file;
	int line;
};

static int values_nonzero(const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i])
			return 1;
	return 0;
}

static void thread_node(struct builder *b, struct modfile **modmap, const struct cp_mf_proc *proc,
			const struct cp_mf_rnode *n, struct node_state *st, const struct node_state *ps)
{
	struct cp_view *v = &b->p->td;
	struct cp_strpool *pool = &b->p->pool;
	if (n->kind == CP_MF_NODE_PARTIAL) {
		st->vnode = cp_view_child(v, ps->vnode, CP_VK_PARTIAL,
					  cp_strpool_get(pool, "<partial call paths>"), NULL, NULL, 0);
		st->file = NULL;
		st->line = 0;
		return;
	}
	long mi = n->module == CP_MF_MODULE_NONE ? -1 : cp_mf_proc_module(proc, n->module);
	struct modfile *mf = mi < 0 ? NULL : modmap[mi];
	if (mf && mf->runtime && n->kind == CP_MF_NODE_CALL) {
		*st = *ps; /* an interposed wrapper (nanosleep, pthread_create...): skip its frame */
		return;
	}
	uint32_t fi = frame_get(b, mf, n->offset, n->kind == CP_MF_NODE_CALL); /* may move frames */
	const struct frame *f = &b->frames[fi];
	const char *module = mf ? mf->path : NULL;
	uint32_t at = cp_view_child(v, ps->vnode, CP_VK_PROCEDURE, f->proc, module, ps->file,
				    ps->line);
	for (uint32_t j = 0; j < f->ninline; j++) {
		const struct inl *x = &b->inls[f->inl_first + j];
		at = cp_view_child(v, at, CP_VK_INLINED, x->name, module, x->file, x->line);
	}
	st->vnode = at;
	st->file = f->file;
	st->line = f->line;
}

static void thread_add(struct builder *b, const struct cp_mf_image *im, struct modfile **modmap,
		       const struct cp_mf_thr *t, const int *metric_map)
{
	struct cp_view *v = &b->p->td;
	size_t nm = t->hdr.nmetrics;
	struct node_state *st = xcalloc(t->nnodes + 1, sizeof(*st));
	uint64_t vals[CP_MF_MAX_METRICS];
	for (size_t i = 1; i < t->nnodes; i++) {
		const struct cp_mf_rnode *n = &t->nodes[i];
		thread_node(b, modmap, &im->proc, n, &st[i], &st[n->parent]);
		const uint64_t *raw = t->values + i * nm;
		if (!values_nonzero(raw, nm))
			continue;
		memset(vals, 0, sizeof vals);
		for (size_t m = 0; m < nm; m++)
			vals[metric_map[m]] += raw[m];
		uint32_t at = st[i].vnode;
		if (n->kind != CP_MF_NODE_PARTIAL) {
			at = cp_view_child(v, at, CP_VK_LINE, NULL, v->nodes[at].module, st[i].file,
					   st[i].line);
			if (!v->nodes[at].name)
				v->nodes[at].name = cp_view_line_name(&b->p->pool, st[i].file,
								      st[i].line);
		}
		cp_view_add_excl(v, at, vals);
	}
	free(st);
}

static int summary_metrics(struct cp_profile *p, const struct cp_mf_dir *d)
{
	struct cp_summary *s = &p->sum;
	s->dir = xstrdup(d->path);
	for (size_t i = 0; i < d->nimages; i++) {
		const struct cp_mf_process *h = &d->images[i].proc.hdr;
		for (uint32_t m = 0; m < h->nmetrics; m++) {
			size_t g = 0;
			while (g < s->nmetrics && strcmp(s->metrics[g].name, h->metrics[m].name))
				g++;
			if (g < s->nmetrics)
				continue;
			if (g == CP_MF_MAX_METRICS)
				return cp_error(CP_EFORMAT, "%s: more than %d distinct metrics over its processes",
						d->path, CP_MF_MAX_METRICS);
			struct cp_metric_desc *md = &s->metrics[s->nmetrics++];
			memcpy(md->name, h->metrics[m].name, sizeof md->name);
			memcpy(md->unit, h->metrics[m].unit, sizeof md->unit);
			md->source = h->metrics[m].source;
			md->mechanism = h->metrics[m].mechanism;
			md->period = h->metrics[m].period;
		}
	}
	if (!s->nmetrics)
		return cp_error(CP_EFORMAT, "%s: the process files declare no metric", d->path);
	return 0;
}

static void summary_notes(struct builder *b, const struct cp_mf_image *im, int many)
{
	struct cp_summary *s = &b->p->sum;
	const struct cp_mf_proc *pr = &im->proc;
	s->notes = xrealloc(s->notes, (s->nnotes + pr->nnotes + 1) * sizeof(*s->notes));
	for (size_t i = 0; i < pr->nnotes; i++) {
		struct strbuf sb;
		strbuf_init(&sb);
		if (many)
			strbuf_addf(&sb, "process %d: ", pr->hdr.pid);
		strbuf_addstr(&sb, pr->notes[i]);
		s->notes[s->nnotes++] = strbuf_detach(&sb);
	}
	uint32_t fl = pr->hdr.h.flags;
	if (fl & CP_MF_CRASHED)
		summary_warn(b, "process %d died from signal %d; its samples up to then are shown",
			     pr->hdr.pid, pr->hdr.exit_status > 128 ? pr->hdr.exit_status - 128 : 0);
	else if (!(fl & CP_MF_FINISHED))
		summary_warn(b, "process %d did not finish normally (killed, or still running); its samples up to then are shown",
			     pr->hdr.pid);
	if (fl & CP_MF_DISABLED)
		summary_warn(b, "the runtime disabled itself in process %d; see the notes", pr->hdr.pid);
}

static void thread_count(struct cp_summary *s, const struct cp_mf_thr *t, const int *metric_map)
{
	const struct cp_mf_thread *h = &t->hdr;
	s->nthreads++;
	for (uint32_t m = 0; m < h->nmetrics; m++)
		s->metrics[metric_map[m]].samples += h->samples[m];
	if (h->cpu_ns)
		s->cpu_ns += h->cpu_ns;
	else
		s->threads_without_cpu++;
	s->unwind_complete += h->unwind_complete;
	s->unwind_partial += h->unwind_partial;
	s->unwind_failed += h->unwind_failed;
	s->dropped += h->dropped;
	s->frames += h->frames;
}

static void image_add(struct builder *b, const struct cp_mf_image *im, int thread, int pid,
		      int many)
{
	struct cp_summary *s = &b->p->sum;
	const struct cp_mf_proc *pr = &im->proc;
	int metric_map[CP_MF_MAX_METRICS];
	for (uint32_t m = 0; m < pr->hdr.nmetrics; m++) {
		size_t g = 0;
		while (g < s->nmetrics && strcmp(s->metrics[g].name, pr->hdr.metrics[m].name))
			g++;
		metric_map[m] = (int)g;
	}
	struct modfile **modmap = xcalloc(pr->nmodules + 1, sizeof(*modmap));
	for (size_t i = 0; i < pr->nmodules; i++)
		modmap[i] = modfile_get(b, &pr->modules[i]);
	s->nprocs++;
	if (pr->hdr.h.flags & CP_MF_FORK_CHILD)
		s->nforked++;
	if (pr->hdr.gen > 0)
		s->nexeced++;
	s->nthreads_total += im->nthreads;
	summary_notes(b, im, many);
	for (size_t i = 0; i < im->nthreads; i++) {
		const struct cp_mf_thr *t = &im->threads[i];
		if (thread != CP_PROFILE_ALL_THREADS &&
		    ((int)t->hdr.tidx != thread || (pid && pr->hdr.pid != pid)))
			continue;
		thread_count(s, t, metric_map);
		thread_add(b, im, modmap, t, metric_map);
	}
	free(modmap);
}

/* Appends arg as a shell would need it typed, on one line. */
static void shell_quote(struct strbuf *sb, const char *arg)
{
	int plain = *arg != 0, ctrl = 0;
	for (const char *c = arg; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			ctrl = 1;
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%",
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

static void summary_finish(struct builder *b, const struct cp_mf_dir *d)
{
	struct cp_summary *s = &b->p->sum;
	const struct cp_mf_proc *first = &d->images[0].proc;
	struct strbuf sb;
	strbuf_init(&sb);
	for (size_t i = 0; i < first->argc; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		shell_quote(&sb, first->argv[i]);
	}
	if (!first->argc)
		strbuf_addstr(&sb, first->exe ? first->exe : "?");
	s->command = strbuf_detach(&sb);
	s->host = xstrdup(first->hdr.hostname);
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < d->nimages; i++) {
		const struct cp_mf_process *h = &d->images[i].proc.hdr;
		if (h->start_ns && h->start_ns < lo)
			lo = h->start_ns;
		if (h->end_ns > hi)
			hi = h->end_ns;
	}
	s->duration_s = hi > lo && lo != UINT64_MAX ? (double)(hi - lo) / 1e9 : 0;
	if (s->dropped)
		summary_warn(b, "%llu samples were dropped by the runtime",
			     (unsigned long long)s->dropped);
}

int cp_profile_build(struct cp_profile *p, const struct cp_mf_dir *d, const struct cp_symops *ops,
		     int thread, int pid)
{
	struct builder b;
	memset(&b, 0, sizeof b);
	memset(p, 0, sizeof *p);
	cp_strpool_init(&p->pool);
	b.p = p;
	b.ops = ops;
	cp_itab_init(&b.frame_tab);
	int rc = summary_metrics(p, d);
	if (rc)
		goto out;
	cp_view_init(&p->td, p->sum.nmetrics, &p->pool);
	for (size_t i = 0; i < d->nimages; i++)
		image_add(&b, &d->images[i], thread, pid, d->nimages > 1);
	summary_finish(&b, d);
	if (thread != CP_PROFILE_ALL_THREADS && !p->sum.nthreads)
		rc = cp_error(CP_ENOENT, "%s: no thread %d%s (the run has %zu threads; use --thread all)",
			      d->path, thread, pid ? " in that process" : "", p->sum.nthreads_total);
	cp_view_sum_inclusive(&p->td);
out:
	for (size_t i = 0; i < b.nmods; i++)
		free(b.mods[i]);
	free(b.mods);
	free(b.frames);
	free(b.inls);
	cp_itab_release(&b.frame_tab);
	if (rc)
		cp_profile_release(p);
	return rc;
}

static int default_lookup(void *ctx, const char *path, const uint8_t *build_id, size_t len,
			  uint64_t offset, int is_return, struct cp_sym_info *out)
{
	return cp_symbolizer_lookup(ctx, path, build_id, len, offset, is_return, out);
}

void cp_symops_default(struct cp_symops *ops, struct cp_symbolizer *s)
{
	ops->lookup = default_lookup;
	ops->ctx = s;
}

int cp_profile_load(struct cp_profile *p, const char *dir, int thread, int pid)
{
	struct cp_mf_dir d;
	int rc = cp_mf_dir_open(&d, dir);
	if (rc)
		return rc;
	struct cp_symbolizer *s = cp_symbolizer_new();
	struct cp_symops ops;
	cp_symops_default(&ops, s);
	rc = cp_profile_build(p, &d, &ops, thread, pid);
	cp_symbolizer_free(s);
	cp_mf_dir_release(&d);
	return rc;
}

void cp_profile_release(struct cp_profile *p)
{
	struct cp_summary *s = &p->sum;
	free(s->dir);
	free(s->command);
	free(s->host);
	for (size_t i = 0; i < s->nnotes; i++)
		free(s->notes[i]);
	free(s->notes);
	for (size_t i = 0; i < s->nwarnings; i++)
		free(s->warnings[i]);
	free(s->warnings);
	cp_view_release(&p->td);
	cp_strpool_release(&p->pool);
	memset(p, 0, sizeof *p);
}
