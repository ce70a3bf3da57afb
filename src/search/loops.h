/* Loop probes, the planning half (the runtime's half: src/runtime/probe/loop-install.c):
 * a function's loops and the edges that enter, iterate and leave them (Paradyn §4), from
 * the analyzer's CFG and loop nest, as the control channel's `loops` request.
 *
 * Depends on: analyze (cfg, loops, module), base. */
#ifndef CP_SEARCH_LOOPS_H
#define CP_SEARCH_LOOPS_H

#include "base/strbuf.h"

#include <stddef.h>
#include <stdint.h>

struct cp_loop_plan {
	struct strbuf request; /* the `loops` request's argument */
	struct strbuf notes;   /* edges not instrumented, one reason per line */
	size_t nloops, nedges;
	uint64_t func_lo, func_hi; /* the function's main part (ELF addresses) */
};

void cp_loop_plan_init(struct cp_loop_plan *p);
void cp_loop_plan_release(struct cp_loop_plan *p);

/* Plans the loop probes of function `func` (linkage or demangled name) of the module at
 * `path` (the path as the process maps it). 0; CP_ENOENT when the function is not there
 * or has no loops (message says which); CP_EFORMAT when the module cannot be read. */
int cp_loop_plan_make(struct cp_loop_plan *p, const char *path, const char *func);

/* Appends the module at path to the code model of the search (graph.h), with every
 * procedure: its function first_func + i is procedure i of its procedure table (PLT stubs
 * included, as callees), with the calls each makes (direct calls; the innermost loop of
 * the call site) and its loop nest. 0, or the module's error (nothing appended). */
struct cp_code_model;
int cp_code_model_from_module(struct cp_code_model *model, const char *path);

#endif
