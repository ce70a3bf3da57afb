/* Internal to the module registry: state shared by its writer (modules.c) and its
 * async-signal-safe reader (modules-find.c). */
#ifndef CP_RUNTIME_UNWIND_MODULES_INTERNAL_H
#define CP_RUNTIME_UNWIND_MODULES_INTERNAL_H

#include <stdint.h>

#include "runtime/unwind/modules.h"

struct cp_mod_range {
	uint64_t lo, hi;
	uint32_t slot;
};

extern struct cp_module cp_mod_slots[CP_MODULES_MAX];
extern uint32_t cp_mod_n_slots;				 /* published slots (release) */
extern struct cp_mod_range cp_mod_index[CP_MODULES_MAX]; /* sorted by lo */
extern uint32_t cp_mod_index_n;
extern uint32_t cp_mod_index_seq; /* odd while the index is rewritten */

#endif
