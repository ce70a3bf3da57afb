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
	/* Another process's module (offline unwinding, cp_modules_add): its image is mapped
	 * in this process at runtime address + image_delta (eh_frame_hdr points there).
	 * 0 and 0 for this process's own modules. */
	int64_t image_delta;
	uint32_t foreign;
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
/* Registers a module of another process (offline unwinding: the kernel-copy driver), its
 * image mapped here at m->image_delta from its runtime addresses; id, load_seq and the
 * unwind tables are filled in. Outside signal context. Its id, or CP_ENOMEM when full. */
int cp_modules_add(const struct cp_module *m);
/* Prepares the module of another process for cp_modules_add: maps the ELF file at open_path
 * read-only here; the target maps its file offset pgoff at map_start; name is its path
 * there (modules-image.c). cp_modules_map_memory: an image already mapped here (the vDSO,
 * the same in every process), at map_start in the target. 0 or a CP_E* code. */
int cp_modules_map_file(const char *open_path, const char *name, uint64_t map_start, uint64_t pgoff,
			struct cp_module *m);
int cp_modules_map_memory(const void *ehdr, uint64_t map_start, const char *name,
			  struct cp_module *m);
/* Marks every module unloaded (another process image follows). Outside signal context. */
void cp_modules_unload_all(void);
/* For fork children: forget nothing, but re-announce every live module to the listener. */
void cp_modules_replay(void);

#endif
