/* Structure files: build, serialize, read back, look up; the reader rejects every
 * truncation and every corrupted byte of the body, and a newer major version. */
#include "base/error.h"
#include "format/structure.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct sample {
	void *buf;
	size_t len;
	uint32_t proc, loop, inl, stmt_a, stmt_b;
};

/* proc f [0x1000,0x1100): stmt a.c:10 [0x1000,0x1010); loop [0x1010,0x1080) with an
 * inlined g (called at a.c:12) holding stmt g.h:3 [0x1020,0x1040). */
static void build(struct sample *s)
{
	struct cp_structure_builder b;
	cp_structure_builder_init(&b);
	struct cp_st_scope sc = {.parent = CP_ST_NONE, .kind = CP_ST_PROC, .addr = 0x1000};
	sc.name = cp_structure_builder_string(&b, "f");
	sc.file = cp_structure_builder_string(&b, "a.c");
	s->proc = cp_structure_builder_scope(&b, &sc);
	struct cp_st_scope loop = {.parent = s->proc,
				   .kind = CP_ST_LOOP,
				   .addr = 0x1010,
				   .line = 11,
				   .line_lo = 11,
				   .line_hi = 14};
	loop.file = sc.file;
	s->loop = cp_structure_builder_scope(&b, &loop);
	struct cp_st_scope inl = {.parent = s->loop, .kind = CP_ST_INLINE, .aux_line = 12};
	inl.name = cp_structure_builder_string(&b, "g");
	inl.aux = sc.file;
	s->inl = cp_structure_builder_scope(&b, &inl);
	struct cp_st_scope st = {.parent = s->proc, .kind = CP_ST_STMT, .line = 10};
	st.file = sc.file;
	s->stmt_a = cp_structure_builder_scope(&b, &st);
	st.parent = s->inl;
	st.file = cp_structure_builder_string(&b, "g.h");
	st.line = 3;
	s->stmt_b = cp_structure_builder_scope(&b, &st);
	/* Added out of order and in pieces: the writer sorts and merges. */
	cp_structure_builder_range(&b, 0x1040, 0x1080, s->loop);
	cp_structure_builder_range(&b, 0x1020, 0x1030, s->stmt_b);
	cp_structure_builder_range(&b, 0x1030, 0x1040, s->stmt_b);
	cp_structure_builder_range(&b, 0x1000, 0x1010, s->stmt_a);
	cp_structure_builder_range(&b, 0x1010, 0x1020, s->loop);
	cp_structure_builder_range(&b, 0x1080, 0x1100, s->proc);
	struct cp_st_edge e = {0x1078, 0x1010, s->loop, CP_ST_EDGE_BACK};
	cp_structure_builder_edge(&b, &e);
	b.hdr.module_path = cp_structure_builder_string(&b, "/bin/test");
	assert_int_equal(cp_structure_builder_finish(&b, &s->buf, &s->len), 0);
	cp_structure_builder_release(&b);
}

static void test_roundtrip(void **state)
{
	struct sample s;
	build(&s);
	struct cp_structure st;
	assert_int_equal(cp_structure_load(&st, s.buf, s.len, "t"), 0);
	assert_int_equal(st.hdr->nprocs, 1);
	assert_int_equal(st.hdr->nloops, 1);
	assert_int_equal(st.hdr->nranges, 5); /* 0x1020-0x1040 merged */
	assert_string_equal(cp_structure_string(&st, st.hdr->module_path), "/bin/test");
	assert_int_equal(cp_structure_lookup(&st, 0x1000), s.stmt_a);
	assert_int_equal(cp_structure_lookup(&st, 0x103f), s.stmt_b);
	assert_int_equal(cp_structure_lookup(&st, 0x1050), s.loop);
	assert_int_equal(cp_structure_lookup(&st, 0x10ff), s.proc);
	assert_int_equal(cp_structure_lookup(&st, 0x1100), CP_ST_NONE);
	assert_int_equal(cp_structure_lookup(&st, 0xfff), CP_ST_NONE);
	uint32_t chain[8];
	assert_int_equal(cp_structure_chain(&st, 0x1025, chain, 8), 4);
	assert_int_equal(chain[0], s.proc);
	assert_int_equal(chain[1], s.loop);
	assert_int_equal(chain[2], s.inl);
	assert_int_equal(chain[3], s.stmt_b);
	/* Too small a buffer keeps the innermost scopes. */
	assert_int_equal(cp_structure_chain(&st, 0x1025, chain, 2), 2);
	assert_int_equal(chain[0], s.inl);
	assert_int_equal(chain[1], s.stmt_b);
	assert_int_equal(cp_structure_chain(&st, 0x2000, chain, 8), 0);
	assert_string_equal(cp_structure_string(&st, st.scopes[s.stmt_b].file), "g.h");
	assert_int_equal(st.hdr->nedges, 1);
	assert_int_equal(st.edges[0].loop, s.loop);
	cp_structure_release(&st);
	free(s.buf);
}

static void test_truncations(void **state)
{
	struct sample s;
	build(&s);
	for (size_t n = 0; n < s.len; n++) {
		struct cp_structure st;
		int rc = cp_structure_load(&st, s.buf, n, "t");
		assert_int_equal(rc, CP_EFORMAT);
		assert_non_null(strstr(cp_error_message(), "structure file")
				    ?: strstr(cp_error_message(), "t:"));
	}
	free(s.buf);
}

static void test_corrupt_bytes(void **state)
{
	struct sample s;
	build(&s);
	uint8_t *copy = malloc(s.len);
	for (size_t i = 0; i < s.len; i++) {
		memcpy(copy, s.buf, s.len);
		copy[i] ^= 0x5a;
		struct cp_structure st;
		int rc = cp_structure_load(&st, copy, s.len, "t");
		if (i >= sizeof(struct cp_st_header)) {
			assert_int_equal(rc, CP_EFORMAT); /* the checksum covers the body */
		} else if (!rc) {
			/* A header byte that validation does not need (reserved, counts by kind,
			 * module identity): the tables are still consistent. */
			assert_int_equal(cp_structure_lookup(&st, 0x1025), s.stmt_b);
			cp_structure_release(&st);
		}
	}
	free(copy);
	free(s.buf);
}

static void test_version(void **state)
{
	struct sample s;
	build(&s);
	struct cp_st_header *h = s.buf;
	h->version_major = CP_ST_VERSION_MAJOR + 1;
	struct cp_structure st;
	assert_int_equal(cp_structure_load(&st, s.buf, s.len, "t"), CP_EFORMAT);
	assert_non_null(strstr(cp_error_message(), "version"));
	free(s.buf);
}

/* The checksum is part of the format: FNV-1a 64 of the body started at the offset basis the
 * first writer used (1469598103934665603), computed here independently of the writer, so
 * files written before stay readable. */
static void test_checksum_value(void **state)
{
	(void)state;
	struct sample s;
	build(&s);
	const struct cp_st_header *h = s.buf;
	uint64_t sum = 1469598103934665603ull;
	for (size_t i = h->header_size; i < s.len; i++)
		sum = (sum ^ ((const uint8_t *)s.buf)[i]) * 1099511628211ull;
	assert_true(h->checksum == sum);
	free(s.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),	   cmocka_unit_test(test_truncations),
	    cmocka_unit_test(test_corrupt_bytes),  cmocka_unit_test(test_version),
	    cmocka_unit_test(test_checksum_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
