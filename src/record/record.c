/* cp_record_run: the program, its measurement directory and its environment (record.h). */
#include "record/record-impl.h"

#include "events/events.h"
#include "kcopy/kcopy.h"

#include "base/error.h"
#include "db/analyze.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cp_record_opts_init(struct cp_record_opts *o)
{
	memset(o, 0, sizeof *o);
	o->name = "record";
	o->follow_exec = 1;
	o->mpi = -1;
}

int cp_record_find_program(const char *prog, char *out)
{
	char buf[PATH_MAX];
	if (strchr(prog, '/'))
		return access(prog, X_OK) || !realpath(prog, out) ? -1 : 0;
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", prog);
		if (!access(buf, X_OK) && realpath(buf, out))
			return 0;
		p += n + (p[n] == ':');
	}
	return -1;
}

static int is_measurement_file(const char *name)
{
	size_t n = strlen(name);
	return (n > 5 && !strcmp(name + n - 5, ".proc")) ||
	       (n > 4 && !strcmp(name + n - 4, ".thr"));
}

/* A directory that holds an earlier measurement: its files are replaced (perf record
 * replaces perf.data), never mixed with the new run's. Returns how many were removed. */
static int clear_dir(const char *dir)
{
	DIR *d = opendir(dir);
	int removed = 0;
	char path[PATH_MAX + 256];
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!is_measurement_file(e->d_name))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		removed += !unlink(path);
	}
	closedir(d);
	return removed;
}

static int dir_create(char *out, size_t cap);

static int make_outdir(const struct cp_record_opts *o, int rank, char *out, size_t cap)
{
	const char *base = strrchr(o->argv[0], '/');
	char job[64];
	base = base ? base + 1 : o->argv[0];
	if (o->outdir)
		snprintf(out, cap, "%s", o->outdir);
	else if (rank >= 0 && !cp_record_mpi_job(job, sizeof job))
		snprintf(out, cap, "callpath-%s-%s", base, job);
	else
		snprintf(out, cap, "callpath-%s-%d", base, (int)getpid());
	int removed = rank >= 0 ? cp_record_clear_ended(out) : clear_dir(out);
	if (removed > 0 && o->messages && rank <= 0)
		fprintf(o->messages, "callpath %s: replacing the earlier measurement in %s\n",
			o->name, out);
	return dir_create(out, cap);
}

int cp_record_prepare_dir(const char *name, FILE *messages, const char *dir, char *out, size_t cap)
{
	int rank = cp_record_mpi_rank(NULL); /* MPI ranks share dir: keep the siblings' */
	snprintf(out, cap, "%s", dir);
	if ((rank >= 0 ? cp_record_clear_ended(out) : clear_dir(out)) > 0 && messages && rank <= 0)
		fprintf(messages, "callpath %s: replacing the earlier measurement in %s\n", name,
			out);
	return dir_create(out, cap);
}

/* mkdir, then out becomes absolute. */
static int dir_create(char *out, size_t cap)
{
	if (mkdir(out, 0755) && errno != EEXIST)
		return cp_error(CP_EIO, "cannot create the measurement directory %s: %s", out,
				strerror(errno));
	/* Absolute, so that a program that changes directory still writes there. */
	char abs[PATH_MAX];
	if (realpath(out, abs))
		snprintf(out, cap, "%s", abs);
	return 0;
}

/* NAME=1, or NAME unset (not inherited from the caller's environment either). */
static void env_flag(const char *name, int on)
{
	if (on)
		setenv(name, "1", 1);
	else
		unsetenv(name);
}

/* In the child, before exec: LD_PRELOAD (ours first, keeping any existing one) and the
 * CALLPATH_* variables. */
void cp_record_child_environment(const struct cp_record_opts *o, const struct cp_record_result *res)
{
	char preload[3 * PATH_MAX], events[4096] = "";
	const char *old = getenv("LD_PRELOAD"), *outdir = res->outdir;
	snprintf(preload, sizeof preload, "%s%s%s%s%s", o->runtime, res->mpi ? ":" : "",
		 res->mpi ? o->mpi_lib : "", old && *old ? ":" : "", old ? old : "");
	if (res->mpi)
		setenv("CALLPATH_MPI", "1", 1);
	else
		unsetenv("CALLPATH_MPI");
	for (int i = 0; i < o->nevents; i++)
		snprintf(events + strlen(events), sizeof events - strlen(events), "%s%s",
			 i ? "," : "", o->events[i]);
	setenv("LD_PRELOAD", preload, 1);
	setenv("CALLPATH_OUTPUT", outdir, 1);
	setenv("CALLPATH_EVENTS", o->nevents ? events : "cputime", 1);
	setenv("CALLPATH_FOLLOW_EXEC", o->follow_exec ? "1" : "0", 1);
	env_flag("CALLPATH_SHOW_RUNTIME", o->show_runtime);
	env_flag("CALLPATH_PERF_SPLIT", o->perf_split);
	if (o->probes) {
		setenv("CALLPATH_PROBES", o->probes, 1);
		setenv("CALLPATH_PROBE_ONLY", o->nevents ? "0" : "1", 1);
	}
	if (o->probe_metrics)
		setenv("CALLPATH_PROBE_METRICS", o->probe_metrics, 1);
	env_flag("CALLPATH_LOOPS", o->loops);
	env_flag("CALLPATH_CONTROL", o->control);
}

/* A static executable cannot be preloaded: sampled from outside (kcopy.h). */
static int record_from_outside(const struct cp_record_opts *o, const char *exe, int is_static,
			       struct cp_record_result *res)
{
	struct cp_kcopy_opts ko;
	struct cp_kcopy_result kr;
	char err[512];

	cp_kcopy_opts_init(&ko);
	ko.name = o->name;
	ko.outdir = res->outdir;
	ko.quiet = !o->messages;
	if (o->probes)
		return cp_error(CP_ENOTSUP, "%s%s: probes need the runtime inside the program%s",
				exe, is_static ? " is a static executable" : "",
				is_static ? " (libcallpath-rt.a, docs/cmd-attach.md)"
					  : " (--mechanism signal)");
	if (o->nevents &&
	    cp_ev_parse(o->events[0], strlen(o->events[0]), &ko.event, err, sizeof err))
		return cp_error(CP_EINVAL, "%s", err);
	if (o->messages && is_static)
		fprintf(o->messages,
			"callpath %s: %s is a static executable: sampling it from outside "
			"(kernel stack copies)%s\n",
			o->name, exe, o->nevents > 1 ? "; only the first event" : "");
	if (o->nevents > 1 && !is_static)
		return cp_error(CP_EINVAL, "--mechanism kernel samples one event");
	int rc = cp_kcopy_record(o->argv, &ko, &kr);
	res->status = kr.status;
	res->signal = kr.status > 128 ? kr.status - 128 : 0;
	return rc;
}

int cp_record_run(const struct cp_record_opts *o, struct cp_record_result *res)
{
	memset(res, 0, sizeof *res);
	res->rank = cp_record_mpi_rank(NULL);
	if (!o->argv || !o->argv[0])
		return cp_error(CP_EINVAL, "no program given");
	char exe[PATH_MAX];
	if (cp_record_find_program(o->argv[0], exe))
		return cp_error(CP_ECHILD, "cannot run '%s': not found or not executable",
				o->argv[0]);
	res->mpi =
	    o->mpi > 0 || (o->mpi < 0 && o->mpi_lib &&
			   (cp_record_is_launcher(o->argv[0], exe) || cp_record_links_mpi(exe)));
	if (res->mpi && !o->mpi_lib)
		return cp_error(CP_ENOENT, "--mpi: libcallpath-mpi.so was not found (this callpath "
					   "was built without MPI; install libopenmpi-dev and "
					   "build again)");
	int rc = make_outdir(o, res->rank, res->outdir, sizeof res->outdir);
	if (rc)
		return rc;
	if (!o->runtime || access(o->runtime, R_OK))
		return cp_error(CP_ENOENT,
				"cannot find the runtime %s (%s); is callpath installed "
				"completely?",
				o->runtime ? o->runtime : "libcallpath-rt.so",
				o->runtime ? strerror(errno) : "no path given");
	/* A static program with libcallpath-rt.a inside runs its runtime from the environment
	 * (LD_PRELOAD is ignored by static programs). */
	int is_static = cp_kcopy_is_static(exe) == 1 && cp_kcopy_links_runtime(exe) != 1;
	if (is_static && o->mechanism == CP_RECORD_MECH_SIGNAL)
		return cp_error(CP_EINVAL,
				"%s is a static executable: the runtime cannot be preloaded into "
				"it; use --mechanism kernel",
				exe);
	if (is_static || o->mechanism == CP_RECORD_MECH_KERNEL)
		return record_from_outside(o, exe, is_static, res);
	return cp_record_spawn(o, res);
}

int cp_record_analyze(const char *dir)
{
	struct cp_analyze_options ao;
	struct cp_db db;
	cp_analyze_options_init(&ao);
	ao.progress = NULL;
	int rc = cp_profile_open(dir, &ao, &db);
	if (!rc)
		cp_db_release(&db);
	return rc;
}
