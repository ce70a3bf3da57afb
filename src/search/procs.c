/* The process images of a searched program and the busiest of them (procs.h). */
#include "search/procs.h"

#include "base/xalloc.h"
#include "format/control.h"
#include "format/measure-read.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* A page fault's time in the score (measure.c's lower bound, FAULT_NS) */
#define PROC_FAULT_NS 2000.0
#define ANCESTRY_MAX 64

static const char *const metric_names[CP_SM_N] = {"cputime", "wait-time", "io-time", "page-faults"};

/* The sampled totals of image im: per metric, summed over its threads and nodes. */
static void image_values(const struct cp_mf_image *im, double *v)
{
	int idx[CP_SM_N + 1];
	for (int k = 0; k <= CP_SM_N; k++) {
		const char *name = k < CP_SM_N ? metric_names[k] : "mpi-time";
		idx[k] = -1;
		for (uint32_t m = 0; m < im->proc.hdr.nmetrics; m++)
			if (!strcmp(im->proc.hdr.metrics[m].name, name))
				idx[k] = (int)m;
	}
	for (size_t j = 0; j < im->nthreads; j++) {
		const struct cp_mf_thr *t = &im->threads[j];
		size_t nm = t->hdr.nmetrics;
		for (size_t i = 0; i < t->nnodes; i++)
			for (int k = 0; k <= CP_SM_N; k++)
				if (idx[k] >= 0 && (size_t)idx[k] < nm)
					v[k < CP_SM_N ? k : CP_SM_WAIT] +=
					    (double)t->values[i * nm + (size_t)idx[k]];
	}
}

/* The latest image of pid in d before index `before` (the parent an image recorded), or
 * -1. */
static long image_of(const struct cp_mf_dir *d, int pid, size_t before)
{
	long found = -1;
	for (size_t i = 0; i < before && i < d->nimages; i++)
		if (d->images[i].proc.hdr.pid == pid)
			found = (long)i;
	return found;
}

/* Is image i of d the program's: root, or its parent chain (as the images recorded it,
 * then /proc) reaches root? */
static int descends(const struct cp_mf_dir *d, size_t i, int root)
{
	int pid = d->images[i].proc.hdr.pid, ppid = d->images[i].proc.hdr.ppid;
	for (int hops = 0; hops < ANCESTRY_MAX; hops++) {
		if (pid == root || ppid == root)
			return 1;
		long p = image_of(d, ppid, d->nimages);
		if (p < 0 || ppid <= 1)
			return 0;
		pid = ppid;
		ppid = d->images[p].proc.hdr.ppid;
	}
	return 0;
}

static char *join_argv(const struct cp_mf_proc *p)
{
	char buf[256];
	size_t len = 0;
	buf[0] = 0;
	for (size_t a = 0; a < p->argc && len + 1 < sizeof buf; a++) {
		int n = snprintf(buf + len, sizeof buf - len, "%s%s", a ? " " : "", p->argv[a]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	if (len >= sizeof buf)
		memcpy(buf + sizeof buf - 4, "...", 4);
	return xstrdup(buf[0] ? buf : p->exe ? p->exe : "?");
}

static int fifo_exists(const char *dir, int pid)
{
	char path[PATH_MAX + 32];
	struct stat st;
	snprintf(path, sizeof path, "%s/%d%s", dir, pid, CP_CONTROL_SUFFIX);
	return !stat(path, &st) && S_ISFIFO(st.st_mode);
}

static void add_image(struct cp_search_procs *ps, const struct cp_mf_dir *d, size_t i,
		      const char *dir)
{
	const struct cp_mf_image *im = &d->images[i];
	struct cp_search_proc *p = &ps->p[ps->n++];
	memset(p, 0, sizeof *p);
	p->pid = im->proc.hdr.pid;
	p->ppid = im->proc.hdr.ppid;
	p->gen = im->proc.hdr.gen;
	p->live = !im->proc.hdr.end_ns && image_of(d, p->pid, d->nimages) == (long)i &&
		  !(kill(p->pid, 0) && errno == ESRCH);
	p->control = fifo_exists(dir, p->pid);
	p->exe = im->proc.exe ? xstrdup(im->proc.exe) : NULL;
	p->command = join_argv(&im->proc);
	image_values(im, p->value);
}

int cp_search_procs_read(struct cp_search_procs *ps, const char *dir, int root)
{
	struct cp_mf_dir d;
	struct timespec ts;
	cp_search_procs_release(ps);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ps->wall = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	int rc = cp_mf_dir_open(&d, dir);
	if (rc)
		return rc;
	ps->p = xcalloc(d.nimages + 1, sizeof *ps->p);
	for (size_t i = 0; i < d.nimages; i++)
		if (descends(&d, i, root))
			add_image(ps, &d, i, dir);
	cp_mf_dir_release(&d);
	return 0;
}

void cp_search_procs_release(struct cp_search_procs *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->p[i].exe);
		free(ps->p[i].command);
	}
	free(ps->p);
	memset(ps, 0, sizeof *ps);
}

double cp_search_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cp_search_sleep(double s, volatile sig_atomic_t *stop)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (s > 0 && nanosleep(&ts, &ts) && errno == EINTR && !(stop && *stop))
		;
}

double cp_search_procs_score(const struct cp_search_procs *a, const struct cp_search_procs *b,
			     size_t i, unsigned hyps)
{
	const struct cp_search_proc *y = &b->p[i], *x = NULL;
	for (size_t j = 0; a && j < a->n && !x; j++)
		if (a->p[j].pid == y->pid && a->p[j].gen == y->gen)
			x = &a->p[j];
	double v = 0;
	for (int k = 0; k < CP_SM_N; k++)
		if (hyps & (1u << k)) /* enum cp_hyp and enum cp_smetric are in the same order */
			v += (y->value[k] - (x ? x->value[k] : 0)) *
			     (k == CP_SM_FAULTS ? PROC_FAULT_NS : 1);
	return v;
}

long cp_search_procs_busiest(const struct cp_search_procs *a, const struct cp_search_procs *b,
			     unsigned hyps, double *score, double *share)
{
	long best = -1;
	double sum = 0, top = -1;
	for (size_t i = 0; i < b->n; i++) {
		if (!b->p[i].live)
			continue;
		double v = cp_search_procs_score(a, b, i, hyps);
		sum += v > 0 ? v : 0;
		if (!b->p[i].control)
			continue;
		if (v >= top) { /* ties to the later image: the directory lists them by start */
			top = v;
			best = (long)i;
		}
	}
	*score = top > 0 ? top : 0;
	*share = sum > 0 && top > 0 ? top / sum : 0;
	return best;
}
