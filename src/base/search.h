/* Binary search over arrays of records sorted by a uint64_t field. */
#ifndef CP_BASE_SEARCH_H
#define CP_BASE_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/* Index of the first of n records (stride bytes apart, sorted by the uint64_t at byte
 * offset `at` of each) whose field is above key; n when none is. The records before it
 * are those whose field is <= key. */
size_t cp_upper_bound_u64(const void *base, size_t n, size_t stride, size_t at, uint64_t key);

/* Index of the first record whose field is key or above; n when none is. */
size_t cp_lower_bound_u64(const void *base, size_t n, size_t stride, size_t at, uint64_t key);

/* Index of a record whose field is exactly key (the first such); n when none is. */
size_t cp_find_u64(const void *base, size_t n, size_t stride, size_t at, uint64_t key);

#endif
