/* CFG and loop nest of one procedure through src/analyze/cfg and src/analyze/loops, with
 * the module oracle of cfg-module.h (procedure entries, no-return callees by name and by
 * inference, bytes of the module): the one oracle of the project. */
#include "analyze/structure/recover-internal.h"

#include "base/xalloc.h"

#include <string.h>

void rc_loops_init(struct rc_loops *l, const struct cp_cfg_oracle *oracle)
{
	cp_cfg_init(&l->cfg);
	cp_loop_nest_init(&l->nest);
	l->oracle = oracle;
}

void rc_loops_release(struct rc_loops *l)
{
	cp_cfg_release(&l->cfg);
	cp_loop_nest_release(&l->nest);
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
	int rc = cp_cfg_build(&l->cfg, rp->parts, rp->nparts, l->oracle);
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
