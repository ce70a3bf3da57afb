/* The thread file's sync-object table (measure.h, minor 3): read when the minor says so,
 * empty slots, unknown kinds and nodes not read yet left out, ignored in files of an
 * earlier minor, a table that does not fit in the header rejected, kept by a copy; an MPI
 * entry (minor 4) with its peer and tag; the process file's MPI_COMM records (minor 4). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/error.h"
#include "format/measure-read.h"
#include "mf-build.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS 5

/* A thread of 3 nodes (root, call, pc) with a table of SLOTS slots after its header. */
static void build(struct mfb *out, uint32_t minor, uint32_t slots_claimed)
{
	struct mfb b;
	uint64_t v[1] = {9};
	mfb_thread(&b, 42, 0, 0, 1);
	uint32_t a = mfb_node(&b, 0, CP_MF_NODE_CALL, CP_MF_MODULE_NONE, 0x1100, NULL);
	mfb_node(&b, a, CP_MF_NODE_PC, CP_MF_MODULE_NONE, 0x1200, v);
	struct cp_mf_sync_obj tab[SLOTS] = {
	    {0},
	    {.object = 0x5000, .node = 1, .kind = CP_MF_SYNC_MUTEX, .wait_ns = 700, .waits = 3},
	    {.object = 0x6000, .node = 9, .kind = CP_MF_SYNC_COND, .wait_ns = 1, .waits = 1},
	    {.object = 0x7000, .node = 2, .kind = 99, .wait_ns = 1, .waits = 1},
	    {.object = 2,
	     .node = 1,
	     .kind = CP_MF_SYNC_MPI_RECV,
	     .aux = CP_MF_MPI_AUX(1, 7),
	     .wait_ns = 80,
	     .waits = 4},
	};
	struct cp_mf_thread h;
	memcpy(&h, b.buf, sizeof h);
	h.h.version_minor = minor;
	h.h.header_size = (uint32_t)(sizeof h + sizeof tab);
	h.sync_slots = slots_claimed;
	h.sync_used = 3;
	h.sync_lost_ns = 50;
	h.sync_lost_waits = 2;
	memset(out, 0, sizeof *out);
	mfb_put(out, &h, sizeof h);
	mfb_put(out, tab, sizeof tab);
	mfb_put(out, b.buf + sizeof h, b.len - sizeof h);
	mfb_finish(out);
	free(b.buf);
}

static void test_table(void **state)
{
	(void)state;
	struct mfb b;
	struct cp_mf_thr t, copy;
	build(&b, 3, SLOTS);
	assert_int_equal(cp_mf_thr_parse(&t, b.buf, b.len, "42.0.0.thr", NULL), 0);
	assert_int_equal(t.nnodes, 3);
	assert_int_equal(t.nodes[2].offset, 0x1200);
	assert_int_equal(t.nsync, 2); /* empty, node 9 (not read), kind 99: left out */
	assert_int_equal(t.sync[1].kind, CP_MF_SYNC_MPI_RECV);
	assert_int_equal(CP_MF_MPI_AUX_PEER(t.sync[1].aux), 1);
	assert_int_equal(CP_MF_MPI_AUX_TAG(t.sync[1].aux), 7);
	assert_int_equal(t.sync[1].wait_ns, 80);
	assert_int_equal(t.sync[0].object, 0x5000);
	assert_int_equal(t.sync[0].node, 1);
	assert_int_equal(t.sync[0].kind, CP_MF_SYNC_MUTEX);
	assert_int_equal(t.sync[0].wait_ns, 700);
	assert_int_equal(t.sync[0].waits, 3);
	assert_int_equal(t.hdr.sync_lost_waits, 2);
	cp_mf_thr_copy(&copy, &t);
	cp_mf_thr_release(&t);
	assert_int_equal(copy.nsync, 2);
	assert_int_equal(copy.sync[0].wait_ns, 700);
	cp_mf_thr_release(&copy);
	free(b.buf);
}

static void test_older_minor(void **state)
{
	(void)state;
	struct mfb b;
	struct cp_mf_thr t;
	build(&b, 2, SLOTS); /* the words were reserved then: no table whatever they hold */
	assert_int_equal(cp_mf_thr_parse(&t, b.buf, b.len, "42.0.0.thr", NULL), 0);
	assert_int_equal(t.nnodes, 3);
	assert_int_equal(t.nsync, 0);
	assert_int_equal(t.hdr.sync_slots, 0);
	assert_int_equal(t.hdr.sync_lost_waits, 0);
	cp_mf_thr_release(&t);
	free(b.buf);
}

static void test_too_big(void **state)
{
	(void)state;
	struct mfb b;
	struct cp_mf_thr t;
	build(&b, 3, SLOTS + 1);
	assert_int_equal(cp_mf_thr_parse(&t, b.buf, b.len, "42.0.0.thr", NULL), CP_EFORMAT);
	assert_non_null(strstr(cp_error_message(), "sync_slots"));
	cp_error_clear();
	cp_mf_thr_release(&t);
	free(b.buf);
}

static void comm_record(struct mfb *b, uint64_t comm, const char *name, size_t len)
{
	char pay[64];
	struct cp_mf_mpi_comm c = {comm};
	memcpy(pay, &c, sizeof c);
	memcpy(pay + sizeof c, name, len);
	mfb_record(b, CP_MF_REC_MPI_COMM, pay, sizeof c + len);
}

/* Communicator names: the last record of a number wins; a name without its NUL is cut at
 * the record's end; a record shorter than its number is an error. */
static void test_comm_names(void **state)
{
	(void)state;
	static const char *const names[] = {"cputime"};
	struct mfb b;
	struct cp_mf_proc p;
	mfb_proc(&b, 42, 0, 1, names);
	comm_record(&b, 2, "first", 6);
	comm_record(&b, 0, "world", 6);
	comm_record(&b, 2, "rows", 5);
	comm_record(&b, 3, "cols", 4); /* no NUL */
	mfb_finish(&b);
	assert_int_equal(cp_mf_proc_parse(&p, b.buf, b.len, "42.0.proc"), 0);
	assert_int_equal(p.ncomms, 3);
	assert_int_equal(p.comms[0].comm, 2);
	assert_string_equal(p.comms[0].name, "rows");
	assert_string_equal(p.comms[1].name, "world");
	assert_string_equal(p.comms[2].name, "cols");
	cp_mf_proc_release(&p);
	free(b.buf);
	mfb_proc(&b, 42, 0, 1, names);
	mfb_record(&b, CP_MF_REC_MPI_COMM, "abc", 3);
	mfb_finish(&b);
	assert_int_equal(cp_mf_proc_parse(&p, b.buf, b.len, "42.0.proc"), CP_EFORMAT);
	assert_non_null(strstr(cp_error_message(), "MPI_COMM"));
	cp_error_clear();
	cp_mf_proc_release(&p);
	free(b.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_older_minor),
	    cmocka_unit_test(test_too_big),
	    cmocka_unit_test(test_comm_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
