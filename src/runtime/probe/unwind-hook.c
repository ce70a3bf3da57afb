/* Stack unwinding by libgcc (C++ exceptions, pthread_exit/cancel, backtrace()) reads
 * return addresses from the stack: the probes' replaced ones (cp_probe_return) have no
 * unwind info, so an exception would end in std::terminate. These wrappers write the real
 * return addresses back first (the shadow stack keeps the frames; those an exception
 * leaves are ended at the next probe event on the thread). _Unwind_Backtrace re-arms them
 * afterwards, since no frame is left. */
#include "runtime/probe/probe-internal.h"

#include <dlfcn.h>

struct _Unwind_Exception;
typedef int (*cp_unwind_trace_fn)(void *, void *);

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

CP_EXPORT int _Unwind_RaiseException(struct _Unwind_Exception *e)
{
	static int (*real)(struct _Unwind_Exception *);
	if (!real)
		real = (int (*)(struct _Unwind_Exception *))next("_Unwind_RaiseException");
	cp_probe_restore_returns();
	return real(e);
}

CP_EXPORT int _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
	static int (*real)(struct _Unwind_Exception *);
	if (!real)
		real = (int (*)(struct _Unwind_Exception *))next("_Unwind_Resume_or_Rethrow");
	cp_probe_restore_returns();
	return real(e);
}

CP_EXPORT int _Unwind_ForcedUnwind(struct _Unwind_Exception *e, void *stop, void *arg)
{
	static int (*real)(struct _Unwind_Exception *, void *, void *);
	if (!real)
		real = (int (*)(struct _Unwind_Exception *, void *, void *))next(
		    "_Unwind_ForcedUnwind");
	cp_probe_restore_returns();
	return real(e, stop, arg);
}

CP_EXPORT int _Unwind_Backtrace(cp_unwind_trace_fn fn, void *arg)
{
	static int (*real)(cp_unwind_trace_fn, void *);
	if (!real)
		real = (int (*)(cp_unwind_trace_fn, void *))next("_Unwind_Backtrace");
	cp_probe_restore_returns();
	int rc = real(fn, arg);
	cp_probe_rearm_returns();
	return rc;
}
