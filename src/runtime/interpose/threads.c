/* Thread creation: every thread started with pthread_create gets its measurement state
 * before its start routine runs and finishes its file when it ends (return, pthread_exit
 * or cancellation: a pthread key destructor catches all three). */
#include "runtime/core/runtime.h"
#include "runtime/interpose/real.h"

#include <errno.h>
#include <stdlib.h>

struct cp_start {
	void *(*fn)(void *);
	void *arg;
};

static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

static void thread_key_destructor(void *p)
{
	struct cp_thread *t = p;
	if (t && t == cp_self)
		cp_thread_end(t, 1);
}

static void thread_key_create(void)
{
	pthread_key_create(&thread_key, thread_key_destructor);
}

static void *thread_trampoline(void *p)
{
	struct cp_start start = *(struct cp_start *)p;
	free(p);
	struct cp_thread *t = cp_thread_begin(0);
	if (t)
		pthread_setspecific(thread_key, t);
	return start.fn(start.arg);
}

CP_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			     void *arg)
{
	typeof(cp_real.pthread_create) real = CP_REAL(pthread_create);
	if (!cp_rt.active)
		return real(thread, attr, fn, arg);
	pthread_once(&thread_key_once, thread_key_create);
	cp_proc_flush_pending_note();
	struct cp_start *start = malloc(sizeof *start);
	if (!start)
		return real(thread, attr, fn, arg);
	start->fn = fn;
	start->arg = arg;
	int rc = real(thread, attr, thread_trampoline, start);
	if (rc)
		free(start);
	return rc;
}
