/* callpath top PID: the measurement directory of a process that callpath record runs, from
 * the CALLPATH_OUTPUT that record puts into the program's environment (/proc/PID/environ),
 * resolved against the process's working directory when relative. */
#include "top/top.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUTPUT_VAR "CALLPATH_OUTPUT="

/* The value of CALLPATH_OUTPUT in pid's environment into buf: 1 found, 0 not there, or a
 * negative CP_E* code when the environment cannot be read. */
static int environ_output(int pid, char *buf, size_t size)
{
	char path[64], env[65536];
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cp_error(errno == ENOENT ? CP_ENOENT : CP_EPERM, "no process %d (%s: %s)",
				pid, path, strerror(errno));
	ssize_t n = read(fd, env, sizeof env - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return cp_error(CP_EPERM, "cannot read the environment of process %d: %s", pid,
				strerror(err));
	env[n] = 0;
	size_t vl = strlen(OUTPUT_VAR);
	for (char *kv = env; kv < env + n; kv += strlen(kv) + 1)
		if (!strncmp(kv, OUTPUT_VAR, vl)) {
			char cwd[PATH_MAX] = "";
			snprintf(path, sizeof path, "/proc/%d/cwd", pid);
			ssize_t k = kv[vl] == '/' ? 0 : readlink(path, cwd, sizeof cwd - 1);
			cwd[k > 0 ? k : 0] = 0;
			snprintf(buf, size, "%s%s%s", cwd, cwd[0] ? "/" : "", kv + vl);
			return 1;
		}
	return 0;
}

/* The first child of pid (callpath record runs one program). */
static int first_child(int pid)
{
	char path[96];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", pid, pid);
	FILE *f = fopen(path, "re");
	int child = 0;
	if (f) {
		if (fscanf(f, "%d", &child) != 1)
			child = 0;
		fclose(f);
	}
	return child;
}

int cp_top_pid_dir(int pid, char *buf, size_t size)
{
	int rc = environ_output(pid, buf, size);
	if (rc)
		return rc < 0 ? rc : 0;
	int child = first_child(pid);
	if (child > 0 && (rc = environ_output(child, buf, size)) > 0)
		return 0;
	return cp_error(CP_ENOENT,
			"process %d does not run under callpath record (no CALLPATH_OUTPUT in its "
			"environment%s); give the measurement directory instead",
			pid, child > 0 ? " nor its child's" : "");
}
