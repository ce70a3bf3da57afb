/* CFGs of the procedures of an opened load module: the oracle (procedure entries from the
 * procedure table, no-return callees by name, jump tables read from the image) and the
 * gathering of a procedure's parts and bytes. The glue the structure recovery uses. */
#ifndef CP_ANALYZE_CFG_MODULE_H
#define CP_ANALYZE_CFG_MODULE_H

#include "analyze/cfg/cfg.h"
#include "analyze/module.h"

struct cp_cfg_module {
	const struct cp_module *m;
	uint8_t *noreturn; /* per procedure: calls to it do not return */
	struct cp_cfg_part *parts;
	size_t parts_alloc;
};

/* Precomputes the no-return procedures (cp_cfg_noreturn_name on every name and alias,
 * including PLT stubs `exit@plt` and glibc's internal `__GI_exit`). m must outlive cm. */
void cp_cfg_module_init(struct cp_cfg_module *cm, const struct cp_module *m);
void cp_cfg_module_release(struct cp_cfg_module *cm);
struct cp_cfg_oracle cp_cfg_module_oracle(struct cp_cfg_module *cm);
/* Builds the CFG of procedure `proc` (index into m->procs.procs) with the module oracle.
 * CP_ENOENT when its entry is not inside an executable section with data. */
int cp_cfg_module_build(struct cp_cfg_module *cm, struct cp_cfg *cfg, size_t proc,
			const struct cp_cfg_oracle *oracle);

/* Marks as no-return every procedure none of whose paths can return (all end in traps,
 * no-return calls or tail calls to no-return procedures), e.g. glibc's static
 * malloc_printerr: one pass over the module, then again over the callers of each
 * procedure found, until nothing changes.
 * Without this, a call to such a function looks like it falls through into whatever
 * follows, which invents edges (and irreducible loops). cfg is scratch. Returns how many
 * procedures were added. */
size_t cp_cfg_module_infer_noreturn(struct cp_cfg_module *cm, struct cp_cfg *cfg);

#endif
