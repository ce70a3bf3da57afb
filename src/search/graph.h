/* The Performance Consultant's search history graph and its refinement rule (Paradyn's
 * loop-aware search, paper §5), independent of how experiments are measured:
 *
 *   - a code model: functions, the calls each makes (and the innermost loop the call site
 *     lies in), and the loop nest of each function;
 *   - nodes (hypothesis, focus), focus = a function or a loop, with their state: queued
 *     (waiting for budget), pending (measuring), true, false;
 *   - refinement of a true node: a function refines into the functions it calls outside
 *     every loop plus its outermost loops; a loop into the functions called directly in it
 *     (not inside a nested loop) plus its directly nested loops. A false node is pruned:
 *     nothing below it is ever created. A (hypothesis, focus) reached along two paths is
 *     one node (the graph is a DAG);
 *   - the cost limit: experiments start only while the measured cost of those running is
 *     below the limit; the rest stay queued, deep-start foci (hinted by sampling) first.
 *
 * Pure data structure; the command (src/search/search.c, next) runs the experiments
 * through the control channel. Depends on: base. */
#ifndef CP_SEARCH_GRAPH_H
#define CP_SEARCH_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- code model ----
 * Module > procedure > loop: the executable first (module 0), then the shared libraries
 * the search adds while the program runs (dlopen'ed ones too). Functions and loops are
 * appended module by module: an index, once given, never changes. */
struct cp_code_module {
	char *path;		     /* as the process maps it */
	uint32_t first_func, nfuncs; /* model.funcs */
};

struct cp_code_func {
	char *name;
	uint32_t module;	     /* model.modules */
	uint32_t plt;		     /* a PLT stub: not a focus (the call's target is, once seen
				      * on a sampled path: cp_code_model_seen) */
	uint32_t first_call, ncalls; /* model.calls */
	uint64_t lo, hi;	     /* its main part's addresses (0, 0 when unknown) */
};

struct cp_code_call {
	uint32_t callee;
	int32_t loop; /* innermost loop (model.loops index) of the call site, -1 none */
};

struct cp_code_loop {
	uint32_t func;
	int32_t parent; /* enclosing loop, -1 outermost */
	uint64_t header;
	uint64_t lo, hi;	       /* lowest address of its blocks and end of the highest
					* (0, 0 when unknown) */
	uint32_t first_range, nranges; /* model.ranges: its blocks' address ranges (none:
					* lo..hi is the loop) */
};

struct cp_code_range {
	uint64_t lo, hi;
};

/* A split-off part of a function (GCC's foo.cold: a C++ throw, an unlikely error path). */
struct cp_code_part {
	uint32_t func;
	uint64_t lo, hi;
};

/* A call seen on sampled call paths (an indirect call, a call into another module through
 * its PLT): caller's call site in loop `loop` (-1 none) reached callee. */
struct cp_code_seen_call {
	uint32_t caller, callee;
	int32_t loop;
};

struct cp_code_model {
	struct cp_code_module *modules;
	size_t nmodules, modules_alloc;
	struct cp_code_seen_call *seen;
	size_t nseen, seen_alloc;
	struct cp_code_func *funcs;
	size_t nfuncs, funcs_alloc;
	struct cp_code_call *calls;
	size_t ncalls, calls_alloc;
	struct cp_code_loop *loops;
	size_t nloops, loops_alloc;
	struct cp_code_range *ranges;
	size_t nranges, ranges_alloc;
	struct cp_code_part *parts;
	size_t nparts, parts_alloc;
};

void cp_code_model_init(struct cp_code_model *m);
void cp_code_model_release(struct cp_code_model *m);
/* Appends a module (its functions follow, cp_code_model_func); its index. */
uint32_t cp_code_model_module(struct cp_code_model *m, const char *path);
/* The module of that path, or -1. */
long cp_code_model_module_find(const struct cp_code_model *m, const char *path);
/* Appends a function of the last module; its calls must be added right after
 * (cp_code_model_call). */
uint32_t cp_code_model_func(struct cp_code_model *m, const char *name);
void cp_code_model_call(struct cp_code_model *m, uint32_t caller, uint32_t callee, int32_t loop);
uint32_t cp_code_model_loop(struct cp_code_model *m, uint32_t func, int32_t parent,
			    uint64_t header);
/* Adds a split-off part [lo, hi) to function f. */
void cp_code_model_part(struct cp_code_model *m, uint32_t f, uint64_t lo, uint64_t hi);
/* Adds an address range to loop l (the last loop added); lo/hi grow to cover it. */
void cp_code_model_loop_range(struct cp_code_model *m, uint32_t l, uint64_t lo, uint64_t hi);
/* Does loop l hold address a? */
int cp_code_model_loop_has(const struct cp_code_model *m, uint32_t l, uint64_t a);
/* Records a call seen on a sampled path (once per caller, callee, loop): 1 when new. */
int cp_code_model_seen(struct cp_code_model *m, uint32_t caller, uint32_t callee, int32_t loop);
/* Is callee called from func at `level` (-1: outside every loop of func; else directly in
 * that loop), by a static call or one seen on a sampled path? */
int cp_code_model_calls_at(const struct cp_code_model *m, uint32_t func, int32_t level,
			   uint32_t callee);

/* ---- the search history graph ---- */
enum cp_focus_kind { CP_FOCUS_FUNC = 0, CP_FOCUS_LOOP = 1 };
enum cp_node_state { CP_NODE_QUEUED = 0, CP_NODE_PENDING, CP_NODE_TRUE, CP_NODE_FALSE };

struct cp_search_node {
	uint32_t hyp;
	uint8_t kind;	 /* enum cp_focus_kind */
	uint8_t state;	 /* enum cp_node_state */
	uint8_t deep;	 /* proposed by the sampling phase (Deep Start): runs first */
	uint32_t target; /* function or loop index in the model */
	int32_t thread;	 /* Machine hierarchy: the focus restricted to thread `thread` (an index
			  * the caller keeps), -1 for the whole process */
	int32_t parent;	 /* the node it was refined from (first path), -1 for a root */
	int32_t sync;	 /* SyncObject hierarchy: the sync focus (an index the caller keeps;
			  * kind/target then name the function of its top call site), -1 for
			  * none; such a node is added and refined by its caller (syncobj.c) */
	double value;	 /* measured value (fraction of time), when decided */
	double decided;	 /* seconds since the search began */
	double cost;	 /* measured cost of its probes while pending (fraction of time) */
};

struct cp_search_graph {
	struct cp_search_node *nodes;
	size_t n, alloc;
};

void cp_search_graph_init(struct cp_search_graph *g);
void cp_search_graph_release(struct cp_search_graph *g);
/* The node of (hyp, kind, target), added queued under parent when new. Its index. */
uint32_t cp_search_node_get(struct cp_search_graph *g, uint32_t hyp, int kind, uint32_t target,
			    int32_t parent);
/* The Machine refinement of node i to thread t: the node (hypothesis and code focus of i,
 * thread t), added queued under i when new. A thread node is not refined further. */
uint32_t cp_search_node_thread(struct cp_search_graph *g, uint32_t i, int32_t t);
/* A SyncObject node (hypothesis hyp, sync focus `sync`, code focus function target) under
 * parent (-1: a root), added queued when new. */
uint32_t cp_search_node_sync(struct cp_search_graph *g, uint32_t hyp, uint32_t target, int32_t sync,
			     int32_t parent);
/* Decides node i: true or false with its value at time t. A true node is refined (its
 * children are queued; not Machine or SyncObject nodes); returns the children added. */
size_t cp_search_decide(struct cp_search_graph *g, const struct cp_code_model *m, uint32_t i,
			int is_true, double value, double t);
/* Up to max queued nodes to start now (deep-start ones first, then in creation order)
 * while the pending nodes' cost stays below limit; they become pending. Returns how many
 * were written to out. */
size_t cp_search_next(struct cp_search_graph *g, double limit, uint32_t *out, size_t max);

/* The graph as DOT (a digraph, nodes labelled hypothesis, focus, state, value). hyps
 * names the hypotheses by index. */
void cp_search_graph_dot(const struct cp_search_graph *g, const struct cp_code_model *m,
			 const char *const *hyps, FILE *out);

#endif
