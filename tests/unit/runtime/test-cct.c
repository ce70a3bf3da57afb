/* Thread-file arenas and calling-context-tree insertion: paths share prefixes, repeated
 * samples create no nodes (memory grows with contexts, not samples), the hash table
 * survives growth, the file is a valid published arena at every step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "runtime/cct/cct.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/cp-test-cct.XXXXXX";

static void make_path(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

static void cct_open(struct cp_cct *c, const char *name, uint32_t nmetrics, size_t reserve)
{
	char path[256];
	struct cp_cct_info info = {.pid = 1,
				   .tid = 2,
				   .gen = 0,
				   .tidx = 3,
				   .nmetrics = nmetrics,
				   .start_ns = 5,
				   .reserve = reserve};
	make_path(path, sizeof path, name);
	assert_int_equal(cp_cct_create(c, path, &info), 0);
}

static uint32_t insert_path(struct cp_cct *c, const uint64_t *pcs, int n)
{
	uint32_t node = 0;
	for (int i = 0; i < n; i++)
		node =
		    cp_cct_child(c, node, i == n - 1 ? CP_MF_NODE_PC : CP_MF_NODE_CALL, 7, pcs[i]);
	return node;
}

static uint64_t file_size(const char *name)
{
	char path[256];
	struct stat st;
	make_path(path, sizeof path, name);
	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

static void test_header_and_root(void **state)
{
	struct cp_cct c;
	cct_open(&c, "a.thr", 2, 1 << 20);
	struct cp_mf_thread *h = c.hdr;
	assert_memory_equal(h->h.magic, CP_MF_MAGIC, 8);
	assert_int_equal(h->h.kind, CP_MF_KIND_THREAD);
	assert_int_equal(h->node_size, 24 + 16);
	assert_int_equal(h->h.used, h->h.header_size + h->node_size);
	assert_int_equal(h->h.header_size % 8, 0);
	struct cp_mf_node *root = cp_cct_node(&c, 0);
	assert_int_equal(root->parent, 0xffffffffu);
	assert_int_equal(root->kind, CP_MF_NODE_ROOT);
	cp_cct_close(&c, 1);
	assert_int_equal(file_size("a.thr"), ((sizeof(struct cp_mf_thread) + 7) & ~7ul) + 40);
}

static void test_shared_prefix_and_repeat(void **state)
{
	struct cp_cct c;
	cct_open(&c, "b.thr", 1, 1 << 20);
	uint64_t p1[] = {0x100, 0x200, 0x300}, p2[] = {0x100, 0x200, 0x400};
	uint32_t l1 = insert_path(&c, p1, 3), l2 = insert_path(&c, p2, 3);
	assert_int_not_equal(l1, l2);
	assert_int_equal(c.nnodes, 1 + 4); /* root, 0x100, 0x200, two leaves */
	assert_int_equal(cp_cct_node(&c, l1)->parent, cp_cct_node(&c, l2)->parent);
	uint64_t used = c.hdr->h.used;
	for (int i = 0; i < 100000; i++) {
		uint32_t l = insert_path(&c, i & 1 ? p1 : p2, 3);
		cp_cct_node(&c, l)->metrics[0] += 1;
	}
	assert_int_equal(c.nnodes, 5);
	assert_int_equal(c.hdr->h.used, used); /* samples add values, not memory */
	assert_int_equal(cp_cct_node(&c, l1)->metrics[0] + cp_cct_node(&c, l2)->metrics[0], 100000);
	/* Same address, different kind or module: different nodes. */
	assert_int_not_equal(cp_cct_child(&c, 0, CP_MF_NODE_PC, 7, 0x100),
			     cp_cct_child(&c, 0, CP_MF_NODE_CALL, 7, 0x100));
	assert_int_not_equal(cp_cct_child(&c, 0, CP_MF_NODE_CALL, 8, 0x100),
			     cp_cct_child(&c, 0, CP_MF_NODE_CALL, 7, 0x100));
	cp_cct_close(&c, 1);
}

/* Many distinct contexts: the table grows several times, the arena grows past its first
 * mapping, every node is found again, and memory is proportional to contexts. */
static void test_growth(void **state)
{
	struct cp_cct c;
	const uint32_t n = 200000;
	cct_open(&c, "c.thr", 1, 64 << 20);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t mid = cp_cct_child(&c, 0, CP_MF_NODE_CALL, 1, i % 1000);
		assert_int_not_equal(cp_cct_child(&c, mid, CP_MF_NODE_PC, 1, i), CP_CCT_NONE);
	}
	assert_int_equal(c.nnodes, 1 + 1000 + n);
	for (uint32_t i = 0; i < n; i += 997) {
		uint32_t mid = cp_cct_child(&c, 0, CP_MF_NODE_CALL, 1, i % 1000);
		uint32_t leaf = cp_cct_child(&c, mid, CP_MF_NODE_PC, 1, i);
		assert_int_equal(cp_cct_node(&c, leaf)->offset, i);
		assert_int_equal(cp_cct_node(&c, leaf)->parent, mid);
	}
	assert_int_equal(c.nnodes, 1 + 1000 + n);
	uint64_t used = c.hdr->h.used;
	assert_int_equal(used, c.hdr->h.header_size + (uint64_t)c.nnodes * 32);
	/* The table holds at most 4 bytes x 4 per node (load <= 1/2, doubling). */
	assert_true(c.table_bytes <= (size_t)c.nnodes * 16);
	assert_true(c.arena.mapped < used + (16u << 20));
	cp_cct_close(&c, 1);
	assert_int_equal(file_size("c.thr"), used);
}

/* A full arena fails cleanly (CP_CCT_NONE), never crashes, and keeps what it had. */
static void test_full(void **state)
{
	struct cp_cct c;
	cct_open(&c, "d.thr", 1, 256 << 10);
	uint32_t last = 0, i;
	for (i = 0; i < 100000; i++) {
		uint32_t r = cp_cct_child(&c, 0, CP_MF_NODE_PC, 1, i);
		if (r == CP_CCT_NONE)
			break;
		last = r;
	}
	assert_true(i < 100000);
	assert_true(last > 1000);
	assert_true(c.hdr->h.used <= (256 << 10));
	assert_int_equal(cp_cct_child(&c, 0, CP_MF_NODE_PC, 1, 5), 6); /* existing: found */
	cp_cct_close(&c, 0);
}

static void test_exclusive_create(void **state)
{
	struct cp_arena a;
	char path[256];
	make_path(path, sizeof path, "e.proc");
	assert_int_equal(cp_arena_create(&a, path, 1 << 20, 4096), 0);
	struct cp_arena b;
	assert_int_equal(cp_arena_create(&b, path, 1 << 20, 4096), -EEXIST);
	assert_true(a.fd >= 3);
	assert_int_equal(cp_arena_ensure(&a, 2 << 20), -ENOSPC);
	assert_int_equal(cp_arena_ensure(&a, 300000), 0);
	memset(a.base, 1, 300000);
	cp_arena_release(&a, 123);
	assert_int_equal(file_size("e.proc"), 123);
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd);
}

/* The sync-object table after the header: one slot per (object, node, kind, aux), counts
 * summed in place, the lost counters past 3/4 of the slots, nodes after the table. MPI
 * waits on one communicator from one call site with two tags are two slots. */
static void test_sync_table(void **state)
{
	(void)state;
	char path[256];
	struct cp_cct c;
	struct cp_cct_info info = {
	    .pid = 1, .tid = 2, .nmetrics = 1, .reserve = 1 << 20, .sync_slots = 8};
	make_path(path, sizeof path, "s.thr");
	assert_int_equal(cp_cct_create(&c, path, &info), 0);
	struct cp_mf_thread *h = c.hdr;
	assert_int_equal(h->sync_slots, 8);
	assert_int_equal(h->h.header_size, sizeof *h + 8 * sizeof(struct cp_mf_sync_obj));
	uint64_t p1[] = {0x100, 0x200};
	uint32_t leaf = insert_path(&c, p1, 2);
	assert_ptr_equal((char *)cp_cct_node(&c, 0), (char *)h + h->h.header_size);
	cp_cct_sync_add(&c, 0xa000, CP_MF_SYNC_MUTEX, 0, leaf, 10);
	cp_cct_sync_add(&c, 0xa000, CP_MF_SYNC_MUTEX, 0, leaf, 5);
	cp_cct_sync_add(&c, 0xa000, CP_MF_SYNC_COND, 0, leaf, 1);
	uint64_t tag7 = CP_MF_MPI_AUX(1, 7), tag8 = CP_MF_MPI_AUX(1, 8);
	cp_cct_sync_add(&c, CP_MF_MPI_COMM_WORLD, CP_MF_SYNC_MPI_RECV, tag7, leaf, 30);
	cp_cct_sync_add(&c, CP_MF_MPI_COMM_WORLD, CP_MF_SYNC_MPI_RECV, tag8, leaf, 4);
	cp_cct_sync_add(&c, CP_MF_MPI_COMM_WORLD, CP_MF_SYNC_MPI_RECV, tag7, leaf, 12);
	for (uint64_t o = 1; o <= 6; o++) /* 2 more fit (6 of 8 slots), 4 are lost */
		cp_cct_sync_add(&c, 0xb000 + o * 64, CP_MF_SYNC_BARRIER, 0, 0, 100);
	const struct cp_mf_sync_obj *tab = (const struct cp_mf_sync_obj *)(h + 1);
	int found = 0, used = 0, mpi = 0;
	for (int i = 0; i < 8; i++) {
		used += tab[i].kind != 0;
		if (tab[i].kind == CP_MF_SYNC_MPI_RECV) {
			mpi++;
			assert_int_equal(CP_MF_MPI_AUX_PEER(tab[i].aux), 1);
			int tag = CP_MF_MPI_AUX_TAG(tab[i].aux);
			assert_true(tag == 7 || tag == 8);
			assert_int_equal(tab[i].wait_ns, tag == 7 ? 42 : 4);
			assert_int_equal(tab[i].waits, tag == 7 ? 2 : 1);
		}
		if (tab[i].object == 0xa000 && tab[i].kind == CP_MF_SYNC_MUTEX) {
			found++;
			assert_int_equal(tab[i].node, leaf);
			assert_int_equal(tab[i].wait_ns, 15);
			assert_int_equal(tab[i].waits, 2);
		}
	}
	assert_int_equal(found, 1);
	assert_int_equal(mpi, 2);
	assert_int_equal(used, 6);
	assert_int_equal(h->sync_used, 6);
	assert_int_equal(h->sync_lost_waits, 4);
	assert_int_equal(h->sync_lost_ns, 400);
	/* the none marker of a collective: peer and tag read back as INT32_MIN */
	uint64_t none = CP_MF_MPI_AUX(CP_MF_MPI_NONE, CP_MF_MPI_NONE);
	assert_int_equal(CP_MF_MPI_AUX_PEER(none), INT32_MIN);
	assert_int_equal(CP_MF_MPI_AUX_TAG(none), INT32_MIN);
	assert_int_equal(CP_MF_MPI_AUX_TAG(CP_MF_MPI_AUX(3, -1)), -1);
	cp_cct_close(&c, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sync_table),
	    cmocka_unit_test(test_header_and_root),
	    cmocka_unit_test(test_shared_prefix_and_repeat),
	    cmocka_unit_test(test_growth),
	    cmocka_unit_test(test_full),
	    cmocka_unit_test(test_exclusive_create),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
