/* cp_record_run: the program, its measurement directory and its environment (record.h). */
#include "record/record-impl.h"

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
void cp_record_child_environment(const struct cp_record_opts *o, const char *outdir)
{
	char preload[2 * PATH_MAX], events[4096] = "";
	const char *old = getenv("LD_PRELOAD");
	snprintf(preload, sizeof preload, "%s%s%s", o->runtime, old && *old ? ":" : "",
		 old ? old : "");
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
	int rc = make_outdir(o, res->rank, res->outdir, sizeof res->outdir);
	if (rc)
		return rc;
	if (!o->runtime || access(o->runtime, R_OK))
		return cp_error(CP_ENOENT,
				"cannot find the runtime %s (%s); is callpath installed "
				"completely?",
				o->runtime ? o->runtime : "libcallpath-rt.so",
				o->runtime ? strerror(errno) : "no path given");
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
