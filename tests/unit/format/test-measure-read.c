/* The measurement reader on hand-built files: valid input, every truncation point,
 * corrupt headers, bad node parents and module ids, a whole directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/error.h"
#include "format/measure-read.h"
#include "mf-build.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const metric_names[] = {"cputime", "realtime"};

static void build_proc(struct mfb *b)
{
	mfb_proc(b, 42, 0, 2, metric_names);
	mfb_string(b, CP_MF_REC_CMDLINE, "./prog\0arg1\0", 12);
	mfb_string(b, CP_MF_REC_EXE, "/bin/prog", 10);
	mfb_module(b, 0, "/bin/prog", 0x400000);
	mfb_module(b, 1, "/lib/libc.so.6", 0x7f0000000000);
	mfb_string(b, CP_MF_REC_NOTE, "fell back to POSIX timers", 26);
	struct cp_mf_unload u = {1, 0, 7};
	mfb_record(b, CP_MF_REC_UNLOAD, &u, sizeof u);
	mfb_finish(b);
}

static void build_thread(struct mfb *b)
{
	uint64_t v[2] = {5, 7};
	mfb_thread(b, 42, 0, 0, 2);
	uint32_t a = mfb_node(b, 0, CP_MF_NODE_CALL, 0, 0x1100, NULL);
	uint32_t c = mfb_node(b, a, CP_MF_NODE_CALL, 1, 0x2200, NULL);
	mfb_node(b, c, CP_MF_NODE_PC, 1, 0x2300, v);
	uint32_t p = mfb_node(b, 0, CP_MF_NODE_PARTIAL, CP_MF_MODULE_NONE, 0, NULL);
	mfb_node(b, p, CP_MF_NODE_PC, CP_MF_MODULE_NONE, 0xdead, v);
	mfb_finish(b);
}

static void test_valid(void **state)
{
	struct mfb pb, tb;
	build_proc(&pb);
	build_thread(&tb);
	struct cp_mf_proc p;
	struct cp_mf_thr t;
	assert_int_equal(cp_mf_proc_parse(&p, pb.buf, pb.len, "42.0.proc"), 0);
	assert_int_equal(p.hdr.pid, 42);
	assert_int_equal(p.argc, 2);
	assert_string_equal(p.argv[1], "arg1");
	assert_string_equal(p.exe, "/bin/prog");
	assert_int_equal(p.nmodules, 2);
	assert_string_equal(p.modules[1].path, "/lib/libc.so.6");
	assert_int_equal(p.modules[1].unloaded, 1);
	assert_int_equal(p.modules[0].unloaded, 0);
	assert_int_equal(cp_mf_proc_module(&p, 1), 1);
	assert_int_equal(cp_mf_proc_module(&p, 2), -1);
	assert_int_equal(p.nnotes, 1);
	assert_string_equal(p.notes[0], "fell back to POSIX timers");
	assert_int_equal(cp_mf_thr_parse(&t, tb.buf, tb.len, "42.0.0.thr", &p), 0);
	assert_int_equal(t.nnodes, 6);
	assert_int_equal(t.nodes[3].kind, CP_MF_NODE_PC);
	assert_int_equal(t.nodes[3].parent, 2);
	assert_int_equal(t.values[3 * 2 + 1], 7);
	assert_int_equal(t.tail_bytes, 0);
	cp_mf_thr_release(&t);
	cp_mf_proc_release(&p);
	free(pb.buf);
	free(tb.buf);
}

static void set_rank(struct mfb *b, uint32_t minor, int32_t rank, uint32_t nranks)
{
	memcpy(b->buf + offsetof(struct cp_mf_header, version_minor), &minor, 4);
	memcpy(b->buf + offsetof(struct cp_mf_header, rank), &rank, 4);
	memcpy(b->buf + offsetof(struct cp_mf_header, nranks), &nranks, 4);
}

/* Minor 1's rank fields: read as written; a file of minor 0 has no rank whatever its
 * reserved bytes hold; a rank outside [-1, nranks) is corrupt. */
static void test_rank(void **state)
{
	struct mfb pb, tb;
	struct cp_mf_proc p;
	struct cp_mf_thr t;
	build_proc(&pb);
	build_thread(&tb);
	set_rank(&pb, 0, 5, 9);
	assert_int_equal(cp_mf_proc_parse(&p, pb.buf, pb.len, "42.0.proc"), 0);
	assert_int_equal(p.hdr.h.rank, CP_MF_NO_RANK);
	assert_int_equal(p.hdr.h.nranks, 0);
	cp_mf_proc_release(&p);
	set_rank(&pb, 1, 3, 4);
	set_rank(&tb, 1, 3, 4);
	assert_int_equal(cp_mf_proc_parse(&p, pb.buf, pb.len, "42.0.proc"), 0);
	assert_int_equal(p.hdr.h.rank, 3);
	assert_int_equal(p.hdr.h.nranks, 4);
	assert_int_equal(cp_mf_thr_parse(&t, tb.buf, tb.len, "42.0.0.thr", &p), 0);
	assert_int_equal(t.hdr.h.rank, 3);
	cp_mf_thr_release(&t);
	cp_mf_proc_release(&p);
	set_rank(&pb, 1, 4, 4);
	assert_int_equal(cp_mf_proc_parse(&p, pb.buf, pb.len, "42.0.proc"), CP_EFORMAT);
	assert_non_null(strstr(cp_error_message(), "rank 4 of 4"));
	free(p.file);
	set_rank(&tb, 1, -2, 0);
	assert_int_equal(cp_mf_thr_parse(&t, tb.buf, tb.len, "42.0.0.thr", NULL), CP_EFORMAT);
	free(t.file);
	free(pb.buf);
	free(tb.buf);
}

/* Every prefix of a file whose header claims the full size: an error naming the file, never
 * a crash; every prefix published as `used` (a file being written): a clean read or error. */
static void truncate_all(const struct mfb *b, int is_proc, const struct cp_mf_proc *proc)
{
	for (size_t len = 0; len < b->len; len++) {
		uint8_t *copy = malloc(len ? len : 1); /* exact size: overreads show under ASan */
		memcpy(copy, b->buf, len);
		struct cp_mf_proc p;
		struct cp_mf_thr t;
		int rc = is_proc ? cp_mf_proc_parse(&p, copy, len, "f.proc")
				 : cp_mf_thr_parse(&t, copy, len, "f.thr", proc);
		assert_int_equal(rc, CP_EFORMAT);
		assert_non_null(strstr(cp_error_message(), is_proc ? "f.proc" : "f.thr"));
		assert_non_null(strstr(cp_error_message(), "offset"));
		free(is_proc ? p.file : t.file);
		if (len >= sizeof(struct cp_mf_header)) {
			uint64_t used = len;
			memcpy(copy + offsetof(struct cp_mf_header, used), &used, sizeof used);
			rc = is_proc ? cp_mf_proc_parse(&p, copy, len, "f.proc")
				     : cp_mf_thr_parse(&t, copy, len, "f.thr", proc);
			assert_true(rc == 0 || rc == CP_EFORMAT);
			if (!rc && is_proc)
				cp_mf_proc_release(&p);
			else if (!rc)
				cp_mf_thr_release(&t);
			else
				free(is_proc ? p.file : t.file);
		}
		free(copy);
	}
}

static void test_truncated(void **state)
{
	struct mfb pb, tb;
	build_proc(&pb);
	build_thread(&tb);
	truncate_all(&pb, 1, NULL);
	struct cp_mf_proc p;
	assert_int_equal(cp_mf_proc_parse(&p, pb.buf, pb.len, "42.0.proc"), 0);
	truncate_all(&tb, 0, &p);
	/* The message a user sees. */
	struct cp_mf_thr t;
	assert_int_equal(cp_mf_thr_parse(&t, tb.buf, tb.len - 10, "x.thr", &p), CP_EFORMAT);
	char want[128];
	snprintf(want, sizeof want, "file x.thr: truncated at offset %zu, header says %zu bytes",
		 tb.len - 10, tb.len);
	assert_string_equal(cp_error_message(), want);
	free(t.file);
	cp_mf_proc_release(&p);
	free(pb.buf);
	free(tb.buf);
}

static int parse_thr_with(struct mfb *tb, const char *expect)
{
	struct mfb pb;
	build_proc(&pb);
	struct cp_mf_proc p;
	struct cp_mf_thr t;
	assert_int_equal(cp_mf_proc_parse(&p, pb.buf, pb.len, "p"), 0);
	int rc = cp_mf_thr_parse(&t, tb->buf, tb->len, "t.thr", &p);
	if (rc) {
		if (!strstr(cp_error_message(), expect))
			fail_msg("message '%s' lacks '%s'", cp_error_message(), expect);
		free(t.file);
	} else {
		cp_mf_thr_release(&t);
	}
	cp_mf_proc_release(&p);
	free(pb.buf);
	return rc;
}

static void test_corrupt_header(void **state)
{
	struct mfb tb;
	build_thread(&tb);
	tb.buf[0] = 'X';
	assert_int_equal(parse_thr_with(&tb, "bad magic at offset 0"), CP_EFORMAT);
	free(tb.buf);
	build_thread(&tb);
	uint32_t v = 99;
	memcpy(tb.buf + offsetof(struct cp_mf_header, version), &v, 4);
	assert_int_equal(parse_thr_with(&tb, "version 99"), CP_EFORMAT);
	free(tb.buf);
	build_thread(&tb);
	v = 32;
	memcpy(tb.buf + offsetof(struct cp_mf_header, header_size), &v, 4);
	assert_int_equal(parse_thr_with(&tb, "header_size 32"), CP_EFORMAT);
	free(tb.buf);
	build_thread(&tb);
	v = 1; /* process kind in a thread file */
	memcpy(tb.buf + offsetof(struct cp_mf_header, kind), &v, 4);
	assert_int_equal(parse_thr_with(&tb, "kind 1"), CP_EFORMAT);
	free(tb.buf);
	build_thread(&tb);
	v = 20; /* node_size too small for 2 metrics */
	memcpy(tb.buf + offsetof(struct cp_mf_thread, node_size), &v, 4);
	assert_int_equal(parse_thr_with(&tb, "node_size 20"), CP_EFORMAT);
	free(tb.buf);
}

static void test_bad_nodes(void **state)
{
	struct mfb tb;
	mfb_thread(&tb, 42, 0, 0, 2);
	uint32_t a = mfb_node(&tb, 0, CP_MF_NODE_CALL, 0, 0x1100, NULL);
	mfb_node(&tb, a + 1, CP_MF_NODE_PC, 0, 0x1200, NULL); /* parent is itself */
	mfb_finish(&tb);
	assert_int_equal(parse_thr_with(&tb, "node 2 at offset"), CP_EFORMAT);
	free(tb.buf);
	mfb_thread(&tb, 42, 0, 0, 2);
	mfb_node(&tb, 0, CP_MF_NODE_CALL, 0, 0x1100, NULL);
	mfb_node(&tb, 7, CP_MF_NODE_PC, 0, 0x1200, NULL); /* parent later than itself */
	mfb_finish(&tb);
	assert_int_equal(parse_thr_with(&tb, "has parent 7"), CP_EFORMAT);
	free(tb.buf);
	mfb_thread(&tb, 42, 0, 0, 2);
	mfb_node(&tb, 0, CP_MF_NODE_CALL, 5, 0x1100, NULL); /* module 5 not in the process */
	mfb_finish(&tb);
	assert_int_equal(parse_thr_with(&tb, "names module 5"), CP_EFORMAT);
	free(tb.buf);
	mfb_thread(&tb, 42, 0, 0, 2);
	mfb_node(&tb, 0, 9, 0, 0x1100, NULL); /* unknown kind */
	mfb_finish(&tb);
	assert_int_equal(parse_thr_with(&tb, "invalid kind 9"), CP_EFORMAT);
	free(tb.buf);
}

static void test_too_deep(void **state)
{
	struct mfb tb;
	mfb_thread(&tb, 42, 0, 0, 2);
	uint32_t at = 0;
	for (int i = 0; i < CP_MF_READ_MAX_DEPTH; i++)
		at = mfb_node(&tb, at, CP_MF_NODE_CALL, 0, 0x1100, NULL);
	mfb_finish(&tb);
	assert_int_equal(parse_thr_with(&tb, ""), 0);
	mfb_node(&tb, at, CP_MF_NODE_PC, 0, 0x1200, NULL);
	mfb_finish(&tb);
	assert_int_equal(parse_thr_with(&tb, "4097 frames deep"), CP_EFORMAT);
	free(tb.buf);
}

static void test_bad_records(void **state)
{
	struct mfb pb;
	struct cp_mf_proc p;
	build_proc(&pb);
	/* The first record's size overflows the used bytes. */
	uint32_t big = 0x7fffffff;
	size_t rec0 = sizeof(struct cp_mf_process);
	memcpy(pb.buf + rec0 + 4, &big, 4);
	assert_int_equal(cp_mf_proc_parse(&p, pb.buf, pb.len, "p.proc"), CP_EFORMAT);
	assert_non_null(strstr(cp_error_message(), "record at offset"));
	free(p.file);
	free(pb.buf);
	/* A module record with a build id longer than the field. */
	mfb_proc(&pb, 1, 0, 1, metric_names);
	struct cp_mf_module m;
	memset(&m, 0, sizeof m);
	m.build_id_len = 200;
	uint8_t pay[sizeof m + 2] = {0};
	memcpy(pay, &m, sizeof m);
	pay[sizeof m] = 'x';
	mfb_record(&pb, CP_MF_REC_MODULE, pay, sizeof pay);
	mfb_finish(&pb);
	assert_int_equal(cp_mf_proc_parse(&p, pb.buf, pb.len, "p.proc"), CP_EFORMAT);
	assert_non_null(strstr(cp_error_message(), "build_id_len 200"));
	free(p.file);
	free(pb.buf);
	/* An unload of a module never loaded. */
	mfb_proc(&pb, 1, 0, 1, metric_names);
	struct cp_mf_unload u = {3, 0, 1};
	mfb_record(&pb, CP_MF_REC_UNLOAD, &u, sizeof u);
	mfb_finish(&pb);
	assert_int_equal(cp_mf_proc_parse(&p, pb.buf, pb.len, "p.proc"), CP_EFORMAT);
	free(p.file);
	free(pb.buf);
}

static void test_directory(void **state)
{
	char dir[] = "/tmp/cp-test-mfdir.XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct cp_mf_dir d;
	assert_int_equal(cp_mf_dir_open(&d, dir), CP_ENOENT); /* empty */
	assert_non_null(strstr(cp_error_message(), "no measurement files"));
	struct mfb pb, tb;
	build_proc(&pb);
	build_thread(&tb);
	assert_int_equal(mfb_write(&tb, dir, "42.0.0.thr"), 0);
	assert_int_equal(mfb_write(&tb, dir, "43.0.0.thr"), 0); /* no process file */
	assert_int_equal(mfb_write(&pb, dir, "42.0.proc"), 0);
	assert_int_equal(cp_mf_dir_open(&d, dir), CP_EFORMAT);
	assert_non_null(strstr(cp_error_message(), "43.0.0.thr: no process file 43.0.proc"));
	char path[256];
	snprintf(path, sizeof path, "%s/43.0.0.thr", dir);
	unlink(path);
	assert_int_equal(mfb_write(&tb, dir, "42.0.1.thr"), 0);
	assert_int_equal(cp_mf_dir_open(&d, dir), 0);
	assert_int_equal(d.nimages, 1);
	assert_int_equal(d.images[0].nthreads, 2);
	assert_int_equal(d.images[0].threads[1].nnodes, 6);
	cp_mf_dir_release(&d);
	/* A truncated thread file in the directory. */
	struct mfb cut = tb;
	cut.len = tb.len - 5;
	assert_int_equal(mfb_write(&cut, dir, "42.0.1.thr"), 0);
	assert_int_equal(cp_mf_dir_open(&d, dir), CP_EFORMAT);
	assert_non_null(strstr(cp_error_message(), "42.0.1.thr: truncated at offset"));
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(pb.buf);
	free(tb.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid),	   cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_corrupt_header), cmocka_unit_test(test_bad_nodes),
	    cmocka_unit_test(test_bad_records),	   cmocka_unit_test(test_directory),
	    cmocka_unit_test(test_too_deep),	   cmocka_unit_test(test_rank),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
