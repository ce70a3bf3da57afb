/* The shared hash table (base/hash.h) and string interning (base/intern.h): FNV-1a against
 * the published test vectors (the structure format's checksum depends on them), lookups
 * through growth and collisions, clearing, and interning's one pointer per string. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/hash.h"
#include "base/intern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Vectors from the FNV reference (draft-eastlake-fnv, test suite for FNV-1a 64). */
static void test_fnv1a(void **state)
{
	(void)state;
	assert_true(cp_hash_str("") == 0xcbf29ce484222325ull);
	assert_true(cp_hash_str("a") == 0xaf63dc4c8601ec8cull);
	assert_true(cp_hash_str("foobar") == 0x85944171f73967e8ull);
	/* continuing a hash equals hashing the concatenation */
	uint64_t h = cp_fnv1a(CP_FNV1A_INIT, "foo", 3);
	assert_true(cp_fnv1a(h, "bar", 3) == cp_hash_str("foobar"));
	assert_true(cp_hash_mix(1, 2) != cp_hash_mix(2, 1));
	assert_true(cp_hash_u64(1) != cp_hash_u64(2));
}

struct entries {
	uint64_t *keys;
	size_t n;
};

static int key_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct entries *)ctx)->keys[idx] == *(const uint64_t *)key;
}

/* hash_bits: how many low bits of the key the hash keeps (few = long collision chains) */
static void fill_and_check(uint64_t hash_mask, size_t n)
{
	struct entries e = {calloc(n, sizeof(uint64_t)), 0};
	struct cp_hashtab t;
	cp_hashtab_init(&t);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = i * 7919 + 13;
		assert_int_equal(cp_hashtab_find(&t, k & hash_mask, key_eq, &e, &k), CP_HASH_NONE);
		e.keys[e.n] = k;
		cp_hashtab_insert(&t, k & hash_mask, (uint32_t)e.n++);
	}
	assert_int_equal(t.n, n);
	assert_true(t.cap * 3 >= t.n * 4);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = i * 7919 + 13;
		assert_int_equal(cp_hashtab_find(&t, k & hash_mask, key_eq, &e, &k), i);
		uint64_t absent = k + 1; /* never a key: keys are 13 mod 7919 */
		assert_int_equal(cp_hashtab_find(&t, absent & hash_mask, key_eq, &e, &absent),
				 CP_HASH_NONE);
	}
	cp_hashtab_release(&t);
	free(e.keys);
}

static void test_table(void **state)
{
	(void)state;
	struct cp_hashtab t;
	cp_hashtab_init(&t);
	uint64_t k = 1;
	assert_int_equal(cp_hashtab_find(&t, 5, key_eq, NULL, &k), CP_HASH_NONE);
	cp_hashtab_release(&t);
	fill_and_check(UINT64_MAX, 100000);
	fill_and_check(0xf, 2000); /* 16 hashes: every lookup walks a collision chain */
	fill_and_check(0xffffffff00000000ull, 500); /* hashes equal in the kept low 32 bits */
}

static void test_clear(void **state)
{
	(void)state;
	uint64_t keys[300];
	struct entries e = {keys, 0};
	struct cp_hashtab t;
	cp_hashtab_init(&t);
	for (int round = 0; round < 3; round++) {
		e.n = 0;
		for (uint64_t i = 0; i < 300; i++) {
			uint64_t k = i + 1000 * (uint64_t)round;
			keys[e.n] = k;
			cp_hashtab_insert(&t, cp_hash_u64(k), (uint32_t)e.n++);
		}
		size_t cap = t.cap;
		uint64_t old = 1000 * (uint64_t)(round - 1) + 5, cur = 1000 * (uint64_t)round + 5;
		assert_int_equal(cp_hashtab_find(&t, cp_hash_u64(cur), key_eq, &e, &cur), 5);
		if (round)
			assert_int_equal(cp_hashtab_find(&t, cp_hash_u64(old), key_eq, &e, &old),
					 CP_HASH_NONE);
		cp_hashtab_clear(&t);
		assert_int_equal(t.n, 0);
		assert_int_equal(t.cap, cap);
		assert_int_equal(cp_hashtab_find(&t, cp_hash_u64(cur), key_eq, &e, &cur),
				 CP_HASH_NONE);
	}
	cp_hashtab_release(&t);
}

static void test_intern(void **state)
{
	(void)state;
	struct cp_intern in;
	cp_intern_init(&in);
	char buf[32];
	const char *first[5000];
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof buf, "name-%d", i);
		first[i] = cp_intern(&in, buf); /* new: grows the table */
		assert_int_equal(cp_intern_id(&in, buf), i);
		assert_string_equal(first[i], buf);
		assert_ptr_not_equal(first[i], buf);
	}
	for (int i = 0; i < 5000; i++) { /* same pointers after the table grew */
		snprintf(buf, sizeof buf, "name-%d", i);
		assert_ptr_equal(cp_intern(&in, buf), first[i]);
		assert_ptr_equal(in.by_id[i], first[i]);
	}
	assert_int_equal(in.count, 5000);
	assert_int_equal(cp_intern_id(&in, ""), 5000);
	cp_intern_release(&in);
	assert_int_equal(in.count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fnv1a),
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_clear),
	    cmocka_unit_test(test_intern),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
