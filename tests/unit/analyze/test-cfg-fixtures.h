/* Shared by test-cfg.c and test-loops.c: the assembly fixtures of tests/fixtures/asm
 * (linked into the test), an oracle that knows their entries, and edge/block lookups. */
#ifndef CP_TEST_CFG_FIXTURES_H
#define CP_TEST_CFG_FIXTURES_H

#include "analyze/cfg/cfg.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#define FX(name) extern const char name[]
FX(fx_nest3);
FX(fx_nest3_outer);
FX(fx_nest3_mid);
FX(fx_nest3_inner);
FX(fx_nest3_midlatch);
FX(fx_nest3_outerlatch);
FX(fx_nest3_exit);
FX(fx_nest3_end);
FX(fx_twoback);
FX(fx_twoback_head);
FX(fx_twoback_odd);
FX(fx_twoback_out1);
FX(fx_twoback_even);
FX(fx_twoback_out2);
FX(fx_twoback_end);
FX(fx_irred);
FX(fx_irred_a);
FX(fx_irred_b);
FX(fx_irred_exit);
FX(fx_irred_end);
FX(fx_switch);
FX(fx_switch_head);
FX(fx_switch_dispatch);
FX(fx_switch_c0);
FX(fx_switch_c1);
FX(fx_switch_c2);
FX(fx_switch_default);
FX(fx_switch_latch);
FX(fx_switch_exit);
FX(fx_switch_jmp);
FX(fx_switch_end);
FX(fx_switch_table);
FX(fx_switch_table_end);
FX(fx_unres);
FX(fx_unres_jmp);
FX(fx_unres_end);
FX(fx_ptrtail);
FX(fx_ptrtail_1);
FX(fx_ptrtail_end);
FX(fx_hoist);
FX(fx_hoist_head);
FX(fx_hoist_c0);
FX(fx_hoist_c1);
FX(fx_hoist_out);
FX(fx_hoist_end);
FX(fx_hoist_table);
FX(fx_hoist_table_end);
FX(fx_tail);
FX(fx_tail_1);
FX(fx_tail_2);
FX(fx_tail_end);
FX(fx_noret);
FX(fx_noret_die);
FX(fx_noret_pad);
FX(fx_noret_ok);
FX(fx_noret_after);
FX(fx_noret_end);
FX(fx_die);
FX(fx_die_end);
FX(fx_helper);
FX(fx_split);
FX(fx_split_loop);
FX(fx_split_ret);
FX(fx_split_end);
FX(fx_split_cold);
FX(fx_split_cold_end);
#undef FX

#define A(label) ((uint64_t)(uintptr_t)(label))

static inline bool fx_is_entry(void *ctx, uint64_t addr)
{
	(void)ctx;
	const char *entries[] = {fx_nest3,   fx_twoback, fx_irred, fx_switch, fx_unres,	 fx_tail,
				 fx_ptrtail, fx_hoist,	 fx_noret, fx_die,    fx_helper, fx_split};
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (addr == A(entries[i]))
			return true;
	return false;
}

static inline bool fx_is_noreturn(void *ctx, uint64_t addr)
{
	(void)ctx;
	return addr == A(fx_die);
}

static inline size_t fx_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	bool in1 = addr >= A(fx_switch_table) && addr + len <= A(fx_switch_table_end);
	bool in2 = addr >= A(fx_hoist_table) && addr + len <= A(fx_hoist_table_end);
	if (!in1 && !in2)
		return 0;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return len;
}

static const struct cp_cfg_oracle fx_oracle = {NULL, fx_is_entry, fx_is_noreturn, fx_read};

/* Builds the CFG of [lo, hi) plus an optional second part [lo2, hi2). */
static inline void fx_build(struct cp_cfg *cfg, const char *lo, const char *hi, const char *lo2,
			    const char *hi2)
{
	struct cp_cfg_part parts[2] = {
	    {A(lo), A(hi), (const uint8_t *)lo},
	    {lo2 ? A(lo2) : 0, lo2 ? A(hi2) : 0, (const uint8_t *)lo2},
	};
	assert_int_equal(cp_cfg_build(cfg, parts, lo2 ? 2 : 1, &fx_oracle), 0);
}

/* The block starting at label (fails the test when there is none). */
static inline uint32_t fx_block(const struct cp_cfg *cfg, const char *label)
{
	uint32_t b = cp_cfg_find_block(cfg, A(label));
	assert_int_not_equal(b, CP_CFG_NONE);
	assert_int_equal(cfg->blocks[b].lo, A(label));
	return b;
}

/* Index of the edge src -> dst (label, or NULL for "leaves the procedure") of kind. */
static inline uint32_t fx_edge(const struct cp_cfg *cfg, const char *src, const char *dst,
			       unsigned kind)
{
	uint32_t s = fx_block(cfg, src), d = dst ? fx_block(cfg, dst) : CP_CFG_NONE;
	const struct cp_cfg_block *b = &cfg->blocks[s];
	for (uint32_t k = 0; k < b->nedges; k++) {
		const struct cp_cfg_edge *e = &cfg->edges[b->first_edge + k];
		if (e->src == s && e->dst == d && e->kind == kind)
			return b->first_edge + k;
	}
	fail_msg("no %s edge from 0x%llx to %s", cp_cfg_edge_kind_name(kind),
		 (unsigned long long)A(src), dst ? "a block" : "outside");
	return CP_CFG_NONE;
}

/* The blocks are exactly [labels[i], labels[i+1]) for i < n, the last ending at end. */
static inline void fx_expect_blocks(const struct cp_cfg *cfg, const char *const *labels, size_t n,
				    const char *end)
{
	assert_int_equal(cfg->nblocks, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(cfg->blocks[i].lo, A(labels[i]));
		assert_int_equal(cfg->blocks[i].hi, A(i + 1 < n ? labels[i + 1] : end));
	}
}

#endif
