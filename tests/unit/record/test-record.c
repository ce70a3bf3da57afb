/* cp_record_run (src/record) without the runtime: /bin/sh stands in for the program and
 * writes down the environment it got; libc stands in for the preloaded library (harmless:
 * it is loaded anyway). Plus the MPI rank and job detection from the launcher's variables. */
#include "base/error.h"
#include "record/record.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static char tmp[64];
static const char *libc_path = "/lib/x86_64-linux-gnu/libc.so.6";

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof tmp, "/tmp/cp-unit-record-XXXXXX");
	if (!mkdtemp(tmp) || chdir(tmp))
		return -1;
	static const char *const mpi[] = {"OMPI_COMM_WORLD_RANK",
					  "OMPI_COMM_WORLD_SIZE",
					  "PMI_RANK",
					  "PMI_SIZE",
					  "PMIX_RANK",
					  "PMIX_SIZE",
					  "OMPI_MCA_ess_base_jobid",
					  "PMIX_NAMESPACE"};
	for (size_t i = 0; i < sizeof mpi / sizeof mpi[0]; i++)
		unsetenv(mpi[i]);
	unsetenv("CALLPATH_PROBES");
	unsetenv("CALLPATH_PROBE_ONLY");
	return access(libc_path, R_OK);
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	return chdir("/") || system(cmd);
}

/* The value of KEY in the file of `env` output, or NULL. */
static const char *env_value(const char *file, const char *key)
{
	static char line[8192];
	FILE *f = fopen(file, "r");
	size_t n = strlen(key);
	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, key, n) || line[n] != '=')
			continue;
		line[strcspn(line, "\n")] = 0;
		fclose(f);
		return line + n + 1;
	}
	if (f)
		fclose(f);
	return NULL;
}

static int run_sh(struct cp_record_opts *o, const char *script, struct cp_record_result *res)
{
	char *argv[] = {"sh", "-c", (char *)script, NULL};
	o->argv = argv;
	o->runtime = libc_path;
	return cp_record_run(o, res);
}

static void test_environment(void **state)
{
	(void)state;
	struct cp_record_opts o;
	struct cp_record_result res;
	cp_record_opts_init(&o);
	o.outdir = "m";
	o.events[o.nevents++] = "cputime@2ms";
	o.events[o.nevents++] = "page-faults";
	o.follow_exec = 0;
	o.probes = "work;+main";
	assert_int_equal(run_sh(&o, "env > env.txt", &res), 0);
	assert_int_equal(res.status, 0);
	assert_int_equal(res.signal, 0);
	assert_int_equal(res.rank, -1);
	char want[PATH_MAX + 8], envfile[PATH_MAX + 16];
	snprintf(want, sizeof want, "%s/m", tmp);
	assert_string_equal(res.outdir, want); /* absolute */
	snprintf(envfile, sizeof envfile, "%s/env.txt", tmp);
	assert_string_equal(env_value(envfile, "CALLPATH_OUTPUT"), want);
	assert_string_equal(env_value(envfile, "CALLPATH_EVENTS"), "cputime@2ms,page-faults");
	assert_string_equal(env_value(envfile, "CALLPATH_FOLLOW_EXEC"), "0");
	assert_string_equal(env_value(envfile, "CALLPATH_PROBES"), "work;+main");
	assert_string_equal(env_value(envfile, "CALLPATH_PROBE_ONLY"), "0");
	assert_non_null(env_value(envfile, "LD_PRELOAD"));
	assert_true(!strncmp(env_value(envfile, "LD_PRELOAD"), libc_path, strlen(libc_path)));
	/* the caller's own environment is left alone */
	assert_null(getenv("CALLPATH_OUTPUT"));
	assert_null(getenv("CALLPATH_PROBES"));
}

static void test_defaults(void **state)
{
	(void)state;
	struct cp_record_opts o;
	struct cp_record_result res;
	cp_record_opts_init(&o);
	o.outdir = "d";
	o.probes = "f*";
	assert_int_equal(run_sh(&o, "env > env.txt", &res), 0);
	assert_string_equal(env_value("env.txt", "CALLPATH_EVENTS"), "cputime");
	assert_string_equal(env_value("env.txt", "CALLPATH_FOLLOW_EXEC"), "1");
	assert_string_equal(env_value("env.txt", "CALLPATH_PROBE_ONLY"), "1");
	assert_null(env_value("env.txt", "CALLPATH_PERF_SPLIT"));
}

static void test_status(void **state)
{
	(void)state;
	struct cp_record_opts o;
	struct cp_record_result res;
	cp_record_opts_init(&o);
	o.outdir = "s";
	assert_int_equal(run_sh(&o, "exit 7", &res), 0);
	assert_int_equal(res.status, 7);
	assert_int_equal(res.signal, 0);
	assert_int_equal(run_sh(&o, "kill -TERM $$", &res), 0);
	assert_int_equal(res.status, 128 + 15);
	assert_int_equal(res.signal, 15);
}

static void test_errors(void **state)
{
	(void)state;
	struct cp_record_opts o;
	struct cp_record_result res;
	char *missing[] = {"no-such-program-here", NULL};
	cp_record_opts_init(&o);
	o.outdir = "e";
	o.runtime = libc_path;
	o.argv = missing;
	assert_int_equal(cp_record_run(&o, &res), CP_ECHILD);
	assert_non_null(strstr(cp_error_message(), "no-such-program-here"));
	char *sh[] = {"sh", "-c", "true", NULL};
	o.argv = sh;
	o.runtime = "/nonexistent/libcallpath-rt.so";
	assert_int_equal(cp_record_run(&o, &res), CP_ENOENT);
	assert_non_null(strstr(cp_error_message(), "cannot find the runtime"));
	o.runtime = libc_path;
	o.outdir = "/proc/no/such/dir";
	assert_int_equal(cp_record_run(&o, &res), CP_EIO);
}

/* An earlier measurement's files go; other files stay. */
static void test_replace(void **state)
{
	(void)state;
	struct cp_record_opts o;
	struct cp_record_result res;
	FILE *f;
	assert_int_equal(mkdir("r", 0755), 0);
	const char *const files[] = {"r/11.0.proc", "r/11.0.0.thr", "r/notes.txt"};
	for (size_t i = 0; i < 3; i++) {
		assert_non_null(f = fopen(files[i], "w"));
		fclose(f);
	}
	cp_record_opts_init(&o);
	o.outdir = "r";
	assert_int_equal(run_sh(&o, "true", &res), 0);
	assert_int_equal(access("r/11.0.proc", F_OK), -1);
	assert_int_equal(access("r/11.0.0.thr", F_OK), -1);
	assert_int_equal(access("r/notes.txt", F_OK), 0);
}

static void test_mpi_rank(void **state)
{
	(void)state;
	int size = -1;
	assert_int_equal(cp_record_mpi_rank(&size), -1);
	assert_int_equal(size, 0);
	setenv("PMI_RANK", "3", 1);
	setenv("PMI_SIZE", "8", 1);
	assert_int_equal(cp_record_mpi_rank(&size), 3);
	assert_int_equal(size, 8);
	setenv("OMPI_COMM_WORLD_RANK", "1", 1); /* Open MPI's first */
	setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
	assert_int_equal(cp_record_mpi_rank(&size), 1);
	assert_int_equal(size, 2);
	setenv("OMPI_COMM_WORLD_RANK", "x1", 1); /* not a number: the next launcher's */
	assert_int_equal(cp_record_mpi_rank(NULL), 3);
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("OMPI_COMM_WORLD_SIZE");
	unsetenv("PMI_RANK");
	unsetenv("PMI_SIZE");
}

/* Ranks share the job's directory by default; nothing to wait for in an empty one. */
static void test_mpi_job_dir(void **state)
{
	(void)state;
	struct cp_record_opts o;
	struct cp_record_result res;
	setenv("OMPI_COMM_WORLD_RANK", "0", 1);
	setenv("OMPI_MCA_ess_base_jobid", "4242", 1);
	cp_record_opts_init(&o);
	assert_int_equal(run_sh(&o, "true", &res), 0);
	assert_int_equal(res.rank, 0);
	char want[PATH_MAX + 32];
	snprintf(want, sizeof want, "%s/callpath-sh-4242", tmp);
	assert_string_equal(res.outdir, want);
	assert_int_equal(cp_record_wait_ranks(res.outdir, 2, 0), 0);
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("OMPI_MCA_ess_base_jobid");
}

/* The MPI library is preloaded (after the runtime, with CALLPATH_MPI=1) for a launcher or
 * with mpi = 1, never for a program without MPI; --mpi without the library fails. */
static void test_mpi_preload(void **state)
{
	(void)state;
	struct cp_record_opts o;
	struct cp_record_result res;
	char envfile[PATH_MAX + 16], want[2 * PATH_MAX];
	snprintf(envfile, sizeof envfile, "%s/env.txt", tmp);
	cp_record_opts_init(&o);
	o.outdir = "m";
	o.mpi_lib = "/lib/x86_64-linux-gnu/libm.so.6"; /* stands in for libcallpath-mpi.so */
	assert_int_equal(run_sh(&o, "env > env.txt", &res), 0); /* sh needs no MPI */
	assert_int_equal(res.mpi, 0);
	assert_null(env_value(envfile, "CALLPATH_MPI"));
	o.mpi = 1;
	assert_int_equal(run_sh(&o, "env > env.txt", &res), 0);
	assert_int_equal(res.mpi, 1);
	assert_string_equal(env_value(envfile, "CALLPATH_MPI"), "1");
	snprintf(want, sizeof want, "%s:%s", libc_path, o.mpi_lib);
	assert_true(!strncmp(env_value(envfile, "LD_PRELOAD"), want, strlen(want)));
	o.mpi = 0;
	assert_int_equal(run_sh(&o, "env > env.txt", &res), 0);
	assert_null(env_value(envfile, "CALLPATH_MPI"));
	o.mpi = 1;
	o.mpi_lib = NULL;
	assert_int_equal(run_sh(&o, "true", &res), CP_ENOENT);
	assert_non_null(strstr(cp_error_message(), "--mpi"));
	cp_error_clear();
	assert_int_equal(cp_record_is_launcher("mpirun", "/usr/bin/orterun"), 1);
	assert_int_equal(cp_record_is_launcher("/opt/x/mpiexec.hydra", "/opt/x/hydra"), 1);
	assert_int_equal(cp_record_is_launcher("./mpirunner", "/tmp/mpirunner"), 0);
	assert_int_equal(cp_record_links_mpi("/bin/sh"), 0);
}

/* DT_NEEDED of the program, and of the libraries it needs: the MPI test workloads need
 * libmpi (C) and libmpi_mpifh (Fortran, which itself needs libmpi). */
static void test_mpi_detect(void **state)
{
	(void)state;
	const char *build = getenv("CP_BUILD_DIR");
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/tests/workloads/mpi-late-sender.O2", build ? build : ".");
	if (access(path, X_OK))
		skip(); /* built without MPI */
	assert_int_equal(cp_record_links_mpi(path), 1);
	snprintf(path, sizeof path, "%s/tests/workloads/chain.O2", build ? build : ".");
	assert_int_equal(cp_record_links_mpi(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_environment), cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_status),	cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_replace),	cmocka_unit_test(test_mpi_rank),
	    cmocka_unit_test(test_mpi_job_dir), cmocka_unit_test(test_mpi_preload),
	    cmocka_unit_test(test_mpi_detect),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
