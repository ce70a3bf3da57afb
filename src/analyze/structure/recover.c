/* Scope-tree assembly: procedure > inlined frames > loops > statements, per procedure. */
#include "analyze/structure/recover.h"

#include "analyze/structure/recover-internal.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/xalloc.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#define RC_MAX_CHAIN 256

struct scope_key {
	uint64_t k1, k2;
	uint32_t parent, kind, id;
};

struct assembler {
	struct cp_structure_builder *b;
	struct rc_proc *rp;
	struct rc_loops *loops; /* NULL: no loop analysis for this procedure */
	struct scope_key *keys; /* this procedure's child scopes, by key (map) */
	size_t nkeys, akeys;
	struct cp_hashtab map;
	uint32_t proc_scope;
	uint32_t *loop_scope;
	int32_t *loop_home;
	size_t loop_alloc, nloops;
	const char *last_file; /* one-entry cache of file string ids */
	uint32_t last_file_id;
};

static uint64_t key_hash(uint32_t parent, uint32_t kind, uint64_t k1, uint64_t k2)
{
	uint64_t h = parent * 0x9e3779b97f4a7c15ull ^ kind;
	h = (h ^ k1) * 0xff51afd7ed558ccdull;
	h = (h ^ k2) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

static void map_reset(struct assembler *as)
{
	cp_hashtab_clear(&as->map);
	as->nkeys = 0;
}

static int key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct scope_key *e = &((const struct assembler *)ctx)->keys[idx], *k = key;
	return e->parent == k->parent && e->kind == k->kind && e->k1 == k->k1 && e->k2 == k->k2;
}

/* Finds or creates the child of parent identified by (kind, k1, k2). */
static uint32_t child_scope(struct assembler *as, uint32_t parent, const struct cp_st_scope *tmpl,
			    uint64_t k1, uint64_t k2)
{
	struct scope_key k = {k1, k2, parent, tmpl->kind, 0};
	uint64_t h = key_hash(parent, tmpl->kind, k1, k2);
	uint32_t found = cp_hashtab_find(&as->map, h, key_eq, as, &k);
	if (found != CP_HASH_NONE)
		return as->keys[found].id;
	k.id = cp_structure_builder_scope(as->b, tmpl);
	XGROW(as->keys, as->nkeys + 1, as->akeys);
	as->keys[as->nkeys] = k;
	cp_hashtab_insert(&as->map, h, (uint32_t)as->nkeys++);
	return k.id;
}

static uint32_t file_id(struct assembler *as, const char *file)
{
	if (!file)
		return 0;
	if (file != as->last_file) {
		as->last_file = file;
		as->last_file_id = cp_structure_builder_string(as->b, file);
	}
	return as->last_file_id;
}

/* Inline nodes from the outermost down to node; returns the count. */
static int inline_chain(const struct rc_proc *rp, int32_t node, int32_t *chain)
{
	int n = 0;
	for (int32_t k = node; k >= 0 && n < RC_MAX_CHAIN; k = rp->inl[k].parent)
		n++;
	int i = n;
	for (int32_t k = node; k >= 0 && i > 0; k = rp->inl[k].parent)
		chain[--i] = k;
	return n;
}

static uint32_t inline_scope(struct assembler *as, uint32_t parent, int32_t node)
{
	const struct rc_inline *in = &as->rp->inl[node];
	struct cp_st_scope s = {.parent = parent, .kind = CP_ST_INLINE};
	s.name = cp_structure_builder_string(as->b, in->name);
	s.file = file_id(as, in->decl_file);
	s.line = (uint32_t)in->decl_line;
	s.aux = file_id(as, in->call_file);
	s.aux_line = (uint32_t)in->call_line;
	s.addr = in->low;
	return child_scope(as, parent, &s, in->die, 0);
}

/* Below base (whose code is inside inline node base_home), the frames of node's chain
 * that base_home's chain does not already have. */
static uint32_t attach(struct assembler *as, uint32_t base, int32_t base_home, int32_t node)
{
	int32_t a[RC_MAX_CHAIN], h[RC_MAX_CHAIN];
	int na = inline_chain(as->rp, node, a), nh = inline_chain(as->rp, base_home, h), c = 0;
	while (c < na && c < nh && a[c] == h[c])
		c++;
	for (int k = c; k < na; k++)
		base = inline_scope(as, base, a[k]);
	return base;
}

static void extend(struct cp_structure_builder *b, uint32_t scope, uint32_t file, int line)
{
	struct cp_st_scope *s = &b->scopes[scope];
	if (line <= 0 || !file)
		return;
	if (!s->file)
		s->file = file;
	if (s->file != file)
		return;
	if (!s->line_lo || (uint32_t)line < s->line_lo)
		s->line_lo = (uint32_t)line;
	if ((uint32_t)line > s->line_hi)
		s->line_hi = (uint32_t)line;
}

/* A loop's range starts at its own line: its code on earlier lines (code moved into the
 * loop, such as a parameter's copy on the function's first line) only counts for a loop
 * named at its bottom (do ... while). While its procedure is assembled, a loop scope's
 * aux_line (unused by loops) holds the lowest such line; finish_loop_ranges settles it. */
static void extend_loop(struct assembler *as, uint32_t scope, uint32_t file, int line)
{
	struct cp_st_scope *s = &as->b->scopes[scope];
	if (!s->line || s->file != file || line <= 0 || (uint32_t)line >= s->line) {
		extend(as->b, scope, file, line);
		return;
	}
	if (!s->aux_line || (uint32_t)line < s->aux_line)
		s->aux_line = (uint32_t)line;
}

static void finish_loop_ranges(struct assembler *as)
{
	for (size_t i = 0; i < as->nloops; i++) {
		struct cp_st_scope *s = &as->b->scopes[as->loop_scope[i]];
		if (s->aux_line && s->line_hi == s->line)
			s->line_lo = s->aux_line;
		s->aux_line = 0;
	}
}

/* Line extents: each scope on the path sees the address at its own level (the call site
 * of the inlined frame below it, or the address's own line). */
static void extend_path(struct assembler *as, uint32_t scope, uint32_t file, int line)
{
	for (uint32_t s = scope; s != CP_ST_NONE; s = as->b->scopes[s].parent) {
		const struct cp_st_scope *sc = &as->b->scopes[s];
		if (sc->kind == CP_ST_LOOP)
			extend_loop(as, s, file, line);
		else
			extend(as->b, s, file, line);
		if (sc->kind == CP_ST_INLINE) {
			file = sc->aux;
			line = (int)sc->aux_line;
		}
	}
}

static void add_loop_points(struct assembler *as, const struct cp_loop *lp, uint32_t scope)
{
	const struct cp_cfg *cfg = &as->loops->cfg;
	const struct cp_loop_nest *nest = &as->loops->nest;
	static const uint32_t kinds[3] = {CP_ST_EDGE_ENTRY, CP_ST_EDGE_EXIT, CP_ST_EDGE_BACK};
	const uint32_t first[3] = {lp->first_entry, lp->first_exit, lp->first_back};
	const uint32_t count[3] = {lp->nentries, lp->nexits, lp->nbacks};
	for (int k = 0; k < 3; k++)
		for (uint32_t i = 0; i < count[k]; i++) {
			const struct cp_cfg_edge *e = &cfg->edges[nest->edges[first[k] + i]];
			struct cp_st_edge se = {cfg->blocks[e->src].last,
						e->dst != CP_CFG_NONE ? cfg->blocks[e->dst].lo
								      : e->target,
						scope, kinds[k]};
			cp_structure_builder_edge(as->b, &se);
		}
	if (lp->entered_at_start) {
		struct cp_st_edge se = {0, lp->header, scope, CP_ST_EDGE_ENTRY};
		cp_structure_builder_edge(as->b, &se);
	}
}

static int32_t inline_lca(const struct rc_proc *rp, int32_t a, int32_t b)
{
	while (a != b) {
		if (a < 0 || b < 0)
			return -1;
		if (rp->inl[a].depth >= rp->inl[b].depth)
			a = rp->inl[a].parent;
		else
			b = rp->inl[b].parent;
	}
	return a;
}

/* The inlined frame a loop lives in: the deepest frame that holds all of its code (for a
 * loop wholly inside an inlined call, the frame of its header). A loop whose code mixes
 * an inlined callee with its caller goes to the caller, so that no address is ever shown
 * inside a frame it is not in. */
static int32_t loop_home(const struct rc_proc *rp, const struct cp_loop_nest *nest,
			 const struct cp_loop *lp)
{
	int32_t home = rc_seg_find(rp->inl_segs, rp->ninl_segs, lp->header);
	for (uint32_t i = 0; i < lp->nranges && home >= 0; i++) {
		const struct cp_loop_range *r = &nest->ranges[lp->first_range + i];
		uint64_t at = r->lo;
		while (at < r->hi && home >= 0) {
			size_t lo = 0, hi = rp->ninl_segs; /* first segment ending after at */
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (rp->inl_segs[mid].hi <= at)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo == rp->ninl_segs || rp->inl_segs[lo].lo > at)
				return -1; /* code of the procedure itself */
			home = inline_lca(rp, home, rp->inl_segs[lo].v);
			at = rp->inl_segs[lo].hi;
		}
	}
	return home;
}

/* The source location of a line piece as seen from inlined frame home (-1: the
 * procedure): its own line when its code is directly in home, else the call site of the
 * frame just below home on its chain. 0 when unknown. */
static int level_location(const struct rc_proc *rp, int32_t home, const struct rc_line *ln,
			  const char **file, int *line)
{
	int32_t node = rc_seg_find(rp->inl_segs, rp->ninl_segs, ln->lo), below = -1;
	for (int32_t k = node; k != home && k >= 0; k = rp->inl[k].parent)
		below = k;
	if (node == home || below < 0 || rp->inl[below].parent != home) {
		*file = ln->file;
		*line = ln->line;
	} else {
		*file = rp->inl[below].call_file;
		*line = rp->inl[below].call_line;
	}
	return *line > 0 && *file;
}

static void make_loops(struct assembler *as)
{
	const struct cp_loop_nest *nest = &as->loops->nest;
	struct rc_proc *rp = as->rp;
	XGROW(as->loop_scope, nest->nloops, as->loop_alloc);
	as->loop_home = xrealloc(as->loop_home, as->loop_alloc * sizeof(*as->loop_home));
	for (size_t i = 0; i < nest->nloops; i++) {
		const struct cp_loop *lp = &nest->loops[i];
		int32_t home = loop_home(rp, nest, lp);
		uint32_t base = lp->parent >= 0 ? as->loop_scope[lp->parent] : as->proc_scope;
		int32_t base_home = lp->parent >= 0 ? as->loop_home[lp->parent] : -1;
		uint32_t parent = attach(as, base, base_home, home);
		const struct rc_line *ln = rc_loop_line(rp, as->loops, lp, home);
		struct cp_st_scope s = {.parent = parent, .kind = CP_ST_LOOP, .addr = lp->header};
		const char *file;
		int line;
		if (ln && level_location(rp, home, ln, &file, &line)) {
			s.file = file_id(as, file);
			s.line = s.line_lo = s.line_hi = (uint32_t)line;
		}
		if (lp->flags & CP_LOOP_IRREDUCIBLE) {
			s.flags |= CP_ST_F_IRREDUCIBLE;
			as->b->scopes[as->proc_scope].flags |= CP_ST_F_IRREDUCIBLE;
			struct cp_st_note note = {lp->header, as->proc_scope,
						  CP_ST_NOTE_IRREDUCIBLE};
			cp_structure_builder_note(as->b, &note);
		}
		as->loop_scope[i] = cp_structure_builder_scope(as->b, &s);
		as->loop_home[i] = home;
		as->nloops = i + 1;
		add_loop_points(as, lp, as->loop_scope[i]);
	}
	for (size_t i = 0; i < as->loops->cfg.nunresolved; i++) {
		struct cp_st_note note = {as->loops->cfg.unresolved[i], as->proc_scope,
					  CP_ST_NOTE_UNRESOLVED_JUMP};
		cp_structure_builder_note(as->b, &note);
	}
}

/* The scope of [lo, hi): statement under (loop >) inlined frames, and its range. */
static void place_interval(struct assembler *as, uint64_t lo, uint64_t hi)
{
	struct rc_proc *rp = as->rp;
	int32_t node = rc_seg_find(rp->inl_segs, rp->ninl_segs, lo);
	int32_t loop = as->loops ? rc_seg_find(rp->loop_segs, rp->nloop_segs, lo) : -1;
	uint32_t base = loop >= 0 ? as->loop_scope[loop] : as->proc_scope;
	uint32_t scope = attach(as, base, loop >= 0 ? as->loop_home[loop] : -1, node);
	const struct rc_line *ln = rc_line_find(rp->lines, rp->nlines, lo);
	if (ln && ln->line > 0) {
		uint32_t file = file_id(as, ln->file);
		extend_path(as, scope, file, ln->line);
		struct cp_st_scope s = {.parent = scope, .kind = CP_ST_STMT, .file = file};
		s.line = s.line_lo = s.line_hi = (uint32_t)ln->line;
		s.addr = lo;
		scope = child_scope(as, scope, &s, file, (uint64_t)ln->line);
	}
	cp_structure_builder_range(as->b, lo, hi, scope);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void place_code(struct assembler *as)
{
	struct rc_proc *rp = as->rp;
	size_t n = 2 * (rp->nparts + rp->nlines + rp->ninl_segs + rp->nloop_segs), k = 0;
	uint64_t *pts = xmalloc((n ? n : 1) * sizeof(*pts));
	for (size_t i = 0; i < rp->nparts; i++)
		pts[k++] = rp->parts[i].lo, pts[k++] = rp->parts[i].hi;
	for (size_t i = 0; i < rp->nlines; i++)
		pts[k++] = rp->lines[i].lo, pts[k++] = rp->lines[i].hi;
	for (size_t i = 0; i < rp->ninl_segs; i++)
		pts[k++] = rp->inl_segs[i].lo, pts[k++] = rp->inl_segs[i].hi;
	for (size_t i = 0; i < rp->nloop_segs; i++)
		pts[k++] = rp->loop_segs[i].lo, pts[k++] = rp->loop_segs[i].hi;
	if (k)
		qsort(pts, k, sizeof(*pts), u64_cmp);
	for (size_t i = 0; i + 1 < k; i++) {
		uint64_t lo = pts[i], hi = pts[i + 1];
		if (lo == hi)
			continue;
		for (size_t p = 0; p < rp->nparts; p++)
			if (lo >= rp->parts[p].lo && lo < rp->parts[p].hi) {
				place_interval(as, lo, hi);
				break;
			}
	}
	free(pts);
}

static uint32_t make_proc_scope(struct assembler *as)
{
	struct rc_proc *rp = as->rp;
	const struct cp_proc *p = rp->p;
	struct cp_st_scope s = {.parent = CP_ST_NONE, .kind = CP_ST_PROC, .addr = p->lo};
	s.name = cp_structure_builder_string(as->b, p->name);
	s.aux = cp_structure_builder_string(as->b, p->linkage);
	if (p->flags & CP_PROC_PLT)
		s.flags |= CP_ST_F_PLT;
	if (p->flags & CP_PROC_DWARF)
		s.flags |= CP_ST_F_FROM_DWARF;
	if (p->flags & CP_PROC_FDE)
		s.flags |= CP_ST_F_FROM_FDE;
	if (!rp->has_dwarf)
		s.flags |= CP_ST_F_NO_DWARF;
	if (rp->nparts > 1)
		s.flags |= CP_ST_F_SPLIT;
	if (rp->has_dwarf) {
		const char *file;
		int line;
		cp_dwarf_decl(&rp->cu, &rp->sub, &file, &line);
		s.file = file_id(as, file);
		s.line = (uint32_t)(line > 0 ? line : 0);
	}
	return cp_structure_builder_scope(as->b, &s);
}

/* Scopes of procedure as->rp; loops: its CFG and loop nest, or NULL. */
static void recover_proc(struct assembler *as, struct rc_loops *loops)
{
	map_reset(as);
	as->last_file = NULL;
	as->proc_scope = make_proc_scope(as);
	as->loops = loops;
	as->nloops = 0;
	if (loops)
		make_loops(as);
	place_code(as);
	finish_loop_ranges(as);
}

/* Units whose line tables libdw holds since the handle was last (re)opened. */
struct dwarf_budget {
	Dwarf_Off *units;
	size_t n, alloc, rows, limit, reopens;
};

/* Notes the unit of rp; true when the units noted hold `limit` line rows. */
static bool budget_account(struct dwarf_budget *bu, struct rc_proc *rp)
{
	if (!rp->has_cu)
		return bu->rows >= bu->limit;
	Dwarf_Off off = dwarf_dieoffset(&rp->cu);
	for (size_t i = bu->n; i-- > 0;) /* most often the unit of the previous procedure */
		if (bu->units[i] == off)
			return bu->rows >= bu->limit;
	XGROW(bu->units, bu->n + 1, bu->alloc);
	bu->units[bu->n++] = off;
	bu->rows += rp->cu_rows;
	return bu->rows >= bu->limit;
}

static int budget_reopen(struct dwarf_budget *bu, struct cp_module *m)
{
	bu->n = bu->rows = 0;
	bu->reopens++;
	int rc = cp_dwarf_reopen(&m->dwarf, &m->image);
	malloc_trim(0); /* hand the freed tables back to the system, not just to malloc */
	return rc;
}

/* A batch of procedures: their DWARF inputs are collected in order (libdw on one
 * thread), their CFGs and loop nests found in parallel, then their scopes assembled in
 * order, so the output does not depend on the number of threads. */
#define RC_BATCH 16

struct rc_slot {
	struct rc_proc rp;
	struct rc_loops loops;
	int loops_rc; /* 0: loops found */
};

static void slot_loops(void *ctx, size_t k)
{
	struct rc_slot *sl = &((struct rc_slot *)ctx)[k];
	if ((sl->rp.p->flags & CP_PROC_PLT) || !sl->rp.nparts)
		sl->loops_rc = -1;
	else
		sl->loops_rc = rc_loops_find(&sl->loops, &sl->rp);
}

struct recovery {
	struct cp_module *m;
	struct assembler as;
	struct rc_slot slots[RC_BATCH];
	struct dwarf_budget bu;
	int no_loops;
	unsigned jobs;
};

static int recover_batch(struct recovery *r, size_t first, size_t n,
			 const struct cp_struct_options *opt)
{
	bool reopen = false;
	for (size_t k = 0; k < n; k++) {
		int rc = rc_proc_collect(&r->slots[k].rp, r->m, (uint32_t)(first + k));
		if (rc)
			return rc;
		reopen |= budget_account(&r->bu, &r->slots[k].rp);
	}
	if (!r->no_loops)
		rc_parallel_for(n, r->jobs, slot_loops, r->slots);
	size_t total = r->m->procs.nprocs;
	for (size_t k = 0; k < n; k++) {
		struct rc_slot *sl = &r->slots[k];
		r->as.rp = &sl->rp;
		recover_proc(&r->as, !r->no_loops && !sl->loops_rc ? &sl->loops : NULL);
		size_t done = first + k + 1;
		if (opt && opt->progress && (done % 256 == 0 || done == total))
			opt->progress(opt->progress_ctx, done, total);
		/* each slot's arrays fit the largest procedure it has seen: do not keep them
		 * (keeping those of procedures up to 2048 instructions cost libc 2 MB of RSS
		 * and saved no measurable time) */
		const struct cp_cfg_oracle *o = sl->loops.oracle;
		rc_loops_release(&sl->loops);
		rc_loops_init(&sl->loops, o);
	}
	/* only now: the batch's Dwarf_Die values die with the handle */
	return reopen ? budget_reopen(&r->bu, r->m) : 0;
}

static void fill_header(struct cp_structure_builder *b, const struct cp_module *m)
{
	const struct cp_elf_image *im = &m->image;
	b->hdr.module_path = cp_structure_builder_string(b, im->path);
	b->hdr.module_size = im->file_size;
	size_t n =
	    im->build_id_len < sizeof(b->hdr.build_id) ? im->build_id_len : sizeof(b->hdr.build_id);
	memcpy(b->hdr.build_id, im->build_id, n);
	b->hdr.build_id_len = (uint8_t)n;
}

int cp_struct_recover(struct cp_module *m, struct cp_structure_builder *b,
		      struct cp_struct_options *opt)
{
	struct recovery *r = xcalloc(1, sizeof(*r));
	struct cp_cfg_module cm;
	r->m = m;
	r->as.b = b;
	r->bu.limit = opt && opt->dwarf_rows_budget ? opt->dwarf_rows_budget : CP_STRUCT_DWARF_ROWS;
	r->no_loops = opt && opt->no_loops;
	r->jobs = opt && opt->jobs ? opt->jobs : 1;
	cp_cfg_module_init(&cm, m);
	struct cp_cfg_oracle oracle = cp_cfg_module_oracle(&cm);
	for (size_t k = 0; k < RC_BATCH; k++) {
		rc_proc_init(&r->slots[k].rp);
		rc_loops_init(&r->slots[k].loops, &oracle);
	}
	/* calls to procedures that cannot return end their block (no invented edges) */
	if (!r->no_loops)
		cp_cfg_module_infer_noreturn(&cm, &r->slots[0].loops.cfg);
	fill_header(b, m);
	int rc = 0;
	size_t total = m->procs.nprocs;
	for (size_t first = 0; first < total && !rc; first += RC_BATCH)
		rc = recover_batch(r, first, total - first < RC_BATCH ? total - first : RC_BATCH,
				   opt);
	if (opt)
		opt->dwarf_reopens = r->bu.reopens;
	for (size_t k = 0; k < RC_BATCH; k++) {
		rc_loops_release(&r->slots[k].loops);
		rc_proc_release(&r->slots[k].rp);
	}
	cp_cfg_module_release(&cm);
	free(r->bu.units);
	free(r->as.keys);
	cp_hashtab_release(&r->as.map);
	free(r->as.loop_scope);
	free(r->as.loop_home);
	free(r);
	return rc;
}

int cp_struct_recover_memory(const void *buf, size_t len, struct cp_structure *out)
{
	struct cp_module m;
	int rc = cp_module_open_memory(&m, buf, len, "<memory>", CP_MODULE_STRICT_DWARF);
	if (rc)
		return rc;
	struct cp_structure_builder b;
	cp_structure_builder_init(&b);
	rc = cp_struct_recover(&m, &b, NULL);
	void *file = NULL;
	size_t flen = 0;
	if (!rc)
		rc = cp_structure_builder_finish(&b, &file, &flen);
	if (!rc)
		rc = cp_structure_adopt(out, file, flen, "<memory>");
	cp_structure_builder_release(&b);
	cp_module_release(&m);
	return rc;
}
