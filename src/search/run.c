/* The experiment loop of `callpath search` (search.h, docs/cmd-search.md). */
#include "search/search.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "record/control.h"
#include "search/loops.h"
#include "search/procs.h"
#include "search/syncobj.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Probe costs measured on the development machine (docs/cmd-search.md, "Cost limit": CPU
 * time of probe.O2 stress 20000000 under probe -f work less under record, per call; of
 * search-loops.O2 with compute's loops probed, per iteration counted): used when they were
 * not calibrated on this machine at the start (calib.c; --no-calibrate). */
#define CALL_NS 80.0
#define EDGE_NS 33.0
/* Cost prediction of loop probes: an iteration of a loop's own code is assumed to take at
 * least this many ns per byte of that code (0.4 ns per 4-byte instruction: one
 * instruction per cycle at 2.5 GHz). Loops that call functions or miss the cache take
 * longer, so the prediction errs on the costly side. */
#define LOOP_NS_PER_BYTE 0.1
#define DEEP_MAX 3 /* Deep Start foci per hypothesis */
#define BATCH_MAX 16
#define THREADS_MAX 16	/* Machine refinements per code node */
#define MIN_CPU_NS 20e6 /* CPU time sampled in an experiment before it is decided */

static const int hyp_metric[CP_HYP_N] = {CP_SM_CPU, CP_SM_WAIT, CP_SM_IO, CP_SM_FAULTS};

enum { PS_NONE = 0, PS_ENTRY, PS_LOOPS, PS_REFUSED, PS_NOLOOPS, PS_COSTLY };

struct run {
	struct cp_search *s;
	struct cp_control ctl;
	struct cp_search_snap *snaps; /* by epoch */
	size_t nsnaps;
	uint32_t *epoch; /* per node: the snapshot its experiment started at */
	size_t epoch_alloc;
	int *need;	/* per function: pending experiments that need its probes */
	uint8_t *state; /* per function: PS_* */
	size_t nfuncs;	/* need[] and state[] cover the model's first nfuncs functions */
	char **tried;	/* libraries whose code model failed (not tried again) */
	size_t ntried;
	size_t batch;
	int connected;
};

static double now_s(void)
{
	return cp_search_now();
}

static void sleep_s(double s)
{
	cp_search_sleep(s, NULL);
}

/* The process ended, or the image searched was replaced by an exec (the next image's
 * process file exists). */
static int program_gone(const struct run *r)
{
	char path[PATH_MAX + 64];
	if (kill(r->s->pid, 0) && errno == ESRCH)
		return 1;
	if (r->s->gen < 0)
		return 0;
	snprintf(path, sizeof path, "%s/%d.%ld.proc", r->s->dir, r->s->pid, r->s->gen + 1);
	return !access(path, F_OK);
}

static int control_gone(void *arg)
{
	return program_gone(arg);
}

/* Sleeps up to t seconds, looking every 0.1 s: 1 as soon as the program ended or the
 * search was stopped (an interval of several seconds is not waited out for nothing). */
static int wait_s(const struct run *r, double t)
{
	for (double end = now_s() + t;;) {
		if (program_gone(r) || (r->s->o.stop && *r->s->o.stop))
			return 1;
		double left = end - now_s();
		if (left <= 0)
			return 0;
		sleep_s(left < 0.1 ? left : 0.1);
	}
}

/* need[] and state[] grown to the model's functions. */
static void funcs_grew(struct run *r)
{
	size_t n = r->s->model.nfuncs;
	if (n <= r->nfuncs)
		return;
	r->need = xrealloc(r->need, (n + 1) * sizeof *r->need);
	r->state = xrealloc(r->state, (n + 1) * sizeof *r->state);
	memset(r->need + r->nfuncs, 0, (n + 1 - r->nfuncs) * sizeof *r->need);
	memset(r->state + r->nfuncs, 0, (n + 1 - r->nfuncs) * sizeof *r->state);
	r->nfuncs = n;
}

/* Under --libraries user, a system library enters too once its own instructions hold a
 * quarter of the threshold of everything sampled (xz's time is in liblzma: without it the
 * search stopped at lzma_code's call site). */
static int hot_library(const struct run *r, const struct cp_search_snap *sn, size_t i)
{
	struct cp_search *s = r->s;
	double all = 0;
	for (int k = 0; k < CP_SM_N; k++)
		all += sn->total[k];
	if (s->o.libraries != CP_LIBS_USER ||
	    !cp_search_module_wanted(sn->modules[i], CP_LIBS_ALL) || all <= 0 ||
	    sn->module_own[i] < 0.25 * s->o.threshold * all)
		return 0;
	cp_search_note(s, "system library %s: %.0f%% of the samples at its own code",
		       sn->modules[i], 100 * sn->module_own[i] / all);
	return 1;
}

/* The libraries snapshot sn shows mapped that the model lacks (dlopen'ed ones too) enter
 * it, under the --libraries policy. 1 when one was added. */
static int add_modules(struct run *r, const struct cp_search_snap *sn)
{
	struct cp_search *s = r->s;
	int added = 0;
	for (size_t i = 0; i < sn->nmodules; i++) {
		const char *path = sn->modules[i];
		int tried = cp_code_model_module_find(&s->model, path) >= 0;
		for (size_t k = 0; k < r->ntried && !tried; k++)
			tried = !strcmp(r->tried[k], path);
		if (tried ||
		    !(cp_search_module_wanted(path, s->o.libraries) || hot_library(r, sn, i)))
			continue;
		size_t nf = s->model.nfuncs, nl = s->model.nloops;
		if (cp_code_model_from_module(&s->model, path)) {
			cp_search_note(s, "library %s not in the code model: %s", path,
				       cp_error_message());
			cp_error_clear();
			r->tried = xrealloc(r->tried, (r->ntried + 1) * sizeof *r->tried);
			r->tried[r->ntried++] = xstrdup(path);
			continue;
		}
		cp_search_note(s, "library %s: %zu functions, %zu loops in the code model", path,
			       s->model.nfuncs - nf, s->model.nloops - nl);
		added = 1;
	}
	funcs_grew(r);
	return added;
}

/* Calls seen on the sampled paths enter the model; a true focus that makes one gets the
 * callee as a refinement (it was refined before the call was seen). */
static void learn_calls(struct run *r, const struct cp_search_snap *sn)
{
	struct cp_search *s = r->s;
	for (size_t c = 0; c < sn->nseen; c++) {
		const struct cp_code_seen_call *k = &sn->seen[c];
		if (!cp_code_model_seen(&s->model, k->caller, k->callee, k->loop))
			continue;
		for (size_t i = 0; i < s->graph.n; i++) {
			const struct cp_search_node *n = &s->graph.nodes[i];
			int at = n->kind == CP_FOCUS_LOOP ? k->loop == (int32_t)n->target
							  : k->loop < 0 && n->target == k->caller;
			if (n->state == CP_NODE_TRUE && n->thread < 0 && at)
				cp_search_node_get(&s->graph, n->hyp, CP_FOCUS_FUNC, k->callee,
						   (int32_t)i);
		}
	}
}

static void grow(struct run *r);

/* A new snapshot (epoch); retries while the directory is being written. New libraries
 * and calls it shows enter the model (and it is read again over the larger model). */
static int snap(struct run *r, size_t *epoch)
{
	struct cp_search *s = r->s;
	r->snaps = xrealloc(r->snaps, (r->nsnaps + 1) * sizeof *r->snaps);
	struct cp_search_snap *sn = &r->snaps[r->nsnaps];
	cp_search_snap_init(sn);
	int rc = -1;
	for (int tries = 0; tries < 50 && rc; tries++) {
		rc = cp_search_snap_read(sn, &s->model, s->dir, s->pid, s->gen);
		if (!rc && add_modules(r, sn))
			rc = cp_search_snap_read(sn, &s->model, s->dir, s->pid, s->gen);
		if (rc)
			sleep_s(0.05);
	}
	if (rc)
		return rc;
	learn_calls(r, sn);
	grow(r);
	*epoch = r->nsnaps++;
	return 0;
}

/* Snapshots no pending node starts at are freed, but the last and keep (the start of the
 * round just measured: the loop-cost prediction's window, see predict_loop_cost). */
static void snaps_gc(struct run *r, size_t keep)
{
	const struct cp_search_graph *g = &r->s->graph;
	for (size_t e = 0; e + 1 < r->nsnaps; e++) {
		int used = e == keep;
		for (size_t i = 0; i < g->n && !used; i++)
			used = g->nodes[i].state == CP_NODE_PENDING && r->epoch[i] == e;
		if (!used)
			cp_search_snap_release(&r->snaps[e]);
	}
}

static void grow(struct run *r)
{
	struct cp_search *s = r->s;
	size_t old = r->epoch_alloc;
	if (old < s->graph.n) {
		XGROW(r->epoch, s->graph.n, r->epoch_alloc);
		memset(r->epoch + old, 0, (r->epoch_alloc - old) * sizeof *r->epoch);
	}
	cp_search_sync_info(s);
}

static void set_note(struct cp_search *s, uint32_t i, const char *why)
{
	char name[512];
	free(s->info[i].note);
	s->info[i].note = xstrdup(why);
	cp_search_focus_name(s, i, name, sizeof name);
	cp_search_note(s, "%s cannot be patched: %s (decided from samples only)", name, why);
}

/* The probe pattern of function f: MODULE:FUNCTION (the module's file name). */
static void func_pattern(const struct cp_search *s, uint32_t f, char *pat, size_t cap)
{
	const char *path = s->model.modules[s->model.funcs[f].module].path;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	snprintf(pat, cap, "%s:%s", base, s->model.funcs[f].name);
}

/* "add" of function f's entry probe: 0, or the refusal in why. */
static int add_entry(struct run *r, uint32_t f, char *why, size_t cap)
{
	char pat[1024], reply[CP_CONTROL_REPLY_MAX];
	func_pattern(r->s, f, pat, sizeof pat);
	int rc = cp_control_request(&r->ctl, "add", pat, reply, sizeof reply, 30), n = 0, ref = 0,
	    used = 0;
	if (rc) {
		snprintf(why, cap, "%s", cp_error_message());
		return rc;
	}
	sscanf(reply, "%d\t%d%n", &n, &ref, &used);
	if (!n && ref) {
		snprintf(why, cap, "%s", reply[used] ? reply + used + 1 : "refused");
		return CP_EINVAL;
	}
	return 0;
}

static int add_loops(struct run *r, uint32_t f, char *why, size_t cap)
{
	char reply[CP_CONTROL_REPLY_MAX];
	struct cp_loop_plan plan;
	cp_loop_plan_init(&plan);
	const struct cp_code_model *m = &r->s->model;
	int rc = cp_loop_plan_make(&plan, m->modules[m->funcs[f].module].path, m->funcs[f].name);
	if (!rc)
		rc = cp_control_request_long(&r->ctl, "loops", plan.request.buf, reply,
					     sizeof reply, 30);
	if (rc)
		snprintf(why, cap, "%s", cp_error_message());
	cp_loop_plan_release(&plan);
	return rc;
}

/* The bytes of loop l's own code: its ranges less those of its directly nested loops. */
static double loop_own_bytes(const struct cp_code_model *m, uint32_t l)
{
	double b = 0;
	for (size_t k = 0; k < m->nloops; k++) {
		const struct cp_code_loop *L = &m->loops[k];
		double sign = k == l ? 1 : L->parent == (int32_t)l ? -1 : 0;
		for (uint32_t j = 0; sign && j < L->nranges; j++)
			b += sign * (double)(m->ranges[L->first_range + j].hi -
					     m->ranges[L->first_range + j].lo);
	}
	return b > 16 ? b : 16;
}

/* The predicted cost of function f's loop probes, as a fraction of the time, before they
 * go in: per loop, the CPU time sampled in the loop's own code per ns of wall time (from
 * the earliest snapshot kept to the latest) divided by the shortest iteration that code
 * allows (LOOP_NS_PER_BYTE) gives the executions per ns; times the calibrated cost of
 * one. */
static double predict_loop_cost(const struct run *r, uint32_t f)
{
	const struct cp_search *s = r->s;
	const struct cp_search_snap *b = &r->snaps[r->nsnaps - 1], *a = NULL;
	for (size_t e = 0; e + 1 < r->nsnaps && !a; e++)
		if (r->snaps[e].funcs)
			a = &r->snaps[e];
	double c = 0, wall = a ? (b->wall - a->wall) * 1e9 : 0;
	for (size_t l = 0; l < s->model.nloops && wall > 0; l++)
		if (s->model.loops[l].func == f)
			c += cp_search_snap_delta(a, b, CP_FOCUS_LOOP, (uint32_t)l).own_cpu / wall *
			     s->per_edge_ns /
			     (loop_own_bytes(&s->model, (uint32_t)l) * LOOP_NS_PER_BYTE);
	return c;
}

/* The note of a loop node of function f (a copy), NULL if none has one. */
static char *loops_note(const struct cp_search *s, uint32_t f)
{
	for (size_t j = 0; j < s->graph.n; j++) {
		const struct cp_search_node *o = &s->graph.nodes[j];
		if (o->kind == CP_FOCUS_LOOP && s->model.loops[o->target].func == f &&
		    s->info[j].note)
			return xstrdup(s->info[j].note);
	}
	return NULL;
}

/* The probes node i's experiment needs (its function's entry; its loops for a loop). */
static void install(struct run *r, uint32_t i)
{
	struct cp_search *s = r->s;
	const struct cp_search_node *n = &s->graph.nodes[i];
	uint32_t f = n->kind == CP_FOCUS_LOOP ? s->model.loops[n->target].func : n->target;
	char why[CP_CONTROL_REPLY_MAX];
	r->need[f]++;
	if (r->state[f] == PS_NONE) {
		if (add_entry(r, f, why, sizeof why)) {
			r->state[f] = PS_REFUSED;
			set_note(s, i, why);
			return;
		}
		r->state[f] = PS_ENTRY;
	}
	if (r->state[f] == PS_REFUSED || r->state[f] == PS_COSTLY) {
		if (!s->info[i].note)
			s->info[i].note = xstrdup(r->state[f] == PS_REFUSED
						      ? "its function cannot be patched"
						      : "its probes cost more than the limit");
		return;
	}
	if (n->kind == CP_FOCUS_LOOP && r->state[f] == PS_NOLOOPS && !s->info[i].note)
		s->info[i].note = loops_note(s, f); /* why its function's loops are not probed */
	/* Loop probes for CPUBound, ExcessiveSyncWaiting and ExcessiveIOBlocking (samples and
	 * the wait/io triggers unwind through the relocated copy); MemoryBound is decided on
	 * its fault samples alone. */
	if (n->kind != CP_FOCUS_LOOP || r->state[f] != PS_ENTRY || n->hyp == CP_HYP_MEM)
		return;
	double predicted = r->nsnaps ? predict_loop_cost(r, f) : 0;
	if (predicted > s->o.cost_limit) {
		char pat[1024];
		r->state[f] = PS_NOLOOPS;
		snprintf(why, sizeof why,
			 "loop probes not inserted: predicted to cost %.0f%% of the time",
			 100 * predicted);
		free(s->info[i].note);
		s->info[i].note = xstrdup(why);
		func_pattern(s, f, pat, sizeof pat);
		cp_search_note(s, "%s: %s (over the %.0f%% limit); its loops decided from samples",
			       pat, why, 100 * s->o.cost_limit);
		return;
	}
	if (add_loops(r, f, why, sizeof why)) {
		r->state[f] = PS_NOLOOPS;
		set_note(s, i, why);
		return;
	}
	r->state[f] = PS_LOOPS;
}

static void uninstall(struct run *r, uint32_t f)
{
	char pat[1024], reply[CP_CONTROL_REPLY_MAX];
	if (--r->need[f] > 0 || r->state[f] == PS_NONE || r->state[f] == PS_REFUSED ||
	    r->state[f] == PS_COSTLY)
		return;
	func_pattern(r->s, f, pat, sizeof pat);
	if (cp_control_request(&r->ctl, "remove", pat, reply, sizeof reply, 30))
		cp_error_clear(); /* the program went away: nothing to remove */
	r->state[f] = PS_NONE;
}

/* The time hypothesis h's values are fractions of over (a, b]: CPUBound's and
 * MemoryBound's (page faults are handled on a CPU) the runnable time of the threads that
 * ran; the waits' the wall time of the threads with activity (a wait's time is wall time,
 * a thread's wait for a CPU while it polls included). */
static double hyp_time(int h, const struct cp_search_snap *a, const struct cp_search_snap *b)
{
	return h == CP_HYP_CPU || h == CP_HYP_MEM ? cp_search_snap_cpu_time(a, b)
						  : cp_search_snap_time(a, b);
}

/* The value of hypothesis h on focus values d over (a, b]: a fraction of the program's
 * time. CPUBound: the CPU time sampled in the focus, or the probes' time in it less their
 * own calibrated cost when that is more (samples that land in a loop probe's snippets are
 * not charged to the loop; the probes' time counts only finished activations). */
static double hyp_value(const struct cp_search *s, int h, const struct cp_search_node *n,
			const struct cp_focus_values *d, const struct cp_search_snap *a,
			const struct cp_search_snap *b, int leaf)
{
	double time = hyp_time(h, a, b);
	double v = leaf ? d->leaf[hyp_metric[h]] : d->sampled[hyp_metric[h]];

	if (h == CP_HYP_CPU && !leaf) {
		/* wall time: less the share its threads waited for a CPU */
		double nact = 0;
		for (size_t i = 0; i < b->nthreads; i++)
			nact += cp_search_snap_thread_cpu(a, b, b->tids[i]) > 0;
		double wall = (b->wall - a->wall) * 1e9 * (nact > 0 ? nact : 1);
		double own = d->iterations ? (d->iterations + d->calls) * s->per_edge_ns
					   : d->calls * s->per_call_ns;
		double p = (d->probe_ns - own) * (wall > time ? time / wall : 1);
		if (p > v)
			v = p;
	}
	v /= time;
	if (h == CP_HYP_SYNC && !leaf) /* an OpenMP team's imbalance: its waits at barriers */
		v += cp_search_snap_team_wait(a, b, &s->model, n->kind, n->target, 0);
	return v > 1 ? 1 : v;
}

/* Loop l's probe executions (entries and iterations) over (a, b]. */
static double loop_executions(const struct cp_search_snap *a, const struct cp_search_snap *b,
			      uint32_t l)
{
	struct cp_focus_values d = cp_search_snap_delta(a, b, CP_FOCUS_LOOP, l);
	return d.calls + d.iterations;
}

/* The probes' cost over (a, b]: executions times the calibrated costs, as a fraction. */
static double probe_cost(const struct cp_search *s, const struct cp_search_snap *a,
			 const struct cp_search_snap *b)
{
	double ns = 0, time = (b->wall - a->wall) * 1e9;
	for (size_t f = 0; f < s->model.nfuncs; f++)
		ns += cp_search_snap_delta(a, b, CP_FOCUS_FUNC, (uint32_t)f).calls * s->per_call_ns;
	for (size_t l = 0; l < s->model.nloops; l++)
		ns += loop_executions(a, b, (uint32_t)l) * s->per_edge_ns;
	return time > 0 ? ns / time : 0;
}

/* The cost of function f's probes over (a, b], as a fraction of the time. */
static double func_cost(const struct cp_search *s, uint32_t f, const struct cp_search_snap *a,
			const struct cp_search_snap *b)
{
	double ns = cp_search_snap_delta(a, b, CP_FOCUS_FUNC, f).calls * s->per_call_ns;
	for (size_t l = 0; l < s->model.nloops; l++)
		if (s->model.loops[l].func == f)
			ns += loop_executions(a, b, (uint32_t)l) * s->per_edge_ns;
	return ns / ((b->wall - a->wall) * 1e9 + 1);
}

/* The cost check early in a round: the probes of a function that cost more than the limit
 * are removed at once; its experiments go on from samples alone, from snapshot e on. */
static void check_cost(struct run *r, size_t e0, size_t e)
{
	struct cp_search *s = r->s;
	char pat[1024], reply[CP_CONTROL_REPLY_MAX], why[256];
	for (uint32_t f = 0; f < s->model.nfuncs; f++) {
		if (r->state[f] != PS_ENTRY && r->state[f] != PS_LOOPS)
			continue;
		double c = func_cost(s, f, &r->snaps[e0], &r->snaps[e]);
		if (c <= s->o.cost_limit)
			continue;
		func_pattern(s, f, pat, sizeof pat);
		if (cp_control_request(&r->ctl, "remove", pat, reply, sizeof reply, 30))
			cp_error_clear();
		r->state[f] = PS_COSTLY;
		snprintf(why, sizeof why, "probes removed: they cost %.1f%% of the time", 100 * c);
		cp_search_note(s, "%s: %s (over the %.0f%% limit); decided from samples", pat, why,
			       100 * s->o.cost_limit);
		for (size_t i = 0; i < s->graph.n; i++) {
			const struct cp_search_node *n = &s->graph.nodes[i];
			uint32_t g =
			    n->kind == CP_FOCUS_LOOP ? s->model.loops[n->target].func : n->target;
			if (n->state != CP_NODE_PENDING || g != f)
				continue;
			r->epoch[i] = (uint32_t)e;
			free(s->info[i].note);
			s->info[i].note = xstrdup(why);
		}
	}
}

/* Machine hierarchy: true code node i refined to the threads of the program, decided at
 * once on the per-thread samples of the same experiment (a, b] (no probes needed). Only
 * for programs with more than one thread; at most THREADS_MAX threads, those with values. */
static void refine_threads(struct run *r, uint32_t i, const struct cp_search_snap *a,
			   const struct cp_search_snap *b, double t)
{
	struct cp_search *s = r->s;
	const struct cp_search_node n = s->graph.nodes[i];
	int k = hyp_metric[n.hyp];
	if (b->nthreads < 2)
		return;
	double time = hyp_time((int)n.hyp, a, b);
	for (size_t j = 0, made = 0; j < b->nthreads && made < THREADS_MAX; j++) {
		double v = cp_search_snap_thread_value(a, b, b->tids[j], n.kind, n.target, k);
		v /= time;
		if (n.hyp == CP_HYP_SYNC)
			v +=
			    cp_search_snap_team_wait(a, b, &s->model, n.kind, n.target, b->tids[j]);
		if (v <= 0)
			continue;
		v = v > 1 ? 1 : v;
		uint32_t c =
		    cp_search_node_thread(&s->graph, i, cp_search_thread_index(s, b->tids[j]));
		if (s->graph.nodes[c].state != CP_NODE_QUEUED)
			continue;
		grow(r);
		s->graph.nodes[c].state = CP_NODE_PENDING;
		s->info[c].started = s->info[i].started;
		cp_search_decide(&s->graph, &s->model, c, v >= s->o.threshold, v, t);
		s->experiments++;
		made++;
	}
}

/* MemoryBound is a share of the program's time measured from samples alone: over an
 * interval in which probes (other experiments') cost more than the limit, that time is
 * largely theirs. bench/search's pagefault, with a spin loop's probes in (before the
 * loop-cost prediction worked), ran 2 rounds instead of ~12 in half a second and its
 * fault storm read 16 % instead of ~45 %; a prediction can still be short (a snippet's
 * cost in a 2-ns loop: ~150 ns, not the 33 assumed). Such a node's experiment starts
 * again at snapshot b (returns 1), for up to 4 intervals from its start. */
static int perturbed(struct run *r, uint32_t i, const struct cp_search_snap *a,
		     const struct cp_search_snap *b)
{
	struct cp_search *s = r->s;
	if (s->graph.nodes[i].hyp != CP_HYP_MEM || probe_cost(s, a, b) <= s->o.cost_limit ||
	    now_s() - s->t0 - s->info[i].started >= 4 * s->o.interval)
		return 0;
	r->epoch[i] = (uint32_t)(b - r->snaps);
	return 1;
}

/* Decides node i on its experiment (a, b], unless too little was measured (and the
 * program still runs) or, for MemoryBound, the probes perturbed it. */
static void decide(struct run *r, uint32_t i, const struct cp_search_snap *b, int last)
{
	struct cp_search *s = r->s;
	const struct cp_search_snap *a = &r->snaps[r->epoch[i]];
	struct cp_search_node *n = &s->graph.nodes[i];
	struct cp_focus_values d = cp_search_snap_delta(a, b, n->kind, n->target);
	double cpu = b->total[CP_SM_CPU] - a->total[CP_SM_CPU];
	if (!last &&
	    ((cpu < MIN_CPU_NS && b->wall - a->wall < 4 * s->o.interval) || perturbed(r, i, a, b)))
		return;
	uint32_t f = n->kind == CP_FOCUS_LOOP ? s->model.loops[n->target].func : n->target;
	double v = hyp_value(s, (int)n->hyp, n, &d, a, b, 0), t = now_s() - s->t0;
	int yes = v >= s->o.threshold;
	struct cp_search_info *in = &s->info[i];
	in->calls = d.calls;
	in->iterations = d.iterations;
	in->probe_ns = d.probe_ns;
	cp_search_decide(&s->graph, &s->model, i, yes, v, t);
	grow(r);
	if (yes && s->graph.nodes[i].thread < 0)
		refine_threads(r, i, a, b, t);
	if (yes && s->graph.nodes[i].hyp == CP_HYP_SYNC && s->graph.nodes[i].sync < 0 &&
	    cp_search_sync_refine(s, i, a, b, t))
		grow(r);
	n = &s->graph.nodes[i]; /* refining may have grown (moved) the node array */
	s->experiments++;
	uninstall(r, f);
	if (s->o.progress) {
		char name[512];
		cp_search_focus_name(s, i, name, sizeof name);
		fprintf(s->o.progress, "callpath search: %6.2fs %-20s %s: %s (%.1f%%)\n", t,
			cp_hyp_names[n->hyp], name, yes ? "true" : "false", 100 * v);
	}
}

/* Deep Start: the functions that hold the threshold's share of the sampling phase (a, b]
 * themselves (the innermost frame of the executable on the sampled paths: the deep ends of
 * the hottest paths), at most DEEP_MAX per hypothesis, start first. */
static void deep_start(struct run *r, const struct cp_search_snap *a,
		       const struct cp_search_snap *b)
{
	struct cp_search *s = r->s;
	const struct cp_code_model *m = &s->model;
	double *v = xcalloc(m->nfuncs + 1, sizeof *v);
	for (int h = 0; h < CP_HYP_N; h++) {
		if (!(s->o.hyps & (1u << h)))
			continue;
		for (size_t f = 0; f < m->nfuncs; f++) {
			struct cp_focus_values d =
			    cp_search_snap_delta(a, b, CP_FOCUS_FUNC, (uint32_t)f);
			v[f] = hyp_value(s, h, NULL, &d, a, b, 1);
		}
		for (int k = 0; k < DEEP_MAX; k++) {
			long best = -1;
			for (size_t f = 0; f < m->nfuncs; f++) {
				int deeper = 0;
				for (uint32_t c = 0; c < m->funcs[f].ncalls && !deeper; c++) {
					uint32_t g = m->calls[m->funcs[f].first_call + c].callee;
					deeper = g != f && v[g] >= s->o.threshold;
				}
				if (v[f] >= s->o.threshold && !deeper && !m->funcs[f].plt &&
				    (best < 0 || v[f] > v[best]))
					best = (long)f;
			}
			if (best < 0)
				break;
			uint32_t i = cp_search_node_get(&s->graph, (uint32_t)h, CP_FOCUS_FUNC,
							(uint32_t)best, -1);
			s->graph.nodes[i].deep = 1;
			v[best] = -1;
		}
	}
	free(v);
	grow(r);
}

/* The executable's entry point (_start; sub_HEX when stripped), 0 when unknown. */
static uint64_t entry_point(const char *exe)
{
	Elf64_Ehdr h;
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : pread(fd, &h, sizeof h, 0);
	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof h && !memcmp(h.e_ident, ELFMAG, SELFMAG) ? h.e_entry : 0;
}

/* The roots, for every hypothesis: main, and the functions of the executable that were
 * entered from outside it (a thread's start routine, a callback) with samples so far
 * (snapshot a), except _start (only the dynamic loader's entry: main is the root there),
 * also when stripped (its sub_HEX at the ELF entry point cannot be probed). */
static void roots(struct run *r, const struct cp_search_snap *a)
{
	struct cp_search *s = r->s;
	uint64_t entry = entry_point(s->exe);
	for (int h = 0; h < CP_HYP_N; h++)
		for (size_t f = 0; (s->o.hyps & (1u << h)) && f < s->model.nfuncs; f++) {
			const struct cp_code_func *fn = &s->model.funcs[f];
			int is_main = !strcmp(fn->name, "main");
			int is_start = !strcmp(fn->name, "_start") || (entry && fn->lo == entry);
			if (fn->lo && !fn->module && !fn->plt && f < a->nfuncs &&
			    (is_main || (a->funcs[f].entry[hyp_metric[h]] > 0 && !is_start)))
				cp_search_node_get(&s->graph, (uint32_t)h, CP_FOCUS_FUNC,
						   (uint32_t)f, -1);
		}
	grow(r);
}

/* Starts the queued experiments the budget allows; they start at the next snapshot. */
static size_t start(struct run *r, uint32_t *started)
{
	struct cp_search *s = r->s;
	size_t k = 0;
	if (s->cost_last > 2 * s->o.cost_limit) {
		s->queued_rounds++;
		return 0;
	}
	k = cp_search_next(&s->graph, s->o.cost_limit, started, r->batch);
	for (size_t j = 0; j < k; j++) {
		s->info[started[j]].started = now_s() - s->t0;
		install(r, started[j]);
	}
	return k;
}

static int pending_or_queued(const struct cp_search_graph *g, int pending)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->nodes[i].state == (pending ? CP_NODE_PENDING : CP_NODE_QUEUED))
			return 1;
	return 0;
}

/* One round: start what the budget allows, measure an interval, decide. 1 when the
 * search goes on. */
static int round_(struct run *r, uint32_t *started)
{
	struct cp_search *s = r->s;
	size_t k = start(r, started), e0, e1;
	if (snap(r, &e0))
		return -1;
	for (size_t j = 0; j < k; j++)
		r->epoch[started[j]] = (uint32_t)e0;
	if (!pending_or_queued(&s->graph, 1) && !pending_or_queued(&s->graph, 0))
		return 0;
	/* the cost is checked every fifth of the interval, over the last check's window (a
	 * thread enters a probed function's copy only at its next call) */
	double check = s->o.interval / 5 > 0.05 ? s->o.interval / 5 : 0.05, t_end = now_s();
	t_end += s->o.interval;
	int early = 0; /* the program ended, or the search was stopped */
	for (size_t ep = e0, ec; !early && now_s() + check < t_end; ep = ec) {
		early = wait_s(r, check);
		if (snap(r, &ec))
			return -1;
		check_cost(r, ep, ec);
	}
	if (!early)
		early = wait_s(r, t_end - now_s());
	if (early && s->o.stop && *s->o.stop && !program_gone(r)) {
		s->interrupted = 1; /* stopped: nothing decided on a cut-short interval */
		return 0;
	}
	int gone = program_gone(r);
	if (snap(r, &e1))
		return -1;
	const struct cp_search_snap *b = &r->snaps[e1];
	gone |= b->done;
	s->cost_last = probe_cost(s, &r->snaps[e0], b);
	s->cost_sum += s->cost_last * (b->wall - r->snaps[e0].wall);
	if (s->cost_last > s->cost_max)
		s->cost_max = s->cost_last;
	r->batch = s->cost_last > s->o.cost_limit ? (r->batch + 1) / 2
		   : r->batch < BATCH_MAX	  ? r->batch + 2
						  : r->batch;
	for (size_t i = 0; i < s->graph.n; i++)
		if (s->graph.nodes[i].state == CP_NODE_PENDING)
			decide(r, (uint32_t)i, b, gone);
	s->intervals++;
	snaps_gc(r, e0);
	if (gone) {
		s->program_exited = 1;
		return 0;
	}
	return 1;
}

static int connect_(struct run *r)
{
	for (int tries = 0; tries < 100; tries++) {
		if (!cp_control_open(&r->ctl, r->s->pid, r->s->dir)) {
			r->ctl.gone = control_gone;
			r->ctl.gone_arg = r;
			r->connected = 1;
			return 0;
		}
		if (program_gone(r))
			break;
		sleep_s(0.05);
	}
	return cp_error(CP_ENOENT, "cannot reach process %d through its control channel: %s",
			r->s->pid, cp_error_message());
}

static void run_release(struct run *r)
{
	for (size_t e = 0; e < r->nsnaps; e++)
		cp_search_snap_release(&r->snaps[e]);
	for (size_t i = 0; i < r->ntried; i++)
		free(r->tried[i]);
	free(r->tried);
	free(r->snaps);
	free(r->epoch);
	free(r->need);
	free(r->state);
	if (r->connected)
		cp_control_close(&r->ctl);
}

/* The probes' costs: calibrated (o.calib done), or the constants until it is (when it is
 * still running) or for good (said in a note). */
static void set_costs(struct cp_search *s)
{
	const struct cp_search_costs *c = &s->o.costs;
	if (s->o.calib && !cp_search_calib_poll(s->o.calib, &s->o.costs)) {
		s->per_call_ns = CALL_NS;
		s->per_edge_ns = EDGE_NS;
		if (!s->costs_pending)
			cp_search_note(s,
				       "probe costs: the constants %.0f ns per call, %.0f ns per "
				       "loop snippet execution until the calibration ends",
				       s->per_call_ns, s->per_edge_ns);
		s->costs_pending = 1;
		return;
	}
	double at = s->costs_pending ? now_s() - s->t0 : 0;
	s->costs_pending = 0;
	s->o.calib = NULL; /* final */
	s->per_call_ns = c->calibrated ? c->per_call_ns : CALL_NS;
	s->per_edge_ns = c->calibrated ? c->per_edge_ns : EDGE_NS;
	if (c->calibrated)
		cp_search_note(s,
			       "probe costs calibrated on this machine%s: %.1f ns per entry "
			       "probe call, %.1f ns per loop snippet execution (in %.2f s, %.2f "
			       "s of CPU time)",
			       at > 0 ? " (used from then on)" : "", s->per_call_ns, s->per_edge_ns,
			       c->wall_s, c->cpu_s);
	else if (c->why[0])
		cp_search_note(s,
			       "probe costs not calibrated (%s): the constants %.0f ns per call, "
			       "%.0f ns per loop snippet execution",
			       c->why, s->per_call_ns, s->per_edge_ns);
	if (at > 0 && s->o.progress)
		fprintf(s->o.progress, "callpath search: %6.2fs  probe costs calibrated\n", at);
}

static int run_loop(struct run *r)
{
	struct cp_search *s = r->s;
	uint32_t *started = xcalloc(BATCH_MAX, sizeof *started);
	size_t e0, e1;
	int rc = snap(r, &e0);
	if (!rc && (s->o.hyps & (1u << CP_HYP_SYNC)))
		cp_search_sync_start(s, &r->snaps[e0]);
	if (!rc && s->o.deep_start) {
		wait_s(r, s->o.interval);
		rc = snap(r, &e1);
		if (!rc)
			deep_start(r, &r->snaps[e0], &r->snaps[e1]);
	}
	if (!rc)
		roots(r, &r->snaps[r->nsnaps - 1]);
	while (!rc) {
		if (s->costs_pending)
			set_costs(s);
		if (program_gone(r)) {
			s->program_exited = 1;
			break;
		}
		if (s->o.stop && *s->o.stop) {
			s->interrupted = 1;
			break;
		}
		if (s->o.for_s > 0 && now_s() - s->t0 >= s->o.for_s) {
			s->stopped_by_for = 1;
			break;
		}
		int more = round_(r, started);
		if (more < 0)
			rc = more;
		if (more <= 0)
			break;
	}
	free(started);
	return rc;
}

int cp_search_run(struct cp_search *s)
{
	struct run r;
	memset(&r, 0, sizeof r);
	r.s = s;
	r.batch = 4;
	funcs_grew(&r);
	set_costs(s);
	int rc = connect_(&r);
	if (!rc) {
		wait_s(&r, s->o.after);
		s->t0 = now_s();
		rc = run_loop(&r);
		s->elapsed = now_s() - s->t0;
	}
	if (rc && program_gone(&r)) { /* ended before the search could start */
		s->program_exited = 1;
		cp_error_clear();
		rc = 0;
	}
	run_release(&r);
	return rc;
}
