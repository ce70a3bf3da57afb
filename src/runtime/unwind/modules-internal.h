/* Internal to the module registry: state shared by its writer (modules.c) and its
 * async-signal-safe reader (modules-find.c). */
#ifndef CP_RUNTIME_UNWIND_MODULES_INTERNAL_H
#define CP_RUNTIME_UNWIND_MODULES_INTERNAL_H

#include <stddef.h>
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

/* Sets m's build id from the PT_NOTE segment at [p, p + size) (this process's memory). */
void cp_module_read_build_id(struct cp_module *m, const uint8_t *p, size_t size);

#endif
