/* CFG glue over a cp_module: see cfg-module.h. */
#include "analyze/cfg/cfg-module.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

static bool noreturn_spelling(const char *name)
{
	if (!name)
		return false;
	if (!strncmp(name, "__GI_", 5))
		name += 5;
	if (cp_cfg_noreturn_name(name))
		return true;
	/* __stack_chk_fail_local and similar local aliases */
	size_t len = strcspn(name, "@");
	if (len > 6 && !strncmp(name + len - 6, "_local", 6)) {
		char buf[128];
		if (len - 6 >= sizeof(buf))
			return false;
		memcpy(buf, name, len - 6);
		buf[len - 6] = '\0';
		return cp_cfg_noreturn_name(buf);
	}
	return false;
}

void cp_cfg_module_init(struct cp_cfg_module *cm, const struct cp_module *m)
{
	memset(cm, 0, sizeof(*cm));
	cm->m = m;
	size_t n = m->procs.nprocs;
	cm->noreturn = xcalloc(n ? n : 1, 1);
	for (size_t i = 0; i < n; i++) {
		const struct cp_proc *p = &m->procs.procs[i];
		bool nr = noreturn_spelling(p->linkage) || noreturn_spelling(p->name);
		for (size_t a = 0; a < p->naliases && !nr; a++)
			nr = noreturn_spelling(p->aliases[a]);
		cm->noreturn[i] = nr;
	}
}

void cp_cfg_module_release(struct cp_cfg_module *cm)
{
	free(cm->noreturn);
	free(cm->parts);
	memset(cm, 0, sizeof(*cm));
}

/* The procedure whose entry is addr, or -1. */
static long proc_at(const struct cp_cfg_module *cm, uint64_t addr)
{
	const struct cp_proc_range *r = cp_proc_table_find(&cm->m->procs, addr);
	if (!r || r->is_part || cm->m->procs.procs[r->proc].lo != addr)
		return -1;
	return (long)r->proc;
}

static bool module_is_entry(void *ctx, uint64_t addr)
{
	return proc_at(ctx, addr) >= 0;
}

static bool module_is_noreturn(void *ctx, uint64_t addr)
{
	const struct cp_cfg_module *cm = ctx;
	long p = proc_at(cm, addr);
	return p >= 0 && cm->noreturn[p];
}

static size_t module_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct cp_cfg_module *cm = ctx;
	return cp_elf_read(&cm->m->image, addr, buf, len);
}

struct cp_cfg_oracle cp_cfg_module_oracle(struct cp_cfg_module *cm)
{
	return (struct cp_cfg_oracle){cm, module_is_entry, module_is_noreturn, module_read};
}

/* [lo, hi) clipped to the executable section holding lo; false when there is none. */
static bool part_bytes(const struct cp_elf_image *im, uint64_t lo, uint64_t hi,
		       struct cp_cfg_part *part)
{
	const struct cp_elf_section *s = cp_elf_code_at(im, lo);
	if (!s || !s->data || hi <= lo)
		return false;
	if (hi > s->addr + s->size)
		hi = s->addr + s->size;
	*part = (struct cp_cfg_part){lo, hi, s->data + (lo - s->addr)};
	return true;
}

int cp_cfg_module_build(struct cp_cfg_module *cm, struct cp_cfg *cfg, size_t proc,
			const struct cp_cfg_oracle *oracle)
{
	const struct cp_proc *p = &cm->m->procs.procs[proc];
	XGROW(cm->parts, p->nparts + 1, cm->parts_alloc);
	size_t n = 0;
	if (!part_bytes(&cm->m->image, p->lo, p->hi, &cm->parts[n++]))
		return cp_error(CP_ENOENT,
				"%s: procedure %s at 0x%llx is not in an executable "
				"section with contents",
				cm->m->image.path, p->name, (unsigned long long)p->lo);
	for (size_t i = 0; i < p->nparts; i++)
		if (part_bytes(&cm->m->image, p->parts[i].lo, p->parts[i].hi, &cm->parts[n]))
			n++;
	return cp_cfg_build(cfg, cm->parts, n, oracle);
}

/* True when some path of the CFG leaves the procedure in a way that may return to its
 * caller: a ret, a tail call to a procedure that may return, an unresolved or outside
 * jump, undecodable code. No-return calls and traps do not return. */
static bool may_return(const struct cp_cfg_module *cm, const struct cp_cfg *cfg)
{
	for (size_t i = 0; i < cfg->nblocks; i++)
		if (cfg->blocks[i].flags & CP_CFG_BLOCK_BAD)
			return true;
	for (size_t e = 0; e < cfg->nedges; e++) {
		const struct cp_cfg_edge *E = &cfg->edges[e];
		if (E->dst != CP_CFG_NONE || E->kind == CP_CFG_NORETURN)
			continue;
		if (E->kind == CP_CFG_TAILCALL && E->target) {
			long p = proc_at(cm, E->target);
			if (p >= 0 && cm->noreturn[p])
				continue;
		}
		return true;
	}
	return false;
}

struct call_pair {
	uint32_t callee, caller;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct call_pair *x = a, *y = b;
	if (x->callee != y->callee)
		return x->callee < y->callee ? -1 : 1;
	return x->caller < y->caller ? -1 : x->caller > y->caller;
}

/* Appends (callee, caller) for the direct calls and tail calls of the CFG. */
static void collect_calls(const struct cp_cfg_module *cm, const struct cp_cfg *cfg, uint32_t caller,
			  struct call_pair **pairs, size_t *n, size_t *alloc)
{
	for (size_t e = 0; e < cfg->nedges; e++) {
		const struct cp_cfg_edge *E = &cfg->edges[e];
		if (!E->target ||
		    (E->kind != CP_CFG_CALL_FALLTHROUGH && E->kind != CP_CFG_TAILCALL))
			continue;
		long p = proc_at(cm, E->target);
		if (p < 0 || (uint32_t)p == caller)
			continue;
		XGROW(*pairs, *n + 1, *alloc);
		(*pairs)[(*n)++] = (struct call_pair){(uint32_t)p, caller};
	}
}

/* Does procedure i return (by its CFG under what is known now)? */
static bool proc_may_return(struct cp_cfg_module *cm, struct cp_cfg *cfg, size_t i,
			    const struct cp_cfg_oracle *o)
{
	if (cp_cfg_module_build(cm, cfg, i, o) < 0 || !cfg->nblocks)
		return true;
	return may_return(cm, cfg);
}

size_t cp_cfg_module_infer_noreturn(struct cp_cfg_module *cm, struct cp_cfg *cfg)
{
	struct cp_cfg_oracle o = cp_cfg_module_oracle(cm);
	size_t nprocs = cm->m->procs.nprocs, found = 0, npairs = 0, pairs_alloc = 0;
	size_t nwork = 0, work_alloc = 0;
	struct call_pair *pairs = NULL;
	uint32_t *work = NULL;
	/* one pass over every procedure, remembering who calls whom */
	for (size_t i = 0; i < nprocs; i++) {
		if (cm->noreturn[i] || (cm->m->procs.procs[i].flags & CP_PROC_PLT))
			continue;
		if (!proc_may_return(cm, cfg, i, &o)) {
			cm->noreturn[i] = 1, found++;
			XGROW(work, nwork + 1, work_alloc);
			work[nwork++] = (uint32_t)i;
		}
		collect_calls(cm, cfg, (uint32_t)i, &pairs, &npairs, &pairs_alloc);
	}
	if (npairs > 1)
		qsort(pairs, npairs, sizeof(*pairs), pair_cmp);
	/* then only the callers of procedures newly found not to return */
	while (nwork) {
		uint32_t callee = work[--nwork];
		size_t lo = 0, hi = npairs;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (pairs[mid].callee < callee)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < npairs && pairs[lo].callee == callee; lo++) {
			uint32_t c = pairs[lo].caller;
			if (cm->noreturn[c] || proc_may_return(cm, cfg, c, &o))
				continue;
			cm->noreturn[c] = 1, found++;
			XGROW(work, nwork + 1, work_alloc);
			work[nwork++] = c;
		}
	}
	free(pairs);
	free(work);
	return found;
}
