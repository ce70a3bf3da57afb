/* CFG construction on hand-written assembly (tests/fixtures/asm, linked in) with known
 * blocks and edges, on synthetic byte sequences, and on random bytes. */
#include "test-cfg-fixtures.h"
#include "analyze/loops/loops.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>

static void test_nest3_blocks_edges(void **state)
{
	(void)state;
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	fx_build(&cfg, fx_nest3, fx_nest3_end, NULL, NULL);
	const char *const blocks[] = {fx_nest3,	      fx_nest3_outer,	 fx_nest3_mid,
				      fx_nest3_inner, fx_nest3_midlatch, fx_nest3_outerlatch,
				      fx_nest3_exit};
	fx_expect_blocks(&cfg, blocks, 7, fx_nest3_end);
	assert_int_equal(cfg.entry, 0);
	assert_true(cfg.blocks[0].flags & CP_CFG_BLOCK_ENTRY);
	assert_int_equal(cfg.nedges, 10);
	fx_edge(&cfg, fx_nest3, fx_nest3_outer, CP_CFG_FALLTHROUGH);
	fx_edge(&cfg, fx_nest3_outer, fx_nest3_mid, CP_CFG_FALLTHROUGH);
	fx_edge(&cfg, fx_nest3_mid, fx_nest3_inner, CP_CFG_FALLTHROUGH);
	fx_edge(&cfg, fx_nest3_inner, fx_nest3_inner, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_nest3_inner, fx_nest3_midlatch, CP_CFG_COND_NOT_TAKEN);
	fx_edge(&cfg, fx_nest3_midlatch, fx_nest3_mid, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_nest3_midlatch, fx_nest3_outerlatch, CP_CFG_COND_NOT_TAKEN);
	fx_edge(&cfg, fx_nest3_outerlatch, fx_nest3_outer, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_nest3_outerlatch, fx_nest3_exit, CP_CFG_COND_NOT_TAKEN);
	fx_edge(&cfg, fx_nest3_exit, NULL, CP_CFG_RETURN);
	assert_int_equal(cfg.blocks[3].ninsns, 4);
	assert_int_equal(cfg.ninsns, 15);
	assert_int_equal(cfg.nbad, 0);
	/* taken listed before not-taken */
	assert_int_equal(cfg.edges[cfg.blocks[3].first_edge].kind, CP_CFG_COND_TAKEN);
	cp_cfg_release(&cfg);
}

static void test_twoback_edges(void **state)
{
	(void)state;
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	fx_build(&cfg, fx_twoback, fx_twoback_end, NULL, NULL);
	const char *const blocks[] = {fx_twoback,      fx_twoback_head, fx_twoback_odd,
				      fx_twoback_out1, fx_twoback_even, fx_twoback_out2};
	fx_expect_blocks(&cfg, blocks, 6, fx_twoback_end);
	assert_int_equal(cfg.nedges, 9);
	fx_edge(&cfg, fx_twoback, fx_twoback_head, CP_CFG_FALLTHROUGH);
	fx_edge(&cfg, fx_twoback_head, fx_twoback_even, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_twoback_head, fx_twoback_odd, CP_CFG_COND_NOT_TAKEN);
	fx_edge(&cfg, fx_twoback_odd, fx_twoback_head, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_twoback_odd, fx_twoback_out1, CP_CFG_COND_NOT_TAKEN);
	fx_edge(&cfg, fx_twoback_out1, NULL, CP_CFG_RETURN);
	fx_edge(&cfg, fx_twoback_even, fx_twoback_head, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_twoback_even, fx_twoback_out2, CP_CFG_COND_NOT_TAKEN);
	fx_edge(&cfg, fx_twoback_out2, NULL, CP_CFG_RETURN);
	cp_cfg_release(&cfg);
}

static void test_irreducible_edges(void **state)
{
	(void)state;
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	fx_build(&cfg, fx_irred, fx_irred_end, NULL, NULL);
	const char *const blocks[] = {fx_irred, fx_irred_a, fx_irred_b, fx_irred_exit};
	fx_expect_blocks(&cfg, blocks, 4, fx_irred_end);
	assert_int_equal(cfg.nedges, 6);
	fx_edge(&cfg, fx_irred, fx_irred_b, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_irred, fx_irred_a, CP_CFG_COND_NOT_TAKEN);
	fx_edge(&cfg, fx_irred_a, fx_irred_b, CP_CFG_FALLTHROUGH);
	fx_edge(&cfg, fx_irred_b, fx_irred_a, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_irred_b, fx_irred_exit, CP_CFG_COND_NOT_TAKEN);
	fx_edge(&cfg, fx_irred_exit, NULL, CP_CFG_RETURN);
	cp_cfg_release(&cfg);
}

static void test_jump_table_pic(void **state)
{
	(void)state;
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	fx_build(&cfg, fx_switch, fx_switch_end, NULL, NULL);
	const char *const blocks[] = {fx_switch,	 fx_switch_head,  fx_switch_dispatch,
				      fx_switch_c0,	 fx_switch_c1,	  fx_switch_c2,
				      fx_switch_default, fx_switch_latch, fx_switch_exit};
	fx_expect_blocks(&cfg, blocks, 9, fx_switch_end);
	assert_int_equal(cfg.njtables, 1);
	assert_int_equal(cfg.jtables[0].jump, A(fx_switch_jmp));
	assert_int_equal(cfg.jtables[0].table, A(fx_switch_table));
	assert_int_equal(cfg.jtables[0].entries, 4); /* cmp $3 + ja */
	assert_int_equal(cfg.jtables[0].entry_size, 4);
	assert_int_equal(cfg.nunresolved, 0);
	fx_edge(&cfg, fx_switch_dispatch, fx_switch_c0, CP_CFG_INDIRECT);
	fx_edge(&cfg, fx_switch_dispatch, fx_switch_c1, CP_CFG_INDIRECT);
	fx_edge(&cfg, fx_switch_dispatch, fx_switch_c2, CP_CFG_INDIRECT);
	fx_edge(&cfg, fx_switch_dispatch, fx_switch_default, CP_CFG_INDIRECT);
	assert_int_equal(cfg.blocks[fx_block(&cfg, fx_switch_dispatch)].nedges, 4);
	fx_edge(&cfg, fx_switch_head, fx_switch_default, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_switch_c0, fx_switch_latch, CP_CFG_JUMP);
	fx_edge(&cfg, fx_switch_default, fx_switch_latch, CP_CFG_FALLTHROUGH);
	fx_edge(&cfg, fx_switch_latch, fx_switch_head, CP_CFG_COND_TAKEN);
	/* 1 + 2 + 4 + 1*3 + 1 + 2 + 1 */
	assert_int_equal(cfg.nedges, 14);
	cp_cfg_release(&cfg);
}

static void test_jump_table_hoisted_base(void **state)
{
	(void)state;
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	fx_build(&cfg, fx_hoist, fx_hoist_end, NULL, NULL);
	assert_int_equal(cfg.njtables, 1);
	assert_int_equal(cfg.jtables[0].table, A(fx_hoist_table));
	assert_int_equal(cfg.jtables[0].entries, 2);
	assert_int_equal(cfg.nunresolved, 0);
	uint32_t e = fx_edge(&cfg, fx_hoist_c0, fx_hoist_head, CP_CFG_JUMP);
	uint32_t d = cfg.edges[e].src - 1; /* the dispatch block precedes case 0 */
	assert_int_equal(cfg.blocks[d].nedges, 2);
	for (uint32_t k = 0; k < 2; k++)
		assert_int_equal(cfg.edges[cfg.blocks[d].first_edge + k].kind, CP_CFG_INDIRECT);
	fx_block(&cfg, fx_hoist_c1);
	cp_cfg_release(&cfg);
}

static void test_unresolved_indirect(void **state)
{
	(void)state;
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	fx_build(&cfg, fx_unres, fx_unres_end, NULL, NULL);
	assert_int_equal(cfg.nblocks, 1);
	assert_int_equal(cfg.nunresolved, 1); /* a computed jump: base + 16 * index */
	assert_int_equal(cfg.unresolved[0], A(fx_unres_jmp));
	fx_edge(&cfg, fx_unres, NULL, CP_CFG_UNRESOLVED);
	assert_int_equal(cfg.nedges, 1);

	/* jumps through code pointers (struct member, register) are tail calls */
	fx_build(&cfg, fx_ptrtail, fx_ptrtail_end, NULL, NULL);
	assert_int_equal(cfg.nblocks, 3);
	assert_int_equal(cfg.nunresolved, 0);
	assert_int_equal(cfg.nedges, 4);
	uint32_t e = fx_edge(&cfg, fx_ptrtail_1, NULL, CP_CFG_TAILCALL);
	assert_int_equal(cfg.edges[e].target, 0);
	assert_int_equal(cfg.edges[cfg.blocks[1].first_edge].kind, CP_CFG_TAILCALL);
	cp_cfg_release(&cfg);
}

static void test_tail_calls(void **state)
{
	(void)state;
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	fx_build(&cfg, fx_tail, fx_tail_end, NULL, NULL);
	const char *const blocks[] = {fx_tail, fx_tail_1, fx_tail_2};
	fx_expect_blocks(&cfg, blocks, 3, fx_tail_end);
	assert_int_equal(cfg.nedges, 5);
	uint32_t e = fx_edge(&cfg, fx_tail, NULL, CP_CFG_TAILCALL);
	assert_int_equal(cfg.edges[e].target, A(fx_nest3));
	fx_edge(&cfg, fx_tail, fx_tail_1, CP_CFG_COND_NOT_TAKEN);
	e = fx_edge(&cfg, fx_tail_1, NULL, CP_CFG_OUTSIDE);
	assert_int_equal(cfg.edges[e].target, A(fx_nest3_mid));
	fx_edge(&cfg, fx_tail_1, fx_tail_2, CP_CFG_COND_NOT_TAKEN);
	e = fx_edge(&cfg, fx_tail_2, NULL, CP_CFG_TAILCALL);
	assert_int_equal(cfg.edges[e].target, A(fx_twoback));
	cp_cfg_release(&cfg);
}

static void test_noreturn_call(void **state)
{
	(void)state;
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	fx_build(&cfg, fx_noret, fx_noret_end, NULL, NULL);
	assert_int_equal(cfg.nblocks, 4);
	assert_int_equal(cfg.nbad, 0); /* the bytes after the no-return call are not code */
	assert_int_equal(cfg.blocks[1].lo, A(fx_noret_die));
	assert_int_equal(cfg.blocks[1].hi, A(fx_noret_pad));
	assert_int_equal(cfg.blocks[2].lo, A(fx_noret_ok));
	assert_int_equal(cfg.blocks[2].hi, A(fx_noret_after));
	uint32_t e = fx_edge(&cfg, fx_noret_die, NULL, CP_CFG_NORETURN);
	assert_int_equal(cfg.edges[e].target, A(fx_die));
	assert_int_equal(cfg.blocks[1].nedges, 1);
	e = fx_edge(&cfg, fx_noret_ok, fx_noret_after, CP_CFG_CALL_FALLTHROUGH);
	assert_int_equal(cfg.edges[e].target, A(fx_helper));
	fx_edge(&cfg, fx_noret, fx_noret_ok, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_noret, fx_noret_die, CP_CFG_COND_NOT_TAKEN);
	fx_edge(&cfg, fx_noret_after, NULL, CP_CFG_RETURN);
	assert_int_equal(cfg.nedges, 5);

	/* the trap ends its block with no edge */
	fx_build(&cfg, fx_die, fx_die_end, NULL, NULL);
	assert_int_equal(cfg.nblocks, 1);
	assert_int_equal(cfg.nedges, 0);
	assert_true(cfg.blocks[0].flags & CP_CFG_BLOCK_TRAP);
	cp_cfg_release(&cfg);
}

static void test_cold_part(void **state)
{
	(void)state;
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	fx_build(&cfg, fx_split, fx_split_end, fx_split_cold, fx_split_cold_end);
	assert_int_equal(cfg.nblocks, 4);
	uint32_t entry = fx_block(&cfg, fx_split);
	assert_int_equal(cfg.entry, entry);
	uint32_t cold = fx_block(&cfg, fx_split_cold);
	assert_int_equal(cfg.blocks[cold].hi, A(fx_split_cold_end));
	/* blocks sorted by address whichever part comes first */
	for (size_t i = 1; i < cfg.nblocks; i++)
		assert_true(cfg.blocks[i - 1].lo < cfg.blocks[i].lo);
	fx_edge(&cfg, fx_split, fx_split_cold, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_split, fx_split_loop, CP_CFG_COND_NOT_TAKEN);
	fx_edge(&cfg, fx_split_cold, fx_split_loop, CP_CFG_JUMP);
	fx_edge(&cfg, fx_split_loop, fx_split_loop, CP_CFG_COND_TAKEN);
	fx_edge(&cfg, fx_split_loop, fx_split_ret, CP_CFG_COND_NOT_TAKEN);
	fx_edge(&cfg, fx_split_ret, NULL, CP_CFG_RETURN);
	assert_int_equal(cfg.nedges, 6);

	/* without the cold part, the branch there leaves the procedure */
	fx_build(&cfg, fx_split, fx_split_end, NULL, NULL);
	assert_int_equal(cfg.nblocks, 3);
	fx_edge(&cfg, fx_split, NULL, CP_CFG_OUTSIDE);
	cp_cfg_release(&cfg);
}

/* Synthetic code at a fake address, with a table the oracle serves. */
struct synth {
	uint64_t table_addr;
	const uint8_t *table;
	size_t table_len;
};

static size_t synth_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct synth *s = ctx;
	if (addr < s->table_addr || addr + len > s->table_addr + s->table_len)
		return 0;
	memcpy(buf, s->table + (addr - s->table_addr), len);
	return len;
}

static void test_jump_table_absolute(void **state)
{
	(void)state;
	const uint8_t code[] = {
	    0x83, 0xff, 0x02,			      /* 0: cmp $2,%edi */
	    0x77, 0x0a,				      /* 3: ja 15 */
	    0xff, 0x24, 0xfd, 0x00, 0x00, 0x60, 0x00, /* 5: jmp *0x600000(,%rdi,8) */
	    0xc3, 0xc3, 0xc3,			      /* 12, 13, 14: cases */
	    0xc3,				      /* 15: default */
	};
	uint64_t table[3] = {0x40000c, 0x40000d, 0x40000e};
	struct synth s = {0x600000, (const uint8_t *)table, sizeof(table)};
	struct cp_cfg_oracle o = {&s, NULL, NULL, synth_read};
	struct cp_cfg_part part = {0x400000, 0x400000 + sizeof(code), code};
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	assert_int_equal(cp_cfg_build(&cfg, &part, 1, &o), 0);
	assert_int_equal(cfg.njtables, 1);
	assert_int_equal(cfg.jtables[0].entries, 3);
	assert_int_equal(cfg.jtables[0].entry_size, 8);
	assert_int_equal(cfg.jtables[0].table, 0x600000);
	assert_int_equal(cfg.nblocks, 6);
	uint32_t jb = cp_cfg_find_block(&cfg, 0x400005);
	assert_int_equal(cfg.blocks[jb].nedges, 3);
	for (uint32_t k = 0; k < 3; k++) {
		const struct cp_cfg_edge *e = &cfg.edges[cfg.blocks[jb].first_edge + k];
		assert_int_equal(e->kind, CP_CFG_INDIRECT);
		assert_int_equal(cfg.blocks[e->dst].lo, 0x40000c + k);
	}
	/* without the guard the table is not read */
	struct cp_cfg_part noguard = {0x400005, 0x400000 + sizeof(code), code + 5};
	assert_int_equal(cp_cfg_build(&cfg, &noguard, 1, &o), 0);
	assert_int_equal(cfg.njtables, 0);
	assert_int_equal(cfg.nunresolved, 1);
	cp_cfg_release(&cfg);
}

static void test_bad_bytes_and_overlap(void **state)
{
	(void)state;
	/* 0: jz 3 ; 2: mov $0x909090c3,%eax ; 7: ret. The jz lands inside the mov, on c3. */
	const uint8_t code[] = {0x74, 0x01, 0xb8, 0xc3, 0x90, 0x90, 0x90, 0xc3};
	struct cp_cfg_part part = {0x1000, 0x1000 + sizeof(code), code};
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	assert_int_equal(cp_cfg_build(&cfg, &part, 1, NULL), 0);
	assert_int_equal(cfg.nblocks, 3);
	assert_int_equal(cfg.blocks[1].lo, 0x1002);
	assert_int_equal(cfg.blocks[1].hi, 0x1008);
	assert_int_equal(cfg.blocks[2].lo, 0x1003);
	assert_int_equal(cfg.blocks[2].hi, 0x1004);
	assert_true(cfg.blocks[2].flags & CP_CFG_BLOCK_OVERLAP);

	/* data in text: decoding stops at an invalid byte; the block is BAD */
	const uint8_t data[] = {0x31, 0xc0, 0x06, 0x07};
	struct cp_cfg_part dpart = {0x2000, 0x2000 + sizeof(data), data};
	assert_int_equal(cp_cfg_build(&cfg, &dpart, 1, NULL), 0);
	assert_int_equal(cfg.nblocks, 1);
	assert_int_equal(cfg.nbad, 1);
	assert_true(cfg.blocks[0].flags & CP_CFG_BLOCK_BAD);
	assert_int_equal(cfg.nedges, 0);

	/* a fall-through off the end of the procedure */
	const uint8_t nop[] = {0x90};
	struct cp_cfg_part npart = {0x3000, 0x3001, nop};
	assert_int_equal(cp_cfg_build(&cfg, &npart, 1, NULL), 0);
	assert_int_equal(cfg.nedges, 1);
	assert_int_equal(cfg.edges[0].kind, CP_CFG_OUTSIDE);
	assert_int_equal(cfg.edges[0].target, 0x3001);

	/* parts that touch (same bytes) fall through from one into the other */
	const uint8_t two[] = {0x90, 0xc3};
	struct cp_cfg_part touching[2] = {{0x4000, 0x4001, two}, {0x4001, 0x4002, two + 1}};
	assert_int_equal(cp_cfg_build(&cfg, touching, 2, NULL), 0);
	assert_int_equal(cfg.nblocks, 1);
	assert_int_equal(cfg.blocks[0].lo, 0x4000);
	assert_int_equal(cfg.blocks[0].hi, 0x4002);
	assert_int_equal(cfg.edges[0].kind, CP_CFG_RETURN);

	struct cp_cfg_part empty = {0x3000, 0x3000, nop};
	assert_int_equal(cp_cfg_build(&cfg, &empty, 1, NULL), CP_EINVAL);
	cp_cfg_release(&cfg);
}

static size_t random_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const uint8_t *mem = ctx;
	if (addr < 0x10000 || addr + len > 0x10000 + 4096)
		return 0;
	memcpy(buf, mem + (addr - 0x10000), len);
	return len;
}

static bool random_entry(void *ctx, uint64_t addr)
{
	(void)ctx;
	return addr % 97 == 0;
}

static void check_invariants(const struct cp_cfg *cfg, uint64_t lo, uint64_t hi)
{
	size_t nedges = 0;
	for (size_t i = 0; i < cfg->nblocks; i++) {
		const struct cp_cfg_block *b = &cfg->blocks[i];
		assert_true(b->lo >= lo && b->hi <= hi && b->lo < b->hi);
		if (i)
			assert_true(cfg->blocks[i - 1].lo < b->lo);
		assert_int_equal(b->first_edge, nedges);
		nedges += b->nedges;
		for (uint32_t k = 0; k < b->nedges; k++) {
			const struct cp_cfg_edge *e = &cfg->edges[b->first_edge + k];
			assert_int_equal(e->src, i);
			assert_true(e->dst == CP_CFG_NONE || e->dst < cfg->nblocks);
			assert_true(e->kind <= CP_CFG_OUTSIDE);
		}
	}
	assert_int_equal(nedges, cfg->nedges);
	assert_true(cfg->nblocks == 0 || cfg->entry < cfg->nblocks);
}

static void test_random_bytes(void **state)
{
	(void)state;
	static uint8_t buf[4096];
	struct cp_cfg cfg;
	cp_cfg_init(&cfg);
	struct cp_cfg_oracle o = {buf, random_entry, NULL, random_read};
	struct cp_loop_nest nest;
	cp_loop_nest_init(&nest);
	size_t total_blocks = 0, total_loops = 0;
	for (unsigned seed = 1; seed <= 3000; seed++) {
		srand(seed);
		size_t len = 1 + (size_t)rand() % sizeof(buf);
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rand();
		/* a part split in two, the second "cold" one 1 KiB further */
		struct cp_cfg_part parts[2] = {
		    {0x10000, 0x10000 + len, buf},
		    {0x10000 + len + 1024, 0x10000 + len + 1024 + 16, buf}};
		assert_int_equal(cp_cfg_build(&cfg, parts, seed % 2 ? 2 : 1, &o), 0);
		check_invariants(&cfg, 0x10000, 0x10000 + len + 1024 + 16);
		assert_true(cfg.ninsns <= len + 16);
		total_blocks += cfg.nblocks;
		/* and the loop nest of whatever graph came out */
		assert_int_equal(cp_loops_find(&nest, &cfg), 0);
		for (size_t l = 0; l < nest.nloops; l++) {
			const struct cp_loop *L = &nest.loops[l];
			assert_true(L->nblocks >= 1 && L->nbacks >= 1);
			assert_true(L->parent < (int32_t)l);
		}
		total_loops += nest.nloops;
	}
	assert_true(total_blocks > 3000);
	assert_true(total_loops > 0);
	cp_loop_nest_release(&nest);
	cp_cfg_release(&cfg);
}

static void test_noreturn_names(void **state)
{
	(void)state;
	assert_true(cp_cfg_noreturn_name("exit"));
	assert_true(cp_cfg_noreturn_name("exit@plt"));
	assert_true(cp_cfg_noreturn_name("__stack_chk_fail@GLIBC_2.4"));
	assert_true(cp_cfg_noreturn_name("__cxa_throw"));
	assert_true(cp_cfg_noreturn_name("abort"));
	assert_false(cp_cfg_noreturn_name("exit_group"));
	assert_false(cp_cfg_noreturn_name("printf"));
	assert_false(cp_cfg_noreturn_name("ex"));
	assert_false(cp_cfg_noreturn_name(NULL));
	assert_string_equal(cp_cfg_edge_kind_name(CP_CFG_TAILCALL), "tailcall");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nest3_blocks_edges),
	    cmocka_unit_test(test_twoback_edges),
	    cmocka_unit_test(test_irreducible_edges),
	    cmocka_unit_test(test_jump_table_pic),
	    cmocka_unit_test(test_jump_table_hoisted_base),
	    cmocka_unit_test(test_unresolved_indirect),
	    cmocka_unit_test(test_tail_calls),
	    cmocka_unit_test(test_noreturn_call),
	    cmocka_unit_test(test_cold_part),
	    cmocka_unit_test(test_jump_table_absolute),
	    cmocka_unit_test(test_bad_bytes_and_overlap),
	    cmocka_unit_test(test_random_bytes),
	    cmocka_unit_test(test_noreturn_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
