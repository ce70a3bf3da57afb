/* The runtime loaded into a running program by `callpath attach --inject`
 * (docs/internals/inject.md): callpath stops the program's threads with ptrace, makes one
 * of them call dlopen() for this library (its constructor finds no CALLPATH_OUTPUT and stays
 * inactive), then callpath_attach_start(FILE), which reads the settings from FILE instead
 * of the environment and starts the runtime. Every thread of the program exists already:
 * the thread scan adopts them all at once (core/adopt.c), each sampled through a source
 * routed to its tid, its state found by tid (no thread's TLS is touched, so that a later
 * re-arming can forget every state). The interposed functions are not on the program's
 * path (the library was not preloaded), so trigger families are not available.
 *
 * The end comes through the control channel (verb `detach`, core/control.c): the runtime
 * writes its files as at exit and stays loaded and dormant. A later injection calls
 * callpath_attach_start again, which re-arms it with the new settings. */
#include "runtime/core/runtime.h"
#include "base/sigsafe/sigsafe.h"
#include "runtime/cct/arena.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CP_ATTACH_MAX_KEYS 32

static char settings[8192];
static const char *keys[CP_ATTACH_MAX_KEYS];
static int nkeys, attached;

const char *cp_rt_getenv(const char *name)
{
	if (!attached)
		return getenv(name);
	size_t len = strlen(name);
	for (int i = 0; i < nkeys; i++)
		if (!strncmp(keys[i], name, len) && keys[i][len] == '=')
			return keys[i] + len + 1;
	return NULL;
}

/* FILE holds NAME=VALUE lines (the CALLPATH_* variables of core/config.c). */
static int settings_load(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, settings, sizeof settings - 1);
	close(fd);
	if (n <= 0)
		return -1;
	settings[n] = 0;
	nkeys = 0;
	for (char *p = settings, *save = NULL, *line; (line = strtok_r(p, "\n", &save)); p = NULL)
		if (strchr(line, '=') && nkeys < CP_ATTACH_MAX_KEYS)
			keys[nkeys++] = line;
	return 0;
}

/* A dormant runtime (detached earlier) forgets its previous measurement. */
static void rearm_reset(void)
{
	cp_thread_drop_all();
	cp_arena_abandon(&cp_rt.proc);
	cp_rt.phdr = NULL;
	cp_rt.finished = 0;
	cp_rt.note_pending = 0;
	cp_rt.failure = NULL;
	cp_rt.exit_status_known = 0;
	cp_rt.threads_unmeasured = 0;
	cp_rt.sources_unarmed = 0;
	cp_rt.dropped_nothread = 0;
	cp_rt.orphan_events = 0;
	cp_rt.cpu_start_ns = cp_ss_now_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* 0: measuring; 1: it was measuring already; -1: no settings or the runtime failed. */
CP_EXPORT int callpath_attach_start(const char *settings_file)
{
	static int loaded_by_preload;
	if (cp_rt.active && !cp_rt.finished)
		return 1;
	if (!attached && cp_rt.active)
		loaded_by_preload = 1;
	if (loaded_by_preload || settings_load(settings_file))
		return -1;
	attached = 1;
	int again = cp_rt.active;
	if (again)
		rearm_reset();
	else
		cp_rt.cpu_start_ns = cp_ss_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (cp_config_load(again))
		return -1;
	return cp_rt_start(again ? 2 : 1);
}

int cp_rt_attached(void)
{
	return attached;
}
