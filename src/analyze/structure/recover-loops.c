/* CFG and loop nest of one procedure through src/analyze/cfg and src/analyze/loops: this
 * file supplies the oracle (procedure entries, no-return callees, bytes of the module). */
#include "analyze/structure/recover-internal.h"

#include "base/xalloc.h"

#include <string.h>

void rc_loops_init(struct rc_loops *l)
{
	cp_cfg_init(&l->cfg);
	cp_loop_nest_init(&l->nest);
}

void rc_loops_release(struct rc_loops *l)
{
	cp_cfg_release(&l->cfg);
	cp_loop_nest_release(&l->nest);
}

static bool oracle_is_entry(void *ctx, uint64_t addr)
{
	struct cp_module *m = ctx;
	const struct cp_proc_range *r = cp_proc_table_find(&m->procs, addr);
	return r && !r->is_part && m->procs.procs[r->proc].lo == addr;
}

static bool oracle_is_noreturn(void *ctx, uint64_t addr)
{
	struct cp_module *m = ctx;
	const struct cp_proc_range *r = cp_proc_table_find(&m->procs, addr);
	if (!r || r->is_part)
		return false;
	const struct cp_proc *p = &m->procs.procs[r->proc];
	if (p->lo != addr)
		return false;
	if (cp_cfg_noreturn_name(p->linkage))
		return true;
	for (size_t i = 0; i < p->naliases; i++)
		if (cp_cfg_noreturn_name(p->aliases[i]))
			return true;
	return false;
}

static size_t oracle_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct cp_module *m = ctx;
	return cp_elf_read(&m->image, addr, buf, len);
}

static void add_seg(struct rc_proc *rp, uint64_t lo, uint64_t hi, int32_t loop)
{
	struct rc_seg *last = rp->nloop_segs ? &rp->loop_segs[rp->nloop_segs - 1] : NULL;
	if (last && last->hi == lo && last->v == loop) {
		last->hi = hi;
		return;
	}
	XGROW(rp->loop_segs, rp->nloop_segs + 1, rp->loop_segs_alloc);
	rp->loop_segs[rp->nloop_segs++] = (struct rc_seg){lo, hi, loop};
}

int rc_loops_find(struct rc_loops *l, struct rc_proc *rp)
{
	rp->nloop_segs = 0;
	if (!rp->nparts)
		return 0;
	struct cp_cfg_oracle oracle = {rp->m, oracle_is_entry, oracle_is_noreturn, oracle_read};
	int rc = cp_cfg_build(&l->cfg, rp->parts, rp->nparts, &oracle);
	if (rc)
		return rc;
	cp_loops_find(&l->nest, &l->cfg);
	uint64_t prev_hi = 0;
	int32_t prev_loop = -1;
	for (size_t b = 0; b < l->cfg.nblocks; b++) {
		int32_t loop = l->nest.block_loop[b];
		const struct cp_cfg_block *bl = &l->cfg.blocks[b];
		if (bl->hi <= bl->lo || bl->lo < prev_hi)
			continue; /* empty, or overlapping (a jump into an instruction) */
		/* Undecoded bytes between two blocks of one loop (alignment padding) belong
		 * to that loop. */
		if (loop >= 0 && loop == prev_loop && bl->lo > prev_hi)
			add_seg(rp, prev_hi, bl->lo, loop);
		if (loop >= 0)
			add_seg(rp, bl->lo, bl->hi, loop);
		prev_hi = bl->hi;
		prev_loop = loop;
	}
	return 0;
}
