/* Packed threads (format version 2): THREAD and UNPACK records in the process file, which
 * copy of a thread the reader takes, leftover thread files, strictness on damaged records,
 * and the directory and streaming readers over a mix of packed threads and thread files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/error.h"
#include "format/measure-read.h"
#include "mf-build.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const metric_names[] = {"cputime"};

/* A thread of process 42 gen 0 with `extra` PC nodes under the root (so that copies can
 * be told apart by their node count). */
static void build_thread(struct mfb *b, uint32_t tidx, int extra, int pid)
{
	uint64_t v[1] = {1000000};
	mfb_thread(b, pid, 0, tidx, 1);
	for (int i = 0; i < extra; i++)
		mfb_node(b, 0, CP_MF_NODE_PC, 0, 0x1000 + (uint64_t)i, v);
	mfb_finish(b);
}

static void add_packed(struct mfb *pb, uint32_t tidx, int extra)
{
	struct mfb tb;
	build_thread(&tb, tidx, extra, 42);
	mfb_record(pb, CP_MF_REC_THREAD, tb.buf, tb.len);
	free(tb.buf);
}

static void add_unpack(struct mfb *pb, uint32_t tidx)
{
	struct cp_mf_unpack u = {tidx, 0};
	mfb_record(pb, CP_MF_REC_UNPACK, &u, sizeof u);
}

static void proc_start(struct mfb *pb)
{
	mfb_proc(pb, 42, 0, 1, metric_names);
	mfb_module(pb, 0, "/bin/prog", 0x400000);
}

static void test_last_record_decides(void **state)
{
	struct mfb pb;
	proc_start(&pb);
	add_packed(&pb, 1, 1);
	add_packed(&pb, 2, 2);
	add_unpack(&pb, 2);    /* tidx 2 went on in its file after a failed exec */
	add_packed(&pb, 1, 3); /* tidx 1 packed again: this copy counts */
	add_packed(&pb, 3, 4);
	mfb_finish(&pb);
	struct cp_mf_proc p;
	assert_int_equal(cp_mf_proc_parse(&p, pb.buf, pb.len, "42.0.proc"), 0);
	assert_int_equal(p.npacked, 2);
	assert_int_equal(p.packed[0].hdr.tidx, 1);
	assert_int_equal(p.packed[0].nnodes, 4);
	assert_int_equal(p.packed[1].hdr.tidx, 3);
	assert_non_null(cp_mf_proc_packed(&p, 3));
	assert_null(cp_mf_proc_packed(&p, 2));
	assert_null(cp_mf_proc_packed(&p, 0));
	assert_int_equal(p.packed[1].values[4], 1000000);
	cp_mf_proc_release(&p);
	free(pb.buf);
}

static int parse_fails(const struct mfb *pb, const char *want)
{
	struct cp_mf_proc p;
	int rc = cp_mf_proc_parse(&p, pb->buf, pb->len, "42.0.proc");
	if (!rc) {
		cp_mf_proc_release(&p);
		return 0;
	}
	free(p.file);
	return rc == CP_EFORMAT && strstr(cp_error_message(), want) != NULL;
}

static void test_damaged_records(void **state)
{
	struct mfb pb, tb;
	/* Another process's thread. */
	proc_start(&pb);
	build_thread(&tb, 1, 1, 43);
	mfb_record(&pb, CP_MF_REC_THREAD, tb.buf, tb.len);
	mfb_finish(&pb);
	assert_true(parse_fails(&pb, "do not match"));
	free(pb.buf);
	free(tb.buf);
	/* used inside shorter than the record. */
	proc_start(&pb);
	build_thread(&tb, 1, 2, 42);
	mfb_record(&pb, CP_MF_REC_THREAD, tb.buf, tb.len);
	mfb_finish(&pb);
	uint64_t small = tb.len - 8; /* one node shorter than the payload */
	memcpy(pb.buf + pb.len - tb.len + offsetof(struct cp_mf_header, used), &small, 8);
	assert_true(parse_fails(&pb, "do not match"));
	free(pb.buf);
	free(tb.buf);
	/* Too short for a thread header, and an unpack record without its tidx. */
	proc_start(&pb);
	mfb_record(&pb, CP_MF_REC_THREAD, "CPATHMF", 8);
	mfb_finish(&pb);
	assert_true(parse_fails(&pb, "thread record at offset"));
	free(pb.buf);
	proc_start(&pb);
	mfb_record(&pb, CP_MF_REC_UNPACK, "x", 1);
	mfb_finish(&pb);
	assert_true(parse_fails(&pb, "unpack record"));
	free(pb.buf);
	/* A packed node naming a module the process file does not list. */
	proc_start(&pb);
	mfb_thread(&tb, 42, 0, 1, 1);
	mfb_node(&tb, 0, CP_MF_NODE_PC, 9, 0x10, NULL);
	mfb_finish(&tb);
	mfb_record(&pb, CP_MF_REC_THREAD, tb.buf, tb.len);
	mfb_finish(&pb);
	assert_true(parse_fails(&pb, "names module 9"));
	free(pb.buf);
	free(tb.buf);
}

/* Every cut of a process file holding packed threads parses or fails cleanly. */
static void test_truncated(void **state)
{
	struct mfb pb;
	proc_start(&pb);
	add_packed(&pb, 1, 2);
	add_unpack(&pb, 1);
	add_packed(&pb, 2, 1);
	mfb_finish(&pb);
	for (size_t len = 0; len <= pb.len; len++) {
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, pb.buf, len);
		uint64_t used = len;
		if (len >= sizeof(struct cp_mf_header))
			memcpy(copy + offsetof(struct cp_mf_header, used), &used, 8);
		struct cp_mf_proc p;
		int rc = cp_mf_proc_parse(&p, copy, len, "cut.proc");
		assert_true(rc == 0 || rc == CP_EFORMAT);
		if (rc == 0)
			cp_mf_proc_release(&p);
		else
			free(p.file);
		free(copy);
	}
	free(pb.buf);
}

struct dir_fixture {
	char dir[64];
};

/* 42.0.proc: tidx 1 packed, tidx 2 packed then unpacked; files: tidx 0, a truncated
 * leftover of tidx 1 (ignored), tidx 2 (its data). */
static void dir_build(struct dir_fixture *f)
{
	strcpy(f->dir, "/tmp/cp-test-mfpack.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	struct mfb pb, tb;
	proc_start(&pb);
	add_packed(&pb, 1, 5);
	add_packed(&pb, 2, 1);
	add_unpack(&pb, 2);
	mfb_finish(&pb);
	assert_int_equal(mfb_write(&pb, f->dir, "42.0.proc"), 0);
	build_thread(&tb, 0, 2, 42);
	assert_int_equal(mfb_write(&tb, f->dir, "42.0.0.thr"), 0);
	free(tb.buf);
	build_thread(&tb, 1, 5, 42);
	tb.len -= 5;
	assert_int_equal(mfb_write(&tb, f->dir, "42.0.1.thr"), 0);
	free(tb.buf);
	build_thread(&tb, 2, 7, 42);
	assert_int_equal(mfb_write(&tb, f->dir, "42.0.2.thr"), 0);
	free(tb.buf);
	free(pb.buf);
}

static void dir_remove(struct dir_fixture *f)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
}

static void test_directory(void **state)
{
	struct dir_fixture f;
	dir_build(&f);
	struct cp_mf_dir d;
	assert_int_equal(cp_mf_dir_open(&d, f.dir), 0);
	assert_int_equal(d.nimages, 1);
	struct cp_mf_image *im = &d.images[0];
	assert_int_equal(im->nthreads, 3);
	assert_int_equal(im->proc.npacked, 0);
	size_t want_nodes[3] = {3, 6, 8};
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(im->threads[i].hdr.tidx, i);
		assert_int_equal(im->threads[i].nnodes, want_nodes[i]);
	}
	cp_mf_dir_release(&d);

	struct cp_mf_list l;
	struct cp_mf_proc p;
	assert_int_equal(cp_mf_list_open(&l, f.dir), 0);
	assert_int_equal(cp_mf_list_proc(&l, 0, &p), 0);
	assert_int_equal(cp_mf_list_nthreads(&l, 0, &p), 3);
	for (uint32_t j = 0; j < 3; j++) {
		struct cp_mf_thr t;
		assert_int_equal(cp_mf_list_thread(&l, 0, j, &p, &t), 0);
		assert_int_equal(t.hdr.tidx, j);
		assert_int_equal(t.nnodes, want_nodes[j]);
		cp_mf_thr_release(&t);
	}
	cp_mf_proc_release(&p);
	cp_mf_list_release(&l);
	dir_remove(&f);
}

/* The program packs thread 0 (and unlinks its file) after the listing and the process
 * file were read: the streaming reader finds it in the process file read again. */
static void test_list_packed_meanwhile(void **state)
{
	struct dir_fixture f;
	dir_build(&f);
	struct cp_mf_list l;
	struct cp_mf_proc p;
	assert_int_equal(cp_mf_list_open(&l, f.dir), 0);
	assert_int_equal(cp_mf_list_proc(&l, 0, &p), 0);
	struct mfb pb;
	proc_start(&pb);
	add_packed(&pb, 1, 5);
	add_packed(&pb, 2, 1);
	add_unpack(&pb, 2);
	add_packed(&pb, 0, 2);
	mfb_finish(&pb);
	assert_int_equal(mfb_write(&pb, f.dir, "42.0.proc"), 0);
	char path[128];
	snprintf(path, sizeof path, "%s/42.0.0.thr", f.dir);
	assert_int_equal(unlink(path), 0);
	struct cp_mf_thr t;
	assert_int_equal(cp_mf_list_thread(&l, 0, 0, &p, &t), 0);
	assert_int_equal(t.hdr.tidx, 0);
	assert_int_equal(t.nnodes, 3);
	cp_mf_thr_release(&t);
	cp_mf_proc_release(&p);
	cp_mf_list_release(&l);
	free(pb.buf);
	dir_remove(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_last_record_decides),
	    cmocka_unit_test(test_damaged_records),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_directory),
	    cmocka_unit_test(test_list_packed_meanwhile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
