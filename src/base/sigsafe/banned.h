/* Included last by every file whose code runs in a signal handler or in a probe (the
 * runtime's signal-time set: docs/internals/runtime.md; tests/e2e/runtime-layering.sh
 * checks that each of them includes this file): calling one of these there is a compile
 * error (git's banned.h idea, for async-signal safety). The one list: the unwinder, the
 * sample sources, the probes and the CCT all use it. Init-time code (configuration,
 * opening perf events, registering modules, writing the process file) lives in files of
 * its own, which do not include it.
 *
 * Banned: what may allocate, take a lock or reenter libc state a signal may have
 * interrupted: the malloc family, stdio (formatting included: snprintf takes the locale),
 * the dynamic linker (dlsym allocates and locks), mutexes, read-write locks and condition
 * variables, the environment (setenv may be halfway through), and libc calls documented
 * as not async-signal-safe that the runtime might be tempted by. Fixed-buffer formatting
 * and raw writes are in base/sigsafe/sigsafe.h. */
#ifndef CP_BASE_SIGSAFE_BANNED_H
#define CP_BASE_SIGSAFE_BANNED_H

/* the malloc family */
#pragma GCC poison malloc calloc realloc reallocarray free strdup strndup
#pragma GCC poison aligned_alloc posix_memalign memalign valloc pvalloc
#pragma GCC poison asprintf vasprintf open_memstream
/* stdio */
#pragma GCC poison printf fprintf sprintf snprintf vsnprintf vfprintf vprintf vsprintf dprintf
#pragma GCC poison puts fputs putc fputc putchar fgets fgetc getc getline getdelim
#pragma GCC poison scanf fscanf sscanf
#pragma GCC poison fopen fdopen freopen fclose fflush fwrite fread setvbuf
#pragma GCC poison syslog perror strerror
/* the dynamic linker */
#pragma GCC poison dlsym dlvsym dlopen dlmopen dlclose dladdr dladdr1 dlerror dlinfo
/* locks */
#pragma GCC poison pthread_mutex_lock pthread_mutex_unlock pthread_mutex_trylock
#pragma GCC poison pthread_mutex_timedlock pthread_mutex_clocklock
#pragma GCC poison pthread_rwlock_rdlock pthread_rwlock_wrlock pthread_rwlock_unlock
#pragma GCC poison pthread_rwlock_tryrdlock pthread_rwlock_trywrlock
#pragma GCC poison pthread_cond_wait pthread_cond_timedwait pthread_cond_signal
#pragma GCC poison pthread_cond_broadcast pthread_once pthread_getattr_np
/* the environment, exit handlers, and libc state behind a lock */
#pragma GCC poison getenv secure_getenv setenv unsetenv putenv
#pragma GCC poison exit atexit on_exit localtime gmtime ctime strtok

#endif
