/* Private to omp/: what the libgomp wrappers (gomp.c, task.c) share. */
#ifndef CP_RUNTIME_OMP_INTERNAL_H
#define CP_RUNTIME_OMP_INTERNAL_H

#include "runtime/omp/omp.h"

typedef void (*omp_fn)(void *);

/* The next definition of a libgomp function (dlsym RTLD_NEXT); aborts with a message if
 * there is none (a program calling GOMP_* has libgomp loaded). */
void *cp_omp_next(const char *name);

/* The real function of the wrapper fn, resolved at its first call. */
#define GOMP_REAL(fn)                                                                              \
	({                                                                                         \
		static typeof(&fn) real_;                                                          \
		typeof(&fn) r_ = __atomic_load_n(&real_, __ATOMIC_ACQUIRE);                        \
		if (!r_) {                                                                         \
			r_ = (typeof(&fn))cp_omp_next(#fn);                                        \
			__atomic_store_n(&real_, r_, __ATOMIC_RELEASE);                            \
		}                                                                                  \
		r_;                                                                                \
	})

/* t's region records and scratch frames, mapped at the first use; NULL if mmap failed. */
struct cp_omp_thread *cp_omp_thread_block(struct cp_thread *t);

#endif
