/* Binary search over records sorted by a uint64_t field (base/search.h): the upper and
 * lower bounds and the exact find, against a linear scan, with repeated keys, keys
 * outside the range and the empty array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/search.h"

#include <stdint.h>

struct rec {
	uint32_t pad;
	uint64_t key;
};

static const struct rec recs[] = {{0, 0}, {1, 3}, {2, 3}, {3, 3}, {4, 7}, {5, 10}, {6, 20}};
static const size_t nrecs = sizeof recs / sizeof recs[0];

#define SEARCH(fn, n, k) fn(recs, n, sizeof recs[0], offsetof(struct rec, key), k)

static size_t scan(uint64_t key, int upper, int exact)
{
	for (size_t i = 0; i < nrecs; i++)
		if (exact ? recs[i].key == key : upper ? recs[i].key > key : recs[i].key >= key)
			return i;
	return nrecs;
}

static void test_bounds(void **state)
{
	(void)state;
	for (uint64_t key = 0; key <= 22; key++) {
		assert_int_equal(SEARCH(cp_upper_bound_u64, nrecs, key), scan(key, 1, 0));
		assert_int_equal(SEARCH(cp_lower_bound_u64, nrecs, key), scan(key, 0, 0));
		assert_int_equal(SEARCH(cp_find_u64, nrecs, key), scan(key, 0, 1));
	}
	assert_int_equal(SEARCH(cp_find_u64, nrecs, 3), 1); /* the first of equal keys */
	assert_int_equal(SEARCH(cp_find_u64, nrecs, UINT64_MAX), nrecs);
	assert_int_equal(SEARCH(cp_upper_bound_u64, 0, 5), 0);
	assert_int_equal(SEARCH(cp_lower_bound_u64, 0, 5), 0);
	assert_int_equal(SEARCH(cp_find_u64, 0, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
