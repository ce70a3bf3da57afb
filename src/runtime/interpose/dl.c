/* dlopen/dlclose: the load-module registry is synchronised after each, so samples in a
 * new library resolve and an unloaded one starts a new epoch (module ids never reused). */
#include "runtime/core/runtime.h"
#include "runtime/interpose/real.h"
#include "runtime/probe/probe.h"
#include "runtime/unwind/modules.h"

#include <dlfcn.h>

/* Held around every registry update, and by fork() around the real fork, so that a fork
 * child never inherits the registry's lock taken by another thread. Not held across the
 * real dlopen (its constructors may fork). */
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;

void cp_dl_fork_prepare(void)
{
	pthread_mutex_lock(&sync_lock);
}

void cp_dl_fork_parent(void)
{
	pthread_mutex_unlock(&sync_lock);
}

void cp_dl_fork_child(void)
{
	pthread_mutex_init(&sync_lock, NULL);
}

static void modules_resync(void)
{
	if (!cp_rt.active)
		return;
	struct cp_thread *t = cp_self;
	int was_busy = t ? t->busy : 0;
	if (t)
		t->busy = 1;
	pthread_mutex_lock(&sync_lock);
	cp_modules_sync();
	__atomic_add_fetch(&cp_rt.modules_gen, 1, __ATOMIC_RELEASE);
	cp_probe_sync(1); /* probes in the libraries just loaded */
	pthread_mutex_unlock(&sync_lock);
	if (t)
		t->busy = was_busy;
	cp_proc_flush_pending_note();
}

CP_EXPORT void *dlopen(const char *file, int mode)
{
	void *h = CP_REAL(dlopen)(file, mode);
	if (h)
		modules_resync();
	return h;
}

CP_EXPORT int dlclose(void *handle)
{
	int rc = CP_REAL(dlclose)(handle);
	modules_resync();
	return rc;
}
