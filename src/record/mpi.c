/* `mpirun -np N callpath record ...`: N recorders, one measurement directory, one summary.
 * Each launcher tells its processes their rank in the environment; the job's name keeps
 * the directory shared. */
#include "record/record-impl.h"

#include "base/error.h"
#include "base/mpi-env.h"
#include "format/measure-read.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cp_record_mpi_rank(int *size)
{
	return cp_mpi_env_rank(size);
}

/* A name the job's ranks share (and later jobs do not): the launcher's job id, else the
 * launcher's process (the parent of every rank on this node). */
int cp_record_mpi_job(char *out, size_t cap)
{
	static const char *const ids[] = {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE",
					  "PMI_KVSNAME", "SLURM_JOB_ID"};
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		const char *s = getenv(ids[i]);
		size_t n = 0;
		if (!s || !*s)
			continue;
		for (; *s && n + 1 < cap; s++)
			out[n++] = isalnum((unsigned char)*s) ? *s : '_';
		out[n] = 0;
		return 0;
	}
	snprintf(out, cap, "%d", (int)getppid());
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* An MPI program's ranks all live until MPI_Finalize, so a process that ended before this
 * rank started belongs to an earlier run: only those files go (never a sibling's). */
int cp_record_clear_ended(const char *dir)
{
	uint64_t started = now_ns();
	struct cp_mf_list l;
	int removed = 0;
	char path[PATH_MAX + 256];
	if (cp_mf_list_open(&l, dir)) {
		cp_error_clear();
		return 0;
	}
	for (size_t i = 0; i < l.nimages; i++) {
		struct cp_mf_proc p;
		if (cp_mf_list_proc(&l, i, &p)) {
			cp_error_clear();
			continue;
		}
		int ended = p.hdr.end_ns && p.hdr.end_ns < started;
		cp_mf_proc_release(&p);
		if (!ended)
			continue;
		for (size_t j = 0; j < l.images[i].nthreads; j++) {
			if (!l.images[i].thr_names[j])
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, l.images[i].thr_names[j]);
			removed += !unlink(path);
		}
		snprintf(path, sizeof path, "%s/%s", dir, l.images[i].proc_name);
		removed += !unlink(path);
	}
	cp_mf_list_release(&l);
	return removed;
}

/* Programs started by the launcher whose measurement is complete. */
static int finished_ranks(const char *dir)
{
	struct cp_mf_list l;
	int done = 0;
	if (cp_mf_list_open(&l, dir)) {
		cp_error_clear();
		return 0;
	}
	for (size_t i = 0; i < l.nimages; i++) {
		struct cp_mf_proc p;
		if (l.images[i].gen > 0 || cp_mf_list_proc(&l, i, &p))
			continue;
		uint32_t f = p.hdr.h.flags;
		done += !(f & CP_MF_FORK_CHILD) && (f & (CP_MF_FINISHED | CP_MF_CRASHED));
		cp_mf_proc_release(&p);
	}
	cp_mf_list_release(&l);
	cp_error_clear();
	return done;
}

int cp_record_wait_ranks(const char *dir, int nranks, double timeout_s)
{
	struct timespec pause = {0, 50 * 1000 * 1000};
	int done = finished_ranks(dir);
	for (double waited = 0; done < nranks && waited < timeout_s; waited += 0.05) {
		nanosleep(&pause, NULL);
		done = finished_ranks(dir);
	}
	return done;
}
