/* Where the libraries callpath preloads into a program are (libcallpath-rt.so, and later
 * ones beside it). Found from the real path of the callpath executable, so that a copy of
 * the installed tree, a symlink to bin/callpath and the build tree all work:
 *   installed:  PREFIX/bin/callpath  ->  PREFIX/<CP_RT_DIR_FROM_BIN>/NAME (lib/callpath)
 *   build tree: BUILD/callpath       ->  BUILD/NAME
 * CALLPATH_RT=FILE overrides the runtime; the other libraries are then looked for beside it. */
#include "cli/cli.h"
#include "base/error.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CP_RT_DIR_FROM_BIN
#define CP_RT_DIR_FROM_BIN "../lib/callpath"
#endif

static int readable(const char *path)
{
	return !access(path, R_OK);
}

static int copy_out(char *path, size_t size, const char *name, const char *found)
{
	if (snprintf(path, size, "%s", found) >= (int)size)
		return cp_error(CP_EINVAL, "path of %s too long: %s", name, found);
	return 0;
}

/* NAME beside the file CALLPATH_RT names (or that file itself for the runtime), made
 * absolute: LD_PRELOAD searches the library path for a name without a slash, and the program
 * may change its directory. */
static int from_environment(const char *env, const char *name, char *path, size_t size)
{
	char given[PATH_MAX + 256], real[PATH_MAX];
	if (!strcmp(name, CLI_RUNTIME_LIB))
		snprintf(given, sizeof given, "%s", env);
	else {
		const char *slash = strrchr(env, '/');
		int dirlen = slash ? (int)(slash - env) : 1;
		snprintf(given, sizeof given, "%.*s/%s", dirlen, slash ? env : ".", name);
	}
	if (!realpath(given, real) || !readable(real))
		return cp_error(CP_ENOENT, "cannot use %s (CALLPATH_RT=%s): %s", given, env,
				strerror(errno));
	return copy_out(path, size, name, real);
}

/* DIR/REL with REL's leading "../" applied to DIR, for messages users read. */
static void join(char *out, size_t size, const char *dir, const char *rel)
{
	int len = (int)strlen(dir);
	while (!strncmp(rel, "../", 3) && len > 1) {
		while (len > 0 && dir[len - 1] != '/')
			len--;
		len -= len > 1; /* "/usr/bin" -> "/usr", "/bin" -> "/" */
		rel += 3;
	}
	snprintf(out, size, "%.*s%s%s", len, dir, dir[len - 1] == '/' ? "" : "/", rel);
}

int cli_runtime_lib(const char *name, char *path, size_t size)
{
	const char *env = getenv("CALLPATH_RT");
	if (env && *env)
		return from_environment(env, name, path, size);

	char bindir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", bindir, sizeof bindir - 1);
	if (n <= 0)
		return cp_error(CP_ENOENT,
				"cannot find %s: /proc/self/exe is unreadable (%s); "
				"set CALLPATH_RT to the runtime's path",
				name, strerror(errno));
	bindir[n] = 0;
	char *slash = strrchr(bindir, '/'); /* the kernel gives an absolute path */
	slash[slash == bindir] = 0;

	char rtdir[PATH_MAX], installed[2 * PATH_MAX], beside[2 * PATH_MAX];
	join(rtdir, sizeof rtdir, bindir, CP_RT_DIR_FROM_BIN);
	snprintf(installed, sizeof installed, "%s/%s", rtdir, name);
	join(beside, sizeof beside, bindir, name);
	const char *found = readable(installed) ? installed : readable(beside) ? beside : NULL;
	if (!found)
		return cp_error(CP_ENOENT,
				"cannot find the runtime %s: it is neither in %s/ (installed) nor "
				"in %s/ (build tree); reinstall callpath, or set CALLPATH_RT to "
				"the runtime's path",
				name, rtdir, bindir);
	return copy_out(path, size, name, found);
}
