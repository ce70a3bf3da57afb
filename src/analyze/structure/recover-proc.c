/* Per-procedure inputs of structure recovery: code parts, the DWARF subprogram and its
 * nested inline tree, and the line-table pieces covering the procedure. */
#include "analyze/structure/recover-internal.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define RC_MAX_DIE_DEPTH 200

void rc_proc_init(struct rc_proc *rp)
{
	memset(rp, 0, sizeof(*rp));
}

static void rc_proc_clear(struct rc_proc *rp)
{
	for (size_t i = 0; i < rp->ninl; i++)
		free(rp->inl[i].name);
	rp->nparts = rp->ninl = rp->ninl_segs = rp->nlines = rp->nviews = rp->nloop_segs = 0;
	rp->has_dwarf = rp->has_cu = 0;
	rp->cu_rows = 0;
}

void rc_proc_release(struct rc_proc *rp)
{
	rc_proc_clear(rp);
	free(rp->parts);
	free(rp->inl);
	free(rp->inl_segs);
	free(rp->lines);
	free(rp->views);
	free(rp->loop_segs);
	rc_proc_init(rp);
}

int32_t rc_seg_find(const struct rc_seg *segs, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (addr < segs[mid].lo)
			hi = mid;
		else if (addr >= segs[mid].hi)
			lo = mid + 1;
		else
			return segs[mid].v;
	}
	return -1;
}

const struct rc_line *rc_line_find(const struct rc_line *lines, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (addr < lines[mid].lo)
			hi = mid;
		else if (addr >= lines[mid].hi)
			lo = mid + 1;
		else
			return &lines[mid];
	}
	return NULL;
}

static int nested_cmp(const void *a, const void *b)
{
	const struct rc_nested *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void seg_emit(struct rc_seg **out, size_t *nout, size_t *alloc, uint64_t lo, uint64_t hi,
		     int32_t v)
{
	if (*nout && (*out)[*nout - 1].hi == lo && (*out)[*nout - 1].v == v) {
		(*out)[*nout - 1].hi = hi;
		return;
	}
	XGROW(*out, *nout + 1, *alloc);
	(*out)[(*nout)++] = (struct rc_seg){lo, hi, v};
}

static int chain_active(const int32_t *parent, const uint32_t *count, int32_t v)
{
	if (!parent)
		return 1;
	for (int32_t p = parent[v]; p >= 0; p = parent[p])
		if (!count[p])
			return 0;
	return 1;
}

void rc_flatten(struct rc_nested *r, size_t n, const int32_t *parent, size_t nvalues,
		struct rc_seg **out, size_t *nout, size_t *alloc)
{
	*nout = 0;
	if (!n)
		return;
	if (n)
		qsort(r, n, sizeof(*r), nested_cmp);
	uint32_t *count = xcalloc(nvalues + 1, sizeof(*count));
	uint64_t *pts = xmalloc(2 * n * sizeof(*pts));
	size_t *active = xmalloc(n * sizeof(*active)), nactive = 0, npts = 0, next = 0;
	for (size_t i = 0; i < n; i++)
		pts[npts++] = r[i].lo, pts[npts++] = r[i].hi;
	if (npts)
		qsort(pts, npts, sizeof(*pts), u64_cmp);
	for (size_t k = 0; k + 1 < npts; k++) {
		uint64_t a = pts[k], b = pts[k + 1];
		if (a == b)
			continue;
		size_t keep = 0;
		for (size_t j = 0; j < nactive; j++) {
			if (r[active[j]].hi > a)
				active[keep++] = active[j];
			else
				count[r[active[j]].v]--;
		}
		nactive = keep;
		for (; next < n && r[next].lo <= a; next++)
			if (r[next].hi > a) {
				active[nactive++] = next;
				count[r[next].v]++;
			}
		size_t best = n;
		for (size_t j = 0; j < nactive; j++)
			if ((best == n || r[active[j]].depth >= r[best].depth) &&
			    chain_active(parent, count, r[active[j]].v))
				best = active[j];
		if (best < n)
			seg_emit(out, nout, alloc, a, b, r[best].v);
	}
	free(count);
	free(pts);
	free(active);
}

/* ---- parts ---- */

static void add_part(struct rc_proc *rp, uint64_t lo, uint64_t hi)
{
	const struct cp_elf_section *s = cp_elf_code_at(&rp->m->image, lo);
	if (!s || hi <= lo)
		return;
	if (hi > s->addr + s->size)
		hi = s->addr + s->size;
	for (size_t i = 0; i < rp->nparts; i++)
		if (lo < rp->parts[i].hi && rp->parts[i].lo < hi)
			return; /* overlaps a part we have */
	XGROW(rp->parts, rp->nparts + 1, rp->parts_alloc);
	rp->parts[rp->nparts++] = (struct cp_cfg_part){lo, hi, s->data + (lo - s->addr)};
}

/* DWARF ranges of the subprogram that no other procedure owns (split parts of stripped
 * modules, or clang's hot/cold splitting without symbols). */
static void add_dwarf_parts(struct rc_proc *rp)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(&rp->sub, off, &base, &start, &end)) > 0) {
		const struct cp_proc_range *r = cp_proc_table_find(&rp->m->procs, start);
		if (!r || r->proc == rp->proc_index)
			add_part(rp, start, end);
	}
}

/* ---- DWARF ---- */

static int die_error(struct rc_proc *rp, Dwarf_Die *die, const char *what)
{
	return cp_error(CP_EFORMAT,
			"%s: corrupt DWARF: %s of the DIE at .debug_info offset %llu "
			"(procedure %s): %s",
			rp->m->image.path, what, (unsigned long long)dwarf_dieoffset(die),
			rp->p->name, dwarf_errmsg(-1));
}

struct nested_vec {
	struct rc_nested *v;
	size_t n, alloc;
};

static int add_inline(struct rc_proc *rp, Dwarf_Die *die, int32_t parent, uint32_t depth,
		      struct nested_vec *nv)
{
	XGROW(rp->inl, rp->ninl + 1, rp->inl_alloc);
	int32_t idx = (int32_t)rp->ninl++;
	struct rc_inline *in = &rp->inl[idx];
	in->die = dwarf_dieoffset(die);
	in->parent = parent;
	in->depth = depth;
	in->name = cp_dwarf_die_name(die);
	cp_dwarf_call_site(&rp->cu, die, &in->call_file, &in->call_line);
	cp_dwarf_decl(&rp->cu, die, &in->decl_file, &in->decl_line);
	in->low = 0;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		if (!in->low || start < in->low)
			in->low = start;
		XGROW(nv->v, nv->n + 1, nv->alloc);
		nv->v[nv->n++] = (struct rc_nested){start, end, idx, depth};
	}
	if (off < 0)
		return die_error(rp, die, "address ranges");
	return idx;
}

static int walk_inlines(struct rc_proc *rp, Dwarf_Die *die, int32_t parent, uint32_t depth,
			struct nested_vec *nv)
{
	Dwarf_Die child;
	int r = dwarf_child(die, &child);
	if (r < 0)
		return die_error(rp, die, "children");
	if (r > 0 || depth > RC_MAX_DIE_DEPTH)
		return 0;
	do {
		int tag = dwarf_tag(&child), rc = 0;
		if (tag == DW_TAG_inlined_subroutine) {
			int idx = add_inline(rp, &child, parent, depth, nv);
			rc = idx < 0 ? idx : walk_inlines(rp, &child, idx, depth + 1, nv);
		} else if (tag == DW_TAG_lexical_block) {
			rc = walk_inlines(rp, &child, parent, depth, nv);
		}
		if (rc < 0)
			return rc;
	} while ((r = dwarf_siblingof(&child, &child)) == 0);
	return r < 0 ? die_error(rp, die, "siblings") : 0;
}

static void add_line(struct rc_proc *rp, uint64_t lo, uint64_t hi, const char *file, int line)
{
	if (hi <= lo)
		return;
	if (rp->nlines) {
		struct rc_line *last = &rp->lines[rp->nlines - 1];
		if (last->hi == lo && last->line == line && last->file == file) {
			last->hi = hi;
			return;
		}
	}
	XGROW(rp->lines, rp->nlines + 1, rp->lines_alloc);
	rp->lines[rp->nlines++] = (struct rc_line){lo, hi, file, line};
}

/* A statement row without code of its own (another row follows at its address): gcc
 * puts the line of a loop statement without a condition there (docs/cmd-struct.md). */
static void add_view(struct rc_proc *rp, uint64_t at, const char *file, int line)
{
	if (line <= 0)
		return;
	XGROW(rp->views, rp->nviews + 1, rp->views_alloc);
	rp->views[rp->nviews++] = (struct rc_line){at, at, file, line};
}

static int line_cmp(const void *a, const void *b)
{
	const struct rc_line *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Line pieces [row, next row) inside [lo, hi); of several rows at one address the last
 * one wins (as libdw's dwarf_getsrc_die answers). */
static void lines_for_part(struct rc_proc *rp, Dwarf_Lines *lines, size_t n, uint64_t lo,
			   uint64_t hi)
{
	size_t a = 0, b = n;
	while (a < b) { /* first row with address > lo */
		size_t mid = (a + b) / 2;
		Dwarf_Addr addr;
		dwarf_lineaddr(dwarf_onesrcline(lines, mid), &addr);
		if (addr <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t i = a ? a - 1 : 0; i + 1 < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i), *nx = dwarf_onesrcline(lines, i + 1);
		Dwarf_Addr la, na;
		bool end;
		int line = 0;
		dwarf_lineaddr(l, &la);
		dwarf_lineaddr(nx, &na);
		if (la >= hi)
			break;
		if (dwarf_lineendsequence(l, &end) || end)
			continue;
		dwarf_lineno(l, &line);
		uint64_t s = la < lo ? lo : la, e = na > hi ? hi : na;
		bool stmt = false;
		if (la == na && la >= lo && !dwarf_linebeginstatement(l, &stmt) && stmt)
			add_view(rp, la, dwarf_linesrc(l, NULL, NULL), line);
		add_line(rp, s, e, dwarf_linesrc(l, NULL, NULL), line);
	}
}

static int collect_lines(struct rc_proc *rp)
{
	Dwarf_Lines *lines;
	size_t n;
	if (dwarf_getsrclines(&rp->cu, &lines, &n)) {
		if (dwarf_hasattr(&rp->cu, DW_AT_stmt_list))
			return die_error(rp, &rp->cu, "line table");
		return 0;
	}
	rp->cu_rows = n;
	for (size_t i = 0; i < rp->nparts; i++)
		lines_for_part(rp, lines, n, rp->parts[i].lo, rp->parts[i].hi);
	if (rp->nlines)
		qsort(rp->lines, rp->nlines, sizeof(*rp->lines), line_cmp);
	if (rp->nviews)
		qsort(rp->views, rp->nviews, sizeof(*rp->views), line_cmp);
	size_t out = 0; /* overlapping sequences: the first piece wins */
	for (size_t i = 0; i < rp->nlines; i++) {
		struct rc_line l = rp->lines[i];
		if (out && l.lo < rp->lines[out - 1].hi) {
			if (l.hi <= rp->lines[out - 1].hi)
				continue;
			l.lo = rp->lines[out - 1].hi;
		}
		rp->lines[out++] = l;
	}
	rp->nlines = out;
	return 0;
}

static int collect_dwarf(struct rc_proc *rp)
{
	Dwarf_Die chain[2];
	struct cp_dwarf *d = &rp->m->dwarf;
	if (!d->dbg || !cp_dwarf_cu_at(d, rp->p->lo, &rp->cu))
		return 0;
	rp->has_cu = 1;
	/* Lines even without a subprogram DIE (assembly, empty functions). */
	if (cp_dwarf_inline_chain(&rp->cu, rp->p->lo, chain, 1) < 1)
		return collect_lines(rp);
	rp->has_dwarf = 1;
	rp->sub = chain[0];
	if (rp->nparts)
		add_dwarf_parts(rp);
	struct nested_vec nv = {0};
	int rc = walk_inlines(rp, &rp->sub, -1, 1, &nv);
	if (!rc)
		rc = collect_lines(rp);
	if (!rc) {
		int32_t *parent = xmalloc((rp->ninl + 1) * sizeof(*parent));
		for (size_t i = 0; i < rp->ninl; i++)
			parent[i] = rp->inl[i].parent;
		rc_flatten(nv.v, nv.n, parent, rp->ninl, &rp->inl_segs, &rp->ninl_segs,
			   &rp->inl_segs_alloc);
		free(parent);
	}
	free(nv.v);
	return rc;
}

int rc_proc_collect(struct rc_proc *rp, struct cp_module *m, uint32_t i)
{
	rc_proc_clear(rp);
	rp->m = m;
	rp->p = &m->procs.procs[i];
	rp->proc_index = i;
	add_part(rp, rp->p->lo, rp->p->hi);
	for (size_t k = 0; k < rp->p->nparts; k++)
		add_part(rp, rp->p->parts[k].lo, rp->p->parts[k].hi);
	return collect_dwarf(rp);
}
