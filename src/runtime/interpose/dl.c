/* dlopen/dlclose: the load-module registry is synchronised after each, so samples in a
 * new library resolve and an unloaded one starts a new epoch (module ids never reused). */
#include "runtime/core/runtime.h"
#include "runtime/interpose/real.h"
#include "runtime/unwind/modules.h"

#include <dlfcn.h>

static void modules_resync(void)
{
	if (!cp_rt.active)
		return;
	struct cp_thread *t = cp_self;
	int was_busy = t ? t->busy : 0;
	if (t)
		t->busy = 1;
	cp_modules_sync();
	if (t)
		t->busy = was_busy;
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
