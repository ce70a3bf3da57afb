/* Reading the live measurement of the searched program (measure.h). */
#include "search/measure.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "format/measure-read.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PM_PTIME = 0, PM_CALLS, PM_LTIME, PM_LENTRIES, PM_LITER, PM_N };

static const char *const smetric_name[CP_SM_N] = {"cputime", "wait-time", "io-time", "page-faults"};
static const char *const pmetric_name[PM_N] = {"probe-time", "calls", "loop-time", "loop-entries",
					       "loop-iterations"};

/* Address lookups over the model, built per read. */
struct index {
	const struct cp_code_model *m;
	uint32_t *funcs; /* by lo */
	size_t nfuncs;
	uint32_t *fstamp, *lstamp, gen;
};

static const struct cp_code_model *sort_model;
static int by_lo(const void *a, const void *b)
{
	uint64_t x = sort_model->funcs[*(const uint32_t *)a].lo;
	uint64_t y = sort_model->funcs[*(const uint32_t *)b].lo;
	return x < y ? -1 : x > y;
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
}

static void index_release(struct index *x)
{
	free(x->funcs);
	free(x->fstamp);
	free(x->lstamp);
}

static long func_at(const struct index *x, uint64_t a)
{
	size_t lo = 0, hi = x->nfuncs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct cp_code_func *f = &x->m->funcs[x->funcs[mid]];
		if (a < f->lo)
			hi = mid;
		else if (a >= f->hi)
			lo = mid + 1;
		else
			return x->funcs[mid];
	}
	return -1;
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
	free(s->thread_vals);
	free(s->thread_delay);
	cp_search_snap_init(s);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Charges the sampled values v of node i once to each function and loop on its path. */
static void charge_path(struct cp_search_snap *s, struct index *x, const struct cp_mf_thr *t,
			uint32_t mod, size_t i, const double *v)
{
	const struct cp_code_model *m = x->m;
	double *tv = &s->thread_vals[s->nthreads * s->nfoci * CP_SM_N];
	int leaf = 1;
	long prev = -1; /* the executable's function of the frame below */
	x->gen++;
	for (size_t n = i, hops = 0; n < t->nnodes && hops < CP_MF_READ_MAX_DEPTH; hops++) {
		const struct cp_mf_rnode *r = &t->nodes[n];
		int frame = r->kind == CP_MF_NODE_CALL || r->kind == CP_MF_NODE_PC ||
			    r->kind == CP_MF_NODE_SIGNAL;
		uint64_t a = r->offset - (r->kind == CP_MF_NODE_CALL && r->offset);
		long f = frame && r->module == mod ? func_at(x, a) : -1;
		if (f < 0 && prev >= 0) /* prev was called from outside the executable */
			for (int k = 0; k < CP_SM_N; k++)
				s->funcs[prev].entry[k] += v[k];
		if (frame || f >= 0 || r->parent == UINT32_MAX)
			prev = f;
		if (f >= 0) {
			if (f >= 0 && leaf)
				for (int k = 0; k < CP_SM_N; k++)
					s->funcs[f].leaf[k] += v[k];
			leaf &= f < 0;
			if (f >= 0 && x->fstamp[f] != x->gen) {
				x->fstamp[f] = x->gen;
				for (int k = 0; k < CP_SM_N; k++) {
					s->funcs[f].sampled[k] += v[k];
					tv[(size_t)f * CP_SM_N + k] += v[k];
				}
			}
			for (size_t l = 0; f >= 0 && l < m->nloops; l++)
				if (m->loops[l].func == (uint32_t)f && a >= m->loops[l].lo &&
				    a < m->loops[l].hi && x->lstamp[l] != x->gen) {
					x->lstamp[l] = x->gen;
					for (int k = 0; k < CP_SM_N; k++) {
						s->loops[l].sampled[k] += v[k];
						tv[(m->nfuncs + l) * CP_SM_N + k] += v[k];
					}
				}
		}
		if (r->parent == UINT32_MAX || r->parent >= n)
			break;
		n = r->parent;
	}
	if (prev >= 0)
		for (int k = 0; k < CP_SM_N; k++)
			s->funcs[prev].entry[k] += v[k];
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

static long loop_at(const struct cp_code_model *m, uint64_t header)
{
	for (size_t l = 0; l < m->nloops; l++)
		if (m->loops[l].header == header)
			return (long)l;
	return -1;
}

/* Probe values of a thread: functions by their entry, loops by their header. */
static void probe_values(struct cp_search_snap *s, struct index *x, const struct cp_mf_thr *t,
			 uint32_t mod, const int *pm)
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
		if (r->kind != CP_MF_NODE_PC || r->module != mod)
			continue;
		double calls = pm[PM_CALLS] >= 0 ? (double)v[pm[PM_CALLS]] : 0;
		double ent = pm[PM_LENTRIES] >= 0 ? (double)v[pm[PM_LENTRIES]] : 0;
		double it = pm[PM_LITER] >= 0 ? (double)v[pm[PM_LITER]] : 0;
		if (calls > 0 || incl[i] > 0) {
			long f = func_at(x, r->offset);
			if (f >= 0 && x->m->funcs[f].lo == r->offset && !nested_probe(t, i)) {
				s->funcs[f].probe_ns += incl[i];
				s->funcs[f].calls += calls;
			}
		}
		long l = ent > 0 || it > 0 ? loop_at(x->m, r->offset) : -1;
		if (l >= 0) {
			s->loops[l].calls += ent;
			s->loops[l].iterations += it;
			if (!nested_probe(t, i) && pm[PM_LTIME] >= 0)
				s->loops[l].probe_ns += (double)v[pm[PM_LTIME]];
		}
	}
	free(incl);
}

static void read_thread(struct cp_search_snap *s, struct index *x, const struct cp_mf_thr *t,
			uint32_t mod, const int *sm, const int *pm)
{
	size_t nm = t->hdr.nmetrics, per = s->nfoci * CP_SM_N;
	double cpu = 0;
	s->thread_vals = xrealloc(s->thread_vals, (s->nthreads + 1) * per * sizeof *s->thread_vals);
	memset(s->thread_vals + s->nthreads * per, 0, per * sizeof *s->thread_vals);
	for (size_t i = 0; i < t->nnodes; i++) {
		double v[CP_SM_N] = {0};
		int any = 0;
		for (int k = 0; k < CP_SM_N; k++)
			if (sm[k] >= 0) {
				v[k] = (double)t->values[i * nm + (size_t)sm[k]];
				any |= v[k] != 0;
				s->total[k] += v[k];
			}
		cpu += v[CP_SM_CPU];
		if (any)
			charge_path(s, x, t, mod, i, v);
	}
	probe_values(s, x, t, mod, pm);
	s->tids = xrealloc(s->tids, (s->nthreads + 1) * sizeof *s->tids);
	s->thread_cpu = xrealloc(s->thread_cpu, (s->nthreads + 1) * sizeof *s->thread_cpu);
	s->thread_delay = xrealloc(s->thread_delay, (s->nthreads + 1) * sizeof *s->thread_delay);
	s->thread_delay[s->nthreads] = 0;
	if (!t->hdr.end_ns) {
		char path[96];
		unsigned long long run = 0, delay = 0;
		snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", t->hdr.pid, t->hdr.tid);
		FILE *f = fopen(path, "r");
		s->thread_delay =
		    xrealloc(s->thread_delay, (s->nthreads + 1) * sizeof *s->thread_delay);
		s->thread_delay[s->nthreads] = 0;
		if (f && fscanf(f, "%llu %llu", &run, &delay) == 2) {
			s->thread_delay[s->nthreads] = (double)delay;
			s->run_delay_ns += (double)delay;
			s->nlive++;
		}
		if (f)
			fclose(f);
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

static void read_image(struct cp_search_snap *s, struct index *x, const struct cp_mf_image *im,
		       const char *exe)
{
	int sm[CP_SM_N], pm[PM_N];
	long mod = -1;
	for (int k = 0; k < CP_SM_N; k++) {
		sm[k] = metric_index(&im->proc, smetric_name[k]);
		s->have[k] = sm[k] >= 0;
	}
	for (int k = 0; k < PM_N; k++)
		pm[k] = metric_index(&im->proc, pmetric_name[k]);
	for (size_t i = 0; i < im->proc.nmodules && mod < 0; i++)
		if (im->proc.modules[i].path && !strcmp(im->proc.modules[i].path, exe))
			mod = (long)im->proc.modules[i].id;
	for (size_t j = 0; j < im->nthreads && mod >= 0; j++)
		read_thread(s, x, &im->threads[j], (uint32_t)mod, sm, pm);
	s->done = im->proc.hdr.end_ns != 0;
}

int cp_search_snap_read(struct cp_search_snap *s, const struct cp_code_model *m, const char *dir,
			int pid, const char *exe)
{
	struct cp_mf_dir d;
	struct index x;
	cp_search_snap_release(s);
	s->wall = now_s();
	s->funcs = xcalloc(m->nfuncs + 1, sizeof *s->funcs);
	s->loops = xcalloc(m->nloops + 1, sizeof *s->loops);
	s->nfuncs = m->nfuncs;
	s->nfoci = m->nfuncs + m->nloops;
	int rc = cp_mf_dir_open(&d, dir);
	if (rc)
		return rc;
	const struct cp_mf_image *im = NULL;
	for (size_t i = 0; i < d.nimages; i++)
		if (d.images[i].proc.hdr.pid == pid)
			im = &d.images[i]; /* the latest image of the pid (after exec) */
	if (!im)
		rc = cp_error(CP_ENOENT, "no measurement of process %d in %s yet", pid, dir);
	else {
		index_init(&x, m);
		read_image(s, &x, im, exe);
		index_release(&x);
	}
	cp_mf_dir_release(&d);
	return rc;
}

struct cp_focus_values cp_search_snap_delta(const struct cp_search_snap *a,
					    const struct cp_search_snap *b, int kind,
					    uint32_t target)
{
	const struct cp_focus_values *x =
	    kind == CP_FOCUS_LOOP ? &a->loops[target] : &a->funcs[target];
	const struct cp_focus_values *y =
	    kind == CP_FOCUS_LOOP ? &b->loops[target] : &b->funcs[target];
	struct cp_focus_values d;
	for (int k = 0; k < CP_SM_N; k++) {
		d.sampled[k] = y->sampled[k] - x->sampled[k];
		d.leaf[k] = y->leaf[k] - x->leaf[k];
		d.entry[k] = y->entry[k] - x->entry[k];
	}
	d.probe_ns = y->probe_ns - x->probe_ns;
	d.calls = y->calls - x->calls;
	d.iterations = y->iterations - x->iterations;
	return d;
}

double cp_search_snap_thread_cpu(const struct cp_search_snap *a, const struct cp_search_snap *b,
				 int tid)
{
	double va = 0, vb = 0;
	for (size_t i = 0; i < a->nthreads; i++)
		if (a->tids[i] == tid)
			va = a->thread_cpu[i];
	for (size_t i = 0; i < b->nthreads; i++)
		if (b->tids[i] == tid)
			vb = b->thread_cpu[i];
	return vb - va;
}

double cp_search_snap_time(const struct cp_search_snap *a, const struct cp_search_snap *b)
{
	double n = b->nlive ? (double)b->nlive : 1;
	double t = (b->wall - a->wall) * 1e9 * n - (b->run_delay_ns - a->run_delay_ns);
	return t > 0 ? t : 1;
}

static double thread_value(const struct cp_search_snap *s, int tid, size_t focus, int k)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->tids[i] == tid)
			return s->thread_vals[(i * s->nfoci + focus) * CP_SM_N + (size_t)k];
	return 0;
}

double cp_search_snap_thread_value(const struct cp_search_snap *a, const struct cp_search_snap *b,
				   int tid, int kind, uint32_t target, int k)
{
	size_t focus = kind == CP_FOCUS_LOOP ? b->nfuncs + target : target;
	return thread_value(b, tid, focus, k) - thread_value(a, tid, focus, k);
}

double cp_search_snap_cpu_time(const struct cp_search_snap *a, const struct cp_search_snap *b)
{
	double t = 0, wall = (b->wall - a->wall) * 1e9;
	for (size_t i = 0; i < b->nthreads; i++) {
		if (cp_search_snap_thread_cpu(a, b, b->tids[i]) <= 0)
			continue;
		double d = b->thread_delay[i];
		for (size_t j = 0; j < a->nthreads; j++)
			if (a->tids[j] == b->tids[i])
				d -= a->thread_delay[j];
		t += wall - (d > 0 && d < wall ? d : 0);
	}
	return t > 0 ? t : wall > 0 ? wall : 1;
}
