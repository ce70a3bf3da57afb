/* The end summary of an MPI job (report.h, cp_report_print_summary): which ranks were
 * measured (missing, incomplete, running another program), the share of the ranks' time
 * in MPI calls, and how unevenly the ranks share the hottest contexts. */
#include "report/render.h"

#include "base/xalloc.h"
#include "format/measure.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the job's files say its size is: the largest nranks in their headers, 0 if none
 * (a database file, files older than format minor 1). */
static int job_size(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	char path[4096];
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		struct cp_mf_header h;
		if (len < 6 || strcmp(e->d_name + len - 5, CP_MF_PROC_SUFFIX))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (read(fd, &h, sizeof h) == (ssize_t)sizeof h &&
		    !memcmp(h.magic, CP_MF_MAGIC, sizeof h.magic) && h.version_minor >= 1 &&
		    h.nranks <= 1u << 24 && (int)h.nranks > n)
			n = (int)h.nranks;
		close(fd);
	}
	closedir(d);
	return n;
}

struct rank_info {
	int present, incomplete, crashed;
	uint64_t start_ns, end_ns;
	const char *program; /* first word of its command line */
	size_t program_len;
};

/* Per rank 0..n-1: from the profiles (a rank's images: its program, and its launcher's
 * fork child under `record -- mpirun`). */
static void ranks_collect(const struct cp_db *db, struct rank_info *ri, int n)
{
	for (size_t i = 0; i < db->nprofiles; i++) {
		const struct cp_db_profile *pr = &db->profiles[i];
		if (pr->rank < 0 || pr->rank >= n)
			continue;
		struct rank_info *x = &ri[pr->rank];
		x->present = 1;
		x->incomplete |= !!(pr->flags & CP_DB_PROF_UNFINISHED);
		x->crashed |= !!(pr->flags & CP_DB_PROF_CRASHED);
		if (pr->start_ns && (!x->start_ns || pr->start_ns < x->start_ns))
			x->start_ns = pr->start_ns;
		if (pr->end_ns > x->end_ns)
			x->end_ns = pr->end_ns;
		if (!x->program && pr->command) {
			x->program = pr->command;
			x->program_len = strcspn(pr->command, " ");
		}
	}
}

static void print_rank_list(FILE *out, const char *what, const struct rank_info *ri, int n,
			    int field)
{
	int shown = 0;
	for (int r = 0; r < n; r++) {
		int on = field == 0   ? !ri[r].present
			 : field == 1 ? ri[r].present && ri[r].incomplete
				      : ri[r].present && ri[r].crashed && !ri[r].incomplete;
		if (on)
			fprintf(out, "%s%d", shown++ ? ", " : what, r);
	}
	static const char *const why[] = {
	    " (no measurement files)",
	    " (killed: its measurement stops there, samples up to then kept)",
	    " (a fatal signal ended it: measured up to then)",
	};
	if (shown)
		fprintf(out, "%s\n", why[field]);
}

/* Ranks whose program is not rank 0's (the first present rank's). */
static void print_programs(FILE *out, const struct rank_info *ri, int n)
{
	const struct rank_info *ref = NULL;
	for (int r = 0; r < n && !ref; r++)
		if (ri[r].present && ri[r].program)
			ref = &ri[r];
	for (int r = 0; r < n; r++) {
		const struct rank_info *x = &ri[r];
		if (!ref || !x->present || !x->program ||
		    (x->program_len == ref->program_len &&
		     !memcmp(x->program, ref->program, x->program_len)))
			continue;
		fprintf(out, "  rank %d runs another program: %.*s (rank %d: %.*s)\n", r,
			(int)x->program_len, x->program, (int)(ref - ri), (int)ref->program_len,
			ref->program);
	}
}

static long metric_named(const struct cp_summary *s, const char *name)
{
	for (size_t m = 0; m < s->nraw; m++)
		if (!strcmp(s->metrics[m].name, name))
			return (long)m;
	return -1;
}

/* The share of the ranks' time in MPI calls, and its spread over the ranks. */
static void print_mpi_share(const struct cp_profile *p, const struct rank_info *ri, int n,
			    FILE *out)
{
	long mt = metric_named(&p->sum, "mpi-time");
	long sb = metric_named(&p->sum, "mpi-sent-bytes");
	long sm = metric_named(&p->sum, "mpi-sent-msgs");
	if (mt < 0)
		return;
	double wall = 0;
	for (int r = 0; r < n; r++)
		if (ri[r].present && ri[r].end_ns > ri[r].start_ns)
			wall += (double)(ri[r].end_ns - ri[r].start_ns);
	double mpi = p->sum.metrics[mt].total;
	uint32_t root = 0;
	struct cp_rank_stat st;
	cp_profile_rank_stats(p, (size_t)mt, &root, 1, &st);
	fprintf(out, "MPI calls:   %.1f%% of the ranks' time (mpi-time %.3f s of %.3f s)",
		wall > 0 ? 100 * mpi / wall : 0, mpi / 1e9, wall / 1e9);
	if (st.count > 1)
		fprintf(out, "; per rank min %.3f s, mean %.3f s, max %.3f s (rank %d)",
			st.min / 1e9, st.mean / 1e9, st.max / 1e9, st.argmax);
	if (sb >= 0 && sm >= 0)
		fprintf(out, "; sent %.0f bytes in %.0f messages", p->sum.metrics[sb].total,
			p->sum.metrics[sm].total);
	fprintf(out, "\n");
}

/* For the contexts of the summary's rows: min/mean/max over the ranks that ran them. */
static void print_rank_imbalance(const struct cp_profile *p, const struct cp_render *r, FILE *out,
				 size_t n)
{
	uint32_t *nodes = xmalloc((r->rows.n + 1) * sizeof *nodes);
	size_t k = 0;
	for (size_t i = 1; i < r->rows.n; i++) {
		uint32_t node = r->rows.rows[i].node;
		int kind = p->td.nodes[node].kind;
		if (kind == CP_VK_PROCEDURE || kind == CP_VK_INLINED || kind == CP_VK_LOOP)
			nodes[k++] = node;
	}
	struct cp_rank_stat *st = xcalloc(k + 1, sizeof *st);
	cp_profile_rank_stats(p, 0, nodes, k, st);
	int ns = !strcmp(p->sum.metrics[0].unit, "ns");
	double scale = ns ? 1e9 : 1;
	const char *u = ns ? "s" : "";
	fprintf(out,
		"\nimbalance over %zu ranks (%s, inclusive, over the ranks that ran each "
		"context):\n%10s %10s %10s  %-8s %5s  %s\n",
		p->sum.nranks, p->sum.metrics[0].name, "min", "mean", "max", "max on", "ranks",
		"context");
	for (size_t i = 0, shown = 0; i < k && shown < n; i++) {
		const struct cp_rank_stat *a = &st[i], *b = &st[i + 1];
		/* a chain of contexts with the same values (_start ... main): its last one */
		if (!a->count || (i + 1 < k && a->count == b->count && a->min == b->min &&
				  a->max == b->max && a->argmax == b->argmax))
			continue;
		shown++;
		char who[32];
		snprintf(who, sizeof who, "rank %d", st[i].argmax);
		fprintf(out,
			ns ? "%9.3f%s %9.3f%s %9.3f%s  %-8s %5u  %s\n"
			   : "%9.4g%s %9.4g%s %9.4g%s  %-8s %5u  %s\n",
			st[i].min / scale, u, st[i].mean / scale, u, st[i].max / scale, u, who,
			st[i].count, p->td.nodes[nodes[i]].name);
	}
	free(st);
	free(nodes);
}

void cp_report_print_mpi_job(const struct cp_profile *p, const struct cp_render *r, const char *dir,
			     FILE *out, size_t n)
{
	if (!p->sum.nranks)
		return;
	int size = job_size(dir);
	for (size_t i = 0; i < p->db.nprofiles; i++)
		if (p->db.profiles[i].rank >= size)
			size = p->db.profiles[i].rank + 1;
	struct rank_info *ri = xcalloc((size_t)size + 1, sizeof *ri);
	ranks_collect(&p->db, ri, size);
	fprintf(out, "%sMPI job:     %zu of %d ranks measured\n", r ? "\n" : "", p->sum.nranks,
		size);
	print_rank_list(out, "  missing: rank ", ri, size, 0);
	print_rank_list(out, "  incomplete: rank ", ri, size, 1);
	print_rank_list(out, "  ended by a signal: rank ", ri, size, 2);
	print_programs(out, ri, size);
	print_mpi_share(p, ri, size, out);
	if (p->sum.nranks > 1 && r)
		print_rank_imbalance(p, r, out, n);
	free(ri);
}
