/* Load-module registry of the runtime: which code is mapped where, with its unwind tables.
 * Owned by the unwinder (it needs .eh_frame_hdr per module); the runtime core drives it.
 *
 * cp_modules_sync() runs outside signal context (init, after dlopen/dlclose) and may take
 * a lock and call dl_iterate_phdr. cp_modules_find() is async-signal-safe and lock-free:
 * the table is an append-only array of fixed slots published with release stores; an
 * unloaded module's slot is marked, never reused, so a reader racing with dlclose sees
 * either the old module or "unloaded", never a torn entry. */
#ifndef CP_RUNTIME_MODULES_H
#define CP_RUNTIME_MODULES_H

#include <stddef.h>
#include <stdint.h>

#define CP_MODULES_MAX 4096
#define CP_MODULE_PATH_MAX 512

struct cp_module {
	uint32_t id;	   /* process-wide, load order, never reused (cp_mf_module.id) */
	uint32_t unloaded; /* set (release) when the module disappeared */
	uint64_t bias;	   /* dlpi_addr */
	uint64_t text_lo;  /* executable PT_LOAD range, runtime addresses */
	uint64_t text_hi;
	/* Position of the load, and of the unload (0 while loaded), in the process's sequence
	 * of load/unload events as the registry saw them (1, 2, ...). One sync that finds
	 * both unloads and loads counts the unloads first. */
	uint64_t load_seq;
	uint64_t unload_seq;
	const uint8_t *eh_frame_hdr; /* PT_GNU_EH_FRAME, runtime address, or NULL */
	uint64_t eh_frame_hdr_size;
	uint32_t build_id_len;
	uint8_t build_id[32];
	char path[CP_MODULE_PATH_MAX];
	void *unwind_private; /* unwinder's per-module state (recipe cache, ...) */
};

/* Called (outside signal context, under the registry lock) for each module that appeared
 * or disappeared during a sync; the runtime writes CP_MF_REC_MODULE/UNLOAD records. */
struct cp_modules_listener {
	void (*loaded)(const struct cp_module *m, void *arg);
	void (*unloaded)(const struct cp_module *m, void *arg);
	void *arg;
};

int cp_modules_init(const struct cp_modules_listener *listener);
int cp_modules_sync(void);
/* Async-signal-safe. NULL if pc is in no known executable range. */
const struct cp_module *cp_modules_find(uintptr_t pc);
/* The modules seen so far, in load order, unloaded ones included (check `unloaded`):
 * slots [0, cp_modules_count()), each immutable once counted. Async-signal-safe. */
uint32_t cp_modules_count(void);
const struct cp_module *cp_modules_slot(uint32_t i);
/* For fork children: forget nothing, but re-announce every live module to the listener. */
void cp_modules_replay(void);

#endif
