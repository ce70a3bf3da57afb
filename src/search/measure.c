/* Reading the live measurement of the searched program (measure.h). */
#include "search/measure.h"
#include "search/procs.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "format/measure-read.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* probe metrics, and mpi-time (libcallpath-mpi's wrappers: a wait for ExcessiveSyncWaiting) */
enum { PM_PTIME = 0, PM_CALLS, PM_LTIME, PM_LENTRIES, PM_LITER, PM_MPI, PM_N };

/* MemoryBound: the time of a page fault at least (a first touch of an anonymous page on the
 * development machine: CPU time over 100,000 touches) and at most (FAULT_MAX_NS) */
#define FAULT_NS 2000.0
#define FAULT_MAX_NS 20000.0

static const char *const smetric_name[CP_SM_N] = {"cputime", "wait-time", "io-time", "page-faults"};
static const char *const pmetric_name[PM_N] = {"probe-time",   "calls",		  "loop-time",
					       "loop-entries", "loop-iterations", "mpi-time"};

/* Address lookups over the model, built per read. */
struct index {
	const struct cp_code_model *m;
	uint32_t *funcs; /* by module, then lo */
	size_t nfuncs;
	uint32_t *fstamp, *lstamp, gen;
	uint32_t *loop_first, *loops; /* function f's loops: loops[loop_first[f]..[f + 1]) */
	uint32_t *parts;	      /* the model's split-off parts, by module, then lo */
	int32_t *modmap;	      /* the measurement's module id -> model module, -1 */
	uint8_t *omp;		      /* the measurement's module id -> enum omp_class */
	int32_t *modidx; /* the measurement's module id -> index in snap->modules, -1 */
	size_t nmodmap;
	int has_omp; /* an OpenMP runtime or an MPI library is mapped */
};

/* What a module is to a parallel runtime's wait (as analyze's omp-wait): the OpenMP
 * runtime, the MPI library, libc (the waits they call), other. */
enum omp_class { OMP_OTHER = 0, OMP_RUNTIME, OMP_MPI, OMP_LIBC };

static uint8_t omp_class_of(const char *path)
{
	static const char *const omp[] = {"libgomp.so", "libomp.so", "libiomp5.so"};
	static const char *const mpi[] = {"libmpi", "libopen-pal", "libopen-rte", "libpmix",
					  "libcallpath-mpi"};
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	for (size_t i = 0; i < sizeof omp / sizeof *omp; i++)
		if (!strncmp(base, omp[i], strlen(omp[i])))
			return OMP_RUNTIME;
	for (size_t i = 0; i < sizeof mpi / sizeof *mpi; i++)
		if (!strncmp(base, mpi[i], strlen(mpi[i])))
			return OMP_MPI;
	return strncmp(base, "libc.so", 7) ? OMP_OTHER : OMP_LIBC;
}

/* Is node i's sample a parallel runtime's wait: below its last frame outside libc and the
 * runtimes, a frame of the OpenMP runtime (a barrier, a worker waiting for work: OMP_RUNTIME)
 * or of the MPI library (a call polling for a message: OMP_MPI)? OMP_OTHER if not. */
static int runtime_wait(const struct index *x, const struct cp_mf_thr *t, size_t i)
{
	int found = OMP_OTHER;
	for (size_t n = i, hops = 0; n < t->nnodes && n && hops < 256; hops++) {
		const struct cp_mf_rnode *r = &t->nodes[n];
		if (r->kind != CP_MF_NODE_CALL && r->kind != CP_MF_NODE_PC)
			break;
		uint8_t c = r->module < x->nmodmap ? x->omp[r->module] : OMP_OTHER;
		if (c == OMP_OTHER)
			break;
		if (c != OMP_LIBC)
			found = c;
		if (r->parent >= n)
			break;
		n = r->parent;
	}
	return found;
}

static const struct cp_code_model *sort_model;
static int by_lo(const void *a, const void *b)
{
	const struct cp_code_func *x = &sort_model->funcs[*(const uint32_t *)a];
	const struct cp_code_func *y = &sort_model->funcs[*(const uint32_t *)b];
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int part_by_lo(const void *a, const void *b)
{
	const struct cp_code_part *x = &sort_model->parts[*(const uint32_t *)a];
	const struct cp_code_part *y = &sort_model->parts[*(const uint32_t *)b];
	uint32_t mx = sort_model->funcs[x->func].module, my = sort_model->funcs[y->func].module;
	if (mx != my)
		return mx < my ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Each function's loops, so that a frame looks at its function's loops only: scanning
 * every loop of the model per frame took seconds per snapshot once a hot system library
 * entered it (Debian's sort: libc's 4618 loops; no experiment was decided for 6 s). */
static void index_loops(struct index *x, const struct cp_code_model *m)
{
	x->loop_first = xcalloc(m->nfuncs + 2, sizeof *x->loop_first);
	x->loops = xcalloc(m->nloops + 1, sizeof *x->loops);
	for (size_t l = 0; l < m->nloops; l++)
		if (m->loops[l].func < m->nfuncs)
			x->loop_first[m->loops[l].func + 2]++;
	for (size_t f = 2; f < m->nfuncs + 2; f++)
		x->loop_first[f] += x->loop_first[f - 1];
	for (size_t l = 0; l < m->nloops; l++)
		if (m->loops[l].func < m->nfuncs)
			x->loops[x->loop_first[m->loops[l].func + 1]++] = (uint32_t)l;
}

static void index_init(struct index *x, const struct cp_code_model *m)
{
	memset(x, 0, sizeof *x);
	x->m = m;
	x->funcs = xcalloc(m->nfuncs + 1, sizeof *x->funcs);
	for (size_t i = 0; i < m->nfuncs; i++)
		if (m->funcs[i].lo < m->funcs[i].hi)
			x->funcs[x->nfuncs++] = (uint32_t)i;
	sort_model = m;
	qsort(x->funcs, x->nfuncs, sizeof *x->funcs, by_lo);
	x->fstamp = xcalloc(m->nfuncs + 1, sizeof *x->fstamp);
	x->lstamp = xcalloc(m->nloops + 1, sizeof *x->lstamp);
	index_loops(x, m);
	x->parts = xcalloc(m->nparts + 1, sizeof *x->parts);
	for (size_t i = 0; i < m->nparts; i++)
		x->parts[i] = (uint32_t)i;
	qsort(x->parts, m->nparts, sizeof *x->parts, part_by_lo);
}

static void index_release(struct index *x)
{
	free(x->modmap);
	free(x->omp);
	free(x->modidx);
	free(x->funcs);
	free(x->fstamp);
	free(x->lstamp);
	free(x->loop_first);
	free(x->loops);
	free(x->parts);
}

/* The function whose split-off part (foo.cold) of model module mod holds a, or -1: a
 * frame there is its function's (a C++ throw is in main.cold: without this a search of a
 * program whose time is in exceptions found main at a third of its time). */
static long part_at(const struct index *x, uint32_t mod, uint64_t a)
{
	size_t lo = 0, hi = x->m->nparts;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct cp_code_part *p = &x->m->parts[x->parts[mid]];
		uint32_t pm = x->m->funcs[p->func].module;
		if (mod < pm || (mod == pm && a < p->lo))
			hi = mid;
		else if (mod > pm || a >= p->hi)
			lo = mid + 1;
		else
			return p->func;
	}
	return -1;
}

/* The model's function at address a of the measurement's module id, or -1. */
static long func_at(const struct index *x, uint32_t id, uint64_t a)
{
	if (id >= x->nmodmap || x->modmap[id] < 0)
		return -1;
	uint32_t mod = (uint32_t)x->modmap[id];
	size_t lo = 0, hi = x->nfuncs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct cp_code_func *f = &x->m->funcs[x->funcs[mid]];
		if (mod < f->module || (mod == f->module && a < f->lo))
			hi = mid;
		else if (mod > f->module || a >= f->hi)
			lo = mid + 1;
		else
			return x->funcs[mid];
	}
	return part_at(x, mod, a);
}

/* The innermost loop of function f holding address a, or -1. */
static int32_t loop_of(const struct index *x, uint32_t f, uint64_t a)
{
	const struct cp_code_model *m = x->m;
	int32_t best = -1;
	uint64_t span = UINT64_MAX;
	for (uint32_t k = x->loop_first[f]; k < x->loop_first[f + 1]; k++) {
		uint32_t l = x->loops[k];
		if (m->loops[l].hi - m->loops[l].lo < span && cp_code_model_loop_has(m, l, a)) {
			span = m->loops[l].hi - m->loops[l].lo;
			best = (int32_t)l;
		}
	}
	return best;
}

void cp_search_snap_init(struct cp_search_snap *s)
{
	memset(s, 0, sizeof *s);
}

void cp_search_snap_release(struct cp_search_snap *s)
{
	free(s->funcs);
	free(s->loops);
	free(s->tids);
	free(s->thread_cpu);
	free(s->thread_any);
	free(s->thread_run);
	free(s->region);
	free(s->thread_vals);
	free(s->thread_delay);
	free(s->thread_lost);
	free(s->thread_at);
	free(s->seen);
	for (size_t i = 0; i < s->nmodules; i++)
		free(s->modules[i]);
	free(s->modules);
	free(s->module_own);
	cp_search_snap_init(s);
}

static void add_values(double *to, const double *v)
{
	for (int k = 0; k < CP_SM_N; k++)
		to[k] += v[k];
}

/* Charges the sampled values v of node i once to each function and loop on its path;
 * `entry` relative to the executable (model module 0), `leaf` to every module modeled. */
static void charge_path(struct cp_search_snap *s, struct index *x, const struct cp_mf_thr *t,
			size_t i, const double *v)
{
	const struct cp_code_model *m = x->m;
	double *tv = &s->thread_vals[s->nthreads * s->nfoci * CP_SM_N];
	int leaf = 1, pc = 1; /* pc: the sample's own frame (modeled or not) not yet passed */
	long prev = -1;	      /* the executable's function of the frame below */
	x->gen++;
	for (size_t n = i, hops = 0; n < t->nnodes && hops < CP_MF_READ_MAX_DEPTH; hops++) {
		const struct cp_mf_rnode *r = &t->nodes[n];
		int frame = r->kind == CP_MF_NODE_CALL || r->kind == CP_MF_NODE_PC ||
			    r->kind == CP_MF_NODE_SIGNAL;
		uint64_t a = r->offset - (r->kind == CP_MF_NODE_CALL && r->offset);
		long f = frame ? func_at(x, r->module, a) : -1;
		long fexe = f >= 0 && !m->funcs[f].module ? f : -1;
		if (fexe < 0 && prev >= 0) /* prev was called from outside the executable */
			add_values(s->funcs[prev].entry, v);
		if (frame || fexe >= 0 || r->parent == UINT32_MAX)
			prev = fexe;
		int own_pc = pc;
		pc &= !frame;
		if (f >= 0) {
			int32_t own = own_pc && frame ? loop_of(x, (uint32_t)f, a) : -1;
			if (own >= 0) /* the sample's own pc: not a call made in the loop, into
				       * the program or a library left out of the model */
				s->loops[own].own_cpu += v[CP_SM_CPU];
			if (leaf)
				add_values(s->funcs[f].leaf, v);
			leaf = 0;
			if (x->has_omp && r->parent < n &&
			    (t->nodes[r->parent].kind == CP_MF_NODE_REGION ||
			     t->nodes[r->parent].kind == CP_MF_NODE_TASK))
				s->region[f] = 1; /* the outlined function of a region */
			if (x->fstamp[f] != x->gen) {
				x->fstamp[f] = x->gen;
				add_values(s->funcs[f].sampled, v);
				add_values(&tv[(size_t)f * CP_SM_N], v);
			}
			for (uint32_t k = x->loop_first[f]; k < x->loop_first[f + 1]; k++) {
				uint32_t l = x->loops[k];
				if (x->lstamp[l] != x->gen && cp_code_model_loop_has(m, l, a)) {
					x->lstamp[l] = x->gen;
					add_values(s->loops[l].sampled, v);
					add_values(&tv[(m->nfuncs + l) * CP_SM_N], v);
				}
			}
		}
		if (r->parent == UINT32_MAX || r->parent >= n)
			break;
		n = r->parent;
	}
	if (prev >= 0)
		add_values(s->funcs[prev].entry, v);
}

/* The calls on the thread's paths that the model has no static call for (an indirect
 * call, a call into a library through its PLT): each frame of a modeled function and the
 * nearest frame above it, when that is a modeled function too. */
static void seen_calls(struct cp_search_snap *s, const struct index *x, const struct cp_mf_thr *t)
{
	for (size_t i = 1; i < t->nnodes; i++) {
		const struct cp_mf_rnode *r = &t->nodes[i];
		if (r->kind != CP_MF_NODE_CALL && r->kind != CP_MF_NODE_PC)
			continue;
		long g = func_at(x, r->module, r->offset - (r->kind == CP_MF_NODE_CALL));
		uint32_t p = r->parent; /* skip OpenMP region and task nodes */
		while (
		    g >= 0 && p < i && p &&
		    (t->nodes[p].kind == CP_MF_NODE_REGION || t->nodes[p].kind == CP_MF_NODE_TASK))
			p = t->nodes[p].parent;
		if (g < 0 || p >= i || !p || t->nodes[p].kind != CP_MF_NODE_CALL)
			continue;
		uint64_t site = t->nodes[p].offset - 1;
		long f = func_at(x, t->nodes[p].module, site);
		if (f < 0 || f == g)
			continue;
		int32_t loop = loop_of(x, (uint32_t)f, site);
		if (cp_code_model_calls_at(x->m, (uint32_t)f, loop, (uint32_t)g))
			continue;
		size_t k = 0;
		while (k < s->nseen &&
		       (s->seen[k].caller != (uint32_t)f || s->seen[k].callee != (uint32_t)g ||
			s->seen[k].loop != loop))
			k++;
		if (k == s->nseen) {
			s->seen = xrealloc(s->seen, (s->nseen + 1) * sizeof *s->seen);
			s->seen[s->nseen++] =
			    (struct cp_code_seen_call){(uint32_t)f, (uint32_t)g, loop};
		}
	}
}

/* Has node i an ancestor probe node at the same offset? */
static int nested_probe(const struct cp_mf_thr *t, size_t i)
{
	const struct cp_mf_rnode *r = &t->nodes[i];
	for (uint32_t p = r->parent, hops = 0; p < i && hops < CP_MF_READ_MAX_DEPTH; hops++) {
		const struct cp_mf_rnode *q = &t->nodes[p];
		if (q->kind == CP_MF_NODE_PC && q->module == r->module && q->offset == r->offset)
			return 1;
		if (q->parent == UINT32_MAX || q->parent >= p)
			break;
		p = q->parent;
	}
	return 0;
}

static long loop_at(const struct cp_code_model *m, uint32_t mod, uint64_t header)
{
	for (size_t l = 0; l < m->nloops; l++)
		if (m->loops[l].header == header && m->funcs[m->loops[l].func].module == mod)
			return (long)l;
	return -1;
}

/* Probe values of a thread: functions by their entry, loops by their header. */
static void probe_values(struct cp_search_snap *s, struct index *x, const struct cp_mf_thr *t,
			 const int *pm)
{
	size_t nm = t->hdr.nmetrics;
	double *incl = xcalloc(t->nnodes + 1, sizeof *incl);
	for (size_t i = t->nnodes; i-- > 0;) {
		if (pm[PM_PTIME] >= 0)
			incl[i] += (double)t->values[i * nm + (size_t)pm[PM_PTIME]];
		if (i && t->nodes[i].parent < i)
			incl[t->nodes[i].parent] += incl[i];
	}
	for (size_t i = 1; i < t->nnodes; i++) {
		const struct cp_mf_rnode *r = &t->nodes[i];
		const uint64_t *v = &t->values[i * nm];
		if (r->kind != CP_MF_NODE_PC || r->module >= x->nmodmap || x->modmap[r->module] < 0)
			continue;
		double calls = pm[PM_CALLS] >= 0 ? (double)v[pm[PM_CALLS]] : 0;
		double ent = pm[PM_LENTRIES] >= 0 ? (double)v[pm[PM_LENTRIES]] : 0;
		double it = pm[PM_LITER] >= 0 ? (double)v[pm[PM_LITER]] : 0;
		if (calls > 0 || incl[i] > 0) {
			long f = func_at(x, r->module, r->offset);
			if (f >= 0 && x->m->funcs[f].lo == r->offset && !nested_probe(t, i)) {
				s->funcs[f].probe_ns += incl[i];
				s->funcs[f].calls += calls;
			}
		}
		long l = ent > 0 || it > 0
			     ? loop_at(x->m, (uint32_t)x->modmap[r->module], r->offset)
			     : -1;
		if (l >= 0) {
			s->loops[l].calls += ent;
			s->loops[l].iterations += it;
			if (!nested_probe(t, i) && pm[PM_LTIME] >= 0)
				s->loops[l].probe_ns += (double)v[pm[PM_LTIME]];
		}
	}
	free(incl);
}

/* The time of `faults` page faults sampled at an instruction where `cpu` ns of CPU time
 * were sampled too: a signal-driven sampler charges the kernel's fault handling to the
 * instruction that faulted, so that CPU time is the faults' time, measured — bounded by
 * FAULT_NS and FAULT_MAX_NS per fault (an instruction that faulted once and then ran hot
 * is not a fault storm). */
static double fault_time(double faults, double cpu)
{
	double lo = faults * FAULT_NS, hi = faults * FAULT_MAX_NS;
	return cpu > hi ? hi : cpu > lo ? cpu : lo;
}

/* A node's values at its own instruction, to its module (the search admits a system library
 * by them, run.c add_modules). */
static void own_in_module(struct cp_search_snap *s, const struct index *x,
			  const struct cp_mf_rnode *r, double own)
{
	if (own > 0 && r->kind == CP_MF_NODE_PC && r->module < x->nmodmap &&
	    x->modidx[r->module] >= 0)
		s->module_own[x->modidx[r->module]] += own;
}

/* The schedstat of every thread of process pid, read just before its measurement files
 * are: run and delay (ns) and when they were read (monotonic seconds), by tid. */
struct sched_table {
	int *tids;
	double (*v)[3];
	size_t n;
};

static void sched_table_read(struct sched_table *st, int pid)
{
	char path[96];
	memset(st, 0, sizeof *st);
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *dir = opendir(path);
	for (struct dirent *e; dir && (e = readdir(dir));) {
		unsigned long long run = 0, delay = 0;
		int tid = atoi(e->d_name);
		snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", pid, tid);
		FILE *f = tid > 0 ? fopen(path, "r") : NULL;
		if (f && fscanf(f, "%llu %llu", &run, &delay) == 2) {
			st->tids = xrealloc(st->tids, (st->n + 1) * sizeof *st->tids);
			st->v = xrealloc(st->v, (st->n + 1) * sizeof *st->v);
			st->tids[st->n] = tid;
			st->v[st->n][0] = (double)run, st->v[st->n][1] = (double)delay;
			st->v[st->n++][2] = cp_search_now();
		}
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
}

/* Thread t's entry: run[0], delay[1], [2] when read (0: not found, or it has ended). */
static void sched_of(const struct sched_table *st, const struct cp_mf_thr *t, double sched[3])
{
	sched[0] = sched[1] = sched[2] = 0;
	for (size_t i = 0; i < st->n && !t->hdr.end_ns; i++)
		if (st->tids[i] == t->hdr.tid)
			memcpy(sched, st->v[i], sizeof st->v[i]);
}

static void read_thread(struct cp_search_snap *s, struct index *x, const struct cp_mf_thr *t,
			const int *sm, const int *pm, double period, const double *sched)
{
	size_t nm = t->hdr.nmetrics, per = s->nfoci * CP_SM_N;
	double cpu = 0, any_sum = 0;
	s->thread_vals = xrealloc(s->thread_vals, (s->nthreads + 1) * per * sizeof *s->thread_vals);
	memset(s->thread_vals + s->nthreads * per, 0, per * sizeof *s->thread_vals);
	for (size_t i = 0; i < t->nnodes; i++) {
		double v[CP_SM_N] = {0};
		int any = 0;
		for (int k = 0; k < CP_SM_N; k++)
			if (sm[k] >= 0)
				v[k] = (double)t->values[i * nm + (size_t)sm[k]];
		if (pm[PM_MPI] >= 0)
			v[CP_SM_WAIT] += (double)t->values[i * nm + (size_t)pm[PM_MPI]];
		cpu += v[CP_SM_CPU];
		v[CP_SM_FAULTS] = fault_time(v[CP_SM_FAULTS], v[CP_SM_CPU]);
		int rw = v[CP_SM_CPU] > 0 && x->has_omp ? runtime_wait(x, t, i) : OMP_OTHER;
		if (rw != OMP_OTHER) { /* CPU time the thread spent waiting (polling) */
			if (rw == OMP_RUNTIME || pm[PM_MPI] < 0)
				v[CP_SM_WAIT] += v[CP_SM_CPU]; /* else mpi-time holds it already */
			v[CP_SM_CPU] = 0;
		}
		double own = 0;
		for (int k = 0; k < CP_SM_N; k++) {
			any |= v[k] != 0;
			s->total[k] += v[k];
			own += v[k];
		}
		any_sum += own;
		own_in_module(s, x, &t->nodes[i], own);
		if (any)
			charge_path(s, x, t, i, v);
	}
	probe_values(s, x, t, pm);
	seen_calls(s, x, t);
	s->tids = xrealloc(s->tids, (s->nthreads + 1) * sizeof *s->tids);
	s->thread_cpu = xrealloc(s->thread_cpu, (s->nthreads + 1) * sizeof *s->thread_cpu);
	s->thread_any = xrealloc(s->thread_any, (s->nthreads + 1) * sizeof *s->thread_any);
	s->thread_any[s->nthreads] = any_sum;
	s->thread_delay = xrealloc(s->thread_delay, (s->nthreads + 1) * sizeof *s->thread_delay);
	s->thread_delay[s->nthreads] = 0;
	s->thread_run = xrealloc(s->thread_run, (s->nthreads + 1) * sizeof *s->thread_run);
	s->thread_run[s->nthreads] = 0;
	s->thread_lost = xrealloc(s->thread_lost, (s->nthreads + 1) * sizeof *s->thread_lost);
	s->thread_lost[s->nthreads] = (double)t->hdr.dropped * period;
	s->thread_at = xrealloc(s->thread_at, (s->nthreads + 1) * sizeof *s->thread_at);
	s->thread_at[s->nthreads] = sched[2];
	if (sched[2] > 0) {
		s->thread_run[s->nthreads] = sched[0];
		s->thread_delay[s->nthreads] = sched[1];
		s->run_delay_ns += sched[1];
		s->nlive++;
	}
	s->tids[s->nthreads] = t->hdr.tid;
	s->thread_cpu[s->nthreads++] = cpu;
}

static int metric_index(const struct cp_mf_proc *p, const char *name)
{
	for (uint32_t i = 0; i < p->hdr.nmetrics; i++)
		if (!strcmp(p->hdr.metrics[i].name, name))
			return (int)i;
	return -1;
}

/* The measurement's modules mapped to the model's (by path), and their paths listed in
 * s->modules (the mapped ones, for the search to add to its model). 0 when the
 * executable is not among them yet. */
static int map_modules(struct cp_search_snap *s, struct index *x, const struct cp_mf_proc *p)
{
	int exe = 0;
	for (size_t i = 0; i < p->nmodules; i++)
		if (p->modules[i].id + (size_t)1 > x->nmodmap)
			x->nmodmap = p->modules[i].id + (size_t)1;
	x->modmap = xcalloc(x->nmodmap + 1, sizeof *x->modmap);
	x->omp = xcalloc(x->nmodmap + 1, sizeof *x->omp);
	x->modidx = xcalloc(x->nmodmap + 1, sizeof *x->modidx);
	for (size_t i = 0; i < x->nmodmap; i++)
		x->modmap[i] = x->modidx[i] = -1;
	s->modules = xcalloc(p->nmodules + 1, sizeof *s->modules);
	s->module_own = xcalloc(p->nmodules + 1, sizeof *s->module_own);
	for (size_t i = 0; i < p->nmodules; i++) {
		const struct cp_mf_module_info *mi = &p->modules[i];
		if (!mi->path || mi->unloaded)
			continue;
		long mod = cp_code_model_module_find(x->m, mi->path);
		x->modmap[mi->id] = (int32_t)mod;
		x->omp[mi->id] = omp_class_of(mi->path);
		x->has_omp |= x->omp[mi->id] == OMP_RUNTIME || x->omp[mi->id] == OMP_MPI;
		exe |= mod == 0;
		x->modidx[mi->id] = (int32_t)s->nmodules;
		s->modules[s->nmodules++] = xstrdup(mi->path);
	}
	return exe;
}

static void read_image(struct cp_search_snap *s, struct index *x, const struct cp_mf_image *im,
		       const struct sched_table *st)
{
	int sm[CP_SM_N], pm[PM_N];
	for (int k = 0; k < CP_SM_N; k++) {
		sm[k] = metric_index(&im->proc, smetric_name[k]);
		s->have[k] = sm[k] >= 0;
	}
	for (int k = 0; k < PM_N; k++)
		pm[k] = metric_index(&im->proc, pmetric_name[k]);
	s->have[CP_SM_WAIT] |= pm[PM_MPI] >= 0;
	int exe = map_modules(s, x, &im->proc);
	double period = sm[CP_SM_CPU] >= 0 ? (double)im->proc.hdr.metrics[sm[CP_SM_CPU]].period : 0;
	for (size_t j = 0; j < im->nthreads && exe; j++) {
		double sched[3];
		sched_of(st, &im->threads[j], sched);
		read_thread(s, x, &im->threads[j], sm, pm, period, sched);
	}
	s->done = im->proc.hdr.end_ns != 0;
}

/* A snapshot's time, or the program's end when it has ended (the header's end_ns,
 * CLOCK_REALTIME, against `real`, read with `wall`): the interval in which the program
 * ended holds only its time until then. Without this, its last interval's values were
 * diluted by the time after the end (a CPU-bound Py_RunMain decided at 27 %). */
static double ended_at(const struct cp_mf_image *im, double wall, const struct timespec *real)
{
	double ago =
	    (double)real->tv_sec + (double)real->tv_nsec / 1e9 - (double)im->proc.hdr.end_ns / 1e9;
	return im->proc.hdr.end_ns && ago > 0 ? wall - ago : wall;
}

int cp_search_snap_read(struct cp_search_snap *s, const struct cp_code_model *m, const char *dir,
			int pid, long gen)
{
	struct cp_mf_dir d;
	struct index x;
	struct timespec real;
	cp_search_snap_release(s);
	s->wall = cp_search_now();
	clock_gettime(CLOCK_REALTIME, &real);
	struct sched_table st;
	s->funcs = xcalloc(m->nfuncs + 1, sizeof *s->funcs);
	s->loops = xcalloc(m->nloops + 1, sizeof *s->loops);
	s->nfuncs = m->nfuncs;
	s->nloops = m->nloops;
	s->nfoci = m->nfuncs + m->nloops;
	s->region = xcalloc(s->nfuncs + 1, 1);
	sched_table_read(&st, pid); /* right before the files: their samples' window */
	int rc = cp_mf_dir_open(&d, dir);
	if (rc) {
		free(st.tids), free(st.v);
		return rc;
	}
	const struct cp_mf_image *im = NULL;
	for (size_t i = 0; i < d.nimages; i++)
		if (d.images[i].proc.hdr.pid == pid &&
		    (gen < 0 || d.images[i].proc.hdr.gen == (uint32_t)gen))
			im = &d.images[i]; /* that image, or the pid's latest (after exec) */
	if (!im)
		rc = cp_error(CP_ENOENT, "no measurement of process %d in %s yet", pid, dir);
	else {
		index_init(&x, m);
		read_image(s, &x, im, &st);
		s->wall = ended_at(im, s->wall, &real);
		index_release(&x);
	}
	cp_mf_dir_release(&d);
	free(st.tids), free(st.v);
	return rc;
}

/* A focus's values in snapshot s; zero for a focus added to the model after s was read. */
static const struct cp_focus_values *focus(const struct cp_search_snap *s, int kind,
					   uint32_t target)
{
	static const struct cp_focus_values zero;
	if (kind == CP_FOCUS_LOOP)
		return target < s->nloops ? &s->loops[target] : &zero;
	return target < s->nfuncs ? &s->funcs[target] : &zero;
}

struct cp_focus_values cp_search_snap_delta(const struct cp_search_snap *a,
					    const struct cp_search_snap *b, int kind,
					    uint32_t target)
{
	const struct cp_focus_values *x = focus(a, kind, target), *y = focus(b, kind, target);
	struct cp_focus_values d;
	for (int k = 0; k < CP_SM_N; k++) {
		d.sampled[k] = y->sampled[k] - x->sampled[k];
		d.leaf[k] = y->leaf[k] - x->leaf[k];
		d.entry[k] = y->entry[k] - x->entry[k];
	}
	d.probe_ns = y->probe_ns - x->probe_ns;
	d.calls = y->calls - x->calls;
	d.iterations = y->iterations - x->iterations;
	d.own_cpu = y->own_cpu - x->own_cpu;
	return d;
}

static double activity(const struct cp_search_snap *a, const struct cp_search_snap *b, int tid,
		       int any);
static void sched_delta(const struct cp_search_snap *a, const struct cp_search_snap *b, int tid,
			double *run, double *delay);

double cp_search_snap_thread_cpu(const struct cp_search_snap *a, const struct cp_search_snap *b,
				 int tid)
{
	return activity(a, b, tid, 0);
}

static double thread_value(const struct cp_search_snap *s, int tid, int kind, uint32_t target,
			   int k)
{
	if (target >= (kind == CP_FOCUS_LOOP ? s->nloops : s->nfuncs))
		return 0;
	size_t at = kind == CP_FOCUS_LOOP ? s->nfuncs + target : target;
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->tids[i] == tid)
			return s->thread_vals[(i * s->nfoci + at) * CP_SM_N + (size_t)k];
	return 0;
}

double cp_search_snap_thread_value(const struct cp_search_snap *a, const struct cp_search_snap *b,
				   int tid, int kind, uint32_t target, int k)
{
	return thread_value(b, tid, kind, target, k) - thread_value(a, tid, kind, target, k);
}

/* Thread tid's sampled activity in (a, b]: CPU ns, or every sampled value (CPU, waits,
 * I/O, faults) when `any`. */
static double activity(const struct cp_search_snap *a, const struct cp_search_snap *b, int tid,
		       int any)
{
	const double *va = any ? a->thread_any : a->thread_cpu;
	const double *vb = any ? b->thread_any : b->thread_cpu;
	double x = 0, y = 0;
	for (size_t i = 0; i < a->nthreads; i++)
		if (a->tids[i] == tid)
			x = va[i];
	for (size_t i = 0; i < b->nthreads; i++)
		if (b->tids[i] == tid)
			y = vb[i];
	return y - x;
}

/* The wall time (ns) of thread i of b over (a, b]: between the readings of its schedstat
 * when both were read, else `all` (the snapshots' times). A snapshot's schedstat was read
 * after its files had been processed, which under load took long enough (a large model:
 * Debian's python3) for its wait for a CPU to be of another window than its samples and
 * its time: the runnable time was off by a factor of 3 either way (a CPU-bound Py_RunMain
 * decided at 15-55 %). Now the three are taken together, right before the files. */
static double thread_wall(const struct cp_search_snap *a, const struct cp_search_snap *b, size_t i,
			  double all)
{
	for (size_t j = 0; j < a->nthreads; j++)
		if (a->tids[j] == b->tids[i] && a->thread_at[j] > 0 && b->thread_at[i] > 0)
			return (b->thread_at[i] - a->thread_at[j]) * 1e9;
	return all;
}

/* Thread tid's CPU time lost to dropped samples over (a, b]. */
static double lost_delta(const struct cp_search_snap *a, const struct cp_search_snap *b, int tid)
{
	double x = 0, y = 0;
	for (size_t i = 0; i < a->nthreads; i++)
		if (a->tids[i] == tid)
			x = a->thread_lost[i];
	for (size_t i = 0; i < b->nthreads; i++)
		if (b->tids[i] == tid)
			y = b->thread_lost[i];
	return y > x ? y - x : 0;
}

/* Wall time over (a, b] summed over the threads with activity in it (CPU time; any value
 * when `any`), less the time each waited for a CPU and the CPU time of its dropped samples
 * (not when `any`). For CPU time, a thread that ran less than a tenth of the time it could
 * (schedstat: a thread blocked in pthread_join but for a moment) is left out, unless every
 * thread is. The dropped samples are mostly those that hit a thread inside a probe's
 * handler (the runtime is busy there): time of the probes, not the program's, which in an
 * interval with hot probes (an interpreter's per-opcode functions) made every focus look
 * less CPU bound (Debian's python3: Py_RunMain, under all the time, at 55 %). */
static double active_time(const struct cp_search_snap *a, const struct cp_search_snap *b, int any)
{
	double t[2] = {0, 0}, all = (b->wall - a->wall) * 1e9;
	for (size_t i = 0; i < b->nthreads; i++) {
		if (activity(a, b, b->tids[i], any) <= 0)
			continue;
		double run, d, wall = thread_wall(a, b, i, all);
		sched_delta(a, b, b->tids[i], &run, &d);
		double base = wall - (!any && d > 0 && d < wall ? d : 0);
		double lost = any ? 0 : lost_delta(a, b, b->tids[i]);
		base -= lost < base ? lost : 0;
		t[0] += base;
		if (any || run <= 0 || run >= 0.1 * base)
			t[1] += base;
	}
	double v = t[1] > 0 ? t[1] : t[0];
	return v > 0 ? v : all > 0 ? all : 1;
}

double cp_search_snap_cpu_time(const struct cp_search_snap *a, const struct cp_search_snap *b)
{
	return active_time(a, b, 0);
}

double cp_search_snap_time(const struct cp_search_snap *a, const struct cp_search_snap *b)
{
	return active_time(a, b, 1);
}

/* Thread i of snapshot s: its values' index for (kind, target), or -1. */
static long at_of(const struct cp_search_snap *s, int kind, uint32_t target)
{
	if (target >= (kind == CP_FOCUS_LOOP ? s->nloops : s->nfuncs))
		return -1;
	return (long)(kind == CP_FOCUS_LOOP ? s->nfuncs + target : target);
}

/* Thread tid's schedstat (run, delay) delta over (a, b]. */
static void sched_delta(const struct cp_search_snap *a, const struct cp_search_snap *b, int tid,
			double *run, double *delay)
{
	*run = *delay = 0;
	for (size_t i = 0; i < b->nthreads; i++)
		if (b->tids[i] == tid)
			*run = b->thread_run[i], *delay = b->thread_delay[i];
	for (size_t i = 0; i < a->nthreads; i++)
		if (a->tids[i] == tid)
			*run -= a->thread_run[i], *delay -= a->thread_delay[i];
}

double cp_search_snap_team_wait(const struct cp_search_snap *a, const struct cp_search_snap *b,
				const struct cp_code_model *m, int kind, uint32_t target, int tid)
{
	long at = at_of(b, kind, target);
	uint32_t f = kind == CP_FOCUS_LOOP ? m->loops[target].func : target;
	if (at < 0 || f >= b->nfuncs || !b->region[f] || b->nthreads < 2 ||
	    (kind == CP_FOCUS_LOOP && m->loops[target].parent >= 0))
		return 0;
	double max = 0, sum = 0, mine = -1, busy = 0, n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < b->nthreads; i++) {
			int t = b->tids[i];
			double cpu = cp_search_snap_thread_value(a, b, t, kind, target, CP_SM_CPU);
			double run, delay;
			if (cpu <= 0)
				continue;
			sched_delta(a, b, t, &run, &delay);
			double stretch = run > 0 && delay > 0 ? delay / run : 0,
			       w = cpu * (1 + stretch);
			if (!pass) {
				double all = activity(a, b, t, 1) + activity(a, b, t, 0) * stretch;
				max = w > max ? w : max;
				busy = all > busy ? all : busy;
				n++;
				continue;
			}
			sum += max - w;
			mine = t == tid ? max - w : mine;
		}
	if (n < 2 || busy <= 0)
		return 0;
	double v = (tid ? (mine > 0 ? mine : 0) : sum) / (n * busy);
	return v > 1 ? 1 : v;
}
