/* The public callpath_* API exported by libcallpath-rt.so. A program may call these
 * whether or not it runs under callpath (they do nothing when the runtime is inactive).
 * callpath_stop() pauses sampling in the whole process; callpath_start() resumes it.
 * Async-signal-safe (a program may call them from its own handlers): atomic stores only. */
#include "runtime/core/runtime.h"

#include "base/sigsafe/banned.h"

CP_EXPORT void callpath_start(void)
{
	if (cp_rt.active && !cp_rt.failure && !cp_rt.finished)
		__atomic_store_n(&cp_rt.enabled, 1, __ATOMIC_RELEASE);
}

CP_EXPORT void callpath_stop(void)
{
	if (cp_rt.active)
		__atomic_store_n(&cp_rt.enabled, 0, __ATOMIC_RELEASE);
}
