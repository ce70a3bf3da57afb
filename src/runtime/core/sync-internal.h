/* State shared by the two halves of the synchronous samples: sync.c (signal-time: the
 * recording primitive, the metric sources) and sync-init.c (init-time: configuration,
 * lifecycle, notes). Private to core/. */
#ifndef CP_RUNTIME_CORE_SYNC_INTERNAL_H
#define CP_RUNTIME_CORE_SYNC_INTERNAL_H

#include "runtime/core/runtime.h"
#include "runtime/core/sync.h"

#include <stdint.h>

/* One page that the kernel zeroes in every fork child (MADV_WIPEONFORK): a child made
 * without our fork handlers (libc-internal _Fork) shares our files' mappings and must not
 * write into them. Our fork handler sets `live` again in the child. Mapped by
 * cp_sync_start. */
struct cp_sync_guard {
	volatile int live;
};
extern struct cp_sync_guard *cp_sync_guard CP_HIDDEN;
/* Events on a busy thread: not attributed (a note at exit). */
extern uint64_t cp_sync_skipped_busy CP_HIDDEN;
/* The families' metrics, indexed by enum cp_sync_id. */
extern const struct cp_sample_source cp_sync_sources[CP_SM_COUNT] CP_HIDDEN;

#endif
